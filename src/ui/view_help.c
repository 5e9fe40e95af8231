/*
 * The help: the key table itself (keys grouped by action, in the order of
 * the actions), the filter's syntax, then what every column and glyph
 * means. Up/Down scroll; any other key (the replay's too) goes back to
 * the mode under it.
 */
#include <string.h>

#include "ui/screen.h"
#include "ui/trend.h"
#include "ui/ui.h"

/* "label     text": one legend line, the label in the header role. */
static void
help_line(struct ui_out *o, struct ui_line *l, const char *label,
    const char *text)
{
    ui_line_reset(l, UI_ROLE_NORMAL);
    ui_line_add(l, UI_ROLE_NORMAL, "  ");
    ui_line_cell(l, UI_ROLE_HEADER, label, 14, false, o->ui->utf8);
    ui_line_add(l, UI_ROLE_NORMAL, " ");
    ui_line_add(l, UI_ROLE_NORMAL, text);
    ui_out_line(o, l);
}

static void
help_title(struct ui_out *o, struct ui_line *l, const char *title)
{
    ui_line_reset(l, UI_ROLE_NORMAL);
    ui_out_line(o, l);
    ui_line_reset(l, UI_ROLE_NORMAL);
    ui_line_add(l, UI_ROLE_HEADER, title);
    ui_out_line(o, l);
}

static void
help_keys(struct ui_out *o, struct ui_line *l)
{
    size_t                   nb;
    const struct ui_binding *b = keys_table(&nb);

    for (int a = UI_ACT_NONE + 1; a < UI_ACT__COUNT; a++) {
        char keys[64] = "";
        int  nk = 0;

        if (keys_action_help((enum ui_action)a)[0] == '\0')
            continue;
        for (size_t i = 0; i < nb; i++) {
            if ((int)b[i].action != a || b[i].label[0] == '\0' ||
                strstr(keys, b[i].label) != NULL)
                continue;
            if (nk++ > 0)
                strncat(keys, " ", sizeof(keys) - strlen(keys) - 1);
            strncat(keys, b[i].label, sizeof(keys) - strlen(keys) - 1);
        }
        ui_line_reset(l, UI_ROLE_NORMAL);
        ui_line_add(l, UI_ROLE_NORMAL, "  ");
        ui_line_cell(l, UI_ROLE_WARNING, keys, 14, false, o->ui->utf8);
        ui_line_add(l, UI_ROLE_NORMAL, " ");
        ui_line_add(l, UI_ROLE_NORMAL, keys_action_help((enum ui_action)a));
        ui_out_line(o, l);
    }
}

static void
help_filter(struct ui_out *o, struct ui_line *l)
{
    help_title(o, l, "FILTER (/)  every term must match");
    help_line(o, l, "word", "in the name, transport, a tag, the current "
        "failure kind or reason, or the health or liveness word");
    help_line(o, l, "name: tag:", "the name contains it; a tag is it "
        "(tag:prod)");
    help_line(o, l, "kind: reason:", "the current failure's kind or reason "
        "begins with it (kind:timeout, reason:challenge)");
    help_line(o, l, "health: state:", "health (ok, degraded, down, unknown, "
        "pending, invalid, paused, stopped, disabled) begins with it");
    help_line(o, l, "live: trans:", "liveness (reachable, unreachable, "
        "unknown, absent) or transport begins with it");
    help_line(o, l, "http:", "the current failure's HTTP status begins "
        "with it (http:5 is every 5xx)");
    help_line(o, l, "tools:changed", "the tool list changed (the incident "
        "line's \"tools changed\")");
    help_line(o, l, "!term", "negates the term (!tag:staging, "
        "!live:reachable); an empty value matches any (!reason: is no "
        "reason)");
    help_line(o, l, "Ctrl-U Ctrl-W", "clear the line, delete a word; Enter "
        "keeps the filter, Esc clears it");
}

static void
help_groups(struct ui_out *o, struct ui_line *l)
{
    help_title(o, l, "GROUPS (b, --group)  a header row per group: its "
        "count and worst health, the worst group first");
    help_line(o, l, "cause", "the current failure: kind, HTTP status, "
        "reason (\"no current failure\" for the rest)");
    help_line(o, l, "tag host", "the first tag; the URL's host, or the "
        "stdio command's name");
    help_line(o, l, "transport", "http, sse, stdio; b again: none");
    help_line(o, l, "Enter", "on a header: fold or unfold the group");
}

static void
help_views(struct ui_out *o, struct ui_line *l)
{
    help_title(o, l, "VIEWS AND PREFERENCES  kept in $XDG_CONFIG_HOME/"
        "mcptop/tui.json (~/.config/mcptop/tui.json)");
    help_line(o, l, ":view save N", "keep the sort, filter, group and "
        "columns as N; :view N applies it, --view N starts with it");
    help_line(o, l, ":view default", "N: start with N when no --view, "
        "--filter, --sort or --group is given; :view delete NAME");
    help_line(o, l, "c F2 :columns", "the chooser: Space shows or hides, + - "
        "(Shift-Up/Down) move, Enter applies, Esc cancels; :columns "
        "name,health,rtt sets them");
    help_line(o, l, "remembered", "the theme (t, :theme NAME), the mouse "
        "(m) and the palette's history (Up/Down at :) when they change");
}

