/*
 * What the lifecycle (client.c) asks of its server (engine-private): the
 * record of every exchange, the state, the schedule (pings, backoff), the
 * busy count, half-open endings, events and the log.
 */
#ifndef MCPTOP_ENGINE_SERVER_PRIV_H
#define MCPTOP_ENGINE_SERVER_PRIV_H

#include <ev.h>
#include <stdbool.h>

#include "engine/failure.h"
#include "engine/server.h"

/* One exchange ended with its one outcome (f NULL: completed): into the
 * record, out as events. op is a static string. */
void server_exchange(struct server *s, const char *op,
    const struct failure *f, double ms);
/* The dial ended: f NULL when it completed (the server is READY, pings are
 * scheduled), else the failure (site connect) and the next dial planned. */
void server_dial_done(struct server *s, const struct failure *f, double ms);
/* The connection is gone (nothing listens, the child exited): dial again
 * with the usual backoff. */
void server_connection_lost(struct server *s);
/* Dial again now (a lost session, an era verdict that stopped working). */
void server_dial_again(struct server *s);
/* Plan the next ping (after one ended). */
void server_ping_scheduled(struct server *s);
/* Ping now, on the next loop turn (a loss to observe). */
void server_ping_soon(struct server *s);
/* The server asked for a wait (Retry-After, seconds): nothing goes to it
 * before then. */
void server_retry_after(struct server *s, long seconds);
/* Seconds left of that wait, 0 when none. */
double server_wait_left(const struct server *s);
/* End a session the lifecycle was issued but will not use (taken), by the
 * same procedure, marked half-open. */
void server_end_orphan(struct server *s, char *session,
    const char *protocol_version, const char *why);
/* A listing found a different tool set. */
void server_tools_changed(struct server *s, long ntools);
/* Count work that keeps the server busy (an abandoned initialize). */
void server_busy(struct server *s, bool *counted, bool on);
/* The debug log. */
void server_log(struct server *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The loop's time, updated (monotonic seconds). */
ev_tstamp server_now(const struct server *s);
/* The server's timeouts, ms, with the command line's overrides. */
long server_timeout_ms(const struct server *s);
long server_open_deadline_ms(const struct server *s);

#endif
