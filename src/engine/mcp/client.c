/*
 * The MCP lifecycle with one server, over whatever transport carries it
 * (MCP 2025-03-26 .. 2025-11-25 basic/lifecycle, 2026-07-28 basic/versioning
 * and server/discover, 2024-11-05 through the older transport).
 *
 * The dial is one exchange: the era probe (server/discover) unless the era
 * is known or configured legacy; then initialize (offering the newest
 * revision), notifications/initialized and tools/list to the last page for
 * a legacy server, or the listing alone for a modern one; all within the
 * open deadline. After it: the liveness exchange at the interval (ping, or
 * server/discover where there is no ping), a re-list after a list_changed
 * notice (coalesced and rate-limited), and the server stream when the
 * server offers tools.listChanged. Each exchange ends in exactly one
 * outcome, reported through the host (struct client_host), whose record
 * it goes to; what follows a loss is the host's retry policy.
 *
 * What this file must never do: branch on the configured transport (a
 * difference is a transport op or capability); adopt a session from
 * anything but a 2xx answer to initialize, or drop one without ending it;
 * read a clock but the host's (libev's); reach its owner but through the
 * host, or decide for it when to dial again.
 */
#include "mcp/client_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "transport/ending_run.h"
#include "core/jsonrpc.h"
#include "transport/transport.h"
#include "util/str.h"
#include "util/xmalloc.h"


/* A line for the host's debug log. */
void
client_log(const struct client *c, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    client_vlog(c, fmt, ap);
    va_end(ap);
}

double
client_elapsed_ms(const struct client *c, ev_tstamp since)
{
    double ms = (client_now(c) - since) * 1000.0;

    return ms < 0 ? 0 : ms;
}

static const char *
client_op_name(enum client_op op)
{
    switch (op) {
    case CLIENT_OP_INITIALIZE:
        return "initialize";
    case CLIENT_OP_INITIALIZED:
        return "notifications/initialized";
    case CLIENT_OP_LIST:
        return "tools/list";
    case CLIENT_OP_PING:
        return "ping";
    case CLIENT_OP_DISCOVER:
        return "server/discover";
    case CLIENT_OP_LISTEN:
        return "subscriptions/listen";
    case CLIENT_OP_CALL:
        return "tools/call";
    default:
        return "notification";
    }
}

/* The name of the liveness exchange: ping, or server/discover where the
 * revision has no ping. */
static const char *
client_ping_op(const struct client *c)
{
    return c->era == MCP_ERA_MODERN ? "discover" :
        c->ping_unsupported ? "tools/list" : "ping";
}

const char *
client_liveness_method(const struct client *c)
{
    return c->era == MCP_ERA_MODERN ? "server/discover" :
        c->ping_unsupported ? "tools/list" : "ping";
}

