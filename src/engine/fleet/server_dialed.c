/*
 * The dialed source (server_int.h): a server mcptop dials itself, through
 * the MCP lifecycle under mcp/, which reports here through
 * server_client_host. Here: the schedule and the retry policy (the
 * liveness exchange at the interval with jitter, what follows a loss, the
 * next dial after a backoff with jitter and the server's Retry-After),
 * the session's endings (transport/ending_run.h), and the facts the
 * lifecycle knows. A child that dies within the crash window of its dial
 * (DESIGN.md 4b) counts as a failed dial: the backoff grows, and health
 * stays down until a child outlives the window.
 *
 * What this file must never do: reach a transport's details (it sees the
 * transport only to hand it to an ending), or read a clock but libev's
 * (the wall clock only stamps records).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/record.h"
#include "fleet/server_int.h"
#include "engine/curlev.h"
#include "mcp/client.h"
#include "transport/ending_run.h"
#include "transport/transport.h"
#include "util/dlog.h"
#include "util/xmalloc.h"

#define SERVER_BACKOFF_BASE_S   1.0
#define SERVER_BACKOFF_CAP_S    60.0
#define SERVER_PING_SLOT_S      1.0     /* pings due together share one
                                           wake-up */
#define SERVER_CRASH_PINGS      2.0     /* a crash window is at least this
                                           many ping intervals */

static void server_dialed_dial(struct server *s);
static bool server_dialed_ping(struct server *s, bool scheduled);

/* --- the record's reports, the busy count ------------------------------- */

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

/* --- the crash window (DESIGN.md 4b) ----------------------------------- */

double
server_crash_window_s(const struct config_server *decl)
{
    if (decl->crash_window_ms > 0)
        return decl->crash_window_ms / 1000.0;
    return fmax(CONFIG_DEFAULT_CRASH_WINDOW_MS / 1000.0,
        SERVER_CRASH_PINGS * (double)decl->ping_interval_ms / 1000.0);
}

/* The session's peer is gone (a stdio child that exited). */
static bool
server_child_gone(const struct server *s)
{
    return !transport_alive(client_transport(s->client));
}

/* What health says while the crashes last (s->crash_words). */
static void
server_crash_words(struct server *s, ev_tstamp now, double window)
{
    if (s->crashes == 1)
        snprintf(s->crash_words, sizeof(s->crash_words), "crash loop: "
            "exited 1 time, %.1f s after its dial (crash window %.0f s)",
            s->crash_life_s, window);
    else
        snprintf(s->crash_words, sizeof(s->crash_words), "crash loop: "
            "exited %u times in %.0f s, each within %.1f s of its dial "
            "(crash window %.0f s)", s->crashes, now - s->crash_first,
            s->crash_life_s, window);
}

/* A session was lost: a crash when its child died within the crash window
 * of its dial (the crashes in a row are the backoff's streak), else the
 * first failure of a new streak. Once a session. */
static void
server_count_loss(struct server *s)
{
    ev_tstamp now = ev_now(s->env->loop);
    double    window = server_crash_window_s(s->decl);
    double    life = now - s->ready_at;

    if (s->loss_planned)
        return;
    s->loss_planned = true;
    ev_timer_stop(s->env->loop, &s->crash_timer);
    if (!server_child_gone(s) || s->ready_at <= 0 || life >= window) {
        s->crashes = 0;
        s->failed_dials = 1;
        return;
    }
    if (s->crashes == 0) {
        s->crash_first = now;
        s->crash_life_s = 0;
    }
    s->crashes++;
    s->crash_life_s = fmax(s->crash_life_s, life);
    s->failed_dials = s->crashes;
    server_crash_words(s, now, window);
    server_log(s, "%s", s->crash_words);
}

/* A session the server no longer knows (404, or presumed lost), lost
 * within the crash window of its dial: the crash loop of a server that
 * forgets every session at once (a replica swap, a restart loop behind a
 * gateway). The first is forgiven and dialed again at once (a server
 * restarted between a dial and the next request); from the second in a
 * row each counts toward the backoff's streak and health stays down.
 * true: the next dial is planned after the backoff. */
