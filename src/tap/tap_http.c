/*
 * The tap's HTTP form (tap_int.h; issue 31): `mcptop tap --listen
 * 127.0.0.1:PORT --upstream URL` stands in for a Streamable HTTP MCP
 * server (MCP basic/transports). Each request of the agent's (POST, GET,
 * DELETE) is passed to the upstream URL as it came (its headers but the
 * hop-by-hop ones; Host is the upstream's), and the answer comes back as
 * it arrives: its status, its headers but the hop-by-hop ones, its body
 * piece by piece (an SSE stream event by event as the server writes it,
 * never held to its end). The server side is libmicrohttpd on the loop
 * (its epoll descriptor, suspend and resume); the upstream side is
 * io/http_relay.c (libcurl on the same loop).
 *
 * A copy of each JSON-RPC message is read by the same ledger the stdio
 * tap feeds (a POST body is the agent's, a JSON answer or an SSE event's
 * data the server's), so the socket, the record and {"tap": PATH}
 * entries work unchanged. An upstream failure classifies as the dialer's
 * would (failure.c): refused, a status, a stream cut under a request.
 *
 * Backpressure: what waits for the agent is bounded (TAP_HIGH_WATER);
 * past it the upstream transfer pauses until the agent has read it down.
 * Nothing of the tap's own goes upstream but the operator's cancel
 * (notifications/cancelled) and the operator's ending (DELETE).
 *
 * The agent's sessions and the tap's own requests: tap_session.c.
 */
#include "tap_http.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "engine/curlev.h"
#include "engine/http_relay.h"
#include "engine/sse.h"
#include "engine/url.h"
#include "util/clock.h"
#include "util/str.h"
#include "util/xmalloc.h"

/* --- the loop ------------------------------------------------------------ */

static void
tap_http_run_mhd(struct tap_http *h)
{
    MHD_UNSIGNED_LONG_LONG ms = 0;

    MHD_run(h->mhd);
    ev_timer_stop(h->t->loop, &h->timer);
    if (MHD_get_timeout(h->mhd, &ms) == MHD_YES) {
        ev_timer_set(&h->timer, (double)ms / 1000.0, 0.);
        ev_timer_start(h->t->loop, &h->timer);
    }
}

static void
tap_http_io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    (void)revents;
    tap_http_run_mhd(w->data);
}

static void
tap_http_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    tap_http_run_mhd(w->data);
}

/* MHD runs on the next loop turn (a resumed connection is served). */
static void
tap_http_kick(struct tap_http *h)
{
    if (!ev_is_active(&h->kick)) {
        ev_timer_set(&h->kick, 0., 0.);
        ev_timer_start(h->t->loop, &h->kick);
    }
}

static void tap_hx_gone_cb(struct ev_loop *loop, ev_io *w, int revents);

/* x waits (for the upstream's head or more of its body): MHD is done
 * with the connection until it is resumed, and watches it no more, so
 * the tap watches the agent's socket for its going away (else an agent
 * that gives up on a server that never answers would keep a connection,
 * a transfer upstream and its requests in flight for ever: 64 of them
 * and the tap takes no more). */
static void
tap_hx_suspend(struct tap_hx *x)
{
    const union MHD_ConnectionInfo *ci;

    x->suspended = true;
    MHD_suspend_connection(x->conn);
    ci = MHD_get_connection_info(x->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (ci != NULL && ci->connect_fd >= 0 && !ev_is_active(&x->gone)) {
        ev_io_init(&x->gone, tap_hx_gone_cb, ci->connect_fd, EV_READ);
        x->gone.data = x;
        ev_io_start(x->h->t->loop, &x->gone);
    }
}

static void
tap_hx_wake(struct tap_hx *x)
{
    ev_io_stop(x->h->t->loop, &x->gone);
    if (x->suspended) {
        x->suspended = false;
        MHD_resume_connection(x->conn);
        tap_http_kick(x->h);
    }
}

/* ev_prepare: resume the upstream transfers the agent has read down
 * (never from inside libcurl's or MHD's callbacks). */
static void
tap_http_flow_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
    struct tap_http *h = w->data;

    (void)loop;
    (void)revents;
    if (!h->resume_due)
        return;
    h->resume_due = false;
    for (struct tap_hx *x = h->xs; x != NULL; x = x->next) {
        if (http_relay_paused(x->up) && x->olen - x->off < TAP_HTTP_LOW_WATER)
            http_relay_resume(x->up);
    }
}

/* --- small things -------------------------------------------------------- */

static void
tap_lines_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}


/* A header that is the connection's, not the message's (RFC 9110 7.6.1),
 * or one the tap must set itself. */
