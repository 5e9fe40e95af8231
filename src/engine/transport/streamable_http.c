/*
 * The Streamable HTTP transport (MCP 2025-03-26 .. 2025-11-25 and
 * 2026-07-28, basic/transports): each message is a POST whose answer is
 * JSON or an SSE stream; the optional GET stream carries server-initiated
 * messages; a DELETE ends a session.
 *
 * It owns the session: the Mcp-Session-Id a 2xx answer to initialize
 * issued (handed up, then adopted or ended by the lifecycle) and the
 * MCP-Protocol-Version agreed. It sends neither on initialize, and the
 * 2026-07-28 headers (MCP-Protocol-Version, Mcp-Method) on modern
 * requests. What comes back is read and judged by streamable_http_answer.c
 * (a POST's SSE events, its answer handed up early, whether to resume, a
 * finished POST or GET stream), which calls nothing of this file: what
 * goes up, when, and the requests' lifetime are this file's. The parts
 * both share are in streamable_http_int.h.
 *
 * What must never happen here: an event emitted from inside a libcurl
 * callback (what arrives there is queued and emitted from the loop), or a
 * session id in a log line.
 */
#include "transport/streamable_http_int.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "transport/ending_run.h"
#include "engine/http.h"
#include "core/jsonrpc.h"
#include "engine/oauth.h"
#include "transport/http_judge.h"
#include "util/str.h"
#include "util/xmalloc.h"


static void streamable_http_flush(struct streamable_http_transport *t);
static void streamable_http_destroy(struct streamable_http_transport *t);
static void streamable_http_hand_up(struct streamable_http_transport *t,
    struct streamable_http_req *r, const struct http_result *res);
static int streamable_http_issue(struct streamable_http_transport *t,
    struct streamable_http_req *r, char **cause);

/* Around anything that may hand events up: the lifecycle may free the
 * transport, or cancel a request, from inside an event. leave is true
 * when t is gone. */
static void
streamable_http_enter(struct streamable_http_transport *t)
{
    t->depth++;
}

static bool
streamable_http_leave(struct streamable_http_transport *t)
{
    if (--t->depth == 0 && t->dead) {
        streamable_http_destroy(t);
        return true;
    }
    return false;
}

/* Wipe and free a string that holds a secret (NULL: nothing). */
static void
streamable_http_wipe(char *secret)
{
    if (secret != NULL) {
        memset(secret, 0, strlen(secret));
        free(secret);
    }
}

/* ev_prepare: emit what was queued, in order, before the loop blocks (no
 * extra wake-up, unlike a zero-second timer). */
static void
streamable_http_defer_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
    struct streamable_http_transport *t = w->data;

    (void)loop;
    (void)revents;
    streamable_http_enter(t);
    streamable_http_flush(t);
    streamable_http_leave(t);
}


static void
streamable_http_flush(struct streamable_http_transport *t)
{
    struct transport_pending *p;

    transport_queue_stop(&t->queue);
    while ((p = transport_queue_pop(&t->queue)) != NULL) {
        struct transport_event e = { .type = p->type, .owner = p->owner,
                                     .msg = p->msg };

        if (p->type == TRANSPORT_DONE)
            streamable_http_hand_up(t, p->req, NULL);
        else
            transport_emit(&t->base, &e);
        transport_pending_free(p);
        if (t->dead)
            break;
    }
}

struct streamable_http_drop {
    void *owner;
    bool  all;
};

static bool
streamable_http_drop_match(const struct transport_pending *p, const void *arg)
{
    const struct streamable_http_drop *d = arg;

    return d->all || (d->owner != NULL && p->owner == d->owner &&
        p->type != TRANSPORT_MESSAGE) || (d->owner == NULL &&
        p->type == TRANSPORT_STREAM_OPEN && p->owner == NULL);
}

/* Drop queued events of one owner (it was cancelled), the GET stream's
 * opening (owner NULL), or all. */
static void
streamable_http_unqueue(struct streamable_http_transport *t, void *owner,
    bool all)
{
    struct streamable_http_drop d = { owner, all };

    transport_queue_drop(&t->queue, streamable_http_drop_match, &d);
    transport_queue_disown(&t->queue, owner);   /* the messages kept */
}

