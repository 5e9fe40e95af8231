/*
 * The audit's checks, one step function each (see audit_int.h for how the
 * runner calls them): what each sends, in which order, and how what came
 * back is judged against MCP 2025-11-25 (basic/transports, Session
 * Management, points 1-5; Listening for Messages from the Server;
 * basic/lifecycle, Version Negotiation and Shutdown; basic/utilities/ping;
 * for the era, 2026-07-28 basic/versioning and server/discover).
 *
 * A check's evidence is numbers and words of its own (statuses, codes,
 * counts, the revisions answered): never a session id, never server text
 * unsanitized.
 */
#include "audit_int.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "engine/server.h"

#define AUDIT_PROBE_MS 3000     /* a silent stdio or HTTP+SSE server may
                                   ignore server/discover: wait this long */

/* The revisions this build speaks, oldest first, and one no server
 * knows (the last). */
static const char *const audit_versions[AUDIT_VERSIONS_N] = {
    "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25",
    AUDIT_UNKNOWN_VERSION,
};

/* The refused requests of probe_leak: none may mint a session. */
static const struct {
    enum http_method method;
    const char      *body;
    const char      *name;
} audit_probes[] = {
    { HTTP_GET, NULL, "GET" },
    { HTTP_HEAD, NULL, "HEAD" },
    { HTTP_OPTIONS, NULL, "OPTIONS" },
    { HTTP_POST, "{\"jsonrpc\":\"2.0\",\"id\":1,", "malformed POST" },
};
#define AUDIT_NPROBES (sizeof(audit_probes) / sizeof(audit_probes[0]))

/* The evidence of one result, in a->ev under key (or at its root). */
static void
audit_checks_evidence(const struct fleet_raw_result *r, cJSON *o)
{
    if (r->status != 0)
        cJSON_AddNumberToObject(o, "status", (double)r->status);
    if (r->rpc_result)
        cJSON_AddTrueToObject(o, "result");
    if (r->rpc_error) {
        cJSON_AddNumberToObject(o, "error_code", (double)r->rpc_code);
        if (r->rpc_null_id)
            cJSON_AddTrueToObject(o, "error_id_null");
    }
    if (!r->answered) {
        cJSON_AddStringToObject(o, "failure",
            failure_kind_name(r->failure.kind));
        cJSON_AddStringToObject(o, "detail", r->failure.detail);
    }
}

static cJSON *
audit_checks_evidence_at(struct audit *a, const char *key,
    const struct fleet_raw_result *r)
{
    cJSON *o = cJSON_AddObjectToObject(a->ev, key);

    audit_checks_evidence(r, o);
    return o;
}

/* The one result a check waits for, or NULL. */
static const struct fleet_raw_result *
audit_checks_result(const struct audit *a)
{
    return a->has_result ? &a->res : NULL;
}

/* The first channel of the check (made at its first step). */
static struct fleet_raw *
audit_checks_channel(struct audit *a)
{
    if (a->nch == 0)
        return audit_channel(a, a->mode == AUDIT_MODE_SSE);
    return a->ch[0];
}

/* The check could not begin or go on: error, and conclude. */
static void
audit_checks_fail(struct audit *a, enum audit_check c)
{
    audit_judge(a, c, AUDIT_VERDICT_ERROR, "%s", a->why[0] != '\0' ?
        a->why : "no channel to the server");
    audit_conclude(a);
}

/* --- era: server/discover, then initialize --------------------------- */

