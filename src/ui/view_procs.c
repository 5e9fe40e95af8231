/*
 * The process view (o), as htop's tree: the stdio children mcptop spawned,
 * each with its own descendants (npx -> sh -> node), with pid, pgid,
 * state, RSS, CPU% (utime + stime between two walks, against the clock
 * tick), uptime, respawns and the server's name; below them the orphans:
 * processes of our own uid whose command line matches a configured stdio
 * server's (fleet_procs_match) and that are not mcptop's or its
 * descendants, typically re-parented to init after an agent crashed. K on
 * an orphan's row ends it after a y (TERM, then KILL at the server's
 * teardown deadline; proc_end). /proc is walked at most once a second,
 * while the view is shown; each walk is O(n) in processes (O(n x servers)
 * for the matching).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/fleet.h"
#include "engine/proc.h"
#include "engine/server.h"
#include "ui/screen.h"
#include "ui/ui.h"
#include "util/xmalloc.h"

#define PROCS_REFRESH_S 1.0
/* Rows kept per walk (children, their descendants, orphans). */
#define PROCS_ROWS_MAX 2000
#define PROCS_DEPTH_MAX 8

enum procs_kind {
    PROCS_KIND_CHILD,           /* mcptop's, or a descendant */
    PROCS_KIND_ORPHAN,          /* a matching process not ours, or one of
                                   its descendants */
};

struct procs_row {
    enum procs_kind kind;
    int             depth;
    bool            top;        /* the child or orphan itself */
    struct proc_id  id;
    pid_t           pgid, ppid;
    char            state;
    long            rss_kb;
    double          cpu;        /* percent; < 0: not known yet */
    double          age_s;
    long            spawns;     /* -1: not a child row */
    long            teardown_ms;
    char            server[64];
    char            cmd[512];
};

struct procs {
    const struct fleet *fleet;      /* the walk's, set by procs_scan */
    struct proc_table  cur, prev;
    ev_tstamp          cur_at, prev_at;
    bool               scanned;
    int                scan_errno;
    struct procs_row  *rows;
    size_t             n, cap;
    size_t             nchildren, norphans;
    size_t             sel;
    size_t             top;
    struct proc_ending *ending;
    struct procs_row   confirm;
};

static struct procs *
procs_get(struct ui *ui)
{
    if (ui->procs == NULL)
        ui->procs = xcalloc(1, sizeof(*ui->procs));
    return ui->procs;
}

void
view_procs_free(struct ui *ui)
{
    struct procs *p = ui->procs;

    if (p == NULL)
        return;
    proc_ending_free(p->ending);
    proc_table_done(&p->cur);
    proc_table_done(&p->prev);
    free(p->rows);
    free(p);
    ui->procs = NULL;
}

static struct procs_row *
procs_add(struct procs *p)
{
    if (p->n == p->cap) {
        p->cap = p->cap == 0 ? 64 : p->cap * 2;
        p->rows = xrealloc(p->rows, p->cap * sizeof(*p->rows));
    }
    memset(&p->rows[p->n], 0, sizeof(p->rows[p->n]));
    return &p->rows[p->n++];
}

/* CPU% of e since the previous walk (the same pid and start time). */
static double
procs_cpu(const struct procs *p, const struct proc_entry *e)
{
    const struct proc_entry *o;
    double                   dt = p->cur_at - p->prev_at;

    if (p->prev.n == 0 || dt <= 0.05)
        return -1.0;
    o = proc_table_find(&p->prev, e->st.pid);
    if (o == NULL || o->st.start != e->st.start || e->st.ticks < o->st.ticks)
        return -1.0;
    return (double)(e->st.ticks - o->st.ticks) / (double)p->cur.clk_tck /
        dt * 100.0;
}