void
client_free_strv(char **v, long n)
{
    for (long i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* --- requests in flight ------------------------------------------------- */

struct client_req *
client_req_new(struct client *c, enum client_op op, int64_t id,
    const char *method)
{
    struct client_req *rq = xcalloc(1, sizeof(*rq));

    rq->c = c;
    rq->op = op;
    rq->id = id;
    rq->method = method;
    rq->started = client_now(c);
    rq->next = c->reqs;
    c->reqs = rq;
    return rq;
}

/* Count rq in the host's busy work (on) or no more (off), once each. */
void
client_req_busy(struct client_req *rq, bool on)
{
    if (rq->counted == on)
        return;
    rq->counted = on;
    client_report_busy(rq->c, on);
}

/* Unlink and free; stops its timer; cancels its transfer if it runs. */
void
client_req_free(struct client_req *rq, struct failure_evidence *evd_out)
{
    struct client *c = rq->c;

    for (struct client_req **pp = &c->reqs; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == rq) {
            *pp = rq->next;
            break;
        }
    }
    ev_timer_stop(c->env->loop, &rq->timer);
    client_req_busy(rq, false);
    if (rq->tr != NULL)
        transport_cancel(c->t, rq->tr, evd_out);
    free(rq);
}

struct client_req *
client_find(const struct client *c, enum client_op op)
{
    for (struct client_req *rq = c->reqs; rq != NULL; rq = rq->next) {
        if (rq->op == op)
            return rq;
    }
    return NULL;
}

static void client_timeout_cb(struct ev_loop *loop, ev_timer *w,
    int revents);

/* Send one message for rq. false (rq still linked; the caller frees it
 * and records the failure) when it cannot start. */
bool
client_send(struct client *c, struct client_req *rq, const char *body,
    size_t len, unsigned flags, long timeout_ms, char **cause)
{
    struct transport_msg m = {
        .method = rq->method != NULL ? rq->method : client_op_name(rq->op),
        .id = rq->id,
        .body = body,
        .len = len,
        .flags = flags,
    };

    rq->tr = transport_send(c->t, &m, rq, cause);
    if (rq->tr == NULL)
        return false;
    ev_timer_init(&rq->timer, client_timeout_cb, 0., 0.);
    rq->timer.data = rq;
    if (timeout_ms > 0) {
        ev_timer_set(&rq->timer, timeout_ms / 1000.0, 0.);
        ev_timer_start(c->env->loop, &rq->timer);
    }
    return true;
}

/* The request flags for the current era. */
unsigned
client_flags(const struct client *c, enum client_op op)
{
    if (op == CLIENT_OP_DISCOVER || op == CLIENT_OP_LISTEN)
        return TRANSPORT_MODERN | (op == CLIENT_OP_DISCOVER ? TRANSPORT_NO_CACHE :
            TRANSPORT_STREAMING);
    if (op == CLIENT_OP_INITIALIZE)
        return TRANSPORT_INITIALIZE;
    if (c->era == MCP_ERA_MODERN && op != CLIENT_OP_INITIALIZED && op != CLIENT_OP_NOTIFY)
        return TRANSPORT_MODERN | (op == CLIENT_OP_PING ? TRANSPORT_NO_CACHE : 0);
    return 0;
}

/* Fire-and-forget: a notification. Takes body. */
static void
client_notify(struct client *c, char *body, size_t len)
{
    struct client_req *rq = client_req_new(c, CLIENT_OP_NOTIFY, -1, NULL);
    char              *cause = NULL;

    if (!client_send(c, rq, body, len, 0, client_timeout_ms(c), &cause)) {
        client_log(c, "notification not sent: %s", cause);
        free(cause);
        client_req_free(rq, NULL);
    }
    free(body);
}

/* Send one step of the dial (body taken); a step that cannot even start
 * fails the dial. true when it went out. */
bool
client_dial_step(struct client *c, struct client_req *rq, char *body,
    size_t len, long timeout_ms)
{
    char *cause = NULL;
    bool  sent;

    rq->in_dial = true;
    c->dial_step = rq->method != NULL ? rq->method : client_op_name(rq->op);
    sent = client_send(c, rq, body, len, client_flags(c, rq->op), timeout_ms,
        &cause);
    free(body);
    if (!sent) {
        struct failure_evidence evd = { .net = NET_OTHER };

        client_req_free(rq, NULL);
        client_dial_failed(c, &evd, cause);
        free(cause);
    }
    return sent;
}

/* --- judging an answer (what only MCP can judge) ------------------------ */

/* What the 2026-07-28 error codes mean (basic/index, error codes). */
static const char *
client_rpc_code_meaning(long code)
{
    switch (code) {
    case -32020:
        return " (header mismatch)";
    case -32021:
        return " (missing required client capability)";
    case -32022:
        return " (unsupported protocol version)";
    default:
        return "";
    }
}

/*
 * A request ended: true when it failed (evd and detail set from the
 * transport's failure, a JSON-RPC error, or a result that is not
 * complete), false when res->answer holds a complete result (or a
 * notification was taken).
 */
bool
client_judge(const struct transport_result *res, struct failure_evidence *evd,
    char *detail, size_t dsz)
{
    const struct jsonrpc_msg *a = res->answer;

    *evd = res->f.evd;
    detail[0] = '\0';
    if (res->failed) {
        snprintf(detail, dsz, "%s", res->f.detail);
        return true;
    }
    if (a == NULL)
        return false;
    if (jsonrpc_kind(a) == JSONRPC_RESULT) {
        const char *rt = jsonrpc_get_string(a, "result.resultType");
        char        clean[32];

        char        asked[128], said[128];

        /* Absent means complete (a legacy server). */
        if (rt == NULL || strcmp(rt, "complete") == 0)
            return false;
        if (jsonrpc_input_required(a, asked, sizeof(asked))) {
            /* 2026-07-28 MRTR: the server asks its client first (mcptop
             * declares no capability to answer): answered, never a wait. */
            str_sanitize(said, sizeof(said), asked, strlen(asked));
            evd->rpc_error = true;
            evd->rpc_error_code = 0;
            evd->input_required = true;
            if (evd->http_status >= 200 && evd->http_status < 300)
                evd->http_status = 0;
            snprintf(detail, dsz, "answered input_required: the server asks "
                "its client for %s first", said[0] ? said : "more input");
            return true;
        }
        str_sanitize(clean, sizeof(clean), rt, strlen(rt));
        evd->no_matching_response = true;
        snprintf(detail, dsz, "result with resultType \"%s\" where a "
            "complete result was expected", clean);
        return true;
    }
    {
        /* A JSON-RPC error with our id: the server answered. */
        const char *em = jsonrpc_error_message(a);
        char        msg[160] = "";

        if (em != NULL)
            str_sanitize(msg, sizeof(msg), em, strlen(em));
        evd->rpc_error = true;
        evd->rpc_error_code = jsonrpc_error_code(a);
        snprintf(detail, dsz, "JSON-RPC error %ld%s%s%s",
            evd->rpc_error_code, client_rpc_code_meaning(evd->rpc_error_code),
            msg[0] ? ": " : "", msg);
        /* The status rides along only when it was not a 2xx. */
        if (evd->http_status >= 200 && evd->http_status < 300)
            evd->http_status = 0;
        return true;
    }
}

/* Record a failed exchange at site request. */
void
client_fail(struct client *c, const char *op,
    const struct failure_evidence *evd, double ms, const char *detail)
{
    struct failure f;

    failure_make(&f, evd, FAILURE_SITE_REQUEST, detail);
    client_report_exchange(c, op, &f, ms);
}

/* --- the session -------------------------------------------------------- */

/* Everything of the session stops now; a session id still held goes to
 * the ending procedure, never dropped silently: half-open when a failed
 * dial leaves it, as any other when it was open. */
void
client_drop(struct client *c, const char *why, bool half_open)
{
    char *session;

    for (struct client_req *rq = c->reqs, *n; rq != NULL; rq = n) {
        n = rq->next;
        if (!rq->detached)
            client_req_free(rq, NULL);
    }
    transport_stream_close(c->t);
    c->stream_none = false;
    c->stream_nones = 0;
    c->stream_opened = false;
    ev_timer_stop(c->env->loop, &c->stream_timer);
    ev_timer_stop(c->env->loop, &c->stream_idle);
    ev_timer_stop(c->env->loop, &c->relist_timer);
    if (c->deep != NULL)
        ev_timer_stop(c->env->loop, &c->deep->timer);
    c->relist_wanted = false;
    session = transport_release(c->t);
    if (session != NULL)
        client_report_orphan(c, session, c->protocol_version, why,
            half_open);
}

/* Switch to transport t (the old one is closed and freed, with every
 * request still on it: an abandoned initialize of an earlier dial is
 * given up too). */
void
client_use_transport(struct client *c, struct transport *t)
{
    while (c->reqs != NULL)
        client_req_free(c->reqs, NULL);
    transport_close(c->t);
    transport_free(c->t);
    c->t = t;
}

/* --- the dial ----------------------------------------------------------- */

void
client_dial_failed(struct client *c, const struct failure_evidence *evd,
    const char *detail)
{
    double         ms = client_elapsed_ms(c, c->dial_started);
    struct failure f;
    char           named[256];

    /* Every dial failure names the step that failed. */
    if (c->dial_step != NULL && detail != NULL &&
        strstr(detail, c->dial_step) == NULL) {
        snprintf(named, sizeof(named), "%s: %.220s", c->dial_step, detail);
        detail = named;
    }
    ev_timer_stop(c->env->loop, &c->open_timer);
    ev_timer_stop(c->env->loop, &c->fresh_timer);
    /* Refused by the server itself, at initialize: "cannot be
     * initialized" (DESIGN.md section 4b) while no dial completes. */
    c->init_refused = evd->rpc_error && c->dial_step != NULL &&
        strcmp(c->dial_step, "initialize") == 0;
    if (c->probe_note != NULL) {
        /* The probe proved nothing and initialize did not work either:
         * the era stays as it was (empty, for a server never dialed), and
         * what was seen is said. */
        free(c->warning);
        c->warning = str_printf("no era evidence: %s; initialize failed "
            "too", c->probe_note);
        c->warning_no_era = true;
        free(c->probe_note);
        c->probe_note = NULL;
    }
    client_drop(c, "the dial failed after the session was issued", true);
    client_free_strv(c->list_acc, c->list_n);
    c->list_acc = NULL;
    c->list_n = c->list_cap = 0;
    c->dialed_once = true;
    transport_abandon(c->t);
    c->last_ping_ok = false;
    failure_make(&f, evd, FAILURE_SITE_CONNECT, detail);
    client_report_dial_done(c, &f, ms);
}

void
client_dial_completed(struct client *c)
{
    double ms = client_elapsed_ms(c, c->dial_started);
    long   deadline = client_open_deadline_ms(c);

    if (ms > (double)deadline) {
        /* Judged on the clock: a dial that finished after its deadline
         * (the loop was held up) is a timeout, whatever came back. */
        struct failure_evidence evd = { .timer = FAILURE_TIMER_OPEN,
                                       .phase = FAILURE_PHASE_RESPONSE,
                                       .response_bytes = 1 };
        char                    detail[160];

        c->dial_step = NULL;
        snprintf(detail, sizeof(detail), "open deadline %ld ms passed: the "
            "dial completed after %.0f ms", deadline, ms);
        client_dial_failed(c, &evd, detail);
        return;
    }
    ev_timer_stop(c->env->loop, &c->open_timer);
    c->init_refused = false;
    if (c->probe_note != NULL) {
        /* The probe proved nothing and initialize worked: legacy, on that
         * evidence, said. */
        free(c->warning);
        c->warning = str_printf("era legacy: %s; initialize worked",
            c->probe_note);
        c->warning_no_era = false;
        free(c->probe_note);
        c->probe_note = NULL;
    } else if (c->warning_no_era) {
        /* A dial worked since: what the era is now was learnt. */
        free(c->warning);
        c->warning = NULL;
        c->warning_no_era = false;
    }
    c->dialed_once = true;
    c->rtt_ms = ms;
    c->last_ping_ok = true;
    client_report_dial_done(c, NULL, ms);
    client_streams_start(c);
    client_probe_schedule(c);
}

/* ev_timer: the open deadline passed. */
static void
client_open_timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct client          *c = w->data;
    struct failure_evidence evd = { .timer = FAILURE_TIMER_OPEN };
    struct client_req      *rq;
    char                    detail[256], waited[128];
    int64_t                 id = -1;
    ev_tstamp               started = 0;

    (void)loop;
    (void)revents;
    /* The evidence of how far the step in flight got. */
    for (rq = c->reqs; rq != NULL; rq = rq->next) {
        if (rq->in_dial)
            break;
    }
    snprintf(waited, sizeof(waited), "open deadline %ld ms passed%s%s",
        client_open_deadline_ms(c), rq != NULL ? " during " : "",
        rq != NULL ? client_op_name(rq->op) : "");
    snprintf(detail, sizeof(detail), "%s", waited);
    if (rq != NULL) {
        id = rq->id;
        started = rq->started;
    }
    if (rq != NULL && rq->op == CLIENT_OP_INITIALIZE &&
        transport_has_cap(c->t, TRANSPORT_CAP_LATE_SESSION)) {
        /* The operator is answered now, but the initialize is left to
         * settle within its own timeout: a session id it brings late is
         * ended as half-open (DESIGN.md section 5). */
        transport_peek(c->t, rq->tr, &evd);
        rq->detached = true;
        rq->in_dial = false;
        client_req_busy(rq, true);
        ev_timer_stop(c->env->loop, &rq->timer);
        ev_timer_set(&rq->timer, client_timeout_ms(c) / 1000.0, 0.);
        ev_timer_start(c->env->loop, &rq->timer);
    } else if (rq != NULL) {
        client_req_free(rq, &evd);
    }
    evd.timer = FAILURE_TIMER_OPEN;
    evd.net = NET_OK;
    /* An answer came meanwhile, with an id that is none of ours. */
    client_stray_judge(c, id, started, waited, &evd, detail, sizeof(detail));
    client_dial_failed(c, &evd, detail);
}

