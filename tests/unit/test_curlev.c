/*
 * Tests for the curl/libev glue's one fact of a handshake (engine/curlev.h):
 * the certificate dates libcurl's certinfo writes ("Expire date"), read
 * whatever the locale, and nothing known before a handshake.
 */
#include <locale.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include <ev.h>

#include "engine/http.h"
#include "engine/curlev.h"

static void
test_parse_cert_time(void **state)
{
    (void)state;
    /* date -u -d '2027-06-16 12:00:00' +%s */
    assert_int_equal(curlev_parse_cert_time("Jun 16 12:00:00 2027 GMT"),
        INT64_C(1813147200));
    /* OpenSSL pads a one-digit day with a space. */
    assert_int_equal(curlev_parse_cert_time("Jan  1 00:00:00 1970 GMT"), 0);
    assert_int_equal(curlev_parse_cert_time("Mar  3 01:02:03 2031 GMT"),
        INT64_C(1930266123));
    assert_int_equal(curlev_parse_cert_time("Dec 31 23:59:59 2049 GMT"),
        INT64_C(2524607999));
    /* Not such a date: 0. */
    assert_int_equal(curlev_parse_cert_time(NULL), 0);
    assert_int_equal(curlev_parse_cert_time(""), 0);
    assert_int_equal(curlev_parse_cert_time("Foo 16 12:00:00 2027 GMT"), 0);
    assert_int_equal(curlev_parse_cert_time("anF 16 12:00:00 2027 GMT"), 0);
    assert_int_equal(curlev_parse_cert_time("Jun 16 12:00:00 2027"), 0);
    assert_int_equal(curlev_parse_cert_time("Jun 32 12:00:00 2027 GMT"), 0);
    assert_int_equal(curlev_parse_cert_time("Jun 16 25:00:00 2027 GMT"), 0);
    assert_int_equal(curlev_parse_cert_time("20270616120000Z"), 0);
}

/* The month names are the C locale's whatever the process's is. */
static void
test_parse_cert_time_locale(void **state)
{
    (void)state;
    if (setlocale(LC_TIME, "de_DE.UTF-8") == NULL &&
        setlocale(LC_TIME, "fr_FR.UTF-8") == NULL)
        setlocale(LC_TIME, "C.UTF-8");
    assert_int_equal(curlev_parse_cert_time("Mar  3 01:02:03 2031 GMT"),
        INT64_C(1930266123));
    setlocale(LC_TIME, "C");
}

static void
test_nothing_before_a_handshake(void **state)
{
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    struct curlev  *ce;

    (void)state;
    http_global_init();
    ce = curlev_new(loop, 3, 0);
    assert_non_null(ce);
    assert_int_equal(curlev_cert_not_after(ce, 0), 0);
    assert_int_equal(curlev_cert_not_after(ce, 100000), 0);
    curlev_free(ce);
    ev_loop_destroy(loop);
    http_global_cleanup();
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_cert_time),
        cmocka_unit_test(test_parse_cert_time_locale),
        cmocka_unit_test(test_nothing_before_a_handshake),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