static bool
streamable_http_drop_req(const struct transport_pending *p, const void *arg)
{
    return p->req == arg;
}

static void
streamable_http_unlink(struct streamable_http_transport *t,
    struct streamable_http_req *r)
{
    for (struct streamable_http_req **pp = &t->reqs; *pp != NULL;
        pp = &(*pp)->next) {
        if (*pp == r) {
            *pp = r->next;
            break;
        }
    }
    if (t->stream == r)
        t->stream = NULL;
}

/* Unlink and free r; aborts its transfer when it still runs (evd_out, may
 * be NULL, gets how far it got). */
static void
streamable_http_req_free(struct streamable_http_transport *t,
    struct streamable_http_req *r, struct failure_evidence *evd_out)
{
    if (r->gone)
        return;
    streamable_http_unlink(t, r);
    oauth_forget(t->oauth, r);
    ev_timer_stop(t->base.env->loop, &r->drain);
    ev_timer_stop(t->base.env->loop, &r->resume);
    free(r->resume_id);
    r->resume_id = NULL;
    if (r->answered && !r->draining) {
        /* Its answer is still queued: it goes with the request. */
        transport_queue_drop(&t->queue, streamable_http_drop_req, r);
    }
    if (r->xfer != NULL)
        http_xfer_abort(r->xfer, evd_out);
    r->xfer = NULL;
    jsonrpc_free(r->answer);
    r->answer = NULL;
    streamable_http_wipe(r->delete_id);
    r->delete_id = NULL;
    free(r->delete_pv);
    free(r->body);
    free(r->url);
    if (r->in_done) {
        /* Its transfer's on_done is running: freed when that returns. */
        r->gone = true;
        r->delete_pv = r->body = r->url = NULL;
        return;
    }
    free(r);
}

/* --- libcurl callbacks: record and queue only ---------------------------- */

/* http_callbacks.on_headers: a stream is open at its 2xx headers; the
 * GET's only when they say text/event-stream (a 200 with JSON or nothing
 * is the server saying it has no stream for us). */
static int
streamable_http_headers_cb(void *arg, struct http_xfer *hx, long status,
    const char *content_type)
{
    struct streamable_http_req *r = arg;
    bool                        sse = content_type != NULL &&
        strncasecmp(content_type, "text/event-stream", 17) == 0;

    (void)hx;
    if ((r->is_get ? sse : (r->flags & TRANSPORT_STREAMING) != 0) &&
        status >= 200 && status < 300 && !r->opened) {
        r->opened = true;
        transport_queue_push(&r->t->queue, TRANSPORT_STREAM_OPEN,
            r->is_get ? NULL : r->owner, NULL);
    }
    return 0;
}

/* http_callbacks.on_activity: bytes on a stream, comments included. */
static void
streamable_http_activity_cb(void *arg, struct http_xfer *hx)
{
    struct streamable_http_req *r = arg;

    (void)hx;
    if (r->is_get || (r->flags & TRANSPORT_STREAMING))
        r->t->activity = ev_now(r->t->base.env->loop);
}

static void streamable_http_done_cb(void *arg, struct http_xfer *hx,
    const struct http_result *res);

static const struct http_callbacks streamable_http_http_cb = {
    .on_headers = streamable_http_headers_cb,
    .on_message = streamable_http_answer_message_cb,
    .on_activity = streamable_http_activity_cb,
    .on_done = streamable_http_done_cb,
};

/* --- what comes back: handed up (read by streamable_http_answer.c) ------ */

/* ev_timer: the rest of an answered response took too long: aborted (its
 * connection is not kept). */
static void
streamable_http_drain_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct streamable_http_req *r = w->data;

    (void)loop;
    (void)revents;
    streamable_http_req_free(r->t, r, NULL);
}

/*
 * A POST's SSE answer arrived: hand it up now. The request then has no
 * owner; what is left of the response is read to its end (bounded by
 * STREAMABLE_HTTP_DRAIN_S), so libcurl keeps the connection. res is the
 * finished transfer's result, or NULL while it still runs.
 */
