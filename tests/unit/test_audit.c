/*
 * Tests for the audit's closed tables (src/audit/audit.c): every check and
 * verdict named once, each check's verdicts as issue 32's table lists them
 * with their grades, n/a and error for every check, nothing else given.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "audit/audit.h"

/* Each check's verdicts (besides n/a and error) and their grades. */
static const struct {
    enum audit_check   check;
    enum audit_verdict verdict;
    enum audit_grade   grade;
} audit_table[] = {
    { AUDIT_CHECK_DELETE, AUDIT_VERDICT_TERMINATED, AUDIT_GRADE_CLEAN },
    { AUDIT_CHECK_DELETE, AUDIT_VERDICT_NOT_ALLOWED, AUDIT_GRADE_NOTE },
    { AUDIT_CHECK_DELETE, AUDIT_VERDICT_OTHER, AUDIT_GRADE_BAD },
    { AUDIT_CHECK_FREED, AUDIT_VERDICT_YES, AUDIT_GRADE_CLEAN },
    { AUDIT_CHECK_FREED, AUDIT_VERDICT_NO, AUDIT_GRADE_BAD },
    { AUDIT_CHECK_FREED, AUDIT_VERDICT_OTHER, AUDIT_GRADE_BAD },
    { AUDIT_CHECK_UNKNOWN_SESSION, AUDIT_VERDICT_SPEC, AUDIT_GRADE_CLEAN },
    { AUDIT_CHECK_UNKNOWN_SESSION, AUDIT_VERDICT_NONSTANDARD, AUDIT_GRADE_BAD },
    { AUDIT_CHECK_UNKNOWN_SESSION, AUDIT_VERDICT_ACCEPTED, AUDIT_GRADE_BAD },
    /* beyond the table: another status (a 500, a 401) */
    { AUDIT_CHECK_UNKNOWN_SESSION, AUDIT_VERDICT_OTHER, AUDIT_GRADE_BAD },
    { AUDIT_CHECK_MISSING_SESSION, AUDIT_VERDICT_SPEC, AUDIT_GRADE_CLEAN },
    { AUDIT_CHECK_MISSING_SESSION, AUDIT_VERDICT_ACCEPTED, AUDIT_GRADE_NOTE },
    { AUDIT_CHECK_MISSING_SESSION, AUDIT_VERDICT_OTHER, AUDIT_GRADE_BAD },
    { AUDIT_CHECK_PROBE_LEAK, AUDIT_VERDICT_NONE, AUDIT_GRADE_CLEAN },
    { AUDIT_CHECK_PROBE_LEAK, AUDIT_VERDICT_LEAKS, AUDIT_GRADE_BAD },
    /* issue 41: a server that gives two sessions one id */
    { AUDIT_CHECK_SESSION_IDS, AUDIT_VERDICT_UNIQUE, AUDIT_GRADE_CLEAN },
    { AUDIT_CHECK_SESSION_IDS, AUDIT_VERDICT_REUSED, AUDIT_GRADE_BAD },
    { AUDIT_CHECK_PING, AUDIT_VERDICT_SUPPORTED, AUDIT_GRADE_CLEAN },
    { AUDIT_CHECK_PING, AUDIT_VERDICT_UNSUPPORTED, AUDIT_GRADE_BAD },
    { AUDIT_CHECK_STREAM, AUDIT_VERDICT_OPENS, AUDIT_GRADE_CLEAN },
    { AUDIT_CHECK_STREAM, AUDIT_VERDICT_NONE, AUDIT_GRADE_CLEAN },
    { AUDIT_CHECK_STREAM, AUDIT_VERDICT_OTHER, AUDIT_GRADE_BAD },
    { AUDIT_CHECK_AFFINITY, AUDIT_VERDICT_STABLE, AUDIT_GRADE_CLEAN },
    { AUDIT_CHECK_AFFINITY, AUDIT_VERDICT_BROKEN, AUDIT_GRADE_BAD },
    { AUDIT_CHECK_AFFINITY, AUDIT_VERDICT_OTHER, AUDIT_GRADE_BAD },
    { AUDIT_CHECK_VERSIONS, AUDIT_VERDICT_NEGOTIATES, AUDIT_GRADE_CLEAN },
    { AUDIT_CHECK_VERSIONS, AUDIT_VERDICT_ECHOES, AUDIT_GRADE_BAD },
    { AUDIT_CHECK_VERSIONS, AUDIT_VERDICT_REFUSES, AUDIT_GRADE_BAD },
    { AUDIT_CHECK_VERSIONS, AUDIT_VERDICT_NONE, AUDIT_GRADE_BAD },
    { AUDIT_CHECK_ERA, AUDIT_VERDICT_LEGACY, AUDIT_GRADE_CLEAN },
    { AUDIT_CHECK_ERA, AUDIT_VERDICT_LEGACY_SSE, AUDIT_GRADE_CLEAN },
    { AUDIT_CHECK_ERA, AUDIT_VERDICT_MODERN, AUDIT_GRADE_CLEAN },
    { AUDIT_CHECK_ERA, AUDIT_VERDICT_DUAL, AUDIT_GRADE_CLEAN },
    { AUDIT_CHECK_SHUTDOWN, AUDIT_VERDICT_STDIN, AUDIT_GRADE_CLEAN },
    { AUDIT_CHECK_SHUTDOWN, AUDIT_VERDICT_SIGTERM, AUDIT_GRADE_NOTE },
    { AUDIT_CHECK_SHUTDOWN, AUDIT_VERDICT_SIGKILL, AUDIT_GRADE_BAD },
};
#define AUDIT_TABLE_N (sizeof(audit_table) / sizeof(audit_table[0]))

