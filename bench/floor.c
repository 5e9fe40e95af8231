/*
 * mcptop bench: the floor. The HTTP requests `mcptop check --pings R` makes,
 * made with libcurl's multi socket interface on libev and nothing else: no
 * JSON parsing (bodies are discarded), no classifier, no liveness, no
 * per-exchange timers. It reads the status code and, on initialize, the
 * Mcp-Session-Id header.
 *
 *   dial     per server, in sequence: the era probe mcptop sends to a
 *            server whose era is not configured (POST server/discover as
 *            2026-07-28, which a legacy server answers 4xx; --no-probe
 *            leaves it out, as mcptop does with "era": "legacy"), then
 *            initialize, notifications/initialized, tools/list; at most
 *            --concurrency (50) servers dialing at once (as mcptop's fleet)
 *   pings    R rounds; in each every open session pings at once, the round
 *            ends when every ping finished
 *   endings  a DELETE with Mcp-Session-Id to every open session at once
 *
 * Same easy-handle options and headers as src/engine/http.c, one fresh easy
 * handle per request. The glue is the one of src/engine/curlev.c (one ev_io
 * per socket re-armed stop/set/start, one ev_timer per multi handle armed
 * with timeout_ms / 1000.0), with the same two settings as mcptop:
 *   - one multi handle per group of 256 servers (server i in group i / 256),
 *     each with CURLMOPT_MAXCONNECTS = 2 * 256 + 8, as curlev.c;
 *     --servers-per-multi S sets the group size, 0 puts every server in
 *     one multi handle with MAXCONNECTS = 2 * N + 8 (the floor before
 *     issue 19);
 *   - CURLOPT_DNS_CACHE_TIMEOUT -1 (libcurl 7.88 then skips walking its
 *     DNS cache after every transfer; PERF-NOTES.md) except on one transfer
 *     a minute, which carries 60 and so prunes stale entries, as http.c;
 *     --dns-cache-timeout S gives every transfer S instead (60 is
 *     libcurl's default, -1 the floor before issue 19).
 * Servers: http://127.0.0.1:BASE+i/mcp, or with --one-port every server on
 * one port: http://127.0.0.1:BASE/mcp/i (bench/sdkfleet.mjs and
 * bench/fleetserver.mjs serve both).
 *
 * Prints one JSON object with the "stats" shape of
 * `mcptop check --json --stats` (cpu_us, wall_ms, max_rss_kib per phase,
 * from getrusage; ping_round_ms).
 *
 * Idle (issue 30): with --idle-interval MS, no rounds: after the dial every
 * open session pings every MS with mcptop's +-10% jitter (a fresh easy
 * handle a ping, as above; no GET stream, no grid), as `mcptop watch`
 * does at its interval, until SIGINT/SIGTERM or --idle-seconds S; then
 * the endings. The "pings" phase is the idle one; "idle_pings" counts.
 *
 * usage: floor --base-port 20000 --count N [--pings 5] [--concurrency 50]
 *              [--path /mcp] [--one-port] [--dns-cache-timeout S]
 *              [--no-probe] [--servers-per-multi S]
 *              [--idle-interval MS [--idle-seconds S]]
 * build: cc -O2 -o floor floor.c $(pkg-config --cflags --libs libcurl) -lev
 */
#include <curl/curl.h>
#include <ev.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>

#define FLOOR_UA "mcptop/0.1.0"
#define FLOOR_PROTOCOL "2025-11-25"
#define FLOOR_MODERN "2026-07-28"
/* dns_timeout: -1, except 60 on one transfer a minute (as http.c). */
#define FLOOR_DNS_MCPTOP (-2L)
#define FLOOR_GROUP 256

enum floor_kind { K_PROBE, K_INIT, K_NOTIFY, K_LIST, K_PING, K_DELETE };

struct floor_sess {
    ev_timer tick;          /* --idle-interval: the next ping */
    int     idx;
    char    url[80];
    char    sid[256];
    bool    open;           /* dialed: initialize, initialized, list ok */
    long    next_id;
};

