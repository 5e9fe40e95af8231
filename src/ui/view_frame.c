/*
 * The frame around the views: the header (config, counts by health,
 * endings under way, the incident line) and the status line (the
 * prompt, a message, the quit progress, or the keys that apply now).
 */
#include <stdio.h>
#include <string.h>

#include "engine/server.h"
#include "ui/screen.h"
#include "ui/trend.h"
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
    if (ui->replay != NULL)
        tui_replay_title(ui, l);
    else
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
    if (m->group != MODEL_GROUP_NONE)
        ui_line_addf(l, UI_ROLE_NORMAL, " %s group %s: %zu", ui->g.sep,
            model_group_name(m->group), m->ngroups);
    if (m->filter[0] != '\0')
        ui_line_addf(l, UI_ROLE_WARNING, " %s filter \"%s\": %zu shown",
            ui->g.sep, m->filter, m->nmatch);
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

/* Always in the counts, even at 0: the verdicts an operator scans for.
 * The other health words show only when some server has them. */
static bool
frame_count_always(enum health_state h)
{
    return h == HEALTH_OK || h == HEALTH_DEGRADED || h == HEALTH_DOWN;
}

/* The counts by health (DESIGN.md section 4b), each word with its glyph:
 * "● ok 5  ◐ degraded 1  ✗ down 4  ‖ paused 1", then the endings under
 * way. style 0 is that; 1 is tighter ("● ok 5 ◐ degraded 1 ... ending 0");
 * 2 is glyphs and numbers only. */
static void
frame_counts_style(struct ui *ui, struct ui_line *l, int style)
{
    const struct model_counts *c = &ui->model.counts;

    ui_line_reset(l, UI_ROLE_NORMAL);
    for (int h = 0; h < HEALTH__COUNT; h++) {
        size_t       n = c->health[h];
        enum ui_role role = n > 0 ? fmt_health_role((enum health_state)h) :
            UI_ROLE_DIM;

        if (n == 0 && !frame_count_always((enum health_state)h))
            continue;
        if (style == 2)
            ui_line_addf(l, role, "%s%zu ", ui->g.health[h], n);
        else
            ui_line_addf(l, role, style == 0 ? "%s %s %zu  " : "%s %s %zu ",
                ui->g.health[h], health_state_name((enum health_state)h), n);
    }
    ui_line_addf(l, c->ending > 0 ? UI_ROLE_WARNING : UI_ROLE_DIM,
        style == 0 ? "endings under way %zu" : "ending %zu", c->ending);
    if (c->taps > 0) {
        /* The agents' own requests, through their taps. */
        char age[24] = "";

        if (c->in_flight > 0 && c->oldest_at > 0)
            fmt_age(age, sizeof(age), ui->model.now_ms - c->oldest_at);
        ui_line_addf(l, c->in_flight > 0 && ui->model.now_ms - c->oldest_at >
            60000 ? UI_ROLE_WARNING : UI_ROLE_DIM, style == 0 ?
            "  in flight %zu%s%s" : " flight %zu%s%s", c->in_flight,
            age[0] != '\0' ? (style == 0 ? " oldest " : " ") : "", age);
    }
}

#define FRAME_GRAPH_MIN 20     /* the ok graph needs this many columns */
#define FRAME_GRAPH_MAX TREND_FLEET_BUCKETS

/* After the counts, when there is room for FRAME_GRAPH_MIN bars: the
 * fleet's ok count over the last minutes, one bar per ten seconds (the
 * fewest ok in it), on the scale 0 to the fleet's size; a bucket with
 * none ok is a gap mark. "ok 5/12 ▅▆▇▇█▇▅·▁▂ last 2m". Dropped whole
 * when it does not fit: the counts matter more. */
