/*
 * Streamable HTTP's raw exchanges (MCP 2025-11-25 basic/transports): the
 * transport's `raw` op, for the session-hygiene audit (fleet_raw.c). One
 * request shaped by the caller goes to the transport's endpoint with the
 * declaration's headers (and the cached OAuth token, if any): a POST of a
 * body as it is, a GET, a HEAD, an OPTIONS, carrying the session id it is
 * given or none. What comes back is reported, not judged: the status, the
 * content type, the Mcp-Session-Id the answer carried, the JSON-RPC
 * response with the request's id (or an error with a null id). A GET,
 * HEAD or OPTIONS stops at its headers: a stream it opens is closed at
 * once. No redirect is followed and no authorization is asked for.
 *
 * What must never happen here: a callback up from inside a libcurl
 * callback (the answer is kept and reported from on_done or the timer),
 * or a session id in a log line.
 */
#include "transport/transport.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/jsonrpc.h"
#include "transport/http_judge.h"
#include "util/xmalloc.h"

struct transport_raw {
    struct transport   *t;
    struct http_xfer   *xfer;
    ev_timer            timer;      /* the exchange's bound */
    ev_tstamp           started;
    transport_raw_cb    cb;
    void               *arg;
    int64_t             id;
    enum http_method    method;
    long                timeout_ms;
    struct jsonrpc_msg *answer;     /* from an SSE event */
};

/* Is m what answers the exchange: a response with its id, or an error
 * whose id is null? */
static bool
http_raw_answers(const struct transport_raw *x, const struct jsonrpc_msg *m)
{
    enum jsonrpc_kind k = jsonrpc_kind(m);

    if (k == JSONRPC_ERROR && jsonrpc_id_is_null(m))
        return true;
    return x->id >= 0 && (k == JSONRPC_RESULT || k == JSONRPC_ERROR) &&
        jsonrpc_id_is(m, x->id);
}

/* http_callbacks.on_headers: a GET, HEAD or OPTIONS has its answer. */
static int
http_raw_headers_cb(void *arg, struct http_xfer *hx, long status,
    const char *content_type)
{
    struct transport_raw *x = arg;

    (void)hx;
    (void)status;
    (void)content_type;
    return x->method != HTTP_POST;
}

/* http_callbacks.on_message: one SSE event of a POST's answer. Non-zero
 * stops the transfer once the answer is in. */
static int
http_raw_message_cb(void *arg, struct http_xfer *hx, const char *type,
    const char *data, size_t len)
{
    struct transport_raw *x = arg;
    struct jsonrpc_msg   *m;

    (void)hx;
    if (x->answer != NULL || strcmp(type, "message") != 0 || len == 0)
        return 0;
    m = jsonrpc_parse(data, len, NULL);
    if (m == NULL)
        return 0;
    if (!http_raw_answers(x, m)) {
        jsonrpc_free(m);
        return 0;
    }
    x->answer = m;
    return 1;
}

static void http_raw_done_cb(void *arg, struct http_xfer *hx,
    const struct http_result *res);

static const struct http_callbacks http_raw_http_cb = {
    .on_headers = http_raw_headers_cb,
    .on_message = http_raw_message_cb,
    .on_done = http_raw_done_cb,
};

/* Report r and free the exchange: nothing of x is touched after cb. */
static void
http_raw_finish(struct transport_raw *x, struct transport_raw_result *r)
{
    transport_raw_cb cb = x->cb;
    void            *arg = x->arg;

    ev_timer_stop(x->t->env->loop, &x->timer);
    ev_now_update(x->t->env->loop);
    r->ms = (ev_now(x->t->env->loop) - x->started) * 1000.0;
    x->answer = NULL;
    free(x);
    cb(arg, r);
    jsonrpc_free(r->answer);
}

/* http_callbacks.on_done: the transfer ended (or was stopped at its
 * headers or its answer). */
