/*
 * One MCP server and the lifecycle mcptop runs with it over Streamable HTTP
 * (MCP 2025-03-26 .. 2025-11-25, basic/lifecycle and basic/transports).
 *
 * The dial is one exchange: initialize (offering the newest revision, with
 * neither Mcp-Session-Id nor MCP-Protocol-Version), then
 * notifications/initialized, then tools/list to the last page, all within
 * the open deadline. After it: a ping at the interval, a re-list after a
 * list_changed notice, the GET stream when the server offers
 * tools.listChanged. Every exchange ends in exactly one outcome, which goes
 * through liveness_of into the record and out as an event.
 *
 * What this file must never do: take a session id from anything but a 2xx
 * answer to initialize; send MCP-Protocol-Version on initialize; call the
 * multi interface from inside a libcurl callback (transfers are stopped by
 * returning non-zero from the message callback, and follow-up work is
 * scheduled on the kick timer); read a clock other than libev's.
 */
#include "engine/server.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/child.h"
#include "engine/http.h"
#include "engine/jsonrpc.h"
#include "util/clock.h"
#include "util/str.h"
#include "util/xmalloc.h"

#define SERVER_MAX_PAGES        1000    /* a cursor that never ends */
#define SERVER_MAX_TOOLS        100000
#define SERVER_BACKOFF_BASE_S   1.0
#define SERVER_BACKOFF_CAP_S    60.0
#define SERVER_STREAM_RECONNECTS_PER_MIN 10
#define SERVER_STREAM_IDLE_MIN_S 60.0
#define SERVER_STDERR_LINES     200
#define SERVER_PING_SLOT_S      0.25    /* pings due together share one */
#define SERVER_MAX_CAPS         16
#define SERVER_EOF_GRACE_S      0.25    /* wait this long after stdout EOF
                                           for the exit status */

enum server_op {
    OP_INITIALIZE,
    OP_INITIALIZED,
    OP_LIST,
    OP_PING,
    OP_STREAM,
    OP_NOTIFY,          /* fire-and-forget: cancelled, answers to server */
    OP_DELETE,          /* an ending's DELETE */
    OP_DISCOVER,        /* 2026-07-28: the dial's server/discover */
    OP_LISTEN,          /* 2026-07-28: subscriptions/listen */
    OP_SSE,             /* 2024-11-05: the GET stream carrying answers */
};

struct server_ending_run;

/* One HTTP request in flight. */
struct server_xch {
    struct server      *s;
    struct server_xch  *next;
    enum server_op      op;
    int64_t             id;             /* -1 for notifications */
    struct http_xfer   *xfer;
    ev_timer            timer;          /* per-request timeout / idle */
    ev_tstamp           started;
    bool                carried_session;
    bool                in_dial;
    struct jsonrpc_msg *answer;         /* the response with our id */
    bool                stream_open;    /* OP_STREAM: 2xx headers seen */
    /* Outlives the session it was sent in: an initialize left to settle
     * after its dial was abandoned, or an ending's DELETE. */
    bool                detached;
    struct server_ending_run *ending;   /* OP_DELETE */
    bool                dead;           /* stdio: the child was gone */
    const char         *method;         /* JSON-RPC method (static) */
    bool                posted;         /* HTTP+SSE: POST accepted, the
                                           answer comes on the stream */
    bool                sse_answered;   /* HTTP+SSE: answer arrived */
    bool                doomed;         /* to be failed by fail_all */
    bool                counted;        /* in the server's busy count */
    char               *delete_id;      /* OP_DELETE / orphan: the id */
};

/* An ending in progress or done; `pub` is what getters hand out. */
struct server_ending_run {
    struct ending       pub;
    struct server      *s;
    ev_timer            deadline;
    ev_tstamp           started;
    struct server_xch  *del;            /* the DELETE in flight, or NULL */
    bool                redial;         /* dial again once settled */
    bool                in_use;
    bool                counted;        /* in the server's busy count */
    int                 stage;          /* stdio: 0 stdin closed, 1 TERM,
                                           2 KILL, 3 deadline */
};

struct server {
    const struct server_env    *env;
    const struct config_server *decl;
    enum server_state           state;
    char                       *target;

    /* the era (DESIGN.md section 6): what the server turned out to speak,
     * remembered for this server's endpoint or process until it stops
     * working */
    enum server_era             era;
    bool                        probe_retried;
    char                       *cache_scope;    /* discover's cacheScope */
    double                      list_ttl_ms;    /* -1: no hint */
    ev_tstamp                   listed_at;
    unsigned long               listen_drops;
    char                       *sse_endpoint;   /* 2024-11-05 POST URL */
    bool                        sse_tried;
    struct failure_evidence     sse_fallback_ev;    /* initialize's failure */
    char                        sse_fallback_detail[256];

    /* the session */
    char                       *session_id;
    char                       *protocol_version;
    char                       *peer_name;
    char                       *peer_version;
    bool                        has_tools_cap;
    bool                        tools_list_changed;
    int64_t                     next_id;

    /* the dial */
    ev_tstamp                   dial_started;
    ev_timer                    open_timer;
    bool                        dialed_once;
    bool                        redial_after_expiry;
    bool                        redialed_for_400;
    char                       *caps[SERVER_MAX_CAPS];
    size_t                      ncaps;
    char                       *test_id;        /* test hook only */
    void                       *data;           /* the owner's */
    char                       *log_name;       /* sanitized name */
    size_t                      index;          /* in the fleet */
    unsigned                    busy;           /* unsettled endings and
                                                   abandoned dials */
    unsigned                    failed_dials;   /* in a row, for backoff */
    long                        retry_after_s;

    /* listing (the dial's or a re-list) */
    char                      **tool_names;
    long                        ntools;         /* -1: never listed */
    char                      **list_acc;       /* pages so far */
    long                        list_n;
    int                         list_pages;
    bool                        list_in_dial;
    ev_tstamp                   list_started;
    bool                        relist_wanted;

    /* the GET stream */
    bool                        stream_none;    /* 405: the server has none */
    char                       *last_event_id;
    int64_t                     stream_retry_ms;
    ev_tstamp                   stream_window;
    unsigned                    stream_reconnects;
    ev_timer                    stream_timer;

    /* timers */
    ev_timer                    tick;           /* next ping or next dial */
    ev_timer                    kick;           /* deferred work */

    struct server_xch          *xchs;

    /* endings: a ring, newest last */
    struct server_ending_run   *endings;        /* SERVER_ENDINGS, on the
                                                   first ending: most
                                                   servers never have one */
    size_t                      end_start, end_len;
    struct server_ending_run   *ending;         /* the session's, if any */

    /* stdio */
    struct child               *child;
    bool                        child_gone;     /* exited, or stdout shut */
    bool                        child_reaped;
    int                         exit_status;    /* waitpid status */
    bool                        has_exit;
    ev_timer                    eof_timer;
    ev_timer                    reap_kick;
    char                      **stderr_ring;    /* SERVER_STDERR_LINES, on
                                                   the first line (stdio) */
    size_t                      err_start, err_len;
    unsigned long               stray_lines;

    /* record */
    struct liveness             liveness;
    unsigned long               streak;
    struct failure              last_failure;
    bool                        has_failure;
    const char                 *last_failure_op;
    double                      rtt_ms;
    bool                        last_ping_ok;
    bool                        pinged;
    unsigned long               pings_done;
    unsigned long               expiries;
    unsigned long               dials;
    struct server_exchange      history[SERVER_HISTORY];
    size_t                      hist_start, hist_len;
};

static void server_dial(struct server *s);
static void server_send_list(struct server *s, const char *cursor);
static void server_stream_open(struct server *s);
static void server_schedule_dial(struct server *s);
static void server_kick(struct server *s);

static const char *const server_state_names[SERVER__COUNT] = {
    [SERVER_IDLE] = "idle",
    [SERVER_DIALING] = "dialing",
    [SERVER_READY] = "ready",
    [SERVER_BACKOFF] = "backoff",
    [SERVER_INVALID] = "invalid",
    [SERVER_UNSUPPORTED] = "unsupported",
    [SERVER_ENDING] = "ending",
    [SERVER_STOPPED] = "stopped",
};

const char *
server_state_name(enum server_state st)
{
    if ((unsigned)st >= SERVER__COUNT)
        return "?";
    return server_state_names[st];
}

static bool
server_version_spoken(const char *v)
{
    return v != NULL && (strcmp(v, "2025-11-25") == 0 ||
        strcmp(v, "2025-06-18") == 0 || strcmp(v, "2025-03-26") == 0);
}

static ev_tstamp
server_now(const struct server *s)
{
    ev_now_update(s->env->loop);
    return ev_now(s->env->loop);
}

static long
server_timeout_ms(const struct server *s)
{
    return s->env->timeout_ms > 0 ? s->env->timeout_ms : s->decl->timeout_ms;
}

static long
server_open_deadline_ms(const struct server *s)
{
    return s->env->open_deadline_ms > 0 ? s->env->open_deadline_ms :
        s->decl->open_deadline_ms;
}

static void
server_emit(struct server *s, struct event *e)
{
    e->server = s;
    if (e->ts == 0)
        e->ts = clock_wall_ms();
    if (s->env->emit != NULL)
        s->env->emit(s->env->emit_arg, e);
}

static void
server_set_state(struct server *s, enum server_state st)
{
    struct event e = { .type = EVENT_STATE };

    if (s->state == st)
        return;
    s->state = st;
    server_emit(s, &e);
}

static void
server_log(struct server *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The debug log: methods, statuses, timings, kinds; never a header value,
 * a session id or an expanded secret. */
static void
server_log(struct server *s, const char *fmt, ...)
{
    va_list ap;
    char    ts[40];

    if (s->env->log == NULL)
        return;
    clock_format_iso(clock_wall_ms(), ts, sizeof(ts));
    fprintf(s->env->log, "%s %s: ", ts, s->log_name);
    va_start(ap, fmt);
    vfprintf(s->env->log, fmt, ap);
    va_end(ap);
    fputc('\n', s->env->log);
    fflush(s->env->log);
}

/*
 * Every exchange ends here, exactly once: the outcome goes into the history,
 * through liveness_of into the record, and out as events.
 */
static void
server_outcome(struct server *s, const char *op, const struct failure *f,
    double ms)
{
    struct outcome         o = f == NULL ? outcome_completed() :
        outcome_failed(f->kind);
    struct liveness        l = liveness_of(o, clock_wall_ms());
    struct server_exchange *h;
    struct event           e = { .type = EVENT_EXCHANGE };
    bool                   changed;

    if (s->hist_len < SERVER_HISTORY) {
        h = &s->history[(s->hist_start + s->hist_len) % SERVER_HISTORY];
        s->hist_len++;
    } else {
        h = &s->history[s->hist_start];
        s->hist_start = (s->hist_start + 1) % SERVER_HISTORY;
    }
    h->ts = l.present ? l.observed_at : clock_wall_ms();
    h->op = op;
    h->completed = f == NULL;
    h->kind = f != NULL ? f->kind : FAILURE_UNKNOWN;
    h->delivered = f != NULL ? f->delivered : DELIVERED_YES;
    h->http_status = f != NULL ? f->http_status : 0;
    h->ms = ms;

    if (f != NULL) {
        s->last_failure = *f;
        s->has_failure = true;
        s->last_failure_op = op;
        server_log(s, "%s failed: %s delivered=%s status=%ld site=%s "
            "%.1f ms: %s", op, failure_kind_name(f->kind),
            delivered_name(f->delivered), f->http_status,
            failure_site_name(f->site), ms, f->detail);
    } else {
        server_log(s, "%s completed in %.1f ms", op, ms);
    }

    e.op = op;
    e.completed = f == NULL;
    e.failure = f;
    e.ms = ms;
    server_emit(s, &e);

    if (!l.present)
        return;
    changed = !s->liveness.present || s->liveness.state != l.state ||
        s->liveness.has_error_code != l.has_error_code ||
        (l.has_error_code && s->liveness.error_code != l.error_code);
    if (s->liveness.present && s->liveness.state == l.state)
        s->streak++;
    else
        s->streak = 1;
    s->liveness = l;
    if (changed) {
        struct event le = { .type = EVENT_LIVENESS, .liveness = &s->liveness };

        server_emit(s, &le);
    }
}

/* Build and record a failure from evidence. */
static void
server_fail(struct server *s, const char *op, struct failure_evidence *ev,
    enum failure_site site, double ms, const char *detail)
{
    struct failure f;

    failure_make(&f, ev, site, detail);
    server_outcome(s, op, &f, ms);
}

/* Count work that keeps the server "busy" (an unsettled ending, an
 * abandoned initialize), here and in the fleet's total, so that asking
 * costs nothing at 10,000 servers. */
static void
server_busy(struct server *s, bool *counted, bool on)
{
    if (*counted == on)
        return;
    *counted = on;
    if (on) {
        s->busy++;
        if (s->env->busy_total != NULL)
            (*s->env->busy_total)++;
    } else {
        s->busy--;
        if (s->env->busy_total != NULL)
            (*s->env->busy_total)--;
    }
}

/* --- exchanges in flight ----------------------------------------------- */

static struct server_xch *
server_xch_new(struct server *s, enum server_op op, int64_t id)
{
    struct server_xch *x = xcalloc(1, sizeof(*x));

    x->s = s;
    x->op = op;
    x->id = id;
    x->started = server_now(s);
    x->next = s->xchs;
    s->xchs = x;
    return x;
}

/* Unlink and free; stops its timer; aborts the transfer if still running. */
static void
server_xch_free(struct server_xch *x, struct failure_evidence *ev_out)
{
    struct server      *s = x->s;
    struct server_xch **pp;

    for (pp = &s->xchs; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == x) {
            *pp = x->next;
            break;
        }
    }
    ev_timer_stop(s->env->loop, &x->timer);
    server_busy(s, &x->counted, false);
    if (x->xfer != NULL)
        http_xfer_abort(x->xfer, ev_out);
    jsonrpc_free(x->answer);
    if (x->delete_id != NULL) {
        /* A session id is a credential: wipe it. */
        memset(x->delete_id, 0, strlen(x->delete_id));
        free(x->delete_id);
    }
    free(x);
}

