/*
 * The ending procedure (engine-private; DESIGN.md section 5, seed 000):
 * ending one session, at most once, by one deadline. A server keeps a ring
 * of its endings; each runs here: the deadline on the loop's monotonic
 * clock, the outcome (known by the deadline) apart from the settlement (the
 * work's end, possibly later), half-open endings of sessions a failed dial
 * was issued. What ends the session on the wire is the transport's
 * (transport_ops.end): a DELETE, or the stdio shutdown sequence. This
 * module never reaches into curl or the child itself.
 */
#ifndef MCPTOP_ENGINE_ENDING_RUN_H
#define MCPTOP_ENGINE_ENDING_RUN_H

#include <ev.h>
#include <stdbool.h>
#include <stdio.h>

#include "engine/ending.h"
#include "engine/event.h"
#include "engine/failure.h"

struct endings;
struct ending_run;
struct transport;

/* What the ring tells its owner (the server). */
struct endings_host {
    /* EVENT_ENDING or EVENT_SETTLED for e. */
    void (*event)(void *arg, enum event_type type, const struct ending *e);
    /* An ending's exchange (the DELETE) ended: into the record. f NULL
     * when it completed. */
    void (*exchange)(void *arg, const char *op, const struct failure *f,
        double ms);
    /* run settled (after its event). */
    void (*settled)(void *arg, struct ending_run *run);
    /* One more (on) or one less (off) unsettled ending. */
    void (*busy)(void *arg, bool on);
};

#define ENDINGS_KEPT 16     /* the ring's size */

struct server;

/* A ring for server `owner` (named in each ending). host and arg outlive
 * it; log_name is for the log. */
struct endings *endings_new(struct ev_loop *loop, const struct server *owner,
    const struct endings_host *host, void *arg, FILE *log,
    const char *log_name);
/* Stop every deadline; nothing more is reported. NULL does nothing. */
void endings_free(struct endings *r);
/* Forget every ending's pending work (the server stopped for good): no
 * more outcomes or settlements; busy counts drop. */
void endings_stop(struct endings *r);

/*
 * Start an ending on transport t with teardown_ms as its one deadline:
 * a new slot (the oldest is reused when the ring is full). The ending is
 * not sent yet: see ending_run_go.
 */
struct ending_run *endings_start(struct endings *r, struct transport *t,
    long teardown_ms, bool half_open);
/* Ask the transport to end `session` (taken; NULL: its current one) and
 * arm the deadline. */
void ending_run_go(struct ending_run *run, char *session,
    const char *protocol_version);

size_t endings_count(const struct endings *r);
/* Oldest first; NULL past the end. */
const struct ending *endings_get(const struct endings *r, size_t i);

/* The public view of run. */
const struct ending *ending_run_view(const struct ending_run *run);
bool ending_run_settled(const struct ending_run *run);
bool ending_run_has_outcome(const struct ending_run *run);

/* --- reports, from the transport that runs the ending ------------------ */

/* What is known with an outcome. */
struct ending_report {
    enum ending_outcome     outcome;
    const char             *detail;         /* may be NULL */
    long                    http_status;    /* 0: none */
    const struct failure   *failure;        /* failed / timed_out: kept */
    int                     exit_code;      /* -1: none */
    int                     signal;         /* 0: none */
    unsigned                group_left;     /* stdio: members of the
                                               child's group that outlived
                                               it (0: none) */
};

/* The outcome is known (the first report wins; later ones are ignored). */
void ending_run_report(struct ending_run *run, const struct ending_report *r);
/* Shorthand for an outcome with a detail only. */
void ending_run_outcome(struct ending_run *run, enum ending_outcome o,
    const char *detail);
/* Set the detail of a run whose outcome is still pending. */
void ending_run_note(struct ending_run *run, const char *detail);
/* Mark the ending sessionless (2026-07-28: nothing to end remotely). */
void ending_run_sessionless(struct ending_run *run);
/* The ending's own exchange (the DELETE) ended: f NULL when completed. */
void ending_run_exchange(struct ending_run *run, const struct failure *f,
    double ms);
/* The work has settled: report it apart. */
void ending_run_settle(struct ending_run *run);
/* The same, with the detail as the settlement tells it (a process group
 * whose last member went after the outcome was given). */
void ending_run_settle_note(struct ending_run *run, const char *detail);
/* Milliseconds since the ending started (monotonic). */
double ending_run_elapsed_ms(const struct ending_run *run);
/* The run's teardown deadline, ms. */
long ending_run_teardown_ms(const struct ending_run *run);
/* An opaque slot for the transport running it (NULL when free). */
void ending_run_set_work(struct ending_run *run, void *work);
void *ending_run_work(const struct ending_run *run);

#endif