static void
audit_checks_era(struct audit *a)
{
    const struct fleet_raw_result *r = audit_checks_result(a);
    char                           said[160];
    bool                           probe_short = a->stdio || a->sse_decl;

    switch (a->step) {
    case 0:
        a->step = 1;
        if (!audit_send_within(a, audit_checks_channel(a), "server/discover",
            NULL, FLEET_RAW_NO_SESSION, probe_short && audit_timeout_ms(a) >
            AUDIT_PROBE_MS ? AUDIT_PROBE_MS : audit_timeout_ms(a))) {
            a->mode = AUDIT_MODE_DOWN;
            audit_checks_fail(a, AUDIT_CHECK_ERA);
        }
        return;
    case 1:
        if (r == NULL)
            return;
        audit_checks_evidence_at(a, "discover", r);
        a->n = r->rpc_result && r->lists_modern;
        a->step = 2;
        /* A fresh channel: a stdio server may exit on a method it does
         * not know. */
        if (!audit_send(a, audit_channel(a, false), "initialize", NULL,
            FLEET_RAW_NO_SESSION)) {
            a->mode = AUDIT_MODE_DOWN;
            audit_checks_fail(a, AUDIT_CHECK_ERA);
        }
        return;
    case 2: {
        bool legacy, modern = a->n != 0;

        if (r == NULL)
            return;
        legacy = r->rpc_result && r->version[0] != '\0';
        audit_checks_evidence_at(a, "initialize", r);
        if (legacy)
            cJSON_AddStringToObject(cJSON_GetObjectItem(a->ev,
                "initialize"), "version", r->version);
        if (legacy || modern) {
            cJSON_AddStringToObject(a->ev, "transport", a->stdio ? "stdio" :
                a->sse_decl ? "sse" : "http");
            if (a->stdio)
                a->mode = legacy ? AUDIT_MODE_STDIO :
                    AUDIT_MODE_STDIO_MODERN;
            else if (!a->sse_decl)
                a->mode = legacy ? AUDIT_MODE_HTTP : AUDIT_MODE_MODERN;
            audit_judge(a, AUDIT_CHECK_ERA, legacy && modern ?
                AUDIT_VERDICT_DUAL : legacy && a->sse_decl ?
                AUDIT_VERDICT_LEGACY_SSE : legacy ? AUDIT_VERDICT_LEGACY :
                AUDIT_VERDICT_MODERN, "server/discover %s; initialize %s%s",
                modern ? "answered a DiscoverResult listing 2026-07-28" :
                "gave no DiscoverResult", legacy ? "answered " :
                "did not work", legacy ? r->version : "");
            audit_conclude(a);
            return;
        }
        if (!a->stdio && !a->sse_decl && r->answered && (r->status == 400 ||
            r->status == 404 || r->status == 405)) {
            /* 2025-11-25 basic/transports, Backwards Compatibility: a
             * 400, 404 or 405 to initialize may be a 2024-11-05 server. */
            a->step = 3;
            cJSON_AddNumberToObject(a->ev, "initialize_status",
                (double)r->status);
            if (!audit_send(a, audit_channel(a, true), "initialize", NULL,
                FLEET_RAW_NO_SESSION)) {
                a->mode = AUDIT_MODE_DOWN;
                audit_checks_fail(a, AUDIT_CHECK_ERA);
            }
            return;
        }
        audit_describe(r, said, sizeof(said));
        a->mode = AUDIT_MODE_DOWN;
        audit_judge(a, AUDIT_CHECK_ERA, AUDIT_VERDICT_ERROR, "neither "
            "server/discover nor initialize worked: initialize %s", said);
        audit_conclude(a);
        return;
    }
    case 3:
        if (r == NULL)
            return;
        audit_checks_evidence_at(a, "sse_initialize", r);
        if (r->rpc_result) {
            a->mode = AUDIT_MODE_SSE;
            cJSON_AddStringToObject(a->ev, "transport", "sse");
            audit_judge(a, AUDIT_CHECK_ERA, AUDIT_VERDICT_LEGACY_SSE,
                "initialize answered %s over the 2024-11-05 HTTP+SSE "
                "transport (a POST to the URL was refused)", r->version);
        } else {
            audit_describe(r, said, sizeof(said));
            a->mode = AUDIT_MODE_DOWN;
            audit_judge(a, AUDIT_CHECK_ERA, AUDIT_VERDICT_ERROR, "neither "
                "era could be dialed; over HTTP+SSE, initialize %s", said);
        }
        audit_conclude(a);
        return;
    }
}

/* --- delete and freed ----------------------------------------------------- */

/* "N session(s) the audit opened and could not end still live(s)", into
 * buf: why a refusal may be the audit's own doing, not the server's. */
static const char *
audit_checks_unended(const struct audit *a, char *buf, size_t n)
{
    unsigned k = a->opened - a->ended;

    snprintf(buf, n, "%u session%s the audit opened and could not end still "
        "live%s", k, k == 1 ? "" : "s", k == 1 ? "s" : "");
    return buf;
}

/* The open's first request after initialize was answered 404 on the id
 * initialize had just issued: the signature of replicas that do not share
 * sessions behind a balancer without affinity. That is affinity's verdict
 * (broken, with the evidence); any other check could not be made, which
 * is not the server's verdict on it (n/a). */
static void
audit_checks_lost_after_init(struct audit *a, enum audit_check c, int also)
{
    const char *sig = "the request after initialize was answered 404 on "
        "the session it had just issued";

    if (c == AUDIT_CHECK_AFFINITY) {
        if (a->has_result)
            audit_checks_evidence_at(a, "after_initialize", &a->res);
        cJSON_AddNumberToObject(a->ev, "first_404", 1);
        audit_judge(a, c, AUDIT_VERDICT_BROKEN, "%s (notifications/"
            "initialized): requests reach replicas that do not share "
            "sessions", sig);
        return;
    }
    audit_judge(a, c, AUDIT_VERDICT_NA, "not judged: %s (affinity is "
        "broken)", sig);
    if (also >= 0)
        audit_judge(a, (enum audit_check)also, AUDIT_VERDICT_NA,
            "not judged: %s", sig);
}

/* A session opened for a check: the open's own verdicts (error, or for a
 * check that needs an id, n/a on a server that issues none) for checks c
 * and, when set, also. false when the check is over or must wait; true
 * with a->session open (FLEET_RAW_NO_SESSION on a sessionless server,
 * for a check that does without an id). */