static struct server_xch *
server_find_op(const struct server *s, enum server_op op)
{
    for (struct server_xch *x = s->xchs; x != NULL; x = x->next) {
        if (x->op == op)
            return x;
    }
    return NULL;
}

static double
server_elapsed_ms(const struct server *s, ev_tstamp since)
{
    double ms = (server_now(s) - since) * 1000.0;

    return ms < 0 ? 0 : ms;
}

static const char *
server_op_name(enum server_op op)
{
    switch (op) {
    case OP_INITIALIZE:
        return "initialize";
    case OP_INITIALIZED:
        return "notifications/initialized";
    case OP_LIST:
        return "tools/list";
    case OP_PING:
        return "ping";
    case OP_STREAM:
        return "stream";
    case OP_DELETE:
        return "delete";
    case OP_DISCOVER:
        return "server/discover";
    case OP_LISTEN:
        return "subscriptions/listen";
    case OP_SSE:
        return "sse stream";
    default:
        return "notification";
    }
}

/* Answer a request the server sent us on a stream: ping gets {}, anything
 * else "method not found" (a monitor declares no client capabilities). */
static void server_answer_peer(struct server *s, const struct jsonrpc_msg *m);

/* Handle a notification or request from the server. Runs inside a libcurl
 * callback: only set flags and kick. */
static void
server_peer_message(struct server *s, struct jsonrpc_msg *m)
{
    const char *method = jsonrpc_method(m);

    if (method == NULL)
        return;
    if (jsonrpc_kind(m) == JSONRPC_REQUEST) {
        server_answer_peer(s, m);
        return;
    }
    if (strcmp(method, "notifications/tools/list_changed") == 0) {
        server_log(s, "notice: tools list changed");
        s->relist_wanted = true;
        server_kick(s);
    }
}

static int server_sse_event(struct server *s, const char *type,
    const char *data, size_t len);

/* http_callbacks.on_message: one SSE event. Non-zero stops the transfer
 * (we have our answer). */
static int
server_xfer_message_cb(void *arg, struct http_xfer *hx, const char *type,
    const char *data, size_t len)
{
    struct server_xch  *x = arg;
    struct jsonrpc_msg *m;

    (void)hx;
    if (x->op == OP_SSE)
        return server_sse_event(x->s, type, data, len);
    if (strcmp(type, "message") != 0 || len == 0)
        return 0;
    m = jsonrpc_parse(data, len, NULL);
    if (m == NULL)
        return 0;
    if (x->id >= 0 && (jsonrpc_kind(m) == JSONRPC_RESULT ||
        jsonrpc_kind(m) == JSONRPC_ERROR) && jsonrpc_id_is(m, x->id)) {
        jsonrpc_free(x->answer);
        x->answer = m;
        return 1;
    }
    server_peer_message(x->s, m);
    jsonrpc_free(m);
    return 0;
}

/* http_callbacks.on_headers: for the GET stream, an open stream is the
 * exchange's completed outcome. */
static int
server_xfer_headers_cb(void *arg, struct http_xfer *hx, long status,
    const char *content_type)
{
    struct server_xch *x = arg;

    (void)hx;
    (void)content_type;
    if (x->op == OP_SSE && status >= 200 && status < 300) {
        x->stream_open = true;
        return 0;
    }
    if ((x->op == OP_STREAM || x->op == OP_LISTEN) && status >= 200 &&
        status < 300) {
        x->stream_open = true;
        x->s->stream_reconnects = 0;
        server_kick(x->s);
    }
    return 0;
}

static void server_xfer_done_cb(void *arg, struct http_xfer *hx,
    const struct http_result *r);

static const struct http_callbacks server_http_cb = {
    .on_headers = server_xfer_headers_cb,
    .on_message = server_xfer_message_cb,
    .on_done = server_xfer_done_cb,
};

static void server_xch_timeout_cb(struct ev_loop *loop, ev_timer *w,
    int revents);

static bool server_send_stdio(struct server *s, struct server_xch *x,
    const char *body, size_t len, long timeout_ms);

/* Does this exchange go out in the 2026-07-28 shape? */
static bool
server_speaks_modern(const struct server *s, const struct server_xch *x)
{
    if (x->op == OP_DISCOVER || x->op == OP_LISTEN)
        return true;
    if (x->op == OP_NOTIFY)
        return false;
    return s->era == ERA_MODERN && x->op != OP_INITIALIZE &&
        x->op != OP_INITIALIZED && x->op != OP_DELETE;
}

/* The name of the liveness exchange: ping, or server/discover when the
 * revision has no ping. */
static const char *
server_ping_op(const struct server *s)
{
    return s->era == ERA_MODERN ? "discover" : "ping";
}

/* Start one request for x (an HTTP transfer, or a line to a child).
 * Returns false (x freed, failure recorded by the caller) when it cannot
 * start. */
static bool
server_post(struct server *s, struct server_xch *x, enum http_method method,
    const char *body, size_t body_len, long timeout_ms, char **cause)
{
    struct http_request rq = {
        .method = method,
        .url = s->decl->url,
        .body = body,
        .body_len = body_len,
        .headers = s->decl->headers,
        .nheaders = s->decl->nheaders,
        .max_bytes = s->decl->max_message_bytes,
        .ca_file = s->decl->ca_file,
        .tls_insecure = s->decl->tls_insecure,
        .maybe_resent = s->pings_done > 0 || s->dialed_once,
        .pool_key = s->index,
    };

    if (s->decl->transport == CONFIG_STDIO)
        return server_send_stdio(s, x, body, body_len, timeout_ms);
    if (s->era == ERA_LEGACY_SSE && x->op != OP_SSE && x->op != OP_DELETE &&
        s->sse_endpoint != NULL)
        rq.url = s->sse_endpoint;
    if (x->op == OP_SSE) {
        /* The 2024-11-05 stream: a plain GET, no MCP headers. */
    } else if (server_speaks_modern(s, x)) {
        /* 2026-07-28: no session; the version and the method ride on
         * every POST as headers too (basic/transports/streamable-http). */
        rq.protocol_version = MCP_PROTOCOL_MODERN;
        rq.mcp_method = x->method;
        rq.no_cache = x->op == OP_PING || x->op == OP_DISCOVER;
    } else if (x->op != OP_INITIALIZE) {
        rq.session_id = s->session_id;
        rq.protocol_version = s->protocol_version;
        x->carried_session = s->session_id != NULL;
    }
    if (x->op == OP_STREAM)
        rq.last_event_id = s->last_event_id;
    x->xfer = http_start(s->env->curl, &rq, &server_http_cb, x, cause);
    if (x->xfer == NULL)
        return false;
    if (timeout_ms > 0) {
        ev_timer_init(&x->timer, server_xch_timeout_cb, timeout_ms / 1000.0,
            0.);
        x->timer.data = x;
        ev_timer_start(s->env->loop, &x->timer);
    }
    server_log(s, "%s %s id=%lld", http_method_name(method),
        server_op_name(x->op), (long long)x->id);
    return true;
}

/* Fire-and-forget POST of a notification or an answer. */
static void
server_notify(struct server *s, char *body, size_t len)
{
    struct server_xch *x = server_xch_new(s, OP_NOTIFY, -1);
    char              *cause = NULL;

    if (!server_post(s, x, HTTP_POST, body, len, server_timeout_ms(s),
        &cause)) {
        server_log(s, "notification not sent: %s", cause);
        free(cause);
        server_xch_free(x, NULL);
    }
    free(body);
}

static void
server_answer_peer(struct server *s, const struct jsonrpc_msg *m)
{
    (void)m;
    /* Answering needs the request's id verbatim; a monitor does not take
     * server requests, so it only logs them. Servers time them out. */
    server_log(s, "server sent a request (%s); mcptop takes none",
        jsonrpc_method(m));
}

/* --- ending the dial ---------------------------------------------------- */

static void
server_free_tools(char **names, long n)
{
    for (long i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

static void
server_drop_session(struct server *s)
{
    free(s->session_id);
    s->session_id = NULL;
    free(s->last_event_id);
    s->last_event_id = NULL;
    s->stream_none = false;
    ev_timer_stop(s->env->loop, &s->stream_timer);
    /* Everything that belonged to the session goes with it. */
    for (struct server_xch *x = s->xchs, *n; x != NULL; x = n) {
        n = x->next;
        if (!x->detached)
            server_xch_free(x, NULL);
    }
}

static void
server_schedule_ping(struct server *s)
{
    /* ±10% jitter: a fleet dialed together does not ping in one burst
     * every interval, and the 2026-07-28 caching rules ask it of anyone
     * polling server/discover. The due time is then rounded up to a
     * 250 ms grid, so that the servers due in the same slot share one
     * wake-up (pings one by one cost twice the CPU of pings in batches;
     * bench/ANALYSIS.md). */
    double    iv = s->decl->ping_interval_ms / 1000.0 *
        (0.9 + 0.2 * ((double)rand() / RAND_MAX));
    ev_tstamp now = ev_now(s->env->loop);
    double    slot = SERVER_PING_SLOT_S;

    ev_timer_stop(s->env->loop, &s->tick);
    if (s->env->no_pings || s->state != SERVER_READY)
        return;
    if (iv > 4 * slot)
        iv = ceil((now + iv) / slot) * slot - now;
    ev_timer_set(&s->tick, iv, 0.);
    ev_timer_start(s->env->loop, &s->tick);
}

/* The dial failed: record its one outcome and plan the next dial. */
static void
server_dial_failed(struct server *s, struct failure_evidence *ev,
    const char *detail)
{
    double ms = server_elapsed_ms(s, s->dial_started);

    ev_timer_stop(s->env->loop, &s->open_timer);
    server_drop_session(s);
    server_free_tools(s->list_acc, s->list_n);
    s->list_acc = NULL;
    s->list_n = 0;
    s->dialed_once = true;
    s->failed_dials++;
    /* A child whose dial failed is not kept: the next dial spawns anew. */
    if (s->child != NULL && !child_exited(s->child))
        child_signal(s->child, SIGKILL);
    s->last_ping_ok = false;
    server_fail(s, "dial", ev, SITE_CONNECT, ms, detail);
    if (s->state == SERVER_STOPPED)
        return;
    if (s->env->no_redial) {
        server_set_state(s, SERVER_BACKOFF);
        return;
    }
    server_set_state(s, SERVER_BACKOFF);
    server_schedule_dial(s);
}

static void server_listen(struct server *s);

static void
server_dial_completed(struct server *s)
{
    double ms = server_elapsed_ms(s, s->dial_started);

    ev_timer_stop(s->env->loop, &s->open_timer);
    s->dialed_once = true;
    s->failed_dials = 0;
    s->retry_after_s = -1;
    s->rtt_ms = ms;
    s->last_ping_ok = true;
    server_set_state(s, SERVER_READY);
    server_outcome(s, "dial", NULL, ms);
    server_schedule_ping(s);
    if (s->env->no_streams || !s->tools_list_changed)
        return;
    if (s->era == ERA_MODERN)
        server_listen(s);
    else if (!s->stream_none && s->decl->transport == CONFIG_HTTP)
        server_stream_open(s);
}

/* ev_timer: the open deadline passed. */
static void
server_open_timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct server          *s = w->data;
    struct failure_evidence ev = { .timer = TIMER_OPEN };
    struct server_xch      *x;
    char                    detail[128];

    (void)loop;
    (void)revents;
    /* The evidence of how far the step in flight got. */
    for (x = s->xchs; x != NULL; x = x->next) {
        if (x->in_dial)
            break;
    }
    snprintf(detail, sizeof(detail), "open deadline %ld ms passed%s%s",
        server_open_deadline_ms(s), x != NULL ? " during " : "",
        x != NULL ? server_op_name(x->op) : "");
    if (x != NULL && x->op == OP_INITIALIZE && x->xfer != NULL) {
        /* The operator is answered now, but the initialize is left to
         * settle within its own timeout: a session id it brings late is
         * ended as half-open (DESIGN.md section 5). */
        http_xfer_peek(x->xfer, &ev);
        x->detached = true;
        x->in_dial = false;
        server_busy(s, &x->counted, true);
        ev_timer_stop(s->env->loop, &x->timer);
        ev_timer_set(&x->timer, server_timeout_ms(s) / 1000.0, 0.);
        ev_timer_start(s->env->loop, &x->timer);
    } else if (x != NULL) {
        server_xch_free(x, &ev);
    }
    ev.timer = TIMER_OPEN;
    ev.net = NET_OK;
    server_dial_failed(s, &ev, detail);
}

static void server_fallback_legacy(struct server *s, const char *why);

/* ev_timer: a request's own timeout. */
static void
server_xch_timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct server_xch      *x = w->data;
    struct server          *s = x->s;
    struct failure_evidence ev = { 0 };
    enum server_op          op = x->op;
    int64_t                 id = x->id;
    double                  ms = server_elapsed_ms(s, x->started);
    char                    detail[128];

    (void)loop;
    (void)revents;
    if (x->detached) {
        server_log(s, "abandoned %s got no answer within %ld ms",
            server_op_name(op), server_timeout_ms(s));
        server_xch_free(x, NULL);
        return;
    }
    server_xch_free(x, &ev);
    ev.timer = TIMER_REQUEST;
    ev.net = NET_OK;
    snprintf(detail, sizeof(detail), "no answer to %s within %ld ms "
        "(request timeout)", server_op_name(op), server_timeout_ms(s));
    /* Best effort, never for initialize (MCP basic/utilities/cancellation). */
    if (id >= 0 && op != OP_INITIALIZE && (s->session_id != NULL ||
        (s->decl->transport == CONFIG_STDIO && s->era == ERA_MODERN))) {
        size_t len;
        char  *body = jsonrpc_build_cancelled(id, "timeout", &len);

        server_notify(s, body, len);
    }
    switch (op) {
    case OP_DISCOVER:
        if (s->decl->transport == CONFIG_STDIO &&
            s->decl->era == CONFIG_ERA_AUTO) {
            /* stdio: no answer to the probe means a legacy server. */
            server_fallback_legacy(s, "no answer to server/discover");
            break;
        }
        server_dial_failed(s, &ev, detail);
        break;
    case OP_INITIALIZE:
    case OP_INITIALIZED:
        server_dial_failed(s, &ev, detail);
        break;
    case OP_LIST:
        if (s->list_in_dial) {
            server_dial_failed(s, &ev, detail);
        } else {
            server_free_tools(s->list_acc, s->list_n);
            s->list_acc = NULL;
            s->list_n = 0;
            server_fail(s, "tools/list", &ev, SITE_REQUEST, ms, detail);
        }
        break;
    case OP_PING:
        s->last_ping_ok = false;
        s->pings_done++;
        server_fail(s, server_ping_op(s), &ev, SITE_REQUEST, ms, detail);
        server_schedule_ping(s);
        break;
    default:
        break;
    }
}

