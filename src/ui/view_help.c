/*
 * The help: the key table itself (keys grouped by action, in the order of
 * the actions), then what the glyphs mean. Any key closes it.
 */
#include <string.h>

#include "ui/screen.h"
#include "ui/ui.h"

void
view_help_draw(struct ui *ui, int y, int rows)
{
    struct ui_out            o = { .ui = ui, .y = y, .rows = rows,
                                   .skip = ui->help_scroll };
    struct ui_line           l;
    size_t                   nb;
    const struct ui_binding *b = keys_table(&nb);

    ui_line_reset(&l, ROLE_NORMAL);
    ui_line_add(&l, ROLE_HEADER, "mcptop help: keys");
    ui_out_line(&o, &l);
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
        ui_line_reset(&l, ROLE_NORMAL);
        ui_line_add(&l, ROLE_NORMAL, "  ");
        ui_line_cell(&l, ROLE_WARNING, keys, 14, false, ui->utf8);
        ui_line_add(&l, ROLE_NORMAL, " ");
        ui_line_add(&l, ROLE_NORMAL, keys_action_help((enum ui_action)a));
        ui_out_line(&o, &l);
    }
    ui_line_reset(&l, ROLE_NORMAL);
    ui_out_line(&o, &l);
    ui_line_reset(&l, ROLE_NORMAL);
    ui_line_add(&l, ROLE_HEADER, "liveness  ");
    ui_line_addf(&l, ROLE_REACHABLE, "%s reachable  ",
        ui->g.live[LIVENESS_REACHABLE]);
    ui_line_addf(&l, ROLE_UNREACHABLE, "%s unreachable  ",
        ui->g.live[LIVENESS_UNREACHABLE]);
    ui_line_addf(&l, ROLE_UNKNOWN, "%s unknown  ",
        ui->g.live[LIVENESS_UNKNOWN]);
    ui_line_addf(&l, ROLE_ABSENT, "%s absent (no observation)",
        ui->g.absent);
    ui_out_line(&o, &l);
    ui_line_reset(&l, ROLE_NORMAL);
    ui_line_add(&l, ROLE_HEADER, "history   ");
    ui_line_addf(&l, ROLE_REACHABLE, "%s completed  ",
        ui->g.strip[LIVENESS_REACHABLE]);
    ui_line_addf(&l, ROLE_UNREACHABLE, "%s lost  ",
        ui->g.strip[LIVENESS_UNREACHABLE]);
    ui_line_addf(&l, ROLE_UNKNOWN, "%s unclear  ",
        ui->g.strip[LIVENESS_UNKNOWN]);
    ui_line_addf(&l, ROLE_ABSENT, "%s not an observation",
        ui->g.strip_absent);
    ui_out_line(&o, &l);
    ui_line_reset(&l, ROLE_NORMAL);
    ui_line_add(&l, ROLE_DIM, "Up/Down scroll; any other key closes this "
        "help");
    ui_out_line(&o, &l);
    if (ui->help_scroll > 0 && o.n - ui->help_scroll < rows) {
        ui->help_scroll = o.n > rows ? o.n - rows : 0;
        ui_dirty(ui);
    }
}

bool
view_help_key(struct ui *ui, enum ui_action a)
{
    switch (a) {
    case UI_ACT_DOWN:
    case UI_ACT_DETAIL_DOWN:
    case UI_ACT_PAGE_DOWN:
        ui->help_scroll += a == UI_ACT_PAGE_DOWN ? 5 : 1;
        break;
    case UI_ACT_UP:
    case UI_ACT_DETAIL_UP:
    case UI_ACT_PAGE_UP:
        ui->help_scroll -= a == UI_ACT_PAGE_UP ? 5 : 1;
        if (ui->help_scroll < 0)
            ui->help_scroll = 0;
        break;
    default:
        ui->mode = ui->back;
        break;
    }
    return true;
}
