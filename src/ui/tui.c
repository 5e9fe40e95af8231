/*
 * The TUI command: load the config, start the fleet, take the terminal,
 * and run one libev loop in which engine events only mark the screen
 * dirty and an ev_prepare draws at most once per loop turn (and at most
 * about 30 times a second). stdin is an ev_io, SIGWINCH an ev_signal. The
 * terminal is restored on every way out: q, a second q, SIGINT/SIGTERM,
 * and allocation failure (the xmalloc hook). Never prints while curses is
 * up; errors before it starts go to stderr.
 */
#include "ui/tui.h"

#include <getopt.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "engine/server.h"
#include "ui/screen.h"
#include "ui/ui.h"
#include "util/clock.h"
#include "util/str.h"
#include "util/xmalloc.h"

#define TUI_FRAME_S     (1.0 / 30.0)
#define TUI_MIN_COLS    40
#define TUI_MIN_ROWS    10
#define TUI_HEADER_ROWS 3
#define TUI_QUIT_GRACE_MS 1000

static const struct ui_glyphs tui_glyphs_utf8 = {
    .live = { [LIVENESS_REACHABLE] = "\xe2\x97\x8f",        /* ● */
              [LIVENESS_UNREACHABLE] = "\xe2\x9c\x97",      /* ✗ */
              [LIVENESS_UNKNOWN] = "?" },
    .absent = "\xe2\x80\x94",                               /* — */
    .strip = { [LIVENESS_REACHABLE] = "\xe2\x96\x88",       /* █ */
               [LIVENESS_UNREACHABLE] = "\xe2\x96\x81",     /* ▁ */
               [LIVENESS_UNKNOWN] = "\xe2\x96\x84" },       /* ▄ */
    .strip_absent = "\xc2\xb7",                             /* · */
    .mark = "*",
    .cursor = "\xe2\x96\xb8",                              /* ▸ */
    .sep = "\xc2\xb7",
    .hline = "\xe2\x94\x80",                                /* ─ */
    .ending = "ending\xe2\x80\xa6",
};

static const struct ui_glyphs tui_glyphs_ascii = {
    .live = { [LIVENESS_REACHABLE] = "+", [LIVENESS_UNREACHABLE] = "x",
              [LIVENESS_UNKNOWN] = "?" },
    .absent = "-",
    .strip = { [LIVENESS_REACHABLE] = "#", [LIVENESS_UNREACHABLE] = "_",
               [LIVENESS_UNKNOWN] = "?" },
    .strip_absent = ".",
    .mark = "*",
    .cursor = ">",
    .sep = "|",
    .hline = "-",
    .ending = "ending...",
};

static void
tui_usage(FILE *out)
{
    fprintf(out,
        "Usage: mcptop [tui] [-c FILE | URL] [--theme NAME|FILE] "
        "[--log FILE]\n"
        "                    [--shard K/N]\n"
        "\n"
        "The terminal monitor: one row per server, its liveness, last "
        "failure\n"
        "and exchange history; end sessions and watch the endings.\n"
        "\n"
        "  -c, --config FILE  the fleet config (JSON: mcpServers or servers)\n"
        "  URL                an http:// or https:// MCP endpoint\n"
        "      --theme NAME   dark (default), light, high-contrast, or a "
        "theme FILE\n"
        "      --log FILE     append a debug log of every exchange\n"
        CLI_SHARD_HELP
        "  -h, --help         this help\n"
        "\n"
        "Themes are looked up in $MCPTOP_THEMES, %s,\n"
        "/usr/local/share/mcptop/themes. NO_COLOR=1 draws without colour.\n"
        "Press ? in the TUI for the keys.\n"
        "Config search without -c or URL: %s\n",
#ifdef MCPTOP_THEMES_DIR
        MCPTOP_THEMES_DIR,
#else
        "(no source tree)",
#endif
        config_discover_help());
}

void
ui_message(struct ui *ui, enum ui_role role, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(ui->message, sizeof(ui->message), fmt, ap);
    va_end(ap);
    ui->message_role = role;
    ui_dirty(ui);
}

void
ui_dirty(struct ui *ui)
{
    ui->dirty = true;
}

