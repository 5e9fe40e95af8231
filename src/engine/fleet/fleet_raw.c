/*
 * Raw exchanges on a server's transport (the session-hygiene audit): a
 * channel owns a fresh transport for one declaration, outside the
 * server's lifecycle and record, and makes one exchange at a time as its
 * caller shapes it. Over Streamable HTTP each exchange is the transport's
 * raw op (http_raw.c): any method, the session header given, forged or
 * left out, a body as it is. Over stdio and 2024-11-05 HTTP+SSE it is a
 * JSON-RPC request sent by the transport on its own session (the child,
 * the stream), bounded here.
 *
 * The channel keeps every session it was issued, a refused request's
 * included (an Mcp-Session-Id on any answer it had not seen), and ends
 * each by the ending procedure of ending.c when asked, counting what it
 * opened and what ended. What must never happen here: a session id
 * leaving the channel (in a result, a log line or a detail), a result
 * reported from inside the fleet_raw_send that asked for it (one known at
 * once waits for the next loop turn), or a session left without an
 * ending when its owner asks for them all.
 */
#include "engine/fleet.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fleet/fleet_int.h"
#include "core/jsonrpc.h"
#include "transport/ending_run.h"
#include "transport/transport.h"
#include "util/str.h"
#include "util/xmalloc.h"

/* A session the channel was issued. */
struct fleet_raw_session {
    char              *id;          /* Mcp-Session-Id (a secret); NULL for
                                       the child or the stream */
    char              *version;     /* sent with its DELETE */
    struct ending_run *run;         /* its ending, until its outcome */
    bool               ending;      /* its ending started */
    bool               ended;       /* the ending says it is gone */
    bool               terminated;  /* ...by a DELETE answered 2xx */
    bool               served_after;/* ...yet a request was served */
    uint64_t           tag;         /* the id's keyed hash (0: no id) */
};

enum fleet_raw_open_state {
    FLEET_RAW_CLOSED,           /* not opened yet */
    FLEET_RAW_OPENING,          /* READY or OPEN_FAILED to come */
    FLEET_RAW_OPEN,
    FLEET_RAW_OPEN_FAILED,
};

struct fleet_raw {
    struct ev_loop                *loop;
    struct server                 *server;
    const struct config_server    *decl;
    struct transport_env           tenv;
    struct transport              *t;
    char                          *log_name;
    const struct fleet_raw_host   *host;
    void                          *arg;
    enum fleet_raw_open_state      open;
    struct transport_failure       open_f;
    struct fleet_raw_session      *sess;
    int                            nsess, cap;
    struct endings                *endings;
    unsigned                       busy;    /* unsettled endings */
    /* the exchange in flight (one at a time) */
    bool                           inflight;
    struct transport_raw          *rx;      /* HTTP: the raw op's */
    struct transport_req          *req;     /* stdio, sse: the send's */
    bool                           waiting; /* ...waits for the open */
    ev_timer                       timer;   /* the send's bound */
    ev_timer                       later;   /* a result for next turn */
    struct fleet_raw_result        res;     /* ...that one */
    ev_tstamp                      sent_at;
    int64_t                        id;
    const char                    *rpc;     /* static */
    char                          *body;
    size_t                         len;
    unsigned                       flags;
    long                           timeout_ms;
    char                          *version; /* initialize: offered */
    int64_t                        next_id;
    char                          *forged;
    bool                           fresh;   /* the exchange in flight is
                                               an initialize sent with no
                                               session: any id it is
                                               answered with is a new one */
};

/* The methods a request may name (their names are static strings). */
static const char *const fleet_raw_methods[] = {
    "initialize", "ping", "tools/list", "server/discover",
    "notifications/initialized",
};

static void
fleet_raw_wipe(char *secret)
{
    if (secret != NULL) {
        memset(secret, 0, strlen(secret));
        free(secret);
    }
}

/* --- sessions ----------------------------------------------------------- */

/*
 * The tag of a session id: a 64-bit FNV-1a hash keyed by a secret drawn
 * once a process, so that ids can be told equal without being kept, and
 * a tag says nothing of its id outside this process. 0 is never a tag.
 */