static bool
tap_http_hop(const char *name, size_t n, bool request)
{
    static const char *const hop[] = {
        "connection", "keep-alive", "transfer-encoding", "te", "trailer",
        "upgrade", "host", "content-length", "proxy-connection", "expect",
    };

    for (size_t i = 0; i < sizeof(hop) / sizeof(*hop); i++) {
        if (strlen(hop[i]) == n && strncasecmp(name, hop[i], n) == 0)
            return true;
    }
    if (n > 6 && strncasecmp(name, "proxy-", 6) == 0)
        return true;
    /* The copy is read: the server is asked for no encoding. */
    if (request && n == 15 && strncasecmp(name, "accept-encoding", n) == 0)
        return true;
    /* MHD writes its own. */
    if (!request && n == 4 && strncasecmp(name, "date", n) == 0)
        return true;
    /* An answer compressed unasked comes decoded (http_relay.c). */
    if (!request && n == 16 && strncasecmp(name, "content-encoding", n) == 0)
        return true;
    return false;
}

/* The upstream URL as the snapshot may show it: its origin and path as
 * libcurl parses them (no userinfo, however many '@' it holds; no query,
 * no fragment). NULL when it is no http(s) URL libcurl parses. */
static char *
tap_http_shown_url(const char *url)
{
    char *origin = NULL, *path = NULL, *s, *clean;

    if (url_split_http(url, &origin, &path, NULL) != 0)
        return NULL;
    s = str_printf("%s%s", origin, path[0] != '\0' ? path : "/");
    clean = str_sanitized(s);
    free(s);
    free(origin);
    free(path);
    return clean;
}

/* --- the agent's request: its body, its ids ------------------------------ */

/* One JSON-RPC message of the agent's (a POST body): the ledger reads it;
 * x keeps the ids of the requests it carries. */
static void
tap_hx_observe_request(struct tap_hx *x)
{
    struct tap *t = x->h->t;
    cJSON      *o;

    t->bytes[TAP_SIDE_AGENT] += x->len;
    if (x->len == 0)
        return;
    tap_ledger_line(t->ledger, TAP_SIDE_AGENT, x->body, x->len, tap_now(t),
        clock_wall_ms());
    o = cJSON_ParseWithLength(x->body, x->len);
    /* One message, or a batch's messages in order (a walk of its list,
     * never an index into it), at most 1000. */
    for (const cJSON *m = cJSON_IsArray(o) ? o->child : o;
        m != NULL && x->nids < 1000; m = cJSON_IsArray(o) ? m->next : NULL) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(m, "id");
        const cJSON *method = cJSON_GetObjectItemCaseSensitive(m, "method");

        if (!cJSON_IsString(method) || id == NULL || cJSON_IsNull(id))
            continue;
        if (strcmp(method->valuestring, "initialize") == 0)
            x->initialize = true;
        x->ids = xrealloc(x->ids, (x->nids + 1) * sizeof(*x->ids));
        x->ids[x->nids++] = cJSON_PrintUnformatted(id);
    }
    cJSON_Delete(o);
}

/* Every request x carried that is still in flight fails with evd. */
static void
tap_hx_fail_ids(struct tap_hx *x, const struct failure_evidence *evd,
    const char *detail)
{
    struct tap *t = x->h->t;

    for (size_t i = 0; i < x->nids; i++) {
        struct tap_request *r = tap_ledger_find(t->ledger, TAP_DIR_TO_SERVER,
            x->ids[i]);
        struct failure      f;

        if (r == NULL || r->own)
            continue;
        failure_make(&f, evd, FAILURE_SITE_REQUEST, detail);
        tap_ledger_fail(t->ledger, r, &f, tap_now(t));
    }
}

/* --- the answer: observation --------------------------------------------- */

/* sse_event_cb: one event of the server's: its data is a message. */
static int
tap_hx_sse_cb(void *arg, const struct sse_event *ev)
{
    struct tap_hx *x = arg;
    struct tap    *t = x->h->t;

    if (ev->data_len > 0)
        tap_ledger_line(t->ledger, TAP_SIDE_SERVER, ev->data, ev->data_len,
            tap_now(t), clock_wall_ms());
    return 0;
}

/* Queue n bytes for the agent. */
static void
tap_hx_queue(struct tap_hx *x, const char *p, size_t n)
{
    if (n == 0)
        return;
    if (x->off > 0 && x->olen + n > x->ocap) {
        memmove(x->out, x->out + x->off, x->olen - x->off);
        x->olen -= x->off;
        x->off = 0;
    }
    if (x->olen + n > x->ocap) {
        size_t want = x->ocap ? x->ocap : 16384;

        while (want < x->olen + n)
            want *= 2;
        x->out = xrealloc(x->out, want);
        x->ocap = want;
    }
    memcpy(x->out + x->olen, p, n);
    x->olen += n;
    x->any = true;
}