/* One row for e (its details read), then its descendants, depth-first. */
static void
procs_tree(struct procs *p, struct proc_entry *e, enum procs_kind kind,
    int depth, const char *server, long spawns, long teardown_ms)
{
    struct proc_table *t = &p->cur;
    struct procs_row  *r;

    if (p->n >= PROCS_ROWS_MAX || e->mark == 4)
        return;
    e->mark = 4;                /* shown */
    fleet_procs_details(p->fleet, t, e);
    r = procs_add(p);
    r->kind = kind;
    r->depth = depth;
    r->top = depth == 0;
    r->id.pid = e->st.pid;
    r->id.start = e->st.start;
    r->id.uid = e->uid;
    r->pgid = e->st.pgid;
    r->ppid = e->st.ppid;
    r->state = e->st.state;
    r->rss_kb = e->st.rss_pages * t->page_kb;
    r->cpu = procs_cpu(p, e);
    r->age_s = t->uptime_s - (double)e->st.start / (double)t->clk_tck;
    r->spawns = depth == 0 ? spawns : -1;
    r->teardown_ms = teardown_ms;
    snprintf(r->server, sizeof(r->server), "%s", depth == 0 ? server : "");
    snprintf(r->cmd, sizeof(r->cmd), "%s", e->cmdline != NULL &&
        e->cmdline[0] != '\0' ? e->cmdline : e->st.comm);
    if (depth >= PROCS_DEPTH_MAX)
        return;
    for (size_t c = e->child; c != SIZE_MAX; c = t->v[c].next)
        procs_tree(p, &t->v[c], kind, depth + 1, server, spawns,
            teardown_ms);
}

/* Mark e and every descendant with m (iteratively: a deep chain does not
 * grow the stack). */
static void
procs_mark_subtree(struct proc_table *t, struct proc_entry *root, int m)
{
    size_t i = (size_t)(root - t->v);

    root->mark = m;
    if (root->child == SIZE_MAX)
        return;
    i = root->child;
    while (i != SIZE_MAX) {
        struct proc_entry *e = &t->v[i];

        e->mark = m;
        if (e->child != SIZE_MAX) {
            i = e->child;
            continue;
        }
        /* Up until a next sibling, never above root. */
        while (i != SIZE_MAX && &t->v[i] != root && t->v[i].next == SIZE_MAX)
            i = t->v[i].parent;
        if (i == SIZE_MAX || &t->v[i] == root)
            break;
        i = t->v[i].next;
    }
}

