/*
 * Tests for the JSON writer: commas and nesting, every escape, invalid
 * UTF-8 as U+FFFD, integers and tenths printed as cJSON prints the same
 * doubles (the check --json and watch outputs keep their bytes), and a
 * buffer reused across lines.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "util/jsonw.h"

/* What cJSON_PrintUnformatted prints for the number d. */
static void
cjson_number(double d, char *out, size_t outsz)
{
    cJSON *n = cJSON_CreateNumber(d);
    char  *t = cJSON_PrintUnformatted(n);

    snprintf(out, outsz, "%s", t);
    free(t);
    cJSON_Delete(n);
}

/* Commas between members and elements, none after an opening. */
static void
test_nesting(void **state)
{
    struct jsonw w;
    char        *t;
    size_t       len;

    (void)state;
    jsonw_init(&w);
    jsonw_object_open(&w, NULL);
    jsonw_array_open(&w, "a");
    jsonw_array_close(&w);
    jsonw_object_open(&w, "o");
    jsonw_object_close(&w);
    jsonw_array_open(&w, "b");
    jsonw_int(&w, NULL, 1);
    jsonw_null(&w, NULL);
    jsonw_object_open(&w, NULL);
    jsonw_bool(&w, "t", true);
    jsonw_bool(&w, "f", false);
    jsonw_object_close(&w);
    jsonw_array_close(&w);
    jsonw_string(&w, "s", NULL);
    jsonw_object_close(&w);
    t = jsonw_take(&w, &len);
    assert_string_equal(t,
        "{\"a\":[],\"o\":{},\"b\":[1,null,{\"t\":true,\"f\":false}],"
        "\"s\":null}");
    assert_int_equal(len, strlen(t));
    free(t);
    /* take leaves the writer empty and usable. */
    assert_null(w.buf);
    jsonw_array_open(&w, NULL);
    jsonw_array_close(&w);
    assert_string_equal(w.buf, "[]");
    jsonw_done(&w);
}

/* Every escape cJSON writes, in cJSON's spelling. */
static void
test_escapes(void **state)
{
    const char   in[] = "q\"b\\s/\b\f\n\r\t\x01\x1f\x7f" "end";
    struct jsonw w;
    cJSON       *c = cJSON_CreateString(in);
    char        *want = cJSON_PrintUnformatted(c);

    (void)state;
    jsonw_init(&w);
    jsonw_string(&w, NULL, in);
    assert_string_equal(w.buf, want);
    assert_string_equal(w.buf,
        "\"q\\\"b\\\\s/\\b\\f\\n\\r\\t\\u0001\\u001f\x7f" "end\"");
    /* A NUL inside counted bytes is escaped too. */
    jsonw_reset(&w);
    jsonw_string_n(&w, NULL, "a\0b", 3);
    assert_string_equal(w.buf, "\"a\\u0000b\"");
    /* Keys are escaped as strings are. */
    jsonw_reset(&w);
    jsonw_object_open(&w, NULL);
    jsonw_int(&w, "k\"\n", 1);
    jsonw_object_close(&w);
    assert_string_equal(w.buf, "{\"k\\\"\\n\":1}");
    jsonw_done(&w);
    free(want);
    cJSON_Delete(c);
}

/* jsonw_bytes: cJSON's escapes, every byte from 0x80 up as it came (a
 * cursor goes back to its server unchanged), as cJSON prints them. */
static void
test_bytes(void **state)
{
    const char   in[] = "c\xff\xc0\xaf\"\n\x01\xe2\x82\xac";
    struct jsonw w;
    cJSON       *c = cJSON_CreateString(in);
    char        *want = cJSON_PrintUnformatted(c);

    (void)state;
    jsonw_init(&w);
    jsonw_bytes(&w, NULL, in, strlen(in));
    assert_string_equal(w.buf, want);
    jsonw_done(&w);
    free(want);
    cJSON_Delete(c);
}