/* How many of p's n bytes reach the end of an SSE event (a blank line),
 * or n when none is ended there; the line-end count follows. */
static size_t
tap_hx_boundary(struct tap_hx *x, const char *p, size_t n, bool *at)
{
    char prev = '\0';

    *at = !x->any || x->nl_run >= 2;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];

        if (c == '\n' && prev == '\r')
            ;           /* CRLF: one line end */
        else if (c == '\n' || c == '\r')
            x->nl_run++;
        else
            x->nl_run = 0;
        prev = c;
        if (x->nl_run >= 2 && !(c == '\r' && i + 1 < n && p[i + 1] == '\n')) {
            *at = true;
            return i + 1;
        }
    }
    *at = x->nl_run >= 2;
    return n;
}

/* http_relay on_head. */
static void
tap_hx_head_cb(void *arg, long status, const char *const *lines, size_t n)
{
    struct tap_hx   *x = arg;
    struct tap_http *h = x->h;
    const char      *sid, *ct;

    x->status = status;
    for (size_t i = 0; i < n; i++) {
        const char *colon = strchr(lines[i], ':');

        if (colon == NULL || tap_http_hop(lines[i], (size_t)(colon -
            lines[i]), false))
            continue;
        x->rhdrs = xrealloc(x->rhdrs, (x->nrhdrs + 1) * sizeof(*x->rhdrs));
        x->rhdrs[x->nrhdrs++] = xstrdup(lines[i]);
    }
    ct = tap_http_header(x->rhdrs, x->nrhdrs, "Content-Type");
    x->sse = ct != NULL && strncasecmp(ct, "text/event-stream", 17) == 0;
    if (x->sse)
        x->parser = sse_new(h->t->decl.max_message_bytes, tap_hx_sse_cb, x);
    sid = tap_http_header(x->rhdrs, x->nrhdrs, "Mcp-Session-Id");
    if (x->initialize && status >= 200 && status < 300 && sid != NULL)
        tap_session_new(h, x, sid);
    if (x->session != NULL && status == 404)
        tap_session_drop(h, x->session, "the server answered 404 "
            "(the session is gone)");
    if (x->session != NULL && strcmp(x->method, "DELETE") == 0 &&
        status >= 200 && status < 300)
        tap_session_drop(h, x->session, "the agent ended it");
    if (status >= 300) {
        /* A status instead of MCP, as the dialer judges it. */
        struct failure_evidence evd = { .http_status = status,
            .phase = FAILURE_PHASE_RESPONSE, .content_json = ct != NULL &&
            strncasecmp(ct, "application/json", 16) == 0,
            .content_sse = x->sse };
        char detail[64];

        snprintf(detail, sizeof(detail), "the server answered HTTP %ld",
            status);
        tap_hx_fail_ids(x, &evd, detail);
    }
    x->state = TAP_HX_HEAD;
    tap_hx_wake(x);
}

/* http_relay on_body. */
static enum http_relay_take
tap_hx_body_cb(void *arg, const char *p, size_t n)
{
    struct tap_hx *x = arg;
    struct tap    *t = x->h->t;
    size_t         take = n;
    bool           at;

    if (x->olen - x->off > TAP_HIGH_WATER)
        return HTTP_RELAY_PAUSE;
    if (x->sse && x->inject != NULL) {
        /* The operator cancelled: up to the event's end, then the tap's
         * answer, then the end. */
        take = tap_hx_boundary(x, p, n, &at);
    } else if (x->sse) {
        tap_hx_boundary(x, p, n, &at);
    }
    t->bytes[TAP_SIDE_SERVER] += take;
    tap_hx_queue(x, p, take);
    if (x->parser != NULL)
        sse_feed(x->parser, p, take);
    else if (!x->copy_skip && x->status < 300) {
        if (x->copy_len + take > t->decl.max_message_bytes) {
            x->copy_skip = true;
        } else {
            if (x->copy_len + take > x->copy_cap) {
                x->copy_cap = (x->copy_len + take) * 2;
                x->copy = xrealloc(x->copy, x->copy_cap);
            }
            memcpy(x->copy + x->copy_len, p, take);
            x->copy_len += take;
        }
    }
    tap_hx_wake(x);
    if (x->inject != NULL && at) {
        tap_hx_queue(x, x->inject, strlen(x->inject));
        free(x->inject);
        x->inject = NULL;
        x->stopped = true;
        x->up_done = true;
        return HTTP_RELAY_STOP;
    }
    return HTTP_RELAY_TAKEN;
}

/* The tap answers the agent itself (the upstream never answered). */
static void
tap_hx_own(struct tap_hx *x, int status, const char *type, char *body)
{
    x->own = true;
    x->own_status = status;
    x->own_type = type;
    free(x->own_body);
    x->own_body = body;
    x->up_done = true;
    tap_hx_wake(x);
}

