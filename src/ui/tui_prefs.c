/*
 * tui.json in the TUI (issue 34): loading it at start (a broken file is a
 * status warning: the TUI starts with its defaults and leaves the file
 * alone for the run, so that nothing the operator wrote is lost), applying
 * and capturing views (sort, filter, group, columns: each word checked
 * here, as --sort, --filter and --group check theirs), and remembering
 * what an htop user expects to be remembered: the theme (t, :theme), the
 * mouse capture (m), the views and the palette's history. A preference is
 * written when it changes, the history also at the exit.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front/app.h"
#include "ui/prefs.h"
#include "ui/screen.h"
#include "ui/ui.h"
#include "util/str.h"
#include "util/xmalloc.h"

/* See prefs.h. */
void
tui_prefs_attach(struct ui *ui, struct prefs *p, char *path, int rc,
    const char *cause)
{
    ui->prefs = p;
    ui->prefs_path = path;
    ui->history_pos = p->nhistory;
    if (rc != 0) {
        ui->prefs_frozen = true;
        ui_message(ui, UI_ROLE_WARNING, "%s; %s, file left alone", cause,
            rc < 0 ? "defaults used" : "the rest used");
    }
    if (p->theme != NULL && ui->start_theme == NULL) {
        char  *why = NULL;
        size_t i;

        for (i = 0; i < ui->nthemes; i++) {
            if (strcmp(ui->themes[i], p->theme) == 0)
                break;
        }
        if (i == ui->nthemes) {
            char shown[64];

            str_sanitize(shown, sizeof(shown), p->theme, strlen(p->theme));
            if (rc == 0)
                ui_message(ui, UI_ROLE_WARNING, "%s: theme: no theme \"%s\"",
                    path, shown);
        } else if (theme_load(&ui->theme, p->theme, &why) != 0) {
            if (rc == 0)
                ui_message(ui, UI_ROLE_WARNING, "theme: %s; using the "
                    "built-in dark theme", why);
            free(why);
        } else {
            ui->theme_i = i;
        }
    }
}

/* The first problem of a view: "FILE: views.NAME.KEY: what". */
static void __attribute__((format(printf, 7, 8)))
tui_prefs_bad(char *err, size_t n, bool *ok, const char *file,
    const char *view, const char *key, const char *fmt, ...)
{
    char    what[256];
    va_list ap;

    if (*ok && n > 0) {
        va_start(ap, fmt);
        vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        snprintf(err, n, "%s: views.%s.%s: %s", file, view, key, what);
    }
    *ok = false;
}

/* True when c is among the n of cols: a column named twice takes one of
 * the UI_COLUMNS_MAX places, not two (a later one is not crowded out). */
static bool
tui_prefs_has_column(const int *cols, size_t n, int c)
{
    for (size_t i = 0; i < n; i++) {
        if (cols[i] == c)
            return true;
    }
    return false;
}

/* See prefs.h. */
bool
tui_prefs_apply_view(struct ui *ui, const struct prefs_view *v, char *err,
    size_t n)
{
    struct model *m = &ui->model;
    const char   *file = ui->prefs_path != NULL ? ui->prefs_path : "tui.json";
    char          why[256];
    bool          ok = true;

#define TUI_PREFS_BAD(key, ...) \
    tui_prefs_bad(err, n, &ok, file, v->name, key, __VA_ARGS__)

    if (n > 0)
        err[0] = '\0';
    if (v->sort != NULL) {
        enum model_sort s;
        bool            inv;

        if (model_sort_parse(v->sort, &s, &inv, why, sizeof(why))) {
            m->sort = s;
            m->invert = inv;
            m->dirty = true;
        } else {
            TUI_PREFS_BAD("sort", "%s", why);
        }
    }
    if (v->filter != NULL) {
        if (model_filter_check(v->filter, why, sizeof(why))) {
            model_set_filter(m, v->filter);
            snprintf(ui->input, sizeof(ui->input), "%s", v->filter);
        } else {
            TUI_PREFS_BAD("filter", "%s", why);
        }
    }
    if (v->group != NULL) {
        enum model_group g;

        if (model_group_parse(v->group, &g)) {
            model_set_group(m, g);
        } else {
            str_sanitize(why, sizeof(why), v->group, strlen(v->group));
            TUI_PREFS_BAD("group", "no grouping \"%s\" (cause tag host "
                "transport none)", why);
        }
    }
    if (v->has_columns) {
        int    cols[UI_COLUMNS_MAX];
        size_t nc = 0;

        for (size_t i = 0; i < v->ncolumns && nc < UI_COLUMNS_MAX; i++) {
            int c = view_table_column_of(v->columns[i],
                strlen(v->columns[i]));

            if (c < 0) {
                str_sanitize(why, sizeof(why), v->columns[i],
                    strlen(v->columns[i]));
                TUI_PREFS_BAD("columns", "no column \"%s\"", why);
                continue;
            }
            if (!tui_prefs_has_column(cols, nc, c))
                cols[nc++] = c;
        }
        view_table_set_columns(ui, cols, nc);
    }
#undef TUI_PREFS_BAD
    return ok;
}

/* See prefs.h. */
void
tui_prefs_capture_view(const struct ui *ui, const char *name,
    struct prefs_view *v)
{
    const struct model *m = &ui->model;
    int                 cols[UI_COLUMNS_MAX];
    size_t              nc = view_table_columns(ui, cols);

