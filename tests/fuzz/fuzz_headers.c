/*
 * HTTP answers, header values first (src/engine/http.c). The header code
 * (Mcp-Session-Id, Retry-After, WWW-Authenticate, Content-Type,
 * cf-mitigated) is static inside http.c and runs in libcurl's header
 * callback, so this target reaches it the way mcptop does: the input is
 * the raw bytes of one HTTP response (status line, headers, body), served
 * on 127.0.0.1 by a one-shot server on the same libev loop to a real
 * transfer made with http_start (POST, GET or DELETE, max_bytes and
 * whether a callback stops the transfer drawn from the input's hash).
 * Each input gets a fresh curlev, so no connection is reused.
 *
 * Checked in on_done (and the callbacks before it):
 *  - the session id is NULL or visible ASCII, and session_id_invalid is
 *    not set with it;
 *  - the auth scheme is NULL or sanitized text (no control byte, ESC,
 *    DEL), without a comma;
 *  - retry_after_s >= -1; the body is at most max_bytes (64 KiB for a
 *    non-2xx answer) and NUL-terminated; each SSE event handed up is at
 *    most max_bytes; the last event id is not NULL;
 *  - stopped is set when, and only when, a callback asked to stop;
 *  - an SSE "endpoint" event's data goes through http_resolve_url with the
 *    request URL as base, as the 2024-11-05 fallback does.
 * Define FUZZ_STRICT_HTTP to also check what http.c does not yet keep
 * (see tests/fuzz/README.md, "Known findings").
 */
#define _GNU_SOURCE     /* accept4 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "engine/curlev.h"
#include "engine/http.h"
#include "fuzz.h"
#include "util/str.h"

#define FUZZ_HTTP_MAX_INPUT (64 * 1024)
#define FUZZ_HTTP_ERROR_MAX (64 * 1024)   /* http.c HTTP_ERROR_BODY_MAX */

static const char fuzz_http_body[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";

/* The one-shot server: one connection, one answer, then EOF. */
struct fuzz_srv {
    int            lfd;
    ev_io          accept_w;
    int            cfd;
    ev_io          io_w;
    char           req[16384];
    size_t         req_len;
    size_t         req_body;        /* body bytes the request carries */
    bool           answering;
    const uint8_t *resp;
    size_t         resp_len;
    size_t         resp_off;
};

/* What one transfer saw. */
struct fuzz_xfer {
    size_t  max_bytes;
    bool    stop_headers;           /* on_headers asks to stop */
    size_t  stop_after;             /* on_message stops at this one, 0 never */
    size_t  messages;
    bool    asked_stop;
    bool    done;
    char    url[64];
};

static struct ev_loop *fuzz_loop;
static struct fuzz_srv fuzz_srv;
static int             fuzz_port;

/* Close the served connection, if any. */
static void
fuzz_srv_close(struct fuzz_srv *s)
{
    if (s->cfd < 0)
        return;
    ev_io_stop(fuzz_loop, &s->io_w);
    close(s->cfd);
    s->cfd = -1;
}

/* Write what is left of the answer; at its end, half-close. */
static void
fuzz_srv_write(struct fuzz_srv *s)
{
    while (s->resp_off < s->resp_len) {
        ssize_t n = write(s->cfd, s->resp + s->resp_off,
            s->resp_len - s->resp_off);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            ev_io_stop(fuzz_loop, &s->io_w);
            ev_io_set(&s->io_w, s->cfd, EV_WRITE);
            ev_io_start(fuzz_loop, &s->io_w);
            return;
        }
        if (n <= 0) {               /* the client went away early */
            fuzz_srv_close(s);
            return;
        }
        s->resp_off += (size_t)n;
    }
    shutdown(s->cfd, SHUT_WR);
    ev_io_stop(fuzz_loop, &s->io_w);
    ev_io_set(&s->io_w, s->cfd, EV_READ);
    ev_io_start(fuzz_loop, &s->io_w);
}

/* ev_io: the request comes in; once whole, the answer goes out. */
static void
fuzz_srv_io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    struct fuzz_srv *s = w->data;
    char             buf[4096];
    const char      *end;
    ssize_t          n;

    (void)loop;
    if (revents & EV_WRITE) {
        fuzz_srv_write(s);
        return;
    }
    n = read(s->cfd, buf, sizeof buf);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        fuzz_srv_close(s);
        return;
    }
    if (s->answering)
        return;                     /* drain until the client closes */
    if ((size_t)n > sizeof s->req - 1 - s->req_len)
        n = (ssize_t)(sizeof s->req - 1 - s->req_len);
    memcpy(s->req + s->req_len, buf, (size_t)n);
    s->req_len += (size_t)n;
    s->req[s->req_len] = '\0';
    end = strstr(s->req, "\r\n\r\n");
    if (end == NULL || s->req_len < (size_t)(end - s->req) + 4 + s->req_body)
        return;
    s->answering = true;
    fuzz_srv_write(s);
}

