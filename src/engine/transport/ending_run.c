/*
 * The ending procedure (DESIGN.md section 5): each ending of a server run
 * by one deadline.
 *
 * The deadline is one libev timer (monotonic). By it the operator has an
 * outcome: the transport's report, or timed_out. The settlement (the
 * DELETE's transfer gone, the child reaped) is reported apart, when it
 * comes. What ends the session on the wire is the transport's; this file
 * must never touch curl or a child, and never reads a clock but libev's
 * (the wall clock only stamps started_at).
 */
#include "transport/ending_run.h"

#include <stdlib.h>
#include <string.h>

#include "engine/ending.h"
#include "transport/transport.h"
#include "util/clock.h"
#include "util/dlog.h"
#include "util/xmalloc.h"

/* --- the procedure ------------------------------------------------------ */

struct ending_run {
    struct ending       pub;
    struct endings     *ring;
    struct transport   *t;
    ev_timer            deadline;
    ev_tstamp           started;
    long                teardown_ms;
    bool                counted;    /* in the host's busy count */
    bool                evicted;    /* out of the ring: freed at settle */
    void               *work;       /* the transport's, while it works */
};

struct endings {
    struct ev_loop            *loop;
    const struct server       *owner;
    const struct endings_host *host;
    void                      *arg;
    FILE                      *log;
    const char                *log_name;
    struct ending_run         *runs[ENDINGS_KEPT];
    size_t                     start, len;
};

struct endings *
endings_new(struct ev_loop *loop, const struct server *owner,
    const struct endings_host *host, void *arg, FILE *log,
    const char *log_name)
{
    struct endings *r = xcalloc(1, sizeof(*r));

    r->loop = loop;
    r->owner = owner;
    r->host = host;
    r->arg = arg;
    r->log = log;
    r->log_name = log_name;
    return r;
}

static void
ending_run_busy(struct ending_run *run, bool on)
{
    if (run->counted == on)
        return;
    run->counted = on;
    run->ring->host->busy(run->ring->arg, on);
}

static void
ending_run_free(struct ending_run *run)
{
    ev_timer_stop(run->ring->loop, &run->deadline);
    ending_run_busy(run, false);
    free(run);
}

void
endings_stop(struct endings *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->len; i++) {
        struct ending_run *run = r->runs[(r->start + i) % ENDINGS_KEPT];

        ev_timer_stop(r->loop, &run->deadline);
        run->work = NULL;
        /* Stopped for good: nothing more will settle. */
        ending_run_busy(run, false);
    }
}

void
endings_free(struct endings *r)
{
    if (r == NULL)
        return;
    endings_stop(r);
    for (size_t i = 0; i < r->len; i++)
        ending_run_free(r->runs[(r->start + i) % ENDINGS_KEPT]);
    free(r);
}

static void ending_run_deadline_cb(struct ev_loop *loop, ev_timer *w,
    int revents);

struct ending_run *
endings_start(struct endings *r, struct transport *t, long teardown_ms,
    bool half_open)
{
    struct ending_run *run = xcalloc(1, sizeof(*run));

    if (r->len == ENDINGS_KEPT) {
        struct ending_run *old = r->runs[r->start];

        r->start = (r->start + 1) % ENDINGS_KEPT;
        r->len--;
        if (old->pub.settled)
            ending_run_free(old);
        else
            old->evicted = true;
    }
    r->runs[(r->start + r->len) % ENDINGS_KEPT] = run;
    r->len++;
    run->ring = r;
    run->t = t;
    run->teardown_ms = teardown_ms;
    run->pub.server = r->owner;
    run->pub.outcome = ENDING_PENDING;
    run->pub.exit_code = -1;
    run->pub.half_open = half_open;
    run->pub.started_at = clock_wall_ms();
    ev_now_update(r->loop);
    run->started = ev_now(r->loop);
    ev_timer_init(&run->deadline, ending_run_deadline_cb,
        teardown_ms / 1000.0, 0.);
    run->deadline.data = run;
    ending_run_busy(run, true);
    return run;
}

void
ending_run_go(struct ending_run *run, char *session,
    const char *protocol_version)
{
    if (run->pub.outcome == ENDING_PENDING)
        ev_timer_start(run->ring->loop, &run->deadline);
    transport_end(run->t, run, session, protocol_version);
}

size_t
endings_count(const struct endings *r)
{
    return r != NULL ? r->len : 0;
}

const struct ending *
endings_get(const struct endings *r, size_t i)
{
    if (r == NULL || i >= r->len)
        return NULL;
    return &r->runs[(r->start + i) % ENDINGS_KEPT]->pub;
}

const struct ending *
ending_run_view(const struct ending_run *run)
{
    return &run->pub;
}

bool
ending_run_settled(const struct ending_run *run)
{
    return run->pub.settled;
}

