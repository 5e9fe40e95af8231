/*
 * Themes: parse a theme file (JSON, read with cJSON) into a role -> style
 * table, find theme files in the theme directories, and keep the built-in
 * dark theme as the fallback. Never talks to the terminal, and never prints:
 * every problem goes back to the caller in *cause.
 */
#include "ui/theme.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/file.h"
#include "util/str.h"
#include "util/xmalloc.h"

/* From the installed binary's directory to the installed themes (CMake
 * derives it from GNUInstallDirs): relative, so an installed tree can
 * move, and no build or source path is compiled in. */
#ifndef MCPTOP_THEMES_REL
#define MCPTOP_THEMES_REL "../share/mcptop/themes"
#endif
#define THEME_MAX_BYTES   (256 * 1024)

static const char *const theme_role_names[UI_ROLE__COUNT] = {
#define X(id, name) [UI_ROLE_##id] = name,
    UI_ROLES(X)
#undef X
};

/* The built-in dark theme; themes/dark.json says the same. */
static const struct theme_style theme_dark[UI_ROLE__COUNT] = {
    [UI_ROLE_NORMAL]            = { THEME_DEFAULT, THEME_DEFAULT, 0 },
    [UI_ROLE_HEADER]            = { 6, THEME_DEFAULT, THEME_BOLD },
    [UI_ROLE_SELECTION]         = { THEME_DEFAULT, 4, THEME_BOLD },
    [UI_ROLE_BORDER]            = { 4, THEME_DEFAULT, 0 },
    [UI_ROLE_DIM]               = { THEME_DEFAULT, THEME_DEFAULT, THEME_DIM },
    [UI_ROLE_WARNING]           = { 3, THEME_DEFAULT, THEME_BOLD },
    [UI_ROLE_MARKED]            = { 5, THEME_DEFAULT, THEME_BOLD },
    [UI_ROLE_REACHABLE]         = { 2, THEME_DEFAULT, 0 },
    [UI_ROLE_UNREACHABLE]       = { 1, THEME_DEFAULT, THEME_BOLD },
    [UI_ROLE_UNKNOWN]           = { 3, THEME_DEFAULT, 0 },
    [UI_ROLE_ABSENT]            = { THEME_DEFAULT, THEME_DEFAULT, THEME_DIM },
    [UI_ROLE_DELIVERED_YES]     = { 2, THEME_DEFAULT, 0 },
    [UI_ROLE_DELIVERED_NO]      = { 6, THEME_DEFAULT, 0 },
    [UI_ROLE_DELIVERED_UNKNOWN] = { 3, THEME_DEFAULT, 0 },
};

static const char *const theme_colour_names[8] = {
    "black", "red", "green", "yellow", "blue", "magenta", "cyan", "white",
};

static const struct {
    const char *name;
    unsigned    bit;
} theme_attr_names[] = {
    { "bold", THEME_BOLD },           { "dim", THEME_DIM },
    { "underline", THEME_UNDERLINE }, { "reverse", THEME_REVERSE },
    { "standout", THEME_STANDOUT },   { "italic", THEME_ITALIC },
    { "blink", THEME_BLINK },
};

const char *
ui_role_name(enum ui_role r)
{
    if ((unsigned)r >= UI_ROLE__COUNT)
        return "?";
    return theme_role_names[r];
}

void
theme_builtin(struct theme *t)
{
    snprintf(t->name, sizeof(t->name), "dark");
    memcpy(t->style, theme_dark, sizeof(t->style));
}

/* A colour value: a name, "bright_NAME", "default" or 0-255. */
static int
theme_colour(const cJSON *v, short *out)
{
    const char *s;

    if (cJSON_IsNumber(v)) {
        if (v->valuedouble < 0 || v->valuedouble > 255 ||
            v->valuedouble != (double)(int)v->valuedouble)
            return -1;
        *out = (short)v->valuedouble;
        return 0;
    }
    if (!cJSON_IsString(v))
        return -1;
    s = v->valuestring;
    if (strcmp(s, "default") == 0) {
        *out = THEME_DEFAULT;
        return 0;
    }
    for (short i = 0; i < 8; i++) {
        if (strcmp(s, theme_colour_names[i]) == 0) {
            *out = i;
            return 0;
        }
        if (strncmp(s, "bright_", 7) == 0 &&
            strcmp(s + 7, theme_colour_names[i]) == 0) {
            *out = (short)(i + 8);
            return 0;
        }
    }
    return -1;
}

