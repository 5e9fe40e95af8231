/*
 * What comes back on the Streamable HTTP transport (MCP basic/transports),
 * read and judged: the SSE events of a POST's answer and of the GET
 * stream (queued, never emitted, from inside libcurl's callback), an
 * answer handed up as soon as its event arrives, the resumption of an
 * answer stream with Last-Event-ID (SEP-1699), and a finished POST or GET
 * stream judged into one transport result or event (http_judge.c).
 *
 * The dependency goes one way: streamable_http.c calls these, and these
 * call nothing of it. Each fills what the caller hands up (a result, an
 * event) from a request and its transfer's result and says what comes
 * next; the caller does it: frees the request, emits, arms a timer,
 * issues the resuming GET.
 *
 * What must never happen here: an event emitted (the message callback
 * only queues), or a session id in a log line.
 */
#include "transport/streamable_http_int.h"

#include <stdlib.h>
#include <string.h>

#include "engine/oauth.h"
#include "core/jsonrpc.h"
#include "transport/http_judge.h"
#include "util/str.h"
#include "util/xmalloc.h"

/* http_callbacks.on_message: one SSE event. Non-zero stops the transfer
 * (the answer is in). */
int
streamable_http_answer_message_cb(void *arg, struct http_xfer *hx,
    const char *type, const char *data, size_t len)
{
    struct streamable_http_req *r = arg;
    struct jsonrpc_msg         *m;

    (void)hx;
    if (strcmp(type, "message") != 0 || len == 0)
        return 0;
    m = jsonrpc_parse(data, len, NULL);
    if (m == NULL)
        return 0;
    if (r->id >= 0 && (jsonrpc_kind(m) == JSONRPC_RESULT ||
        jsonrpc_kind(m) == JSONRPC_ERROR) && jsonrpc_id_is(m, r->id)) {
        if (r->answered || r->draining) {
            jsonrpc_free(m);
            return 0;
        }
        r->answer = m;
        if (r->flags & TRANSPORT_STREAMING)
            return 1;       /* a listen's result ends it */
        /* Handed up at once; the rest of the response drains, so the
         * connection goes back to the pool. */
        r->answered = true;
        transport_queue_push(&r->t->queue, TRANSPORT_DONE, r->owner,
            NULL)->req = r;
        return 0;
    }
    if (r->draining) {
        if (jsonrpc_method(m) != NULL)
            transport_queue_push(&r->t->queue, TRANSPORT_MESSAGE, NULL, m);
        else
            jsonrpc_free(m);
        return 0;
    }
    if (jsonrpc_method(m) == NULL && (jsonrpc_kind(m) != JSONRPC_RESULT &&
        (jsonrpc_kind(m) != JSONRPC_ERROR || jsonrpc_id_is_null(m)))) {
        jsonrpc_free(m);
        return 0;
    }
    if (jsonrpc_method(m) == NULL && r->id >= 0 && !r->is_get &&
        r->stray[0] == '\0')
        /* An answer on our POST's stream with another id: not ours
         * (issue 26, item 8). Kept for the stream's end; handed up too,
         * for the lifecycle's record should the stream stay open. */
        jsonrpc_id_describe(m, r->stray, sizeof(r->stray));
    transport_queue_push(&r->t->queue, TRANSPORT_MESSAGE,
        r->is_get ? NULL : r->owner, m);
    return 0;
}

/* A session a 2xx answer to initialize issued: handed up, or refused
 * when it is too long to send back. */
static void
streamable_http_answer_take_session(struct streamable_http_transport *t,
    const struct streamable_http_req *r, long status, const char *id,
    bool invalid, size_t too_long, struct transport_result *out)
{
    if (!(r->flags & TRANSPORT_INITIALIZE) || status < 200 || status >= 300)
        return;
    /* Only a 2xx answer to initialize issues a session. */
    out->session = str_dup(id);
    if (too_long > 0 && !out->failed) {
        /* Every later request would carry it: refuse it plainly. */
        out->failed = true;
        out->f.evd.too_large = true;
        snprintf(out->f.detail, sizeof(out->f.detail), "initialize issued "
            "an Mcp-Session-Id of %zu bytes; mcptop takes at most %d",
            too_long, HTTP_SESSION_ID_MAX);
    } else if (invalid) {
        transport_log(&t->base, "ignored an Mcp-Session-Id that is not "
            "visible ASCII");
    }
}

void
streamable_http_answer_early(struct streamable_http_transport *t,
    struct streamable_http_req *r, const struct http_result *res,
    struct transport_result *out)
{
    const char *id = NULL;
    bool        invalid = false;
    size_t      too_long = 0;

    memset(out, 0, sizeof(*out));
    out->retry_after_s = -1;
    out->answer = r->answer;
    r->answer = NULL;
    out->carried_session = r->carried_session;
    if (res != NULL) {
        out->f.evd = res->evd;
        id = res->session_id;
        invalid = res->session_id_invalid;
        too_long = res->session_id_len;
    } else if (r->xfer != NULL) {
        http_xfer_peek(r->xfer, &out->f.evd);
        http_xfer_session(r->xfer, &id, &invalid, &too_long);
    }
    streamable_http_answer_take_session(t, r, out->f.evd.http_status, id,
        invalid, too_long, out);
}