/* http_relay on_done. */
static void
tap_hx_done_cb(void *arg, const struct failure_evidence *evd,
    const char *text)
{
    struct tap_hx          *x = arg;
    struct tap             *t = x->h->t;
    struct failure_evidence e = *evd;
    char                    detail[300];

    x->up = NULL;
    if (x->stopped)
        return;
    if (x->inject != NULL) {
        /* The operator cancelled mid-event and the server ended there:
         * the event is ended (the agent reads its part as it may), then
         * the tap's answer, or the agent would wait for it for ever. */
        tap_hx_queue(x, "\n\n", x->nl_run >= 1 ? 1 : 2);
        tap_hx_queue(x, x->inject, strlen(x->inject));
        free(x->inject);
        x->inject = NULL;
        x->stopped = true;
        x->up_done = true;
        tap_hx_wake(x);
        return;
    }
    if (e.net == NET_OK && x->status < 300) {
        if (x->parser != NULL)
            sse_finish(x->parser);
        else if (x->copy_len > 0 && !x->copy_skip)
            tap_ledger_line(t->ledger, TAP_SIDE_SERVER, x->copy, x->copy_len,
                tap_now(t), clock_wall_ms());
        /* The answer ended without the answers it owed. */
        if (x->sse)
            e.stream_ended = true;
        else
            e.no_matching_response = true;
        tap_hx_fail_ids(x, &e, x->sse ? "the server ended the answer's "
            "stream before the answer" : "the server's answer held no "
            "answer to the request");
    } else if (e.net != NET_OK) {
        snprintf(detail, sizeof(detail), "upstream %s: %s", x->h->shown,
            text != NULL ? text : "the transfer failed");
        if (x->state != TAP_HX_WAIT && x->sse)
            e.stream_ended = true;
        tap_hx_fail_ids(x, &e, detail);
        if (x->state == TAP_HX_WAIT) {
            /* No answer at all: a gateway's 502, in words. */
            char *clean = str_sanitized(detail);

            tap_hx_own(x, e.net == NET_TIMEDOUT ? 504 : 502,
                "text/plain; charset=utf-8", str_printf("mcptop tap: %s\n",
                clean));
            free(clean);
            return;
        }
        x->cut = true;      /* cut as the server cut it */
    }
    x->up_done = true;
    tap_hx_wake(x);
}

static const struct http_relay_callbacks tap_hx_relay_cb = {
    .on_head = tap_hx_head_cb,
    .on_body = tap_hx_body_cb,
    .on_done = tap_hx_done_cb,
};

/* --- the agent's side (MHD) ---------------------------------------------- */

/* MHD_ContentReaderCallback: what is queued for the agent. */
static ssize_t
tap_hx_read_cb(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct tap_hx *x = cls;
    size_t         n = x->olen - x->off;

    (void)pos;
    if (n > 0) {
        if (n > max)
            n = max;
        memcpy(buf, x->out + x->off, n);
        x->off += n;
        if (x->off == x->olen)
            x->off = x->olen = 0;
        if (http_relay_paused(x->up) && x->olen - x->off < TAP_HTTP_LOW_WATER)
            x->h->resume_due = true;
        return (ssize_t)n;
    }
    if (x->up_done)
        return x->cut ? MHD_CONTENT_READER_END_WITH_ERROR :
            MHD_CONTENT_READER_END_OF_STREAM;
    tap_hx_suspend(x);
    return 0;
}

/* A header a proxy may pass on (RFC 9110 5.1, 5.5): its name a token,
 * its value without CR, LF, NUL or another control but HTAB. What
 * libmicrohttpd hands over otherwise (a bare CR kept in a value, an
 * obs-fold folded into a name) would reach the upstream as it came: a
 * server that ends a line at a bare CR would read a header the agent
 * smuggled in. */
static bool
tap_http_header_ok(const char *key, const char *value)
{
    static const char tchar[] = "!#$%&'*+-.^_`|~";

    if (key[0] == '\0')
        return false;
    for (const unsigned char *p = (const unsigned char *)key; *p; p++) {
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
            (*p >= 'A' && *p <= 'Z') || strchr(tchar, *p) != NULL))
            return false;
    }
    for (const unsigned char *p = (const unsigned char *)value;
        p != NULL && *p; p++) {
        if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
            return false;
    }
    return true;
}

