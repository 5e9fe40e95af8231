/*
 * `mcptop serve`: the engine with no UI, its records served over HTTP for
 * Prometheus (issue 20). GNU libmicrohttpd runs in its external mode with
 * epoll: libev watches the one epoll descriptor libmicrohttpd hands out and
 * re-arms a timer from MHD_get_timeout after every MHD_run, so requests are
 * answered on the engine's own loop, in its thread, and every scrape reads
 * the engine between two events (a consistent snapshot with no lock).
 * Nothing here blocks: a large answer is written as the socket takes it.
 *
 *   /metrics  Prometheus text 0.0.4, or OpenMetrics 1.0.0 when Accept asks;
 *             gzip (zlib level 1) when Accept-Encoding asks, as Prometheus
 *             does on every scrape
 *   /fleet    the JSON of `check --json`, live (gzip likewise)
 *   /probe    ?target=NAME: one check of that server now, in
 *             blackbox_exporter's names (serve_probe.c)
 *   /sd       the servers as Prometheus HTTP service discovery, to drive
 *             /probe (serve_sd.c)
 *   /livez    200 while the loop runs
 *   /readyz   200 once every server's first dial settled; 503 before, and
 *             while shutting down
 *
 * SIGINT/SIGTERM end every session as `watch` does; SIGHUP reloads the
 * config (fleet_reload). Credentials for the endpoint (a bearer token or
 * basic auth) come from a file or the environment, never the command line,
 * and are never printed.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <microhttpd.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <zlib.h>

#include "cli/cli.h"
#include "cli/serve.h"
#include "cli/serve_guard.h"
#include "export/jsonl.h"
#include "export/metrics.h"
#include "export/recording.h"
#include "engine/http.h"
#include "engine/oauth_store.h"
#include "util/clock.h"
#include "util/dlog.h"
#include "util/file.h"
#include "util/str.h"
#include "util/xmalloc.h"

#define SERVE_DEFAULT_LISTEN   "127.0.0.1:9464"
#define SERVE_MAX_CONNECTIONS  32u
/* libmicrohttpd's own cap per address is the whole limit: the guard
 * (serve_guard.c) decides per address, shutting the oldest of a slow
 * client's connections so that a new scrape always gets in. */
#define SERVE_PER_IP_LIMIT     SERVE_MAX_CONNECTIONS
#define SERVE_IDLE_TIMEOUT_S   30u
#define SERVE_SECRET_MAX       4096
#define SERVE_MAX_TAG_LABELS   16
#define SERVE_ENV_TOKEN        "MCPTOP_SERVE_BEARER_TOKEN"
#define SERVE_ENV_BASIC        "MCPTOP_SERVE_BASIC_AUTH"
/* At exit, how long the probes' endings may take at most (each is
 * bounded by the scrape's timeout already). */
#define SERVE_PROBES_WAIT_MS   5000

/* The one deflate stream of the daemon's gzipped answers (reset for
 * each). */
struct serve_zlib {
    z_stream z;
    bool     ready;
};

/* serve_reply_coded's stream: the daemon answers on one thread. */
static struct serve_zlib serve_zlib;

struct serve {
    struct cli_fleet     cf;        /* cf.cfg: the first config (reloads
                                       are the fleet's own) */
    struct ev_loop      *loop;
    struct metrics      *metrics;
    struct recording    *rec;       /* --record, or NULL */
    struct MHD_Daemon   *mhd;
    struct serve_guard  *guard;     /* slow clients bounded */
    struct serve_probes *probes;    /* /probe */
    struct oauth_store  *tokens;    /* the token cache, read for the
                                       tokens' expiry (or NULL) */
    ev_io                mhd_io;
    ev_timer             mhd_timer;
    ev_signal            sigint, sigterm, sighup;
    bool                 stopping;
    /* The endpoint's credentials (secrets: never printed). */
    char                *token;     /* bearer, or NULL */
    char                *user;      /* basic, or NULL */
    char                *password;
    /* The options. */
    const char          *listen_spec;       /* --listen */
    struct sockaddr_storage ss;             /* where, resolved */
    socklen_t            sslen;
    const char          *token_file;        /* --bearer-token-file */
    const char          *basic_file;        /* --basic-auth-file */
    bool                 probe_urls;        /* --probe-urls */
    const char          *tag_labels[SERVE_MAX_TAG_LABELS];
    size_t               ntag_labels;
    /* Strings the metrics borrow. */
    char                 shard_text[32];    /* "K/N", or "" */
    char                 mhd_version[32];
};

const struct cli_entry cli_serve_entry = {
    .name = "serve",
    .usage =
        APP_USAGE "\n"
        "                    [--listen HOST:PORT] [--label-from-tags KEY,...]\n"
        "                    [--bearer-token-file FILE] "
        "[--basic-auth-file FILE]\n"
        "                    [--probe-urls] [--record FILE] [--record-max MB]\n"
        "                    " APP_USAGE_END,
    .summary = "monitor with no UI, serve Prometheus /metrics",
    .exec = cli_serve,
    .needs_http = true,
};

