/*
 * `mcptop watch`: the monitor loop with no UI. Every engine event becomes
 * one JSON object on one line of stdout, flushed at once, for scripts and
 * log pipelines. SIGINT and SIGTERM stop it cleanly.
 */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "util/clock.h"
#include "util/str.h"

struct watch {
    struct fleet *fleet;
    ev_signal     sigint, sigterm;
    bool          write_failed;
};

static void
watch_usage(FILE *out)
{
    fprintf(out,
        "Usage: mcptop watch [-c FILE | URL] [--log FILE] [--shard K/N]\n"
        "\n"
        "Monitor the fleet with no UI: one JSON object per line on stdout\n"
        "for every exchange, liveness change and tool-list change. Stops on\n"
        "SIGINT or SIGTERM.\n"
        "\n"
        "  -c, --config FILE  the fleet config (JSON: mcpServers or servers)\n"
        "  URL                an http:// or https:// MCP endpoint\n"
        "      --log FILE     append a debug log of every exchange\n"
        CLI_SHARD_HELP
        "  -h, --help         this help\n"
        "\n"
        "Lines:\n"
        "  {\"ts\",\"event\":\"exchange\",\"server\",\"op\",\"outcome\","
        "\"delivered\"?,\"http_status\"?,\"site\"?,\"ms\"}\n"
        "  {\"ts\",\"event\":\"liveness\",\"server\",\"state\","
        "\"error_code\"?}\n"
        "  {\"ts\",\"event\":\"tools_changed\",\"server\",\"tools\"}\n"
        "  {\"ts\",\"event\":\"ending\"|\"settled\",\"server\",\"outcome\",...}\n"
        "On SIGINT/SIGTERM every session is ended (DELETE) before exit,\n"
        "bounded by the teardown deadline plus 1 s; a second signal quits.\n"
        "Exit status: 0 after a signal, 1 when stdout could not be written\n"
        "(the reader went away; noticed at the next line), 2 usage or\n"
        "unreadable config.\n"
        "Config search without -c or URL: %s\n", config_discover_help());
}

/* event_cb: one line per event. */
static void
watch_event_cb(void *arg, const struct event *e)
{
    struct watch *w = arg;
    cJSON        *o;
    char          ts[40];
    char         *name, *text;

    if (e->type == EVENT_STATE)
        return;
    o = cJSON_CreateObject();
    clock_format_iso(e->ts, ts, sizeof(ts));
    cJSON_AddStringToObject(o, "ts", ts);
    name = str_sanitized(server_name(e->server));
    switch (e->type) {
    case EVENT_EXCHANGE:
        cJSON_AddStringToObject(o, "event", "exchange");
        cJSON_AddStringToObject(o, "server", name);
        cJSON_AddStringToObject(o, "op", e->op);
        if (e->completed) {
            cJSON_AddStringToObject(o, "outcome", "completed");
        } else {
            cJSON_AddStringToObject(o, "outcome",
                failure_kind_name(e->failure->kind));
            cJSON_AddStringToObject(o, "delivered",
                delivered_name(e->failure->delivered));
            if (e->failure->http_status != 0)
                cJSON_AddNumberToObject(o, "http_status",
                    (double)e->failure->http_status);
            if (e->failure->reason != REASON_NONE)
                cJSON_AddStringToObject(o, "reason",
                    failure_reason_name(e->failure->reason));
            cJSON_AddStringToObject(o, "site",
                failure_site_name(e->failure->site));
            cJSON_AddStringToObject(o, "detail", e->failure->detail);
        }
        cJSON_AddNumberToObject(o, "ms", (double)((long)(e->ms * 10)) / 10);
        break;
    case EVENT_LIVENESS:
        cJSON_AddStringToObject(o, "event", "liveness");
        cJSON_AddStringToObject(o, "server", name);
        cJSON_AddStringToObject(o, "state",
            liveness_state_name(e->liveness->state));
        if (e->liveness->has_error_code)
            cJSON_AddStringToObject(o, "error_code",
                failure_kind_name(e->liveness->error_code));
        break;
    case EVENT_ENDING:
    case EVENT_SETTLED: {
        cJSON *eo = cli_json_ending(e->ending);
        cJSON *it;

        cJSON_AddStringToObject(o, "event",
            e->type == EVENT_ENDING ? "ending" : "settled");
        cJSON_ArrayForEach(it, eo) {
            cJSON_AddItemReferenceToObject(o, it->string, it);
        }
        free(name);
        text = cJSON_PrintUnformatted(o);
        cJSON_Delete(o);
        cJSON_Delete(eo);
        goto out_print;
    }
    case EVENT_TOOLS_CHANGED:
        cJSON_AddStringToObject(o, "event", "tools_changed");
        cJSON_AddStringToObject(o, "server", name);
        cJSON_AddNumberToObject(o, "tools", (double)e->tools);
        break;
    default:
        break;
    }
    free(name);
    text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
out_print:
    if (fprintf(stdout, "%s\n", text) < 0 || fflush(stdout) != 0) {
        /* The reader went away: stop like a pipeline tool does. */
        w->write_failed = true;
        ev_break(fleet_loop(w->fleet), EVBREAK_ONE);
    }
    free(text);
}

