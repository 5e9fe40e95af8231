/*
 * The exporter's connections under attack (slowloris): libmicrohttpd's own
 * timeout counts idleness, so a client trickling one header line every two
 * seconds holds a connection for ever, and sixteen of them from one
 * address filled that address's share and shut out Prometheus scraping
 * from the same host. The guard keeps a list of the connections
 * libmicrohttpd reports (MHD_OPTION_NOTIFY_CONNECTION) and bounds them:
 *
 *   - a request head must be complete within SERVE_GUARD_HEAD_S of the
 *     connection's start (or of the previous answer, on a kept-alive
 *     connection: SERVE_GUARD_IDLE_S there), else the connection is shut
 *     down (shutdown(2): libmicrohttpd sees the end and closes it itself);
 *   - one address holds at most SERVE_GUARD_PENDING connections waiting
 *     for a head: a new one beyond that shuts down that address's oldest,
 *     so a scrape that sends its request at once always gets in; but only
 *     an oldest that has waited SERVE_GUARD_GRACE_S: a burst of scrapes
 *     that arrive together (Prometheus probing many targets from one
 *     host), whose heads the loop has not read yet, is no slowloris.
 *
 * It runs on the loop: a one-second sweep, and the notifications.
 */
#include "cli/serve_guard.h"

#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "util/xmalloc.h"

#define SERVE_GUARD_HEAD_S   5.0    /* a new connection's head */
#define SERVE_GUARD_IDLE_S   30.0   /* a kept-alive connection's next head */
#define SERVE_GUARD_PENDING  8      /* per address, waiting for a head */
#define SERVE_GUARD_GRACE_S  1.0    /* ...past it, only one that waited
                                       this long is shut for a new one */

struct serve_guard_conn {
    struct serve_guard_conn *prev, *next;
    struct serve_guard      *g;
    int                      fd;
    struct sockaddr_storage  addr;
    ev_tstamp                since;     /* waiting for a head since */
    double                   limit;     /* seconds it may wait */
    bool                     waiting;   /* no complete head yet */
    bool                     shut;
};

struct serve_guard {
    struct ev_loop          *loop;
    ev_timer                 sweep;
    struct serve_guard_conn *head;
    unsigned long            shut;
};

/* Same host address (the port aside). */
static bool
serve_guard_same_addr(const struct sockaddr_storage *a,
    const struct sockaddr_storage *b)
{
    if (a->ss_family != b->ss_family)
        return false;
    if (a->ss_family == AF_INET)
        return memcmp(&((const struct sockaddr_in *)a)->sin_addr,
            &((const struct sockaddr_in *)b)->sin_addr,
            sizeof(struct in_addr)) == 0;
    if (a->ss_family == AF_INET6)
        return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
            &((const struct sockaddr_in6 *)b)->sin6_addr,
            sizeof(struct in6_addr)) == 0;
    return false;
}

static void
serve_guard_shut(struct serve_guard_conn *c)
{
    if (c->shut || c->fd < 0)
        return;
    c->shut = true;
    c->g->shut++;
    shutdown(c->fd, SHUT_RDWR);
}

/* ev_timer: shut what waited too long for its head. */
static void
serve_guard_sweep_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct serve_guard *g = w->data;
    ev_tstamp           now = ev_now(loop);

    (void)revents;
    for (struct serve_guard_conn *c = g->head; c != NULL; c = c->next) {
        if (c->waiting && now - c->since > c->limit)
            serve_guard_shut(c);
    }
}

struct serve_guard *
serve_guard_new(struct ev_loop *loop)
{
    struct serve_guard *g = xcalloc(1, sizeof(*g));

    g->loop = loop;
    ev_timer_init(&g->sweep, serve_guard_sweep_cb, 1., 1.);
    g->sweep.data = g;
    ev_timer_start(loop, &g->sweep);
    /* The sweep alone must not keep the loop running. */
    ev_unref(loop);
    return g;
}

void
serve_guard_free(struct serve_guard *g)
{
    struct serve_guard_conn *c, *next;

    if (g == NULL)
        return;
    ev_ref(g->loop);
    ev_timer_stop(g->loop, &g->sweep);
    for (c = g->head; c != NULL; c = next) {
        next = c->next;
        free(c);
    }
    free(g);
}

void
serve_guard_notify(void *cls, struct MHD_Connection *conn,
    void **socket_context, enum MHD_ConnectionNotificationCode toe)
{
    struct serve_guard         *g = cls;
    struct serve_guard_conn    *c, *oldest = NULL;
    const union MHD_ConnectionInfo *fd, *addr;
    int                          pending = 0;

    if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        c = *socket_context;
        if (c == NULL)
            return;
        if (c->prev != NULL)
            c->prev->next = c->next;
        else
            g->head = c->next;
        if (c->next != NULL)
            c->next->prev = c->prev;
        free(c);
        *socket_context = NULL;
        return;
    }
    c = xcalloc(1, sizeof(*c));
    c->g = g;
    fd = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    addr = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    c->fd = fd != NULL ? fd->connect_fd : -1;
    if (addr != NULL && addr->client_addr != NULL)
        memcpy(&c->addr, addr->client_addr,
            addr->client_addr->sa_family == AF_INET6 ?
            sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
    c->since = ev_now(g->loop);
    c->limit = SERVE_GUARD_HEAD_S;
    c->waiting = true;
    for (struct serve_guard_conn *o = g->head; o != NULL; o = o->next) {
        if (!o->waiting || o->shut || !serve_guard_same_addr(&o->addr,
            &c->addr))
            continue;
        pending++;
        if (oldest == NULL || o->since < oldest->since)
            oldest = o;
    }
    if (pending >= SERVE_GUARD_PENDING && oldest != NULL &&
        c->since - oldest->since >= SERVE_GUARD_GRACE_S)
        serve_guard_shut(oldest);
    c->next = g->head;
    if (g->head != NULL)
        g->head->prev = c;
    g->head = c;
    *socket_context = c;
}

/* The guard's record of conn, or NULL. */
static struct serve_guard_conn *
serve_guard_of(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *i = MHD_get_connection_info(conn,
        MHD_CONNECTION_INFO_SOCKET_CONTEXT);

    return i != NULL ? i->socket_context : NULL;
}

void
serve_guard_head_done(struct MHD_Connection *conn)
{
    struct serve_guard_conn *c = serve_guard_of(conn);

    if (c != NULL)
        c->waiting = false;
}

void
serve_guard_completed(void *cls, struct MHD_Connection *conn,
    void **req_cls, enum MHD_RequestTerminationCode toe)
{
    struct serve_guard_conn *c = serve_guard_of(conn);

    (void)cls;
    (void)req_cls;
    (void)toe;
    if (c == NULL)
        return;
    /* Kept alive: the next head may come later, but not never. */
    c->waiting = true;
    c->since = ev_now(c->g->loop);
    c->limit = SERVE_GUARD_IDLE_S;
}

unsigned long
serve_guard_shut_count(const struct serve_guard *g)
{
    return g->shut;
}