/* What a value looks like, for messages (strings sanitized). */
static char *
theme_describe(const cJSON *v)
{
    char *raw, *safe;

    if (cJSON_IsString(v)) {
        safe = str_sanitized(v->valuestring);
        raw = str_printf("\"%.40s\"", safe);
        free(safe);
        return raw;
    }
    if (cJSON_IsNumber(v))
        return str_printf("%g", v->valuedouble);
    if (cJSON_IsBool(v))
        return xstrdup(cJSON_IsTrue(v) ? "true" : "false");
    if (cJSON_IsNull(v))
        return xstrdup("null");
    return xstrdup(cJSON_IsArray(v) ? "an array" : "an object");
}

/* One role's object into *st; -1 with *why (caller frees). */
static int
theme_style_from_json(const cJSON *o, struct theme_style *st, char **why)
{
    const cJSON *v;
    char        *what;

    if (!cJSON_IsObject(o)) {
        what = theme_describe(o);
        *why = str_printf("is %s, expected an object with fg, bg, attrs",
            what);
        free(what);
        return -1;
    }
    cJSON_ArrayForEach(v, o) {
        if (strcmp(v->string, "fg") == 0 || strcmp(v->string, "bg") == 0) {
            short *c = v->string[0] == 'f' ? &st->fg : &st->bg;

            if (theme_colour(v, c) != 0) {
                what = theme_describe(v);
                *why = str_printf("%s %s is not a colour (black, red, "
                    "green, yellow, blue, magenta, cyan, white, bright_NAME, "
                    "default, or 0-255)", v->string, what);
                free(what);
                return -1;
            }
        } else if (strcmp(v->string, "attrs") == 0) {
            const cJSON *a;

            if (!cJSON_IsArray(v)) {
                *why = str_printf("attrs must be an array of names");
                return -1;
            }
            st->attrs = 0;
            cJSON_ArrayForEach(a, v) {
                size_t k;

                for (k = 0; k < sizeof(theme_attr_names) /
                    sizeof(theme_attr_names[0]); k++) {
                    if (cJSON_IsString(a) &&
                        strcmp(a->valuestring, theme_attr_names[k].name) == 0)
                        break;
                }
                if (k == sizeof(theme_attr_names) /
                    sizeof(theme_attr_names[0])) {
                    what = theme_describe(a);
                    *why = str_printf("attr %s is not one of bold, dim, "
                        "underline, reverse, standout, italic, blink", what);
                    free(what);
                    return -1;
                }
                st->attrs |= theme_attr_names[k].bit;
            }
        } else {
            char *key = str_sanitized(v->string);

            *why = str_printf("unknown key \"%.40s\" (expected fg, bg, "
                "attrs)", key);
            free(key);
            return -1;
        }
    }
    return 0;
}

