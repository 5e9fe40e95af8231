/*
 * The server table: one row per visible server, rows formatted into
 * ui_lines (text + role) and only the visible rows formatted at all. The
 * layout: NAME first, as wide as the longest name shown (up to a third of
 * the width), then HEALTH, the verdict (DESIGN.md section 4b); then the
 * other columns by a fixed order of importance, each dropped whole when it
 * does not fit (PROTOCOL gives way first, then STRK, TREND, TRANS,
 * TOOLS, SESSION, HTTP, LIVENESS, RTT, DELIV, HISTORY, AGE); spare room
 * widens HISTORY, TREND and the rest. TREND, last, is the newest round
 * trips as bars on one scale for every row, shown in its title ("TREND
 * <=200ms"). HTTP gives way early because nothing is lost: the
 * status and its reason move into LAST FAILURE ("502 bad gateway x7"). Every state is a word or
 * a glyph as well as a colour. A row never shows a value as if it were
 * current when the last exchange failed: the round trip is left blank and
 * the session id is marked stale. A row that is not monitored now (paused,
 * stopped, disabled) is drawn dim and shows no observation at all: no
 * liveness, no round trip, no failure; its AGE is how long it has been so.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "engine/config.h"
#include "engine/server.h"
#include "ui/screen.h"
#include "ui/trend.h"
#include "ui/ui.h"
#include "util/clock.h"
#include "util/str.h"

enum table_col {
    TABLE_COL_MARK,
    TABLE_COL_NAME,
    TABLE_COL_TRANSPORT,
    TABLE_COL_HEALTH,
    TABLE_COL_LIVENESS,
    TABLE_COL_AGE,
    TABLE_COL_STREAK,
    TABLE_COL_SESSION,
    TABLE_COL_PROTO,
    TABLE_COL_TOOLS,
    TABLE_COL_RTT,
    TABLE_COL_FAILURE,
    TABLE_COL_DELIVERED,
    TABLE_COL_HTTP,
    TABLE_COL_HISTORY,
    TABLE_COL_TREND,
    TABLE_COL_TAGS,
    TABLE_COL_SOURCE,
    TABLE_COL__COUNT
};

struct table_col_def {
    const char     *title;
    int             width;      /* minimum */
    int             max;        /* grows up to this with spare room */
    int             prio;       /* lower: kept longer when narrow */
    bool            right;
    int             sort;       /* enum model_sort, or -1 */
    bool            off;        /* hidden unless chosen (:columns, c) */
};

#define TABLE_PRIOS 17
#define TABLE_TREND_TITLED 12   /* "TREND ≤500ms" */

static const struct table_col_def table_cols[TABLE_COL__COUNT] = {
    [TABLE_COL_MARK]      = { "",             2,  2,  0, false, -1 },
    [TABLE_COL_NAME]      = { "NAME",         5,  0,  0, false, MODEL_SORT_NAME },
    [TABLE_COL_TRANSPORT] = { "TRANS",        5,  5,  11, false,
                        MODEL_SORT_TRANSPORT },
    [TABLE_COL_HEALTH]    = { "HEALTH",       10, 10, 0, false,
                        MODEL_SORT_HEALTH },
    [TABLE_COL_LIVENESS]  = { "LIVENESS",     13, 13, 6, false,
                        MODEL_SORT_LIVENESS },
    [TABLE_COL_AGE]       = { "AGE",          4,  4,  2, true, MODEL_SORT_AGE },
    [TABLE_COL_STREAK]    = { "STRK",         4,  5,  13, true, MODEL_SORT_STREAK },
    [TABLE_COL_SESSION]   = { "SESSION",      9,  11, 8, false,
                        MODEL_SORT_SESSION },
    [TABLE_COL_PROTO]     = { "PROTOCOL",     10, 10, 14, false,
                        MODEL_SORT_PROTOCOL },
    [TABLE_COL_TOOLS]     = { "TOOLS",        5,  8,  9, true, MODEL_SORT_TOOLS },
    [TABLE_COL_RTT]       = { "RTT ms",       6,  7,  5, true, MODEL_SORT_RTT },
    [TABLE_COL_FAILURE]   = { "LAST FAILURE", 17, 23, 1, false,
                        MODEL_SORT_FAILURE },
    [TABLE_COL_DELIVERED] = { "DELIV",        7,  7,  4, false,
                        MODEL_SORT_DELIVERED },
    [TABLE_COL_HTTP]      = { "HTTP",         8,  22, 7, false, MODEL_SORT_HTTP },
    [TABLE_COL_HISTORY]   = { "HISTORY",      7,  40, 3, false,
                        MODEL_SORT_HISTORY },
    /* The title carries the scale: "TREND <=200ms", narrow "<=200ms"
     * (table_titles). */
    [TABLE_COL_TREND]     = { "TREND",        8,  TREND_SAMPLES, 12, false, -1 },
    [TABLE_COL_TAGS]      = { "TAGS",         6,  24, 15, false, -1, true },
    [TABLE_COL_SOURCE]    = { "SOURCE",       6,  6,  16, false, -1, true },
};

/* The words of :columns, the chooser and a view's "columns": a column's
 * word is here, or its title's first word in lower case (so a new column
 * needs no entry). MARK has none: it is always first. */