static void
streamable_http_hand_up(struct streamable_http_transport *t,
    struct streamable_http_req *r, const struct http_result *res)
{
    struct transport_result out;
    struct transport_event  e = { .type = TRANSPORT_DONE,
                                  .owner = r->owner, .result = &out };

    streamable_http_answer_early(t, r, res, &out);
    r->draining = true;
    r->owner = NULL;
    if (r->xfer != NULL) {
        ev_timer_init(&r->drain, streamable_http_drain_cb,
            STREAMABLE_HTTP_DRAIN_S, 0.);
        r->drain.data = r;
        ev_timer_start(t->base.env->loop, &r->drain);
    }
    transport_emit(&t->base, &e);
    jsonrpc_free(out.answer);
    streamable_http_wipe(out.session);
}

/* ev_timer: the server's retry passed: resume the answer stream. */
static void
streamable_http_resume_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct streamable_http_req       *r = w->data;
    struct streamable_http_transport *t = r->t;
    char                             *cause = NULL;

    (void)loop;
    (void)revents;
    r->resuming = true;
    r->resumes++;
    transport_log(&t->base, "%s: resuming its answer stream (GET, "
        "Last-Event-ID)", r->method);
    if (streamable_http_issue(t, r, &cause) != 0) {
        struct transport_result out;
        struct transport_event  e = { .type = TRANSPORT_DONE,
                                      .owner = r->owner, .result = &out };

        streamable_http_answer_unresumed(r, cause, &out);
        free(cause);
        streamable_http_req_free(t, r, NULL);
        streamable_http_enter(t);
        transport_emit(&t->base, &e);
        streamable_http_leave(t);
    }
}

/* A POST finished: resumed later, or its answer or failure goes up. */
static void
streamable_http_post_done(struct streamable_http_transport *t,
    struct streamable_http_req *r, const struct http_result *res)
{
    struct transport_result out;
    struct transport_event  e = { .type = TRANSPORT_DONE,
                                  .owner = r->owner, .result = &out };
    double                  delay = streamable_http_answer_resume_delay(r,
                                        res);

    if (delay >= 0) {
        ev_timer_init(&r->resume, streamable_http_resume_cb, delay, 0.);
        r->resume.data = r;
        ev_timer_start(t->base.env->loop, &r->resume);
        transport_log(&t->base, "%s: the answer stream ended after event "
            "id; resuming in %.0f ms", r->method, delay * 1000.0);
        return;
    }
    streamable_http_answer_post(t, r, res, &out);
    streamable_http_req_free(t, r, NULL);
    transport_emit(&t->base, &e);
    jsonrpc_free(out.answer);
    streamable_http_wipe(out.session);
}

/* The GET stream ended. */
static void
streamable_http_stream_done(struct streamable_http_transport *t,
    struct streamable_http_req *r, const struct http_result *res)
{
    struct transport_failure f;
    struct transport_event   e;

    streamable_http_answer_stream(t, r, res, &e, &f);
    streamable_http_req_free(t, r, NULL);
    transport_emit(&t->base, &e);
}

/* --- requests ----------------------------------------------------------- */

/* The server's OAuth state (568 bytes), made on first use: for a server
 * that declares "oauth" or may have a token in the file, or at its first
 * challenge; NULL for one that never needs it, or never may have it (its
 * own Authorization header, not HTTP). */
static struct oauth *
streamable_http_oauth(struct streamable_http_transport *t, bool challenged)
{
    const struct transport_env *env = t->base.env;

    if (t->oauth == NULL && !t->oauth_never &&
        (challenged || oauth_wanted(env->decl))) {
        t->oauth = oauth_new(env->loop, env->curl, env->decl, env->pool_key,
            env->log);
        t->oauth_never = t->oauth == NULL;
    }
    return t->oauth;
}

/* Start r's transfer, as its fields say: a POST of its body, the GET
 * stream or a DELETE, to r->url. 0, or -1 with *cause. */