struct floor_xfer {
    CURL               *easy;
    struct curl_slist  *headers;
    struct floor_sess  *s;
    enum floor_kind     kind;
    double              t0;
    char                body[320];
};

/* One multi handle and its timer, per group of --servers-per-multi
 * servers (256, as curlev.c: libcurl 7.88 walks a multi's whole connection
 * pool on every curl_multi_remove_handle). */
struct floor_multi {
    CURLM   *m;
    ev_timer timer;
};

struct floor_sock {
    ev_io               io;     /* first: libev's embedding idiom */
    curl_socket_t       fd;
    struct floor_multi *fm;
};

struct floor_phase {
    double cpu_us;
    double wall_ms;
    long   max_rss_kib;
    long   connects;
    long   failures;
};

static struct {
    struct ev_loop     *loop;
    struct floor_multi *multis;
    int                 nmultis;
    int                 per_multi;
    struct floor_sess  *sess;
    int                 n;
    int                 rounds;
    int                 concurrency;
    long                dns_timeout;    /* fixed, or FLOOR_DNS_MCPTOP */
    double              dns_pruned_at;  /* FLOOR_DNS_MCPTOP: last 60 s */
    bool                one_port;
    const char         *path;
    int                 base_port;
    bool                probe;
    /* --idle-interval: watch's idle pinging instead of rounds */
    double              idle_s;     /* the interval (s), 0: rounds */
    double              idle_for;   /* how long (s), 0: until a signal */
    long                idle_pings;
    ev_signal           sigint, sigterm;
    ev_timer            idle_end;
    /* dial */
    int                 next;
    int                 dialing;
    int                 dialed;     /* settled, ok or not */
    /* pings, endings */
    int                 round;
    int                 pending;
    double              round_t0;
    double             *round_ms;
    double             *rtt;
    size_t              nrtt;
    int                 open;
    int                 ended;
    /* stats */
    struct rusage       ru_mark;
    double              wall_mark;
    struct floor_phase  dial, pings, endings, *cur;
} F;

static double
floor_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
floor_mark(struct floor_phase *ph)
{
    struct rusage ru;
    double        now = floor_now();

    getrusage(RUSAGE_SELF, &ru);
    if (ph != NULL) {
        ph->cpu_us = (double)(ru.ru_utime.tv_sec - F.ru_mark.ru_utime.tv_sec)
            * 1e6 + (double)(ru.ru_utime.tv_usec - F.ru_mark.ru_utime.tv_usec)
            + (double)(ru.ru_stime.tv_sec - F.ru_mark.ru_stime.tv_sec) * 1e6
            + (double)(ru.ru_stime.tv_usec - F.ru_mark.ru_stime.tv_usec);
        ph->wall_ms = (now - F.wall_mark) * 1000.0;
        ph->max_rss_kib = ru.ru_maxrss;
    }
    F.ru_mark = ru;
    F.wall_mark = now;
}

/* ------------------------------------------------------------ glue */

static void floor_check_done(struct floor_multi *fm);

static void
floor_action(struct floor_multi *fm, curl_socket_t fd, int mask)
{
    int still;

    curl_multi_socket_action(fm->m, fd, mask, &still);
    floor_check_done(fm);
}

static void
floor_io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    struct floor_sock *s = (struct floor_sock *)w;
    int                mask = 0;

    (void)loop;
    if (revents & EV_READ)
        mask |= CURL_CSELECT_IN;
    if (revents & EV_WRITE)
        mask |= CURL_CSELECT_OUT;
    floor_action(s->fm, s->fd, mask);
}

static void
floor_timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    floor_action(w->data, CURL_SOCKET_TIMEOUT, 0);
}

