/*
 * What a key does in the TUI: the prompt that is open reads it first (the
 * filter's and the palette's line editors, the y/s answer to an end
 * question), then the mode on screen (ui->view's key, struct ui_view in
 * ui.h; a click goes to its click), then the commands of the key table,
 * which act in every mode that leaves them a key: on the table's selected
 * server (end, redial, pause, ping, cancel), on its sort and grouping, and
 * opening the other modes, the theme, the mouse capture. A command on
 * servers goes through the engine's commands (server_end, server_redial,
 * ...); each says what it did on the status line, and none draws (tui.c
 * draws once per loop turn).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/server.h"
#include "ui/prefs.h"
#include "ui/screen.h"
#include "ui/ui.h"
#include "util/str.h"
#include "util/xmalloc.h"

/* End the sessions of the given servers (x and X). */
static void
tui_key_end(struct ui *ui, const size_t *idx, size_t n)
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
        e = server_end(s, !ui->end_stops);
        if (e != NULL)
            started++;
        else
            unavailable++;
    }
    ui->model.dirty = true;
    if (n == 1 && started == 1) {
        ui_message(ui, UI_ROLE_NORMAL, "ending the session of %s, then %s (e: "
            "endings)", name, ui->end_stops ? "stopping it until r" :
            "dialing it again");
    } else if (n == 1 && unavailable == 1) {
        ui_message(ui, UI_ROLE_WARNING, "%s: ending not available yet", name);
    } else if (n == 1) {
        ui_message(ui, UI_ROLE_WARNING, "%s: nothing to end (%s)", name,
            server_state_name(server_state(fleet_server(ui->fleet,
            idx[0]))));
    } else if (unavailable > 0 && started == 0) {
        ui_message(ui, UI_ROLE_WARNING, "ending not available yet (%zu "
            "servers)", unavailable);
    } else {
        char more[128] = "";

        if (nothing > 0)
            snprintf(more, sizeof(more), "; %zu with nothing to end",
                nothing);
        if (unavailable > 0)
            snprintf(more + strlen(more), sizeof(more) - strlen(more),
                "; %zu not available yet", unavailable);
        ui_message(ui, UI_ROLE_NORMAL, "ending %zu sessions%s (e: endings)",
            started, more);
    }
}

static void
tui_key_end_marked(struct ui *ui)
{
    struct model *m = &ui->model;
    size_t       *v = xcalloc(m->n + 1, sizeof(*v));
    size_t        n = 0;

    for (size_t i = 0; i < m->n; i++) {
        if (m->marked[i])
            v[n++] = i;
    }
    tui_key_end(ui, v, n);
    free(v);
    memset(m->marked, 0, m->n * sizeof(*m->marked));
    m->nmarked = 0;
}

/* t: the next theme, remembered in tui.json. */
static void
tui_key_theme_next(struct ui *ui)
{
    if (ui->nthemes == 0)
        return;
    tui_prefs_theme(ui, ui->themes[(ui->theme_i + 1) % ui->nthemes]);
}

/* A key while the palette's line is open: edit, complete (Tab), run
 * (Enter), cancel (Esc). */
static void
tui_key_palette(struct ui *ui, int ch)
{
    size_t len = strlen(ui->palette);

    if (ch == 27) {
        ui->prompt = UI_PROMPT_NONE;
    } else if (keys_is_enter(ch)) {
        ui->prompt = UI_PROMPT_NONE;
        palette_run(ui, ui->palette);
    } else if (ch == '\t') {
        palette_complete(ui, ui->palette, sizeof(ui->palette));
    } else if (keys_arrow(ch) != 0) {
        palette_history(ui, keys_arrow(ch) < 0);
    } else if (keys_is_backspace(ch)) {
        while (len > 0) {
            len--;
            if (((unsigned char)ui->palette[len] & 0xc0) != 0x80)
                break;
        }
        ui->palette[len] = '\0';
    } else if (keys_is_kill_line(ch)) {
        ui->palette[0] = '\0';
    } else if (ch >= 32 && ch < 256 && len + 1 < sizeof(ui->palette)) {
        ui->palette[len] = (char)ch;
        ui->palette[len + 1] = '\0';
    }
}