static void
serve_usage(FILE *out)
{
    cli_usage(out, &cli_serve_entry);
    fprintf(out,
        "\n"
        "Monitor the fleet with no UI and serve its records over HTTP for\n"
        "Prometheus:\n"
        "  /metrics  Prometheus text format 0.0.4 (OpenMetrics 1.0.0 when\n"
        "            the Accept header asks for it)\n"
        "  /fleet    the JSON report of 'mcptop check', live\n"
        "  /probe?target=NAME\n"
        "            one check of that server now (a dial, its deep check,\n"
        "            a ping, its session ended), blackbox_exporter style:\n"
        "            probe_success, probe_duration_seconds\n"
        "  /sd       the servers as Prometheus HTTP service discovery (a\n"
        "            target group per server, its tags as labels), to\n"
        "            drive /probe\n"
        "  /livez    200 while mcptop runs\n"
        "  /readyz   200 once every server's first dial settled, else 503\n"
        "\n"
        "  -l, --listen HOST:PORT  where to listen (default %s;\n"
        "                     a bare PORT listens on 127.0.0.1; [::1]:PORT "
        "for IPv6;\n"
        "                     0.0.0.0:PORT on every interface)\n"
        "      --label-from-tags KEY,...\n"
        "                     add label KEY to every server's series, from\n"
        "                     its tag KEY=VALUE or KEY:VALUE (\"\" when "
        "none)\n"
        "      --bearer-token-file FILE\n"
        "                     require 'Authorization: Bearer TOKEN' on "
        "/metrics\n"
        "                     and /fleet, TOKEN being the file's first line\n"
        "                     (or $%s)\n"
        "      --basic-auth-file FILE\n"
        "                     require basic auth, the file's first line "
        "being\n"
        "                     USER:PASSWORD (or $%s)\n"
        "      --probe-urls   let /probe?target= also be an http(s) URL that\n"
        "                     is not in the config (off: only configured\n"
        "                     servers are probed)\n"
        "  -h, --help         this help\n",
        SERVE_DEFAULT_LISTEN, SERVE_ENV_TOKEN, SERVE_ENV_BASIC);
    app_usage_options(out);
    app_usage_record(out);
    fprintf(out,
        "\n"
        "/livez and /readyz need no credentials; /probe and /sd need them\n"
        "as /metrics does. SIGHUP reloads the config\n"
        "(servers added, removed, changed; the others keep running);\n"
        "SIGINT or SIGTERM ends every session (DELETE) before exit, bounded\n"
        "by the teardown deadline plus 1 s; a second signal quits.\n"
        "Exit status: 0 after a signal, 2 usage, unreadable config or a\n"
        "port that cannot be listened on.\n");
    app_usage_sources(out);
}

/* ------------------------------------------------------------ credentials */

/* The first line of a secret file (trailing CR/LF and blanks cut) into
 * *out. 0, or EXIT_USAGE after saying why (never the content). */
static int
serve_read_secret(const char *path, const char *what, char **out)
{
    const char *why;
    FILE       *f = file_fopen_regular(path, &why);   /* never a wait */
    char        buf[SERVE_SECRET_MAX + 2];
    size_t      n;
    struct stat st;

    if (f == NULL) {
        fprintf(stderr, "mcptop serve: cannot read the %s file %s: %s\n",
            what, path, why);
        return EXIT_USAGE;
    }
    if (fstat(fileno(f), &st) == 0 && (st.st_mode & 0077) != 0)
        fprintf(stderr, "mcptop serve: warning: the %s file %s can be read "
            "by other users (chmod 600 it)\n", what, path);
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    buf[strcspn(buf, "\r\n")] = '\0';
    n = strlen(buf);
    while (n > 0 && (buf[n - 1] == ' ' || buf[n - 1] == '\t'))
        buf[--n] = '\0';
    if (n == 0 || n > SERVE_SECRET_MAX) {
        fprintf(stderr, "mcptop serve: the %s file %s %s\n", what, path,
            n == 0 ? "has nothing on its first line" : "is too long");
        explicit_bzero(buf, sizeof(buf));
        return EXIT_USAGE;
    }
    *out = xstrdup(buf);
    explicit_bzero(buf, sizeof(buf));
    return 0;
}

/* Split "USER:PASSWORD" (owned by *pair, consumed) into the struct. */
static int
serve_set_basic(struct serve *srv, char *pair, const char *from)
{
    char *colon = strchr(pair, ':');

    if (colon == NULL || colon == pair || colon[1] == '\0') {
        fprintf(stderr, "mcptop serve: %s must hold USER:PASSWORD\n", from);
        explicit_bzero(pair, strlen(pair));
        free(pair);
        return EXIT_USAGE;
    }
    *colon = '\0';
    srv->user = xstrdup(pair);
    srv->password = xstrdup(colon + 1);
    explicit_bzero(colon + 1, strlen(colon + 1));
    free(pair);
    return 0;
}

/* Equal strings, in a time that depends on the expected length only. */
static bool
serve_secret_eq(const char *given, const char *want)
{
    size_t        n = strlen(want), g = strlen(given);
    unsigned char diff = (unsigned char)(n != g);

    for (size_t i = 0; i < n; i++)
        diff |= (unsigned char)(want[i] ^ (i < g ? given[i] : 0));
    return diff == 0;
}

