/*
 * The JSON view of a fleet (jsonl.h): records built with cJSON from the
 * engine's const getters, the keys always in the same order (scripts and
 * the tests compare lines). This file reads no clock: a record says
 * when with the engine's own stamps.
 */
#include "export/jsonl.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "engine/ending.h"
#include "engine/failure.h"
#include "engine/fleet.h"
#include "engine/health.h"
#include "engine/liveness.h"
#include "engine/server.h"
#include "util/clock.h"
#include "util/str.h"

/* A duration in ms, cut (not rounded) to one decimal. */
static double
jsonl_ms1(double ms)
{
    return (double)((long)(ms * 10)) / 10;
}

static void
jsonl_liveness(cJSON *o, const struct liveness *l)
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

/* "warnings": tls_insecure first, then the server's own; none: no key. */
static void
jsonl_warnings(cJSON *o, const struct server *s)
{
    const char *ws[4];
    size_t      nw = server_warnings(s, ws, 4);
    cJSON      *w = NULL;

    if (server_decl(s)->tls_insecure || nw > 0)
        w = cJSON_AddArrayToObject(o, "warnings");
    if (server_decl(s)->tls_insecure)
        cJSON_AddItemToArray(w, cJSON_CreateString("tls_insecure: the "
            "server's certificate is not verified"));
    for (size_t i = 0; i < nw; i++)
        cJSON_AddItemToArray(w, cJSON_CreateString(ws[i]));
}

/* "session": the open session's facts, or null. */
static void
jsonl_session(cJSON *o, const struct server *s)
{
    struct server_session_info si;
    cJSON                     *so;

    server_session(s, &si);
    if (!si.open) {
        cJSON_AddNullToObject(o, "session");
        return;
    }
    so = cJSON_AddObjectToObject(o, "session");
    if (si.id_prefix[0] != '\0')
        cJSON_AddStringToObject(so, "id_prefix", si.id_prefix);
    else
        cJSON_AddNullToObject(so, "id_prefix");
    cJSON_AddStringToObject(so, "protocol_version",
        si.protocol_version != NULL ? si.protocol_version : "");
    if (si.server_name != NULL)
        cJSON_AddStringToObject(so, "server_name", si.server_name);
    else
        cJSON_AddNullToObject(so, "server_name");
    if (si.server_version != NULL)
        cJSON_AddStringToObject(so, "server_version", si.server_version);
    else
        cJSON_AddNullToObject(so, "server_version");
    if (si.cache_scope != NULL) {
        cJSON_AddStringToObject(so, "cache_scope", si.cache_scope);
        if (strcmp(si.cache_scope, "public") == 0)
            cJSON_AddStringToObject(so, "note", "server/discover is "
                "cacheable by shared caches (cacheScope public): an "
                "answer proves the endpoint answers, not the backend");
    }
}

/* A stdio server's process: "pid", "exit", "stray_stdout_lines". */
/* See jsonl.h. */
size_t
jsonl_stderr_tail(const struct server *s, const char **lines, size_t max,
    size_t max_bytes)
{
    size_t n = server_stderr_count(s), bytes = 0, k = 0;

    /* Walk back from the newest while the lines fit; a line already
     * taken (a respawned child saying the same) is said once. */
    for (size_t i = n; i > 0 && k < max; i--) {
        const char *l = server_stderr_line(s, i - 1);
        size_t      len = l != NULL ? strlen(l) : 0;
        bool        seen = false;

        if (l == NULL || (bytes + len > max_bytes && k > 0))
            break;
        for (size_t j = 0; j < k && !seen; j++)
            seen = strcmp(lines[j], l) == 0;
        if (seen)
            continue;
        bytes += len;
        lines[k++] = l;
    }
    /* Oldest first. */
    for (size_t a = 0, b = k; a + 1 < b; a++, b--) {
        const char *t = lines[a];

        lines[a] = lines[b - 1];
        lines[b - 1] = t;
    }
    return k;
}