/* --- reading answers ---------------------------------------------------- */

/* A JSON body: parse it and keep the answer with our id, handing anything
 * else (notifications) on. */
static void
server_read_json_body(struct server_xch *x, const struct http_result *r,
    struct failure_evidence *ev, char *detail, size_t dsz)
{
    char               *cause = NULL;
    struct jsonrpc_msg *m;

    if (r->body_len == 0) {
        ev->no_matching_response = true;
        snprintf(detail, dsz, "empty %ld answer", r->status);
        return;
    }
    m = jsonrpc_parse(r->body, r->body_len, &cause);
    if (m == NULL) {
        ev->body_unparsable = true;
        snprintf(detail, dsz, "answer body is %s", cause);
        free(cause);
        return;
    }
    if ((jsonrpc_kind(m) == JSONRPC_RESULT ||
        jsonrpc_kind(m) == JSONRPC_ERROR) && jsonrpc_id_is(m, x->id)) {
        x->answer = m;
        return;
    }
    if (jsonrpc_kind(m) == JSONRPC_ERROR && jsonrpc_id_is_null(m)) {
        ev->rpc_error = true;
        ev->rpc_error_id_null = true;
        ev->rpc_error_code = jsonrpc_error_code(m);
    }
    ev->no_matching_response = true;
    snprintf(detail, dsz, "no JSON-RPC response with id %lld",
        (long long)x->id);
    jsonrpc_free(m);
}

/* Explain a non-2xx answer: the status, an auth challenge, a JSON-RPC
 * error body (its code and sanitized message), supported versions. */
static void
server_status_detail(const struct http_result *r, struct failure_evidence *ev,
    int64_t id, char *detail, size_t dsz)
{
    struct jsonrpc_msg *m = NULL;
    char                msg[96] = "";
    char                versions[96] = "";
    size_t              off = 0;

    if (r->body_len > 0 && r->ev.content_json)
        m = jsonrpc_parse(r->body, r->body_len, NULL);
    if (m != NULL && jsonrpc_kind(m) == JSONRPC_ERROR) {
        const char *em = jsonrpc_error_message(m);
        long        n = jsonrpc_array_len(m, "error.data.supported");

        ev->rpc_error = true;
        ev->rpc_error_code = jsonrpc_error_code(m);
        ev->rpc_error_id_null = !(id >= 0 && jsonrpc_id_is(m, id));
        if (em != NULL)
            str_sanitize(msg, sizeof(msg), em, strlen(em));
        for (long i = 0; i < n && i < 6; i++) {
            const char *v = jsonrpc_array_string(m, "error.data.supported",
                i, NULL);
            char        clean[24];

            if (v == NULL)
                continue;
            str_sanitize(clean, sizeof(clean), v, strlen(v));
            off += (size_t)snprintf(versions + off, sizeof(versions) - off,
                "%s%s", off ? ", " : "", clean);
            if (off >= sizeof(versions))
                break;
        }
    }
    off = (size_t)snprintf(detail, dsz, "HTTP %ld", r->status);
    if ((r->status == 401 || r->status == 403) && off < dsz)
        off += (size_t)snprintf(detail + off, dsz - off,
            r->auth_scheme != NULL ? "; auth needed (%s)" : "; auth needed%s",
            r->auth_scheme != NULL ? r->auth_scheme : "");
    if (ev->rpc_error && off < dsz)
        off += (size_t)snprintf(detail + off, dsz - off,
            "; JSON-RPC error %ld%s%s", ev->rpc_error_code,
            msg[0] ? ": " : "", msg);
    if (versions[0] != '\0' && off < dsz)
        off += (size_t)snprintf(detail + off, dsz - off,
            "; server supports %s", versions);
    if (r->retry_after_s >= 0 && off < dsz)
        snprintf(detail + off, dsz - off, "; Retry-After %ld s",
            r->retry_after_s);
    if (!ev->rpc_error && r->body_len > 0 && off < dsz &&
        r->content_type != NULL && strncmp(r->content_type, "text/html",
        9) == 0)
        snprintf(detail + off, dsz - off, "; an HTML page");
    jsonrpc_free(m);
}

/* Describe a transport failure from its evidence. */
static void
server_net_detail(const struct http_result *r, char *detail, size_t dsz)
{
    static const char *const phases[] = {
        [PHASE_NONE] = "start", [PHASE_RESOLVE] = "resolve",
        [PHASE_CONNECT] = "connect", [PHASE_TLS] = "tls",
        [PHASE_SENT] = "request sent", [PHASE_RESPONSE] = "response",
    };
    char err[120] = "";

    if (r->error_text != NULL)
        str_sanitize(err, sizeof(err), r->error_text, strlen(r->error_text));
    snprintf(detail, dsz, "%s%s(phase %s, errno %d, %lld/%lld body bytes "
        "sent%s)", err, err[0] ? " " : "", phases[r->ev.phase],
        r->ev.os_errno, (long long)r->ev.body_bytes_sent,
        (long long)r->ev.body_bytes_expected,
        r->ev.resent ? ", may have been re-sent" : "");
}

/* What the 2026-07-28 error codes mean (basic/index, error codes). */
static const char *
server_rpc_code_meaning(long code)
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
 * Turn a finished POST into evidence: NULL failure when x->answer holds a
 * result for our id. Returns true when the exchange failed (ev/detail set).
 */
static bool
server_judge(struct server_xch *x, const struct http_result *r,
    struct failure_evidence *ev, char *detail, size_t dsz)
{
    *ev = r->ev;
    detail[0] = '\0';
    if (x->answer != NULL && jsonrpc_kind(x->answer) == JSONRPC_RESULT) {
        const char *rt = jsonrpc_get_string(x->answer, "result.resultType");
        char        clean[32];

        /* Absent means complete (a legacy server). */
        if (rt == NULL || strcmp(rt, "complete") == 0)
            return false;
        str_sanitize(clean, sizeof(clean), rt, strlen(rt));
        ev->no_matching_response = true;
        snprintf(detail, dsz, "result with resultType \"%s\" where a "
            "complete result was expected", clean);
        return true;
    }
    if (x->answer != NULL) {
        /* A JSON-RPC error with our id: the server answered. */
        const char *em = jsonrpc_error_message(x->answer);
        char        msg[160] = "";

        if (em != NULL)
            str_sanitize(msg, sizeof(msg), em, strlen(em));
        ev->rpc_error = true;
        ev->rpc_error_code = jsonrpc_error_code(x->answer);
        snprintf(detail, dsz, "JSON-RPC error %ld%s%s%s%s",
            ev->rpc_error_code, server_rpc_code_meaning(ev->rpc_error_code),
            msg[0] ? ": " : "", msg,
            r->status >= 300 ? " (behind a non-2xx status)" : "");
        /* The status rides along only when it was not a 2xx. */
        ev->http_status = (r->status < 200 || r->status >= 300) ?
            r->status : 0;
        return true;
    }
    if (ev->child_closed || ev->peer_known_dead || ev->spawn_error) {
        snprintf(detail, dsz, "%s", r->error_text != NULL ?
            r->error_text : "the child closed the connection");
        return true;
    }
    if (!r->completed && !r->stopped && r->ev.net != NET_OK) {
        server_net_detail(r, detail, dsz);
        return true;
    }
    if (r->status < 200 || r->status >= 300) {
        server_status_detail(r, ev, x->id, detail, dsz);
        return true;
    }
    if (ev->too_large) {
        snprintf(detail, dsz, "answer exceeds the message size limit "
            "(%zu bytes)", x->s->decl->max_message_bytes);
        return true;
    }
    if (ev->content_sse) {
        if (ev->sse_no_lines)
            snprintf(detail, dsz, "text/event-stream body with no SSE "
                "line in it");
        else {
            ev->stream_ended = true;
            snprintf(detail, dsz, "SSE stream ended before the answer "
                "to id %lld", (long long)x->id);
        }
        return true;
    }
    if (ev->content_json) {
        server_read_json_body(x, r, ev, detail, dsz);
        if (x->answer == NULL)
            return true;
        return server_judge(x, r, ev, detail, dsz);
    }
    {
        char ct[48] = "none";

        if (r->content_type != NULL)
            str_sanitize(ct, sizeof(ct), r->content_type,
                strlen(r->content_type));
        snprintf(detail, dsz, "HTTP %ld with content type %s, not an MCP "
            "answer", r->status, ct);
    }
    return true;
}

/* --- the steps of the dial --------------------------------------------- */

static void server_take_capabilities(struct server *s,
    const struct jsonrpc_msg *m);

static void
server_take_initialize(struct server *s, const struct jsonrpc_msg *m)
{
    server_take_capabilities(s, m);
    const char *v;
    bool        b = false;

    free(s->protocol_version);
    s->protocol_version = str_dup(jsonrpc_get_string(m,
        "result.protocolVersion"));
    free(s->peer_name);
    v = jsonrpc_get_string(m, "result.serverInfo.name");
    s->peer_name = v != NULL ? str_sanitized(v) : NULL;
    free(s->peer_version);
    v = jsonrpc_get_string(m, "result.serverInfo.version");
    s->peer_version = v != NULL ? str_sanitized(v) : NULL;
    s->has_tools_cap = jsonrpc_has(m, "result.capabilities.tools");
    s->tools_list_changed = jsonrpc_get_bool(m,
        "result.capabilities.tools.listChanged", &b) && b;
}

/* Send one step of the dial (body taken, may be NULL); a step that cannot
 * even start fails the dial. true when it went out. */
static bool
server_dial_step(struct server *s, struct server_xch *x,
    enum http_method method, char *body, size_t len, long timeout_ms)
{
    char *cause = NULL;
    bool  sent;

    x->in_dial = true;
    sent = server_post(s, x, method, body, len, timeout_ms, &cause);
    free(body);
    if (!sent) {
        struct failure_evidence ev = { .net = NET_OTHER };

        server_xch_free(x, NULL);
        server_dial_failed(s, &ev, cause);
        free(cause);
    }
    return sent;
}

static void
server_send_initialized(struct server *s)
{
    struct server_xch *x = server_xch_new(s, OP_INITIALIZED, -1);
    size_t             len;
    char              *body = jsonrpc_build_notification(
        "notifications/initialized", &len);

    server_dial_step(s, x, HTTP_POST, body, len, server_timeout_ms(s));
}

static void server_half_open(struct server *s, struct server_xch *x,
    const struct http_result *r);
static void server_sse_open(struct server *s);

static void
server_on_initialize(struct server *s, struct server_xch *x,
    const struct http_result *r)
{
    struct failure_evidence ev;
    char                    detail[256];
    const char             *v;

    if (x->detached) {
        server_half_open(s, x, r);
        return;
    }
    if (server_judge(x, r, &ev, detail, sizeof(detail))) {
        server_xch_free(x, NULL);
        if (s->decl->transport == CONFIG_HTTP &&
            s->decl->era == CONFIG_ERA_AUTO && s->era != ERA_LEGACY_SSE &&
            !s->sse_tried && (r->status == 400 || r->status == 404 ||
            r->status == 405) && !(ev.rpc_error && !ev.rpc_error_id_null)) {
            /* Neither era's POST works here: try the 2024-11-05 HTTP+SSE
             * transport (GET, then the `endpoint` event). */
            s->sse_tried = true;
            s->sse_fallback_ev = ev;
            memcpy(s->sse_fallback_detail, detail,
                sizeof(s->sse_fallback_detail));
            server_sse_open(s);
            return;
        }
        server_dial_failed(s, &ev, detail);
        return;
    }
    v = jsonrpc_get_string(x->answer, "result.protocolVersion");
    if (!server_version_spoken(v)) {
        char clean[40] = "none";

        if (v != NULL)
            str_sanitize(clean, sizeof(clean), v, strlen(v));
        ev.bad_protocol_version = true;
        snprintf(detail, sizeof(detail), "server chose protocol version "
            "%s; mcptop speaks 2025-11-25, 2025-06-18, 2025-03-26", clean);
        server_xch_free(x, NULL);
        server_dial_failed(s, &ev, detail);
        return;
    }
    server_take_initialize(s, x->answer);
    if (s->era != ERA_LEGACY_SSE)
        s->era = ERA_LEGACY;
    /* Only a 2xx answer to initialize issues a session. */
    free(s->session_id);
    s->session_id = str_dup(r->session_id);
    if (r->session_id_invalid)
        server_log(s, "ignored an Mcp-Session-Id that is not visible ASCII");
    server_xch_free(x, NULL);
    server_send_initialized(s);
}

static void
server_begin_list(struct server *s, bool in_dial)
{
    server_free_tools(s->list_acc, s->list_n);
    s->list_acc = NULL;
    s->list_n = 0;
    s->list_pages = 0;
    s->list_in_dial = in_dial;
    s->list_started = server_now(s);
    server_send_list(s, NULL);
}