static uint64_t
fleet_raw_tag(const char *id)
{
    static uint64_t key;
    uint64_t        h;

    if (key == 0) {
        int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

        if (fd < 0 || read(fd, &key, sizeof(key)) != (ssize_t)sizeof(key))
            key = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull ^
                (uint64_t)(intptr_t)&key;
        if (fd >= 0)
            close(fd);
        key |= 1;
    }
    h = 0xcbf29ce484222325ull ^ key;
    for (const unsigned char *c = (const unsigned char *)id; *c != '\0';
        c++) {
        h ^= *c;
        h *= 0x100000001b3ull;
    }
    return h != 0 ? h : 1;
}

/* Register a session (id taken; NULL: the child or the stream). */
static int
fleet_raw_add_session(struct fleet_raw *ch, char *id, const char *version)
{
    struct fleet_raw_session *s;

    if (ch->nsess == ch->cap) {
        ch->cap = ch->cap ? ch->cap * 2 : 8;
        ch->sess = xrealloc(ch->sess, (size_t)ch->cap * sizeof(*ch->sess));
    }
    s = &ch->sess[ch->nsess];
    memset(s, 0, sizeof(*s));
    s->id = id;
    s->tag = id != NULL ? fleet_raw_tag(id) : 0;
    s->version = str_dup(version);
    transport_log(ch->t, "raw: session %d issued", ch->nsess);
    return ch->nsess++;
}

/* The number of the session whose id is `id`, or -1. */
static int
fleet_raw_find(const struct fleet_raw *ch, const char *id)
{
    for (int k = 0; k < ch->nsess; k++) {
        if (ch->sess[k].id != NULL && strcmp(ch->sess[k].id, id) == 0)
            return k;
    }
    return -1;
}

static void
fleet_raw_random(unsigned char *buf, size_t n)
{
    int     fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    ssize_t got = fd >= 0 ? read(fd, buf, n) : -1;

    if (fd >= 0)
        close(fd);
    if (got != (ssize_t)n) {
        /* No urandom: still unlike any id a server made. */
        unsigned long x = (unsigned long)getpid() * 2654435761UL ^
            (unsigned long)(ev_time() * 1e6);

        for (size_t i = 0; i < n; i++) {
            x = x * 6364136223846793005UL + 1442695040888963407UL;
            buf[i] = (unsigned char)(x >> 33);
        }
    }
}

/*
 * A well-formed id the server never issued: the shape of the last one it
 * did (each digit replaced by a random digit, each hex letter by a random
 * hex letter of its case, the rest kept), or a random UUID when it issued
 * none. Never one the channel holds.
 */
static const char *
fleet_raw_forged(struct fleet_raw *ch)
{
    static const char uuid[] = "xxxxxxxx-xxxx-4xxx-8xxx-xxxxxxxxxxxx";
    const char       *shape = NULL;
    unsigned char     rnd[64];
    size_t            n;

    if (ch->forged != NULL)
        return ch->forged;
    for (int k = ch->nsess - 1; k >= 0 && shape == NULL; k--)
        shape = ch->sess[k].id;
    if (shape == NULL)
        shape = uuid;
    n = strlen(shape);
    ch->forged = xmalloc(n + 1);
    for (size_t i = 0; i < n; i++) {
        char          c = shape[i];
        unsigned char b;

        if (i % sizeof(rnd) == 0)
            fleet_raw_random(rnd, sizeof(rnd));
        b = rnd[i % sizeof(rnd)];
        if (c >= '0' && c <= '9' && shape != uuid)
            c = (char)('0' + b % 10);
        else if ((c >= 'a' && c <= 'f') || c == 'x')
            c = "0123456789abcdef"[b % 16];
        else if (c >= 'A' && c <= 'F')
            c = "0123456789ABCDEF"[b % 16];
        ch->forged[i] = c;
    }
    ch->forged[n] = '\0';
    /* An id with nothing to vary (no digit, no hex letter) still differs. */
    if (n > 0 && fleet_raw_find(ch, ch->forged) >= 0)
        ch->forged[n - 1] = ch->forged[n - 1] == '!' ? '~' : '!';
    return ch->forged;
}

/* --- results ------------------------------------------------------------ */

