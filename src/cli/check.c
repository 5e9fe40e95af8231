/*
 * `mcptop check`: dial every server once, ping each that dialed, print a
 * report, exit 0 when every server is ok. Nothing is retried: a check is
 * one observation per server, bounded by the open deadline plus the
 * request timeout.
 */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "engine/http.h"
#include "util/str.h"

struct check {
    struct fleet *fleet;
    ev_timer      step;         /* deferred: ping servers that dialed */
    ev_timer      bound;        /* the whole check's deadline */
    ev_signal     sigint, sigterm;
    bool          interrupted;
};

static void
check_usage(FILE *out)
{
    fprintf(out,
        "Usage: mcptop check [-c FILE | URL] [--json] [--timeout MS] "
        "[--log FILE]\n"
        "\n"
        "Dial every configured MCP server once, ping each that dialed, and\n"
        "report liveness, the last failure's kind and delivery verdict.\n"
        "\n"
        "  -c, --config FILE  the fleet config (JSON: mcpServers or servers)\n"
        "  URL                an http:// or https:// MCP endpoint: a "
        "one-server fleet\n"
        "      --json         one JSON object instead of a table\n"
        "      --timeout MS   request timeout and open deadline, ms\n"
        "      --log FILE     append a debug log of every exchange\n"
        "  -h, --help         this help\n"
        "\n"
        "Exit status: 0 every server ok (dialed, and its ping completed),\n"
        "1 some server not ok, 2 usage or unreadable config.\n"
        "Config search without -c or URL: %s\n", config_discover_help());
}

/* True when every server has its one observation. */
static bool
check_finished(struct check *c)
{
    for (size_t i = 0; i < fleet_size(c->fleet); i++) {
        struct server *s = fleet_server(c->fleet, i);

        if (!server_dial_settled(s))
            return false;
        if (server_state(s) == SERVER_READY &&
            (server_pings_done(s) == 0 || server_ping_in_flight(s)))
            return false;
    }
    return true;
}

static void
check_step_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct check *c = w->data;

    (void)revents;
    for (size_t i = 0; i < fleet_size(c->fleet); i++) {
        struct server *s = fleet_server(c->fleet, i);

        if (server_state(s) == SERVER_READY && server_pings_done(s) == 0 &&
            !server_ping_in_flight(s))
            server_ping_now(s);
    }
    if (check_finished(c))
        ev_break(loop, EVBREAK_ONE);
}

/* event_cb: any event may finish a server; look on the next turn. */
static void
check_event_cb(void *arg, const struct event *e)
{
    struct check *c = arg;

    (void)e;
    if (!ev_is_active(&c->step)) {
        ev_timer_set(&c->step, 0., 0.);
        ev_timer_start(fleet_loop(c->fleet), &c->step);
    }
}

static void
check_bound_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)w;
    (void)revents;
    ev_break(loop, EVBREAK_ONE);
}

static void
check_signal_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
    struct check *c = w->data;

    (void)revents;
    c->interrupted = true;
    ev_break(loop, EVBREAK_ONE);
}

static void
check_print_table(struct check *c)
{
    printf("%-20s %-5s %-11s %-17s %-9s %-4s %5s %8s\n", "NAME", "TRANS",
        "LIVENESS", "LAST FAILURE", "DELIVERED", "HTTP", "TOOLS", "RTT_MS");
    for (size_t i = 0; i < fleet_size(c->fleet); i++) {
        const struct server   *s = fleet_server(c->fleet, i);
        const struct liveness *l = server_liveness(s);
        const struct failure  *f = server_last_failure(s, NULL);
        char                   tools[16] = "-", rtt[16] = "-", st[8] = "-";
        char                  *name = str_sanitized(server_name(s));
        const char            *kind = "-";

        if (server_tools(s) >= 0)
            snprintf(tools, sizeof(tools), "%ld", server_tools(s));
        if (server_rtt_ms(s) >= 0)
            snprintf(rtt, sizeof(rtt), "%.1f", server_rtt_ms(s));
        if (f != NULL && f->http_status != 0)
            snprintf(st, sizeof(st), "%ld", f->http_status);
        if (server_state(s) == SERVER_UNSUPPORTED)
            kind = "stdio: not yet supported";
        else if (f != NULL)
            kind = failure_kind_name(f->kind);
        /* "—" is one column but three bytes: pad it by hand. */
        printf("%-20.20s %-5s %-11s %-17s %-9s %-4s %5s %8s\n", name,
            server_transport_name(s),
            l->present ? liveness_state_name(l->state) : "—          ", kind,
            f != NULL ? delivered_name(f->delivered) : "-", st, tools, rtt);
        if (f != NULL && f->detail[0] != '\0')
            printf("  %s: %s\n", failure_site_name(f->site), f->detail);
        free(name);
    }
}

