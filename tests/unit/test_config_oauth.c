/*
 * Tests for a server's "oauth" object (issue 16): every key read, secrets
 * expanded like headers and never put in a message, each bad value named,
 * unknown keys warned about, and the object ignored (with a warning) on a
 * stdio server.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "engine/config.h"

static struct config *
parse(const char *text)
{
    struct config *cfg = NULL;
    char          *cause = NULL;

    assert_int_equal(config_parse(text, strlen(text), "test", &cfg, &cause),
        0);
    return cfg;
}

static void
test_all_keys(void **state)
{
    struct config             *cfg;
    const struct config_oauth *o;

    (void)state;
    setenv("MCPTOP_TEST_SECRET", "s3cr3t-value", 1);
    cfg = parse("{\"mcpServers\": {\"a\": {\"url\": \"https://h/mcp\", "
        "\"oauth\": {\"client_id\": \"cid\", \"client_secret\": "
        "\"${MCPTOP_TEST_SECRET}\", \"token_endpoint_auth_method\": "
        "\"private_key_jwt\", \"private_key_file\": \"key.pem\", "
        "\"signing_algorithm\": \"RS256\", \"grant\": "
        "\"client_credentials\", \"scope\": \"read write\", "
        "\"client_metadata_url\": \"https://c/meta.json\"}}}}");
    assert_null(cfg->servers[0].invalid);
    o = cfg->servers[0].oauth;
    assert_non_null(o);
    assert_string_equal(o->client_id, "cid");
    assert_string_equal(o->client_secret, "s3cr3t-value");
    assert_string_equal(o->token_endpoint_auth_method, "private_key_jwt");
    assert_string_equal(o->private_key_file, "key.pem");
    assert_string_equal(o->signing_algorithm, "RS256");
    assert_int_equal(o->grant, CONFIG_OAUTH_CLIENT_CREDENTIALS);
    assert_string_equal(o->scope, "read write");
    assert_string_equal(o->client_metadata_url, "https://c/meta.json");
    assert_int_equal(cfg->nwarnings, 0);
    config_free(cfg);
}

static void
test_empty_and_absent(void **state)
{
    struct config *cfg;

    (void)state;
    cfg = parse("{\"mcpServers\": {\"a\": {\"url\": \"https://h/mcp\", "
        "\"oauth\": {}}, \"b\": {\"url\": \"https://h/mcp\"}}}");
    assert_non_null(cfg->servers[0].oauth);
    assert_int_equal(cfg->servers[0].oauth->grant,
        CONFIG_OAUTH_AUTHORIZATION_CODE);
    assert_null(cfg->servers[0].oauth->client_id);
    assert_null(cfg->servers[1].oauth);
    config_free(cfg);
}

/* The entry is invalid and the message says `want`, never the secret. */
static void
expect_invalid(const char *oauth_json, const char *want)
{
    char          *text;
    struct config *cfg;

    setenv("MCPTOP_TEST_SECRET", "s3cr3t-value", 1);
    text = malloc(strlen(oauth_json) + 128);
    strcpy(text, "{\"mcpServers\": {\"a\": {\"url\": \"https://h/mcp\", "
        "\"oauth\": ");
    strcat(text, oauth_json);
    strcat(text, "}}}");
    cfg = parse(text);
    assert_non_null(cfg->servers[0].invalid);
    assert_non_null(strstr(cfg->servers[0].invalid, want));
    assert_null(strstr(cfg->servers[0].invalid, "s3cr3t"));
    config_free(cfg);
    free(text);
}

static void
test_bad_values(void **state)
{
    (void)state;
    expect_invalid("[]", "\"oauth\" is an array, expected an object");
    expect_invalid("{\"client_id\": 7}", "\"client_id\" must be a non-empty");
    expect_invalid("{\"client_secret\": \"${MCPTOP_UNSET_VAR_XYZ}\"}",
        "MCPTOP_UNSET_VAR_XYZ");
    expect_invalid("{\"grant\": \"password\"}", "\"grant\" must be");
    expect_invalid("{\"token_endpoint_auth_method\": \"tls\"}",
        "token_endpoint_auth_method");
    expect_invalid("{\"signing_algorithm\": \"HS256\"}", "signing_algorithm");
    expect_invalid("{\"token_endpoint_auth_method\": \"private_key_jwt\"}",
        "needs \"private_key_file\"");
    expect_invalid("{\"grant\": \"client_credentials\"}",
        "needs \"client_id\"");
    expect_invalid("{\"client_metadata_url\": \"http://c/m.json\"}",
        "https://");
    expect_invalid("{\"client_secret\": \"${MCPTOP_TEST_SECRET}\", "
        "\"grant\": 1}", "\"grant\" must be");
}

static void
test_warnings(void **state)
{
    struct config *cfg;

    (void)state;
    cfg = parse("{\"mcpServers\": {\"a\": {\"url\": \"https://h/mcp\", "
        "\"oauth\": {\"client_id\": \"x\", \"clientid\": \"y\"}}, "
        "\"s\": {\"command\": \"x\", \"oauth\": {\"scope\": \"a\"}}}}");
    assert_null(cfg->servers[0].invalid);
    assert_int_equal(cfg->nwarnings, 2);
    assert_non_null(strstr(cfg->warnings[0], "oauth.clientid"));
    assert_non_null(strstr(cfg->warnings[1], "ignored for a stdio server"));
    assert_null(cfg->servers[1].oauth);
    config_free(cfg);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_keys),
        cmocka_unit_test(test_empty_and_absent),
        cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_warnings),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
