/*
 * The tap (tap.h): what the relay's copy of each line becomes. The
 * ledger's reports turn into the record (record.c: history, streaks,
 * liveness minted by liveness_of), health (health_of) and the event
 * stream published on the socket, in `watch`'s shapes with
 * "source":"tap"; a reader that joins gets a snapshot first (the
 * record's history, the ledger). Commands from the socket: a snapshot,
 * and the operator's cancel.
 *
 * Only the agent's requests to the server are exchanges of the record
 * (the server answering is what proves reach); the server's requests to
 * the agent are in the ledger and its events only. What it must never
 * do: send the server anything of its own but an operator's cancel, or
 * let the socket stop the relay.
 */
#include "tap_int.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/child.h"
#include "engine/liveness.h"
#include "util/clock.h"
#include "util/str.h"
#include "util/xmalloc.h"

#define TAP_HISTORY_SNAPSHOT 100
#define TAP_LINGER_S         2.0    /* at most, for the last bytes */

double
tap_now(const struct tap *t)
{
    ev_now_update(t->loop);
    return ev_now(t->loop);
}

/* A method name as a string that lives as long as the tap (the record
 * keeps the pointer). */
static const char *
tap_op(struct tap *t, const char *method)
{
    for (size_t i = 0; i < t->nops; i++) {
        if (strcmp(t->ops[i], method) == 0)
            return t->ops[i];
    }
    if (t->nops == TAP_OPS_MAX)
        return "other";
    t->ops[t->nops] = xstrdup(method);
    return t->ops[t->nops++];
}

/* --- events ------------------------------------------------------------- */

/* {"ts", "event", "server", "source": "tap"}: the head of every line. */
cJSON *
tap_event_new(const struct tap *t, const char *event, int64_t ts)
{
    cJSON *o = cJSON_CreateObject();
    char   iso[40];

    clock_format_iso(ts != 0 ? ts : clock_wall_ms(), iso, sizeof(iso));
    cJSON_AddStringToObject(o, "ts", iso);
    cJSON_AddStringToObject(o, "event", event);
    cJSON_AddStringToObject(o, "server", t->name);
    cJSON_AddStringToObject(o, "source", "tap");
    return o;
}

void
tap_event_publish(struct tap *t, cJSON *o)
{
    char *text;

    if (t->pub != NULL && tap_publish_readers(t->pub) > 0) {
        text = cJSON_PrintUnformatted(o);
        if (text != NULL)
            tap_publish_line(t->pub, text);
        free(text);
    }
    cJSON_Delete(o);
}

/* The id as JSON again (a number or a string). */
static cJSON *
tap_id_json(const char *id)
{
    cJSON *v = cJSON_Parse(id);

    return v != NULL ? v : cJSON_CreateString(id);
}

/* A duration in ms, cut to one decimal. */
static double
tap_ms1(double ms)
{
    return (double)((long)(ms * 10)) / 10;
}

/* One request of the ledger, as check --json's in_flight shows it. */
static cJSON *
tap_request_json(const struct tap_request *r, double now, int64_t wall)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddItemToObject(o, "id", tap_id_json(r->id));
    cJSON_AddStringToObject(o, "direction", tap_dir_name(r->dir));
    cJSON_AddStringToObject(o, "method", r->method);
    if (r->tool != NULL)
        cJSON_AddStringToObject(o, "tool", r->tool);
    else
        cJSON_AddNullToObject(o, "tool");
    cJSON_AddNumberToObject(o, "started_at", (double)r->started_ms);
    cJSON_AddNumberToObject(o, "age_ms", tap_ms1((now - r->started) *
        1000.0));
    if (r->has_progress) {
        cJSON *p = cJSON_AddObjectToObject(o, "progress");

        cJSON_AddNumberToObject(p, "progress", r->progress);
        if (r->has_total)
            cJSON_AddNumberToObject(p, "total", r->total);
        else
            cJSON_AddNullToObject(p, "total");
        if (r->message != NULL)
            cJSON_AddStringToObject(p, "message", r->message);
        else
            cJSON_AddNullToObject(p, "message");
        cJSON_AddNumberToObject(p, "age_ms", (double)(wall -
            r->progress_ms));
    } else {
        cJSON_AddNullToObject(o, "progress");
    }
    cJSON_AddNumberToObject(o, "bytes", (double)r->bytes);
    if (r->own)
        cJSON_AddBoolToObject(o, "own", true);  /* --probe's ping */
    return o;
}

