/*
 * The TUI, over a fleet its command made (mcptop tui, src/cli/cli_tui.c;
 * mcptop replay, cli_replay.c): take the terminal and run one libev loop
 * in which engine events only mark the screen dirty and an ev_prepare
 * draws at most once per loop turn (at most about 30 times a second after
 * a key, 4 after engine events alone). stdin is an ev_io whose bytes reach
 * curses through screen.c's non-blocking pipe (a second ev_io reads the
 * keys, which tui_key.c acts on), so nothing curses does can block the
 * loop; every turn feeds the stale marker's watchdog. SIGWINCH is an
 * ev_signal. The terminal is restored on every way out: q, a second q,
 * SIGINT/SIGTERM, the terminal hanging up, and allocation failure (the
 * xmalloc hook); after q one summary line of the endings is printed on
 * it. Never prints while curses is up.
 */
#include "ui/tui.h"

#include <langinfo.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <string.h>
#include <unistd.h>

#include "front/app.h"
#include "engine/server.h"
#include "export/recording.h"
#include "ui/prefs.h"
#include "ui/replay.h"
#include "ui/screen.h"
#include "ui/ui.h"
#include "util/clock.h"
#include "util/xmalloc.h"

#define TUI_FRAME_S     (1.0 / 30.0)  /* after a key or a resize */
#define TUI_EVENT_S     0.25          /* after engine events alone */
#define TUI_HEADER_ROWS 3
#define TUI_QUIT_GRACE_MS 1000

static const struct ui_glyphs tui_glyphs_utf8 = {
    .health = { [HEALTH_OK] = "\xe2\x97\x8f",                /* ● */
                [HEALTH_DEGRADED] = "\xe2\x97\x90",          /* ◐ */
                [HEALTH_DOWN] = "\xe2\x9c\x97",              /* ✗ */
                [HEALTH_UNKNOWN] = "?",
                [HEALTH_PENDING] = "\xe2\x80\xa6",           /* … */
                [HEALTH_INVALID] = "\xe2\x80\x94",           /* — */
                [HEALTH_PAUSED] = "\xe2\x80\x96",            /* ‖ */
                [HEALTH_STOPPED] = "\xe2\x96\xa0",           /* ■ */
                [HEALTH_DISABLED] = "\xe2\x97\x8b" },        /* ○ */
    .live = { [LIVENESS_REACHABLE] = "\xe2\x97\x8f",        /* ● */
              [LIVENESS_UNREACHABLE] = "\xe2\x9c\x97",      /* ✗ */
              [LIVENESS_UNKNOWN] = "?" },
    .absent = "\xe2\x80\x94",                               /* — */
    .strip = { [LIVENESS_REACHABLE] = "\xe2\x96\x88",       /* █ */
               [LIVENESS_UNREACHABLE] = "\xe2\x96\x81",     /* ▁ */
               [LIVENESS_UNKNOWN] = "\xe2\x96\x84" },       /* ▄ */
    .strip_absent = "\xc2\xb7",                             /* · */
    .strip_error = "\xe2\x96\x80",                          /* ▀ */
    .times = "\xc3\x97",                                    /* × */
    .stale = "~",
    .changed = "\xce\x94",                                  /* Δ */
    .sort_down = "\xe2\x96\xbe",                            /* ▾ */
    .sort_up = "\xe2\x96\xb4",                              /* ▴ */
    .ellipsis = "\xe2\x80\xa6",                             /* … */
    .mark = "*",
    .cursor = "\xe2\x96\xb8",                              /* ▸ */
    .sep = "\xc2\xb7",
    .hline = "\xe2\x94\x80",                                /* ─ */
    .ending = "ending\xe2\x80\xa6",
};