/* ev_io: a connection to serve. */
static void
fuzz_srv_accept_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    struct fuzz_srv *s = w->data;
    int              fd;

    (void)loop;
    (void)revents;
    fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0)
        return;
    if (s->cfd >= 0) {
        close(fd);                  /* one connection per input */
        return;
    }
    s->cfd = fd;
    ev_io_init(&s->io_w, fuzz_srv_io_cb, fd, EV_READ);
    s->io_w.data = s;
    ev_io_start(fuzz_loop, &s->io_w);
}

/* The loop, the HTTP library and a listening socket, once per process. */
int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    struct sockaddr_in sa;
    socklen_t          sl = sizeof sa;

    (void)argc;
    (void)argv;
    fuzz_loop = ev_default_loop(0);
    if (http_global_init() != 0) {
        fprintf(stderr, "fuzz_headers: http_global_init failed\n");
        exit(1);
    }
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    fuzz_srv.cfd = -1;
    fuzz_srv.lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
        0);
    if (fuzz_srv.lfd < 0
        || bind(fuzz_srv.lfd, (struct sockaddr *)&sa, sizeof sa) != 0
        || listen(fuzz_srv.lfd, 16) != 0
        || getsockname(fuzz_srv.lfd, (struct sockaddr *)&sa, &sl) != 0) {
        perror("fuzz_headers: listen on 127.0.0.1");
        exit(1);
    }
    fuzz_port = ntohs(sa.sin_port);
    ev_io_init(&fuzz_srv.accept_w, fuzz_srv_accept_cb, fuzz_srv.lfd, EV_READ);
    fuzz_srv.accept_w.data = &fuzz_srv;
    ev_io_start(fuzz_loop, &fuzz_srv.accept_w);
    return 0;
}

/* http_callbacks.on_headers. */
static int
fuzz_http_headers(void *arg, struct http_xfer *x, long status,
    const char *content_type)
{
    struct fuzz_xfer *f = arg;

    (void)x;
    (void)status;
    if (content_type != NULL)
        (void)strlen(content_type);
    if (f->stop_headers) {
        f->asked_stop = true;
        return 1;
    }
    return 0;
}

/* http_callbacks.on_message: one SSE event, or a whole JSON body. */
static int
fuzz_http_message(void *arg, struct http_xfer *x, const char *type,
    const char *data, size_t len)
{
    struct fuzz_xfer *f = arg;
    char             *url;

    (void)x;
    FUZZ_CHECK(len <= f->max_bytes, "a message of %zu bytes, max %zu", len,
        f->max_bytes);
    FUZZ_CHECK(data != NULL && data[len] == '\0',
        "message data not NUL-terminated");
    f->messages++;
    if (type != NULL && strcmp(type, "endpoint") == 0) {
        url = http_resolve_url(f->url, data);
        if (url != NULL)
            (void)strlen(url);
        free(url);
    }
    if (f->stop_after > 0 && f->messages == f->stop_after) {
        f->asked_stop = true;
        return 1;
    }
    return 0;
}