/* CURLMOPT_SOCKETFUNCTION */
static int
floor_socket_cb(CURL *e, curl_socket_t fd, int what, void *up, void *sp)
{
    struct floor_multi *fm = up;
    struct floor_sock  *s = sp;
    int                 evd = 0;

    (void)e;
    if (what == CURL_POLL_REMOVE) {
        if (s != NULL) {
            ev_io_stop(F.loop, &s->io);
            free(s);
            curl_multi_assign(fm->m, fd, NULL);
        }
        return 0;
    }
    if (s == NULL) {
        s = calloc(1, sizeof(*s));
        s->fd = fd;
        s->fm = fm;
        ev_init(&s->io, floor_io_cb);
        curl_multi_assign(fm->m, fd, s);
    }
    if (what & CURL_POLL_IN)
        evd |= EV_READ;
    if (what & CURL_POLL_OUT)
        evd |= EV_WRITE;
    ev_io_stop(F.loop, &s->io);
    ev_io_set(&s->io, fd, evd);
    ev_io_start(F.loop, &s->io);
    return 0;
}

/* CURLMOPT_TIMERFUNCTION */
static int
floor_timer_cb(CURLM *m, long timeout_ms, void *up)
{
    struct floor_multi *fm = up;

    (void)m;
    ev_timer_stop(F.loop, &fm->timer);
    if (timeout_ms >= 0) {
        ev_timer_set(&fm->timer, timeout_ms / 1000.0, 0.);
        ev_timer_start(F.loop, &fm->timer);
    }
    return 0;
}

/* ------------------------------------------------------------ requests */

static size_t
floor_write_cb(char *p, size_t size, size_t nmemb, void *arg)
{
    (void)p;
    (void)arg;
    return size * nmemb;
}

/* CURLOPT_HEADERFUNCTION: only Mcp-Session-Id, only on initialize. */
static size_t
floor_header_cb(char *line, size_t size, size_t nmemb, void *arg)
{
    struct floor_xfer *x = arg;
    size_t             n = size * nmemb;

    if (x->kind == K_INIT && n > 15 &&
        strncasecmp(line, "mcp-session-id:", 15) == 0) {
        const char *v = line + 15;
        size_t      k = n - 15;

        while (k > 0 && (*v == ' ' || *v == '\t')) {
            v++;
            k--;
        }
        while (k > 0 && (v[k - 1] == '\r' || v[k - 1] == '\n' ||
            v[k - 1] == ' '))
            k--;
        if (k >= sizeof(x->s->sid))
            k = sizeof(x->s->sid) - 1;
        memcpy(x->s->sid, v, k);
        x->s->sid[k] = '\0';
    }
    return n;
}

/* The DNS cache timeout of the next transfer. */
static long
floor_dns_timeout(void)
{
    double now;

    if (F.dns_timeout != FLOOR_DNS_MCPTOP)
        return F.dns_timeout;
    now = ev_now(F.loop);
    if (now - F.dns_pruned_at < 60.0)
        return -1L;
    F.dns_pruned_at = now;
    return 60L;
}

