/*
 * Colour roles and themes. A role names what a piece of text means
 * (reachable, header, selection...); a theme maps each role to a
 * foreground, a background and attributes. Themes are JSON files
 * (themes/NAME.json); the dark theme is also built in, so the UI works with no
 * theme file at all. This module parses and finds themes; it never talks to
 * the terminal (screen.c turns a theme into curses pairs).
 */
#ifndef MCPTOP_UI_THEME_H
#define MCPTOP_UI_THEME_H

#include <stdbool.h>
#include <stddef.h>

#define UI_ROLES(X)                                 \
    X(NORMAL,            "normal")                  \
    X(HEADER,            "header")                  \
    X(SELECTION,         "selection")               \
    X(BORDER,            "border")                  \
    X(DIM,               "dim")                     \
    X(WARNING,           "warning")                 \
    X(MARKED,            "marked")                  \
    X(REACHABLE,         "reachable")               \
    X(UNREACHABLE,       "unreachable")             \
    X(UNKNOWN,           "unknown")                 \
    X(ABSENT,            "absent")                  \
    X(DELIVERED_YES,     "delivered_yes")           \
    X(DELIVERED_NO,      "delivered_no")            \
    X(DELIVERED_UNKNOWN, "delivered_unknown")

enum ui_role {
#define X(id, name) UI_ROLE_##id,
    UI_ROLES(X)
#undef X
    UI_ROLE__COUNT
};

/* Attributes, independent of curses (screen.c maps them to A_*). */
#define THEME_BOLD      0x01u
#define THEME_DIM       0x02u
#define THEME_UNDERLINE 0x04u
#define THEME_REVERSE   0x08u
#define THEME_STANDOUT  0x10u
#define THEME_ITALIC    0x20u
#define THEME_BLINK     0x40u

/* A colour: 0-255 (0-7 the classic eight, 8-15 their bright forms), or
 * THEME_DEFAULT for the terminal's own. */
#define THEME_DEFAULT   (-1)

struct theme_style {
    short    fg;
    short    bg;
    unsigned attrs;
};

struct theme {
    char               name[64];
    struct theme_style style[UI_ROLE__COUNT];
};

/* "reachable"... Static string; "?" out of range. */
const char *ui_role_name(enum ui_role r);

/* Fill t with the built-in dark theme (the default). */
void theme_builtin(struct theme *t);

/*
 * Parse a theme from JSON text: {"name": ..., "roles": {ROLE: {"fg", "bg",
 * "attrs": [...]}}}. Roles a file leaves out keep the built-in dark style.
 * 0, or -1 with *cause set (caller frees) naming origin, the role and the
 * problem; t is then the built-in theme.
 */
int theme_parse(struct theme *t, const char *text, const char *origin,
    char **cause);

/*
 * Load a theme by NAME (looked up as NAME.json in the theme directories)
 * or by FILE (a path: it contains '/' or ends in ".json"). "dark" falls
 * back to the built-in theme when no file exists. 0, or -1 with *cause
 * (caller frees); t is then the built-in theme.
 */
int theme_load(struct theme *t, const char *name_or_path, char **cause);

/*
 * The theme directories in search order, joined with ", " for help and
 * error messages: $MCPTOP_THEMES, the installed themes relative to the
 * binary (<bindir>/../share/mcptop/themes), then themes/ beside the
 * binary when it exists (a build tree). Caller frees.
 */
char *theme_search_path(void);

/*
 * The theme names found in the theme directories (theme_search_path),
 * deduplicated,
 * dark, light and high-contrast first, then the rest sorted. Always holds
 * at least "dark". Caller frees with theme_list_free.
 */
size_t theme_list(char ***names);
void theme_list_free(char **names, size_t n);

#endif
