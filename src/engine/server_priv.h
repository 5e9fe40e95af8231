/*
 * The server's state, for the files that are parts of it (engine-private:
 * server.c and server_replay.c; never the lifecycle under mcp/, which
 * reports through struct client_host). See server.c for the invariants.
 */
#ifndef MCPTOP_ENGINE_SERVER_PRIV_H
#define MCPTOP_ENGINE_SERVER_PRIV_H

#include <ev.h>

#include "engine/server.h"
#include "record.h"

struct client;
struct endings;
struct ending_run;
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
    struct health               health;     /* the last one published */
    bool                        health_set; /* ...once there is one */
    int64_t                     health_since;   /* epoch ms */
    bool                        stopped_disabled; /* closed while disabled */
    struct server_replay       *replay;     /* a replayed server: fed by
                                               server_replay, never dialed
                                               (server_replay.c) */
};

/* Publish e as s's (stamped now when e->ts is 0). */
void server_emit(struct server *s, struct event *e);

/* server_replay.c: a replayed server's facts, for server.c's getters. */
struct health server_replay_health(const struct server *s, int64_t *since);
long server_replay_tools(const struct server *s);
double server_replay_rtt_ms(const struct server *s);
enum server_era server_replay_era(const struct server *s);
void server_replay_session(const struct server *s,
    struct server_session_info *out);
size_t server_replay_ending_count(const struct server *s);
const struct ending *server_replay_ending(const struct server *s, size_t i);
void server_replay_free(struct server *s);

#endif