/* Read what the JSON-RPC answer says into r. */
static void
fleet_raw_read_answer(struct fleet_raw_result *r, const struct jsonrpc_msg *m)
{
    const char *v, *msg;

    if (m == NULL)
        return;
    r->answered = true;
    if (jsonrpc_kind(m) == JSONRPC_RESULT) {
        r->rpc_result = true;
        v = jsonrpc_get_string(m, "result.protocolVersion");
        if (v != NULL)
            str_sanitize(r->version, sizeof(r->version), v, strlen(v));
        r->lists_modern = jsonrpc_array_has(m, "result.supportedVersions",
            MCP_PROTOCOL_MODERN);
        return;
    }
    r->rpc_error = true;
    r->rpc_null_id = jsonrpc_id_is_null(m);
    r->rpc_code = jsonrpc_error_code(m);
    msg = jsonrpc_error_message(m);
    if (msg != NULL)
        str_sanitize(r->message, sizeof(r->message), msg, strlen(msg));
}

/* The exchange is over: tell the owner. */
static void
fleet_raw_deliver(struct fleet_raw *ch, const struct fleet_raw_result *r)
{
    ch->inflight = false;
    ch->rx = NULL;
    ch->req = NULL;
    ev_timer_stop(ch->loop, &ch->timer);
    free(ch->body);
    ch->body = NULL;
    free(ch->version);
    ch->version = NULL;
    ch->host->result(ch->arg, ch, r);
}

/* ev_timer: a result known inside the caller's call goes out now. */
static void
fleet_raw_later_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct fleet_raw       *ch = w->data;
    struct fleet_raw_result r = ch->res;

    (void)loop;
    (void)revents;
    fleet_raw_deliver(ch, &r);
}

/* A failure before anything was sent: reported on the next turn. */
static void
fleet_raw_fail_later(struct fleet_raw *ch, const struct failure_evidence *evd,
    const char *detail)
{
    memset(&ch->res, 0, sizeof(ch->res));
    ch->res.issued = -1;
    failure_make(&ch->res.failure, evd, FAILURE_SITE_REQUEST, detail);
    ev_timer_stop(ch->loop, &ch->later);
    ev_timer_set(&ch->later, 0., 0.);
    ev_timer_start(ch->loop, &ch->later);
}

/* transport_raw_cb: the raw op's exchange ended. */
static void
fleet_raw_raw_cb(void *arg, struct transport_raw_result *rr)
{
    struct fleet_raw       *ch = arg;
    struct fleet_raw_result r = { .issued = -1, .ms = rr->ms };

    r.answered = rr->answered;
    r.status = rr->status;
    r.event_stream = rr->event_stream;
    fleet_raw_read_answer(&r, rr->answer);
    if (!r.answered)
        failure_make(&r.failure, &rr->f.evd, FAILURE_SITE_REQUEST,
            rr->f.detail);
    if (rr->session_id != NULL && (ch->fresh ||
        fleet_raw_find(ch, rr->session_id) < 0)) {
        /* An id the channel has not seen (to a refused request, or a
         * forged id taken up): the server holds a session for it. So it
         * does for the id an initialize sent with none is answered with,
         * even one it gave before: a session opened is counted and ended
         * as one, whatever its id. */
        r.issued = fleet_raw_add_session(ch, xstrdup(rr->session_id),
            r.version[0] != '\0' ? r.version : ch->version);
    }
    ch->fresh = false;
    fleet_raw_deliver(ch, &r);
}

/* ev_timer: a stdio or HTTP+SSE request passed its bound. */
static void
fleet_raw_timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct fleet_raw       *ch = w->data;
    struct fleet_raw_result r = { .issued = -1 };
    struct failure_evidence evd = { 0 };
    char                    detail[128];

    (void)loop;
    (void)revents;
    if (ch->req != NULL)
        transport_cancel(ch->t, ch->req, &evd);
    ch->req = NULL;
    ch->waiting = false;
    evd.net = NET_OK;
    evd.timer = FAILURE_TIMER_REQUEST;
    snprintf(detail, sizeof(detail), "no answer to %s within %ld ms",
        ch->rpc, ch->timeout_ms);
    failure_make(&r.failure, &evd, FAILURE_SITE_REQUEST, detail);
    r.ms = (double)ch->timeout_ms;
    fleet_raw_deliver(ch, &r);
}

