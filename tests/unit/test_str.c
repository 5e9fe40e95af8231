/*
 * Tests for the string helpers, mostly the sanitizer: each kind of control
 * and escape sequence it must remove, UTF-8 validation, truncation that
 * neither overruns the buffer nor splits a character, and a seeded random
 * check that no control byte or invalid UTF-8 ever comes out.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/str.h"

/* Calls str_vprintf through a va_list, as a wrapper in the tree would. */
static char *__attribute__((format(printf, 1, 2)))
vprintf_wrap(const char *fmt, ...)
{
    va_list ap;
    char   *p;

    va_start(ap, fmt);
    p = str_vprintf(fmt, ap);
    va_end(ap);
    return p;
}

/* str_printf and str_vprintf format into a string of the right size. */
static void
test_printf(void **state)
{
    char  *p;
    size_t i;

    (void)state;
    p = str_printf("%s-%d-%c", "abc", 42, 'z');
    assert_string_equal(p, "abc-42-z");
    free(p);
    p = str_printf("%s", "");
    assert_string_equal(p, "");
    free(p);
    p = str_printf("%0700d", 7);
    assert_int_equal(strlen(p), 700);
    for (i = 0; i < 699; i++)
        assert_int_equal(p[i], '0');
    assert_int_equal(p[699], '7');
    free(p);
    p = vprintf_wrap("%s:%u", "port", 8080u);
    assert_string_equal(p, "port:8080");
    free(p);
}

/* str_dup copies, and passes NULL through. */
static void
test_dup(void **state)
{
    const char *s = "hello";
    char       *p;

    (void)state;
    assert_null(str_dup(NULL));
    p = str_dup(s);
    assert_ptr_not_equal(p, s);
    assert_string_equal(p, "hello");
    free(p);
    p = str_dup("");
    assert_string_equal(p, "");
    free(p);
}

/* str_ndup copies at most n bytes and stops at a NUL. */
static void
test_ndup(void **state)
{
    char *p;

    (void)state;
    p = str_ndup("abcdef", 3);
    assert_string_equal(p, "abc");
    free(p);
    p = str_ndup("abc", 10);
    assert_string_equal(p, "abc");
    free(p);
    p = str_ndup("abc", 0);
    assert_string_equal(p, "");
    free(p);
    p = str_ndup("ab\0cd", 5);
    assert_string_equal(p, "ab");
    free(p);
    /* The source need not be terminated within n. */
    p = str_ndup((const char[]){ 'x', 'y' }, 2);
    assert_string_equal(p, "xy");
    free(p);
    assert_null(str_ndup(NULL, 4));
}

/* One sanitizer case: input (len bytes, strlen when 0) and output. */
struct san_case {
    const char *in;
    size_t      len;
    const char *out;
};

/* Run a table of cases with a buffer large enough for each. */
static void
san_run(const struct san_case *c, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        char   buf[256];
        size_t len = c[i].len ? c[i].len : strlen(c[i].in);
        size_t got;

        memset(buf, 'Z', sizeof buf);
        got = str_sanitize(buf, sizeof buf, c[i].in, len);
        if (strcmp(buf, c[i].out) != 0)
            print_error("case %zu: got \"%s\"\n", i, buf);
        assert_string_equal(buf, c[i].out);
        assert_int_equal(got, strlen(c[i].out));
    }
}

/* Plain text, tabs, line ends and C0 controls. */
static void
test_sanitize_plain_and_c0(void **state)
{
    static const struct san_case c[] = {
        { "hello world", 0, "hello world" },
        { "", 0, "" },
        { "a\tb\t\tc", 0, "a b  c" },
        { "line1\nline2\r\nline3\r", 0, "line1line2line3" },
        { "a\x01\x02\x07\x08\x0b\x0c\x0e\x1f\x7f" "b", 0, "ab" },
        { "a\0b", 3, "ab" },
        { "~!@#$%^&*()_+{}|:\"<>?`-=[]\\;',./", 0,
          "~!@#$%^&*()_+{}|:\"<>?`-=[]\\;',./" },
    };

    (void)state;
    san_run(c, sizeof c / sizeof c[0]);
}

