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
    ui_line_reset(l, ROLE_NORMAL);
    ui_line_add(l, ROLE_HEADER, "mcptop");
    ui_line_addf(l, ROLE_DIM, " %s", now);
    ui_line_addf(l, ROLE_NORMAL, " %s config %s %s %zu servers %s sort %s",
        ui->g.sep, origin, ui->g.sep, m->n, ui->g.sep,
        model_sort_name(m->sort));
    if (m->filter[0] != '\0')
        ui_line_addf(l, ROLE_WARNING, " %s filter \"%s\": %zu shown",
            ui->g.sep, m->filter, m->nvis);
    if (m->nmarked > 0)
        ui_line_addf(l, ROLE_MARKED, " %s %zu marked", ui->g.sep,
            m->nmarked);
    ui_line_addf(l, ROLE_DIM, " %s theme %s", ui->g.sep, ui->theme.name);
}

static void
frame_counts(struct ui *ui, struct ui_line *l)
{
    const struct model_counts *c = &ui->model.counts;
    static const enum ui_role  roles[LIVENESS__COUNT] = {
        [LIVENESS_REACHABLE] = ROLE_REACHABLE,
        [LIVENESS_UNREACHABLE] = ROLE_UNREACHABLE,
        [LIVENESS_UNKNOWN] = ROLE_UNKNOWN,
    };

    ui_line_reset(l, ROLE_NORMAL);
    if (ui->cols < 80) {
        /* Narrow: glyphs and numbers only. */
        for (int s = 0; s < LIVENESS__COUNT; s++)
            ui_line_addf(l, c->live[s] > 0 ? roles[s] : ROLE_DIM, "%s%zu ",
                ui->g.live[s], c->live[s]);
        ui_line_addf(l, c->absent > 0 ? ROLE_ABSENT : ROLE_DIM, "%s%zu ",
            ui->g.absent, c->absent);
        ui_line_addf(l, c->ending > 0 ? ROLE_WARNING : ROLE_DIM,
            "ending %zu", c->ending);
        return;
    }
    for (int s = 0; s < LIVENESS__COUNT; s++) {
        ui_line_addf(l, c->live[s] > 0 ? roles[s] : ROLE_DIM, "%s %s %zu",
            ui->g.live[s], liveness_state_name((enum liveness_state)s),
            c->live[s]);
        ui_line_add(l, ROLE_NORMAL, "  ");
    }
    ui_line_addf(l, c->absent > 0 ? ROLE_ABSENT : ROLE_DIM, "%s absent %zu",
        ui->g.absent, c->absent);
    ui_line_add(l, ROLE_NORMAL, "  ");
    ui_line_addf(l, c->ending > 0 ? ROLE_WARNING : ROLE_DIM,
        "endings under way %zu", c->ending);
}

static void
frame_incidents(struct ui *ui, struct ui_line *l)
{
    const struct model_counts *c = &ui->model.counts;
    bool                       any = false;

    ui_line_reset(l, ROLE_NORMAL);
    ui_line_add(l, ROLE_DIM, "incidents: ");
    for (int k = 0; k < FAILURE__COUNT; k++) {
        size_t shown = 0;

        if (c->kind[k] == 0)
            continue;
        if (any)
            ui_line_addf(l, ROLE_DIM, " %s ", ui->g.sep);
        any = true;
        if (k == FAILURE_HTTP_STATUS && c->nhttp > 0) {
            ui_line_add(l, ROLE_UNKNOWN, "http_status");
            for (size_t h = 0; h < c->nhttp; h++) {
                long st = c->http_status[h];

                ui_line_addf(l, (st == 401 || st == 403) ? ROLE_WARNING :
                    ROLE_UNKNOWN, " %ld%s %s%zu", st,
                    (st == 401 || st == 403) ? " auth" : "",
                    ui->utf8 ? "\xc3\x97" : "x", c->http_n[h]);
                shown += c->http_n[h];
            }
            if (shown < c->kind[k])
                ui_line_addf(l, ROLE_UNKNOWN, " other %s%zu",
                    ui->utf8 ? "\xc3\x97" : "x", c->kind[k] - shown);
            continue;
        }
        {
            enum liveness_state st;
            enum ui_role        role = ROLE_ABSENT;

            if (liveness_state_of_kind((enum failure_kind)k, &st))
                role = st == LIVENESS_UNREACHABLE ? ROLE_UNREACHABLE :
                    st == LIVENESS_UNKNOWN ? ROLE_UNKNOWN : ROLE_NORMAL;
            ui_line_addf(l, role, "%s %zu",
                failure_kind_name((enum failure_kind)k), c->kind[k]);
        }
    }
    if (!any)
        ui_line_add(l, ROLE_DIM, "none");
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
        ui_line_add(l, ROLE_DIM, "Up/Down scroll  any other key: back");
        return;
    case UI_MODE_ENDINGS:
        ui_line_add(l, ROLE_DIM, "e/Esc back  Up/Down scroll  ? help  "
            "q quit");
        return;
    default:
        break;
    }
    ui_line_add(l, ROLE_DIM, "q quit  ? help  / filter  s sort  ");
    ui_line_add(l, ROLE_DIM, ui->detail ? "Enter close  J/K scroll  " :
        "Enter detail  ");
    ui_line_add(l, ROLE_DIM, "space mark  x end  ");
    if (ui->model.nmarked > 0)
        ui_line_add(l, ROLE_DIM, "X end marked  ");
    ui_line_add(l, ROLE_DIM, "r redial  p ping  e endings  t theme");
    if (ui->model.filter[0] != '\0')
        ui_line_add(l, ROLE_DIM, "  Esc clear filter");
}

void
view_status_draw(struct ui *ui, int y)
{
    struct ui_line l;
    char           name[128];

    ui_line_reset(&l, ROLE_NORMAL);
    if (ui->quitting) {
        size_t busy = ui->model.counts.ending;

        ui_line_addf(&l, ROLE_WARNING, "quitting: ending %zu sessions, "
            "%zu settled, %zu settling%s  (q again: quit now)",
            ui->quit_total, ui->quit_total > busy ? ui->quit_total - busy : 0,
            busy, ui->utf8 ? "\xe2\x80\xa6" : "...");
    } else if (ui->prompt == UI_PROMPT_FILTER) {
        ui_line_add(&l, ROLE_WARNING, "/");
        ui_line_add(&l, ROLE_NORMAL, ui->input);
        ui_line_add(&l, ROLE_SELECTION, " ");
        ui_line_add(&l, ROLE_DIM, "  Enter keep  Esc clear");
    } else if (ui->prompt == UI_PROMPT_END_ONE) {
        fmt_name(name, sizeof(name), fleet_server(ui->fleet,
            ui->confirm_server));
        ui_line_addf(&l, ROLE_WARNING, "End the session of %s? (y/n)", name);
    } else if (ui->prompt == UI_PROMPT_END_MARKED) {
        ui_line_addf(&l, ROLE_WARNING, "End the sessions of %zu marked "
            "servers? (y/n)", ui->model.nmarked);
    } else if (ui->message[0] != '\0') {
        ui_line_add(&l, ui->message_role, ui->message);
    } else {
        frame_keys(ui, &l);
    }
    screen_line(y, &l, ui->cols, false);
}
