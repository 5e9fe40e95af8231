/*
 * The JSON view of a fleet (jsonl.h): records written straight into a
 * JSON writer (util/jsonw.h: no tree, no printf per number) from the
 * engine's const getters, the keys always in the same order (scripts and
 * the tests compare lines), byte for byte what the cJSON trees it replaced
 * printed. The cJSON-returning functions parse that same text, so every
 * output has one source. A tap's lines share the head and the members of
 * watch's where their shapes are the same. This file reads no clock but
 * for the exit line: a record says when with the engine's own stamps.
 */
#include "export/jsonl.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/ending.h"
#include "engine/failure.h"
#include "engine/fleet.h"
#include "engine/health.h"
#include "engine/liveness.h"
#include "engine/server.h"
#include "util/clock.h"
#include "util/jsonw.h"
#include "util/str.h"

/* A duration in ms, cut (not rounded) to one decimal: its tenths. */
static int64_t
jsonl_ms1(double ms)
{
    return (int64_t)(ms * 10);
}

/* A string member, left out when there is none (as cJSON left out a
 * NULL string it was given). */
static void
jsonl_str(struct jsonw *w, const char *key, const char *v)
{
    if (v != NULL)
        jsonw_string(w, key, v);
}

void
jsonl_liveness(struct jsonw *w, const struct liveness *l)
{
    if (!l->present) {
        jsonw_null(w, "liveness");
        return;
    }
    jsonw_object_open(w, "liveness");
    jsonl_str(w, "state", liveness_state_name(l->state));
    jsonw_int(w, "observed_at", l->observed_at);
    if (l->has_error_code)
        jsonl_str(w, "error_code", failure_kind_name(l->error_code));
    jsonw_object_close(w);
}

/* "warnings": tls_insecure first, then the server's own; none: no key. */
static void
jsonl_warnings(struct jsonw *w, const struct server *s)
{
    const char *ws[4];
    size_t      nw = server_warnings(s, ws, 4);

    if (!server_decl(s)->tls_insecure && nw == 0)
        return;
    jsonw_array_open(w, "warnings");
    if (server_decl(s)->tls_insecure)
        jsonw_string(w, NULL, "tls_insecure: the server's certificate is "
            "not verified");
    for (size_t i = 0; i < nw; i++)
        jsonw_string(w, NULL, ws[i]);
    jsonw_array_close(w);
}

/* "session": the open session's facts, or null. */
static void
jsonl_session(struct jsonw *w, const struct server *s)
{
    struct mcp_session_info si;

    server_session(s, &si);
    if (!si.open) {
        jsonw_null(w, "session");
        return;
    }
    jsonw_object_open(w, "session");
    jsonw_string(w, "id_prefix", si.id_prefix[0] != '\0' ? si.id_prefix :
        NULL);
    jsonl_str(w, "protocol_version",
        si.protocol_version != NULL ? si.protocol_version : "");
    jsonw_string(w, "server_name", si.server_name);
    jsonw_string(w, "server_version", si.server_version);
    if (si.cache_scope != NULL) {
        jsonl_str(w, "cache_scope", si.cache_scope);
        if (strcmp(si.cache_scope, "public") == 0)
            jsonw_string(w, "note", "server/discover is cacheable by "
                "shared caches (cacheScope public): an answer proves the "
                "endpoint answers, not the backend");
    }
    jsonw_object_close(w);
}

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
jsonl_add_stderr_tail(struct jsonw *w, const struct server *s)
{
    const char *lines[JSONL_STDERR_TAIL_LINES];
    size_t      n;

    if (server_health(s, NULL).state == HEALTH_OK)
        return;
    n = jsonl_stderr_tail(s, lines, JSONL_STDERR_TAIL_LINES,
        JSONL_STDERR_TAIL_BYTES);
    if (n == 0)
        return;
    jsonw_array_open(w, "stderr_tail");
    for (size_t i = 0; i < n; i++)
        jsonw_string(w, NULL, lines[i]);
    jsonw_array_close(w);
}

