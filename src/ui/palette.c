/*
 * The command palette (:, as in k9s and vim; issue 34): a line of
 * commands run on Enter: sort COL[,desc], filter [EXPR] (the event log's
 * own when it is shown), group WORD, log, help; Tab completes the command, a column or a grouping. What a command
 * did, or why it could not, goes on the status line.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "ui/ui.h"
#include "util/str.h"

static const char *const palette_commands[] = {
    "filter", "group", "help", "log", "sort",
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

bool
palette_complete(char *buf, size_t n)
{
    char  *sp = strchr(buf, ' ');
    char  *arg;
    size_t cmd;

    if (sp == NULL)
        return palette_complete_word(buf, n, buf, palette_commands,
            PALETTE_N(palette_commands));
    cmd = (size_t)(sp - buf);
    arg = sp;
    while (*arg == ' ')
        arg++;
    if (strchr(arg, ' ') != NULL)
        return false;
    if (cmd == 4 && strncmp(buf, "sort", 4) == 0) {
        char        words[MODEL_SORT__COUNT + 1][24];
        const char *v[MODEL_SORT__COUNT + 1];
        size_t      nw = palette_columns(words, PALETTE_N(words));

        for (size_t i = 0; i < nw; i++)
            v[i] = words[i];
        return palette_complete_word(buf, n, arg, v, nw);
    }
    if (cmd == 5 && strncmp(buf, "group", 5) == 0)
        return palette_complete_word(buf, n, arg, palette_groups,
            PALETTE_N(palette_groups));
    return false;
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
        if (ui->mode == UI_MODE_LOG)
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
        if (ui->mode != UI_MODE_HELP)
            ui->back = ui->mode;
        ui->mode = UI_MODE_HELP;
        ui->help_scroll = 0;
    } else if (strcmp(cmd, "log") == 0) {
        ui->mode = UI_MODE_LOG;
        ui->log_scroll = 0;
    } else {
        ui_message(ui, UI_ROLE_WARNING, "no command \"%s\" (sort filter "
            "group log help; Tab completes)", shown);
    }
}