void
client_dial(struct client *c)
{
    struct transport_failure f;
    int                      rc;

    client_drop(c, "a session left from before the new dial", false);
    c->dial_started = client_now(c);
    ev_timer_set(&c->open_timer, client_open_deadline_ms(c) / 1000.0, 0.);
    ev_timer_start(c->env->loop, &c->open_timer);
    c->probe_retried = false;
    c->probed_this_dial = false;
    c->init_said_modern = false;
    c->respawned = false;
    c->silent_probe = false;
    c->ping_unsupported = false;    /* learnt again for each session */
    /* Each dial may fall back to HTTP+SSE once; a server remembered as
     * HTTP+SSE that restarts is dialed over it again. */
    c->sse_tried = false;
    c->sse_fallback_now = false;
    c->dial_step = NULL;
    free(c->probe_note);
    c->probe_note = NULL;
    rc = transport_open(c->t, &f);
    if (rc < 0) {
        client_dial_failed(c, &f.evd, f.detail);
        return;
    }
    if (rc == 0)
        client_dial_begin(c);
    /* rc 1: TRANSPORT_READY starts it. */
}

/* --- listing ------------------------------------------------------------ */

/* --- the liveness exchange ---------------------------------------------- */

/*
 * A session is presumed lost when a request that carried its id is
 * answered 404 (the spec's word), 400 (what SDK servers answer for an id
 * they do not know), or with a JSON-RPC error whose id is null (a gateway's
 * word), whatever the status (DESIGN.md section 6): the failure is
 * recorded, the session ended (its DELETE goes whatever it will answer),
 * and the server dialed again; after a 400 or a null id, once, until an
 * exchange completes on the new session. Only when the host's retry
 * policy dials again (CLIENT_LOSS_SESSION). true when it was.
 */