static const char *const table_col_words[TABLE_COL__COUNT] = {
    [TABLE_COL_TRANSPORT] = "transport",
    [TABLE_COL_STREAK]    = "streak",
    [TABLE_COL_FAILURE]   = "failure",
    [TABLE_COL_DELIVERED] = "delivered",
};

/* One row's cells, formatted in the table's own order and then emitted
 * in the order the operator chose. */
struct table_cells {
    char         text[TABLE_COL__COUNT][160];
    enum ui_role role[TABLE_COL__COUNT];
};

/* The order in which spare room widens columns. */
static const enum table_col table_grow[] = {
    TABLE_COL_HISTORY, TABLE_COL_TREND, TABLE_COL_TOOLS, TABLE_COL_SESSION, TABLE_COL_STREAK, TABLE_COL_RTT,
};

struct table_layout {
    bool merge;                       /* HTTP gave way: the status is in
                                         LAST FAILURE */
    bool on[TABLE_COL__COUNT];
    int  x[TABLE_COL__COUNT];         /* first column on screen */
    int  width[TABLE_COL__COUNT];
    int  order[TABLE_COL__COUNT];     /* the shown columns, left to right */
    int  norder;
    double trend_scale;               /* TREND's scale (ms), 0: no round
                                         trip on screen */
};

_Static_assert(TABLE_COL__COUNT <= UI_COLUMNS_MAX,
    "struct ui keeps the columns in UI_COLUMNS_MAX entries");

/* The last layout drawn, for a click on the column titles. */
static struct table_layout table_last;

/* See ui.h. */
size_t
view_table_ncolumns(void)
{
    return TABLE_COL__COUNT;
}

/* See ui.h. */
const char *
view_table_column_word(int c)
{
    static char words[TABLE_COL__COUNT][24];

    if (c <= TABLE_COL_MARK || c >= TABLE_COL__COUNT)
        return NULL;
    if (table_col_words[c] != NULL)
        return table_col_words[c];
    if (words[c][0] == '\0') {
        const char *t = table_cols[c].title;
        size_t      i;

        for (i = 0; t[i] != '\0' && t[i] != ' ' && i + 1 < sizeof(words[c]);
            i++)
            words[c][i] = (char)(t[i] >= 'A' && t[i] <= 'Z' ? t[i] + 32 :
                t[i]);
        words[c][i] = '\0';
    }
    return words[c];
}

/* See ui.h. */
const char *
view_table_column_title(int c)
{
    return c > TABLE_COL_MARK && c < TABLE_COL__COUNT ? table_cols[c].title :
        "";
}

/* See ui.h. */
int
view_table_column_of(const char *word, size_t len)
{
    for (int c = TABLE_COL_MARK + 1; c < TABLE_COL__COUNT; c++) {
        const char *w = view_table_column_word(c);

        if (strlen(w) == len && strncasecmp(w, word, len) == 0)
            return c;
    }
    return -1;
}

/* See ui.h. */
bool
view_table_column_fixed(int c)
{
    return c == TABLE_COL_NAME || c == TABLE_COL_HEALTH;
}

/* See ui.h. */
size_t
view_table_columns(const struct ui *ui, int *out)
{
    size_t n = 0;

    if (ui->ncolumns == 0) {
        for (int c = TABLE_COL_MARK + 1; c < TABLE_COL__COUNT; c++) {
            if (!table_cols[c].off)
                out[n++] = c;
        }
        return n;
    }
    for (size_t i = 0; i < ui->ncolumns && i < TABLE_COL__COUNT; i++)
        out[n++] = ui->columns[i];
    return n;
}

/* See ui.h. */
bool
view_table_set_columns(struct ui *ui, const int *cols, size_t n)
{
    bool   seen[TABLE_COL__COUNT] = { false };
    size_t k = 0;

    /* NAME first, always; HEALTH always shown (after NAME when not
     * placed). */
    ui->columns[k++] = TABLE_COL_NAME;
    seen[TABLE_COL_NAME] = true;
    for (size_t i = 0; i < n; i++) {
        if (cols[i] <= TABLE_COL_MARK || cols[i] >= TABLE_COL__COUNT ||
            seen[cols[i]])
            continue;
        seen[cols[i]] = true;
        ui->columns[k++] = (signed char)cols[i];
    }
    if (!seen[TABLE_COL_HEALTH]) {
        memmove(&ui->columns[2], &ui->columns[1], (k - 1) *
            sizeof(ui->columns[0]));
        ui->columns[1] = TABLE_COL_HEALTH;
        k++;
    }
    ui->ncolumns = k;
    return true;
}

/* See ui.h. */
void
view_table_columns_text(const struct ui *ui, char *buf, size_t n)
{
    int    cols[TABLE_COL__COUNT];
    size_t nc = view_table_columns(ui, cols), off = 0;

    if (n == 0)
        return;
    buf[0] = '\0';
    for (size_t i = 0; i < nc; i++) {
        int w = snprintf(buf + off, n - off, "%s%s", i > 0 ? "," : "",
            view_table_column_word(cols[i]));

        if (w < 0 || (size_t)w >= n - off)
            break;
        off += (size_t)w;
    }
}