/* "stderr_tail": a failing stdio server's cause is often only on its
 * stderr (npm's E404 for a mistyped package): its last lines, while its
 * health is not ok. */
static void
jsonl_add_stderr_tail(cJSON *o, const struct server *s)
{
    const char *lines[JSONL_STDERR_TAIL_LINES];
    size_t      n;
    cJSON      *arr;

    if (server_health(s, NULL).state == HEALTH_OK)
        return;
    n = jsonl_stderr_tail(s, lines, JSONL_STDERR_TAIL_LINES,
        JSONL_STDERR_TAIL_BYTES);
    if (n == 0)
        return;
    arr = cJSON_AddArrayToObject(o, "stderr_tail");
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(arr, cJSON_CreateString(lines[i]));
}

static void
jsonl_process(cJSON *o, const struct server *s)
{
    int code, sig;

    if (server_pid(s) > 0)
        cJSON_AddNumberToObject(o, "pid", (double)server_pid(s));
    if (server_exit_status(s, &code, &sig)) {
        cJSON *eo = cJSON_AddObjectToObject(o, "exit");

        if (sig > 0)
            cJSON_AddNumberToObject(eo, "signal", sig);
        else
            cJSON_AddNumberToObject(eo, "code", code);
    }
    cJSON_AddNumberToObject(o, "stray_stdout_lines",
        (double)server_stray_lines(s));
    jsonl_add_stderr_tail(o, s);
}

/* "last_failure": the kind, its delivery verdict and where, or null. */
static void
jsonl_last_failure(cJSON *o, const struct server *s)
{
    const char           *op = NULL;
    const struct failure *f = server_last_failure(s, &op);
    cJSON                *fo;

    if (f == NULL) {
        cJSON_AddNullToObject(o, "last_failure");
        return;
    }
    fo = cJSON_AddObjectToObject(o, "last_failure");
    cJSON_AddStringToObject(fo, "kind", failure_kind_name(f->kind));
    cJSON_AddStringToObject(fo, "delivered", delivered_name(f->delivered));
    if (f->http_status != 0)
        cJSON_AddNumberToObject(fo, "http_status", (double)f->http_status);
    if (f->reason != FAILURE_REASON_NONE)
        cJSON_AddStringToObject(fo, "reason",
            failure_reason_name(f->reason));
    cJSON_AddStringToObject(fo, "site", failure_site_name(f->site));
    cJSON_AddStringToObject(fo, "op", op != NULL ? op : "");
    cJSON_AddStringToObject(fo, "detail", f->detail);
}

/* The deep check's own round trip, apart from the ping's. */
static void
jsonl_probe(cJSON *o, const struct server *s)
{
    if (server_probe_ms(s) >= 0)
        cJSON_AddNumberToObject(o, "probe_ms", jsonl_ms1(server_probe_ms(s)));
    else
        cJSON_AddNullToObject(o, "probe_ms");
    if (server_probe_notices(s) > 0)
        cJSON_AddNumberToObject(o, "probe_notices",
            (double)server_probe_notices(s));
}

/* When an exchange with s last completed (epoch ms), 0 never (as far as
 * the history ring goes back). */
static int64_t
jsonl_last_success(const struct server *s)
{
    for (size_t i = server_history_len(s); i > 0; i--) {
        const struct server_exchange *x = server_history(s, i - 1);

        if (x != NULL && x->completed && !x->ending)
            return x->ts;
    }
    return 0;
}

/* One request of a tap's ledger: check --json's in_flight element and
 * the body of watch's request lines. age_ms from now (epoch ms). */
