/*
 * A one-purpose HTTP listener: read one request head per connection (at
 * most 8 KiB, within 5 s), answer it, close. Only "GET /callback?..." is
 * understood; anything else (a favicon, a probe) gets 404. Any local
 * process can connect, so nothing one connection does stops the real
 * redirect: a callback whose state is not the one expected is answered
 * 400, counted and ignored (the listener keeps waiting, until the flow's
 * own deadline); at most 32 connections are open at once, and a new one
 * when all are taken closes the oldest (a browser sends its request at
 * once; a connection that sends nothing is what gets closed).
 */
#include "oauth/oauth_listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "engine/oauth_url.h"
#include "engine/url.h"
#include "util/str.h"
#include "util/xmalloc.h"

#define OAUTH_LISTEN_CONNS     32
#define OAUTH_LISTEN_HEAD_MAX  8192
#define OAUTH_LISTEN_TIMEOUT_S 5.0

struct oauth_listen_conn {
    ev_io                io;        /* first: the watcher is the conn */
    ev_timer             timer;
    struct oauth_listen *l;
    char                 buf[OAUTH_LISTEN_HEAD_MAX + 1];
    size_t               len;
    ev_tstamp            since;     /* accepted at (loop time) */
    bool                 used;
};

struct oauth_listen {
    struct ev_loop          *loop;
    ev_io                    accept_io;
    int                      fd;
    char                     redirect_uri[64];
    oauth_listen_cb          cb;
    void                    *arg;
    bool                     delivered;
    char                    *state;     /* the one expected, or NULL */
    unsigned long            ignored;   /* callbacks with another state */
    bool                    *freed;     /* set when freed inside cb */
    struct oauth_listen_conn conns[OAUTH_LISTEN_CONNS];
};

static void
oauth_listen_close(struct oauth_listen_conn *c)
{
    if (!c->used)
        return;
    ev_io_stop(c->l->loop, &c->io);
    ev_timer_stop(c->l->loop, &c->timer);
    close(c->io.fd);
    c->used = false;
}

/* Write the whole answer, best effort (the socket is tiny and local). */
static void
oauth_listen_reply(struct oauth_listen_conn *c, int status, const char *text)
{
    char   head[256];
    int    n = snprintf(head, sizeof(head), "HTTP/1.1 %d %s\r\n"
        "Content-Type: text/html; charset=utf-8\r\n"
        "Content-Length: %zu\r\nCache-Control: no-store\r\n"
        "Connection: close\r\n\r\n", status, status == 200 ? "OK" :
        status == 400 ? "Bad Request" : "Not Found", strlen(text));
    ssize_t w = send(c->io.fd, head, (size_t)n, MSG_NOSIGNAL);

    if (w == n)
        w = send(c->io.fd, text, strlen(text), MSG_NOSIGNAL);
    (void)w;
}

/* Value of name in a query string (decoded; caller frees), or NULL. */
static char *
oauth_listen_param(const char *q, const char *name)
{
    size_t nl = strlen(name);

    while (q != NULL && *q != '\0') {
        const char *amp = strchr(q, '&');
        size_t      len = amp != NULL ? (size_t)(amp - q) : strlen(q);

        if (len > nl && strncmp(q, name, nl) == 0 && q[nl] == '=')
            return url_unescape_form(q + nl + 1, len - nl - 1);
        q = amp != NULL ? amp + 1 : NULL;
    }
    return NULL;
}

/* A complete request head: answer it and, for the callback, deliver. */
static void
oauth_listen_handle(struct oauth_listen_conn *c)
{
    struct oauth_listen *l = c->l;
    char                *sp, *path = c->buf + 4, *q;
    char                *code, *state, *err, *desc;
    bool                 freed = false;

    if (strncmp(c->buf, "GET ", 4) != 0 ||
        (sp = strchr(path, ' ')) == NULL) {
        oauth_listen_reply(c, 404, "<p>mcptop: not found</p>");
        oauth_listen_close(c);
        return;
    }
    *sp = '\0';
    q = strchr(path, '?');
    if (q != NULL)
        *q++ = '\0';
    if (strcmp(path, "/callback") != 0 || l->delivered) {
        oauth_listen_reply(c, 404, "<p>mcptop: not found</p>");
        oauth_listen_close(c);
        return;
    }
    state = oauth_listen_param(q, "state");
    if (l->state != NULL && (state == NULL || strcmp(state, l->state) != 0)) {
        /* Not this login's answer (another process, a stale tab): it
         * must not end the login; the real redirect may still come. */
        l->ignored++;
        oauth_listen_reply(c, 400, "<!doctype html><title>mcptop</title>"
            "<p>mcptop: this is not the answer this login waits for (its "
            "state does not match).</p>");
        oauth_listen_close(c);
        free(state);
        return;
    }
    code = oauth_listen_param(q, "code");
    err = oauth_listen_param(q, "error");
    desc = oauth_listen_param(q, "error_description");
    oauth_listen_reply(c, 200, err != NULL ?
        "<!doctype html><title>mcptop</title><p>mcptop: the authorization "
        "was not granted. You may close this window.</p>" :
        "<!doctype html><title>mcptop</title><p>mcptop: authorization "
        "received. You may close this window.</p>");
    oauth_listen_close(c);
    l->delivered = true;
    l->freed = &freed;
    l->cb(l->arg, code, state, err, desc);
    if (!freed)
        l->freed = NULL;
    str_wipe_free(code);
    free(state);
    free(err);
    free(desc);
}

