/*
 * The lifecycle's own parts (engine-private, for client*.c only): the
 * client and its requests, and what its files call of each other.
 *
 *   client.c         requests, judging answers, the session, the dial, the
 *                    legacy handshake, the liveness exchange, events from
 *                    the transport, ending and stopping
 *   client_era.c     the era probe (server/discover, -32022, fallbacks)
 *   client_list.c    tools/list pages, re-lists (coalesced, rate-limited)
 *   client_stream.c  the server stream (GET or subscriptions/listen),
 *                    reconnects with a floor, a cap and jitter; messages
 *                    that answer nothing in flight (an answer whose id is
 *                    none of ours is remembered for the timeouts)
 */
#ifndef MCPTOP_ENGINE_CLIENT_INT_H
#define MCPTOP_ENGINE_CLIENT_INT_H

#include <ev.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcp/client.h"
#include "engine/failure.h"
#include "transport/transport.h"

struct jsonrpc_msg;

#define CLIENT_MAX_PAGES        1000    /* a cursor that never ends */
#define CLIENT_MAX_TOOLS        100000
#define CLIENT_MAX_CAPS         16
#define CLIENT_STREAM_PER_MIN   10      /* reconnects of the server stream */
#define CLIENT_STREAM_FLOOR_S   1.0     /* the least wait before one */
#define CLIENT_STREAM_CAP_S     30.0
#define CLIENT_STREAM_IDLE_MIN_S 60.0
/* A GET answered with no stream is asked again after 30 s, doubling to
 * 10 min: rarely, and never against liveness. */
#define CLIENT_STREAM_NONE_FLOOR_S 30.0
#define CLIENT_STREAM_NONE_CAP_S   600.0
#define CLIENT_RELIST_MIN_S     1.0     /* re-listings at most this often */

enum client_op {
    CLIENT_OP_INITIALIZE,
    CLIENT_OP_INITIALIZED,
    CLIENT_OP_LIST,
    CLIENT_OP_PING,
    CLIENT_OP_NOTIFY,          /* fire-and-forget: cancelled */
    CLIENT_OP_DISCOVER,        /* 2026-07-28: the dial's server/discover */
    CLIENT_OP_LISTEN,          /* 2026-07-28: subscriptions/listen */
    CLIENT_OP_CALL,            /* the deep check: tools/call of probe_tool */
    CLIENT_OP_ANSWER,          /* fire-and-forget: our answer to a request
                                  the server sent */
};

struct client_req {
    struct client         *c;
    struct client_req     *next;
    enum client_op         op;
    int64_t                id;          /* -1 for notifications */
    const char            *method;      /* static */
    struct transport_req  *tr;
    ev_timer               timer;       /* request timeout / idle */
    ev_tstamp              started;
    bool                   in_dial;
    /* Left to settle after its dial was abandoned: an initialize whose
     * late session is ended half-open. */
    bool                   detached;
    bool                   counted;     /* in the host's busy count */
    bool                   opened;      /* a listen's stream is open */
};

/* The deep check's state (probe_tool). */
struct client_deep {
    ev_timer                    timer;
    double                      ms;             /* last completed, -1 */
    unsigned long               notices;        /* progress/log seen */
    unsigned long               calls;
    bool                        ok;
};

struct client {
    const struct client_host   *host;
    void                       *host_arg;
    const struct client_env    *env;
    const struct config_server *decl;
    struct transport_env        tenv;
    unsigned long               spawns;     /* children started (stdio) */
    struct transport           *t;

    /* the era (DESIGN.md section 6), remembered for this server */
    enum mcp_era                era;
    bool                        probe_retried;
    bool                        sse_tried;      /* this dial fell back */
    bool                        sse_fallback_now; /* ...and its HTTP+SSE
                                               open is the fallback's */
    struct transport_failure   *sse_fallback;   /* initialize's failure,
                                               once a dial fell back (352
                                               bytes: cold, made then) */
    char                       *cache_scope;
    double                      list_ttl_ms;    /* -1: no hint */
    ev_tstamp                   listed_at;
    unsigned long               listen_drops;

    /* the session's facts */
    char                       *protocol_version;
    char                       *peer_name;
    char                       *peer_version;
    bool                        has_tools_cap;
    bool                        tools_list_changed;
    int64_t                     next_id;
    char                       *caps[CLIENT_MAX_CAPS];
    size_t                      ncaps;

    /* the dial */
    const char                 *dial_step;      /* the request in flight */
    bool                        probed_this_dial;
    bool                        init_said_modern;
    bool                        respawned;      /* for initialize, once */
    ev_timer                    fresh_timer;    /* ...opened on the next
                                               loop turn: the refusal is
                                               read inside the old child's
                                               own callback */
    bool                        silent_probe;   /* legacy by silence */
    int64_t                     probe_id;       /* the last probe's id */
    char                       *probe_note;     /* a probe that proved
                                                   no era */
    char                       *warning;        /* an era verdict's note */
    bool                        warning_no_era; /* ...one of no evidence,
                                                   gone once a dial works */
    unsigned long               asked[MCP_ASKED__COUNT]; /* the server's
                                                   requests, answered */
    bool                        init_refused;   /* the last dial: a
                                                   JSON-RPC error to
                                                   initialize */
    ev_tstamp                   dial_started;
    ev_timer                    open_timer;
    bool                        dialed_once;
    bool                        redialed_for_loss;