/*
 * The layout for cols columns. want[c] is the width a column's content
 * asks for (the longest name, the longest failure and status shown), or
 * 0 for its minimum. NAME is placed first (up to a third of the width),
 * then every other column the operator shows that fits at the width its
 * content wants (within its minimum and maximum), most important first; a
 * column that does not fit is dropped whole. Spare room then widens
 * HISTORY and the rest (table_grow). merge: HTTP is left out, its text is
 * in LAST FAILURE. The columns are placed in the operator's order.
 */
static void
table_layout(struct table_layout *lay, const struct ui *ui, const int *want,
    bool merge)
{
    bool shown[TABLE_COL__COUNT] = { false };
    int  chosen[TABLE_COL__COUNT];
    int  used = 0, spare, x = 0, cols = ui->cols;
    size_t nchosen = view_table_columns(ui, chosen);

    memset(lay, 0, sizeof(*lay));
    lay->merge = merge;
    shown[TABLE_COL_MARK] = true;
    for (size_t i = 0; i < nchosen; i++)
        shown[chosen[i]] = true;
    for (int prio = 0; prio < TABLE_PRIOS; prio++) {
        for (int c = 0; c < TABLE_COL__COUNT; c++) {
            int w = table_cols[c].width;

            if (table_cols[c].prio != prio || !shown[c])
                continue;
            if (merge && c == TABLE_COL_HTTP)
                continue;
            if (want[c] > w)
                w = want[c];
            if (c == TABLE_COL_NAME && w > cols / 3)
                w = cols / 3 > table_cols[c].width ? cols / 3 :
                    table_cols[c].width;
            else if (c != TABLE_COL_NAME && w > table_cols[c].max)
                w = table_cols[c].max;
            if (used + w + (used > 0 ? 1 : 0) > cols)
                continue;
            lay->on[c] = true;
            lay->width[c] = w;
            used += w + (used > 0 ? 1 : 0);
        }
    }
    spare = cols - used;
    if (lay->on[TABLE_COL_TREND] && spare > 0 &&
        lay->width[TABLE_COL_TREND] < TABLE_TREND_TITLED) {
        /* TREND first takes the room of its whole title ("TREND
         * <=500ms"), then HISTORY and the rest grow. */
        int grow = TABLE_TREND_TITLED - lay->width[TABLE_COL_TREND];

        grow = grow > spare ? spare : grow;
        lay->width[TABLE_COL_TREND] += grow;
        spare -= grow;
    }
    for (size_t i = 0; i < sizeof(table_grow) / sizeof(table_grow[0]) &&
        spare > 0; i++) {
        enum table_col c = table_grow[i];
        int            grow = table_cols[c].max - lay->width[c];

        if (!lay->on[c] || grow <= 0)
            continue;
        grow = grow > spare ? spare : grow;
        lay->width[c] += grow;
        spare -= grow;
    }
    lay->order[lay->norder++] = TABLE_COL_MARK;
    for (size_t i = 0; i < nchosen; i++) {
        if (lay->on[chosen[i]])
            lay->order[lay->norder++] = chosen[i];
    }
    for (int i = 0; i < lay->norder; i++) {
        int c = lay->order[i];

        lay->x[c] = x;
        x += lay->width[c] + 1;
    }
}

/* The role a piece of a row is drawn in: a row drawn dim (base dim: not
 * monitored now) is dim throughout, but for its mark. */
static enum ui_role
table_role(const struct ui_line *l, enum ui_role role)
{
    return l->base == UI_ROLE_DIM && role != UI_ROLE_MARKED ? UI_ROLE_DIM :
        role;
}

/* One cell, with its separator, on the line now. */
static void
table_cell_now(const struct ui *ui, struct ui_line *l,
    const struct table_layout *lay, enum table_col c, enum ui_role role,
    const char *text)
{
    if (!lay->on[c])
        return;
    if (l->cols > 0)
        ui_line_add(l, l->base, " ");
    ui_line_cell(l, table_role(l, role), text, lay->width[c],
        table_cols[c].right, ui->utf8);
}

/* One cell of a row, kept for table_emit. */
static void
table_cell(struct table_cells *cells, enum table_col c, enum ui_role role,
    const char *text)
{
    snprintf(cells->text[c], sizeof(cells->text[c]), "%s", text);
    cells->role[c] = role;
}

/* The history strip: the newest `width` exchanges, oldest at the left. An
 * answer with an error has its own mark: it proves reach, not health. */
static void
table_strip(const struct ui *ui, struct ui_line *l,
    const struct table_layout *lay, const struct server *s)
{
    size_t len = server_history_len(s), first;
    int    w = lay->width[TABLE_COL_HISTORY], start;

    if (!lay->on[TABLE_COL_HISTORY])
        return;
    if (l->cols > 0)
        ui_line_add(l, l->base, " ");
    start = l->cols;
    first = len > (size_t)w ? len - (size_t)w : 0;
    for (size_t i = first; i < len; i++) {
        const struct mcp_exchange *x = server_history(s, i);
        enum liveness_state           st;

        if (x == NULL)
            break;
        if (x->ending)
            /* An ending's exchange, apart from monitoring: e for it. */
            ui_line_add(l, table_role(l, x->completed ? UI_ROLE_DIM :
                UI_ROLE_WARNING), "e");
        else if (x->completed)
            ui_line_add(l, table_role(l, UI_ROLE_REACHABLE),
                ui->g.strip[LIVENESS_REACHABLE]);
        else if (!liveness_state_of_kind(x->kind, &st))
            ui_line_add(l, table_role(l, UI_ROLE_ABSENT), ui->g.strip_absent);
        else if (st == LIVENESS_REACHABLE)
            ui_line_add(l, table_role(l, UI_ROLE_WARNING), ui->g.strip_error);
        else
            ui_line_add(l, table_role(l, st == LIVENESS_UNREACHABLE ?
                UI_ROLE_UNREACHABLE : UI_ROLE_UNKNOWN), ui->g.strip[st]);
    }
    ui_line_pad(l, l->base, start + w);
}