static bool
audit_checks_opened(struct audit *a, enum audit_check c, int also)
{
    enum audit_open o = audit_open_step(a, audit_checks_channel(a), NULL);
    bool            need_id = c == AUDIT_CHECK_DELETE ||
        c == AUDIT_CHECK_UNKNOWN_SESSION || c == AUDIT_CHECK_MISSING_SESSION;

    switch (o) {
    case AUDIT_OPEN_BUSY:
        return false;
    case AUDIT_OPEN_OK:
        return true;
    case AUDIT_OPEN_NO_SESSION:
        if (!need_id) {
            a->session = FLEET_RAW_NO_SESSION;
            return true;
        }
        audit_judge(a, c, AUDIT_VERDICT_NA, "initialize issued no "
            "Mcp-Session-Id: a sessionless server has no session to check");
        if (also >= 0)
            audit_judge(a, (enum audit_check)also, AUDIT_VERDICT_NA,
                "initialize issued no Mcp-Session-Id");
        audit_conclude(a);
        return false;
    default:
        if (a->lost_after_init)
            audit_checks_lost_after_init(a, c, also);
        else if (a->init_refused && a->opened > a->ended) {
            /* The audit's own sessions that outlived their ending may be
             * why (a server that holds few at a time): not its verdict. */
            char unended[96];

            audit_judge(a, c, AUDIT_VERDICT_NA, "not judged: %s, while %s",
                a->why, audit_checks_unended(a, unended, sizeof(unended)));
            if (also >= 0)
                audit_judge(a, (enum audit_check)also, AUDIT_VERDICT_NA,
                    "not judged: no session could be opened");
        } else {
            audit_judge(a, c, AUDIT_VERDICT_ERROR, "%s", a->why);
            if (also >= 0)
                audit_judge(a, (enum audit_check)also, AUDIT_VERDICT_NA,
                    "not judged: no session could be opened");
        }
        audit_conclude(a);
        return false;
    }
}

static void
audit_checks_delete(struct audit *a)
{
    const struct fleet_raw_result *r = audit_checks_result(a);
    const struct ending           *e = &a->end;
    char                           said[160];

    switch (a->step) {
    case 0:
        if (!audit_checks_opened(a, AUDIT_CHECK_DELETE, AUDIT_CHECK_FREED))
            return;
        a->step = 1;
        fleet_raw_end(a->ch[0], a->session);
        return;
    case 1:
        if (!a->has_ending)
            return;
        cJSON_AddStringToObject(a->ev, "outcome",
            ending_outcome_name(e->outcome));
        if (e->http_status != 0)
            cJSON_AddNumberToObject(a->ev, "status", (double)e->http_status);
        cJSON_AddNumberToObject(a->ev, "duration_ms",
            (double)(long)(e->duration_ms + 0.5));
        switch (e->outcome) {
        case ENDING_TERMINATED:
            audit_judge(a, AUDIT_CHECK_DELETE, AUDIT_VERDICT_TERMINATED,
                "DELETE answered %ld", e->http_status);
            /* freed: one request with the ended id. */
            a->step = 2;
            if (!audit_send(a, a->ch[0], "ping", a->version, a->session))
                audit_checks_fail(a, AUDIT_CHECK_FREED);
            return;
        case ENDING_NOT_ALLOWED:
            audit_judge(a, AUDIT_CHECK_DELETE, AUDIT_VERDICT_NOT_ALLOWED,
                "DELETE answered 405: clients cannot end sessions; each "
                "stays until the server expires it");
            audit_judge(a, AUDIT_CHECK_FREED, AUDIT_VERDICT_NA, "the "
                "session could not be ended");
            break;
        case ENDING_ALREADY_GONE:
        case ENDING_REJECTED:
            audit_judge(a, AUDIT_CHECK_DELETE, AUDIT_VERDICT_OTHER,
                "DELETE of a live session answered %ld%s", e->http_status,
                e->outcome == ENDING_ALREADY_GONE ? " (as if it were gone)" :
                "");
            audit_judge(a, AUDIT_CHECK_FREED, AUDIT_VERDICT_NA, "the DELETE "
                "was not answered 2xx");
            break;
        default:
            audit_judge(a, AUDIT_CHECK_DELETE, AUDIT_VERDICT_ERROR,
                "DELETE: %s (%s)", ending_outcome_name(e->outcome),
                e->detail);
            audit_judge(a, AUDIT_CHECK_FREED, AUDIT_VERDICT_NA, "the DELETE "
                "was not answered");
            break;
        }
        audit_conclude(a);
        return;
    case 2:
        if (r == NULL)
            return;
        audit_checks_evidence(r, a->ev);
        audit_describe(r, said, sizeof(said));
        if (r->status == 404) {
            audit_judge(a, AUDIT_CHECK_FREED, AUDIT_VERDICT_YES, "a ping with "
                "the ended id was answered 404");
        } else if (r->rpc_result && a->results[AUDIT_CHECK_UNKNOWN_SESSION]
            .verdict == AUDIT_VERDICT_ACCEPTED) {
            audit_judge(a, AUDIT_CHECK_FREED, AUDIT_VERDICT_NO, "a ping with "
                "the ended id was served (%s), as ids it never issued are "
                "(unknown_session): whether it freed the session cannot be "
                "told", said);
        } else if (r->rpc_result) {
            /* The server still serves it: not ended, whatever the DELETE
             * said, and neither is any other it acknowledged so. */
            fleet_raw_served_after(a->ch[0], a->session);
            a->keeps_deleted = true;
            audit_judge(a, AUDIT_CHECK_FREED, AUDIT_VERDICT_NO, "a ping with "
                "the ended id was served (%s): the session outlived its "
                "DELETE", said);
        } else if (r->answered) {
            audit_judge(a, AUDIT_CHECK_FREED, AUDIT_VERDICT_OTHER, "a ping "
                "with the ended id: %s (the spec says 404)", said);
        } else {
            audit_judge(a, AUDIT_CHECK_FREED, AUDIT_VERDICT_ERROR, "a ping "
                "with the ended id: %s", said);
        }
        audit_conclude(a);
        return;
    }
}

