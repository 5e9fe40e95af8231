/*
 * The server table: one row per visible server, columns chosen by
 * priority to fit the width, rows formatted into ui_lines (text + role)
 * and only the visible rows formatted at all. Every state is a word or a
 * glyph as well as a colour.
 */
#include <stdio.h>
#include <string.h>

#include "engine/server.h"
#include "ui/screen.h"
#include "ui/ui.h"

enum table_col {
    COL_MARK,
    COL_NAME,
    COL_TRANSPORT,
    COL_LIVENESS,
    COL_AGE,
    COL_STREAK,
    COL_SESSION,
    COL_PROTO,
    COL_TOOLS,
    COL_RTT,
    COL_FAILURE,
    COL_DELIVERED,
    COL_HTTP,
    COL_HISTORY,
    COL__COUNT
};

struct table_col_def {
    const char *title;
    int         width;      /* minimum */
    int         max;        /* grows up to this with spare room */
    int         prio;       /* lower: kept longer when narrow */
    bool        right;
};

static const struct table_col_def table_cols[COL__COUNT] = {
    [COL_MARK]      = { "",             2,  2,  0, false },
    [COL_NAME]      = { "NAME",         10, 28, 0, false },
    [COL_TRANSPORT] = { "TRANS",        5,  5,  7, false },
    [COL_LIVENESS]  = { "LIVENESS",     13, 13, 0, false },
    [COL_AGE]       = { "AGE",          4,  4,  2, true },
    [COL_STREAK]    = { "STRK",         4,  5,  10, true },
    [COL_SESSION]   = { "SESSION",      9,  11, 8, false },
    [COL_PROTO]     = { "PROTOCOL",     10, 10, 11, false },
    [COL_TOOLS]     = { "TOOLS",        5,  5,  9, true },
    [COL_RTT]       = { "RTT ms",       6,  7,  6, true },
    [COL_FAILURE]   = { "LAST FAILURE", 17, 17, 1, false },
    [COL_DELIVERED] = { "DELIV",        7,  7,  4, false },
    [COL_HTTP]      = { "HTTP",         8,  8,  5, false },
    [COL_HISTORY]   = { "HISTORY",      7,  40, 3, false },
};

struct table_layout {
    bool on[COL__COUNT];
    int  width[COL__COUNT];
};

/* Choose the columns that fit in cols with the name `name_w` wide, then
 * widen name and history. Returns the least important priority dropped
 * (or a large number when none was). */
static int
table_fit(struct table_layout *lay, int cols, int name_w)
{
    int used = 0, spare, dropped = 1 << 20;

    memset(lay, 0, sizeof(*lay));
    for (int prio = 0; prio <= 11; prio++) {
        for (int c = 0; c < COL__COUNT; c++) {
            int w;

            if (table_cols[c].prio != prio)
                continue;
            w = c == COL_NAME ? name_w : table_cols[c].width;
            if (used + w + (used > 0 ? 1 : 0) > cols) {
                if (prio < dropped)
                    dropped = prio;
                continue;
            }
            lay->on[c] = true;
            lay->width[c] = w;
            used += w + (used > 0 ? 1 : 0);
        }
    }
    spare = cols - used;
    /* Spare room: the history strip first, then the other columns. */
    if (lay->on[COL_HISTORY] && spare > 0) {
        int grow = table_cols[COL_HISTORY].max - lay->width[COL_HISTORY];

        grow = grow > spare ? spare : grow;
        lay->width[COL_HISTORY] += grow;
        spare -= grow;
    }
    for (int c = 0; c < COL__COUNT && spare > 0; c++) {
        int grow;

        if (!lay->on[c] || c == COL_HISTORY)
            continue;
        grow = table_cols[c].max - lay->width[c];
        if (grow <= 0)
            continue;
        grow = grow > spare ? spare : grow;
        lay->width[c] += grow;
        spare -= grow;
    }
    return dropped;
}

/* The layout: the names as wide as the longest (up to 20) when that costs
 * only the least useful columns (tools, streak, protocol), else as narrow
 * as needed. */
static void
table_layout(struct table_layout *lay, int cols, int longest)
{
    int want = longest < table_cols[COL_NAME].width ?
        table_cols[COL_NAME].width : longest > 20 ? 20 : longest;

    if (want > table_cols[COL_NAME].width && table_fit(lay, cols, want) >= 9)
        return;
    table_fit(lay, cols, table_cols[COL_NAME].width);
}

/* One cell, with its separator. */
static void
table_cell(const struct ui *ui, struct ui_line *l,
    const struct table_layout *lay, enum table_col c, enum ui_role role,
    const char *text)
{
    if (!lay->on[c])
        return;
    if (l->cols > 0)
        ui_line_add(l, l->base, " ");
    ui_line_cell(l, role, text, lay->width[c], table_cols[c].right, ui->utf8);
}