static void
tap_liveness_json(cJSON *o, const struct liveness *l)
{
    cJSON *lv;

    if (!l->present) {
        cJSON_AddNullToObject(o, "liveness");
        return;
    }
    lv = cJSON_AddObjectToObject(o, "liveness");
    cJSON_AddStringToObject(lv, "state", liveness_state_name(l->state));
    cJSON_AddNumberToObject(lv, "observed_at", (double)l->observed_at);
    if (l->has_error_code)
        cJSON_AddStringToObject(lv, "error_code",
            failure_kind_name(l->error_code));
}

/* A failure's fields on an exchange line or the snapshot. */
static void
tap_failure_json(cJSON *o, const struct failure *f)
{
    cJSON_AddStringToObject(o, "outcome", failure_kind_name(f->kind));
    cJSON_AddStringToObject(o, "delivered", delivered_name(f->delivered));
    if (f->has_rpc_code)
        cJSON_AddNumberToObject(o, "rpc_code", (double)f->rpc_code);
    cJSON_AddStringToObject(o, "site", failure_site_name(f->site));
    cJSON_AddStringToObject(o, "detail", f->detail);
}

/* Publish health when it changed (the first one too): the rule of every
 * server's (health_track_update), from the record's facts. */
static void
tap_health_update(struct tap *t)
{
    struct health_input in = { .operator_state = HEALTH_OPERATOR_MONITORED,
        .liveness = &t->rec.liveness, .fail_streak = t->rec.fail_streak };
    enum health_state   was;
    cJSON              *o;

    if (!health_track_update(&t->health, &in, clock_wall_ms(), &was))
        return;
    o = tap_event_new(t, "health", 0);
    cJSON_AddStringToObject(o, "state",
        health_state_name(t->health.health.state));
    if (was < HEALTH__COUNT)
        cJSON_AddStringToObject(o, "was", health_state_name(was));
    else
        cJSON_AddNullToObject(o, "was");
    cJSON_AddStringToObject(o, "reason", t->health.health.reason);
    tap_event_publish(t, o);
}

/* One exchange ended (the agent's, or the operator's DELETE through an
 * HTTP tap): the record, its lines. */
void
tap_exchange(struct tap *t, const char *op, const char *id,
    const struct failure *f, double ms)
{
    int64_t wall = clock_wall_ms();
    bool    changed = record_exchange(&t->rec, tap_op(t, op), f, ms, wall);
    cJSON  *o = tap_event_new(t, "exchange", wall);

    cJSON_AddStringToObject(o, "op", op);
    if (f == NULL)
        cJSON_AddStringToObject(o, "outcome", "completed");
    else
        tap_failure_json(o, f);
    cJSON_AddNumberToObject(o, "ms", tap_ms1(ms));
    cJSON_AddNumberToObject(o, "observed_at", (double)wall);
    if (id != NULL) {
        cJSON_AddItemToObject(o, "id", tap_id_json(id));
        cJSON_AddStringToObject(o, "direction", "to_server");
    }
    tap_event_publish(t, o);
    if (changed) {
        o = tap_event_new(t, "liveness", wall);
        cJSON_AddStringToObject(o, "state",
            liveness_state_name(t->rec.liveness.state));
        if (t->rec.liveness.has_error_code)
            cJSON_AddStringToObject(o, "error_code",
                failure_kind_name(t->rec.liveness.error_code));
        cJSON_AddNumberToObject(o, "observed_at",
            (double)t->rec.liveness.observed_at);
        tap_event_publish(t, o);
    }
    tap_health_update(t);
}

/* tap_ledger_host.started */
static void
tap_started_cb(void *arg, const struct tap_request *r)
{
    struct tap *t = arg;
    cJSON      *o = tap_event_new(t, "request", r->started_ms);

    t->last_traffic = r->started;

    cJSON_AddItemToObject(o, "request", tap_request_json(r, tap_now(t),
        clock_wall_ms()));
    tap_event_publish(t, o);
}

