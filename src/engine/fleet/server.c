/*
 * One monitored MCP server: what ties its parts together.
 *
 *   server.c     the state (idle, dialing, ready, backoff, ending...), the
 *                schedule and the retry policy (the liveness exchange at
 *                the interval with jitter, what follows a loss, the next
 *                dial after a backoff with jitter and the server's
 *                Retry-After), events, the public getters
 *   mcp/         the MCP lifecycle, transport-blind; it reports here
 *                through server_client_host (struct client_host)
 *   transport/   Streamable HTTP, 2024-11-05 HTTP+SSE, stdio
 *   ending.c     the ending procedure (one deadline, outcome apart from
 *                settlement, half-open)
 *   record.c     history, streaks, last failure, liveness via liveness_of
 *
 * What this file must never do: reach a transport's details (it sees the
 * transport only to hand it to an ending), or read a clock but libev's
 * (the wall clock only stamps records).
 */
#include "engine/server.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/curlev.h"
#include "mcp/client.h"
#include "transport/ending_run.h"
#include "engine/record.h"
#include "fleet/server_int.h"
#include "transport/transport.h"
#include "util/clock.h"
#include "util/dlog.h"
#include "util/str.h"
#include "util/xmalloc.h"

#define SERVER_BACKOFF_BASE_S   1.0
#define SERVER_BACKOFF_CAP_S    60.0
#define SERVER_PING_SLOT_S      1.0     /* pings due together share one
                                           wake-up */


static void server_dial(struct server *s);
static void server_log(struct server *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

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

/* The loop's time, updated (monotonic seconds). */
static ev_tstamp
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
        .disabled_reason = s->decl->disabled_why };

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

/* The debug log. */
static void
server_log(struct server *s, const char *fmt, ...)
{
    va_list ap;

    if (s->env->log == NULL)
        return;
    va_start(ap, fmt);
    dlogv(s->env->log, s->log_name, fmt, ap);
    va_end(ap);
}

/* One exchange ended with its one outcome (f NULL: completed): into the
 * record, out as events. op is a static string. */
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

/* endings_host.exchange, client_host.exchange */
static void
server_exchange_cb(void *arg, const char *op, const struct failure *f,
    double ms)
{
    server_exchange(arg, op, f, ms);
}

/* endings_host.busy, client_host.busy: one more (on) or one less piece of
 * unsettled work (an ending, an abandoned dial). */
static void
server_busy_cb(void *arg, bool on)
{
    struct server *s = arg;

    if (on) {
        s->busy++;
        if (s->env->busy_total != NULL)
            (*s->env->busy_total)++;
    } else {
        s->busy--;
        if (s->env->busy_total != NULL)
            (*s->env->busy_total)--;
    }
}

/* Arm the tick timer `delay` seconds from now. */
static void
server_tick_in(struct server *s, double delay)
{
    ev_timer_stop(s->env->loop, &s->tick);
    ev_timer_set(&s->tick, delay, 0.);
    ev_timer_start(s->env->loop, &s->tick);
    s->tick_due = ev_now(s->env->loop) + delay;
    s->dial_due = false;
}

double
server_ping_delay(ev_tstamp now, double interval_s, double u, double slot_s)
{
    /* +-10% jitter: a fleet dialed together does not ping in one burst
     * every interval, and the 2026-07-28 caching rules ask it of anyone
     * polling server/discover. */
    double iv = interval_s * (0.9 + 0.2 * u);

    /* The due time then goes to the nearest point of a grid of slot_s, so
     * that the servers due in one slot share one wake-up, and libcurl's
     * timer and pool walk of their multi handle run once for the batch
     * (pings one by one cost twice the CPU of pings in batches;
     * bench/ANALYSIS.md, ANALYSIS-30.md). To the nearest, not up: the
     * mean interval stays the configured one. Short intervals (tests,
     * 4 slots or less) keep their exact time. */
    if (slot_s > 0 && iv > 4 * slot_s) {
        double due = round((now + iv) / slot_s) * slot_s;

        iv = due - now;
    }
    return iv;
}

/* Plan the next ping (after one ended, or a dial completed). */
static void
server_ping_scheduled(struct server *s)
{
    double iv = server_ping_delay(ev_now(s->env->loop),
        s->decl->ping_interval_ms / 1000.0, (double)rand() / RAND_MAX,
        SERVER_PING_SLOT_S);

    ev_timer_stop(s->env->loop, &s->tick);
    if (s->env->no_pings || s->state != SERVER_READY)
        return;
    server_tick_in(s, fmax(iv, server_wait_left(s)));
}