/* MHD_KeyValueIterator: one header of the agent's. */
static enum MHD_Result
tap_hx_header_cb(void *cls, enum MHD_ValueKind kind, const char *key,
    const char *value)
{
    struct tap_hx *x = cls;

    (void)kind;
    if (key == NULL)
        return MHD_YES;
    if (!tap_http_header_ok(key, value)) {
        x->bad_header = true;
        return MHD_NO;
    }
    if (tap_http_hop(key, strlen(key), true))
        return MHD_YES;
    if (x->nhdrs >= TAP_HTTP_HEADERS_MAX) {
        x->many_headers = true;
        return MHD_NO;
    }
    x->hdrs = xrealloc(x->hdrs, (x->nhdrs + 1) * sizeof(*x->hdrs));
    x->hdrs[x->nhdrs++] = str_printf("%s: %s", key, value != NULL ? value :
        "");
    if (strcasecmp(key, "Mcp-Session-Id") == 0 && value != NULL &&
        x->session == NULL)
        x->session = xstrdup(value);
    return MHD_YES;
}

static enum MHD_Result
tap_hx_queue_buffer(struct MHD_Connection *conn, int status,
    const char *type, const char *body)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(strlen(body),
        (void *)body, MHD_RESPMEM_MUST_COPY);
    enum MHD_Result      rc;

    if (type != NULL)
        MHD_add_response_header(resp, "Content-Type", type);
    rc = MHD_queue_response(conn, (unsigned)status, resp);
    MHD_destroy_response(resp);
    return rc;
}

/* The head came: the answer goes to the agent, its body as it comes. */
static enum MHD_Result
tap_hx_answer(struct tap_hx *x)
{
    struct MHD_Response *resp;
    enum MHD_Result      rc;

    if (x->own)
        return tap_hx_queue_buffer(x->conn, x->own_status, x->own_type,
            x->own_body);
    if (x->status == 204 || x->status == 304 ||
        strcmp(x->method, "HEAD") == 0)
        resp = MHD_create_response_from_buffer(0, (void *)"",
            MHD_RESPMEM_PERSISTENT);
    else
        resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN,
            TAP_HTTP_BLOCK, tap_hx_read_cb, x, NULL);
    for (size_t i = 0; i < x->nrhdrs; i++) {
        char *colon = strchr(x->rhdrs[i], ':');
        char *v = colon + 1;

        *colon = '\0';
        while (*v == ' ' || *v == '\t')
            v++;
        MHD_add_response_header(resp, x->rhdrs[i], v);
        *colon = ':';
    }
    rc = MHD_queue_response(x->conn, (unsigned)x->status, resp);
    MHD_destroy_response(resp);
    x->state = TAP_HX_STREAM;
    return rc;
}

/* Start x upstream. */
static int
tap_hx_start(struct tap_hx *x)
{
    struct tap_http          *h = x->h;
    struct http_relay_request rq = {
        .method = x->method,
        .url = h->upstream,
        .headers = (const char *const *)x->hdrs,
        .nheaders = x->nhdrs,
        .body = x->len > 0 ? x->body : NULL,
        .body_len = x->len,
    };
    char                     *cause = NULL;

    x->up = http_relay_start(h->ce, &rq, &tap_hx_relay_cb, x, &cause);
    if (x->up == NULL) {
        free(cause);
        return -1;
    }
    return 0;
}