static void
watch_signal_cb(struct ev_loop *loop, ev_signal *sig, int revents)
{
    (void)sig;
    (void)revents;
    ev_break(loop, EVBREAK_ONE);
}

int
cli_watch(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "config", required_argument, NULL, 'c' },
        { "log", required_argument, NULL, 'l' },
        { "shard", required_argument, NULL, 'S' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct cli_common common = { 0 };
    struct watch      w = { 0 };
    struct config    *cfg = NULL;
    struct ev_loop   *loop = EV_DEFAULT;
    int               ch, rc;
    char             *cause = NULL;

    optind = 1;
    while ((ch = getopt_long(argc, argv, "c:h", longopts, NULL)) != -1) {
        switch (ch) {
        case 'c':
            common.config_path = optarg;
            break;
        case 'l':
            common.log_path = optarg;
            break;
        case 'S':
            if (cli_parse_shard(&common, "watch", optarg) != 0)
                return EXIT_USAGE;
            break;
        case 'h':
            watch_usage(stdout);
            return 0;
        default:
            watch_usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (optind < argc) {
        if (!cli_is_url(argv[optind]) || optind + 1 < argc ||
            common.config_path != NULL) {
            fprintf(stderr, "mcptop watch: unexpected argument '%s' "
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
    {
        struct fleet_options opt = { .log = common.log };

        w.fleet = fleet_new(loop, cfg, &opt, &cause);
    }
    if (w.fleet == NULL) {
        fprintf(stderr, "mcptop: %s\n", cause);
        free(cause);
        config_free(cfg);
        cli_close_log(&common);
        return EXIT_USAGE;
    }
    ev_signal_init(&w.sigint, watch_signal_cb, SIGINT);
    ev_signal_start(loop, &w.sigint);
    ev_signal_init(&w.sigterm, watch_signal_cb, SIGTERM);
    ev_signal_start(loop, &w.sigterm);
    fleet_subscribe(w.fleet, watch_event_cb, &w);
    fleet_start(w.fleet);
    ev_run(loop, 0);
    ev_signal_stop(loop, &w.sigint);
    ev_signal_stop(loop, &w.sigterm);
    /* Stopping ends every session first, bounded by the deadline plus a
     * grace; a second signal cuts the wait short. */
    fleet_end_all(w.fleet);
    cli_wait_endings(w.fleet, fleet_teardown_ms(w.fleet) + 1000);
    fleet_stop(w.fleet);
    fleet_free(w.fleet);
    config_free(cfg);
    cli_close_log(&common);
    return w.write_failed ? EXIT_NOT_OK : 0;
}
