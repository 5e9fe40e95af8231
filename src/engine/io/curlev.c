/*
 * The glue between libcurl's multi socket interface and libev. It owns the
 * CURLM handle and one ev_timer; each socket gets a struct curlev_sock whose
 * ev_io is re-armed (stop, set, start) on every change libcurl asks for.
 * It knows nothing of MCP: finished transfers go back to whoever added them
 * through the callback they registered in CURLOPT_PRIVATE's slot.
 *
 * The transfers are spread over several multi handles, one per group of
 * CURLEV_GROUP servers: libcurl 7.88 walks a multi handle's whole
 * connection pool when a transfer is removed, which at 10,000 servers in
 * one handle cost more than everything else (bench/ANALYSIS.md). Each
 * group has its own timer; the sockets all share the one loop.
 *
 * It must never block, never call libcurl from the timer callback (only
 * from the watcher it arms), and never touch an ev_io after socket_action,
 * which may have freed it.
 *
 * A transfer that asked for CURLOPT_CERTINFO and made a new TLS
 * connection leaves the server certificate's expiry ("Expire date" of the
 * chain's first entry) under its key: the one fact of a handshake the
 * exporter shows (mcp_tls_cert_not_after_timestamp_seconds).
 */
#include "engine/curlev.h"

#include <assert.h>
#include <curl/curl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/xmalloc.h"

/* Servers per multi handle. */
#define CURLEV_GROUP 256

struct curlev;

/* One multi handle and its timer. */
struct curlev_multi {
    struct curlev  *ce;
    CURLM          *multi;
    ev_timer        timer;
};

struct curlev {
    struct ev_loop       *loop;
    struct curlev_multi **groups;
    size_t                ngroups;
    size_t                running;
    int64_t              *not_after;    /* by key: epoch s, 0 unknown */
    size_t                nnot_after;
};

struct curlev_sock {
    ev_io                io;        /* first: libev's embedding idiom */
    struct curlev_multi *cm;
    curl_socket_t        fd;
};

/* What a transfer registered; lives in CURLOPT_PRIVATE. */
struct curlev_xfer {
    curlev_done_cb       done;
    void                *arg;
    struct curlev_multi *cm;
    size_t               key;
};

static void curlev_check_done(struct curlev_multi *cm);
static void curlev_note_cert(struct curlev *ce, CURL *easy, size_t key);

static int
curlev_events(int what)
{
    int events = 0;

    if (what & CURL_POLL_IN)
        events |= EV_READ;
    if (what & CURL_POLL_OUT)
        events |= EV_WRITE;
    return events;
}

static void
curlev_action(struct curlev_multi *cm, curl_socket_t fd, int mask)
{
    int       still;
    CURLMcode rc;

    rc = curl_multi_socket_action(cm->multi, fd, mask, &still);
    if (rc != CURLM_OK && rc != CURLM_BAD_SOCKET) {
        fprintf(stderr, "mcptop: curl_multi_socket_action: %s\n",
            curl_multi_strerror(rc));
        assert(0);
    }
    curlev_check_done(cm);
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
    curlev_action(s->cm, s->fd, mask);
}

/* ev_timer callback: curl's timeout expired. */
static void
curlev_timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct curlev_multi *cm = w->data;

    (void)loop;
    (void)revents;
    curlev_action(cm, CURL_SOCKET_TIMEOUT, 0);
}

/* CURLMOPT_SOCKETFUNCTION: one ev_io per socket, re-armed on each change. */
static int
curlev_socket_cb(CURL *e, curl_socket_t fd, int what, void *cmp, void *sp)
{
    struct curlev_multi *cm = cmp;
    struct ev_loop      *loop = cm->ce->loop;
    struct curlev_sock  *s = sp;

    (void)e;
    if (what == CURL_POLL_REMOVE) {
        if (s != NULL) {
            ev_io_stop(loop, &s->io);
            free(s);
            curl_multi_assign(cm->multi, fd, NULL);
        }
        return 0;
    }
    if (s == NULL) {
        s = xcalloc(1, sizeof(*s));
        s->cm = cm;
        s->fd = fd;
        ev_init(&s->io, curlev_io_cb);
        curl_multi_assign(cm->multi, fd, s);
    }
    ev_io_stop(loop, &s->io);
    /* Set again every time: the descriptor may be a new one that reuses
     * the number (libev "disappearing file descriptors"). */
    ev_io_set(&s->io, fd, curlev_events(what));
    ev_io_start(loop, &s->io);
    return 0;
}

