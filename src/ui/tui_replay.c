/*
 * The TUI over a recording (mcptop replay, src/cli/cli_replay.c), with no
 * network. The fleet is the recording's, of replayed servers
 * (ui/replay.h), and the model is fed by their events exactly as from a
 * live fleet, so every view works (detail, endings, filter, sort). This
 * file adds the replay's clock (a timer that moves recorded time at the
 * speed), its keys (space pause, Left/Right 10 s, [ ] speed, g/G start
 * and end), the REPLAY title and the timeline bar with the moments health
 * changed; the commands that would reach a server are refused.
 */
#include <stdio.h>
#include <string.h>

#include "ui/replay.h"
#include "ui/ui.h"
#include "util/clock.h"

#define TUI_REPLAY_TICK_S 0.2
#define TUI_REPLAY_STEP_MS 10000

/* ev_timer: recorded time moves on. */
static void
tui_replay_tick_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct ui *ui = w->data;
    ev_tstamp  now = ev_now(loop);

    (void)revents;
    if (!ui->replay->paused) {
        replay_tick(ui->replay, now - ui->replay_last);
        ui->model_stale = true;
        ui_dirty(ui);
    }
    ui->replay_last = now;
}

void
tui_replay_start(struct ui *ui)
{
    replay_seek(ui->replay, ui->replay->from);
    ui->model_stale = true;
    ev_timer_init(&ui->replay_w, tui_replay_tick_cb, TUI_REPLAY_TICK_S,
        TUI_REPLAY_TICK_S);
    ui->replay_w.data = ui;
    ui->replay_last = ev_now(ui->loop);
    ev_timer_start(ui->loop, &ui->replay_w);
}

void
tui_replay_stop(struct ui *ui)
{
    ev_timer_stop(ui->loop, &ui->replay_w);
}

/* After a seek: the rows show the new moment at once. */
static void
tui_replay_moved(struct ui *ui)
{
    ui->model.dirty = true;
    ui->model_stale = true;
    ui_dirty(ui);
}

bool
tui_replay_key(struct ui *ui, enum ui_action a)
{
    struct replay *r = ui->replay;

    switch (a) {
    case UI_ACT_MARK:
        r->paused = !r->paused;
        if (!r->paused && r->now >= r->to)
            replay_seek(r, r->from);
        ui->replay_last = ev_now(ui->loop);
        break;
    case UI_ACT_REPLAY_BACK:
        replay_seek(r, r->now - TUI_REPLAY_STEP_MS);
        break;
    case UI_ACT_REPLAY_FORWARD:
        replay_seek(r, r->now + TUI_REPLAY_STEP_MS);
        break;
    case UI_ACT_REPLAY_SLOWER:
    case UI_ACT_REPLAY_FASTER:
        replay_speed(r, a == UI_ACT_REPLAY_FASTER);
        break;
    case UI_ACT_HOME:
        if (ui->view != &view_table_mode)
            return false;
        replay_seek(r, r->from);
        break;
    case UI_ACT_END:
        if (ui->view != &view_table_mode)
            return false;
        replay_seek(r, r->to);
        break;
    case UI_ACT_END_ONE:
    case UI_ACT_END_MARKED:
    case UI_ACT_REDIAL:
    case UI_ACT_PAUSE:
    case UI_ACT_PING:
        ui_message(ui, UI_ROLE_WARNING, "a replay only shows what was "
            "recorded: nothing is dialed or ended");
        return true;
    default:
        return false;
    }
    tui_replay_moved(ui);
    return true;
}

/* "x4", "x0.25". */
static void
tui_replay_speed_text(char *buf, size_t n, double speed)
{
    if (speed >= 1)
        snprintf(buf, n, "x%g", speed);
    else
        snprintf(buf, n, "x%.4g", speed);
}

void
tui_replay_title(struct ui *ui, struct ui_line *l)
{
    const struct replay *r = ui->replay;
    char                 iso[40], speed[16];

    clock_format_iso(r->now, iso, sizeof(iso));
    /* 2026-12-01T22:17:32.231Z: the date and the second, in UTC. */
    iso[10] = ' ';
    iso[19] = '\0';
    tui_replay_speed_text(speed, sizeof(speed), r->speed);
    ui_line_add(l, UI_ROLE_WARNING, " REPLAY");
    ui_line_addf(l, UI_ROLE_NORMAL, " %s UTC", iso);
    ui_line_addf(l, UI_ROLE_DIM, " %s %s", r->paused ? "paused" :
        "playing", speed);
}

void
tui_replay_status(struct ui *ui, struct ui_line *l)
{
    const struct replay *r = ui->replay;
    const char          *keys = "space pause  Left/Right 10s  [ ] speed  "
        "g/G start/end  ";
    int                  w = ui->cols - (int)strlen(keys) - 3;
    int64_t              span = r->to - r->from;
    int                  cur;
    size_t               k = 0;

    ui_line_add(l, UI_ROLE_DIM, keys);
    if (w < 10) {
        ui_line_addf(l, UI_ROLE_DIM, "%s", r->paused ? "paused" : "");
        return;
    }
    if (span <= 0)
        span = 1;
    cur = (int)((r->now - r->from) * (w - 1) / span);
    ui_line_add(l, UI_ROLE_DIM, "[");
    for (int x = 0; x < w; x++) {
        int64_t lo = r->from + span * x / w;
        int64_t hi = r->from + span * (x + 1) / w;
        bool    mark = false;

        /* The changes are in time order: one walk for the whole bar. */
        while (k < r->nchanges && r->changes[k] < lo)
            k++;
        mark = k < r->nchanges && r->changes[k] <= hi &&
            r->changes[k] >= r->from;
        if (x == cur)
            ui_line_add(l, UI_ROLE_SELECTION, ui->utf8 ? "\xe2\x96\xb2" :
                "^");
        else if (mark)
            ui_line_add(l, UI_ROLE_WARNING, ui->utf8 ? "\xe2\x94\x82" :
                "|");
        else
            ui_line_add(l, UI_ROLE_DIM, ui->g.hline);
    }
    ui_line_add(l, UI_ROLE_DIM, "]");
}