bool
client_session_lost(struct client *c, const char *op, bool carried,
    const struct failure_evidence *evd, double ms, char *detail)
{
    long        status = evd->http_status;
    bool        expired = status == 404;
    bool        unknown = status == 400 ||
        (evd->rpc_error && evd->rpc_error_id_null);
    const char *why;
    size_t      n = strlen(detail);

    if (!carried || (!expired && !unknown))
        return false;
    if (!expired && c->redialed_for_loss)
        return false;
    if (!expired && status == 400 && failure_classify(evd) !=
        FAILURE_HTTP_STATUS && !evd->rpc_error_id_null)
        return false;
    if (!client_retries(c, CLIENT_LOSS_SESSION))
        return false;
    c->redialed_for_loss = !expired;
    why = expired ? "session expired" : "session presumed lost: the server "
        "does not know it";
    snprintf(detail + n, 256 - n, "; %s", why);
    client_fail(c, op, evd, ms, detail);
    c->expiries++;
    client_drop(c, expired ? "the session expired (404)" :
        "the session was presumed lost", false);
    client_retry(c, CLIENT_LOSS_SESSION);
    return true;
}

bool
client_ping(struct client *c, bool scheduled)
{
    int64_t            id;
    struct client_req *rq;
    size_t             len;
    char              *body, *cause = NULL;

    if (client_find(c, CLIENT_OP_PING) != NULL)
        return false;
    id = c->next_id++;
    if (c->era == MCP_ERA_MODERN) {
        /* No ping in 2026-07-28: server/discover is the cheapest request
         * every server must answer. */
        rq = client_req_new(c, CLIENT_OP_PING, id, "server/discover");
        body = jsonrpc_build_modern(id, rq->method, MCP_PROTOCOL_MODERN,
            "mcptop", MCPTOP_VERSION, NULL, false, &len);
    } else {
        /* ping, or tools/list where the server said it has no ping. */
        rq = client_req_new(c, CLIENT_OP_PING, id, c->ping_unsupported ?
            "tools/list" : "ping");
        /* The most frequent message: written with no printf. */
        body = jsonrpc_build_ping(id, rq->method, &len);
    }
    if (!client_send(c, rq, body, len, client_flags(c, CLIENT_OP_PING) |
        (scheduled ? TRANSPORT_IDLE_AFTER : 0u), client_timeout_ms(c),
        &cause)) {
        struct failure_evidence evd = { .net = NET_OTHER };

        client_req_free(rq, NULL);
        client_fail(c, client_ping_op(c), &evd, 0, cause);
        free(cause);
        free(body);
        return false;
    }
    free(body);
    return true;
}