static void
help_columns(struct ui_out *o, struct ui_line *l)
{
    const struct ui_glyphs *g = &o->ui->g;
    char                    buf[256];

    help_title(o, l, "COLUMNS  (narrow screens drop PROTOCOL first, then "
        "STRK, TREND, TRANS, TOOLS, SESSION, HTTP, LIVENESS, RTT, DELIV, "
        "HISTORY, AGE)");
    snprintf(buf, sizeof(buf), "can agents use it now? %s ok  %s degraded: "
        "it answers, with errors  %s down: unreachable  %s unknown",
        g->health[HEALTH_OK], g->health[HEALTH_DEGRADED],
        g->health[HEALTH_DOWN], g->health[HEALTH_UNKNOWN]);
    help_line(o, l, "HEALTH", buf);
    snprintf(buf, sizeof(buf), "%s pending: no observation yet  %s invalid: "
        "the entry cannot be dialed", g->health[HEALTH_PENDING],
        g->health[HEALTH_INVALID]);
    help_line(o, l, "", buf);
    snprintf(buf, sizeof(buf), "not monitored (a dim row, AGE: for how long; "
        "no observation shown): %s paused  %s stopped  %s disabled",
        g->health[HEALTH_PAUSED], g->health[HEALTH_STOPPED],
        g->health[HEALTH_DISABLED]);
    help_line(o, l, "", buf);
    snprintf(buf, sizeof(buf), "%s reachable: an exchange completed, or the "
        "server answered (even with an error)", g->live[LIVENESS_REACHABLE]);
    help_line(o, l, "LIVENESS", buf);
    snprintf(buf, sizeof(buf), "%s unreachable: lost at the transport or "
        "the clock (refused, reset, closed, spawn failed, timeout)",
        g->live[LIVENESS_UNREACHABLE]);
    help_line(o, l, "", buf);
    snprintf(buf, sizeof(buf), "%s unknown: something answered, and it "
        "does not say whether the server did (an HTTP status, not MCP)",
        g->live[LIVENESS_UNKNOWN]);
    help_line(o, l, "", buf);
    snprintf(buf, sizeof(buf), "%s absent: no observation at all (not "
        "dialed yet, or an invalid declaration); never the same as unknown",
        g->absent);
    help_line(o, l, "", buf);
    help_line(o, l, "AGE", "how long ago the liveness was observed (not "
        "monitored: since when)");
    help_line(o, l, "STRK", "how many observations in a row gave this "
        "liveness");
    snprintf(buf, sizeof(buf), "the session id's first characters, or the "
        "child's pid; %s before it: held, but the last exchange failed",
        g->stale);
    help_line(o, l, "SESSION", buf);
    snprintf(buf, sizeof(buf), "the last listing's count; %sN: the list "
        "changed N times (Enter shows what changed)", g->changed);
    help_line(o, l, "TOOLS", buf);
    help_line(o, l, "RTT ms", "the last completed round trip; blank when "
        "the last exchange failed (never a stale value)");
    snprintf(buf, sizeof(buf), "in the warning colour: the current failure "
        "(%sN: N exchanges failed in a row); dim: an old one", g->times);
    help_line(o, l, "LAST FAILURE", buf);
    help_line(o, l, "DELIV", "did the failed request reach the server? yes "
        "(it answered), no (it provably never left), unknown");
    help_line(o, l, "HTTP", "the status instead of an MCP answer, and why: "
        "auth, challenge (a CDN/WAF check), bad gateway... (narrow: in LAST "
        "FAILURE)");
    help_line(o, l, "TAGS SOURCE", "the config's tags; tap (read from mcptop "
        "tap) or dial (off unless chosen: c, :columns)");
}