    memset(v, 0, sizeof(*v));
    v->name = xstrdup(name);
    v->sort = str_printf("%s%s", model_sort_word(m->sort),
        m->invert ? ",desc" : "");
    v->filter = xstrdup(m->filter);
    v->group = xstrdup(model_group_name(m->group));
    v->has_columns = true;
    v->columns = xcalloc(nc + 1, sizeof(*v->columns));
    for (size_t i = 0; i < nc; i++)
        v->columns[v->ncolumns++] = xstrdup(view_table_column_word(cols[i]));
}

/* See prefs.h. */
bool
tui_prefs_save(struct ui *ui)
{
    char *cause = NULL;

    if (ui->prefs == NULL)
        return false;
    if (ui->prefs_path == NULL) {
        ui_message(ui, UI_ROLE_WARNING, "not saved: neither XDG_CONFIG_HOME "
            "nor HOME is set");
        return false;
    }
    if (ui->prefs_frozen) {
        ui_message(ui, UI_ROLE_WARNING, "not saved: %s had a problem at the "
            "start (fix or remove it); kept for this run", ui->prefs_path);
        return false;
    }
    /* Over the file as it is now: another mcptop's views are kept. */
    if (prefs_save_merged(ui->prefs, ui->prefs_path, &cause) != 0) {
        ui_message(ui, UI_ROLE_WARNING, "not saved: %s", cause);
        free(cause);
        return false;
    }
    ui->history_pos = ui->prefs->nhistory;
    return true;
}

/* See prefs.h. */
bool
tui_prefs_theme(struct ui *ui, const char *name)
{
    char  *cause = NULL;
    size_t i;

    for (i = 0; i < ui->nthemes; i++) {
        if (strcmp(ui->themes[i], name) == 0)
            break;
    }
    if (i == ui->nthemes) {
        char shown[64], list[256] = "";

        str_sanitize(shown, sizeof(shown), name, strlen(name));
        for (size_t k = 0; k < ui->nthemes; k++) {
            size_t off = strlen(list);

            snprintf(list + off, sizeof(list) - off, "%s%s", k > 0 ? " " :
                "", ui->themes[k]);
        }
        ui_message(ui, UI_ROLE_WARNING, ":theme: no theme \"%s\" (%s)", shown,
            list);
        return false;
    }
    if (theme_load(&ui->theme, ui->themes[i], &cause) != 0) {
        ui_message(ui, UI_ROLE_WARNING, "theme: %s; using the built-in dark "
            "theme", cause);
        free(cause);
        screen_theme(&ui->theme, ui->color);
        return false;
    }
    ui->theme_i = i;
    screen_theme(&ui->theme, ui->color);
    ui_message(ui, UI_ROLE_NORMAL, "theme: %s%s", ui->theme.name,
        ui->color ? "" : " (NO_COLOR: attributes only)");
    if (ui->prefs != NULL) {
        prefs_set_theme(ui->prefs, ui->themes[i]);
        tui_prefs_save(ui);
    }
    return true;
}

/* See prefs.h. */
void
tui_prefs_mouse(struct ui *ui, bool on)
{
    if (ui->prefs == NULL)
        return;
    prefs_set_mouse(ui->prefs, on);
    tui_prefs_save(ui);
}

/* See prefs.h. */
void
tui_prefs_start_view(struct ui *ui, const char *name, bool flags)
{
    const struct prefs_view *v;
    char                     err[512];

    if (ui->prefs == NULL)
        return;
    if (name == NULL && !flags)
        name = ui->prefs->default_view;
    if (name == NULL)
        return;
    v = prefs_view(ui->prefs, name);
    if (v == NULL) {
        char shown[PREFS_NAME_MAX + 1];

        str_sanitize(shown, sizeof(shown), name, strlen(name));
        ui_message(ui, UI_ROLE_WARNING, "%s: default_view: no view \"%s\"",
            ui->prefs_path, shown);
        return;
    }
    /* The file's own problem, if any, stays on the status line: it is
     * the first. */
    if (!tui_prefs_apply_view(ui, v, err, sizeof(err)) &&
        ui->message[0] == '\0')
        ui_message(ui, UI_ROLE_WARNING, "%s", err);
}

/* See prefs.h. */
int
tui_prefs_check_view(const struct prefs *p, const char *path, int rc,
    const char *cause, const char *name)
{
    char names[512], shown[PREFS_NAME_MAX + 1];

    if (name == NULL || prefs_view(p, name) != NULL)
        return 0;
    str_sanitize(shown, sizeof(shown), name, strlen(name));
    prefs_view_names(p, names, sizeof(names));
    if (path == NULL)
        fprintf(stderr, "mcptop: --view: no view \"%s\": neither "
            "XDG_CONFIG_HOME nor HOME is set\n", shown);
    else if (rc < 0)
        fprintf(stderr, "mcptop: --view: no view \"%s\": %s\n", shown,
            cause);
    else if (names[0] == '\0')
        fprintf(stderr, "mcptop: --view: no view \"%s\": %s has no views "
            "(:view save NAME in the TUI saves one)\n", shown, path);
    else
        fprintf(stderr, "mcptop: --view: no view \"%s\" in %s (views: "
            "%s)\n", shown, path, names);
    return EXIT_USAGE;
}

/* See prefs.h. */
void
tui_prefs_list_views(void)
{
    struct prefs p;
    char        *path = prefs_path(), *cause = NULL;

    prefs_init(&p);
    if (path != NULL && prefs_load(&p, path, &cause) != 0)
        fprintf(stderr, "mcptop: %s\n", cause);
    for (size_t i = 0; i < p.nviews; i++)
        printf("%s\n", p.views[i].name);
    free(cause);
    free(path);
    prefs_done(&p);
}
