/*
 * The commands of the mcptop binary. Each takes the arguments after its
 * name and returns the process exit code (0 ok, 1 a server not ok, 2 usage
 * or config errors).
 */
#ifndef MCPTOP_CLI_CLI_H
#define MCPTOP_CLI_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "front/app.h"
#include "engine/config.h"
#include "engine/fleet.h"
#include "engine/shard.h"

int cli_check(int argc, char **argv);
int cli_watch(int argc, char **argv);
int cli_end(int argc, char **argv);
int cli_login(int argc, char **argv);
int cli_logout(int argc, char **argv);
int cli_serve(int argc, char **argv);

/* Parse a positive integer of milliseconds; -1 when invalid. */
long cli_parse_ms(const char *s);

/*
 * The loop of a one-shot command (check, end): a deferred `step` that
 * re-reads engine state after events, a bound on the whole run, and
 * SIGINT/SIGTERM/SIGHUP, each of which stops the loop.
 */
struct cli_run {
    struct ev_loop *loop;
    ev_timer        step;
    ev_timer        bound;
    ev_signal       sigint, sigterm, sighup;
    bool            interrupted;
};

/* Arm r on loop: step(loop, &r->step, ...) runs with r->step.data = data
 * whenever cli_run_kick asks; the loop stops after bound_ms. */
void cli_run_init(struct cli_run *r, struct ev_loop *loop, long bound_ms,
    void (*step)(struct ev_loop *, ev_timer *, int), void *data);
/* Run step on the next loop turn (once, however often it is asked). */
void cli_run_kick(struct cli_run *r);
/* Stop every watcher of r. */
void cli_run_done(struct cli_run *r);

/*
 * Run the loop until no ending of f is unsettled, for at most bound_ms of
 * monotonic time, or until SIGINT/SIGTERM arrives again. Returns true when
 * everything settled in time.
 */
bool cli_wait_endings(struct fleet *f, long bound_ms);

/*
 * Write s to out as a cell exactly width display columns wide: padded
 * with spaces (on the left when right is true), or cut and ended with
 * "…" (U+2026). Columns are measured as UTF-8 with wcwidth under C.UTF-8,
 * whatever the user's locale: s is UTF-8 (config and sanitized server
 * text); an invalid byte counts one column.
 */
void cli_cell(FILE *out, const char *s, int width, bool right);
/* Display columns of the NUL-terminated UTF-8 string s (as cli_cell). */
int cli_text_cols(const char *s);

/* `mcptop --version`: mcptop's version and commit, and the versions of
 * the libraries actually linked, asked at run time. */
void cli_print_version(FILE *out);

#endif