/* True when the request carries one of the configured credentials (or
 * none is configured). */
static bool
serve_authorized(struct serve *srv, struct MHD_Connection *conn)
{
    const char *h;
    bool        ok = false;

    if (srv->token == NULL && srv->user == NULL)
        return true;
    h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
        MHD_HTTP_HEADER_AUTHORIZATION);
    if (h == NULL)
        return false;
    if (srv->token != NULL && strncasecmp(h, "Bearer ", 7) == 0) {
        h += 7;
        while (*h == ' ')
            h++;
        ok = serve_secret_eq(h, srv->token);
    }
    if (!ok && srv->user != NULL && strncasecmp(h, "Basic ", 6) == 0) {
        char *pass = NULL;
        char *user = MHD_basic_auth_get_username_password(conn, &pass);

        if (user != NULL && pass != NULL) {
            bool u = serve_secret_eq(user, srv->user);
            bool p = serve_secret_eq(pass, srv->password);

            ok = u && p;
        }
        if (pass != NULL) {
            explicit_bzero(pass, strlen(pass));
            MHD_free(pass);
        }
        if (user != NULL)
            MHD_free(user);
    }
    return ok;
}

/* ------------------------------------------------------------ answers */

/*
 * Does an Accept-Encoding header take gzip? Yes when it names gzip (or
 * x-gzip) with a q above 0, or names neither but "*" with a q above 0
 * (RFC 9110 section 12.5.3). NULL: no.
 */
static bool
serve_accepts_gzip(const char *ae)
{
    double gzip_q = -1, star_q = -1;

    for (const char *p = ae; p != NULL && *p != '\0';) {
        size_t      n, tlen;
        const char *semi, *q;
        double      v = 1.0;

        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        n = strcspn(p, ",");
        semi = memchr(p, ';', n);
        tlen = (semi != NULL ? (size_t)(semi - p) : n);
        while (tlen > 0 && (p[tlen - 1] == ' ' || p[tlen - 1] == '\t'))
            tlen--;
        if (semi != NULL) {
            q = semi + 1;
            while (q < p + n && (*q == ' ' || *q == '\t'))
                q++;
            if (q + 2 <= p + n && (q[0] == 'q' || q[0] == 'Q') &&
                q[1] == '=')
                v = strtod(q + 2, NULL);
        }
        if ((tlen == 4 && strncasecmp(p, "gzip", 4) == 0) ||
            (tlen == 6 && strncasecmp(p, "x-gzip", 6) == 0))
            gzip_q = v > gzip_q ? v : gzip_q;
        else if (tlen == 1 && p[0] == '*')
            star_q = v;
        p += n;
    }
    return gzip_q >= 0 ? gzip_q > 0 : star_q > 0;
}

/*
 * len bytes at body as one gzip member (zlib level 1: a scrape of 10,000
 * servers shrinks about sixteenfold for a few tens of ms). The stream is
 * made once and reset for each answer: deflateInit2 costs half a
 * millisecond (its 256 KiB of state), more than compressing a small
 * scrape. Returns a malloc'd buffer of *outlen bytes, or NULL when zlib
 * fails (body is untouched).
 */
