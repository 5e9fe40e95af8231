/*
 * The frame around the views: the header (config, counts by liveness
 * state, endings under way, the incident line) and the status line (the
 * prompt, a message, the quit progress, or the keys that apply now).
 */
#include <stdio.h>
#include <string.h>

#include "engine/server.h"
#include "ui/screen.h"
#include "ui/ui.h"
#include "util/str.h"

static void
frame_title(struct ui *ui, struct ui_line *l)
{
    const struct model *m = &ui->model;
    char                origin[256], now[16];

    str_sanitize(origin, sizeof(origin), ui->cfg->origin,
        strlen(ui->cfg->origin));
    /* The clock moves every second: a screen whose clock stands still is
     * not being updated. */
    fmt_clock(now, sizeof(now), m->now_ms, false);
    ui_line_reset(l, UI_ROLE_NORMAL);
    ui_line_add(l, UI_ROLE_HEADER, "mcptop");
    ui_line_addf(l, UI_ROLE_DIM, " %s", now);
    ui_line_addf(l, UI_ROLE_NORMAL, " %s %zu servers", ui->g.sep, m->n);
    /* Which rows are on screen: "rows 1-27 of 200". */
    if (ui->table_rows > 0 && m->nvis > 0) {
        size_t last = m->top + (size_t)ui->table_rows;

        ui_line_addf(l, UI_ROLE_NORMAL, " %s rows %zu-%zu of %zu", ui->g.sep,
            m->top + 1, last < m->nvis ? last : m->nvis, m->nvis);
    }
    ui_line_addf(l, UI_ROLE_NORMAL, " %s sort %s %s", ui->g.sep,
        model_sort_name(m->sort), m->invert ? ui->g.sort_up :
        ui->g.sort_down);
    if (m->filter[0] != '\0')
        ui_line_addf(l, UI_ROLE_WARNING, " %s filter \"%s\": %zu shown",
            ui->g.sep, m->filter, m->nvis);
    if (m->filter_error[0] != '\0')
        ui_line_addf(l, UI_ROLE_WARNING, " (%s)", m->filter_error);
    if (m->nmarked > 0)
        ui_line_addf(l, UI_ROLE_MARKED, " %s %zu marked", ui->g.sep,
            m->nmarked);
    if (!screen_mouse_enabled())
        ui_line_addf(l, UI_ROLE_DIM, " %s mouse off", ui->g.sep);
    ui_line_addf(l, UI_ROLE_DIM, " %s theme %s %s config %s", ui->g.sep,
        ui->theme.name, ui->g.sep, origin);
}

static void
frame_counts(struct ui *ui, struct ui_line *l)
{
    const struct model_counts *c = &ui->model.counts;
    static const enum ui_role  roles[LIVENESS__COUNT] = {
        [LIVENESS_REACHABLE] = UI_ROLE_REACHABLE,
        [LIVENESS_UNREACHABLE] = UI_ROLE_UNREACHABLE,
        [LIVENESS_UNKNOWN] = UI_ROLE_UNKNOWN,
    };

    ui_line_reset(l, UI_ROLE_NORMAL);
    if (ui->cols < 80) {
        /* Narrow: glyphs and numbers only. */
        for (int s = 0; s < LIVENESS__COUNT; s++)
            ui_line_addf(l, c->live[s] > 0 ? roles[s] : UI_ROLE_DIM, "%s%zu ",
                ui->g.live[s], c->live[s]);
        ui_line_addf(l, c->absent > 0 ? UI_ROLE_ABSENT : UI_ROLE_DIM, "%s%zu ",
            ui->g.absent, c->absent);
        ui_line_addf(l, c->ending > 0 ? UI_ROLE_WARNING : UI_ROLE_DIM,
            "ending %zu", c->ending);
        return;
    }
    for (int s = 0; s < LIVENESS__COUNT; s++) {
        ui_line_addf(l, c->live[s] > 0 ? roles[s] : UI_ROLE_DIM, "%s %s %zu",
            ui->g.live[s], liveness_state_name((enum liveness_state)s),
            c->live[s]);
        ui_line_add(l, UI_ROLE_NORMAL, "  ");
    }
    ui_line_addf(l, c->absent > 0 ? UI_ROLE_ABSENT : UI_ROLE_DIM, "%s absent %zu",
        ui->g.absent, c->absent);
    ui_line_add(l, UI_ROLE_NORMAL, "  ");
    ui_line_addf(l, c->ending > 0 ? UI_ROLE_WARNING : UI_ROLE_DIM,
        "endings under way %zu", c->ending);
}

/* The incident line: servers per current failure kind, http_status split
 * by status and reason ("502 bad_gateway x20"), tool lists that changed. */