static int
streamable_http_issue(struct streamable_http_transport *t,
    struct streamable_http_req *r, char **cause)
{
    const struct config_server *d = t->base.env->decl;
    struct http_request         rq = {
        .method = r->run != NULL ? HTTP_DELETE : r->is_get || r->resuming ?
            HTTP_GET : HTTP_POST,
        .url = r->url,
        .headers = d->headers,
        .nheaders = d->nheaders,
        .max_bytes = d->max_message_bytes,
        .ca_file = d->ca_file,
        .tls_insecure = d->tls_insecure,
        .maybe_resent = t->used || r->run != NULL,
        .pool_key = t->base.env->pool_key,
        .cert_info = true,
        .authorization = oauth_authorization(streamable_http_oauth(t,
            false)),
    };

    /*
     * A scheduled ping is the interval's last exchange. When the server
     * says it drops idle connections sooner than the next ping (Node's
     * default: Keep-Alive: timeout=5), a kept connection would only die in
     * libcurl's pool, where each dead one costs a walk of the pool
     * (bench/ANALYSIS.md): close it at once instead.
     */
    rq.no_reuse = (r->flags & TRANSPORT_IDLE_AFTER) && t->keep_alive_s >= 0 &&
        t->keep_alive_s * 1000L < d->ping_interval_ms;
    r->carried_session = false;
    if (r->resuming) {
        rq.session_id = t->session_id;
        rq.protocol_version = t->protocol_version;
        rq.last_event_id = r->resume_id;
        r->carried_session = t->session_id != NULL;
    } else if (r->run != NULL) {
        rq.session_id = r->delete_id;
        rq.protocol_version = r->delete_pv;
    } else if (r->is_get) {
        rq.session_id = t->session_id;
        rq.protocol_version = t->protocol_version;
        rq.last_event_id = t->last_event_id;
    } else {
        rq.body = r->body;
        rq.body_len = r->len;
        /* The POSTs share one header list; a GET stream or a DELETE,
         * rare, builds its own (the GET's lives as long as the stream). */
        rq.hdrs_slot = &t->hdrs;
        if (r->flags & TRANSPORT_MODERN) {
            /* 2026-07-28: no session; the version and the method ride on
             * every POST as headers too (basic/transports). */
            rq.protocol_version = STREAMABLE_HTTP_MODERN_VERSION;
            rq.mcp_method = r->method;
            rq.no_cache = (r->flags & TRANSPORT_NO_CACHE) != 0;
        } else if (!(r->flags & TRANSPORT_INITIALIZE)) {
            rq.session_id = t->session_id;
            rq.protocol_version = t->protocol_version;
            r->carried_session = t->session_id != NULL;
        }
    }
    r->xfer = http_start(t->base.env->curl, &rq, &streamable_http_http_cb, r,
        cause);
    return r->xfer != NULL ? 0 : -1;
}

/* A new request on t: linked once its transfer started. */
static struct streamable_http_req *
streamable_http_start(struct streamable_http_transport *t,
    struct streamable_http_req *r, char **cause)
{
    r->t = t;
    if (r->url == NULL)
        r->url = xstrdup(t->url);
    if (streamable_http_issue(t, r, cause) != 0) {
        streamable_http_wipe(r->delete_id);
        free(r->delete_pv);
        free(r->body);
        free(r->url);
        free(r);
        return NULL;
    }
    r->next = t->reqs;
    t->reqs = r;
    return r;
}

static struct transport_req *
streamable_http_send(struct transport *base, const struct transport_msg *m,
    void *owner, char **cause)
{
    struct streamable_http_transport *t = streamable_http_of(base);
    struct streamable_http_req       *r = xcalloc(1, sizeof(*r));

    ev_timer_init(&r->drain, streamable_http_drain_cb,
        STREAMABLE_HTTP_DRAIN_S, 0.);
    ev_timer_init(&r->resume, streamable_http_resume_cb, 0., 0.);
    r->owner = owner;
    r->id = m->id;
    r->flags = m->flags;
    r->method = m->method;
    r->body = xmalloc(m->len + 1);
    memcpy(r->body, m->body, m->len);
    r->body[m->len] = '\0';
    r->len = m->len;
    if (streamable_http_start(t, r, cause) == NULL)
        return NULL;
    transport_log(base, "POST %s id=%lld", m->method, (long long)m->id);
    return (struct transport_req *)r;
}

static void
streamable_http_cancel(struct transport *base, struct transport_req *tr,
    struct failure_evidence *evd_out)
{
    struct streamable_http_req       *r = streamable_http_req_of(tr);
    struct streamable_http_transport *t = streamable_http_of(base);