static char *
serve_gzip(struct serve_zlib *zs, const char *body, size_t len,
    size_t *outlen)
{
    z_stream *z = &zs->z;
    size_t    cap = len / 8 + 4096, out = 0;
    char     *buf;
    int       rc;

    if (len > UINT_MAX)
        return NULL;
    if (!zs->ready) {
        memset(z, 0, sizeof(*z));
        if (deflateInit2(z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
            Z_OK)
            return NULL;
        zs->ready = true;
    } else if (deflateReset(z) != Z_OK) {
        return NULL;
    }
    buf = xmalloc(cap);
    z->next_in = (Bytef *)(uintptr_t)body;
    z->avail_in = (uInt)len;
    do {
        if (out == cap) {
            cap *= 2;
            buf = xrealloc(buf, cap);
        }
        z->next_out = (Bytef *)buf + out;
        z->avail_out = (uInt)(cap - out > UINT_MAX ? UINT_MAX : cap - out);
        rc = deflate(z, Z_FINISH);
        out = (size_t)((char *)z->next_out - buf);
    } while (rc == Z_OK || rc == Z_BUF_ERROR);
    z->next_in = NULL;
    if (rc != Z_STREAM_END) {
        free(buf);
        return NULL;
    }
    *outlen = out;
    return buf;
}

/* See serve.h. */
enum MHD_Result
serve_reply(struct MHD_Connection *conn, unsigned status, char *body,
    size_t len, const char *type)
{
    struct MHD_Response *r;
    enum MHD_Result      ret;

    r = MHD_create_response_from_buffer_with_free_callback(len, body, free);
    if (r == NULL) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    ret = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result
serve_text(struct MHD_Connection *conn, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static enum MHD_Result
serve_text(struct MHD_Connection *conn, unsigned status, const char *fmt, ...)
{
    va_list ap;
    char   *text;

    va_start(ap, fmt);
    text = str_vprintf(fmt, ap);
    va_end(ap);
    return serve_reply(conn, status, text, strlen(text),
        "text/plain; charset=utf-8");
}

static enum MHD_Result
serve_unauthorized(struct serve *srv, struct MHD_Connection *conn)
{
    static const char   body[] = "credentials required\n";
    struct MHD_Response *r;
    enum MHD_Result      ret;

    r = MHD_create_response_from_buffer(sizeof(body) - 1, (void *)body,
        MHD_RESPMEM_PERSISTENT);
    if (r == NULL)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
        "text/plain; charset=utf-8");
    if (srv->user != NULL) {
        ret = MHD_queue_basic_auth_fail_response(conn, "mcptop", r);
    } else {
        MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
            "Bearer realm=\"mcptop\"");
        ret = MHD_queue_response(conn, MHD_HTTP_UNAUTHORIZED, r);
    }
    MHD_destroy_response(r);
    return ret;
}

/* CPU time used by the process so far, ms (getrusage). */
static double
serve_cpu_ms(void)
{
    struct rusage ru;

    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
        (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

/* serve_reply_coded, and *sent (may be NULL) the bytes queued. */
static enum MHD_Result
serve_reply_coded_sent(struct MHD_Connection *conn, char *body, size_t len,
    const char *type, size_t *sent)
{
    struct MHD_Response *r;
    enum MHD_Result      ret;
    char                *gz = NULL;
    size_t               gzlen = 0;

    if (serve_accepts_gzip(MHD_lookup_connection_value(conn,
        MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING)))
        gz = serve_gzip(&serve_zlib, body, len, &gzlen);
    if (gz != NULL) {
        free(body);
        body = gz;
        len = gzlen;
    }
    if (sent != NULL)
        *sent = len;
    r = MHD_create_response_from_buffer_with_free_callback(len, body, free);
    if (r == NULL) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    MHD_add_response_header(r, MHD_HTTP_HEADER_VARY,
        MHD_HTTP_HEADER_ACCEPT_ENCODING);
    if (gz != NULL)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
    ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

/* See serve.h. */
enum MHD_Result
serve_reply_coded(struct MHD_Connection *conn, char *body, size_t len,
    const char *type)
{
    return serve_reply_coded_sent(conn, body, len, type, NULL);
}

static enum MHD_Result
serve_metrics(struct serve *srv, struct MHD_Connection *conn)
{
    enum metrics_format fmt = metrics_negotiate(MHD_lookup_connection_value(
        conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT));
    size_t              len = 0, sent = 0;
    char               *body, *cause = NULL;
    double              t0 = srv->cf.common.log != NULL ? serve_cpu_ms() : 0;
    double              t1;
    enum MHD_Result     ret;

    /* Read again only when the file changed (one stat otherwise). */
    if (srv->tokens != NULL && oauth_store_reload(srv->tokens, &cause) != 0)
        free(cause);
    body = metrics_render(srv->metrics, fmt, &len);
    t1 = srv->cf.common.log != NULL ? serve_cpu_ms() : 0;
    ret = serve_reply_coded_sent(conn, body, len, metrics_content_type(fmt),
        &sent);
    /* What a scrape costs, measured where it runs: render and compress
     * are synchronous, so the process's CPU between is theirs alone. */
    if (srv->cf.common.log != NULL)
        dlog(srv->cf.common.log, "serve", "/metrics: %zu bytes (%zu sent%s), "
            "%.2f ms CPU (render %.2f)", len, sent, sent != len ? " gzip" :
            "", serve_cpu_ms() - t0, t1 - t0);
    return ret;
}

static enum MHD_Result
serve_fleet(struct serve *srv, struct MHD_Connection *conn)
{
    cJSON *doc = jsonl_fleet(srv->cf.fleet);
    char  *text = cJSON_PrintUnformatted(doc);
    size_t len;

    cJSON_Delete(doc);
    if (text == NULL)
        return MHD_NO;
    len = strlen(text);
    /* cJSON allocates with malloc (no hooks set): free() releases it. */
    return serve_reply_coded(conn, text, len, "application/json");
}

static enum MHD_Result
serve_ready(struct serve *srv, struct MHD_Connection *conn)
{
    size_t pending;

    if (srv->stopping)
        return serve_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
            "shutting down: ending sessions\n");
    pending = metrics_pending_dials(srv->metrics);
    if (pending > 0)
        return serve_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
            "%zu of %zu servers have not finished their first dial\n",
            pending, fleet_size(srv->cf.fleet));
    return serve_text(conn, MHD_HTTP_OK, "ok\n");
}

/* MHD_AccessHandlerCallback: every request, on the loop's thread. */
static enum MHD_Result
serve_access_cb(void *cls, struct MHD_Connection *conn, const char *url,
    const char *method, const char *version, const char *upload_data,
    size_t *upload_data_size, void **req_cls)
{
    static int   headers_seen;
    struct serve *srv = cls;

    (void)version;
    (void)upload_data;
    if (*req_cls == NULL) {
        /* First call: headers only. Answer on the next. */
        *req_cls = &headers_seen;
        serve_guard_head_done(conn);
        return MHD_YES;
    }
    if (*upload_data_size != 0) {
        *upload_data_size = 0;      /* a body is not read, only refused */
        return MHD_YES;
    }
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
        strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return serve_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
            "only GET and HEAD\n");
    if (strcmp(url, "/livez") == 0)
        return serve_text(conn, MHD_HTTP_OK, "ok\n");
    if (strcmp(url, "/readyz") == 0)
        return serve_ready(srv, conn);
    if (strcmp(url, "/metrics") == 0 || strcmp(url, "/fleet") == 0 ||
        strcmp(url, "/probe") == 0 || strcmp(url, "/sd") == 0) {
        if (!serve_authorized(srv, conn))
            return serve_unauthorized(srv, conn);
        if (url[1] == 'p')
            return serve_probe_request(srv->probes, srv->cf.fleet, conn);
        if (url[1] == 's')
            return serve_sd(srv->cf.fleet, conn);
        return url[1] == 'm' ? serve_metrics(srv, conn) :
            serve_fleet(srv, conn);
    }
    if (strcmp(url, "/") == 0)
        return serve_text(conn, MHD_HTTP_OK, "mcptop %s: /metrics /fleet "
            "/probe?target=NAME /sd /livez /readyz\n", MCPTOP_VERSION);
    return serve_text(conn, MHD_HTTP_NOT_FOUND, "not found: try /metrics\n");
}

/* MHD_OPTION_NOTIFY_COMPLETED: the guard's, and a probe's connection
 * that went away. */
static void
serve_completed_cb(void *cls, struct MHD_Connection *conn, void **req_cls,
    enum MHD_RequestTerminationCode toe)
{
    struct serve *srv = cls;

    serve_guard_completed(srv->guard, conn, req_cls, toe);
    serve_probes_completed(srv->probes, conn);
}

/* MHD's own messages (bind errors, protocol errors), on stderr. */
static void
serve_mhd_log_cb(void *cls, const char *fmt, va_list ap)
{
    char line[512];

    (void)cls;
    vsnprintf(line, sizeof(line), fmt, ap);
    line[strcspn(line, "\r\n")] = '\0';
    str_sanitize(line, sizeof(line), line, strlen(line));
    fprintf(stderr, "mcptop serve: http: %s\n", line);
}

/* ------------------------------------------------------------ the loop */

/* Let MHD do what is due, then wake up again when it says. */
static void
serve_mhd_run(struct serve *srv)
{
    MHD_UNSIGNED_LONG_LONG ms = 0;

    MHD_run(srv->mhd);
    ev_timer_stop(srv->loop, &srv->mhd_timer);
    if (MHD_get_timeout(srv->mhd, &ms) == MHD_YES) {
        ev_timer_set(&srv->mhd_timer, (double)ms / 1000.0, 0.);
        ev_timer_start(srv->loop, &srv->mhd_timer);
    }
}

static void
serve_io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    (void)revents;
    serve_mhd_run(w->data);
}