/* A key while the filter prompt is open: edit, keep (Enter), clear (Esc). */
static void
tui_key_filter(struct ui *ui, int ch)
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
    } else if (keys_is_kill_line(ch)) {
        ui->input[0] = '\0';
    } else if (keys_is_kill_word(ch)) {
        while (len > 0 && ui->input[len - 1] == ' ')
            len--;
        while (len > 0 && ui->input[len - 1] != ' ')
            len--;
        ui->input[len] = '\0';
    } else if (ch >= 32 && ch < 256 && len + 1 < sizeof(ui->input)) {
        ui->input[len] = (char)ch;
        ui->input[len + 1] = '\0';
    } else {
        return;
    }
    if (ui->view == &view_log_mode)     /* the log's own filter */
        eventlog_set_filter(&ui->eventlog, ui->input);
    else
        model_set_filter(&ui->model, ui->input);
}

/* See ui.h. */
void
tui_key_sort_message(struct ui *ui)
{
    ui_message(ui, UI_ROLE_NORMAL, "sort: %s%s %s (I reverses, < > other "
        "columns)", model_sort_name(ui->model.sort),
        ui->model.invert ? ", reversed" : "",
        ui->model.invert ? ui->g.sort_up : ui->g.sort_down);
}

/*
 * When x (redial false) or r (redial true) can do nothing for server s,
 * say why on the status line and return true: an invalid declaration, a
 * transport not supported, a stopped server, work already under way.
 */
static bool
tui_key_why_not(struct ui *ui, const struct server *s, bool redial)
{
    const struct failure *f = server_last_failure(s, NULL);
    char                  name[128], detail[200] = "";

    fmt_name(name, sizeof(name), s);
    if (f != NULL && f->detail[0] != '\0')
        str_sanitize(detail, sizeof(detail), f->detail, strlen(f->detail));
    switch (server_state(s)) {
    case SERVER_INVALID:
        ui_message(ui, UI_ROLE_WARNING, "%s: %s: the config entry cannot be "
            "dialed; fix it (invalid_config%s%s)", name,
            redial ? "cannot redial" : "no session to end",
            detail[0] != '\0' ? ": " : "", detail);
        return true;
    case SERVER_UNSUPPORTED:
        ui_message(ui, UI_ROLE_WARNING, "%s: %s: its transport is not "
            "supported", name, redial ? "cannot redial" :
            "no session to end");
        return true;
    case SERVER_STOPPED:
        if (redial)
            return false;       /* r dials a stopped server again */
        ui_message(ui, UI_ROLE_WARNING, "%s: stopped: no session to end (r "
            "dials it again)", name);
        return true;
    case SERVER_DISABLED:
        if (redial)
            return false;       /* r enables it for this run */
        ui_message(ui, UI_ROLE_WARNING, "%s: disabled in the config: never "
            "dialed (r enables it for this run)", name);
        return true;
    case SERVER_DIALING:
        if (!redial)
            return false;
        ui_message(ui, UI_ROLE_WARNING, "%s: a dial is already under way",
            name);
        return true;
    case SERVER_ENDING:
        ui_message(ui, UI_ROLE_WARNING, "%s: its ending is under way%s (e: "
            "endings)", name, redial ? "; r again once it settles" : "");
        return true;
    default:
        break;
    }
    if (!redial && server_ending_busy(s)) {
        ui_message(ui, UI_ROLE_WARNING, "%s: its ending is under way (e: "
            "endings)", name);
        return true;
    }
    return false;
}


/* C: offer request i (oldest first) of the selected tap for a cancel, or
 * say why there is none. */
static void
tui_key_cancel_offer(struct ui *ui, size_t sel, size_t i)
{
    const struct server         *s = fleet_server(ui->fleet, sel);
    const struct server_request *r = server_request(s, i);
    char                         name[96];

    fmt_name(name, sizeof(name), s);
    ui->prompt = UI_PROMPT_NONE;
    if (!server_is_tap(s)) {
        ui_message(ui, UI_ROLE_WARNING, "%s is not read from a tap: only an "
            "agent's request through mcptop tap can be cancelled", name);
        return;
    }
    if (r == NULL) {
        ui_message(ui, UI_ROLE_DIM, i == 0 ? "%s: nothing in flight" :
            "%s: no more requests in flight; nothing cancelled", name);
        return;
    }
    if (strcmp(r->direction, "to_server") != 0) {
        /* Only the agent's own requests are the tap's to answer. */
        tui_key_cancel_offer(ui, sel, i + 1);
        return;
    }
    ui->confirm_server = sel;
    ui->cancel_index = i;
    snprintf(ui->cancel_id, sizeof(ui->cancel_id), "%s", r->id);
    ui->prompt = UI_PROMPT_CANCEL_REQUEST;
}

