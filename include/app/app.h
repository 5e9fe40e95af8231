/*
 * What every front end of the binary shares (the TUI and the check, watch
 * and end commands): the options that say where the fleet comes from,
 * loading it into one struct config, and the debug log. Nothing here
 * draws or talks to a server; src/cli and src/ui both build on it.
 */
#ifndef MCPTOP_APP_APP_H
#define MCPTOP_APP_APP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "engine/config.h"

/* Exit codes of every command: 0 ok, 1 a server not ok, 2 usage or config
 * errors. */
#define EXIT_NOT_OK 1
#define EXIT_USAGE  2

/* getopt_long values of the long-only shared options. */
#define APP_OPT_LOG   'l'

/* The short options every command takes (append the command's own). */
#define APP_SHORTOPTS "c:"

/* The struct option entries every command takes, for its longopts. */
#define APP_LONGOPTS \
    { "config", required_argument, NULL, 'c' }, \
    { "log", required_argument, NULL, APP_OPT_LOG }

/* Where the fleet comes from and where the log goes. Strings are borrowed
 * from argv. Zero-initialise, fill with app_option and app_args. */
struct app_common {
    const char *config_path;    /* -c */
    const char *url;            /* bare URL argument */
    const char *log_path;       /* --log */
    FILE       *log;
};

/*
 * Apply one shared option returned by getopt_long (ch, with its optarg).
 * 1 when it was one of them, 0 when it is the command's own.
 */
int app_option(struct app_common *c, int ch, const char *arg);

/*
 * Take the arguments left after the options (argv[first..argc)): at most
 * one http(s) URL. 0, or EXIT_USAGE after printing why to stderr, naming
 * the command (e.g. "mcptop check").
 */
int app_args(struct app_common *c, const char *cmd, int argc, char **argv,
    int first);

/* Print the help lines of the shared options. */
void app_usage_options(FILE *out);

/* Print where the fleet is looked for when no source is given. */
void app_usage_sources(FILE *out);

/*
 * Load the fleet: the URL, -c FILE, or the discovered config. 0 and *out
 * (caller frees with config_free), or EXIT_USAGE after printing the reason
 * to stderr. Warnings go to stderr.
 */
int app_load_config(const struct app_common *c, struct config **out);

/* Open --log; EXIT_USAGE on failure (message printed), else 0. */
int app_open_log(struct app_common *c);

/* Close the log opened by app_open_log (nothing when none). */
void app_close_log(struct app_common *c);

/* True when arg is an http:// or https:// URL (case-insensitive scheme). */
bool app_is_url(const char *arg);

#endif