static void
serve_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    serve_mhd_run(w->data);
}

/* serve_probes_options.kick: run MHD on the next loop turn. */
static void
serve_mhd_kick(void *arg)
{
    struct serve *srv = arg;

    ev_timer_stop(srv->loop, &srv->mhd_timer);
    ev_timer_set(&srv->mhd_timer, 0., 0.);
    ev_timer_start(srv->loop, &srv->mhd_timer);
}

static void
serve_stop_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
    struct serve *srv = w->data;

    (void)revents;
    srv->stopping = true;
    ev_break(loop, EVBREAK_ONE);
}

/* SIGHUP: load the config again and make the fleet match it. On any
 * error the running config stays, and mcptop_config_last_reload_successful
 * says so. */
static void
serve_reload(struct serve *srv)
{
    struct config *cfg = NULL;
    char          *cause = NULL;
    int64_t        now = clock_wall_ms();

    if (app_load_config(&srv->cf.common, &cfg) != 0) {
        fprintf(stderr, "mcptop serve: reload: the running config stays\n");
        metrics_reload_result(srv->metrics, false, now);
        return;
    }
    if (fleet_reload(srv->cf.fleet, cfg, &cause) != 0) {
        fprintf(stderr, "mcptop serve: reload: %s; the running config "
            "stays\n", cause != NULL ? cause : "failed");
        free(cause);
        config_free(cfg);
        metrics_reload_result(srv->metrics, false, now);
        return;
    }
    /* cfg is the fleet's now; it keeps an earlier config alive while a
     * server still ending under it needs it, and frees the rest. */
    metrics_sync(srv->metrics, srv->cf.fleet);
    metrics_reload_result(srv->metrics, true, now);
    if (srv->rec != NULL)
        recording_fleet(srv->rec, srv->cf.fleet);
    fprintf(stderr, "mcptop serve: reload: %zu server%s\n",
        fleet_size(srv->cf.fleet), fleet_size(srv->cf.fleet) == 1 ? "" : "s");
}

static void
serve_hup_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
    (void)loop;
    (void)revents;
    serve_reload(w->data);
}

/* ------------------------------------------------------------ set-up */

/*
 * Parse HOST:PORT, [V6]:PORT or PORT (127.0.0.1) and resolve it into *ss.
 * 0, or EXIT_USAGE after saying why.
 */
