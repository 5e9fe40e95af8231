/*
 * The glue between libcurl's multi socket interface and libev. It owns the
 * CURLM handle and one ev_timer; each socket gets a struct curlev_sock whose
 * ev_io is re-armed (stop, set, start) on every change libcurl asks for.
 * It knows nothing of MCP: finished transfers go back to whoever added them
 * through the callback they registered in CURLOPT_PRIVATE's slot.
 *
 * It must never block, never call libcurl from the timer callback (only
 * from the watcher it arms), and never touch an ev_io after socket_action,
 * which may have freed it.
 */
#include "engine/curlev.h"

#include <assert.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/xmalloc.h"

struct curlev {
    struct ev_loop *loop;
    CURLM          *multi;
    ev_timer        timer;
    size_t          running;
    long            maxconnects;
};

struct curlev_sock {
    ev_io           io;             /* first: libev's embedding idiom */
    struct curlev  *ce;
    curl_socket_t   fd;
};

/* What a transfer registered; lives in CURLOPT_PRIVATE. */
struct curlev_xfer {
    curlev_done_cb  done;
    void           *arg;
};

static void curlev_check_done(struct curlev *ce);

static int
curlev_events(int what)
{
    int ev = 0;

    if (what & CURL_POLL_IN)
        ev |= EV_READ;
    if (what & CURL_POLL_OUT)
        ev |= EV_WRITE;
    return ev;
}

static void
curlev_action(struct curlev *ce, curl_socket_t fd, int mask)
{
    int       still;
    CURLMcode rc;

    rc = curl_multi_socket_action(ce->multi, fd, mask, &still);
    if (rc != CURLM_OK && rc != CURLM_BAD_SOCKET) {
        fprintf(stderr, "mcptop: curl_multi_socket_action: %s\n",
            curl_multi_strerror(rc));
        assert(0);
    }
    curlev_check_done(ce);
}

/* ev_io callback: the socket is ready. */
static void
curlev_io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    struct curlev_sock *s = (struct curlev_sock *)w;
    int                 mask = 0;

    (void)loop;
    if (revents & EV_READ)
        mask |= CURL_CSELECT_IN;
    if (revents & EV_WRITE)
        mask |= CURL_CSELECT_OUT;
    /* s may be freed inside curlev_action. */
    curlev_action(s->ce, s->fd, mask);
}

/* ev_timer callback: curl's timeout expired. */
static void
curlev_timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct curlev *ce = w->data;

    (void)loop;
    (void)revents;
    curlev_action(ce, CURL_SOCKET_TIMEOUT, 0);
}

/* CURLMOPT_SOCKETFUNCTION: one ev_io per socket, re-armed on each change. */
static int
curlev_socket_cb(CURL *e, curl_socket_t fd, int what, void *cep, void *sp)
{
    struct curlev      *ce = cep;
    struct curlev_sock *s = sp;

    (void)e;
    if (what == CURL_POLL_REMOVE) {
        if (s != NULL) {
            ev_io_stop(ce->loop, &s->io);
            free(s);
            curl_multi_assign(ce->multi, fd, NULL);
        }
        return 0;
    }
    if (s == NULL) {
        s = xcalloc(1, sizeof(*s));
        s->ce = ce;
        s->fd = fd;
        ev_init(&s->io, curlev_io_cb);
        curl_multi_assign(ce->multi, fd, s);
    }
    ev_io_stop(ce->loop, &s->io);
    /* Set again every time: the descriptor may be a new one that reuses
     * the number (libev "disappearing file descriptors"). */
    ev_io_set(&s->io, fd, curlev_events(what));
    ev_io_start(ce->loop, &s->io);
    return 0;
}

/* CURLMOPT_TIMERFUNCTION: arm, re-arm or drop the single ev_timer. */
static int
curlev_timer_cb(CURLM *m, long timeout_ms, void *cep)
{
    struct curlev *ce = cep;

    (void)m;
    ev_timer_stop(ce->loop, &ce->timer);
    if (timeout_ms >= 0) {
        ev_timer_set(&ce->timer, timeout_ms / 1000.0, 0.);
        ev_timer_start(ce->loop, &ce->timer);
    }
    return 0;
}

/* Hand every finished transfer back to its owner. */
static void
curlev_check_done(struct curlev *ce)
{
    CURLMsg *msg;
    int      left;

    while ((msg = curl_multi_info_read(ce->multi, &left)) != NULL) {
        CURL               *easy;
        CURLcode            code;
        struct curlev_xfer *x = NULL;

        if (msg->msg != CURLMSG_DONE)
            continue;
        easy = msg->easy_handle;
        code = msg->data.result;
        /* msg is invalid after remove_handle: copy first. */
        curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&x);
        curl_multi_remove_handle(ce->multi, easy);
        ce->running--;
        if (x != NULL) {
            curlev_done_cb done = x->done;
            void          *arg = x->arg;

            curl_easy_setopt(easy, CURLOPT_PRIVATE, NULL);
            free(x);
            done(arg, easy, (int)code);
        }
    }
}

struct curlev *
curlev_new(struct ev_loop *loop, long max_connections)
{
    struct curlev *ce = xcalloc(1, sizeof(*ce));

    ce->loop = loop;
    ce->multi = curl_multi_init();
    if (ce->multi == NULL) {
        free(ce);
        return NULL;
    }
    ev_timer_init(&ce->timer, curlev_timeout_cb, 0., 0.);
    ce->timer.data = ce;
    curl_multi_setopt(ce->multi, CURLMOPT_SOCKETFUNCTION, curlev_socket_cb);
    curl_multi_setopt(ce->multi, CURLMOPT_SOCKETDATA, ce);
    curl_multi_setopt(ce->multi, CURLMOPT_TIMERFUNCTION, curlev_timer_cb);
    curl_multi_setopt(ce->multi, CURLMOPT_TIMERDATA, ce);
    ce->maxconnects = 0;
    curlev_reserve_connections(ce, max_connections);
    return ce;
}

void
curlev_reserve_connections(struct curlev *ce, long n)
{
    if (n <= ce->maxconnects)
        return;
    ce->maxconnects = n;
    /* One cached connection per server, or every ping reconnects. */
    curl_multi_setopt(ce->multi, CURLMOPT_MAXCONNECTS, n);
}

void
curlev_free(struct curlev *ce)
{
    if (ce == NULL)
        return;
    ev_timer_stop(ce->loop, &ce->timer);
    /* May call the socket callback, which needs ce alive. */
    curl_multi_cleanup(ce->multi);
    free(ce);
}

int
curlev_add(struct curlev *ce, void *easy, curlev_done_cb done, void *arg)
{
    struct curlev_xfer *x = xmalloc(sizeof(*x));

    x->done = done;
    x->arg = arg;
    curl_easy_setopt(easy, CURLOPT_PRIVATE, x);
    if (curl_multi_add_handle(ce->multi, easy) != CURLM_OK) {
        curl_easy_setopt(easy, CURLOPT_PRIVATE, NULL);
        free(x);
        return -1;
    }
    ce->running++;
    return 0;
}

void
curlev_remove(struct curlev *ce, void *easy)
{
    struct curlev_xfer *x = NULL;

    curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&x);
    if (curl_multi_remove_handle(ce->multi, easy) == CURLM_OK && x != NULL)
        ce->running--;
    curl_easy_setopt(easy, CURLOPT_PRIVATE, NULL);
    free(x);
}

struct ev_loop *
curlev_loop(const struct curlev *ce)
{
    return ce->loop;
}

size_t
curlev_running(const struct curlev *ce)
{
    return ce->running;
}