static void
frame_ok_graph(struct ui *ui, struct ui_line *l)
{
    const struct trend_fleet *f = &ui->model.ok_trend;
    char                      label[48], tail[24];
    int                       room, bars, secs;

    if (f->len == 0)
        return;
    snprintf(label, sizeof(label), "  %s ok %zu/%zu ", ui->g.sep,
        ui->model.counts.health[HEALTH_OK], ui->model.n);
    room = ui->cols - l->cols - ui_text_cols(label, strlen(label)) -
        (int)strlen(" last 10m");
    if (room < FRAME_GRAPH_MIN)
        return;
    bars = room < FRAME_GRAPH_MAX ? room : FRAME_GRAPH_MAX;
    if ((size_t)bars > f->len)
        bars = (int)f->len;
    secs = bars * (TREND_FLEET_BUCKET_MS / 1000);
    if (secs < 60)
        snprintf(tail, sizeof(tail), " last %ds", secs);
    else
        snprintf(tail, sizeof(tail), " last %dm", (secs + 30) / 60);
    ui_line_add(l, UI_ROLE_DIM, label);
    for (size_t i = f->len - (size_t)bars; i < f->len; i++) {
        size_t ok, total;

        trend_fleet_get(f, i, &ok, &total);
        if (ok == 0 || total == 0)
            ui_line_add(l, UI_ROLE_UNREACHABLE, trend_gap(ui->utf8));
        else
            ui_line_add(l, ok == total ? UI_ROLE_REACHABLE : UI_ROLE_WARNING,
                trend_glyph(trend_level((double)ok, (double)total),
                ui->utf8));
    }
    ui_line_add(l, UI_ROLE_DIM, tail);
}

/* The counts in the widest style that fits (glyphs only below 80
 * columns), so every word with a count stays on screen; then the ok
 * graph if it fits too. */
static void
frame_counts(struct ui *ui, struct ui_line *l)
{
    for (int style = ui->cols < 80 ? 2 : 0; style < 3; style++) {
        frame_counts_style(ui, l, style);
        if (l->cols <= ui->cols)
            break;
    }
    frame_ok_graph(ui, l);
}

/* One entry of the incident line: a failure kind, one http_status group,
 * the http_status servers in no group, or the tool lists that changed. */
enum frame_entry_type {
    FRAME_ENTRY_KIND,
    FRAME_ENTRY_HTTP,
    FRAME_ENTRY_HTTP_OTHER,
    FRAME_ENTRY_TOOLS,
};

struct frame_entry {
    enum frame_entry_type type;
    int                   k;    /* the kind, or the http group */
};

#define FRAME_ENTRIES (FAILURE__COUNT + MODEL_HTTP_SLOTS + 2)

/* The incident line's entries, in order. */
static size_t
frame_entries(const struct model_counts *c, struct frame_entry *e)
{
    size_t n = 0;

    for (int k = 0; k < FAILURE__COUNT; k++) {
        size_t shown = 0;

        if (c->kind[k] == 0)
            continue;
        if (k != FAILURE_HTTP_STATUS || c->nhttp == 0) {
            e[n++] = (struct frame_entry){ FRAME_ENTRY_KIND, k };
            continue;
        }
        for (size_t h = 0; h < c->nhttp; h++) {
            e[n++] = (struct frame_entry){ FRAME_ENTRY_HTTP, (int)h };
            shown += c->http[h].n;
        }
        if (shown < c->kind[k])
            e[n++] = (struct frame_entry){ FRAME_ENTRY_HTTP_OTHER, k };
    }
    if (c->tools_changed > 0)
        e[n++] = (struct frame_entry){ FRAME_ENTRY_TOOLS, 0 };
    return n;
}

/* Format entry i of e into l (reset first). The http groups follow one
 * "http_status" word: "http_status 502 bad gateway x20 401 auth x3". */
static void
frame_entry(const struct ui *ui, struct ui_line *l,
    const struct model_counts *c, const struct frame_entry *e, size_t i)
{
    const struct frame_entry *x = &e[i];
    bool                      first_http = i == 0 ||
        (e[i - 1].type != FRAME_ENTRY_HTTP);
    char                      cell[48];

    ui_line_reset(l, UI_ROLE_NORMAL);
    switch (x->type) {
    case FRAME_ENTRY_KIND:
        ui_line_addf(l, fmt_kind_role((enum failure_kind)x->k), "%s %zu",
            failure_kind_name((enum failure_kind)x->k), c->kind[x->k]);
        break;
    case FRAME_ENTRY_HTTP:
        if (first_http)
            ui_line_add(l, UI_ROLE_UNKNOWN, "http_status ");
        fmt_http(cell, sizeof(cell), c->http[x->k].status,
            c->http[x->k].reason);
        ui_line_addf(l, c->http[x->k].reason == FAILURE_REASON_NONE ?
            UI_ROLE_UNKNOWN : fmt_reason_role(c->http[x->k].reason, true),
            "%s %s%zu", cell, ui->g.times, c->http[x->k].n);
        break;
    case FRAME_ENTRY_HTTP_OTHER: {
        size_t shown = 0;

        for (size_t h = 0; h < c->nhttp; h++)
            shown += c->http[h].n;
        ui_line_addf(l, UI_ROLE_UNKNOWN, "other %s%zu", ui->g.times,
            c->kind[x->k] - shown);
        break;
    }
    case FRAME_ENTRY_TOOLS:
        ui_line_addf(l, UI_ROLE_WARNING, "tools changed %s %zu", ui->g.changed,
            c->tools_changed);
        break;
    }
}