static cJSON *
jsonl_request(const struct server_request *r, int64_t now)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *id = cJSON_Parse(r->id);

    cJSON_AddItemToObject(o, "id", id != NULL ? id :
        cJSON_CreateString(r->id));
    cJSON_AddStringToObject(o, "direction", r->direction);
    cJSON_AddStringToObject(o, "method", r->method);
    if (r->tool[0] != '\0')
        cJSON_AddStringToObject(o, "tool", r->tool);
    else
        cJSON_AddNullToObject(o, "tool");
    cJSON_AddNumberToObject(o, "started_at", (double)r->started_at);
    cJSON_AddNumberToObject(o, "age_ms", (double)(now > r->started_at ?
        now - r->started_at : 0));
    if (r->has_progress) {
        cJSON *p = cJSON_AddObjectToObject(o, "progress");

        cJSON_AddNumberToObject(p, "progress", r->progress);
        if (r->has_total)
            cJSON_AddNumberToObject(p, "total", r->total);
        else
            cJSON_AddNullToObject(p, "total");
        if (r->message[0] != '\0')
            cJSON_AddStringToObject(p, "message", r->message);
        else
            cJSON_AddNullToObject(p, "message");
    } else {
        cJSON_AddNullToObject(o, "progress");
    }
    cJSON_AddNumberToObject(o, "bytes", (double)r->bytes);
    return o;
}

/* A tap's server: its socket, the ledger (oldest first) and when the
 * tap last saw an exchange of the agent's (not the monitor's own link,
 * op "tap"). */
static void
jsonl_tap(cJSON *o, const struct server *s)
{
    cJSON  *arr = cJSON_AddArrayToObject(o, "in_flight");
    int64_t now = clock_wall_ms(), last = 0;
    char   *path = str_sanitized(server_decl(s)->tap);

    cJSON_AddStringToObject(o, "tap", path);
    free(path);
    for (size_t i = 0; i < server_in_flight(s); i++)
        cJSON_AddItemToArray(arr, jsonl_request(server_request(s, i), now));
    for (size_t i = server_history_len(s); i > 0 && last == 0; i--) {
        const struct server_exchange *x = server_history(s, i - 1);

        if (x != NULL && strcmp(x->op, "tap") != 0)
            last = x->ts;
    }
    if (last > 0) {
        cJSON_AddNumberToObject(o, "last_exchange_at", (double)last);
        cJSON_AddNumberToObject(o, "last_exchange_age_ms",
            (double)(now - last));
    } else {
        cJSON_AddNullToObject(o, "last_exchange_at");
        cJSON_AddNullToObject(o, "last_exchange_age_ms");
    }
    if (server_pid(s) > 0)
        cJSON_AddNumberToObject(o, "pid", (double)server_pid(s));
}

/* "tags", as the config gives them (a broken entry's too). */
static void
jsonl_tags(cJSON *o, const struct server *s)
{
    const struct config_server *d = server_decl(s);
    cJSON                      *arr = cJSON_AddArrayToObject(o, "tags");

    for (size_t i = 0; i < d->ntags; i++) {
        char *t = str_sanitized(d->tags[i]);

        cJSON_AddItemToArray(arr, cJSON_CreateString(t));
        free(t);
    }
}

/* "sources": every client file that declares this same target (issue
 * 28), when there are several. */
static void
jsonl_sources(cJSON *o, const struct config_server *d)
{
    cJSON *arr;

    if (d->nsources == 0)
        return;
    arr = cJSON_AddArrayToObject(o, "sources");
    for (size_t i = 0; i < d->nsources; i++) {
        cJSON *e = cJSON_CreateObject();
        char  *file = str_sanitized(d->sources[i].origin);

        if (d->sources[i].client != NULL)
            cJSON_AddStringToObject(e, "client", d->sources[i].client);
        else
            cJSON_AddNullToObject(e, "client");
        cJSON_AddStringToObject(e, "file", file);
        free(file);
        cJSON_AddItemToArray(arr, e);
    }
}