/* The newest round trips of server s, oldest first, into v (at most max;
 * a failed exchange as -1), an ending's exchanges left out (they are not
 * monitoring); returns how many. Reads back from the newest: O(max). */
static size_t
table_trend_samples(const struct server *s, float *v, size_t max)
{
    size_t len = server_history_len(s), n = 0;

    for (size_t i = len; i > 0 && n < max; i--) {
        const struct mcp_exchange *x = server_history(s, i - 1);

        if (x == NULL || x->ending)
            continue;
        v[n++] = x->completed ? x->ms : -1;
    }
    for (size_t i = 0; i < n / 2; i++) {
        float t = v[i];

        v[i] = v[n - 1 - i];
        v[n - 1 - i] = t;
    }
    return n;
}

/* TREND's scale: the largest round trip any row on screen shows in its
 * cell, rounded up to a nice number (trend_scale), so every row's bars
 * are on one scale. O(rows x width). */
static double
table_trend_scale(const struct ui *ui, size_t rows, int width)
{
    const struct model *m = &ui->model;
    float               v[TREND_SAMPLES];
    double              max = 0;
    size_t              w = width > TREND_SAMPLES ? TREND_SAMPLES :
        (size_t)width;

    for (size_t p = m->top; p < m->nvis && p < m->top + rows; p++) {
        const struct server *s;
        size_t               n;

        if (m->order[p] >= m->n)
            continue;           /* a group's header */
        s = fleet_server(ui->fleet, m->order[p]);
        if (!model_monitored(s))
            continue;
        n = table_trend_samples(s, v, w);
        for (size_t i = 0; i < n; i++) {
            if (v[i] > max)
                max = v[i];
        }
    }
    return trend_scale(max);
}

/* The TREND cell: the newest round trips as bars on the table's scale,
 * oldest at the left; a failed exchange is a gap mark (in its failure's
 * role), never a short bar. Nothing for a server not monitored now. */
static void
table_trend(const struct ui *ui, struct ui_line *l,
    const struct table_layout *lay, const struct server *s, bool watched)
{
    float  v[TREND_SAMPLES];
    int    w = lay->width[TABLE_COL_TREND], start;
    size_t n;

    if (!lay->on[TABLE_COL_TREND])
        return;
    if (l->cols > 0)
        ui_line_add(l, l->base, " ");
    start = l->cols;
    n = watched ? table_trend_samples(s, v, w > TREND_SAMPLES ?
        TREND_SAMPLES : (size_t)w) : 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < 0)
            ui_line_add(l, table_role(l, UI_ROLE_UNREACHABLE),
                trend_gap(ui->utf8));
        else
            ui_line_add(l, table_role(l, UI_ROLE_REACHABLE),
                trend_glyph(trend_level(v[i], lay->trend_scale), ui->utf8));
    }
    ui_line_pad(l, l->base, start + w);
}

/* The session cell: the id prefix (marked stale when the last exchange
 * failed), the child's pid, or what the era says. */
static void
table_session(const struct ui *ui, struct table_cells *cells,
    const struct server *s, bool failing)
{
    struct mcp_session_info si;
    char                       buf[64];
    enum ui_role               role;

    if (server_state(s) == SERVER_ENDING || server_ending_busy(s)) {
        table_cell(cells, TABLE_COL_SESSION, UI_ROLE_WARNING, ui->g.ending);
        return;
    }
    if (server_state(s) == SERVER_PAUSED || server_state(s) == SERVER_STOPPED
        || server_state(s) == SERVER_DISABLED) {
        table_cell(cells, TABLE_COL_SESSION, UI_ROLE_DIM,
            server_state_name(server_state(s)));
        return;
    }
    if (server_state(s) == SERVER_BACKOFF && server_next_attempt_ms(s) >= 0) {
        /* When the next dial goes: a backoff, or a wait it asked for. */
        long left = (long)((server_next_attempt_ms(s) - clock_wall_ms() +
            999) / 1000);

        snprintf(buf, sizeof(buf), "retry %lds", left > 0 ? left : 0);
        table_cell(cells, TABLE_COL_SESSION, UI_ROLE_DIM, buf);
        return;
    }
    if (server_is_tap(s)) {
        /* A tap's row: what the agent has in flight, and the oldest's
         * age (a wait past a minute in the warning role). */
        const struct server_request *r = server_request(s, 0);
        char                         age[24] = "";
        int64_t                      waited = r != NULL ?
            clock_wall_ms() - r->started_at : 0;

        if (r != NULL)
            fmt_age(age, sizeof(age), waited);
        snprintf(buf, sizeof(buf), "%s %zu%s%s", ui->utf8 ? "\xe2\x87\x84" :
            "tap", server_in_flight(s), r != NULL ? " " : "", age);
        table_cell(cells, TABLE_COL_SESSION, r == NULL ? UI_ROLE_DIM :
            waited > 60000 ? UI_ROLE_WARNING : UI_ROLE_NORMAL, buf);
        return;
    }
    server_session(s, &si);
    role = si.open ? UI_ROLE_NORMAL : UI_ROLE_DIM;
    if (si.open && si.id_prefix[0] != '\0') {
        snprintf(buf, sizeof(buf), "%s%s", failing ? ui->g.stale : "",
            si.id_prefix);
        if (failing)
            role = UI_ROLE_DIM;
    } else if (server_pid(s) > 0) {
        snprintf(buf, sizeof(buf), "pid %ld", server_pid(s));
    } else if (si.open && server_era(s) == MCP_ERA_MODERN) {
        snprintf(buf, sizeof(buf), "sessionless");
    } else if (si.open) {
        snprintf(buf, sizeof(buf), "open");
    } else if (server_era(s) == MCP_ERA_MODERN) {
        snprintf(buf, sizeof(buf), "modern");
    } else {
        snprintf(buf, sizeof(buf), "-");
    }
    table_cell(cells, TABLE_COL_SESSION, role, buf);
}