/* CURLMOPT_TIMERFUNCTION: arm, re-arm or drop the single ev_timer. */
static int
curlev_timer_cb(CURLM *m, long timeout_ms, void *cmp)
{
    struct curlev_multi *cm = cmp;
    struct ev_loop      *loop = cm->ce->loop;

    (void)m;
    ev_timer_stop(loop, &cm->timer);
    if (timeout_ms >= 0) {
        ev_timer_set(&cm->timer, timeout_ms / 1000.0, 0.);
        ev_timer_start(loop, &cm->timer);
    }
    return 0;
}

/* Hand every finished transfer back to its owner. */
static void
curlev_check_done(struct curlev_multi *cm)
{
    struct curlev *ce = cm->ce;
    CURLMsg       *msg;
    int            left;

    while ((msg = curl_multi_info_read(cm->multi, &left)) != NULL) {
        CURL               *easy;
        CURLcode            code;
        struct curlev_xfer *x = NULL;

        if (msg->msg != CURLMSG_DONE)
            continue;
        easy = msg->easy_handle;
        code = msg->data.result;
        /* msg is invalid after remove_handle: copy first. */
        curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&x);
        curl_multi_remove_handle(cm->multi, easy);
        ce->running--;
        if (x != NULL) {
            curlev_done_cb done = x->done;
            void          *arg = x->arg;

            curlev_note_cert(ce, easy, x->key);
            curl_easy_setopt(easy, CURLOPT_PRIVATE, NULL);
            free(x);
            done(arg, easy, (int)code);
        }
    }
}

/*
 * "Jun 16 12:00:00 2027 GMT" (OpenSSL's ASN1_TIME_print, as libcurl's
 * certinfo writes "Expire date") as epoch seconds; 0 when it is not that.
 * Read by hand: strptime's %b follows the locale.
 */
int64_t
curlev_parse_cert_time(const char *s)
{
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    struct tm          tm;
    char               mon[4];
    int                day, h, m, sec, year, n = 0;
    const char        *at;

    memset(&tm, 0, sizeof(tm));
    if (s == NULL || sscanf(s, "%3s %d %d:%d:%d %d GMT%n", mon, &day, &h, &m,
        &sec, &year, &n) != 6 || n == 0 || strlen(mon) != 3)
        return 0;
    at = strstr(months, mon);
    if (at == NULL || (at - months) % 3 != 0 || day < 1 || day > 31 ||
        h > 23 || m > 59 || sec > 60 || year < 1970 || year > 9999)
        return 0;
    tm.tm_mon = (int)((at - months) / 3);
    tm.tm_mday = day;
    tm.tm_hour = h;
    tm.tm_min = m;
    tm.tm_sec = sec;
    tm.tm_year = year - 1900;
    return (int64_t)timegm(&tm);
}

/* The leaf certificate's expiry of a transfer that made a TLS handshake
 * with CURLOPT_CERTINFO, kept under key. */
static void
curlev_note_cert(struct curlev *ce, CURL *easy, size_t key)
{
    struct curl_certinfo *ci = NULL;
    int64_t               t = 0;

    if (curl_easy_getinfo(easy, CURLINFO_CERTINFO, &ci) != CURLE_OK ||
        ci == NULL || ci->num_of_certs < 1)
        return;
    for (struct curl_slist *l = ci->certinfo[0]; l != NULL; l = l->next) {
        if (strncmp(l->data, "Expire date:", 12) == 0) {
            t = curlev_parse_cert_time(l->data + 12);
            break;
        }
    }
    if (t <= 0)
        return;
    if (key >= ce->nnot_after) {
        size_t n = key + 1 > 2 * ce->nnot_after ? key + 1 :
            2 * ce->nnot_after;

        ce->not_after = xrealloc(ce->not_after, n * sizeof(*ce->not_after));
        memset(ce->not_after + ce->nnot_after, 0,
            (n - ce->nnot_after) * sizeof(*ce->not_after));
        ce->nnot_after = n;
    }
    ce->not_after[key] = t;
}

