/*
 * mcptop: a terminal monitor for fleets of MCP servers. This file reads the
 * command word and hands the rest of argv to the command; it owns process
 * set-up (signals, the HTTP library) and nothing else.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "engine/http.h"
#include "ui/tui.h"

static void
main_usage(FILE *out)
{
    fprintf(out,
        "Usage: mcptop [-c FILE | URL] [--theme NAME|FILE]   the TUI\n"
        "       mcptop COMMAND [OPTIONS]\n"
        "\n"
        "A monitor for fleets of MCP (Model Context Protocol) servers.\n"
        "\n"
        "Commands:\n"
        "  tui [-c FILE | URL] [--theme NAME|FILE] [--log FILE]\n"
        "                      the full-screen monitor (the default)\n"
        "  check [-c FILE | URL] [--json] [--timeout MS] [--pings R] [--stats]\n"
        "                      dial every server once, ping, report, exit\n"
        "  watch [-c FILE | URL]\n"
        "                      monitor with no UI: JSON Lines on stdout\n"
        "  end [-c FILE | URL] [--server NAME]... [--json] [--teardown MS]\n"
        "                      dial, end each session, report outcomes\n"
        "  serve [--listen HOST:PORT] [-c FILE | URL] [--shard K/N]\n"
        "                      monitor with no UI, serve Prometheus /metrics\n"
        "\n"
        "  Every command takes --log FILE: a debug log of every exchange;\n"
        "  tui, check, watch and serve take --shard K/N: a share of the fleet.\n"
        "\n"
        "  -h, --help          this help ('mcptop COMMAND --help' for more)\n"
        "  -V, --version       version and library versions\n"
        "\n"
        "Exit status: 0 ok, 1 some server not ok, 2 usage or config error.\n");
}

static void
main_version(void)
{
    printf("mcptop %s\n%s\n", MCPTOP_VERSION, http_library_version());
}

int
main(int argc, char **argv)
{
    int rc;

    /* A peer closing a socket or pipe must be an error code, not death. */
    signal(SIGPIPE, SIG_IGN);
    if (argc >= 2 && (strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0)) {
        main_usage(stdout);
        return 0;
    }
    if (argc >= 2 && (strcmp(argv[1], "-V") == 0 ||
        strcmp(argv[1], "--version") == 0)) {
        main_version();
        return 0;
    }
    if (http_global_init() != 0) {
        fprintf(stderr, "mcptop: cannot initialise libcurl\n");
        return EXIT_USAGE;
    }
    if (argc < 2 || argv[1][0] == '-' || cli_is_url(argv[1])) {
        rc = tui_main(argc, argv);
    } else if (strcmp(argv[1], "tui") == 0) {
        rc = tui_main(argc - 1, argv + 1);
    } else if (strcmp(argv[1], "check") == 0) {
        rc = cli_check(argc - 1, argv + 1);
    } else if (strcmp(argv[1], "watch") == 0) {
        rc = cli_watch(argc - 1, argv + 1);
    } else if (strcmp(argv[1], "end") == 0) {
        rc = cli_end(argc - 1, argv + 1);
    } else if (strcmp(argv[1], "serve") == 0) {
        rc = cli_serve(argc - 1, argv + 1);
    } else {
        fprintf(stderr, "mcptop: unknown command '%s'\n", argv[1]);
        main_usage(stderr);
        rc = EXIT_USAGE;
    }
    http_global_cleanup();
    return rc;
}