/*
 * Refilter, resort and recount when needed. A key's change (model.dirty)
 * is applied at once; engine events (model_stale) are applied at most
 * every rebuild_gap seconds, a gap sized to keep rebuilds under about a
 * tenth of the CPU on a large fleet (the rows themselves always show the
 * current state: they are read at draw time).
 */
static void
tui_rebuild(struct ui *ui)
{
    ev_tstamp now = ev_time(), t0;

    if (ui->model_stale && now - ui->last_rebuild >= ui->rebuild_gap) {
        ui->model.dirty = true;
        ui->model_stale = false;
    }
    if (!ui->model.dirty) {
        model_rebuild(&ui->model, clock_wall_ms());
        if (ui->model_stale && !ev_is_active(&ui->frame_w)) {
            ev_timer_set(&ui->frame_w,
                ui->rebuild_gap - (now - ui->last_rebuild), 0.);
            ev_timer_start(ui->loop, &ui->frame_w);
        }
        return;
    }
    t0 = ev_time();
    model_rebuild(&ui->model, clock_wall_ms());
    ui->last_rebuild = ev_time();
    ui->rebuild_gap = (ui->last_rebuild - t0) * 10.0;
    if (ui->rebuild_gap > 0.5)
        ui->rebuild_gap = 0.5;
}

/* Draw the whole screen once. */
static void
tui_draw(struct ui *ui)
{
    int body;

    screen_size(&ui->rows, &ui->cols);
    tui_rebuild(ui);
    screen_begin();
    if (ui->rows < TUI_MIN_ROWS || ui->cols < TUI_MIN_COLS) {
        struct ui_line l;

        ui_line_reset(&l, ROLE_WARNING);
        ui_line_addf(&l, ROLE_WARNING, "mcptop needs %dx%d (now %dx%d)",
            TUI_MIN_COLS, TUI_MIN_ROWS, ui->cols, ui->rows);
        screen_line(0, &l, ui->cols, false);
        ui->table_rows = 0;
        screen_end();
        return;
    }
    view_header_draw(ui, 0, TUI_HEADER_ROWS);
    body = ui->rows - TUI_HEADER_ROWS - 1;
    ui->table_rows = 0;
    switch (ui->mode) {
    case UI_MODE_HELP:
        view_help_draw(ui, TUI_HEADER_ROWS, body);
        break;
    case UI_MODE_ENDINGS:
        view_endings_draw(ui, TUI_HEADER_ROWS, body);
        break;
    default:
        if (!ui->detail) {
            view_table_draw(ui, TUI_HEADER_ROWS, body);
        } else if (body < 8) {
            view_detail_draw(ui, TUI_HEADER_ROWS, body);
        } else {
            int trows = body / 2;

            view_table_draw(ui, TUI_HEADER_ROWS, trows);
            view_detail_draw(ui, TUI_HEADER_ROWS + trows, body - trows);
        }
        break;
    }
    view_status_draw(ui, ui->rows - 1);
    screen_end();
}

static void
tui_bench_stop_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)w;
    (void)revents;
    ev_break(loop, EVBREAK_ONE);
}

static double
tui_cpu_us(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec * 1e6 + (double)ru.ru_utime.tv_usec +
        (double)ru.ru_stime.tv_sec * 1e6 + (double)ru.ru_stime.tv_usec;
}

/*
 * The frame benchmark (bench/, MCPTOP_BENCH_FRAMES=K): after the fleet has
 * had 1.5 s to dial, draw K full frames (everything repainted, the model
 * as it is), K incremental updates (the selection moves: two rows change)
 * and K rebuilds (filter, sort and counts over every server), and print
 * the CPU per each to stderr once the terminal is restored.
 */
