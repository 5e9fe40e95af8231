/*
 * The commands of the mcptop binary. Each takes the arguments after its
 * name and returns the process exit code (0 ok, 1 a server not ok, 2 usage
 * or config errors).
 */
#ifndef MCPTOP_CLI_CLI_H
#define MCPTOP_CLI_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "engine/config.h"
#include "engine/fleet.h"

#define EXIT_NOT_OK 1
#define EXIT_USAGE  2

int cli_check(int argc, char **argv);
int cli_watch(int argc, char **argv);
int cli_end(int argc, char **argv);
int cli_login(int argc, char **argv);
int cli_logout(int argc, char **argv);

/* Options shared by commands. */
struct cli_common {
    const char *config_path;    /* -c */
    const char *url;            /* bare URL argument */
    const char *log_path;       /* --log */
    FILE       *log;
};

/*
 * Load the fleet: the URL, -c FILE, or the discovered config. 0 and *out,
 * or EXIT_USAGE after printing the reason to stderr. Warnings go to
 * stderr.
 */
int cli_load_config(const struct cli_common *c, struct config **out);
/* Open --log; EXIT_USAGE on failure (message printed), else 0. */
int cli_open_log(struct cli_common *c);
void cli_close_log(struct cli_common *c);
/* Is arg an http:// or https:// URL? */
int cli_is_url(const char *arg);
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

struct cJSON;
struct ending;
/* The JSON record of one ending (`end --json`, `watch` lines). */
struct cJSON *cli_json_ending(const struct ending *e);
/* The JSON record of one server (the `check --json` element). Caller
 * frees with cJSON_Delete. */
struct cJSON *cli_json_server(const struct server *s);

/*
 * Usage errors, the same for every command: "mcptop CMD: WHAT" and "Try
 * 'mcptop CMD --help' for more information." on stderr (cmd NULL for the
 * top level: "mcptop: WHAT", "Try 'mcptop --help' ..."). Never the help
 * itself, never the binary's path. Returns EXIT_USAGE, for `return`.
 */
int cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

struct option;
/*
 * The usage error for what getopt_long just rejected: ch is its return
 * value (':' a missing value, '?' an unknown, ambiguous or valueless
 * option). The caller sets opterr = 0 and starts shortopts with ':' so
 * getopt prints nothing itself. Returns EXIT_USAGE.
 */
int cli_option_error(const char *cmd, int ch, char *const argv[],
    const struct option *longopts);

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