/* A stdio server's process: "pid", "exit", "stray_stdout_lines". */
static void
jsonl_process(struct jsonw *w, const struct server *s)
{
    int code, sig;

    if (server_pid(s) > 0)
        jsonw_int(w, "pid", server_pid(s));
    if (server_exit_status(s, &code, &sig)) {
        jsonw_object_open(w, "exit");
        if (sig > 0)
            jsonw_int(w, "signal", sig);
        else
            jsonw_int(w, "code", code);
        jsonw_object_close(w);
    }
    jsonw_int(w, "stray_stdout_lines", (int64_t)server_stray_lines(s));
    jsonl_add_stderr_tail(w, s);
}

/* "last_failure": the kind, its delivery verdict and where, or null. */
static void
jsonl_last_failure(struct jsonw *w, const struct server *s)
{
    const char           *op = NULL;
    const struct failure *f = server_last_failure(s, &op);

    if (f == NULL) {
        jsonw_null(w, "last_failure");
        return;
    }
    jsonw_object_open(w, "last_failure");
    jsonl_str(w, "kind", failure_kind_name(f->kind));
    jsonl_str(w, "delivered", delivered_name(f->delivered));
    if (f->http_status != 0)
        jsonw_int(w, "http_status", f->http_status);
    if (f->reason != FAILURE_REASON_NONE)
        jsonl_str(w, "reason", failure_reason_name(f->reason));
    jsonl_str(w, "site", failure_site_name(f->site));
    jsonl_str(w, "op", op != NULL ? op : "");
    jsonl_str(w, "detail", f->detail);
    jsonw_object_close(w);
}

/* "server_requests": the server's own requests, answered, by method
 * (only those that came; no key when none did). */
static void
jsonl_asked(struct jsonw *w, const struct server *s)
{
    bool open = false;

    for (int k = 0; k < MCP_ASKED__COUNT; k++) {
        unsigned long n = server_asked(s, (enum mcp_asked)k);

        if (n == 0)
            continue;
        if (!open)
            jsonw_object_open(w, "server_requests");
        open = true;
        jsonw_int(w, mcp_asked_name((enum mcp_asked)k), (int64_t)n);
    }
    if (open)
        jsonw_object_close(w);
}

/* The deep check's own round trip, apart from the ping's. */
static void
jsonl_probe(struct jsonw *w, const struct server *s)
{
    if (server_probe_ms(s) >= 0)
        jsonw_tenths(w, "probe_ms", jsonl_ms1(server_probe_ms(s)));
    else
        jsonw_null(w, "probe_ms");
    if (server_probe_notices(s) > 0)
        jsonw_int(w, "probe_notices", (int64_t)server_probe_notices(s));
}

/* When an exchange with s last completed (epoch ms), 0 never (as far as
 * the history ring goes back). */
static int64_t
jsonl_last_success(const struct server *s)
{
    for (size_t i = server_history_len(s); i > 0; i--) {
        const struct mcp_exchange *x = server_history(s, i - 1);

        if (x != NULL && x->completed && !x->ending)
            return x->ts;
    }
    return 0;
}

static void jsonl_sanitized(struct jsonw *w, const char *key,
    const char *text);

/* "id": a JSON-RPC id given as its JSON text, as the agent wrote it: a
 * number, or a string (sanitized when asked: text the tap did not clean
 * yet). Text that is no JSON is a string. */
static void
jsonl_id(struct jsonw *w, const char *text, bool sanitize)
{
    cJSON      *id = cJSON_Parse(text);
    const char *s = cJSON_IsString(id) ? id->valuestring : text;

    if (cJSON_IsNumber(id) && id->valuedouble == floor(id->valuedouble) &&
        fabs(id->valuedouble) < 9007199254740992.0)
        jsonw_int(w, "id", (int64_t)id->valuedouble);
    else if (cJSON_IsNumber(id))
        jsonw_double(w, "id", id->valuedouble);
    else if (sanitize)
        jsonl_sanitized(w, "id", s);
    else
        jsonw_string(w, "id", s);
    cJSON_Delete(id);
}