static void
client_on_ping(struct client *c, struct client_req *rq,
    struct transport_result *res)
{
    struct failure_evidence evd;
    char                    detail[256];
    double                  ms = client_elapsed_ms(c, rq->started);
    bool                    carried = res->carried_session;
    long                    status;
    enum failure_kind       kind;

    client_req_free(rq, NULL);
    c->pings_done++;
    if (!client_judge(res, &evd, detail, sizeof(detail))) {
        c->rtt_ms = ms;
        c->last_ping_ok = true;
        c->redialed_for_loss = false;
        client_report_exchange(c, client_ping_op(c), NULL, ms);
        client_retry(c, CLIENT_LOSS_NONE);
        return;
    }
    if (evd.rpc_error && !evd.rpc_error_id_null &&
        evd.rpc_error_code == -32601 && c->era != MCP_ERA_MODERN &&
        !c->ping_unsupported) {
        /* ping is optional in practice: "method not found" is an answer
         * (reach proven), not a failure; the liveness exchange is
         * tools/list for the rest of this session (DESIGN.md 4b). */
        c->ping_unsupported = true;
        client_log(c, "ping: -32601 method not found; the liveness "
            "exchange is tools/list for this session");
        c->rtt_ms = ms;
        c->last_ping_ok = true;
        client_report_exchange(c, "ping", NULL, ms);
        client_retry(c, CLIENT_LOSS_NONE);
        return;
    }
    c->last_ping_ok = false;
    status = evd.http_status;
    kind = failure_classify(&evd);
    if (client_session_lost(c, client_ping_op(c), carried, &evd, ms, detail))
        return;
    client_fail(c, client_ping_op(c), &evd, ms, detail);
    if (c->era == MCP_ERA_MODERN && c->decl->era == CONFIG_ERA_AUTO &&
        (status == 400 || status == 404 || status == 405) &&
        kind == FAILURE_HTTP_STATUS &&
        client_retries(c, CLIENT_LOSS_ERA_STALE)) {
        /* The remembered era stopped working: probe again. */
        client_log(c, "era: modern stopped working; probing again");
        c->era = MCP_ERA_NONE;
        client_drop(c, "the era changed", false);
        client_retry(c, CLIENT_LOSS_ERA_STALE);
        return;
    }
    if ((kind == FAILURE_CONNECT_REFUSED || !transport_alive(c->t)) &&
        client_retries(c, CLIENT_LOSS_UNREACHABLE)) {
        /* Nothing listens any more, or the child is gone: the sessions
         * went with it. */
        client_drop(c, "the connection was lost", false);
        client_retry(c, CLIENT_LOSS_UNREACHABLE);
        return;
    }
    client_retry(c, CLIENT_LOSS_NONE);
}

void
client_tick(struct client *c)
{
    if (c->list_ttl_ms > 0 && client_now(c) - c->listed_at >
        c->list_ttl_ms / 1000.0) {
        /* The listing's ttlMs ran out: list again. */
        c->relist_wanted = true;
        client_relist(c);
    }
}

/* --- the server stream -------------------------------------------------- */

/* --- the era probe (2026-07-28 basic/versioning, compatibility) -------- */

/* --- events from the transport ------------------------------------------ */

