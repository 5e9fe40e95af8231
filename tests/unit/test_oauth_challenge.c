/*
 * Tests for WWW-Authenticate parsing (RFC 9110 section 11.6.1, RFC 6750
 * section 3, RFC 9728 section 5.1): the MCP challenges the conformance
 * suite's servers send, several challenges in one header, quoted strings
 * with escapes and commas, token68, case, junk, and an absent header.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "oauth/oauth_challenge.h"

static void
test_mcp_step_up(void **state)
{
    struct oauth_challenge c;

    (void)state;
    oauth_challenge_parse("Bearer error=\"insufficient_scope\", "
        "scope=\"mcp:basic mcp:write\", resource_metadata=\"http://"
        "localhost:1234/.well-known/oauth-protected-resource/mcp\", "
        "error_description=\"Scope upgrade will never succeed\"", &c);
    assert_true(c.present);
    assert_true(c.bearer);
    assert_string_equal(c.scheme, "Bearer");
    assert_string_equal(c.scope, "mcp:basic mcp:write");
    assert_string_equal(c.error, "insufficient_scope");
    assert_string_equal(c.resource_metadata,
        "http://localhost:1234/.well-known/oauth-protected-resource/mcp");
    assert_string_equal(c.error_description,
        "Scope upgrade will never succeed");
    assert_true(oauth_challenge_insufficient_scope(&c));
    oauth_challenge_done(&c);
}

static void
test_token_values_and_case(void **state)
{
    struct oauth_challenge c;

    (void)state;
    oauth_challenge_parse("bearer ERROR=invalid_token ,Scope=read", &c);
    assert_true(c.bearer);
    assert_string_equal(c.error, "invalid_token");
    assert_string_equal(c.scope, "read");
    assert_null(c.resource_metadata);
    assert_false(oauth_challenge_insufficient_scope(&c));
    oauth_challenge_done(&c);
}

static void
test_bare_bearer(void **state)
{
    struct oauth_challenge c;

    (void)state;
    oauth_challenge_parse("Bearer", &c);
    assert_true(c.present);
    assert_true(c.bearer);
    assert_null(c.scope);
    assert_null(c.error);
    oauth_challenge_done(&c);
}

static void
test_absent(void **state)
{
    struct oauth_challenge c;

    (void)state;
    oauth_challenge_parse(NULL, &c);
    assert_false(c.present);
    assert_false(c.bearer);
    assert_string_equal(c.scheme, "");
    oauth_challenge_done(&c);
}

static void
test_other_scheme_first(void **state)
{
    struct oauth_challenge c;

    (void)state;
    /* A Basic challenge with a comma in its realm, then ours. */
    oauth_challenge_parse("Basic realm=\"a, b\", charset=\"UTF-8\", "
        "Bearer realm=\"mcp\", scope=\"x y\"", &c);
    assert_true(c.bearer);
    assert_string_equal(c.scheme, "Basic");
    assert_string_equal(c.scope, "x y");
    oauth_challenge_done(&c);
}

static void
test_token68_then_bearer(void **state)
{
    struct oauth_challenge c;

    (void)state;
    oauth_challenge_parse("Negotiate abc+/9==, Bearer scope=\"s\"", &c);
    assert_true(c.bearer);
    assert_string_equal(c.scheme, "Negotiate");
    assert_string_equal(c.scope, "s");
    oauth_challenge_done(&c);
}

static void
test_only_other_scheme(void **state)
{
    struct oauth_challenge c;

    (void)state;
    oauth_challenge_parse("Basic realm=\"x\"", &c);
    assert_true(c.present);
    assert_false(c.bearer);
    assert_string_equal(c.scheme, "Basic");
    assert_null(c.scope);
    oauth_challenge_done(&c);
}

static void
test_bearer_params_stop_at_next_challenge(void **state)
{
    struct oauth_challenge c;

    (void)state;
    /* The second challenge's scope is not the Bearer one's. */
    oauth_challenge_parse("Bearer error=\"e1\", DPoP scope=\"other\"", &c);
    assert_true(c.bearer);
    assert_string_equal(c.error, "e1");
    assert_null(c.scope);
    oauth_challenge_done(&c);
}

static void
test_escapes_and_first_wins(void **state)
{
    struct oauth_challenge c;

    (void)state;
    oauth_challenge_parse("Bearer error_description=\"say \\\"no\\\", "
        "please\", scope=\"a\", scope=\"b\"", &c);
    assert_string_equal(c.error_description, "say \"no\", please");
    assert_string_equal(c.scope, "a");
    oauth_challenge_done(&c);
}

static void
test_malformed(void **state)
{
    struct oauth_challenge c;
    char                  *big;

    (void)state;
    /* Unterminated quote: the value is dropped, nothing crashes. */
    oauth_challenge_parse("Bearer scope=\"open", &c);
    assert_true(c.bearer);
    assert_null(c.scope);
    oauth_challenge_done(&c);
    oauth_challenge_parse(",,, ;;; = \"\" Bearer ,, scope=x", &c);
    assert_true(c.bearer);
    assert_string_equal(c.scope, "x");
    oauth_challenge_done(&c);
    /* A value past the bound is dropped. */
    big = malloc(OAUTH_CHALLENGE_VALUE_MAX + 64);
    strcpy(big, "Bearer scope=\"");
    memset(big + 14, 'a', OAUTH_CHALLENGE_VALUE_MAX + 1);
    strcpy(big + 14 + OAUTH_CHALLENGE_VALUE_MAX + 1, "\"");
    oauth_challenge_parse(big, &c);
    assert_true(c.bearer);
    assert_null(c.scope);
    oauth_challenge_done(&c);
    free(big);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mcp_step_up),
        cmocka_unit_test(test_token_values_and_case),
        cmocka_unit_test(test_bare_bearer),
        cmocka_unit_test(test_absent),
        cmocka_unit_test(test_other_scheme_first),
        cmocka_unit_test(test_token68_then_bearer),
        cmocka_unit_test(test_only_other_scheme),
        cmocka_unit_test(test_bearer_params_stop_at_next_challenge),
        cmocka_unit_test(test_escapes_and_first_wins),
        cmocka_unit_test(test_malformed),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