/* One request of a tap's ledger: check --json's in_flight element and
 * the members of watch's request lines. age_ms from now (epoch ms). */
static void
jsonl_request_members(struct jsonw *w, const struct server_request *r,
    int64_t now)
{
    jsonl_id(w, r->id, true);
    jsonl_str(w, "direction", r->direction);
    jsonl_sanitized(w, "method", r->method);
    if (r->tool[0] != '\0')
        jsonl_sanitized(w, "tool", r->tool);
    else
        jsonw_null(w, "tool");
    jsonw_int(w, "started_at", r->started_at);
    jsonw_int(w, "age_ms", now > r->started_at ? now - r->started_at : 0);
    if (r->has_progress) {
        jsonw_object_open(w, "progress");
        jsonw_double(w, "progress", r->progress);
        if (r->has_total)
            jsonw_double(w, "total", r->total);
        else
            jsonw_null(w, "total");
        if (r->message[0] != '\0')
            jsonl_sanitized(w, "message", r->message);
        else
            jsonw_null(w, "message");
        jsonw_object_close(w);
    } else {
        jsonw_null(w, "progress");
    }
    jsonw_int(w, "bytes", (int64_t)r->bytes);
}

/* A tap's server: its socket, the ledger (oldest first) and when the
 * tap last saw an exchange of the agent's (not the monitor's own link,
 * op "tap"). */
static void
jsonl_tap(struct jsonw *w, const struct server *s)
{
    int64_t now = clock_wall_ms(), last = 0;

    jsonw_array_open(w, "in_flight");
    for (size_t i = 0; i < server_in_flight(s); i++) {
        jsonw_object_open(w, NULL);
        jsonl_request_members(w, server_request(s, i), now);
        jsonw_object_close(w);
    }
    jsonw_array_close(w);
    if (server_agent_sessions(s) >= 0) {
        /* An HTTP tap's: the agent's sessions (prefixes only). */
        jsonw_array_open(w, "sessions");
        for (size_t i = 0; i < (size_t)server_agent_sessions(s); i++) {
            const struct server_agent_session *a = server_agent_session(s, i);

            jsonw_object_open(w, NULL);
            jsonl_sanitized(w, "id_prefix", a->id_prefix);
            jsonw_int(w, "created_at", a->created_at);
            jsonw_int(w, "age_ms", now - a->created_at);
            jsonw_int(w, "requests", (int64_t)a->requests);
            jsonw_int(w, "last_at", a->last_at);
            jsonw_int(w, "idle_ms", now - a->last_at);
            jsonw_bool(w, "ending", a->ending);
            jsonw_object_close(w);
        }
        jsonw_array_close(w);
    }
    jsonl_sanitized(w, "tap", server_decl(s)->tap);
    for (size_t i = server_history_len(s); i > 0 && last == 0; i--) {
        const struct mcp_exchange *x = server_history(s, i - 1);

        if (x != NULL && strcmp(x->op, "tap") != 0)
            last = x->ts;
    }
    if (last > 0) {
        jsonw_int(w, "last_exchange_at", last);
        jsonw_int(w, "last_exchange_age_ms", now - last);
    } else {
        jsonw_null(w, "last_exchange_at");
        jsonw_null(w, "last_exchange_age_ms");
    }
    if (server_pid(s) > 0)
        jsonw_int(w, "pid", (int64_t)server_pid(s));
}

/* "tags", as the config gives them (a broken entry's too). */
static void
jsonl_tags(struct jsonw *w, const struct server *s)
{
    const struct config_server *d = server_decl(s);

    jsonw_array_open(w, "tags");
    for (size_t i = 0; i < d->ntags; i++) {
        char *t = str_sanitized(d->tags[i]);

        jsonw_string(w, NULL, t);
        free(t);
    }
    jsonw_array_close(w);
}