/* The answer to the cancel question. */
static void
tui_key_cancel_answer(struct ui *ui, int ch)
{
    struct server *s = fleet_server(ui->fleet, ui->confirm_server);
    char           name[96];

    ui->prompt = UI_PROMPT_NONE;
    fmt_name(name, sizeof(name), s);
    if (ch == 'n' || ch == 'N') {
        tui_key_cancel_offer(ui, ui->confirm_server, ui->cancel_index + 1);
        return;
    }
    if (ch != 'y' && ch != 'Y') {
        ui_message(ui, UI_ROLE_DIM, "not cancelled");
        return;
    }
    if (!server_cancel_request(s, ui->cancel_id, "cancelled by the operator "
        "in mcptop's TUI"))
        ui_message(ui, UI_ROLE_WARNING, "%s: the tap is not connected; "
            "nothing cancelled", name);
    else
        ui_message(ui, UI_ROLE_NORMAL, "%s: asked the tap to cancel request "
            "%s", name, ui->cancel_id);
}

/* r: redial the selected server (ending its session first), or enable
 * it when the config disabled it. */
static void
tui_key_redial(struct ui *ui)
{
    struct server *s = fleet_server(ui->fleet, ui->model.sel);
    char           name[128];

    if (tui_key_why_not(ui, s, true))
        return;
    fmt_name(name, sizeof(name), s);
    if (server_enable(s)) {
        ui_message(ui, UI_ROLE_NORMAL, "%s enabled for this run: dialing",
            name);
        return;
    }
    if (server_has_session(s)) {
        server_redial(s);
        ui_message(ui, UI_ROLE_NORMAL, "ending the session of %s first, "
            "then dialing (e: endings)", name);
        return;
    }
    server_redial(s);
    ui_message(ui, UI_ROLE_NORMAL, "redialing %s", name);
}

/* P: pause or resume the monitoring of the selected server. */
static void
tui_key_pause(struct ui *ui)
{
    struct server *s = fleet_server(ui->fleet, ui->model.sel);
    char           name[128];

    fmt_name(name, sizeof(name), s);
    if (server_state(s) == SERVER_PAUSED) {
        server_resume(s);
        ui_message(ui, UI_ROLE_NORMAL, "%s: monitoring resumed", name);
    } else if (server_state(s) == SERVER_READY ||
        server_state(s) == SERVER_BACKOFF) {
        server_pause(s);
        ui_message(ui, UI_ROLE_NORMAL, "%s: monitoring paused (no pings, "
            "no dials; P resumes)", name);
    } else {
        ui_message(ui, UI_ROLE_WARNING, "%s: %s: nothing to pause", name,
            server_state_name(server_state(s)));
    }
    ui->model.dirty = true;
}

/* p: ping the selected server now. */
static void
tui_key_ping(struct ui *ui)
{
    struct server *s = fleet_server(ui->fleet, ui->model.sel);
    char           name[128];

    fmt_name(name, sizeof(name), s);
    if (server_ping_now(s))
        ui_message(ui, UI_ROLE_NORMAL, "ping sent to %s", name);
    else
        ui_message(ui, UI_ROLE_WARNING, "%s: no open session, or a ping "
            "is already in flight", name);
}

/* The commands on servers: the selected one (x asks, r, P, p, C asks) or
 * the marked ones (X asks). true when a was one of them. */
static bool
tui_key_server(struct ui *ui, enum ui_action a)
{
    struct model *m = &ui->model;

    switch (a) {
    case UI_ACT_END_ONE:
        if (model_sel_server(m) == MODEL_NONE)
            break;
        if (tui_key_why_not(ui, fleet_server(ui->fleet, m->sel), false))
            break;
        ui->confirm_server = m->sel;
        ui->prompt = UI_PROMPT_END_ONE;
        break;
    case UI_ACT_CANCEL_REQUEST:
        if (m->nvis == 0)
            break;
        tui_key_cancel_offer(ui, m->sel, 0);
        break;
    case UI_ACT_END_MARKED:
        if (m->nmarked == 0)
            ui_message(ui, UI_ROLE_WARNING, "no marked servers (space marks "
                "one)");
        else
            ui->prompt = UI_PROMPT_END_MARKED;
        break;
    case UI_ACT_REDIAL:
    case UI_ACT_PAUSE:
    case UI_ACT_PING:
        if (model_sel_server(m) == MODEL_NONE)
            break;
        if (a == UI_ACT_REDIAL)
            tui_key_redial(ui);
        else if (a == UI_ACT_PAUSE)
            tui_key_pause(ui);
        else
            tui_key_ping(ui);
        break;
    default:
        return false;
    }
    return true;
}