    /* listing (the dial's or a re-list) */
    char                      **tool_names;
    long                        ntools;         /* -1: never listed */
    char                      **list_acc;
    long                        list_n, list_cap;
    int                         list_pages;
    uint64_t                   *list_cursors;   /* hashes of the cursors of
                                               this listing (at most
                                               CLIENT_MAX_PAGES) */
    bool                        list_loop;      /* the last listing repeated
                                               a cursor: degraded */
    char                       *list_note;      /* ...how, and duplicate
                                               tool names, or NULL */
    bool                        list_in_dial;
    ev_tstamp                   list_started;
    bool                        relist_wanted;
    ev_tstamp                   relisted_at;
    unsigned long               notices_coalesced;
    ev_timer                    relist_timer;

    /* the server stream: the GET stream, or subscriptions/listen */
    bool                        stream_none;    /* the server has none for
                                                   us now: asked again only
                                                   on stream_timer */
    unsigned                    stream_nones;   /* answers saying so, this
                                                   session (the backoff) */
    bool                        stream_opened;
    ev_tstamp                   stream_started;
    int64_t                     stream_retry_ms;
    ev_tstamp                   stream_window;
    unsigned                    stream_reconnects;
    ev_timer                    stream_timer;   /* the next reconnect */
    ev_timer                    stream_idle;    /* the GET stream's watchdog */

    struct client_req          *reqs;

    /* the deep check (probe_tool), made for a server that declares one
     * (88 bytes the others do without), else NULL */
    struct client_deep         *deep;

    /* the liveness exchange */
    double                      rtt_ms;
    bool                        last_ping_ok;
    bool                        ping_unsupported;   /* -32601 to ping:
                                               tools/list is the liveness
                                               exchange for this session */
    unsigned long               pings_done;
    unsigned long               expiries;

    /* the last answer that carried an id no request of ours ever had */
    ev_tstamp                   stray_at;       /* loop time; 0: none */
    char                        stray_id[64];   /* jsonrpc_id_describe */
};


/*
 * The host, as calls: these wrappers are the only place the lifecycle
 * spells c->host (scripts/lint.sh checks), one per member of struct
 * client_host, so a member's meaning is read in one place.
 */

/* --- what the lifecycle reports to its host ----------------------------- */

static inline void
client_report_exchange(const struct client *c, const char *op,
    const struct failure *f, double ms)
{
    c->host->exchange(c->host_arg, op, f, ms);
}

static inline void
client_report_dial_done(const struct client *c, const struct failure *f,
    double ms)
{
    c->host->dial_done(c->host_arg, f, ms);
}

/* What follows loss: the host's retry policy acts on it. */
static inline void
client_retry(const struct client *c, enum client_loss loss)
{
    c->host->retry(c->host_arg, loss);
}

/* Takes session; protocol_version and why are borrowed (may be NULL). */
static inline void
client_report_orphan(const struct client *c, char *session,
    const char *protocol_version, const char *why, bool half_open)
{
    c->host->end_orphan(c->host_arg, session, protocol_version, why,
        half_open);
}

static inline void
client_report_tools_changed(const struct client *c, long ntools)
{
    c->host->tools_changed(c->host_arg, ntools);
}

static inline void
client_report_busy(const struct client *c, bool on)
{
    c->host->busy(c->host_arg, on);
}

static inline void
client_report_retry_after(const struct client *c, long seconds)
{
    c->host->retry_after(c->host_arg, seconds);
}

static inline void
client_report_asked(const struct client *c, enum mcp_asked kind,
    const char *method, const char *id, const char *answered)
{
    if (c->host->asked != NULL)
        c->host->asked(c->host_arg, kind, method, id, answered);
}

/* --- what the lifecycle asks of its host -------------------------------- */

static inline enum client_phase
client_state(const struct client *c)
{
    return c->host->phase(c->host_arg);
}

static inline ev_tstamp
client_now(const struct client *c)
{
    return c->host->now(c->host_arg);
}

static inline long
client_timeout_ms(const struct client *c)
{
    return c->host->timeout_ms(c->host_arg);
}

static inline long
client_open_deadline_ms(const struct client *c)
{
    return c->host->open_deadline_ms(c->host_arg);
}

static inline double
client_wait_left(const struct client *c)
{
    return c->host->wait_left(c->host_arg);
}

/* Does the server dial again after loss (the retry policy's question)? */
static inline bool
client_retries(const struct client *c, enum client_loss loss)
{
    return c->host->retries(c->host_arg, loss);
}

static inline void
client_vlog(const struct client *c, const char *fmt, va_list ap)
{
    c->host->log(c->host_arg, fmt, ap);
}

/* --- what the lifecycle has its host make ------------------------------- */

/* A fresh transport for the declaration: the host's, else transport_new.
 * The client owns it. */
