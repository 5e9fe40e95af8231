/*
 * The transport interface (engine-private): how the MCP lifecycle
 * (client.c) reaches a server, whatever carries the bytes. Three
 * implementations, one file each:
 *
 *   streamable_http.c  Streamable HTTP (MCP 2025-03-26 .. 2026-07-28,
 *                      basic/transports), on libcurl through http.c
 *   http_sse.c         the 2024-11-05 HTTP+SSE transport (a GET stream that
 *                      names a POST endpoint; answers come on the stream)
 *   stdio.c            a child process speaking newline-delimited JSON-RPC
 *                      on its stdin/stdout (basic/transports, stdio)
 *
 * A transport judges its own results: it hands up a JSON-RPC message that
 * answers a request (or one that answers nothing of ours), or the evidence
 * and detail of a failure below JSON-RPC. The lifecycle never sees an HTTP
 * result, a curl code or a wait status, and never branches on which
 * transport it has: where they differ, the difference is an op or a
 * capability flag below, or a fact asked for by transport_query. Callers
 * use the inline wrappers (transport_send, ...); t->ops is read only here
 * and in the transports.
 *
 * A transport owns the session it carries: the Mcp-Session-Id an answer to
 * initialize issued, or the child process. Every session it was issued is
 * handed to the lifecycle (transport_result.session) and then either
 * adopted or ended: none is dropped silently.
 *
 * Events are never emitted from inside a library callback (libcurl's write
 * and header callbacks): what arrives there is queued and emitted from the
 * loop, so the lifecycle may send from any event.
 */
#ifndef MCPTOP_ENGINE_TRANSPORT_H
#define MCPTOP_ENGINE_TRANSPORT_H

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/config.h"
#include "engine/failure.h"
#include "engine/http.h"

struct curlev;
struct ending_run;
struct jsonrpc_msg;
struct transport;
struct transport_raw;
struct transport_req;

/* Flags of one message sent. */
#define TRANSPORT_INITIALIZE 0x01u  /* initialize: sent without a session;
                                       its answer may issue one */
#define TRANSPORT_MODERN     0x02u  /* 2026-07-28: version and method ride
                                       as headers, no session */
#define TRANSPORT_NO_CACHE   0x04u  /* a liveness exchange: no cache */
#define TRANSPORT_STREAMING  0x08u  /* long-lived: answered by a stream of
                                       notifications (subscriptions/listen) */
#define TRANSPORT_IDLE_AFTER 0x10u  /* a scheduled ping: nothing else is due
                                       before the next one, an interval
                                       later */

/* Capabilities: where transports differ in what the lifecycle may expect. */
#define TRANSPORT_CAP_LATE_SESSION  0x01u /* an initialize abandoned by the
                                             dial may still issue a session:
                                             let it settle */
#define TRANSPORT_CAP_SILENT_PROBE  0x02u /* a server may ignore a method it
                                             does not know: silence to the
                                             era probe means legacy */
#define TRANSPORT_CAP_FRESH_PEER    0x04u /* each open starts a new peer
                                             (a child): one that refused
                                             initialize after the era probe
                                             may take it fresh */

/* One JSON-RPC message to send. Everything is copied. */
struct transport_msg {
    const char *method;         /* static: for logs and Mcp-Method */
    int64_t     id;             /* -1: a notification */
    const char *body;
    size_t      len;
    unsigned    flags;          /* TRANSPORT_* */
};

/* A failure below JSON-RPC: what the transport saw, and its words. */
struct transport_failure {
    struct failure_evidence evd;
    char                    detail[256];    /* safe to show */
};

/* How one request ended. Borrowed during the event. */
struct transport_result {
    /* The response carrying the request's id (a result or an error), or
     * NULL. The receiver may take it (set it to NULL). */
    struct jsonrpc_msg      *answer;
    /* The exchange failed below JSON-RPC (f says how); answer may still
     * hold a JSON-RPC error that came behind a non-2xx status. */
    bool                     failed;
    struct transport_failure f;         /* f.evd is filled either way */
    bool                     accepted;  /* a notification was taken */
    bool                     carried_session; /* the request carried the
                                                 session id */
    long                     retry_after_s;   /* -1: none asked */
    /* A session this answer issued (a 2xx answer to initialize): the
     * receiver must take it (set NULL) and adopt or end it. */
    char                    *session;
};