static void
tui_bench_frames(struct ui *ui, long k)
{
    ev_timer stop;
    double   t0, full, incr, rebuild;

    if (k <= 0)
        k = 100;
    ev_timer_init(&stop, tui_bench_stop_cb, 1.5, 0.);
    ev_timer_start(ui->loop, &stop);
    ev_run(ui->loop, 0);
    ev_timer_stop(ui->loop, &stop);
    tui_draw(ui);
    t0 = tui_cpu_us();
    for (long i = 0; i < k; i++) {
        screen_invalidate();
        tui_draw(ui);
    }
    full = (tui_cpu_us() - t0) / (double)k;
    t0 = tui_cpu_us();
    for (long i = 0; i < k; i++) {
        model_move(&ui->model, (i % 20) < 10 ? 1 : -1);
        tui_draw(ui);
    }
    incr = (tui_cpu_us() - t0) / (double)k;
    t0 = tui_cpu_us();
    for (long i = 0; i < k; i++) {
        ui->model.dirty = true;
        model_rebuild(&ui->model, clock_wall_ms());
    }
    rebuild = (tui_cpu_us() - t0) / (double)k;
    screen_fini();
    fprintf(stderr, "frames: servers %zu rows %d cols %d full_us %.1f "
        "incremental_us %.1f rebuild_us %.1f\n", fleet_size(ui->fleet),
        ui->rows, ui->cols, full, incr, rebuild);
}

/* ev_prepare: draw when dirty, at most once per turn and ~30/s. */
static void
tui_prepare_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
    struct ui *ui = w->data;
    ev_tstamp  now, since;

    (void)revents;
    if (ui->quitting && !fleet_endings_busy(ui->fleet)) {
        ev_break(loop, EVBREAK_ONE);
        return;
    }
    if (!ui->dirty)
        return;
    now = ev_time();
    since = now - ui->last_draw;
    if (since < TUI_FRAME_S) {
        if (!ev_is_active(&ui->frame_w)) {
            ev_timer_set(&ui->frame_w, TUI_FRAME_S - since, 0.);
            ev_timer_start(loop, &ui->frame_w);
        }
        return;
    }
    ui->dirty = false;
    ui->last_draw = now;
    tui_draw(ui);
}

/* ev_timer: the frame timer asks for the postponed draw; prepare draws. */
static void
tui_frame_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct ui *ui = w->data;

    (void)loop;
    (void)revents;
    ui_dirty(ui);
}

/* ev_timer, every second: ages on screen move on. */
static void
tui_age_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct ui *ui = w->data;

    (void)loop;
    (void)revents;
    if (ui->model.sort == MODEL_SORT_AGE)
        ui->model_stale = true;
    ui_dirty(ui);
}

/* ev_timer: the quit's deadline passed; go whatever is left. */
static void
tui_quit_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)w;
    (void)revents;
    ev_break(loop, EVBREAK_ONE);
}

/* event_cb: engine events only mark the model and the screen dirty. */
static void
tui_event_cb(void *arg, const struct event *e)
{
    struct ui *ui = arg;

    (void)e;
    ui->model_stale = true;
    ui->dirty = true;
}

/* q: end every session (fleet_end_all), then leave when every ending has
 * settled or by the teardown deadline plus a grace; a second q leaves at
 * once. */
static void
tui_quit(struct ui *ui)
{
    if (ui->quitting) {
        ev_break(ui->loop, EVBREAK_ONE);
        return;
    }
    ui->quitting = true;
    ui->prompt = UI_PROMPT_NONE;
    ui->quit_total = fleet_end_all(ui->fleet);
    ui->model.dirty = true;
    if (!fleet_endings_busy(ui->fleet)) {
        ev_break(ui->loop, EVBREAK_ONE);
        return;
    }
    ev_timer_set(&ui->quit_w,
        (double)(fleet_teardown_ms(ui->fleet) + TUI_QUIT_GRACE_MS) / 1000.0,
        0.);
    ev_timer_start(ui->loop, &ui->quit_w);
    ui_dirty(ui);
}

