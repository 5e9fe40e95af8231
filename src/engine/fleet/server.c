/*
 * One monitored MCP server: what every kind of server shares (the state,
 * events, the record, health, the operator's commands, lifetime), then
 * its source's table (server_int.h): dialed (server_dialed.c), replay
 * (server_replay.c), tap (server_tap.c). The getters are server_get.c.
 *
 * The invariants: one dial at a time, a session id only from a 2xx
 * initialize, one outcome per exchange, at most one ending a session
 * (kept by the sources that have sessions); every exchange of every kind
 * goes into the record here and out as events, and health is minted once
 * (core/health.c) from what the record says.
 *
 * What this file must never do: ask which kind a server is, reach a
 * transport, or read a clock but libev's (the wall clock only stamps
 * records).
 */
#include "engine/server.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/record.h"
#include "fleet/server_int.h"
#include "mcp/client.h"
#include "util/clock.h"
#include "util/dlog.h"
#include "util/str.h"
#include "util/xmalloc.h"

static const char *const server_state_names[SERVER__COUNT] = {
    [SERVER_IDLE] = "idle",
    [SERVER_DIALING] = "dialing",
    [SERVER_READY] = "ready",
    [SERVER_BACKOFF] = "backoff",
    [SERVER_INVALID] = "invalid",
    [SERVER_UNSUPPORTED] = "unsupported",
    [SERVER_ENDING] = "ending",
    [SERVER_STOPPED] = "stopped",
    [SERVER_PAUSED] = "paused",
    [SERVER_DISABLED] = "disabled",
};

const char *
server_state_name(enum server_state st)
{
    if ((unsigned)st >= SERVER__COUNT)
        return "?";
    return server_state_names[st];
}

/* --- state, events, the record ----------------------------------------- */

ev_tstamp
server_now(const struct server *s)
{
    ev_now_update(s->env->loop);
    return ev_now(s->env->loop);
}

void
server_emit(struct server *s, struct event *e)
{
    e->server = s;
    if (e->ts == 0)
        e->ts = clock_wall_ms();
    if (s->env->emit != NULL)
        s->env->emit(s->env->emit_arg, e);
}

/* What health is minted from, for s now (borrowed from s). */
static void
server_health_input(const struct server *s, struct health_input *in)
{
    *in = (struct health_input){ .liveness = &s->rec.liveness,
        .fail_streak = s->rec.fail_streak,
        .disabled_reason = s->decl->disabled_why,
        .crash_loop = s->crashes > 0 ? s->crash_words : NULL };

    switch (s->state) {
    case SERVER_PAUSED:
        in->operator_state = HEALTH_OPERATOR_PAUSED;
        break;
    case SERVER_STOPPED:
        /* A disabled entry closed at exit stays what it is. */
        in->operator_state = s->stopped_disabled ?
            HEALTH_OPERATOR_DISABLED : HEALTH_OPERATOR_STOPPED;
        break;
    case SERVER_DISABLED:
        in->operator_state = HEALTH_OPERATOR_DISABLED;
        break;
    case SERVER_INVALID:
    case SERVER_UNSUPPORTED:
        in->operator_state = HEALTH_OPERATOR_INVALID;
        break;
    default:
        in->operator_state = HEALTH_OPERATOR_MONITORED;
        break;
    }
    in->probe_failing = s->client != NULL && !client_probe_ok(s->client);
    in->init_refused = s->client != NULL && client_init_refused(s->client);
    in->pagination_loop = s->client != NULL &&
        client_pagination_loop(s->client);
}

/* Health now, minted from the record and the operator's state. */
struct health
server_health_now(const struct server *s)
{
    struct health_input in;

    server_health_input(s, &in);
    return health_of(&in);
}

/* Publish s's health when it changed (EVENT_HEALTH, the first too: the
 * rule is health_track_update's). */
void
server_health_update(struct server *s)
{
    struct health_input in;
    struct event        e = { .type = EVENT_HEALTH,
                              .health = &s->health.health };

    server_health_input(s, &in);
    if (health_track_update(&s->health, &in, clock_wall_ms(),
        &e.health_was))
        server_emit(s, &e);
}

void
server_set_state(struct server *s, enum server_state st)
{
    struct event e = { .type = EVENT_STATE };

    if (s->state == st)
        return;
    s->stopped_disabled = st == SERVER_STOPPED &&
        (s->state == SERVER_DISABLED || s->stopped_disabled);
    s->state = st;
    server_emit(s, &e);
    server_health_update(s);
}

void
server_log(struct server *s, const char *fmt, ...)
{
    va_list ap;

    if (s->env->log == NULL)
        return;
    va_start(ap, fmt);
    dlogv(s->env->log, s->log_name, fmt, ap);
    va_end(ap);
}

void
server_exchange(struct server *s, const char *op, const struct failure *f,
    double ms)
{
    server_exchange_at(s, op, f, ms, clock_wall_ms());
}

void
server_exchange_at(struct server *s, const char *op, const struct failure *f,
    double ms, int64_t at)
{
    struct event e = { .type = EVENT_EXCHANGE };
    bool         changed;

    changed = record_exchange(&s->rec, op, f, ms, at);
    if (f != NULL)
        server_log(s, "%s failed: %s delivered=%s status=%ld site=%s "
            "%.1f ms: %s", op, failure_kind_name(f->kind),
            delivered_name(f->delivered), f->http_status,
            failure_site_name(f->site), ms, f->detail);
    else
        server_log(s, "%s completed in %.1f ms", op, ms);
    e.op = op;
    e.ts = at;
    e.completed = f == NULL;
    e.failure = f;
    e.ms = ms;
    server_emit(s, &e);
    if (changed) {
        struct event le = { .type = EVENT_LIVENESS,
                            .liveness = &s->rec.liveness };

        server_emit(s, &le);
    }
    server_health_update(s);
}

