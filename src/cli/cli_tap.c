/*
 * `mcptop tap [--name NAME] [--socket PATH] [--teardown MS] -- CMD
 * [ARG]...`: the passive tap (tap.h) where an agent starts a stdio
 * server. Its standard streams are the agent's; nothing of its own goes
 * to stdout. This file owns the tap's loop, its signals (SIGINT, SIGTERM,
 * SIGHUP: the tap's shutdown), its exit status and its words on stderr.
 */
#include <ev.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cli/cli.h"
#include "tap/tap.h"

/* One run of the tap on the default loop. */
struct cli_tap_run {
    struct ev_loop *loop;
    struct tap     *tap;
    ev_signal       sigint, sigterm, sighup;
};

const struct cli_entry cli_tap_entry = {
    .name = "tap",
    .usage =
        "[--name NAME] [--socket PATH] [--teardown MS]\n"
        "                  [--probe [--probe-interval MS]] [--no-socket]\n"
        "                  -- CMD [ARG]...\n"
        "       mcptop tap --listen HOST:PORT --upstream URL [--public]\n"
        "                  [--name NAME] [--socket PATH] [--teardown MS]",
    .summary = "stand in for a stdio server: relay, observe, publish",
    .exec = cli_tap,
};

static void
cli_tap_usage(FILE *out)
{
    cli_usage(out, &cli_tap_entry);
    fprintf(out,
        "\n"
        "Start the stdio MCP server CMD and stand in for it: every byte\n"
        "passes unchanged between the agent (this process's stdin and\n"
        "stdout) and the server; the server's stderr is passed on. A copy\n"
        "of each line is read: the agent's exchanges (liveness, health),\n"
        "the requests in flight with their progress, published as JSON\n"
        "Lines on a Unix socket (mode 0600) that a config entry\n"
        "{\"tap\": PATH} reads. Nothing of the tap's own goes to the\n"
        "server but an operator's cancel (mcptop cancel) and, with --probe,\n"
        "pings.\n"
        "\n"
        "  --name NAME      the server's name (default: CMD's base name)\n"
        "  --socket PATH    where to publish (default:\n"
        "                   $XDG_RUNTIME_DIR/mcptop/tap-NAME.sock, else\n"
        "                   /tmp/mcptop-USER/tap-NAME.sock)\n"
        "  --teardown MS    the shutdown sequence's deadline (3000)\n"
        "  --probe          ping the server when the agent has been quiet for\n"
        "                   the interval (after initialize was answered); the\n"
        "                   answers are not passed on\n"
        "  --probe-interval MS  that interval (15000)\n"
        "  --no-socket      relay and read only, publish nothing\n"
        "\n"
        "The HTTP form stands in for a Streamable HTTP server: the agent's\n"
        "requests to http://HOST:PORT/ go to URL as they came, the answers\n"
        "(JSON, SSE streams) come back as they arrive; the same copy is read\n"
        "and published, and the agent's sessions are listed (mcptop end\n"
        "ends one by its prefix).\n"
        "  --listen HOST:PORT  where the agent connects (a numeric loopback\n"
        "                   address; port 0 picks one, said on stderr)\n"
        "  --upstream URL   the server's own endpoint\n"
        "  --public         let --listen be a non-loopback address\n"
        "  -h, --help       this help\n"
        "\n"
        "Exit status: the server's (128+N when signal N ended it); 127 when\n"
        "it could not be started; 2 for a usage error. The HTTP form: 0\n"
        "when a signal ended it, 2 when it could not listen.\n");
}

/* tap_host.done: the server is gone (or the HTTP form was asked to end). */
static void
cli_tap_done_cb(void *arg)
{
    struct cli_tap_run *r = arg;

    ev_break(r->loop, EVBREAK_ALL);
}

/* tap_host.say */
static void
cli_tap_say_cb(void *arg, const char *text)
{
    (void)arg;
    fprintf(stderr, "mcptop tap: %s\n", text);
}

/* ev_signal: SIGINT, SIGTERM, SIGHUP: the tap's shutdown, once; a second
 * one kills the server's group at once (tap_shutdown). */
static void
cli_tap_signal_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
    struct cli_tap_run *r = w->data;

    (void)loop;
    (void)revents;
    tap_shutdown(r->tap);
}