static inline struct transport *
client_make_transport(struct client *c)
{
    struct transport *t = NULL;

    if (c->host->make_transport != NULL)
        t = c->host->make_transport(c->host_arg, &c->tenv);
    return t != NULL ? t : transport_new(&c->tenv);
}

/* --- shared by the lifecycle's files ------------------------------------ */

/* client.c: requests, judging, the session, the dial */
void client_log(const struct client *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void client_req_busy(struct client_req *rq, bool on);
double client_elapsed_ms(const struct client *c, ev_tstamp since);
void client_free_strv(char **v, long n);
struct client_req *client_req_new(struct client *c, enum client_op op,
    int64_t id, const char *method);
void client_req_free(struct client_req *rq, struct failure_evidence *evd_out);
struct client_req *client_find(const struct client *c, enum client_op op);
bool client_send(struct client *c, struct client_req *rq, const char *body,
    size_t len, unsigned flags, long timeout_ms, char **cause);
unsigned client_flags(const struct client *c, enum client_op op);
bool client_dial_step(struct client *c, struct client_req *rq, char *body,
    size_t len, long timeout_ms);
bool client_judge(const struct transport_result *res,
    struct failure_evidence *evd, char *detail, size_t dsz);
void client_fail(struct client *c, const char *op,
    const struct failure_evidence *evd, double ms, const char *detail);
void client_drop(struct client *c, const char *why, bool half_open);
void client_dial_failed(struct client *c, const struct failure_evidence *evd,
    const char *detail);
void client_dial_completed(struct client *c);
void client_handshake_done(struct client *c);
void client_send_initialize(struct client *c);
void client_take_server(struct client *c, const struct jsonrpc_msg *m,
    const char *name, const char *version);
bool client_session_lost(struct client *c, const char *op, bool carried,
    const struct failure_evidence *evd, double ms, char *detail);

/* client_era.c: the era probe */
void client_dial_begin(struct client *c);
void client_send_discover(struct client *c);
void client_on_discover(struct client *c, struct client_req *rq,
    struct transport_result *res);
void client_fallback_legacy(struct client *c, const char *why);
void client_era_late_answer(struct client *c, const struct jsonrpc_msg *m);

/* client.c: switch to transport t (the old one closed and freed, with
 * every request still on it) */
void client_use_transport(struct client *c, struct transport *t);

/* client_init.c: the legacy handshake */
void client_on_initialize(struct client *c, struct client_req *rq,
    struct transport_result *res);
void client_on_initialized(struct client *c, struct client_req *rq,
    struct transport_result *res);
/* ev_timer: the fresh child for an initialize refused after the probe. */
void client_fresh_timer_cb(struct ev_loop *loop, ev_timer *w, int revents);

/* client_list.c: listings */
void client_begin_list(struct client *c, bool in_dial);
void client_on_list(struct client *c, struct client_req *rq,
    struct transport_result *res);
void client_list_failed(struct client *c, const struct failure_evidence *evd,
    const char *detail);
void client_relist(struct client *c);
void client_relist_cb(struct ev_loop *loop, ev_timer *w, int revents);
void client_list_free(struct client *c);

/* client_probe.c: the deep check */
bool client_probe_now(struct client *c);
void client_probe_schedule(struct client *c);
void client_probe_timer_cb(struct ev_loop *loop, ev_timer *w, int revents);
void client_on_call(struct client *c, struct client_req *rq,
    struct transport_result *res);
/* The deep check's request timed out: recorded as the tools/call
 * exchange's failure (kind timeout, or what evd says; why, when not NULL,
 * is the detail), and the next call planned. */
void client_probe_timed_out(struct client *c, struct failure_evidence *evd,
    double ms, const char *why);

/* client_stream.c: the server stream */
void client_streams_start(struct client *c);
void client_stream_later(struct client *c);
void client_stream_retry_cb(struct ev_loop *loop, ev_timer *w, int revents);
void client_stream_idle_cb(struct ev_loop *loop, ev_timer *w, int revents);
void client_on_stream_open(struct client *c, struct client_req *listen);
void client_on_stream_closed(struct client *c,
    const struct transport_event *e);
void client_on_listen_done(struct client *c, struct client_req *rq,
    struct transport_result *res);
void client_on_message(struct client *c, const struct jsonrpc_msg *m,
    struct client_req *on);
/* client_answer.c: answer the server's own request m (method borrowed)
 * at once; count it and report it to the host. */
void client_answer_server(struct client *c, const struct jsonrpc_msg *m,
    const char *method);
/* ...the transport took the answer (or not): rq is freed. */
void client_on_answer_sent(struct client *c, struct client_req *rq,
    const struct transport_result *res);
/*
 * A request (id, sent at `started`) is out of time. When an answer came
 * meanwhile whose id no request of ours ever had, that answer was the
 * server's and not ours (issue 26, item 8): evd becomes not_mcp_response
 * evidence and detail (dsz) says which id came and which was ours, then
 * `timed_out`. true when it did.
 */
bool client_stray_judge(const struct client *c, int64_t id,
    ev_tstamp started, const char *timed_out,
    struct failure_evidence *evd, char *detail, size_t dsz);

#endif