static const struct ui_glyphs tui_glyphs_ascii = {
    .health = { [HEALTH_OK] = "+", [HEALTH_DEGRADED] = "!",
                [HEALTH_DOWN] = "x", [HEALTH_UNKNOWN] = "?",
                [HEALTH_PENDING] = ".", [HEALTH_INVALID] = "-",
                [HEALTH_PAUSED] = "=", [HEALTH_STOPPED] = "#",
                [HEALTH_DISABLED] = "o" },
    .live = { [LIVENESS_REACHABLE] = "+", [LIVENESS_UNREACHABLE] = "x",
              [LIVENESS_UNKNOWN] = "?" },
    .absent = "-",
    .strip = { [LIVENESS_REACHABLE] = "#", [LIVENESS_UNREACHABLE] = "_",
               [LIVENESS_UNKNOWN] = "?" },
    .strip_absent = ".",
    .strip_error = "!",
    .times = "x",
    .stale = "~",
    .changed = "^",
    .sort_down = "v",
    .sort_up = "^",
    .ellipsis = "...",
    .mark = "*",
    .cursor = ">",
    .sep = "|",
    .hline = "-",
    .ending = "ending...",
};

void
ui_message(struct ui *ui, enum ui_role role, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(ui->message, sizeof(ui->message), fmt, ap);
    va_end(ap);
    ui->message_role = role;
    ui->message_until = ev_time() +
        (role == UI_ROLE_WARNING ? UI_WARNING_S : UI_MESSAGE_S);
    ui_dirty(ui);
}

void
ui_dirty(struct ui *ui)
{
    ui->dirty = true;
}

/* See ui.h. */
void
ui_view_open(struct ui *ui, const struct ui_view *v)
{
    if (v->open != NULL)
        v->open(ui);
    ui->view = v;
    ui_dirty(ui);
}

int64_t
ui_now_ms(const struct ui *ui)
{
    return ui->replay != NULL ? ui->replay->now : clock_wall_ms();
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

    if (!ui->model.dirty && ui->model_stale &&
        now - ui->last_rebuild < ui->rebuild_gap) {
        model_rebuild(&ui->model, ui_now_ms(ui));
        if (!ev_is_active(&ui->frame_w)) {
            ev_timer_set(&ui->frame_w,
                ui->rebuild_gap - (now - ui->last_rebuild), 0.);
            ev_timer_start(ui->loop, &ui->frame_w);
        }
        return;
    }
    if (!ui->model.dirty && !ui->model_stale) {
        model_rebuild(&ui->model, ui_now_ms(ui));
        return;
    }
    t0 = ev_time();
    if (ui->model.dirty)
        model_rebuild(&ui->model, ui_now_ms(ui));
    else
        model_refresh(&ui->model, ui_now_ms(ui));
    ui->model_stale = false;
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

        ui_line_reset(&l, UI_ROLE_WARNING);
        ui_line_addf(&l, UI_ROLE_WARNING, "mcptop needs %dx%d (now %dx%d)",
            TUI_MIN_COLS, TUI_MIN_ROWS, ui->cols, ui->rows);
        screen_line(0, &l, ui->cols, false);
        ui->table_rows = 0;
        screen_end();
        return;
    }
    body = ui->rows - TUI_HEADER_ROWS - 1;
    ui->table_rows = 0;
    ui->view->draw(ui, TUI_HEADER_ROWS, body);
    /* The header last: it says which rows the table showed. */
    view_header_draw(ui, 0, TUI_HEADER_ROWS);
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
        model_rebuild(&ui->model, ui_now_ms(ui));
    }
    rebuild = (tui_cpu_us() - t0) / (double)k;
    screen_fini();
    fprintf(stderr, "frames: servers %zu rows %d cols %d full_us %.1f "
        "incremental_us %.1f rebuild_us %.1f\n", fleet_size(ui->fleet),
        ui->rows, ui->cols, full, incr, rebuild);
}

/* ev_prepare: draw when dirty, at most once per turn: ~30/s after keys,
 * ~4/s when only engine events changed what is shown. */
