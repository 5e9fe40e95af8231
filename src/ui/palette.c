/*
 * The command palette (:, as in k9s and vim; issue 34): a line of
 * commands run on Enter: sort COL[,desc], filter [EXPR] (the event log's
 * own when it is shown), group WORD, columns [LIST], view [save|delete|
 * default] NAME, theme NAME, end, redial, log, help. Tab completes the
 * command and its word (a column, a grouping, a view, a theme, a tag or
 * a server name in a filter); Up and Down recall earlier lines (kept in
 * tui.json, the newest PREFS_HISTORY_MAX). What a command did, or why it
 * could not, goes on the status line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/config.h"
#include "engine/server.h"
#include "ui/prefs.h"
#include "ui/ui.h"
#include "util/str.h"
#include "util/xmalloc.h"

static const char *const palette_commands[] = {
    "columns", "end", "filter", "group", "help", "log", "redial", "sort",
    "theme", "view",
};

static const char *const palette_groups[] = {
    "cause", "host", "none", "tag", "transport",
};

#define PALETTE_N(v) (sizeof(v) / sizeof((v)[0]))

/* The column words --sort takes, one by one from model_sort_columns. */
static size_t
palette_columns(char words[][24], size_t max)
{
    const char *p = model_sort_columns();
    size_t      n = 0;

    while (*p != '\0' && n < max) {
        size_t w = strcspn(p, " ");

        snprintf(words[n++], sizeof(words[0]), "%.*s", (int)w, p);
        p += w;
        while (*p == ' ')
            p++;
    }
    return n;
}

/* Complete the word at w (the rest of buf, n bytes in all) from v: the
 * longest prefix common to every match, a space after a unique one. */
static bool
palette_complete_word(char *buf, size_t n, char *w, const char *const *v,
    size_t nv)
{
    const char *first = NULL;
    size_t      len = strlen(w), common = 0, matches = 0;

    for (size_t i = 0; i < nv; i++) {
        if (strncasecmp(v[i], w, len) != 0)
            continue;
        if (first == NULL) {
            first = v[i];
            common = strlen(v[i]);
        } else {
            size_t k = 0;

            while (k < common && first[k] == v[i][k])
                k++;
            common = k;
        }
        matches++;
    }
    if (matches == 0 || (size_t)(w - buf) + common + 2 > n)
        return false;
    memcpy(w, first, common);
    w[common] = '\0';
    if (matches == 1)
        strcat(w, " ");
    return true;
}

/* Sort candidate words and drop repeats (tags shared by servers). */
static int
palette_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static size_t
palette_unique(const char **v, size_t n)
{
    size_t k = 0;

    qsort(v, n, sizeof(*v), palette_cmp);
    for (size_t i = 0; i < n; i++) {
        if (k == 0 || strcmp(v[k - 1], v[i]) != 0)
            v[k++] = v[i];
    }
    return k;
}

/* A filter term being typed at w: tag:X completes from the fleet's tags,
 * name:X from its server names (after a ! too). */
static bool
palette_complete_filter(struct ui *ui, char *buf, size_t n, char *w)
{
    bool         tag, ok;
    size_t       ns, nv = 0;
    const char **v;
    char       (*names)[128];

    if (*w == '!')
        w++;
    tag = strncmp(w, "tag:", 4) == 0;
    if (ui == NULL || ui->fleet == NULL || (!tag && strncmp(w, "name:",
        5) != 0))
        return false;
    ns = fleet_size(ui->fleet);
    names = tag ? NULL : xcalloc(ns + 1, sizeof(*names));
    v = NULL;
    for (size_t i = 0; i < ns; i++) {
        const struct server        *s = fleet_server(ui->fleet, i);
        const struct config_server *d = server_decl(s);

        if (tag) {
            if (d == NULL)
                continue;
            v = xrealloc(v, (nv + d->ntags + 1) * sizeof(*v));
            for (size_t t = 0; t < d->ntags; t++)
                v[nv++] = d->tags[t];
        } else {
            v = xrealloc(v, (nv + 1) * sizeof(*v));
            fmt_name(names[i], sizeof(names[i]), s);
            v[nv++] = names[i];
        }
    }
    nv = nv > 0 ? palette_unique(v, nv) : 0;
    ok = palette_complete_word(buf, n, w + (tag ? 4 : 5), v, nv);
    free(v);
    free(names);
    return ok;
}

