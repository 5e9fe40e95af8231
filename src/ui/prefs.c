/*
 * The TUI's preferences file, tui.json (see include/ui/prefs.h): read with
 * cJSON into struct prefs, every problem named by the file and the key;
 * written from struct prefs atomically (temp file, fsync, rename) with
 * mode 0600 in 0700 directories, as the OAuth token file is.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ui/prefs.h"
#include "util/str.h"
#include "util/xmalloc.h"

/* The biggest file read: preferences are small, a huge file is a
 * mistake. */
#define PREFS_FILE_MAX (1024 * 1024)

/* See prefs.h. */
char *
prefs_path(void)
{
    const char *env = getenv("XDG_CONFIG_HOME");

    /* A relative XDG_CONFIG_HOME is ignored (XDG spec). */
    if (env != NULL && env[0] == '/')
        return str_printf("%s/mcptop/tui.json", env);
    env = getenv("HOME");
    if (env != NULL && env[0] != '\0')
        return str_printf("%s/.config/mcptop/tui.json", env);
    return NULL;
}

/* See prefs.h. */
void
prefs_init(struct prefs *p)
{
    memset(p, 0, sizeof(*p));
    p->mouse = -1;
}

/* See prefs.h. */
void
prefs_view_done(struct prefs_view *v)
{
    free(v->name);
    free(v->sort);
    free(v->filter);
    free(v->group);
    for (size_t i = 0; i < v->ncolumns; i++)
        free(v->columns[i]);
    free(v->columns);
    memset(v, 0, sizeof(*v));
}

/* See prefs.h. */
void
prefs_done(struct prefs *p)
{
    for (size_t i = 0; i < p->nviews; i++)
        prefs_view_done(&p->views[i]);
    free(p->views);
    free(p->default_view);
    free(p->theme);
    for (size_t i = 0; i < p->nhistory; i++)
        free(p->history[i]);
    free(p->history);
    for (size_t i = 0; i < p->ndirty_views; i++)
        free(p->dirty_views[i]);
    free(p->dirty_views);
    prefs_init(p);
}

/* Record view name as changed (once). */
static void
prefs_dirty_view(struct prefs *p, const char *name)
{
    for (size_t i = 0; i < p->ndirty_views; i++) {
        if (strcmp(p->dirty_views[i], name) == 0)
            return;
    }
    p->dirty_views = xrealloc(p->dirty_views, (p->ndirty_views + 1) *
        sizeof(*p->dirty_views));
    p->dirty_views[p->ndirty_views++] = xstrdup(name);
}

/* Forget what changed: p is what the file says. */
static void
prefs_clean(struct prefs *p)
{
    for (size_t i = 0; i < p->ndirty_views; i++)
        free(p->dirty_views[i]);
    free(p->dirty_views);
    p->dirty_views = NULL;
    p->ndirty_views = 0;
    p->dirty_default = p->dirty_theme = p->dirty_mouse = false;
    p->dirty_history = 0;
}

/* The JSON type of v, in words. */
static const char *
prefs_type(const cJSON *v)
{
    if (cJSON_IsString(v))
        return "a string";
    if (cJSON_IsNumber(v))
        return "a number";
    if (cJSON_IsBool(v))
        return "a boolean";
    if (cJSON_IsNull(v))
        return "null";
    if (cJSON_IsArray(v))
        return "an array";
    if (cJSON_IsObject(v))
        return "an object";
    return "not a value";
}

/* Keep the first problem: "FILE: KEY: what". */
static void
prefs_problem(char **cause, const char *name, const char *key,
    const char *what)
{
    char k[160];

    if (*cause != NULL)
        return;
    str_sanitize(k, sizeof(k), key, strlen(key));
    *cause = str_printf("%s: %s: %s", name, k, what);
}

/* True when s has a control character (C0 or DEL): never drawn, so never
 * taken from the file. */
static bool
prefs_has_control(const char *s)
{
    for (; *s != '\0'; s++) {
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return true;
    }
    return false;
}

/* A string member or NULL (a problem when present but not a string, or
 * with a control character). */
static char *
prefs_string(const cJSON *v, const char *name, const char *key, char **cause)
{
    char what[64];

    if (v == NULL)
        return NULL;
    if (cJSON_IsString(v) && v->valuestring != NULL &&
        prefs_has_control(v->valuestring)) {
        prefs_problem(cause, name, key, "a control character in it");
        return NULL;
    }
    if (cJSON_IsString(v) && v->valuestring != NULL)
        return xstrdup(v->valuestring);
    snprintf(what, sizeof(what), "%s, not a string", prefs_type(v));
    prefs_problem(cause, name, key, what);
    return NULL;
}