/* tap_ledger_host.progress */
static void
tap_progress_cb(void *arg, const struct tap_request *r)
{
    struct tap *t = arg;
    cJSON      *o = tap_event_new(t, "progress", r->progress_ms);

    cJSON_AddItemToObject(o, "request", tap_request_json(r, tap_now(t),
        clock_wall_ms()));
    tap_event_publish(t, o);
}

/* tap_ledger_host.ended */
static void
tap_ended_cb(void *arg, const struct tap_request *r, enum tap_end how,
    const struct failure *f, double ms)
{
    struct tap *t = arg;
    cJSON      *o = tap_event_new(t, "request_end", 0);

    cJSON_AddItemToObject(o, "id", tap_id_json(r->id));
    cJSON_AddStringToObject(o, "direction", tap_dir_name(r->dir));
    cJSON_AddStringToObject(o, "method", r->method);
    if (r->tool != NULL)
        cJSON_AddStringToObject(o, "tool", r->tool);
    cJSON_AddStringToObject(o, "outcome", tap_end_name(how));
    if (f != NULL)
        cJSON_AddStringToObject(o, "kind", failure_kind_name(f->kind));
    cJSON_AddNumberToObject(o, "ms", tap_ms1(ms));
    tap_event_publish(t, o);
    if (r->own)
        t->probe = NULL;
    t->last_traffic = tap_now(t);
    if (r->dir == TAP_DIR_TO_SERVER && how == TAP_END_COMPLETED &&
        strcmp(r->method, "initialize") == 0)
        t->initialized = true;  /* pings may go now (MCP lifecycle) */
    if (r->dir == TAP_DIR_TO_SERVER &&
        (how == TAP_END_COMPLETED || how == TAP_END_FAILED))
        tap_exchange(t, r->method, r->id, f, ms);
}

static const struct tap_ledger_host tap_ledger_host = {
    .started = tap_started_cb,
    .progress = tap_progress_cb,
    .ended = tap_ended_cb,
};

/* --- the snapshot and the commands -------------------------------------- */

static cJSON *
tap_in_flight_json(const struct tap *t)
{
    cJSON                    *arr = cJSON_CreateArray();
    double                    now = tap_now(t);
    int64_t                   wall = clock_wall_ms();

    for (const struct tap_request *r = tap_ledger_oldest(t->ledger);
        r != NULL; r = r->newer)
        cJSON_AddItemToArray(arr, tap_request_json(r, now, wall));
    return arr;
}