/* The tools cell: the count, and Δn when the list changed n times (in the
 * warning role for a minute after a change). */
static void
table_tools(const struct ui *ui, struct table_cells *cells,
    const struct server *s, size_t idx)
{
    const struct model_server *ms = &ui->model.srv[idx];
    long                       tools = server_tools(s);
    char                       buf[48] = "";
    bool                       recent;

    if (tools >= 0 && ms->tool_changes > 0)
        snprintf(buf, sizeof(buf), "%ld %s%lu", tools, ui->g.changed,
            ms->tool_changes);
    else if (tools >= 0)
        snprintf(buf, sizeof(buf), "%ld", tools);
    recent = ms->tool_changes > 0 &&
        ui->model.now_ms - ms->tools_changed_at < 60000;
    table_cell(cells, TABLE_COL_TOOLS, recent ? UI_ROLE_WARNING : UI_ROLE_NORMAL,
        buf);
}

/* The LAST FAILURE and HTTP texts of server s: the current failure with
 * its streak ("timeout x12"), or an old one; "502 bad gateway". merge (the
 * HTTP column gave way): an http_status failure is named by its status
 * and reason instead ("502 bad gateway x12"). NULL when nothing failed, or
 * the server is not monitored now (its last failure is history: the detail
 * pane has it); *current says which. */
static const struct failure *
table_failure_text(const struct ui *ui, const struct server *s, char *kind,
    size_t nkind, char *http, size_t nhttp, bool *current, bool merge)
{
    const struct failure *cur = model_current_failure(s);
    const char           *op = NULL;
    const struct failure *f = cur != NULL ? cur :
        server_last_failure(s, &op);
    char                  streak[32];
    const char           *name;
    /* An ending's failure is marked as such: it is not the server's. */
    const char           *mark;

    if (cur != NULL)
        server_last_failure(s, &op);
    mark = op != NULL && strcmp(op, "delete") == 0 ? "ending: " : "";
    *current = cur != NULL;
    if (f == NULL || !model_monitored(s))
        return NULL;
    fmt_http(http, nhttp, f->http_status, f->reason);
    if (merge && f->kind == FAILURE_HTTP_STATUS && http[0] != '\0')
        name = http;
    else
        name = failure_kind_name(f->kind);
    if (cur != NULL && model_fail_streak(s, NULL) > 1) {
        fmt_failing(ui, streak, sizeof(streak), s);
        snprintf(kind, nkind, "%s%s %s", mark, name, streak);
    } else {
        snprintf(kind, nkind, "%s%s", mark, name);
    }
    return f;
}

/* The failure cells: the current failure (warning, with its streak) or
 * an old one (dim: later exchanges completed). */
static void
table_failure(const struct ui *ui, struct table_cells *cells,
    const struct server *s, bool merge)
{
    char                  kind[96], http[64];
    bool                  cur;
    const struct failure *f = table_failure_text(ui, s, kind, sizeof(kind),
        http, sizeof(http), &cur, merge);

    if (f == NULL) {
        table_cell(cells, TABLE_COL_FAILURE, UI_ROLE_DIM, "");
        table_cell(cells, TABLE_COL_DELIVERED, UI_ROLE_DIM, "");
        table_cell(cells, TABLE_COL_HTTP, UI_ROLE_DIM, "");
        return;
    }
    table_cell(cells, TABLE_COL_FAILURE, cur ? UI_ROLE_WARNING : UI_ROLE_DIM, kind);
    table_cell(cells, TABLE_COL_DELIVERED, cur ?
        fmt_delivered_role(f->delivered) : UI_ROLE_DIM,
        delivered_name(f->delivered));
    table_cell(cells, TABLE_COL_HTTP, fmt_reason_role(f->reason, cur), http);
}