/* A sanitized copy of untrusted text as a member: on the stack when it
 * is short (a name, a URL), else on the heap. */
static void
jsonl_sanitized(struct jsonw *w, const char *key, const char *text)
{
    char   buf[256];
    size_t n;

    if (text == NULL) {
        jsonw_null(w, key);
        return;
    }
    n = strlen(text);
    if (n < sizeof(buf)) {
        n = str_sanitize(buf, sizeof(buf), text, n);
        jsonw_string_n(w, key, buf, n);
    } else {
        char *t = str_sanitized(text);

        jsonw_string(w, key, t);
        free(t);
    }
}

static void jsonl_sources(struct jsonw *w, const struct config_server *d);

/* The members of one server's record. */
static void
jsonl_server_members(struct jsonw *w, const struct server *s)
{
    long          tools = server_tools(s);
    double        rtt = server_rtt_ms(s);
    struct health h = server_health(s, NULL);
    int64_t       last_ok = jsonl_last_success(s);

    jsonl_sanitized(w, "name", server_name(s));
    jsonl_str(w, "transport", server_transport_name(s));
    /* The URL redacted (server_target gives the decl's url_shown), and
     * sanitized all the same: args may hold any bytes. */
    jsonl_sanitized(w, "target", server_target(s));
    if (server_is_tap(s)) {
        /* Observed through a tap: the config's client, if any, apart. */
        jsonw_string(w, "source", "tap");
        if (server_decl(s)->source != NULL)
            jsonl_str(w, "config_source", server_decl(s)->source);
    } else if (server_decl(s)->source != NULL) {
        jsonl_str(w, "source", server_decl(s)->source);
    }
    jsonl_sources(w, server_decl(s));
    jsonl_tags(w, s);
    if (!health_monitored(h.state))
        jsonw_null(w, "ok");        /* neither ok nor a failure */
    else
        jsonw_bool(w, "ok", h.state == HEALTH_OK);
    jsonl_str(w, "health", health_state_name(h.state));
    jsonl_str(w, "health_reason", h.reason);
    jsonl_str(w, "liveness_method", server_liveness_method(s));
    jsonl_str(w, "state", server_state_name(server_state(s)));
    jsonw_string(w, "era", mcp_era_name(server_era(s)));
    jsonl_liveness(w, server_liveness(s));
    jsonl_warnings(w, s);
    if (server_next_attempt_ms(s) >= 0)
        jsonw_int(w, "next_attempt_at", server_next_attempt_ms(s));
    jsonl_session(w, s);
    if (server_is_tap(s))
        jsonl_tap(w, s);
    else if (server_decl(s)->transport == CONFIG_STDIO)
        jsonl_process(w, s);
    if (tools >= 0)
        jsonw_int(w, "tools", tools);
    else
        jsonw_null(w, "tools");
    jsonl_last_failure(w, s);
    /* Nothing stale passes for current: no round trip while the last
     * exchange failed; when the last success was, beside it. */
    if (rtt >= 0 && server_fail_streak(s) == 0)
        jsonw_tenths(w, "rtt_ms", jsonl_ms1(rtt));
    else
        jsonw_null(w, "rtt_ms");
    if (last_ok > 0)
        jsonw_int(w, "last_success_at", last_ok);
    else
        jsonw_null(w, "last_success_at");
    if (server_decl(s)->probe != NULL)
        jsonl_probe(w, s);
    jsonl_asked(w, s);
}

/* A cJSON tree of the text w holds (freed). */
static cJSON *
jsonl_tree(struct jsonw *w)
{
    cJSON *o = cJSON_ParseWithLength(w->buf, w->len);

    jsonw_done(w);
    return o;
}

/* "sources": every client file that declares this same target (issue
 * 28), when there are several. */
