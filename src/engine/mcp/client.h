/*
 * The MCP lifecycle with one server (engine-private), transport-blind:
 * era negotiation (the server/discover probe, -32022, the fallbacks), the
 * legacy dial (initialize, notifications/initialized, tools/list to the
 * last page) or the modern one (server/discover, then the listing), pings
 * or discover as the liveness exchange, list_changed -> a re-list, the
 * server stream (the GET stream, or subscriptions/listen). It owns the
 * transport and every request in flight; it reports each exchange's one
 * outcome up through a struct client_host (as ending.c reports through
 * struct endings_host) and never sees its owner, which keeps the state,
 * the schedule and the record.
 */
#ifndef MCPTOP_ENGINE_CLIENT_H
#define MCPTOP_ENGINE_CLIENT_H

#include <ev.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include <stdio.h>

#include "engine/config.h"
#include "engine/failure.h"
#include "engine/mcp.h"

struct client;
struct curlev;
struct ending_run;
struct transport;
struct transport_env;

/* What every client of a fleet shares. Borrowed; outlives the client. */
struct client_env {
    struct ev_loop *loop;
    struct curlev  *curl;
    FILE           *log;            /* debug log of exchanges, or NULL */
    bool            no_streams;     /* never open the server stream */
    bool            no_pings;       /* no periodic pings or deep checks */
    bool            test_keep_id;   /* test hook: keep an ended session's
                                       id (transport_env.test_keep_id) */
};

/* Where the owner stands, as far as the lifecycle needs to know: it
 * dials only while DIALING and pings, re-lists and streams only while
 * READY. */
enum client_phase {
    CLIENT_PHASE_OTHER,     /* anything else: ending, paused, stopped ... */
    CLIENT_PHASE_DIALING,
    CLIENT_PHASE_READY,
};

/*
 * What an exchange told of the session or the connection: the lifecycle's
 * reading, from the protocol alone. What follows (the next ping, a dial
 * now, a dial after a backoff, nothing) is the host's retry policy.
 */
enum client_loss {
    CLIENT_LOSS_NONE,       /* nothing: a liveness exchange ended,
                               completed or failed */
    CLIENT_LOSS_UNSURE,     /* the transport saw something only a new
                               exchange can tell */
    CLIENT_LOSS_SESSION,    /* a request that carried the session id was
                               told it is gone (404), or it was presumed
                               lost (400, a JSON-RPC error with a null id) */
    CLIENT_LOSS_ERA_STALE,  /* the remembered modern era stopped working
                               (400, 404 or 405 to the liveness exchange) */
    CLIENT_LOSS_ERA_PROVEN, /* a late DiscoverResult proved modern on a
                               legacy session */
    CLIENT_LOSS_UNREACHABLE,/* a liveness exchange found nothing listening,
                               or the transport dead */
    CLIENT_LOSS_CONNECTION, /* the transport reported the connection gone */
};

/*
 * What the lifecycle reports to its owner and asks of it. Each member is
 * called with the arg given to client_new; none may free the client.
 * Pointers passed in are borrowed for the call unless a member says it
 * takes them.
 */
struct client_host {
    /* --- reports ---------------------------------------------------- */
    /* One exchange ended with its one outcome: f NULL when it completed,
     * else its failure (site request). op is a static string ("ping",
     * "tools/list", ...); ms its duration (monotonic). */
    void (*exchange)(void *arg, const char *op, const struct failure *f,
        double ms);
    /* The dial ended after ms: f NULL when it completed (the session is
     * open), else its failure (site connect, the step named in its
     * detail). */
    void (*dial_done)(void *arg, const struct failure *f, double ms);
    /* What follows loss, by the server's retry policy: the next ping
     * (NONE), a ping now (UNSURE), or a dial now or after a backoff (the
     * others, once retries said yes and the session was dropped). */
    void (*retry)(void *arg, enum client_loss loss);
    /* End a session the lifecycle was issued but will not use, by the
     * ending procedure; half_open when a failed or abandoned dial left it
     * (DESIGN.md section 5), not a session that was open (lost, a redial,
     * the connection gone). Takes session; protocol_version (may be NULL)
     * and why (may be NULL) are borrowed. */
    void (*end_orphan)(void *arg, char *session,
        const char *protocol_version, const char *why, bool half_open);
    /* A listing found a different tool set of ntools tools. */
    void (*tools_changed)(void *arg, long ntools);
    /* One more (on) or one less (off) piece of work that keeps the owner
     * busy (an abandoned initialize left to settle). */
    void (*busy)(void *arg, bool on);
    /* The server asked for a wait (Retry-After on 429/503), seconds:
     * nothing goes to it before then. */
    void (*retry_after)(void *arg, long seconds);
    /* The server sent a request of its own, which was answered at once:
     * kind, its method (sanitized) and id (described: `7 (number)`), and
     * what was answered ("result", "-32601"). All borrowed. May be NULL. */
    void (*asked)(void *arg, enum mcp_asked kind, const char *method,
        const char *id, const char *answered);