static int
serve_parse_listen(const char *spec, struct sockaddr_storage *ss,
    socklen_t *sslen)
{
    char             host[256], port[16];
    const char      *colon;
    struct addrinfo  hints = { 0 }, *ai = NULL;
    char            *end = NULL;
    long             p;
    int              rc;

    if (spec[0] == '[') {
        const char *close = strchr(spec, ']');

        if (close == NULL || close[1] != ':' ||
            (size_t)(close - spec - 1) >= sizeof(host))
            goto bad;
        snprintf(host, sizeof(host), "%.*s", (int)(close - spec - 1),
            spec + 1);
        colon = close + 1;
    } else if ((colon = strrchr(spec, ':')) != NULL) {
        if (colon == spec) {
            fprintf(stderr, "mcptop serve: --listen '%s': give a host "
                "(127.0.0.1%s, or 0.0.0.0%s for every interface)\n", spec,
                spec, spec);
            return EXIT_USAGE;
        }
        if ((size_t)(colon - spec) >= sizeof(host) ||
            memchr(spec, ':', (size_t)(colon - spec)) != NULL)
            goto bad;
        snprintf(host, sizeof(host), "%.*s", (int)(colon - spec), spec);
    } else {
        snprintf(host, sizeof(host), "127.0.0.1");
        colon = spec - 1;
    }
    errno = 0;
    p = strtol(colon + 1, &end, 10);
    if (errno != 0 || end == colon + 1 || *end != '\0' || p < 0 ||
        p > 65535)
        goto bad;
    snprintf(port, sizeof(port), "%ld", p);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    rc = getaddrinfo(host, port, &hints, &ai);
    if (rc != 0 || ai == NULL) {
        fprintf(stderr, "mcptop serve: --listen '%s': %s\n", spec,
            rc != 0 ? gai_strerror(rc) : "no address");
        return EXIT_USAGE;
    }
    memcpy(ss, ai->ai_addr, ai->ai_addrlen);
    *sslen = ai->ai_addrlen;
    freeaddrinfo(ai);
    return 0;
bad:
    fprintf(stderr, "mcptop serve: --listen '%s' is not HOST:PORT, "
        "[IPV6]:PORT or PORT (0-65535)\n", spec);
    return EXIT_USAGE;
}

/* Split KEY,KEY into labels (checked). 0, or EXIT_USAGE. */
static int
serve_parse_tags(char *arg, const char **labels, size_t *n)
{
    for (char *save = NULL, *k = strtok_r(arg, ",", &save); k != NULL;
        k = strtok_r(NULL, ",", &save)) {
        if (!metrics_tag_label_ok(k)) {
            fprintf(stderr, "mcptop serve: --label-from-tags: '%s' cannot "
                "be a label ([a-zA-Z_][a-zA-Z0-9_]*, not __*, not one "
                "mcptop writes)\n", k);
            return EXIT_USAGE;
        }
        for (size_t i = 0; i < *n; i++) {
            if (strcmp(labels[i], k) == 0) {
                fprintf(stderr, "mcptop serve: --label-from-tags: '%s' "
                    "twice\n", k);
                return EXIT_USAGE;
            }
        }
        if (*n == SERVE_MAX_TAG_LABELS) {
            fprintf(stderr, "mcptop serve: --label-from-tags: at most %d "
                "labels\n", SERVE_MAX_TAG_LABELS);
            return EXIT_USAGE;
        }
        labels[(*n)++] = k;
    }
    return 0;
}

/* The credentials from the files given, else the environment. */
static int
serve_credentials(struct serve *srv, const char *token_file,
    const char *basic_file)
{
    const char *env;
    char       *pair = NULL;
    int         rc;

    if (token_file != NULL) {
        rc = serve_read_secret(token_file, "bearer token", &srv->token);
        if (rc != 0)
            return rc;
    } else if ((env = getenv(SERVE_ENV_TOKEN)) != NULL && env[0] != '\0') {
        srv->token = xstrdup(env);
    }
    if (basic_file != NULL) {
        rc = serve_read_secret(basic_file, "basic auth", &pair);
        if (rc != 0)
            return rc;
        return serve_set_basic(srv, pair, basic_file);
    }
    if ((env = getenv(SERVE_ENV_BASIC)) != NULL && env[0] != '\0')
        return serve_set_basic(srv, xstrdup(env), "$" SERVE_ENV_BASIC);
    return 0;
}

