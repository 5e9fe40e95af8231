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
#include "engine/shard.h"

#define EXIT_NOT_OK 1
#define EXIT_USAGE  2

int cli_check(int argc, char **argv);
int cli_watch(int argc, char **argv);
int cli_end(int argc, char **argv);
int cli_serve(int argc, char **argv);

/* Options shared by commands. */
struct cli_common {
    const char *config_path;    /* -c */
    const char *url;            /* bare URL argument */
    const char *log_path;       /* --log */
    FILE       *log;
    struct shard shard;         /* --shard K/N; n == 0 for all servers */
};

/*
 * Load the fleet: the URL, -c FILE, or the discovered config, then keep
 * c->shard's share of it. 0 and *out, or EXIT_USAGE after printing the
 * reason to stderr. Warnings go to stderr.
 */
int cli_load_config(const struct cli_common *c, struct config **out);
/* Parse --shard's K/N into c->shard for command cmd. 0, or EXIT_USAGE
 * after printing why. */
int cli_parse_shard(struct cli_common *c, const char *cmd, const char *arg);
/* The --shard line of every command's --help. */
#define CLI_SHARD_HELP \
    "      --shard K/N    only the servers whose name hashes to shard K of " \
    "N\n" \
    "                     (FNV-1a 64 of the name, mod N, is K-1)\n"
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
 * SIGINT/SIGTERM, each of which stops the loop.
 */
struct cli_run {
    struct ev_loop *loop;
    ev_timer        step;
    ev_timer        bound;
    ev_signal       sigint, sigterm;
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
/* The fleet as `check --json` reports it, now: {"servers": [...],
 * "summary": {reachable, unreachable, unknown, absent}}. Caller frees. */
struct cJSON *cli_json_fleet(const struct fleet *f);

#endif
