/*
 * What the commands share beyond src/front (which loads the config and
 * opens the log): argument parsing helpers and the loop of a one-shot
 * command. The JSON records they print are src/export/jsonl.c's.
 */
#include "cli/cli.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>

#include "export/recording.h"

/* See cli.h. */
int
cli_record_open(struct cli_fleet *cf, const char *cmd,
    struct recording **out, int *rc)
{
    char *cause = NULL;

    *out = NULL;
    if (cf->common.record_path == NULL)
        return 0;
    *out = recording_open(cf->common.record_path,
        cf->common.record_max_bytes, &cause);
    if (*out == NULL) {
        fprintf(stderr, "mcptop %s: %s\n", cmd, cause);
        free(cause);
        *rc = EXIT_USAGE;
        return -1;
    }
    return 0;
}

/* See cli.h. */
bool
cli_record_close(struct cli_fleet *cf, const char *cmd,
    struct recording **r)
{
    bool ok = true;

    if (*r != NULL && recording_error(*r) != NULL) {
        fprintf(stderr, "mcptop %s: the recording is incomplete: %s\n", cmd,
            recording_error(*r));
        ok = false;
    }
    if (recording_close(*r) != 0 && ok) {
        fprintf(stderr, "mcptop %s: the recording %s could not be written "
            "completely\n", cmd, cf->common.record_path);
        ok = false;
    }
    *r = NULL;
    return ok;
}

long
cli_parse_ms(const char *s)
{
    char *end = NULL;
    long  v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v <= 0 || v > 86400000L)
        return -1;
    return v;
}

struct cli_wait {
    struct fleet *fleet;
    bool          settled;
};

/* ev_prepare: before the loop blocks, see whether everything settled. */
static void
cli_wait_prepare_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
    struct cli_wait *cw = w->data;

    (void)revents;
    if (!fleet_settling(cw->fleet)) {
        cw->settled = true;
        ev_break(loop, EVBREAK_ONE);
    }
}

static void
cli_wait_stop_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)w;
    (void)revents;
    ev_break(loop, EVBREAK_ONE);
}

static void
cli_wait_signal_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
    (void)w;
    (void)revents;
    ev_break(loop, EVBREAK_ONE);
}

size_t
cli_report_unended(const struct fleet *f, const char *cmd, size_t *asked)
{
    size_t m = 0, n = fleet_unended(f, &m);

    if (asked != NULL)
        *asked = m;
    if (n > 0)
        fprintf(stderr, "mcptop %s: %zu of %zu session%s not ended before "
            "exit (no answer to the ending in time, or refused): the "
            "server%s may keep %s until %s expire%s\n", cmd, n, m,
            m == 1 ? " was" : "s were", n == 1 ? "" : "s",
            n == 1 ? "it" : "them", n == 1 ? "it" : "they",
            n == 1 ? "s" : "");
    return n;
}

bool
cli_wait_endings(struct fleet *f, long bound_ms)
{
    struct ev_loop *loop = fleet_loop(f);
    struct cli_wait cw = { .fleet = f };
    ev_prepare      prep;
    ev_timer        bound;
    ev_signal       sigint, sigterm, sighup;

    if (!fleet_settling(f))
        return true;
    ev_prepare_init(&prep, cli_wait_prepare_cb);
    prep.data = &cw;
    ev_prepare_start(loop, &prep);
    ev_timer_init(&bound, cli_wait_stop_cb, bound_ms / 1000.0, 0.);
    ev_timer_start(loop, &bound);
    ev_signal_init(&sigint, cli_wait_signal_cb, SIGINT);
    ev_signal_start(loop, &sigint);
    ev_signal_init(&sigterm, cli_wait_signal_cb, SIGTERM);
    ev_signal_start(loop, &sigterm);
    ev_signal_init(&sighup, cli_wait_signal_cb, SIGHUP);
    ev_signal_start(loop, &sighup);
    ev_run(loop, 0);
    ev_prepare_stop(loop, &prep);
    ev_timer_stop(loop, &bound);
    ev_signal_stop(loop, &sigint);
    ev_signal_stop(loop, &sigterm);
    ev_signal_stop(loop, &sighup);
    return cw.settled;
}

static void
cli_run_bound_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)w;
    (void)revents;
    ev_break(loop, EVBREAK_ONE);
}

static void
cli_run_signal_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
    struct cli_run *r = w->data;

    (void)revents;
    r->interrupted = true;
    ev_break(loop, EVBREAK_ONE);
}

void
cli_run_init(struct cli_run *r, struct ev_loop *loop, long bound_ms,
    void (*step)(struct ev_loop *, ev_timer *, int), void *data)
{
    r->loop = loop;
    r->interrupted = false;
    /* The bound counts from now, not from the loop's last look at the
     * clock (reading a large config may have taken a while). */
    ev_now_update(loop);
    ev_timer_init(&r->step, step, 0., 0.);
    r->step.data = data;
    ev_timer_init(&r->bound, cli_run_bound_cb, bound_ms / 1000.0, 0.);
    ev_timer_start(loop, &r->bound);
    ev_signal_init(&r->sigint, cli_run_signal_cb, SIGINT);
    r->sigint.data = r;
    ev_signal_start(loop, &r->sigint);
    ev_signal_init(&r->sigterm, cli_run_signal_cb, SIGTERM);
    r->sigterm.data = r;
    ev_signal_start(loop, &r->sigterm);
    /* A closed terminal or ssh session: end sessions as for SIGINT. */
    ev_signal_init(&r->sighup, cli_run_signal_cb, SIGHUP);
    r->sighup.data = r;
    ev_signal_start(loop, &r->sighup);
}

void
cli_run_kick(struct cli_run *r)
{
    if (!ev_is_active(&r->step)) {
        ev_timer_set(&r->step, 0., 0.);
        ev_timer_start(r->loop, &r->step);
    }
}

void
cli_run_done(struct cli_run *r)
{
    ev_timer_stop(r->loop, &r->step);
    ev_timer_stop(r->loop, &r->bound);
    ev_signal_stop(r->loop, &r->sigint);
    ev_signal_stop(r->loop, &r->sigterm);
    ev_signal_stop(r->loop, &r->sighup);
}