/* The walk, and the rows from it. */
static void
procs_scan(struct ui *ui, struct procs *p)
{
    struct proc_table *t;
    struct proc_entry *self;
    uid_t              uid = getuid();
    pid_t              mine = getpid();
    size_t             nsrv = fleet_size(ui->fleet);
    int               *match;
    char               name[64];
    struct proc_id     kept = { 0 };
    bool               keep = false;

    /* The walk before is kept for CPU% unless it is too recent to
     * measure against (a walk again at once, after K). */
    if (ev_now(ui->loop) - p->cur_at >= 0.5 || p->prev.n == 0) {
        proc_table_done(&p->prev);
        p->prev = p->cur;
        p->prev_at = p->cur_at;
    } else {
        proc_table_done(&p->cur);
    }
    memset(&p->cur, 0, sizeof(p->cur));
    p->cur_at = ev_now(ui->loop);
    p->scanned = true;
    p->fleet = ui->fleet;
    /* The selection follows its process, as htop's does: a row gone above
     * it must not move the highlight (and K) onto the next process. */
    if (p->sel < p->n) {
        kept = p->rows[p->sel].id;
        keep = true;
    }
    p->n = p->nchildren = p->norphans = 0;
    t = &p->cur;
    p->scan_errno = fleet_procs_walk(ui->fleet, t) != 0 ? errno : 0;
    self = proc_table_find(t, mine);
    if (self != NULL)
        procs_mark_subtree(t, self, 2);     /* ours */
    /* The children, in the fleet's order. */
    for (size_t i = 0; i < nsrv; i++) {
        struct server     *s = fleet_server(ui->fleet, i);
        long               pid = server_pid(s);
        struct proc_entry *e;

        if (pid <= 0 || !fleet_procs_spawns(s))
            continue;
        e = proc_table_find(t, (pid_t)pid);
        if (e == NULL || e->mark == 4)
            continue;
        fmt_name(name, sizeof(name), s);
        procs_tree(p, e, PROCS_KIND_CHILD, 0, name,
            (long)server_spawns(s), server_decl(s)->teardown_ms);
        p->nchildren++;
    }
    /* What a server left behind, adopted by mcptop (a child subreaper). */
    if (self != NULL) {
        for (size_t c = self->child; c != SIZE_MAX; c = t->v[c].next) {
            if (t->v[c].mark == 4)
                continue;
            fleet_procs_details(ui->fleet, t, &t->v[c]);
            if (t->v[c].argc == 0)
                continue;
            procs_tree(p, &t->v[c], PROCS_KIND_CHILD, 0, "(adopted)", -1, 0);
            p->nchildren++;
        }
    }
    /* The orphans: not ours, our uid, a configured command line. */
    match = xcalloc(t->n + 1, sizeof(*match));
    for (size_t k = 0; k < t->n; k++) {
        struct proc_entry *e = &t->v[k];

        match[k] = -1;
        if (e->mark != 0 || e->st.pid == mine)
            continue;
        fleet_procs_details(ui->fleet, t, e);
        if (e->uid != uid)
            continue;
        match[k] = (int)fleet_procs_match(ui->fleet, e);
    }
    for (size_t k = 0; k < t->n; k++) {
        struct proc_entry *e = &t->v[k];
        size_t             up = e->parent;
        int                steps = 0;
        bool               covered = false;

        if (match[k] < 0 || e->mark == 4)
            continue;
        /* An ancestor that matches too heads the tree (npx -> node). */
        while (up != SIZE_MAX && steps++ < 64) {
            if (match[up] >= 0) {
                covered = true;
                break;
            }
            up = t->v[up].parent;
        }
        if (covered)
            continue;
        fmt_name(name, sizeof(name), fleet_server(ui->fleet,
            (size_t)match[k]));
        procs_tree(p, e, PROCS_KIND_ORPHAN, 0, name, -1,
            server_decl(fleet_server(ui->fleet, (size_t)match[k]))->
            teardown_ms);
        p->norphans++;
    }
    free(match);
    for (size_t r = 0; keep && r < p->n; r++) {
        if (p->rows[r].id.pid == kept.pid &&
            p->rows[r].id.start == kept.start) {
            p->sel = r;
            break;
        }
    }
    if (p->n > 0 && p->sel >= p->n)
        p->sel = p->n - 1;
}

static void
procs_rss(char *buf, size_t n, long kb)
{
    if (kb < 0)
        snprintf(buf, n, "-");
    else if (kb < 10 * 1024)
        snprintf(buf, n, "%ldK", kb);
    else if (kb < 10 * 1024 * 1024)
        snprintf(buf, n, "%.1fM", (double)kb / 1024.0);
    else
        snprintf(buf, n, "%.1fG", (double)kb / (1024.0 * 1024.0));
}

/* The SERVER column: the width of a long name where there is room. */
static int
procs_server_w(const struct ui *ui)
{
    return ui->cols >= 120 ? 20 : ui->cols >= 100 ? 16 : 12;
}

static void
procs_titles(struct ui *ui, struct ui_line *l, bool orphans)
{
    ui_line_reset(l, UI_ROLE_HEADER);
    ui_line_cell(l, UI_ROLE_HEADER, "PID", 8, true, ui->utf8);
    ui_line_cell(l, UI_ROLE_HEADER, "PGID", 8, true, ui->utf8);
    ui_line_add(l, UI_ROLE_HEADER, " S");
    ui_line_cell(l, UI_ROLE_HEADER, "RSS", 8, true, ui->utf8);
    ui_line_cell(l, UI_ROLE_HEADER, "CPU%", 6, true, ui->utf8);
    ui_line_cell(l, UI_ROLE_HEADER, orphans ? "AGE" : "UPTIME", 7, true,
        ui->utf8);
    ui_line_cell(l, UI_ROLE_HEADER, orphans ? "PPID" : "RESP", 7, true,
        ui->utf8);
    ui_line_add(l, UI_ROLE_HEADER, " ");
    ui_line_cell(l, UI_ROLE_HEADER, "SERVER", procs_server_w(ui), false,
        ui->utf8);
    ui_line_add(l, UI_ROLE_HEADER, " COMMAND");
}