/* --- unknown_session, missing_session, stream ---------------------------- */

static void
audit_checks_unknown(struct audit *a)
{
    const struct fleet_raw_result *r = audit_checks_result(a);
    enum audit_check               c = AUDIT_CHECK_UNKNOWN_SESSION;
    char                           said[160];

    if (a->step == 0) {
        if (!audit_checks_opened(a, c, -1))
            return;
        a->step = 1;
        /* A well-formed id (the shape of the one just issued) that the
         * server never issued. */
        if (!audit_send(a, a->ch[0], "ping", a->version, FLEET_RAW_FORGED))
            audit_checks_fail(a, c);
        return;
    }
    if (r == NULL)
        return;
    audit_checks_evidence(r, a->ev);
    if (r->issued >= 0)
        cJSON_AddTrueToObject(a->ev, "minted");
    audit_describe(r, said, sizeof(said));
    if (r->status == 404)
        audit_judge(a, c, AUDIT_VERDICT_SPEC, "a ping with an id the server "
            "never issued was answered 404");
    else if (r->status == 400 || (r->status >= 200 && r->status < 300 &&
        r->rpc_error))
        audit_judge(a, c, AUDIT_VERDICT_NONSTANDARD, "a ping with an id the "
            "server never issued: %s (the spec says 404)", said);
    else if (r->rpc_result)
        audit_judge(a, c, AUDIT_VERDICT_ACCEPTED, "a ping with an id the "
            "server never issued was served (%s)%s", said, r->issued >= 0 ?
            "; the answer issued it as a session (ended)" : "");
    else if (r->answered)
        audit_judge(a, c, AUDIT_VERDICT_OTHER, "a ping with an id the server "
            "never issued: %s", said);
    else
        audit_judge(a, c, AUDIT_VERDICT_ERROR, "%s", said);
    audit_conclude(a);
}

static void
audit_checks_missing(struct audit *a)
{
    const struct fleet_raw_result *r = audit_checks_result(a);
    enum audit_check               c = AUDIT_CHECK_MISSING_SESSION;
    char                           said[160];

    if (a->step == 0) {
        if (!audit_checks_opened(a, c, -1))
            return;
        a->step = 1;
        if (!audit_send(a, a->ch[0], "ping", a->version,
            FLEET_RAW_NO_SESSION))
            audit_checks_fail(a, c);
        return;
    }
    if (r == NULL)
        return;
    audit_checks_evidence(r, a->ev);
    if (r->issued >= 0)
        cJSON_AddTrueToObject(a->ev, "minted");
    audit_describe(r, said, sizeof(said));
    if (r->status == 400)
        audit_judge(a, c, AUDIT_VERDICT_SPEC, "a ping without the "
            "Mcp-Session-Id it was issued was answered 400");
    else if (r->rpc_result)
        audit_judge(a, c, AUDIT_VERDICT_ACCEPTED, "a ping without the "
            "Mcp-Session-Id was served (%s): the id is not required", said);
    else if (r->answered)
        audit_judge(a, c, AUDIT_VERDICT_OTHER, "a ping without the "
            "Mcp-Session-Id: %s (the spec says 400)", said);
    else
        audit_judge(a, c, AUDIT_VERDICT_ERROR, "%s", said);
    audit_conclude(a);
}

static void
audit_checks_stream(struct audit *a)
{
    const struct fleet_raw_result *r = audit_checks_result(a);
    enum audit_check               c = AUDIT_CHECK_STREAM;
    char                           said[160];

    if (a->step == 0) {
        if (!audit_checks_opened(a, c, -1))
            return;
        a->step = 1;
        if (!audit_send_method(a, a->ch[0], HTTP_GET, NULL, a->version,
            a->session))
            audit_checks_fail(a, c);
        return;
    }
    if (r == NULL)
        return;
    audit_checks_evidence(r, a->ev);
    if (r->event_stream)
        cJSON_AddTrueToObject(a->ev, "event_stream");
    audit_describe(r, said, sizeof(said));
    if (r->status >= 200 && r->status < 300 && r->event_stream)
        audit_judge(a, c, AUDIT_VERDICT_OPENS, "the GET stream opened "
            "(HTTP %ld, text/event-stream); closed at once", r->status);
    else if (r->status == 405)
        audit_judge(a, c, AUDIT_VERDICT_NONE, "GET answered 405: no stream "
            "for server-initiated messages");
    else if (r->answered)
        audit_judge(a, c, AUDIT_VERDICT_OTHER, "GET with the session: %s "
            "(the spec says text/event-stream or 405)", said);
    else
        audit_judge(a, c, AUDIT_VERDICT_ERROR, "%s", said);
    audit_conclude(a);
}

/* --- probe_leak ------------------------------------------------------------ */

