/*
 * The tap source (server_int.h): a server read from a tap (issue 31;
 * fleet/tap_source.h). Its record is made of what the tap observed of an
 * agent's own traffic, each exchange stamped when the tap saw it, its op
 * the JSON-RPC method; the link to the tap is an exchange of the
 * monitor's own (op "tap": a tap that is not there, or goes away, is down
 * with the reason). The server is READY while linked, BACKOFF while not;
 * it is never dialed, pinged or ended.
 */
#include "engine/server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/server_int.h"
#include "fleet/tap_source.h"
#include "util/xmalloc.h"

/* The source's own: the reader of the tap, and whether its first link is
 * known. */
struct server_tap {
    struct tap_source *src;
    bool               settled;
};

static struct server_tap *
server_tap_of(const struct server *s)
{
    return s->source_data;
}

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

    server_tap_of(s)->settled = true;
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
server_tap_begin(struct server *s)
{
    struct server_tap *tp = xcalloc(1, sizeof(*tp));

    tp->src = tap_source_new(s->env->loop, s->decl->tap, &server_tap_host,
        s);
    s->source = &server_source_tap;
    s->source_data = tp;
}

/* server_source_ops.dial: a tap's server is read, never dialed: (re)connect
 * to it. */
static void
server_tap_dial(struct server *s)
{
    if (s->state == SERVER_STOPPED || s->state == SERVER_DISABLED ||
        s->state == SERVER_INVALID)
        return;
    if (s->state == SERVER_IDLE)
        server_set_state(s, SERVER_DIALING);
    tap_source_start(server_tap_of(s)->src);
}

/* server_source_ops.stop, .pause */
static void
server_tap_stop(struct server *s)
{
    tap_source_stop(server_tap_of(s)->src);
}

/* server_source_ops.redial: a new link. */
static void
server_tap_redial(struct server *s)
{
    server_tap_stop(s);
    server_tap_dial(s);
}

/* server_source_ops.resume */
static void
server_tap_resume(struct server *s)
{
    server_set_state(s, SERVER_BACKOFF);
    server_tap_dial(s);
}

static void
server_tap_free(struct server *s)
{
    struct server_tap *tp = server_tap_of(s);

    tap_source_free(tp->src);
    free(tp);
    s->source_data = NULL;
}

bool
server_is_tap(const struct server *s)
{
    return s->source == &server_source_tap;
}

static const char *
server_tap_transport_name(const struct server *s)
{
    (void)s;
    return "tap";
}

static const char *
server_tap_liveness_method(const struct server *s)
{
    (void)s;
    return "traffic";
}

/* A tap's server has no session of mcptop's own. */
static void
server_tap_session(const struct server *s, struct mcp_session_info *out)
{
    server_dialed_session(s, out);
    out->open = false;
}

static bool
server_tap_dial_settled(const struct server *s)
{
    return server_tap_of(s)->settled || s->state == SERVER_INVALID ||
        s->state == SERVER_DISABLED;
}

/* The tap's server's pid, as the tap's snapshot said. */
static long
server_tap_pid(const struct server *s)
{
    long pid = 0;

    tap_source_pid(server_tap_of(s)->src, &pid);
    return pid;
}

static size_t
server_tap_in_flight(const struct server *s)
{
    return tap_source_in_flight(server_tap_of(s)->src);
}

static const struct server_request *
server_tap_request(const struct server *s, size_t i)
{
    return tap_source_request(server_tap_of(s)->src, i);
}

static bool
server_tap_cancel(struct server *s, const char *id, const char *reason)
{
    return tap_source_cancel(server_tap_of(s)->src, id, reason) == 0;
}

static long
server_tap_agent_sessions(const struct server *s)
{
    return tap_source_sessions(server_tap_of(s)->src);
}

static const struct server_agent_session *
server_tap_agent_session(const struct server *s, size_t i)
{
    return tap_source_session(server_tap_of(s)->src, i);
}

const struct server_source_ops server_source_tap = {
    .name = "tap",
    .dial = server_tap_dial,
    .redial = server_tap_redial,
    .pause = server_tap_stop,
    .resume = server_tap_resume,
    .ping = server_no_ping,
    .probe = server_no_probe,
    .end = server_no_end,
    .end_session = server_no_end_session,
    .cancel = server_tap_cancel,
    .stop = server_tap_stop,
    .free = server_tap_free,
    .transport_name = server_tap_transport_name,
    .liveness_method = server_tap_liveness_method,
    .era = server_dialed_era,
    .session = server_tap_session,
    .tools = server_dialed_tools,
    .rtt_ms = server_dialed_rtt_ms,
    .health = server_dialed_health,
    .dial_settled = server_tap_dial_settled,
    .pid = server_tap_pid,
    .ending_count = server_dialed_ending_count,
    .ending = server_dialed_ending,
    .in_flight = server_tap_in_flight,
    .request = server_tap_request,
    .agent_sessions = server_tap_agent_sessions,
    .agent_session = server_tap_agent_session,
};