static void
procs_row_line(struct ui *ui, struct ui_line *l, const struct procs_row *r)
{
    char buf[64];

    ui_line_reset(l, UI_ROLE_NORMAL);
    snprintf(buf, sizeof(buf), "%d", (int)r->id.pid);
    ui_line_cell(l, r->kind == PROCS_KIND_ORPHAN && r->top ?
        UI_ROLE_WARNING : UI_ROLE_NORMAL, buf, 8, true, ui->utf8);
    snprintf(buf, sizeof(buf), "%d", (int)r->pgid);
    ui_line_cell(l, UI_ROLE_DIM, buf, 8, true, ui->utf8);
    ui_line_addf(l, r->state == 'Z' || r->state == 'D' ? UI_ROLE_WARNING :
        UI_ROLE_NORMAL, " %c", r->state);
    procs_rss(buf, sizeof(buf), r->rss_kb);
    ui_line_cell(l, UI_ROLE_NORMAL, buf, 8, true, ui->utf8);
    if (r->cpu < 0)
        snprintf(buf, sizeof(buf), "-");
    else
        snprintf(buf, sizeof(buf), "%.1f", r->cpu);
    ui_line_cell(l, UI_ROLE_NORMAL, buf, 6, true, ui->utf8);
    fmt_age(buf, sizeof(buf), (int64_t)(r->age_s * 1000.0));
    ui_line_cell(l, UI_ROLE_DIM, buf, 7, true, ui->utf8);
    if (r->kind == PROCS_KIND_ORPHAN)
        snprintf(buf, sizeof(buf), "%d", (int)r->ppid);
    else if (r->spawns > 0)
        snprintf(buf, sizeof(buf), "%ld", r->spawns - 1);
    else
        snprintf(buf, sizeof(buf), "%s", "");
    ui_line_cell(l, r->spawns > 1 ? UI_ROLE_WARNING : UI_ROLE_DIM, buf, 7,
        true, ui->utf8);
    ui_line_add(l, UI_ROLE_NORMAL, " ");
    ui_line_cell(l, UI_ROLE_NORMAL, r->server, procs_server_w(ui), false,
        ui->utf8);
    ui_line_add(l, UI_ROLE_NORMAL, " ");
    for (int d = 0; d < r->depth; d++)
        ui_line_add(l, UI_ROLE_DIM, d + 1 == r->depth ?
            (ui->utf8 ? "\xe2\x94\x94\xe2\x94\x80" : "`-") : "  ");
    ui_line_add(l, UI_ROLE_NORMAL, r->cmd);
}