/* Send the request kept in ch on the transport (stdio, sse). */
static void
fleet_raw_issue(struct fleet_raw *ch)
{
    struct transport_msg m = { .method = ch->rpc, .id = ch->id,
                               .body = ch->body, .len = ch->len,
                               .flags = ch->flags };
    char                *cause = NULL;

    ch->waiting = false;
    ch->req = transport_send(ch->t, &m, ch, &cause);
    if (ch->req == NULL) {
        struct failure_evidence evd = { .net = NET_OTHER };

        fleet_raw_fail_later(ch, &evd, cause != NULL ? cause :
            "the request could not be sent");
        free(cause);
    }
}

/* transport_cb: what the transport says. */
static void
fleet_raw_transport_cb(void *arg, const struct transport_event *e)
{
    struct fleet_raw *ch = arg;

    switch (e->type) {
    case TRANSPORT_DONE: {
        struct fleet_raw_result r = { .issued = -1, .ms = e->ms };
        struct transport_result *res = e->result;

        if (e->owner != ch || !ch->inflight)
            return;
        ch->req = NULL;
        fleet_raw_wipe(res->session);
        res->session = NULL;
        ev_now_update(ch->loop);
        r.ms = (ev_now(ch->loop) - ch->sent_at) * 1000.0;
        /* An answer over stdio or the HTTP+SSE stream has no status of
         * its own (the transport's nominal 200 is not one); a refusal
         * does. */
        r.status = res->failed ? res->f.evd.http_status : 0;
        r.event_stream = res->failed && res->f.evd.content_sse;
        fleet_raw_read_answer(&r, res->answer);
        if (res->failed && !r.answered)
            failure_make(&r.failure, &res->f.evd, FAILURE_SITE_REQUEST,
                res->f.detail);
        if (!res->failed && res->answer == NULL)
            r.answered = true;      /* a notification accepted */
        if (r.status != 0)
            r.answered = true;
        fleet_raw_deliver(ch, &r);
        return;
    }
    case TRANSPORT_READY:
        ch->open = FLEET_RAW_OPEN;
        fleet_raw_add_session(ch, NULL, NULL);     /* the stream */
        if (ch->waiting)
            fleet_raw_issue(ch);
        return;
    case TRANSPORT_OPEN_FAILED:
        ch->open = FLEET_RAW_OPEN_FAILED;
        if (e->failure != NULL)
            ch->open_f = *e->failure;
        if (ch->waiting) {
            ch->waiting = false;
            fleet_raw_fail_later(ch, &ch->open_f.evd, ch->open_f.detail);
        }
        return;
    default:
        /* Messages from the server, the stream's and the connection's
         * news: nothing a raw exchange waits for (a lost child fails what
         * is in flight through TRANSPORT_DONE). */
        return;
    }
}

/* --- endings ------------------------------------------------------------ */

static int
fleet_raw_session_of(const struct fleet_raw *ch, const struct ending *e)
{
    for (int k = 0; k < ch->nsess; k++) {
        if (ch->sess[k].run != NULL && ending_run_view(ch->sess[k].run) == e)
            return k;
    }
    return -1;
}

/* Does this outcome say the session is gone? */
static bool
fleet_raw_outcome_ends(const struct ending *e)
{
    switch (e->outcome) {
    case ENDING_TERMINATED:
    case ENDING_ALREADY_GONE:
    case ENDING_NO_SESSION:
    case ENDING_EXITED:
    case ENDING_SIGNALLED:
    case ENDING_KILLED:
    case ENDING_STREAM_CLOSED:
        return true;
    case ENDING_REJECTED:
        /* 400: the id is not one the server holds. */
        return e->http_status == 400;
    default:
        return false;
    }
}

/* endings_host.event */
static void
fleet_raw_endings_event_cb(void *arg, enum event_type type,
    const struct ending *e)
{
    struct fleet_raw *ch = arg;
    int               k = fleet_raw_session_of(ch, e);

    if (type == EVENT_SETTLED) {
        ch->host->settled(ch->arg, ch);
        return;
    }
    if (type != EVENT_ENDING || k < 0)
        return;
    /* The ring may reuse the run once it settles: forget it now. */
    ch->sess[k].run = NULL;
    ch->sess[k].ended = fleet_raw_outcome_ends(e);
    ch->sess[k].terminated = e->outcome == ENDING_TERMINATED;
    ch->host->ending(ch->arg, ch, k, e);
}