/* End the sessions of the given servers (x and X). */
static void
tui_end(struct ui *ui, const size_t *idx, size_t n)
{
    size_t started = 0, unavailable = 0, nothing = 0;
    char   name[128] = "";

    for (size_t i = 0; i < n; i++) {
        struct server       *s = fleet_server(ui->fleet, idx[i]);
        enum server_state    st = server_state(s);
        const struct ending *e;

        fmt_name(name, sizeof(name), s);
        if (st == SERVER_INVALID || st == SERVER_UNSUPPORTED ||
            st == SERVER_STOPPED) {
            nothing++;
            continue;
        }
        e = server_end(s, true);
        if (e != NULL)
            started++;
        else
            unavailable++;
    }
    ui->model.dirty = true;
    if (n == 1 && started == 1) {
        ui_message(ui, ROLE_NORMAL, "ending the session of %s (e: endings)",
            name);
    } else if (n == 1 && unavailable == 1) {
        ui_message(ui, ROLE_WARNING, "%s: ending not available yet", name);
    } else if (n == 1) {
        ui_message(ui, ROLE_WARNING, "%s: nothing to end (%s)", name,
            server_state_name(server_state(fleet_server(ui->fleet,
            idx[0]))));
    } else if (unavailable > 0 && started == 0) {
        ui_message(ui, ROLE_WARNING, "ending not available yet (%zu "
            "servers)", unavailable);
    } else {
        char more[128] = "";

        if (nothing > 0)
            snprintf(more, sizeof(more), "; %zu with nothing to end",
                nothing);
        if (unavailable > 0)
            snprintf(more + strlen(more), sizeof(more) - strlen(more),
                "; %zu not available yet", unavailable);
        ui_message(ui, ROLE_NORMAL, "ending %zu sessions%s (e: endings)",
            started, more);
    }
}

static void
tui_end_marked(struct ui *ui)
{
    struct model *m = &ui->model;
    size_t       *v = xcalloc(m->n + 1, sizeof(*v));
    size_t        n = 0;

    for (size_t i = 0; i < m->n; i++) {
        if (m->marked[i])
            v[n++] = i;
    }
    tui_end(ui, v, n);
    free(v);
    memset(m->marked, 0, m->n * sizeof(*m->marked));
    m->nmarked = 0;
}

static void
tui_theme_next(struct ui *ui)
{
    char *cause = NULL;

    ui->theme_i = (ui->theme_i + 1) % ui->nthemes;
    if (theme_load(&ui->theme, ui->themes[ui->theme_i], &cause) != 0) {
        ui_message(ui, ROLE_WARNING, "theme: %s; using the built-in dark "
            "theme", cause);
        free(cause);
    } else {
        ui_message(ui, ROLE_NORMAL, "theme: %s%s", ui->theme.name,
            ui->color ? "" : " (NO_COLOR: attributes only)");
    }
    screen_theme(&ui->theme, ui->color);
}

/* A key while the filter prompt is open: edit, keep (Enter), clear (Esc). */
static void
tui_filter_key(struct ui *ui, int ch)
{
    size_t len = strlen(ui->input);

    if (ch == 27) {
        ui->input[0] = '\0';
        ui->prompt = UI_PROMPT_NONE;
    } else if (keys_is_enter(ch)) {
        ui->prompt = UI_PROMPT_NONE;
    } else if (keys_is_backspace(ch)) {
        while (len > 0) {
            len--;
            if (((unsigned char)ui->input[len] & 0xc0) != 0x80)
                break;
        }
        ui->input[len] = '\0';
    } else if (ch >= 32 && ch < 256 && len + 1 < sizeof(ui->input)) {
        ui->input[len] = (char)ch;
        ui->input[len + 1] = '\0';
    } else {
        return;
    }
    model_set_filter(&ui->model, ui->input);
}