static void
jsonl_sources(struct jsonw *w, const struct config_server *d)
{
    if (d->nsources == 0)
        return;
    jsonw_array_open(w, "sources");
    for (size_t i = 0; i < d->nsources; i++) {
        char *file = str_sanitized(d->sources[i].origin);

        jsonw_object_open(w, NULL);
        if (d->sources[i].client != NULL)
            jsonw_string(w, "client", d->sources[i].client);
        else
            jsonw_null(w, "client");
        jsonw_string(w, "file", file);
        free(file);
        jsonw_object_close(w);
    }
    jsonw_array_close(w);
}

cJSON *
jsonl_server(const struct server *s)
{
    struct jsonw w;

    jsonw_init(&w);
    jsonw_object_open(&w, NULL);
    jsonl_server_members(&w, s);
    jsonw_object_close(&w);
    return jsonl_tree(&w);
}

void
jsonl_fleet_write(struct jsonw *w, const struct fleet *f,
    jsonl_extra_fn extra, void *arg)
{
    long counts[LIVENESS__COUNT] = { 0 }, absent = 0, disabled = 0;
    long health[HEALTH__COUNT] = { 0 };

    jsonw_array_open(w, "servers");
    for (size_t i = 0; i < fleet_size(f); i++) {
        const struct server   *s = fleet_server(f, i);
        const struct liveness *l = server_liveness(s);

        jsonw_object_open(w, NULL);
        jsonl_server_members(w, s);
        if (extra != NULL)
            extra(w, s, arg);
        jsonw_object_close(w);
        health[server_health(s, NULL).state]++;
        if (server_state(s) == SERVER_DISABLED)
            disabled++;
        else if (l->present)
            counts[l->state]++;
        else
            absent++;
    }
    jsonw_array_close(w);
    jsonw_object_open(w, "summary");
    jsonw_int(w, "reachable", counts[LIVENESS_REACHABLE]);
    jsonw_int(w, "unreachable", counts[LIVENESS_UNREACHABLE]);
    jsonw_int(w, "unknown", counts[LIVENESS_UNKNOWN]);
    jsonw_int(w, "absent", absent);
    jsonw_int(w, "disabled", disabled);
    jsonw_object_open(w, "health");
    for (int k = 0; k < HEALTH__COUNT; k++)
        jsonw_int(w, health_state_name((enum health_state)k), health[k]);
    jsonw_object_close(w);
    if (extra != NULL)
        extra(w, NULL, arg);
    jsonw_object_close(w);
}

cJSON *
jsonl_fleet(const struct fleet *f)
{
    struct jsonw w;

    jsonw_init(&w);
    jsonw_object_open(&w, NULL);
    jsonl_fleet_write(&w, f, NULL, NULL);
    jsonw_object_close(&w);
    return jsonl_tree(&w);
}

/* The members of an ending's record. */
static void
jsonl_ending_members(struct jsonw *w, const struct ending *e)
{
    jsonl_sanitized(w, "server", server_name(e->server));
    jsonl_str(w, "outcome", ending_outcome_name(e->outcome));
    if (e->http_status != 0)
        jsonw_int(w, "http_status", e->http_status);
    if (e->has_failure) {
        jsonl_str(w, "kind", failure_kind_name(e->kind));
        jsonl_str(w, "delivered", delivered_name(e->delivered));
    }
    if (e->exit_code >= 0 && e->outcome == ENDING_EXITED)
        jsonw_int(w, "exit_code", e->exit_code);
    if (e->signal > 0)
        jsonw_int(w, "signal", e->signal);
    jsonw_tenths(w, "duration_ms", jsonl_ms1(e->duration_ms));
    if (e->settled)
        jsonw_tenths(w, "settled_ms", jsonl_ms1(e->settled_ms));
    else
        jsonw_null(w, "settled_ms");
    jsonw_bool(w, "half_open", e->half_open);
    if (e->sessionless)
        jsonw_bool(w, "sessionless", true);
    if (e->group_left > 0)
        jsonw_int(w, "group_left", e->group_left);
    if (e->detail[0] != '\0')
        jsonl_str(w, "detail", e->detail);
}

