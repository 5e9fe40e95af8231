/*
 * Tests for io/http_words.c, the server's own words in an HTTP body (issue
 * 26, item 4): Express's sentence labelled text/html is text, Playwright's
 * 403 sentence is text, a page gives its title, JSON and binary say
 * nothing, escapes are stripped, and the bounds hold (200 characters of a
 * text, 120 of a title, the detail's size with room left for what follows).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "io/http_words.h"

static enum http_words_kind
words(const char *body, const char *ct, char *out, size_t n)
{
    return http_words(body, body != NULL ? strlen(body) : 0, ct, out, n,
        HTTP_WORDS_MAX);
}

/* Characters (UTF-8 code points) in s. */
static size_t
chars_of(const char *s)
{
    size_t n = 0;

    for (; *s != '\0'; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

/* A sentence is the server speaking, whatever its content type says. */
static void
test_sentences(void **state)
{
    char out[256];

    (void)state;
    assert_int_equal(words("Session not found", "text/html; charset=utf-8",
        out, sizeof(out)), HTTP_WORDS_TEXT);
    assert_string_equal(out, "Session not found");
    assert_int_equal(words("Access is only allowed at localhost:7113\n",
        "text/plain", out, sizeof(out)), HTTP_WORDS_TEXT);
    assert_string_equal(out, "Access is only allowed at localhost:7113");
    /* No content type at all, white space folded and trimmed. */
    assert_int_equal(words("\r\n  Invalid or missing\r\n\tsession ID  \n",
        NULL, out, sizeof(out)), HTTP_WORDS_TEXT);
    assert_string_equal(out, "Invalid or missing session ID");
}

/* A page gives its title (references decoded); without one, only that it
 * is a page. */
static void
test_pages(void **state)
{
    char out[256];

    (void)state;
    assert_int_equal(words("<html>\r\n<head><title>502 Bad Gateway</title>"
        "</head></html>", "text/html", out, sizeof(out)), HTTP_WORDS_TITLED);
    assert_string_equal(out, "502 Bad Gateway");
    assert_int_equal(words("<!DOCTYPE html><html><head><TITLE lang=en>\n"
        "Sign in &amp; go\n</TITLE>", "text/html", out, sizeof(out)),
        HTTP_WORDS_TITLED);
    assert_string_equal(out, "Sign in & go");
    assert_int_equal(words("<html><body><h1>It works</h1></body></html>",
        "text/html", out, sizeof(out)), HTTP_WORDS_PAGE);
    assert_string_equal(out, "");
    /* <titles> is not <title>. */
    assert_int_equal(words("<titles>x</titles>", NULL, out, sizeof(out)),
        HTTP_WORDS_PAGE);
    /* An empty title is no title. */
    assert_int_equal(words("<title>  </title>", NULL, out, sizeof(out)),
        HTTP_WORDS_PAGE);
}

/* JSON, binary and blank bodies say nothing here. */
static void
test_nothing_to_say(void **state)
{
    char       out[64];
    const char bin[] = { 'a', 'b', '\0', 'c', 'd' };

    (void)state;
    assert_int_equal(words("{\"error\":\"invalid_token\"}", "text/plain",
        out, sizeof(out)), HTTP_WORDS_NONE);
    assert_int_equal(words("Not JSON", "application/json", out,
        sizeof(out)), HTTP_WORDS_NONE);
    assert_int_equal(words("Not JSON", "application/problem+json", out,
        sizeof(out)), HTTP_WORDS_NONE);
    assert_int_equal(words(" \r\n ", "text/plain", out, sizeof(out)),
        HTTP_WORDS_NONE);
    assert_int_equal(words("", "text/plain", out, sizeof(out)),
        HTTP_WORDS_NONE);
    assert_int_equal(http_words(bin, sizeof(bin), NULL, out, sizeof(out),
        HTTP_WORDS_MAX), HTTP_WORDS_NONE);
    assert_string_equal(out, "");
}

/* Escape sequences and control bytes never come out. */
static void
test_sanitized(void **state)
{
    char out[256];

    (void)state;
    assert_int_equal(words("Session \x1b[31mnot\x1b[0m found\x07\x1b]0;t\x07",
        "text/html", out, sizeof(out)), HTTP_WORDS_TEXT);
    assert_string_equal(out, "Session not found");
    assert_int_equal(words("<title>evil\x1b[2Jtitle</title>", "text/html",
        out, sizeof(out)), HTTP_WORDS_TITLED);
    assert_string_equal(out, "eviltitle");
}

/* At most 200 characters of a text and 120 of a title, "..." after a cut,
 * and never a split UTF-8 character. */
static void
test_bounds(void **state)
{
    char  body[2048], out[1024];
    char *title;

    (void)state;
    memset(body, 'x', sizeof(body) - 1);
    body[sizeof(body) - 1] = '\0';
    assert_int_equal(words(body, "text/plain", out, sizeof(out)),
        HTTP_WORDS_TEXT);
    assert_int_equal(chars_of(out), HTTP_WORDS_MAX + 3);
    assert_non_null(strstr(out, "..."));
    body[0] = '\0';
    for (int i = 0; i < 300; i++)
        strcat(body, "\xc3\xa9");      /* é: two bytes each */
    assert_int_equal(words(body, NULL, out, sizeof(out)), HTTP_WORDS_TEXT);
    assert_int_equal(chars_of(out), HTTP_WORDS_MAX + 3);
    /* A small buffer bounds it too, on a character boundary. */
    assert_int_equal(words(body, NULL, out, 21), HTTP_WORDS_TEXT);
    assert_true(strlen(out) <= 20);
    assert_int_equal(strlen(out) % 2, 1);       /* n é's and "..." */
    /* A cut ends at a word's end when one is near. */
    body[0] = '\0';
    for (int i = 0; i < 40; i++)
        strcat(body, "overloaded ");
    assert_int_equal(words(body, NULL, out, sizeof(out)), HTTP_WORDS_TEXT);
    assert_true(chars_of(out) <= HTTP_WORDS_MAX + 3);
    assert_non_null(strstr(out, "overloaded overloaded..."));
    assert_int_equal(strlen(strstr(out, "overloaded...")), 13);
    title = malloc(400);
    strcpy(title, "<title>");
    for (int i = 0; i < 300; i++)
        strcat(title, "t");
    strcat(title, "</title>");
    assert_int_equal(words(title, "text/html", out, sizeof(out)),
        HTTP_WORDS_TITLED);
    assert_int_equal(chars_of(out), HTTP_WORDS_TITLE + 3);
    free(title);
}

/* The clause appended to a detail, and the room it leaves. */
static void
test_append(void **state)
{
    char   detail[256];
    size_t off;
    char   body[1024];

    (void)state;
    off = (size_t)snprintf(detail, sizeof(detail), "HTTP 404 to ping");
    off = http_words_append(detail, sizeof(detail), off, 56,
        "Session not found", 17, "text/html");
    assert_string_equal(detail, "HTTP 404 to ping; the server says "
        "\"Session not found\"");
    assert_int_equal(off, strlen(detail));
    off = (size_t)snprintf(detail, sizeof(detail), "HTTP 502");
    off = http_words_append(detail, sizeof(detail), off, 56,
        "<title>502 Bad Gateway</title>", 30, "text/html");
    assert_string_equal(detail, "HTTP 502; an HTML page titled \"502 Bad "
        "Gateway\"");
    off = (size_t)snprintf(detail, sizeof(detail), "HTTP 200");
    off = http_words_append(detail, sizeof(detail), off, 56, "<p>hi</p>",
        9, "text/html");
    assert_string_equal(detail, "HTTP 200; an HTML page");
    /* A long text leaves the reserve free. */
    memset(body, 'y', sizeof(body));
    off = (size_t)snprintf(detail, sizeof(detail), "HTTP 403 to initialize");
    off = http_words_append(detail, sizeof(detail), off, 56, body,
        sizeof(body), "text/plain");
    assert_int_equal(off, strlen(detail));
    assert_true(off + 56 < sizeof(detail));
    assert_non_null(strstr(detail, "...\""));
    /* No room: nothing added. */
    memset(detail, 'z', 230);
    detail[230] = '\0';
    assert_int_equal(http_words_append(detail, sizeof(detail), 230, 0,
        "Session not found", 17, NULL), 230);
    assert_int_equal(strlen(detail), 230);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sentences),
        cmocka_unit_test(test_pages),
        cmocka_unit_test(test_nothing_to_say),
        cmocka_unit_test(test_sanitized),
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_append),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