/* Ping on the next loop turn (a loss to observe, a resumed server). */
static void
server_ping_soon(struct server *s)
{
    server_tick_in(s, server_wait_left(s));
}

/* client_host.retry_after: a wait the server asked for (Retry-After,
 * seconds); nothing goes to it before then. */
static void
server_retry_after_cb(void *arg, long seconds)
{
    struct server *s = arg;
    ev_tstamp      until = server_now(s) + (double)seconds;

    if (until > s->not_before)
        s->not_before = until;
    server_log(s, "the server asked for a wait of %ld s: nothing goes to "
        "it before then", seconds);
}

/* Seconds left of that wait, 0 when none. */
double
server_wait_left(const struct server *s)
{
    double left = s->not_before - ev_now(s->env->loop);

    return left > 0 ? left : 0;
}

/* Exponential backoff with jitter, capped; Retry-After wins when given. */
static void
server_schedule_dial(struct server *s)
{
    double delay;
    double jitter = 0.8 + 0.4 * ((double)rand() / RAND_MAX);

    delay = SERVER_BACKOFF_BASE_S * pow(2.0, (double)(s->failed_dials - 1));
    delay = fmin(delay, SERVER_BACKOFF_CAP_S) * jitter;
    delay = fmax(delay, server_wait_left(s));
    server_tick_in(s, delay);
    s->dial_due = true;
    server_log(s, "next dial in %.1f s", delay);
}

/* client_host.dial_done: f NULL when the dial completed (the server is
 * READY, pings are scheduled), else its failure and the next dial planned. */
static void
server_dial_done_cb(void *arg, const struct failure *f, double ms)
{
    struct server *s = arg;

    if (f == NULL) {
        s->failed_dials = 0;
        server_set_state(s, SERVER_READY);
        server_exchange(s, "dial", NULL, ms);
        server_ping_scheduled(s);
        return;
    }
    s->failed_dials++;
    if (s->state == SERVER_STOPPED || s->state == SERVER_ENDING) {
        server_exchange(s, "dial", f, ms);
        return;
    }
    /* Planned first, so that the failure's event can say when. */
    if (!s->env->no_redial)
        server_schedule_dial(s);
    server_exchange(s, "dial", f, ms);
    server_set_state(s, SERVER_BACKOFF);
}

/*
 * The retry policy, all of it: what the server does after a liveness
 * exchange or a loss the lifecycle read (enum client_loss). retries says
 * whether a loss leads to a dial at all (the lifecycle then drops the
 * session), retry what follows:
 *
 *   loss         dials again when           then
 *   none         -                          the next ping at the interval
 *   unsure       -                          a ping now, when ready and
 *                                           pinging
 *   session      redials are allowed        a dial now
 *   era_stale    redials are allowed        a dial now (it probes again)
 *   era_proven   ready                      a dial now
 *   unreachable  redials allowed, ready     a dial after the backoff
 *   connection   ready                      a dial after the backoff
 *
 * Every wait has the server's Retry-After as its floor; pings have
 * jitter on a grid of SERVER_PING_SLOT_S (server_ping_delay), backoffs
 * are exponential with jitter, capped.
 */

/* client_host.retries */
static bool
server_retries_cb(void *arg, enum client_loss loss)
{
    const struct server *s = arg;

    switch (loss) {
    case CLIENT_LOSS_SESSION:
    case CLIENT_LOSS_ERA_STALE:
        return !s->env->no_redial;
    case CLIENT_LOSS_ERA_PROVEN:
    case CLIENT_LOSS_CONNECTION:
        return s->state == SERVER_READY;
    case CLIENT_LOSS_UNREACHABLE:
        return !s->env->no_redial && s->state == SERVER_READY;
    case CLIENT_LOSS_NONE:
    case CLIENT_LOSS_UNSURE:
        break;
    }
    return false;
}

/* client_host.retry */
static void
server_retry_cb(void *arg, enum client_loss loss)
{
    struct server *s = arg;

    switch (loss) {
    case CLIENT_LOSS_NONE:
        server_ping_scheduled(s);
        break;
    case CLIENT_LOSS_UNSURE:
        if (s->state == SERVER_READY && !s->env->no_pings)
            server_ping_soon(s);
        break;
    case CLIENT_LOSS_SESSION:
    case CLIENT_LOSS_ERA_STALE:
    case CLIENT_LOSS_ERA_PROVEN:
        server_dial(s);
        break;
    case CLIENT_LOSS_UNREACHABLE:
    case CLIENT_LOSS_CONNECTION:
        s->failed_dials = 1;
        if (s->state == SERVER_PAUSED) {
            /* Resuming dials again. */
            s->paused_from = SERVER_BACKOFF;
            break;
        }
        server_schedule_dial(s);
        server_set_state(s, SERVER_BACKOFF);
        break;
    }
}