static void
audit_checks_probe_leak(struct audit *a)
{
    const struct fleet_raw_result *r = audit_checks_result(a);
    enum audit_check               c = AUDIT_CHECK_PROBE_LEAK;

    if (a->step > 0) {
        cJSON *o = cJSON_CreateObject();
        size_t at = strlen(a->why);

        if (r == NULL) {
            cJSON_Delete(o);
            return;
        }
        cJSON_AddStringToObject(o, "request", audit_probes[a->step - 1].name);
        audit_checks_evidence(r, o);
        cJSON_AddBoolToObject(o, "minted", r->issued >= 0);
        cJSON_AddItemToArray(cJSON_GetObjectItem(a->ev, "probes"), o);
        if (r->issued >= 0)
            a->n++;
        if (r->answered)
            a->served++;
        if (r->status != 0)
            snprintf(a->why + at, sizeof(a->why) - at, "%s%s %ld%s",
                at > 0 ? ", " : "", audit_probes[a->step - 1].name,
                r->status, r->issued >= 0 ? " (minted)" : "");
        else
            snprintf(a->why + at, sizeof(a->why) - at, "%s%s: %s",
                at > 0 ? ", " : "", audit_probes[a->step - 1].name,
                failure_kind_name(r->failure.kind));
    } else {
        cJSON_AddArrayToObject(a->ev, "probes");
    }
    if ((size_t)a->step < AUDIT_NPROBES) {
        int k = a->step++;

        if (!audit_send_method(a, audit_checks_channel(a),
            audit_probes[k].method, audit_probes[k].body, NULL,
            FLEET_RAW_NO_SESSION))
            audit_checks_fail(a, c);
        return;
    }
    cJSON_AddNumberToObject(a->ev, "minted", (double)a->n);
    if (a->served == 0)
        audit_judge(a, c, AUDIT_VERDICT_ERROR, "no probe was answered: %s",
            a->why);
    else if (a->n == 0)
        audit_judge(a, c, AUDIT_VERDICT_NONE, "%s: no session id minted",
            a->why);
    else
        audit_judge(a, c, AUDIT_VERDICT_LEAKS, "%d of %zu refused requests "
            "minted a session id (%s); each was ended", a->n, AUDIT_NPROBES,
            a->why);
    audit_conclude(a);
}

/* --- ping, affinity -------------------------------------------------------- */

static void
audit_checks_ping(struct audit *a)
{
    const struct fleet_raw_result *r = audit_checks_result(a);
    enum audit_check               c = AUDIT_CHECK_PING;
    char                           said[160];

    if (a->step == 0) {
        if (!audit_checks_opened(a, c, -1))
            return;
        a->step = 1;
        if (!audit_send(a, a->ch[0], "ping", a->version, a->session))
            audit_checks_fail(a, c);
        return;
    }
    if (r == NULL)
        return;
    audit_checks_evidence(r, a->ev);
    cJSON_AddNumberToObject(a->ev, "ms", (double)(long)(r->ms * 10.0 + 0.5) /
        10.0);
    audit_describe(r, said, sizeof(said));
    if (r->rpc_result) {
        audit_judge(a, c, AUDIT_VERDICT_SUPPORTED, "ping answered in %.1f ms",
            r->ms);
    } else if (r->rpc_error && r->rpc_code == -32601) {
        a->ping_unsupported = true;
        audit_judge(a, c, AUDIT_VERDICT_UNSUPPORTED, "ping answered -32601 "
            "(method not found): clients that ping to keep or test a "
            "session see errors");
    } else {
        audit_judge(a, c, AUDIT_VERDICT_ERROR, "ping: %s", said);
    }
    audit_conclude(a);
}

static void
audit_checks_affinity(struct audit *a)
{
    const struct fleet_raw_result *r = audit_checks_result(a);
    enum audit_check               c = AUDIT_CHECK_AFFINITY;
    const char                    *method = a->ping_unsupported ?
        "tools/list" : "ping";
    char                           said[160];

    if (a->step == 0) {
        if (!audit_checks_opened(a, c, -1))
            return;
        a->step = 1;
        if (!audit_send(a, a->ch[0], method, a->version, a->session))
            audit_checks_fail(a, c);
        return;
    }
    if (r == NULL)
        return;
    a->n++;
    if (r->rpc_result || (r->rpc_error && !r->rpc_null_id && r->status < 300))
        a->served++;
    else if (r->status == 404) {
        a->gone++;
        if (a->first_404 < 0)
            a->first_404 = a->n;
    } else if (a->other_status == 0) {
        a->other_status = r->status != 0 ? (int)r->status : -1;
        audit_describe(r, a->why, sizeof(a->why));
    }
    if (a->n < AUDIT_AFFINITY_N) {
        if (!audit_send(a, a->ch[0], method, a->version, a->session))
            audit_checks_fail(a, c);
        return;
    }
    cJSON_AddStringToObject(a->ev, "method", method);
    cJSON_AddNumberToObject(a->ev, "requests", AUDIT_AFFINITY_N);
    cJSON_AddNumberToObject(a->ev, "served", a->served);
    cJSON_AddNumberToObject(a->ev, "not_found", a->gone);
    if (a->first_404 > 0)
        cJSON_AddNumberToObject(a->ev, "first_404", a->first_404);
    snprintf(said, sizeof(said), "%.150s", a->why);
    if (a->gone > 0)
        audit_judge(a, c, AUDIT_VERDICT_BROKEN, "%s %d of %d was answered "
            "404 on a session that had served (%d served, %d 404): requests "
            "reach replicas that do not share sessions", method, a->first_404,
            AUDIT_AFFINITY_N, a->served, a->gone);
    else if (a->served == AUDIT_AFFINITY_N)
        audit_judge(a, c, AUDIT_VERDICT_STABLE, "%d of %d %s requests served "
            "on one session", a->served, AUDIT_AFFINITY_N, method);
    else
        audit_judge(a, c, AUDIT_VERDICT_OTHER, "%d of %d %s requests served; "
            "first other answer: %s", a->served, AUDIT_AFFINITY_N, method,
            said);
    audit_conclude(a);
}