    /* --- questions -------------------------------------------------- */
    /* The owner's phase (the lifecycle acts only when it allows). */
    enum client_phase (*phase)(void *arg);
    /* The retry policy's question: does the server dial again after
     * loss (never asked for CLIENT_LOSS_NONE or _UNSURE)? Asked before
     * the lifecycle acts on a loss: on true it records the failure as
     * that loss, drops the session and calls retry; on false it goes on
     * with the session. */
    bool (*retries)(void *arg, enum client_loss loss);
    /* The loop's time, updated (monotonic seconds). */
    ev_tstamp (*now)(void *arg);
    /* The request timeout and the dial's open deadline, ms. */
    long (*timeout_ms)(void *arg);
    long (*open_deadline_ms)(void *arg);
    /* Seconds left of a wait the server asked for, 0 when none. */
    double (*wait_left)(void *arg);
    /* A line for the debug log (printf-style). */
    void (*log)(void *arg, const char *fmt, va_list ap);

    /* --- construction ----------------------------------------------- */
    /* Make a transport for env (borrowed: the client's, outlives the
     * transport), which the client then owns: a test's fake. NULL (the
     * member, or what it returns) means transport_new (stdio for a
     * command, Streamable HTTP for a URL). */
    struct transport *(*make_transport)(void *arg,
        const struct transport_env *env);
};

/* A client reporting to host with arg (both borrowed, outlive it). env and
 * decl are borrowed too; index is the server's number in its fleet,
 * log_name its sanitized name. Never NULL. */
struct client *client_new(const struct client_host *host, void *arg,
    const struct client_env *env, const struct config_server *decl,
    size_t index, const char *log_name);
/* Close locally and free. NULL does nothing. */
void client_free(struct client *c);

/* Begin a dial (the server is DIALING). */
void client_dial(struct client *c);
/* Send the liveness exchange now; false when one is in flight or it could
 * not start (the failure is recorded). */
bool client_ping(struct client *c, bool scheduled);
/* The ping timer fired on a ready server: re-list when ttlMs ran out. */
void client_tick(struct client *c);
/* End the current session through run (server_end): in-flight
 * initializes are left to settle (their sessions end half-open), the
 * modern era's ending is sessionless, everything else stops. */
void client_end(struct client *c, struct ending_run *run);
/* Forget the session without ending it and stop everything (local close). */
void client_stop(struct client *c);

/* The transport (for the ending procedure and the stdio getters). */
struct transport *client_transport(const struct client *c);
/* stdio: how many children this client started this run. */
unsigned long client_spawns(const struct client *c);
bool client_has_session(const struct client *c);
enum mcp_era client_era(const struct client *c);
void client_session(const struct client *c, struct mcp_session_info *out);
long client_tools(const struct client *c);
const char *client_tool_name(const struct client *c, long i);
double client_rtt_ms(const struct client *c);
bool client_last_ping_ok(const struct client *c);
bool client_dialed_once(const struct client *c);
unsigned long client_pings_done(const struct client *c);
unsigned long client_expiries(const struct client *c);
/* The deep check: call probe_tool now (false when none is configured,
 * one is in flight, or no session is open). */
bool client_probe_now(struct client *c);
/* Its last completed round trip, ms (-1 none); notices seen during calls. */
double client_probe_ms(const struct client *c);
unsigned long client_probe_notices(const struct client *c);
/* True while the last dial was refused at initialize with a JSON-RPC
 * error, and none has completed since: the server answers but cannot be
 * initialized (DESIGN.md section 4b). */
bool client_init_refused(const struct client *c);
/* Requests of kind the server sent and mcptop answered, since the client
 * was made (0 for NULL). */
unsigned long client_asked(const struct client *c, enum mcp_asked kind);
/* False only when the last deep check (completed) failed. */
bool client_probe_ok(const struct client *c);
/* True while the last listing stopped at a repeated nextCursor; with how
 * (borrowed, safe to show) or NULL. */
bool client_pagination_loop(const struct client *c);
const char *client_list_note(const struct client *c);
/* The liveness exchange's method: "ping", "tools/list" (the server
 * answered ping with -32601 this session) or "server/discover"
 * (2026-07-28). Static string. */
const char *client_liveness_method(const struct client *c);
/* The note of the era verdict's evidence, or NULL. */
const char *client_warning(const struct client *c);
size_t client_capabilities(const struct client *c, const char **names,
    size_t max);

#endif