/* Listen on srv->ss (from serve_parse_listen) and put MHD on the loop. */
static int
serve_start_http(struct serve *srv)
{
    const union MHD_DaemonInfo *info;
    unsigned                  flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG |
        MHD_ALLOW_SUSPEND_RESUME;
    char                      where[INET6_ADDRSTRLEN + 16];
    char                      host[INET6_ADDRSTRLEN];

    if (srv->ss.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    srv->guard = serve_guard_new(srv->loop);
    srv->mhd = MHD_start_daemon(flags, 0, NULL, NULL, serve_access_cb, srv,
        MHD_OPTION_EXTERNAL_LOGGER, serve_mhd_log_cb, srv,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&srv->ss,
        MHD_OPTION_CONNECTION_LIMIT, SERVE_MAX_CONNECTIONS,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, SERVE_PER_IP_LIMIT,
        MHD_OPTION_CONNECTION_TIMEOUT, SERVE_IDLE_TIMEOUT_S,
        MHD_OPTION_NOTIFY_CONNECTION, serve_guard_notify, srv->guard,
        MHD_OPTION_NOTIFY_COMPLETED, serve_completed_cb, srv,
        MHD_OPTION_END);
    if (srv->mhd == NULL) {
        fprintf(stderr, "mcptop serve: cannot listen on %s\n", srv->listen_spec);
        return EXIT_USAGE;
    }
    info = MHD_get_daemon_info(srv->mhd, MHD_DAEMON_INFO_EPOLL_FD);
    if (info == NULL) {
        fprintf(stderr, "mcptop serve: libmicrohttpd has no epoll here\n");
        return EXIT_USAGE;
    }
    ev_io_init(&srv->mhd_io, serve_io_cb, info->epoll_fd, EV_READ);
    srv->mhd_io.data = srv;
    ev_io_start(srv->loop, &srv->mhd_io);
    ev_timer_init(&srv->mhd_timer, serve_timer_cb, 0., 0.);
    srv->mhd_timer.data = srv;
    info = MHD_get_daemon_info(srv->mhd, MHD_DAEMON_INFO_BIND_PORT);
    if (getnameinfo((struct sockaddr *)&srv->ss, srv->sslen, host, sizeof(host), NULL,
        0, NI_NUMERICHOST) != 0)
        snprintf(host, sizeof(host), "?");
    snprintf(where, sizeof(where), srv->ss.ss_family == AF_INET6 ? "[%s]:%u" :
        "%s:%u", host, info != NULL ? (unsigned)info->port : 0u);
    fprintf(stderr, "mcptop serve: listening on http://%s/metrics "
        "(%zu server%s%s)\n", where, fleet_size(srv->cf.fleet),
        fleet_size(srv->cf.fleet) == 1 ? "" : "s",
        srv->token != NULL || srv->user != NULL ? ", credentials required" :
        "");
    return 0;
}

static void
serve_done(struct serve *srv)
{
    /* Before the daemon stops: it stops only with no connection left
     * suspended. */
    serve_probes_free(srv->probes);
    if (srv->mhd != NULL) {
        ev_io_stop(srv->loop, &srv->mhd_io);
        ev_timer_stop(srv->loop, &srv->mhd_timer);
        MHD_stop_daemon(srv->mhd);
    }
    serve_guard_free(srv->guard);
    metrics_free(srv->metrics);
    oauth_store_free(srv->tokens);
    if (serve_zlib.ready) {
        deflateEnd(&serve_zlib.z);
        serve_zlib.ready = false;
    }
    if (fleet_exit(srv->cf.fleet))
        config_free(srv->cf.cfg);
    if (srv->token != NULL)
        explicit_bzero(srv->token, strlen(srv->token));
    if (srv->password != NULL)
        explicit_bzero(srv->password, strlen(srv->password));
    free(srv->token);
    free(srv->user);
    free(srv->password);
    app_close_log(&srv->cf.common);
}

/* cli_preamble.option: serve's own options. */
static int
serve_option(void *arg, int ch, char *value, int *rc)
{
    struct serve *srv = arg;

    switch (ch) {
    case 'l':
        srv->listen_spec = value;
        break;
    case 'T':
        if (serve_parse_tags(value, srv->tag_labels,
            &srv->ntag_labels) != 0) {
            *rc = EXIT_USAGE;
            return -1;
        }
        break;
    case 'B':
        srv->token_file = value;
        break;
    case 'A':
        srv->basic_file = value;
        break;
    case 'U':
        srv->probe_urls = true;
        break;
    }
    return 0;
}

/* cli_preamble.parsed: arguments first, then files: a bad --listen is
 * named before a config is looked for. */
static int
serve_parsed(void *arg, int *rc)
{
    struct serve *srv = arg;

    *rc = serve_parse_listen(srv->listen_spec, &srv->ss, &srv->sslen);
    if (*rc == 0)
        *rc = serve_credentials(srv, srv->token_file, srv->basic_file);
    if (*rc != 0)
        return -1;
    return cli_record_open(&srv->cf, "serve", &srv->rec, rc);
}

/* The metrics of the fleet, with mcptop's and its libraries' versions. */
static void
serve_metrics_new(struct serve *srv)
{
    struct metrics_options mopt = { 0 };
    const char            *tls = NULL;
    char                  *cause = NULL;

    if (srv->cf.common.shard.n != 0)
        snprintf(srv->shard_text, sizeof(srv->shard_text), "%u/%u",
            srv->cf.common.shard.k, srv->cf.common.shard.n);
    snprintf(srv->mhd_version, sizeof(srv->mhd_version), "%s",
        MHD_get_version());
    mopt.version = MCPTOP_VERSION;
    http_library_versions(&mopt.libcurl, &tls);
    mopt.libmicrohttpd = srv->mhd_version;
    mopt.shard = srv->shard_text[0] != '\0' ? srv->shard_text : NULL;
    mopt.tag_labels = srv->tag_labels;
    mopt.ntag_labels = srv->ntag_labels;
    mopt.process = true;
    srv->tokens = oauth_store_open(NULL, &cause);
    free(cause);
    mopt.tokens = srv->tokens;
    srv->metrics = metrics_new(&mopt);
    metrics_sync(srv->metrics, srv->cf.fleet);
}

/* ev_prepare: stop the loop once no probe holds a fleet. */
static void
serve_wait_probes_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
    struct serve *srv = w->data;

    (void)revents;
    if (serve_probes_busy(srv->probes) == 0)
        ev_break(loop, EVBREAK_ONE);
}