static void
floor_start(struct floor_sess *s, enum floor_kind kind)
{
    struct floor_xfer *x = calloc(1, sizeof(*x));
    CURL              *e = curl_easy_init();
    char               line[320];

    x->easy = e;
    x->s = s;
    x->kind = kind;
    x->t0 = floor_now();
    curl_easy_setopt(e, CURLOPT_URL, s->url);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, floor_write_cb);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, floor_header_cb);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_USERAGENT, FLOOR_UA);
    curl_easy_setopt(e, CURLOPT_DNS_CACHE_TIMEOUT, floor_dns_timeout());
    curl_easy_setopt(e, CURLOPT_PRIVATE, x);
    switch (kind) {
    case K_PROBE:
        snprintf(x->body, sizeof(x->body), "{\"jsonrpc\":\"2.0\",\"method\":"
            "\"server/discover\",\"id\":%ld,\"params\":{\"_meta\":{"
            "\"io.modelcontextprotocol/protocolVersion\":\"" FLOOR_MODERN "\","
            "\"io.modelcontextprotocol/clientCapabilities\":{},"
            "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"mcptop\","
            "\"version\":\"0.1.0\"}}}}", s->next_id++);
        break;
    case K_INIT:
        snprintf(x->body, sizeof(x->body), "{\"jsonrpc\":\"2.0\",\"method\":"
            "\"initialize\",\"id\":%ld,\"params\":{\"protocolVersion\":\""
            FLOOR_PROTOCOL "\",\"capabilities\":{},\"clientInfo\":{\"name\":"
            "\"mcptop\",\"version\":\"0.1.0\"}}}", s->next_id++);
        break;
    case K_NOTIFY:
        snprintf(x->body, sizeof(x->body), "{\"jsonrpc\":\"2.0\",\"method\":"
            "\"notifications/initialized\"}");
        break;
    case K_LIST:
        snprintf(x->body, sizeof(x->body), "{\"jsonrpc\":\"2.0\",\"method\":"
            "\"tools/list\",\"id\":%ld}", s->next_id++);
        break;
    case K_PING:
        snprintf(x->body, sizeof(x->body), "{\"jsonrpc\":\"2.0\",\"method\":"
            "\"ping\",\"id\":%ld}", s->next_id++);
        break;
    case K_DELETE:
        break;
    }
    if (kind == K_DELETE) {
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "DELETE");
    } else {
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
            (curl_off_t)strlen(x->body));
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, x->body);
        x->headers = curl_slist_append(x->headers,
            "Content-Type: application/json");
        x->headers = curl_slist_append(x->headers,
            "Accept: application/json, text/event-stream");
        x->headers = curl_slist_append(x->headers, "Expect:");
    }
    if (kind == K_PROBE) {
        x->headers = curl_slist_append(x->headers,
            "MCP-Protocol-Version: " FLOOR_MODERN);
        x->headers = curl_slist_append(x->headers,
            "Mcp-Method: server/discover");
        x->headers = curl_slist_append(x->headers, "Cache-Control: no-cache");
    } else if (kind != K_INIT) {
        snprintf(line, sizeof(line), "Mcp-Session-Id: %s", s->sid);
        x->headers = curl_slist_append(x->headers, line);
        x->headers = curl_slist_append(x->headers,
            "MCP-Protocol-Version: " FLOOR_PROTOCOL);
    }
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->headers);
    curl_multi_add_handle(F.multis[s->idx / F.per_multi].m, e);
}

/* ------------------------------------------------------------ phases */

static void floor_start_round(void);
static void floor_start_endings(void);

/* --idle-interval: the next ping of s, the interval from now with mcptop's
 * +-10% jitter (server.c), no grid: the bare schedule. */
static void
floor_idle_next(struct floor_sess *s)
{
    double iv = F.idle_s * (0.9 + 0.2 * ((double)rand() / RAND_MAX));

    ev_timer_set(&s->tick, iv, 0.);
    ev_timer_start(F.loop, &s->tick);
}

static void
floor_idle_tick_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct floor_sess *s = w->data;

    (void)loop;
    (void)revents;
    floor_start(s, K_PING);
}

/* The idle phase is over (its time, or SIGINT/SIGTERM): end the sessions. */
static void
floor_idle_stop(void)
{
    if (F.cur != &F.pings)
        return;
    for (int i = 0; i < F.n; i++)
        ev_timer_stop(F.loop, &F.sess[i].tick);
    ev_timer_stop(F.loop, &F.idle_end);
    ev_signal_stop(F.loop, &F.sigint);
    ev_signal_stop(F.loop, &F.sigterm);
    floor_start_endings();
}

static void
floor_idle_signal_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
    (void)loop;
    (void)w;
    (void)revents;
    floor_idle_stop();
}

static void
floor_idle_end_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)w;
    (void)revents;
    floor_idle_stop();
}