/* The table's order: the sort (s < > I and a column's letter) and the
 * grouping (b). true when a was one of them. */
static bool
tui_key_sort(struct ui *ui, enum ui_action a)
{
    struct model *m = &ui->model;

    switch (a) {
    case UI_ACT_SORT:
    case UI_ACT_SORT_PREV:
        m->sort = (enum model_sort)((m->sort + (a == UI_ACT_SORT ? 1 :
            MODEL_SORT__COUNT - 1)) % MODEL_SORT__COUNT);
        m->invert = false;
        m->dirty = true;
        tui_key_sort_message(ui);
        break;
    case UI_ACT_SORT_INVERT:
        m->invert = !m->invert;
        m->dirty = true;
        tui_key_sort_message(ui);
        break;
    case UI_ACT_SORT_NAME:
    case UI_ACT_SORT_HEALTH:
    case UI_ACT_SORT_LIVENESS:
    case UI_ACT_SORT_AGE:
    case UI_ACT_SORT_FAILURE:
    case UI_ACT_SORT_RTT:
    case UI_ACT_SORT_TOOLS:
        model_set_sort(m, a == UI_ACT_SORT_NAME ? MODEL_SORT_NAME :
            a == UI_ACT_SORT_HEALTH ? MODEL_SORT_HEALTH :
            a == UI_ACT_SORT_LIVENESS ? MODEL_SORT_LIVENESS :
            a == UI_ACT_SORT_AGE ? MODEL_SORT_AGE :
            a == UI_ACT_SORT_FAILURE ? MODEL_SORT_FAILURE :
            a == UI_ACT_SORT_RTT ? MODEL_SORT_RTT : MODEL_SORT_TOOLS);
        tui_key_sort_message(ui);
        break;
    case UI_ACT_GROUP:
        model_set_group(m, (enum model_group)((m->group + 1) %
            MODEL_GROUP__COUNT));
        if (m->group == MODEL_GROUP_NONE)
            ui_message(ui, UI_ROLE_NORMAL, "group: none (b groups by cause, "
                "tag, host, transport)");
        else
            ui_message(ui, UI_ROLE_NORMAL, "group: by %s (Enter on a "
                "header folds it; b: the next grouping)",
                model_group_name(m->group));
        break;
    default:
        return false;
    }
    return true;
}

/* m: mouse capture on or off, remembered in tui.json. */
static void
tui_key_mouse_toggle(struct ui *ui)
{
    screen_mouse(!screen_mouse_enabled());
    tui_prefs_mouse(ui, screen_mouse_enabled());
    if (screen_mouse_enabled())
        ui_message(ui, UI_ROLE_NORMAL, "mouse capture on: a click selects "
            "a row, the wheel scrolls (m: off)");
    else
        ui_message(ui, UI_ROLE_NORMAL, "mouse capture off: the terminal "
            "selects and copies text (m: on)");
}

/* The commands of the key table, in whichever mode left a the key: on
 * servers, on the table's order, then the prompts, the other modes, the
 * look, the snapshot and the copy, help and quit. */
static void
tui_key_command(struct ui *ui, enum ui_action a)
{
    if (tui_key_server(ui, a) || tui_key_sort(ui, a))
        return;
    switch (a) {
    case UI_ACT_PALETTE:
        ui->prompt = UI_PROMPT_COMMAND;
        ui->palette[0] = '\0';
        ui->history_pos = ui->prefs != NULL ? ui->prefs->nhistory : 0;
        break;
    case UI_ACT_FILTER:
        ui->prompt = UI_PROMPT_FILTER;
        snprintf(ui->input, sizeof(ui->input), "%s", ui->model.filter);
        break;
    case UI_ACT_COLUMNS:
        ui_view_open(ui, &view_columns_mode);
        break;
    case UI_ACT_ENDINGS:
        ui_view_open(ui, &view_endings_mode);
        break;
    case UI_ACT_EVENTLOG:
        ui_view_open(ui, &view_log_mode);
        break;
    case UI_ACT_PROCS:
        if (ui->replay != NULL)
            ui_message(ui, UI_ROLE_WARNING, "a replay has no processes");
        else
            ui_view_open(ui, &view_procs_mode);
        break;
    case UI_ACT_HELP:
        ui_view_open(ui, &view_help_mode);
        break;
    case UI_ACT_THEME:
        tui_key_theme_next(ui);
        break;
    case UI_ACT_MOUSE_TOGGLE:
        tui_key_mouse_toggle(ui);
        break;
    case UI_ACT_SNAPSHOT:
        snapshot_write(ui);
        break;
    case UI_ACT_COPY:
        snapshot_copy(ui);
        break;
    case UI_ACT_QUIT:
        tui_quit(ui);
        break;
    default:
        break;
    }
}

