/*
 * The tap (tap.h): what the relay's copy of each line becomes. The
 * ledger's reports turn into the record (record.c: history, streaks,
 * liveness minted by liveness_of), health (health_track_update, the rule
 * every server's follows) and the event stream published on the socket,
 * in `watch`'s shapes with "source":"tap", written by export/jsonl.c; a
 * reader that joins gets a snapshot first (the record's history, the
 * ledger). Commands from the socket: a snapshot, the operator's cancel,
 * an HTTP tap's ending. The loop is the caller's (tap.h): the tap starts
 * on it, tells its host when it is done, and stops when told.
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
#include "export/jsonl.h"
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

/* The line buffer, when a line would reach a reader (lines are written
 * only then), else NULL. Send what it holds with tap_line_send. */
struct jsonw *
tap_line(struct tap *t)
{
    return t->pub != NULL && tap_publish_readers(t->pub) > 0 ? &t->line :
        NULL;
}

void
tap_line_send(struct tap *t)
{
    if (t->pub != NULL && t->line.len > 0)
        tap_publish_line(t->pub, t->line.buf);
}

/* The id as JSON again (a number or a string), for the peers' messages. */
static cJSON *
tap_id_json(const char *id)
{
    cJSON *v = cJSON_Parse(id);

    return v != NULL ? v : cJSON_CreateString(id);
}

/* One request of the ledger, as the lines and the snapshot show it. */
static struct jsonl_tap_request
tap_request_view(const struct tap_request *r, double now, int64_t wall)
{
    return (struct jsonl_tap_request){
        .id = r->id,
        .direction = tap_dir_name(r->dir),
        .method = r->method,
        .tool = r->tool,
        .started_at = r->started_ms,
        .age_ms = (now - r->started) * 1000.0,
        .has_progress = r->has_progress,
        .progress = r->progress,
        .has_total = r->has_total,
        .total = r->total,
        .message = r->message,
        .progress_age_ms = wall - r->progress_ms,
        .bytes = r->bytes,
        .own = r->own,
    };
}

/* Publish health when it changed (the first one too): the rule of every
 * server's (health_track_update), from the record's facts. */
static void
tap_health_update(struct tap *t)
{
    struct health_input in = { .operator_state = HEALTH_OPERATOR_MONITORED,
        .liveness = &t->rec.liveness, .fail_streak = t->rec.fail_streak };
    enum health_state   was;
    int64_t             now = clock_wall_ms();
    struct jsonw       *w;

    if (!health_track_update(&t->health, &in, now, &was))
        return;
    if ((w = tap_line(t)) != NULL) {
        jsonl_tap_health(w, now, t->name, &t->health.health, was);
        tap_line_send(t);
    }
}

/* One exchange ended (the agent's, or the operator's DELETE through an
 * HTTP tap): the record, its lines. */
void
tap_exchange(struct tap *t, const char *op, const char *id,
    const struct failure *f, double ms)
{
    int64_t       wall = clock_wall_ms();
    bool          changed = record_exchange(&t->rec, tap_op(t, op), f, ms,
        wall);
    struct jsonw *w = tap_line(t);

    if (w != NULL) {
        jsonl_tap_exchange(w, t->name, wall, t->rec.exchanges, op, id, f,
            ms);
        tap_line_send(t);
        if (changed) {
            jsonl_tap_liveness(w, wall, t->name, &t->rec.liveness);
            tap_line_send(t);
        }
    }
    tap_health_update(t);
}

/* tap_ledger_host.started */
static void
tap_started_cb(void *arg, const struct tap_request *r)
{
    struct tap               *t = arg;
    struct jsonw             *w = tap_line(t);
    struct jsonl_tap_request  v;

    t->last_traffic = r->started;
    if (w == NULL)
        return;
    v = tap_request_view(r, tap_now(t), clock_wall_ms());
    jsonl_tap_request_line(w, r->started_ms, "request", t->name, &v);
    tap_line_send(t);
}

