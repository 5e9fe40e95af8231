/*
 * One monitored MCP server: its declaration, the MCP lifecycle mcptop runs
 * with it (dial = initialize, notifications/initialized, the full first
 * tools/list; then pings, re-lists and the GET stream), its liveness record,
 * last failure and exchange history. Opaque: the invariants (one dial at a
 * time, a session id only from a 2xx initialize, one outcome per exchange)
 * live in server.c.
 */
#ifndef MCPTOP_ENGINE_SERVER_H
#define MCPTOP_ENGINE_SERVER_H

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/config.h"
#include "engine/event.h"
#include "engine/failure.h"
#include "engine/ending.h"
#include "engine/health.h"
#include "engine/liveness.h"
#include "engine/mcp.h"

struct curlev;
struct server;
struct transport;
struct transport_env;

enum server_state {
    SERVER_IDLE,        /* not dialed yet */
    SERVER_DIALING,
    SERVER_READY,       /* session open: pings at the interval */
    SERVER_BACKOFF,     /* the dial failed; waiting to dial again */
    SERVER_INVALID,     /* the declaration cannot be dialed */
    SERVER_UNSUPPORTED, /* transport not supported yet */
    SERVER_ENDING,      /* an ending runs; not dialed until it settles */
    SERVER_STOPPED,     /* closed locally, or ended and stopped: dials no
                           more until a redial */
    SERVER_PAUSED,      /* monitoring paused: no pings, no dials; a
                           session stays open */
    SERVER_DISABLED,    /* "disabled" in the config: never dialed or
                           spawned until enabled */
    SERVER__COUNT
};

/* What every server of a fleet shares. Borrowed; outlives the servers. */
struct server_env {
    struct ev_loop *loop;
    struct curlev  *curl;
    event_cb        emit;
    void           *emit_arg;
    bool            no_streams;     /* never open the GET stream */
    bool            no_pings;       /* no periodic pings (check mode) */
    bool            no_redial;      /* a failed dial is final (check mode) */
    long            timeout_ms;     /* overrides when > 0 */
    long            open_deadline_ms;
    FILE           *log;            /* debug log of exchanges, or NULL */
    unsigned long  *busy_total;     /* the fleet's count of busy work, or
                                       NULL */
    bool            test_keep_id;   /* test hook: keep an ended session's id
                                       so server_test_repeat_delete can
                                       send it once more */
    /* Only tests/unit/test_server.c fills these: each server's transport
     * made by the test (a fake), not from its declaration. NULL here. */
    struct transport *(*make_transport)(void *arg,
                        const struct transport_env *env);
    void           *make_transport_arg;
};

/*
 * A request in flight that a tap saw (issue 31): a server declared
 * {"tap": PATH} has the tap's ledger. Strings are sanitized; id is the
 * id's JSON text (7, "a-1").
 */
struct server_request {
    char        id[132];
    char        direction[12];      /* "to_server" (the agent's) or
                                       "to_agent" (the server's) */
    char        method[68];
    char        tool[68];           /* tools/call's tool; "" none */
    int64_t     started_at;         /* epoch ms */
    bool        has_progress;
    double      progress;
    bool        has_total;
    double      total;
    char        message[204];       /* the last progress message; "" */
    uint64_t    bytes;
    /* on an end: how ("completed", "failed", "cancelled",
     * "cancelled_by_operator", "tap_lost"); on a cancel's answer: the
     * tap's detail */
    char        outcome[96];
};

enum server_request_phase {
    SERVER_REQUEST_START,
    SERVER_REQUEST_PROGRESS,
    SERVER_REQUEST_END,
    SERVER_REQUEST_CANCEL_OK,       /* the tap cancelled it */
    SERVER_REQUEST_CANCEL_FAILED,   /* it could not (outcome says why) */
};

/* "start" / "progress" / "end" / "cancel_ok" / "cancel_failed". */
const char *server_request_phase_name(enum server_request_phase p);

/* New server for decl (borrowed: must outlive the server), number index in
 * its fleet. Never NULL. */
struct server *server_new(const struct server_env *env,
    const struct config_server *decl, size_t index);
/* Abort everything in flight, stop timers, free. NULL does nothing. */
void server_free(struct server *s);

/* Start the first dial (or mark invalid / unsupported). */
void server_start(struct server *s);
/* Dial again (a redial command): a session still held is ended first by
 * the ending procedure, and the fresh dial follows its settlement; a
 * stopped server dials again. Ignored while a dial or an ending runs. */
void server_redial(struct server *s);
/* Pause monitoring: no pings and no dials until resumed (a session
 * stays open, and what the server sends still arrives). From ready or
 * backoff; ignored otherwise. */
void server_pause(struct server *s);
/* Resume a paused server: ping at once if its session is open, else
 * dial. */
void server_resume(struct server *s);
/* Enable a server the config disabled, for this run: its first dial
 * starts. false when it was not disabled. */