enum transport_event_type {
    TRANSPORT_DONE,         /* a request ended: owner, result */
    TRANSPORT_MESSAGE,      /* a message answering nothing of ours: msg */
    TRANSPORT_READY,        /* open finished: the dial may begin */
    TRANSPORT_OPEN_FAILED,  /* open failed: failure, opened */
    TRANSPORT_STREAM_OPEN,  /* a stream's 2xx headers arrived: owner
                               (NULL: the GET stream) */
    TRANSPORT_STREAM_CLOSED,/* the GET stream ended: opened, none,
                               failure when it failed before opening,
                               retry_ms */
    TRANSPORT_LOST,         /* the connection itself is gone: failure, or
                               NULL when only a new exchange can tell */
    TRANSPORT_HELD,         /* a request waits on authorization: owner
                               (its timeout stops) */
    TRANSPORT_RESUMED,      /* ...and went again: owner (timeout anew) */
};

struct transport_event {
    enum transport_event_type       type;
    void                           *owner;
    struct transport_result        *result;
    const struct jsonrpc_msg       *msg;
    const struct transport_failure *failure;
    bool                            opened;
    bool                            none;
    int64_t                         retry_ms;   /* -1: none */
    double                          ms;         /* elapsed, monotonic */
    const char                     *op;         /* LOST with a failure: the
                                                   exchange it ends ("sse
                                                   stream", "process");
                                                   static */
};

typedef void (*transport_cb)(void *arg, const struct transport_event *e);

/* What a transport is made with. Borrowed; outlives the transport. */
struct transport_env {
    struct ev_loop             *loop;
    struct curlev              *curl;
    const struct config_server *decl;
    size_t                      pool_key;   /* the server's number */
    FILE                       *log;        /* debug log or NULL */
    const char                 *log_name;   /* sanitized server name */
    bool                        test_keep_id;
    unsigned long              *spawns;     /* stdio: counts each child
                                               started (the client's
                                               counter, kept across
                                               transports), or NULL */
    transport_cb                cb;
    void                       *cb_arg;
};

/*
 * Facts only some transports have, asked for by transport_query (as curl's
 * connection filters answer queries): what out points to for each.
 */
enum transport_query {
    TRANSPORT_Q_WARNING,        /* const char *: something the operator
                                   should know (a redirect followed) */
    TRANSPORT_Q_ACTIVITY,       /* ev_tstamp: when bytes last arrived on a
                                   stream (loop time); no answer: streams
                                   are watched by their messages alone */
    TRANSPORT_Q_PID,            /* long: the child's pid while it runs */
    TRANSPORT_Q_STDERR_COUNT,   /* size_t: stderr lines kept (stdio) */
    TRANSPORT_Q_STDERR_LINE,    /* struct transport_q_line: one of them */
    TRANSPORT_Q_EXIT_STATUS,    /* struct transport_q_exit: how the child
                                   ended, once it has */
    TRANSPORT_Q_STRAY_LINES,    /* unsigned long: stdout lines that were
                                   not JSON-RPC */
    TRANSPORT_Q_AUTHORIZATION,  /* const char *: the Authorization value a
                                   request carries now (a secret: never
                                   logged or shown) */
};

/* TRANSPORT_Q_STDERR_LINE: line i (0 oldest) in, the line out (borrowed
 * until the next line arrives). */
struct transport_q_line {
    size_t      i;
    const char *line;
};

/* TRANSPORT_Q_EXIT_STATUS: the exit code (-1 when killed) and signal. */
struct transport_q_exit {
    int code;
    int sig;
};

/*
 * One raw exchange (the session-hygiene audit, fleet_raw.c): a request
 * shaped by the caller, outside the lifecycle, on the transport's
 * endpoint with its headers: any method, the session id given (or none,
 * or one the server never issued), a body sent as it is. What comes back
 * is reported, not judged: the status, the Mcp-Session-Id the answer
 * carried, the JSON-RPC response. Only Streamable HTTP has it.
 */
struct transport_raw_request {
    enum http_method method;        /* engine/http.h */
    const char      *body;          /* POST: sent as is (copied) */
    size_t           len;
    int64_t          id;            /* the id an answer carries; -1 none */
    const char      *session_id;    /* Mcp-Session-Id, or NULL (secret) */
    const char      *protocol_version;  /* MCP-Protocol-Version, or NULL */
    const char      *mcp_method;    /* Mcp-Method (2026-07-28), or NULL */
    long             timeout_ms;    /* the exchange's bound */
};

