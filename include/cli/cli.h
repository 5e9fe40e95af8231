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

/*
 * One command of the binary (tmux's cmd_entry). Each command's file
 * carries its entry; src/main.c only lists them. usage is the synopsis
 * exactly as the command's --help prints it after "Usage: mcptop NAME "
 * (cli_usage): its line breaks and indents, the sources as APP_USAGE ...
 * APP_USAGE_END, a further form on a line of its own beginning
 * "       mcptop ". mcptop --help lists the same text (cli_usage_brief).
 */
struct cli_entry {
    const char *name;       /* the command word */
    const char *alias;      /* another word for it, or NULL */
    const char *usage;      /* NULL: not listed in mcptop --help */
    const char *summary;    /* the line under it in mcptop --help */
    int       (*exec)(int argc, char **argv);   /* argv[0] is the word */
    bool        needs_http; /* run after the HTTP library is set up */
};

extern const struct cli_entry cli_tui_entry;        /* cli_tui.c */
extern const struct cli_entry cli_check_entry;
extern const struct cli_entry cli_watch_entry;
extern const struct cli_entry cli_end_entry;
extern const struct cli_entry cli_audit_entry;
extern const struct cli_entry cli_login_entry;      /* cli_login.c */
extern const struct cli_entry cli_logout_entry;     /* cli_login.c */
extern const struct cli_entry cli_serve_entry;
extern const struct cli_entry cli_tap_entry;        /* cli_tap.c */
extern const struct cli_entry cli_cancel_entry;     /* cli_tap.c */
extern const struct cli_entry cli_configs_entry;
extern const struct cli_entry cli_replay_entry;
extern const struct cli_entry cli_report_entry;
extern const struct cli_entry cli_version_entry;    /* --version, -V */

/* entry.c: "Usage: mcptop NAME USAGE\n", the first lines of e's --help;
 * cli_usage_also the line of another command's form under them
 * ("       mcptop NAME USAGE\n"). */
void cli_usage(FILE *out, const struct cli_entry *e);
void cli_usage_also(FILE *out, const struct cli_entry *e);
/* entry.c: e's lines in mcptop --help: each form of its usage on lines of
 * its own ("  NAME ..."), the sources shown as [SOURCES], wrapped at 79
 * columns, then its summary. */
void cli_usage_brief(FILE *out, const struct cli_entry *e);

/* The commands, as the entries run them. */
int cli_tui(int argc, char **argv);
int cli_check(int argc, char **argv);
int cli_watch(int argc, char **argv);
int cli_end(int argc, char **argv);
int cli_audit(int argc, char **argv);
int cli_login(int argc, char **argv);
int cli_logout(int argc, char **argv);
int cli_serve(int argc, char **argv);
int cli_tap(int argc, char **argv);
int cli_cancel(int argc, char **argv);
int cli_configs(int argc, char **argv);
int cli_replay(int argc, char **argv);
int cli_report(int argc, char **argv);

/*
 * What a command that loads a fleet tells cli_preamble: its name (for
 * messages), its options, and what to run at three points. Each hook
 * returns 0 to go on, or -1 to stop the command with *rc its exit code
 * (after saying why on stderr). arg is given to every hook.
 */
struct option;
struct cli_preamble {
    const char          *cmd;           /* "check" */
    /* APP_LONGOPTS, the command's own and {"help", ..., 'h'}, then a zero
     * entry; shortopts the command's own letters, 'h' among them. */
    const struct option *longopts;
    const char          *shortopts;
    void               (*usage)(FILE *out);     /* for -h, --help */
    /* One of the command's own options: ch as getopt_long returned it,
     * value its optarg (in argv, which it may cut in place). NULL when
     * the command has none. */
    int                (*option)(void *arg, int ch, char *value,
                            int *rc);
    /* After the arguments, before any config is read (or NULL). */
    int                (*parsed)(void *arg, int *rc);
    /* After the config is read, before the log opens (or NULL); may
     * change cfg before the fleet is made over it. */
    int                (*loaded)(void *arg, struct config *cfg, int *rc);
    void                *arg;
};

/* A command's fleet, as cli_preamble makes it. Zero-initialise, set opt
 * (opt.log is set by cli_preamble), then call cli_preamble. */
struct cli_fleet {
    struct app_common    common;    /* the shared options; common.log */
    struct fleet_options opt;
    struct config       *cfg;       /* the loaded config */
    struct fleet        *fleet;     /* over cfg, on the default loop */
};

/*
 * The preamble of check, watch, end and serve: "-- CMD ARGS..." split off,
 * the shared options and p's own parsed (-h prints p->usage), the URL
 * argument taken, p->parsed, the config loaded from every source (--shard
 * applied), p->loaded, --log opened, and the fleet made over the config
 * with cf->opt (its warning printed). 0 when the command goes on: the
 * caller then owns cf->fleet and cf->cfg (fleet_exit, then config_free
 * when it says the fleet was freed, then app_close_log(&cf->common)).
 * -1 when the command must stop and return *rc (0 after --help; the
 * reason was printed otherwise): cf holds nothing open then, but what the
 * hooks allocated is still the caller's to free.
 */
int cli_preamble(const struct cli_preamble *p, int argc, char **argv,
    struct cli_fleet *cf, int *rc);

/*
 * --record FILE (export/recording.h): open cf->common.record_path into
 * *out (NULL when not given), in cli_preamble's parsed hook, so a path
 * that cannot be written stops the command before any dial (0; -1 with
 * *rc EXIT_USAGE after saying why). cli_record_close closes *r (NULL does
 * nothing), saying on stderr when a write failed (then false).
 */
struct recording;
int cli_record_open(struct cli_fleet *cf, const char *cmd,
    struct recording **out, int *rc);
bool cli_record_close(struct cli_fleet *cf, const char *cmd,
    struct recording **r);

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
 * After cli_wait_endings at exit: say on stderr how many sessions the
 * bounded exit could not end ("mcptop CMD: N of M sessions were not
 * ended ..."), nothing when all were. Returns N; *asked (may be NULL)
 * gets M. A command exits 1 when N > 0.
 */
size_t cli_report_unended(const struct fleet *f, const char *cmd,
    size_t *asked);

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