    streamable_http_unqueue(t, r->owner, false);
    streamable_http_req_free(t, r, evd_out);
}

static void
streamable_http_peek(struct transport *base, struct transport_req *tr,
    struct failure_evidence *evd_out)
{
    struct streamable_http_req *r = streamable_http_req_of(tr);
    (void)base;
    if (r->xfer != NULL)
        http_xfer_peek(r->xfer, evd_out);
}
static void streamable_http_delete_done(struct streamable_http_transport *t,
    struct streamable_http_req *r, const struct http_result *res);

/*
 * A redirect (RFC 9110 section 15.4): followed on the configured origin
 * only, keeping the method and the body (307, 308, and POST kept on 301
 * and 302), at most STREAMABLE_HTTP_MAX_HOPS times; the endpoint then
 * stays where it led, with a warning. Nothing, no header, goes to another
 * origin: that answer stays a redirect, and its detail names the
 * Location. true when the request was sent again.
 */
static bool
streamable_http_follow(struct streamable_http_transport *t,
    struct streamable_http_req *r, const struct http_result *res)
{
    const char *to = res->redirect_url;
    char       *cause = NULL;
    char       *shown;

    if (res->status != 301 && res->status != 302 && res->status != 307 &&
        res->status != 308)
        return false;
    if (to == NULL || !http_same_origin(to, t->base.env->decl->url) ||
        r->hops >= STREAMABLE_HTTP_MAX_HOPS)
        return false;
    r->hops++;
    free(r->url);
    r->url = xstrdup(to);
    shown = str_sanitized(to);
    transport_log(&t->base, "%ld: following the redirect to %s", res->status,
        shown);
    if (streamable_http_issue(t, r, &cause) != 0) {
        transport_log(&t->base, "redirect not followed: %s", cause);
        free(cause);
        free(shown);
        return false;
    }
    if (strcmp(t->url, to) != 0) {
        free(t->url);
        t->url = xstrdup(to);
        free(t->warning);
        t->warning = str_printf("redirected (HTTP %ld) to %s; put it in the "
            "config", res->status, shown);
    }
    free(shown);
    return true;
}

/* oauth_resume_cb: the authorization work is over; the same request goes
 * once more, with the new token. */
static void
streamable_http_auth_resume_cb(void *arg)
{
    struct streamable_http_req       *r = arg;
    struct streamable_http_transport *t = r->t;
    char                             *cause = NULL;
    struct transport_event            e = { .type = TRANSPORT_RESUMED,
                                            .owner = r->owner };

    r->answered = false;
    if (streamable_http_issue(t, r, &cause) != 0) {
        struct transport_result out = { .retry_after_s = -1, .failed = true };
        struct transport_event  d = { .type = TRANSPORT_DONE,
                                      .owner = r->owner, .result = &out };
        struct failure_evidence evd = { .net = NET_OTHER };

        transport_failure_set(&out.f, &evd, "%s", cause);
        free(cause);
        streamable_http_req_free(t, r, NULL);
        transport_emit(&t->base, &d);
        return;
    }
    if (!r->is_get && r->run == NULL)
        transport_emit(&t->base, &e);
}

/*
 * MCP authorization (basic/authorization): a 401, or a 403 asking for more
 * scope, goes to the oauth module, which refreshes, authorizes or steps
 * up; meanwhile the request is held (its timeout stopped), then sent once
 * more. At most twice a request; never a DELETE. true when held.
 */
static bool
streamable_http_auth_hold(struct streamable_http_transport *t,
    struct streamable_http_req *r, const struct http_result *res)
{
    struct transport_event e = { .type = TRANSPORT_HELD, .owner = r->owner };

    if (t->oauth != NULL && r->run == NULL && r->auth_rounds >= 2 &&
        (res->status == 401 || res->status == 403)) {
        /* Refused again after its rounds: no more work for it, and the
         * record says the authorization gave up. */
        oauth_gave_up(t->oauth, res->status, res->www_authenticate,
            r->auth_rounds);
        return false;
    }
    if (r->run != NULL || r->auth_rounds >= 2 ||
        (res->status != 401 && res->status != 403) ||
        streamable_http_oauth(t, true) == NULL ||
        !oauth_on_challenge(t->oauth, res->status, res->www_authenticate,
        streamable_http_auth_resume_cb, r))
        return false;
    r->auth_rounds++;
    if (!r->is_get)
        transport_emit(&t->base, &e);
    return true;
}