static void
server_on_initialized(struct server *s, struct server_xch *x,
    const struct http_result *r)
{
    struct failure_evidence ev = r->ev;
    char                    detail[256];

    if (ev.child_closed) {
        snprintf(detail, sizeof(detail), "%s", r->error_text);
        server_xch_free(x, NULL);
        server_dial_failed(s, &ev, detail);
        return;
    }
    if (r->completed && r->status >= 200 && r->status < 300) {
        server_xch_free(x, NULL);
        if (s->has_tools_cap) {
            server_begin_list(s, true);
        } else {
            server_free_tools(s->tool_names, s->ntools);
            s->tool_names = NULL;
            s->ntools = 0;
            server_dial_completed(s);
        }
        return;
    }
    if (r->ev.net != NET_OK && !r->completed)
        server_net_detail(r, detail, sizeof(detail));
    else
        server_status_detail(r, &ev, -1, detail, sizeof(detail));
    server_xch_free(x, NULL);
    server_dial_failed(s, &ev, detail);
}

static void
server_send_list(struct server *s, const char *cursor)
{
    int64_t            id = s->next_id++;
    struct server_xch *x = server_xch_new(s, OP_LIST, id);
    size_t             len;
    char              *body;
    char              *cause = NULL;

    x->method = "tools/list";
    if (s->era == ERA_MODERN)
        body = jsonrpc_build_modern(id, x->method, MCP_PROTOCOL_MODERN,
            "mcptop", MCPTOP_VERSION, cursor, false, &len);
    else
        body = jsonrpc_build_request(id, "tools/list", cursor, &len);
    x->in_dial = s->list_in_dial;
    if (!server_post(s, x, HTTP_POST, body, len, server_timeout_ms(s),
        &cause)) {
        struct failure_evidence ev = { .net = NET_OTHER };

        server_xch_free(x, NULL);
        if (s->list_in_dial)
            server_dial_failed(s, &ev, cause);
        else
            server_fail(s, "tools/list", &ev, SITE_REQUEST, 0, cause);
        free(cause);
    }
    free(body);
}

/* Listing finished: swap in the new tool set. */
static void
server_list_finished(struct server *s)
{
    s->listed_at = server_now(s);
    long old = s->ntools;
    bool was_dial = s->list_in_dial;
    bool same = old == s->list_n;

    for (long i = 0; same && i < old; i++)
        same = strcmp(s->tool_names[i], s->list_acc[i]) == 0;
    server_free_tools(s->tool_names, s->ntools);
    s->tool_names = s->list_acc;
    s->ntools = s->list_n;
    s->list_acc = NULL;
    s->list_n = 0;
    if (was_dial) {
        server_dial_completed(s);
    } else {
        server_outcome(s, "tools/list", NULL,
            server_elapsed_ms(s, s->list_started));
    }
    if (!same && old >= 0) {
        struct event e = { .type = EVENT_TOOLS_CHANGED, .tools = s->ntools };

        server_emit(s, &e);
    }
}

static void
server_on_list(struct server *s, struct server_xch *x,
    const struct http_result *r)
{
    struct failure_evidence ev;
    char                    detail[256];
    long                    n;
    const char             *cursor;
    char                   *next = NULL;

    if (server_judge(x, r, &ev, detail, sizeof(detail))) {
        bool dial = s->list_in_dial;

        server_xch_free(x, NULL);
        if (dial) {
            server_dial_failed(s, &ev, detail);
        } else {
            server_free_tools(s->list_acc, s->list_n);
            s->list_acc = NULL;
            s->list_n = 0;
            server_fail(s, "tools/list", &ev, SITE_REQUEST,
                server_elapsed_ms(s, s->list_started), detail);
        }
        return;
    }
    n = jsonrpc_array_len(x->answer, "result.tools");
    if (n < 0) {
        struct failure_evidence bad = r->ev;
        bool                    dial = s->list_in_dial;

        bad.no_matching_response = true;
        server_xch_free(x, NULL);
        if (dial)
            server_dial_failed(s, &bad, "tools/list result has no tools "
                "array");
        else
            server_fail(s, "tools/list", &bad, SITE_REQUEST,
                server_elapsed_ms(s, s->list_started),
                "tools/list result has no tools array");
        return;
    }
    for (long i = 0; i < n && s->list_n < SERVER_MAX_TOOLS; i++) {
        const char *name = jsonrpc_array_string(x->answer, "result.tools", i,
            "name");

        s->list_acc = xrealloc(s->list_acc,
            (size_t)(s->list_n + 1) * sizeof(*s->list_acc));
        s->list_acc[s->list_n++] = str_sanitized(name != NULL ? name : "?");
    }
    {
        double ttl;

        /* Each page has its own freshness; the listing is as fresh as its
         * stalest page (2026-07-28 server/utilities/caching). */
        if (jsonrpc_get_number(x->answer, "result.ttlMs", &ttl)) {
            if (ttl < 0)
                ttl = 0;
            if (s->list_pages == 0 || s->list_ttl_ms < 0 ||
                ttl < s->list_ttl_ms)
                s->list_ttl_ms = ttl;
        } else if (s->list_pages == 0) {
            s->list_ttl_ms = -1;
        }
    }
    cursor = jsonrpc_get_string(x->answer, "result.nextCursor");
    if (cursor != NULL && cursor[0] != '\0')
        next = xstrdup(cursor);
    server_xch_free(x, NULL);
    s->list_pages++;
    if (next != NULL && s->list_pages < SERVER_MAX_PAGES) {
        server_send_list(s, next);
        free(next);
        return;
    }
    if (next != NULL)
        server_log(s, "tools/list stopped after %d pages", s->list_pages);
    free(next);
    server_list_finished(s);
}

/* --- ping ---------------------------------------------------------------- */

static void
server_on_ping(struct server *s, struct server_xch *x,
    const struct http_result *r)
{
    struct failure_evidence ev;
    char                    detail[256];
    double                  ms = server_elapsed_ms(s, x->started);
    bool                    carried = x->carried_session;

    s->pings_done++;
    if (!server_judge(x, r, &ev, detail, sizeof(detail))) {
        server_xch_free(x, NULL);
        s->rtt_ms = ms;
        s->last_ping_ok = true;
        s->redialed_for_400 = false;
        server_outcome(s, server_ping_op(s), NULL, ms);
        server_schedule_ping(s);
        return;
    }
    server_xch_free(x, NULL);
    s->last_ping_ok = false;
    if (carried && r->status == 400 && !s->redialed_for_400 &&
        !s->env->no_redial && failure_classify(&ev) == FAILURE_HTTP_STATUS) {
        /* Not the spec's 404, but what the TypeScript SDK's servers answer
         * for a session id they do not know (after a restart): dial again,
         * once, until a ping completes on the new session. */
        s->redialed_for_400 = true;
        strncat(detail, "; session not known to the server",
            sizeof(detail) - strlen(detail) - 1);
        server_fail(s, server_ping_op(s), &ev, SITE_REQUEST, ms, detail);
        s->expiries++;
        server_drop_session(s);
        server_dial(s);
        return;
    }
    if (r->status == 404 && carried && !s->env->no_redial) {
        /* The session is gone (MCP basic/transports, session management):
         * dial again, once; the fresh dial reports its own failure. */
        strncat(detail, "; session expired", sizeof(detail) -
            strlen(detail) - 1);
        server_fail(s, server_ping_op(s), &ev, SITE_REQUEST, ms, detail);
        s->expiries++;
        server_drop_session(s);
        s->redial_after_expiry = true;
        server_dial(s);
        return;
    }
    if ((r->status == 429 || r->status == 503) && r->retry_after_s >= 0)
        s->retry_after_s = r->retry_after_s;
    server_fail(s, server_ping_op(s), &ev, SITE_REQUEST, ms, detail);
    if (s->era == ERA_MODERN && s->decl->era == CONFIG_ERA_AUTO &&
        !s->env->no_redial && (r->status == 400 || r->status == 404 ||
        r->status == 405) && failure_classify(&ev) == FAILURE_HTTP_STATUS) {
        /* The remembered era stopped working: probe again. */
        server_log(s, "era: modern stopped working; probing again");
        s->era = ERA_NONE;
        server_drop_session(s);
        server_dial(s);
        return;
    }
    if (s->decl->transport == CONFIG_HTTP && !s->env->no_redial &&
        s->state == SERVER_READY &&
        failure_classify(&ev) == FAILURE_CONNECT_REFUSED) {
        /* Nothing listens any more: the process behind the session died,
         * and its sessions with it. Dial again with the usual backoff. */
        server_drop_session(s);
        s->failed_dials = 1;
        server_set_state(s, SERVER_BACKOFF);
        server_schedule_dial(s);
        return;
    }
    if (s->decl->transport == CONFIG_STDIO && s->child_gone &&
        s->state == SERVER_READY && !s->env->no_redial) {
        /* The child is gone: dial again with the same backoff as HTTP. */
        server_drop_session(s);
        s->failed_dials = 1;
        server_set_state(s, SERVER_BACKOFF);
        server_schedule_dial(s);
        return;
    }
    server_schedule_ping(s);
}

bool
server_ping_now(struct server *s)
{
    int64_t            id;
    struct server_xch *x;
    size_t             len;
    char              *body, *cause = NULL;

    if (s->state != SERVER_READY || server_find_op(s, OP_PING) != NULL)
        return false;
    id = s->next_id++;
    x = server_xch_new(s, OP_PING, id);
    if (s->era == ERA_MODERN) {
        /* No ping in 2026-07-28: server/discover is the cheapest request
         * every server must answer. */
        x->method = "server/discover";
        body = jsonrpc_build_modern(id, x->method, MCP_PROTOCOL_MODERN,
            "mcptop", MCPTOP_VERSION, NULL, false, &len);
    } else {
        x->method = "ping";
        body = jsonrpc_build_request(id, "ping", NULL, &len);
    }
    s->pinged = true;
    if (!server_post(s, x, HTTP_POST, body, len, server_timeout_ms(s),
        &cause)) {
        struct failure_evidence ev = { .net = NET_OTHER };

        server_xch_free(x, NULL);
        server_fail(s, server_ping_op(s), &ev, SITE_REQUEST, 0, cause);
        free(cause);
        free(body);
        return false;
    }
    free(body);
    return true;
}

/* --- the GET stream ----------------------------------------------------- */

static void
server_stream_retry_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct server *s = w->data;

    (void)loop;
    (void)revents;
    if (s->state == SERVER_READY && s->era == ERA_MODERN)
        server_listen(s);
    else if (s->state == SERVER_READY)
        server_stream_open(s);
}

/* Plan a reconnect of the GET stream after `retry` (or a backoff), capped
 * per minute so a server that keeps closing it is not hammered. */
static void
server_stream_later(struct server *s)
{
    ev_tstamp now = server_now(s);
    double    delay;

    if (now - s->stream_window > 60.0) {
        s->stream_window = now;
        s->stream_reconnects = 0;
    }
    if (++s->stream_reconnects > SERVER_STREAM_RECONNECTS_PER_MIN) {
        delay = 60.0 - (now - s->stream_window);
        if (delay < 1.0)
            delay = 1.0;
        server_log(s, "stream: reconnect cap reached; next in %.0f s",
            delay);
    } else if (s->stream_retry_ms >= 0) {
        delay = s->stream_retry_ms / 1000.0;
    } else {
        delay = fmin(30.0, pow(1.5, (double)s->stream_reconnects - 1));
    }
    ev_timer_stop(s->env->loop, &s->stream_timer);
    ev_timer_set(&s->stream_timer, delay, 0.);
    ev_timer_start(s->env->loop, &s->stream_timer);
}

static void
server_stream_open(struct server *s)
{
    struct server_xch *x;
    char              *cause = NULL;
    double             idle = fmax(SERVER_STREAM_IDLE_MIN_S,
        4.0 * s->decl->ping_interval_ms / 1000.0);

    if (s->stream_none || server_find_op(s, OP_STREAM) != NULL ||
        s->session_id == NULL)
        return;
    x = server_xch_new(s, OP_STREAM, -1);
    if (!server_post(s, x, HTTP_GET, NULL, 0, 0, &cause)) {
        server_log(s, "stream not opened: %s", cause);
        free(cause);
        server_xch_free(x, NULL);
        return;
    }
    /* The idle watchdog: a silent stream is re-opened, not failed. */
    ev_timer_init(&x->timer, server_xch_timeout_cb, idle, 0.);
    x->timer.data = x;
}

static void
server_on_stream_done(struct server *s, struct server_xch *x,
    const struct http_result *r)
{
    double ms = server_elapsed_ms(s, x->started);
    bool   was_open = x->stream_open;

    if (r->last_event_id != NULL && r->last_event_id[0] != '\0') {
        free(s->last_event_id);
        s->last_event_id = xstrdup(r->last_event_id);
    }
    if (r->retry_ms >= 0)
        s->stream_retry_ms = r->retry_ms;
    server_xch_free(x, NULL);
    if (r->status == 405) {
        /* The server offers no stream: never ask again this session. */
        s->stream_none = true;
        server_log(s, "stream: 405, the server has no GET stream");
        server_outcome(s, "stream", NULL, ms);
        return;
    }
    if (was_open) {
        /* A cleanly closed stream is not a failure; resume later. */
        server_log(s, "stream closed after %.0f ms", ms);
        server_stream_later(s);
        return;
    }
    {
        struct failure_evidence ev = r->ev;
        char                    detail[256];

        if (r->ev.net != NET_OK && !r->completed)
            server_net_detail(r, detail, sizeof(detail));
        else if (r->status >= 300 || r->status < 200)
            server_status_detail(r, &ev, -1, detail, sizeof(detail));
        else {
            ev.no_matching_response = true;
            snprintf(detail, sizeof(detail), "GET stream answered without "
                "text/event-stream");
        }
        if (r->status == 404 && s->session_id != NULL) {
            server_fail(s, "stream", &ev, SITE_REQUEST, ms, detail);
            return;     /* the next ping finds the session gone */
        }
        server_fail(s, "stream", &ev, SITE_REQUEST, ms, detail);
        server_stream_later(s);
    }
}

/* --- dispatch ----------------------------------------------------------- */

static void server_on_delete(struct server *s, struct server_xch *x,
    const struct http_result *r);

static void server_on_discover(struct server *s, struct server_xch *x,
    const struct http_result *r);