/* What the rows on screen ask of the columns whose width follows their
 * content: the failure with its streak, the status with its reason (in
 * the failure when merge). */
static void
table_want(const struct ui *ui, size_t rows, int *want, bool merge)
{
    const struct model *m = &ui->model;

    memset(want, 0, sizeof(*want) * TABLE_COL__COUNT);
    want[TABLE_COL_NAME] = m->longest_name;
    for (size_t p = m->top; p < m->nvis && p < m->top + rows; p++) {
        const struct server *s;
        char                 kind[96], http[64];
        bool                 cur;
        int                  w;

        if (m->order[p] >= m->n)
            continue;           /* a group's header */
        s = fleet_server(ui->fleet, m->order[p]);
        if (table_failure_text(ui, s, kind, sizeof(kind), http, sizeof(http),
            &cur, merge) == NULL)
            continue;
        w = ui_text_cols(kind, strlen(kind));
        if (w > want[TABLE_COL_FAILURE])
            want[TABLE_COL_FAILURE] = w;
        w = ui_text_cols(http, strlen(http));
        if (w > want[TABLE_COL_HTTP])
            want[TABLE_COL_HTTP] = w;
    }
}

/* A row's cells onto the line, in the layout's order (HISTORY is the
 * strip, TREND the round trips' bars). */
static void
table_emit(const struct ui *ui, struct ui_line *l,
    const struct table_layout *lay, const struct table_cells *cells,
    const struct server *s, bool watched)
{
    for (int i = 0; i < lay->norder; i++) {
        enum table_col c = (enum table_col)lay->order[i];

        if (c == TABLE_COL_HISTORY)
            table_strip(ui, l, lay, s);
        else if (c == TABLE_COL_TREND)
            table_trend(ui, l, lay, s, watched);
        else
            table_cell_now(ui, l, lay, c, cells->role[c], cells->text[c]);
    }
}

/* Format server s as one table row. */
static void
table_row(const struct ui *ui, struct ui_line *l,
    const struct table_layout *lay, const struct server *s, size_t idx,
    bool selected)
{
    const struct liveness     *live = server_liveness(s);
    struct mcp_session_info si;
    bool                       marked = ui->model.marked[idx];
    bool                       failing = model_current_failure(s) != NULL;
    double                     rtt = model_rtt(s);
    int64_t                    since = 0;
    struct health              h = server_health(s, &since);
    bool                       watched = health_monitored(h.state);
    const struct config_server *d = server_decl(s);
    struct table_cells         cellv, *cells = &cellv;
    char                       buf[160];

    /* Not monitored now: dim throughout, and no observation shown. */
    ui_line_reset(l, watched ? UI_ROLE_NORMAL : UI_ROLE_DIM);
    /* The selection and the mark show as glyphs too, not only as
     * colour or reverse video. */
    snprintf(buf, sizeof(buf), "%s%s", selected ? ui->g.cursor : " ",
        marked ? ui->g.mark : " ");
    table_cell(cells, TABLE_COL_MARK, marked ? UI_ROLE_MARKED : UI_ROLE_NORMAL, buf);
    fmt_name(buf, sizeof(buf), s);
    table_cell(cells, TABLE_COL_NAME, marked ? UI_ROLE_MARKED : UI_ROLE_NORMAL, buf);
    table_cell(cells, TABLE_COL_TRANSPORT, UI_ROLE_NORMAL,
        server_transport_name(s));
    fmt_health(ui, buf, sizeof(buf), h.state);
    table_cell(cells, TABLE_COL_HEALTH, fmt_health_role(h.state), buf);
    buf[0] = '\0';
    if (watched)
        fmt_liveness(ui, buf, sizeof(buf), live);
    table_cell(cells, TABLE_COL_LIVENESS, fmt_live_role(live), buf);
    /* AGE: of the observation; when not monitored, of the verdict (how
     * long it has been paused, stopped, disabled). */
    buf[0] = '\0';
    if (!watched && since > 0)
        fmt_age(buf, sizeof(buf), ui->model.now_ms - since);
    else if (watched && live->present)
        fmt_age(buf, sizeof(buf), ui->model.now_ms - live->observed_at);
    table_cell(cells, TABLE_COL_AGE, UI_ROLE_DIM, buf);
    buf[0] = '\0';
    if (watched && live->present)
        snprintf(buf, sizeof(buf), "%lu", server_streak(s));
    table_cell(cells, TABLE_COL_STREAK, UI_ROLE_DIM, buf);
    table_session(ui, cells, s, failing);
    server_session(s, &si);
    table_cell(cells, TABLE_COL_PROTO, UI_ROLE_DIM,
        si.open && si.protocol_version != NULL ? si.protocol_version : "");
    table_tools(ui, cells, s, idx);
    buf[0] = '\0';
    if (rtt >= 0)
        snprintf(buf, sizeof(buf), rtt < 10 ? "%.1f" : "%.0f", rtt);
    table_cell(cells, TABLE_COL_RTT, UI_ROLE_NORMAL, buf);
    table_failure(ui, cells, s, lay->merge);
    buf[0] = '\0';
    for (size_t t = 0; d != NULL && t < d->ntags; t++) {
        size_t off = strlen(buf);

        snprintf(buf + off, sizeof(buf) - off, "%s%s", t > 0 ? "," : "",
            d->tags[t]);
    }
    {
        char tags[160];

        str_sanitize(tags, sizeof(tags), buf, strlen(buf));
        table_cell(cells, TABLE_COL_TAGS, UI_ROLE_DIM, tags);
    }
    table_cell(cells, TABLE_COL_SOURCE, UI_ROLE_DIM, server_is_tap(s) ?
        "tap" : "dial");
    table_emit(ui, l, lay, cells, s, watched);
}