static void
tui_prepare_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
    struct ui *ui = w->data;
    ev_tstamp  now, since, gap;
    int        stalled;

    (void)revents;
    stalled = screen_tick();
    if (stalled > 0)
        ui_message(ui, UI_ROLE_WARNING, "the screen was not updated for %d s "
            "(the event loop was blocked)", stalled);
    if (ui->quitting && !fleet_settling(ui->fleet)) {
        ev_break(loop, EVBREAK_ONE);
        return;
    }
    if (!ui->dirty && !ui->dirty_engine)
        return;
    now = ev_time();
    since = now - ui->last_draw;
    gap = ui->dirty ? TUI_FRAME_S : TUI_EVENT_S;
    if (since < gap) {
        if (!ev_is_active(&ui->frame_w) ||
            ev_timer_remaining(loop, &ui->frame_w) > gap - since) {
            ev_timer_stop(loop, &ui->frame_w);
            ev_timer_set(&ui->frame_w, gap - since, 0.);
            ev_timer_start(loop, &ui->frame_w);
        }
        return;
    }
    ui->dirty = false;
    ui->dirty_engine = false;
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
    if (ui->message[0] != '\0' && ui->message_until > 0 &&
        ev_time() >= ui->message_until)
        ui->message[0] = '\0';
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

    struct model_server *ms = e->server != NULL ?
        server_data(e->server) : NULL;

    model_event(&ui->model, e);
    if (ms != NULL && (ms < ui->model.srv || ms >= ui->model.srv +
        ui->model.n))
        ms = NULL;
    if (eventlog_event(&ui->eventlog, e, ms != NULL ? &ms->live_seen :
        NULL))
        view_log_grew(ui, eventlog_get(&ui->eventlog, 0));
    ui->model_stale = true;
    ui->dirty_engine = true;
    if (e->type == EVENT_REQUEST &&
        (e->request_phase == SERVER_REQUEST_CANCEL_OK ||
        e->request_phase == SERVER_REQUEST_CANCEL_FAILED)) {
        /* The tap's answer to a cancel asked here. */
        char name[96];

        fmt_name(name, sizeof(name), e->server);
        if (e->request_phase == SERVER_REQUEST_CANCEL_OK)
            ui_message(ui, UI_ROLE_NORMAL, "%s: request %s cancelled (the "
                "agent was answered -32800)", name, e->request->id);
        else
            ui_message(ui, UI_ROLE_WARNING, "%s: not cancelled: %s", name,
                e->request->outcome);
    }
}

/* q: end every session (fleet_end_all), then leave when every ending has
 * settled or by the teardown deadline plus a grace; a second q leaves at
 * once. */
void
tui_quit(struct ui *ui)
{
    if (ui->quitting) {
        ev_break(ui->loop, EVBREAK_ONE);
        return;
    }
    ui->quitting = true;
    ui->prompt = UI_PROMPT_NONE;
    if (ui->rec != NULL)
        recording_stopping(ui->rec);
    ui->quit_at = clock_wall_ms();
    /* Endings already under way count as the quit's too. */
    ui->quit_busy = xcalloc(fleet_size(ui->fleet) + 1, sizeof(bool));
    for (size_t i = 0; i < fleet_size(ui->fleet); i++)
        ui->quit_busy[i] = server_ending_busy(fleet_server(ui->fleet, i));
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

/* ev_io on curses' key pipe: every key waiting (a bounded batch per turn;
 * the rest on the next turn). */
static void
tui_keys_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    struct ui          *ui = w->data;
    struct screen_click click;
    int                 ch, budget = 512;

    (void)revents;
    while (budget-- > 0) {
        ch = screen_key(&click);
        if (ch < 0)
            break;
        tui_key(ui, ch, &click);
    }
    if (!ev_is_active(&ui->input_w) && screen_pump_release())
        ev_io_start(loop, &ui->input_w);
}