static void
serve_wait_bound_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)w;
    (void)revents;
    ev_break(loop, EVBREAK_ONE);
}

/* At exit, after serve_probes_stop: run the loop until every probe's
 * ending settled (each is bounded by its own teardown), at most bound_ms;
 * a second signal cuts it short. */
static void
serve_wait_probes(struct serve *srv, long bound_ms)
{
    ev_prepare prep;
    ev_timer   bound;

    if (serve_probes_busy(srv->probes) == 0)
        return;
    ev_prepare_init(&prep, serve_wait_probes_cb);
    prep.data = srv;
    ev_prepare_start(srv->loop, &prep);
    ev_timer_init(&bound, serve_wait_bound_cb, (double)bound_ms / 1000.0,
        0.);
    ev_timer_start(srv->loop, &bound);
    ev_run(srv->loop, 0);
    ev_prepare_stop(srv->loop, &prep);
    ev_timer_stop(srv->loop, &bound);
}

int
cli_serve(int argc, char **argv)
{
    static const struct option longopts[] = {
        APP_LONGOPTS,
        APP_RECORD_LONGOPTS,
        { "listen", required_argument, NULL, 'l' },
        { "label-from-tags", required_argument, NULL, 'T' },
        { "bearer-token-file", required_argument, NULL, 'B' },
        { "basic-auth-file", required_argument, NULL, 'A' },
        { "probe-urls", no_argument, NULL, 'U' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct serve              srv = { .loop = EV_DEFAULT,
        .listen_spec = SERVE_DEFAULT_LISTEN };
    const struct cli_preamble pre = { .cmd = "serve", .longopts = longopts,
        .shortopts = "l:h", .usage = serve_usage, .option = serve_option,
        .parsed = serve_parsed, .arg = &srv };
    size_t                    unended, asked = 0;
    int                       rc;

    if (cli_preamble(&pre, argc, argv, &srv.cf, &rc) != 0) {
        recording_close(srv.rec);
        serve_done(&srv);
        return rc;
    }
    serve_metrics_new(&srv);
    {
        struct serve_probes_options po = { .loop = srv.loop,
            .urls = srv.probe_urls, .log = srv.cf.common.log,
            .kick = serve_mhd_kick, .kick_arg = &srv };

        srv.probes = serve_probes_new(&po);
    }
    rc = serve_start_http(&srv);
    if (rc != 0) {
        recording_close(srv.rec);
        serve_done(&srv);
        return rc;
    }
    ev_signal_init(&srv.sigint, serve_stop_cb, SIGINT);
    srv.sigint.data = &srv;
    ev_signal_start(srv.loop, &srv.sigint);
    ev_signal_init(&srv.sigterm, serve_stop_cb, SIGTERM);
    srv.sigterm.data = &srv;
    ev_signal_start(srv.loop, &srv.sigterm);
    ev_signal_init(&srv.sighup, serve_hup_cb, SIGHUP);
    srv.sighup.data = &srv;
    ev_signal_start(srv.loop, &srv.sighup);
    fleet_subscribe(srv.cf.fleet, metrics_event_cb, srv.metrics);
    if (srv.rec != NULL) {
        recording_start(srv.rec, srv.loop, srv.cf.fleet);
        fleet_subscribe(srv.cf.fleet, recording_event_cb, srv.rec);
    }
    fleet_start(srv.cf.fleet);
    serve_mhd_run(&srv);
    ev_run(srv.loop, 0);
    ev_signal_stop(srv.loop, &srv.sigint);
    ev_signal_stop(srv.loop, &srv.sigterm);
    ev_signal_stop(srv.loop, &srv.sighup);
    /* As watch: end every session, bounded by the deadline plus a grace
     * (a second signal cuts it short). /metrics still answers meanwhile;
     * /readyz says 503. */
    srv.stopping = true;
    if (srv.rec != NULL)
        recording_stopping(srv.rec);
    serve_probes_stop(srv.probes);
    fleet_end_all(srv.cf.fleet);
    cli_wait_endings(srv.cf.fleet, fleet_teardown_ms(srv.cf.fleet) + 1000);
    serve_wait_probes(&srv, SERVE_PROBES_WAIT_MS);
    unended = cli_report_unended(srv.cf.fleet, "serve", &asked);
    if (srv.rec != NULL)
        recording_exit(srv.rec, asked, unended);
    fleet_stop(srv.cf.fleet);
    serve_done(&srv);
    /* After the fleet: it publishes to the recording until freed. */
    if (!cli_record_close(&srv.cf, "serve", &srv.rec) && unended == 0)
        unended = 1;
    return unended > 0 ? EXIT_NOT_OK : 0;
}
