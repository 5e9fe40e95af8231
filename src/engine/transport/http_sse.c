/*
 * The 2024-11-05 HTTP+SSE transport (MCP 2024-11-05, basic/transports):
 * a GET opens an SSE stream whose first `endpoint` event names the URL for
 * POSTs; each POST is accepted with a 2xx and its answer comes later on
 * the stream. The stream is the session: when it ends, every request still
 * waiting for its answer has failed and the connection is lost.
 *
 * What must never happen here: an event emitted from inside a libcurl
 * callback (queued for the loop instead).
 */
#include "transport/transport.h"

#include <stdlib.h>
#include <string.h>

#include "transport/ending_run.h"
#include "engine/http.h"
#include "core/jsonrpc.h"
#include "transport/http_judge.h"
#include "util/str.h"
#include "util/xmalloc.h"

struct http_sse_transport;

/* One POST (a message) in flight, or the stream itself. */
struct http_sse_req {
    struct http_sse_transport *t;
    struct http_sse_req   *next;
    void                  *owner;
    int64_t                id;
    const char            *method;
    struct http_xfer      *xfer;
    struct jsonrpc_msg    *answer;      /* arrived on the stream */
    bool                   posted;      /* the POST was accepted */
    bool                   queued;      /* DONE is queued */
};

/* The interface's opaque request is this transport's own. */
static struct http_sse_req *
http_sse_req_of(struct transport_req *tr)
{
    return (struct http_sse_req *)tr;
}

struct http_sse_transport {
    struct transport       base;
    struct http_xfer      *stream;
    bool                   opened;      /* the stream's 2xx headers */
    bool                   ready;       /* the endpoint is known */
    char                  *endpoint;
    bool                   refused;     /* it named another origin */
    struct transport_failure refusal;
    char                  *protocol_version;
    bool                   used;
    struct http_sse_req   *reqs;
    struct transport_queue queue;      /* events for the loop */
};

/* The interface's transport is this one (base is its first member). Takes
 * a const transport too, for the const ops, which keep the result const. */
static inline struct http_sse_transport *
http_sse_of(const struct transport *t)
{
    return (struct http_sse_transport *)t;
}

static void http_sse_flush(struct http_sse_transport *t);

static void
http_sse_queue(struct http_sse_transport *t, enum transport_event_type type,
    struct http_sse_req *req, struct jsonrpc_msg *msg)
{
    transport_queue_push(&t->queue, type, NULL, msg)->req = req;
}

static bool
http_sse_drop_match(const struct transport_pending *p, const void *arg)
{
    return arg == NULL || p->req == arg;
}

/* Drop queued events of one request, or all (NULL). */
static void
http_sse_unqueue(struct http_sse_transport *t, struct http_sse_req *req)
{
    transport_queue_drop(&t->queue, http_sse_drop_match, req);
}

static void
http_sse_req_free(struct http_sse_transport *t, struct http_sse_req *r,
    struct failure_evidence *evd_out)
{
    for (struct http_sse_req **pp = &t->reqs; *pp != NULL;
        pp = &(*pp)->next) {
        if (*pp == r) {
            *pp = r->next;
            break;
        }
    }
    if (r->xfer != NULL)
        http_xfer_abort(r->xfer, evd_out);
    jsonrpc_free(r->answer);
    free(r);
}

/* A request's answer came on the stream: hand it up. */
static void
http_sse_req_answered(struct http_sse_transport *t, struct http_sse_req *r)
{
    struct transport_result out = { .retry_after_s = -1 };
    struct transport_event  e = { .type = TRANSPORT_DONE,
                                  .owner = r->owner, .result = &out };

    out.answer = r->answer;
    r->answer = NULL;
    out.f.evd.http_status = 200;
    out.f.evd.content_json = true;
    http_sse_req_free(t, r, NULL);
    transport_emit(&t->base, &e);
    jsonrpc_free(out.answer);
}

static void
http_sse_defer_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
    (void)loop;
    (void)revents;
    http_sse_flush(w->data);
}

static void
http_sse_flush(struct http_sse_transport *t)
{
    struct transport_pending *p;

    transport_queue_stop(&t->queue);
    while ((p = transport_queue_pop(&t->queue)) != NULL) {
        struct transport_event e = { .type = p->type, .msg = p->msg };

        if (p->type == TRANSPORT_DONE)
            http_sse_req_answered(t, p->req);
        else
            transport_emit(&t->base, &e);
        transport_pending_free(p);
    }
}

/* --- the stream --------------------------------------------------------- */

/* http_callbacks.on_headers (stream) */
static int
http_sse_stream_headers_cb(void *arg, struct http_xfer *hx, long status,
    const char *content_type)
{
    struct http_sse_transport *t = arg;

    (void)hx;
    (void)content_type;
    if (status >= 200 && status < 300)
        t->opened = true;
    return 0;
}