/* What one raw exchange met. Borrowed during the callback. */
struct transport_raw_result {
    bool                     answered;  /* an HTTP status came */
    struct transport_failure f;         /* !answered: the evidence and
                                           words (f.evd filled either way) */
    long                     status;
    bool                     event_stream;  /* text/event-stream */
    const char              *session_id;    /* the answer's Mcp-Session-Id
                                               (visible ASCII), or NULL */
    /* The response carrying id, or an error whose id is null; the
     * receiver may take it (set it to NULL). */
    struct jsonrpc_msg      *answer;
    double                   ms;
};

/* Once per raw exchange, from the loop; the exchange is gone after it. */
typedef void (*transport_raw_cb)(void *arg, struct transport_raw_result *r);

struct transport_ops {
    const char *name;           /* "http", "stdio" */
    unsigned    caps;           /* TRANSPORT_CAP_* */
    /* The older transport to try when neither era's POST works here (the
     * 2024-11-05 HTTP+SSE transport behind Streamable HTTP); NULL when
     * there is none. */
    struct transport *(*older)(const struct transport_env *env);
    /* Get ready for a dial. 0: ready now; 1: TRANSPORT_READY or
     * TRANSPORT_OPEN_FAILED follows; -1: failed now (*f set). */
    int  (*open)(struct transport *t, struct transport_failure *f);
    /* Send one message; the owner comes back in TRANSPORT_DONE (exactly
     * once unless cancelled first). NULL with *cause (caller frees) when
     * it cannot even start. */
    struct transport_req *(*send)(struct transport *t,
        const struct transport_msg *m, void *owner, char **cause);
    /* Abort a request now: no TRANSPORT_DONE follows. evd_out (may be
     * NULL) gets how far it got. */
    void (*cancel)(struct transport *t, struct transport_req *r,
        struct failure_evidence *evd_out);
    /* How far a request in flight got (it goes on). */
    void (*peek)(struct transport *t, struct transport_req *r,
        struct failure_evidence *evd_out);
    /* The GET stream for server-initiated messages; NULL when the
     * transport has none. 0, or -1 with *cause (caller frees). */
    int  (*stream_open)(struct transport *t, char **cause);
    void (*stream_close)(struct transport *t);
    /* Take the session this transport carries for the lifecycle: adopt
     * one issued to initialize (taken), with the version agreed. */
    void (*adopt)(struct transport *t, char *session,
        const char *protocol_version);
    /* Give up the current session without ending it; returns it (caller
     * ends it or frees it), NULL when none. */
    char *(*release)(struct transport *t);
    /* True while a session is held (an id, or a child running). */
    bool (*has_session)(const struct transport *t);
    /* The first 8 characters of the session id for display ("" none). */
    void (*session_prefix)(const struct transport *t, char *buf, size_t n);
    /* False once the connection is known gone (a child exited). */
    bool (*alive)(const struct transport *t);
    /* The dial failed: drop what it started (a child is killed). */
    void (*abandon)(struct transport *t);
    /*
     * End a session by DESIGN.md section 5, reporting through run
     * (ending_run.h): `session` (taken) names an id handed out earlier
     * with its protocol version; NULL ends the current one.
     */
    void (*end)(struct transport *t, struct ending_run *run, char *session,
        const char *protocol_version);
    /* run's deadline passed: abort what it waits for; report. */
    void (*end_deadline)(struct transport *t, struct ending_run *run);
    /* Test hook: end the last ended session's id once more (false when
     * none was kept). NULL when unsupported. */
    bool (*end_again)(struct transport *t, struct ending_run *run);
    /* Local close: abort everything, forget the session, stop the child. */
    void (*close)(struct transport *t);
    void (*free)(struct transport *t);
    /* A fact only some transports have (TRANSPORT_Q_*): 0 with *out set,
     * -1 when this transport has no such fact now. NULL op: none ever. */
    int  (*query)(const struct transport *t, enum transport_query q,
        void *out);
    /* One raw exchange (above); cb(arg, ...) once, unless cancelled
     * first. NULL with *cause when it cannot start. NULL op: none. */
    struct transport_raw *(*raw)(struct transport *t,
        const struct transport_raw_request *rq, transport_raw_cb cb,
        void *arg, char **cause);
    void (*raw_cancel)(struct transport *t, struct transport_raw *x);
};