/* See ui.h. */
void
tui_key_action(struct ui *ui, enum ui_action a)
{
    tui_key_command(ui, a);
}

/* A mouse event: a turn of the wheel scrolls whatever is shown (three
 * lines, as Up or Down); a click is the mode's. */
static void
tui_key_mouse(struct ui *ui, const struct screen_click *click)
{
    enum ui_action a = click->wheel < 0 ? UI_ACT_UP : UI_ACT_DOWN;

    if (click->wheel != 0) {
        for (int i = 0; i < 3; i++)
            ui->view->key(ui, a, 0);
        return;
    }
    if (ui->view->click != NULL)
        ui->view->click(ui, click);
}

/* The answer to x's or X's question: y ends and dials again, s ends and
 * stops (until r), anything else ends nothing. */
static void
tui_key_end_answer(struct ui *ui, int ch)
{
    enum ui_prompt p = ui->prompt;

    ui->prompt = UI_PROMPT_NONE;
    if (ch != 'y' && ch != 'Y' && ch != 's' && ch != 'S') {
        ui_message(ui, UI_ROLE_DIM, "not ended");
        return;
    }
    ui->end_stops = ch == 's' || ch == 'S';
    if (p == UI_PROMPT_END_ONE)
        tui_key_end(ui, &ui->confirm_server, 1);
    else
        tui_key_end_marked(ui);
}

/* A key while a prompt is open: it is the prompt's. */
static void
tui_key_prompt(struct ui *ui, int ch)
{
    switch (ui->prompt) {
    case UI_PROMPT_FILTER:
        tui_key_filter(ui, ch);
        break;
    case UI_PROMPT_COMMAND:
        tui_key_palette(ui, ch);
        break;
    case UI_PROMPT_CANCEL_REQUEST:
        tui_key_cancel_answer(ui, ch);
        break;
    case UI_PROMPT_END_ORPHAN:
        view_procs_answer(ui, ch);
        break;
    case UI_PROMPT_END_ONE:
    case UI_PROMPT_END_MARKED:
        tui_key_end_answer(ui, ch);
        break;
    case UI_PROMPT_NONE:
        break;
    }
}

/* What one key (or mouse event) does: the prompt that is open reads it
 * first; then the mode on screen, as its keys say (struct ui_view): a raw
 * mode takes every key; the incident line's focus; the replay's keys; the
 * mouse; the mode's own keys; then the command table. */
void
tui_key(struct ui *ui, int ch, const struct screen_click *click)
{
    const struct ui_view *v = ui->view;
    enum ui_action        a = keys_action(ch);

    ui_dirty(ui);
    if (a == UI_ACT_RESIZE) {
        /* resizeterm (tui_winch_cb, tui.c) queues KEY_RESIZE: the size is
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
    if (ui->prompt != UI_PROMPT_NONE) {
        tui_key_prompt(ui, ch);
        return;
    }
    if (v->keys == UI_VIEW_KEYS_RAW) {
        v->key(ui, a, ch);
        return;
    }
    ui->message[0] = '\0';
    if (ui->incident_focus && a != UI_ACT_MOUSE) {
        /* The header's incident line, over the table only. */
        if (v == &view_table_mode && view_incident_key(ui, ch))
            return;
        ui->incident_focus = false;
    }
    if (ui->replay != NULL && v->keys != UI_VIEW_KEYS_OWN &&
        tui_replay_key(ui, a))
        return;
    if (a == UI_ACT_MOUSE) {
        tui_key_mouse(ui, click);
        return;
    }
    if (v->key(ui, a, ch))
        return;
    tui_key_command(ui, a);
}