/* endings_host.exchange: the DELETE's own exchange (no record here). */
static void
fleet_raw_endings_exchange_cb(void *arg, const char *op,
    const struct failure *f, double ms)
{
    (void)arg;
    (void)op;
    (void)f;
    (void)ms;
}

static void
fleet_raw_endings_settled_cb(void *arg, struct ending_run *run)
{
    (void)arg;
    (void)run;
}

static void
fleet_raw_endings_busy_cb(void *arg, bool on)
{
    struct fleet_raw *ch = arg;

    if (on)
        ch->busy++;
    else if (ch->busy > 0)
        ch->busy--;
}

static const struct endings_host fleet_raw_endings_host = {
    .event = fleet_raw_endings_event_cb,
    .exchange = fleet_raw_endings_exchange_cb,
    .settled = fleet_raw_endings_settled_cb,
    .busy = fleet_raw_endings_busy_cb,
};

/* --- public ------------------------------------------------------------- */

struct fleet_raw *
fleet_raw_open(struct fleet *f, size_t i, bool sse,
    const struct fleet_raw_host *host, void *arg)
{
    const struct server_env *env = fleet_env(f);
    struct server           *s = fleet_server(f, i);
    const struct config_server *d;
    struct fleet_raw        *ch;

    if (s == NULL)
        return NULL;
    d = server_decl(s);
    if (d->invalid != NULL || d->disabled ||
        (sse && d->transport != CONFIG_HTTP))
        return NULL;
    ch = xcalloc(1, sizeof(*ch));
    ch->loop = env->loop;
    ch->server = s;
    ch->decl = d;
    ch->host = host;
    ch->arg = arg;
    ch->next_id = 1;
    ch->log_name = str_sanitized(d->name != NULL ? d->name : "?");
    ch->tenv.loop = env->loop;
    ch->tenv.curl = env->curl;
    ch->tenv.decl = d;
    ch->tenv.pool_key = i;
    ch->tenv.log = env->log;
    ch->tenv.log_name = ch->log_name;
    ch->tenv.cb = fleet_raw_transport_cb;
    ch->tenv.cb_arg = ch;
    ch->t = sse ? http_sse_new(&ch->tenv) : transport_new(&ch->tenv);
    ch->endings = endings_new(env->loop, s, &fleet_raw_endings_host, ch,
        env->log, ch->log_name);
    ev_timer_init(&ch->timer, fleet_raw_timeout_cb, 0., 0.);
    ch->timer.data = ch;
    ev_timer_init(&ch->later, fleet_raw_later_cb, 0., 0.);
    ch->later.data = ch;
    if (transport_has_raw(ch->t))
        ch->open = FLEET_RAW_OPEN;      /* nothing to open: each is a POST */
    return ch;
}

void
fleet_raw_free(struct fleet_raw *ch)
{
    if (ch == NULL)
        return;
    ev_timer_stop(ch->loop, &ch->timer);
    ev_timer_stop(ch->loop, &ch->later);
    if (ch->rx != NULL)
        transport_raw_cancel(ch->t, ch->rx);
    if (ch->req != NULL)
        transport_cancel(ch->t, ch->req, NULL);
    endings_stop(ch->endings);
    transport_free(ch->t);
    endings_free(ch->endings);
    for (int k = 0; k < ch->nsess; k++) {
        fleet_raw_wipe(ch->sess[k].id);
        free(ch->sess[k].version);
    }
    free(ch->sess);
    fleet_raw_wipe(ch->forged);
    free(ch->body);
    free(ch->version);
    free(ch->log_name);
    free(ch);
}

const char *
fleet_raw_transport(const struct fleet_raw *ch)
{
    return transport_name(ch->t);
}

bool
fleet_raw_has_raw(const struct fleet_raw *ch)
{
    return transport_has_raw(ch->t);
}