/* ev_io on stdin: move what the terminal sent to curses' pipe. */
static void
tui_input_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    struct ui *ui = w->data;

    (void)revents;
    switch (screen_pump()) {
    case SCREEN_PUMP_OK:
        ev_timer_stop(loop, &ui->hold_w);
        break;
    case SCREEN_PUMP_HELD:
        if (!ev_is_active(&ui->hold_w)) {
            ev_timer_set(&ui->hold_w, SCREEN_HOLD_MS / 1000.0, 0.);
            ev_timer_start(loop, &ui->hold_w);
        }
        break;
    case SCREEN_PUMP_FULL:
        ev_io_stop(loop, w);
        break;
    case SCREEN_PUMP_GONE:
        /* The terminal hung up: nothing can be shown or asked; every
         * session is still ended, bounded, as for q. */
        ev_io_stop(loop, w);
        tui_quit(ui);
        return;
    }
    /* The keys are in curses' pipe: read them now, not a turn later. */
    tui_keys_cb(loop, &ui->keys_w, EV_READ);
}

/* ev_timer: a cut escape sequence was not completed in time: it is keys. */
static void
tui_hold_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct ui *ui = w->data;

    (void)revents;
    if (!screen_pump_release())
        ev_io_stop(loop, &ui->input_w);
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

/*
 * SIGHUP: read the config again. Unchanged servers go on; removed and
 * changed ones have their sessions ended; new ones dial. What loading
 * prints goes to the status line (curses owns the terminal).
 */
static void
tui_reload(struct ui *ui)
{
    struct config  *cfg = NULL;
    char            said[200] = "", *cause = NULL;
    FILE           *tmp = tmpfile();
    int             saved = dup(STDERR_FILENO);
    int             rc;
    struct server **old;
    size_t          nold;

    fflush(stderr);
    if (tmp != NULL && saved >= 0)
        dup2(fileno(tmp), STDERR_FILENO);
    ui->common->interactive = false;
    rc = app_load_config(ui->common, &cfg);
    fflush(stderr);
    if (tmp != NULL && saved >= 0) {
        dup2(saved, STDERR_FILENO);
        rewind(tmp);
        if (fgets(said, sizeof(said), tmp) != NULL)
            said[strcspn(said, "\n")] = '\0';
    }
    if (saved >= 0)
        close(saved);
    if (tmp != NULL)
        fclose(tmp);
    if (rc != 0) {
        ui_message(ui, UI_ROLE_WARNING, "reload failed, the fleet is as it "
            "was: %s", said);
        return;
    }
    /* The x question named a row by its number, which changes: it is
     * withdrawn. Kept servers keep their rows' data, marks and the
     * selection; the sort and the filter stay (model_refleet). */
    if (ui->prompt == UI_PROMPT_END_ONE || ui->prompt == UI_PROMPT_END_MARKED ||
        ui->prompt == UI_PROMPT_CANCEL_REQUEST)
        ui->prompt = UI_PROMPT_NONE;
    nold = fleet_size(ui->fleet);
    old = xcalloc(nold + 1, sizeof(*old));
    for (size_t i = 0; i < nold; i++)
        old[i] = fleet_server(ui->fleet, i);
    if (fleet_reload(ui->fleet, cfg, &cause) != 0) {
        ui_message(ui, UI_ROLE_WARNING, "reload failed: %s", cause);
        free(cause);
    } else {
        ui->cfg = fleet_config(ui->fleet);
        if (ui->rec != NULL)
            recording_fleet(ui->rec, ui->fleet);
        ui_message(ui, UI_ROLE_NORMAL, "config reloaded (SIGHUP): %zu servers; "
            "removed and changed ones had their sessions ended%s%s",
            fleet_size(ui->fleet), said[0] != '\0' ? "; " : "", said);
    }
    model_refleet(&ui->model, old, nold);
    free(old);
    ui_dirty(ui);
}

/* ev_signal SIGINT/SIGTERM: like q (end the sessions, bounded; a second
 * signal leaves at once). SIGHUP reloads the config (a terminal that hangs
 * up is seen on stdin, and ends the sessions like q). The terminal is
 * restored after the loop either way. */
