/*
 * What a key does in the TUI: the filter prompt's line editor, the y/s
 * answer to an end question, a mouse click or wheel, the views' own keys,
 * then the commands of the key table (end, redial, pause, ping, sort,
 * theme, mouse capture). A command on servers goes through the engine's
 * commands (server_end, server_redial, ...); each says what it did on the
 * status line, and none draws (tui.c draws once per loop turn).
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
    if (ui->mode == UI_MODE_LOG)
        eventlog_set_filter(&ui->eventlog, ui->input);
    else
        model_set_filter(&ui->model, ui->input);
}

static void
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

static void
tui_key_command(struct ui *ui, enum ui_action a)
{
    struct model *m = &ui->model;
    char          name[128];

    switch (a) {
    case UI_ACT_DETAIL:
        if (ui->mode == UI_MODE_TABLE && model_group_toggle(m))
            break;      /* Enter on a group's header folds it */
        if (ui->mode == UI_MODE_TABLE) {
            ui->detail = !ui->detail;
            ui->detail_scroll = 0;
        }
        break;
    case UI_ACT_PALETTE:
        ui->prompt = UI_PROMPT_COMMAND;
        ui->palette[0] = '\0';
        ui->history_pos = ui->prefs != NULL ? ui->prefs->nhistory : 0;
        break;
    case UI_ACT_COLUMNS:
        view_columns_open(ui);
        break;
    case UI_ACT_FILTER:
        ui->prompt = UI_PROMPT_FILTER;
        snprintf(ui->input, sizeof(ui->input), "%s", ui->mode ==
            UI_MODE_LOG ? ui->eventlog.filter : m->filter);
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
        if (model_sel_server(m) == MODEL_NONE)
            break;
        if (tui_key_why_not(ui, fleet_server(ui->fleet, m->sel), true))
            break;
        fmt_name(name, sizeof(name), fleet_server(ui->fleet, m->sel));
        if (server_enable(fleet_server(ui->fleet, m->sel))) {
            ui_message(ui, UI_ROLE_NORMAL, "%s enabled for this run: dialing",
                name);
            break;
        }
        if (server_has_session(fleet_server(ui->fleet, m->sel))) {
            server_redial(fleet_server(ui->fleet, m->sel));
            ui_message(ui, UI_ROLE_NORMAL, "ending the session of %s first, "
                "then dialing (e: endings)", name);
            break;
        }
        server_redial(fleet_server(ui->fleet, m->sel));
        ui_message(ui, UI_ROLE_NORMAL, "redialing %s", name);
        break;
    case UI_ACT_PAUSE: {
        struct server *s;

        if (model_sel_server(m) == MODEL_NONE)
            break;
        s = fleet_server(ui->fleet, m->sel);
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
        break;
    }
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
    case UI_ACT_PING:
        if (model_sel_server(m) == MODEL_NONE)
            break;
        fmt_name(name, sizeof(name), fleet_server(ui->fleet, m->sel));
        if (server_ping_now(fleet_server(ui->fleet, m->sel)))
            ui_message(ui, UI_ROLE_NORMAL, "ping sent to %s", name);
        else
            ui_message(ui, UI_ROLE_WARNING, "%s: no open session, or a ping "
                "is already in flight", name);
        break;
    case UI_ACT_ENDINGS:
        ui->mode = ui->mode == UI_MODE_ENDINGS ? UI_MODE_TABLE :
            UI_MODE_ENDINGS;
        ui->endings_scroll = 0;
        break;
    case UI_ACT_EVENTLOG:
        ui->mode = ui->mode == UI_MODE_LOG ? UI_MODE_TABLE : UI_MODE_LOG;
        ui->log_scroll = 0;
        break;
    case UI_ACT_PROCS:
        if (ui->replay != NULL) {
            ui_message(ui, UI_ROLE_WARNING, "a replay has no processes");
            break;
        }
        view_procs_open(ui);
        break;
    case UI_ACT_THEME:
        tui_key_theme_next(ui);
        break;
    case UI_ACT_SNAPSHOT:
        snapshot_write(ui);
        break;
    case UI_ACT_COPY:
        snapshot_copy(ui);
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
    case UI_ACT_INCIDENTS:
        if (ui->mode != UI_MODE_TABLE)
            break;
        if (view_incident_count(ui) == 0) {
            ui_message(ui, UI_ROLE_DIM, "no incidents to pick");
            break;
        }
        ui->incident_focus = true;
        ui->incident_sel = 0;
        break;
    case UI_ACT_MOUSE_TOGGLE:
        screen_mouse(!screen_mouse_enabled());
        tui_prefs_mouse(ui, screen_mouse_enabled());
        if (screen_mouse_enabled())
            ui_message(ui, UI_ROLE_NORMAL, "mouse capture on: a click selects "
                "a row, the wheel scrolls (m: off)");
        else
            ui_message(ui, UI_ROLE_NORMAL, "mouse capture off: the terminal "
                "selects and copies text (m: on)");
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