bool server_enable(struct server *s);
/* Ping now if a session is open and no ping is in flight. true if sent. */
bool server_ping_now(struct server *s);
/* Close locally: abort transfers, stop timers, dial no more. */
void server_stop(struct server *s);

/*
 * End the session by the procedure of DESIGN.md section 5 (DELETE over
 * HTTP, the shutdown sequence over stdio, no_session when no id was ever
 * issued). At most once per session: asking again while one is under way
 * returns the same ending. After it settles the server dials again only
 * if `redial` is true. Returns the ending (borrowed, valid while s lives),
 * or NULL when there is nothing to end (invalid, unsupported, stopped).
 */
const struct ending *server_end(struct server *s, bool redial);
/*
 * End a session mcptop did not open (`mcptop end --session ID`): the
 * ending procedure (a DELETE with that Mcp-Session-Id, one deadline) on a
 * server that is not dialed. session_id is copied; it is never shown whole.
 * NULL when the transport cannot end a session by id (stdio) or an ending
 * runs.
 */
const struct ending *server_end_session(struct server *s,
    const char *session_id);
/*
 * Test hook (MCPTOP_TEST_REPEAT_DELETE in `mcptop end`): send the last
 * ended session's DELETE once more, as a new ending, to show what the
 * server says of an id it no longer knows. NULL when no id was kept.
 */
const struct ending *server_test_repeat_delete(struct server *s);
/* The endings of this server, oldest first (at most SERVER_ENDINGS kept). */
#define SERVER_ENDINGS 16
size_t server_ending_count(const struct server *s);
const struct ending *server_ending(const struct server *s, size_t i);
/* True while an ending's work has not settled. */
bool server_ending_busy(const struct server *s);
/* Child pid for stdio servers (0 when none). */
long server_pid(const struct server *s);
/* stdio: how many times mcptop started this server's child this run (a
 * respawn is every one after the first); 0 for other transports. */
unsigned long server_spawns(const struct server *s);
/* stdio: the stderr ring (and stray stdout lines, prefixed), oldest
 * first; sanitized. NULL past the end. */
const char *server_stderr_line(const struct server *s, size_t i);
size_t server_stderr_count(const struct server *s);
/* stdio: how the last child ended. false when none was reaped yet; code
 * is -1 when it was killed by a signal, sig 0 when it exited. */
bool server_exit_status(const struct server *s, int *code, int *sig);
/* stdio: non-JSON lines seen on stdout. */
unsigned long server_stray_lines(const struct server *s);
/* Capability names the server declared (sanitized), for the detail pane. */
size_t server_capabilities(const struct server *s, const char **names,
    size_t max);

/* An opaque pointer for the owner (a command's per-server record). */
void server_set_data(struct server *s, void *data);
void *server_data(const struct server *s);

const char *server_name(const struct server *s);
const struct config_server *server_decl(const struct server *s);
/* "http" or "stdio". */
const char *server_transport_name(const struct server *s);
/* The URL, or the command line. Borrowed. */
const char *server_target(const struct server *s);
enum server_state server_state(const struct server *s);
/* The era verdict (MCP_ERA_NONE until a dial told). */
enum mcp_era server_era(const struct server *s);
/* True when ending this server would end a session on the server (a
 * legacy session id is held, or a stdio child runs). */
bool server_has_session(const struct server *s);
const char *server_state_name(enum server_state st);
/* Borrowed; valid until the next event on this server. */
const struct liveness *server_liveness(const struct server *s);
/* The last failure seen (kept after later exchanges complete, so that it
 * can be shown), or NULL when none failed yet. *op (may be NULL) names its
 * exchange. */
const struct failure *server_last_failure(const struct server *s,
    const char **op);
void server_session(const struct server *s, struct mcp_session_info *out);
/* Tool count of the last complete listing, -1 when none. */
long server_tools(const struct server *s);
/* Tool name i of the last listing (sanitized), NULL past the end. */
const char *server_tool_name(const struct server *s, long i);
/* Round trip of the last completed ping (or dial), ms; -1 when none. */
double server_rtt_ms(const struct server *s);
/* When the certificate an https server presented on its last new
 * connection expires (its leaf's notAfter), epoch seconds; 0 when none
 * was seen (http, stdio, not connected yet). */
int64_t server_tls_not_after(const struct server *s);
/* ok: its health is ok (health.h): the liveness exchange completed and
 * nothing monitored fails now (the deep check included). */
bool server_ok(const struct server *s);
/* Its health now (DESIGN.md section 4b), and since when it has had the
 * last one published (epoch ms; may be NULL; 0 before any). */
struct health server_health(const struct server *s, int64_t *since);
/* The liveness exchange's method: "ping", "tools/list" (ping answered
 * -32601 this session) or "server/discover". Static string. */