/* MHD_AccessHandlerCallback. */
static enum MHD_Result
tap_http_access_cb(void *cls, struct MHD_Connection *conn, const char *url,
    const char *method, const char *version, const char *upload_data,
    size_t *upload_data_size, void **req_cls)
{
    struct tap_http *h = cls;
    struct tap_hx   *x = *req_cls;

    (void)url;
    (void)version;
    if (x == NULL) {
        x = xcalloc(1, sizeof(*x));
        x->h = h;
        x->conn = conn;
        snprintf(x->method, sizeof(x->method), "%s", method);
        MHD_get_connection_values(conn, MHD_HEADER_KIND, tap_hx_header_cb,
            x);
        x->next = h->xs;
        if (h->xs != NULL)
            h->xs->prev = x;
        h->xs = x;
        *req_cls = x;
        return MHD_YES;
    }
    if (x->state == TAP_HX_BODY && *upload_data_size > 0) {
        size_t n = *upload_data_size;

        if (!x->too_large && x->len + n <= h->t->decl.max_message_bytes) {
            if (x->len + n > x->cap) {
                x->cap = (x->len + n) * 2;
                x->body = xrealloc(x->body, x->cap + 1);
            }
            memcpy(x->body + x->len, upload_data, n);
            x->len += n;
        } else {
            x->too_large = true;
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (x->state == TAP_HX_BODY) {
        if (x->bad_header)
            return tap_hx_queue_buffer(conn, 400, "text/plain",
                "mcptop tap: a header of the request is malformed (a "
                "control character, or a name that is not a token)\n");
        if (x->many_headers)
            return tap_hx_queue_buffer(conn, 431, "text/plain",
                "mcptop tap: the request has more headers than the tap "
                "passes on\n");
        if (x->too_large)
            return tap_hx_queue_buffer(conn, 413, "text/plain",
                "mcptop tap: the request is larger than the tap reads\n");
        tap_hx_observe_request(x);
        tap_session_touch(h, x);
        x->state = TAP_HX_WAIT;
        if (tap_hx_start(x) != 0)
            return tap_hx_queue_buffer(conn, 502, "text/plain",
                "mcptop tap: cannot start the upstream request\n");
        tap_hx_suspend(x);
        return MHD_YES;
    }
    if (x->own || x->state == TAP_HX_HEAD)
        return tap_hx_answer(x);
    /* Resumed with nothing new (cannot happen): wait again. */
    tap_hx_suspend(x);
    return MHD_YES;
}

/* The agent went away from x before its answer ended: what it carried
 * leaves the ledger as the agent's own cancel would (it will never read
 * the answer; the server is not told, as it would not be without the
 * tap). */
static void
tap_hx_abandoned(struct tap_hx *x)
{
    struct tap *t = x->h->t;

    for (size_t i = 0; i < x->nids; i++) {
        char *note;

        if (tap_ledger_find(t->ledger, TAP_DIR_TO_SERVER, x->ids[i]) == NULL)
            continue;
        note = str_printf("{\"jsonrpc\":\"2.0\",\"method\":"
            "\"notifications/cancelled\",\"params\":{\"requestId\":%s,"
            "\"reason\":\"the agent closed its connection\"}}", x->ids[i]);
        tap_ledger_line(t->ledger, TAP_SIDE_AGENT, note, strlen(note),
            tap_now(t), clock_wall_ms());
        free(note);
    }
}

/* ev_io on a waiting agent's socket: readable is its end (or a request
 * it pipelined, left to MHD). Gone: what it carried leaves the ledger,
 * the transfer upstream ends, and MHD is let to close the connection. */
static void
tap_hx_gone_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    struct tap_hx *x = w->data;
    char           c;
    ssize_t        n = recv(w->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);

    (void)revents;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    ev_io_stop(loop, w);
    if (n > 0)
        return;
    if (x->up != NULL) {
        tap_hx_abandoned(x);
        http_relay_abort(x->up);
        x->up = NULL;
    }
    x->cut = true;
    if (x->state == TAP_HX_WAIT)
        tap_hx_own(x, 502, "text/plain", xstrdup("mcptop tap: the agent "
            "went away\n"));
    x->up_done = true;
    tap_hx_wake(x);
}

static void
tap_hx_free(struct tap_hx *x)
{
    struct tap_http *h = x->h;

    ev_io_stop(h->t->loop, &x->gone);

    if (x->prev != NULL)
        x->prev->next = x->next;
    else
        h->xs = x->next;
    if (x->next != NULL)
        x->next->prev = x->prev;
    http_relay_abort(x->up);
    tap_lines_free(x->hdrs, x->nhdrs);
    tap_lines_free(x->rhdrs, x->nrhdrs);
    tap_lines_free(x->ids, x->nids);
    sse_free(x->parser);
    free(x->session);
    free(x->body);
    free(x->copy);
    free(x->out);
    free(x->inject);
    free(x->own_body);
    free(x);
}

/* MHD_RequestCompletedCallback: the agent's request is over (answered,
 * or the agent went away). */
static void
tap_http_completed_cb(void *cls, struct MHD_Connection *conn,
    void **req_cls, enum MHD_RequestTerminationCode toe)
{
    struct tap_hx *x = *req_cls;

    (void)cls;
    (void)conn;
    if (x == NULL)
        return;
    *req_cls = NULL;
    if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK && x->up != NULL)
        tap_hx_abandoned(x);
    tap_hx_free(x);
}

/* libmicrohttpd's messages, at most TAP_HTTP_LOG_BURST a minute: each
 * agent that resets its connection under an answer makes one, and an
 * agent must not fill the operator's terminal or journal. */
static void
tap_http_log_cb(void *cls, const char *fmt, va_list ap)
{
    struct tap_http *h = cls;
    int64_t          now = clock_mono_ms();
    char             line[512];

    if (now - h->log_since >= 60000) {
        if (h->log_dropped > 0)
            tap_say(h->t, "http: (%lu more messages in the last minute "
                "not shown)", h->log_dropped);
        h->log_since = now;
        h->log_count = 0;
        h->log_dropped = 0;
    }
    if (h->log_count >= TAP_HTTP_LOG_BURST) {
        h->log_dropped++;
        return;
    }
    h->log_count++;
    vsnprintf(line, sizeof(line), fmt, ap);
    line[strcspn(line, "\r\n")] = '\0';
    str_sanitize(line, sizeof(line), line, strlen(line));
    tap_say(h->t, "http: %s", line);
}

