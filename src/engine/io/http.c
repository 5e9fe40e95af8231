/*
 * Streamable HTTP exchanges on libcurl. A transfer owns its easy handle,
 * its header list, a bounded body buffer and, when the answer is
 * text/event-stream, an SSE parser whose events go up as they complete.
 * At the end it turns libcurl's result code, timings and counters into a
 * struct failure_evidence, so the classifier never sees libcurl.
 *
 * It must never call the multi interface from inside a libcurl callback:
 * an owner that wants a transfer stopped says so by its callback's return
 * value, and the write callback then ends the transfer.
 */
#include "engine/http.h"

#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <limits.h>
#include <sys/socket.h>
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/curlev.h"
#include "io/http_hdrs.h"
#include "engine/http_relay.h"
#include "engine/sse.h"
#include "util/clock.h"
#include "util/str.h"
#include "util/xmalloc.h"

/* A non-2xx body is kept only this far: enough for a JSON-RPC error or the
 * title of a gateway's HTML page. */
#define HTTP_ERROR_BODY_MAX (64 * 1024)

struct http_xfer {
    struct curlev              *ce;
    CURL                       *easy;
    struct curl_slist          *headers;    /* its own, or hdrs' */
    struct http_hdrs           *hdrs;       /* a session's, or NULL */
    const struct http_callbacks *cb;
    void                       *arg;
    enum http_method            method;
    bool                        https;
    bool                        maybe_resent;
    size_t                      max_bytes;
    int64_t                     body_len;
    /* what the answer said */
    long                        status;
    char                       *content_type;
    char                        content_encoding[48];
    char                       *session_id;
    bool                        session_id_invalid;
    long                        keep_alive_s;
    long                        retry_after_s;
    bool                        retry_after_clamped;
    char                        retry_after_text[24];
    size_t                      session_id_len;     /* refused: too long */
    char                       *auth_scheme;
    char                       *location;
    char                       *www_auth_value;
    bool                        www_authenticate;
    bool                        cf_challenge;
    bool                        headers_done;
    bool                        is_sse;
    struct sse                 *sse;
    char                       *body;
    size_t                      body_used;
    size_t                      body_cap;
    int64_t                     response_bytes;
    int64_t                     body_bytes;         /* of it, the body */
    bool                        too_large;
    bool                        stopped;
    char                        errbuf[CURL_ERROR_SIZE];
};

const char *
http_method_name(enum http_method m)
{
    switch (m) {
    case HTTP_GET:
        return "GET";
    case HTTP_DELETE:
        return "DELETE";
    case HTTP_HEAD:
        return "HEAD";
    case HTTP_OPTIONS:
        return "OPTIONS";
    default:
        return "POST";
    }
}

