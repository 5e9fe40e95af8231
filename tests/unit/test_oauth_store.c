/*
 * Tests for the token cache: the XDG path, a round trip of every field,
 * one entry per server and resource, replacement, forgetting, mode 0600
 * in a 0700 directory, no temporary file left, a change by another
 * process read back, an unreadable or foreign file refused without losing
 * what was held, lookups among many entries, and processes writing at
 * once merging their entries under the lock.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/oauth_store.h"

struct fix {
    char dir[64];
    char path[128];
};

static int
setup(void **state)
{
    struct fix *f = calloc(1, sizeof(*f));

    strcpy(f->dir, "/tmp/mcptop-store.XXXXXX");
    if (mkdtemp(f->dir) == NULL)
        return -1;
    snprintf(f->path, sizeof(f->path), "%s/state/mcptop/tokens.json",
        f->dir);
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct fix *f = *state;
    char        cmd[160];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
    if (system(cmd) != 0)
        return -1;
    free(f);
    return 0;
}

static struct oauth_token
token(const char *resource, const char *access)
{
    struct oauth_token t = {
        .resource = (char *)resource,
        .access_token = (char *)access,
        .token_type = "Bearer",
        .expires_at = 1800000000,
        .obtained_at = 1700000000,
        .refresh_token = "rt-1",
        .scope = "a b",
        .issuer = "https://as",
        .token_endpoint = "https://as/token",
        .client_id = "cid",
        .client_secret = "csecret",
        .auth_method = "client_secret_basic",
    };

    return t;
}

static void
test_default_path(void **state)
{
    struct oauth_store *st;
    char               *cause = NULL;
    char               *old = getenv("XDG_STATE_HOME") != NULL ?
        strdup(getenv("XDG_STATE_HOME")) : NULL;

    (void)state;
    setenv("XDG_STATE_HOME", "/x/state", 1);
    st = oauth_store_open(NULL, &cause);
    assert_string_equal(oauth_store_path(st), "/x/state/mcptop/tokens.json");
    oauth_store_free(st);
    unsetenv("XDG_STATE_HOME");
    setenv("HOME", "/home/u", 1);
    st = oauth_store_open(NULL, &cause);
    assert_string_equal(oauth_store_path(st),
        "/home/u/.local/state/mcptop/tokens.json");
    oauth_store_free(st);
    if (old != NULL)
        setenv("XDG_STATE_HOME", old, 1);
    free(old);
}

static void
test_round_trip_and_modes(void **state)
{
    struct fix               *f = *state;
    struct oauth_store       *st = oauth_store_open(f->path, NULL), *st2;
    struct oauth_token        t = token("http://h/mcp", "at-1");
    const struct oauth_token *g;
    char                     *cause = NULL, dirpath[160];
    struct stat               sb;
    DIR                      *d;
    struct dirent            *e;
    int                       files = 0;

    t.step_up_scope = "w";
    t.resource_indicator = "http://h";
    assert_int_equal(oauth_store_reload(st, &cause), 0);   /* no file yet */
    assert_int_equal(oauth_store_count(st), 0);
    assert_int_equal(oauth_store_put(st, "srv", &t, &cause), 0);
    assert_int_equal(stat(f->path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    snprintf(dirpath, sizeof(dirpath), "%s/state/mcptop", f->dir);
    assert_int_equal(stat(dirpath, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0700);
    d = opendir(dirpath);
    while ((e = readdir(d)) != NULL)
        files += e->d_name[0] != '.' &&
            strcmp(e->d_name, "tokens.json.lock") != 0;
    closedir(d);
    assert_int_equal(files, 1);             /* no temporary file left */
    snprintf(dirpath, sizeof(dirpath), "%s.lock", f->path);
    assert_int_equal(stat(dirpath, &sb), 0);        /* the lock: 0600 */
    assert_int_equal(sb.st_mode & 0777, 0600);
    /* Another reader sees every field. */
    st2 = oauth_store_open(f->path, NULL);
    assert_int_equal(oauth_store_reload(st2, &cause), 0);
    g = oauth_store_find(st2, "srv", "http://h/mcp");
    assert_non_null(g);
    assert_string_equal(g->access_token, "at-1");
    assert_string_equal(g->refresh_token, "rt-1");
    assert_string_equal(g->token_type, "Bearer");
    assert_int_equal(g->expires_at, 1800000000);
    assert_int_equal(g->obtained_at, 1700000000);
    assert_string_equal(g->scope, "a b");
    assert_string_equal(g->step_up_scope, "w");
    assert_string_equal(g->resource_indicator, "http://h");
    assert_string_equal(g->issuer, "https://as");
    assert_string_equal(g->token_endpoint, "https://as/token");
    assert_string_equal(g->client_id, "cid");
    assert_string_equal(g->client_secret, "csecret");
    assert_string_equal(g->auth_method, "client_secret_basic");
    assert_null(oauth_store_find(st2, "srv", "http://h/other"));
    assert_null(oauth_store_find(st2, "other", "http://h/mcp"));
    oauth_store_free(st2);
    oauth_store_free(st);
}

static void
test_per_resource_replace_forget(void **state)
{
    struct fix         *f = *state;
    struct oauth_store *a = oauth_store_open(f->path, NULL);
    struct oauth_store *b = oauth_store_open(f->path, NULL);
    struct oauth_token  t1 = token("http://h/one", "at-1");
    struct oauth_token  t2 = token("http://h/two", "at-2");
    struct oauth_token  t3 = token("http://h/one", "at-3");
    struct oauth_token  o = token("http://o/mcp", "at-o");
    char               *cause = NULL;

    assert_int_equal(oauth_store_put(a, "srv", &t1, &cause), 0);
    /* b writes after a: it re-reads first, so a's entry stays. */
    assert_int_equal(oauth_store_put(b, "srv", &t2, &cause), 0);
    assert_int_equal(oauth_store_put(b, "other", &o, &cause), 0);
    assert_int_equal(oauth_store_put(a, "srv", &t3, &cause), 0);
    assert_int_equal(oauth_store_reload(b, &cause), 0);
    assert_int_equal(oauth_store_count(b), 3);
    assert_string_equal(oauth_store_find(b, "srv", "http://h/one")->
        access_token, "at-3");
    assert_string_equal(oauth_store_find(b, "srv", "http://h/two")->
        access_token, "at-2");
    assert_int_equal(oauth_store_forget(a, "srv", &cause), 2);
    assert_int_equal(oauth_store_forget(a, "srv", &cause), 0);
    assert_int_equal(oauth_store_reload(b, &cause), 0);
    assert_int_equal(oauth_store_count(b), 1);
    assert_non_null(oauth_store_find(b, "other", "http://o/mcp"));
    oauth_store_free(a);
    oauth_store_free(b);
}

static void
test_bad_files(void **state)
{
    struct fix         *f = *state;
    struct oauth_store *st = oauth_store_open(f->path, NULL);
    struct oauth_token  t = token("http://h/mcp", "at-1");
    char               *cause = NULL;
    FILE               *fp;

    assert_int_equal(oauth_store_put(st, "srv", &t, &cause), 0);
    assert_int_equal(oauth_store_reload(st, &cause), 0);
    /* A file that is not ours: refused, and what was held is kept. */
    fp = fopen(f->path, "w");
    fputs("[1, 2, 3] and more", fp);
    fclose(fp);
    assert_int_equal(oauth_store_reload(st, &cause), -1);
    assert_non_null(strstr(cause, "not an mcptop token file"));
    free(cause);
    cause = NULL;
    assert_non_null(oauth_store_find(st, "srv", "http://h/mcp"));
    /* Entries missing what they need are skipped, the rest read. */
    fp = fopen(f->path, "w");
    fputs("{\"version\":1,\"tokens\":[{\"server\":\"x\"},{\"server\":\"y\","
        "\"resource\":\"r\",\"access_token\":\"t\"},7]}", fp);
    fclose(fp);
    assert_int_equal(oauth_store_reload(st, &cause), 0);
    assert_int_equal(oauth_store_count(st), 1);
    assert_non_null(oauth_store_find(st, "y", "r"));
    /* A put over a foreign file fails and does not overwrite it. */
    fp = fopen(f->path, "w");
    fputs("{}", fp);
    fclose(fp);
    assert_int_equal(oauth_store_put(st, "srv", &t, &cause), -1);
    free(cause);
    oauth_store_free(st);
}

static void
test_many(void **state)
{
    struct fix         *f = *state;
    struct oauth_store *st = oauth_store_open(f->path, NULL);
    char               *cause = NULL;
    FILE               *fp;
    char                name[32], sub[160];

    snprintf(sub, sizeof(sub), "%s/state", f->dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    snprintf(sub, sizeof(sub), "%s/state/mcptop", f->dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    fp = fopen(f->path, "w");
    assert_non_null(fp);

    /* 5,000 entries written out of order, found by bisection. */
    fputs("{\"version\":1,\"tokens\":[", fp);
    for (int i = 4999; i >= 0; i--)
        fprintf(fp, "%s{\"server\":\"s%d\",\"resource\":\"r\","
            "\"access_token\":\"t%d\"}", i == 4999 ? "" : ",", i, i);
    fputs("]}", fp);
    fclose(fp);
    assert_int_equal(oauth_store_reload(st, &cause), 0);
    assert_int_equal(oauth_store_count(st), 5000);
    for (int i = 0; i < 5000; i += 97) {
        char want[16];

        snprintf(name, sizeof(name), "s%d", i);
        snprintf(want, sizeof(want), "t%d", i);
        assert_string_equal(oauth_store_find(st, name, "r")->access_token,
            want);
    }
    assert_null(oauth_store_find(st, "s5000", "r"));
    oauth_store_free(st);
}

/*
 * Eight processes put an entry each, twenty times over, all at once: under
 * the lock every entry survives (without it, a writer's re-read misses
 * what another wrote between its read and its rename, and entries are
 * lost: 3-5 of 8 were kept in the report that found it).
 */
static void
test_concurrent_writers(void **state)
{
    enum { PROCS = 8, ROUNDS = 20 };
    struct fix         *f = *state;
    struct oauth_store *st;
    char               *cause = NULL;
    int                 go[2];
    pid_t               pid[PROCS];
    char                name[32];

    assert_int_equal(pipe(go), 0);
    for (int p = 0; p < PROCS; p++) {
        pid[p] = fork();
        assert_true(pid[p] >= 0);
        if (pid[p] == 0) {
            struct oauth_store *mine = oauth_store_open(f->path, NULL);
            char                c, access[32];
            int                 bad = 0;

            close(go[1]);
            alarm(20);
            if (read(go[0], &c, 1) < 0)     /* EOF: everyone starts */
                _exit(3);
            snprintf(name, sizeof(name), "s%d", p);
            for (int r = 0; r < ROUNDS; r++) {
                struct oauth_token t;
                char              *why = NULL;

                snprintf(access, sizeof(access), "t%d-%d", p, r);
                t = token("https://h/mcp", access);
                if (oauth_store_put(mine, name, &t, &why) != 0) {
                    free(why);
                    bad = 1;
                }
            }
            oauth_store_free(mine);
            _exit(bad);
        }
    }
    close(go[0]);
    close(go[1]);
    for (int p = 0; p < PROCS; p++) {
        int status = 0;

        assert_int_equal(waitpid(pid[p], &status, 0), pid[p]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    st = oauth_store_open(f->path, NULL);
    assert_int_equal(oauth_store_reload(st, &cause), 0);
    assert_int_equal(oauth_store_count(st), PROCS);
    for (int p = 0; p < PROCS; p++) {
        char want[32];

        snprintf(name, sizeof(name), "s%d", p);
        snprintf(want, sizeof(want), "t%d-%d", p, ROUNDS - 1);
        assert_non_null(oauth_store_find(st, name, "https://h/mcp"));
        assert_string_equal(oauth_store_find(st, name,
            "https://h/mcp")->access_token, want);
    }
    oauth_store_free(st);
}

/* A lock held elsewhere past the bound: put says so and writes nothing. */
static void
test_lock_held(void **state)
{
    struct fix         *f = *state;
    struct oauth_store *st = oauth_store_open(f->path, NULL);
    struct oauth_token  t = token("https://h/mcp", "t1");
    char               *cause = NULL, lock[160];
    int                 fd;

    assert_int_equal(oauth_store_put(st, "a", &t, &cause), 0);
    snprintf(lock, sizeof(lock), "%s.lock", f->path);
    fd = open(lock, O_RDWR);
    assert_true(fd >= 0);
    /* flock locks belong to the open file: this one excludes st's. */
    assert_int_equal(flock(fd, LOCK_EX), 0);
    t = token("https://h/mcp", "t2");
    assert_int_equal(oauth_store_put(st, "a", &t, &cause), -1);
    assert_non_null(cause);
    assert_non_null(strstr(cause, "held by another process"));
    free(cause);
    cause = NULL;
    close(fd);
    assert_int_equal(oauth_store_reload_locked(st, &cause), 0);
    assert_string_equal(oauth_store_find(st, "a", "https://h/mcp")
        ->access_token, "t1");
    oauth_store_free(st);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_path),
        cmocka_unit_test_setup_teardown(test_round_trip_and_modes, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_per_resource_replace_forget,
            setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_writers, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_lock_held, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