static void server_send_initialize(struct server *s);
static void server_stream_later(struct server *s);
static void server_on_listen_done(struct server *s, struct server_xch *x,
    const struct http_result *r);
static void server_on_sse_done(struct server *s, struct server_xch *x,
    const struct http_result *r);

/* Route a finished exchange (either transport) to its step. */
static void
server_route(struct server *s, struct server_xch *x,
    const struct http_result *r)
{
    ev_timer_stop(s->env->loop, &x->timer);
    switch (x->op) {
    case OP_INITIALIZE:
        server_on_initialize(s, x, r);
        break;
    case OP_INITIALIZED:
        server_on_initialized(s, x, r);
        break;
    case OP_LIST:
        server_on_list(s, x, r);
        break;
    case OP_PING:
        server_on_ping(s, x, r);
        break;
    case OP_STREAM:
        server_on_stream_done(s, x, r);
        break;
    case OP_NOTIFY:
        server_xch_free(x, NULL);
        break;
    case OP_DELETE:
        server_on_delete(s, x, r);
        break;
    case OP_DISCOVER:
        server_on_discover(s, x, r);
        break;
    case OP_LISTEN:
        server_on_listen_done(s, x, r);
        break;
    case OP_SSE:
        server_on_sse_done(s, x, r);
        break;
    }
}

/* http_callbacks.on_done: route a finished transfer to its step. */
static void
server_xfer_done_cb(void *arg, struct http_xfer *hx, const struct http_result *r)
{
    struct server_xch *x = arg;

    (void)hx;
    x->xfer = NULL;         /* freed by http.c right after this returns */
    if (x->s->era == ERA_LEGACY_SSE && x->id >= 0 && x->op != OP_SSE &&
        r->completed && r->status >= 200 && r->status < 300 &&
        !x->sse_answered) {
        /* HTTP+SSE: the POST was accepted; the answer comes on the GET
         * stream, within this request's own timeout. */
        x->posted = true;
        return;
    }
    if (x->sse_answered) {
        /* The answer already came on the stream: that is the result. */
        struct http_result ok = { 0 };

        ok.completed = true;
        ok.status = 200;
        ok.ev.content_json = true;
        server_route(x->s, x, &ok);
        return;
    }
    server_route(x->s, x, r);
}

static void server_sse_kick(struct server *s);

/* ev_timer (0 s): work deferred out of libcurl callbacks. */
static void
server_kick_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct server     *s = w->data;
    struct server_xch *st;

    (void)loop;
    (void)revents;
    st = server_find_op(s, OP_STREAM);
    if (st == NULL)
        st = server_find_op(s, OP_LISTEN);
    if (st != NULL && st->stream_open && !ev_is_active(&st->timer) &&
        s->decl->transport == CONFIG_HTTP) {
        /* The stream just opened: one completed outcome, then watch it. */
        server_outcome(s, st->op == OP_STREAM ? "stream" : "listen", NULL,
            server_elapsed_ms(s, st->started));
        ev_timer_start(s->env->loop, &st->timer);
    } else if (st != NULL && st->stream_open) {
        ev_timer_again(s->env->loop, &st->timer);
    }
    if (s->era == ERA_LEGACY_SSE)
        server_sse_kick(s);
    if (s->relist_wanted && s->state == SERVER_READY &&
        server_find_op(s, OP_LIST) == NULL) {
        s->relist_wanted = false;
        server_begin_list(s, false);
    }
}

static void
server_kick(struct server *s)
{
    if (!ev_is_active(&s->kick)) {
        ev_timer_set(&s->kick, 0., 0.);
        ev_timer_start(s->env->loop, &s->kick);
    }
}

/* --- stdio (MCP basic/transports, stdio) -------------------------------- */

static void server_ending_outcome(struct server *s,
    struct server_ending_run *run, enum ending_outcome o, const char *detail);
static void server_ending_settle(struct server *s,
    struct server_ending_run *run);

static void
server_stderr_push(struct server *s, const char *prefix, const char *line,
    size_t len)
{
    char   clean[1100];
    char **slot;

    str_sanitize(clean, sizeof(clean), line, len);
    if (s->err_len < SERVER_STDERR_LINES) {
        if (s->stderr_ring == NULL)
            s->stderr_ring = xcalloc(SERVER_STDERR_LINES,
                sizeof(*s->stderr_ring));
        slot = &s->stderr_ring[(s->err_start + s->err_len) %
            SERVER_STDERR_LINES];
        s->err_len++;
    } else {
        slot = &s->stderr_ring[s->err_start];
        s->err_start = (s->err_start + 1) % SERVER_STDERR_LINES;
    }
    free(*slot);
    *slot = str_printf("%s%s", prefix, clean);
}

/* Why the child is gone, for a failure's detail. */
static void
server_child_detail(const struct server *s, char *buf, size_t n)
{
    if (s->has_exit && WIFEXITED(s->exit_status))
        snprintf(buf, n, "the child exited with status %d",
            WEXITSTATUS(s->exit_status));
    else if (s->has_exit && WIFSIGNALED(s->exit_status))
        snprintf(buf, n, "the child was killed by signal %d",
            WTERMSIG(s->exit_status));
    else if (s->child != NULL && child_stdout_closed(s->child))
        snprintf(buf, n, "the child closed its stdout");
    else
        snprintf(buf, n, "the child is gone");
}

/* Fail one stdio exchange with the evidence of a closed transport. */
static void
server_stdio_fail(struct server *s, struct server_xch *x, bool known_dead)
{
    struct http_result r = { 0 };
    char               detail[128];

    server_child_detail(s, detail, sizeof(detail));
    r.ev.child_closed = true;
    r.ev.peer_known_dead = known_dead;
    r.error_text = detail;
    r.status = 0;
    server_route(s, x, &r);
}

/* Fail every request in flight: the child went away under them. */
static void
server_stdio_fail_all(struct server *s)
{
    struct server_xch *x;

    /* Only those in flight now: routing may free some and start new
     * ones (a fallback dial to a fresh child), which are not lost. */
    for (x = s->xchs; x != NULL; x = x->next)
        x->doomed = x->id >= 0 && x->op != OP_DELETE;
    for (;;) {
        for (x = s->xchs; x != NULL; x = x->next) {
            if (x->doomed)
                break;
        }
        if (x == NULL)
            break;
        x->doomed = false;
        server_stdio_fail(s, x, false);
    }
}

/* ev_timer (0 s): a notification was queued, or a request could not be:
 * finish it outside the caller. */
static void
server_stdio_sent_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct server_xch *x = w->data;
    struct server     *s = x->s;
    struct http_result r = { 0 };

    (void)loop;
    (void)revents;
    if (x->dead) {
        /* A message to a child already known dead: nothing was sent. */
        server_stdio_fail(s, x, true);
        return;
    }
    r.completed = true;
    r.status = 202;
    server_route(s, x, &r);
}

static bool
server_send_stdio(struct server *s, struct server_xch *x, const char *body,
    size_t len, long timeout_ms)
{
    x->dead = s->child == NULL || s->child_gone ||
        child_send(s->child, body, len) != 0;
    if (x->dead || x->id < 0) {
        /* Finish on the next loop turn, not inside the caller. */
        ev_timer_init(&x->timer, server_stdio_sent_cb, 0., 0.);
        x->timer.data = x;
        ev_timer_start(s->env->loop, &x->timer);
        return true;
    }
    if (timeout_ms > 0) {
        ev_timer_init(&x->timer, server_xch_timeout_cb, timeout_ms / 1000.0,
            0.);
        x->timer.data = x;
        ev_timer_start(s->env->loop, &x->timer);
    }
    server_log(s, "stdin %s id=%lld", server_op_name(x->op),
        (long long)x->id);
    return true;
}

/* child_callbacks.on_line: one message, or a stray line. */
static void
server_child_line_cb(void *arg, const char *line, size_t len)
{
    struct server      *s = arg;
    struct jsonrpc_msg *m = jsonrpc_parse(line, len, NULL);
    struct server_xch  *x;

    if (m == NULL) {
        /* A server that logs to stdout: counted and shown, not fatal. */
        s->stray_lines++;
        server_stderr_push(s, "stdout: ", line, len);
        return;
    }
    if (jsonrpc_kind(m) == JSONRPC_RESULT || jsonrpc_kind(m) == JSONRPC_ERROR) {
        for (x = s->xchs; x != NULL; x = x->next) {
            if (x->id >= 0 && jsonrpc_id_is(m, x->id))
                break;
        }
        if (x != NULL) {
            struct http_result r = { 0 };

            x->answer = m;
            r.completed = true;
            r.status = 200;
            r.ev.content_json = true;
            server_route(s, x, &r);
            return;
        }
        server_log(s, "stdout: a response to no request in flight");
    } else {
        server_peer_message(s, m);
    }
    jsonrpc_free(m);
}

/* child_callbacks.on_too_long: the oldest request fails; reading goes on
 * at the next line. */
static void
server_child_too_long_cb(void *arg, size_t len)
{
    struct server      *s = arg;
    struct server_xch  *x, *oldest = NULL;
    struct http_result  r = { 0 };
    char                detail[128];

    for (x = s->xchs; x != NULL; x = x->next) {
        if (x->id >= 0 && (oldest == NULL || x->id < oldest->id))
            oldest = x;
    }
    {
        static const char note[] = "(a line past the message size limit "
            "was dropped)";

        server_stderr_push(s, "stdout: ", note, sizeof(note) - 1);
    }
    if (oldest == NULL)
        return;
    snprintf(detail, sizeof(detail), "a stdout line of at least %zu bytes "
        "exceeds the message size limit (%zu bytes)", len,
        s->decl->max_message_bytes);
    r.ev.too_large = true;
    r.completed = true;
    r.status = 200;
    r.ev.content_json = true;
    r.error_text = detail;
    server_route(s, oldest, &r);
}

static void
server_child_stderr_cb(void *arg, const char *line, size_t len)
{
    server_stderr_push(arg, "", line, len);
}

/* ev_timer: stdout closed a while ago and the child did not exit. */
static void
server_eof_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct server *s = w->data;

    (void)loop;
    (void)revents;
    server_stdio_fail_all(s);
}

/* child_callbacks.on_closed: stdout EOF. Wait briefly for the exit
 * status, so the failure can name it. */
static void
server_child_closed_cb(void *arg)
{
    struct server *s = arg;

    s->child_gone = true;
    if (s->child != NULL && child_exited(s->child)) {
        server_stdio_fail_all(s);
        return;
    }
    ev_timer_stop(s->env->loop, &s->eof_timer);
    ev_timer_set(&s->eof_timer, SERVER_EOF_GRACE_S, 0.);
    ev_timer_start(s->env->loop, &s->eof_timer);
}

static void server_child_ending_reaped(struct server *s);

/* ev_timer (0 s): free a reaped child outside its own callbacks. */
static void
server_reap_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct server *s = w->data;

    (void)loop;
    (void)revents;
    if (s->child != NULL && child_exited(s->child)) {
        child_free(s->child);
        s->child = NULL;
    }
}

/* child_callbacks.on_exit: reaped. */
static void
server_child_exit_cb(void *arg, int status)
{
    struct server *s = arg;

    s->exit_status = status;
    s->has_exit = true;
    s->child_gone = true;
    s->child_reaped = true;
    server_log(s, "child %ld reaped (status 0x%x)",
        s->child != NULL ? (long)child_pid(s->child) : 0L, status);
    ev_timer_stop(s->env->loop, &s->eof_timer);
    server_stdio_fail_all(s);
    server_child_ending_reaped(s);
    ev_timer_start(s->env->loop, &s->reap_kick);
    if (s->state == SERVER_READY && !s->env->no_pings) {
        /* Observe the loss now rather than at the next interval. */
        ev_timer_stop(s->env->loop, &s->tick);
        ev_timer_set(&s->tick, 0., 0.);
        ev_timer_start(s->env->loop, &s->tick);
    }
}

static const struct child_callbacks server_child_cb = {
    .on_line = server_child_line_cb,
    .on_too_long = server_child_too_long_cb,
    .on_stderr = server_child_stderr_cb,
    .on_closed = server_child_closed_cb,
    .on_exit = server_child_exit_cb,
};

/* Start the child for a dial. 0, or -1 after the dial failed. */
static int
server_spawn(struct server *s)
{
    int   err = 0;
    char *cause = NULL;

    if (s->child != NULL) {
        /* The old one is done with: kill and reap it now. */
        ev_timer_stop(s->env->loop, &s->reap_kick);
        child_free(s->child);
        s->child = NULL;
    }
    s->child_gone = false;
    s->child_reaped = false;
    s->has_exit = false;
    s->child = child_spawn(s->env->loop, s->decl, s->decl->max_message_bytes,
        &server_child_cb, s, &err, &cause);
    if (s->child == NULL) {
        struct failure_evidence ev = { .spawn_error = true, .os_errno = err };

        server_dial_failed(s, &ev, cause);
        free(cause);
        return -1;
    }
    server_log(s, "spawned pid %ld", (long)child_pid(s->child));
    return 0;
}

/* The stdio ending's outcome, from the step the shutdown sequence reached
 * when the child was reaped. */
static void
server_child_ending_reaped(struct server *s)
{
    struct server_ending_run *run = s->ending;
    enum ending_outcome       o;

    if (run == NULL || run->pub.settled || s->state != SERVER_ENDING)
        return;
    if (run->pub.outcome != ENDING_PENDING) {
        /* The outcome was given by the deadline (or sessionless): the
         * reaping is the settlement. */
        server_ending_settle(s, run);
        return;
    }
    if (WIFSIGNALED(s->exit_status))
        run->pub.signal = WTERMSIG(s->exit_status);
    if (WIFEXITED(s->exit_status))
        run->pub.exit_code = WEXITSTATUS(s->exit_status);
    o = run->stage >= 2 ? ENDING_KILLED :
        run->stage == 1 ? ENDING_SIGNALLED : ENDING_EXITED;
    server_ending_outcome(s, run, o, o == ENDING_EXITED ?
        "the child exited after stdin closed" : o == ENDING_SIGNALLED ?
        "the child needed SIGTERM" : "the child needed SIGKILL");
    server_ending_settle(s, run);
}