/* --- public ------------------------------------------------------------- */

/* What the table shows as the target: the URL, or the command line with
 * its args as written (an expanded ${VAR} may be a secret). */
static char *
server_make_target(const struct config_server *decl)
{
    char **shown = decl->args_shown != NULL ? decl->args_shown : decl->args;
    const char *cmd = decl->command_shown != NULL ? decl->command_shown
        : decl->command != NULL ? decl->command : "";
    size_t n = strlen(cmd) + 1;
    char  *t, *p;

    if (decl->tap != NULL)
        return xstrdup(decl->tap);
    if (decl->transport == CONFIG_HTTP)
        return xstrdup(decl->url_shown != NULL ? decl->url_shown : "");
    for (size_t i = 0; i < decl->nargs; i++)
        n += strlen(shown[i]) + 1;
    t = xcalloc(1, n + 1);
    p = t + snprintf(t, n + 1, "%s", cmd);
    for (size_t i = 0; i < decl->nargs; i++) {
        size_t len = strlen(shown[i]);

        *p++ = ' ';
        memcpy(p, shown[i], len);
        p += len;
    }
    *p = '\0';
    return t;
}

struct server *
server_new(const struct server_env *env, const struct config_server *decl,
    size_t index)
{
    struct server *s = xcalloc(1, sizeof(*s));

    s->index = index;
    s->env = env;
    s->decl = decl;
    s->state = SERVER_IDLE;
    s->log_name = str_sanitized(decl->name != NULL ? decl->name : "?");
    s->target = server_make_target(decl);
    record_init(&s->rec);
    s->cenv.loop = env->loop;
    s->cenv.curl = env->curl;
    s->cenv.log = env->log;
    s->cenv.no_streams = env->no_streams;
    s->cenv.no_pings = env->no_pings;
    s->cenv.test_keep_id = env->test_keep_id;
    /* Every server has a client over its declaration: a tap's and a
     * replay's is never dialed, and what its transport knows is empty. */
    s->client = client_new(&server_client_host, s, &s->cenv, decl, index,
        s->log_name);
    s->source = &server_source_dialed;
    if (decl->tap != NULL)
        server_tap_begin(s);
    ev_timer_init(&s->tick, server_tick_cb, 0., 0.);
    s->tick.data = s;
    ev_timer_init(&s->crash_timer, server_crash_cb, 0., 0.);
    s->crash_timer.data = s;
    return s;
}

void
server_start(struct server *s)
{
    if (s->decl->disabled && s->decl->invalid == NULL) {
        /* Not an observation, not a failure: nothing happens to it. */
        server_set_state(s, SERVER_DISABLED);
        return;
    }
    if (s->decl->invalid != NULL) {
        struct failure_evidence evd = { .config_invalid = true };
        struct failure          f;

        server_set_state(s, SERVER_INVALID);
        failure_make(&f, &evd, FAILURE_SITE_CONNECT, s->decl->invalid);
        server_exchange(s, "dial", &f, 0);
        return;
    }
    s->source->dial(s);
}

bool
server_enable(struct server *s)
{
    if (s->state != SERVER_DISABLED || s->source->inert)
        return false;
    server_set_state(s, SERVER_IDLE);
    server_log(s, "enabled for this run");
    s->source->dial(s);
    return true;
}

void
server_pause(struct server *s)
{
    if ((s->state != SERVER_READY && s->state != SERVER_BACKOFF) ||
        s->source->inert)
        return;
    s->paused_from = s->state;
    ev_timer_stop(s->env->loop, &s->tick);
    s->source->pause(s);
    s->dial_due = false;
    server_log(s, "monitoring paused");
    server_set_state(s, SERVER_PAUSED);
}

void
server_resume(struct server *s)
{
    if (s->state != SERVER_PAUSED || s->source->inert)
        return;
    server_log(s, "monitoring resumed");
    s->source->resume(s);
}

void
server_redial(struct server *s)
{
    if (s->state == SERVER_INVALID || s->state == SERVER_UNSUPPORTED ||
        s->state == SERVER_DIALING || s->state == SERVER_ENDING ||
        s->state == SERVER_DISABLED || s->source->inert)
        return;
    s->source->redial(s);
}

bool
server_ping_now(struct server *s)
{
    return !s->source->inert && s->source->ping(s, false);
}

bool
server_probe_now(struct server *s)
{
    return s->state == SERVER_READY && !s->source->inert &&
        s->source->probe(s);
}

const struct ending *
server_end(struct server *s, bool redial)
{
    return s->source->inert ? NULL : s->source->end(s, redial);
}

const struct ending *
server_end_session(struct server *s, const char *session_id)
{
    return s->source->inert ? NULL : s->source->end_session(s, session_id);
}

bool
server_cancel_request(struct server *s, const char *id, const char *reason)
{
    return s->source->cancel(s, id, reason);
}

bool
server_ending_busy(const struct server *s)
{
    return s->busy > 0;
}

void
server_stop(struct server *s)
{
    s->source->stop(s);
    client_stop(s->client);
    ev_timer_stop(s->env->loop, &s->tick);
    ev_timer_stop(s->env->loop, &s->crash_timer);
    if (s->state != SERVER_INVALID && s->state != SERVER_UNSUPPORTED)
        server_set_state(s, SERVER_STOPPED);
}

void
server_free(struct server *s)
{
    if (s == NULL)
        return;
    server_stop(s);
    s->source->free(s);
    client_free(s->client);
    record_done(&s->rec);
    free(s->target);
    free(s->log_name);
    free(s);
}