int64_t
curlev_cert_not_after(const struct curlev *ce, size_t key)
{
    return key < ce->nnot_after ? ce->not_after[key] : 0;
}

static struct curlev_multi *
curlev_multi_new(struct curlev *ce, long max_sockets)
{
    struct curlev_multi *cm = xcalloc(1, sizeof(*cm));

    cm->ce = ce;
    cm->multi = curl_multi_init();
    if (cm->multi == NULL) {
        free(cm);
        return NULL;
    }
    ev_timer_init(&cm->timer, curlev_timeout_cb, 0., 0.);
    cm->timer.data = cm;
    curl_multi_setopt(cm->multi, CURLMOPT_SOCKETFUNCTION, curlev_socket_cb);
    curl_multi_setopt(cm->multi, CURLMOPT_SOCKETDATA, cm);
    curl_multi_setopt(cm->multi, CURLMOPT_TIMERFUNCTION, curlev_timer_cb);
    curl_multi_setopt(cm->multi, CURLMOPT_TIMERDATA, cm);
    /* One cached connection per server of the group (plus its GET
     * stream), or every ping reconnects (PERF-NOTES); but never more
     * sockets than this process may open: past its share, transfers wait
     * in libcurl's queue instead of failing for want of a descriptor. */
    curl_multi_setopt(cm->multi, CURLMOPT_MAXCONNECTS,
        max_sockets > 0 && max_sockets < 2 * CURLEV_GROUP + 8 ?
        max_sockets : (long)(2 * CURLEV_GROUP + 8));
    if (max_sockets > 0)
        curl_multi_setopt(cm->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS,
            max_sockets);
    return cm;
}

struct curlev *
curlev_new(struct ev_loop *loop, size_t servers, long max_sockets)
{
    struct curlev *ce = xcalloc(1, sizeof(*ce));
    long           share;

    ce->loop = loop;
    ce->ngroups = servers / CURLEV_GROUP + 1;
    ce->groups = xcalloc(ce->ngroups, sizeof(*ce->groups));
    share = max_sockets > 0 ? max_sockets / (long)ce->ngroups : 0;
    if (max_sockets > 0 && share < 1)
        share = 1;
    for (size_t i = 0; i < ce->ngroups; i++) {
        ce->groups[i] = curlev_multi_new(ce, share);
        if (ce->groups[i] == NULL) {
            curlev_free(ce);
            return NULL;
        }
    }
    return ce;
}

void
curlev_free(struct curlev *ce)
{
    if (ce == NULL)
        return;
    for (size_t i = 0; i < ce->ngroups; i++) {
        struct curlev_multi *cm = ce->groups[i];

        if (cm == NULL)
            continue;
        ev_timer_stop(ce->loop, &cm->timer);
        /* May call the socket callback, which needs cm alive. */
        curl_multi_cleanup(cm->multi);
        free(cm);
    }
    free(ce->groups);
    free(ce->not_after);
    free(ce);
}

int
curlev_add(struct curlev *ce, size_t key, void *easy, curlev_done_cb done,
    void *arg)
{
    struct curlev_multi *cm = ce->groups[(key / CURLEV_GROUP) % ce->ngroups];
    struct curlev_xfer  *x = xmalloc(sizeof(*x));

    x->done = done;
    x->arg = arg;
    x->cm = cm;
    x->key = key;
    curl_easy_setopt(easy, CURLOPT_PRIVATE, x);
    if (curl_multi_add_handle(cm->multi, easy) != CURLM_OK) {
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
    if (x != NULL && curl_multi_remove_handle(x->cm->multi, easy) ==
        CURLM_OK)
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
