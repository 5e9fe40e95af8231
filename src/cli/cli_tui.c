/*
 * `mcptop [tui] [SOURCES] ...`: the terminal monitor, the command a word
 * that is no command's runs too (an option, a URL, nothing). Its options
 * (theme, filter, sort, group, view; --list-themes, --list-views), tui.json
 * read before the terminal is taken (a bad --view is a usage error a
 * script sees), the config and the fleet over it, then the TUI itself
 * (tui_run, src/ui/tui.c) until q; the fleet is stopped and freed after
 * it. Errors before the terminal is taken go to stderr.
 */
#include <getopt.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "export/recording.h"
#include "ui/prefs.h"
#include "ui/tui.h"
#include "ui/ui.h"
#include "util/str.h"
#include "util/xmalloc.h"

const struct cli_entry cli_tui_entry = {
    .name = "tui",
    .usage =
        APP_USAGE "\n"
        "                  [--theme NAME|FILE] [--no-mouse] [--filter EXPR]\n"
        "                  [--sort COL[,desc]] [--group cause|tag|host|transport|none]\n"
        "                  [--view NAME]\n"
        "                  [--record FILE] [--record-max MB] " APP_USAGE_END "\n"
        "       mcptop tui --list-themes | --list-views",
    .summary = "the full-screen monitor (the default)",
    .exec = cli_tui,
    .needs_http = true,
};

static void
cli_tui_usage(FILE *out)
{
    char *where = theme_search_path();

    /* "[tui]": the word may be left out. */
    fprintf(out, "Usage: mcptop [tui] %s\n", cli_tui_entry.usage);
    fprintf(out,
        "\n"
        "The terminal monitor: one row per server, its health, last "
        "failure\n"
        "and exchange history; end sessions and watch the endings.\n"
        "\n"
        "      --theme NAME   dark (default), light, high-contrast, or a "
        "theme FILE\n"
        "      --no-mouse     leave the mouse to the terminal (select and "
        "copy\n"
        "                     text); m in the TUI switches it\n"
        "      --list-themes  print the theme names found, one per line, "
        "and exit\n"
        "      --filter EXPR  start with this filter (the language of / in "
        "the TUI)\n"
        "      --sort COL[,desc]\n"
        "                     start sorted by COL: %s;\n"
        "                     ,desc reverses the column's own order (as I "
        "does)\n"
        "      --group cause|tag|host|transport|none\n"
        "                     start with the rows grouped (b in the TUI "
        "cycles)\n"
        "      --view NAME    start with a view saved by :view save NAME (its "
        "sort,\n"
        "                     filter, group, columns; the flags above "
        "override them);\n"
        "                     without any of these, the default_view of "
        "tui.json\n"
        "      --list-views   print the views saved in tui.json, one per "
        "line, and exit\n"
        "  -h, --help         this help\n", model_sort_columns());
    app_usage_options(out);
    app_usage_record(out);
    fprintf(out,
        "\n"
        "Themes are looked up in %s.\n"
        "Views, the theme, the mouse and the palette's history are kept in\n"
        "$XDG_CONFIG_HOME/mcptop/tui.json (~/.config/mcptop/tui.json).\n"
        "NO_COLOR=1 draws without colour. Press ? in the TUI for the keys.\n",
        where);
    free(where);
    app_usage_sources(out);
}

/* --list-themes: the names --theme takes, one per line. */
static int
cli_tui_list_themes(void)
{
    char **names;
    size_t n = theme_list(&names);

    for (size_t i = 0; i < n; i++) {
        char *safe = str_sanitized(names[i]);

        printf("%s\n", safe);
        free(safe);
    }
    theme_list_free(names, n);
    return fflush(stdout) == 0 && !ferror(stdout) ? -1 : EXIT_USAGE;
}

/* Parse argv into common and *o. 0, -1 for --help or --list-themes
 * (done), or EXIT_USAGE (a bad --filter or --sort says why). */
static int
cli_tui_args(int argc, char **argv, struct app_common *common,
    struct tui_opts *o)
{
    char err[256];