static void
http_raw_done_cb(void *arg, struct http_xfer *hx,
    const struct http_result *res)
{
    struct transport_raw       *x = arg;
    struct transport_raw_result r = { .answer = x->answer };

    (void)hx;
    x->xfer = NULL;
    r.f.evd = res->evd;
    r.status = res->status;
    r.answered = res->status != 0;
    r.event_stream = res->content_type != NULL &&
        strncasecmp(res->content_type, "text/event-stream", 17) == 0;
    r.session_id = res->session_id;
    if (r.answer == NULL && !r.event_stream && res->body != NULL &&
        res->body_len > 0) {
        struct jsonrpc_msg *m = jsonrpc_parse(res->body, res->body_len,
            NULL);

        if (m != NULL && http_raw_answers(x, m))
            r.answer = m;
        else
            jsonrpc_free(m);
    }
    if (!r.answered)
        http_judge_net(res, r.f.detail, sizeof(r.f.detail));
    else if (res->status >= 300)
        http_judge_status(res, &r.f.evd, x->id, http_method_name(x->method),
            r.f.detail, sizeof(r.f.detail), NULL);
    http_raw_finish(x, &r);
}

/* ev_timer: the exchange's bound passed: abort it, report a timeout. */
static void
http_raw_timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct transport_raw       *x = w->data;
    struct transport_raw_result r = { .answer = NULL };

    (void)loop;
    (void)revents;
    if (x->xfer != NULL)
        http_xfer_abort(x->xfer, &r.f.evd);
    x->xfer = NULL;
    r.status = r.f.evd.http_status;
    r.f.evd.net = NET_OK;
    r.f.evd.timer = FAILURE_TIMER_REQUEST;
    snprintf(r.f.detail, sizeof(r.f.detail), "no answer to the %s within "
        "%ld ms", http_method_name(x->method), x->timeout_ms);
    jsonrpc_free(x->answer);
    x->answer = NULL;
    http_raw_finish(x, &r);
}

struct transport_raw *
http_raw_start(struct transport *t, const struct transport_raw_request *rq,
    transport_raw_cb cb, void *arg, char **cause)
{
    const struct config_server *d = t->env->decl;
    struct transport_raw       *x = xcalloc(1, sizeof(*x));
    const char                 *authz = NULL;
    struct http_request         hr = {
        .method = rq->method,
        .url = d->url,
        .body = rq->body,
        .body_len = rq->len,
        .headers = d->headers,
        .nheaders = d->nheaders,
        .session_id = rq->session_id,
        .protocol_version = rq->protocol_version,
        .mcp_method = rq->mcp_method,
        .pool_key = t->env->pool_key,
        .max_bytes = d->max_message_bytes,
        .ca_file = d->ca_file,
        .tls_insecure = d->tls_insecure,
        .maybe_resent = true,
    };

    if (transport_query(t, TRANSPORT_Q_AUTHORIZATION, &authz) == 0)
        hr.authorization = authz;
    if (hr.body == NULL)
        hr.body = "";
    x->t = t;
    x->cb = cb;
    x->arg = arg;
    x->id = rq->id;
    x->method = rq->method;
    x->timeout_ms = rq->timeout_ms > 0 ? rq->timeout_ms :
        CONFIG_DEFAULT_TIMEOUT_MS;
    x->xfer = http_start(t->env->curl, &hr, &http_raw_http_cb, x, cause);
    if (x->xfer == NULL) {
        free(x);
        return NULL;
    }
    ev_now_update(t->env->loop);
    x->started = ev_now(t->env->loop);
    ev_timer_init(&x->timer, http_raw_timeout_cb, x->timeout_ms / 1000.0,
        0.);
    x->timer.data = x;
    ev_timer_start(t->env->loop, &x->timer);
    transport_log(t, "raw %s%s%s%s", http_method_name(rq->method),
        rq->session_id != NULL ? " with a session id" : " without a session "
        "id", rq->mcp_method != NULL ? ", Mcp-Method " : "",
        rq->mcp_method != NULL ? rq->mcp_method : "");
    return x;
}

void
http_raw_cancel(struct transport *t, struct transport_raw *x)
{
    if (x == NULL)
        return;
    ev_timer_stop(t->env->loop, &x->timer);
    if (x->xfer != NULL)
        http_xfer_abort(x->xfer, NULL);
    jsonrpc_free(x->answer);
    free(x);
}