/* Whole ESC sequences go, not just the ESC byte. */
static void
test_sanitize_escapes(void **state)
{
    static const struct san_case c[] = {
        /* CSI */
        { "\x1b[31mred\x1b[0m", 0, "red" },
        { "\x1b[?25l\x1b[2J\x1b[1;1Hx", 0, "x" },
        { "a\x1b[38;2;255;0;0mb", 0, "ab" },
        { "\x1b[ qcursor", 0, "cursor" },
        { "\x1b[31\x1b[0mz", 0, "z" },
        { "\x1b[", 0, "" },
        { "x\x1b[12;3", 0, "x" },
        /* OSC, ended by BEL or ST, or unterminated */
        { "\x1b]0;title\x07" "after", 0, "after" },
        { "\x1b]8;;http://e.com/\x1b\\link\x1b]8;;\x1b\\", 0, "link" },
        { "\x1b]52;c;ZXZpbA==\x07ok", 0, "ok" },
        { "x\x1b]0;never ends\n\t more", 0, "x" },
        { "\x1b]0;t\x1b[1mb", 0, "b" },
        /* DCS, APC */
        { "\x1bP1$r0m\x1b\\ok", 0, "ok" },
        { "\x1b_payload\x1b\\ok", 0, "ok" },
        /* two-byte and charset sequences */
        { "a\x1b" "cb", 0, "ab" },
        { "\x1b" "7x\x1b" "8", 0, "x" },
        { "\x1b=\x1b>y", 0, "y" },
        { "\x1b(Bx\x1b)0", 0, "x" },
        /* lone ESC */
        { "x\x1b", 0, "x" },
        { "\x1b\x1b[1mx", 0, "x" },
        { "\x1b\xc3\xa9", 0, "\xc3\xa9" },
        { "\x1b\n z", 0, " z" },
    };

    (void)state;
    san_run(c, sizeof c / sizeof c[0]);
}

/* C1 controls, raw (outside UTF-8) or UTF-8 encoded. */
static void
test_sanitize_c1(void **state)
{
    static const struct san_case c[] = {
        /* raw 8-bit CSI and OSC open sequences */
        { "\x9b" "31mX", 0, "X" },
        { "a\x9b" "2J" "b", 0, "ab" },
        { "\x9d" "0;title\x07X", 0, "X" },
        { "\x9d" "0;title\x9cX", 0, "X" },
        { "\x9d" "0;title\x1b\\X", 0, "X" },
        /* other raw C1 bytes are invalid UTF-8 */
        { "a\x85" "b", 0, "a?b" },
        /* UTF-8 encoded C1 */
        { "a\xc2\x85" "b", 0, "ab" },
        { "a\xc2\x80\xc2\x99" "b", 0, "ab" },
        { "\xc2\x9f" "apc\xc2\x9cok", 0, "ok" },
        { "\xc2\x9b" "31mX", 0, "X" },
        { "\xc2\x9d" "0;t\xc2\x9cX", 0, "X" },
        { "\xc2\x9d" "0;t\x07X", 0, "X" },
        /* U+00A0 is the first code point after C1 and stays */
        { "\xc2\xa0", 0, "\xc2\xa0" },
    };

    (void)state;
    san_run(c, sizeof c / sizeof c[0]);
}

/* Valid UTF-8 stays; each byte of an invalid sequence becomes '?'. */
static void
test_sanitize_utf8(void **state)
{
    static const struct san_case c[] = {
        { "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 0,
          "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80" },
        { "\xef\xbf\xbd", 0, "\xef\xbf\xbd" },
        { "\xf4\x8f\xbf\xbf", 0, "\xf4\x8f\xbf\xbf" },
        { "\xff", 0, "?" },
        { "\xfe\xff", 0, "??" },
        { "\x80", 0, "?" },
        { "\xc0\xaf", 0, "??" },
        { "\xc1\xbf", 0, "??" },
        { "\xe0\x80\xaf", 0, "???" },
        { "\xf0\x80\x80\xaf", 0, "????" },
        { "\xed\xa0\x80", 0, "???" },
        { "\xf4\x90\x80\x80", 0, "????" },
        { "\xf5\x80\x80\x80", 0, "????" },
        { "\xe2\x82", 0, "??" },
        { "\xe2\x82" "a", 0, "??a" },
        { "\xc3" "a\xc3\xa9", 0, "?a\xc3\xa9" },
    };

    (void)state;
    san_run(c, sizeof c / sizeof c[0]);
}

