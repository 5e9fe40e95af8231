/*
 * Tests for oauth/oauth_doc.c's token answers in a form
 * (application/x-www-form-urlencoded, RFC 6749 section 5 members; GitHub
 * answers so when Accept is not honoured; issue 26, item 12): every member
 * read and decoded, expires_in a number, an error answer, the first of a
 * repeated member, unknown members and undecodable values dropped, and
 * the choice between a form and JSON by the content type.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "oauth/oauth_doc.h"

static struct oauth_doc *
form(const char *text)
{
    return oauth_doc_parse_form(text, strlen(text));
}

/* GitHub's answer: every member, '+' and %XX decoded, expires_in a
 * number. */
static void
test_token_form(void **state)
{
    struct oauth_doc *d;
    double            exp = 0;

    (void)state;
    d = form("access_token=gho_16C7e42F292c6912E7710c838347Ae178B4a&"
        "token_type=bearer&expires_in=28800&refresh_token=ghr_1B4a2e77"
        "&scope=repo%2Cgist+read%3Auser");
    assert_non_null(d);
    assert_string_equal(oauth_doc_string(d, "access_token"),
        "gho_16C7e42F292c6912E7710c838347Ae178B4a");
    assert_string_equal(oauth_doc_string(d, "token_type"), "bearer");
    assert_true(oauth_doc_number(d, "expires_in", &exp));
    assert_true(exp == 28800);
    assert_null(oauth_doc_string(d, "expires_in"));
    assert_string_equal(oauth_doc_string(d, "refresh_token"), "ghr_1B4a2e77");
    assert_string_equal(oauth_doc_string(d, "scope"), "repo,gist read:user");
    oauth_doc_free(d);
}

/* An error answer (GitHub answers them 200, as a form). */
static void
test_error_form(void **state)
{
    struct oauth_doc *d;

    (void)state;
    d = form("error=bad_verification_code&error_description=The+code+"
        "passed+is+incorrect+or+expired.&error_uri=https%3A%2F%2Fdocs");
    assert_non_null(d);
    assert_null(oauth_doc_string(d, "access_token"));
    assert_string_equal(oauth_doc_string(d, "error"), "bad_verification_code");
    assert_string_equal(oauth_doc_string(d, "error_description"),
        "The code passed is incorrect or expired.");
    assert_string_equal(oauth_doc_string(d, "error_uri"), "https://docs");
    oauth_doc_free(d);
}

/* The first of a repeated member wins; unknown members, pairs without
 * '=', values that decode to a NUL byte and an expires_in that is not a
 * plain number (kept as text, so not a number) are handled. */
static void
test_odd_forms(void **state)
{
    struct oauth_doc *d;
    double            exp = 0;

    (void)state;
    d = form("access_token=first&access_token=second&x=1&novalue&"
        "refresh_token=a%00b&expires_in=12abc&&token_type=Bearer");
    assert_non_null(d);
    assert_string_equal(oauth_doc_string(d, "access_token"), "first");
    assert_null(oauth_doc_string(d, "x"));
    assert_null(oauth_doc_string(d, "refresh_token"));
    assert_false(oauth_doc_number(d, "expires_in", &exp));
    assert_string_equal(oauth_doc_string(d, "expires_in"), "12abc");
    assert_string_equal(oauth_doc_string(d, "token_type"), "Bearer");
    oauth_doc_free(d);
    /* Nothing a token answer has: no document. */
    assert_null(form("a=1&b=2"));
    assert_null(form(""));
    assert_null(oauth_doc_parse_form(NULL, 0));
    assert_null(form("<html><title>Sign in</title></html>"));
}

/* The content type chooses: a form, else JSON. */
static void
test_answer_by_type(void **state)
{
    static const char json[] = "{\"access_token\":\"j\",\"expires_in\":60}";
    static const char text[] = "access_token=f&expires_in=60";
    struct oauth_doc *d;
    double            exp = 0;

    (void)state;
    d = oauth_doc_parse_answer(text, strlen(text),
        "application/x-www-form-urlencoded; charset=utf-8");
    assert_non_null(d);
    assert_string_equal(oauth_doc_string(d, "access_token"), "f");
    assert_true(oauth_doc_number(d, "expires_in", &exp) && exp == 60);
    oauth_doc_free(d);
    d = oauth_doc_parse_answer(json, strlen(json), "application/json");
    assert_non_null(d);
    assert_string_equal(oauth_doc_string(d, "access_token"), "j");
    oauth_doc_free(d);
    d = oauth_doc_parse_answer(json, strlen(json), NULL);
    assert_non_null(d);
    oauth_doc_free(d);
    /* A form labelled JSON is not JSON. */
    assert_null(oauth_doc_parse_answer(text, strlen(text),
        "application/json"));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_token_form),
        cmocka_unit_test(test_error_form),
        cmocka_unit_test(test_odd_forms),
        cmocka_unit_test(test_answer_by_type),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