/* The static name of a method a request may name, or NULL. */
static const char *
fleet_raw_method(const char *rpc)
{
    for (size_t i = 0; i < sizeof(fleet_raw_methods) /
        sizeof(fleet_raw_methods[0]); i++) {
        if (strcmp(rpc, fleet_raw_methods[i]) == 0)
            return fleet_raw_methods[i];
    }
    return NULL;
}

/* Build the request's body into ch (id, flags, rpc). */
static void
fleet_raw_build(struct fleet_raw *ch, const struct fleet_raw_request *rq)
{
    const char *rpc = rq->rpc != NULL ? fleet_raw_method(rq->rpc) : NULL;

    ch->rpc = rpc != NULL ? rpc : "(body)";
    ch->flags = 0;
    ch->id = -1;
    if (rpc == NULL) {
        ch->body = xstrdup(rq->body != NULL ? rq->body : "");
    } else if (strcmp(rpc, "initialize") == 0) {
        ch->id = ch->next_id++;
        ch->flags = TRANSPORT_INITIALIZE;
        ch->body = jsonrpc_build_initialize(ch->id, rq->version != NULL ?
            rq->version : MCP_PROTOCOL_LATEST, "mcptop", MCPTOP_VERSION,
            NULL);
    } else if (strcmp(rpc, "server/discover") == 0) {
        ch->id = ch->next_id++;
        ch->flags = TRANSPORT_MODERN | TRANSPORT_NO_CACHE;
        ch->body = jsonrpc_build_modern(ch->id, rpc, MCP_PROTOCOL_MODERN,
            "mcptop", MCPTOP_VERSION, NULL, false, NULL);
    } else if (strncmp(rpc, "notifications/", 14) == 0) {
        ch->body = jsonrpc_build_notification(rpc, NULL);
    } else {
        ch->id = ch->next_id++;
        ch->body = jsonrpc_build_request(ch->id, rpc, NULL, NULL);
    }
    ch->len = strlen(ch->body);
    ch->timeout_ms = rq->timeout_ms > 0 ? rq->timeout_ms :
        ch->decl->timeout_ms > 0 ? ch->decl->timeout_ms :
        CONFIG_DEFAULT_TIMEOUT_MS;
    free(ch->version);
    ch->version = str_dup(rq->version);
}

/* The raw op's way (Streamable HTTP). */
static int
fleet_raw_send_raw(struct fleet_raw *ch, const struct fleet_raw_request *rq,
    char **cause)
{
    struct transport_raw_request rr = {
        .method = rq->method, .body = ch->body, .len = ch->len,
        .id = ch->id, .timeout_ms = ch->timeout_ms,
    };

    if (rq->session >= 0 && rq->session >= ch->nsess) {
        *cause = str_printf("no session %d on this channel", rq->session);
        return -1;
    }
    if (rq->session >= 0)
        rr.session_id = ch->sess[rq->session].id;
    else if (rq->session == FLEET_RAW_FORGED)
        rr.session_id = fleet_raw_forged(ch);
    if (ch->flags & TRANSPORT_MODERN) {
        /* 2026-07-28: the version and the method ride as headers. */
        rr.protocol_version = MCP_PROTOCOL_MODERN;
        rr.mcp_method = ch->rpc;
    } else if (!(ch->flags & TRANSPORT_INITIALIZE)) {
        rr.protocol_version = rq->version;
    }
    if (rq->method != HTTP_POST) {
        rr.body = NULL;
        rr.len = 0;
        rr.id = -1;
    }
    ch->inflight = true;
    ch->fresh = (ch->flags & TRANSPORT_INITIALIZE) && rr.session_id == NULL &&
        rq->method == HTTP_POST;
    ch->rx = transport_raw(ch->t, &rr, fleet_raw_raw_cb, ch, cause);
    if (ch->rx == NULL) {
        ch->inflight = false;
        ch->fresh = false;
        return -1;
    }
    return 0;
}

