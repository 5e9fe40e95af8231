/*
 * `mcptop tap [--name NAME] [--socket PATH] [--teardown MS] -- CMD
 * [ARG]...`: the passive tap (tap.h) where an agent starts a stdio
 * server. Its standard streams are the agent's; nothing of its own goes
 * to stdout.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "tap/tap.h"

static void
cli_tap_usage(FILE *out)
{
    fprintf(out,
        "Usage: mcptop tap [--name NAME] [--socket PATH] [--teardown MS]\n"
        "                  [--no-socket] -- CMD [ARG]...\n"
        "\n"
        "Start the stdio MCP server CMD and stand in for it: every byte\n"
        "passes unchanged between the agent (this process's stdin and\n"
        "stdout) and the server; the server's stderr is passed on. A copy\n"
        "of each line is read: the agent's exchanges (liveness, health),\n"
        "the requests in flight with their progress, published as JSON\n"
        "Lines on a Unix socket (mode 0600) that a config entry\n"
        "{\"tap\": PATH} reads. Nothing of the tap's own goes to the\n"
        "server but an operator's cancel (mcptop cancel).\n"
        "\n"
        "  --name NAME      the server's name (default: CMD's base name)\n"
        "  --socket PATH    where to publish (default:\n"
        "                   $XDG_RUNTIME_DIR/mcptop/tap-NAME.sock, else\n"
        "                   /tmp/mcptop-USER/tap-NAME.sock)\n"
        "  --teardown MS    the shutdown sequence's deadline (3000)\n"
        "  --no-socket      relay and read only, publish nothing\n"
        "  -h, --help       this help\n"
        "\n"
        "Exit status: the server's (128+N when signal N ended it); 127 when\n"
        "it could not be started; 2 for a usage error.\n");
}

int
cli_tap(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "name", required_argument, NULL, 'n' },
        { "socket", required_argument, NULL, 's' },
        { "teardown", required_argument, NULL, 't' },
        { "no-socket", no_argument, NULL, 'N' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct tap_options o = { 0 };
    int                split = argc, ch;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            split = i;
            break;
        }
    }
    opterr = 0;
    optind = 1;
    while ((ch = getopt_long(split, argv, ":h", longopts, NULL)) != -1) {
        switch (ch) {
        case 'n':
            if (optarg[0] == '\0')
                return app_usage_error("tap", "--name needs a name");
            o.name = optarg;
            break;
        case 's':
            if (optarg[0] == '\0')
                return app_usage_error("tap", "--socket needs a path");
            o.socket_path = optarg;
            break;
        case 't':
            o.teardown_ms = cli_parse_ms(optarg);
            if (o.teardown_ms <= 0)
                return app_usage_error("tap", "--teardown needs a positive "
                    "number of milliseconds");
            break;
        case 'N':
            o.no_socket = true;
            break;
        case 'h':
            cli_tap_usage(stdout);
            return 0;
        default:
            return app_option_error("tap", ch, argv, longopts);
        }
    }
    if (optind < split)
        return app_usage_error("tap", "unexpected argument before '--'");
    if (split >= argc - 1)
        return app_usage_error("tap", "the server's command goes after "
            "'--' (mcptop tap -- CMD [ARG]...)");
    o.argv = argv + split + 1;
    o.argc = (size_t)(argc - split - 1);
    return tap_run(&o);
}