static void
floor_idle_start(void)
{
    for (int i = 0; i < F.n; i++) {
        F.sess[i].tick.data = &F.sess[i];
        ev_init(&F.sess[i].tick, floor_idle_tick_cb);
        if (F.sess[i].open)
            floor_idle_next(&F.sess[i]);
    }
    ev_signal_init(&F.sigint, floor_idle_signal_cb, SIGINT);
    ev_signal_start(F.loop, &F.sigint);
    ev_signal_init(&F.sigterm, floor_idle_signal_cb, SIGTERM);
    ev_signal_start(F.loop, &F.sigterm);
    if (F.idle_for > 0) {
        ev_timer_init(&F.idle_end, floor_idle_end_cb, F.idle_for, 0.);
        ev_timer_start(F.loop, &F.idle_end);
    }
    fprintf(stderr, "floor idle %d\n", F.open);
}

static void
floor_dial_more(void)
{
    while (F.dialing < F.concurrency && F.next < F.n) {
        F.dialing++;
        floor_start(&F.sess[F.next++], F.probe ? K_PROBE : K_INIT);
    }
}

static void
floor_start_endings(void)
{
    floor_mark(&F.pings);
    F.cur = &F.endings;
    F.pending = 0;
    for (int i = 0; i < F.n; i++) {
        if (F.sess[i].open) {
            F.pending++;
            floor_start(&F.sess[i], K_DELETE);
        }
    }
    if (F.pending == 0) {
        floor_mark(&F.endings);
        ev_break(F.loop, EVBREAK_ALL);
    }
}

static void
floor_start_round(void)
{
    if (F.round >= F.rounds || F.open == 0) {
        floor_start_endings();
        return;
    }
    F.round++;
    F.round_t0 = floor_now();
    F.pending = 0;
    for (int i = 0; i < F.n; i++) {
        if (F.sess[i].open) {
            F.pending++;
            floor_start(&F.sess[i], K_PING);
        }
    }
}

static void
floor_dial_settled(struct floor_sess *s, bool ok)
{
    s->open = ok;
    if (ok)
        F.open++;
    F.dialing--;
    F.dialed++;
    if (F.dialed == F.n) {
        floor_mark(&F.dial);
        F.cur = &F.pings;
        if (F.idle_s > 0)
            floor_idle_start();
        else
            floor_start_round();
        return;
    }
    floor_dial_more();
}

static void
floor_done(struct floor_xfer *x, CURLcode code)
{
    struct floor_sess *s = x->s;
    long               status = 0, nconn = 0;
    bool               ok;

    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(x->easy, CURLINFO_NUM_CONNECTS, &nconn);
    F.cur->connects += nconn;
    ok = code == CURLE_OK && status >= 200 && status < 300;
    if (!ok)
        F.cur->failures++;
    switch (x->kind) {
    case K_PROBE:
        /* A legacy server answers the 2026-07-28 probe with a 4xx. */
        if (code == CURLE_OK && status >= 400 && status < 500) {
            F.cur->failures--;
            floor_start(s, K_INIT);
        } else {
            floor_dial_settled(s, false);
        }
        break;
    case K_INIT:
        if (ok && s->sid[0] != '\0')
            floor_start(s, K_NOTIFY);
        else
            floor_dial_settled(s, false);
        break;
    case K_NOTIFY:
        if (ok)
            floor_start(s, K_LIST);
        else
            floor_dial_settled(s, false);
        break;
    case K_LIST:
        floor_dial_settled(s, ok);
        break;
    case K_PING:
        if (F.idle_s > 0) {
            /* Idle: no rtt kept (unbounded), the next ping planned. */
            F.idle_pings++;
            if (F.cur == &F.pings)
                floor_idle_next(s);
            break;
        }
        if (ok)
            F.rtt[F.nrtt++] = (floor_now() - x->t0) * 1000.0;
        if (--F.pending == 0) {
            F.round_ms[F.round - 1] = (floor_now() - F.round_t0) * 1000.0;
            floor_start_round();
        }
        break;
    case K_DELETE:
        if (ok)
            F.ended++;
        if (--F.pending == 0) {
            floor_mark(&F.endings);
            ev_break(F.loop, EVBREAK_ALL);
        }
        break;
    }
}