/* http_callbacks.on_done: route a finished transfer. */
static void
streamable_http_done_cb(void *arg, struct http_xfer *hx,
    const struct http_result *res)
{
    struct streamable_http_req       *r = arg;
    struct streamable_http_transport *t = r->t;

    (void)hx;
    r->xfer = NULL;         /* freed by http.c right after this returns */
    t->used = true;
    if (res->keep_alive_s >= 0)     /* the last one announced (an SSE
                                       answer may carry none) */
        t->keep_alive_s = res->keep_alive_s;
    r->in_done = true;
    streamable_http_enter(t);
    if (r->answered && !r->draining) {
        /* The answer first (its queued event goes), then what else came. */
        streamable_http_unqueue(t, r->owner, false);
        streamable_http_hand_up(t, r, res);
    }
    if (!t->dead)
        streamable_http_flush(t);
    if (t->dead || r->gone)
        goto out;
    if (r->draining)
        streamable_http_req_free(t, r, NULL);   /* drained: the connection
                                                   stays */
    else if (streamable_http_follow(t, r, res) ||
        streamable_http_auth_hold(t, r, res))
        ;
    else if (r->run != NULL)
        streamable_http_delete_done(t, r, res);
    else if (r->is_get)
        streamable_http_stream_done(t, r, res);
    else
        streamable_http_post_done(t, r, res);
out:
    r->in_done = false;
    if (r->gone)
        free(r);
    streamable_http_leave(t);
}

/* --- the GET stream ----------------------------------------------------- */

static int
streamable_http_stream_open(struct transport *base, char **cause)
{
    struct streamable_http_transport *t = streamable_http_of(base);
    struct streamable_http_req       *r;

    if (t->stream != NULL)
        return 0;
    if (t->session_id == NULL) {
        *cause = xstrdup("no session to open a stream for");
        return -1;
    }
    r = xcalloc(1, sizeof(*r));
    r->id = -1;
    r->is_get = true;
    r->method = "stream";
    if (streamable_http_start(t, r, cause) == NULL)
        return -1;
    t->stream = r;
    transport_log(base, "GET stream");
    return 0;
}

static void
streamable_http_stream_close(struct transport *base)
{
    struct streamable_http_transport *t = streamable_http_of(base);

    if (t->stream != NULL) {
        streamable_http_unqueue(t, NULL, false);
        streamable_http_req_free(t, t->stream, NULL);
    }
}

/* --- the session -------------------------------------------------------- */

static void
streamable_http_adopt(struct transport *base, char *session,
    const char *protocol_version)
{
    struct streamable_http_transport *t = streamable_http_of(base);

    streamable_http_wipe(t->session_id);
    t->session_id = session;
    free(t->protocol_version);
    t->protocol_version = str_dup(protocol_version);
    free(t->last_event_id);
    t->last_event_id = NULL;
}

static char *
streamable_http_release(struct transport *base)
{
    struct streamable_http_transport *t = streamable_http_of(base);
    char                             *id = t->session_id;

    t->session_id = NULL;
    free(t->last_event_id);
    t->last_event_id = NULL;
    return id;
}

static bool
streamable_http_has_session(const struct transport *base)
{
    return streamable_http_of(base)->session_id != NULL;
}

static void
streamable_http_session_prefix(const struct transport *base, char *buf,
    size_t n)
{
    const struct streamable_http_transport *t = streamable_http_of(base);

    snprintf(buf, n, "%.8s", t->session_id != NULL ? t->session_id : "");
}

static bool
streamable_http_alive(const struct transport *base)
{
    (void)base;
    return true;
}

static void
streamable_http_abandon(struct transport *base)
{
    (void)base;
}

/* --- endings: the DELETE (basic/transports, session management) -------- */

