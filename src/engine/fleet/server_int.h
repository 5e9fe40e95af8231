/*
 * A server's inside, for the files that are its parts (engine-private):
 *
 *   server.c         the state, events, the record, health, the public
 *                    commands (what all kinds share, then the source's
 *                    table), lifetime
 *   server_get.c     the public getters, one line each, through the table
 *   server_dialed.c  the dialed source: the MCP lifecycle under mcp/
 *                    (which reports through struct client_host), the
 *                    schedule, the retry policy, the endings
 *   server_replay.c  the replay source: a recording's facts
 *   server_tap.c     the tap source: a tap's observations (issue 31)
 *
 * A kind of server is a struct server_source_ops (tmux's window modes are
 * the model): one const table a kind, each in its own file. Nothing but
 * the table's own file asks which kind a server is. See server.c for the
 * invariants.
 */
#ifndef MCPTOP_ENGINE_SERVER_INT_H
#define MCPTOP_ENGINE_SERVER_INT_H

#include <ev.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/record.h"
#include "engine/server.h"
#include "mcp/client.h"

struct client;
struct endings;
struct ending_run;

/*
 * Where a server's observations come from, and what the operator's
 * commands do to it. Every member is set. The commands are called after
 * server.c's checks common to all kinds (a stopped, invalid or ending
 * server is not dialed ...); a source that no command acts on (a replay)
 * says so with `inert`, and server.c then calls none of them.
 */
struct server_source_ops {
    const char *name;           /* "dialed", "replay", "tap" */
    bool        inert;          /* end, redial, pause, resume, enable,
                                   ping and the deep check do nothing */

    /* --- commands ------------------------------------------------------ */
    /* Dial (connect to a tap): the first time, after a backoff, after a
     * settled ending that redials. */
    void (*dial)(struct server *s);
    /* The operator's redial on a server that is not dialing or ending. */
    void (*redial)(struct server *s);
    /* Pausing (after the state is PAUSED) / resuming (from PAUSED). */
    void (*pause)(struct server *s);
    void (*resume)(struct server *s);
    /* The liveness exchange now; false when none went. */
    bool (*ping)(struct server *s, bool scheduled);
    /* The deep check now; false when none went. */
    bool (*probe)(struct server *s);
    /* server_end / server_end_session: the ending, or NULL when there
     * is nothing to end. */
    const struct ending *(*end)(struct server *s, bool redial);
    const struct ending *(*end_session)(struct server *s,
        const char *session_id);
    /* Cancel a request of the ledger: false when there is none. */
    bool (*cancel)(struct server *s, const char *id, const char *reason);
    /* Close locally: nothing more comes from the source. */
    void (*stop)(struct server *s);
    /* Free what the source holds (after stop). */
    void (*free)(struct server *s);

    /* --- facts (server.h says what each means) ------------------------- */
    const char *(*transport_name)(const struct server *s);
    const char *(*liveness_method)(const struct server *s);
    enum mcp_era (*era)(const struct server *s);
    void (*session)(const struct server *s, struct mcp_session_info *out);
    long (*tools)(const struct server *s);
    double (*rtt_ms)(const struct server *s);
    struct health (*health)(const struct server *s, int64_t *since);
    bool (*dial_settled)(const struct server *s);
    long (*pid)(const struct server *s);
    size_t (*ending_count)(const struct server *s);
    const struct ending *(*ending)(const struct server *s, size_t i);
    size_t (*in_flight)(const struct server *s);
    const struct server_request *(*request)(const struct server *s,
        size_t i);
    long (*agent_sessions)(const struct server *s);
    const struct server_agent_session *(*agent_session)(
        const struct server *s, size_t i);
};

/* The three kinds. */
extern const struct server_source_ops server_source_dialed;
extern const struct server_source_ops server_source_replay;
extern const struct server_source_ops server_source_tap;

struct server {
    const struct server_env    *env;
    const struct config_server *decl;
    const struct server_source_ops *source;
    void                       *source_data;    /* the source's own */
    enum server_state           state;
    char                       *target;
    char                       *log_name;   /* sanitized name */
    size_t                      index;      /* in the fleet */
    void                       *data;       /* the owner's */

    struct client              *client;
    struct client_env           cenv;       /* env's part for the client */
    struct record               rec;
    struct endings             *endings;    /* on the first ending */
    struct ending_run          *ending;     /* the session's, if any */
    bool                        ending_redial;
    bool                        in_end;     /* server_end runs */
    enum server_state           paused_from;
    bool                        orphan_ended; /* since the last dial began:
                                               a session it was issued went
                                               to a half-open ending */
    bool                        end_settled;/* ...and its ending settled */

