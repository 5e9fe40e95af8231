/*
 * mcptop: a terminal monitor for fleets of MCP servers. This file reads the
 * command word and hands the rest of argv to the command; it owns process
 * set-up (signals, the HTTP library) and nothing else.
 *
 * The commands are one list of entries (tmux's cmd_entry), each defined in
 * its command's file with its name, usage, summary and function (cli.h's
 * struct cli_entry); this file only lists them. A word that is no command
 * but an option or a URL runs the TUI.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "engine/http.h"
#include "util/str.h"

static int main_help(int argc, char **argv);

/* The top-level help, found as the commands are. */
static const struct cli_entry main_help_entry = {
    .name = "--help",
    .alias = "-h",
    .exec = main_help,
};
static const struct cli_entry main_help_word = {
    .name = "help",
    .exec = main_help,
};

/* In the order mcptop --help lists them. */
static const struct cli_entry *const main_entries[] = {
    &cli_tui_entry,
    &cli_check_entry,
    &cli_watch_entry,
    &cli_end_entry,
    &cli_audit_entry,
    &cli_login_entry,
    &cli_logout_entry,
    &cli_serve_entry,
    &cli_tap_entry,
    &cli_cancel_entry,
    &cli_configs_entry,
    &cli_replay_entry,
    &cli_report_entry,
    &main_help_entry,
    &main_help_word,
    &cli_version_entry,
};

#define MAIN_NENTRIES (sizeof(main_entries) / sizeof(main_entries[0]))

static void
main_usage(FILE *out)
{
    fprintf(out,
        "Usage: mcptop [SOURCES] [--theme NAME|FILE]   the TUI\n"
        "       mcptop COMMAND [OPTIONS]\n"
        "\n"
        "A monitor for fleets of MCP (Model Context Protocol) servers.\n"
        "\n"
        "Commands:\n");
    for (size_t i = 0; i < MAIN_NENTRIES; i++) {
        if (main_entries[i]->usage != NULL)
            cli_usage_brief(out, main_entries[i]);
    }
    fprintf(out,
        "\n"
        "SOURCES (every command; all given are merged into one fleet):\n");
    app_usage_options(out);
    fprintf(out,
        "\n"
        "  -h, --help          this help ('mcptop COMMAND --help' for more)\n"
        "  -V, --version       version and library versions\n"
        "\n"
        "Exit status: 0 ok, 1 some server not ok, 2 usage or config error.\n");
    app_usage_sources(out);
}

/* `mcptop --help`. */
static int
main_help(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    main_usage(stdout);
    return 0;
}

/* The entry whose name or alias is word, or NULL. */
static const struct cli_entry *
main_find(const char *word)
{
    for (size_t i = 0; i < MAIN_NENTRIES; i++) {
        const struct cli_entry *e = main_entries[i];

        if (strcmp(e->name, word) == 0 ||
            (e->alias != NULL && strcmp(e->alias, word) == 0))
            return e;
    }
    return NULL;
}

int
main(int argc, char **argv)
{
    const struct cli_entry *e = argc >= 2 ? main_find(argv[1]) : NULL;
    struct rlimit           nofile;
    int                     rc;

    /* A peer closing a socket or pipe must be an error code, not death. */
    signal(SIGPIPE, SIG_IGN);
    /* A fleet needs descriptors: take every one the hard limit allows
     * (what a fleet still cannot fit is said by the fleet, once). */
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 &&
        nofile.rlim_cur < nofile.rlim_max) {
        nofile.rlim_cur = nofile.rlim_max;
        setrlimit(RLIMIT_NOFILE, &nofile);
    }
    if (e != NULL && !e->needs_http)
        return e->exec(argc - 1, argv + 1);
    if (http_global_init() != 0) {
        fprintf(stderr, "mcptop: cannot initialise libcurl\n");
        return EXIT_USAGE;
    }
    if (e != NULL) {
        rc = e->exec(argc - 1, argv + 1);
    } else if (argc < 2 || argv[1][0] == '-' || app_is_url(argv[1])) {
        rc = cli_tui_entry.exec(argc, argv);
    } else {
        char *safe = str_sanitized(argv[1]);

        rc = app_usage_error(NULL, "unknown command '%.60s'", safe);
        free(safe);
    }
    http_global_cleanup();
    return rc;
}