    static const struct option longopts[] = {
        APP_LONGOPTS,
        APP_RECORD_LONGOPTS,
        { "theme", required_argument, NULL, 't' },
        { "list-themes", no_argument, NULL, 'T' },
        { "no-mouse", no_argument, NULL, 'm' },
        { "filter", required_argument, NULL, 'f' },
        { "sort", required_argument, NULL, 's' },
        { "group", required_argument, NULL, 'g' },
        { "view", required_argument, NULL, 'V' },
        { "list-views", no_argument, NULL, 'W' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    /* "mcptop tui ..." names its command; "mcptop ..." is the top level. */
    const char *cmd = strcmp(argv[0], "tui") == 0 ? "tui" : NULL;
    int         ch;

    argc = app_split_command(common, argc, argv);
    common->interactive = true;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":" APP_SHORTOPTS "h", longopts,
        NULL)) != -1) {
        if (app_option(common, ch, optarg))
            continue;
        switch (ch) {
        case 't':
            o->theme = optarg;
            break;
        case 'f':
            if (!model_filter_check(optarg, err, sizeof(err))) {
                fprintf(stderr, "mcptop: --filter: %s\n", err);
                return EXIT_USAGE;
            }
            o->filter = optarg;
            break;
        case 's':
            if (!model_sort_parse(optarg, &o->sort, &o->invert, err,
                sizeof(err))) {
                fprintf(stderr, "mcptop: --sort: %s\n", err);
                return EXIT_USAGE;
            }
            o->sorted = true;
            break;
        case 'g':
            if (!model_group_parse(optarg, &o->group)) {
                char word[32];

                str_sanitize(word, sizeof(word), optarg, strlen(optarg));
                fprintf(stderr, "mcptop: --group: no grouping \"%s\" (cause "
                    "tag host transport none)\n", word);
                return EXIT_USAGE;
            }
            o->grouped = true;
            break;
        case 'V':
            o->view = optarg;
            break;
        case 'W':
            tui_prefs_list_views();
            return -1;
        case 'T':
            return cli_tui_list_themes();
        case 'm':
            o->no_mouse = true;
            break;
        case 'h':
            cli_tui_usage(stdout);
            return -1;
        default:
            return app_option_error(cmd, ch, argv, longopts);
        }
    }
    return app_args(common, cmd != NULL ? "mcptop tui" : "mcptop", argc,
        argv, optind);
}

/* See cli.h. */
int
cli_tui(int argc, char **argv)
{
    struct app_common    common = { 0 };
    struct config       *cfg = NULL;
    struct ui           *ui;
    struct tui_opts      opts = { 0 };
    struct prefs         prefs;
    char                *cause = NULL, *ppath, *pcause = NULL;
    int                  rc, prc;

    rc = cli_tui_args(argc, argv, &common, &opts);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    setlocale(LC_ALL, "");
    /* tui.json: before the terminal, so that a bad --view is a usage
     * error a script sees. */
    prefs_init(&prefs);
    ppath = prefs_path();
    prc = ppath != NULL ? prefs_load(&prefs, ppath, &pcause) : 0;
    rc = tui_prefs_check_view(&prefs, ppath, prc, pcause, opts.view);
    if (rc != 0 || (rc = app_load_config(&common, &cfg)) != 0) {
        free(ppath);
        free(pcause);
        prefs_done(&prefs);
        return rc;
    }
    if ((!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) &&
        getenv("MCPTOP_BENCH_FRAMES") == NULL) {
        fprintf(stderr, "mcptop: the TUI needs a terminal on stdin and "
            "stdout (for scripts: 'mcptop watch' or 'mcptop check')\n");
        rc = EXIT_USAGE;
        goto out_prefs;
    }
    rc = app_open_log(&common);
    if (rc != 0)
        goto out_prefs;
    ui = tui_ui_new(opts.theme);
    ui->cfg = cfg;
    ui->start = &opts;
    ui->common = &common;
    ui->start_theme = opts.theme;
    tui_prefs_attach(ui, &prefs, ppath, prc, pcause);
    ppath = NULL;
    free(pcause);
    pcause = NULL;
    if (prefs.mouse == 0)
        opts.no_mouse = true;
    {
        struct fleet_options opt = { .log = common.log };

        ui->fleet = fleet_new(ui->loop, cfg, &opt, &cause);
    }
    if (ui->fleet == NULL) {
        fprintf(stderr, "mcptop: %s\n", cause);
        free(cause);
        rc = EXIT_USAGE;
        goto out_theme;
    }
    if (fleet_warning(ui->fleet) != NULL)
        snprintf(ui->message, sizeof(ui->message), "warning: %s",
            fleet_warning(ui->fleet));
    if (cfg->nwarnings > 0 && ui->message[0] == '\0') {
        char w[200];

        str_sanitize(w, sizeof(w), cfg->warnings[0],
            strlen(cfg->warnings[0]));
        ui_message(ui, UI_ROLE_WARNING, "config: %zu warning%s: %s",
            cfg->nwarnings, cfg->nwarnings == 1 ? "" : "s", w);
    }
    if (common.record_path != NULL) {
        ui->rec = recording_open(common.record_path, common.record_max_bytes,
            &cause);
        if (ui->rec == NULL) {
            fprintf(stderr, "mcptop: %s\n", cause);
            free(cause);
            rc = EXIT_USAGE;
            fleet_free(ui->fleet);
            goto out_theme;
        }
    }
    rc = tui_run(ui, opts.no_mouse);
    xmalloc_set_oom_hook(NULL);
    fleet_stop(ui->fleet);
    fleet_free(ui->fleet);
    /* After the fleet: it publishes to the recording until freed. */
    if (ui->rec != NULL && recording_error(ui->rec) != NULL)
        fprintf(stderr, "mcptop: the recording is incomplete: %s\n",
            recording_error(ui->rec));
    recording_close(ui->rec);
    model_done(&ui->model);
    eventlog_done(&ui->eventlog);
out_theme:
    tui_ui_free(ui);
    app_close_log(&common);
out_prefs:
    config_free(cfg);
    free(ppath);
    free(pcause);
    prefs_done(&prefs);
    return rc;
}