/* http_callbacks.on_message (stream): the endpoint, answers, messages. */
static int
http_sse_stream_message_cb(void *arg, struct http_xfer *hx, const char *type,
    const char *data, size_t len)
{
    struct http_sse_transport *t = arg;
    struct jsonrpc_msg        *m;
    struct http_sse_req       *r;

    (void)hx;
    if (strcmp(type, "endpoint") == 0) {
        char *ref = str_ndup(data, len);

        free(t->endpoint);
        t->endpoint = http_resolve_url(t->base.env->decl->url, ref);
        free(ref);
        if (t->endpoint != NULL &&
            !http_same_origin(t->endpoint, t->base.env->decl->url)) {
            /* Nothing, and no header, goes to another origin. */
            char                   *origin = http_url_origin(t->endpoint);
            struct failure_evidence evd = { .foreign_url = true,
                                           .http_status = 200,
                                           .content_sse = true,
                                           .phase = FAILURE_PHASE_RESPONSE,
                                           .response_bytes = 1 };

            transport_failure_set(&t->refusal, &evd, "the HTTP+SSE stream "
                "named an endpoint on another origin (%s); refused, nothing "
                "sent there", origin != NULL ? origin : "unparsable");
            free(origin);
            free(t->endpoint);
            t->endpoint = NULL;
            t->refused = true;
            return 1;
        }
        if (t->endpoint != NULL && !t->ready) {
            t->ready = true;
            http_sse_queue(t, TRANSPORT_READY, NULL, NULL);
        }
        return 0;
    }
    if (strcmp(type, "message") != 0 || len == 0)
        return 0;
    m = jsonrpc_parse(data, len, NULL);
    if (m == NULL)
        return 0;
    if (jsonrpc_kind(m) == JSONRPC_RESULT ||
        jsonrpc_kind(m) == JSONRPC_ERROR) {
        for (r = t->reqs; r != NULL; r = r->next) {
            if (r->id >= 0 && r->answer == NULL && jsonrpc_id_is(m, r->id))
                break;
        }
        if (r != NULL) {
            r->answer = m;
            if (r->xfer == NULL && !r->queued) {
                r->queued = true;
                http_sse_queue(t, TRANSPORT_DONE, r, NULL);
            }
            return 0;
        }
        /* An answer to no request in flight goes up as it is: the
         * lifecycle knows which ids were ever ours (issue 26, item 8). */
    }
    http_sse_queue(t, TRANSPORT_MESSAGE, NULL, m);
    return 0;
}

/* Every request still waiting for its answer has lost it. */
static void
http_sse_fail_waiting(struct http_sse_transport *t)
{
    for (;;) {
        struct http_sse_req    *r;
        struct transport_result out = { .retry_after_s = -1, .failed = true };
        struct transport_event  e = { .type = TRANSPORT_DONE,
                                      .result = &out };

        for (r = t->reqs; r != NULL; r = r->next) {
            if (r->posted && r->answer == NULL)
                break;
        }
        if (r == NULL)
            break;
        out.f.evd.stream_ended = true;
        out.f.evd.http_status = 200;
        out.f.evd.content_sse = true;
        snprintf(out.f.detail, sizeof(out.f.detail), "the HTTP+SSE stream "
            "ended before the answer");
        e.owner = r->owner;
        http_sse_req_free(t, r, NULL);
        transport_emit(&t->base, &e);
    }
}

/* http_callbacks.on_done (stream): the session is over. */
static void
http_sse_stream_done_cb(void *arg, struct http_xfer *hx,
    const struct http_result *res)
{
    struct http_sse_transport *t = arg;
    struct transport_failure   f;
    struct transport_event     e = { .failure = &f };
    bool                       opened = t->opened;

    (void)hx;
    t->stream = NULL;
    t->used = true;
    http_sse_flush(t);
    if (t->refused) {
        t->refused = false;
        t->opened = false;
        e.failure = &t->refusal;
        e.opened = opened;
        e.type = t->ready ? TRANSPORT_LOST : TRANSPORT_OPEN_FAILED;
        if (t->ready) {
            t->ready = false;
            http_sse_fail_waiting(t);
        }
        transport_emit(&t->base, &e);
        return;
    }
    f.evd = res->evd;
    if (res->evd.net != NET_OK && !res->completed) {
        http_judge_net(res, f.detail, sizeof(f.detail));
        /* The session's own stream was cut: its transport closed. */
        f.evd.stream_ended = opened && res->status >= 200 &&
            res->status < 300;
        if (f.evd.stream_ended)
            f.evd.net = NET_OK;
    } else if (res->status < 200 || res->status >= 300) {
        http_judge_status(res, &f.evd, -1, "the HTTP+SSE stream", f.detail,
            sizeof(f.detail), NULL);
    } else {
        f.evd.stream_ended = opened;
        f.evd.no_matching_response = !opened;
        snprintf(f.detail, sizeof(f.detail), "the HTTP+SSE stream ended");
    }
    t->opened = false;
    if (!t->ready) {
        e.type = TRANSPORT_OPEN_FAILED;
        e.opened = opened;
        transport_emit(&t->base, &e);
        return;
    }
    t->ready = false;
    http_sse_fail_waiting(t);
    e.type = TRANSPORT_LOST;
    transport_emit(&t->base, &e);
}