static void
check_print_json(struct check *c)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *arr = cJSON_AddArrayToObject(root, "servers");
    cJSON *sum;
    long   counts[LIVENESS__COUNT] = { 0 }, absent = 0;
    char  *text;

    for (size_t i = 0; i < fleet_size(c->fleet); i++) {
        const struct server   *s = fleet_server(c->fleet, i);
        const struct liveness *l = server_liveness(s);

        cJSON_AddItemToArray(arr, cli_json_server(s));
        if (l->present)
            counts[l->state]++;
        else
            absent++;
    }
    sum = cJSON_AddObjectToObject(root, "summary");
    cJSON_AddNumberToObject(sum, "reachable",
        (double)counts[LIVENESS_REACHABLE]);
    cJSON_AddNumberToObject(sum, "unreachable",
        (double)counts[LIVENESS_UNREACHABLE]);
    cJSON_AddNumberToObject(sum, "unknown", (double)counts[LIVENESS_UNKNOWN]);
    cJSON_AddNumberToObject(sum, "absent", (double)absent);
    text = cJSON_PrintUnformatted(root);
    printf("%s\n", text);
    free(text);
    cJSON_Delete(root);
}

int
cli_check(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "config", required_argument, NULL, 'c' },
        { "json", no_argument, NULL, 'j' },
        { "timeout", required_argument, NULL, 't' },
        { "log", required_argument, NULL, 'l' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct cli_common    common = { 0 };
    struct fleet_options opt = { .no_streams = true, .no_pings = true,
        .no_redial = true };
    struct check         c = { 0 };
    struct config       *cfg = NULL;
    struct ev_loop      *loop = EV_DEFAULT;
    bool                 json = false;
    long                 timeout = -1, bound_ms = 0;
    int                  ch, rc;
    char                *cause = NULL;

    optind = 1;
    while ((ch = getopt_long(argc, argv, "c:h", longopts, NULL)) != -1) {
        switch (ch) {
        case 'c':
            common.config_path = optarg;
            break;
        case 'j':
            json = true;
            break;
        case 't':
            timeout = cli_parse_ms(optarg);
            if (timeout < 0) {
                fprintf(stderr, "mcptop check: --timeout takes a positive "
                    "number of milliseconds, not '%s'\n", optarg);
                return EXIT_USAGE;
            }
            break;
        case 'l':
            common.log_path = optarg;
            break;
        case 'h':
            check_usage(stdout);
            return 0;
        default:
            check_usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (optind < argc) {
        if (!cli_is_url(argv[optind]) || optind + 1 < argc ||
            common.config_path != NULL) {
            fprintf(stderr, "mcptop check: unexpected argument '%s' "
                "(give -c FILE or one http(s):// URL)\n", argv[optind]);
            return EXIT_USAGE;
        }
        common.url = argv[optind];
    }
    rc = cli_load_config(&common, &cfg);
    if (rc != 0)
        return rc;
    rc = cli_open_log(&common);
    if (rc != 0) {
        config_free(cfg);
        return rc;
    }
    opt.log = common.log;
    if (timeout > 0) {
        opt.timeout_ms = timeout;
        opt.open_deadline_ms = timeout;
    }
    c.fleet = fleet_new(loop, cfg, &opt, &cause);
    if (c.fleet == NULL) {
        fprintf(stderr, "mcptop: %s\n", cause);
        free(cause);
        config_free(cfg);
        cli_close_log(&common);
        return EXIT_USAGE;
    }
    for (size_t i = 0; i < cfg->nservers; i++) {
        const struct config_server *d = &cfg->servers[i];
        long t = timeout > 0 ? timeout : d->timeout_ms;
        long o = timeout > 0 ? timeout : d->open_deadline_ms;

        if (o + t > bound_ms)
            bound_ms = o + t;
    }
    ev_timer_init(&c.step, check_step_cb, 0., 0.);
    c.step.data = &c;
    ev_timer_init(&c.bound, check_bound_cb, (bound_ms + 2000) / 1000.0, 0.);
    ev_timer_start(loop, &c.bound);
    ev_signal_init(&c.sigint, check_signal_cb, SIGINT);
    c.sigint.data = &c;
    ev_signal_start(loop, &c.sigint);
    ev_signal_init(&c.sigterm, check_signal_cb, SIGTERM);
    c.sigterm.data = &c;
    ev_signal_start(loop, &c.sigterm);
    fleet_subscribe(c.fleet, check_event_cb, &c);
    fleet_start(c.fleet);
    if (!check_finished(&c))
        ev_run(loop, 0);
    ev_timer_stop(loop, &c.step);
    ev_timer_stop(loop, &c.bound);
    ev_signal_stop(loop, &c.sigint);
    ev_signal_stop(loop, &c.sigterm);

    if (json)
        check_print_json(&c);
    else
        check_print_table(&c);
    rc = 0;
    for (size_t i = 0; i < fleet_size(c.fleet); i++) {
        if (!server_ok(fleet_server(c.fleet, i)))
            rc = EXIT_NOT_OK;
    }
    if (c.interrupted)
        rc = 130;
    /* Leave no session behind on the servers. */
    if (!c.interrupted) {
        fleet_end_all(c.fleet);
        cli_wait_endings(c.fleet, fleet_teardown_ms(c.fleet) + 1000);
    }
    fleet_free(c.fleet);
    config_free(cfg);
    cli_close_log(&common);
    return rc;
}