/* host.snapshot: what a reader that joins now is told first. */
static char *
tap_snapshot_cb(void *arg)
{
    struct tap                    *t = arg;
    cJSON                         *o = tap_event_new(t, "snapshot", 0);
    cJSON                         *tp = cJSON_AddObjectToObject(o, "tap");
    cJSON                         *h, *hist, *st;
    const struct tap_ledger_stats *s = tap_ledger_stats(t->ledger);
    char                          *text;

    cJSON_AddNumberToObject(tp, "pid", (double)getpid());
    if (t->child != NULL && !t->exited)
        cJSON_AddNumberToObject(tp, "server_pid",
            (double)child_pid(t->child));
    else
        cJSON_AddNullToObject(tp, "server_pid");
    cJSON_AddStringToObject(tp, "command", t->command);
    cJSON_AddNumberToObject(tp, "started_at", (double)t->started_ms);
    if (t->http != NULL) {
        cJSON_AddStringToObject(tp, "transport", "streamable_http");
        cJSON_AddStringToObject(tp, "listen", tap_http_listen(t));
        cJSON_AddStringToObject(tp, "upstream", tap_http_upstream(t));
    } else {
        cJSON_AddStringToObject(tp, "transport", "stdio");
    }
    tap_liveness_json(o, &t->rec.liveness);
    h = cJSON_AddObjectToObject(o, "health");
    if (t->health.set) {
        cJSON_AddStringToObject(h, "state", health_state_name(
            t->health.health.state));
        cJSON_AddStringToObject(h, "reason", t->health.health.reason);
        cJSON_AddNumberToObject(h, "since", (double)t->health.since);
    } else {
        cJSON_AddStringToObject(h, "state", "pending");
        cJSON_AddStringToObject(h, "reason", "");
        cJSON_AddNullToObject(h, "since");
    }
    if (t->rec.has_failure) {
        cJSON *f = cJSON_AddObjectToObject(o, "last_failure");

        cJSON_AddStringToObject(f, "op", t->rec.last_failure_op);
        tap_failure_json(f, &t->rec.last_failure);
    } else {
        cJSON_AddNullToObject(o, "last_failure");
    }
    hist = cJSON_AddArrayToObject(o, "history");
    for (size_t i = 0; i < t->rec.hist_len; i++) {
        const struct mcp_exchange *x = record_history(&t->rec, i);
        cJSON                        *e = cJSON_CreateObject();

        cJSON_AddNumberToObject(e, "ts", (double)x->ts);
        cJSON_AddStringToObject(e, "op", x->op);
        cJSON_AddStringToObject(e, "outcome", x->completed ? "completed" :
            failure_kind_name((enum failure_kind)x->kind));
        if (!x->completed)
            cJSON_AddStringToObject(e, "delivered",
                delivered_name((enum delivered)x->delivered));
        cJSON_AddNumberToObject(e, "ms", tap_ms1(x->ms));
        cJSON_AddItemToArray(hist, e);
    }
    cJSON_AddItemToObject(o, "in_flight", tap_in_flight_json(t));
    if (t->http != NULL)
        cJSON_AddItemToObject(o, "sessions", tap_session_list_json(t));
    st = cJSON_AddObjectToObject(o, "stats");
    cJSON_AddNumberToObject(st, "bytes_from_agent",
        (double)t->bytes[TAP_SIDE_AGENT]);
    cJSON_AddNumberToObject(st, "bytes_from_server",
        (double)t->bytes[TAP_SIDE_SERVER]);
    cJSON_AddNumberToObject(st, "lines_from_agent",
        (double)s->lines[TAP_SIDE_AGENT]);
    cJSON_AddNumberToObject(st, "lines_from_server",
        (double)s->lines[TAP_SIDE_SERVER]);
    cJSON_AddNumberToObject(st, "unparsed_lines",
        (double)(s->unparsed[0] + s->unparsed[1]));
    cJSON_AddNumberToObject(st, "unmatched_answers",
        (double)(s->unmatched[0] + s->unmatched[1]));
    cJSON_AddNumberToObject(st, "late_answers_dropped",
        (double)s->late_dropped);
    cJSON_AddNumberToObject(st, "late_answers_passed_in_batches",
        (double)s->late_passed);
    cJSON_AddNumberToObject(st, "batches",
        (double)(s->batches[0] + s->batches[1]));
    cJSON_AddNumberToObject(st, "untracked", (double)s->untracked);
    cJSON_AddNumberToObject(st, "completed", (double)s->completed);
    cJSON_AddNumberToObject(st, "failed", (double)s->failed);
    cJSON_AddNumberToObject(st, "cancelled", (double)s->cancelled);
    cJSON_AddNumberToObject(st, "readers", t->pub != NULL ?
        (double)tap_publish_readers(t->pub) : 0);
    cJSON_AddNumberToObject(st, "events_dropped", t->pub != NULL ?
        (double)tap_publish_dropped(t->pub) : 0);
    text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return text;
}

/* The agent's request named by id (its JSON text, or a word), trying the
 * string spelling of a number too. */
static struct tap_request *
tap_find(struct tap *t, const cJSON *id)
{
    struct tap_request *r = NULL;
    char               *text;

    if (cJSON_IsString(id)) {
        r = tap_ledger_find(t->ledger, TAP_DIR_TO_SERVER, id->valuestring);
        if (r == NULL) {
            text = cJSON_PrintUnformatted(id);
            r = tap_ledger_find(t->ledger, TAP_DIR_TO_SERVER, text);
            free(text);
        }
    } else if (cJSON_IsNumber(id)) {
        text = cJSON_PrintUnformatted(id);
        r = tap_ledger_find(t->ledger, TAP_DIR_TO_SERVER, text);
        free(text);
    }
    return r;
}

