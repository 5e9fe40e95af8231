/*
 * One HTTP transfer passed on as it arrives (http_relay.h): a curl easy
 * handle on curlev's multi handle, its header and write callbacks handing
 * the answer up unchanged, CURL_WRITEFUNC_PAUSE for backpressure. The
 * one change: a body the server compressed unasked (no Accept-Encoding is
 * sent) is handed up decoded by libcurl, so its reader can read it; the
 * head keeps its Content-Encoding line, for the caller to drop.
 */
#include "engine/http_relay.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/str.h"
#include "util/xmalloc.h"

#define HTTP_RELAY_HEAD_MAX 200     /* header lines kept for on_head */

/* Headers libcurl would add of its own ("Name:" removes one). */
static const char *const http_relay_own[] = {
    "Expect:", "Accept:", "Content-Type:", "Accept-Encoding:",
};

struct http_relay {
    struct curlev                     *ce;
    CURL                              *easy;
    struct curl_slist                 *headers;
    const struct http_relay_callbacks *cb;
    void                              *arg;
    long                               status;
    char                              *lines[HTTP_RELAY_HEAD_MAX];
    size_t                             nlines;
    bool                               head_done;
    bool                               paused;
    bool                               stopped;
    bool                               content_json, content_sse;
    int64_t                            response_bytes;
    int64_t                            body_len;
    char                               errbuf[CURL_ERROR_SIZE];
};

static void
http_relay_lines_free(struct http_relay *x)
{
    for (size_t i = 0; i < x->nlines; i++)
        free(x->lines[i]);
    x->nlines = 0;
}

static void
http_relay_free(struct http_relay *x)
{
    http_relay_lines_free(x);
    curl_slist_free_all(x->headers);
    curl_easy_cleanup(x->easy);
    free(x);
}

/* CURLOPT_HEADERFUNCTION: one line of a head (a 1xx head is dropped). */
static size_t
http_relay_header_cb(char *p, size_t size, size_t nmemb, void *arg)
{
    struct http_relay *x = arg;
    size_t             n = size * nmemb, len = n;

    x->response_bytes += (int64_t)n;
    while (len > 0 && (p[len - 1] == '\n' || p[len - 1] == '\r'))
        len--;
    if (len >= 5 && strncmp(p, "HTTP/", 5) == 0) {
        const char *sp = memchr(p, ' ', len);

        http_relay_lines_free(x);
        x->status = sp != NULL ? strtol(sp + 1, NULL, 10) : 0;
        return n;
    }
    if (len == 0) {
        if (x->status >= 200 && !x->head_done) {
            x->head_done = true;
            x->cb->on_head(x->arg, x->status,
                (const char *const *)x->lines, x->nlines);
            http_relay_lines_free(x);
        }
        return n;
    }
    if (strncasecmp(p, "content-type:", 13) == 0) {
        const char *v = p + 13;

        while (*v == ' ' || *v == '\t')
            v++;
        x->content_json = strncasecmp(v, "application/json", 16) == 0;
        x->content_sse = strncasecmp(v, "text/event-stream", 17) == 0;
    }
    if (x->nlines < HTTP_RELAY_HEAD_MAX)
        x->lines[x->nlines++] = str_ndup(p, len);
    return n;
}

/* CURLOPT_WRITEFUNCTION: a piece of body. */
static size_t
http_relay_write_cb(char *p, size_t size, size_t nmemb, void *arg)
{
    struct http_relay *x = arg;
    size_t             n = size * nmemb;

    if (!x->head_done) {
        /* A head without its blank line (HTTP/0.9 or a bug): say it. */
        x->head_done = true;
        x->cb->on_head(x->arg, x->status, (const char *const *)x->lines,
            x->nlines);
        http_relay_lines_free(x);
    }
    switch (x->cb->on_body(x->arg, p, n)) {
    case HTTP_RELAY_PAUSE:
        x->paused = true;
        return CURL_WRITEFUNC_PAUSE;
    case HTTP_RELAY_STOP:
        x->stopped = true;
        return 0;
    case HTTP_RELAY_TAKEN:
        break;
    }
    x->response_bytes += (int64_t)n;
    return n;
}

