/*
 * Tests for the envFile (dotenv) reader: the line forms, quotes and
 * escapes, comments, repeated keys, and errors that name the line but
 * never a value.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/envfile.h"

#include "config_check.h"

#define SECRET "s3cr3t-Value-9f2"

/* Every accepted form of a line. */
static void
test_forms(void **state)
{
    static const char text[] =
        "# a comment\n"
        "\n"
        "   \t\n"
        "PLAIN=value\n"
        "SPACED = padded value   \n"
        "export EXPORTED=yes\n"
        "DQ=\"a \\\"quoted\\\" \\\\ value\\twith\\nescapes\"\n"
        "SQ='literal \\n $HOME'\n"
        "HASH=a#b\n"
        "COMMENTED=value # trailing comment\n"
        "QCOMMENT=\"x # y\" # after\n"
        "EMPTY=\n"
        "MULTI=\"line one\n"
        "line two\"\n"
        "dotted.name-1=ok\r\n"
        "CRLF=crlf\r\n"
        "LAST=no newline";
    struct str_kv *kv = NULL;
    size_t            n = 0;
    char             *cause = NULL;

    (void)state;
    assert_int_equal(envfile_parse(text, strlen(text), &kv, &n, &cause), 0);
    assert_null(cause);
    assert_int_equal(n, 13);
    assert_string_equal(kv_get(kv, n, "PLAIN"), "value");
    assert_string_equal(kv_get(kv, n, "SPACED"), "padded value");
    assert_string_equal(kv_get(kv, n, "EXPORTED"), "yes");
    assert_string_equal(kv_get(kv, n, "DQ"),
        "a \"quoted\" \\ value\twith\nescapes");
    assert_string_equal(kv_get(kv, n, "SQ"), "literal \\n $HOME");
    assert_string_equal(kv_get(kv, n, "HASH"), "a#b");
    assert_string_equal(kv_get(kv, n, "COMMENTED"), "value");
    assert_string_equal(kv_get(kv, n, "QCOMMENT"), "x # y");
    assert_string_equal(kv_get(kv, n, "EMPTY"), "");
    assert_string_equal(kv_get(kv, n, "MULTI"), "line one\nline two");
    assert_string_equal(kv_get(kv, n, "dotted.name-1"), "ok");
    assert_string_equal(kv_get(kv, n, "CRLF"), "crlf");
    assert_string_equal(kv_get(kv, n, "LAST"), "no newline");
    assert_null(kv_get(kv, n, "export EXPORTED"));
    envfile_free(kv, n);
}

/* A repeated key keeps its last value; an empty file is no variables. */
static void
test_repeat_and_empty(void **state)
{
    static const char text[] = "A=1\nB=2\nA=3\nA=4\n";
    struct str_kv *kv = NULL;
    size_t            n = 0;
    char             *cause = NULL;

    (void)state;
    assert_int_equal(envfile_parse(text, strlen(text), &kv, &n, &cause), 0);
    assert_int_equal(n, 2);
    assert_string_equal(kv_get(kv, n, "A"), "4");
    assert_string_equal(kv_get(kv, n, "B"), "2");
    envfile_free(kv, n);

    assert_int_equal(envfile_parse("# only\n\n", 8, &kv, &n, &cause), 0);
    assert_int_equal(n, 0);
    assert_null(kv);
    envfile_free(NULL, 0);
}

/* Bad lines: the line number and the problem, never the value. */
static void
test_errors(void **state)
{
    static const struct {
        const char *text;
        const char *cause;
    } bad[] = {
        { "A=1\nnot a pair " SECRET "\n", "line 2: expected KEY=VALUE" },
        { "=" SECRET "\n", "line 1: expected KEY=VALUE" },
        { "1A=" SECRET "\n", "line 1: expected KEY=VALUE" },
        { "A=1\n\nB=\"" SECRET "\n", "line 3: unterminated double-quoted "
          "value" },
        { "B='" SECRET, "line 1: unterminated single-quoted value" },
        { "C=\"" SECRET "\" trailing\n", "line 1: text after the closing "
          "quote" },
        { "D=\"a\nb\nc\" x\n", "line 3: text after the closing quote" },
    };
    struct str_kv *kv = NULL;
    size_t            n = 0, i;
    char             *cause = NULL;

    (void)state;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(envfile_parse(bad[i].text, strlen(bad[i].text),
            &kv, &n, &cause), -1);
        assert_non_null(cause);
        if (strcmp(cause, bad[i].cause) != 0) {
            print_error("case %zu: \"%s\", expected \"%s\"\n", i, cause,
                bad[i].cause);
            fail();
        }
        assert_null(strstr(cause, SECRET));
        assert_null(kv);
        free(cause);
        cause = NULL;
    }
    assert_int_equal(envfile_parse("A=1\0B=2", 7, &kv, &n, &cause), -1);
    assert_non_null(strstr(cause, "NUL"));
    free(cause);
}

/* envfile_read: the file as shown in messages, limits. */
static void
test_read(void **state)
{
    char              path[] = "/tmp/mcptop-envfile-XXXXXX";
    struct str_kv *kv = NULL;
    size_t            n = 0;
    char             *cause = NULL;
    int               fd;

    (void)state;
    fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "TOKEN=" SECRET "\n", 7 + strlen(SECRET)),
        (ssize_t)(7 + strlen(SECRET)));
    close(fd);
    assert_int_equal(envfile_read(path, "~/x.env", &kv, &n, &cause), 0);
    assert_int_equal(n, 1);
    assert_string_equal(kv_get(kv, n, "TOKEN"), SECRET);
    envfile_free(kv, n);

    assert_int_equal(truncate(path, ENVFILE_MAX_BYTES + 1), 0);
    assert_int_equal(envfile_read(path, "~/x.env", &kv, &n, &cause), -1);
    assert_non_null(strstr(cause, "envFile \"~/x.env\": larger than"));
    free(cause);
    unlink(path);

    assert_int_equal(envfile_read(path, "${workspaceFolder}/.env", &kv, &n,
        &cause), -1);
    assert_string_equal(cause, "envFile \"${workspaceFolder}/.env\": "
        "No such file or directory");
    free(cause);

    assert_int_equal(envfile_read("/tmp", "/tmp", &kv, &n, &cause), -1);
    assert_non_null(strstr(cause, "not a regular file"));
    free(cause);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forms),
        cmocka_unit_test(test_repeat_and_empty),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_read),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