static void
view_procs_draw(struct ui *ui, int y, int rows)
{
    struct procs  *p = procs_get(ui);
    struct ui_line l;
    int            end = y + rows, at;
    size_t         line_of_sel;

    if (rows <= 0)
        return;
    if (!p->scanned || ev_now(ui->loop) - p->cur_at >= PROCS_REFRESH_S - 0.05)
        procs_scan(ui, p);
    ui_line_reset(&l, UI_ROLE_NORMAL);
    ui_line_addf(&l, UI_ROLE_HEADER, "PROCESSES %zu", p->nchildren);
    ui_line_addf(&l, UI_ROLE_DIM, " stdio %s %s ",
        p->nchildren == 1 ? "child" : "children", ui->g.sep);
    ui_line_addf(&l, p->norphans > 0 ? UI_ROLE_WARNING : UI_ROLE_DIM,
        "orphans %zu", p->norphans);
    if (p->scan_errno != 0)
        ui_line_addf(&l, UI_ROLE_WARNING, " (/proc: %s)",
            strerror(p->scan_errno));
    if (p->cur.truncated)
        ui_line_addf(&l, UI_ROLE_WARNING, " (the first %d processes read)",
            PROC_SCAN_MAX);
    ui_line_add(&l, UI_ROLE_DIM, "  (o or Esc: back; K ends an orphan)");
    screen_line(y, &l, ui->cols, false);
    /* The lines: a title per section, the rows; the selection kept in
     * view (top is the first row line shown). */
    line_of_sel = p->sel;
    /* room: rows less the header, two titles, the orphans' title */
    if (rows - 5 > 0) {
        size_t room = (size_t)(rows - 5);

        if (line_of_sel < p->top)
            p->top = line_of_sel;
        else if (line_of_sel >= p->top + room)
            p->top = line_of_sel - room + 1;
    }
    at = y + 1;
    /* the children */
    if (at < end) {
        procs_titles(ui, &l, false);
        screen_line(at++, &l, ui->cols, false);
    }
    if (p->nchildren == 0 && at < end) {
        ui_line_reset(&l, UI_ROLE_DIM);
        ui_line_add(&l, UI_ROLE_DIM, "  no stdio child runs now");
        screen_line(at++, &l, ui->cols, false);
    }
    for (size_t i = p->top; i < p->n && at < end; i++) {
        const struct procs_row *r = &p->rows[i];

        if (r->kind == PROCS_KIND_ORPHAN && r->top &&
            (i == 0 || p->rows[i - 1].kind != PROCS_KIND_ORPHAN)) {
            ui_line_reset(&l, UI_ROLE_NORMAL);
            ui_line_addf(&l, UI_ROLE_HEADER, "ORPHANS %zu", p->norphans);
            ui_line_add(&l, UI_ROLE_DIM, "  our uid, a configured command "
                "line, not mcptop's: K ends the selected one");
            if (at < end)
                screen_line(at++, &l, ui->cols, false);
            procs_titles(ui, &l, true);
            if (at < end)
                screen_line(at++, &l, ui->cols, false);
        }
        if (at >= end)
            break;
        procs_row_line(ui, &l, r);
        screen_line(at++, &l, ui->cols, i == p->sel);
    }
    if (p->norphans == 0 && at < end) {
        ui_line_reset(&l, UI_ROLE_DIM);
        ui_line_add(&l, UI_ROLE_DIM, "  no orphans: no process of ours with "
            "a configured command line outside mcptop");
        screen_line(at++, &l, ui->cols, false);
    }
}

/* proc_end's report: the status line says how it went. */
static void
procs_ended_cb(void *arg, const struct proc_id *id, enum proc_end_result r,
    double ms, int err)
{
    struct ui *ui = arg;

    switch (r) {
    case PROC_END_TERM:
    case PROC_END_KILL:
        ui_message(ui, UI_ROLE_NORMAL, "pid %d ended by %s after %.0f ms",
            (int)id->pid, r == PROC_END_TERM ? "TERM" : "KILL", ms);
        break;
    case PROC_END_GONE:
        ui_message(ui, UI_ROLE_NORMAL, "pid %d was already gone",
            (int)id->pid);
        break;
    case PROC_END_FAILED:
        ui_message(ui, UI_ROLE_WARNING, "pid %d: %s", (int)id->pid,
            err != 0 ? strerror(err) : "still there after KILL");
        break;
    }
    if (ui->procs != NULL)
        ui->procs->scanned = false;     /* walk again at the next draw */
    ui_dirty(ui);
}

void
view_procs_prompt(struct ui *ui, struct ui_line *l)
{
    struct procs *p = procs_get(ui);
    size_t        n = strlen(p->confirm.cmd), fit;
    int           used;

    /* 40 columns of the command, cut between characters (a cut inside
     * one sent half a UTF-8 sequence, and the y/n after it was lost). */
    fit = ui_text_cols(p->confirm.cmd, n) > 40 ?
        ui_text_fit(p->confirm.cmd, n, 40, &used) : n;
    ui_line_addf(l, UI_ROLE_WARNING, "end orphan pid %d (%.*s%s)? y/n",
        (int)p->confirm.id.pid, (int)fit, p->confirm.cmd, fit < n ?
        ui->g.ellipsis : "");
}