cJSON *
jsonl_server(const struct server *s)
{
    cJSON  *o = cJSON_CreateObject();
    long    tools = server_tools(s);
    double  rtt = server_rtt_ms(s);
    struct health h = server_health(s, NULL);
    int64_t last_ok = jsonl_last_success(s);
    char   *name = str_sanitized(server_name(s));
    /* The URL redacted (server_target gives the decl's url_shown), and
     * sanitized all the same: args may hold any bytes. */
    char   *target = str_sanitized(server_target(s));

    cJSON_AddStringToObject(o, "name", name);
    free(name);
    cJSON_AddStringToObject(o, "transport", server_transport_name(s));
    cJSON_AddStringToObject(o, "target", target);
    free(target);
    if (server_is_tap(s)) {
        /* Observed through a tap: the config's client, if any, apart. */
        cJSON_AddStringToObject(o, "source", "tap");
        if (server_decl(s)->source != NULL)
            cJSON_AddStringToObject(o, "config_source",
                server_decl(s)->source);
    } else if (server_decl(s)->source != NULL) {
        cJSON_AddStringToObject(o, "source", server_decl(s)->source);
    }
    jsonl_sources(o, server_decl(s));
    jsonl_tags(o, s);
    if (!health_monitored(h.state))
        cJSON_AddNullToObject(o, "ok");     /* neither ok nor a failure */
    else
        cJSON_AddBoolToObject(o, "ok", h.state == HEALTH_OK);
    cJSON_AddStringToObject(o, "health", health_state_name(h.state));
    cJSON_AddStringToObject(o, "health_reason", h.reason);
    cJSON_AddStringToObject(o, "liveness_method", server_liveness_method(s));
    cJSON_AddStringToObject(o, "state", server_state_name(server_state(s)));
    if (server_era_name(server_era(s)) != NULL)
        cJSON_AddStringToObject(o, "era", server_era_name(server_era(s)));
    else
        cJSON_AddNullToObject(o, "era");
    jsonl_liveness(o, server_liveness(s));
    jsonl_warnings(o, s);
    if (server_next_attempt_ms(s) >= 0)
        cJSON_AddNumberToObject(o, "next_attempt_at",
            (double)server_next_attempt_ms(s));
    jsonl_session(o, s);
    if (server_is_tap(s))
        jsonl_tap(o, s);
    else if (server_decl(s)->transport == CONFIG_STDIO)
        jsonl_process(o, s);
    if (tools >= 0)
        cJSON_AddNumberToObject(o, "tools", (double)tools);
    else
        cJSON_AddNullToObject(o, "tools");
    jsonl_last_failure(o, s);
    /* Nothing stale passes for current: no round trip while the last
     * exchange failed; when the last success was, beside it. */
    if (rtt >= 0 && server_fail_streak(s) == 0)
        cJSON_AddNumberToObject(o, "rtt_ms", jsonl_ms1(rtt));
    else
        cJSON_AddNullToObject(o, "rtt_ms");
    if (last_ok > 0)
        cJSON_AddNumberToObject(o, "last_success_at", (double)last_ok);
    else
        cJSON_AddNullToObject(o, "last_success_at");
    if (server_decl(s)->probe != NULL)
        jsonl_probe(o, s);
    return o;
}

cJSON *
jsonl_fleet(const struct fleet *f)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *arr = cJSON_AddArrayToObject(root, "servers");
    cJSON *sum;
    cJSON *hs;
    long   counts[LIVENESS__COUNT] = { 0 }, absent = 0, disabled = 0;
    long   health[HEALTH__COUNT] = { 0 };

    for (size_t i = 0; i < fleet_size(f); i++) {
        const struct server   *s = fleet_server(f, i);
        const struct liveness *l = server_liveness(s);

        cJSON_AddItemToArray(arr, jsonl_server(s));
        health[server_health(s, NULL).state]++;
        if (server_state(s) == SERVER_DISABLED)
            disabled++;
        else if (l->present)
            counts[l->state]++;
        else
            absent++;
    }
    sum = cJSON_AddObjectToObject(root, "summary");
    cJSON_AddNumberToObject(sum, "reachable",
        (double)counts[LIVENESS_REACHABLE]);
    cJSON_AddNumberToObject(sum, "unreachable",
        (double)counts[LIVENESS_UNREACHABLE]);
    cJSON_AddNumberToObject(sum, "unknown", (double)counts[LIVENESS_UNKNOWN]);
    cJSON_AddNumberToObject(sum, "absent", (double)absent);
    cJSON_AddNumberToObject(sum, "disabled", (double)disabled);
    hs = cJSON_AddObjectToObject(sum, "health");
    for (int k = 0; k < HEALTH__COUNT; k++)
        cJSON_AddNumberToObject(hs, health_state_name((enum health_state)k),
            (double)health[k]);
    return root;
}