    unsigned                    busy;       /* unsettled endings and
                                               abandoned dials */
    unsigned                    failed_dials;   /* in a row, for backoff */
    ev_tstamp                   not_before; /* a wait the server asked for
                                               (loop time), 0 none */
    unsigned long               dials;
    ev_timer                    tick;       /* next ping or next dial */
    ev_tstamp                   tick_due;   /* when tick fires (loop time) */
    bool                        dial_due;   /* ...and it will dial */
    struct health_track         health;     /* the last one published */
    /* the crash window (DESIGN.md 4b): children dying soon after their
     * dial count as failed dials */
    ev_tstamp                   ready_at;   /* the last dial completed
                                               (loop time) */
    unsigned                    crashes;    /* in a row, each within the
                                               window of its dial */
    ev_tstamp                   crash_first;    /* the first of them */
    double                      crash_life_s;   /* the longest life of
                                                   them (s) */
    bool                        loss_planned;   /* this session's loss has
                                                   its next dial planned */
    ev_timer                    crash_timer;    /* a fresh child's window,
                                                   after crashes */
    char                        crash_words[160];   /* health's reason
                                                       while crashes > 0 */
    unsigned                    session_losses; /* sessions lost in a row,
                                                   each within the window
                                                   of its dial (HTTP) */
    ev_tstamp                   session_loss_first; /* the first of them */
    bool                        stopped_disabled; /* closed while disabled */
};

/* --- server.c: what every kind uses ------------------------------------ */

/* Publish e (its server and stamp set here). */
void server_emit(struct server *s, struct event *e);
/* Health now, minted from the record and the operator's state. */
struct health server_health_now(const struct server *s);
/* Publish health when it changed (the first one too). */
void server_health_update(struct server *s);
void server_set_state(struct server *s, enum server_state st);
/* One exchange ended with its one outcome (f NULL: completed): into the
 * record (stamped now), out as events. op is a static string. */
void server_exchange(struct server *s, const char *op,
    const struct failure *f, double ms);
/* The same, stamped at (epoch ms): a tap's observation. */
void server_exchange_at(struct server *s, const char *op,
    const struct failure *f, double ms, int64_t at);
/* A line of the debug log (nothing without one). */
void server_log(struct server *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The loop's time, updated (monotonic seconds). */
ev_tstamp server_now(const struct server *s);

/* --- server_dialed.c: the schedule, shared with the other kinds -------- */

/*
 * The delay (s) from now (loop time) to a scheduled ping: interval_s with
 * +-10% jitter (u uniform in [0, 1]: the server's draw), its due time
 * rounded to the nearest multiple of slot_s so that pings due together
 * share a wake-up; intervals of 4 slots or less are not rounded.
 */
double server_ping_delay(ev_tstamp now, double interval_s, double u,
    double slot_s);
/* Seconds left of a wait the server asked for, 0 when none. */
double server_wait_left(const struct server *s);
/* The client_host every dialed server's lifecycle reports through. */
extern const struct client_host server_client_host;
/* ev_timer: the next ping, or the next dial after a backoff. */
void server_tick_cb(struct ev_loop *loop, ev_timer *w, int revents);
/* ev_timer: a fresh child outlived the crash window: the crashes are
 * forgotten and health is minted again. */
void server_crash_cb(struct ev_loop *loop, ev_timer *w, int revents);
/* The crash window (s) of a declaration: its crash_window_ms, else the
 * longer of CONFIG_DEFAULT_CRASH_WINDOW_MS and two ping intervals. */
double server_crash_window_s(const struct config_server *decl);

/* The dialed source's facts, which the other kinds share where they have
 * nothing of their own (a tap has no tools of mcptop's listing). */
const char *server_dialed_transport_name(const struct server *s);
const char *server_dialed_liveness_method(const struct server *s);
enum mcp_era server_dialed_era(const struct server *s);
void server_dialed_session(const struct server *s,
    struct mcp_session_info *out);
long server_dialed_tools(const struct server *s);
double server_dialed_rtt_ms(const struct server *s);
struct health server_dialed_health(const struct server *s, int64_t *since);
bool server_dialed_dial_settled(const struct server *s);
long server_dialed_pid(const struct server *s);
size_t server_dialed_ending_count(const struct server *s);
const struct ending *server_dialed_ending(const struct server *s, size_t i);
/* What a source without a ledger answers. */
size_t server_no_in_flight(const struct server *s);
const struct server_request *server_no_request(const struct server *s,
    size_t i);
long server_no_agent_sessions(const struct server *s);
const struct server_agent_session *server_no_agent_session(
    const struct server *s, size_t i);
bool server_no_cancel(struct server *s, const char *id, const char *reason);
const struct ending *server_no_end(struct server *s, bool redial);
const struct ending *server_no_end_session(struct server *s,
    const char *session_id);
bool server_no_ping(struct server *s, bool scheduled);
bool server_no_probe(struct server *s);

/* server_tap.c: make s a tap's server (decl->tap). */
void server_tap_begin(struct server *s);

#endif