static bool
server_session_crash(struct server *s)
{
    ev_tstamp now = ev_now(s->env->loop);
    double    window = server_crash_window_s(s->decl);
    double    life = now - s->ready_at;

    ev_timer_stop(s->env->loop, &s->crash_timer);
    if (s->ready_at <= 0 || life >= window) {
        s->session_losses = 0;
        s->crashes = 0;
        return false;
    }
    if (s->session_losses++ == 0) {
        s->session_loss_first = now;
        s->crash_life_s = life;
        return false;
    }
    s->crashes = s->session_losses - 1;
    s->crash_life_s = fmax(s->crash_life_s, life);
    s->failed_dials = s->crashes;
    snprintf(s->crash_words, sizeof(s->crash_words), "crash loop: the "
        "session was lost %u times in %.0f s, each within %.1f s of its dial "
        "(crash window %.0f s)", s->session_losses, now -
        s->session_loss_first, s->crash_life_s, window);
    server_log(s, "%s", s->crash_words);
    server_schedule_dial(s);
    return true;
}

/* The loss's next dial after the backoff, unless it is planned already. */
static void
server_plan_loss(struct server *s)
{
    server_count_loss(s);
    if (!s->dial_due || !ev_is_active(&s->tick))
        server_schedule_dial(s);
}

void
server_crash_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct server *s = w->data;

    (void)loop;
    (void)revents;
    if (s->state != SERVER_READY || (s->crashes == 0 &&
        s->session_losses == 0))
        return;
    server_log(s, "the session outlived the crash window (%.0f s): %u "
        "crash(es) forgotten", server_crash_window_s(s->decl), s->crashes);
    s->crashes = 0;
    s->session_losses = 0;
    server_health_update(s);
}

/* client_host.exchange: a failure under a session whose child died plans
 * the next dial first, so that the failure's event says when (the retry
 * that follows finds it planned). */
static void
server_client_exchange_cb(void *arg, const char *op,
    const struct failure *f, double ms)
{
    struct server *s = arg;

    if (f != NULL && s->state == SERVER_READY && !s->env->no_redial &&
        server_child_gone(s))
        server_plan_loss(s);
    server_exchange(s, op, f, ms);
}

/* client_host.dial_done: f NULL when the dial completed (the server is
 * READY, pings are scheduled, and after crashes the window is watched),
 * else its failure and the next dial planned. */