/* Names: every check and verdict has one, no two alike; every check names
 * the revision its spec section is from. */
static void
test_names(void **state)
{
    (void)state;
    for (int c = 0; c < AUDIT_CHECK__COUNT; c++) {
        assert_string_not_equal(audit_check_name(c), "?");
        assert_true(strncmp(audit_check_spec(c), "2025-11-25 ", 11) == 0);
        for (int d = c + 1; d < AUDIT_CHECK__COUNT; d++)
            assert_string_not_equal(audit_check_name(c), audit_check_name(d));
    }
    for (int v = 0; v < AUDIT_VERDICT__COUNT; v++) {
        assert_string_not_equal(audit_verdict_name(v), "?");
        for (int w = v + 1; w < AUDIT_VERDICT__COUNT; w++)
            assert_string_not_equal(audit_verdict_name(v),
                audit_verdict_name(w));
    }
    for (int g = 0; g < AUDIT_GRADE__COUNT; g++) {
        assert_string_not_equal(audit_grade_name(g), "?");
        assert_non_null(audit_grade_glyph(g));
    }
    assert_string_equal(audit_check_name(AUDIT_CHECK__COUNT), "?");
    assert_string_equal(audit_verdict_name(AUDIT_VERDICT__COUNT), "?");
    assert_string_equal(audit_check_name(AUDIT_CHECK_PROBE_LEAK),
        "probe_leak");
    assert_string_equal(audit_verdict_name(AUDIT_VERDICT_NA), "n/a");
    /* the era's words are check's (mcp_era_name) */
    assert_string_equal(audit_verdict_name(AUDIT_VERDICT_LEGACY_SSE),
        "legacy_sse");
}

/* The table of issue 32, and nothing else: every (check, verdict) pair is
 * either listed above with its grade, n/a, error, or invalid. */
static void
test_grades(void **state)
{
    (void)state;
    for (int c = 0; c < AUDIT_CHECK__COUNT; c++) {
        int clean = 0;

        assert_int_equal(audit_grade(c, AUDIT_VERDICT_NA), AUDIT_GRADE_NA);
        assert_int_equal(audit_grade(c, AUDIT_VERDICT_ERROR),
            AUDIT_GRADE_ERROR);
        for (int v = 0; v < AUDIT_VERDICT__COUNT; v++) {
            enum audit_grade want = AUDIT_GRADE_INVALID;

            if (v == AUDIT_VERDICT_NA || v == AUDIT_VERDICT_ERROR)
                continue;
            for (size_t i = 0; i < AUDIT_TABLE_N; i++) {
                if ((int)audit_table[i].check == c &&
                    (int)audit_table[i].verdict == v)
                    want = audit_table[i].grade;
            }
            assert_int_equal(audit_grade(c, v), want);
            if (want == AUDIT_GRADE_CLEAN)
                clean++;
        }
        /* every check has a verdict that is as the spec says */
        assert_true(clean >= 1);
    }
    assert_int_equal(audit_grade(AUDIT_CHECK_DELETE, AUDIT_VERDICT_YES),
        AUDIT_GRADE_INVALID);
    assert_int_equal(audit_grade(AUDIT_CHECK__COUNT, AUDIT_VERDICT_YES),
        AUDIT_GRADE_INVALID);
    assert_int_equal(audit_grade(AUDIT_CHECK_PING, AUDIT_VERDICT__COUNT),
        AUDIT_GRADE_INVALID);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_grades),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