static void
tui_command(struct ui *ui, enum ui_action a)
{
    struct model *m = &ui->model;
    char          name[128];

    switch (a) {
    case UI_ACT_DETAIL:
        if (ui->mode == UI_MODE_TABLE) {
            ui->detail = !ui->detail;
            ui->detail_scroll = 0;
        }
        break;
    case UI_ACT_FILTER:
        ui->prompt = UI_PROMPT_FILTER;
        snprintf(ui->input, sizeof(ui->input), "%s", m->filter);
        break;
    case UI_ACT_CANCEL:
        if (m->filter[0] != '\0') {
            ui->input[0] = '\0';
            model_set_filter(m, "");
        } else if (ui->detail) {
            ui->detail = false;
        }
        break;
    case UI_ACT_END_ONE:
        if (m->nvis == 0)
            break;
        ui->confirm_server = m->sel;
        ui->prompt = UI_PROMPT_END_ONE;
        break;
    case UI_ACT_END_MARKED:
        if (m->nmarked == 0)
            ui_message(ui, ROLE_WARNING, "no marked servers (space marks "
                "one)");
        else
            ui->prompt = UI_PROMPT_END_MARKED;
        break;
    case UI_ACT_REDIAL:
        if (m->nvis == 0)
            break;
        fmt_name(name, sizeof(name), fleet_server(ui->fleet, m->sel));
        server_redial(fleet_server(ui->fleet, m->sel));
        ui_message(ui, ROLE_NORMAL, "redialing %s", name);
        break;
    case UI_ACT_PING:
        if (m->nvis == 0)
            break;
        fmt_name(name, sizeof(name), fleet_server(ui->fleet, m->sel));
        if (server_ping_now(fleet_server(ui->fleet, m->sel)))
            ui_message(ui, ROLE_NORMAL, "ping sent to %s", name);
        else
            ui_message(ui, ROLE_WARNING, "%s: no open session, or a ping "
                "is already in flight", name);
        break;
    case UI_ACT_ENDINGS:
        ui->mode = ui->mode == UI_MODE_ENDINGS ? UI_MODE_TABLE :
            UI_MODE_ENDINGS;
        ui->endings_scroll = 0;
        break;
    case UI_ACT_THEME:
        tui_theme_next(ui);
        break;
    default:
        break;
    }
}

static void
tui_key(struct ui *ui, int ch, int click_y)
{
    enum ui_action a = keys_action(ch);

    ui_dirty(ui);
    if (a == UI_ACT_RESIZE) {
        /* resizeterm (tui_winch_cb) queues KEY_RESIZE: the size is
         * already followed; calling resizeterm again would queue another. */
        return;
    }
    if (ui->quitting) {
        if (a == UI_ACT_QUIT)
            tui_quit(ui);
        return;
    }
    if (ui->rows < TUI_MIN_ROWS || ui->cols < TUI_MIN_COLS) {
        /* Nothing is shown: act on nothing the user cannot see, but
         * quitting. */
        ui->prompt = UI_PROMPT_NONE;
        if (a == UI_ACT_QUIT)
            tui_quit(ui);
        return;
    }
    if (ui->prompt == UI_PROMPT_FILTER) {
        tui_filter_key(ui, ch);
        return;
    }
    if (ui->prompt == UI_PROMPT_END_ONE || ui->prompt == UI_PROMPT_END_MARKED) {
        enum ui_prompt p = ui->prompt;

        ui->prompt = UI_PROMPT_NONE;
        if (ch != 'y' && ch != 'Y') {
            ui_message(ui, ROLE_DIM, "not ended");
            return;
        }
        if (p == UI_PROMPT_END_ONE)
            tui_end(ui, &ui->confirm_server, 1);
        else
            tui_end_marked(ui);
        return;
    }
    ui->message[0] = '\0';
    if (a == UI_ACT_MOUSE) {
        if (click_y >= ui->table_y && click_y < ui->table_y + ui->table_rows &&
            ui->mode == UI_MODE_TABLE) {
            size_t pos = ui->model.top + (size_t)(click_y - ui->table_y);

            if (pos < ui->model.nvis)
                model_goto(&ui->model, pos);
        }
        return;
    }
    if (ui->mode == UI_MODE_HELP) {
        view_help_key(ui, a);
        return;
    }
    if (a == UI_ACT_HELP) {
        ui->back = ui->mode;
        ui->mode = UI_MODE_HELP;
        ui->help_scroll = 0;
        return;
    }
    if (a == UI_ACT_QUIT) {
        tui_quit(ui);
        return;
    }
    if (ui->mode == UI_MODE_ENDINGS && view_endings_key(ui, a))
        return;
    if (ui->mode == UI_MODE_TABLE) {
        if (ui->detail && view_detail_key(ui, a))
            return;
        if (view_table_key(ui, a))
            return;
    }
    tui_command(ui, a);
}

/* ev_io on stdin: every key waiting. */
static void
tui_input_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    struct ui *ui = w->data;
    int        ch, click_y, budget = 512;

    (void)loop;
    (void)revents;
    while (budget-- > 0) {
        ch = screen_key(&click_y);
        if (ch < 0)
            break;
        tui_key(ui, ch, click_y);
    }
}