cJSON *
jsonl_ending(const struct ending *e)
{
    cJSON *o = cJSON_CreateObject();
    char  *name = str_sanitized(server_name(e->server));

    cJSON_AddStringToObject(o, "server", name);
    free(name);
    cJSON_AddStringToObject(o, "outcome", ending_outcome_name(e->outcome));
    if (e->http_status != 0)
        cJSON_AddNumberToObject(o, "http_status", (double)e->http_status);
    if (e->has_failure) {
        cJSON_AddStringToObject(o, "kind", failure_kind_name(e->kind));
        cJSON_AddStringToObject(o, "delivered", delivered_name(e->delivered));
    }
    if (e->exit_code >= 0 && e->outcome == ENDING_EXITED)
        cJSON_AddNumberToObject(o, "exit_code", e->exit_code);
    if (e->signal > 0)
        cJSON_AddNumberToObject(o, "signal", e->signal);
    cJSON_AddNumberToObject(o, "duration_ms", jsonl_ms1(e->duration_ms));
    if (e->settled)
        cJSON_AddNumberToObject(o, "settled_ms", jsonl_ms1(e->settled_ms));
    else
        cJSON_AddNullToObject(o, "settled_ms");
    cJSON_AddBoolToObject(o, "half_open", e->half_open);
    if (e->sessionless)
        cJSON_AddBoolToObject(o, "sessionless", true);
    if (e->detail[0] != '\0')
        cJSON_AddStringToObject(o, "detail", e->detail);
    return o;
}

/* An exchange's line after "ts": its op and outcome, and for a failure
 * its kind, delivery verdict, where, and when the next attempt comes. */
static void
jsonl_exchange(cJSON *o, const struct event *e, const char *name)
{
    const struct failure *f = e->failure;

    cJSON_AddStringToObject(o, "event", "exchange");
    cJSON_AddStringToObject(o, "server", name);
    if (server_is_tap(e->server))
        cJSON_AddStringToObject(o, "source", "tap");
    cJSON_AddStringToObject(o, "op", e->op);
    if (e->completed) {
        cJSON_AddStringToObject(o, "outcome", "completed");
    } else {
        cJSON_AddStringToObject(o, "outcome", failure_kind_name(f->kind));
        cJSON_AddStringToObject(o, "delivered", delivered_name(f->delivered));
        if (f->http_status != 0)
            cJSON_AddNumberToObject(o, "http_status", (double)f->http_status);
        if (f->reason != FAILURE_REASON_NONE)
            cJSON_AddStringToObject(o, "reason",
                failure_reason_name(f->reason));
        cJSON_AddStringToObject(o, "site", failure_site_name(f->site));
        cJSON_AddStringToObject(o, "detail", f->detail);
        if (server_next_attempt_ms(e->server) >= 0)
            cJSON_AddNumberToObject(o, "next_attempt_at",
                (double)server_next_attempt_ms(e->server));
    }
    cJSON_AddNumberToObject(o, "ms", jsonl_ms1(e->ms));
}

/* An ending's or a settlement's line: "ts", "event", then the ending's
 * record. */
