/*
 * The server's state, for the files that are parts of it (engine-private:
 * server.c holds the state, the schedule and the retry policy;
 * server_get.c the public getters; server_replay.c a replayed server;
 * server_tap.c a server read from a tap (issue 31); never the
 * lifecycle under mcp/, which reports through struct client_host).
 * See server.c for the invariants.
 */
#ifndef MCPTOP_ENGINE_SERVER_INT_H
#define MCPTOP_ENGINE_SERVER_INT_H

#include <ev.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/server.h"
#include "mcp/client.h"
#include "engine/record.h"

struct client;
struct endings;
struct ending_run;
struct tap_source;
struct server_replay;

struct server {
    const struct server_env    *env;
    const struct config_server *decl;
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
    bool                        stopped_disabled; /* closed while disabled */
    struct server_replay       *replay;     /* a replayed server: fed by
                                               server_replay, never dialed
                                               (server_replay.c) */
    struct tap_source          *tap;        /* decl->tap: read from a tap,
                                               never dialed (server_tap.c) */
    bool                        tap_settled;/* its first link is known */
};

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

/* server_tap.c */
/* The tap source of a server declared {"tap": PATH}. */
void server_tap_new(struct server *s);
/* Connect to the tap (READY once linked, BACKOFF while not). */
void server_tap_start(struct server *s);
void server_tap_stop(struct server *s);
void server_tap_free(struct server *s);


/* server_replay.c: a replayed server's facts, for server.c's getters. */
struct health server_replay_health(const struct server *s, int64_t *since);
long server_replay_tools(const struct server *s);
double server_replay_rtt_ms(const struct server *s);
enum mcp_era server_replay_era(const struct server *s);
void server_replay_session(const struct server *s,
    struct mcp_session_info *out);
size_t server_replay_ending_count(const struct server *s);
const struct ending *server_replay_ending(const struct server *s, size_t i);
void server_replay_free(struct server *s);

#endif