/* See ui.h. */
bool
palette_complete(struct ui *ui, char *buf, size_t n)
{
    char  *sp = strchr(buf, ' ');
    char  *arg, *last;
    size_t cmd, words = 0;

    if (sp == NULL)
        return palette_complete_word(buf, n, buf, palette_commands,
            PALETTE_N(palette_commands));
    cmd = (size_t)(sp - buf);
    arg = sp;
    while (*arg == ' ')
        arg++;
    /* The word being typed (after the last space), and how many come
     * before it after the command. */
    last = strrchr(buf, ' ') + 1;
    for (char *p = arg; p < last; p++) {
        if (*p != ' ' && (p == arg || p[-1] == ' '))
            words++;
    }
    if (cmd == 6 && strncmp(buf, "filter", 6) == 0)
        return palette_complete_filter(ui, buf, n, last);
    if (cmd == 4 && strncmp(buf, "view", 4) == 0) {
        const char **v;
        size_t       nv = 0, nviews = ui != NULL && ui->prefs != NULL ?
            ui->prefs->nviews : 0;
        bool         ok;

        if (words > 1 || (words == 1 && strncmp(arg, "save ", 5) != 0 &&
            strncmp(arg, "delete ", 7) != 0 && strncmp(arg, "default ",
            8) != 0))
            return false;
        v = xcalloc(nviews + 3, sizeof(*v));
        if (words == 0) {
            v[nv++] = "save";
            v[nv++] = "delete";
            v[nv++] = "default";
        }
        for (size_t i = 0; i < nviews; i++)
            v[nv++] = ui->prefs->views[i].name;
        ok = palette_complete_word(buf, n, last, v, nv);
        free(v);
        return ok;
    }
    if (cmd == 7 && strncmp(buf, "columns", 7) == 0) {
        const char *v[UI_COLUMNS_MAX];
        size_t      nv = 0;
        char       *comma = strrchr(last, ',');
        bool        ok;

        for (size_t c = 1; c < view_table_ncolumns() && nv < UI_COLUMNS_MAX;
            c++)
            v[nv++] = view_table_column_word((int)c);
        ok = palette_complete_word(buf, n, comma != NULL ? comma + 1 : last,
            v, nv);
        /* No space after a column: a comma and the next may follow. */
        if (ok && buf[strlen(buf) - 1] == ' ')
            buf[strlen(buf) - 1] = '\0';
        return ok;
    }
    if (words > 0)
        return false;
    if (cmd == 4 && strncmp(buf, "sort", 4) == 0) {
        char        wordv[MODEL_SORT__COUNT + 1][24];
        const char *v[MODEL_SORT__COUNT + 1];
        size_t      nw = palette_columns(wordv, PALETTE_N(wordv));

        for (size_t i = 0; i < nw; i++)
            v[i] = wordv[i];
        return palette_complete_word(buf, n, arg, v, nw);
    }
    if (cmd == 5 && strncmp(buf, "group", 5) == 0)
        return palette_complete_word(buf, n, arg, palette_groups,
            PALETTE_N(palette_groups));
    if (cmd == 5 && strncmp(buf, "theme", 5) == 0 && ui != NULL)
        return palette_complete_word(buf, n, arg,
            (const char *const *)ui->themes, ui->nthemes);
    return false;
}

/* See ui.h. */
void
palette_history(struct ui *ui, bool older)
{
    const struct prefs *p = ui->prefs;

    if (p == NULL || p->nhistory == 0)
        return;
    if (ui->history_pos > p->nhistory)
        ui->history_pos = p->nhistory;
    if (older) {
        if (ui->history_pos == 0)
            return;
        if (ui->history_pos == p->nhistory)
            snprintf(ui->history_line, sizeof(ui->history_line), "%s",
                ui->palette);
        ui->history_pos--;
        snprintf(ui->palette, sizeof(ui->palette), "%s",
            p->history[ui->history_pos]);
    } else {
        if (ui->history_pos >= p->nhistory)
            return;
        ui->history_pos++;
        snprintf(ui->palette, sizeof(ui->palette), "%s",
            ui->history_pos == p->nhistory ? ui->history_line :
            p->history[ui->history_pos]);
    }
}

/* :columns [LIST]: alone, the chooser; else the columns shown, in this
 * order (commas or spaces between). */