/* The history strip: the newest `width` exchanges, oldest at the left. */
static void
table_strip(const struct ui *ui, struct ui_line *l,
    const struct table_layout *lay, const struct server *s)
{
    size_t len = server_history_len(s), first;
    int    w = lay->width[COL_HISTORY], start;

    if (!lay->on[COL_HISTORY])
        return;
    if (l->cols > 0)
        ui_line_add(l, l->base, " ");
    start = l->cols;
    first = len > (size_t)w ? len - (size_t)w : 0;
    for (size_t i = first; i < len; i++) {
        const struct server_exchange *x = server_history(s, i);
        enum liveness_state           st;

        if (x == NULL)
            break;
        if (x->completed) {
            ui_line_add(l, ROLE_REACHABLE, ui->g.strip[LIVENESS_REACHABLE]);
        } else if (liveness_state_of_kind(x->kind, &st)) {
            ui_line_add(l, st == LIVENESS_UNREACHABLE ? ROLE_UNREACHABLE :
                st == LIVENESS_UNKNOWN ? ROLE_UNKNOWN : ROLE_REACHABLE,
                ui->g.strip[st]);
        } else {
            ui_line_add(l, ROLE_ABSENT, ui->g.strip_absent);
        }
    }
    ui_line_pad(l, l->base, start + w);
}

/* Format server s as one table row. */
static void
table_row(const struct ui *ui, struct ui_line *l,
    const struct table_layout *lay, const struct server *s, size_t idx,
    bool selected)
{
    const struct liveness     *live = server_liveness(s);
    const struct failure      *f = server_last_failure(s, NULL);
    struct server_session_info si;
    bool                       marked = ui->model.marked[idx];
    bool                       current;
    enum failure_kind          k;
    long                       st, tools = server_tools(s);
    double                     rtt = server_rtt_ms(s);
    char                       buf[160];

    ui_line_reset(l, ROLE_NORMAL);
    /* The selection and the mark show as glyphs too, not only as
     * colour or reverse video. */
    snprintf(buf, sizeof(buf), "%s%s", selected ? ui->g.cursor : " ",
        marked ? ui->g.mark : " ");
    table_cell(ui, l, lay, COL_MARK, marked ? ROLE_MARKED : ROLE_NORMAL, buf);
    fmt_name(buf, sizeof(buf), s);
    table_cell(ui, l, lay, COL_NAME, marked ? ROLE_MARKED : ROLE_NORMAL, buf);
    table_cell(ui, l, lay, COL_TRANSPORT, ROLE_NORMAL,
        server_transport_name(s));
    fmt_liveness(ui, buf, sizeof(buf), live);
    table_cell(ui, l, lay, COL_LIVENESS, fmt_live_role(live), buf);
    buf[0] = '\0';
    if (live->present)
        fmt_age(buf, sizeof(buf), ui->model.now_ms - live->observed_at);
    table_cell(ui, l, lay, COL_AGE, ROLE_DIM, buf);
    buf[0] = '\0';
    if (live->present)
        snprintf(buf, sizeof(buf), "%lu", server_streak(s));
    table_cell(ui, l, lay, COL_STREAK, ROLE_DIM, buf);
    server_session(s, &si);
    if (server_state(s) == SERVER_ENDING || server_ending_busy(s)) {
        table_cell(ui, l, lay, COL_SESSION, ROLE_WARNING, ui->g.ending);
    } else {
        if (si.open && si.id_prefix[0] != '\0')
            snprintf(buf, sizeof(buf), "%s", si.id_prefix);
        else if (server_pid(s) > 0)
            snprintf(buf, sizeof(buf), "pid %ld", server_pid(s));
        else if (si.open && server_era(s) == ERA_MODERN)
            snprintf(buf, sizeof(buf), "sessionless");
        else if (si.open)
            snprintf(buf, sizeof(buf), "open");
        else if (server_era(s) == ERA_MODERN)
            snprintf(buf, sizeof(buf), "modern");
        else
            snprintf(buf, sizeof(buf), "-");
        table_cell(ui, l, lay, COL_SESSION, si.open ? ROLE_NORMAL : ROLE_DIM,
            buf);
    }
    table_cell(ui, l, lay, COL_PROTO, ROLE_DIM,
        si.open && si.protocol_version != NULL ? si.protocol_version : "");
    buf[0] = '\0';
    if (tools >= 0)
        snprintf(buf, sizeof(buf), "%ld", tools);
    table_cell(ui, l, lay, COL_TOOLS, ROLE_NORMAL, buf);
    buf[0] = '\0';
    if (rtt >= 0)
        snprintf(buf, sizeof(buf), rtt < 10 ? "%.1f" : "%.0f", rtt);
    table_cell(ui, l, lay, COL_RTT, ROLE_NORMAL, buf);
    current = model_current_failure(s, &k, &st);
    if (f != NULL) {
        table_cell(ui, l, lay, COL_FAILURE, current ? fmt_live_role(live) :
            ROLE_DIM, failure_kind_name(f->kind));
        table_cell(ui, l, lay, COL_DELIVERED, current ?
            fmt_delivered_role(f->delivered) : ROLE_DIM,
            delivered_name(f->delivered));
        fmt_http(buf, sizeof(buf), f->http_status);
        table_cell(ui, l, lay, COL_HTTP, (f->http_status == 401 ||
            f->http_status == 403) ? ROLE_WARNING : current ? ROLE_NORMAL :
            ROLE_DIM, buf);
    } else {
        table_cell(ui, l, lay, COL_FAILURE, ROLE_DIM, "");
        table_cell(ui, l, lay, COL_DELIVERED, ROLE_DIM, "");
        table_cell(ui, l, lay, COL_HTTP, ROLE_DIM, "");
    }
    table_strip(ui, l, lay, s);
}

