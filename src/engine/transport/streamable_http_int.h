/*
 * The Streamable HTTP transport's own parts (engine-private, for
 * streamable_http*.c only): a request in flight, the transport, and what
 * streamable_http.c asks of streamable_http_answer.c (the calls go that
 * way only).
 *
 *   streamable_http.c         the transport: requests and their lifetime,
 *                             redirects, authorization holds, the GET
 *                             stream, the session, endings (the DELETE),
 *                             what goes up and when
 *   streamable_http_answer.c  what comes back, read and judged: a POST's
 *                             SSE events (queued), its answer handed up
 *                             early, whether to resume (SEP-1699), a
 *                             finished POST or GET stream (http_judge.c)
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

/* The transport: the session, the requests in flight, the queue. */
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

/*
 * streamable_http_answer.c: what came back, read and judged. It calls
 * nothing of streamable_http.c: each function fills what the caller then
 * hands up, and the caller acts (frees the request, emits, arms a timer,
 * issues a transfer).
 */
/* http_callbacks.on_message: one SSE event of a POST's answer or of the
 * GET stream, queued (the answer as TRANSPORT_DONE with r, the rest as
 * messages). Non-zero stops the transfer. */
int streamable_http_answer_message_cb(void *arg, struct http_xfer *hx,
    const char *type, const char *data, size_t len);
/* A POST's SSE answer is in: out (the caller frees out->answer and wipes
 * out->session) is what goes up now, taken from r, and from res, the
 * finished transfer's result, or r's running transfer when res is NULL. */
void streamable_http_answer_early(struct streamable_http_transport *t,
    struct streamable_http_req *r, const struct http_result *res,
    struct transport_result *out);
/* A POST finished: the seconds to wait before its answer stream is
 * resumed (SEP-1699; r->resume_id is set), or -1 when it is not. */
double streamable_http_answer_resume_delay(struct streamable_http_req *r,
    const struct http_result *res);
/* ...the resuming GET could not start (cause): out is the failure. */
void streamable_http_answer_unresumed(const struct streamable_http_req *r,
    const char *cause, struct transport_result *out);
/* A POST finished and is not resumed: out is its judged result (the
 * answer taken from r; the caller frees it and wipes out->session). */
void streamable_http_answer_post(struct streamable_http_transport *t,
    struct streamable_http_req *r, const struct http_result *res,
    struct transport_result *out);
/* The GET stream ended: e is what goes up (e->failure points at f when it
 * failed before opening); its last event id is kept in t. */
void streamable_http_answer_stream(struct streamable_http_transport *t,
    const struct streamable_http_req *r, const struct http_result *res,
    struct transport_event *e, struct transport_failure *f);

#endif
