/*
 * mcptop: a terminal monitor for fleets of MCP servers. This file reads the
 * command word and hands the rest of argv to the command; it owns process
 * set-up (signals, the HTTP library) and nothing else.
 */
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "engine/http.h"
#include "ui/tui.h"
#include "util/str.h"

static void
main_usage(FILE *out)
{
    fprintf(out,
        "Usage: mcptop [SOURCES] [--theme NAME|FILE]   the TUI\n"
        "       mcptop COMMAND [OPTIONS]\n"
        "\n"
        "A monitor for fleets of MCP (Model Context Protocol) servers.\n"
        "\n"
        "Commands:\n"
        "  tui [SOURCES] [--theme NAME|FILE] [--no-mouse]\n"
        "                      the full-screen monitor (the default)\n"
        "  check [SOURCES] [--json] [--timeout MS] [--pings R] [--stats]\n"
        "                      dial every server once, ping, report, exit\n"
        "  watch [SOURCES]\n"
        "                      monitor with no UI: JSON Lines on stdout\n"
        "  end [SOURCES] [--server NAME]... [--json] [--teardown MS]\n"
        "                      dial, end each session, report outcomes\n"
        "  login NAME [-c FILE] [--wait MS]\n"
        "                      authorize mcptop for server NAME (OAuth)\n"
        "  logout NAME [-c FILE]\n"
        "                      forget NAME's cached tokens\n"
        "  serve [SOURCES] [--listen HOST:PORT]\n"
        "                      monitor with no UI, serve Prometheus /metrics\n"
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

int
main(int argc, char **argv)
{
    int rc;

    struct rlimit nofile;

    /* A peer closing a socket or pipe must be an error code, not death. */
    signal(SIGPIPE, SIG_IGN);
    /* A fleet needs descriptors: take every one the hard limit allows
     * (what a fleet still cannot fit is said by the fleet, once). */
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 &&
        nofile.rlim_cur < nofile.rlim_max) {
        nofile.rlim_cur = nofile.rlim_max;
        setrlimit(RLIMIT_NOFILE, &nofile);
    }
    if (argc >= 2 && (strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0)) {
        main_usage(stdout);
        return 0;
    }
    if (argc >= 2 && (strcmp(argv[1], "-V") == 0 ||
        strcmp(argv[1], "--version") == 0)) {
        cli_print_version(stdout);
        return 0;
    }
    if (http_global_init() != 0) {
        fprintf(stderr, "mcptop: cannot initialise libcurl\n");
        return EXIT_USAGE;
    }
    if (argc < 2 || argv[1][0] == '-' || app_is_url(argv[1])) {
        rc = tui_main(argc, argv);
    } else if (strcmp(argv[1], "tui") == 0) {
        rc = tui_main(argc - 1, argv + 1);
    } else if (strcmp(argv[1], "check") == 0) {
        rc = cli_check(argc - 1, argv + 1);
    } else if (strcmp(argv[1], "watch") == 0) {
        rc = cli_watch(argc - 1, argv + 1);
    } else if (strcmp(argv[1], "end") == 0) {
        rc = cli_end(argc - 1, argv + 1);
    } else if (strcmp(argv[1], "login") == 0) {
        rc = cli_login(argc - 1, argv + 1);
    } else if (strcmp(argv[1], "logout") == 0) {
        rc = cli_logout(argc - 1, argv + 1);
    } else if (strcmp(argv[1], "serve") == 0) {
        rc = cli_serve(argc - 1, argv + 1);
    } else {
        char *safe = str_sanitized(argv[1]);

        rc = app_usage_error(NULL, "unknown command '%.60s'", safe);
        free(safe);
    }
    http_global_cleanup();
    return rc;
}