/*
 * Run the tap until it is done. The exit status: the server's own (128 + N
 * for signal N), 1 if the loop ended with it still running; 127 when it
 * could not be started (as a shell would say), said on stderr. The HTTP
 * form: 0 after a signal, 2 when it cannot listen.
 */
static int
cli_tap_run(const struct tap_options *o)
{
    static const struct tap_host host = {
        .done = cli_tap_done_cb,
        .say = cli_tap_say_cb,
    };
    struct cli_tap_run r = { .loop = EV_DEFAULT };
    char              *cause = NULL;
    int                status, rc;

    r.tap = tap_start(r.loop, o, &host, &r, &cause);
    if (r.tap == NULL) {
        fprintf(stderr, "mcptop tap: %s\n", cause != NULL ? cause :
            o->upstream != NULL ? "cannot listen" :
            "cannot start the server");
        free(cause);
        return o->upstream != NULL ? 2 : 127;
    }
    ev_signal_init(&r.sigint, cli_tap_signal_cb, SIGINT);
    ev_signal_init(&r.sigterm, cli_tap_signal_cb, SIGTERM);
    ev_signal_init(&r.sighup, cli_tap_signal_cb, SIGHUP);
    r.sigint.data = r.sigterm.data = r.sighup.data = &r;
    ev_signal_start(r.loop, &r.sigint);
    ev_signal_start(r.loop, &r.sigterm);
    ev_signal_start(r.loop, &r.sighup);
    ev_run(r.loop, 0);
    ev_signal_stop(r.loop, &r.sigint);
    ev_signal_stop(r.loop, &r.sigterm);
    ev_signal_stop(r.loop, &r.sighup);
    if (o->upstream != NULL)
        rc = 0;
    else if (!tap_server_exited(r.tap, &status))
        rc = 1;
    else if (WIFSIGNALED(status))
        rc = 128 + WTERMSIG(status);
    else
        rc = WEXITSTATUS(status);
    tap_stop(r.tap);
    return rc;
}

int
cli_tap(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "name", required_argument, NULL, 'n' },
        { "socket", required_argument, NULL, 's' },
        { "teardown", required_argument, NULL, 't' },
        { "no-socket", no_argument, NULL, 'N' },
        { "probe", no_argument, NULL, 'p' },
        { "probe-interval", required_argument, NULL, 'i' },
        { "listen", required_argument, NULL, 'l' },
        { "upstream", required_argument, NULL, 'u' },
        { "public", no_argument, NULL, 'P' },
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
        case 'p':
            o.probe = true;
            break;
        case 'i':
            o.probe_interval_ms = cli_parse_ms(optarg);
            if (o.probe_interval_ms <= 0)
                return app_usage_error("tap", "--probe-interval needs a "
                    "positive number of milliseconds");
            break;
        case 'l':
            o.listen = optarg;
            break;
        case 'u':
            o.upstream = optarg;
            break;
        case 'P':
            o.listen_any = true;
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
    if ((o.listen == NULL) != (o.upstream == NULL))
        return app_usage_error("tap", "--listen and --upstream go together");
    if (o.listen != NULL) {
        if (split < argc)
            return app_usage_error("tap", "the HTTP form takes no command");
        if (o.probe)
            return app_usage_error("tap", "--probe is for the stdio form");
        return cli_tap_run(&o);
    }
    if (split >= argc - 1)
        return app_usage_error("tap", "the server's command goes after "
            "'--' (mcptop tap -- CMD [ARG]...)");
    o.argv = argv + split + 1;
    o.argc = (size_t)(argc - split - 1);
    return cli_tap_run(&o);
}

/* --- mcptop cancel -------------------------------------------------------- */

const struct cli_entry cli_cancel_entry = {
    .name = "cancel",
    .usage =
        APP_USAGE "\n"
        "                     --server NAME --request ID [--reason TEXT]\n"
        "                     [--timeout MS] [--json]\n"
        "       mcptop cancel --socket PATH --request ID [--reason TEXT]",
    .summary = "cancel an agent's request through its tap",
    .exec = cli_cancel,
};