/* ev_io: bytes of a request head. */
static void
oauth_listen_read_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    struct oauth_listen_conn *c = (struct oauth_listen_conn *)w;
    ssize_t                   n;

    (void)loop;
    (void)revents;
    n = recv(w->fd, c->buf + c->len, OAUTH_LISTEN_HEAD_MAX - c->len, 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        oauth_listen_close(c);
        return;
    }
    c->len += (size_t)n;
    c->buf[c->len] = '\0';
    if (strstr(c->buf, "\r\n\r\n") != NULL ||
        strstr(c->buf, "\n\n") != NULL) {
        oauth_listen_handle(c);
        return;
    }
    if (c->len >= OAUTH_LISTEN_HEAD_MAX)
        oauth_listen_close(c);
}

/* ev_timer: a connection that said too little in time. */
static void
oauth_listen_timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    oauth_listen_close(w->data);
}

/* ev_io: a new connection. */
static void
oauth_listen_accept_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    struct oauth_listen      *l = w->data;
    struct oauth_listen_conn *c = NULL;
    int                       fd;

    (void)revents;
    fd = accept(l->fd, NULL, NULL);
    if (fd < 0)
        return;
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0 ||
        fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) {
        close(fd);
        return;
    }
    for (size_t i = 0; i < OAUTH_LISTEN_CONNS; i++) {
        if (!l->conns[i].used) {
            c = &l->conns[i];
            break;
        }
        if (c == NULL || l->conns[i].since < c->since)
            c = &l->conns[i];       /* the oldest, if all are taken */
    }
    if (c->used)
        oauth_listen_close(c);
    c->used = true;
    c->since = ev_now(loop);
    c->len = 0;
    c->l = l;
    ev_io_init(&c->io, oauth_listen_read_cb, fd, EV_READ);
    ev_io_start(loop, &c->io);
    ev_timer_init(&c->timer, oauth_listen_timeout_cb, OAUTH_LISTEN_TIMEOUT_S,
        0.);
    c->timer.data = c;
    ev_timer_start(loop, &c->timer);
}

struct oauth_listen *
oauth_listen_new(struct ev_loop *loop, oauth_listen_cb cb, void *arg,
    char **cause)
{
    struct oauth_listen *l = xcalloc(1, sizeof(*l));
    struct sockaddr_in   sa = { .sin_family = AF_INET };
    socklen_t            salen = sizeof(sa);

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    l->loop = loop;
    l->cb = cb;
    l->arg = arg;
    l->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (l->fd < 0 || bind(l->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
        listen(l->fd, 8) != 0 ||
        getsockname(l->fd, (struct sockaddr *)&sa, &salen) != 0) {
        *cause = str_printf("cannot listen on 127.0.0.1 for the "
            "authorization redirect: %s", strerror(errno));
        if (l->fd >= 0)
            close(l->fd);
        free(l);
        return NULL;
    }
    snprintf(l->redirect_uri, sizeof(l->redirect_uri),
        "http://127.0.0.1:%u/callback", (unsigned)ntohs(sa.sin_port));
    ev_io_init(&l->accept_io, oauth_listen_accept_cb, l->fd, EV_READ);
    l->accept_io.data = l;
    ev_io_start(loop, &l->accept_io);
    return l;
}

const char *
oauth_listen_redirect_uri(const struct oauth_listen *l)
{
    return l->redirect_uri;
}

void
oauth_listen_expect_state(struct oauth_listen *l, const char *state)
{
    free(l->state);
    l->state = state != NULL ? xstrdup(state) : NULL;
}

unsigned long
oauth_listen_ignored(const struct oauth_listen *l)
{
    return l->ignored;
}

void
oauth_listen_free(struct oauth_listen *l)
{
    if (l == NULL)
        return;
    if (l->freed != NULL)
        *l->freed = true;
    for (size_t i = 0; i < OAUTH_LISTEN_CONNS; i++)
        oauth_listen_close(&l->conns[i]);
    ev_io_stop(l->loop, &l->accept_io);
    close(l->fd);
    free(l->state);
    free(l);
}