static void
floor_check_done(struct floor_multi *fm)
{
    CURLMsg *msg;
    int      left;

    while ((msg = curl_multi_info_read(fm->m, &left)) != NULL) {
        CURL              *easy;
        CURLcode           code;
        struct floor_xfer *x = NULL;

        if (msg->msg != CURLMSG_DONE)
            continue;
        easy = msg->easy_handle;
        code = msg->data.result;
        curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&x);
        curl_multi_remove_handle(fm->m, easy);
        floor_done(x, code);
        curl_slist_free_all(x->headers);
        curl_easy_cleanup(easy);
        free(x);
    }
}

/* ------------------------------------------------------------ report */

static int
floor_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static double
floor_r1(double v)
{
    return floor(v * 10.0 + 0.5) / 10.0;
}

static void
floor_print_phase(const char *name, const struct floor_phase *p, bool comma)
{
    printf("\"%s\":{\"cpu_us\":%.0f,\"wall_ms\":%.1f,\"max_rss_kib\":%ld,"
        "\"connects\":%ld,\"failures\":%ld}%s", name, p->cpu_us, p->wall_ms,
        p->max_rss_kib, p->connects, p->failures, comma ? "," : "");
}

static void
floor_report(void)
{
    printf("{\"client\":\"floor\",\"libcurl\":\"%s\",\"libev\":\"%d.%d\","
        "\"dns_cache_timeout\":", curl_version_info(CURLVERSION_NOW)->version,
        ev_version_major(), ev_version_minor());
    if (F.dns_timeout == FLOOR_DNS_MCPTOP)
        printf("\"mcptop\",");
    else
        printf("%ld,", F.dns_timeout);
    printf("\"probe\":%s,\"multis\":%d,\"servers_per_multi\":%d,"
        "\"one_port\":%s,", F.probe ? "true" : "false", F.nmultis,
        F.per_multi, F.one_port ? "true" : "false");
    printf("\"summary\":{\"sessions_open\":%d,\"ended\":%d,\"pings\":",
        F.open, F.ended);
    if (F.nrtt > 0) {
        size_t k;

        qsort(F.rtt, F.nrtt, sizeof(double), floor_cmp);
        k = (size_t)ceil(0.99 * (double)F.nrtt);
        printf("{\"count\":%zu,\"asked\":%ld,\"min_ms\":%.1f,"
            "\"median_ms\":%.1f,\"p99_ms\":%.1f}", F.nrtt,
            (long)F.rounds * F.n, floor_r1(F.rtt[0]),
            floor_r1(F.nrtt % 2 ? F.rtt[F.nrtt / 2] :
            (F.rtt[F.nrtt / 2 - 1] + F.rtt[F.nrtt / 2]) / 2),
            floor_r1(F.rtt[k > 0 ? k - 1 : 0]));
    } else {
        printf("null");
    }
    if (F.idle_s > 0)
        printf(",\"idle_interval_ms\":%.0f,\"idle_pings\":%ld",
            F.idle_s * 1000.0, F.idle_pings);
    printf("},\"stats\":{\"servers\":%d,", F.n);
    floor_print_phase("dial", &F.dial, true);
    floor_print_phase("pings", &F.pings, true);
    floor_print_phase("endings", &F.endings, true);
    printf("\"ping_round_ms\":[");
    for (int i = 0; i < F.round; i++)
        printf("%s%.1f", i ? "," : "", floor_r1(F.round_ms[i]));
    printf("]}}\n");
}

