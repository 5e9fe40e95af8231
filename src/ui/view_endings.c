/*
 * The endings pane (e): every ending of every server, newest first, with
 * its outcome, HTTP status or exit, duration and settlement ("settled +12
 * ms" or "settling..."). Scrolls with Up/Down and PgUp/PgDn; e or Esc
 * goes back to the table. The TUI's commands (x, r, s...) still act on the
 * table's selection beneath it.
 */
#include <stdlib.h>

#include "engine/server.h"
#include "ui/screen.h"
#include "ui/ui.h"
#include "util/xmalloc.h"

static int
endings_cmp(const void *a, const void *b)
{
    const struct ending *x = *(const struct ending *const *)a;
    const struct ending *y = *(const struct ending *const *)b;

    if (x->started_at != y->started_at)
        return x->started_at > y->started_at ? -1 : 1;
    return 0;
}

/* It comes on screen at its top. */
static void
view_endings_open(struct ui *ui)
{
    ui->endings_scroll = 0;
}

static void
view_endings_draw(struct ui *ui, int y, int rows)
{
    struct ui_out         o = { .ui = ui, .y = y + 1, .rows = rows - 1 };
    struct ui_line        l;
    const struct ending **v = NULL;
    size_t                n = 0, cap = 0;
    size_t                busy = ui->model.counts.ending;

    if (rows <= 0)
        return;
    for (size_t i = 0; i < fleet_size(ui->fleet); i++) {
        const struct server *s = fleet_server(ui->fleet, i);
        size_t               ne = server_ending_count(s);

        for (size_t k = 0; k < ne; k++) {
            const struct ending *e = server_ending(s, k);

            if (e == NULL)
                continue;
            if (n == cap) {
                cap = cap == 0 ? 64 : cap * 2;
                v = xrealloc(v, cap * sizeof(*v));
            }
            v[n++] = e;
        }
    }
    if (n > 1)
        qsort(v, n, sizeof(*v), endings_cmp);    /* v is NULL when n is 0 */
    ui_line_reset(&l, UI_ROLE_NORMAL);
    ui_line_addf(&l, UI_ROLE_HEADER, "ENDINGS %zu", n);
    ui_line_addf(&l, busy > 0 ? UI_ROLE_WARNING : UI_ROLE_DIM, "  %s %zu under way",
        ui->g.sep, busy);
    ui_line_add(&l, UI_ROLE_DIM, "  (e or Esc: back to the table)");
    screen_line(y, &l, ui->cols, false);
    if (rows < 2)
        goto out;
    ui_line_reset(&l, UI_ROLE_HEADER);
    ui_line_add(&l, UI_ROLE_HEADER, "STARTED  ");
    ui_line_cell(&l, UI_ROLE_HEADER, "SERVER", 16, false, ui->utf8);
    ui_line_add(&l, UI_ROLE_HEADER, " ");
    ui_line_cell(&l, UI_ROLE_HEADER, "OUTCOME", 12, false, ui->utf8);
    ui_line_add(&l, UI_ROLE_HEADER, " ");
    ui_line_cell(&l, UI_ROLE_HEADER, "STATUS", 9, false, ui->utf8);
    ui_line_add(&l, UI_ROLE_HEADER, " ");
    ui_line_cell(&l, UI_ROLE_HEADER, "DURATION", 9, true, ui->utf8);
    ui_line_add(&l, UI_ROLE_HEADER, "  SETTLEMENT");
    screen_line(y + 1, &l, ui->cols, false);
    o.y = y + 2;
    o.rows = rows - 2;
    if (ui->endings_scroll > (int)n - 1)
        ui->endings_scroll = n > 0 ? (int)n - 1 : 0;
    o.skip = ui->endings_scroll;
    if (n == 0) {
        ui_line_reset(&l, UI_ROLE_DIM);
        ui_line_add(&l, UI_ROLE_DIM, "  no endings yet (x ends the selected "
            "server's session, X the marked ones)");
        ui_out_line(&o, &l);
    }
    for (size_t i = 0; i < n; i++) {
        fmt_ending(ui, &l, v[i], true);
        ui_out_line(&o, &l);
    }
out:
    free(v);
}

static bool
view_endings_key(struct ui *ui, enum ui_action a, int ch)
{
    int page = ui->rows > 8 ? ui->rows - 8 : 1;

    (void)ch;
    switch (a) {
    case UI_ACT_UP:
    case UI_ACT_DETAIL_UP:
        ui->endings_scroll -= 1;
        break;
    case UI_ACT_DOWN:
    case UI_ACT_DETAIL_DOWN:
        ui->endings_scroll += 1;
        break;
    case UI_ACT_PAGE_UP:
        ui->endings_scroll -= page;
        break;
    case UI_ACT_PAGE_DOWN:
        ui->endings_scroll += page;
        break;
    case UI_ACT_HOME:
        ui->endings_scroll = 0;
        break;
    case UI_ACT_END:
        ui->endings_scroll = 1 << 20;
        break;
    case UI_ACT_ENDINGS:
    case UI_ACT_CANCEL:
        ui->view = &view_table_mode;
        break;
    default:
        return false;
    }
    if (ui->endings_scroll < 0)
        ui->endings_scroll = 0;
    return true;
}

static void
view_endings_hint(struct ui *ui, struct ui_line *l)
{
    (void)ui;
    ui_line_add(l, UI_ROLE_DIM, "e/Esc back  Up/Down scroll  ? help  q quit");
}

const struct ui_view view_endings_mode = {
    .open = view_endings_open,
    .draw = view_endings_draw,
    .key = view_endings_key,
    .hint = view_endings_hint,
};