/* --- versions ------------------------------------------------------------- */

/* Is v one of the revisions this build speaks? */
static bool
audit_checks_known(const char *v)
{
    for (size_t i = 0; i + 1 < AUDIT_VERSIONS_N; i++) {
        if (strcmp(v, audit_versions[i]) == 0)
            return true;
    }
    return false;
}

static void
audit_checks_versions_judge(struct audit *a, const char *unknown_answer,
    const struct fleet_raw_result *u)
{
    enum audit_check c = AUDIT_CHECK_VERSIONS;
    cJSON           *acc = cJSON_GetObjectItem(a->ev, "accepted");
    int              n = cJSON_GetArraySize(acc);
    const char      *newest = n > 0 ?
        cJSON_GetStringValue(cJSON_GetArrayItem(acc, n - 1)) : NULL;
    char             said[160];

    audit_describe(u, said, sizeof(said));
    if (newest != NULL)
        cJSON_AddStringToObject(a->ev, "newest", newest);
    if (n == 0 && a->served == 0) {
        audit_judge(a, c, AUDIT_VERDICT_ERROR, "no initialize was answered");
    } else if (n == 0 && a->opened > a->ended) {
        /* Refused while the audit's own sessions live: not the server's
         * verdict (it may hold few at a time). */
        char unended[96];

        audit_judge(a, c, AUDIT_VERDICT_NA, "not judged: no initialize was "
            "accepted while %s (the last: %s)", audit_checks_unended(a,
            unended, sizeof(unended)), said);
    } else if (n == 0) {
        audit_judge(a, c, AUDIT_VERDICT_NONE, "no revision offered was "
            "accepted (2024-11-05 .. 2025-11-25)");
    } else if (unknown_answer != NULL &&
        strcmp(unknown_answer, AUDIT_UNKNOWN_VERSION) == 0) {
        audit_judge(a, c, AUDIT_VERDICT_ECHOES, "accepts %d, newest %s; "
            "offered %s it answered %s: a revision it cannot speak", n,
            newest, AUDIT_UNKNOWN_VERSION, AUDIT_UNKNOWN_VERSION);
    } else if (unknown_answer != NULL) {
        audit_judge(a, c, AUDIT_VERDICT_NEGOTIATES, "accepts %d, newest %s; "
            "offered %s it answered %s%s", n, newest, AUDIT_UNKNOWN_VERSION,
            unknown_answer, audit_checks_known(unknown_answer) ? "" :
            " (one mcptop does not speak)");
    } else if (u->answered) {
        audit_judge(a, c, AUDIT_VERDICT_REFUSES, "accepts %d, newest %s; "
            "offered %s: %s (the spec says: answer a revision it supports)",
            n, newest, AUDIT_UNKNOWN_VERSION, said);
    } else {
        audit_judge(a, c, AUDIT_VERDICT_ERROR, "accepts %d, newest %s; "
            "offered %s: %s", n, newest, AUDIT_UNKNOWN_VERSION, said);
    }
    if (newest != NULL && a->results[c].grade != AUDIT_GRADE_ERROR)
        snprintf(a->results[c].word, sizeof(a->results[c].word), "%s",
            newest);
}

/* The answer to initialize offering audit_versions[k], into the evidence. */
static void
audit_checks_versions_record(struct audit *a, int k,
    const struct fleet_raw_result *r)
{
    const char *offered = audit_versions[k];
    cJSON      *answers = cJSON_GetObjectItem(a->ev, "answers");
    char        said[160];

    if (r->answered)
        a->served++;
    if (r->rpc_result && r->version[0] != '\0') {
        cJSON_AddStringToObject(answers, offered, r->version);
        if (strcmp(r->version, offered) == 0 && k + 1 < AUDIT_VERSIONS_N)
            cJSON_AddItemToArray(cJSON_GetObjectItem(a->ev, "accepted"),
                cJSON_CreateString(offered));
    } else {
        audit_describe(r, said, sizeof(said));
        cJSON_AddStringToObject(answers, offered, said);
    }
}

/*
 * Over HTTP each initialize is a session of its own, one after another on
 * one channel, each ended before the next is opened; over stdio and
 * HTTP+SSE each needs its own child or stream, and they go at once (a
 * child may take seconds to start).
 */