/* --- endings ------------------------------------------------------------ */

/* endings_host.event */
static void
server_endings_event_cb(void *arg, enum event_type type,
    const struct ending *end)
{
    struct event e = { .type = type, .ending = end };

    server_emit(arg, &e);
}

/* After the session's own ending settled: dial again, or stay closed. */
static void
server_after_ending(struct server *s)
{
    if (s->state != SERVER_ENDING)
        return;
    if (s->ending_redial) {
        server_set_state(s, SERVER_BACKOFF);
        s->failed_dials = 0;
        server_dial(s);
    } else {
        server_set_state(s, SERVER_STOPPED);
    }
}

/* endings_host.settled */
static void
server_endings_settled_cb(void *arg, struct ending_run *run)
{
    struct server *s = arg;

    if (run != s->ending)
        return;
    if (s->in_end) {
        s->end_settled = true;
        return;
    }
    server_after_ending(s);
}

static const struct endings_host server_endings_host = {
    .event = server_endings_event_cb,
    .exchange = server_exchange_cb,
    .settled = server_endings_settled_cb,
    .busy = server_busy_cb,
};

static struct endings *
server_endings(struct server *s)
{
    if (s->endings == NULL)
        s->endings = endings_new(s->env->loop, s, &server_endings_host, s,
            s->env->log, s->log_name);
    return s->endings;
}

/* client_host.end_orphan: a session the lifecycle was issued but will not
 * use (taken) gets the ending procedure, marked half-open. */
static void
server_end_orphan_cb(void *arg, char *session, const char *protocol_version,
    const char *why)
{
    struct server     *s = arg;
    struct ending_run *run = endings_start(server_endings(s),
        client_transport(s->client), s->decl->teardown_ms, true);

    s->orphan_ended = true;
    if (why != NULL)
        ending_run_note(run, why);
    ending_run_go(run, session, protocol_version);
}

/* --- what the lifecycle reports and asks (client_host) ----------------- */

/* The table's other members sit with what they serve: exchange and busy
 * with the record, dial_done, retries, retry and retry_after with the
 * schedule, end_orphan with the endings. */

/* client_host.tools_changed */
static void
server_tools_changed_cb(void *arg, long ntools)
{
    struct event e = { .type = EVENT_TOOLS_CHANGED, .tools = ntools };

    server_emit(arg, &e);
}

/* client_host.phase: the two states the lifecycle acts in. */
static enum client_phase
server_phase_cb(void *arg)
{
    switch (server_state(arg)) {
    case SERVER_DIALING:
        return CLIENT_PHASE_DIALING;
    case SERVER_READY:
        return CLIENT_PHASE_READY;
    default:
        return CLIENT_PHASE_OTHER;
    }
}

/* client_host.now */
static ev_tstamp
server_now_cb(void *arg)
{
    return server_now(arg);
}

/* client_host.timeout_ms: the server's, or the command line's. */
static long
server_timeout_ms_cb(void *arg)
{
    const struct server *s = arg;

    return s->env->timeout_ms > 0 ? s->env->timeout_ms : s->decl->timeout_ms;
}

/* client_host.open_deadline_ms: the server's, or the command line's. */
static long
server_open_deadline_ms_cb(void *arg)
{
    const struct server *s = arg;

    return s->env->open_deadline_ms > 0 ? s->env->open_deadline_ms :
        s->decl->open_deadline_ms;
}

/* client_host.wait_left */
static double
server_wait_left_cb(void *arg)
{
    return server_wait_left(arg);
}

/* client_host.log */
static void
server_log_cb(void *arg, const char *fmt, va_list ap)
{
    struct server *s = arg;

    if (s->env->log != NULL)
        dlogv(s->env->log, s->log_name, fmt, ap);
}