int
main(int argc, char **argv)
{
    F.rounds = 5;
    F.concurrency = 50;
    F.dns_timeout = FLOOR_DNS_MCPTOP;
    F.per_multi = FLOOR_GROUP;
    F.path = "/mcp";
    F.base_port = 20000;
    F.probe = true;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

        if (strcmp(a, "--no-probe") == 0) {
            F.probe = false;
            continue;
        }
        if (strcmp(a, "--one-port") == 0) {
            F.one_port = true;
            continue;
        }
        if (v == NULL)
            goto usage;
        if (strcmp(a, "--base-port") == 0)
            F.base_port = atoi(v);
        else if (strcmp(a, "--count") == 0)
            F.n = atoi(v);
        else if (strcmp(a, "--pings") == 0)
            F.rounds = atoi(v);
        else if (strcmp(a, "--concurrency") == 0)
            F.concurrency = atoi(v);
        else if (strcmp(a, "--path") == 0)
            F.path = v;
        else if (strcmp(a, "--servers-per-multi") == 0)
            F.per_multi = atoi(v);
        else if (strcmp(a, "--idle-interval") == 0)
            F.idle_s = atof(v) / 1000.0;
        else if (strcmp(a, "--idle-seconds") == 0)
            F.idle_for = atof(v);
        else if (strcmp(a, "--dns-cache-timeout") == 0)
            F.dns_timeout = strcmp(v, "mcptop") == 0 ? FLOOR_DNS_MCPTOP :
                atol(v);
        else
            goto usage;
        i++;
    }
    if (F.n < 1 || F.rounds < 0 || F.concurrency < 1 || F.per_multi < 0 ||
        F.base_port < 1 || F.base_port + (F.one_port ? 0 : F.n - 1) > 65535 ||
        (F.dns_timeout < -1 && F.dns_timeout != FLOOR_DNS_MCPTOP))
        goto usage;
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    F.loop = EV_DEFAULT;
    if (F.per_multi == 0 || F.per_multi > F.n)
        F.per_multi = F.n;
    F.nmultis = (F.n + F.per_multi - 1) / F.per_multi;
    F.multis = calloc((size_t)F.nmultis, sizeof(*F.multis));
    for (int k = 0; k < F.nmultis; k++) {
        struct floor_multi *fm = &F.multis[k];

        fm->m = curl_multi_init();
        curl_multi_setopt(fm->m, CURLMOPT_SOCKETFUNCTION, floor_socket_cb);
        curl_multi_setopt(fm->m, CURLMOPT_SOCKETDATA, fm);
        curl_multi_setopt(fm->m, CURLMOPT_TIMERFUNCTION, floor_timer_cb);
        curl_multi_setopt(fm->m, CURLMOPT_TIMERDATA, fm);
        /* 2 * servers + 8, as mcptop: for the whole fleet, or the group. */
        curl_multi_setopt(fm->m, CURLMOPT_MAXCONNECTS,
            (long)F.per_multi * 2 + 8);
        ev_timer_init(&fm->timer, floor_timeout_cb, 0., 0.);
        fm->timer.data = fm;
    }
    F.sess = calloc((size_t)F.n, sizeof(*F.sess));
    F.round_ms = calloc((size_t)F.rounds + 1, sizeof(double));
    F.rtt = calloc((size_t)F.rounds * (size_t)F.n + 1, sizeof(double));
    for (int i = 0; i < F.n; i++) {
        F.sess[i].idx = i;
        F.sess[i].next_id = 1;
        if (F.one_port)
            snprintf(F.sess[i].url, sizeof(F.sess[i].url),
                "http://127.0.0.1:%d%s/%d", F.base_port, F.path, i);
        else
            snprintf(F.sess[i].url, sizeof(F.sess[i].url),
                "http://127.0.0.1:%d%s", F.base_port + i, F.path);
    }
    floor_mark(NULL);
    F.cur = &F.dial;
    floor_dial_more();
    ev_run(F.loop, 0);
    floor_report();
    /* Not measured: close the pool. */
    for (int k = 0; k < F.nmultis; k++)
        curl_multi_cleanup(F.multis[k].m);
    curl_global_cleanup();
    return F.open == F.n && F.ended == F.open ? 0 : 1;
usage:
    fprintf(stderr, "usage: floor --base-port P --count N [--pings R] "
        "[--concurrency C] [--path /mcp] [--one-port]\n"
        "             [--dns-cache-timeout S|mcptop] [--no-probe] "
        "[--servers-per-multi S (0: one)]\n"
        "             [--idle-interval MS [--idle-seconds S]]\n");
    return 2;
}