int
http_global_init(void)
{
    return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

void
http_global_cleanup(void)
{
    curl_global_cleanup();
}

const char *
http_decoded_encodings(void)
{
    static char list[40];
    static bool done;

    if (!done) {
        const curl_version_info_data *ci = curl_version_info(CURLVERSION_NOW);
        size_t                        off = 0;

        done = true;
        /* libz brings gzip and deflate (RFC 9110 section 8.4.1). */
        if (ci != NULL && (ci->features & CURL_VERSION_LIBZ))
            off += (size_t)snprintf(list + off, sizeof(list) - off,
                "gzip, deflate");
        if (ci != NULL && (ci->features & CURL_VERSION_BROTLI))
            off += (size_t)snprintf(list + off, sizeof(list) - off, "%sbr",
                off ? ", " : "");
        if (ci != NULL && (ci->features & CURL_VERSION_ZSTD))
            snprintf(list + off, sizeof(list) - off, "%szstd",
                off ? ", " : "");
    }
    return list;
}

void
http_library_versions(const char **version, const char **tls)
{
    const curl_version_info_data *ci = curl_version_info(CURLVERSION_NOW);

    *version = ci != NULL && ci->version != NULL ? ci->version : "unknown";
    *tls = ci != NULL ? ci->ssl_version : NULL;
}

/* Map libcurl's result to the transport-neutral word the classifier reads. */
static enum net_error
http_net_error(CURLcode c)
{
    switch (c) {
    case CURLE_OK:
        return NET_OK;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
        return NET_RESOLVE;
    case CURLE_COULDNT_CONNECT:
        return NET_CONNECT;
    case CURLE_OPERATION_TIMEDOUT:
        return NET_TIMEDOUT;
    case CURLE_SEND_ERROR:
        return NET_SEND;
    case CURLE_RECV_ERROR:
        return NET_RECV;
    case CURLE_GOT_NOTHING:
        return NET_GOT_NOTHING;
    case CURLE_PARTIAL_FILE:
        return NET_PARTIAL;
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
        return NET_TLS_VERIFY;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_USE_SSL_FAILED:
        return NET_TLS;
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        return NET_HTTP2;
    case CURLE_URL_MALFORMAT:
        return NET_URL_MALFORMAT;
    case CURLE_UNSUPPORTED_PROTOCOL:
        return NET_UNSUPPORTED;
    case CURLE_WRITE_ERROR:
    case CURLE_ABORTED_BY_CALLBACK:
        return NET_ABORTED;
    default:
        return NET_OTHER;
    }
}

size_t
http_buffer_grow(size_t cap, size_t need, size_t bound)
{
    size_t want = cap ? cap : HTTP_BODY_START;

    while (want < need && want <= bound / 2)
        want *= 2;
    if (want < need)
        want = need;
    return want > bound ? bound : want;
}

/* See http_relay.h. */
enum net_error
http_net_error_of(int curl_code)
{
    return http_net_error((CURLcode)curl_code);
}

/* Grow the body buffer to hold n more bytes, within cap. false if past. */
static bool
http_body_append(struct http_xfer *x, const char *p, size_t n, size_t cap)
{
    if (x->body_used + n > cap)
        return false;
    if (x->body_used + n + 1 > x->body_cap) {
        /* From a small start (a ping's answer is 40 bytes), doubled as
         * it fills, never past the bound and its NUL. */
        x->body_cap = http_buffer_grow(x->body_cap, x->body_used + n + 1,
            cap + 1);
        x->body = xrealloc(x->body, x->body_cap);
    }
    memcpy(x->body + x->body_used, p, n);
    x->body_used += n;
    x->body[x->body_used] = '\0';
    return true;
}

static bool
http_status_ok(long status)
{
    return status >= 200 && status < 300;
}

/* SSE event from the parser: hand it up. */
static int
http_sse_cb(void *arg, const struct sse_event *event)
{
    struct http_xfer *x = arg;

    if (x->cb->on_message == NULL)
        return 0;
    if (x->cb->on_message(x->arg, x, event->type, event->data, event->data_len) != 0) {
        x->stopped = true;
        return 1;
    }
    return 0;
}

/* Decide, once, how the body will be read. */
static int
http_headers_complete(struct http_xfer *x)
{
    x->headers_done = true;
    if (http_status_ok(x->status) && x->content_type != NULL &&
        strncasecmp(x->content_type, "text/event-stream", 17) == 0) {
        x->is_sse = true;
        x->sse = sse_new(x->max_bytes, http_sse_cb, x);
    }
    if (x->cb->on_headers != NULL &&
        x->cb->on_headers(x->arg, x, x->status, x->content_type) != 0) {
        x->stopped = true;
        return -1;
    }
    return 0;
}

/* CURLOPT_WRITEFUNCTION: the body, as it arrives. */
static size_t
http_write_cb(char *ptr, size_t size, size_t nmemb, void *arg)
{
    struct http_xfer *x = arg;
    size_t            n = size * nmemb;

    x->response_bytes += (int64_t)n;
    x->body_bytes += (int64_t)n;
    if (!x->headers_done && http_headers_complete(x) != 0)
        return 0;
    if (x->cb->on_activity != NULL)
        x->cb->on_activity(x->arg, x);
    if (x->is_sse) {
        if (sse_feed(x->sse, ptr, n) != 0) {
            if (!x->stopped)
                x->too_large = true;
            return 0;
        }
        return n;
    }
    if (!http_status_ok(x->status)) {
        /* Keep the head of an error body; drain the rest. */
        size_t room = HTTP_ERROR_BODY_MAX > x->body_used ?
            HTTP_ERROR_BODY_MAX - x->body_used : 0;

        http_body_append(x, ptr, n < room ? n : room, HTTP_ERROR_BODY_MAX);
        return n;
    }
    if (!http_body_append(x, ptr, n, x->max_bytes)) {
        x->too_large = true;
        return 0;
    }
    return n;
}

/* Trim and copy a header value. */
static char *
http_header_value(const char *p, size_t n)
{
    while (n > 0 && (*p == ' ' || *p == '\t')) {
        p++;
        n--;
    }
    while (n > 0 && (p[n - 1] == '\r' || p[n - 1] == '\n' ||
        p[n - 1] == ' ' || p[n - 1] == '\t'))
        n--;
    return str_ndup(p, n);
}

static bool
http_header_is(const char *line, size_t n, const char *name, size_t *vo)
{
    size_t len = strlen(name);

    if (n <= len || line[len] != ':' || strncasecmp(line, name, len) != 0)
        return false;
    *vo = len + 1;
    return true;
}

/*
 * Keep-Alive (RFC 2068 section 19.7.1.1; HTTP/1.1 servers such as Node's
 * send "timeout=5, max=N"): the timeout parameter, in seconds, or -1 when
 * there is none or it is not a plain decimal number (capped at a day).
 */
static long
http_keep_alive_timeout(const char *v)
{
    const char *p = v;

    while (*p != '\0') {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        if (strncasecmp(p, "timeout", 7) == 0) {
            const char *q = p + 7;
            long        secs = 0;
            int         digits = 0;

            while (*q == ' ' || *q == '\t')
                q++;
            if (*q++ != '=')
                return -1;
            while (*q == ' ' || *q == '\t')
                q++;
            while (isdigit((unsigned char)*q) && digits < 6) {
                secs = secs * 10 + (*q++ - '0');
                digits++;
            }
            if (digits == 0 || isdigit((unsigned char)*q))
                return -1;
            return secs > 86400 ? 86400 : secs;
        }
        while (*p != '\0' && *p != ',')
            p++;
    }
    return -1;
}

/*
 * Retry-After (RFC 9110 section 10.2.3): delay-seconds or an HTTP-date.
 * Clamped to HTTP_RETRY_AFTER_MAX, saying so; what is not either form is
 * ignored.
 */
static void
http_parse_retry_after(struct http_xfer *x, const char *v)
{
    long long secs = -1;

    x->retry_after_clamped = false;
    str_sanitize(x->retry_after_text, sizeof(x->retry_after_text), v,
        strlen(v));
    if (v[0] != '\0' && isdigit((unsigned char)v[0])) {
        const char *p = v;

        secs = 0;
        while (isdigit((unsigned char)*p)) {
            if (secs <= HTTP_RETRY_AFTER_MAX)
                secs = secs * 10 + (*p - '0');
            p++;
        }
    } else if (v[0] != '\0') {
        time_t when = curl_getdate(v, NULL);

        if (when != (time_t)-1) {
            secs = (long long)when - clock_wall_ms() / 1000;
            if (secs < 0)
                secs = 0;
        }
    }
    if (secs < 0) {
        x->retry_after_s = -1;
        return;
    }
    if (secs > HTTP_RETRY_AFTER_MAX) {
        secs = HTTP_RETRY_AFTER_MAX;
        x->retry_after_clamped = true;
    }
    x->retry_after_s = (long)secs;
}

/* CURLOPT_HEADERFUNCTION: one header line at a time. */
static size_t
http_header_cb(char *line, size_t size, size_t nmemb, void *arg)
{
    struct http_xfer *x = arg;
    size_t            n = size * nmemb, vo;

    x->response_bytes += (int64_t)n;
    if ((n == 2 && line[0] == '\r' && line[1] == '\n') ||
        (n == 1 && line[0] == '\n')) {
        /* The end of a final answer's headers: a stream is open now,
         * before its first byte (MCP servers may wait long for one). */
        if (x->status >= 200 && !x->headers_done &&
            http_headers_complete(x) != 0)
            return 0;
        return n;
    }
    if (n >= 5 && strncmp(line, "HTTP/", 5) == 0) {
        /* A new response (after a 1xx or a redirect): start over. */
        const char *sp = memchr(line, ' ', n);
        size_t      k = sp != NULL ? (size_t)(sp - line) + 1 : n;
        long        st = 0;

        /* The digits within the line: it is not NUL-terminated. */
        for (int d = 0; k < n && d < 3 && isdigit((unsigned char)line[k]);
            k++, d++)
            st = st * 10 + (line[k] - '0');
        x->status = st;
        /* Nothing of an interim answer (103, 100) reaches the final one. */
        free(x->content_type);
        x->content_type = NULL;
        x->content_encoding[0] = '\0';
        x->www_authenticate = false;
        free(x->www_auth_value);
        x->www_auth_value = NULL;
        free(x->auth_scheme);
        x->auth_scheme = NULL;
        free(x->session_id);
        x->session_id = NULL;
        x->session_id_invalid = false;
        x->session_id_len = 0;
        x->retry_after_s = -1;
        x->keep_alive_s = -1;
        x->retry_after_clamped = false;
        free(x->location);
        x->location = NULL;
        x->cf_challenge = false;
        return n;
    }
    if (http_header_is(line, n, "content-type", &vo)) {
        free(x->content_type);
        x->content_type = http_header_value(line + vo, n - vo);
    } else if (http_header_is(line, n, "content-encoding", &vo)) {
        char *v = http_header_value(line + vo, n - vo);

        str_sanitize(x->content_encoding, sizeof(x->content_encoding), v,
            strlen(v));
        free(v);
    } else if (http_header_is(line, n, "mcp-session-id", &vo)) {
        char *v = http_header_value(line + vo, n - vo);

        free(x->session_id);
        x->session_id = NULL;
        x->session_id_len = 0;
        if (strlen(v) > HTTP_SESSION_ID_MAX) {
            /* Sending it back would fail on every request: refused. */
            x->session_id_len = strlen(v);
            x->session_id_invalid = true;
            free(v);
        } else if (str_is_visible_ascii(v, strlen(v))) {
            x->session_id = v;
            x->session_id_invalid = false;
        } else {
            x->session_id_invalid = true;
            free(v);
        }
    } else if (http_header_is(line, n, "keep-alive", &vo)) {
        char *v = http_header_value(line + vo, n - vo);

        x->keep_alive_s = http_keep_alive_timeout(v);
        free(v);
    } else if (http_header_is(line, n, "retry-after", &vo)) {
        char *v = http_header_value(line + vo, n - vo);

        http_parse_retry_after(x, v);
        free(v);
    } else if (http_header_is(line, n, "location", &vo)) {
        free(x->location);
        x->location = http_header_value(line + vo, n - vo);
    } else if (http_header_is(line, n, "cf-mitigated", &vo)) {
        char *v = http_header_value(line + vo, n - vo);

        x->cf_challenge = strcasecmp(v, "challenge") == 0;
        free(v);
    } else if (http_header_is(line, n, "www-authenticate", &vo)) {
        char  *v = http_header_value(line + vo, n - vo);
        size_t k = 0;

        x->www_authenticate = true;
        /* OAuth reads the whole challenge: keep the first, or the first
         * Bearer one (RFC 6750 section 3). */
        if (x->www_auth_value == NULL || (strncasecmp(v, "Bearer", 6) == 0 &&
            strncasecmp(x->www_auth_value, "Bearer", 6) != 0)) {
            free(x->www_auth_value);
            x->www_auth_value = xstrdup(v);
        }
        /* The scheme is a token (RFC 9110 section 5.6.2): it ends at the
         * first byte that is not a token character. */
        while (v[k] != '\0' && (isalnum((unsigned char)v[k]) ||
            strchr("!#$%&'*+-.^_`|~", v[k]) != NULL))
            k++;
        v[k] = '\0';
        if (x->auth_scheme == NULL && v[0] != '\0')
            x->auth_scheme = str_sanitized(v);
        free(v);
    }
    return n;
}

/* True at most once a minute (loop time): this transfer prunes the DNS
 * cache. */
static bool
http_dns_prune_due(struct curlev *ce)
{
    static ev_tstamp last;
    ev_tstamp        now = ev_now(curlev_loop(ce));

    if (now - last < 60.0)
        return false;
    last = now;
    return true;
}

static int
http_setup(struct http_xfer *x, const struct http_request *rq)
{
    CURL *e = x->easy;

    curl_easy_setopt(e, CURLOPT_URL, rq->url);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, http_write_cb);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, http_header_cb);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    /*
     * libcurl 7.88 prunes its DNS cache after every transfer by walking it
     * whole: one entry per host:port, so at 10,000 servers that walk was
     * half of mcptop's CPU (bench/ANALYSIS.md). Entries never expire here,
     * but one transfer a minute carries a finite timeout, and its prune
     * drops what went stale, so hostnames are still looked up afresh.
     */
    curl_easy_setopt(e, CURLOPT_DNS_CACHE_TIMEOUT,
        http_dns_prune_due(x->ce) ? 60L : -1L);
    curl_easy_setopt(e, CURLOPT_USERAGENT, "mcptop/" MCPTOP_VERSION);
    /* Every encoding this libcurl decodes is asked for, and decoded: a CDN
     * may compress an answer whatever was asked (as the official SDK's
     * fetch asks too). One it cannot decode fails the transfer with
     * CURLE_BAD_CONTENT_ENCODING, judged below. The list by name, built
     * once: "" would have libcurl build it again for every transfer, and
     * the header line is one of ours (io/http_hdrs.c). */
    {
        const char *enc = http_decoded_encodings();

        curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, enc[0] != '\0' ? enc :
            NULL);
    }
    if (rq->no_reuse)
        curl_easy_setopt(e, CURLOPT_FORBID_REUSE, 1L);
    if (rq->ca_file != NULL)
        curl_easy_setopt(e, CURLOPT_CAINFO, rq->ca_file);
    if (rq->tls_insecure) {
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (rq->cert_info && strncasecmp(rq->url, "https://", 8) == 0)
        curl_easy_setopt(e, CURLOPT_CERTINFO, 1L);
    switch (rq->method) {
    case HTTP_POST:
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
            (curl_off_t)rq->body_len);
        curl_easy_setopt(e, CURLOPT_COPYPOSTFIELDS, rq->body);
        x->body_len = (int64_t)rq->body_len;
        break;
    case HTTP_GET:
        curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
        /* A stream lives long and carries little: libcurl's smallest
         * receive buffer (its default is 16 KiB a transfer; 4 KiB measured
         * 21.6 KiB a session with a stream open, 1 KiB 18.8). A large
         * event only takes more callbacks. */
        curl_easy_setopt(e, CURLOPT_BUFFERSIZE, 1024L);
        break;
    case HTTP_DELETE:
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "DELETE");
        break;
    case HTTP_HEAD:
        curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
        break;
    case HTTP_OPTIONS:
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "OPTIONS");
        break;
    }
    if (rq->hdrs_slot != NULL) {
        x->hdrs = http_hdrs_for(rq->hdrs_slot, rq);
        x->headers = http_hdrs_list(x->hdrs);
    } else {
        x->headers = http_hdrs_own(rq);
    }
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->headers);
    return 0;
}

