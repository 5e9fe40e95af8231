/*
 * `mcptop watch`: the monitor loop with no UI. Every engine event becomes
 * one JSON object on one line of stdout, flushed at once, for scripts and
 * log pipelines. SIGINT and SIGTERM stop it cleanly.
 */
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "export/jsonl.h"
#include "export/recording.h"
#include "util/jsonw.h"

struct watch {
    struct cli_fleet cf;
    ev_signal        sigint, sigterm, sighup;
    bool             write_failed;
    struct recording *rec;          /* --record, or NULL */
    struct jsonw     line;      /* one buffer for every line */
};

const struct cli_entry cli_watch_entry = {
    .name = "watch",
    .usage =
        APP_USAGE "\n"
        "                    [--record FILE] [--record-max MB] " APP_USAGE_END,
    .summary = "monitor with no UI: JSON Lines on stdout",
    .exec = cli_watch,
    .needs_http = true,
};

static void
watch_usage(FILE *out)
{
    cli_usage(out, &cli_watch_entry);
    fprintf(out,
        "\n"
        "Monitor the fleet with no UI: one JSON object per line on stdout\n"
        "for every exchange, liveness change and tool-list change. Stops on\n"
        "SIGINT, SIGTERM or SIGHUP.\n"
        "\n"
        "  -h, --help         this help\n");
    app_usage_options(out);
    app_usage_record(out);
    fprintf(out,
        "\n"
        "Lines:\n"
        "  {\"ts\",\"event\":\"exchange\",\"server\",\"op\",\"outcome\","
        "\"delivered\"?,\"http_status\"?,\"reason\"?,\"site\"?,\"detail\"?,\n"
        "   \"next_attempt_at\"?,\"ms\"}   (next_attempt_at: epoch ms of the\n"
        "   next dial or the end of a wait the server asked for)\n"
        "  {\"ts\",\"event\":\"liveness\",\"server\",\"state\","
        "\"error_code\"?}\n"
        "  {\"ts\",\"event\":\"tools_changed\",\"server\",\"tools\"}\n"
        "  {\"ts\",\"event\":\"ending\"|\"settled\",\"server\",\"outcome\",...}\n"
        "  {\"ts\",\"event\":\"exit\",\"sessions_ended\",\"sessions_not_ended\"}\n"
        "On SIGINT/SIGTERM/SIGHUP every session is ended (DELETE) before exit,\n"
        "bounded by the teardown deadline plus 1 s; a second signal quits.\n"
        "Exit status: 0 after a signal, 1 when stdout could not be written\n"
        "(the reader went away; noticed at the next line) or some session\n"
        "was not ended (said on stderr and in the exit event), 2 usage or\n"
        "unreadable config.\n");
    app_usage_sources(out);
}

/* event_cb: one line per event, flushed at once. */
static void
watch_event_cb(void *arg, const struct event *e)
{
    struct watch *w = arg;

    if (!jsonl_event_write(&w->line, e))
        return;
    if (jsonl_write_text(stdout, &w->line) != 0 || fflush(stdout) != 0) {
        /* The reader went away: stop like a pipeline tool does. */
        w->write_failed = true;
        ev_break(fleet_loop(w->cf.fleet), EVBREAK_ONE);
    }
}

/* cli_preamble's parsed: --record's file opens before the config loads. */
static int
watch_parsed(void *arg, int *rc)
{
    struct watch *w = arg;

    return cli_record_open(&w->cf, "watch", &w->rec, rc);
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
        APP_LONGOPTS,
        APP_RECORD_LONGOPTS,
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct watch              w = { 0 };
    const struct cli_preamble pre = { .cmd = "watch", .longopts = longopts,
        .shortopts = "h", .usage = watch_usage, .parsed = watch_parsed,
        .arg = &w };
    struct ev_loop           *loop = EV_DEFAULT;
    char                     *text;
    size_t                    asked = 0, unended;
    int                       rc;

    if (cli_preamble(&pre, argc, argv, &w.cf, &rc) != 0) {
        recording_close(w.rec);
        return rc;
    }
    ev_signal_init(&w.sigint, watch_signal_cb, SIGINT);
    ev_signal_start(loop, &w.sigint);
    ev_signal_init(&w.sigterm, watch_signal_cb, SIGTERM);
    ev_signal_start(loop, &w.sigterm);
    /* A closed terminal or ssh session ends sessions like SIGINT. */
    ev_signal_init(&w.sighup, watch_signal_cb, SIGHUP);
    ev_signal_start(loop, &w.sighup);
    fleet_subscribe(w.cf.fleet, watch_event_cb, &w);
    if (w.rec != NULL) {
        recording_start(w.rec, loop, w.cf.fleet);
        fleet_subscribe(w.cf.fleet, recording_event_cb, w.rec);
    }
    fleet_start(w.cf.fleet);
    ev_run(loop, 0);
    ev_signal_stop(loop, &w.sigint);
    ev_signal_stop(loop, &w.sigterm);
    ev_signal_stop(loop, &w.sighup);
    /* Stopping ends every session first, bounded by the deadline plus a
     * grace; a second signal cuts the wait short. */
    if (w.rec != NULL)
        recording_stopping(w.rec);
    fleet_end_all(w.cf.fleet);
    cli_wait_endings(w.cf.fleet, fleet_teardown_ms(w.cf.fleet) + 1000);
    unended = cli_report_unended(w.cf.fleet, "watch", &asked);
    if (!w.write_failed && (text = jsonl_exit_line(asked, unended)) != NULL) {
        if (fprintf(stdout, "%s\n", text) < 0 || fflush(stdout) != 0)
            w.write_failed = true;
        free(text);
    }
    if (w.rec != NULL)
        recording_exit(w.rec, asked, unended);
    fleet_stop(w.cf.fleet);
    jsonw_done(&w.line);
    if (fleet_exit(w.cf.fleet))
        config_free(w.cf.cfg);
    /* After the fleet: it publishes to the recording until freed. */
    if (!cli_record_close(&w.cf, "watch", &w.rec))
        w.write_failed = true;
    app_close_log(&w.cf.common);
    return w.write_failed || unended > 0 ? EXIT_NOT_OK : 0;
}