/* Append what src holds to l, span by span. */
static void
frame_append(struct ui_line *l, const struct ui_line *src)
{
    for (size_t i = 0; i < src->nspan; i++) {
        char buf[UI_LINE_BYTES];
        size_t len = src->span[i].len < sizeof(buf) ? src->span[i].len :
            sizeof(buf) - 1;

        memcpy(buf, src->text + src->span[i].off, len);
        buf[len] = '\0';
        ui_line_add(l, src->span[i].role, buf);
    }
}

/* Where the incident line's entries were last drawn on screen, for a
 * click: entry i spans columns [x0, x1). The last one may be "+N more". */
static struct {
    int    y;                   /* the line's row, -1 not drawn */
    size_t n;                   /* entries drawn, "+N more" included */
    bool   more;                /* the last one is "+N more" */
    int    x0[FRAME_ENTRIES + 1], x1[FRAME_ENTRIES + 1];
} frame_hits = { .y = -1 };

/* The incident line: servers per current failure kind, http_status split
 * by status and reason ("502 bad gateway x20"), tool lists that changed.
 * Cut between entries, never inside one: what does not fit is counted at
 * the end ("+3 more"). With the line focused (Tab), the selected entry is
 * drawn in brackets in the selection's role. hits: record where each
 * entry went (the screen's line, not a snapshot's). */
static void
frame_incidents(struct ui *ui, struct ui_line *l, bool hits)
{
    const struct model_counts *c = &ui->model.counts;
    struct frame_entry         e[FRAME_ENTRIES];
    size_t                     n = frame_entries(c, e);
    static struct ui_line      x;  /* one entry; too big for the stack */
    size_t                     shown = 0;

    ui_line_reset(l, UI_ROLE_NORMAL);
    ui_line_add(l, UI_ROLE_DIM, "incidents: ");
    if (hits) {
        frame_hits.n = 0;
        frame_hits.more = false;
    }
    if (n == 0) {
        ui_line_add(l, UI_ROLE_DIM, "none");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        /* An http group after the first goes on after a space; the
         * others after a separator. */
        bool  cont = i > 0 && e[i].type == FRAME_ENTRY_HTTP &&
            e[i - 1].type == FRAME_ENTRY_HTTP;
        bool  focus = ui->incident_focus && ui->incident_sel == i;
        char  more[32];
        int   sep = i == 0 ? 0 : cont ? 1 : 3;
        int   room;

        frame_entry(ui, &x, c, e, i);
        /* Room for "+N more" after it, unless it is the last (and for
         * the brackets of a focused entry). */
        snprintf(more, sizeof(more), " +%zu more", n - i - 1);
        room = ui->cols - (i + 1 < n ? ui_text_cols(more, strlen(more)) +
            (ui->incident_focus ? 2 : 0) : 0);
        if (l->cols + sep + x.cols + (focus ? 2 : 0) > room) {
            bool sel = ui->incident_focus && ui->incident_sel >= i;

            if (i > 0)
                ui_line_add(l, UI_ROLE_NORMAL, " ");
            if (hits) {
                frame_hits.x0[shown] = l->cols;
                frame_hits.more = true;
            }
            snprintf(more, sizeof(more), "%s+%zu more%s", sel ? "[" : "",
                n - i, sel ? "]" : "");
            ui_line_add(l, sel ? UI_ROLE_SELECTION : UI_ROLE_DIM, more);
            if (hits) {
                frame_hits.x1[shown] = l->cols;
                frame_hits.n = shown + 1;
            }
            return;
        }
        if (cont)
            ui_line_add(l, UI_ROLE_NORMAL, " ");
        else if (i > 0)
            ui_line_addf(l, UI_ROLE_DIM, " %s ", ui->g.sep);
        if (hits)
            frame_hits.x0[shown] = l->cols;
        if (focus) {
            /* The focused entry: bracketed, so it shows without colour. */
            ui_line_add(l, UI_ROLE_SELECTION, "[");
            for (size_t k = 0; k < x.nspan; k++)
                x.span[k].role = UI_ROLE_SELECTION;
        }
        frame_append(l, &x);
        if (focus)
            ui_line_add(l, UI_ROLE_SELECTION, "]");
        if (hits)
            frame_hits.x1[shown] = l->cols;
        shown++;
    }
    if (hits)
        frame_hits.n = shown;
}

