/*
 * A server read from a tap (issue 31; tap/tap_source.h): its record is
 * made of what the tap observed of an agent's own traffic, each exchange
 * stamped when the tap saw it, its op the JSON-RPC method; the link to the
 * tap is an exchange of the monitor's own (op "tap": a tap that is not
 * there, or goes away, is down with the reason). The server is READY while
 * linked, BACKOFF while not; it is never dialed, pinged or ended.
 */
#include "engine/server.h"

#include <stdio.h>
#include <string.h>

#include "fleet/server_int.h"
#include "fleet/tap_source.h"

const char *
server_request_phase_name(enum server_request_phase p)
{
    switch (p) {
    case SERVER_REQUEST_START:
        return "start";
    case SERVER_REQUEST_PROGRESS:
        return "progress";
    case SERVER_REQUEST_END:
        return "end";
    case SERVER_REQUEST_CANCEL_OK:
        return "cancel_ok";
    case SERVER_REQUEST_CANCEL_FAILED:
        return "cancel_failed";
    }
    return "?";
}

/* tap_source_host.exchange */
static void
server_tap_exchange_cb(void *arg, const char *op, const struct failure *f,
    double ms, int64_t at)
{
    server_exchange_at(arg, op, f, ms, at);
}

/* tap_source_host.link */
static void
server_tap_link_cb(void *arg, bool up, const struct failure *f)
{
    struct server *s = arg;

    s->tap_settled = true;
    if (up) {
        server_set_state(s, SERVER_READY);
        return;
    }
    server_exchange(s, "tap", f, 0);
    if (s->state != SERVER_STOPPED && s->state != SERVER_PAUSED)
        server_set_state(s, SERVER_BACKOFF);
}

/* tap_source_host.request */
static void
server_tap_request_cb(void *arg, enum server_request_phase phase,
    const struct server_request *r)
{
    struct event e = { .type = EVENT_REQUEST, .request_phase = (int)phase,
                       .request = r };

    server_emit(arg, &e);
}

static const struct tap_source_host server_tap_host = {
    .exchange = server_tap_exchange_cb,
    .link = server_tap_link_cb,
    .request = server_tap_request_cb,
};

void
server_tap_new(struct server *s)
{
    s->tap = tap_source_new(s->env->loop, s->decl->tap, &server_tap_host, s);
}

void
server_tap_start(struct server *s)
{
    if (s->tap == NULL || s->state == SERVER_STOPPED ||
        s->state == SERVER_DISABLED || s->state == SERVER_INVALID)
        return;
    if (s->state == SERVER_IDLE)
        server_set_state(s, SERVER_DIALING);
    tap_source_start(s->tap);
}

void
server_tap_stop(struct server *s)
{
    if (s->tap != NULL)
        tap_source_stop(s->tap);
}

void
server_tap_free(struct server *s)
{
    tap_source_free(s->tap);
    s->tap = NULL;
}

bool
server_is_tap(const struct server *s)
{
    return s->tap != NULL;
}

size_t
server_in_flight(const struct server *s)
{
    return s->tap != NULL ? tap_source_in_flight(s->tap) : 0;
}

const struct server_request *
server_request(const struct server *s, size_t i)
{
    return s->tap != NULL ? tap_source_request(s->tap, i) : NULL;
}

bool
server_cancel_request(struct server *s, const char *id, const char *reason)
{
    return s->tap != NULL && tap_source_cancel(s->tap, id, reason) == 0;
}

long
server_agent_sessions(const struct server *s)
{
    return s->tap != NULL ? tap_source_sessions(s->tap) : -1;
}

const struct server_agent_session *
server_agent_session(const struct server *s, size_t i)
{
    return s->tap != NULL ? tap_source_session(s->tap, i) : NULL;
}