/* ev_timer: the next step of the MCP stdio shutdown sequence: stdin was
 * closed; then SIGTERM to the group; then SIGKILL; then the deadline. */
static void
server_child_step_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct server_ending_run *run = w->data;
    struct server            *s = run->s;
    double                    third = s->decl->teardown_ms / 3000.0;

    (void)revents;
    if (s->child == NULL || child_exited(s->child))
        return;
    run->stage++;
    if (run->stage == 1) {
        server_log(s, "shutdown: SIGTERM");
        child_signal(s->child, SIGTERM);
    } else if (run->stage == 2) {
        server_log(s, "shutdown: SIGKILL");
        child_signal(s->child, SIGKILL);
    } else {
        /* The deadline: the operator is answered; the reaping settles
         * the ending when it comes. */
        server_ending_outcome(s, run, ENDING_KILLED,
            "the child needed SIGKILL and is not reaped yet");
        return;
    }
    ev_timer_set(w, third, 0.);
    ev_timer_start(loop, w);
}

/* End a stdio server: the shutdown sequence, bounded by the deadline. */
static void
server_end_child(struct server *s, struct server_ending_run *run)
{
    if (s->child == NULL || child_exited(s->child)) {
        if (s->child != NULL && s->has_exit) {
            run->pub.exit_code = WIFEXITED(s->exit_status) ?
                WEXITSTATUS(s->exit_status) : -1;
            server_ending_outcome(s, run, ENDING_EXITED,
                "the child had already exited");
        } else {
            server_ending_outcome(s, run, ENDING_NO_SESSION,
                "no child is running; nothing to end");
        }
        server_ending_settle(s, run);
        return;
    }
    server_log(s, "shutdown: closing stdin");
    child_close_stdin(s->child);
    run->stage = 0;
    ev_timer_init(&run->deadline, server_child_step_cb,
        s->decl->teardown_ms / 3000.0, 0.);
    run->deadline.data = run;
    ev_timer_start(s->env->loop, &run->deadline);
}

long
server_pid(const struct server *s)
{
    return s->child != NULL && !child_exited(s->child) ?
        (long)child_pid(s->child) : 0;
}

const char *
server_stderr_line(const struct server *s, size_t i)
{
    if (i >= s->err_len)
        return NULL;
    return s->stderr_ring[(s->err_start + i) % SERVER_STDERR_LINES];
}

size_t
server_stderr_count(const struct server *s)
{
    return s->err_len;
}

bool
server_exit_status(const struct server *s, int *code, int *sig)
{
    if (!s->has_exit)
        return false;
    *code = WIFEXITED(s->exit_status) ? WEXITSTATUS(s->exit_status) : -1;
    *sig = WIFSIGNALED(s->exit_status) ? WTERMSIG(s->exit_status) : 0;
    return true;
}

unsigned long
server_stray_lines(const struct server *s)
{
    return s->stray_lines;
}


/* --- eras (MCP 2026-07-28 basic/versioning, compatibility) -------------- */

const char *
server_era_name(enum server_era e)
{
    switch (e) {
    case ERA_MODERN:
        return "modern";
    case ERA_LEGACY:
        return "legacy";
    case ERA_LEGACY_SSE:
        return "legacy_sse";
    default:
        return NULL;
    }
}

static void
server_send_discover(struct server *s)
{
    int64_t            id = s->next_id++;
    struct server_xch *x = server_xch_new(s, OP_DISCOVER, id);
    size_t             len;
    char              *body;
    long               timeout = server_timeout_ms(s);

    x->method = "server/discover";
    body = jsonrpc_build_modern(id, x->method, MCP_PROTOCOL_MODERN, "mcptop",
        MCPTOP_VERSION, NULL, false, &len);
    /* Over stdio a legacy server may simply never answer the probe: wait
     * a bounded part of the request timeout, then fall back. */
    if (s->decl->transport == CONFIG_STDIO && s->decl->era == CONFIG_ERA_AUTO)
        timeout = timeout / 2 < 3000 ? timeout / 2 : 3000;
    server_dial_step(s, x, HTTP_POST, body, len, timeout);
}

/* The probe says legacy: initialize as a 2025 client does. */
static void
server_fallback_legacy(struct server *s, const char *why)
{
    server_log(s, "era: legacy (%s)", why);
    s->era = ERA_LEGACY;
    if (s->decl->transport == CONFIG_STDIO && (s->child == NULL ||
        s->child_gone)) {
        /* The child went away on the probe: a fresh one for initialize. */
        if (server_spawn(s) != 0)
            return;
    }
    server_send_initialize(s);
}

static void
server_take_discover(struct server *s, const struct jsonrpc_msg *m)
{
    server_take_capabilities(s, m);
    const char *v;
    bool        b = false;

    free(s->protocol_version);
    s->protocol_version = xstrdup(MCP_PROTOCOL_MODERN);
    free(s->peer_name);
    v = jsonrpc_get_stringv(m, "result", "_meta",
        "io.modelcontextprotocol/serverInfo", "name", (char *)NULL);
    s->peer_name = v != NULL ? str_sanitized(v) : NULL;
    free(s->peer_version);
    v = jsonrpc_get_stringv(m, "result", "_meta",
        "io.modelcontextprotocol/serverInfo", "version", (char *)NULL);
    s->peer_version = v != NULL ? str_sanitized(v) : NULL;
    s->has_tools_cap = jsonrpc_has(m, "result.capabilities.tools");
    s->tools_list_changed = jsonrpc_get_bool(m,
        "result.capabilities.tools.listChanged", &b) && b;
    free(s->cache_scope);
    v = jsonrpc_get_string(m, "result.cacheScope");
    s->cache_scope = v != NULL ? str_sanitized(v) : NULL;
}

/* Is this JSON-RPC error one only a 2026-07-28 server sends? */
static bool
server_modern_error(long code)
{
    return code == -32020 || code == -32021 || code == -32022;
}

static void
server_on_discover(struct server *s, struct server_xch *x,
    const struct http_result *r)
{
    struct failure_evidence ev;
    char                    detail[256];
    bool                    auto_era = s->decl->era == CONFIG_ERA_AUTO;
    bool                    failed;

    failed = server_judge(x, r, &ev, detail, sizeof(detail));
    if (!failed) {
        /* A result that is no DiscoverResult (supportedVersions is
         * required: a server answering any method with a result), or one
         * that lists no version mcptop speaks: not modern for us. */
        bool        listed = jsonrpc_array_len(x->answer,
            "result.supportedVersions") >= 0;
        const char *why = !listed ?
            "server/discover answered without supportedVersions" :
            !jsonrpc_array_has(x->answer, "result.supportedVersions",
            MCP_PROTOCOL_MODERN) ? "server/discover lists no version "
            "mcptop speaks (it speaks 2026-07-28)" : NULL;

        if (why != NULL) {
            server_xch_free(x, NULL);
            if (auto_era) {
                server_fallback_legacy(s, why);
                return;
            }
            ev.no_matching_response = !listed;
            ev.bad_protocol_version = listed;
            server_dial_failed(s, &ev, why);
            return;
        }
        s->era = ERA_MODERN;
        server_take_discover(s, x->answer);
        server_xch_free(x, NULL);
        server_log(s, "era: modern (%s)", MCP_PROTOCOL_MODERN);
        if (s->has_tools_cap) {
            server_begin_list(s, true);
        } else {
            server_free_tools(s->tool_names, s->ntools);
            s->tool_names = NULL;
            s->ntools = 0;
            server_dial_completed(s);
        }
        return;
    }
    if (ev.rpc_error && !ev.rpc_error_id_null) {
        /* The server answered the probe with a JSON-RPC error, in a 2xx
         * body or behind a 4xx. */
        long                code = ev.rpc_error_code;
        struct jsonrpc_msg *body = x->answer != NULL ? NULL :
            jsonrpc_parse(r->body, r->body_len, NULL);
        const struct jsonrpc_msg *em = x->answer != NULL ? x->answer : body;
        bool                names_modern = em != NULL &&
            jsonrpc_array_has(em, "error.data.supported",
            MCP_PROTOCOL_MODERN);

        jsonrpc_free(body);
        if (code == -32022 && names_modern && !s->probe_retried) {
            server_xch_free(x, NULL);
            s->probe_retried = true;
            server_log(s, "era: -32022 names %s; probing once more",
                MCP_PROTOCOL_MODERN);
            server_send_discover(s);
            return;
        }
        if (code == -32022 && auto_era) {
            server_xch_free(x, NULL);
            server_fallback_legacy(s, "-32022 lists only legacy versions");
            return;
        }
        if (server_modern_error(code) || !auto_era) {
            /* A recognised modern error: the request is wrong, not the
             * era; report it (MCP 2026-07-28 basic/transports). */
            if (server_modern_error(code))
                s->era = ERA_MODERN;
            server_xch_free(x, NULL);
            server_dial_failed(s, &ev, detail);
            return;
        }
        server_xch_free(x, NULL);
        server_fallback_legacy(s, "non-modern JSON-RPC error to discover");
        return;
    }
    server_xch_free(x, NULL);
    if (!auto_era) {
        server_dial_failed(s, &ev, detail);
        return;
    }
    if (s->decl->transport == CONFIG_STDIO && (ev.child_closed ||
        ev.peer_known_dead)) {
        server_fallback_legacy(s, "the child exited on server/discover");
        return;
    }
    /* A 4xx that is not a modern error means a legacy server; 401/403,
     * 429, 5xx, transport failures and timeouts are failures, never an
     * era verdict. */
    if (r->status >= 400 && r->status < 500 && r->status != 401 &&
        r->status != 403 && r->status != 429 &&
        !(ev.rpc_error && server_modern_error(ev.rpc_error_code))) {
        server_fallback_legacy(s, "4xx to server/discover");
        return;
    }
    server_dial_failed(s, &ev, detail);
}

/* subscriptions/listen for tools list changes: a long-lived request whose
 * answer is a stream of notifications (basic/patterns/subscriptions). */
static void
server_listen(struct server *s)
{
    int64_t            id;
    struct server_xch *x;
    size_t             len;
    char              *body, *cause = NULL;

    if (server_find_op(s, OP_LISTEN) != NULL || s->state != SERVER_READY)
        return;
    id = s->next_id++;
    x = server_xch_new(s, OP_LISTEN, id);
    x->method = "subscriptions/listen";
    body = jsonrpc_build_modern(id, x->method, MCP_PROTOCOL_MODERN, "mcptop",
        MCPTOP_VERSION, NULL, true, &len);
    if (!server_post(s, x, HTTP_POST, body, len, 0, &cause)) {
        server_log(s, "listen not sent: %s", cause);
        free(cause);
        server_xch_free(x, NULL);
    } else if (s->decl->transport == CONFIG_HTTP) {
        /* The idle watchdog: a silent listen is re-opened, not failed. */
        double idle = fmax(SERVER_STREAM_IDLE_MIN_S,
            4.0 * s->decl->ping_interval_ms / 1000.0);

        ev_timer_init(&x->timer, server_xch_timeout_cb, idle, 0.);
        x->timer.data = x;
    }
    free(body);
}

static void
server_on_listen_done(struct server *s, struct server_xch *x,
    const struct http_result *r)
{
    bool graceful = x->answer != NULL &&
        jsonrpc_kind(x->answer) == JSONRPC_RESULT;
    bool was_open = x->stream_open;

    server_xch_free(x, NULL);
    if (s->state != SERVER_READY)
        return;
    if (!graceful) {
        /* A close without the listen's result: an unexpected disconnect. */
        s->listen_drops++;
        server_log(s, "listen closed unexpectedly (%lu so far)%s",
            s->listen_drops, was_open ? "" : " before it opened");
        if (!was_open && (r->status >= 300 || (!r->completed &&
            r->ev.net != NET_OK))) {
            struct failure_evidence ev = r->ev;
            char                    detail[256];

            if (r->ev.net != NET_OK && !r->completed)
                server_net_detail(r, detail, sizeof(detail));
            else
                server_status_detail(r, &ev, -1, detail,
                    sizeof(detail));
            server_fail(s, "listen", &ev, SITE_REQUEST, 0, detail);
        }
    }
    /* Resubscribe later, with the stream's backoff and cap. */
    s->stream_retry_ms = -1;
    server_stream_later(s);
}

enum server_era
server_era(const struct server *s)
{
    return s->era;
}

bool
server_has_session(const struct server *s)
{
    if (s->decl->transport == CONFIG_STDIO)
        return s->child != NULL && !child_exited(s->child);
    return s->session_id != NULL;
}


/* --- the 2024-11-05 HTTP+SSE transport ---------------------------------- */

/* GET the stream; its first event names the endpoint for POSTs. */
static void
server_sse_open(struct server *s)
{
    struct server_xch *x = server_xch_new(s, OP_SSE, -1);

    s->era = ERA_LEGACY_SSE;
    free(s->sse_endpoint);
    s->sse_endpoint = NULL;
    if (server_dial_step(s, x, HTTP_GET, NULL, 0, 0))
        server_log(s, "era: trying the 2024-11-05 HTTP+SSE transport");
}

/* One event on the HTTP+SSE stream. Runs inside a libcurl callback: only
 * record and kick. */
static int
server_sse_event(struct server *s, const char *type, const char *data,
    size_t len)
{
    struct jsonrpc_msg *m;
    struct server_xch  *x;

    if (strcmp(type, "endpoint") == 0) {
        char *ref = str_ndup(data, len);

        free(s->sse_endpoint);
        s->sse_endpoint = http_resolve_url(s->decl->url, ref);
        free(ref);
        server_kick(s);
        return 0;
    }
    if (strcmp(type, "message") != 0 || len == 0)
        return 0;
    m = jsonrpc_parse(data, len, NULL);
    if (m == NULL)
        return 0;
    if (jsonrpc_kind(m) == JSONRPC_RESULT || jsonrpc_kind(m) == JSONRPC_ERROR) {
        for (x = s->xchs; x != NULL; x = x->next) {
            if (x->id >= 0 && x->op != OP_SSE && jsonrpc_id_is(m, x->id))
                break;
        }
        if (x != NULL && !x->sse_answered) {
            jsonrpc_free(x->answer);
            x->answer = m;
            x->sse_answered = true;
            server_kick(s);
            return 0;
        }
    } else {
        server_peer_message(s, m);
    }
    jsonrpc_free(m);
    return 0;
}

