/*
 * Tests for tui.json (issue 34, src/ui/prefs.c): the path (XDG_CONFIG_HOME,
 * a relative one ignored, HOME), a whole file read, every malformed input
 * named by the file and the key (not JSON with its line and column, a top
 * level that is not an object, a wrong type, an unknown key, a bad view
 * name; what was well-formed kept), the history's cap, views set, replaced
 * and deleted, and the write: directories made 0700, the file 0600, no
 * temp file left, replaced by a rename (a hard link to the old file keeps
 * the old text), read back equal; and a save merged over what another
 * mcptop wrote since (its views, history, mouse kept).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ui/prefs.h"

static const char good[] =
    "{\"views\": {\"triage\": {\"sort\": \"rtt,desc\", \"filter\": "
    "\"kind:connect\", \"group\": \"cause\", \"columns\": [\"name\", "
    "\"health\", \"rtt\"]}, \"calm\": {\"group\": \"none\"}},"
    " \"default_view\": \"triage\", \"theme\": \"light\", \"mouse\": false,"
    " \"history\": [\"sort rtt\", \"view triage\"]}";

static void
test_path(void **state)
{
    char *p;

    (void)state;
    setenv("XDG_CONFIG_HOME", "/x/conf", 1);
    setenv("HOME", "/home/u", 1);
    p = prefs_path();
    assert_string_equal(p, "/x/conf/mcptop/tui.json");
    free(p);
    setenv("XDG_CONFIG_HOME", "relative/conf", 1);
    p = prefs_path();
    assert_string_equal(p, "/home/u/.config/mcptop/tui.json");
    free(p);
    unsetenv("XDG_CONFIG_HOME");
    unsetenv("HOME");
    assert_null(prefs_path());
}

static void
test_parse_good(void **state)
{
    struct prefs             p;
    const struct prefs_view *v;
    char                    *cause = NULL;
    char                     names[64];

    (void)state;
    prefs_init(&p);
    assert_int_equal(prefs_parse(&p, "t.json", good, strlen(good), &cause),
        0);
    assert_null(cause);
    assert_int_equal(p.nviews, 2);
    v = prefs_view(&p, "triage");
    assert_non_null(v);
    assert_string_equal(v->sort, "rtt,desc");
    assert_string_equal(v->filter, "kind:connect");
    assert_string_equal(v->group, "cause");
    assert_true(v->has_columns);
    assert_int_equal(v->ncolumns, 3);
    assert_string_equal(v->columns[2], "rtt");
    v = prefs_view(&p, "calm");
    assert_null(v->sort);
    assert_false(v->has_columns);
    assert_string_equal(p.default_view, "triage");
    assert_string_equal(p.theme, "light");
    assert_int_equal(p.mouse, 0);
    assert_int_equal(p.nhistory, 2);
    assert_string_equal(p.history[1], "view triage");
    prefs_view_names(&p, names, sizeof(names));
    assert_string_equal(names, "triage calm");
    prefs_done(&p);
    assert_int_equal(p.nviews, 0);
    assert_int_equal(p.mouse, -1);
}

/* One malformed input: the rc, and the cause naming what it should. */
static void
bad(const char *text, int want_rc, const char *want_cause)
{
    struct prefs p;
    char        *cause = NULL;
    int          rc;

    prefs_init(&p);
    rc = prefs_parse(&p, "/c/tui.json", text, strlen(text), &cause);
    if (rc != want_rc || cause == NULL || strstr(cause, want_cause) == NULL)
        fail_msg("%s: rc %d, cause \"%s\"; wanted %d, \"%s\"", text, rc,
            cause != NULL ? cause : "(none)", want_rc, want_cause);
    free(cause);
    prefs_done(&p);
}

