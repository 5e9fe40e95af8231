/*
 * One HTTP transfer passed on as it arrives (a face of the engine for the
 * HTTP tap's upstream side, tap_http.c): the request as the caller built
 * it (method, URL, header lines, body), no redirect followed, no content
 * decoded, and the answer handed up in order: its head once (status and
 * header lines), then each piece of body as libcurl reads it, then the
 * end with the evidence the classifier reads (failure.h). A receiver
 * that cannot take a piece now pauses the transfer (backpressure) and
 * resumes it later. Runs on curlev's loop; never blocks.
 */
#ifndef MCPTOP_ENGINE_HTTP_RELAY_H
#define MCPTOP_ENGINE_HTTP_RELAY_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/curlev.h"
#include "engine/failure.h"

struct http_relay;

struct http_relay_request {
    const char        *method;      /* "POST", "GET", "DELETE", ... */
    const char        *url;
    const char *const *headers;     /* "Name: value" lines, as sent */
    size_t             nheaders;
    const char        *body;        /* copied; NULL for none */
    size_t             body_len;
    long               timeout_ms;  /* the whole transfer (0: none) */
    long               connect_timeout_ms;  /* 0: 10000 */
};

/* What on_body answers. */
enum http_relay_take {
    HTTP_RELAY_TAKEN,       /* the piece was taken */
    HTTP_RELAY_PAUSE,       /* not taken: offered again after resume */
    HTTP_RELAY_STOP,        /* taken; end the transfer now (on_done
                               follows with net NET_ABORTED) */
};

struct http_relay_callbacks {
    /* The final head (no 1xx): status, header lines without their line
     * end (borrowed for the call; untrusted text). */
    void (*on_head)(void *arg, long status, const char *const *lines,
        size_t n);
    enum http_relay_take (*on_body)(void *arg, const char *p, size_t n);
    /* The end, once: evd->net NET_OK when the answer came whole. text:
     * libcurl's words for a failure, or NULL. The relay is freed after
     * the call. */
    void (*on_done)(void *arg, const struct failure_evidence *evd,
        const char *text);
};

/* Start rq on ce (pool key 0). NULL with *cause (caller frees). */
struct http_relay *http_relay_start(struct curlev *ce,
    const struct http_relay_request *rq, const struct http_relay_callbacks *cb,
    void *arg, char **cause);
/* Resume a transfer on_body paused. Not from inside a callback of its
 * own: on_body may run before it returns. */
void http_relay_resume(struct http_relay *x);
bool http_relay_paused(const struct http_relay *x);
/* Abort and free now; on_done is not called. NULL does nothing. */
void http_relay_abort(struct http_relay *x);

/* libcurl's result code as the classifier's word (http.c). */
enum net_error http_net_error_of(int curl_code);

#endif