bool
ending_run_has_outcome(const struct ending_run *run)
{
    return run->pub.outcome != ENDING_PENDING;
}

double
ending_run_elapsed_ms(const struct ending_run *run)
{
    double ms;

    ev_now_update(run->ring->loop);
    ms = (ev_now(run->ring->loop) - run->started) * 1000.0;
    return ms < 0 ? 0 : ms;
}

long
ending_run_teardown_ms(const struct ending_run *run)
{
    return run->teardown_ms;
}

void
ending_run_set_work(struct ending_run *run, void *work)
{
    run->work = work;
}

void *
ending_run_work(const struct ending_run *run)
{
    return run->work;
}

void
ending_run_note(struct ending_run *run, const char *detail)
{
    if (run->pub.outcome == ENDING_PENDING && detail != NULL)
        snprintf(run->pub.detail, sizeof(run->pub.detail), "%s", detail);
}

void
ending_run_sessionless(struct ending_run *run)
{
    run->pub.sessionless = true;
}

void
ending_run_report(struct ending_run *run, const struct ending_report *rep)
{
    struct endings *r = run->ring;

    if (run->pub.outcome != ENDING_PENDING)
        return;
    run->pub.outcome = rep->outcome;
    run->pub.duration_ms = ending_run_elapsed_ms(run);
    if (rep->http_status != 0)
        run->pub.http_status = rep->http_status;
    if (rep->failure != NULL) {
        run->pub.has_failure = true;
        run->pub.kind = rep->failure->kind;
        run->pub.delivered = rep->failure->delivered;
    }
    if (rep->exit_code >= 0)
        run->pub.exit_code = rep->exit_code;
    if (rep->signal != 0)
        run->pub.signal = rep->signal;
    run->pub.group_left = rep->group_left;
    if (rep->detail != NULL)
        snprintf(run->pub.detail, sizeof(run->pub.detail), "%s",
            rep->detail);
    ev_timer_stop(r->loop, &run->deadline);
    dlog(r->log, r->log_name, "ending%s: %s in %.1f ms%s%s",
        run->pub.half_open ? " (half-open)" : "",
        ending_outcome_name(rep->outcome), run->pub.duration_ms,
        rep->detail != NULL ? ": " : "",
        rep->detail != NULL ? rep->detail : "");
    r->host->event(r->arg, EVENT_ENDING, &run->pub);
}

void
ending_run_outcome(struct ending_run *run, enum ending_outcome o,
    const char *detail)
{
    struct ending_report rep = {
        .outcome = o, .detail = detail, .exit_code = -1,
    };

    ending_run_report(run, &rep);
}

/*
 * What an ending's exchange tells the record. The server answering is
 * reach, and only a real failure (the DELETE failed at the transport, or
 * timed out) counts against it: a 404 or 405 is an answer the spec allows,
 * and another status is the ending's outcome, shown with the ending. A
 * half-open ending cleans up after a dial whose one outcome is already in
 * the record: it leaves the record alone.
 */
void
ending_run_exchange(struct ending_run *run, const struct failure *f,
    double ms)
{
    switch (run->pub.outcome) {
    case ENDING_NOT_ALLOWED:
    case ENDING_ALREADY_GONE:
        f = NULL;
        break;
    case ENDING_REJECTED:
        return;
    default:
        break;
    }
    if (run->pub.half_open)
        return;
    run->ring->host->exchange(run->ring->arg, "delete", f, ms);
}

void
ending_run_settle(struct ending_run *run)
{
    struct endings *r = run->ring;

    if (run->pub.settled)
        return;
    run->pub.settled = true;
    run->pub.settled_ms = ending_run_elapsed_ms(run);
    run->work = NULL;
    ending_run_busy(run, false);
    dlog(r->log, r->log_name, "ending settled after %.1f ms",
        run->pub.settled_ms);
    r->host->event(r->arg, EVENT_SETTLED, &run->pub);
    r->host->settled(r->arg, run);
    if (run->evicted)
        ending_run_free(run);
}

void
ending_run_settle_note(struct ending_run *run, const char *detail)
{
    if (run->pub.settled)
        return;
    if (detail != NULL)
        snprintf(run->pub.detail, sizeof(run->pub.detail), "%s", detail);
    ending_run_settle(run);
}

/* ev_timer: the teardown deadline. The transport aborts what it waits for
 * and reports; whatever it leaves unsaid is timed_out. */
static void
ending_run_deadline_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct ending_run *run = w->data;
    char               detail[128];

    (void)loop;
    (void)revents;
    if (run->pub.outcome != ENDING_PENDING)
        return;
    transport_end_deadline(run->t, run);
    if (run->pub.outcome == ENDING_PENDING) {
        snprintf(detail, sizeof(detail), "nothing answered within %ld ms",
            run->teardown_ms);
        ending_run_outcome(run, ENDING_TIMED_OUT, detail);
        ending_run_settle(run);
    }
}