static void
test_parse_malformed(void **state)
{
    static const char mixed[] = "{\"theme\": \"light\", \"mouse\": 2, "
        "\"views\": {\"a\": {\"sort\": \"rtt\", \"group\": 1}}}";
    struct prefs p;
    char        *cause = NULL;

    (void)state;
    bad("{\"views\": {\n  \"a\": {\"sort\": }}}", -1,
        "/c/tui.json:2:17: not valid JSON");
    bad("", -1, "/c/tui.json:1:1: not valid JSON");
    bad("[1, 2]", -1, "/c/tui.json: the top level is an array, not an object");
    bad("{\"views\": {\"a\": {\"sort\": 3}}}", 1,
        "/c/tui.json: views.a.sort: a number, not a string");
    bad("{\"views\": {\"a\": {\"columns\": \"name\"}}}", 1,
        "views.a.columns: a string, not an array of column names");
    bad("{\"views\": {\"a\": {\"columns\": [\"name\", 7]}}}", 1,
        "views.a.columns[1]: a number, not a column name");
    bad("{\"views\": {\"a\": {\"colour\": \"red\"}}}", 1,
        "views.a.colour: unknown key");
    bad("{\"views\": {\"a\": 1}}", 1, "views.a: a number, not an object");
    bad("{\"views\": {\"two words\": {}}}", 1,
        "views.two words: a view name is 1 to 64 characters");
    bad("{\"views\": []}", 1, "views: an array, not an object of views");
    bad("{\"mouse\": \"yes\"}", 1, "mouse: a string, not true or false");
    bad("{\"theme\": null}", 1, "theme: null, not a string");
    bad("{\"history\": [\"a\", 1]}", 1, "history: an entry that is not a "
        "string");
    bad("{\"defualt_view\": \"a\"}", 1, "defualt_view: unknown key");
    /* Nothing with a control character is taken: it would be drawn. */
    bad("{\"views\": {\"a\": {\"filter\": \"x\\u001b[2J\"}}}", 1,
        "views.a.filter: a control character in it");
    bad("{\"views\": {\"a\\u001b\": {}}}", 1, "a view name is 1 to 64");
    bad("{\"views\": {\"a\": {\"columns\": [\"n\\u0007\"]}}}", 1,
        "views.a.columns[0]: a control character, not a column name");
    bad("{\"history\": [\"\\u001b]52;c;x\"]}", 1, "has a control character");
    /* A problem keeps what was well-formed. */
    prefs_init(&p);
    assert_int_equal(prefs_parse(&p, "t", mixed, strlen(mixed), &cause), 1);
    assert_string_equal(p.theme, "light");
    assert_int_equal(p.mouse, -1);
    assert_string_equal(prefs_view(&p, "a")->sort, "rtt");
    assert_null(prefs_view(&p, "a")->group);
    assert_non_null(strstr(cause, "t: mouse: a number"));
    free(cause);
    prefs_done(&p);
}

static void
test_history_and_views(void **state)
{
    struct prefs      p;
    struct prefs_view v = { 0 };
    char             *cols[] = { "name", "rtt" };
    char              line[32];

    (void)state;
    prefs_init(&p);
    prefs_history_add(&p, "");
    prefs_history_add(&p, "sort rtt");
    prefs_history_add(&p, "sort rtt");        /* the same again: once */
    assert_int_equal(p.nhistory, 1);
    for (int i = 0; i < PREFS_HISTORY_MAX + 20; i++) {
        snprintf(line, sizeof(line), "filter %d", i);
        prefs_history_add(&p, line);
    }
    assert_int_equal(p.nhistory, PREFS_HISTORY_MAX);
    assert_string_equal(p.history[0], "filter 20");
    assert_string_equal(p.history[PREFS_HISTORY_MAX - 1], "filter 119");
    v.name = "triage";
    v.sort = "rtt,desc";
    v.has_columns = true;
    v.columns = cols;
    v.ncolumns = 2;
    prefs_view_set(&p, &v);
    v.sort = "name";
    prefs_view_set(&p, &v);                   /* replaced, not added */
    assert_int_equal(p.nviews, 1);
    assert_string_equal(prefs_view(&p, "triage")->sort, "name");
    assert_string_equal(prefs_view(&p, "triage")->columns[1], "rtt");
    prefs_set_string(&p.default_view, "triage");
    assert_false(prefs_view_delete(&p, "other"));
    assert_true(prefs_view_delete(&p, "triage"));
    assert_int_equal(p.nviews, 0);
    assert_null(p.default_view);              /* it named the view */
    prefs_done(&p);
}

/* Files in dir other than tui.json (a temp file left behind). */
static int
others(const char *dir)
{
    DIR           *d = opendir(dir);
    struct dirent *e;
    int            n = 0;

    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
            strcmp(e->d_name, "tui.json") != 0)
            n++;
    }
    closedir(d);
    return n;
}