/* One view's object into v (v->name set by the caller). */
static void
prefs_parse_view(struct prefs_view *v, const cJSON *o, const char *name,
    char **cause)
{
    const cJSON *it;
    char         key[PREFS_NAME_MAX + 48], what[64];

    if (!cJSON_IsObject(o)) {
        snprintf(key, sizeof(key), "views.%s", v->name);
        snprintf(what, sizeof(what), "%s, not an object", prefs_type(o));
        prefs_problem(cause, name, key, what);
        return;
    }
    cJSON_ArrayForEach(it, o) {
        snprintf(key, sizeof(key), "views.%s.%s", v->name,
            it->string != NULL ? it->string : "");
        if (it->string == NULL) {
            continue;
        } else if (strcmp(it->string, "sort") == 0) {
            v->sort = prefs_string(it, name, key, cause);
        } else if (strcmp(it->string, "filter") == 0) {
            v->filter = prefs_string(it, name, key, cause);
        } else if (strcmp(it->string, "group") == 0) {
            v->group = prefs_string(it, name, key, cause);
        } else if (strcmp(it->string, "columns") == 0) {
            const cJSON *c;
            size_t       i = 0;

            if (!cJSON_IsArray(it)) {
                snprintf(what, sizeof(what), "%s, not an array of column "
                    "names", prefs_type(it));
                prefs_problem(cause, name, key, what);
                continue;
            }
            v->has_columns = true;
            v->columns = xcalloc((size_t)cJSON_GetArraySize(it) + 1,
                sizeof(*v->columns));
            cJSON_ArrayForEach(c, it) {
                char ckey[PREFS_NAME_MAX + 64];

                snprintf(ckey, sizeof(ckey), "%s[%zu]", key, i++);
                if (!cJSON_IsString(c) || prefs_has_control(c->valuestring)) {
                    snprintf(what, sizeof(what), "%s, not a column name",
                        cJSON_IsString(c) ? "a control character" :
                        prefs_type(c));
                    prefs_problem(cause, name, ckey, what);
                    continue;
                }
                v->columns[v->ncolumns++] = xstrdup(c->valuestring);
            }
        } else {
            prefs_problem(cause, name, key, "unknown key (a view has sort, "
                "filter, group, columns)");
        }
    }
}

/* The "views" object into p. */
static void
prefs_parse_views(struct prefs *p, const cJSON *o, const char *name,
    char **cause)
{
    const cJSON *it;
    char         what[80];

    if (!cJSON_IsObject(o)) {
        snprintf(what, sizeof(what), "%s, not an object of views",
            prefs_type(o));
        prefs_problem(cause, name, "views", what);
        return;
    }
    p->views = xcalloc((size_t)cJSON_GetArraySize(o) + 1, sizeof(*p->views));
    cJSON_ArrayForEach(it, o) {
        struct prefs_view *v;

        if (it->string == NULL)
            continue;
        if (it->string[0] == '\0' || strlen(it->string) > PREFS_NAME_MAX ||
            strchr(it->string, ' ') != NULL || prefs_has_control(it->string)) {
            char key[PREFS_NAME_MAX + 16];

            snprintf(key, sizeof(key), "views.%.*s", PREFS_NAME_MAX,
                it->string);
            prefs_problem(cause, name, key, "a view name is 1 to 64 "
                "characters with no space");
            continue;
        }
        if (prefs_view(p, it->string) != NULL)
            continue;           /* cJSON keeps duplicates: the first wins */
        if (p->nviews == PREFS_VIEWS_MAX) {
            snprintf(what, sizeof(what), "more than %d views (the first %d "
                "kept)", PREFS_VIEWS_MAX, PREFS_VIEWS_MAX);
            prefs_problem(cause, name, "views", what);
            break;
        }
        v = &p->views[p->nviews++];
        v->name = xstrdup(it->string);
        prefs_parse_view(v, it, name, cause);
    }
}