/* Every transport starts with this. */
struct transport {
    const struct transport_ops *ops;
    const struct transport_env *env;
};

/*
 * The interface as calls: the rest of the engine goes through these and
 * never through t->ops. Each is the op of the same name; where an op is
 * optional the wrapper says what its absence means.
 */
static inline const char *
transport_name(const struct transport *t)
{
    return t->ops->name;
}

static inline bool
transport_has_cap(const struct transport *t, unsigned cap)
{
    return (t->ops->caps & cap) != 0;
}

/* True when there is an older transport to fall back to. */
static inline bool
transport_has_older(const struct transport *t)
{
    return t->ops->older != NULL;
}

/* The older transport to fall back to, or NULL when there is none. */
static inline struct transport *
transport_older(const struct transport *t, const struct transport_env *env)
{
    return t->ops->older != NULL ? t->ops->older(env) : NULL;
}

static inline int
transport_open(struct transport *t, struct transport_failure *f)
{
    return t->ops->open(t, f);
}

static inline struct transport_req *
transport_send(struct transport *t, const struct transport_msg *m,
    void *owner, char **cause)
{
    return t->ops->send(t, m, owner, cause);
}

static inline void
transport_cancel(struct transport *t, struct transport_req *r,
    struct failure_evidence *evd_out)
{
    t->ops->cancel(t, r, evd_out);
}

static inline void
transport_peek(struct transport *t, struct transport_req *r,
    struct failure_evidence *evd_out)
{
    t->ops->peek(t, r, evd_out);
}

/* True when the transport has a GET stream for server messages. */
static inline bool
transport_has_stream(const struct transport *t)
{
    return t->ops->stream_open != NULL;
}

/* Only where transport_has_stream says so. */
static inline int
transport_stream_open(struct transport *t, char **cause)
{
    return t->ops->stream_open(t, cause);
}

/* A no-op where there is no stream. */
static inline void
transport_stream_close(struct transport *t)
{
    if (t->ops->stream_close != NULL)
        t->ops->stream_close(t);
}

static inline void
transport_adopt(struct transport *t, char *session,
    const char *protocol_version)
{
    t->ops->adopt(t, session, protocol_version);
}

static inline char *
transport_release(struct transport *t)
{
    return t->ops->release(t);
}

static inline bool
transport_has_session(const struct transport *t)
{
    return t->ops->has_session(t);
}

static inline void
transport_session_prefix(const struct transport *t, char *buf, size_t n)
{
    t->ops->session_prefix(t, buf, n);
}

static inline bool
transport_alive(const struct transport *t)
{
    return t->ops->alive(t);
}

static inline void
transport_abandon(struct transport *t)
{
    t->ops->abandon(t);
}

static inline void
transport_end(struct transport *t, struct ending_run *run, char *session,
    const char *protocol_version)
{
    t->ops->end(t, run, session, protocol_version);
}

static inline void
transport_end_deadline(struct transport *t, struct ending_run *run)
{
    t->ops->end_deadline(t, run);
}

/* The test hook; false where the transport has none. */
static inline bool
transport_end_again(struct transport *t, struct ending_run *run)
{
    return t->ops->end_again != NULL && t->ops->end_again(t, run);
}

static inline void
transport_close(struct transport *t)
{
    t->ops->close(t);
}

static inline void
transport_free(struct transport *t)
{
    t->ops->free(t);
}

/* See enum transport_query: 0 with *out set, -1 when t has no answer. */
static inline int
transport_query(const struct transport *t, enum transport_query q, void *out)
{
    return t->ops->query != NULL ? t->ops->query(t, q, out) : -1;
}

/* The facts, each with its value when the transport has none. */
static inline const char *
transport_warning(const struct transport *t)
{
    const char *w = NULL;

    return transport_query(t, TRANSPORT_Q_WARNING, &w) == 0 ? w : NULL;
}

/* False when streams are watched by their messages alone. */
static inline bool
transport_activity(const struct transport *t, ev_tstamp *at)
{
    return transport_query(t, TRANSPORT_Q_ACTIVITY, at) == 0;
}

static inline long
transport_pid(const struct transport *t)
{
    long pid = 0;

    return transport_query(t, TRANSPORT_Q_PID, &pid) == 0 ? pid : 0;
}

static inline size_t
transport_stderr_count(const struct transport *t)
{
    size_t n = 0;

    return transport_query(t, TRANSPORT_Q_STDERR_COUNT, &n) == 0 ? n : 0;
}