/* ev_signal SIGWINCH: follow the terminal's size. */
static void
tui_winch_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
    struct ui *ui = w->data;

    (void)loop;
    (void)revents;
    screen_resize();
    ui_dirty(ui);
}

/* ev_signal SIGINT/SIGTERM: like q (end the sessions, bounded; a second
 * signal leaves at once). SIGHUP: the terminal is gone, leave now. The
 * terminal is restored after the loop either way. */
static void
tui_signal_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
    struct ui *ui = w->data;

    (void)revents;
    if (w->signum == SIGHUP) {
        ev_break(loop, EVBREAK_ONE);
        return;
    }
    tui_quit(ui);
}

/* Load --theme (or dark) before the screen is taken. */
static void
tui_theme_init(struct ui *ui, const char *want)
{
    char *cause = NULL;

    ui->nthemes = theme_list(&ui->themes);
    ui->theme_i = 0;
    if (want == NULL)
        want = "dark";
    for (size_t i = 0; i < ui->nthemes; i++) {
        if (strcmp(ui->themes[i], want) == 0)
            ui->theme_i = i;
    }
    if (theme_load(&ui->theme, want, &cause) != 0) {
        fprintf(stderr, "mcptop: theme: %s; using the built-in dark theme\n",
            cause);
        snprintf(ui->message, sizeof(ui->message), "theme: %s; using the "
            "built-in dark theme", cause);
        ui->message_role = ROLE_WARNING;
        free(cause);
    }
}

static void
tui_watchers_start(struct ui *ui)
{
    ev_io_init(&ui->input_w, tui_input_cb, STDIN_FILENO, EV_READ);
    ui->input_w.data = ui;
    ev_io_start(ui->loop, &ui->input_w);
    ev_signal_init(&ui->winch_w, tui_winch_cb, SIGWINCH);
    ui->winch_w.data = ui;
    ev_signal_start(ui->loop, &ui->winch_w);
    ev_signal_init(&ui->int_w, tui_signal_cb, SIGINT);
    ui->int_w.data = ui;
    ev_signal_start(ui->loop, &ui->int_w);
    ev_signal_init(&ui->term_w, tui_signal_cb, SIGTERM);
    ui->term_w.data = ui;
    ev_signal_start(ui->loop, &ui->term_w);
    ev_signal_init(&ui->hup_w, tui_signal_cb, SIGHUP);
    ui->hup_w.data = ui;
    ev_signal_start(ui->loop, &ui->hup_w);
    ev_prepare_init(&ui->prepare_w, tui_prepare_cb);
    ui->prepare_w.data = ui;
    ev_prepare_start(ui->loop, &ui->prepare_w);
    ev_init(&ui->frame_w, tui_frame_cb);
    ui->frame_w.data = ui;
    ev_timer_init(&ui->age_w, tui_age_cb, 1., 1.);
    ui->age_w.data = ui;
    ev_timer_start(ui->loop, &ui->age_w);
    ev_init(&ui->quit_w, tui_quit_cb);
}

static void
tui_watchers_stop(struct ui *ui)
{
    ev_io_stop(ui->loop, &ui->input_w);
    ev_signal_stop(ui->loop, &ui->winch_w);
    ev_signal_stop(ui->loop, &ui->int_w);
    ev_signal_stop(ui->loop, &ui->term_w);
    ev_signal_stop(ui->loop, &ui->hup_w);
    ev_prepare_stop(ui->loop, &ui->prepare_w);
    ev_timer_stop(ui->loop, &ui->frame_w);
    ev_timer_stop(ui->loop, &ui->age_w);
    ev_timer_stop(ui->loop, &ui->quit_w);
}

