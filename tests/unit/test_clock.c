/*
 * Tests for the clock's formatting: RFC 3339 UTC with milliseconds, the
 * same whether the second was formatted just before (the cached prefix)
 * or not.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <cmocka.h>

#include "util/clock.h"

/* The text by the long way: gmtime_r and a printf. */
static void
slow_iso(int64_t ms, char *buf, size_t n)
{
    time_t    secs = (time_t)(ms / 1000);
    struct tm tm;

    gmtime_r(&secs, &tm);
    snprintf(buf, n, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
        tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
        tm.tm_sec, (int)(ms % 1000));
}

static void
test_format_iso(void **state)
{
    static const int64_t stamps[] = { 0, 1, 999, 1000, 1764627000000LL,
        1764627000001LL, 1764627000099LL, 1764627000999LL, 1764627001000LL,
        1764627000500LL, 951782400000LL, 4102444799999LL };
    char                 got[64], want[96];

    (void)state;
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < sizeof(stamps) / sizeof(stamps[0]); i++) {
            clock_format_iso(stamps[i], got, sizeof(got));
            slow_iso(stamps[i], want, sizeof(want));
            assert_string_equal(got, want);
        }
    }
    clock_format_iso(1764627000123LL, got, sizeof(got));
    assert_string_equal(got, "2025-12-01T22:10:00.123Z");
    clock_format_iso(1764627000007LL, got, sizeof(got));
    assert_string_equal(got, "2025-12-01T22:10:00.007Z");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format_iso),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