static void
audit_checks_versions(struct audit *a)
{
    const struct fleet_raw_result *r = audit_checks_result(a);
    int                            k = a->step;
    bool                           raw = a->mode == AUDIT_MODE_HTTP;

    if (k == 0) {
        cJSON_AddArrayToObject(a->ev, "accepted");
        cJSON_AddObjectToObject(a->ev, "answers");
    }
    if (!raw) {
        if (k == 0) {
            a->step = 1;
            for (int v = 0; v < AUDIT_VERSIONS_N; v++) {
                if (!audit_send(a, audit_channel(a, a->mode ==
                    AUDIT_MODE_SSE), "initialize", audit_versions[v],
                    FLEET_RAW_NO_SESSION)) {
                    audit_checks_fail(a, AUDIT_CHECK_VERSIONS);
                    return;
                }
            }
            return;
        }
        for (int v = 0; v < AUDIT_VERSIONS_N; v++) {
            if (!a->chhas[v])
                return;
        }
        for (int v = 0; v < AUDIT_VERSIONS_N; v++)
            audit_checks_versions_record(a, v, &a->chres[v]);
        r = &a->chres[AUDIT_VERSIONS_N - 1];
        audit_checks_versions_judge(a, r->rpc_result && r->version[0] !=
            '\0' ? r->version : NULL, r);
        audit_conclude(a);
        return;
    }
    if (k > 0 && a->n == 0) {
        if (r == NULL)
            return;
        audit_checks_versions_record(a, k - 1, r);
        if (k == AUDIT_VERSIONS_N) {
            audit_checks_versions_judge(a, r->rpc_result &&
                r->version[0] != '\0' ? r->version : NULL, r);
            audit_conclude(a);
            return;
        }
        if (r->issued >= 0) {
            /* Ended before the next initialize: a server may hold one
             * session at a time, and a refusal the audit's own session
             * caused is no verdict on the server. */
            a->n = 1;
            fleet_raw_end(audit_checks_channel(a), r->issued);
            return;
        }
    } else if (k > 0) {
        if (!a->has_ending)
            return;
        a->n = 0;
    }
    a->step = k + 1;
    if (!audit_send(a, audit_checks_channel(a), "initialize",
        audit_versions[k], FLEET_RAW_NO_SESSION))
        audit_checks_fail(a, AUDIT_CHECK_VERSIONS);
}

/* --- shutdown (stdio) ------------------------------------------------------ */

static void
audit_checks_shutdown(struct audit *a)
{
    const struct ending *e = &a->end;
    enum audit_check     c = AUDIT_CHECK_SHUTDOWN;
    long                 teardown;
    char                 group[176] = "";

    switch (a->step) {
    case 0:
        if (a->mode == AUDIT_MODE_STDIO_MODERN) {
            /* No initialize: a discover makes the child a live session. */
            a->step = 1;
            if (!audit_send(a, audit_checks_channel(a), "server/discover",
                NULL, FLEET_RAW_NO_SESSION))
                audit_checks_fail(a, c);
            return;
        }
        if (!audit_checks_opened(a, c, -1))
            return;
        a->step = 2;
        fleet_raw_end(a->ch[0], 0);
        return;
    case 1:
        if (!a->has_result)
            return;
        a->step = 2;
        fleet_raw_end(a->ch[0], 0);
        return;
    case 2:
        if (!a->has_ending)
            return;
        teardown = server_decl(fleet_server(a->fleet,
            a->index))->teardown_ms;
        cJSON_AddStringToObject(a->ev, "outcome",
            ending_outcome_name(e->outcome));
        cJSON_AddNumberToObject(a->ev, "duration_ms",
            (double)(long)(e->duration_ms + 0.5));
        cJSON_AddNumberToObject(a->ev, "teardown_ms", (double)teardown);
        if (e->exit_code >= 0)
            cJSON_AddNumberToObject(a->ev, "exit_code", e->exit_code);
        if (e->signal != 0)
            cJSON_AddNumberToObject(a->ev, "signal", e->signal);
        /* A wrapper's group: the verdict is the server's, and says so. */
        if (e->group_left > 0) {
            snprintf(group, sizeof(group), ": %s", e->detail);
            cJSON_AddNumberToObject(a->ev, "group_left",
                (double)e->group_left);
        }
        switch (e->outcome) {
        case ENDING_EXITED:
            audit_judge(a, c, AUDIT_VERDICT_STDIN, "exited %.0f ms after its "
                "stdin closed (status %d)%s", e->duration_ms, e->exit_code,
                group);
            break;
        case ENDING_SIGNALLED:
            audit_judge(a, c, AUDIT_VERDICT_SIGTERM, "still running %ld ms "
                "after its stdin closed; gone %.0f ms in, after SIGTERM%s",
                teardown / 3, e->duration_ms, group);
            break;
        case ENDING_KILLED:
            audit_judge(a, c, AUDIT_VERDICT_SIGKILL, "outlived its stdin "
                "closing and SIGTERM; killed %.0f ms in (SIGKILL)%s",
                e->duration_ms, group);
            break;
        default:
            audit_judge(a, c, AUDIT_VERDICT_ERROR, "%s: %s",
                ending_outcome_name(e->outcome), e->detail);
            break;
        }
        audit_conclude(a);
        return;
    }
}