static void http_done_cb(void *arg, void *easy, int code);

/* The transfer's header list: its own, or its reference to a session's. */
static void
http_xfer_free_headers(struct http_xfer *x)
{
    if (x->hdrs != NULL)
        http_hdrs_unref(x->hdrs);
    else
        curl_slist_free_all(x->headers);
    x->hdrs = NULL;
    x->headers = NULL;
}

struct http_xfer *
http_start(struct curlev *ce, const struct http_request *rq,
    const struct http_callbacks *cb, void *arg, char **cause)
{
    struct http_xfer *x = xcalloc(1, sizeof(*x));

    x->ce = ce;
    x->cb = cb;
    x->arg = arg;
    x->method = rq->method;
    x->max_bytes = rq->max_bytes ? rq->max_bytes : HTTP_MAX_BYTES;
    x->retry_after_s = -1;
    x->keep_alive_s = -1;
    x->maybe_resent = rq->maybe_resent;
    x->https = strncasecmp(rq->url, "https:", 6) == 0;
    x->easy = curl_easy_init();
    if (x->easy == NULL) {
        *cause = xstrdup("cannot create an HTTP handle");
        free(x);
        return NULL;
    }
    http_setup(x, rq);
    if (curlev_add(ce, rq->pool_key, x->easy, http_done_cb, x) != 0) {
        *cause = xstrdup("cannot start the HTTP transfer");
        curl_easy_cleanup(x->easy);
        http_xfer_free_headers(x);
        free(x);
        return NULL;
    }
    return x;
}