/* {"cmd":"cancel","id":ID,"reason":TEXT}: the operator's cancel. */
static char *
tap_cancel_cmd(struct tap *t, const cJSON *cmd)
{
    const cJSON        *id = cJSON_GetObjectItemCaseSensitive(cmd, "id");
    const cJSON        *why = cJSON_GetObjectItemCaseSensitive(cmd, "reason");
    struct tap_request *r = tap_find(t, id);
    cJSON              *o = tap_event_new(t, "cancel_result", 0);
    cJSON              *note, *err, *data;
    char               *reason, *text, *to_server;

    if (id != NULL)
        cJSON_AddItemToObject(o, "id", cJSON_Duplicate(id, true));
    if (r == NULL || (t->http == NULL && (t->child == NULL || t->exited)) ||
        r->own ||
        strcmp(r->method, "initialize") == 0) {
        cJSON_AddBoolToObject(o, "ok", false);
        cJSON_AddStringToObject(o, "detail", r == NULL ?
            "no request of the agent's with that id is in flight" :
            r->own ? "that is the tap's own ping, not the agent's" :
            strcmp(r->method, "initialize") == 0 ? "initialize is never "
            "cancelled (MCP basic/utilities/cancellation)" :
            "the server is gone");
        goto out;
    }
    reason = cJSON_IsString(why) && why->valuestring[0] != '\0' ?
        str_sanitized(why->valuestring) : xstrdup("cancelled by the operator");
    if (strlen(reason) > 200)
        reason[200] = '\0';
    /* To the server: MCP basic/utilities/cancellation. */
    note = cJSON_CreateObject();
    cJSON_AddStringToObject(note, "jsonrpc", "2.0");
    cJSON_AddStringToObject(note, "method", "notifications/cancelled");
    data = cJSON_AddObjectToObject(note, "params");
    cJSON_AddItemToObject(data, "requestId", tap_id_json(r->id));
    cJSON_AddStringToObject(data, "reason", reason);
    to_server = cJSON_PrintUnformatted(note);
    cJSON_Delete(note);
    /* To the agent: its request is answered, so it does not wait. */
    note = cJSON_CreateObject();
    cJSON_AddStringToObject(note, "jsonrpc", "2.0");
    cJSON_AddItemToObject(note, "id", tap_id_json(r->id));
    err = cJSON_AddObjectToObject(note, "error");
    cJSON_AddNumberToObject(err, "code", -32800);
    cJSON_AddStringToObject(err, "message",
        "request cancelled by the operator");
    data = cJSON_AddObjectToObject(err, "data");
    cJSON_AddStringToObject(data, "reason", reason);
    cJSON_AddStringToObject(data, "by", "mcptop tap");
    text = cJSON_PrintUnformatted(note);
    cJSON_Delete(note);
    if (t->http != NULL) {
        char *detail = NULL;

        if (tap_http_cancel(t, r, to_server, text, &detail) != 0) {
            cJSON_AddBoolToObject(o, "ok", false);
            cJSON_AddStringToObject(o, "detail", detail);
            free(detail);
            free(text);
            free(to_server);
            free(reason);
            goto out;
        }
    } else {
        tap_relay_to_server(t, to_server);
        tap_relay_to_agent(t, text);
    }
    free(to_server);
    free(text);
    cJSON_AddBoolToObject(o, "ok", true);
    cJSON_AddStringToObject(o, "method", r->method);
    if (r->tool != NULL)
        cJSON_AddStringToObject(o, "tool", r->tool);
    cJSON_AddStringToObject(o, "reason", reason);
    free(reason);
    tap_ledger_cancel(t->ledger, r, tap_now(t));
out:
    text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return text;
}

