/*
 * The TUI's preferences and saved views (issue 34): the file
 * $XDG_CONFIG_HOME/mcptop/tui.json (~/.config/mcptop/tui.json when
 * XDG_CONFIG_HOME is unset or relative):
 *
 *   {"views": {"triage": {"sort": "rtt,desc", "filter": "kind:connect",
 *                         "group": "cause", "columns": ["name", ...]}},
 *    "default_view": "triage", "theme": "dark", "mouse": true,
 *    "history": ["sort rtt", ...]}
 *
 * prefs.c reads and writes the file (cJSON; written atomically: a temp
 * file in the same directory, fsync, rename; 0600 in a 0700 directory).
 * It checks the JSON's shape only; what a view's words mean (a sort
 * column, a filter, a grouping, a column) is checked where the view is
 * applied (tui_prefs.c). Nothing here includes curses, and the engine
 * never includes this header.
 */
#ifndef MCPTOP_UI_PREFS_H
#define MCPTOP_UI_PREFS_H

#include <stdbool.h>
#include <stddef.h>

/* The palette's history kept in the file: the newest PREFS_HISTORY_MAX. */
#define PREFS_HISTORY_MAX 100
/* The longest view name taken (bytes). */
#define PREFS_NAME_MAX    64
/* The most views kept: a file with more is a problem (the first ones
 * kept), and :view save refuses a new one past it. Each view is looked
 * up by a walk of the list, so the cap also bounds that walk. */
#define PREFS_VIEWS_MAX   256

/* One saved view; a NULL field (columns: has_columns false) was not
 * given and leaves that setting as it is. */
struct prefs_view {
    char   *name;
    char   *sort;               /* "rtt,desc" (the words of --sort) */
    char   *filter;             /* the filter language of / */
    char   *group;              /* cause|tag|host|transport|none */
    bool    has_columns;
    char  **columns;            /* column words, in order */
    size_t  ncolumns;
};

struct prefs {
    struct prefs_view *views;   /* in the file's order */
    size_t             nviews;
    char              *default_view;    /* or NULL */
    char              *theme;           /* or NULL */
    int                mouse;           /* -1 not given, 0 off, 1 on */
    char             **history;         /* oldest first */
    size_t             nhistory;
    /* What changed since the file was read, for prefs_save_merged: the
     * views saved or deleted (by name), the default view, the theme, the
     * mouse, and how many of the newest history entries are new. */
    char             **dirty_views;
    size_t             ndirty_views;
    bool               dirty_default, dirty_theme, dirty_mouse;
    size_t             dirty_history;
};

/*
 * The file's path: $XDG_CONFIG_HOME/mcptop/tui.json, else
 * $HOME/.config/mcptop/tui.json; NULL when neither is set. Caller frees.
 */
char *prefs_path(void);

/* An empty set of preferences (mouse -1). */
void prefs_init(struct prefs *p);
/* Free what p holds; p is empty again. */
void prefs_done(struct prefs *p);

/*
 * Read path into p (emptied first). 0: read, or no file (p stays empty).
 * 1: read with problems: what was well-formed is in p, *cause says the
 * first problem, naming the file and the key ("...tui.json: views.triage.
 * sort: a number, not a string"). -1: unreadable or not JSON (p empty),
 * *cause says why and where (line:column). Caller frees *cause.
 */
int prefs_load(struct prefs *p, const char *path, char **cause);
/* The same, from text (len bytes) named `name` in the messages. */
int prefs_parse(struct prefs *p, const char *name, const char *text,
    size_t len, char **cause);

/*
 * Write p to path atomically: the directories made (0700) as needed, a
 * temp file beside it (0600), fsync, rename over path. 0, or -1 with
 * *cause (caller frees); a failed write leaves the old file whole.
 */
int prefs_save(const struct prefs *p, const char *path, char **cause);

/*
 * Save what changed in p since it was read (its dirty_* record) over the
 * file as it is now on disk: another mcptop may have written it since, and
 * its views and history are kept. The file is read again, p's changes are
 * applied to it, the result written (prefs_save) and then held in p (its
 * record cleared). 0, or -1 with *cause (caller frees): the file now has a
 * problem (it is left alone), or the write failed.
 */
int prefs_save_merged(struct prefs *p, const char *path, char **cause);

/* The view called name, or NULL. */
const struct prefs_view *prefs_view(const struct prefs *p, const char *name);
/* Keep a copy of v under v->name, replacing a view of that name (recorded
 * as changed, as a deletion is). */
void prefs_view_set(struct prefs *p, const struct prefs_view *v);
/* Delete the view called name; false when there is none. A default_view
 * naming it is cleared. */
bool prefs_view_delete(struct prefs *p, const char *name);
/* Free what one view holds. */
void prefs_view_done(struct prefs_view *v);
/* The view names, space-separated ("" when none), into buf (n bytes),
 * each sanitized (str_sanitize) for the screen. */
void prefs_view_names(const struct prefs *p, char *buf, size_t n);

/* Set a string preference (a copy; NULL clears it). */
void prefs_set_string(char **field, const char *value);
/* The default view, the theme (NULL clears) and the mouse, recorded as
 * changed. */
void prefs_set_default_view(struct prefs *p, const char *name);
void prefs_set_theme(struct prefs *p, const char *name);
void prefs_set_mouse(struct prefs *p, bool on);
/* Add line to the history, newest last: an empty line or the same line
 * as the newest is not added; the oldest go past PREFS_HISTORY_MAX. */
void prefs_history_add(struct prefs *p, const char *line);

/*
 * tui_prefs.c: tui.json in the TUI. Give ui the preferences p read from
 * path (ui owns path; p stays the caller's) with prefs_load's rc and
 * cause: a problem is a status warning, and the file is left alone this
 * run. The theme it names is loaded unless --theme gave one.
 */
struct ui;
void tui_prefs_attach(struct ui *ui, struct prefs *p, char *path, int rc,
    const char *cause);
/*
 * Apply view v: its sort, filter, group and columns, each checked; what
 * is bad is skipped and the first problem goes to err (n bytes), naming
 * the file and the key. true when everything applied.
 */
bool tui_prefs_apply_view(struct ui *ui, const struct prefs_view *v,
    char *err, size_t n);
/* The current sort, filter, group and columns as view `name` into v
 * (caller frees with prefs_view_done). */
void tui_prefs_capture_view(const struct ui *ui, const char *name,
    struct prefs_view *v);
/* Write ui->prefs now (unless the file is left alone this run); a failure
 * is a status warning. true when written. */
bool tui_prefs_save(struct ui *ui);
/* :theme NAME and t: load theme `name` (from the theme list), remember it
 * in tui.json. false (and a status warning) when it cannot be loaded. */
bool tui_prefs_theme(struct ui *ui, const char *name);
/* m: remember the mouse capture in tui.json. */
void tui_prefs_mouse(struct ui *ui, bool on);
/* At the start: view `name` (--view), else, when no --filter, --sort or
 * --group was given (flags false), the file's default_view. A bad field
 * or a missing default view is a status warning; the rest applies. */
void tui_prefs_start_view(struct ui *ui, const char *name, bool flags);
/* --view NAME must name a view of p (read from path; rc and cause as
 * prefs_load gave them): else a usage error on stderr listing the views
 * there are. 0 or EXIT_USAGE. */
int tui_prefs_check_view(const struct prefs *p, const char *path, int rc,
    const char *cause, const char *name);
/* --list-views: the view names of tui.json on stdout, one a line (a
 * problem with the file on stderr). */
void tui_prefs_list_views(void);

#endif
