/*
 * Tests for a server's authorization state (oauth.c) where it costs: a
 * fleet whose servers declare no "oauth" looks at the token file once per
 * process, not once per server, and parses no URL for it; a server that
 * declares "oauth" reads the file at its first request; a token cached by
 * mcptop login for a server without "oauth" is still used from its first
 * request. The file's opens are counted by an open() of this file's own,
 * which the engine's calls reach (the engine is linked in statically).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ev.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine/config.h"
#include "engine/oauth.h"
#include "engine/oauth_store.h"

static unsigned test_token_opens;

/* Every open of the process: count those of the token file, then open. */
int
open(const char *path, int flags, ...)
{
    mode_t  mode = 0;
    va_list ap;

    if (flags & O_CREAT) {
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    if (strlen(path) >= 11 &&
        strcmp(path + strlen(path) - 11, "tokens.json") == 0)
        test_token_opens++;
    return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

#define TEST_N 20

struct fixture {
    char                 dir[64];
    char                 names[TEST_N][16];
    struct config_server decl[TEST_N];
    struct config_oauth  oauth;
    struct oauth        *o[TEST_N];
};

static int
setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));

    snprintf(f->dir, sizeof(f->dir), "/tmp/mcptop-oauth-XXXXXX");
    if (mkdtemp(f->dir) == NULL)
        return -1;
    setenv("XDG_STATE_HOME", f->dir, 1);
    for (int i = 0; i < TEST_N; i++) {
        snprintf(f->names[i], sizeof(f->names[i]), "s%02d", i);
        f->decl[i].name = f->names[i];
        f->decl[i].transport = CONFIG_HTTP;
        f->decl[i].url = "http://127.0.0.1:1/mcp";
    }
    test_token_opens = 0;
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *f = *state;
    char            path[128];

    for (int i = 0; i < TEST_N; i++)
        oauth_free(f->o[i]);
    snprintf(path, sizeof(path), "%s/mcptop/tokens.json.lock", f->dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/mcptop/tokens.json", f->dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/mcptop", f->dir);
    rmdir(path);
    rmdir(f->dir);
    free(f);
    return 0;
}

/* Every server's first request: its Authorization value. */
static void
first_requests(struct fixture *f)
{
    for (int i = 0; i < TEST_N; i++) {
        f->o[i] = oauth_new(EV_DEFAULT, NULL, &f->decl[i], (size_t)i, NULL);
        assert_non_null(f->o[i]);
        assert_null(oauth_authorization(f->o[i]));
    }
    /* And their next ones read nothing more. */
    for (int i = 0; i < TEST_N; i++)
        assert_null(oauth_authorization(f->o[i]));
}

/* No "oauth" anywhere, no token file: one look at it in all. */
static void
test_no_oauth_one_look(void **state)
{
    struct fixture *f = *state;

    first_requests(f);
    assert_int_equal(test_token_opens, 1);
}

/* A server that declares "oauth" reads the file at its first request. */
static void
test_declared_oauth_reads(void **state)
{
    struct fixture *f = *state;

    f->decl[3].oauth = &f->oauth;
    f->decl[7].oauth = &f->oauth;
    first_requests(f);
    assert_int_equal(test_token_opens, 1 + 2);
}

/* A token mcptop login cached for a server without "oauth" is sent from
 * its first request; the file then holds something, so each server reads
 * it once. */
static void
test_cached_token_used(void **state)
{
    struct fixture     *f = *state;
    struct oauth_store *st;
    struct oauth_token  t = { 0 };
    char               *cause = NULL;
    const char         *authz;

    st = oauth_store_open(NULL, &cause);
    assert_non_null(st);
    t.resource = "http://127.0.0.1:1/mcp";
    t.access_token = "at-cached";
    t.token_type = "Bearer";
    assert_int_equal(oauth_store_put(st, "s05", &t, &cause), 0);
    oauth_store_free(st);
    test_token_opens = 0;
    for (int i = 0; i < TEST_N; i++) {
        f->o[i] = oauth_new(EV_DEFAULT, NULL, &f->decl[i], (size_t)i, NULL);
        authz = oauth_authorization(f->o[i]);
        if (i == 5)
            assert_string_equal(authz, "Bearer at-cached");
        else
            assert_null(authz);
    }
    assert_in_range(test_token_opens, 1, TEST_N + 1);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_no_oauth_one_look, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_declared_oauth_reads, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_cached_token_used, setup,
            teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