static void
http_xfer_free(struct http_xfer *x)
{
    /* libcurl reads the list until the handle is gone. */
    curl_easy_cleanup(x->easy);
    http_xfer_free_headers(x);
    sse_free(x->sse);
    free(x->content_type);
    free(x->session_id);
    free(x->auth_scheme);
    free(x->location);
    free(x->www_auth_value);
    free(x->body);
    free(x);
}

/* Did the attempt fail for want of a file descriptor here? libcurl does
 * not always keep the errno of a socket it could not open, so ask the
 * kernel the same question when it kept none. */
static bool
http_local_limit(int os_errno)
{
    int fd;

    if (os_errno == EMFILE || os_errno == ENFILE)
        return true;
    if (os_errno != 0)
        return false;
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0) {
        close(fd);
        return false;
    }
    return errno == EMFILE || errno == ENFILE;
}

/* Fill r from what the handle and the callbacks saw. */
static void
http_fill_result(struct http_xfer *x, CURLcode code, bool ended,
    struct http_result *r)
{
    curl_off_t connect_t = 0, app_t = 0, up = 0, total = 0;
    long       os_errno = 0, nconn = 0, req_size = 0;

    memset(r, 0, sizeof(*r));
    curl_easy_getinfo(x->easy, CURLINFO_CONNECT_TIME_T, &connect_t);
    curl_easy_getinfo(x->easy, CURLINFO_APPCONNECT_TIME_T, &app_t);
    curl_easy_getinfo(x->easy, CURLINFO_SIZE_UPLOAD_T, &up);
    curl_easy_getinfo(x->easy, CURLINFO_TOTAL_TIME_T, &total);
    curl_easy_getinfo(x->easy, CURLINFO_OS_ERRNO, &os_errno);
    curl_easy_getinfo(x->easy, CURLINFO_NUM_CONNECTS, &nconn);
    curl_easy_getinfo(x->easy, CURLINFO_REQUEST_SIZE, &req_size);