/* --- session_ids ----------------------------------------------------------- */

/*
 * Judged from every session the checks before it opened (it sends
 * nothing): each should have an id of its own ("globally unique"). A
 * server that gives two initializes one id has two live sessions under
 * it, and a client's DELETE or expiry of one ends the other's too.
 */
static void
audit_checks_session_ids(struct audit *a)
{
    enum audit_check c = AUDIT_CHECK_SESSION_IDS;
    unsigned         with_id = (unsigned)a->ntags + a->reused_ids;

    cJSON_AddNumberToObject(a->ev, "sessions_with_id", with_id);
    cJSON_AddNumberToObject(a->ev, "distinct_ids", (double)a->ntags);
    cJSON_AddNumberToObject(a->ev, "reused", a->reused_ids);
    if (with_id == 0)
        audit_judge(a, c, AUDIT_VERDICT_NA, "no session the audit opened "
            "was given an Mcp-Session-Id");
    else if (a->reused_ids > 0)
        audit_judge(a, c, AUDIT_VERDICT_REUSED, "%u sessions opened, %zu "
            "distinct ids: %u given an id another live session had (ending "
            "one ends the other)", with_id, a->ntags, a->reused_ids);
    else
        audit_judge(a, c, AUDIT_VERDICT_UNIQUE, "each of the %u sessions "
            "opened had an id of its own", with_id);
    audit_conclude(a);
}

/* --- dispatch -------------------------------------------------------------- */

const char *
audit_checks_not_for(const struct audit *a, enum audit_check c,
    enum audit_verdict *v)
{
    static const char sse[] = "2024-11-05 HTTP+SSE: no Mcp-Session-Id and no "
        "DELETE; the session is the SSE stream, ended by closing it";
    static const char stdio[] = "stdio: the child is the session";
    static const char modern[] = "2026-07-28 is sessionless: no "
        "Mcp-Session-Id, DELETE or GET stream";

    *v = AUDIT_VERDICT_NA;
    if (c == AUDIT_CHECK_ERA)
        return NULL;
    if (c == AUDIT_CHECK_SHUTDOWN && !a->stdio)
        return "stdio only: how a child ends";
    if (a->stdio && c != AUDIT_CHECK_PING && c != AUDIT_CHECK_VERSIONS &&
        c != AUDIT_CHECK_SHUTDOWN)
        return stdio;
    if (a->mode == AUDIT_MODE_DOWN) {
        *v = AUDIT_VERDICT_ERROR;
        return "not audited: the era check could not dial the server";
    }
    if (c == AUDIT_CHECK_SHUTDOWN)
        return NULL;
    switch (a->mode) {
    case AUDIT_MODE_HTTP:
        return NULL;
    case AUDIT_MODE_SSE:
        return c == AUDIT_CHECK_PING || c == AUDIT_CHECK_AFFINITY ||
            c == AUDIT_CHECK_VERSIONS ? NULL : sse;
    case AUDIT_MODE_STDIO:
        return c == AUDIT_CHECK_PING || c == AUDIT_CHECK_VERSIONS ? NULL :
            stdio;
    case AUDIT_MODE_STDIO_MODERN:
        return c == AUDIT_CHECK_PING ? "2026-07-28 has no ping" :
            c == AUDIT_CHECK_VERSIONS ? "2026-07-28 has no initialize to "
            "negotiate" : stdio;
    case AUDIT_MODE_MODERN:
        return c == AUDIT_CHECK_PROBE_LEAK ? NULL :
            c == AUDIT_CHECK_PING ? "2026-07-28 has no ping" :
            c == AUDIT_CHECK_VERSIONS ? "2026-07-28 has no initialize to "
            "negotiate" : modern;
    default:
        return NULL;
    }
}

void
audit_checks_step(struct audit *a, enum audit_check c)
{
    switch (c) {
    case AUDIT_CHECK_ERA:
        audit_checks_era(a);
        break;
    case AUDIT_CHECK_DELETE:
        audit_checks_delete(a);
        break;
    case AUDIT_CHECK_UNKNOWN_SESSION:
        audit_checks_unknown(a);
        break;
    case AUDIT_CHECK_MISSING_SESSION:
        audit_checks_missing(a);
        break;
    case AUDIT_CHECK_PROBE_LEAK:
        audit_checks_probe_leak(a);
        break;
    case AUDIT_CHECK_PING:
        audit_checks_ping(a);
        break;
    case AUDIT_CHECK_STREAM:
        audit_checks_stream(a);
        break;
    case AUDIT_CHECK_AFFINITY:
        audit_checks_affinity(a);
        break;
    case AUDIT_CHECK_VERSIONS:
        audit_checks_versions(a);
        break;
    case AUDIT_CHECK_SHUTDOWN:
        audit_checks_shutdown(a);
        break;
    case AUDIT_CHECK_SESSION_IDS:
        audit_checks_session_ids(a);
        break;
    default:
        /* freed is judged with delete */
        audit_judge(a, c, AUDIT_VERDICT_ERROR, "not judged");
        audit_conclude(a);
        break;
    }
}