static const struct http_callbacks http_sse_stream_cb = {
    .on_headers = http_sse_stream_headers_cb,
    .on_message = http_sse_stream_message_cb,
    .on_done = http_sse_stream_done_cb,
};

/* A request to this server with its configured headers, bounds and TLS
 * settings; the caller adds the body. */
static struct http_request
http_sse_request(const struct http_sse_transport *t, enum http_method method,
    const char *url)
{
    const struct config_server *d = t->base.env->decl;

    return (struct http_request){
        .method = method,
        .url = url,
        .headers = d->headers,
        .nheaders = d->nheaders,
        .max_bytes = d->max_message_bytes,
        .ca_file = d->ca_file,
        .tls_insecure = d->tls_insecure,
        .maybe_resent = t->used,
        .pool_key = t->base.env->pool_key,
        .cert_info = true,
    };
}

/* GET the stream; its first event names the endpoint for POSTs. */
static int
http_sse_open(struct transport *base, struct transport_failure *f)
{
    struct http_sse_transport *t = http_sse_of(base);
    struct http_request        rq = http_sse_request(t, HTTP_GET,
                                                     base->env->decl->url);
    char                      *cause = NULL;

    if (t->stream != NULL) {
        http_xfer_abort(t->stream, NULL);
        t->stream = NULL;
    }
    free(t->endpoint);
    t->endpoint = NULL;
    t->ready = false;
    t->opened = false;
    t->refused = false;
    t->stream = http_start(base->env->curl, &rq, &http_sse_stream_cb, t,
        &cause);
    if (t->stream == NULL) {
        struct failure_evidence evd = { .net = NET_OTHER };

        transport_failure_set(f, &evd, "%s", cause);
        free(cause);
        return -1;
    }
    transport_log(base, "era: trying the 2024-11-05 HTTP+SSE transport");
    return 1;
}

/* --- messages ----------------------------------------------------------- */

/* http_callbacks.on_done (a POST): accepted, or failed. */
static void
http_sse_post_done_cb(void *arg, struct http_xfer *hx,
    const struct http_result *res)
{
    struct http_sse_req       *r = arg;
    struct http_sse_transport *t = r->t;
    struct transport_result    out = { .retry_after_s = res->retry_after_s };
    struct transport_event     e = { .type = TRANSPORT_DONE, .owner = r->owner,
                                     .result = &out };
    struct jsonrpc_msg        *none = NULL;

    (void)hx;
    r->xfer = NULL;
    t->used = true;
    http_sse_flush(t);
    if (r->answer != NULL) {
        /* The answer already came on the stream: that is the result. */
        http_sse_req_answered(t, r);
        return;
    }
    if (r->id >= 0 && res->completed && res->status >= 200 &&
        res->status < 300) {
        /* Accepted: the answer comes on the stream, within the request's
         * own timeout. */
        r->posted = true;
        return;
    }
    out.failed = http_judge_post(res, r->id, r->method,
        t->base.env->decl->max_message_bytes, NULL, &none, &out.f);
    if (!out.failed && none == NULL)
        out.accepted = true;
    out.answer = none;
    http_sse_req_free(t, r, NULL);
    transport_emit(&t->base, &e);
    jsonrpc_free(out.answer);
}

static const struct http_callbacks http_sse_post_cb = {
    .on_done = http_sse_post_done_cb,
};

static struct transport_req *
http_sse_send(struct transport *base, const struct transport_msg *m,
    void *owner, char **cause)
{
    struct http_sse_transport *t = http_sse_of(base);
    struct http_sse_req       *r;
    struct http_request        rq = http_sse_request(t, HTTP_POST,
                                                     t->endpoint);

    if (t->endpoint == NULL) {
        *cause = xstrdup("the HTTP+SSE stream named no endpoint yet");
        return NULL;
    }
    rq.body = m->body;
    rq.body_len = m->len;
    if (!(m->flags & TRANSPORT_INITIALIZE))
        rq.protocol_version = t->protocol_version;
    r = xcalloc(1, sizeof(*r));
    r->t = t;
    r->owner = owner;
    r->id = m->id;
    r->method = m->method;
    r->xfer = http_start(base->env->curl, &rq, &http_sse_post_cb, r, cause);
    if (r->xfer == NULL) {
        free(r);
        return NULL;
    }
    r->next = t->reqs;
    t->reqs = r;
    transport_log(base, "POST %s id=%lld", m->method, (long long)m->id);
    return (struct transport_req *)r;
}