/* See ui.h. */
size_t
view_incident_count(const struct ui *ui)
{
    (void)ui;
    return frame_hits.y >= 0 ? frame_hits.n : 0;
}

/* The filter that keeps exactly the servers entry x counts (the terms
 * model_set_filter reads; the counts and the filter both read
 * model_current_failure). false when the language cannot say it exactly
 * (an http_status server in no group of a full split): buf then keeps
 * every http_status. */
static bool
frame_entry_filter(const struct model_counts *c, const struct frame_entry *x,
    char *buf, size_t n)
{
    switch (x->type) {
    case FRAME_ENTRY_KIND:
        snprintf(buf, n, "kind:%s", failure_kind_name((enum failure_kind)x->k));
        return true;
    case FRAME_ENTRY_HTTP:
        /* "!reason:": no reason (the empty value matches any reason). */
        snprintf(buf, n, "kind:http_status http:%ld %s%s", c->http[x->k].status,
            c->http[x->k].reason == FAILURE_REASON_NONE ? "!reason:" :
            "reason:", failure_reason_name(c->http[x->k].reason));
        return true;
    case FRAME_ENTRY_HTTP_OTHER:
        /* With a slot to spare every status has a group, so "other" is
         * the http_status failures with no status ("!http:"). */
        if (c->nhttp < MODEL_HTTP_SLOTS) {
            snprintf(buf, n, "kind:http_status !http:");
            return true;
        }
        snprintf(buf, n, "kind:http_status");
        return false;
    case FRAME_ENTRY_TOOLS:
        snprintf(buf, n, "tools:changed");
        return true;
    }
    return false;
}

/* See ui.h. */
void
view_incident_apply(struct ui *ui, size_t i)
{
    const struct model_counts *c = &ui->model.counts;
    struct frame_entry         e[FRAME_ENTRIES];
    size_t                     n = frame_entries(c, e);
    char                       filter[128];
    bool                       exact;

    ui->incident_focus = false;
    if (i >= view_incident_count(ui))
        return;
    if (frame_hits.more && i + 1 == frame_hits.n) {
        /* "+N more": every cause, as header rows with their counts. */
        if (ui->model.group != MODEL_GROUP_CAUSE)
            model_set_group(&ui->model, MODEL_GROUP_CAUSE);
        ui_message(ui, UI_ROLE_NORMAL, "group: by cause, every incident "
            "as a header (b: the next grouping)");
        return;
    }
    if (i >= n)
        return;
    exact = frame_entry_filter(c, &e[i], filter, sizeof(filter));
    snprintf(ui->input, sizeof(ui->input), "%s", filter);
    model_set_filter(&ui->model, filter);
    ui->model.sel_pos = 0;
    ui->model.top = 0;
    ui->model.sel = MODEL_NONE;
    if (exact)
        ui_message(ui, UI_ROLE_NORMAL, "filter %s (Esc clears it)", filter);
    else
        ui_message(ui, UI_ROLE_WARNING, "filter %s: every http_status, the "
            "split is full (Esc clears it)", filter);
}

/* See ui.h. */
long
view_incident_at(const struct ui *ui, int y, int x)
{
    (void)ui;
    if (frame_hits.y < 0 || y != frame_hits.y)
        return -1;
    for (size_t i = 0; i < frame_hits.n; i++) {
        if (x >= frame_hits.x0[i] && x < frame_hits.x1[i])
            return (long)i;
    }
    return -1;
}