int
fleet_raw_send(struct fleet_raw *ch, const struct fleet_raw_request *rq,
    char **cause)
{
    struct transport_failure f;

    if (ch->inflight) {
        *cause = xstrdup("an exchange is in flight (one at a time)");
        return -1;
    }
    if (!transport_has_raw(ch->t) && (rq->method != HTTP_POST ||
        rq->rpc == NULL || fleet_raw_method(rq->rpc) == NULL)) {
        *cause = str_printf("the %s transport takes only JSON-RPC "
            "requests on its own session", transport_name(ch->t));
        return -1;
    }
    free(ch->body);
    ch->body = NULL;
    fleet_raw_build(ch, rq);
    ev_now_update(ch->loop);
    ch->sent_at = ev_now(ch->loop);
    if (transport_has_raw(ch->t)) {
        if (fleet_raw_send_raw(ch, rq, cause) != 0) {
            free(ch->body);
            ch->body = NULL;
            return -1;
        }
        return 0;
    }
    ch->inflight = true;
    ev_timer_set(&ch->timer, ch->timeout_ms / 1000.0, 0.);
    ev_timer_start(ch->loop, &ch->timer);
    switch (ch->open) {
    case FLEET_RAW_CLOSED:
        memset(&f, 0, sizeof(f));
        switch (transport_open(ch->t, &f)) {
        case 0:
            ch->open = FLEET_RAW_OPEN;
            fleet_raw_add_session(ch, NULL, NULL);     /* the child */
            fleet_raw_issue(ch);
            break;
        case 1:
            ch->open = FLEET_RAW_OPENING;
            ch->waiting = true;
            break;
        default:
            ch->open = FLEET_RAW_OPEN_FAILED;
            ch->open_f = f;
            fleet_raw_fail_later(ch, &f.evd, f.detail);
            break;
        }
        break;
    case FLEET_RAW_OPENING:
        ch->waiting = true;
        break;
    case FLEET_RAW_OPEN:
        fleet_raw_issue(ch);
        break;
    case FLEET_RAW_OPEN_FAILED:
        fleet_raw_fail_later(ch, &ch->open_f.evd, ch->open_f.detail);
        break;
    }
    return 0;
}

void
fleet_raw_cancel(struct fleet_raw *ch)
{
    if (!ch->inflight)
        return;
    ev_timer_stop(ch->loop, &ch->timer);
    ev_timer_stop(ch->loop, &ch->later);
    if (ch->rx != NULL)
        transport_raw_cancel(ch->t, ch->rx);
    if (ch->req != NULL)
        transport_cancel(ch->t, ch->req, NULL);
    ch->rx = NULL;
    ch->req = NULL;
    ch->waiting = false;
    ch->inflight = false;
}

int
fleet_raw_end(struct fleet_raw *ch, int k)
{
    struct fleet_raw_session *s;
    struct ending_run        *run;

    if (k < 0 || k >= ch->nsess || ch->sess[k].ending)
        return -1;
    s = &ch->sess[k];
    s->ending = true;
    run = endings_start(ch->endings, ch->t, ch->decl->teardown_ms > 0 ?
        ch->decl->teardown_ms : CONFIG_DEFAULT_TEARDOWN_MS, false);
    s->run = run;
    ending_run_go(run, str_dup(s->id), s->version);
    return 0;
}

size_t
fleet_raw_end_all(struct fleet_raw *ch)
{
    size_t n = 0;

    for (int k = 0; k < ch->nsess; k++) {
        if (!ch->sess[k].ending && fleet_raw_end(ch, k) == 0)
            n++;
    }
    return n;
}

void
fleet_raw_served_after(struct fleet_raw *ch, int k)
{
    if (k >= 0 && k < ch->nsess)
        ch->sess[k].served_after = true;
}

void
fleet_raw_counts(const struct fleet_raw *ch, unsigned *opened,
    unsigned *ended, unsigned *terminated)
{
    unsigned e = 0, t = 0;

    for (int k = 0; k < ch->nsess; k++) {
        if (ch->sess[k].ended && !ch->sess[k].served_after) {
            e++;
            if (ch->sess[k].terminated)
                t++;
        }
    }
    *opened = (unsigned)ch->nsess;
    *ended = e;
    *terminated = t;
}

int
fleet_raw_sessions(const struct fleet_raw *ch)
{
    return ch->nsess;
}

uint64_t
fleet_raw_session_tag(const struct fleet_raw *ch, int k)
{
    return k >= 0 && k < ch->nsess ? ch->sess[k].tag : 0;
}

bool
fleet_raw_busy(const struct fleet_raw *ch)
{
    return ch->inflight || ch->busy > 0;
}