/* host.command: one line from a reader. */
static char *
tap_command_cb(void *arg, const char *line, size_t len)
{
    struct tap  *t = arg;
    cJSON       *cmd = cJSON_ParseWithLength(line, len);
    const cJSON *word = cJSON_GetObjectItemCaseSensitive(cmd, "cmd");
    char        *answer;

    if (cJSON_IsString(word) && strcmp(word->valuestring, "snapshot") == 0) {
        answer = tap_snapshot_cb(t);
    } else if (cJSON_IsString(word) &&
        strcmp(word->valuestring, "cancel") == 0) {
        answer = tap_cancel_cmd(t, cmd);
    } else if (cJSON_IsString(word) && strcmp(word->valuestring, "end") == 0) {
        const cJSON *sess = cJSON_GetObjectItemCaseSensitive(cmd, "session");
        cJSON       *o = tap_session_end(t, cJSON_IsString(sess) ?
            sess->valuestring : NULL);

        answer = cJSON_PrintUnformatted(o);
        cJSON_Delete(o);
    } else {
        cJSON *o = tap_event_new(t, "error", 0);

        cJSON_AddStringToObject(o, "detail", "unknown command (expected "
            "{\"cmd\": \"snapshot\"}, {\"cmd\": \"cancel\", \"id\": ID, "
            "\"reason\": TEXT} or {\"cmd\": \"end\", \"session\": "
            "PREFIX})");
        answer = cJSON_PrintUnformatted(o);
        cJSON_Delete(o);
    }
    cJSON_Delete(cmd);
    return answer;
}

static const struct tap_publish_host tap_publish_host = {
    .snapshot = tap_snapshot_cb,
    .command = tap_command_cb,
};

/* --- --probe: pings of the tap's own when the agent is quiet ------------ */

#define TAP_PROBE_TIMEOUT_S 10.0

/* ev_timer: a ping when nothing crossed for the interval (and the
 * agent's session is initialized); a ping unanswered in time fails as a
 * timeout. */
static void
tap_probe_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct tap *t = w->data;
    double      now = tap_now(t);
    double      iv = t->opt.probe_interval_ms / 1000.0;
    char        id[48], *text;
    cJSON      *o;

    (void)loop;
    (void)revents;
    if (t->probe != NULL && now - t->probe->started > TAP_PROBE_TIMEOUT_S) {
        struct failure_evidence evd = { .timer = FAILURE_TIMER_REQUEST };
        struct failure          f;

        failure_make(&f, &evd, FAILURE_SITE_REQUEST, "no answer to the "
            "tap's ping within 10000 ms");
        tap_ledger_fail(t->ledger, t->probe, &f, now);
        return;
    }
    if (t->probe != NULL || !t->initialized || t->child == NULL ||
        t->exited || t->shutdown || now - t->last_traffic < iv)
        return;
    snprintf(id, sizeof(id), "\"mcptop-tap-ping-%lu\"", ++t->probe_seq);
    t->probe = tap_ledger_own(t->ledger, id, "ping", now, clock_wall_ms());
    o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "jsonrpc", "2.0");
    cJSON_AddItemToObject(o, "id", tap_id_json(id));
    cJSON_AddStringToObject(o, "method", "ping");
    text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    tap_relay_to_server(t, text);
    free(text);
}

/* --- the end ------------------------------------------------------------- */

/* The tap is done: its host ends the loop. */
static void
tap_done(struct tap *t)
{
    if (t->host != NULL && t->host->done != NULL)
        t->host->done(t->arg);
}

void
tap_say(struct tap *t, const char *fmt, ...)
{
    va_list ap;
    char   *text;

    if (t->host == NULL || t->host->say == NULL)
        return;
    va_start(ap, fmt);
    text = str_vprintf(fmt, ap);
    va_end(ap);
    t->host->say(t->arg, text);
    free(text);
}

/* ev_timer: the last bytes drain (bounded), then the tap is done. */
static void
tap_linger_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct tap *t = w->data;

    (void)revents;
    tap_relay_flush(t);
    if (t->pub != NULL)
        tap_publish_flush(t->pub);
    if ((tap_relay_drained(t) && (t->pub == NULL ||
        tap_publish_flush(t->pub))) || tap_now(t) >= t->linger_until) {
        ev_timer_stop(loop, w);
        tap_done(t);
    }
}