/* The line and column of byte off in text (1-based). */
static void
prefs_where(const char *text, size_t off, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

/* See prefs.h. */
int
prefs_parse(struct prefs *p, const char *name, const char *text, size_t len,
    char **cause)
{
    const char *end = NULL;
    cJSON      *root, *it;
    char        what[80];

    prefs_done(p);
    *cause = NULL;
    root = cJSON_ParseWithLengthOpts(text, len, &end, false);
    if (root == NULL) {
        int line, col;

        prefs_where(text, end != NULL && end >= text ? (size_t)(end - text) :
            0, &line, &col);
        *cause = str_printf("%s:%d:%d: not valid JSON", name, line, col);
        return -1;
    }
    if (!cJSON_IsObject(root)) {
        *cause = str_printf("%s: the top level is %s, not an object", name,
            prefs_type(root));
        cJSON_Delete(root);
        return -1;
    }
    cJSON_ArrayForEach(it, root) {
        if (it->string == NULL)
            continue;
        if (strcmp(it->string, "views") == 0) {
            if (p->views == NULL)
                prefs_parse_views(p, it, name, cause);
        } else if (strcmp(it->string, "default_view") == 0) {
            free(p->default_view);
            p->default_view = prefs_string(it, name, "default_view", cause);
        } else if (strcmp(it->string, "theme") == 0) {
            free(p->theme);
            p->theme = prefs_string(it, name, "theme", cause);
        } else if (strcmp(it->string, "mouse") == 0) {
            if (cJSON_IsBool(it)) {
                p->mouse = cJSON_IsTrue(it) ? 1 : 0;
            } else {
                snprintf(what, sizeof(what), "%s, not true or false",
                    prefs_type(it));
                prefs_problem(cause, name, "mouse", what);
            }
        } else if (strcmp(it->string, "history") == 0) {
            const cJSON *h;

            if (!cJSON_IsArray(it)) {
                snprintf(what, sizeof(what), "%s, not an array of strings",
                    prefs_type(it));
                prefs_problem(cause, name, "history", what);
                continue;
            }
            cJSON_ArrayForEach(h, it) {
                if (cJSON_IsString(h) && !prefs_has_control(h->valuestring))
                    prefs_history_add(p, h->valuestring);
                else
                    prefs_problem(cause, name, "history", "an entry that is "
                        "not a string, or has a control character");
            }
        } else {
            prefs_problem(cause, name, it->string, "unknown key (tui.json "
                "has views, default_view, theme, mouse, history)");
        }
    }
    cJSON_Delete(root);
    prefs_clean(p);
    return *cause != NULL ? 1 : 0;
}

/* See prefs.h. */
int
prefs_load(struct prefs *p, const char *path, char **cause)
{
    struct stat st;
    char       *text;
    ssize_t     got;
    size_t      off = 0;
    int         fd, rc;

    prefs_done(p);
    *cause = NULL;
    /* O_NONBLOCK: a FIFO (or a device) at the path must not block the
     * open; fstat then refuses anything but a regular file. */
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        if (errno == ENOENT)
            return 0;
        *cause = str_printf("%s: cannot read: %s", path, strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        *cause = str_printf("%s: not a regular file", path);
        close(fd);
        return -1;
    }
    if (st.st_size > PREFS_FILE_MAX) {
        *cause = str_printf("%s: %lld bytes, more than the %d a preferences "
            "file may have", path, (long long)st.st_size, PREFS_FILE_MAX);
        close(fd);
        return -1;
    }
    text = xmalloc((size_t)st.st_size + 1);
    while (off < (size_t)st.st_size &&
        (got = read(fd, text + off, (size_t)st.st_size - off)) > 0)
        off += (size_t)got;
    close(fd);
    text[off] = '\0';
    rc = prefs_parse(p, path, text, off, cause);
    free(text);
    return rc;
}

/* mkdir -p of path's directory, each made 0700. */
static int
prefs_mkdirs(const char *path, char **cause)
{
    char  *dir = xstrdup(path);
    char  *slash = strrchr(dir, '/');
    int    rc = 0;

    if (slash == NULL || slash == dir) {
        free(dir);
        return 0;
    }
    *slash = '\0';
    for (char *p = dir + 1; ; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        {
            char c = *p;

            *p = '\0';
            if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
                *cause = str_printf("cannot make %s: %s", dir,
                    strerror(errno));
                rc = -1;
            }
            *p = c;
        }
        if (rc != 0 || *p == '\0')
            break;
    }
    free(dir);
    return rc;
}