/* A mouse event: a press on a table row selects it; the wheel scrolls
 * whatever is shown. */
static void
tui_key_mouse(struct ui *ui, const struct screen_click *click)
{
    enum ui_action a = click->wheel < 0 ? UI_ACT_UP : UI_ACT_DOWN;

    if (click->wheel != 0) {
        for (int i = 0; i < 3; i++) {
            if (ui->mode == UI_MODE_HELP)
                view_help_key(ui, a == UI_ACT_UP ? UI_ACT_DETAIL_UP :
                    UI_ACT_DETAIL_DOWN);
            else if (ui->mode == UI_MODE_ENDINGS)
                view_endings_key(ui, a);
            else if (ui->mode == UI_MODE_LOG)
                view_log_key(ui, a);
            else if (ui->mode == UI_MODE_PROCS)
                view_procs_key(ui, a, 0);
            else
                view_table_key(ui, a);
        }
        return;
    }
    if (ui->mode == UI_MODE_TABLE &&
        view_incident_at(ui, click->y, click->x) >= 0) {
        /* A click on an incident: as Enter on it. */
        view_incident_apply(ui, (size_t)view_incident_at(ui, click->y,
            click->x));
        return;
    }
    if (click->y == ui->table_y - 1 && ui->mode == UI_MODE_TABLE &&
        ui->table_rows > 0) {
        if (view_table_title_click(ui, click->x))
            tui_key_sort_message(ui);
        return;
    }
    if (click->y >= ui->table_y && click->y < ui->table_y + ui->table_rows &&
        ui->mode == UI_MODE_TABLE) {
        size_t pos = ui->model.top + (size_t)(click->y - ui->table_y);

        if (pos < ui->model.nvis)
            model_goto(&ui->model, pos);
    }
}

/* What one key (or mouse event) does: the prompt that is open reads it
 * first, then the view on screen, then the command table. */
void
tui_key(struct ui *ui, int ch, const struct screen_click *click)
{
    enum ui_action a = keys_action(ch);

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
    if (ui->prompt == UI_PROMPT_FILTER) {
        tui_key_filter(ui, ch);
        return;
    }
    if (ui->prompt == UI_PROMPT_COMMAND) {
        tui_key_palette(ui, ch);
        return;
    }
    if (ui->prompt == UI_PROMPT_CANCEL_REQUEST) {
        tui_key_cancel_answer(ui, ch);
        return;
    }
    if (ui->prompt == UI_PROMPT_END_ORPHAN) {
        view_procs_answer(ui, ch);
        return;
    }
    if (ui->prompt == UI_PROMPT_END_ONE || ui->prompt == UI_PROMPT_END_MARKED) {
        enum ui_prompt p = ui->prompt;

        ui->prompt = UI_PROMPT_NONE;
        if (ch != 'y' && ch != 'Y' && ch != 's' && ch != 'S') {
            ui_message(ui, UI_ROLE_DIM, "not ended");
            return;
        }
        /* y: end and reconnect; s: end and stop (until r). */
        ui->end_stops = ch == 's' || ch == 'S';
        if (p == UI_PROMPT_END_ONE)
            tui_key_end(ui, &ui->confirm_server, 1);
        else
            tui_key_end_marked(ui);
        return;
    }
    if (ui->mode == UI_MODE_COLUMNS) {
        view_columns_key(ui, ch);
        return;
    }
    ui->message[0] = '\0';
    if (ui->incident_focus && a != UI_ACT_MOUSE) {
        if (ui->mode == UI_MODE_TABLE && view_incident_key(ui, ch))
            return;
        ui->incident_focus = false;
    }
    if (ui->replay != NULL && ui->mode != UI_MODE_HELP &&
        tui_replay_key(ui, a))
        return;
    if (a == UI_ACT_MOUSE) {
        tui_key_mouse(ui, click);
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
    if (ui->mode == UI_MODE_LOG && view_log_key(ui, a))
        return;
    if (ui->mode == UI_MODE_PROCS && view_procs_key(ui, a, ch))
        return;
    if (ui->mode == UI_MODE_TABLE) {
        if (ui->detail && view_detail_key(ui, a))
            return;
        if (view_table_key(ui, a))
            return;
    }
    tui_key_command(ui, a);
}