/*
 * SEP-1699 (2025-11-25): a POST's SSE answer stream that ended, gracefully
 * and before the answer, after an event with an id is resumed: after the
 * server's retry (floored, capped), a GET with Last-Event-ID, where the
 * answer may come. The request's own timeout covers it all.
 */
double
streamable_http_answer_resume_delay(struct streamable_http_req *r,
    const struct http_result *res)
{
    const char *id = res->last_event_id;
    double      delay;
    size_t      n;

    if (r->id < 0 || r->answer != NULL || r->stray[0] != '\0' ||
        (r->flags & TRANSPORT_STREAMING) ||
        !res->completed || res->stopped || res->status < 200 ||
        res->status >= 300 || !res->evd.content_sse || res->evd.sse_no_lines ||
        id == NULL || id[0] == '\0' ||
        r->resumes >= STREAMABLE_HTTP_MAX_RESUMES)
        return -1;
    n = strlen(id);
    if (n > STREAMABLE_HTTP_EVENT_ID_MAX || !str_is_visible_ascii(id, n))
        return -1;
    free(r->resume_id);
    r->resume_id = xstrdup(id);
    delay = res->retry_ms >= 0 ? res->retry_ms / 1000.0 : 1.0;
    if (delay < STREAMABLE_HTTP_RESUME_MIN_S)
        delay = STREAMABLE_HTTP_RESUME_MIN_S;
    if (delay > STREAMABLE_HTTP_RESUME_MAX_S)
        delay = STREAMABLE_HTTP_RESUME_MAX_S;
    return delay;
}

void
streamable_http_answer_unresumed(const struct streamable_http_req *r,
    const char *cause, struct transport_result *out)
{
    memset(out, 0, sizeof(*out));
    out->retry_after_s = -1;
    out->failed = true;
    out->f.evd.stream_ended = true;
    out->f.evd.primed = true;
    snprintf(out->f.detail, sizeof(out->f.detail), "the answer stream to "
        "%s ended and could not be resumed: %.120s", r->method, cause);
}

void
streamable_http_answer_post(struct streamable_http_transport *t,
    struct streamable_http_req *r, const struct http_result *res,
    struct transport_result *out)
{
    memset(out, 0, sizeof(*out));
    out->retry_after_s = res->retry_after_s;
    out->answer = r->answer;
    r->answer = NULL;
    out->carried_session = r->carried_session;
    out->failed = http_judge_post(res, r->id, r->resuming ?
        "the resuming GET" : r->method,
        t->base.env->decl->max_message_bytes, r->stray, &out->answer,
        &out->f);
    if (out->failed && r->resumes > 0) {
        /* It was resumed, and the resumption failed: the server had the
         * request (it primed the stream), but the answer is lost. */
        char said[160];

        snprintf(said, sizeof(said), "%.150s", out->f.detail);
        memset(&out->f.evd, 0, sizeof(out->f.evd));
        out->f.evd.stream_ended = true;
        out->f.evd.primed = true;
        out->f.evd.content_sse = true;
        snprintf(out->f.detail, sizeof(out->f.detail), "the answer stream "
            "to %s ended and its resumption (%d) failed: %.150s", r->method,
            r->resumes, said);
    }
    out->accepted = r->id < 0 && !out->failed;
    if (out->failed && t->oauth != NULL && (res->status == 401 ||
        res->status == 403))
        oauth_explain(t->oauth, out->f.detail, sizeof(out->f.detail));
    streamable_http_answer_take_session(t, r, res->status, res->session_id,
        res->session_id_invalid, res->session_id_len, out);
}

void
streamable_http_answer_stream(struct streamable_http_transport *t,
    const struct streamable_http_req *r, const struct http_result *res,
    struct transport_event *e, struct transport_failure *f)
{
    if (res->last_event_id != NULL && res->last_event_id[0] != '\0') {
        size_t n = strlen(res->last_event_id);

        /* Sent back only when it is short and visible ASCII. */
        free(t->last_event_id);
        t->last_event_id = NULL;
        if (n <= STREAMABLE_HTTP_EVENT_ID_MAX &&
            str_is_visible_ascii(res->last_event_id, n))
            t->last_event_id = xstrdup(res->last_event_id);
        else
            transport_log(&t->base, "stream: an event id of %zu bytes that "
                "is not short visible ASCII is not sent back", n);
    }
    memset(e, 0, sizeof(*e));
    e->type = TRANSPORT_STREAM_CLOSED;
    e->retry_ms = res->retry_ms;
    e->opened = r->opened;
    e->none = res->status == 405;
    if (!r->opened && !e->none) {
        http_judge_other(res, f, "the GET stream", "GET stream answered "
            "without text/event-stream");
        e->failure = f;
    }
}