void
tap_server_closed(struct tap *t)
{
    char    detail[160];
    int64_t wall = clock_wall_ms();
    cJSON  *o;

    if (t->exited && WIFEXITED(t->status))
        snprintf(detail, sizeof(detail), "the server exited with status "
            "%d", WEXITSTATUS(t->status));
    else if (t->exited && WIFSIGNALED(t->status))
        snprintf(detail, sizeof(detail), "the server was killed by signal "
            "%d", WTERMSIG(t->status));
    else
        snprintf(detail, sizeof(detail), "the server closed its stdout");
    if (tap_ledger_count(t->ledger) > 0) {
        /* Each request in flight: connection_closed, delivered unknown. */
        tap_ledger_close(t->ledger, detail, tap_now(t));
    } else if (!t->shutdown) {
        /* Nothing in flight and nobody asked: the loss itself is the
         * observation, as for any stdio server. */
        struct failure_evidence evd = { .child_closed = true,
                                        .peer_known_dead = true };
        struct failure          f;

        failure_make(&f, &evd, FAILURE_SITE_REQUEST, detail);
        tap_exchange(t, "process", NULL, &f, 0);
    }
    o = tap_event_new(t, "exit", wall);
    if (t->exited && WIFSIGNALED(t->status))
        cJSON_AddNumberToObject(o, "signal", WTERMSIG(t->status));
    else if (t->exited)
        cJSON_AddNumberToObject(o, "code", WEXITSTATUS(t->status));
    cJSON_AddStringToObject(o, "detail", detail);
    tap_event_publish(t, o);
    t->done = true;
    ev_io_stop(t->loop, &t->in_w);
    t->linger_until = tap_now(t) + TAP_LINGER_S;
    ev_timer_init(&t->linger, tap_linger_cb, 0., 0.02);
    t->linger.data = t;
    ev_timer_start(t->loop, &t->linger);
}

void
tap_shutdown(struct tap *t)
{
    if (t->http != NULL) {
        /* The HTTP form ends on a signal: its agents reconnect to the
         * server's own URL or to the next tap. */
        t->shutdown = true;
        tap_done(t);
        return;
    }
    if (t->shutdown && t->child != NULL && !t->exited) {
        child_signal(t->child, SIGKILL);
        return;
    }
    tap_relay_shutdown(t);
}

/* The server's name: the command's last path component. */
static char *
tap_default_name(const char *cmd)
{
    const char *slash = strrchr(cmd, '/');

    return str_sanitized(slash != NULL ? slash + 1 : cmd);
}

static char *
tap_command_line(char *const *argv, size_t argc)
{
    size_t n = 1;
    char  *s, *p, *clean;

    for (size_t i = 0; i < argc; i++)
        n += strlen(argv[i]) + 1;
    s = p = xcalloc(1, n);
    for (size_t i = 0; i < argc; i++)
        p += sprintf(p, "%s%s", i > 0 ? " " : "", argv[i]);
    clean = str_sanitized(s);
    free(s);
    return clean;
}

/* The HTTP form's default name: the upstream URL's host. */
static char *
tap_host_name(const char *url)
{
    const char *p = strstr(url, "://");
    const char *at, *end;
    char       *host, *clean;

    p = p != NULL ? p + 3 : url;
    end = p + strcspn(p, "/?#");
    at = memchr(p, '@', (size_t)(end - p));
    if (at != NULL)
        p = at + 1;
    if (*p == '[')
        end = p + strcspn(p, "]") + 1;
    else
        end = p + strcspn(p, ":/?#");
    host = str_ndup(p, (size_t)(end - p));
    clean = str_sanitized(host[0] != '\0' ? host : "http");
    free(host);
    return clean;
}

char *
tap_socket_path(const char *name, char **cause)
{
    return tap_publish_default_path(name, cause);
}

char *
tap_socket_dir(char **cause)
{
    return tap_publish_default_dir(cause);
}

/* The server's side: the HTTP form listens, the stdio form starts the
 * server. 0, or -1 with *cause (may be left NULL). */
static int
tap_begin(struct tap *t, char **cause)
{
    const struct tap_options *opt = &t->opt;

    if (opt->upstream != NULL) {
        t->name = opt->name != NULL ? str_sanitized(opt->name) :
            tap_host_name(opt->upstream);
        t->decl.name = t->name;
        t->decl.transport = CONFIG_HTTP;
        if (tap_http_start(t, cause) != 0)
            return -1;
        t->command = xstrdup(tap_http_upstream(t));
        return 0;
    }
    t->name = opt->name != NULL ? str_sanitized(opt->name) :
        tap_default_name(opt->argv[0]);
    t->command = tap_command_line(opt->argv, opt->argc);
    t->decl.name = t->name;
    t->decl.transport = CONFIG_STDIO;
    t->decl.command = opt->argv[0];
    t->decl.args = (char **)(opt->argv + 1);
    t->decl.nargs = opt->argc - 1;
    return tap_relay_start(t, cause);
}