/* --- the operator: cancel and end ---------------------------------------- */

int
tap_http_cancel(struct tap *t, const struct tap_request *r,
    const char *to_server, const char *to_agent, char **detail)
{
    struct tap_http *h = t->http;
    struct tap_hx   *x = NULL;

    for (struct tap_hx *y = h->xs; y != NULL && x == NULL; y = y->next) {
        for (size_t i = 0; i < y->nids && x == NULL; i++) {
            if (strcmp(y->ids[i], r->id) == 0 && !y->up_done)
                x = y;
        }
    }
    if (x != NULL && x->nids > 1) {
        /* The tap's answer would be the whole answer (one object where
         * the agent waits for the batch's list, its other requests never
         * answered, in flight for ever). */
        *detail = str_printf("it is one of the %zu requests of a batch: the "
            "tap answers a batch whole or not at all", x->nids);
        return -1;
    }
    if (x != NULL && x->state != TAP_HX_WAIT && !x->sse) {
        *detail = xstrdup("the server's answer to it is arriving already");
        return -1;
    }
    /* To the server (MCP basic/utilities/cancellation), in the agent's
     * session. */
    if (x != NULL)
        tap_session_send(h, "POST", x->session, tap_http_header(x->hdrs,
            x->nhdrs, "MCP-Protocol-Version"), tap_http_header(x->hdrs,
            x->nhdrs, "Authorization"), to_server, 10000);
    if (x == NULL) {
        *detail = xstrdup("no open answer of the agent's carries it (the "
            "agent went away from it)");
        return -1;
    }
    if (x->state == TAP_HX_WAIT) {
        /* No answer yet: the tap's, as JSON. */
        http_relay_abort(x->up);
        x->up = NULL;
        tap_hx_own(x, 200, "application/json", xstrdup(to_agent));
        return 0;
    }
    /* An SSE answer: the tap's event at the next event boundary, then the
     * stream ends (a late answer of the server's never reaches the
     * agent). */
    free(x->inject);
    x->inject = str_printf("event: message\ndata: %s\n\n", to_agent);
    if (!x->any || x->nl_run >= 2) {
        tap_hx_queue(x, x->inject, strlen(x->inject));
        free(x->inject);
        x->inject = NULL;
        http_relay_abort(x->up);
        x->up = NULL;
        x->stopped = true;
        x->up_done = true;
        tap_hx_wake(x);
    }
    return 0;
}

/* --- start and stop ------------------------------------------------------ */

/* "HOST:PORT" ("[V6]:PORT") as an address. */
static int
tap_http_parse_listen(const char *spec, struct sockaddr_storage *ss,
    socklen_t *sslen, bool *loopback)
{
    char                host[INET6_ADDRSTRLEN + 2];
    const char         *colon = strrchr(spec, ':');
    struct addrinfo     hints = { .ai_flags = AI_NUMERICHOST |
        AI_NUMERICSERV, .ai_socktype = SOCK_STREAM }, *res = NULL;
    size_t              hl;

    if (colon == NULL || colon == spec || colon[1] == '\0')
        return -1;
    hl = (size_t)(colon - spec);
    if (spec[0] == '[' && hl > 2 && spec[hl - 1] == ']') {
        spec++;
        hl -= 2;
    }
    if (hl >= sizeof(host))
        return -1;
    memcpy(host, spec, hl);
    host[hl] = '\0';
    if (getaddrinfo(host, colon + 1, &hints, &res) != 0 || res == NULL)
        return -1;
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    *sslen = res->ai_addrlen;
    freeaddrinfo(res);
    if (ss->ss_family == AF_INET)
        *loopback = (ntohl(((struct sockaddr_in *)ss)->sin_addr.s_addr) >>
            24) == 127;
    else
        *loopback = IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)ss)->
            sin6_addr);
    return 0;
}

