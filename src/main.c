/*
 * mcptop: a terminal monitor for fleets of MCP servers. This file reads the
 * command word and hands the rest of argv to the command; it owns process
 * set-up (signals, the HTTP library) and nothing else.
 *
 * The commands are one table (tmux's cmd_entry): a name, an alias, the
 * usage line the top-level help lists and the function that runs the
 * command. A word that is no command but an option or a URL runs the TUI.
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

/* One entry of the command table. */
struct main_entry {
    const char *name;
    const char *alias;      /* another word for it, or NULL */
    const char *usage;      /* its arguments; NULL: not listed in --help */
    const char *summary;    /* the --help line under the usage */
    int       (*exec)(int argc, char **argv);   /* argv[0] is the word */
    bool        needs_http; /* run after the HTTP library is set up */
};

static int main_help(int argc, char **argv);
static int main_version(int argc, char **argv);

static const struct main_entry main_table[] = {
    { "tui", NULL, "[SOURCES] [--theme NAME|FILE] [--no-mouse] "
      "[--filter EXPR] [--sort COL[,desc]] [--group G]",
      "the full-screen monitor (the default)", cli_tui, true },
    { "check", NULL, "[SOURCES] [--json] [--timeout MS] [--pings R] "
      "[--stats]", "dial every server once, ping, report, exit", cli_check,
      true },
    { "watch", NULL, "[SOURCES]", "monitor with no UI: JSON Lines on stdout",
      cli_watch, true },
    { "end", NULL, "[SOURCES] [--server NAME]... [--json] [--teardown MS]",
      "dial, end each session, report outcomes", cli_end, true },
    { "audit", NULL, "[SOURCES] [--server NAME]... [--json] [--parallel N]",
      "session-hygiene report per server (ends all it opens)", cli_audit,
      true },
    { "login", NULL, "NAME [-c FILE] [--wait MS]",
      "authorize mcptop for server NAME (OAuth)", cli_login, true },
    { "logout", NULL, "NAME [-c FILE]", "forget NAME's cached tokens",
      cli_logout, true },
    { "serve", NULL, "[SOURCES] [--listen HOST:PORT]",
      "monitor with no UI, serve Prometheus /metrics", cli_serve, true },
    { "tap", NULL, "[--name NAME] [--socket PATH] -- CMD [ARG]...",
      "stand in for a stdio server: relay, observe, publish", cli_tap,
      false },
    { "cancel", NULL, "[SOURCES] --server NAME --request ID [--reason T]",
      "cancel an agent's request through its tap", cli_cancel, false },
    { "configs", NULL, "[SOURCES] [--json]",
      "every server the sources give, dialing nothing", cli_configs,
      false },
    { "replay", NULL, "FILE [--speed N] [--from TIME] [--to TIME]",
      "the TUI over a recording (--record FILE), no network",
      cli_replay, true },
    { "report", NULL, "FILE [--from TIME] [--to TIME] [--json]",
      "the incident report of a recording (--record FILE)", cli_report,
      false },
    /* The top-level options, found the same way. */
    { "--help", "-h", NULL, NULL, main_help, false },
    { "help", NULL, NULL, NULL, main_help, false },
    { "--version", "-V", NULL, NULL, main_version, false },
};

#define MAIN_NENTRIES (sizeof(main_table) / sizeof(main_table[0]))

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
        const struct main_entry *e = &main_table[i];

        if (e->usage != NULL)
            fprintf(out, "  %s %s\n%22s%s\n", e->name, e->usage, "",
                e->summary);
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

/* `mcptop --version`. */
static int
main_version(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    cli_print_version(stdout);
    return 0;
}

/* The entry whose name or alias is word, or NULL. */
static const struct main_entry *
main_find(const char *word)
{
    for (size_t i = 0; i < MAIN_NENTRIES; i++) {
        const struct main_entry *e = &main_table[i];

        if (strcmp(e->name, word) == 0 ||
            (e->alias != NULL && strcmp(e->alias, word) == 0))
            return e;
    }
    return NULL;
}

int
main(int argc, char **argv)
{
    const struct main_entry *e = argc >= 2 ? main_find(argv[1]) : NULL;
    struct rlimit            nofile;
    int                      rc;

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
        rc = cli_tui(argc, argv);
    } else {
        char *safe = str_sanitized(argv[1]);

        rc = app_usage_error(NULL, "unknown command '%.60s'", safe);
        free(safe);
    }
    http_global_cleanup();
    return rc;
}