/* The widest name among the rows that will be shown. */
static int
table_longest_name(const struct ui *ui, size_t rows)
{
    const struct model *m = &ui->model;
    int                 longest = 0;
    size_t              top = m->top;

    /* The window the rows will use (model_scroll runs after the layout). */
    if (m->sel_pos >= top + rows)
        top = m->sel_pos - rows + 1;
    if (m->sel_pos < top)
        top = m->sel_pos;
    for (size_t p = top; p < m->nvis && p < top + rows; p++) {
        char name[128];
        int  w;

        fmt_name(name, sizeof(name), fleet_server(ui->fleet, m->order[p]));
        w = ui_text_cols(name, strlen(name));
        if (w > longest)
            longest = w;
    }
    return longest;
}

void
view_table_draw(struct ui *ui, int y, int rows)
{
    struct model       *m = &ui->model;
    struct table_layout lay;
    struct ui_line      l;

    ui->table_y = y + 1;
    ui->table_rows = rows > 1 ? rows - 1 : 0;
    if (rows <= 0)
        return;
    table_layout(&lay, ui->cols, table_longest_name(ui, (size_t)rows));
    ui_line_reset(&l, ROLE_HEADER);
    for (int c = 0; c < COL__COUNT; c++)
        table_cell(ui, &l, &lay, (enum table_col)c, ROLE_HEADER,
            table_cols[c].title);
    screen_line(y, &l, ui->cols, false);
    if (ui->table_rows == 0)
        return;
    model_scroll(m, (size_t)ui->table_rows);
    if (m->nvis == 0) {
        ui_line_reset(&l, ROLE_DIM);
        if (m->filter[0] != '\0')
            ui_line_addf(&l, ROLE_DIM, "  no server matches \"%s\" "
                "(Esc clears the filter)", m->filter);
        else
            ui_line_add(&l, ROLE_DIM, "  no servers in the config");
        screen_line(y + 1, &l, ui->cols, false);
        return;
    }
    for (int r = 0; r < ui->table_rows; r++) {
        size_t pos = m->top + (size_t)r;
        size_t idx;

        if (pos >= m->nvis)
            break;
        idx = m->order[pos];
        table_row(ui, &l, &lay, fleet_server(ui->fleet, idx), idx,
            pos == m->sel_pos);
        screen_line(y + 1 + r, &l, ui->cols, pos == m->sel_pos);
    }
}

bool
view_table_key(struct ui *ui, enum ui_action a)
{
    struct model *m = &ui->model;
    long          page = ui->table_rows > 1 ? ui->table_rows - 1 : 1;

    switch (a) {
    case UI_ACT_UP:
        model_move(m, -1);
        break;
    case UI_ACT_DOWN:
        model_move(m, 1);
        break;
    case UI_ACT_PAGE_UP:
        model_move(m, -page);
        break;
    case UI_ACT_PAGE_DOWN:
        model_move(m, page);
        break;
    case UI_ACT_HOME:
        model_goto(m, 0);
        break;
    case UI_ACT_END:
        model_goto(m, m->nvis > 0 ? m->nvis - 1 : 0);
        break;
    case UI_ACT_MARK:
        if (m->nvis == 0)
            return true;
        model_toggle_mark(m, m->sel);
        model_move(m, 1);
        break;
    case UI_ACT_SORT:
        m->sort = (enum model_sort)((m->sort + 1) % MODEL_SORT__COUNT);
        m->dirty = true;
        ui_message(ui, ROLE_NORMAL, "sort: %s", model_sort_name(m->sort));
        break;
    default:
        return false;
    }
    ui->detail_scroll = 0;
    return true;
}