/* A group's header row (issue 34): the fold, the grouping and the
 * group's name, how many servers, the worst health among them. */
static void
table_group_row(const struct ui *ui, struct ui_line *l,
    const struct table_layout *lay, const struct model_group_row *g,
    bool selected)
{
    char buf[160];

    ui_line_reset(l, UI_ROLE_HEADER);
    table_cell_now(ui, l, lay, TABLE_COL_MARK, UI_ROLE_NORMAL,
        selected ? ui->g.cursor : " ");
    ui_line_pad(l, UI_ROLE_HEADER, lay->x[TABLE_COL_NAME]);
    ui_line_addf(l, UI_ROLE_HEADER, "%s %s: ", g->folded ?
        (ui->utf8 ? "\xe2\x96\xb6" : "+") : (ui->utf8 ? "\xe2\x96\xbc" : "-"),
        model_group_name(ui->model.group));
    ui_line_add(l, UI_ROLE_HEADER, g->name);
    ui_line_addf(l, UI_ROLE_HEADER, "  %s %zu server%s %s worst ",
        ui->g.sep, g->count, g->count == 1 ? "" : "s", ui->g.sep);
    fmt_health(ui, buf, sizeof(buf), g->worst);
    ui_line_add(l, fmt_health_role(g->worst), buf);
}

/* The column titles, in the layout's order; the sorted one carries the
 * sort's direction. */
static void
table_titles(const struct ui *ui, struct ui_line *l,
    const struct table_layout *lay)
{
    const struct model *m = &ui->model;

    ui_line_reset(l, UI_ROLE_HEADER);
    for (int i = 0; i < lay->norder; i++) {
        int  c = lay->order[i];
        char title[32];

        if (table_cols[c].sort >= 0 && table_cols[c].sort == (int)m->sort) {
            const char *arrow = m->invert ? ui->g.sort_up : ui->g.sort_down;
            int         room = lay->width[c] - 1;
            int         tw = (int)strlen(table_cols[c].title);

            /* The arrow after the title, over its last letter if need
             * be. */
            snprintf(title, sizeof(title), "%.*s%s", tw < room ? tw : room,
                table_cols[c].title, arrow);
        } else if (c == TABLE_COL_TREND && lay->trend_scale > 0) {
            char scale[16];

            trend_scale_text(scale, sizeof(scale), lay->trend_scale);
            snprintf(title, sizeof(title), "%s%s%s", table_cols[c].title,
                ui->utf8 ? " \xe2\x89\xa4" : "<=", scale);    /* ≤ */
            if (ui_text_cols(title, strlen(title)) > lay->width[c])
                /* Narrow: the scale is what matters ("≤500ms"). */
                snprintf(title, sizeof(title), "%s%s", ui->utf8 ?
                    "\xe2\x89\xa4" : "<=", scale);
        } else {
            snprintf(title, sizeof(title), "%s", table_cols[c].title);
        }
        table_cell_now(ui, l, lay, (enum table_col)c, UI_ROLE_HEADER, title);
    }
}

/* The table alone, rows screen rows from row y (its titles first). */
static void
view_table_draw(struct ui *ui, int y, int rows)
{
    struct model       *m = &ui->model;
    struct table_layout lay;
    struct ui_line      l;
    int                 want[TABLE_COL__COUNT];

    ui->table_y = y + 1;
    ui->table_rows = rows > 1 ? rows - 1 : 0;
    if (rows <= 0)
        return;
    model_scroll(m, (size_t)ui->table_rows);
    table_want(ui, (size_t)ui->table_rows, want, false);
    table_layout(&lay, ui, want, false);
    if (!lay.on[TABLE_COL_HTTP]) {
        /* HTTP gave way: its status moves into LAST FAILURE. */
        table_want(ui, (size_t)ui->table_rows, want, true);
        table_layout(&lay, ui, want, true);
    }
    if (lay.on[TABLE_COL_TREND])
        lay.trend_scale = table_trend_scale(ui, (size_t)ui->table_rows,
            lay.width[TABLE_COL_TREND]);
    table_last = lay;
    table_titles(ui, &l, &lay);
    screen_line(y, &l, ui->cols, false);
    if (ui->table_rows == 0)
        return;
    if (m->nvis == 0) {
        ui_line_reset(&l, UI_ROLE_DIM);
        if (m->filter[0] != '\0')
            ui_line_addf(&l, UI_ROLE_DIM, "  no server matches \"%s\" "
                "(Esc clears the filter)", m->filter);
        else
            ui_line_add(&l, UI_ROLE_DIM, "  no servers in the config");
        screen_line(y + 1, &l, ui->cols, false);
        return;
    }
    for (int r = 0; r < ui->table_rows; r++) {
        size_t pos = m->top + (size_t)r;
        size_t idx;

        if (pos >= m->nvis)
            break;
        idx = m->order[pos];
        if (model_header(m, idx) != NULL) {
            table_group_row(ui, &l, &lay, model_header(m, idx),
                pos == m->sel_pos);
            screen_line(y + 1 + r, &l, ui->cols, pos == m->sel_pos);
            continue;
        }
        table_row(ui, &l, &lay, fleet_server(ui->fleet, idx), idx,
            pos == m->sel_pos);
        screen_line(y + 1 + r, &l, ui->cols, pos == m->sel_pos);
    }
}