static void
tui_signal_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
    struct ui *ui = w->data;

    (void)loop;
    (void)revents;
    if (w->signum == SIGHUP) {
        /* Not while quitting: servers it added would dial and be left
         * with their sessions open, past the quit's endings. A replay has
         * no config to read again. */
        if (!ui->quitting && ui->replay == NULL)
            tui_reload(ui);
        return;
    }
    tui_quit(ui);
}

/*
 * The line printed on the restored terminal after q (or SIGINT/SIGTERM):
 * "ended 10 sessions: 8 terminated, 1 not_allowed, 1 timed_out", the
 * servers that had none, and the endings a second q left pending. Read
 * before the fleet is freed; caller frees.
 */
static char *
tui_quit_summary(const struct ui *ui)
{
    size_t counts[ENDING__COUNT] = { 0 };
    size_t sessions = 0;
    char   buf[512];
    size_t len;

    for (size_t i = 0; i < fleet_size(ui->fleet); i++) {
        const struct server *s = fleet_server(ui->fleet, i);
        size_t               ne = server_ending_count(s);

        for (size_t k = 0; k < ne; k++) {
            const struct ending *e = server_ending(s, k);

            if (e == NULL || (e->started_at < ui->quit_at &&
                !(k + 1 == ne && ui->quit_busy[i])))
                continue;
            counts[e->outcome]++;
            if (e->outcome != ENDING_NO_SESSION)
                sessions++;
        }
    }
    len = (size_t)snprintf(buf, sizeof(buf), "mcptop: ended %zu session%s",
        sessions, sessions == 1 ? "" : "s");
    for (int o = 0, first = 1; o < ENDING__COUNT && len < sizeof(buf); o++) {
        if (counts[o] == 0 || o == ENDING_NO_SESSION || o == ENDING_PENDING)
            continue;
        len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s %zu %s",
            first ? ":" : ",", counts[o],
            ending_outcome_name((enum ending_outcome)o));
        first = 0;
    }
    if (counts[ENDING_PENDING] > 0 && len < sizeof(buf))
        len += (size_t)snprintf(buf + len, sizeof(buf) - len, "; %zu not "
            "answered yet when mcptop left", counts[ENDING_PENDING]);
    if (counts[ENDING_NO_SESSION] > 0 && len < sizeof(buf))
        snprintf(buf + len, sizeof(buf) - len, "; %zu server%s had no "
            "session to end", counts[ENDING_NO_SESSION],
            counts[ENDING_NO_SESSION] == 1 ? "" : "s");
    return xstrdup(buf);
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
        ui->message_role = UI_ROLE_WARNING;
        free(cause);
    }
}

/* See ui.h. */
struct ui *
tui_ui_new(const char *theme)
{
    struct ui  *ui = xcalloc(1, sizeof(*ui));
    const char *codeset = nl_langinfo(CODESET);

    ui->loop = EV_DEFAULT;
    ui->view = &view_table_mode;
    ui->back = &view_table_mode;
    ui->chooser.back = &view_table_mode;
    ui->utf8 = codeset != NULL && strcmp(codeset, "UTF-8") == 0;
    ui->g = ui->utf8 ? tui_glyphs_utf8 : tui_glyphs_ascii;
    tui_theme_init(ui, theme);
    return ui;
}

/* See ui.h. */
void
tui_ui_free(struct ui *ui)
{
    free(ui->prefs_path);
    theme_list_free(ui->themes, ui->nthemes);
    view_procs_free(ui);
    free(ui->quit_busy);
    free(ui);
}