/* The JSON text of p. Caller frees (cJSON_free). */
static char *
prefs_text(const struct prefs *p)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *views = cJSON_AddObjectToObject(root, "views");
    char  *text;

    for (size_t i = 0; i < p->nviews; i++) {
        const struct prefs_view *v = &p->views[i];
        cJSON                   *o = cJSON_AddObjectToObject(views, v->name);

        if (v->sort != NULL)
            cJSON_AddStringToObject(o, "sort", v->sort);
        if (v->filter != NULL)
            cJSON_AddStringToObject(o, "filter", v->filter);
        if (v->group != NULL)
            cJSON_AddStringToObject(o, "group", v->group);
        if (v->has_columns) {
            cJSON *a = cJSON_AddArrayToObject(o, "columns");

            for (size_t c = 0; c < v->ncolumns; c++)
                cJSON_AddItemToArray(a, cJSON_CreateString(v->columns[c]));
        }
    }
    if (p->default_view != NULL)
        cJSON_AddStringToObject(root, "default_view", p->default_view);
    if (p->theme != NULL)
        cJSON_AddStringToObject(root, "theme", p->theme);
    if (p->mouse >= 0)
        cJSON_AddBoolToObject(root, "mouse", p->mouse == 1);
    if (p->nhistory > 0) {
        cJSON *a = cJSON_AddArrayToObject(root, "history");

        for (size_t i = 0; i < p->nhistory; i++)
            cJSON_AddItemToArray(a, cJSON_CreateString(p->history[i]));
    }
    text = cJSON_Print(root);
    cJSON_Delete(root);
    return text;
}

/* See prefs.h. */
int
prefs_save(const struct prefs *p, const char *path, char **cause)
{
    char   *text = prefs_text(p), *tmp = NULL, *dir, *slash;
    size_t  len, off = 0;
    int     fd, rc = -1;

    *cause = NULL;
    if (text == NULL) {
        *cause = xstrdup("cannot serialise the preferences");
        return -1;
    }
    len = strlen(text);
    if (prefs_mkdirs(path, cause) != 0)
        goto out_text;
    tmp = str_printf("%s.XXXXXX", path);
    fd = mkstemp(tmp);
    if (fd < 0) {
        *cause = str_printf("cannot write %s: %s", tmp, strerror(errno));
        goto out_tmp;
    }
    if (fchmod(fd, 0600) != 0) {
        *cause = str_printf("cannot write %s: %s", tmp, strerror(errno));
        close(fd);
        unlink(tmp);
        goto out_tmp;
    }
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    if (off < len || write(fd, "\n", 1) != 1 || fsync(fd) != 0) {
        *cause = str_printf("cannot write %s: %s", tmp, strerror(errno));
        close(fd);
        unlink(tmp);
        goto out_tmp;
    }
    if (close(fd) != 0 || rename(tmp, path) != 0) {
        *cause = str_printf("cannot replace %s: %s", path, strerror(errno));
        unlink(tmp);
        goto out_tmp;
    }
    /* The rename itself on disk: fsync the directory (best effort). */
    dir = xstrdup(path);
    slash = strrchr(dir, '/');
    if (slash != NULL) {
        int dfd;

        *slash = '\0';
        dfd = open(dir[0] != '\0' ? dir : "/", O_RDONLY | O_DIRECTORY |
            O_CLOEXEC);
        if (dfd >= 0) {
            (void)fsync(dfd);
            close(dfd);
        }
    }
    free(dir);
    rc = 0;
out_tmp:
    free(tmp);
out_text:
    cJSON_free(text);
    return rc;
}

/* See prefs.h. */
const struct prefs_view *
prefs_view(const struct prefs *p, const char *name)
{
    for (size_t i = 0; i < p->nviews; i++) {
        if (strcmp(p->views[i].name, name) == 0)
            return &p->views[i];
    }
    return NULL;
}

static char *
prefs_dup(const char *s)
{
    return s != NULL ? xstrdup(s) : NULL;
}

/* See prefs.h. */
void
prefs_view_set(struct prefs *p, const struct prefs_view *v)
{
    struct prefs_view copy = { 0 };
    size_t            i;

    copy.name = xstrdup(v->name);
    copy.sort = prefs_dup(v->sort);
    copy.filter = prefs_dup(v->filter);
    copy.group = prefs_dup(v->group);
    copy.has_columns = v->has_columns;
    copy.columns = xcalloc(v->ncolumns + 1, sizeof(*copy.columns));
    for (size_t c = 0; c < v->ncolumns; c++)
        copy.columns[copy.ncolumns++] = xstrdup(v->columns[c]);
    prefs_dirty_view(p, v->name);
    for (i = 0; i < p->nviews; i++) {
        if (strcmp(p->views[i].name, v->name) == 0)
            break;
    }
    if (i < p->nviews) {
        prefs_view_done(&p->views[i]);
    } else {
        p->views = xrealloc(p->views, (p->nviews + 1) * sizeof(*p->views));
        p->nviews++;
    }
    p->views[i] = copy;
}

