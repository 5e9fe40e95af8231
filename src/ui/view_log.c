/*
 * The event log pane (l): every health and liveness change and every
 * ending across the fleet, newest first: time, server, what changed,
 * from -> to, kind and reason. / filters it with the table's language; at
 * the top it follows the newest, scrolled it keeps its lines. l or Esc
 * goes back to the table.
 */
#include <stdio.h>
#include <string.h>

#include "ui/screen.h"
#include "ui/ui.h"

static const char *const log_what[] = {
    [EVENTLOG_HEALTH] = "health",
    [EVENTLOG_LIVENESS] = "liveness",
    [EVENTLOG_ENDING] = "ending",
};

/* The role of the new state or outcome. */
static enum ui_role
log_role(const struct eventlog_entry *en)
{
    if (en->what == EVENTLOG_ENDING)
        return UI_ROLE_NORMAL;
    if (strcmp(en->to, "ok") == 0 || strcmp(en->to, "reachable") == 0)
        return UI_ROLE_REACHABLE;
    if (strcmp(en->to, "down") == 0 || strcmp(en->to, "unreachable") == 0)
        return UI_ROLE_UNREACHABLE;
    if (strcmp(en->to, "degraded") == 0 || strcmp(en->to, "invalid") == 0)
        return UI_ROLE_WARNING;
    return UI_ROLE_DIM;
}

static void
log_line(const struct ui *ui, struct ui_line *l,
    const struct eventlog_entry *en)
{
    char buf[96];

    ui_line_reset(l, UI_ROLE_NORMAL);
    fmt_clock(buf, sizeof(buf), en->ts, false);
    ui_line_addf(l, UI_ROLE_DIM, "%s  ", buf);
    ui_line_cell(l, UI_ROLE_NORMAL, en->server, 16, false, ui->utf8);
    ui_line_add(l, UI_ROLE_NORMAL, " ");
    ui_line_cell(l, UI_ROLE_DIM, log_what[en->what], 9, false, ui->utf8);
    ui_line_add(l, UI_ROLE_NORMAL, " ");
    if (en->from[0] != '\0') {
        ui_line_add(l, UI_ROLE_NORMAL, en->from);
        ui_line_add(l, UI_ROLE_NORMAL, ui->utf8 ? " \xe2\x86\x92 " : " -> ");
    }
    ui_line_add(l, log_role(en), en->to);
    if (en->kind[0] != '\0')
        ui_line_addf(l, UI_ROLE_WARNING, "  %s", en->kind);
    if (en->reason[0] != '\0')
        ui_line_addf(l, UI_ROLE_DIM, "  %s", en->reason);
}

/* It comes on screen following the newest. */
static void
view_log_open(struct ui *ui)
{
    ui->log_scroll = 0;
}

static void
view_log_draw(struct ui *ui, int y, int rows)
{
    const struct eventlog *g = &ui->eventlog;
    struct ui_out          o = { .ui = ui, .y = y + 1, .rows = rows - 1 };
    struct ui_line         l;
    size_t                 shown = 0;

    if (rows <= 0)
        return;
    for (size_t i = 0; i < g->n; i++) {
        if (eventlog_matches(g, eventlog_get(g, i)))
            shown++;
    }
    if (ui->log_scroll > (int)shown - 1)
        ui->log_scroll = shown > 0 ? (int)shown - 1 : 0;
    ui_line_reset(&l, UI_ROLE_NORMAL);
    ui_line_addf(&l, UI_ROLE_HEADER, "EVENT LOG %zu", g->n);
    if (g->filter[0] != '\0')
        ui_line_addf(&l, UI_ROLE_WARNING, " %s filter \"%s\": %zu shown",
            ui->g.sep, g->filter, shown);
    if (g->filter_error[0] != '\0')
        ui_line_addf(&l, UI_ROLE_WARNING, " (%s)", g->filter_error);
    ui_line_addf(&l, UI_ROLE_DIM, " %s %s", ui->g.sep, ui->log_scroll == 0 ?
        "following" : "scrolled: Home follows");
    ui_line_addf(&l, UI_ROLE_DIM, " (newest first; the last %d kept, %lu "
        "logged)", EVENTLOG_CAP, g->total);
    screen_line(y, &l, ui->cols, false);
    o.skip = ui->log_scroll;
    if (shown == 0) {
        ui_line_reset(&l, UI_ROLE_DIM);
        ui_line_add(&l, UI_ROLE_DIM, g->n == 0 ? "  no changes yet: health "
            "and liveness changes and endings show here" :
            "  no entry matches the filter (Esc clears it)");
        ui_out_line(&o, &l);
        return;
    }
    for (size_t i = 0; i < g->n && o.n < o.skip + o.rows; i++) {
        const struct eventlog_entry *en = eventlog_get(g, i);

        if (!eventlog_matches(g, en))
            continue;
        log_line(ui, &l, en);
        ui_out_line(&o, &l);
    }
}

void
view_log_grew(struct ui *ui, const struct eventlog_entry *en)
{
    /* Scrolled away from the newest: the same lines stay in view. */
    if (ui->view == &view_log_mode && ui->log_scroll > 0 && en != NULL &&
        eventlog_matches(&ui->eventlog, en))
        ui->log_scroll++;
}

static bool
view_log_key(struct ui *ui, enum ui_action a, int ch)
{
    int page = ui->rows > 8 ? ui->rows - 8 : 1;

    (void)ch;
    switch (a) {
    case UI_ACT_UP:
    case UI_ACT_DETAIL_UP:
        ui->log_scroll -= 1;
        break;
    case UI_ACT_DOWN:
    case UI_ACT_DETAIL_DOWN:
        ui->log_scroll += 1;
        break;
    case UI_ACT_PAGE_UP:
        ui->log_scroll -= page;
        break;
    case UI_ACT_PAGE_DOWN:
        ui->log_scroll += page;
        break;
    case UI_ACT_HOME:
        ui->log_scroll = 0;
        break;
    case UI_ACT_END:
        ui->log_scroll = 1 << 20;
        break;
    case UI_ACT_CANCEL:
        if (ui->eventlog.filter[0] != '\0') {
            ui->input[0] = '\0';
            eventlog_set_filter(&ui->eventlog, "");
        } else {
            ui->view = &view_table_mode;
        }
        break;
    case UI_ACT_EVENTLOG:
        ui->view = &view_table_mode;
        break;
    case UI_ACT_FILTER:
        /* The log's own filter, in the table's language. */
        ui->prompt = UI_PROMPT_FILTER;
        snprintf(ui->input, sizeof(ui->input), "%s", ui->eventlog.filter);
        return true;
    default:
        return false;
    }
    if (ui->log_scroll < 0)
        ui->log_scroll = 0;
    return true;
}

static void
view_log_hint(struct ui *ui, struct ui_line *l)
{
    (void)ui;
    ui_line_add(l, UI_ROLE_DIM, "l/Esc back  / filter  Up/Down scroll  "
        "Home follow  ? help  q quit");
}

const struct ui_view view_log_mode = {
    .open = view_log_open,
    .draw = view_log_draw,
    .key = view_log_key,
    .hint = view_log_hint,
};