void
view_procs_answer(struct ui *ui, int ch)
{
    struct procs *p = procs_get(ui);
    int           err = 0;

    ui->prompt = UI_PROMPT_NONE;
    if (ch != 'y' && ch != 'Y') {
        ui_message(ui, UI_ROLE_DIM, "pid %d not ended",
            (int)p->confirm.id.pid);
        return;
    }
    proc_ending_free(p->ending);
    p->ending = proc_end(ui->loop, &p->confirm.id, p->confirm.teardown_ms,
        procs_ended_cb, ui, &err);
    if (p->ending != NULL)
        ui_message(ui, UI_ROLE_NORMAL, "pid %d: TERM sent (KILL after %ld "
            "ms)", (int)p->confirm.id.pid, p->confirm.teardown_ms > 0 ?
            p->confirm.teardown_ms : 2000L);
    else if (err != 0)
        ui_message(ui, UI_ROLE_WARNING, "pid %d: %s", (int)p->confirm.id.pid,
            strerror(err));
    else
        ui_message(ui, UI_ROLE_NORMAL, "pid %d was already gone (or is "
            "another process now)", (int)p->confirm.id.pid);
    p->scanned = false;
}

/* Its keys: the selection, K (end the selected orphan, after the
 * END_ORPHAN prompt's y), o or Esc back to the table. */
static bool
view_procs_key(struct ui *ui, enum ui_action a, int ch)
{
    struct procs *p = procs_get(ui);
    int           page = ui->rows > 8 ? ui->rows - 8 : 1;

    if (ch == 'K') {
        const struct procs_row *r = p->sel < p->n ? &p->rows[p->sel] : NULL;

        if (r == NULL || r->kind != PROCS_KIND_ORPHAN) {
            ui_message(ui, UI_ROLE_WARNING, "K ends an orphan: select one "
                "in the ORPHANS section");
            return true;
        }
        if (r->id.uid != getuid()) {
            ui_message(ui, UI_ROLE_WARNING, "pid %d is another user's: not "
                "ended", (int)r->id.pid);
            return true;
        }
        if (proc_ending_busy(p->ending)) {
            ui_message(ui, UI_ROLE_WARNING, "an ending runs (pid %d)",
                (int)p->confirm.id.pid);
            return true;
        }
        p->confirm = *r;
        ui->prompt = UI_PROMPT_END_ORPHAN;
        return true;
    }
    switch (a) {
    case UI_ACT_UP:
        if (p->sel > 0)
            p->sel--;
        break;
    case UI_ACT_DOWN:
        if (p->sel + 1 < p->n)
            p->sel++;
        break;
    case UI_ACT_PAGE_UP:
        p->sel = p->sel > (size_t)page ? p->sel - (size_t)page : 0;
        break;
    case UI_ACT_PAGE_DOWN:
        p->sel += (size_t)page;
        if (p->n > 0 && p->sel >= p->n)
            p->sel = p->n - 1;
        break;
    case UI_ACT_HOME:
        p->sel = 0;
        break;
    case UI_ACT_END:
        p->sel = p->n > 0 ? p->n - 1 : 0;
        break;
    case UI_ACT_PROCS:
    case UI_ACT_CANCEL:
        ui->view = &view_table_mode;
        break;
    default:
        return false;
    }
    return true;
}

/* It comes on screen with a walk at its first draw, the first row
 * selected. */
static void
view_procs_open(struct ui *ui)
{
    struct procs *p = procs_get(ui);

    p->scanned = false;
    p->sel = 0;
    p->top = 0;
}

static void
view_procs_hint(struct ui *ui, struct ui_line *l)
{
    (void)ui;
    ui_line_add(l, UI_ROLE_DIM, "o/Esc back  Up/Down select  K end the "
        "selected orphan  ? help  q quit");
}

const struct ui_view view_procs_mode = {
    .open = view_procs_open,
    .draw = view_procs_draw,
    .key = view_procs_key,
    .hint = view_procs_hint,
};