/* Never past dstsz, always terminated, never half a character. */
static void
test_sanitize_truncation(void **state)
{
    char   buf[16];
    size_t i;

    (void)state;
    memset(buf, 'Z', sizeof buf);
    assert_int_equal(str_sanitize(buf, 4, "abcdef", 6), 3);
    assert_string_equal(buf, "abc");
    for (i = 4; i < sizeof buf; i++)
        assert_int_equal(buf[i], 'Z');

    memset(buf, 'Z', sizeof buf);
    assert_int_equal(str_sanitize(buf, 0, "abc", 3), 0);
    for (i = 0; i < sizeof buf; i++)
        assert_int_equal(buf[i], 'Z');

    assert_int_equal(str_sanitize(buf, 1, "abc", 3), 0);
    assert_string_equal(buf, "");

    /* "a" then a 3-byte euro sign. */
    memset(buf, 'Z', sizeof buf);
    assert_int_equal(str_sanitize(buf, 4, "a\xe2\x82\xac", 4), 1);
    assert_string_equal(buf, "a");
    assert_int_equal(buf[2], 'Z');
    assert_int_equal(str_sanitize(buf, 5, "a\xe2\x82\xac", 4), 4);
    assert_string_equal(buf, "a\xe2\x82\xac");
    /* Nothing after a character that did not fit, even if it would. */
    assert_int_equal(str_sanitize(buf, 3, "\xf0\x9f\x98\x80z", 5), 0);
    assert_string_equal(buf, "");

    /* Dropped bytes take no room. */
    assert_int_equal(str_sanitize(buf, 3, "\x1b[1ma\x1b[0mb", 10), 2);
    assert_string_equal(buf, "ab");
    assert_int_equal(str_sanitize(buf, 2, "a\tb", 3), 1);
    assert_string_equal(buf, "a");
    assert_int_equal(str_sanitize(buf, 2, "\xff\xff", 2), 1);
    assert_string_equal(buf, "?");

    /* srclen bounds the read, not a NUL. */
    assert_int_equal(str_sanitize(buf, sizeof buf, "abcdef", 2), 2);
    assert_string_equal(buf, "ab");
    assert_int_equal(str_sanitize(buf, sizeof buf, NULL, 5), 0);
    assert_string_equal(buf, "");
}

/* The heap flavour sanitizes a NUL-terminated string. */
static void
test_sanitized(void **state)
{
    char *p;

    (void)state;
    assert_null(str_sanitized(NULL));
    p = str_sanitized("\x1b[1mtool\x1b[0m\tname\n\xff");
    assert_string_equal(p, "tool name?");
    free(p);
    p = str_sanitized("");
    assert_string_equal(p, "");
    free(p);
}