/* ev_timer: a request's own timeout. */
static void
client_timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct client_req      *rq = w->data;
    struct client          *c = rq->c;
    struct failure_evidence evd = { 0 };
    enum client_op          op = rq->op;
    int64_t                 id = rq->id;
    ev_tstamp               started = rq->started;
    double                  ms = client_elapsed_ms(c, rq->started);
    char                    detail[256], waited[128];
    bool                    stray;

    (void)loop;
    (void)revents;
    if (rq->detached) {
        client_log(c, "abandoned %s got no answer within %ld ms",
            client_op_name(op), client_timeout_ms(c));
        client_req_free(rq, NULL);
        return;
    }
    client_req_free(rq, &evd);
    evd.timer = FAILURE_TIMER_REQUEST;
    evd.net = NET_OK;
    snprintf(waited, sizeof(waited), "no answer to %s within %ld ms "
        "(request timeout)", client_op_name(op), client_timeout_ms(c));
    snprintf(detail, sizeof(detail), "%s", waited);
    /* An answer came meanwhile, with an id that is none of ours. */
    stray = client_stray_judge(c, id, started, waited, &evd, detail,
        sizeof(detail));
    /* Best effort, never for initialize (MCP basic/utilities/cancellation). */
    if (id >= 0 && op != CLIENT_OP_INITIALIZE && transport_has_session(c->t)) {
        size_t len;
        char  *body = jsonrpc_build_cancelled(id, "timeout", &len);

        client_notify(c, body, len);
    }
    switch (op) {
    case CLIENT_OP_DISCOVER:
        if (transport_has_cap(c->t, TRANSPORT_CAP_SILENT_PROBE) &&
            c->decl->era == CONFIG_ERA_AUTO) {
            /* No answer to the probe means a legacy server. */
            c->silent_probe = true;
            client_fallback_legacy(c, "no answer to server/discover");
            break;
        }
        client_dial_failed(c, &evd, detail);
        break;
    case CLIENT_OP_INITIALIZE:
    case CLIENT_OP_INITIALIZED:
        client_dial_failed(c, &evd, detail);
        break;
    case CLIENT_OP_LIST:
        client_list_failed(c, &evd, detail);
        break;
    case CLIENT_OP_PING:
        c->last_ping_ok = false;
        c->pings_done++;
        client_fail(c, client_ping_op(c), &evd, ms, detail);
        client_retry(c, CLIENT_LOSS_NONE);
        break;
    case CLIENT_OP_CALL:
        /* A tool that hangs is what a deep check exists to catch. */
        client_probe_timed_out(c, &evd, ms, stray ? detail : NULL);
        break;
    default:
        break;
    }
}

/* Route a finished request to its step. */
static void
client_on_done(struct client *c, struct client_req *rq,
    struct transport_result *res)
{
    rq->tr = NULL;          /* the transport is done with it */
    ev_timer_stop(c->env->loop, &rq->timer);
    if (res->retry_after_s >= 0 && (res->f.evd.http_status == 429 ||
        res->f.evd.http_status == 503))
        /* A wait the server asked for holds for every request to it. */
        client_report_retry_after(c, res->retry_after_s);
    switch (rq->op) {
    case CLIENT_OP_INITIALIZE:
        client_on_initialize(c, rq, res);
        break;
    case CLIENT_OP_INITIALIZED:
        client_on_initialized(c, rq, res);
        break;
    case CLIENT_OP_LIST:
        client_on_list(c, rq, res);
        break;
    case CLIENT_OP_PING:
        client_on_ping(c, rq, res);
        break;
    case CLIENT_OP_NOTIFY:
        client_req_free(rq, NULL);
        break;
    case CLIENT_OP_ANSWER:
        client_on_answer_sent(c, rq, res);
        break;
    case CLIENT_OP_DISCOVER:
        client_on_discover(c, rq, res);
        break;
    case CLIENT_OP_LISTEN:
        client_on_listen_done(c, rq, res);
        break;
    case CLIENT_OP_CALL:
        client_on_call(c, rq, res);
        break;
    }
}

/*
 * The transport could not open. When this dial fell back to the older
 * transport and that could not open either, what initialize got is the
 * failure to report, not the GET's. A redial of a server remembered as
 * HTTP+SSE reports the GET's own failure (a refused port while it
 * restarts), and keeps the transport for the next dial, unless the server
 * answered the GET with a 4xx: then it has no stream any more, and the
 * next dial probes afresh.
 */
static void
client_on_open_failed(struct client *c, const struct transport_event *e)
{
    if (client_state(c) != CLIENT_PHASE_DIALING)
        return;
    if (c->era == MCP_ERA_LEGACY_SSE && c->decl->era == CONFIG_ERA_AUTO &&
        !e->opened && !c->sse_fallback_now) {
        long st = e->failure->evd.http_status;

        if (st >= 400 && st < 500 && !c->decl->http_sse) {
            client_log(c, "era: the HTTP+SSE stream answered %ld; probing "
                "afresh at the next dial", st);
            c->era = MCP_ERA_NONE;
            client_use_transport(c, client_make_transport(c));
        }
        client_dial_failed(c, &e->failure->evd, e->failure->detail);
        return;
    }
    if (c->era == MCP_ERA_LEGACY_SSE && c->decl->era == CONFIG_ERA_AUTO &&
        !e->opened && c->sse_tried && c->sse_fallback != NULL) {
        char both[256];
        int  n;

        c->era = MCP_ERA_LEGACY;
        client_use_transport(c, client_make_transport(c));
        n = snprintf(both, sizeof(both), "%.180s", c->sse_fallback->detail);
        /* The GET's first clause (its status), not its words. */
        snprintf(both + n, sizeof(both) - (size_t)n,
            "; no HTTP+SSE stream either (GET: %.*s)",
            (int)strcspn(e->failure->detail, ";") < 48 ?
            (int)strcspn(e->failure->detail, ";") : 48, e->failure->detail);
        client_dial_failed(c, &c->sse_fallback->evd, both);
        return;
    }
    client_dial_failed(c, &e->failure->evd, e->failure->detail);
}