static void
frame_incidents(struct ui *ui, struct ui_line *l)
{
    const struct model_counts *c = &ui->model.counts;
    bool                       any = false;

    ui_line_reset(l, UI_ROLE_NORMAL);
    ui_line_add(l, UI_ROLE_DIM, "incidents: ");
    for (int k = 0; k < FAILURE__COUNT; k++) {
        size_t shown = 0;

        if (c->kind[k] == 0)
            continue;
        if (any)
            ui_line_addf(l, UI_ROLE_DIM, " %s ", ui->g.sep);
        any = true;
        if (k == FAILURE_HTTP_STATUS && c->nhttp > 0) {
            ui_line_add(l, UI_ROLE_UNKNOWN, "http_status");
            for (size_t h = 0; h < c->nhttp; h++) {
                char cell[48];

                fmt_http(cell, sizeof(cell), c->http[h].status,
                    c->http[h].reason);
                ui_line_addf(l, c->http[h].reason == FAILURE_REASON_NONE ?
                    UI_ROLE_UNKNOWN : fmt_reason_role(c->http[h].reason, true),
                    " %s %s%zu", cell, ui->g.times, c->http[h].n);
                shown += c->http[h].n;
            }
            if (shown < c->kind[k])
                ui_line_addf(l, UI_ROLE_UNKNOWN, " other %s%zu", ui->g.times,
                    c->kind[k] - shown);
            continue;
        }
        ui_line_addf(l, fmt_kind_role((enum failure_kind)k), "%s %zu",
            failure_kind_name((enum failure_kind)k), c->kind[k]);
    }
    if (c->tools_changed > 0) {
        if (any)
            ui_line_addf(l, UI_ROLE_DIM, " %s ", ui->g.sep);
        any = true;
        ui_line_addf(l, UI_ROLE_WARNING, "tools changed %s %zu", ui->g.changed,
            c->tools_changed);
    }
    if (!any)
        ui_line_add(l, UI_ROLE_DIM, "none");
}

void
view_header_draw(struct ui *ui, int y, int rows)
{
    struct ui_line l;

    if (rows >= 1) {
        frame_title(ui, &l);
        screen_line(y, &l, ui->cols, false);
    }
    if (rows >= 2) {
        frame_counts(ui, &l);
        screen_line(y + 1, &l, ui->cols, false);
    }
    if (rows >= 3) {
        frame_incidents(ui, &l);
        screen_line(y + 2, &l, ui->cols, false);
    }
}

/* The keys that apply in the current mode. */
static void
frame_keys(struct ui *ui, struct ui_line *l)
{
    switch (ui->mode) {
    case UI_MODE_HELP:
        ui_line_add(l, UI_ROLE_DIM, "Up/Down scroll  any other key: back");
        return;
    case UI_MODE_ENDINGS:
        ui_line_add(l, UI_ROLE_DIM, "e/Esc back  Up/Down scroll  ? help  "
            "q quit");
        return;
    default:
        break;
    }
    ui_line_add(l, UI_ROLE_DIM, "q quit  ? help  / filter  s/I sort  ");
    ui_line_add(l, UI_ROLE_DIM, ui->detail ? "Enter close  J/K scroll  " :
        "Enter detail  ");
    ui_line_add(l, UI_ROLE_DIM, "space mark  x end  ");
    if (ui->model.nmarked > 0)
        ui_line_add(l, UI_ROLE_DIM, "X end marked  ");
    ui_line_add(l, UI_ROLE_DIM, "r redial  p ping  e endings  t theme  m mouse");
    if (ui->model.filter[0] != '\0')
        ui_line_add(l, UI_ROLE_DIM, "  Esc clear filter");
}

void
view_status_draw(struct ui *ui, int y)
{
    struct ui_line l;
    char           name[128];

    ui_line_reset(&l, UI_ROLE_NORMAL);
    if (ui->quitting) {
        size_t busy = ui->model.counts.ending;

        ui_line_addf(&l, UI_ROLE_WARNING, "quitting: ending %zu sessions, "
            "%zu settled, %zu settling%s  (q again: quit now)",
            ui->quit_total, ui->quit_total > busy ? ui->quit_total - busy : 0,
            busy, ui->utf8 ? "\xe2\x80\xa6" : "...");
    } else if (ui->prompt == UI_PROMPT_FILTER) {
        ui_line_add(&l, UI_ROLE_WARNING, "/");
        ui_line_add(&l, UI_ROLE_NORMAL, ui->input);
        ui_line_add(&l, UI_ROLE_SELECTION, " ");
        ui_line_add(&l, UI_ROLE_DIM, "  Enter keep  Esc clear  ^U clear line  "
            "!neg tag: kind: live: trans: reason: http: name:");
    } else if (ui->prompt == UI_PROMPT_END_ONE) {
        fmt_name(name, sizeof(name), fleet_server(ui->fleet,
            ui->confirm_server));
        ui_line_addf(&l, UI_ROLE_WARNING, "End the session of %s? y: end and "
            "reconnect  s: end and stop  n: no", name);
    } else if (ui->prompt == UI_PROMPT_END_MARKED) {
        ui_line_addf(&l, UI_ROLE_WARNING, "End the sessions of %zu marked "
            "servers? y: end and reconnect  s: end and stop  n: no",
            ui->model.nmarked);
    } else if (ui->message[0] != '\0') {
        ui_line_add(&l, ui->message_role, ui->message);
    } else {
        frame_keys(ui, &l);
    }
    screen_line(y, &l, ui->cols, false);
}