/* http_callbacks.on_done: the properties of the result. */
static void
fuzz_http_done(void *arg, struct http_xfer *x, const struct http_result *r)
{
    struct fuzz_xfer    *f = arg;
    const unsigned char *p;
    size_t               cap;

    (void)x;
    f->done = true;
    if (r->session_id != NULL) {
        FUZZ_CHECK(str_is_visible_ascii(r->session_id,
            strlen(r->session_id)), "session id not visible ASCII");
        FUZZ_CHECK(!r->session_id_invalid, "a session id marked invalid");
    }
    if (r->auth_scheme != NULL) {
        for (p = (const unsigned char *)r->auth_scheme; *p != '\0'; p++)
            FUZZ_CHECK(*p >= 0x20 && *p != 0x7f, "auth scheme byte 0x%02x",
                *p);
        FUZZ_CHECK(strchr(r->auth_scheme, ',') == NULL,
            "auth scheme \"%s\" past a comma", r->auth_scheme);
    }
    FUZZ_CHECK(r->retry_after_s >= -1, "retry_after_s %ld",
        r->retry_after_s);
    cap = r->status >= 200 && r->status < 300 ? f->max_bytes
        : FUZZ_HTTP_ERROR_MAX;
    FUZZ_CHECK(r->body_len <= cap, "a body of %zu bytes, cap %zu",
        r->body_len, cap);
    if (r->body != NULL)
        FUZZ_CHECK(r->body[r->body_len] == '\0', "body not NUL-terminated");
    else
        FUZZ_CHECK(r->body_len == 0, "no body but a length");
    FUZZ_CHECK(r->last_event_id != NULL, "last event id is NULL");
    FUZZ_CHECK(r->retry_ms >= -1, "retry_ms %lld", (long long)r->retry_ms);
    FUZZ_CHECK(r->stopped == f->asked_stop, "stopped %d, asked %d",
        (int)r->stopped, (int)f->asked_stop);
    if (r->content_type != NULL)
        (void)strlen(r->content_type);
    if (r->error_text != NULL)
        (void)strlen(r->error_text);
#ifdef FUZZ_STRICT_HTTP
    /* The scheme is a non-empty RFC 9110 token: it ends at any other
     * byte, and one made only of bytes the sanitizer drops is none. */
    FUZZ_CHECK(r->auth_scheme == NULL || r->auth_scheme[0] != '\0',
        "an empty auth scheme");
    for (p = (const unsigned char *)r->auth_scheme; p != NULL && *p != '\0';
        p++)
        FUZZ_CHECK(*p > 0x20 && *p < 0x7f
            && strchr("\"(),/:;<=>?@[\\]{}", *p) == NULL,
            "auth scheme byte 0x%02x is not a token character", *p);
    /* The scheme belongs to the answer that carried WWW-Authenticate. */
    FUZZ_CHECK(r->auth_scheme == NULL || r->evd.www_authenticate,
        "an auth scheme kept from an interim response");
    /* A Retry-After past a year is clamped (issue 12, item 9). */
    FUZZ_CHECK(r->retry_after_s <= 365L * 24 * 3600,
        "retry_after_s %ld not clamped", r->retry_after_s);
#endif
}

static const struct http_callbacks fuzz_http_cb = {
    .on_headers = fuzz_http_headers,
    .on_message = fuzz_http_message,
    .on_done = fuzz_http_done,
};

/* ev_timer: the transfer did not end in time. */
static void
fuzz_http_timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)revents;
    *(bool *)w->data = true;
    ev_break(loop, EVBREAK_ALL);
}

static const size_t fuzz_http_limits[] = { 16, 256, 4096, 1u << 20 };

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t            gen = fuzz_hash(FUZZ_HASH_INIT, data, size);
    struct fuzz_xfer    f;
    struct http_request rq;
    struct curlev      *ce;
    struct http_xfer   *x;
    char               *cause = NULL;
    ev_timer            timer;
    bool                timed_out = false;

    if (size > FUZZ_HTTP_MAX_INPUT)
        size = FUZZ_HTTP_MAX_INPUT;
    memset(&f, 0, sizeof f);
    f.max_bytes = fuzz_http_limits[fuzz_next(&gen) % 4];
    f.stop_headers = fuzz_next(&gen) % 8 == 0;
    f.stop_after = fuzz_next(&gen) % 4;
    snprintf(f.url, sizeof f.url, "http://127.0.0.1:%d/mcp", fuzz_port);

    memset(&rq, 0, sizeof rq);
    rq.method = (enum http_method)(fuzz_next(&gen) % 3);
    rq.url = f.url;
    if (rq.method == HTTP_POST) {
        rq.body = fuzz_http_body;
        rq.body_len = sizeof fuzz_http_body - 1;
    }
    rq.session_id = "fuzz-session";
    rq.protocol_version = "2025-11-25";
    rq.max_bytes = f.max_bytes;

    fuzz_srv.req_len = 0;
    fuzz_srv.req_body = rq.body_len;
    fuzz_srv.answering = false;
    fuzz_srv.resp = data;
    fuzz_srv.resp_len = size;
    fuzz_srv.resp_off = 0;

    ce = curlev_new(fuzz_loop, 1, 0);
    FUZZ_CHECK(ce != NULL, "curlev_new failed");
    x = http_start(ce, &rq, &fuzz_http_cb, &f, &cause);
    FUZZ_CHECK(x != NULL, "http_start: %s", cause);
    ev_timer_init(&timer, fuzz_http_timeout_cb, 10.0, 0.0);
    timer.data = &timed_out;
    ev_timer_start(fuzz_loop, &timer);
    while (!f.done && !timed_out)
        ev_run(fuzz_loop, EVRUN_ONCE);
    ev_timer_stop(fuzz_loop, &timer);
    FUZZ_CHECK(!timed_out, "the transfer did not end in 10 s");
    fuzz_srv_close(&fuzz_srv);
    curlev_free(ce);
    return 0;
}