/* The connection itself is gone. */
static void
client_on_lost(struct client *c, const struct transport_event *e)
{
    if (e->failure == NULL) {
        /* Only an exchange can say what it means: observe it now. */
        client_retry(c, CLIENT_LOSS_UNSURE);
        return;
    }
    if (client_state(c) == CLIENT_PHASE_DIALING) {
        /* A child about to be replaced by a fresh one may end first. */
        if (!ev_is_active(&c->fresh_timer))
            client_dial_failed(c, &e->failure->evd, e->failure->detail);
        return;
    }
    /* The loss is an observation whatever follows it. */
    client_fail(c, e->op != NULL ? e->op : "sse stream", &e->failure->evd, 0,
        e->failure->detail);
    if (!client_retries(c, CLIENT_LOSS_CONNECTION))
        return;
    client_drop(c, "the connection was lost", false);
    client_retry(c, CLIENT_LOSS_CONNECTION);
}

/* transport_cb: everything a transport reports. */
static void
client_transport_cb(void *arg, const struct transport_event *e)
{
    struct client *c = arg;

    switch (e->type) {
    case TRANSPORT_DONE:
        client_on_done(c, e->owner, e->result);
        break;
    case TRANSPORT_MESSAGE:
        client_on_message(c, e->msg, e->owner);
        break;
    case TRANSPORT_READY:
        if (client_state(c) == CLIENT_PHASE_DIALING &&
            client_find(c, CLIENT_OP_INITIALIZE) == NULL)
            client_dial_begin(c);
        break;
    case TRANSPORT_OPEN_FAILED:
        client_on_open_failed(c, e);
        break;
    case TRANSPORT_STREAM_OPEN:
        client_on_stream_open(c, e->owner);
        break;
    case TRANSPORT_STREAM_CLOSED:
        client_on_stream_closed(c, e);
        break;
    case TRANSPORT_LOST:
        client_on_lost(c, e);
        break;
    case TRANSPORT_HELD: {
        struct client_req *rq = e->owner;

        ev_timer_stop(c->env->loop, &rq->timer);
        break;
    }
    case TRANSPORT_RESUMED: {
        struct client_req *rq = e->owner;

        if (rq->op != CLIENT_OP_LISTEN) {
            ev_timer_set(&rq->timer, client_timeout_ms(c) / 1000.0, 0.);
            ev_timer_start(c->env->loop, &rq->timer);
        }
        break;
    }
    }
}

/* --- ending and stopping ------------------------------------------------ */

void
client_end(struct client *c, struct ending_run *run)
{
    ev_timer_stop(c->env->loop, &c->open_timer);
    ev_timer_stop(c->env->loop, &c->fresh_timer);
    /* An initialize in flight may still issue a session: let it settle
     * and end that one as half-open. */
    for (struct client_req *rq = c->reqs; rq != NULL; rq = rq->next) {
        if (rq->op == CLIENT_OP_INITIALIZE && rq->in_dial) {
            rq->detached = true;
            rq->in_dial = false;
            client_req_busy(rq, true);
        }
    }
    if (c->era == MCP_ERA_MODERN) {
        /* Nothing to end on the server: no session exists. */
        ending_run_sessionless(run);
        ending_run_outcome(run, ENDING_NO_SESSION,
            "sessionless (2026-07-28): nothing to end on the server");
    }
    /* The transport ends the session (a DELETE, the shutdown sequence);
     * then everything of the session stops here (closing a response
     * stream is the cancellation over 2026-07-28 HTTP). */
    ending_run_go(run, NULL, c->protocol_version);
    client_drop(c, NULL, false);
    c->last_ping_ok = false;
}

void
client_stop(struct client *c)
{
    struct ev_loop *loop = c->env->loop;

    /* Detached work too: abandoned initializes. */
    while (c->reqs != NULL)
        client_req_free(c->reqs, NULL);
    transport_close(c->t);
    ev_timer_stop(loop, &c->open_timer);
    ev_timer_stop(loop, &c->fresh_timer);
    ev_timer_stop(loop, &c->stream_timer);
    ev_timer_stop(loop, &c->stream_idle);
    ev_timer_stop(loop, &c->relist_timer);
    if (c->deep != NULL)
        ev_timer_stop(loop, &c->deep->timer);
    c->stream_opened = false;
}

/* --- lifetime and getters ----------------------------------------------- */

