/*
 * What every front end of the binary shares (the TUI and the check, watch
 * and end commands): the options that say where the fleet comes from,
 * loading it into one struct config, and the debug log. Nothing here
 * draws or talks to a server; src/cli and src/ui both build on it.
 *
 * The fleet is the union of every source given: URL, each -c FILE (in
 * order; "-" is standard input), --from CLIENT, and "-- CMD ARGS..." (a
 * stdio server). With none, the config is discovered (config_discover).
 * --shard K/N then keeps the servers whose names hash to shard K of N
 * (engine/shard.h), so N processes split one fleet.
 */
#ifndef MCPTOP_FRONT_APP_H
#define MCPTOP_FRONT_APP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "engine/config.h"
#include "engine/shard.h"

/* Exit codes of every command: 0 ok, 1 a server not ok, 2 usage or config
 * errors. */
#define EXIT_NOT_OK 1
#define EXIT_USAGE  2

/* getopt_long values of the long-only shared options. */
#define APP_OPT_LOG   0x100
#define APP_OPT_FROM  0x101
#define APP_OPT_SHARD 0x102
#define APP_OPT_RECORD     0x103
#define APP_OPT_RECORD_MAX 0x104

/* The short options every command takes (append the command's own). */
#define APP_SHORTOPTS "c:v"

/* The struct option entries every command takes, for its longopts. */
#define APP_LONGOPTS \
    { "config", required_argument, NULL, 'c' }, \
    { "from", required_argument, NULL, APP_OPT_FROM }, \
    { "verbose", no_argument, NULL, 'v' }, \
    { "log", required_argument, NULL, APP_OPT_LOG }, \
    { "shard", required_argument, NULL, APP_OPT_SHARD }

/* --record FILE and --record-max MB, for the commands that run a fleet
 * for a while (the TUI, watch, serve): append to their longopts. */
#define APP_RECORD_MAX_MB_DEFAULT 100    /* RECORDING_MAX_MB_DEFAULT */
#define APP_RECORD_LONGOPTS \
    { "record", required_argument, NULL, APP_OPT_RECORD }, \
    { "record-max", required_argument, NULL, APP_OPT_RECORD_MAX }

/* The sources in a usage line: "mcptop check " APP_USAGE " [--json]". */
#define APP_USAGE "[-c FILE]... [--from CLIENT] [URL] [-v] [--log FILE]\n" \
    "                    [--shard K/N]"
/* What ends a usage line: the ad-hoc stdio server. */
#define APP_USAGE_END "[-- CMD [ARG]...]"

/* The most -c options one command line may give. */
#define APP_MAX_CONFIGS 32

/* What became of one file --from looked at (for `mcptop configs`). */
enum app_file_status {
    APP_FILE_READ,
    APP_FILE_ABSENT,
    APP_FILE_BROKEN,            /* unreadable or not parsable: skipped */
};

struct app_file {
    char                 *path;
    const char           *client;   /* static strings of the clients */
    const char           *source;   /* table */
    enum app_file_status  status;
    size_t                nservers; /* as read, before merging */
    char                 *error;    /* APP_FILE_BROKEN: why (no value) */
};

/* Where the fleet comes from and where the log goes. Strings are borrowed
 * from argv. Zero-initialise, then app_split_command, getopt_long with
 * app_option, and app_args. */
struct app_common {
    const char           *config_paths[APP_MAX_CONFIGS];    /* -c */
    size_t                nconfig;
    const char           *from;         /* --from CLIENT */
    const char           *url;          /* bare URL argument */
    char                **command;      /* after "--": a stdio server */
    size_t                ncommand;
    bool                  has_command;  /* "--" was given */
    const char           *log_path;     /* --log */
    bool                  verbose;      /* -v: notes to stderr */
    struct shard          shard;        /* --shard K/N; n 0: every server */
    const char           *record_path;  /* --record FILE, or NULL */
    long long             record_max_bytes; /* --record-max MB; 0: the
                                           default */
    bool                  interactive;  /* TUI: ask for ${input:ID} on the
                                           terminal; give standard input
                                           back to the terminal after -c - */
    FILE                 *log;
    const struct config  *cfg;          /* the loaded fleet, borrowed, for
                                           app_open_log */
    bool                  bad_option;   /* app_option printed an error */
    /* Filled by app_load_config: the files --from looked at (when
     * keep_files is set; freed by app_files_free), and whether it read
     * them because nothing else was given or found (bare `mcptop`). */
    bool                  keep_files;
    struct app_file      *files;
    size_t                nfiles;
    bool                  from_fallback;
};

/* Free c->files. */
void app_files_free(struct app_common *c);

/*
 * Take "-- CMD ARGS..." off the end of argv: the words after the first
 * "--" become c->command. Returns the argc to give getopt_long (the
 * words before "--").
 */
int app_split_command(struct app_common *c, int argc, char **argv);

/*
 * Apply one shared option returned by getopt_long (ch, with its optarg).
 * 1 when it was one of them, 0 when it is the command's own, -1 when its
 * value is wrong (the reason is printed to stderr, and app_args then
 * fails).
 */
int app_option(struct app_common *c, int ch, const char *arg);

/*
 * Take the arguments left after the options (argv[first..argc)): at most
 * one http(s) URL. 0, or EXIT_USAGE after printing why to stderr, naming
 * the command (e.g. "mcptop check"). A URL echoed is redacted.
 */
int app_args(struct app_common *c, const char *cmd, int argc, char **argv,
    int first);

/* Print the help lines of the shared options. */
void app_usage_options(FILE *out);

/* Print the help lines of --record and --record-max. */
void app_usage_record(FILE *out);

/* Print where the fleet is looked for: discovery and --from's files. */
void app_usage_sources(FILE *out);

/*
 * Load the fleet from every source given (see above). 0 and *out (caller
 * frees with config_free, after app_close_log), or EXIT_USAGE after
 * printing the reason to stderr (130 when a question was interrupted).
 * Warnings go to stderr, and the notes too with -v. Inputs
 * (${input:ID}) come from MCPTOP_INPUT_<ID>, or are asked on the terminal
 * when c->interactive; answers are kept in memory only.
 */
int app_load_config(struct app_common *c, struct config **out);

/* Open --log and write the loaded config's warnings and notes to it.
 * EXIT_USAGE on failure (message printed), else 0. */
int app_open_log(struct app_common *c);

/* Close the log opened by app_open_log (nothing when none). */
void app_close_log(struct app_common *c);

/*
 * mcptop's state directory: $XDG_STATE_HOME/mcptop, else
 * $HOME/.local/state/mcptop (where the token cache lives), made (mode
 * 0700) if missing. Caller frees. NULL with *cause (caller frees) when
 * neither variable is set or it cannot be made.
 */
char *app_state_dir(char **cause);

/* True when arg is an http:// or https:// URL (case-insensitive scheme). */
bool app_is_url(const char *arg);

/*
 * Usage errors, the same for every command: "mcptop CMD: WHAT" and "Try
 * 'mcptop CMD --help' for more information." on stderr (cmd NULL for the
 * top level: "mcptop: WHAT", "Try 'mcptop --help' ..."). Never the help
 * itself, never the binary's path. Returns EXIT_USAGE, for `return`.
 */
int app_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

struct option;
/*
 * The usage error for what getopt_long just rejected: ch is its return
 * value (':' a missing value, '?' an unknown, ambiguous or valueless
 * option). The caller sets opterr = 0 and starts shortopts with ':' so
 * getopt prints nothing itself. Returns EXIT_USAGE.
 */
int app_option_error(const char *cmd, int ch, char *const argv[],
    const struct option *longopts);

#endif