static void
tui_watchers_start(struct ui *ui)
{
    ev_io_init(&ui->input_w, tui_input_cb, STDIN_FILENO, EV_READ);
    ui->input_w.data = ui;
    ev_io_init(&ui->keys_w, tui_keys_cb, screen_keys_fd(), EV_READ);
    ui->keys_w.data = ui;
    /* The frame benchmark runs with no terminal on stdin. */
    if (getenv("MCPTOP_BENCH_FRAMES") == NULL) {
        ev_io_start(ui->loop, &ui->input_w);
        ev_io_start(ui->loop, &ui->keys_w);
    }
    ev_init(&ui->hold_w, tui_hold_cb);
    ui->hold_w.data = ui;
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
    ev_io_stop(ui->loop, &ui->keys_w);
    ev_timer_stop(ui->loop, &ui->hold_w);
    ev_signal_stop(ui->loop, &ui->winch_w);
    ev_signal_stop(ui->loop, &ui->int_w);
    ev_signal_stop(ui->loop, &ui->term_w);
    ev_signal_stop(ui->loop, &ui->hup_w);
    ev_prepare_stop(ui->loop, &ui->prepare_w);
    ev_timer_stop(ui->loop, &ui->frame_w);
    ev_timer_stop(ui->loop, &ui->age_w);
    ev_timer_stop(ui->loop, &ui->quit_w);
    view_procs_free(ui);        /* an orphan's ending under way stops */
}

/* See ui.h. */
int
tui_run(struct ui *ui, bool no_mouse)
{
    char *summary = NULL;

    model_init(&ui->model, ui->fleet);
    eventlog_init(&ui->eventlog);
    if (ui->start != NULL) {
        const struct tui_opts *o = ui->start;

        tui_prefs_start_view(ui, o->view, o->filter != NULL || o->sorted ||
            o->grouped);
        if (o->filter != NULL)
            model_set_filter(&ui->model, o->filter);
        if (o->sorted) {
            ui->model.sort = o->sort;
            ui->model.invert = o->invert;
        }
        if (o->grouped)
            model_set_group(&ui->model, o->group);
    }
    /* Whatever ends the process from here on restores the terminal. */
    xmalloc_set_oom_hook(screen_fini);
    atexit(screen_fini);
    if (screen_init(ui->utf8, !no_mouse) != 0) {
        fprintf(stderr, "mcptop: cannot start the terminal UI on TERM=%s "
            "(it needs cursor addressing; for scripts: 'mcptop watch')\n",
            getenv("TERM") != NULL ? getenv("TERM") : "");
        return EXIT_USAGE;
    }
    ui->color = screen_colour_ok();
    screen_theme(&ui->theme, ui->color);
    tui_watchers_start(ui);
    if (getenv("MCPTOP_BENCH_FRAMES") == NULL)
        screen_watchdog_start();
    fleet_subscribe(ui->fleet, tui_event_cb, ui);
    if (ui->rec != NULL) {
        recording_start(ui->rec, ui->loop, ui->fleet);
        fleet_subscribe(ui->fleet, recording_event_cb, ui->rec);
    }
    ui->dirty = true;
    if (ui->replay != NULL)
        tui_replay_start(ui);
    else
        fleet_start(ui->fleet);
    if (getenv("MCPTOP_BENCH_FRAMES") != NULL)
        tui_bench_frames(ui, atol(getenv("MCPTOP_BENCH_FRAMES")));
    else
        ev_run(ui->loop, 0);
    tui_watchers_stop(ui);
    if (ui->replay != NULL)
        tui_replay_stop(ui);
    if (ui->quitting)
        summary = tui_quit_summary(ui);
    if (ui->rec != NULL) {
        size_t asked = 0, unended = fleet_unended(ui->fleet, &asked);

        recording_exit(ui->rec, asked, unended);
    }
    screen_fini();
    /* The palette's history, as htop keeps its settings: at the exit. */
    if (ui->prefs != NULL && ui->prefs->dirty_history > 0 &&
        !ui->prefs_frozen && ui->prefs_path != NULL)
        tui_prefs_save(ui);
    if (summary != NULL)
        printf("%s\n", summary);
    free(summary);
    return 0;
}