/* tap_ledger_host.progress */
static void
tap_progress_cb(void *arg, const struct tap_request *r)
{
    struct tap               *t = arg;
    struct jsonw             *w = tap_line(t);
    struct jsonl_tap_request  v;

    if (w == NULL)
        return;
    v = tap_request_view(r, tap_now(t), clock_wall_ms());
    jsonl_tap_request_line(w, r->progress_ms, "progress", t->name, &v);
    tap_line_send(t);
}

/* tap_ledger_host.ended */
static void
tap_ended_cb(void *arg, const struct tap_request *r, enum tap_end how,
    const struct failure *f, double ms)
{
    struct tap   *t = arg;
    struct jsonw *w = tap_line(t);

    if (w != NULL) {
        struct jsonl_tap_request v = tap_request_view(r, tap_now(t),
            clock_wall_ms());

        jsonl_tap_request_end(w, clock_wall_ms(), t->name, &v,
            tap_end_name(how), f, ms);
        tap_line_send(t);
    }
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

/* The snapshot's "tap": who, what, since when, which form. */
static void
tap_snapshot_tap(struct jsonw *w, const struct tap *t)
{
    jsonw_object_open(w, "tap");
    jsonw_int(w, "pid", (int64_t)getpid());
    if (t->child != NULL && !t->exited)
        jsonw_int(w, "server_pid", (int64_t)child_pid(t->child));
    else
        jsonw_null(w, "server_pid");
    jsonw_string(w, "command", t->command);
    jsonw_int(w, "started_at", t->started_ms);
    if (t->http != NULL) {
        jsonw_string(w, "transport", "streamable_http");
        jsonw_string(w, "listen", tap_http_listen(t));
        jsonw_string(w, "upstream", tap_http_upstream(t));
    } else {
        jsonw_string(w, "transport", "stdio");
    }
    jsonw_object_close(w);
}

/* The snapshot's record: liveness, health, the last failure, the history
 * (oldest first). */
static void
tap_snapshot_record(struct jsonw *w, const struct tap *t)
{
    jsonl_liveness(w, &t->rec.liveness);
    jsonw_object_open(w, "health");
    if (t->health.set) {
        jsonw_string(w, "state", health_state_name(t->health.health.state));
        jsonw_string(w, "reason", t->health.health.reason);
        jsonw_int(w, "since", t->health.since);
    } else {
        jsonw_string(w, "state", "pending");
        jsonw_string(w, "reason", "");
        jsonw_null(w, "since");
    }
    jsonw_object_close(w);
    if (t->rec.has_failure) {
        jsonw_object_open(w, "last_failure");
        jsonw_string(w, "op", t->rec.last_failure_op);
        jsonl_tap_failure(w, &t->rec.last_failure);
        jsonw_object_close(w);
    } else {
        jsonw_null(w, "last_failure");
    }
    jsonw_array_open(w, "history");
    for (size_t i = 0; i < t->rec.hist_len; i++) {
        const struct mcp_exchange *x = record_history(&t->rec, i);

        jsonw_object_open(w, NULL);
        jsonw_int(w, "ts", x->ts);
        jsonw_int(w, "seq", (int64_t)record_seq(&t->rec, i));
        jsonw_string(w, "op", x->op);
        jsonw_string(w, "outcome", x->completed ? "completed" :
            failure_kind_name((enum failure_kind)x->kind));
        if (!x->completed)
            jsonw_string(w, "delivered",
                delivered_name((enum delivered)x->delivered));
        jsonw_tenths(w, "ms", (int64_t)(x->ms * 10));
        jsonw_object_close(w);
    }
    jsonw_array_close(w);
}

/* The snapshot's "stats": bytes, lines, the ledger's counters, readers. */
static void
tap_snapshot_stats(struct jsonw *w, const struct tap *t)
{
    const struct tap_ledger_stats *s = tap_ledger_stats(t->ledger);

    jsonw_object_open(w, "stats");
    jsonw_int(w, "bytes_from_agent", (int64_t)t->bytes[TAP_SIDE_AGENT]);
    jsonw_int(w, "bytes_from_server", (int64_t)t->bytes[TAP_SIDE_SERVER]);
    jsonw_int(w, "lines_from_agent", (int64_t)s->lines[TAP_SIDE_AGENT]);
    jsonw_int(w, "lines_from_server", (int64_t)s->lines[TAP_SIDE_SERVER]);
    jsonw_int(w, "unparsed_lines", (int64_t)(s->unparsed[0] +
        s->unparsed[1]));
    jsonw_int(w, "unmatched_answers", (int64_t)(s->unmatched[0] +
        s->unmatched[1]));
    jsonw_int(w, "late_answers_dropped", (int64_t)s->late_dropped);
    jsonw_int(w, "late_answers_passed_in_batches", (int64_t)s->late_passed);
    jsonw_int(w, "batches", (int64_t)(s->batches[0] + s->batches[1]));
    jsonw_int(w, "untracked", (int64_t)s->untracked);
    jsonw_int(w, "completed", (int64_t)s->completed);
    jsonw_int(w, "failed", (int64_t)s->failed);
    jsonw_int(w, "cancelled", (int64_t)s->cancelled);
    jsonw_int(w, "readers", t->pub != NULL ?
        (int64_t)tap_publish_readers(t->pub) : 0);
    jsonw_int(w, "events_dropped", t->pub != NULL ?
        (int64_t)tap_publish_dropped(t->pub) : 0);
    jsonw_object_close(w);
}

/* host.snapshot: what a reader that joins now is told first. */
static char *
tap_snapshot_cb(void *arg)
{
    struct tap  *t = arg;
    struct jsonw w;
    double       now = tap_now(t);
    int64_t      wall = clock_wall_ms();

    jsonw_init(&w);
    jsonl_tap_head(&w, wall, "snapshot", t->name);
    tap_snapshot_tap(&w, t);
    tap_snapshot_record(&w, t);
    jsonw_array_open(&w, "in_flight");
    for (const struct tap_request *r = tap_ledger_oldest(t->ledger);
        r != NULL; r = r->newer) {
        struct jsonl_tap_request v = tap_request_view(r, now, wall);

        jsonl_tap_request(&w, NULL, &v);
    }
    jsonw_array_close(&w);
    if (t->http != NULL)
        tap_session_list_write(&w, t);
    tap_snapshot_stats(&w, t);
    jsonw_object_close(&w);
    return jsonw_take(&w, NULL);
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

/* The id a command gave, echoed in its answer as it came (an id that is
 * no number, string or null is echoed as its JSON text). */
static void
tap_echo_id(struct jsonw *w, const cJSON *id)
{
    char *text;

    if (cJSON_IsString(id)) {
        jsonw_string(w, "id", id->valuestring);
    } else if (cJSON_IsNumber(id)) {
        jsonw_double(w, "id", id->valuedouble);
    } else if (cJSON_IsNull(id)) {
        jsonw_null(w, "id");
    } else if (cJSON_IsBool(id)) {
        jsonw_bool(w, "id", cJSON_IsTrue(id));
    } else {
        text = cJSON_PrintUnformatted(id);
        jsonw_string(w, "id", text);
        free(text);
    }
}

/* The operator's cancel of r, with reason, to both peers: to the server
 * notifications/cancelled (MCP basic/utilities/cancellation), to the
 * agent the -32800 error, so it does not wait. 0, or -1 with *detail
 * (caller frees). */
static int
tap_cancel_send(struct tap *t, const struct tap_request *r,
    const char *reason, char **detail)
{
    cJSON *note, *err, *data;
    char  *to_server, *to_agent;
    int    rc = 0;

    note = cJSON_CreateObject();
    cJSON_AddStringToObject(note, "jsonrpc", "2.0");
    cJSON_AddStringToObject(note, "method", "notifications/cancelled");
    data = cJSON_AddObjectToObject(note, "params");
    cJSON_AddItemToObject(data, "requestId", tap_id_json(r->id));
    cJSON_AddStringToObject(data, "reason", reason);
    to_server = cJSON_PrintUnformatted(note);
    cJSON_Delete(note);
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
    to_agent = cJSON_PrintUnformatted(note);
    cJSON_Delete(note);
    if (t->http != NULL) {
        rc = tap_http_cancel(t, r, to_server, to_agent, detail);
    } else {
        tap_relay_to_server(t, to_server);
        tap_relay_to_agent(t, to_agent);
    }
    free(to_server);
    free(to_agent);
    return rc;
}

/* {"cmd":"cancel","id":ID,"reason":TEXT}: the operator's cancel. */
static char *
tap_cancel_cmd(struct tap *t, const cJSON *cmd)
{
    const cJSON        *id = cJSON_GetObjectItemCaseSensitive(cmd, "id");
    const cJSON        *why = cJSON_GetObjectItemCaseSensitive(cmd, "reason");
    struct tap_request *r = tap_find(t, id);
    struct jsonw        w;
    char               *reason, *detail = NULL;

    jsonw_init(&w);
    jsonl_tap_head(&w, clock_wall_ms(), "cancel_result", t->name);
    if (id != NULL)
        tap_echo_id(&w, id);
    if (r == NULL || (t->http == NULL && (t->child == NULL || t->exited)) ||
        r->own ||
        strcmp(r->method, "initialize") == 0) {
        jsonw_bool(&w, "ok", false);
        jsonw_string(&w, "detail", r == NULL ?
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
    if (tap_cancel_send(t, r, reason, &detail) != 0) {
        jsonw_bool(&w, "ok", false);
        if (detail != NULL)
            jsonw_string(&w, "detail", detail);
        free(detail);
        free(reason);
        goto out;
    }
    jsonw_bool(&w, "ok", true);
    jsonw_string(&w, "method", r->method);
    if (r->tool != NULL)
        jsonw_string(&w, "tool", r->tool);
    jsonw_string(&w, "reason", reason);
    free(reason);
    tap_ledger_cancel(t->ledger, r, tap_now(t));
out:
    jsonw_object_close(&w);
    return jsonw_take(&w, NULL);
}

/* host.command: one line from a reader. */
static char *
tap_command_cb(void *arg, const char *line, size_t len)
{
    struct tap  *t = arg;
    cJSON       *cmd = cJSON_ParseWithLength(line, len);
    const cJSON *word = cJSON_GetObjectItemCaseSensitive(cmd, "cmd");
    const char  *verb = cJSON_IsString(word) ? word->valuestring : "";
    char        *answer;

    if (strcmp(verb, "snapshot") == 0) {
        answer = tap_snapshot_cb(t);
    } else if (strcmp(verb, "cancel") == 0) {
        answer = tap_cancel_cmd(t, cmd);
    } else if (strcmp(verb, "end") == 0) {
        const cJSON *sess = cJSON_GetObjectItemCaseSensitive(cmd, "session");

        answer = tap_session_end(t, cJSON_IsString(sess) ?
            sess->valuestring : NULL);
    } else {
        struct jsonw out;

        jsonw_init(&out);
        jsonl_tap_head(&out, clock_wall_ms(), "error", t->name);
        jsonw_string(&out, "detail", "unknown command (expected "
            "{\"cmd\": \"snapshot\"}, {\"cmd\": \"cancel\", \"id\": ID, "
            "\"reason\": TEXT} or {\"cmd\": \"end\", \"session\": "
            "PREFIX})");
        jsonw_object_close(&out);
        answer = jsonw_take(&out, NULL);
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
    int64_t       wall = clock_wall_ms();
    struct jsonw *w;

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
    if ((w = tap_line(t)) != NULL) {
        bool sig = t->exited && WIFSIGNALED(t->status);

        jsonl_tap_exit(w, wall, t->name, t->exited && !sig ?
            WEXITSTATUS(t->status) : -1, sig ? WTERMSIG(t->status) : 0,
            detail);
        tap_line_send(t);
    }
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
    jsonw_done(&t->line);
    for (size_t i = 0; i < t->nops; i++)
        free((char *)t->ops[i]);
    free(t->name);
    free(t->command);
    free(t);
}
