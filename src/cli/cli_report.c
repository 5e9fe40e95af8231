/*
 * `mcptop report FILE [--from T] [--to T] [--json]`: the incident report
 * of a recording (export/report.h) on stdout, as Markdown or JSON. Reads
 * the file only: no config, no network.
 */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "export/jsonl.h"
#include "export/recording.h"
#include "export/report.h"
#include "util/str.h"

const struct cli_entry cli_report_entry = {
    .name = "report",
    .usage = "FILE [--from TIME] [--to TIME] [--json]",
    .summary = "the incident report of a recording (--record FILE)",
    .exec = cli_report,
};

static void
report_usage(FILE *out)
{
    cli_usage(out, &cli_report_entry);
    fprintf(out,
        "\n"
        "The incident report of a recording (the TUI, watch and serve "
        "write one\n"
        "with their record FILE option): the time span; for each server "
        "that\n"
        "changed, its timeline of health changes with the failure kind "
        "and\n"
        "reason at each; the servers failing per kind in each minute; the "
        "first\n"
        "failure and the last recovery; the endings and their outcomes. "
        "As\n"
        "Markdown tables, or JSON. A recording cut mid-line (a crash) is "
        "read\n"
        "to its last whole line.\n"
        "\n"
        "      --from TIME    start there (what came before still sets "
        "each\n"
        "                     server's state); TIME is RFC 3339\n"
        "                     (2025-01-02T03:04:05Z), HH:MM[:SS] UTC on "
        "the\n"
        "                     recording's first day, or +N[s|m|h] after "
        "its start\n"
        "      --to TIME      end there\n"
        "      --json         JSON: servers[].timeline[] {at, health, was, "
        "kind,\n"
        "                     reason, http_status?, detail?} in time order, "
        "buckets[],\n"
        "                     endings[], outcomes, first_failure, "
        "last_recovery\n"
        "  -h, --help         this help\n"
        "\n"
        "Exit status: 0, or 2 for usage errors and an unreadable "
        "recording.\n");
}

int
cli_report(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "from", required_argument, NULL, 'f' },
        { "to", required_argument, NULL, 't' },
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char           *from_s = NULL, *to_s = NULL, *path;
    bool                  json = false;
    struct recording_log *log = NULL;
    struct report        *r;
    char                 *cause = NULL;
    int64_t               from = -1, to = -1;
    int                   ch, rc = 0;

    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (ch) {
        case 'f':
            from_s = optarg;
            break;
        case 't':
            to_s = optarg;
            break;
        case 'j':
            json = true;
            break;
        case 'h':
            report_usage(stdout);
            return 0;
        default:
            return app_option_error("report", ch, argv, longopts);
        }
    }
    if (optind + 1 != argc)
        return app_usage_error("report", optind >= argc ? "give the "
            "recording FILE" : "give one recording FILE");
    path = argv[optind];
    if (recording_read(path, &log, &cause) != 0) {
        fprintf(stderr, "mcptop report: %s\n", cause);
        free(cause);
        return EXIT_USAGE;
    }
    if (from_s != NULL &&
        (from = recording_parse_time(from_s, log->started_at)) < 0)
        rc = app_usage_error("report", "--from takes RFC 3339, HH:MM[:SS] "
            "or +N[s|m|h], not '%.40s'", from_s);
    if (rc == 0 && to_s != NULL &&
        (to = recording_parse_time(to_s, log->started_at)) < 0)
        rc = app_usage_error("report", "--to takes RFC 3339, HH:MM[:SS] "
            "or +N[s|m|h], not '%.40s'", to_s);
    if (rc != 0) {
        recording_log_free(log);
        return rc;
    }
    r = report_new(log, from, to);
    if (json) {
        cJSON *o = report_json(r, path);

        if (jsonl_write(stdout, o) != 0)
            rc = EXIT_NOT_OK;
        cJSON_Delete(o);
    } else if (report_markdown(stdout, r, path) != 0) {
        rc = EXIT_NOT_OK;
    }
    if (fflush(stdout) != 0)
        rc = EXIT_NOT_OK;
    report_free(r);
    recording_log_free(log);
    return rc;
}