int
tap_http_start(struct tap *t, char **cause)
{
    struct tap_http            *h;
    struct sockaddr_storage     ss;
    socklen_t                   sslen = 0;
    bool                        loopback = false;
    unsigned                    flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG |
        MHD_ALLOW_SUSPEND_RESUME;
    const union MHD_DaemonInfo *info;
    char                        host[INET6_ADDRSTRLEN];
    char                       *shown;
    uint16_t                    port;

    if (tap_http_parse_listen(t->opt.listen, &ss, &sslen, &loopback) != 0) {
        *cause = str_printf("--listen %s: expected HOST:PORT with a numeric "
            "address (127.0.0.1:8808, [::1]:8808)", t->opt.listen);
        return -1;
    }
    if (!loopback && !t->opt.listen_any) {
        *cause = str_printf("--listen %s is not a loopback address: the "
            "agent's requests and credentials would be open to the network "
            "(add --public to mean it)", t->opt.listen);
        return -1;
    }
    if (strncasecmp(t->opt.upstream, "http://", 7) != 0 &&
        strncasecmp(t->opt.upstream, "https://", 8) != 0) {
        *cause = str_printf("--upstream needs an http:// or https:// URL");
        return -1;
    }
    if ((shown = tap_http_shown_url(t->opt.upstream)) == NULL) {
        *cause = str_printf("--upstream: not a URL libcurl can parse (a "
            "space, a bad host or port?)");
        return -1;
    }
    h = xcalloc(1, sizeof(*h));
    h->t = t;
    h->upstream = xstrdup(t->opt.upstream);
    h->shown = shown;
    h->ce = curlev_new(t->loop, 1, 0);
    if (ss.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    /* The port as well as the address: MHD names it when it cannot bind. */
    port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->
        sin6_port : ((struct sockaddr_in *)&ss)->sin_port);
    h->mhd = MHD_start_daemon(flags, port, NULL, NULL, tap_http_access_cb, h,
        MHD_OPTION_EXTERNAL_LOGGER, tap_http_log_cb, h,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)TAP_HTTP_CONNECTIONS,
        /* An idle keep-alive connection goes in time (a waiting answer
         * is suspended, and never times out). */
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)TAP_HTTP_IDLE_S,
        MHD_OPTION_NOTIFY_COMPLETED, tap_http_completed_cb, h,
        MHD_OPTION_END);
    if (h->mhd == NULL || h->ce == NULL) {
        *cause = str_printf("cannot listen on %s", t->opt.listen);
        goto fail;
    }
    info = MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_EPOLL_FD);
    if (info == NULL) {
        *cause = xstrdup("libmicrohttpd has no epoll here");
        goto fail;
    }
    ev_io_init(&h->io, tap_http_io_cb, info->epoll_fd, EV_READ);
    h->io.data = h;
    ev_io_start(t->loop, &h->io);
    ev_timer_init(&h->timer, tap_http_timer_cb, 0., 0.);
    h->timer.data = h;
    ev_timer_init(&h->kick, tap_http_timer_cb, 0., 0.);
    h->kick.data = h;
    ev_prepare_init(&h->flow, tap_http_flow_cb);
    h->flow.data = h;
    ev_prepare_start(t->loop, &h->flow);
    info = MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_BIND_PORT);
    if (getnameinfo((struct sockaddr *)&ss, sslen, host, sizeof(host), NULL,
        0, NI_NUMERICHOST) != 0)
        snprintf(host, sizeof(host), "?");
    snprintf(h->listen, sizeof(h->listen), ss.ss_family == AF_INET6 ?
        "[%s]:%u" : "%s:%u", host, info != NULL ? (unsigned)info->port : 0u);
    if (!loopback)
        tap_say(t, "warning: listening on %s, beyond this machine",
            h->listen);
    tap_say(t, "listening on http://%s/ for %s", h->listen, h->shown);
    t->http = h;
    tap_http_run_mhd(h);
    return 0;
fail:
    if (h->mhd != NULL)
        MHD_stop_daemon(h->mhd);
    curlev_free(h->ce);
    free(h->upstream);
    free(h->shown);
    free(h);
    return -1;
}

const char *
tap_http_listen(const struct tap *t)
{
    return t->http != NULL ? t->http->listen : "";
}

const char *
tap_http_upstream(const struct tap *t)
{
    return t->http != NULL ? t->http->shown : "";
}

void
tap_http_stop(struct tap *t)
{
    struct tap_http *h = t->http;

    if (h == NULL)
        return;
    ev_io_stop(t->loop, &h->io);
    ev_timer_stop(t->loop, &h->timer);
    ev_timer_stop(t->loop, &h->kick);
    ev_prepare_stop(t->loop, &h->flow);
    /* Every upstream transfer ends; every suspended agent is let go (MHD
     * stops only with none suspended). */
    for (struct tap_hx *x = h->xs; x != NULL; x = x->next) {
        http_relay_abort(x->up);
        x->up = NULL;
        x->up_done = true;
        x->cut = true;
        ev_io_stop(t->loop, &x->gone);
        if (x->suspended) {
            x->suspended = false;
            MHD_resume_connection(x->conn);
        }
    }
    while (h->owns != NULL)
        tap_session_own_free(h->owns);
    MHD_run(h->mhd);
    MHD_stop_daemon(h->mhd);
    while (h->xs != NULL)
        tap_hx_free(h->xs);
    curlev_free(h->ce);
    while (h->sessions != NULL) {
        struct tap_session *s = h->sessions;

        h->sessions = s->next;
        tap_session_free(s);
    }
    free(h->upstream);
    free(h->shown);
    free(h);
    t->http = NULL;
}
