/*
 * `mcptop replay FILE [--speed N] [--from TIME] [--to TIME]`: the TUI over
 * a recording (--record FILE), with no network: the recording opened as
 * a fleet of replayed servers (ui/replay.h), --from and --to read against
 * its own start, then the TUI (tui_run; the replay's clock and keys are
 * src/ui/tui_replay.c's). Errors before the terminal is taken go to
 * stderr.
 */
#include <getopt.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli/cli.h"
#include "export/recording.h"
#include "ui/replay.h"
#include "ui/ui.h"
#include "util/xmalloc.h"

const struct cli_entry cli_replay_entry = {
    .name = "replay",
    .usage =
        "FILE [--speed N] [--from TIME] [--to TIME]\n"
        "                    [--theme NAME|FILE] [--no-mouse]",
    .summary = "the TUI over a recording (--record FILE), no network",
    .exec = cli_replay,
    .needs_http = true,
};

static void
cli_replay_usage(FILE *out)
{
    cli_usage(out, &cli_replay_entry);
    fprintf(out,
        "\n"
        "The TUI over a recording (the TUI, watch and serve write one "
        "with their\n"
        "record FILE option), with no network:\n"
        "the header says REPLAY and the recorded time; every view works.\n"
        "\n"
        "      --speed N      recorded seconds per second (default 1; "
        "1/16 to 1024)\n"
        "      --from TIME    start there; TIME is RFC 3339, HH:MM[:SS] "
        "UTC on\n"
        "                     the recording's first day, or +N[s|m|h] "
        "after its start\n"
        "      --to TIME      stop there\n"
        "      --theme NAME   as the TUI's\n"
        "      --no-mouse     as the TUI's\n"
        "  -h, --help         this help\n"
        "\n"
        "Keys: space pause/play, Left/Right 10 s back/forward, [ ] half/"
        "twice the\n"
        "speed, g/G the start/end; the TUI's views, filter and sort as "
        "live\n"
        "(? for all). The bar at the bottom marks the moments health "
        "changed.\n");
}

/* See cli.h. */
int
cli_replay(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "speed", required_argument, NULL, 's' },
        { "from", required_argument, NULL, 'f' },
        { "to", required_argument, NULL, 't' },
        { "theme", required_argument, NULL, 'T' },
        { "no-mouse", no_argument, NULL, 'm' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *from_s = NULL, *to_s = NULL, *theme = NULL, *path;
    double      speed = 1;
    bool        no_mouse = false;
    char       *cause = NULL, *end = NULL;
    struct ui  *ui;
    int64_t     from = -1, to = -1;
    int         ch, rc;

    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (ch) {
        case 's':
            speed = strtod(optarg, &end);
            if (end == optarg || *end != '\0' || !(speed >= 1.0 / 16) ||
                speed > 1024)
                return app_usage_error("replay", "--speed takes a number "
                    "from 0.0625 to 1024, not '%.40s'", optarg);
            break;
        case 'f':
            from_s = optarg;
            break;
        case 't':
            to_s = optarg;
            break;
        case 'T':
            theme = optarg;
            break;
        case 'm':
            no_mouse = true;
            break;
        case 'h':
            cli_replay_usage(stdout);
            return 0;
        default:
            return app_option_error("replay", ch, argv, longopts);
        }
    }
    if (optind + 1 != argc)
        return app_usage_error("replay", optind >= argc ? "give the "
            "recording FILE" : "give one recording FILE");
    path = argv[optind];
    setlocale(LC_ALL, "");
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        fprintf(stderr, "mcptop replay: the replay needs a terminal on "
            "stdin and stdout (for scripts: 'mcptop report')\n");
        return EXIT_USAGE;
    }
    ui = tui_ui_new(theme);
    ui->replay = replay_open(path, ui->loop, -1, -1, &cause);
    if (ui->replay == NULL) {
        fprintf(stderr, "mcptop replay: %s\n", cause);
        free(cause);
        tui_ui_free(ui);
        return EXIT_USAGE;
    }
    /* The times are read against the recording's own start. */
    if (from_s != NULL && (from = recording_parse_time(from_s,
        ui->replay->log->started_at)) < 0)
        rc = app_usage_error("replay", "--from takes RFC 3339, HH:MM[:SS] "
            "or +N[s|m|h], not '%.40s'", from_s);
    else if (to_s != NULL && (to = recording_parse_time(to_s,
        ui->replay->log->started_at)) < 0)
        rc = app_usage_error("replay", "--to takes RFC 3339, HH:MM[:SS] "
            "or +N[s|m|h], not '%.40s'", to_s);
    else
        rc = 0;
    if (rc == 0) {
        struct replay *r = ui->replay;

        if (from >= 0 && from <= r->end)
            r->from = from > r->start ? from : r->start;
        if (to >= 0 && to >= r->from)
            r->to = to < r->end ? to : r->end;
        r->speed = speed;
        ui->fleet = r->fleet;
        ui->cfg = r->cfg;
        if (r->log->cut)
            ui_message(ui, UI_ROLE_WARNING, "the recording ends in a cut "
                "line (a crash?): replayed up to its last whole line");
        rc = tui_run(ui, no_mouse);
        xmalloc_set_oom_hook(NULL);
    }
    replay_free(ui->replay);
    if (ui->fleet != NULL) {
        model_done(&ui->model);
        eventlog_done(&ui->eventlog);
    }
    tui_ui_free(ui);
    return rc;
}