static void
server_dial_done_cb(void *arg, const struct failure *f, double ms)
{
    struct server *s = arg;

    if (f == NULL) {
        s->failed_dials = 0;
        s->ready_at = ev_now(s->env->loop);
        s->loss_planned = false;
        ev_timer_stop(s->env->loop, &s->crash_timer);
        if (s->crashes > 0 || s->session_losses > 0) {
            ev_timer_set(&s->crash_timer, server_crash_window_s(s->decl),
                0.);
            ev_timer_start(s->env->loop, &s->crash_timer);
        }
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
 * A loss whose child died within the crash window of its dial is a crash:
 * the crashes in a row are the backoff's streak (1, 2, 4 ... 60 s), and
 * health stays down until a child outlives the window (server_crash_cb).
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
        if (s->state == SERVER_READY && server_session_crash(s)) {
            server_set_state(s, SERVER_BACKOFF);
            break;
        }
        server_dialed_dial(s);
        break;
    case CLIENT_LOSS_ERA_STALE:
    case CLIENT_LOSS_ERA_PROVEN:
        server_dialed_dial(s);
        break;
    case CLIENT_LOSS_UNREACHABLE:
    case CLIENT_LOSS_CONNECTION:
        if (s->state == SERVER_PAUSED) {
            /* Resuming dials again. */
            server_count_loss(s);
            s->paused_from = SERVER_BACKOFF;
            break;
        }
        server_plan_loss(s);
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
        server_dialed_dial(s);
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
 * use (taken) gets the ending procedure, half-open when a dial left it. */
static void
server_end_orphan_cb(void *arg, char *session, const char *protocol_version,
    const char *why, bool half_open)
{
    struct server     *s = arg;
    struct ending_run *run = endings_start(server_endings(s),
        client_transport(s->client), s->decl->teardown_ms, half_open);

    if (half_open)
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

/* client_host.asked: the server's own request, answered. */
static void
server_asked_cb(void *arg, enum mcp_asked kind, const char *method,
    const char *id, const char *answered)
{
    struct event e = { .type = EVENT_ASKED, .asked_kind = (int)kind,
                       .asked_method = method, .asked_id = id,
                       .asked_answer = answered };

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

/* client_host.make_transport: a test's (server_env), else NULL: the
 * declaration's own. */
static struct transport *
server_make_transport_cb(void *arg, const struct transport_env *env)
{
    const struct server *s = arg;

    if (s->env->make_transport == NULL)
        return NULL;
    return s->env->make_transport(s->env->make_transport_arg, env);
}

/* client_host.log */
static void
server_log_cb(void *arg, const char *fmt, va_list ap)
{
    struct server *s = arg;

    if (s->env->log != NULL)
        dlogv(s->env->log, s->log_name, fmt, ap);
}

const struct client_host server_client_host = {
    .exchange = server_client_exchange_cb,
    .dial_done = server_dial_done_cb,
    .retries = server_retries_cb,
    .retry = server_retry_cb,
    .end_orphan = server_end_orphan_cb,
    .tools_changed = server_tools_changed_cb,
    .asked = server_asked_cb,
    .busy = server_busy_cb,
    .retry_after = server_retry_after_cb,
    .phase = server_phase_cb,
    .now = server_now_cb,
    .timeout_ms = server_timeout_ms_cb,
    .open_deadline_ms = server_open_deadline_ms_cb,
    .wait_left = server_wait_left_cb,
    .log = server_log_cb,
    .make_transport = server_make_transport_cb,
};

/* --- endings ------------------------------------------------------------ */

/* server_source_ops.end: the session's ending (DESIGN.md section 5). */
static const struct ending *
server_dialed_end(struct server *s, bool redial)
{
    struct ending_run *run;

    if (s->ending != NULL && !ending_run_settled(s->ending))
        return ending_run_view(s->ending);
    if (s->state == SERVER_INVALID || s->state == SERVER_UNSUPPORTED ||
        s->state == SERVER_STOPPED || s->state == SERVER_IDLE ||
        s->state == SERVER_DISABLED)
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

/* server_source_ops.end_session: `mcptop end --session ID`. */
static const struct ending *
server_dialed_end_session(struct server *s, const char *session_id)
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

/* --- dialing and the schedule ------------------------------------------- */

/* server_source_ops.dial */
static void
server_dialed_dial(struct server *s)
{
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
    s->loss_planned = false;
    s->dials++;
    server_set_state(s, SERVER_DIALING);
    client_dial(s->client);
}

/* Ping if ready; scheduled: the tick's ping, the interval's last
 * exchange (see TRANSPORT_IDLE_AFTER). */
static bool
server_dialed_ping(struct server *s, bool scheduled)
{
    if (s->state != SERVER_READY || server_wait_left(s) > 0)
        return false;
    return client_ping(s->client, scheduled);
}

/* ev_timer: the next ping, or the next dial after a backoff. */
void
server_tick_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct server *s = w->data;

    (void)loop;
    (void)revents;
    if (s->state == SERVER_READY) {
        client_tick(s->client);
        if (!server_dialed_ping(s, true))
            server_ping_scheduled(s);
    } else if (s->state == SERVER_BACKOFF) {
        server_dialed_dial(s);
    }
}

/* --- the source's commands ---------------------------------------------- */

/* server_source_ops.redial: a session still held is ended first (shown in
 * the endings); the fresh dial follows once it settles. */
static void
server_dialed_redial(struct server *s)
{
    if (client_has_session(s->client)) {
        server_end(s, true);
        return;
    }
    server_set_state(s, SERVER_BACKOFF);
    server_dialed_dial(s);
}

/* server_source_ops.pause: the tick is already stopped; a session stays
 * open. */
static void
server_dialed_pause(struct server *s)
{
    (void)s;
}

/* server_source_ops.resume: ping at once if the session is open, else
 * dial. */
static void
server_dialed_resume(struct server *s)
{
    if (s->paused_from == SERVER_READY && client_has_session(s->client)) {
        server_set_state(s, SERVER_READY);
        server_ping_soon(s);
        return;
    }
    server_set_state(s, SERVER_BACKOFF);
    server_dialed_dial(s);
}

/* server_source_ops.probe */
static bool
server_dialed_probe(struct server *s)
{
    return client_probe_now(s->client);
}

/* server_source_ops.stop: no ending reports more. */
static void
server_dialed_stop(struct server *s)
{
    endings_stop(s->endings);
}

/* server_source_ops.free */
static void
server_dialed_free(struct server *s)
{
    endings_free(s->endings);
    s->endings = NULL;
}

/* --- the source's facts ------------------------------------------------- */

const char *
server_dialed_transport_name(const struct server *s)
{
    return transport_name(client_transport(s->client));
}

const char *
server_dialed_liveness_method(const struct server *s)
{
    return client_liveness_method(s->client);
}

enum mcp_era
server_dialed_era(const struct server *s)
{
    return client_era(s->client);
}

void
server_dialed_session(const struct server *s, struct mcp_session_info *out)
{
    memset(out, 0, sizeof(*out));
    out->open = s->state == SERVER_READY;
    client_session(s->client, out);
}

long
server_dialed_tools(const struct server *s)
{
    return client_tools(s->client);
}

double
server_dialed_rtt_ms(const struct server *s)
{
    return client_rtt_ms(s->client);
}

struct health
server_dialed_health(const struct server *s, int64_t *since)
{
    if (since != NULL)
        *since = s->health.set ? s->health.since : 0;
    return server_health_now(s);
}

bool
server_dialed_dial_settled(const struct server *s)
{
    return client_dialed_once(s->client) || s->state == SERVER_INVALID ||
        s->state == SERVER_UNSUPPORTED || s->state == SERVER_DISABLED;
}

long
server_dialed_pid(const struct server *s)
{
    return transport_pid(client_transport(s->client));
}

size_t
server_dialed_ending_count(const struct server *s)
{
    return endings_count(s->endings);
}

const struct ending *
server_dialed_ending(const struct server *s, size_t i)
{
    return endings_get(s->endings, i);
}

/* --- what a source without them answers --------------------------------- */

size_t
server_no_in_flight(const struct server *s)
{
    (void)s;
    return 0;
}

const struct server_request *
server_no_request(const struct server *s, size_t i)
{
    (void)s;
    (void)i;
    return NULL;
}

long
server_no_agent_sessions(const struct server *s)
{
    (void)s;
    return -1;
}

const struct server_agent_session *
server_no_agent_session(const struct server *s, size_t i)
{
    (void)s;
    (void)i;
    return NULL;
}

bool
server_no_cancel(struct server *s, const char *id, const char *reason)
{
    (void)s;
    (void)id;
    (void)reason;
    return false;
}

const struct ending *
server_no_end(struct server *s, bool redial)
{
    (void)s;
    (void)redial;
    return NULL;
}

const struct ending *
server_no_end_session(struct server *s, const char *session_id)
{
    (void)s;
    (void)session_id;
    return NULL;
}

bool
server_no_ping(struct server *s, bool scheduled)
{
    (void)s;
    (void)scheduled;
    return false;
}

bool
server_no_probe(struct server *s)
{
    (void)s;
    return false;
}

const struct server_source_ops server_source_dialed = {
    .name = "dialed",
    .dial = server_dialed_dial,
    .redial = server_dialed_redial,
    .pause = server_dialed_pause,
    .resume = server_dialed_resume,
    .ping = server_dialed_ping,
    .probe = server_dialed_probe,
    .end = server_dialed_end,
    .end_session = server_dialed_end_session,
    .cancel = server_no_cancel,
    .stop = server_dialed_stop,
    .free = server_dialed_free,
    .transport_name = server_dialed_transport_name,
    .liveness_method = server_dialed_liveness_method,
    .era = server_dialed_era,
    .session = server_dialed_session,
    .tools = server_dialed_tools,
    .rtt_ms = server_dialed_rtt_ms,
    .health = server_dialed_health,
    .dial_settled = server_dialed_dial_settled,
    .pid = server_dialed_pid,
    .ending_count = server_dialed_ending_count,
    .ending = server_dialed_ending,
    .in_flight = server_no_in_flight,
    .request = server_no_request,
    .agent_sessions = server_no_agent_sessions,
    .agent_session = server_no_agent_session,
};