const char *server_liveness_method(const struct server *s);
/* The deep check (a configured probe_tool): call it now. false when none
 * is configured, one is in flight, or no session is open. */
bool server_probe_now(struct server *s);
/* Its last completed round trip, ms (-1: none); progress and log notices
 * that came during calls. */
double server_probe_ms(const struct server *s);
unsigned long server_probe_notices(const struct server *s);
/* Requests of kind the server sent its client and mcptop answered (a
 * dialed server's; 0 for the other kinds). */
unsigned long server_asked(const struct server *s, enum mcp_asked kind);
/* True when at least one dial has finished (either way). */
bool server_dial_settled(const struct server *s);
/* How many pings completed / failed since start. */
unsigned long server_pings_done(const struct server *s);
/* History ring, oldest first: *n entries. Borrowed. */
const struct mcp_exchange *server_history(const struct server *s,
    size_t i);
size_t server_history_len(const struct server *s);
/* How many observations in a row gave the current liveness state. */
unsigned long server_streak(const struct server *s);
/* How many exchanges in a row failed (0 after one completed). */
unsigned long server_fail_streak(const struct server *s);
/* When the next dial may go (epoch ms): the end of a backoff or of a wait
 * the server asked for; -1 when none is planned. */
int64_t server_next_attempt_ms(const struct server *s);
/* What the operator should know of how this server is reached (a redirect
 * followed, an era verdict's evidence): up to max borrowed strings (valid
 * until the next event), safe to show. Returns how many. */
size_t server_warnings(const struct server *s, const char **out,
    size_t max);
/* A tap's server (decl->tap): shown from the tap's observations. */
bool server_is_tap(const struct server *s);
/* Its ledger, oldest first (0 for a server that is no tap). Borrowed
 * until the next event on s. */
size_t server_in_flight(const struct server *s);
const struct server_request *server_request(const struct server *s,
    size_t i);
/* Ask the tap to cancel the agent's request id (its JSON text), with
 * reason (may be NULL): notifications/cancelled to the server, error
 * -32800 to the agent. The answer comes as an EVENT_REQUEST
 * (SERVER_REQUEST_CANCEL_OK / _FAILED). false when s is no tap or is
 * not connected to it. */
bool server_cancel_request(struct server *s, const char *id,
    const char *reason);
/* An agent's session an HTTP tap saw issued (issue 31): never its whole
 * id. */
struct server_agent_session {
    char          id_prefix[16];    /* 8 characters, as mcptop shows its
                                       own */
    int64_t       created_at;       /* epoch ms */
    int64_t       last_at;          /* epoch ms of its last request */
    unsigned long requests;
    bool          ending;           /* the operator's DELETE runs */
};
/* An HTTP tap's agent sessions, newest first; -1 when s is no HTTP tap's
 * server (a stdio tap has none to list). Borrowed until the next event
 * on s. */
long server_agent_sessions(const struct server *s);
const struct server_agent_session *server_agent_session(
    const struct server *s, size_t i);

/* Counters for display. */
unsigned long server_session_expiries(const struct server *s);
unsigned long server_dials(const struct server *s);

/*
 * --- A replayed server (`mcptop replay`) --------------------------------
 * A server whose state comes from a recording instead of exchanges: it is
 * never dialed or spawned, and every command on it (end, redial, pause,
 * ping) does nothing. Each recorded fact goes through the same record
 * (history, streaks, liveness_of) and is published as the same event as
 * live, so the TUI reads it through the same getters.
 */
enum server_fact_type {
    SERVER_FACT_EXCHANGE,   /* op, failure (NULL: completed), ms */
    SERVER_FACT_HEALTH,     /* health, health_reason */
    SERVER_FACT_STATE,      /* state, era, protocol_version, tools,
                               rtt_ms */
    SERVER_FACT_TOOLS,      /* tools */
    SERVER_FACT_ENDING,     /* ending (its outcome) */
    SERVER_FACT_SETTLED,    /* ending (its settlement) */
};

struct server_fact {
    enum server_fact_type  type;
    int64_t                at;          /* epoch ms, as recorded */
    const char            *op;          /* must outlive the server */
    const struct failure  *failure;     /* copied */
    double                 ms;
    enum health_state      health;
    const char            *health_reason;   /* copied */
    enum server_state      state;
    enum mcp_era           era;
    const char            *protocol_version;  /* copied */
    long                   tools;       /* -1 unknown */
    double                 rtt_ms;      /* -1 unknown */
    const struct ending   *ending;      /* copied; .server is set to s */
};

/* Make s (new, never started) a replayed server. */
void server_replay_begin(struct server *s);
/* One recorded fact, published as its event (EVENT_LIVENESS too when the
 * record's state changed). Nothing on a live server. */
void server_replay(struct server *s, const struct server_fact *f);
/* Back to no observation (the replay seeks backwards). */
void server_replay_reset(struct server *s);

#endif