/* Length of the valid UTF-8 character at s, 0 if none (test's own). */
static size_t
utf8_char_len(const unsigned char *s, size_t n, uint32_t *cp)
{
    size_t   len;
    uint32_t v;
    size_t   k;

    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    if ((s[0] & 0xe0) == 0xc0) {
        len = 2;
        v = s[0] & 0x1f;
    } else if ((s[0] & 0xf0) == 0xe0) {
        len = 3;
        v = s[0] & 0x0f;
    } else if ((s[0] & 0xf8) == 0xf0) {
        len = 4;
        v = s[0] & 0x07;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (k = 1; k < len; k++) {
        if ((s[k] & 0xc0) != 0x80)
            return 0;
        v = (v << 6) | (s[k] & 0x3f);
    }
    if ((len == 2 && v < 0x80) || (len == 3 && v < 0x800) ||
        (len == 4 && v < 0x10000) || v > 0x10ffff ||
        (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return len;
}

/* Assert s (len bytes) is valid UTF-8 holding no control character. */
static void
assert_displayable(const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t               i = 0;

    while (i < len) {
        uint32_t cp = 0;
        size_t   n = utf8_char_len(u + i, len - i, &cp);

        assert_int_not_equal(n, 0);
        assert_false(cp < 0x20);
        assert_false(cp >= 0x7f && cp <= 0x9f);
        i += n;
    }
}

/* Next value of a fixed-seed generator, so failures reproduce. */
static uint32_t
lcg_next(uint32_t *seed)
{
    *seed = *seed * 1664525u + 1013904223u;
    return *seed >> 8;
}

/* Random hostile input never yields controls, bad UTF-8 or overruns. */
static void
test_sanitize_random(void **state)
{
    static const unsigned char alphabet[] = {
        0x1b, '[', ']', '\\', 0x07, 0x9b, 0x9d, 0x9c, 0xc2, 0x80, 0x85,
        0xbf, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0xed, 0xa0, 'a', 'm', ';', '0',
        0x7f, '\t', '\n', '\r', 0x00, ' ', 'P', '(', 0xff, 0xc3, 0xa9,
    };
    uint32_t seed = 12345;
    int      iter;

    (void)state;
    for (iter = 0; iter < 3000; iter++) {
        unsigned char in[64];
        char          full[80];
        char          part[80];
        size_t        len = lcg_next(&seed) % sizeof in;
        size_t        flen;
        size_t        dstsz;
        size_t        i;

        for (i = 0; i < len; i++) {
            uint32_t r = lcg_next(&seed);

            if (r % 4 == 0)
                in[i] = (unsigned char)(r >> 4);
            else
                in[i] = alphabet[(r >> 4) % sizeof alphabet];
        }
        flen = str_sanitize(full, sizeof full, (const char *)in, len);
        assert_true(flen <= len);
        assert_int_equal(strlen(full), flen);
        assert_displayable(full, flen);
        /* Every smaller buffer gets the longest whole-character prefix. */
        for (dstsz = 1; dstsz <= flen + 1; dstsz++) {
            size_t   plen;
            uint32_t cp;

            memset(part, 'Z', sizeof part);
            plen = str_sanitize(part, dstsz, (const char *)in, len);
            assert_true(plen < dstsz);
            assert_int_equal(part[plen], '\0');
            for (i = dstsz; i < sizeof part; i++)
                assert_int_equal(part[i], 'Z');
            assert_memory_equal(part, full, plen);
            if (plen < flen) {
                size_t next = utf8_char_len(
                    (const unsigned char *)full + plen, flen - plen, &cp);

                assert_true(plen + next > dstsz - 1);
            }
        }
    }
}

/* Visible ASCII is 0x21-0x7E only, and never empty. */
static void
test_is_visible_ascii(void **state)
{
    (void)state;
    assert_true(str_is_visible_ascii("abc-123_XYZ~!", 13));
    assert_true(str_is_visible_ascii("ab cd", 2));
    assert_false(str_is_visible_ascii("ab cd", 5));
    assert_false(str_is_visible_ascii("", 0));
    assert_false(str_is_visible_ascii("abc", 0));
    assert_false(str_is_visible_ascii(NULL, 0));
    assert_false(str_is_visible_ascii("a\x7f", 2));
    assert_false(str_is_visible_ascii("a\tb", 3));
    assert_false(str_is_visible_ascii("a\0b", 3));
    assert_false(str_is_visible_ascii("\xc3\xa9", 2));
    assert_true(str_is_visible_ascii("!", 1));
    assert_true(str_is_visible_ascii("~", 1));
}

/* Bidirectional overrides and marks are dropped: "abc\u202Edef" must not
 * show as "abcfed". */
static void
test_sanitize_bidi(void **state)
{
    char out[64];

    (void)state;
    str_sanitize(out, sizeof(out), "abc\xe2\x80\xae" "def\xe2\x81\xa6x", 13);
    assert_string_equal(out, "abcdefx");
    str_sanitize(out, sizeof(out), "\xe2\x80\x8fok", 5);
    assert_string_equal(out, "ok");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sanitize_bidi),
        cmocka_unit_test(test_printf),
        cmocka_unit_test(test_dup),
        cmocka_unit_test(test_ndup),
        cmocka_unit_test(test_sanitize_plain_and_c0),
        cmocka_unit_test(test_sanitize_escapes),
        cmocka_unit_test(test_sanitize_c1),
        cmocka_unit_test(test_sanitize_utf8),
        cmocka_unit_test(test_sanitize_truncation),
        cmocka_unit_test(test_sanitized),
        cmocka_unit_test(test_sanitize_random),
        cmocka_unit_test(test_is_visible_ascii),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
