/*
 * Tests for the discovery URLs (MCP 2025-11-25 basic/authorization; RFC
 * 9728 section 3.1; RFC 8414 section 3.1; OpenID Connect Discovery 1.0):
 * the path-based then root protected resource metadata, the path
 * insertion order of authorization server metadata with and without a
 * path, the canonical resource URI, the resource-covers rule, issuer
 * comparison and percent-encoding.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "engine/http.h"
#include "engine/oauth_url.h"
#include "engine/url.h"

static void
free_all(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
}

static void
test_prm_path_then_root(void **state)
{
    char  *u[OAUTH_URL_PRM_MAX];
    size_t n;

    (void)state;
    n = oauth_url_prm("https://Example.COM/public/mcp", u);
    assert_int_equal(n, 2);
    assert_string_equal(u[0],
        "https://example.com/.well-known/oauth-protected-resource/public/mcp");
    assert_string_equal(u[1],
        "https://example.com/.well-known/oauth-protected-resource");
    free_all(u, n);
    n = oauth_url_prm("http://127.0.0.1:8080/mcp?tenant=a#frag", u);
    assert_int_equal(n, 2);
    assert_string_equal(u[0], "http://127.0.0.1:8080/.well-known/"
        "oauth-protected-resource/mcp?tenant=a");
    assert_string_equal(u[1],
        "http://127.0.0.1:8080/.well-known/oauth-protected-resource");
    free_all(u, n);
    /* No path: only the root one. */
    n = oauth_url_prm("https://example.com/", u);
    assert_int_equal(n, 1);
    assert_string_equal(u[0],
        "https://example.com/.well-known/oauth-protected-resource");
    free_all(u, n);
    assert_int_equal(oauth_url_prm("ftp://example.com/x", u), 0);
    assert_int_equal(oauth_url_prm("not a url", u), 0);
}

static void
test_as_metadata_with_path(void **state)
{
    char  *u[OAUTH_URL_AS_MAX];
    size_t n;

    (void)state;
    n = oauth_url_as_metadata("https://auth.example.com/tenant1", u);
    assert_int_equal(n, 3);
    assert_string_equal(u[0], "https://auth.example.com/.well-known/"
        "oauth-authorization-server/tenant1");
    assert_string_equal(u[1], "https://auth.example.com/.well-known/"
        "openid-configuration/tenant1");
    assert_string_equal(u[2], "https://auth.example.com/tenant1/"
        ".well-known/openid-configuration");
    free_all(u, n);
    /* A trailing slash is dropped; a port is kept; a default one is not. */
    n = oauth_url_as_metadata("https://auth.example.com:443/a/b/", u);
    assert_int_equal(n, 3);
    assert_string_equal(u[0], "https://auth.example.com/.well-known/"
        "oauth-authorization-server/a/b");
    free_all(u, n);
    n = oauth_url_as_metadata("http://localhost:9000/t", u);
    assert_string_equal(u[2],
        "http://localhost:9000/t/.well-known/openid-configuration");
    free_all(u, n);
}

static void
test_as_metadata_root(void **state)
{
    char  *u[OAUTH_URL_AS_MAX];
    size_t n;

    (void)state;
    n = oauth_url_as_metadata("https://auth.example.com", u);
    assert_int_equal(n, 2);
    assert_string_equal(u[0],
        "https://auth.example.com/.well-known/oauth-authorization-server");
    assert_string_equal(u[1],
        "https://auth.example.com/.well-known/openid-configuration");
    free_all(u, n);
    n = oauth_url_as_metadata("https://auth.example.com/", u);
    assert_int_equal(n, 2);
    free_all(u, n);
}

static void
test_resource_and_origin(void **state)
{
    char *r;

    (void)state;
    r = oauth_url_resource("HTTPS://MCP.Example.com:443/Server/MCP#x");
    assert_string_equal(r, "https://mcp.example.com/Server/MCP");
    free(r);
    r = oauth_url_resource("http://localhost:3000/");
    assert_string_equal(r, "http://localhost:3000");
    free(r);
    r = oauth_url_resource("http://h/mcp?x=1");
    assert_string_equal(r, "http://h/mcp?x=1");
    free(r);
    r = oauth_url_origin("http://[::1]:8080/mcp");
    assert_string_equal(r, "http://[::1]:8080");
    free(r);
    assert_null(oauth_url_origin("file:///etc/passwd"));
    assert_null(oauth_url_resource(NULL));
    assert_true(oauth_url_is_http("http://a/b"));
    assert_false(oauth_url_is_http("javascript:alert(1)"));
}

static void
test_resource_covers(void **state)
{
    (void)state;
    assert_true(oauth_url_resource_covers("http://h:1/mcp", "http://h:1/mcp"));
    assert_true(oauth_url_resource_covers("http://h:1", "http://h:1/mcp"));
    assert_true(oauth_url_resource_covers("http://h:1/", "http://h:1/mcp"));
    assert_true(oauth_url_resource_covers("http://H:1/a/", "http://h:1/a/b"));
    assert_false(oauth_url_resource_covers("http://h:1/mc", "http://h:1/mcp"));
    assert_false(oauth_url_resource_covers("http://h:2/mcp",
        "http://h:1/mcp"));
    assert_false(oauth_url_resource_covers("https://h:1/mcp",
        "http://h:1/mcp"));
    assert_false(oauth_url_resource_covers("http://evil/mcp",
        "http://h/mcp"));
    assert_false(oauth_url_resource_covers("http://h/mcp/x", "http://h/mcp"));
}

static void
test_issuer_and_escape(void **state)
{
    char *e;

    (void)state;
    assert_true(oauth_url_same_issuer("https://a/t", "https://a/t/"));
    assert_true(oauth_url_same_issuer("https://a/", "https://a"));
    assert_false(oauth_url_same_issuer("https://a/t", "https://a/u"));
    assert_false(oauth_url_same_issuer(NULL, "https://a"));
    e = url_escape("a b&c=d/é~");
    assert_string_equal(e, "a%20b%26c%3Dd%2F%C3%A9~");
    free(e);
    e = url_unescape_form("a+b%20c%26", 10);
    assert_string_equal(e, "a b c&");
    free(e);
    assert_null(url_unescape_form("x%00y", 5));
}

static int
setup(void **state)
{
    (void)state;
    return http_global_init();
}

static int
teardown(void **state)
{
    (void)state;
    http_global_cleanup();
    return 0;
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prm_path_then_root),
        cmocka_unit_test(test_as_metadata_with_path),
        cmocka_unit_test(test_as_metadata_root),
        cmocka_unit_test(test_resource_and_origin),
        cmocka_unit_test(test_resource_covers),
        cmocka_unit_test(test_issuer_and_escape),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