static const struct client_host server_client_host = {
    .exchange = server_exchange_cb,
    .dial_done = server_dial_done_cb,
    .retries = server_retries_cb,
    .retry = server_retry_cb,
    .end_orphan = server_end_orphan_cb,
    .tools_changed = server_tools_changed_cb,
    .busy = server_busy_cb,
    .retry_after = server_retry_after_cb,
    .phase = server_phase_cb,
    .now = server_now_cb,
    .timeout_ms = server_timeout_ms_cb,
    .open_deadline_ms = server_open_deadline_ms_cb,
    .wait_left = server_wait_left_cb,
    .log = server_log_cb,
};

const struct ending *
server_end(struct server *s, bool redial)
{
    if (s->replay != NULL)
        return NULL;
    struct ending_run *run;

    if (s->ending != NULL && !ending_run_settled(s->ending))
        return ending_run_view(s->ending);
    if (s->state == SERVER_INVALID || s->state == SERVER_UNSUPPORTED ||
        s->state == SERVER_STOPPED || s->state == SERVER_IDLE ||
        s->state == SERVER_DISABLED || s->tap != NULL)
        return NULL;
    run = endings_start(server_endings(s), client_transport(s->client),
        s->decl->teardown_ms, false);
    s->ending = run;
    s->ending_redial = redial;
    ev_timer_stop(s->env->loop, &s->tick);
    server_set_state(s, SERVER_ENDING);
    if (!client_has_session(s->client)) {
        char why[160];

        /* The dial's failure only while it is the last word: after a
         * recovery it describes another time (it was said stale). */
        bool dial_failed = s->rec.has_failure && s->rec.fail_streak > 0 &&
            strcmp(s->rec.last_failure_op, "dial") == 0;

        if (s->orphan_ended && dial_failed)
            snprintf(why, sizeof(why), "no session open: the dial failed "
                "(%s) and the session it was issued was ended (half-open); "
                "nothing more sent", failure_kind_name(
                s->rec.last_failure.kind));
        else if (dial_failed)
            snprintf(why, sizeof(why), "no session id was issued (the dial "
                "failed: %s); nothing sent",
                failure_kind_name(s->rec.last_failure.kind));
        else
            snprintf(why, sizeof(why), "no session id was issued; nothing "
                "sent");
        ending_run_note(run, why);
    }
    /* The ending may settle at once; act on it once it is all sent. */
    s->in_end = true;
    s->end_settled = false;
    client_end(s->client, run);
    s->in_end = false;
    if (s->end_settled)
        server_after_ending(s);
    return ending_run_view(run);
}

const struct ending *
server_test_repeat_delete(struct server *s)
{
    struct transport  *t = client_transport(s->client);
    struct ending_run *run;

    if (!transport_end_again(t, NULL) || server_ending_busy(s))
        return NULL;
    run = endings_start(server_endings(s), t, s->decl->teardown_ms, false);
    ending_run_note(run, "test hook: the same session's DELETE sent again");
    transport_end_again(t, run);
    return ending_run_view(run);
}

size_t
server_ending_count(const struct server *s)
{
    if (s->replay != NULL)
        return server_replay_ending_count(s);
    return endings_count(s->endings);
}

const struct ending *
server_ending(const struct server *s, size_t i)
{
    if (s->replay != NULL)
        return server_replay_ending(s, i);
    return endings_get(s->endings, i);
}

bool
server_ending_busy(const struct server *s)
{
    return s->busy > 0;
}

/* --- dialing and the schedule ------------------------------------------- */

static void
server_dial(struct server *s)
{
    if (s->tap != NULL) {
        /* A tap's server is read, never dialed: (re)connect to it. */
        server_tap_start(s);
        return;
    }
    if (s->state == SERVER_DIALING || s->state == SERVER_STOPPED ||
        s->state == SERVER_ENDING || s->state == SERVER_PAUSED ||
        s->state == SERVER_DISABLED)
        return;
    if (server_wait_left(s) > 0) {
        /* The server asked for a wait: the dial goes when it passes. */
        server_tick_in(s, server_wait_left(s));
        s->dial_due = true;
        server_set_state(s, SERVER_BACKOFF);
        return;
    }
    ev_timer_stop(s->env->loop, &s->tick);
    s->dial_due = false;
    s->orphan_ended = false;
    s->dials++;
    server_set_state(s, SERVER_DIALING);
    client_dial(s->client);
}

static bool server_ping_if_ready(struct server *s, bool scheduled);