static void
palette_columns_run(struct ui *ui, const char *arg)
{
    int    cols[UI_COLUMNS_MAX];
    size_t n = 0, at;
    char   text[256];

    if (arg[0] == '\0') {
        ui_view_open(ui, &view_columns_mode);
        return;
    }
    while (*arg != '\0') {
        size_t len = strcspn(arg, ", ");
        int    c;

        if (len == 0) {
            arg++;
            continue;
        }
        c = view_table_column_of(arg, len);
        if (c < 0) {
            char word[64], all[256] = "";

            str_sanitize(word, sizeof(word), arg, len);
            for (size_t k = 1; k < view_table_ncolumns(); k++) {
                size_t off = strlen(all);

                snprintf(all + off, sizeof(all) - off, "%s%s", k > 1 ? " " :
                    "", view_table_column_word((int)k));
            }
            ui_message(ui, UI_ROLE_WARNING, ":columns: no column \"%s\" "
                "(%s)", word, all);
            return;
        }
        for (at = 0; at < n && cols[at] != c; at++)
            ;                   /* named twice: one place, not two */
        if (at == n && n < UI_COLUMNS_MAX)
            cols[n++] = c;
        arg += len;
    }
    view_table_set_columns(ui, cols, n);
    view_table_columns_text(ui, text, sizeof(text));
    ui_message(ui, UI_ROLE_NORMAL, "columns (:view save NAME keeps "
        "them): %s", text);
}

/* :view NAME, :view save NAME, :view delete NAME, :view default [NAME],
 * :view (the list). */
static void
palette_view_run(struct ui *ui, const char *arg)
{
    struct prefs *p = ui->prefs;
    char          names[512], name[PREFS_NAME_MAX + 1], err[512];
    const char   *rest;
    size_t        len = strcspn(arg, " ");

    rest = arg + len;
    while (*rest == ' ')
        rest++;
    if (p == NULL) {
        ui_message(ui, UI_ROLE_WARNING, ":view: no saved views here");
        return;
    }
    prefs_view_names(p, names, sizeof(names));
    if (arg[0] == '\0') {
        char dflt[PREFS_NAME_MAX + 16] = "";

        if (p->default_view != NULL)
            snprintf(dflt, sizeof(dflt), " (default %s)", p->default_view);
        str_sanitize(err, sizeof(err), dflt, strlen(dflt));
        ui_message(ui, UI_ROLE_NORMAL, "views: %s%s", names[0] != '\0' ?
            names : "none yet (:view save NAME)", err);
        return;
    }
    if ((len == 4 && strncmp(arg, "save", 4) == 0) ||
        (len == 6 && strncmp(arg, "delete", 6) == 0) ||
        (len == 7 && strncmp(arg, "default", 7) == 0)) {
        size_t nlen = strcspn(rest, " ");

        if (nlen == 0 && len != 7) {
            ui_message(ui, UI_ROLE_WARNING, ":view %.*s: which view? (:view "
                "%.*s NAME)", (int)len, arg, (int)len, arg);
            return;
        }
        if (nlen > PREFS_NAME_MAX || rest[nlen] != '\0') {
            ui_message(ui, UI_ROLE_WARNING, ":view: a view name is 1 to %d "
                "characters with no space", PREFS_NAME_MAX);
            return;
        }
        snprintf(name, sizeof(name), "%.*s", (int)nlen, rest);
        str_sanitize(err, sizeof(err), name, strlen(name));
        if (len == 4) {
            struct prefs_view v;

            if (prefs_view(p, name) == NULL && p->nviews >= PREFS_VIEWS_MAX) {
                ui_message(ui, UI_ROLE_WARNING, ":view save: %d views "
                    "already, the most kept (:view delete NAME first)",
                    PREFS_VIEWS_MAX);
                return;
            }
            tui_prefs_capture_view(ui, name, &v);
            prefs_view_set(p, &v);
            prefs_view_done(&v);
            if (tui_prefs_save(ui))
                ui_message(ui, UI_ROLE_NORMAL, "view %s saved (sort, filter, "
                    "group, columns) in %s", err, ui->prefs_path);
        } else if (len == 6) {
            if (!prefs_view_delete(p, name)) {
                ui_message(ui, UI_ROLE_WARNING, ":view delete: no view \"%s\" "
                    "(%s)", err, names[0] != '\0' ? names : "there are none");
                return;
            }
            if (tui_prefs_save(ui))
                ui_message(ui, UI_ROLE_NORMAL, "view %s deleted", err);
        } else {
            if (nlen > 0 && prefs_view(p, name) == NULL) {
                ui_message(ui, UI_ROLE_WARNING, ":view default: no view "
                    "\"%s\" (%s)", err, names[0] != '\0' ? names :
                    "there are none");
                return;
            }
            prefs_set_default_view(p, nlen > 0 ? name : NULL);
            if (tui_prefs_save(ui))
                ui_message(ui, UI_ROLE_NORMAL, nlen > 0 ? "default view: %s "
                    "(applied at start without --view, --filter, --sort, "
                    "--group)" : "no default view%s", err);
        }
        return;
    }
    if (rest[0] != '\0' || len > PREFS_NAME_MAX) {
        ui_message(ui, UI_ROLE_WARNING, ":view: a view name is 1 to %d "
            "characters with no space", PREFS_NAME_MAX);
        return;
    }
    snprintf(name, sizeof(name), "%.*s", (int)len, arg);
    str_sanitize(err, sizeof(err), name, strlen(name));
    if (prefs_view(p, name) == NULL) {
        ui_message(ui, UI_ROLE_WARNING, ":view: no view \"%s\" (%s)", err,
            names[0] != '\0' ? names : "none yet: :view save NAME");
        return;
    }
    if (!tui_prefs_apply_view(ui, prefs_view(p, name), err, sizeof(err))) {
        ui_message(ui, UI_ROLE_WARNING, "%s", err);
        return;
    }
    str_sanitize(err, sizeof(err), name, strlen(name));
    ui_message(ui, UI_ROLE_NORMAL, "view %s", err);
}