cJSON *
jsonl_ending(const struct ending *e)
{
    struct jsonw w;

    jsonw_init(&w);
    jsonw_object_open(&w, NULL);
    jsonl_ending_members(&w, e);
    jsonw_object_close(&w);
    return jsonl_tree(&w);
}

/* A line opened (after w is reset): {"ts", "event", left open. */
static void
jsonl_open(struct jsonw *w, int64_t ts, const char *event)
{
    char iso[40];

    jsonw_object_open(w, NULL);
    clock_format_iso(ts, iso, sizeof(iso));
    jsonl_str(w, "ts", iso);
    jsonw_string(w, "event", event);
}

/* The head of a server's line: {"ts", "event", "server", and "source":
 * "tap" on the lines that say it; left open. */
static void
jsonl_head(struct jsonw *w, int64_t ts, const char *event,
    const char *server, bool tap)
{
    jsonl_open(w, ts, event);
    jsonl_sanitized(w, "server", server);
    if (tap)
        jsonw_string(w, "source", "tap");
}

/* A liveness line's members after its head: state, error_code. */
static void
jsonl_liveness_members(struct jsonw *w, const struct liveness *l)
{
    jsonl_str(w, "state", liveness_state_name(l->state));
    if (l->has_error_code)
        jsonl_str(w, "error_code", failure_kind_name(l->error_code));
}

/* A health line's members after its head: state, was (null: none before,
 * HEALTH__COUNT), reason. */
static void
jsonl_health_members(struct jsonw *w, const struct health *h,
    enum health_state was)
{
    jsonl_str(w, "state", health_state_name(h->state));
    if (was < HEALTH__COUNT)
        jsonl_str(w, "was", health_state_name(was));
    else
        jsonw_null(w, "was");
    jsonl_str(w, "reason", h->reason);
}

/* An exchange's line after its head: its op and outcome, and for a
 * failure its kind, delivery verdict, where, and when the next attempt
 * comes. */
static void
jsonl_exchange(struct jsonw *w, const struct event *e)
{
    const struct failure *f = e->failure;

    jsonl_sanitized(w, "op", e->op);
    if (e->completed) {
        jsonw_string(w, "outcome", "completed");
    } else {
        jsonl_str(w, "outcome", failure_kind_name(f->kind));
        jsonl_str(w, "delivered", delivered_name(f->delivered));
        if (f->http_status != 0)
            jsonw_int(w, "http_status", f->http_status);
        if (f->reason != FAILURE_REASON_NONE)
            jsonl_str(w, "reason", failure_reason_name(f->reason));
        jsonl_str(w, "site", failure_site_name(f->site));
        jsonl_str(w, "detail", f->detail);
        if (server_next_attempt_ms(e->server) >= 0)
            jsonw_int(w, "next_attempt_at",
                server_next_attempt_ms(e->server));
    }
    jsonw_tenths(w, "ms", jsonl_ms1(e->ms));
}

char *
jsonl_exit_line(size_t asked, size_t not_ended)
{
    struct jsonw w;
    char         ts[40];

    clock_format_iso(clock_wall_ms(), ts, sizeof(ts));
    jsonw_init(&w);
    jsonw_object_open(&w, NULL);
    jsonw_string(&w, "ts", ts);
    jsonw_string(&w, "event", "exit");
    jsonw_int(&w, "sessions_ended", (int64_t)(asked - not_ended));
    jsonw_int(&w, "sessions_not_ended", (int64_t)not_ended);
    jsonw_object_close(&w);
    return jsonw_take(&w, NULL);
}