/* ev_timer: the next ping, or the next dial after a backoff. */
static void
server_tick_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct server *s = w->data;

    (void)loop;
    (void)revents;
    if (s->state == SERVER_READY) {
        client_tick(s->client);
        if (!server_ping_if_ready(s, true))
            server_ping_scheduled(s);
    } else if (s->state == SERVER_BACKOFF) {
        server_dial(s);
    }
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
    s->cenv.stream_idle_ms = env->stream_idle_ms;
    s->client = client_new(&server_client_host, s, &s->cenv, decl, index,
        s->log_name);
    if (decl->tap != NULL)
        server_tap_new(s);
    ev_timer_init(&s->tick, server_tick_cb, 0., 0.);
    s->tick.data = s;
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
    server_dial(s);
}

bool
server_enable(struct server *s)
{
    if (s->state != SERVER_DISABLED || s->replay != NULL)
        return false;
    server_set_state(s, SERVER_IDLE);
    server_log(s, "enabled for this run");
    server_dial(s);
    return true;
}

void
server_pause(struct server *s)
{
    if ((s->state != SERVER_READY && s->state != SERVER_BACKOFF) ||
        s->replay != NULL)
        return;
    s->paused_from = s->state;
    ev_timer_stop(s->env->loop, &s->tick);
    server_tap_stop(s);
    s->dial_due = false;
    server_log(s, "monitoring paused");
    server_set_state(s, SERVER_PAUSED);
}

void
server_resume(struct server *s)
{
    if (s->state != SERVER_PAUSED || s->replay != NULL)
        return;
    server_log(s, "monitoring resumed");
    if (s->tap != NULL) {
        server_set_state(s, SERVER_BACKOFF);
        server_tap_start(s);
        return;
    }
    if (s->paused_from == SERVER_READY && client_has_session(s->client)) {
        server_set_state(s, SERVER_READY);
        server_ping_soon(s);
        return;
    }
    server_set_state(s, SERVER_BACKOFF);
    server_dial(s);
}

const struct ending *
server_end_session(struct server *s, const char *session_id)
{
    struct transport  *t = client_transport(s->client);
    struct ending_run *run;

    if (session_id == NULL || session_id[0] == '\0' ||
        !transport_has_stream(t) || server_ending_busy(s) ||
        s->state == SERVER_INVALID)
        return NULL;
    run = endings_start(server_endings(s), t, s->decl->teardown_ms, false);
    {
        char prefix[12], note[96];

        /* The id is a credential: only its first characters are shown. */
        str_sanitize(prefix, sizeof(prefix), session_id,
            strlen(session_id) < 8 ? strlen(session_id) : 8);
        snprintf(note, sizeof(note), "a session mcptop did not open (id "
            "%s...)", prefix);
        ending_run_note(run, note);
    }
    ending_run_go(run, xstrdup(session_id), NULL);
    return ending_run_view(run);
}

void
server_redial(struct server *s)
{
    if (s->state == SERVER_INVALID || s->state == SERVER_UNSUPPORTED ||
        s->state == SERVER_DIALING || s->state == SERVER_ENDING ||
        s->state == SERVER_DISABLED || s->replay != NULL)
        return;
    if (s->tap != NULL) {
        server_tap_stop(s);
        server_tap_start(s);
        return;
    }
    if (client_has_session(s->client)) {
        /* The old session gets the ending procedure first (shown in the
         * endings); the fresh dial follows once it settles. */
        server_end(s, true);
        return;
    }
    server_set_state(s, SERVER_BACKOFF);
    server_dial(s);
}

/* Ping if ready; scheduled: the tick's ping, the interval's last
 * exchange (see TRANSPORT_IDLE_AFTER). */
static bool
server_ping_if_ready(struct server *s, bool scheduled)
{
    if (s->state != SERVER_READY || server_wait_left(s) > 0 ||
        s->tap != NULL || s->replay != NULL)
        return false;
    return client_ping(s->client, scheduled);
}

bool
server_ping_now(struct server *s)
{
    return server_ping_if_ready(s, false);
}

void
server_stop(struct server *s)
{
    server_tap_stop(s);
    client_stop(s->client);
    endings_stop(s->endings);
    ev_timer_stop(s->env->loop, &s->tick);
    if (s->state != SERVER_INVALID && s->state != SERVER_UNSUPPORTED)
        server_set_state(s, SERVER_STOPPED);
}

void
server_free(struct server *s)
{
    if (s == NULL)
        return;
    server_stop(s);
    server_tap_free(s);
    client_free(s->client);
    endings_free(s->endings);
    server_replay_free(s);
    record_done(&s->rec);
    free(s->target);
    free(s->log_name);
    free(s);
}