struct client *
client_new(const struct client_host *host, void *arg,
    const struct client_env *env, const struct config_server *decl,
    size_t index, const char *log_name)
{
    struct client *c = xcalloc(1, sizeof(*c));

    c->host = host;
    c->host_arg = arg;
    c->env = env;
    c->decl = decl;
    c->tenv.loop = env->loop;
    c->tenv.curl = env->curl;
    c->tenv.decl = decl;
    c->tenv.pool_key = index;
    c->tenv.log = env->log;
    c->tenv.log_name = log_name;
    c->tenv.test_keep_id = env->test_keep_id;
    c->tenv.spawns = &c->spawns;
    c->tenv.cb = client_transport_cb;
    c->tenv.cb_arg = c;
    c->t = client_make_transport(c);
    if (decl->http_sse)
        c->era = MCP_ERA_LEGACY_SSE;     /* said by the config */
    c->ntools = -1;
    c->next_id = 1;
    c->rtt_ms = -1;
    c->stream_retry_ms = -1;
    c->list_ttl_ms = -1;
    ev_timer_init(&c->open_timer, client_open_timeout_cb, 0., 0.);
    c->open_timer.data = c;
    ev_timer_init(&c->fresh_timer, client_fresh_timer_cb, 0., 0.);
    c->fresh_timer.data = c;
    ev_timer_init(&c->stream_timer, client_stream_retry_cb, 0., 0.);
    c->stream_timer.data = c;
    ev_timer_init(&c->stream_idle, client_stream_idle_cb, 0., 0.);
    c->stream_idle.data = c;
    ev_timer_init(&c->relist_timer, client_relist_cb, 0., 0.);
    c->relist_timer.data = c;
    if (decl->probe != NULL) {
        c->deep = xcalloc(1, sizeof(*c->deep));
        ev_timer_init(&c->deep->timer, client_probe_timer_cb, 0., 0.);
        c->deep->timer.data = c;
        c->deep->ms = -1;
    }
    return c;
}

void
client_free(struct client *c)
{
    if (c == NULL)
        return;
    client_stop(c);
    transport_free(c->t);
    free(c->protocol_version);
    free(c->peer_name);
    free(c->peer_version);
    free(c->cache_scope);
    free(c->probe_note);
    free(c->warning);
    free(c->sse_fallback);
    free(c->deep);
    client_list_free(c);
    client_free_strv(c->tool_names, c->ntools);
    client_free_strv(c->list_acc, c->list_n);
    for (size_t i = 0; i < c->ncaps; i++)
        free(c->caps[i]);
    free(c);
}

struct transport *
client_transport(const struct client *c)
{
    return c->t;
}

unsigned long
client_spawns(const struct client *c)
{
    return c->spawns;
}

bool
client_has_session(const struct client *c)
{
    return transport_has_session(c->t);
}

enum mcp_era
client_era(const struct client *c)
{
    return c->era;
}

void
client_session(const struct client *c, struct mcp_session_info *out)
{
    transport_session_prefix(c->t, out->id_prefix, sizeof(out->id_prefix));
    out->protocol_version = c->protocol_version;
    out->server_name = c->peer_name;
    out->server_version = c->peer_version;
    out->tools_list_changed = c->tools_list_changed;
    out->cache_scope = c->era == MCP_ERA_MODERN ? c->cache_scope : NULL;
}

long
client_tools(const struct client *c)
{
    return c->ntools;
}

const char *
client_tool_name(const struct client *c, long i)
{
    return i >= 0 && i < c->ntools ? c->tool_names[i] : NULL;
}

double
client_rtt_ms(const struct client *c)
{
    return c->rtt_ms;
}

bool
client_last_ping_ok(const struct client *c)
{
    return c->last_ping_ok;
}

bool
client_dialed_once(const struct client *c)
{
    return c->dialed_once;
}

unsigned long
client_pings_done(const struct client *c)
{
    return c->pings_done;
}

unsigned long
client_expiries(const struct client *c)
{
    return c->expiries;
}

size_t
client_capabilities(const struct client *c, const char **names, size_t max)
{
    size_t n = 0;

    for (size_t i = 0; i < c->ncaps && n < max; i++)
        names[n++] = c->caps[i];
    return n;
}

const char *
client_warning(const struct client *c)
{
    return c->warning;
}

bool
client_pagination_loop(const struct client *c)
{
    return c->list_loop;
}

const char *
client_list_note(const struct client *c)
{
    return c->list_note;
}

double
client_probe_ms(const struct client *c)
{
    return c->deep != NULL ? c->deep->ms : -1;
}

unsigned long
client_probe_notices(const struct client *c)
{
    return c->deep != NULL ? c->deep->notices : 0;
}

bool
client_init_refused(const struct client *c)
{
    return c->init_refused;
}

bool
client_probe_ok(const struct client *c)
{
    /* No deep check configured, or none made yet, or the last one held. */
    return c->deep == NULL || c->deep->calls == 0 || c->deep->ok ||
        client_find(c, CLIENT_OP_CALL) != NULL;
}