static void
cli_cancel_usage(FILE *out)
{
    cli_usage(out, &cli_cancel_entry);
    fprintf(out,
        "\n"
        "Cancel one request an agent has in flight, through the tap that\n"
        "stands in for its server (a config entry {\"tap\": PATH}): the tap\n"
        "sends notifications/cancelled (requestId, reason) to the server and\n"
        "answers the agent itself with JSON-RPC error -32800 \"request\n"
        "cancelled by the operator\" (the reason in data); a late answer of\n"
        "the server's is dropped. ID is the request's id as check --json's\n"
        "in_flight shows it (7, or a string id).\n"
        "\n"
        "  --server NAME    the tap's server in the config\n"
        "  --socket PATH    the tap's socket itself, instead\n"
        "  --request ID     the agent's request id\n"
        "  --reason TEXT    said to the server and the agent\n"
        "  --timeout MS     how long to wait for the tap (5000)\n"
        "  --json           print the tap's answer as JSON\n"
        "\n");
    app_usage_options(out);
    fprintf(out,
        "\nExit status: 0 cancelled, 1 not (no tap, no such request in\n"
        "flight), 2 usage or config error.\n");
}

int
cli_cancel(int argc, char **argv)
{
    static const struct option longopts[] = {
        APP_LONGOPTS,
        { "server", required_argument, NULL, 'S' },
        { "socket", required_argument, NULL, 'P' },
        { "request", required_argument, NULL, 'R' },
        { "reason", required_argument, NULL, 'W' },
        { "timeout", required_argument, NULL, 'T' },
        { "json", no_argument, NULL, 'J' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct app_common common = { 0 };
    const char       *server = NULL, *sock = NULL, *id = NULL;
    const char       *reason = NULL;
    long              timeout = 5000;
    bool              json = false;
    struct config    *cfg = NULL;
    char             *path = NULL, *answer = NULL, *cause = NULL;
    int               ch, rc, n;

    n = app_split_command(&common, argc, argv);
    opterr = 0;
    optind = 1;
    while ((ch = getopt_long(n, argv, ":" APP_SHORTOPTS "h", longopts,
        NULL)) != -1) {
        switch (ch) {
        case 'S':
            server = optarg;
            break;
        case 'P':
            sock = optarg;
            break;
        case 'R':
            id = optarg;
            break;
        case 'W':
            reason = optarg;
            break;
        case 'T':
            timeout = cli_parse_ms(optarg);
            if (timeout <= 0)
                return app_usage_error("cancel", "--timeout needs a "
                    "positive number of milliseconds");
            break;
        case 'J':
            json = true;
            break;
        case 'h':
            cli_cancel_usage(stdout);
            return 0;
        default:
            if (app_option(&common, ch, optarg) == 0)
                return app_option_error("cancel", ch, argv, longopts);
            break;
        }
    }
    if (common.bad_option)
        return EXIT_USAGE;
    if ((rc = app_args(&common, "cancel", n, argv, optind)) != 0)
        return rc;
    if (id == NULL || id[0] == '\0')
        return app_usage_error("cancel", "--request ID is needed");
    if ((server == NULL) == (sock == NULL))
        return app_usage_error("cancel", "give --server NAME (a tap entry "
            "of the config) or --socket PATH");
    if (sock != NULL) {
        path = strdup(sock);
    } else {
        if ((rc = app_load_config(&common, &cfg)) != 0)
            return rc;
        for (size_t i = 0; i < cfg->nservers && path == NULL; i++) {
            if (strcmp(cfg->servers[i].name, server) != 0)
                continue;
            if (cfg->servers[i].tap == NULL) {
                config_free(cfg);
                return app_usage_error("cancel", "server '%.60s' is not a "
                    "tap entry ({\"tap\": PATH}): only a tap can cancel an "
                    "agent's request", server);
            }
            path = strdup(cfg->servers[i].tap);
        }
        config_free(cfg);
        if (path == NULL)
            return app_usage_error("cancel", "no server '%.60s' in the "
                "config", server);
    }
    rc = tap_cancel(path, id, reason, timeout, &answer, &cause);
    if (json && answer != NULL)
        printf("%s\n", answer);
    if (rc == 0) {
        if (!json)
            printf("cancelled request %s on %s\n", id, server != NULL ?
                server : path);
    } else {
        fprintf(stderr, "mcptop cancel: %s\n", cause != NULL ? cause :
            "not cancelled");
    }
    free(answer);
    free(cause);
    free(path);
    return rc == 0 ? 0 : EXIT_NOT_OK;
}