/* Deferred HTTP+SSE work: start the dial once the endpoint is known, and
 * finish exchanges whose answers came on the stream. */
static void
server_sse_kick(struct server *s)
{
    struct server_xch *x;

    if (s->state == SERVER_DIALING && s->sse_endpoint != NULL &&
        server_find_op(s, OP_INITIALIZE) == NULL &&
        server_find_op(s, OP_INITIALIZED) == NULL &&
        server_find_op(s, OP_LIST) == NULL && s->protocol_version == NULL) {
        server_send_initialize(s);
        return;
    }
    for (;;) {
        for (x = s->xchs; x != NULL; x = x->next) {
            if (x->sse_answered && x->xfer == NULL)
                break;
        }
        if (x == NULL)
            break;
        {
            struct http_result ok = { 0 };

            ok.completed = true;
            ok.status = 200;
            ok.ev.content_json = true;
            server_route(s, x, &ok);
        }
    }
}

/* The HTTP+SSE stream ended: the session went with it. */
static void
server_on_sse_done(struct server *s, struct server_xch *x,
    const struct http_result *r)
{
    struct failure_evidence ev = r->ev;
    char                    detail[256];
    bool                    in_dial = s->state == SERVER_DIALING;
    bool                    opened = x->stream_open;

    server_xch_free(x, NULL);
    if (r->ev.net != NET_OK && !r->completed) {
        server_net_detail(r, detail, sizeof(detail));
        /* The session's own stream was cut: its transport closed. */
        ev.stream_ended = opened && r->status >= 200 && r->status < 300;
        if (ev.stream_ended)
            ev.net = NET_OK;
    } else if (r->status < 200 || r->status >= 300) {
        server_status_detail(r, &ev, -1, detail, sizeof(detail));
    } else {
        ev.stream_ended = opened;
        ev.no_matching_response = !opened;
        snprintf(detail, sizeof(detail), "the HTTP+SSE stream ended");
    }
    if (in_dial) {
        if (s->era == ERA_LEGACY_SSE && s->decl->era == CONFIG_ERA_AUTO &&
            s->sse_endpoint == NULL && !opened) {
            /* No HTTP+SSE stream here either: what initialize got is the
             * failure to report, not the GET's. */
            char both[256];
            int  n;

            s->era = ERA_LEGACY;
            n = snprintf(both, sizeof(both), "%.180s", s->sse_fallback_detail);
            snprintf(both + n, sizeof(both) - (size_t)n,
                "; no HTTP+SSE stream either (GET: %.40s)", detail);
            ev = s->sse_fallback_ev;
            server_dial_failed(s, &ev, both);
            return;
        }
        server_dial_failed(s, &ev, detail);
        return;
    }
    if (s->state != SERVER_READY)
        return;
    /* Requests waiting for answers on it are lost. */
    for (;;) {
        struct server_xch *p;

        for (p = s->xchs; p != NULL; p = p->next) {
            if (p->posted && !p->sse_answered)
                break;
        }
        if (p == NULL)
            break;
        {
            struct http_result lost = { 0 };

            lost.ev.stream_ended = true;
            lost.error_text = "the HTTP+SSE stream ended before the answer";
            lost.ev.child_closed = false;
            lost.status = 200;
            lost.ev.content_sse = true;
            server_route(s, p, &lost);
        }
    }
    server_fail(s, "sse stream", &ev, SITE_REQUEST, 0, detail);
    server_drop_session(s);
    s->failed_dials = 1;
    server_set_state(s, SERVER_BACKOFF);
    server_schedule_dial(s);
}

/* --- dialing ------------------------------------------------------------ */

static int server_spawn(struct server *s);
static void server_send_discover(struct server *s);
static void server_send_initialize(struct server *s);

static void
server_dial(struct server *s)
{
    if (s->state == SERVER_DIALING || s->state == SERVER_STOPPED ||
        s->state == SERVER_ENDING)
        return;
    ev_timer_stop(s->env->loop, &s->tick);
    server_drop_session(s);
    s->dials++;
    s->dial_started = server_now(s);
    server_set_state(s, SERVER_DIALING);
    ev_timer_set(&s->open_timer, server_open_deadline_ms(s) / 1000.0, 0.);
    ev_timer_start(s->env->loop, &s->open_timer);
    if (s->decl->transport == CONFIG_STDIO && server_spawn(s) != 0)
        return;
    s->probe_retried = false;
    if (s->decl->era == CONFIG_ERA_MODERN || (s->decl->era ==
        CONFIG_ERA_AUTO && s->era != ERA_LEGACY && s->era != ERA_LEGACY_SSE)) {
        /* 2026-07-28 compatibility rules: probe with server/discover. */
        server_send_discover(s);
        return;
    }
    if (s->era == ERA_LEGACY_SSE && s->decl->transport == CONFIG_HTTP) {
        server_sse_open(s);
        return;
    }
    server_send_initialize(s);
}

static void
server_send_initialize(struct server *s)
{
    int64_t            id;
    struct server_xch *x;
    size_t             len;
    char              *body;

    id = s->next_id++;
    x = server_xch_new(s, OP_INITIALIZE, id);
    x->method = "initialize";
    body = jsonrpc_build_initialize(id, MCP_PROTOCOL_LATEST, "mcptop",
        MCPTOP_VERSION, &len);
    server_dial_step(s, x, HTTP_POST, body, len, server_timeout_ms(s));
}

/* ev_timer: the next ping, or the next dial after a backoff. */
static void
server_tick_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct server *s = w->data;

    (void)loop;
    (void)revents;
    if (s->state == SERVER_READY) {
        if (s->list_ttl_ms > 0 && server_now(s) - s->listed_at >
            s->list_ttl_ms / 1000.0) {
            /* The listing's ttlMs ran out: list again. */
            s->relist_wanted = true;
            server_kick(s);
        }
        if (!server_ping_now(s))
            server_schedule_ping(s);
    } else if (s->state == SERVER_BACKOFF) {
        server_dial(s);
    }
}

/* Exponential backoff with jitter, capped; Retry-After wins when given. */
static void
server_schedule_dial(struct server *s)
{
    double delay;
    double jitter = 0.8 + 0.4 * ((double)rand() / RAND_MAX);

    if (s->redial_after_expiry && s->failed_dials == 1) {
        /* The fresh dial after an expiry failed: report it, do not loop
         * faster than the normal backoff. */
        s->redial_after_expiry = false;
    }
    delay = SERVER_BACKOFF_BASE_S * pow(2.0, (double)(s->failed_dials - 1));
    delay = fmin(delay, SERVER_BACKOFF_CAP_S) * jitter;
    if (s->retry_after_s > 0)
        delay = fmax(delay, fmin((double)s->retry_after_s, 3600.0));
    ev_timer_stop(s->env->loop, &s->tick);
    ev_timer_set(&s->tick, delay, 0.);
    ev_timer_start(s->env->loop, &s->tick);
    server_log(s, "next dial in %.1f s", delay);
}

/* --- public ------------------------------------------------------------- */

static void server_eof_cb(struct ev_loop *loop, ev_timer *w, int revents);
static void server_reap_cb(struct ev_loop *loop, ev_timer *w, int revents);

struct server *
server_new(const struct server_env *env, const struct config_server *decl,
    size_t index)
{
    struct server *s = xcalloc(1, sizeof(*s));

    s->index = index;
    s->env = env;
    s->decl = decl;
    s->state = SERVER_IDLE;
    s->ntools = -1;
    s->next_id = 1;
    s->rtt_ms = -1;
    s->retry_after_s = -1;
    s->stream_retry_ms = -1;
    s->list_ttl_ms = -1;
    s->log_name = str_sanitized(decl->name != NULL ? decl->name : "?");
    if (decl->transport == CONFIG_HTTP) {
        s->target = xstrdup(decl->url_shown != NULL ? decl->url_shown : "");
    } else {
        size_t n = strlen(decl->command != NULL ? decl->command : "") + 1;

        /* The args as written: an expanded ${VAR} may be a secret. */
        char **shown = decl->args_shown != NULL ? decl->args_shown :
            decl->args;

        for (size_t i = 0; i < decl->nargs; i++)
            n += strlen(shown[i]) + 1;
        s->target = xcalloc(1, n + 1);
        strcat(s->target, decl->command != NULL ? decl->command : "");
        for (size_t i = 0; i < decl->nargs; i++) {
            strcat(s->target, " ");
            strcat(s->target, shown[i]);
        }
    }
    ev_timer_init(&s->open_timer, server_open_timeout_cb, 0., 0.);
    s->open_timer.data = s;
    ev_timer_init(&s->tick, server_tick_cb, 0., 0.);
    s->tick.data = s;
    ev_timer_init(&s->kick, server_kick_cb, 0., 0.);
    s->kick.data = s;
    ev_timer_init(&s->stream_timer, server_stream_retry_cb, 0., 0.);
    s->stream_timer.data = s;
    ev_timer_init(&s->eof_timer, server_eof_cb, SERVER_EOF_GRACE_S, 0.);
    s->eof_timer.data = s;
    ev_timer_init(&s->reap_kick, server_reap_cb, 0., 0.);
    s->reap_kick.data = s;
    return s;
}

void
server_start(struct server *s)
{
    if (s->decl->invalid != NULL) {
        struct failure_evidence ev = { .config_invalid = true };

        server_set_state(s, SERVER_INVALID);
        server_fail(s, "dial", &ev, SITE_CONNECT, 0, s->decl->invalid);
        return;
    }
    server_dial(s);
}

void
server_redial(struct server *s)
{
    if (s->state == SERVER_INVALID || s->state == SERVER_UNSUPPORTED ||
        s->state == SERVER_DIALING || s->state == SERVER_STOPPED ||
        s->state == SERVER_ENDING)
        return;
    server_set_state(s, SERVER_BACKOFF);
    server_dial(s);
}

void
server_stop(struct server *s)
{
    struct ev_loop *loop = s->env->loop;

    server_drop_session(s);
    /* Detached work too: abandoned initializes and DELETEs in flight. */
    while (s->xchs != NULL)
        server_xch_free(s->xchs, NULL);
    for (size_t i = 0; s->endings != NULL && i < SERVER_ENDINGS; i++) {
        ev_timer_stop(loop, &s->endings[i].deadline);
        s->endings[i].del = NULL;
        /* Stopped for good: nothing more will settle. */
        server_busy(s, &s->endings[i].counted, false);
    }
    ev_timer_stop(loop, &s->eof_timer);
    ev_timer_stop(loop, &s->reap_kick);
    /* Never leave a child behind: a running one is killed and reaped. */
    child_free(s->child);
    s->child = NULL;
    ev_timer_stop(loop, &s->open_timer);
    ev_timer_stop(loop, &s->tick);
    ev_timer_stop(loop, &s->kick);
    ev_timer_stop(loop, &s->stream_timer);
    if (s->state != SERVER_INVALID && s->state != SERVER_UNSUPPORTED)
        server_set_state(s, SERVER_STOPPED);
}

void
server_free(struct server *s)
{
    if (s == NULL)
        return;
    server_stop(s);
    free(s->target);
    free(s->session_id);
    free(s->protocol_version);
    free(s->peer_name);
    free(s->peer_version);
    free(s->last_event_id);
    free(s->test_id);
    free(s->cache_scope);
    free(s->sse_endpoint);
    free(s->log_name);
    server_free_tools(s->tool_names, s->ntools);
    server_free_tools(s->list_acc, s->list_n);
    for (size_t i = 0; s->stderr_ring != NULL && i < SERVER_STDERR_LINES;
        i++)
        free(s->stderr_ring[i]);
    free(s->stderr_ring);
    free(s->endings);
    for (size_t i = 0; i < s->ncaps; i++)
        free(s->caps[i]);
    free(s);
}

void
server_set_data(struct server *s, void *data)
{
    s->data = data;
}

void *
server_data(const struct server *s)
{
    return s->data;
}

const char *
server_name(const struct server *s)
{
    return s->decl->name;
}

const struct config_server *
server_decl(const struct server *s)
{
    return s->decl;
}

const char *
server_transport_name(const struct server *s)
{
    return s->decl->transport == CONFIG_HTTP ? "http" : "stdio";
}

const char *
server_target(const struct server *s)
{
    return s->target;
}

enum server_state
server_state(const struct server *s)
{
    return s->state;
}

const struct liveness *
server_liveness(const struct server *s)
{
    return &s->liveness;
}

const struct failure *
server_last_failure(const struct server *s, const char **op)
{
    if (op != NULL)
        *op = s->has_failure ? s->last_failure_op : NULL;
    return s->has_failure ? &s->last_failure : NULL;
}

void
server_session(const struct server *s, struct server_session_info *out)
{
    memset(out, 0, sizeof(*out));
    out->open = s->state == SERVER_READY;
    if (s->session_id != NULL)
        snprintf(out->id_prefix, sizeof(out->id_prefix), "%.8s",
            s->session_id);
    out->protocol_version = s->protocol_version;
    out->server_name = s->peer_name;
    out->server_version = s->peer_version;
    out->tools_list_changed = s->tools_list_changed;
    out->cache_scope = s->era == ERA_MODERN ? s->cache_scope : NULL;
}

long
server_tools(const struct server *s)
{
    return s->ntools;
}

const char *
server_tool_name(const struct server *s, long i)
{
    return i >= 0 && i < s->ntools ? s->tool_names[i] : NULL;
}

double
server_rtt_ms(const struct server *s)
{
    return s->rtt_ms;
}

bool
server_ok(const struct server *s)
{
    return s->state == SERVER_READY && s->last_ping_ok;
}

bool
server_dial_settled(const struct server *s)
{
    return s->dialed_once || s->state == SERVER_INVALID ||
        s->state == SERVER_UNSUPPORTED;
}