/* Parse argv into common and *theme. 0, -1 for --help, or EXIT_USAGE. */
static int
tui_args(int argc, char **argv, struct cli_common *common,
    const char **theme)
{
    static const struct option longopts[] = {
        { "config", required_argument, NULL, 'c' },
        { "theme", required_argument, NULL, 't' },
        { "log", required_argument, NULL, 'l' },
        { "shard", required_argument, NULL, 'S' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int ch;

    optind = 1;
    while ((ch = getopt_long(argc, argv, "c:h", longopts, NULL)) != -1) {
        switch (ch) {
        case 'c':
            common->config_path = optarg;
            break;
        case 't':
            *theme = optarg;
            break;
        case 'l':
            common->log_path = optarg;
            break;
        case 'S':
            if (cli_parse_shard(common, "tui", optarg) != 0)
                return EXIT_USAGE;
            break;
        case 'h':
            tui_usage(stdout);
            return -1;
        default:
            tui_usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (optind < argc) {
        if (!cli_is_url(argv[optind]) || optind + 1 < argc ||
            common->config_path != NULL) {
            fprintf(stderr, "mcptop: unexpected argument '%s' (give -c FILE "
                "or one http(s):// URL)\n", argv[optind]);
            return EXIT_USAGE;
        }
        common->url = argv[optind];
    }
    return 0;
}

int
tui_main(int argc, char **argv)
{
    struct cli_common    common = { 0 };
    struct config       *cfg = NULL;
    struct ui           *ui;
    const char          *theme = NULL;
    const char          *codeset;
    char                *cause = NULL;
    int                  rc;

    rc = tui_args(argc, argv, &common, &theme);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    setlocale(LC_ALL, "");
    rc = cli_load_config(&common, &cfg);
    if (rc != 0)
        return rc;
    if ((!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) &&
        getenv("MCPTOP_BENCH_FRAMES") == NULL) {
        fprintf(stderr, "mcptop: the TUI needs a terminal on stdin and "
            "stdout (for scripts: 'mcptop watch' or 'mcptop check')\n");
        config_free(cfg);
        return EXIT_USAGE;
    }
    rc = cli_open_log(&common);
    if (rc != 0) {
        config_free(cfg);
        return rc;
    }
    ui = xcalloc(1, sizeof(*ui));
    ui->loop = EV_DEFAULT;
    ui->cfg = cfg;
    codeset = nl_langinfo(CODESET);
    ui->utf8 = codeset != NULL && strcmp(codeset, "UTF-8") == 0;
    ui->g = ui->utf8 ? tui_glyphs_utf8 : tui_glyphs_ascii;
    tui_theme_init(ui, theme);
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
    if (cfg->nwarnings > 0 && ui->message[0] == '\0') {
        char w[200];

        str_sanitize(w, sizeof(w), cfg->warnings[0],
            strlen(cfg->warnings[0]));
        ui_message(ui, ROLE_WARNING, "config: %zu warning%s: %s",
            cfg->nwarnings, cfg->nwarnings == 1 ? "" : "s", w);
    }
    model_init(&ui->model, ui->fleet);
    /* Whatever ends the process from here on restores the terminal. */
    xmalloc_set_oom_hook(screen_fini);
    atexit(screen_fini);
    if (screen_init() != 0) {
        fprintf(stderr, "mcptop: cannot start the terminal UI on TERM=%s "
            "(it needs cursor addressing; for scripts: 'mcptop watch')\n",
            getenv("TERM") != NULL ? getenv("TERM") : "");
        rc = EXIT_USAGE;
        goto out_fleet;
    }
    ui->color = screen_colour_ok();
    screen_theme(&ui->theme, ui->color);
    tui_watchers_start(ui);
    fleet_subscribe(ui->fleet, tui_event_cb, ui);
    ui->dirty = true;
    fleet_start(ui->fleet);
    if (getenv("MCPTOP_BENCH_FRAMES") != NULL)
        tui_bench_frames(ui, atol(getenv("MCPTOP_BENCH_FRAMES")));
    else
        ev_run(ui->loop, 0);
    tui_watchers_stop(ui);
    screen_fini();
    rc = 0;
out_fleet:
    xmalloc_set_oom_hook(NULL);
    fleet_stop(ui->fleet);
    fleet_free(ui->fleet);
    model_done(&ui->model);
out_theme:
    theme_list_free(ui->themes, ui->nthemes);
    free(ui);
    config_free(cfg);
    cli_close_log(&common);
    return rc;
}