/* See prefs.h. */
bool
prefs_view_delete(struct prefs *p, const char *name)
{
    for (size_t i = 0; i < p->nviews; i++) {
        if (strcmp(p->views[i].name, name) != 0)
            continue;
        prefs_dirty_view(p, name);
        prefs_view_done(&p->views[i]);
        memmove(&p->views[i], &p->views[i + 1], (p->nviews - i - 1) *
            sizeof(*p->views));
        p->nviews--;
        if (p->default_view != NULL && strcmp(p->default_view, name) == 0)
            prefs_set_default_view(p, NULL);
        return true;
    }
    return false;
}

/* See prefs.h. */
void
prefs_view_names(const struct prefs *p, char *buf, size_t n)
{
    size_t off = 0;

    if (n == 0)
        return;
    buf[0] = '\0';
    for (size_t i = 0; i < p->nviews && off + 1 < n; i++) {
        char shown[PREFS_NAME_MAX + 1];
        int  w;

        /* Shown as the terminal would draw it: a name from the file may
         * hold a C1 control or a bidirectional override (U+202E). */
        str_sanitize(shown, sizeof(shown), p->views[i].name,
            strlen(p->views[i].name));
        w = snprintf(buf + off, n - off, "%s%s", i > 0 ? " " : "", shown);

        if (w < 0 || (size_t)w >= n - off)
            break;
        off += (size_t)w;
    }
}

/* See prefs.h. */
void
prefs_set_string(char **field, const char *value)
{
    free(*field);
    *field = prefs_dup(value);
}

/* See prefs.h. */
void
prefs_set_default_view(struct prefs *p, const char *name)
{
    prefs_set_string(&p->default_view, name);
    p->dirty_default = true;
}

/* See prefs.h. */
void
prefs_set_theme(struct prefs *p, const char *name)
{
    prefs_set_string(&p->theme, name);
    p->dirty_theme = true;
}

/* See prefs.h. */
void
prefs_set_mouse(struct prefs *p, bool on)
{
    p->mouse = on ? 1 : 0;
    p->dirty_mouse = true;
}

/* See prefs.h. */
int
prefs_save_merged(struct prefs *p, const char *path, char **cause)
{
    struct prefs disk;
    char        *why = NULL;
    size_t       nnew = p->dirty_history < p->nhistory ? p->dirty_history :
        p->nhistory;

    *cause = NULL;
    prefs_init(&disk);
    if (prefs_load(&disk, path, &why) != 0) {
        *cause = str_printf("%s (changed since the start; left alone)", why);
        free(why);
        prefs_done(&disk);
        return -1;
    }
    for (size_t i = 0; i < p->ndirty_views; i++) {
        const struct prefs_view *v = prefs_view(p, p->dirty_views[i]);

        if (v != NULL)
            prefs_view_set(&disk, v);
        else
            prefs_view_delete(&disk, p->dirty_views[i]);
    }
    /* A default view that names a view deleted elsewhere is not kept. */
    if (p->dirty_default || (disk.default_view != NULL &&
        prefs_view(&disk, disk.default_view) == NULL))
        prefs_set_string(&disk.default_view, p->dirty_default ?
            p->default_view : NULL);
    if (p->dirty_theme)
        prefs_set_string(&disk.theme, p->theme);
    if (p->dirty_mouse)
        disk.mouse = p->mouse;
    for (size_t i = p->nhistory - nnew; i < p->nhistory; i++)
        prefs_history_add(&disk, p->history[i]);
    if (prefs_save(&disk, path, cause) != 0) {
        prefs_done(&disk);
        return -1;
    }
    prefs_clean(&disk);
    prefs_done(p);
    *p = disk;
    return 0;
}

/* See prefs.h. */
void
prefs_history_add(struct prefs *p, const char *line)
{
    if (line == NULL || line[0] == '\0')
        return;
    if (p->nhistory > 0 && strcmp(p->history[p->nhistory - 1], line) == 0)
        return;
    if (p->nhistory == PREFS_HISTORY_MAX) {
        free(p->history[0]);
        memmove(&p->history[0], &p->history[1], (p->nhistory - 1) *
            sizeof(*p->history));
        p->nhistory--;
    }
    if (p->history == NULL)
        p->history = xcalloc(PREFS_HISTORY_MAX, sizeof(*p->history));
    p->history[p->nhistory++] = xstrdup(line);
    p->dirty_history++;
}