static char *
jsonl_ending_line(cJSON *o, const struct event *e)
{
    cJSON *eo = jsonl_ending(e->ending);
    cJSON *it;
    char  *text;

    cJSON_AddStringToObject(o, "event",
        e->type == EVENT_ENDING ? "ending" : "settled");
    cJSON_ArrayForEach(it, eo) {
        cJSON_AddItemReferenceToObject(o, it->string, it);
    }
    text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    cJSON_Delete(eo);
    return text;
}

char *
jsonl_exit_line(size_t asked, size_t not_ended)
{
    cJSON *o = cJSON_CreateObject();
    char   ts[40], *text;

    clock_format_iso(clock_wall_ms(), ts, sizeof(ts));
    cJSON_AddStringToObject(o, "ts", ts);
    cJSON_AddStringToObject(o, "event", "exit");
    cJSON_AddNumberToObject(o, "sessions_ended", (double)(asked - not_ended));
    cJSON_AddNumberToObject(o, "sessions_not_ended", (double)not_ended);
    text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return text;
}

char *
jsonl_event_line(const struct event *e)
{
    cJSON *o;
    char   ts[40];
    char  *name, *text;

    if (e->type == EVENT_STATE)
        return NULL;
    o = cJSON_CreateObject();
    clock_format_iso(e->ts, ts, sizeof(ts));
    cJSON_AddStringToObject(o, "ts", ts);
    if (e->type == EVENT_ENDING || e->type == EVENT_SETTLED)
        return jsonl_ending_line(o, e);
    name = str_sanitized(server_name(e->server));
    switch (e->type) {
    case EVENT_EXCHANGE:
        jsonl_exchange(o, e, name);
        break;
    case EVENT_LIVENESS:
        cJSON_AddStringToObject(o, "event", "liveness");
        cJSON_AddStringToObject(o, "server", name);
        cJSON_AddStringToObject(o, "state",
            liveness_state_name(e->liveness->state));
        if (e->liveness->has_error_code)
            cJSON_AddStringToObject(o, "error_code",
                failure_kind_name(e->liveness->error_code));
        break;
    case EVENT_TOOLS_CHANGED:
        cJSON_AddStringToObject(o, "event", "tools_changed");
        cJSON_AddStringToObject(o, "server", name);
        cJSON_AddNumberToObject(o, "tools", (double)e->tools);
        break;
    case EVENT_REQUEST: {
        cJSON *r = jsonl_request(e->request, e->ts);
        cJSON *it;

        cJSON_AddStringToObject(o, "event", "request");
        cJSON_AddStringToObject(o, "server", name);
        cJSON_AddStringToObject(o, "source", "tap");
        cJSON_AddStringToObject(o, "phase", server_request_phase_name(
            (enum server_request_phase)e->request_phase));
        cJSON_ArrayForEach(it, r) {
            cJSON_AddItemReferenceToObject(o, it->string, it);
        }
        if (e->request->outcome[0] != '\0')
            cJSON_AddStringToObject(o, e->request_phase ==
                SERVER_REQUEST_END ? "outcome" : "detail",
                e->request->outcome);
        free(name);
        text = cJSON_PrintUnformatted(o);
        cJSON_Delete(o);
        cJSON_Delete(r);
        return text;
    }
    case EVENT_HEALTH:
        cJSON_AddStringToObject(o, "event", "health");
        cJSON_AddStringToObject(o, "server", name);
        cJSON_AddStringToObject(o, "state",
            health_state_name(e->health->state));
        if (e->health_was < HEALTH__COUNT)
            cJSON_AddStringToObject(o, "was",
                health_state_name(e->health_was));
        else
            cJSON_AddNullToObject(o, "was");
        cJSON_AddStringToObject(o, "reason", e->health->reason);
        break;
    default:
        break;
    }
    free(name);
    text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return text;
}

int
jsonl_write(FILE *out, const cJSON *o)
{
    char *text = cJSON_PrintUnformatted(o);
    int   n;

    if (text == NULL)
        return -1;
    n = fprintf(out, "%s\n", text);
    free(text);
    return n < 0 ? -1 : 0;
}