bool
server_ping_in_flight(const struct server *s)
{
    return server_find_op(s, OP_PING) != NULL;
}

unsigned long
server_pings_done(const struct server *s)
{
    return s->pings_done;
}

const struct server_exchange *
server_history(const struct server *s, size_t i)
{
    if (i >= s->hist_len)
        return NULL;
    return &s->history[(s->hist_start + i) % SERVER_HISTORY];
}

size_t
server_history_len(const struct server *s)
{
    return s->hist_len;
}

unsigned long
server_streak(const struct server *s)
{
    return s->streak;
}

unsigned long
server_session_expiries(const struct server *s)
{
    return s->expiries;
}

unsigned long
server_dials(const struct server *s)
{
    return s->dials;
}

/* --- endings (DESIGN.md section 5) -------------------------------------- */

static void
server_ending_emit(struct server *s, struct server_ending_run *run,
    enum event_type type)
{
    struct event e = { .type = type, .ending = &run->pub };

    server_emit(s, &e);
}

/* A fresh slot in the ring; the oldest is reused when it is full. */
static struct server_ending_run *
server_ending_new(struct server *s, bool half_open)
{
    struct server_ending_run *run;

    if (s->endings == NULL)
        s->endings = xcalloc(SERVER_ENDINGS, sizeof(*s->endings));
    if (s->end_len < SERVER_ENDINGS) {
        run = &s->endings[(s->end_start + s->end_len) % SERVER_ENDINGS];
        s->end_len++;
    } else {
        run = &s->endings[s->end_start];
        s->end_start = (s->end_start + 1) % SERVER_ENDINGS;
        ev_timer_stop(s->env->loop, &run->deadline);
        server_busy(s, &run->counted, false);
        if (run->del != NULL)
            server_xch_free(run->del, NULL);
        if (s->ending == run)
            s->ending = NULL;
    }
    memset(run, 0, sizeof(*run));
    run->in_use = true;
    server_busy(s, &run->counted, true);
    run->s = s;
    run->pub.server = s;
    run->pub.outcome = ENDING_PENDING;
    run->pub.exit_code = -1;
    run->pub.half_open = half_open;
    run->pub.started_at = clock_wall_ms();
    run->started = server_now(s);
    return run;
}

/* The outcome is known: stamp it and tell the operator. */
static void
server_ending_outcome(struct server *s, struct server_ending_run *run,
    enum ending_outcome o, const char *detail)
{
    if (run->pub.outcome != ENDING_PENDING)
        return;
    run->pub.outcome = o;
    run->pub.duration_ms = server_elapsed_ms(s, run->started);
    if (detail != NULL)
        snprintf(run->pub.detail, sizeof(run->pub.detail), "%s", detail);
    ev_timer_stop(s->env->loop, &run->deadline);
    server_log(s, "ending%s: %s in %.1f ms%s%s",
        run->pub.half_open ? " (half-open)" : "", ending_outcome_name(o),
        run->pub.duration_ms, detail != NULL ? ": " : "",
        detail != NULL ? detail : "");
    server_ending_emit(s, run, EVENT_ENDING);
}

/* The ending's work has settled: report it apart, then free the server
 * for dialing (or keep it closed). */
static void
server_ending_settle(struct server *s, struct server_ending_run *run)
{
    if (run->pub.settled)
        return;
    run->pub.settled = true;
    run->pub.settled_ms = server_elapsed_ms(s, run->started);
    server_busy(s, &run->counted, false);
    server_log(s, "ending settled after %.1f ms", run->pub.settled_ms);
    server_ending_emit(s, run, EVENT_SETTLED);
    if (run != s->ending || s->state != SERVER_ENDING)
        return;
    if (run->redial) {
        server_set_state(s, SERVER_BACKOFF);
        s->failed_dials = 0;
        server_dial(s);
    } else {
        server_set_state(s, SERVER_STOPPED);
    }
}

/* ev_timer: the teardown deadline. Whatever has not answered is aborted:
 * the operator gets timed_out now. */
static void
server_ending_deadline_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct server_ending_run *run = w->data;
    struct server            *s = run->s;
    struct failure_evidence   ev = { 0 };
    char                      detail[160];

    (void)loop;
    (void)revents;
    snprintf(detail, sizeof(detail), "no answer to DELETE within %ld ms; "
        "aborted", s->decl->teardown_ms);
    if (run->del != NULL) {
        struct server_xch *x = run->del;
        double             ms = server_elapsed_ms(s, x->started);
        struct failure     f;

        run->del = NULL;
        server_xch_free(x, &ev);
        ev.net = NET_OK;
        ev.timer = TIMER_TEARDOWN;
        failure_make(&f, &ev, SITE_REQUEST, detail);
        run->pub.has_failure = true;
        run->pub.kind = f.kind;
        run->pub.delivered = f.delivered;
        server_ending_outcome(s, run, ENDING_TIMED_OUT, detail);
        server_outcome(s, "delete", &f, ms);
    } else {
        server_ending_outcome(s, run, ENDING_TIMED_OUT, detail);
    }
    /* The abort is synchronous: the transfer is gone, so it settles. */
    server_ending_settle(s, run);
}

/* Send the DELETE that ends session `id` (taken: freed here). */
static void
server_send_delete(struct server *s, struct server_ending_run *run, char *id,
    const char *protocol_version)
{
    struct server_xch  *x = server_xch_new(s, OP_DELETE, -1);
    struct http_request rq = {
        .method = HTTP_DELETE,
        .url = s->decl->url,
        .headers = s->decl->headers,
        .nheaders = s->decl->nheaders,
        .session_id = id,
        .protocol_version = protocol_version,
        .max_bytes = s->decl->max_message_bytes,
        .ca_file = s->decl->ca_file,
        .tls_insecure = s->decl->tls_insecure,
        .maybe_resent = true,
        .pool_key = s->index,
    };
    char *cause = NULL;

    x->detached = true;
    x->ending = run;
    x->delete_id = id;
    ev_timer_init(&run->deadline, server_ending_deadline_cb,
        s->decl->teardown_ms / 1000.0, 0.);
    run->deadline.data = run;
    ev_timer_start(s->env->loop, &run->deadline);
    x->xfer = http_start(s->env->curl, &rq, &server_http_cb, x, &cause);
    if (x->xfer == NULL) {
        server_xch_free(x, NULL);
        run->pub.has_failure = true;
        run->pub.kind = FAILURE_UNKNOWN;
        run->pub.delivered = DELIVERED_NO;
        server_ending_outcome(s, run, ENDING_FAILED, cause);
        free(cause);
        server_ending_settle(s, run);
        return;
    }
    run->del = x;
    server_log(s, "DELETE session%s", run->pub.half_open ?
        " (half-open)" : "");
}

static void
server_on_delete(struct server *s, struct server_xch *x,
    const struct http_result *r)
{
    struct server_ending_run *run = x->ending;
    double                    ms = server_elapsed_ms(s, x->started);
    char                      detail[256];
    enum ending_outcome       o;

    run->del = NULL;
    if (r->completed && r->status >= 200 && r->status < 300) {
        run->pub.http_status = r->status;
        server_xch_free(x, NULL);
        server_ending_outcome(s, run, ENDING_TERMINATED, NULL);
        server_outcome(s, "delete", NULL, ms);
    } else {
        struct failure_evidence ev = r->ev;
        struct failure          f;

        if (!r->completed && r->ev.net != NET_OK) {
            server_net_detail(r, detail, sizeof(detail));
            o = ENDING_FAILED;
        } else {
            server_status_detail(r, &ev, -1, detail, sizeof(detail));
            o = r->status == 405 ? ENDING_NOT_ALLOWED :
                r->status == 404 ? ENDING_ALREADY_GONE : ENDING_REJECTED;
            run->pub.http_status = r->status;
        }
        server_xch_free(x, NULL);
        failure_make(&f, &ev, SITE_REQUEST, detail);
        if (o == ENDING_FAILED) {
            run->pub.has_failure = true;
            run->pub.kind = f.kind;
            run->pub.delivered = f.delivered;
        }
        server_ending_outcome(s, run, o, detail);
        server_outcome(s, "delete", &f, ms);
    }
    server_ending_settle(s, run);
}

/* A dial abandoned at its open deadline still got an answer: if it issued
 * a session, end it by the same procedure, marked half-open. */
static void
server_half_open(struct server *s, struct server_xch *x,
    const struct http_result *r)
{
    struct server_ending_run *run;
    char                     *id;
    char                     *pv = NULL;

    if (!(r->completed && r->status >= 200 && r->status < 300) ||
        r->session_id == NULL) {
        server_log(s, "abandoned initialize settled without a session");
        server_xch_free(x, NULL);
        return;
    }
    id = xstrdup(r->session_id);
    if (x->answer != NULL)
        pv = str_dup(jsonrpc_get_string(x->answer, "result.protocolVersion"));
    server_xch_free(x, NULL);
    run = server_ending_new(s, true);
    snprintf(run->pub.detail, sizeof(run->pub.detail),
        "session issued after the dial was abandoned");
    server_send_delete(s, run, id,
        server_version_spoken(pv) ? pv : NULL);
    free(pv);
}

static void server_end_child(struct server *s, struct server_ending_run *run);

const struct ending *
server_end(struct server *s, bool redial)
{
    struct server_ending_run *run;
    char                     *id;

    if (s->ending != NULL && !s->ending->pub.settled)
        return &s->ending->pub;
    if (s->state == SERVER_INVALID || s->state == SERVER_UNSUPPORTED ||
        s->state == SERVER_STOPPED || s->state == SERVER_IDLE)
        return NULL;
    run = server_ending_new(s, false);
    run->redial = redial;
    s->ending = run;
    /* The id is dropped for good: nothing after this may send it. */
    id = s->session_id;
    s->session_id = NULL;
    ev_timer_stop(s->env->loop, &s->tick);
    ev_timer_stop(s->env->loop, &s->open_timer);
    /* An initialize in flight may still issue a session: let it settle
     * and end that one as half-open. */
    for (struct server_xch *x = s->xchs; x != NULL; x = x->next) {
        if (x->op == OP_INITIALIZE && x->in_dial) {
            x->detached = true;
            x->in_dial = false;
            server_busy(s, &x->counted, true);
        }
    }
    server_set_state(s, SERVER_ENDING);
    if (s->era == ERA_MODERN && s->decl->transport == CONFIG_STDIO &&
        s->child != NULL && !s->child_gone) {
        /* stdio has no stream to close: cancel what is in flight (the
         * listen among it) before stdin closes (basic/patterns/
         * cancellation). */
        for (struct server_xch *x = s->xchs; x != NULL; x = x->next) {
            size_t len;
            char  *body;

            if (x->id < 0 || x->detached)
                continue;
            body = jsonrpc_build_cancelled(x->id, "ending", &len);
            child_send(s->child, body, len);
            free(body);
        }
    }
    /* The local close: everything of the session stops now (closing a
     * response stream is the cancellation over 2026-07-28 HTTP). */
    server_drop_session(s);
    s->last_ping_ok = false;
    if (s->era == ERA_MODERN) {
        /* Nothing to end on the server: no session exists. */
        run->pub.sessionless = true;
        free(id);
        server_ending_outcome(s, run, ENDING_NO_SESSION,
            "sessionless (2026-07-28): nothing to end on the server");
        if (s->decl->transport == CONFIG_STDIO && s->child != NULL &&
            !child_exited(s->child)) {
            /* Settles when the child is reaped. */
            server_end_child(s, run);
            return &run->pub;
        }
        server_ending_settle(s, run);
        return &run->pub;
    }
    if (s->decl->transport == CONFIG_STDIO) {
        free(id);
        server_end_child(s, run);
        return &run->pub;
    }
    if (id == NULL) {
        char why[160];

        if (s->has_failure && strcmp(s->last_failure_op, "dial") == 0)
            snprintf(why, sizeof(why), "no session id was issued (the dial "
                "failed: %s); nothing sent",
                failure_kind_name(s->last_failure.kind));
        else
            snprintf(why, sizeof(why), "no session id was issued; nothing "
                "sent");
        server_ending_outcome(s, run, ENDING_NO_SESSION, why);
        server_ending_settle(s, run);
        return &run->pub;
    }
    if (s->env->test_keep_id) {
        free(s->test_id);
        s->test_id = xstrdup(id);
    }
    server_send_delete(s, run, id, s->protocol_version);
    return &run->pub;
}

const struct ending *
server_test_repeat_delete(struct server *s)
{
    struct server_ending_run *run;
    char                     *id = s->test_id;

    if (id == NULL || server_ending_busy(s))
        return NULL;
    s->test_id = NULL;
    run = server_ending_new(s, false);
    snprintf(run->pub.detail, sizeof(run->pub.detail),
        "test hook: the same session's DELETE sent again");
    server_send_delete(s, run, id, s->protocol_version);
    return &run->pub;
}

size_t
server_ending_count(const struct server *s)
{
    return s->end_len;
}

const struct ending *
server_ending(const struct server *s, size_t i)
{
    if (i >= s->end_len)
        return NULL;
    return &s->endings[(s->end_start + i) % SERVER_ENDINGS].pub;
}

bool
server_ending_busy(const struct server *s)
{
    return s->busy > 0;
}

size_t
server_capabilities(const struct server *s, const char **names, size_t max)
{
    size_t n = 0;

    for (size_t i = 0; i < s->ncaps && n < max; i++)
        names[n++] = s->caps[i];
    return n;
}

/* Keep the capability names the server declared (sanitized copies). */
static void
server_take_capabilities(struct server *s, const struct jsonrpc_msg *m)
{
    const char *names[SERVER_MAX_CAPS];
    size_t      n = jsonrpc_object_keys(m, "result.capabilities", names,
        SERVER_MAX_CAPS);

    for (size_t i = 0; i < s->ncaps; i++)
        free(s->caps[i]);
    for (size_t i = 0; i < n; i++)
        s->caps[i] = str_sanitized(names[i]);
    s->ncaps = n;
}