static void
test_save_load(void **state)
{
    char         base[] = "/tmp/test_ui_prefs.XXXXXX";
    char         dir[256], path[300], link_path[300], buf[64];
    struct prefs p, q;
    struct stat  st;
    char        *cause = NULL;
    FILE        *f;

    (void)state;
    assert_non_null(mkdtemp(base));
    snprintf(dir, sizeof(dir), "%s/conf/mcptop", base);
    snprintf(path, sizeof(path), "%s/tui.json", dir);
    prefs_init(&p);
    assert_int_equal(prefs_parse(&p, "t", good, strlen(good), &cause), 0);
    /* No file yet: read as empty. */
    prefs_init(&q);
    assert_int_equal(prefs_load(&q, path, &cause), 0);
    assert_int_equal(q.nviews, 0);
    assert_int_equal(prefs_save(&p, path, &cause), 0);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(stat(dir, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    snprintf(buf, sizeof(buf), "%s/conf", base);
    assert_int_equal(stat(buf, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    assert_int_equal(others(dir), 0);
    assert_int_equal(prefs_load(&q, path, &cause), 0);
    assert_int_equal(q.nviews, 2);
    assert_string_equal(prefs_view(&q, "triage")->columns[1], "health");
    assert_string_equal(q.default_view, "triage");
    assert_int_equal(q.mouse, 0);
    assert_int_equal(q.nhistory, 2);
    /* Replaced by a rename: a hard link to the old file keeps the old
     * text (a write in place would change both). */
    snprintf(link_path, sizeof(link_path), "%s/old.json", base);
    assert_int_equal(link(path, link_path), 0);
    prefs_set_string(&p.theme, "high-contrast");
    assert_int_equal(prefs_save(&p, path, &cause), 0);
    assert_int_equal(prefs_load(&q, path, &cause), 0);
    assert_string_equal(q.theme, "high-contrast");
    assert_int_equal(prefs_load(&q, link_path, &cause), 0);
    assert_string_equal(q.theme, "light");
    assert_int_equal(others(dir), 0);
    /* A directory where the file's directory should be made: an error
     * that names it, nothing written. */
    snprintf(buf, sizeof(buf), "%s/plain", base);
    f = fopen(buf, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(path, sizeof(path), "%s/plain/mcptop/tui.json", base);
    assert_int_equal(prefs_save(&p, path, &cause), -1);
    assert_non_null(strstr(cause, "cannot make"));
    free(cause);
    /* Not a regular file, and not JSON on disk. */
    assert_int_equal(prefs_load(&q, dir, &cause), -1);
    assert_non_null(strstr(cause, "not a regular file"));
    free(cause);
    f = fopen(link_path, "w");
    assert_non_null(f);
    fputs("{\"views\": {}\n,,", f);
    fclose(f);
    assert_int_equal(prefs_load(&q, link_path, &cause), -1);
    assert_non_null(strstr(cause, "old.json:2:2: not valid JSON"));
    free(cause);
    prefs_done(&p);
    prefs_done(&q);
    snprintf(buf, sizeof(buf), "rm -rf '%s'", base);
    assert_int_equal(system(buf), 0);
}

/* Two mcptops on one file: each saves only what it changed, over what
 * the other wrote. */
static void
test_save_merged(void **state)
{
    char              base[] = "/tmp/test_ui_prefs.XXXXXX";
    char              path[300], cmd[320];
    struct prefs      a, b, q;
    struct prefs_view v = { 0 };
    char             *cause = NULL;
    FILE             *f;

    (void)state;
    assert_non_null(mkdtemp(base));
    snprintf(path, sizeof(path), "%s/mcptop/tui.json", base);
    prefs_init(&a);
    prefs_init(&b);
    prefs_init(&q);
    assert_int_equal(prefs_load(&a, path, &cause), 0);   /* no file yet */
    assert_int_equal(prefs_load(&b, path, &cause), 0);
    v.name = "x";
    v.sort = "rtt";
    prefs_view_set(&a, &v);
    prefs_history_add(&a, "view save x");
    prefs_set_mouse(&a, false);
    assert_int_equal(prefs_save_merged(&a, path, &cause), 0);
    v.name = "y";
    prefs_view_set(&b, &v);
    prefs_history_add(&b, "view save y");
    prefs_set_theme(&b, "light");
    assert_int_equal(prefs_save_merged(&b, path, &cause), 0);
    /* b now holds a's view too, and the file has both runs' changes. */
    assert_non_null(prefs_view(&b, "x"));
    assert_int_equal(prefs_load(&q, path, &cause), 0);
    assert_int_equal(q.nviews, 2);
    assert_int_equal(q.mouse, 0);                 /* a's, not lost to b */
    assert_string_equal(q.theme, "light");
    assert_int_equal(q.nhistory, 2);
    assert_string_equal(q.history[0], "view save x");
    assert_string_equal(q.history[1], "view save y");
    /* a deletes x (its default view, cleared with it): gone from the
     * file; y, which a never saw, stays. */
    prefs_set_default_view(&a, "x");
    assert_true(prefs_view_delete(&a, "x"));
    assert_null(a.default_view);
    assert_false(prefs_view_delete(&a, "y"));
    assert_int_equal(prefs_save_merged(&a, path, &cause), 0);
    assert_int_equal(prefs_load(&q, path, &cause), 0);
    assert_int_equal(q.nviews, 1);
    assert_non_null(prefs_view(&q, "y"));
    assert_non_null(prefs_view(&a, "y"));         /* a holds the file now */
    assert_null(q.default_view);
    assert_int_equal(q.nhistory, 2);              /* nothing new: as it was */
    /* Broken since the start: left alone, and said so. */
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("{oops", f);
    fclose(f);
    prefs_set_theme(&b, "dark");
    assert_int_equal(prefs_save_merged(&b, path, &cause), -1);
    assert_non_null(strstr(cause, "not valid JSON (changed since the start; "
        "left alone)"));
    free(cause);
    assert_int_equal(prefs_load(&q, path, &cause), -1);
    free(cause);
    prefs_done(&a);
    prefs_done(&b);
    prefs_done(&q);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
    assert_int_equal(system(cmd), 0);
}

/* The names as listed (":view", --view's error) are sanitized: a name
 * from the file with U+202E or a C1 CSI is shown without it. */
static void
test_view_names_shown(void **state)
{
    static const char text[] = "{\"views\": {\"a\\u009b31mX\": {}, "
        "\"b\\u202eY\": {}}}";
    struct prefs p;
    char        *cause = NULL, names[64];

    (void)state;
    prefs_init(&p);
    assert_int_equal(prefs_parse(&p, "t", text, strlen(text), &cause), 0);
    assert_int_equal(p.nviews, 2);
    prefs_view_names(&p, names, sizeof(names));
    assert_string_equal(names, "aX bY");  /* the CSI and its parameters */
    prefs_done(&p);
}

/* A file with more views than PREFS_VIEWS_MAX: the first ones kept and a
 * problem named (each view is found by a walk of the list: 80,000 of them
 * in a 1 MB file took seconds at every start and every save). */
static void
test_views_capped(void **state)
{
    struct prefs p;
    char        *text, *cause = NULL;
    size_t       n = 0, cap = 40 * (PREFS_VIEWS_MAX + 2) + 32;
    int          rc;

    (void)state;
    text = malloc(cap);
    assert_non_null(text);
    n += (size_t)snprintf(text + n, cap - n, "{\"views\": {");
    for (int i = 0; i < PREFS_VIEWS_MAX + 1; i++)
        n += (size_t)snprintf(text + n, cap - n, "%s\"v%d\": {}",
            i > 0 ? ", " : "", i);
    n += (size_t)snprintf(text + n, cap - n, "}}");
    prefs_init(&p);
    rc = prefs_parse(&p, "/c/tui.json", text, n, &cause);
    assert_int_equal(rc, 1);
    assert_non_null(cause);
    assert_non_null(strstr(cause, "/c/tui.json: views: more than"));
    assert_int_equal(p.nviews, PREFS_VIEWS_MAX);
    assert_non_null(prefs_view(&p, "v0"));
    assert_null(prefs_view(&p, "v256"));
    free(cause);
    free(text);
    prefs_done(&p);
}

/* A FIFO at the path: refused at once, not an open that waits for a
 * writer (the TUI hung at its start). SIGALRM ends the test if it
 * blocks. */
static void
test_load_fifo(void **state)
{
    char         base[] = "/tmp/test_ui_prefs.XXXXXX", path[300];
    struct prefs p;
    char        *cause = NULL;

    (void)state;
    assert_non_null(mkdtemp(base));
    snprintf(path, sizeof(path), "%s/tui.json", base);
    assert_int_equal(mkfifo(path, 0600), 0);
    prefs_init(&p);
    alarm(10);
    assert_int_equal(prefs_load(&p, path, &cause), -1);
    alarm(0);
    assert_non_null(cause);
    assert_non_null(strstr(cause, "not a regular file"));
    free(cause);
    prefs_done(&p);
    unlink(path);
    rmdir(base);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_path),
        cmocka_unit_test(test_parse_good),
        cmocka_unit_test(test_parse_malformed),
        cmocka_unit_test(test_history_and_views),
        cmocka_unit_test(test_save_load),
        cmocka_unit_test(test_save_merged),
        cmocka_unit_test(test_views_capped),
        cmocka_unit_test(test_view_names_shown),
        cmocka_unit_test(test_load_fifo),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
