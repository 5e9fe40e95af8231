/*
 * The column chooser (issue 34; c or F2 as in htop's setup, or :columns
 * alone): every column of the table, [x] shown or [ ] hidden, in the
 * order they are drawn. Space shows or hides the selected one, + and -
 * (or Shift-Up and Shift-Down) move it, Enter applies, Esc cancels. NAME
 * and HEALTH cannot be hidden, and NAME stays first. The list is the
 * table's own (view_table_column_word), so a new column shows up here by
 * itself. Hidden columns stay hidden at every width; among the shown
 * ones, the narrow-terminal order of giving way still applies.
 */
#include <stdio.h>
#include <string.h>

#include "ui/screen.h"
#include "ui/ui.h"

/* The chooser over the mode it goes back to: the shown columns first,
 * in their order, then the hidden ones. */
static void
view_columns_open(struct ui *ui)
{
    struct ui_chooser *ch = &ui->chooser;
    int                shown[UI_COLUMNS_MAX];
    size_t             ns = view_table_columns(ui, shown);
    size_t             total = view_table_ncolumns();

    memset(ch, 0, sizeof(*ch));
    for (size_t i = 0; i < ns && ch->n < UI_COLUMNS_MAX; i++) {
        ch->col[ch->n] = shown[i];
        ch->on[ch->n++] = true;
    }
    for (size_t c = 1; c < total && ch->n < UI_COLUMNS_MAX; c++) {
        bool is_shown = false;

        for (size_t i = 0; i < ns; i++)
            is_shown = is_shown || shown[i] == (int)c;
        if (is_shown)
            continue;
        ch->col[ch->n] = (int)c;
        ch->on[ch->n++] = false;
    }
    ch->back = ui->view == &view_columns_mode ? &view_table_mode : ui->view;
}

static void
view_columns_draw(struct ui *ui, int y, int rows)
{
    const struct ui_chooser *ch = &ui->chooser;
    struct ui_line           l;
    int                      list = rows - 1, skip = 0;

    if (rows <= 0)
        return;
    ui_line_reset(&l, UI_ROLE_HEADER);
    ui_line_add(&l, UI_ROLE_HEADER, "COLUMNS  Space shows/hides, + - move, "
        "Enter applies, Esc cancels");
    screen_line(y, &l, ui->cols, false);
    if (list <= 0)
        return;
    if ((int)ch->sel >= list)
        skip = (int)ch->sel - list + 1;
    for (int r = 0; r < list; r++) {
        size_t i = (size_t)(r + skip);
        char   buf[96];
        bool   sel = i == ch->sel;

        if (i >= ch->n)
            break;
        ui_line_reset(&l, ch->on[i] ? UI_ROLE_NORMAL : UI_ROLE_DIM);
        snprintf(buf, sizeof(buf), "%s [%s] %-10s %-13s%s",
            sel ? ui->g.cursor : " ", ch->on[i] ? "x" : " ",
            view_table_column_word(ch->col[i]),
            view_table_column_title(ch->col[i]),
            view_table_column_fixed(ch->col[i]) ? "always shown" : "");
        ui_line_add(&l, l.base, buf);
        screen_line(y + 1 + r, &l, ui->cols, sel);
    }
}

/* Swap the selected entry with its neighbour (up: the one above). NAME
 * stays first. */
static void
view_columns_move(struct ui_chooser *ch, bool up)
{
    size_t a = ch->sel, b;
    int    col;
    bool   on;

    if (up ? a == 0 : a + 1 >= ch->n)
        return;
    b = up ? a - 1 : a + 1;
    if (view_table_column_of("name", 4) == ch->col[a] ||
        view_table_column_of("name", 4) == ch->col[b])
        return;
    col = ch->col[a];
    on = ch->on[a];
    ch->col[a] = ch->col[b];
    ch->on[a] = ch->on[b];
    ch->col[b] = col;
    ch->on[b] = on;
    ch->sel = b;
}

/* A raw key (every key is the chooser's while it is open): Space shows
 * or hides, + - or Shift-Up / Shift-Down move, Enter applies, Esc (q, c)
 * cancels. */
static bool
view_columns_key(struct ui *ui, enum ui_action a, int key)
{
    struct ui_chooser *ch = &ui->chooser;

    if (a == UI_ACT_UP) {
        if (ch->sel > 0)
            ch->sel--;
    } else if (a == UI_ACT_DOWN) {
        if (ch->sel + 1 < ch->n)
            ch->sel++;
    } else if (a == UI_ACT_HOME) {
        ch->sel = 0;
    } else if (a == UI_ACT_END) {
        ch->sel = ch->n > 0 ? ch->n - 1 : 0;
    } else if (key == ' ') {
        if (ch->sel >= ch->n)
            return true;
        if (view_table_column_fixed(ch->col[ch->sel])) {
            ui_message(ui, UI_ROLE_WARNING, "%s is always shown",
                view_table_column_word(ch->col[ch->sel]));
            return true;
        }
        ch->on[ch->sel] = !ch->on[ch->sel];
    } else if (keys_move(key) != 0) {
        view_columns_move(ch, keys_move(key) < 0);
    } else if (keys_is_enter(key)) {
        int    cols[UI_COLUMNS_MAX];
        size_t n = 0;
        char   text[256];

        for (size_t i = 0; i < ch->n; i++) {
            if (ch->on[i])
                cols[n++] = ch->col[i];
        }
        view_table_set_columns(ui, cols, n);
        ui->view = ch->back;
        view_table_columns_text(ui, text, sizeof(text));
        ui_message(ui, UI_ROLE_NORMAL, "columns (:view save NAME keeps "
            "them): %s", text);
    } else if (a == UI_ACT_CANCEL || a == UI_ACT_QUIT ||
        a == UI_ACT_COLUMNS) {
        ui->view = ch->back;
        ui_message(ui, UI_ROLE_DIM, "columns unchanged");
    }
    return true;
}

static void
view_columns_hint(struct ui *ui, struct ui_line *l)
{
    (void)ui;
    ui_line_add(l, UI_ROLE_DIM, "Space show/hide  +/- move  Enter apply  "
        "Esc cancel");
}

const struct ui_view view_columns_mode = {
    .open = view_columns_open,
    .draw = view_columns_draw,
    .key = view_columns_key,
    .hint = view_columns_hint,
    .keys = UI_VIEW_KEYS_RAW,
};