    r->evd.net = ended ? http_net_error(code) : NET_OK;
    if (x->stopped && r->evd.net == NET_ABORTED)
        r->evd.net = NET_OK;
    if (x->too_large && r->evd.net == NET_ABORTED)
        r->evd.net = NET_OK;
    r->evd.os_errno = (int)os_errno;
    if (ended && x->response_bytes == 0 && (r->evd.net == NET_CONNECT ||
        r->evd.net == NET_RESOLVE || r->evd.net == NET_OTHER))
        r->evd.local_limit = http_local_limit(r->evd.os_errno);
    /* A reused keep-alive connection reports a connect time of 0, so how
     * far the attempt got is read from what was written, not from the
     * connect timing. */
    if (x->response_bytes > 0)
        r->evd.phase = FAILURE_PHASE_RESPONSE;
    else if (req_size > 0 || up > 0)
        r->evd.phase = FAILURE_PHASE_SENT;
    else if (connect_t == 0 && r->evd.net == NET_RESOLVE)
        r->evd.phase = FAILURE_PHASE_RESOLVE;
    else if (connect_t == 0)
        r->evd.phase = FAILURE_PHASE_CONNECT;
    else if (x->https && app_t == 0)
        r->evd.phase = FAILURE_PHASE_TLS;
    else
        r->evd.phase = FAILURE_PHASE_SENT;
    r->evd.http_status = x->status;
    r->evd.www_authenticate = x->www_authenticate;
    r->evd.cf_challenge = x->cf_challenge;
    if (x->content_type != NULL) {
        r->evd.content_json = strncasecmp(x->content_type,
            "application/json", 16) == 0;
        r->evd.content_sse = strncasecmp(x->content_type,
            "text/event-stream", 17) == 0;
    }
    r->evd.body_bytes_expected = x->body_len;
    r->evd.body_bytes_sent = (int64_t)up;
    r->evd.response_bytes = x->response_bytes;
    /* A transfer that made a new connection where a pooled one may have
     * been tried first may be libcurl's silent re-send. */
    r->evd.resent = x->maybe_resent && nconn > 0;
    r->evd.too_large = x->too_large;
    if (x->is_sse && ended && !x->stopped && !x->too_large &&
        sse_lines_recognised(x->sse) == 0 && x->body_bytes > 0)
        r->evd.sse_no_lines = true;     /* text, but no SSE */
    if (x->is_sse && ended && !x->stopped && x->body_bytes == 0)
        r->evd.sse_empty = true;        /* closed before any event */