void
palette_run(struct ui *ui, const char *line)
{
    struct model *m = &ui->model;
    char          cmd[16], err[256], shown[160];
    const char   *arg;
    size_t        len;

    while (*line == ' ')
        line++;
    len = strcspn(line, " ");
    arg = line + len;
    while (*arg == ' ')
        arg++;
    str_sanitize(shown, sizeof(shown), line, strlen(line));
    if (len == 0)
        return;
    if (ui->prefs != NULL) {
        prefs_history_add(ui->prefs, line);
        ui->history_pos = ui->prefs->nhistory;
    }
    snprintf(cmd, sizeof(cmd), "%.*s", (int)(len < 15 ? len : 15), line);
    if (strcmp(cmd, "sort") == 0) {
        enum model_sort s;
        bool            inv;
        char            word[64];

        snprintf(word, sizeof(word), "%.*s", (int)strcspn(arg, " "), arg);
        if (!model_sort_parse(word, &s, &inv, err, sizeof(err))) {
            ui_message(ui, UI_ROLE_WARNING, ":sort: %s", err);
            return;
        }
        m->sort = s;
        m->invert = inv;
        m->dirty = true;
        ui_message(ui, UI_ROLE_NORMAL, "sort: %s%s", model_sort_name(s),
            inv ? ", reversed" : "");
    } else if (strcmp(cmd, "filter") == 0) {
        if (!model_filter_check(arg, err, sizeof(err))) {
            ui_message(ui, UI_ROLE_WARNING, ":filter: %s", err);
            return;
        }
        /* In the event log, its own filter (as / there). */
        if (ui->view == &view_log_mode)
            eventlog_set_filter(&ui->eventlog, arg);
        else
            model_set_filter(m, arg);
        snprintf(ui->input, sizeof(ui->input), "%s", arg);
        if (arg[0] == '\0')
            ui_message(ui, UI_ROLE_NORMAL, "filter cleared");
    } else if (strcmp(cmd, "group") == 0) {
        enum model_group g;

        if (!model_group_parse(arg, &g)) {
            str_sanitize(err, sizeof(err), arg, strlen(arg));
            ui_message(ui, UI_ROLE_WARNING, ":group: no grouping \"%s\" "
                "(cause tag host transport none)", err);
            return;
        }
        model_set_group(m, g);
        ui_message(ui, UI_ROLE_NORMAL, "group: %s", model_group_name(g));
    } else if (strcmp(cmd, "help") == 0) {
        ui_view_open(ui, &view_help_mode);
    } else if (strcmp(cmd, "log") == 0) {
        ui_view_open(ui, &view_log_mode);
    } else if (strcmp(cmd, "columns") == 0) {
        palette_columns_run(ui, arg);
    } else if (strcmp(cmd, "view") == 0) {
        palette_view_run(ui, arg);
    } else if (strcmp(cmd, "theme") == 0) {
        if (arg[0] == '\0')
            ui_message(ui, UI_ROLE_NORMAL, "theme: %s (t: the next; Tab "
                "completes a name)", ui->theme.name);
        else
            tui_prefs_theme(ui, arg);
    } else if (strcmp(cmd, "end") == 0) {
        tui_key_action(ui, UI_ACT_END_ONE);
    } else if (strcmp(cmd, "redial") == 0) {
        tui_key_action(ui, UI_ACT_REDIAL);
    } else {
        ui_message(ui, UI_ROLE_WARNING, "no command \"%s\" (sort filter "
            "group columns view theme end redial log help; Tab completes)",
            shown);
    }
}
