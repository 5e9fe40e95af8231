/*
 * The MCP lifecycle with one server (engine-private), transport-blind:
 * era negotiation (the server/discover probe, -32022, the fallbacks), the
 * legacy dial (initialize, notifications/initialized, tools/list to the
 * last page) or the modern one (server/discover, then the listing), pings
 * or discover as the liveness exchange, list_changed -> a re-list, the
 * server stream (the GET stream, or subscriptions/listen). It owns the
 * transport and every request in flight; it reports each exchange's one
 * outcome to its server (server_priv.h), which keeps the state, the
 * schedule and the record.
 */
#ifndef MCPTOP_ENGINE_CLIENT_H
#define MCPTOP_ENGINE_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/config.h"
#include "engine/server.h"

struct client;
struct ending_run;
struct transport;

/* A client for s (borrowed, outlives it). Never NULL. */
struct client *client_new(struct server *s, const struct server_env *env,
    const struct config_server *decl, size_t index, const char *log_name);
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
bool client_has_session(const struct client *c);
enum server_era client_era(const struct client *c);
void client_session(const struct client *c, struct server_session_info *out);
long client_tools(const struct client *c);
const char *client_tool_name(const struct client *c, long i);
double client_rtt_ms(const struct client *c);
bool client_last_ping_ok(const struct client *c);
bool client_dialed_once(const struct client *c);
bool client_ping_in_flight(const struct client *c);
unsigned long client_pings_done(const struct client *c);
unsigned long client_expiries(const struct client *c);
/* The deep check: call probe_tool now (false when none is configured,
 * one is in flight, or no session is open). */
bool client_probe_now(struct client *c);
/* Its last completed round trip, ms (-1 none); notices seen during calls. */
double client_probe_ms(const struct client *c);
unsigned long client_probe_notices(const struct client *c);
/* False only when the last deep check (completed) failed. */
bool client_probe_ok(const struct client *c);
/* The note of the era verdict's evidence, or NULL. */
const char *client_warning(const struct client *c);
size_t client_capabilities(const struct client *c, const char **names,
    size_t max);

#endif