/* See ui.h. */
bool
view_incident_key(struct ui *ui, int ch)
{
    size_t n = view_incident_count(ui);
    int    dir = keys_direction(ch);

    if (n == 0) {
        ui->incident_focus = false;
        return false;
    }
    if (ui->incident_sel >= n)
        ui->incident_sel = n - 1;
    if (dir != 0) {
        ui->incident_sel = (ui->incident_sel + n + (size_t)(dir > 0 ? 1 :
            n - 1)) % n;
        return true;
    }
    if (keys_is_enter(ch)) {
        view_incident_apply(ui, ui->incident_sel);
        return true;
    }
    ui->incident_focus = false;
    /* Esc only leaves the line; another key does what it always does. */
    return keys_action(ch) == UI_ACT_CANCEL;
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
    frame_hits.y = -1;
    if (rows >= 3) {
        if (ui->incident_focus && ui->incident_sel >= FRAME_ENTRIES)
            ui->incident_sel = 0;
        frame_incidents(ui, &l, true);
        frame_hits.y = y + 2;
        screen_line(y + 2, &l, ui->cols, false);
        if (frame_hits.n == 0)
            ui->incident_focus = false;
        else if (ui->incident_sel >= frame_hits.n)
            ui->incident_sel = frame_hits.n - 1;
    }
}

/* See ui.h. */
void
view_header_text(struct ui *ui, FILE *out)
{
    struct ui_line l;

    frame_title(ui, &l);
    fprintf(out, "%.*s\n", (int)l.len, l.text);
    frame_counts(ui, &l);
    fprintf(out, "%.*s\n", (int)l.len, l.text);
    frame_incidents(ui, &l, false);
    fprintf(out, "%.*s\n", (int)l.len, l.text);
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
            "!neg tag: kind: health: live: trans: reason: http: tools: name:");
    } else if (ui->prompt == UI_PROMPT_COMMAND) {
        ui_line_add(&l, UI_ROLE_WARNING, ":");
        ui_line_add(&l, UI_ROLE_NORMAL, ui->palette);
        ui_line_add(&l, UI_ROLE_SELECTION, " ");
        ui_line_add(&l, UI_ROLE_DIM, "  Tab complete  Up/Down history  Enter "
            "run  Esc cancel  sort filter group columns view theme end redial "
            "log help");
    } else if (ui->prompt == UI_PROMPT_END_ONE) {
        fmt_name(name, sizeof(name), fleet_server(ui->fleet,
            ui->confirm_server));
        ui_line_addf(&l, UI_ROLE_WARNING, "End the session of %s? y: end and "
            "reconnect  s: end and stop  n: no", name);
    } else if (ui->prompt == UI_PROMPT_END_ORPHAN) {
        view_procs_prompt(ui, &l);
    } else if (ui->prompt == UI_PROMPT_CANCEL_REQUEST) {
        const struct server         *s = fleet_server(ui->fleet,
            ui->confirm_server);
        const struct server_request *r = server_request(s,
            ui->cancel_index);
        char                         age[24] = "?";

        fmt_name(name, sizeof(name), s);
        if (r != NULL)
            fmt_age(age, sizeof(age), ui->model.now_ms - r->started_at);
        ui_line_addf(&l, UI_ROLE_WARNING, "Cancel request %s of %s (%s%s%s, "
            "%s old)? y: cancel  n: the next one  Esc: no", ui->cancel_id,
            name, r != NULL ? r->method : "?", r != NULL && r->tool[0] ?
            " " : "", r != NULL ? r->tool : "", age);
    } else if (ui->prompt == UI_PROMPT_END_MARKED) {
        ui_line_addf(&l, UI_ROLE_WARNING, "End the sessions of %zu marked "
            "servers? y: end and reconnect  s: end and stop  n: no",
            ui->model.nmarked);
    } else if (ui->message[0] != '\0') {
        ui_line_add(&l, ui->message_role, ui->message);
    } else if (ui->replay != NULL && ui->view->keys != UI_VIEW_KEYS_OWN) {
        tui_replay_status(ui, &l);
    } else {
        ui->view->hint(ui, &l);      /* the keys that apply in the mode */
    }
    screen_line(y, &l, ui->cols, false);
}