/* Line and column of a cJSON error position, for messages. */
static void
theme_position(const char *text, const char *at, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (const char *p = text; at != NULL && p < at && *p != '\0'; p++) {
        if (*p == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

int
theme_parse(struct theme *t, const char *text, const char *origin,
    char **cause)
{
    cJSON       *root;
    const cJSON *roles, *r, *name;
    char        *why = NULL;
    int          rc = -1;

    theme_builtin(t);
    root = cJSON_Parse(text);
    if (root == NULL) {
        int line, col;

        theme_position(text, cJSON_GetErrorPtr(), &line, &col);
        *cause = str_printf("%s: not valid JSON (line %d, column %d)",
            origin, line, col);
        return -1;
    }
    roles = cJSON_GetObjectItemCaseSensitive(root, "roles");
    if (!cJSON_IsObject(roles)) {
        *cause = str_printf("%s: no \"roles\" object", origin);
        goto out;
    }
    cJSON_ArrayForEach(r, roles) {
        int i;

        for (i = 0; i < UI_ROLE__COUNT; i++) {
            if (strcmp(r->string, theme_role_names[i]) == 0)
                break;
        }
        if (i == UI_ROLE__COUNT) {
            char *key = str_sanitized(r->string);

            *cause = str_printf("%s: unknown role \"%.40s\"", origin, key);
            free(key);
            goto out;
        }
        /* A role the file names is the file's alone: colours it leaves
         * out are the terminal's, attributes it leaves out are none. */
        t->style[i].fg = THEME_DEFAULT;
        t->style[i].bg = THEME_DEFAULT;
        t->style[i].attrs = 0;
        if (theme_style_from_json(r, &t->style[i], &why) != 0) {
            *cause = str_printf("%s: role \"%s\": %s", origin,
                theme_role_names[i], why);
            free(why);
            goto out;
        }
    }
    name = cJSON_GetObjectItemCaseSensitive(root, "name");
    if (cJSON_IsString(name) && name->valuestring[0] != '\0')
        str_sanitize(t->name, sizeof(t->name), name->valuestring,
            strlen(name->valuestring));
    rc = 0;
out:
    cJSON_Delete(root);
    if (rc != 0)
        theme_builtin(t);
    return rc;
}

/* The directory of the running binary, symlinks resolved, into buf;
 * false when /proc/self/exe cannot be read. */
static bool
theme_exe_dir(char *buf, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", buf, size - 1);
    char   *slash;

    if (n <= 0 || (size_t)n >= size - 1)
        return false;
    buf[n] = '\0';
    slash = strrchr(buf, '/');
    if (slash == NULL)
        return false;
    *(slash == buf ? slash + 1 : slash) = '\0';
    return true;
}

/* dir joined with rel into buf, its leading "../" steps taken lexically
 * (the result names the directory even when it does not exist). */
static void
theme_join(char *buf, size_t size, const char *dir, const char *rel)
{
    char base[PATH_MAX];

    snprintf(base, sizeof(base), "%s", dir);
    while (strncmp(rel, "../", 3) == 0) {
        char *slash = strrchr(base, '/');

        if (slash == NULL || slash == base)
            break;
        *slash = '\0';
        rel += 3;
    }
    snprintf(buf, size, "%s/%s", base, rel);
}

static bool
theme_is_dir(const char *path)
{
    struct stat sb;

    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/*
 * The theme directories in search order: $MCPTOP_THEMES; the installed
 * themes, MCPTOP_THEMES_REL from the binary's directory; then themes/
 * beside the binary when it exists (a build tree links it to the source
 * themes). Worked out once; the strings are static.
 */
static size_t
theme_dirs(const char *dirs[3])
{
    static char installed[PATH_MAX + 64], beside[PATH_MAX + 16];
    static bool have_installed, have_beside, done;
    const char *env = getenv("MCPTOP_THEMES");
    size_t      n = 0;

    if (!done) {
        char exe[PATH_MAX];

        done = true;
        if (theme_exe_dir(exe, sizeof(exe))) {
            theme_join(installed, sizeof(installed), exe, MCPTOP_THEMES_REL);
            have_installed = true;
            snprintf(beside, sizeof(beside), "%s/themes", exe);
            have_beside = theme_is_dir(beside);
        }
    }
    if (env != NULL && env[0] != '\0')
        dirs[n++] = env;
    if (have_installed)
        dirs[n++] = installed;
    if (have_beside)
        dirs[n++] = beside;
    return n;
}

char *
theme_search_path(void)
{
    const char *dirs[3];
    size_t      n = theme_dirs(dirs);
    const char *env = getenv("MCPTOP_THEMES");
    bool        has_env = env != NULL && env[0] != '\0';
    char       *out = xstrdup(has_env ? "" : "$MCPTOP_THEMES (unset)");

    for (size_t i = 0; i < n; i++) {
        char *next = str_printf("%s%s%s%s", out, out[0] != '\0' ? ", " : "",
            dirs[i], has_env && i == 0 ? " ($MCPTOP_THEMES)" : "");

        free(out);
        out = next;
    }
    return out;
}

/* Read a whole (small) file; NULL with *cause. */
static char *
theme_read(const char *path, char **cause)
{
    const char *why;
    FILE       *f = file_fopen_regular(path, &why);   /* never a wait */
    char       *buf;
    size_t      n;

    if (f == NULL) {
        *cause = str_printf("%s: %s", path, why);
        return NULL;
    }
    buf = xmalloc(THEME_MAX_BYTES + 1);
    n = fread(buf, 1, THEME_MAX_BYTES + 1, f);
    fclose(f);
    if (n > THEME_MAX_BYTES) {
        free(buf);
        *cause = str_printf("%s: larger than %d bytes", path,
            THEME_MAX_BYTES);
        return NULL;
    }
    buf[n] = '\0';
    return buf;
}

static bool
theme_is_path(const char *s)
{
    size_t len = strlen(s);

    return strchr(s, '/') != NULL ||
        (len > 5 && strcmp(s + len - 5, ".json") == 0);
}

int
theme_load(struct theme *t, const char *name_or_path, char **cause)
{
    const char *dirs[3];
    char       *path = NULL, *text;
    size_t      n;
    int         rc;

    theme_builtin(t);
    if (theme_is_path(name_or_path)) {
        path = xstrdup(name_or_path);
    } else {
        n = theme_dirs(dirs);
        for (size_t i = 0; i < n && path == NULL; i++) {
            struct stat sb;
            char       *p = str_printf("%s/%s.json", dirs[i], name_or_path);

            if (stat(p, &sb) == 0 && S_ISREG(sb.st_mode))
                path = p;
            else
                free(p);
        }
        if (path == NULL) {
            if (strcmp(name_or_path, "dark") == 0)
                return 0;
            {
                char *safe = str_sanitized(name_or_path);
                char *where = theme_search_path();

                *cause = str_printf("no theme named \"%.60s\" (looked for "
                    "%.60s.json in %s)", safe, safe, where);
                free(where);
                free(safe);
            }
            return -1;
        }
    }
    text = theme_read(path, cause);
    if (text == NULL) {
        free(path);
        return -1;
    }
    rc = theme_parse(t, text, path, cause);
    free(text);
    free(path);
    return rc;
}

static int
theme_rank(const char *name)
{
    static const char *const first[] = { "dark", "light", "high-contrast" };

    for (int i = 0; i < 3; i++) {
        if (strcmp(name, first[i]) == 0)
            return i;
    }
    return 3;
}

static int
theme_name_cmp(const void *a, const void *b)
{
    const char *x = *(const char *const *)a;
    const char *y = *(const char *const *)b;
    int         rx = theme_rank(x), ry = theme_rank(y);

    if (rx != ry)
        return rx < ry ? -1 : 1;
    return strcmp(x, y);
}

size_t
theme_list(char ***names)
{
    const char *dirs[3];
    size_t      ndirs = theme_dirs(dirs), n = 0, cap = 8;
    char      **v = xmalloc(cap * sizeof(*v));
    bool        have_dark = false;

    for (size_t d = 0; d < ndirs; d++) {
        DIR           *dir = opendir(dirs[d]);
        struct dirent *de;

        if (dir == NULL)
            continue;
        while ((de = readdir(dir)) != NULL) {
            size_t len = strlen(de->d_name);
            char  *name;
            bool   dup = false;

            if (len <= 5 || strcmp(de->d_name + len - 5, ".json") != 0 ||
                de->d_name[0] == '.')
                continue;
            name = str_ndup(de->d_name, len - 5);
            for (size_t i = 0; i < n && !dup; i++)
                dup = strcmp(v[i], name) == 0;
            if (dup || n >= 64) {
                free(name);
                continue;
            }
            if (n == cap) {
                cap *= 2;
                v = xrealloc(v, cap * sizeof(*v));
            }
            have_dark = have_dark || strcmp(name, "dark") == 0;
            v[n++] = name;
        }
        closedir(dir);
    }
    if (!have_dark) {
        if (n == cap)
            v = xrealloc(v, (cap + 1) * sizeof(*v));
        v[n++] = xstrdup("dark");
    }
    qsort(v, n, sizeof(*v), theme_name_cmp);
    *names = v;
    return n;
}

void
theme_list_free(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}