/* The socket: at the path asked for, or the default one (NAME-PID when a
 * live tap has the name). Observation never stops the relay: a socket
 * that cannot be made is said, and that is all. */
static void
tap_socket_open(struct tap *t)
{
    char *cause = NULL, *path;

    path = t->opt.socket_path != NULL ? xstrdup(t->opt.socket_path) :
        tap_publish_default_path(t->name, &cause);
    if (path != NULL)
        t->pub = tap_publish_new(t->loop, path, &tap_publish_host, t,
            &cause);
    if (t->pub == NULL && path != NULL && t->opt.socket_path == NULL) {
        /* The name is taken (another agent runs the same server):
         * NAME-PID, so that --taps finds both. */
        char *alt = str_printf("%s-%ld", t->name, (long)getpid());

        free(path);
        free(cause);
        cause = NULL;
        path = tap_publish_default_path(alt, &cause);
        if (path != NULL)
            t->pub = tap_publish_new(t->loop, path, &tap_publish_host, t,
                &cause);
        if (t->pub != NULL)
            tap_say(t, "a tap named %s runs already: publishing at %s",
                t->name, path);
        free(alt);
    }
    if (t->pub == NULL)
        tap_say(t, "not publishing: %s", cause != NULL ? cause :
            "no socket");
    free(cause);
    free(path);
}

struct tap *
tap_start(struct ev_loop *loop, const struct tap_options *opt,
    const struct tap_host *host, void *arg, char **cause)
{
    struct tap *t = xcalloc(1, sizeof(*t));

    t->loop = loop;
    t->host = host;
    t->arg = arg;
    t->opt = *opt;
    if (t->opt.teardown_ms <= 0)
        t->opt.teardown_ms = CONFIG_DEFAULT_TEARDOWN_MS;
    t->started_ms = clock_wall_ms();
    t->decl.teardown_ms = t->opt.teardown_ms;
    t->decl.max_message_bytes = CONFIG_DEFAULT_MAX_MESSAGE_BYTES;
    record_init(&t->rec);
    t->ledger = tap_ledger_new(&tap_ledger_host, t, 0);
    if (tap_begin(t, cause) != 0) {
        tap_stop(t);
        return NULL;
    }
    if (!t->opt.no_socket)
        tap_socket_open(t);
    if (t->opt.probe) {
        double iv;

        if (t->opt.probe_interval_ms <= 0)
            t->opt.probe_interval_ms = CONFIG_DEFAULT_PING_INTERVAL_MS;
        iv = t->opt.probe_interval_ms / 1000.0;
        ev_timer_init(&t->probe_timer, tap_probe_cb, iv / 4, iv / 4 < 1.0 ?
            iv / 4 : 1.0);
        t->probe_timer.data = t;
        ev_timer_start(t->loop, &t->probe_timer);
    }
    return t;
}

bool
tap_server_exited(const struct tap *t, int *status)
{
    if (t->http != NULL || !t->exited)
        return false;
    *status = t->status;
    return true;
}

void
tap_stop(struct tap *t)
{
    if (t == NULL)
        return;
    ev_timer_stop(t->loop, &t->probe_timer);
    ev_timer_stop(t->loop, &t->linger);
    tap_publish_free(t->pub);
    t->pub = NULL;
    if (t->http != NULL)
        tap_http_stop(t);
    else if (t->child != NULL)
        tap_relay_stop(t);
    child_groups_kill_all();
    child_orphans_end(t->opt.teardown_ms / 1000.0);
    tap_ledger_free(t->ledger);
    record_done(&t->rec);
    for (size_t i = 0; i < t->nops; i++)
        free((char *)t->ops[i]);
    free(t->name);
    free(t->command);
    free(t);
}