    if (ended && code == CURLE_BAD_CONTENT_ENCODING) {
        /* An answer came, in an encoding that could not be decoded: what
         * the server said is unreadable, the transport did its part. */
        r->evd.bad_encoding = true;
        r->evd.net = NET_OK;
    }
    if (ended && code == CURLE_OUT_OF_MEMORY && x->status != 0) {
        /* libcurl refused an answer header longer than it takes. */
        r->header_too_large = true;
        r->evd.too_large = true;
        r->evd.net = NET_OK;
    }
    r->completed = ended && code == CURLE_OK;
    r->stopped = x->stopped;
    r->status = x->status;
    r->content_type = x->content_type;
    r->content_encoding = x->content_encoding[0] != '\0' ?
        x->content_encoding : NULL;
    r->session_id = x->session_id;
    r->session_id_invalid = x->session_id_invalid;
    r->retry_after_s = x->retry_after_s;
    r->keep_alive_s = x->keep_alive_s;
    r->retry_after_clamped = x->retry_after_clamped;
    r->retry_after_text = x->retry_after_text;
    r->session_id_len = x->session_id_len;
    r->auth_scheme = x->auth_scheme;
    r->location = x->location;
    r->redirect_url = NULL;
    if (x->status >= 300 && x->status < 400)
        curl_easy_getinfo(x->easy, CURLINFO_REDIRECT_URL, &r->redirect_url);
    r->www_authenticate = x->www_auth_value;
    r->body = x->body;
    r->body_len = x->body_used;
    r->error_text = x->errbuf[0] != '\0' ? x->errbuf :
        (ended && code != CURLE_OK ? curl_easy_strerror(code) : NULL);
    r->total_ms = (double)total / 1000.0;
    r->num_connects = nconn;
    r->last_event_id = x->sse != NULL ? sse_last_id(x->sse) : "";
    r->retry_ms = x->sse != NULL ? sse_retry_ms(x->sse) : -1;
}