static void
help_glyphs(struct ui_out *o, struct ui_line *l)
{
    const struct ui_glyphs *g = &o->ui->g;

    ui_line_reset(l, UI_ROLE_NORMAL);
    ui_line_add(l, UI_ROLE_NORMAL, "  ");
    ui_line_cell(l, UI_ROLE_HEADER, "HISTORY", 14, false, o->ui->utf8);
    ui_line_add(l, UI_ROLE_NORMAL, " ");
    ui_line_addf(l, UI_ROLE_REACHABLE, "%s completed  ",
        g->strip[LIVENESS_REACHABLE]);
    ui_line_addf(l, UI_ROLE_WARNING, "%s answered with an error  ",
        g->strip_error);
    ui_line_addf(l, UI_ROLE_UNKNOWN, "%s unclear  ", g->strip[LIVENESS_UNKNOWN]);
    ui_line_addf(l, UI_ROLE_UNREACHABLE, "%s lost  ",
        g->strip[LIVENESS_UNREACHABLE]);
    ui_line_addf(l, UI_ROLE_ABSENT, "%s not an observation", g->strip_absent);
    ui_out_line(o, l);
    ui_line_reset(l, UI_ROLE_NORMAL);
    ui_line_add(l, UI_ROLE_NORMAL, "  ");
    ui_line_cell(l, UI_ROLE_HEADER, "TREND", 14, false, o->ui->utf8);
    ui_line_add(l, UI_ROLE_NORMAL, " the newest round trips, oldest left: ");
    for (int lv = 0; lv < TREND_LEVELS; lv++)
        ui_line_add(l, UI_ROLE_REACHABLE, trend_glyph(lv, o->ui->utf8));
    ui_line_addf(l, UI_ROLE_NORMAL, " from 0 to the scale in the title "
        "(\"TREND %s500ms\": the largest round trip on screen, rounded up "
        "to 1, 2 or 5 x 10^n; one scale for every row)  ", o->ui->utf8 ?
        "\xe2\x89\xa4" : "<=");
    ui_line_addf(l, UI_ROLE_UNREACHABLE, "%s", trend_gap(o->ui->utf8));
    ui_line_add(l, UI_ROLE_NORMAL, " failed: no round trip");
    ui_out_line(o, l);
    help_line(o, l, "ok graph", "in the header: servers ok over the last "
        "minutes, a bar per 10 s (the fewest ok in it), from 0 to the fleet's "
        "size; shown when the line has room");
    help_line(o, l, "incidents", "Tab focuses the line; Left/Right (Tab, "
        "Shift-Tab) pick an entry; Enter or a click filters the table to "
        "exactly its servers (kind:timeout, kind:http_status http:502 "
        "reason:bad_gateway, tools:changed); +N more groups by cause; Esc "
        "back to the table");
    ui_line_reset(l, UI_ROLE_NORMAL);
    ui_line_add(l, UI_ROLE_NORMAL, "  ");
    ui_line_cell(l, UI_ROLE_HEADER, "STALE Ns", 14, false, o->ui->utf8);
    ui_line_add(l, UI_ROLE_NORMAL, " in the top right corner: the screen has "
        "not been updated for N s (the header clock stands still)");
    ui_out_line(o, l);
}

/* It comes on screen at its top, over the mode it goes back to. */
static void
view_help_open(struct ui *ui)
{
    if (ui->view != &view_help_mode)
        ui->back = ui->view;
    ui->help_scroll = 0;
}

static void
view_help_draw(struct ui *ui, int y, int rows)
{
    struct ui_out  o = { .ui = ui, .y = y, .rows = rows,
                         .skip = ui->help_scroll };
    struct ui_line l;

    ui_line_reset(&l, UI_ROLE_NORMAL);
    ui_line_add(&l, UI_ROLE_HEADER, "mcptop help: keys");
    ui_line_add(&l, UI_ROLE_DIM, "  (Up/Down scroll; any other key closes "
        "this help)");
    ui_out_line(&o, &l);
    help_keys(&o, &l);
    help_filter(&o, &l);
    help_groups(&o, &l);
    help_views(&o, &l);
    help_columns(&o, &l);
    help_glyphs(&o, &l);
    if (ui->help_scroll > 0 && o.n - ui->help_scroll < rows) {
        ui->help_scroll = o.n > rows ? o.n - rows : 0;
        ui_dirty(ui);
    }
}

static bool
view_help_key(struct ui *ui, enum ui_action a, int ch)
{
    (void)ch;
    switch (a) {
    case UI_ACT_DOWN:
    case UI_ACT_DETAIL_DOWN:
    case UI_ACT_PAGE_DOWN:
        ui->help_scroll += a == UI_ACT_PAGE_DOWN ? ui->rows / 2 : 1;
        break;
    case UI_ACT_UP:
    case UI_ACT_DETAIL_UP:
    case UI_ACT_PAGE_UP:
        ui->help_scroll -= a == UI_ACT_PAGE_UP ? ui->rows / 2 : 1;
        if (ui->help_scroll < 0)
            ui->help_scroll = 0;
        break;
    case UI_ACT_HOME:
        ui->help_scroll = 0;
        break;
    case UI_ACT_END:
        ui->help_scroll = 1 << 20;
        break;
    default:
        ui->view = ui->back;
        break;
    }
    return true;
}

static void
view_help_hint(struct ui *ui, struct ui_line *l)
{
    (void)ui;
    ui_line_add(l, UI_ROLE_DIM, "Up/Down scroll  any other key: back");
}

const struct ui_view view_help_mode = {
    .open = view_help_open,
    .draw = view_help_draw,
    .key = view_help_key,
    .hint = view_help_hint,
    .keys = UI_VIEW_KEYS_OWN,
};