static void
streamable_http_send_delete(struct streamable_http_transport *t,
    struct ending_run *run, char *id, const char *protocol_version)
{
    struct streamable_http_req *r = xcalloc(1, sizeof(*r));
    char                       *cause = NULL;

    r->id = -1;
    r->run = run;
    r->delete_id = id;
    r->delete_pv = str_dup(protocol_version);
    r->method = "delete";
    if (streamable_http_start(t, r, &cause) == NULL) {
        struct failure          f;
        struct failure_evidence evd = { .net = NET_OTHER };
        struct ending_report    rep = { .outcome = ENDING_FAILED,
                                        .detail = cause, .failure = &f,
                                        .exit_code = -1 };

        failure_make(&f, &evd, FAILURE_SITE_REQUEST, cause);
        f.delivered = DELIVERED_NO;
        ending_run_report(run, &rep);
        free(cause);
        ending_run_settle(run);
        return;
    }
    ending_run_set_work(run, r);
    transport_log(&t->base, "DELETE session%s",
        ending_run_view(run)->half_open ? " (half-open)" : "");
}

static void
streamable_http_end(struct transport *base, struct ending_run *run,
    char *session, const char *protocol_version)
{
    struct streamable_http_transport *t = streamable_http_of(base);
    char                             *pv = NULL;

    if (session == NULL) {
        session = t->session_id;
        t->session_id = NULL;
        pv = str_dup(t->protocol_version);
        protocol_version = pv;
    }
    if (session == NULL) {
        /* Nothing to end on the server: only the local close. */
        ending_run_outcome(run, ENDING_NO_SESSION, NULL);
        ending_run_settle(run);
        free(pv);
        return;
    }
    if (t->base.env->test_keep_id) {
        streamable_http_wipe(t->kept_id);
        t->kept_id = xstrdup(session);
    }
    streamable_http_send_delete(t, run, session, protocol_version);
    free(pv);
}

static bool
streamable_http_end_again(struct transport *base, struct ending_run *run)
{
    struct streamable_http_transport *t = streamable_http_of(base);
    char                             *id = t->kept_id;

    if (id == NULL || run == NULL)
        return id != NULL;
    t->kept_id = NULL;
    streamable_http_send_delete(t, run, id, t->protocol_version);
    return true;
}

static void
streamable_http_delete_done(struct streamable_http_transport *t,
    struct streamable_http_req *r, const struct http_result *res)
{
    struct ending_run   *run = r->run;
    double               ms = ending_run_elapsed_ms(run);
    struct ending_report rep = { .exit_code = -1 };

    streamable_http_req_free(t, r, NULL);
    ending_run_set_work(run, NULL);
    if (res->completed && res->status >= 200 && res->status < 300) {
        rep.outcome = ENDING_TERMINATED;
        rep.http_status = res->status;
        ending_run_report(run, &rep);
        ending_run_exchange(run, NULL, ms);
    } else {
        struct transport_failure tf;
        struct failure           f;

        http_judge_other(res, &tf, "DELETE", "");
        failure_make(&f, &tf.evd, FAILURE_SITE_REQUEST, tf.detail);
        if (!res->completed && res->evd.net != NET_OK) {
            rep.outcome = ENDING_FAILED;
            rep.failure = &f;
        } else {
            rep.outcome = res->status == 405 ? ENDING_NOT_ALLOWED :
                res->status == 404 ? ENDING_ALREADY_GONE : ENDING_REJECTED;
            rep.http_status = res->status;
        }
        rep.detail = tf.detail;
        ending_run_report(run, &rep);
        ending_run_exchange(run, &f, ms);
    }
    ending_run_settle(run);
}

static void
streamable_http_end_deadline(struct transport *base, struct ending_run *run)
{
    struct streamable_http_transport *t = streamable_http_of(base);
    struct streamable_http_req       *r = ending_run_work(run);
    char                              detail[160];
    struct failure_evidence           evd = { 0 };
    struct failure                    f;
    struct ending_report              rep = { .outcome = ENDING_TIMED_OUT,
                                              .detail = detail,
                                              .exit_code = -1 };
    double                            ms = ending_run_elapsed_ms(run);

    snprintf(detail, sizeof(detail), "no answer to DELETE within %ld ms; "
        "aborted", ending_run_teardown_ms(run));
    if (r != NULL) {
        ending_run_set_work(run, NULL);
        streamable_http_req_free(t, r, &evd);
        evd.net = NET_OK;
        evd.timer = FAILURE_TIMER_TEARDOWN;
        failure_make(&f, &evd, FAILURE_SITE_REQUEST, detail);
        rep.failure = &f;
        ending_run_report(run, &rep);
        ending_run_exchange(run, &f, ms);
    } else {
        ending_run_report(run, &rep);
    }
    /* The abort is synchronous: the transfer is gone, so it settles. */
    ending_run_settle(run);
}

