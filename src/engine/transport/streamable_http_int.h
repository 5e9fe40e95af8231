/*
 * The Streamable HTTP transport's own parts (engine-private, for
 * streamable_http*.c only): a request in flight, the transport, and what
 * its two files call of each other.
 *
 *   streamable_http.c         requests, redirects, authorization holds,
 *                             the GET stream, the session, endings (the
 *                             DELETE), lifetime
 *   streamable_http_answer.c  what comes back: a POST's SSE events, its
 *                             answer handed up early, a resumption
 *                             (SEP-1699), a finished POST or GET stream
 *                             judged (http_judge.c)
 */
#ifndef MCPTOP_ENGINE_STREAMABLE_HTTP_INT_H
#define MCPTOP_ENGINE_STREAMABLE_HTTP_INT_H

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/http.h"
#include "transport/transport.h"

struct ending_run;
struct oauth;

#define STREAMABLE_HTTP_MODERN_VERSION "2026-07-28"
#define STREAMABLE_HTTP_MAX_HOPS       5    /* redirects followed, at most */
#define STREAMABLE_HTTP_EVENT_ID_MAX   256  /* a Last-Event-ID sent back */
#define STREAMABLE_HTTP_MAX_RESUMES    3    /* resumptions of one answer
                                               stream */
#define STREAMABLE_HTTP_RESUME_MIN_S   0.1  /* the server's retry,
                                               floored... */
#define STREAMABLE_HTTP_RESUME_MAX_S   30.0 /* ...and capped; 1 s when it
                                               gave none */
#define STREAMABLE_HTTP_DRAIN_S        2.0  /* after an SSE answer, the rest
                                               of the response may take this
                                               long to end, so the connection
                                               returns to the pool; then it
                                               is aborted */

struct streamable_http_transport;

/* One transfer in flight: a POST, the GET stream or a DELETE. */
struct streamable_http_req {
    struct streamable_http_transport *t;
    struct streamable_http_req *next;
    void                  *owner;
    int64_t                id;          /* -1: notification, GET, DELETE */
    unsigned               flags;
    const char            *method;
    struct http_xfer      *xfer;
    struct jsonrpc_msg    *answer;      /* the response with our id */
    char                   stray[64];   /* the id of an answer with
                                           another id on this POST's
                                           stream (jsonrpc_id_describe),
                                           or "" */
    bool                   carried_session;
    bool                   opened;      /* 2xx headers of a stream */
    bool                   is_get;      /* the GET stream */
    struct ending_run     *run;         /* a DELETE: its ending */
    char                  *delete_id;   /* a DELETE: the id (a secret) */
    char                  *delete_pv;   /* a DELETE: its protocol version */
    char                  *body;        /* a POST's, kept for a redirect */
    size_t                 len;
    char                  *url;         /* where it goes (after redirects) */
    int                    hops;        /* redirects followed */
    int                    auth_rounds; /* held for authorization */
    bool                   answered;    /* its answer is handed up (queued) */
    bool                   draining;    /* answered: only the rest of the
                                           response is left, no owner */
    bool                   in_done;     /* its on_done runs: freed after */
    bool                   gone;        /* freed while in_done */
    ev_timer               drain;
    /* SEP-1699: an answer stream that ended after an event with an id is
     * resumed with GET and Last-Event-ID */
    char                  *resume_id;
    int                    resumes;
    bool                   resuming;    /* the transfer is that GET */
    ev_timer               resume;
};

/* The interface's opaque request is this transport's own. */
static inline struct streamable_http_req *
streamable_http_req_of(struct transport_req *tr)
{
    return (struct streamable_http_req *)tr;
}

/* An event that arrived inside a libcurl callback, for the loop. */
struct streamable_http_transport {
    struct transport       base;
    char                  *session_id;
    char                  *protocol_version;
    char                  *kept_id;     /* test hook: the last ended id */
    bool                   used;        /* a transfer finished before: a
                                           pooled connection may be reused */
    struct streamable_http_req *reqs;
    struct streamable_http_req *stream;      /* the GET stream, or NULL */
    char                  *last_event_id;
    char                  *url;         /* the endpoint: the configured
                                           one, or where it redirects */
    char                  *warning;     /* a redirect followed */
    struct oauth          *oauth;       /* MCP authorization, made on
                                           first use, or NULL */
    bool                   oauth_never; /* oauth_new said no: never */
    struct http_hdrs      *hdrs;        /* the requests' header list,
                                           rebuilt when a header changes
                                           (io/http.c) */
    ev_tstamp              activity;    /* bytes last seen on a stream */
    long                   keep_alive_s;/* the last Keep-Alive timeout the
                                           server announced (s), or -1 */
    struct transport_queue queue;      /* events for the loop */
    int                    depth;       /* callbacks into the lifecycle */
    bool                   dead;        /* freed by it meanwhile */
};

/* The interface's transport is this one (base is its first member). Takes
 * a const transport too, for the const ops, which keep the result const. */
static inline struct streamable_http_transport *
streamable_http_of(const struct transport *t)
{
    return (struct streamable_http_transport *)t;
}

/* streamable_http.c */
/* Around anything that may hand events up: the lifecycle may free the
 * transport, or cancel a request, from inside an event. leave is true
 * when t is gone. */
void streamable_http_enter(struct streamable_http_transport *t);
bool streamable_http_leave(struct streamable_http_transport *t);
/* Wipe and free a string that holds a secret (NULL: nothing). */
void streamable_http_wipe(char *secret);
/* Unlink and free r; aborts its transfer when it still runs (evd_out, may
 * be NULL, gets how far it got). */
void streamable_http_req_free(struct streamable_http_transport *t,
    struct streamable_http_req *r, struct failure_evidence *evd_out);
/* Start r's transfer as its fields say. 0, or -1 with *cause. */
int streamable_http_issue(struct streamable_http_transport *t,
    struct streamable_http_req *r, char **cause);

/* streamable_http_answer.c */
/* http_callbacks.on_message: one SSE event of a POST's answer or of the
 * GET stream. Non-zero stops the transfer. */
int streamable_http_answer_message_cb(void *arg, struct http_xfer *hx,
    const char *type, const char *data, size_t len);
/* ev_timer callbacks: the drain after an early answer, a resumption. */
void streamable_http_answer_drain_cb(struct ev_loop *loop, ev_timer *w,
    int revents);
void streamable_http_answer_resume_cb(struct ev_loop *loop, ev_timer *w,
    int revents);
/* A POST's SSE answer arrived: hand it up now (res: the finished
 * transfer's result, or NULL while it still runs). */
void streamable_http_answer_hand_up(struct streamable_http_transport *t,
    struct streamable_http_req *r, const struct http_result *res);
/* A POST finished: its answer or failure goes up. */
void streamable_http_answer_post_done(struct streamable_http_transport *t,
    struct streamable_http_req *r, const struct http_result *res);
/* The GET stream ended. */
void streamable_http_answer_stream_done(struct streamable_http_transport *t,
    struct streamable_http_req *r, const struct http_result *res);

#endif