/* curlev_done_cb: the transfer ended. */
static void
http_done_cb(void *arg, void *easy, int code)
{
    struct http_xfer  *x = arg;
    struct http_result r;

    (void)easy;
    if (!x->headers_done && x->status != 0)
        http_headers_complete(x);
    if (x->sse != NULL && code == CURLE_OK)
        sse_finish(x->sse);
    http_fill_result(x, (CURLcode)code, true, &r);
    x->cb->on_done(x->arg, x, &r);
    http_xfer_free(x);
}

void
http_xfer_abort(struct http_xfer *x, struct failure_evidence *evd_out)
{
    struct http_result r;

    curlev_remove(x->ce, x->easy);
    if (evd_out != NULL) {
        http_fill_result(x, CURLE_OK, false, &r);
        *evd_out = r.evd;
    }
    http_xfer_free(x);
}

void
http_xfer_peek(struct http_xfer *x, struct failure_evidence *evd_out)
{
    struct http_result r;

    http_fill_result(x, CURLE_OK, false, &r);
    *evd_out = r.evd;
}

void
http_xfer_session(struct http_xfer *x, const char **id, bool *invalid,
    size_t *too_long)
{
    *id = x->session_id;
    *invalid = x->session_id_invalid;
    *too_long = x->session_id_len;
}

char *
http_resolve_url(const char *base, const char *ref)
{
    CURLU *u = curl_url();
    char  *out = NULL, *res = NULL;

    if (u == NULL)
        return NULL;
    if (curl_url_set(u, CURLUPART_URL, base, 0) == CURLUE_OK &&
        curl_url_set(u, CURLUPART_URL, ref, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_URL, &out, 0) == CURLUE_OK) {
        res = xstrdup(out);
        curl_free(out);
    }
    curl_url_cleanup(u);
    return res;
}

char *
http_url_origin(const char *url)
{
    CURLU *u = curl_url();
    char  *scheme = NULL, *host = NULL, *port = NULL, *res = NULL;

    if (u == NULL || url == NULL)
        goto out;
    if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) !=
        CURLUE_OK)
        goto out;
    for (char *p = host; *p != '\0'; p++)
        *p = (char)tolower((unsigned char)*p);
    res = str_printf("%s://%s:%s", scheme, host, port);
out:
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_url_cleanup(u);
    return res;
}

bool
http_same_origin(const char *a, const char *b)
{
    char *oa = http_url_origin(a);
    char *ob = http_url_origin(b);
    bool  same = oa != NULL && ob != NULL && strcmp(oa, ob) == 0;

    free(oa);
    free(ob);
    return same;
}