/* --- lifetime ----------------------------------------------------------- */

static void
streamable_http_close(struct transport *base)
{
    struct streamable_http_transport *t = streamable_http_of(base);

    transport_queue_stop(&t->queue);
    streamable_http_unqueue(t, NULL, true);
    while (t->reqs != NULL) {
        struct streamable_http_req *r = t->reqs;

        if (r->run != NULL)
            ending_run_set_work(r->run, NULL);
        streamable_http_req_free(t, r, NULL);
    }
    streamable_http_wipe(t->session_id);
    t->session_id = NULL;
    /* The session's header list (its id, a token) goes with it. */
    http_hdrs_unref(t->hdrs);
    t->hdrs = NULL;
    free(t->last_event_id);
    t->last_event_id = NULL;
}

static void
streamable_http_free(struct transport *base)
{
    struct streamable_http_transport *t = streamable_http_of(base);

    if (t == NULL)
        return;
    streamable_http_close(base);
    if (t->depth > 0) {
        /* Freed from inside one of its own events: when that returns. */
        t->dead = true;
        return;
    }
    streamable_http_destroy(t);
}

static void
streamable_http_destroy(struct streamable_http_transport *t)
{
    http_hdrs_unref(t->hdrs);
    oauth_free(t->oauth);
    free(t->protocol_version);
    streamable_http_wipe(t->kept_id);
    free(t->url);
    free(t->warning);
    free(t);
}

static int
streamable_http_open(struct transport *base, struct transport_failure *f)
{
    (void)base;
    (void)f;
    return 0;
}

/* transport_ops.query: a warning, and when a stream last spoke. */
static int
streamable_http_query(const struct transport *base, enum transport_query q,
    void *out)
{
    const struct streamable_http_transport *t = streamable_http_of(base);

    switch (q) {
    case TRANSPORT_Q_WARNING:
        *(const char **)out = t->warning;
        return 0;
    case TRANSPORT_Q_ACTIVITY:
        *(ev_tstamp *)out = t->activity;
        return 0;
    case TRANSPORT_Q_AUTHORIZATION:
        *(const char **)out = oauth_authorization(t->oauth);
        return 0;
    default:
        return -1;
    }
}

static const struct transport_ops streamable_http_ops = {
    .name = "http",
    .caps = TRANSPORT_CAP_LATE_SESSION,
    .older = http_sse_new,
    .open = streamable_http_open,
    .send = streamable_http_send,
    .cancel = streamable_http_cancel,
    .peek = streamable_http_peek,
    .stream_open = streamable_http_stream_open,
    .stream_close = streamable_http_stream_close,
    .adopt = streamable_http_adopt,
    .release = streamable_http_release,
    .has_session = streamable_http_has_session,
    .session_prefix = streamable_http_session_prefix,
    .alive = streamable_http_alive,
    .abandon = streamable_http_abandon,
    .end = streamable_http_end,
    .end_deadline = streamable_http_end_deadline,
    .end_again = streamable_http_end_again,
    .close = streamable_http_close,
    .free = streamable_http_free,
    .query = streamable_http_query,
    .raw = http_raw_start,
    .raw_cancel = http_raw_cancel,
};

struct transport *
streamable_http_new(const struct transport_env *env)
{
    struct streamable_http_transport *t = xcalloc(1, sizeof(*t));

    t->base.ops = &streamable_http_ops;
    t->base.env = env;
    t->url = xstrdup(env->decl->url != NULL ? env->decl->url : "");
    t->keep_alive_s = -1;
    transport_queue_init(&t->queue, env->loop, streamable_http_defer_cb, t);
    return &t->base;
}
