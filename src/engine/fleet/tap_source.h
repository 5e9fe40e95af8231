/*
 * The monitor's side of a tap (issue 31): a server declared {"tap": PATH}
 * is shown from what the tap at PATH observed, never dialed. The source
 * connects to the socket (non-blocking, on the loop), reads the snapshot
 * and the event stream, and reports up through its host: each exchange
 * the tap classified (its op is the JSON-RPC method), the link to the tap
 * (a connect that fails or a tap that goes away is an exchange of the
 * monitor's own, op "tap"), and the in-flight ledger. A gap in the stream
 * asks for a fresh snapshot. It reconnects with a capped backoff.
 */
#ifndef MCPTOP_TAP_SOURCE_H
#define MCPTOP_TAP_SOURCE_H

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/failure.h"
#include "engine/server.h"

struct tap_source;

struct tap_source_host {
    /* An exchange: op lives as long as the source; f NULL completed; at
     * the epoch ms it was observed. */
    void (*exchange)(void *arg, const char *op, const struct failure *f,
        double ms, int64_t at);
    /* The link to the tap: up, or down with f (why). */
    void (*link)(void *arg, bool up, const struct failure *f);
    /* The ledger changed: r started, progressed or ended (phase), or a
     * cancel was answered (SERVER_REQUEST_CANCEL_*). r is valid during
     * the call. */
    void (*request)(void *arg, enum server_request_phase phase,
        const struct server_request *r);
};

/* New source for the socket at path (copied). Nothing happens until
 * tap_source_start. Never NULL. */
struct tap_source *tap_source_new(struct ev_loop *loop, const char *path,
    const struct tap_source_host *host, void *arg);
/* Connect now (and again after a loss, with backoff). */
void tap_source_start(struct tap_source *ts);
/* Disconnect and stop reconnecting. */
void tap_source_stop(struct tap_source *ts);
/* NULL does nothing. */
void tap_source_free(struct tap_source *ts);

bool tap_source_connected(const struct tap_source *ts);
/* The ledger, oldest first. Borrowed until the next event. */
size_t tap_source_in_flight(const struct tap_source *ts);
const struct server_request *tap_source_request(const struct tap_source *ts,
    size_t i);
/* What the tap's snapshot said of itself: its pid, its server's pid (0
 * when none), the command (sanitized, "" before a snapshot). */
long tap_source_pid(const struct tap_source *ts, long *server_pid);
const char *tap_source_command(const struct tap_source *ts);
/* An HTTP tap's agent sessions (its last snapshot); -1 for a stdio tap
 * or before a snapshot. */
long tap_source_sessions(const struct tap_source *ts);
const struct server_agent_session *tap_source_session(
    const struct tap_source *ts, size_t i);
/* Ask the tap to cancel the agent's request id (its JSON text) with
 * reason (may be NULL). -1 when not connected. The answer comes as a
 * request report of phase SERVER_REQUEST_CANCEL_OK or _FAILED. */
int tap_source_cancel(struct tap_source *ts, const char *id,
    const char *reason);

#endif