static inline const char *
transport_stderr_line(const struct transport *t, size_t i)
{
    struct transport_q_line l = { .i = i, .line = NULL };

    return transport_query(t, TRANSPORT_Q_STDERR_LINE, &l) == 0 ?
        l.line : NULL;
}

static inline bool
transport_exit_status(const struct transport *t, int *code, int *sig)
{
    struct transport_q_exit x = { 0, 0 };

    if (transport_query(t, TRANSPORT_Q_EXIT_STATUS, &x) != 0)
        return false;
    *code = x.code;
    *sig = x.sig;
    return true;
}

static inline unsigned long
transport_stray_lines(const struct transport *t)
{
    unsigned long n = 0;

    return transport_query(t, TRANSPORT_Q_STRAY_LINES, &n) == 0 ? n : 0;
}

/* True when the transport makes raw exchanges (Streamable HTTP). */
static inline bool
transport_has_raw(const struct transport *t)
{
    return t->ops->raw != NULL;
}

/* Only where transport_has_raw says so. */
static inline struct transport_raw *
transport_raw(struct transport *t, const struct transport_raw_request *rq,
    transport_raw_cb cb, void *arg, char **cause)
{
    return t->ops->raw(t, rq, cb, arg, cause);
}

/* Abort a raw exchange now: its callback never comes. */
static inline void
transport_raw_cancel(struct transport *t, struct transport_raw *x)
{
    t->ops->raw_cancel(t, x);
}

/* The three transports (streamable_http.c, http_sse.c, stdio.c). */
struct transport *streamable_http_new(const struct transport_env *env);
struct transport *http_sse_new(const struct transport_env *env);
struct transport *stdio_new(const struct transport_env *env);
/* Streamable HTTP's raw exchanges (http_raw.c). */
struct transport_raw *http_raw_start(struct transport *t,
    const struct transport_raw_request *rq, transport_raw_cb cb, void *arg,
    char **cause);
void http_raw_cancel(struct transport *t, struct transport_raw *x);

/* For a declaration: stdio for a command, Streamable HTTP for a URL. */
struct transport *transport_new(const struct transport_env *env);

/* Emit e to the lifecycle. */
void transport_emit(struct transport *t, struct transport_event *e);
/* Log a line about t's server. */
void transport_log(const struct transport *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * Events that arrive inside a libcurl callback are kept here and emitted
 * from an ev_prepare, in order, before the loop blocks (no extra wake-up,
 * unlike a zero-second timer): a lifecycle callback never runs inside
 * libcurl.
 */
struct transport_pending {
    struct transport_pending  *next;
    enum transport_event_type  type;
    void                      *owner;
    void                      *req;     /* DONE: the answered request
                                           (the transport's own) */
    struct jsonrpc_msg        *msg;     /* MESSAGE: owned */
};

struct transport_queue {
    struct transport_pending  *head, **tail;
    ev_prepare                 defer;
    struct ev_loop            *loop;
};

/* An empty queue whose ev_prepare runs cb with data (cb flushes). */
void transport_queue_init(struct transport_queue *q, struct ev_loop *loop,
    void (*cb)(struct ev_loop *loop, ev_prepare *w, int revents), void *data);
/* Append an event (msg taken) and arm the flush. Returns it (for req). */
struct transport_pending *transport_queue_push(struct transport_queue *q,
    enum transport_event_type type, void *owner, struct jsonrpc_msg *msg);
/* The first event, unlinked (the caller frees it with
 * transport_pending_free), or NULL. */
struct transport_pending *transport_queue_pop(struct transport_queue *q);
/* Free the events match says yes to (with their messages). */
void transport_queue_drop(struct transport_queue *q,
    bool (*match)(const struct transport_pending *p, const void *arg),
    const void *arg);
/* The events of owner kept in the queue answer nothing now (owner NULL):
 * it was answered or cancelled, and may be freed before they are emitted.
 * owner NULL does nothing. */
void transport_queue_disown(struct transport_queue *q, const void *owner);
/* Stop the flush (the queue is emptied by pop or drop). */
void transport_queue_stop(struct transport_queue *q);
void transport_pending_free(struct transport_pending *p);

/* A ready-made failure with evidence evd and a detail. */
void transport_failure_set(struct transport_failure *f,
    const struct failure_evidence *evd, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