static void
http_sse_cancel(struct transport *base, struct transport_req *tr,
    struct failure_evidence *evd_out)
{
    struct http_sse_req       *r = http_sse_req_of(tr);
    struct http_sse_transport *t = http_sse_of(base);

    http_sse_unqueue(t, r);
    http_sse_req_free(t, r, evd_out);
}

static void
http_sse_peek(struct transport *base, struct transport_req *tr,
    struct failure_evidence *evd_out)
{
    struct http_sse_req *r = http_sse_req_of(tr);
    (void)base;
    if (r->xfer != NULL)
        http_xfer_peek(r->xfer, evd_out);
}

/* --- the session: the stream itself; no id to end ----------------------- */

static void
http_sse_adopt(struct transport *base, char *session,
    const char *protocol_version)
{
    struct http_sse_transport *t = http_sse_of(base);

    free(session);
    free(t->protocol_version);
    t->protocol_version = str_dup(protocol_version);
}

static char *
http_sse_release(struct transport *base)
{
    (void)base;
    return NULL;
}

static bool
http_sse_has_session(const struct transport *base)
{
    (void)base;
    return false;
}

static void
http_sse_session_prefix(const struct transport *base, char *buf, size_t n)
{
    (void)base;
    if (n > 0)
        buf[0] = '\0';
}

static bool
http_sse_alive(const struct transport *base)
{
    (void)base;
    return true;
}

static void
http_sse_close(struct transport *base)
{
    struct http_sse_transport *t = http_sse_of(base);

    transport_queue_stop(&t->queue);
    http_sse_unqueue(t, NULL);
    while (t->reqs != NULL)
        http_sse_req_free(t, t->reqs, NULL);
    if (t->stream != NULL) {
        http_xfer_abort(t->stream, NULL);
        t->stream = NULL;
    }
    free(t->endpoint);
    t->endpoint = NULL;
    t->ready = false;
    t->opened = false;
}

static void
http_sse_abandon(struct transport *base)
{
    struct http_sse_transport *t = http_sse_of(base);

    /* The lifecycle has cancelled its requests: only the stream is left. */
    if (t->stream != NULL) {
        http_xfer_abort(t->stream, NULL);
        t->stream = NULL;
    }
    t->ready = false;
    t->opened = false;
}

static void
http_sse_end(struct transport *base, struct ending_run *run, char *session,
    const char *protocol_version)
{
    struct http_sse_transport *t = http_sse_of(base);

    (void)protocol_version;
    free(session);
    /* Closing the stream is the whole ending (2024-11-05 has no DELETE:
     * the session is the stream); nothing is sent. The requests on it
     * are the lifecycle's to cancel. */
    if (t->stream != NULL) {
        http_xfer_abort(t->stream, NULL);
        t->stream = NULL;
        ending_run_outcome(run, ENDING_STREAM_CLOSED, "the HTTP+SSE "
            "session's stream was closed: that transport has no DELETE, "
            "and its session ends with its stream");
    } else {
        ending_run_outcome(run, ENDING_NO_SESSION, NULL);
    }
    t->ready = false;
    t->opened = false;
    ending_run_settle(run);
}

static void
http_sse_end_deadline(struct transport *base, struct ending_run *run)
{
    (void)base;
    (void)run;
}

static void
http_sse_free(struct transport *base)
{
    struct http_sse_transport *t = http_sse_of(base);

    if (t == NULL)
        return;
    http_sse_close(base);
    free(t->protocol_version);
    free(t);
}

static const struct transport_ops http_sse_ops = {
    .name = "sse",
    .caps = 0,
    .open = http_sse_open,
    .send = http_sse_send,
    .cancel = http_sse_cancel,
    .peek = http_sse_peek,
    .adopt = http_sse_adopt,
    .release = http_sse_release,
    .has_session = http_sse_has_session,
    .session_prefix = http_sse_session_prefix,
    .alive = http_sse_alive,
    .abandon = http_sse_abandon,
    .end = http_sse_end,
    .end_deadline = http_sse_end_deadline,
    .close = http_sse_close,
    .free = http_sse_free,
};

struct transport *
http_sse_new(const struct transport_env *env)
{
    struct http_sse_transport *t = xcalloc(1, sizeof(*t));

    t->base.ops = &http_sse_ops;
    t->base.env = env;
    transport_queue_init(&t->queue, env->loop, http_sse_defer_cb, t);
    return &t->base;
}