/* Valid UTF-8 is copied; each byte of an invalid sequence is U+FFFD. */
static void
test_utf8(void **state)
{
    static const struct {
        const char *in;
        const char *out;
    } cases[] = {
        { "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
          "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"" },
        { "\xff", "\"\xef\xbf\xbd\"" },
        { "a\xc0\xafz", "\"a\xef\xbf\xbd\xef\xbf\xbdz\"" },       /* overlong */
        { "\xed\xa0\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"" },
        { "\xf4\x90\x80\x80",                               /* > U+10FFFF */
          "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"" },
        { "\xe2\x82", "\"\xef\xbf\xbd\xef\xbf\xbd\"" },          /* cut */
        { "\xe2\x82x", "\"\xef\xbf\xbd\xef\xbf\xbdx\"" },
        { "\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\"" },           /* U+10FFFF */
        { "\xef\xbf\xbd", "\"\xef\xbf\xbd\"" },
    };
    struct jsonw w;

    (void)state;
    jsonw_init(&w);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cJSON *back;

        jsonw_reset(&w);
        jsonw_string(&w, NULL, cases[i].in);
        assert_string_equal(w.buf, cases[i].out);
        back = cJSON_Parse(w.buf);
        assert_non_null(back);
        cJSON_Delete(back);
    }
    jsonw_done(&w);
}

/* Integers and tenths as cJSON prints the doubles they stand for. */
static void
test_numbers(void **state)
{
    static const int64_t ints[] = { 0, 1, -1, 9, 10, 42, -42, 2147483647,
        2147483648LL, -2147483648LL, -2147483649LL, 1764627000123LL,
        999999999999999LL, -999999999999999LL };
    static const int64_t tenths[] = { 0, 1, 5, 9, 10, 11, -1, -5, -10, -11,
        1175, 10000, 123456789, 17646270001234LL, 999999999999999LL };
    struct jsonw         w;
    char                 want[64];

    (void)state;
    jsonw_init(&w);
    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
        jsonw_reset(&w);
        jsonw_int(&w, NULL, ints[i]);
        cjson_number((double)ints[i], want, sizeof(want));
        assert_string_equal(w.buf, want);
    }
    for (size_t i = 0; i < sizeof(tenths) / sizeof(tenths[0]); i++) {
        jsonw_reset(&w);
        jsonw_tenths(&w, NULL, tenths[i]);
        cjson_number((double)tenths[i] / 10, want, sizeof(want));
        assert_string_equal(w.buf, want);
    }
    /* Exact where cJSON would round to 15 digits. */
    jsonw_reset(&w);
    jsonw_int(&w, NULL, INT64_MIN);
    assert_string_equal(w.buf, "-9223372036854775808");
    jsonw_reset(&w);
    jsonw_tenths(&w, NULL, INT64_MAX);
    assert_string_equal(w.buf, "922337203685477580.7");
    jsonw_done(&w);
}

/* One writer, many lines: reset keeps the buffer, raw appends bytes. */
static void
test_reuse(void **state)
{
    struct jsonw w;
    char        *buf;

    (void)state;
    jsonw_init(&w);
    for (int i = 0; i < 3; i++) {
        jsonw_reset(&w);
        jsonw_object_open(&w, NULL);
        jsonw_int(&w, "i", i);
        jsonw_object_close(&w);
        jsonw_raw(&w, "\n", 1);
        if (i == 0)
            buf = w.buf;
    }
    assert_ptr_equal(w.buf, buf);
    assert_string_equal(w.buf, "{\"i\":2}\n");
    assert_int_equal(w.len, 8);
    /* Growth past the first buffer keeps every byte. */
    jsonw_reset(&w);
    jsonw_array_open(&w, NULL);
    for (int i = 0; i < 1000; i++)
        jsonw_string(&w, NULL, "0123456789");
    jsonw_array_close(&w);
    assert_int_equal(w.len, 2 + 1000 * 12 + 999);
    assert_int_equal(strlen(w.buf), w.len);
    jsonw_done(&w);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nesting),
        cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_utf8),
        cmocka_unit_test(test_bytes),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_reuse),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