bool
jsonl_event_write(struct jsonw *w, const struct event *e)
{
    const char *name = e->server != NULL ? server_name(e->server) : NULL;

    jsonw_reset(w);
    switch (e->type) {
    case EVENT_ENDING:
    case EVENT_SETTLED:
        jsonl_open(w, e->ts, e->type == EVENT_ENDING ? "ending" : "settled");
        jsonl_ending_members(w, e->ending);
        break;
    case EVENT_EXCHANGE:
        jsonl_head(w, e->ts, "exchange", name, server_is_tap(e->server));
        jsonl_exchange(w, e);
        break;
    case EVENT_LIVENESS:
        jsonl_head(w, e->ts, "liveness", name, false);
        jsonl_liveness_members(w, e->liveness);
        break;
    case EVENT_TOOLS_CHANGED:
        jsonl_head(w, e->ts, "tools_changed", name, false);
        jsonw_int(w, "tools", e->tools);
        break;
    case EVENT_REQUEST:
        jsonl_head(w, e->ts, "request", name, true);
        jsonl_str(w, "phase", server_request_phase_name(
            (enum server_request_phase)e->request_phase));
        jsonl_request_members(w, e->request, e->ts);
        if (e->request->outcome[0] != '\0')
            jsonl_sanitized(w, e->request_phase == SERVER_REQUEST_END ?
                "outcome" : "detail", e->request->outcome);
        break;
    case EVENT_ASKED:
        jsonl_head(w, e->ts, "server_request", name, false);
        jsonl_str(w, "method", e->asked_method);
        jsonl_str(w, "id", e->asked_id);
        jsonl_str(w, "answered", e->asked_answer);
        break;
    case EVENT_HEALTH:
        jsonl_head(w, e->ts, "health", name, false);
        jsonl_health_members(w, e->health, e->health_was);
        break;
    default:
        /* EVENT_STATE (and any other) has no line. */
        return false;
    }
    jsonw_object_close(w);
    return true;
}

char *
jsonl_event_line(const struct event *e)
{
    struct jsonw w;

    jsonw_init(&w);
    if (!jsonl_event_write(&w, e)) {
        jsonw_done(&w);
        return NULL;
    }
    return jsonw_take(&w, NULL);
}

/* --- a tap's lines ------------------------------------------------------ */

void
jsonl_tap_head(struct jsonw *w, int64_t ts, const char *event,
    const char *server)
{
    jsonw_reset(w);
    jsonl_head(w, ts, event, server, true);
}

void
jsonl_tap_failure(struct jsonw *w, const struct failure *f)
{
    jsonl_str(w, "outcome", failure_kind_name(f->kind));
    jsonl_str(w, "delivered", delivered_name(f->delivered));
    if (f->has_rpc_code)
        jsonw_int(w, "rpc_code", f->rpc_code);
    jsonl_str(w, "site", failure_site_name(f->site));
    jsonl_str(w, "detail", f->detail);
}

void
jsonl_tap_request(struct jsonw *w, const char *key,
    const struct jsonl_tap_request *r)
{
    jsonw_object_open(w, key);
    jsonl_id(w, r->id, false);
    jsonl_str(w, "direction", r->direction);
    jsonl_str(w, "method", r->method);
    if (r->tool != NULL)
        jsonw_string(w, "tool", r->tool);
    else
        jsonw_null(w, "tool");
    jsonw_int(w, "started_at", r->started_at);
    jsonw_tenths(w, "age_ms", jsonl_ms1(r->age_ms));
    if (r->has_progress) {
        jsonw_object_open(w, "progress");
        jsonw_double(w, "progress", r->progress);
        if (r->has_total)
            jsonw_double(w, "total", r->total);
        else
            jsonw_null(w, "total");
        if (r->message != NULL)
            jsonw_string(w, "message", r->message);
        else
            jsonw_null(w, "message");
        jsonw_int(w, "age_ms", r->progress_age_ms);
        jsonw_object_close(w);
    } else {
        jsonw_null(w, "progress");
    }
    jsonw_int(w, "bytes", (int64_t)r->bytes);
    if (r->own)
        jsonw_bool(w, "own", true);
    jsonw_object_close(w);
}