/* A click on the column titles at x: sort by that column. true if so. */
static bool
view_table_title_click(struct ui *ui, int x)
{
    for (int c = 0; c < TABLE_COL__COUNT; c++) {
        if (!table_last.on[c] || table_cols[c].sort < 0)
            continue;
        if (x >= table_last.x[c] && x <= table_last.x[c] +
            table_last.width[c]) {
            model_set_sort(&ui->model, (enum model_sort)table_cols[c].sort);
            return true;
        }
    }
    return false;
}

/* The selection's keys: move, page, first, last, mark. */
static bool
view_table_move_key(struct ui *ui, enum ui_action a)
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
    default:
        return false;
    }
    ui->detail_scroll = 0;
    return true;
}

/*
 * The table's mode: the table, and under it the detail pane of the
 * selected server when it is open (the pane alone on a short screen).
 */
static void
view_table_mode_draw(struct ui *ui, int y, int rows)
{
    if (!ui->detail) {
        view_table_draw(ui, y, rows);
    } else if (rows < 8) {
        view_detail_draw(ui, y, rows);
    } else {
        int trows = rows / 2;

        view_table_draw(ui, y, trows);
        view_detail_draw(ui, y + trows, rows - trows);
    }
}

/* Its keys: the detail pane's (when open), the selection's, Enter (fold
 * a group's header, else open or close the detail), Esc (clear the
 * filter, else close the detail), Tab (the incident line's focus). */
static bool
view_table_key(struct ui *ui, enum ui_action a, int ch)
{
    struct model *m = &ui->model;

    (void)ch;
    if (ui->detail && view_detail_key(ui, a))
        return true;
    if (view_table_move_key(ui, a))
        return true;
    switch (a) {
    case UI_ACT_DETAIL:
        if (model_group_toggle(m))
            break;      /* Enter on a group's header folds it */
        ui->detail = !ui->detail;
        ui->detail_scroll = 0;
        break;
    case UI_ACT_CANCEL:
        if (m->filter[0] != '\0') {
            ui->input[0] = '\0';
            model_set_filter(m, "");
        } else if (ui->detail) {
            ui->detail = false;
        }
        break;
    case UI_ACT_INCIDENTS:
        if (view_incident_count(ui) == 0) {
            ui_message(ui, UI_ROLE_DIM, "no incidents to pick");
            break;
        }
        ui->incident_focus = true;
        ui->incident_sel = 0;
        break;
    default:
        return false;
    }
    return true;
}

/* A click: on an incident, as Enter on it; on the column titles, sort by
 * that column; on a row, select it. */
static void
view_table_click(struct ui *ui, const struct screen_click *click)
{
    long incident = view_incident_at(ui, click->y, click->x);

    if (incident >= 0) {
        view_incident_apply(ui, (size_t)incident);
        return;
    }
    if (click->y == ui->table_y - 1 && ui->table_rows > 0) {
        if (view_table_title_click(ui, click->x))
            tui_key_sort_message(ui);
        return;
    }
    if (click->y >= ui->table_y && click->y < ui->table_y + ui->table_rows) {
        size_t pos = ui->model.top + (size_t)(click->y - ui->table_y);

        if (pos < ui->model.nvis)
            model_goto(&ui->model, pos);
    }
}

/* The keys that apply: the incident line's while it has the focus. */
static void
view_table_hint(struct ui *ui, struct ui_line *l)
{
    if (ui->incident_focus) {
        ui_line_add(l, UI_ROLE_DIM, "incidents: Left/Right or Tab/Shift-Tab "
            "move  Enter filter on it (+N more: group by cause)  Esc back");
        return;
    }
    ui_line_add(l, UI_ROLE_DIM, "q quit  ? help  : command  / filter  "
        "s/I sort  ");
    if (model_header(&ui->model, ui->model.sel) != NULL)
        ui_line_add(l, UI_ROLE_DIM, "Enter fold  ");
    else
        ui_line_add(l, UI_ROLE_DIM, ui->detail ? "Enter close  J/K scroll  " :
            "Enter detail  ");
    ui_line_add(l, UI_ROLE_DIM, "space mark  x end  ");
    if (ui->model.nmarked > 0)
        ui_line_add(l, UI_ROLE_DIM, "X end marked  ");
    ui_line_add(l, UI_ROLE_DIM, "r redial  p ping  e endings  l log  o procs  "
        "b group  c columns  t theme  m mouse");
    if (ui->model.filter[0] != '\0')
        ui_line_add(l, UI_ROLE_DIM, "  Esc clear filter");
}

const struct ui_view view_table_mode = {
    .draw = view_table_mode_draw,
    .key = view_table_key,
    .click = view_table_click,
    .hint = view_table_hint,
};