/* curlev_done_cb: the transfer ended. */
static void
http_relay_done_cb(void *arg, void *easy, int code)
{
    struct http_relay      *x = arg;
    struct failure_evidence evd;
    curl_off_t              up = 0, connect_t = 0;
    long                    os_errno = 0, req_size = 0;
    const char             *text = NULL;

    (void)easy;
    memset(&evd, 0, sizeof(evd));
    curl_easy_getinfo(x->easy, CURLINFO_SIZE_UPLOAD_T, &up);
    curl_easy_getinfo(x->easy, CURLINFO_CONNECT_TIME_T, &connect_t);
    curl_easy_getinfo(x->easy, CURLINFO_OS_ERRNO, &os_errno);
    curl_easy_getinfo(x->easy, CURLINFO_REQUEST_SIZE, &req_size);
    evd.net = http_net_error_of(code);
    evd.os_errno = (int)os_errno;
    if (x->response_bytes > 0)
        evd.phase = FAILURE_PHASE_RESPONSE;
    else if (req_size > 0 || up > 0)
        evd.phase = FAILURE_PHASE_SENT;
    else if (evd.net == NET_RESOLVE)
        evd.phase = FAILURE_PHASE_RESOLVE;
    else if (connect_t == 0)
        evd.phase = FAILURE_PHASE_CONNECT;
    else
        evd.phase = FAILURE_PHASE_SENT;
    evd.http_status = x->status;
    evd.content_json = x->content_json;
    evd.content_sse = x->content_sse;
    evd.body_bytes_expected = x->body_len;
    evd.body_bytes_sent = (int64_t)up;
    evd.response_bytes = x->response_bytes;
    if (code != CURLE_OK)
        text = x->errbuf[0] != '\0' ? x->errbuf :
            curl_easy_strerror((CURLcode)code);
    x->cb->on_done(x->arg, &evd, text);
    http_relay_free(x);
}

struct http_relay *
http_relay_start(struct curlev *ce, const struct http_relay_request *rq,
    const struct http_relay_callbacks *cb, void *arg, char **cause)
{
    struct http_relay *x = xcalloc(1, sizeof(*x));
    CURL              *e;

    x->ce = ce;
    x->cb = cb;
    x->arg = arg;
    x->easy = e = curl_easy_init();
    if (e == NULL) {
        *cause = xstrdup("cannot create an HTTP handle");
        free(x);
        return NULL;
    }
    curl_easy_setopt(e, CURLOPT_URL, rq->url);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, http_relay_write_cb);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, http_relay_header_cb);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    /* Every encoding libcurl decodes, decoded; "Accept-Encoding:" among
     * the headers keeps libcurl from asking for them. */
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    /* The agent's headers only (no User-Agent or Accept of libcurl's). */
    curl_easy_setopt(e, CURLOPT_USERAGENT, NULL);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, rq->connect_timeout_ms >
        0 ? rq->connect_timeout_ms : 10000L);
    if (rq->timeout_ms > 0)
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, rq->timeout_ms);
    if (strcmp(rq->method, "POST") == 0) {
        curl_easy_setopt(e, CURLOPT_POST, 1L);
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
            (curl_off_t)rq->body_len);
        curl_easy_setopt(e, CURLOPT_COPYPOSTFIELDS, rq->body != NULL ?
            rq->body : "");
        x->body_len = (int64_t)rq->body_len;
    } else if (strcmp(rq->method, "GET") == 0) {
        curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    } else {
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, rq->method);
        if (rq->body != NULL && rq->body_len > 0) {
            curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
                (curl_off_t)rq->body_len);
            curl_easy_setopt(e, CURLOPT_COPYPOSTFIELDS, rq->body);
        }
    }
    for (size_t i = 0; i < rq->nheaders; i++)
        x->headers = curl_slist_append(x->headers, rq->headers[i]);
    /* libcurl adds these unless told not to: only what the caller sent
     * goes. */
    for (size_t k = 0; k < sizeof(http_relay_own) / sizeof(*http_relay_own);
        k++) {
        size_t kl = strlen(http_relay_own[k]);
        bool   given = false;

        for (size_t i = 0; i < rq->nheaders && !given; i++)
            given = strncasecmp(rq->headers[i], http_relay_own[k], kl) == 0;
        if (!given)
            x->headers = curl_slist_append(x->headers, http_relay_own[k]);
    }
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->headers);
    if (curlev_add(ce, 0, e, http_relay_done_cb, x) != 0) {
        *cause = xstrdup("cannot start the HTTP transfer");
        http_relay_free(x);
        return NULL;
    }
    return x;
}

void
http_relay_resume(struct http_relay *x)
{
    if (x == NULL || !x->paused)
        return;
    x->paused = false;
    curl_easy_pause(x->easy, CURLPAUSE_CONT);
}

bool
http_relay_paused(const struct http_relay *x)
{
    return x != NULL && x->paused;
}

void
http_relay_abort(struct http_relay *x)
{
    if (x == NULL)
        return;
    curlev_remove(x->ce, x->easy);
    http_relay_free(x);
}