void
jsonl_tap_exchange(struct jsonw *w, const char *server, int64_t at,
    uint64_t seq, const char *op, const char *id, const struct failure *f,
    double ms)
{
    jsonl_tap_head(w, at, "exchange", server);
    jsonl_str(w, "op", op);
    if (f == NULL)
        jsonw_string(w, "outcome", "completed");
    else
        jsonl_tap_failure(w, f);
    jsonw_tenths(w, "ms", jsonl_ms1(ms));
    jsonw_int(w, "observed_at", at);
    jsonw_int(w, "seq", (int64_t)seq);
    if (id != NULL) {
        jsonl_id(w, id, false);
        jsonw_string(w, "direction", "to_server");
    }
    jsonw_object_close(w);
}

void
jsonl_tap_liveness(struct jsonw *w, int64_t ts, const char *server,
    const struct liveness *l)
{
    jsonl_tap_head(w, ts, "liveness", server);
    jsonl_liveness_members(w, l);
    jsonw_int(w, "observed_at", l->observed_at);
    jsonw_object_close(w);
}

void
jsonl_tap_health(struct jsonw *w, int64_t ts, const char *server,
    const struct health *h, enum health_state was)
{
    jsonl_tap_head(w, ts, "health", server);
    jsonl_health_members(w, h, was);
    jsonw_object_close(w);
}

void
jsonl_tap_request_line(struct jsonw *w, int64_t ts, const char *event,
    const char *server, const struct jsonl_tap_request *r)
{
    jsonl_tap_head(w, ts, event, server);
    jsonl_tap_request(w, "request", r);
    jsonw_object_close(w);
}

void
jsonl_tap_request_end(struct jsonw *w, int64_t ts, const char *server,
    const struct jsonl_tap_request *r, const char *outcome,
    const struct failure *f, double ms)
{
    jsonl_tap_head(w, ts, "request_end", server);
    jsonl_id(w, r->id, false);
    jsonl_str(w, "direction", r->direction);
    jsonl_str(w, "method", r->method);
    jsonl_str(w, "tool", r->tool);
    jsonl_str(w, "outcome", outcome);
    if (f != NULL)
        jsonl_str(w, "kind", failure_kind_name(f->kind));
    jsonw_tenths(w, "ms", jsonl_ms1(ms));
    jsonw_object_close(w);
}

void
jsonl_tap_exit(struct jsonw *w, int64_t ts, const char *server, int code,
    int signal, const char *detail)
{
    jsonl_tap_head(w, ts, "exit", server);
    if (signal > 0)
        jsonw_int(w, "signal", signal);
    else if (code >= 0)
        jsonw_int(w, "code", code);
    jsonl_str(w, "detail", detail);
    jsonw_object_close(w);
}

void
jsonl_tap_session(struct jsonw *w, int64_t ts, const char *event,
    const char *server, const char *session, const char *detail)
{
    jsonl_tap_head(w, ts, event, server);
    jsonl_str(w, "session", session);
    jsonl_str(w, "detail", detail);
    jsonw_object_close(w);
}

void
jsonl_tap_session_end(struct jsonw *w, int64_t ts, const char *server,
    const char *session, const char *outcome, long status,
    const struct failure *f, int64_t ms)
{
    jsonl_tap_head(w, ts, "session_end", server);
    jsonl_str(w, "session", session);
    jsonl_str(w, "outcome", outcome);
    if (status != 0)
        jsonw_int(w, "status", status);
    else
        jsonw_null(w, "status");
    if (f != NULL) {
        jsonl_str(w, "kind", failure_kind_name(f->kind));
        jsonl_str(w, "delivered", delivered_name(f->delivered));
        jsonl_str(w, "detail", f->detail);
    }
    jsonw_int(w, "ms", ms);
    jsonw_object_close(w);
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

int
jsonl_write_text(FILE *out, struct jsonw *w)
{
    jsonw_raw(w, "\n", 1);
    if (fwrite(w->buf, 1, w->len, out) != w->len)
        return -1;
    return 0;
}
