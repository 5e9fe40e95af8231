/*
 * Tests for url_redact (userinfo and secret-looking query and fragment
 * values become "***", nothing else changes), url_origin and
 * url_same_origin.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/url.h"

#define SECRET "s3cr3t-Value-9f2"

/* url_redact(in) must be want, and must not hold SECRET. */
static void
expect_redact(const char *in, const char *want)
{
    char *got = url_redact(in);

    assert_non_null(got);
    if (strcmp(got, want) != 0) {
        print_error("url_redact(\"%s\") = \"%s\", expected \"%s\"\n", in,
            got, want);
        fail();
    }
    assert_null(strstr(got, SECRET));
    free(got);
}

/* Userinfo: user, password, or both become one "***". */
static void
test_redact_userinfo(void **state)
{
    (void)state;
    expect_redact("http://user:" SECRET "@127.0.0.1:8080/mcp",
        "http://***@127.0.0.1:8080/mcp");
    expect_redact("https://" SECRET "@mcp.example.com/mcp",
        "https://***@mcp.example.com/mcp");
    expect_redact("https://:" SECRET "@mcp.example.com/mcp",
        "https://***@mcp.example.com/mcp");
    expect_redact("http://user:" SECRET "@[::1]:9000/mcp?x=1",
        "http://***@[::1]:9000/mcp?x=1");
}

/* Secret-looking query values, by name, without case. */
static void
test_redact_query(void **state)
{
    static const char *const secret[] = {
        "api_key", "APIKEY", "apiKey", "key", "Token", "access_token",
        "refresh_token", "auth", "Authorization", "password", "passwd",
        "secret", "client_secret", "sig", "signature", "x-api-key",
        "code", "session_id", "credential", "%74oken", "my+key",
    };
    static const char *const plain[] = {
        "page", "limit", "q", "format", "id", "version", "scope",
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof secret / sizeof secret[0]; i++) {
        char in[256], want[256];

        snprintf(in, sizeof in, "https://h.example/mcp?a=1&%s=" SECRET
            "&b=2", secret[i]);
        snprintf(want, sizeof want, "https://h.example/mcp?a=1&%s=***&b=2",
            secret[i]);
        expect_redact(in, want);
    }
    for (i = 0; i < sizeof plain / sizeof plain[0]; i++) {
        char in[256];

        snprintf(in, sizeof in, "https://h.example/mcp?%s=v", plain[i]);
        expect_redact(in, in);
    }
    /* Every value of a repeated name; an empty value stays empty. */
    expect_redact("http://h/?token=" SECRET "&token=" SECRET "2&key=",
        "http://h/?token=***&token=***&key=");
    /* A value-less parameter and stray '&' are kept. */
    expect_redact("http://h/?flag&&token=" SECRET,
        "http://h/?flag&&token=***");
}

/* Fragments are treated like queries (OAuth's implicit flow puts tokens
 * there). */
static void
test_redact_fragment(void **state)
{
    (void)state;
    expect_redact("https://h/cb#access_token=" SECRET "&state=xyz",
        "https://h/cb#access_token=***&state=xyz");
    expect_redact("https://h/doc#section-2", "https://h/doc#section-2");
}

/* Nothing to hide: the URL comes back exactly as written. */
static void
test_redact_untouched(void **state)
{
    (void)state;
    expect_redact("https://mcp.example.com/mcp",
        "https://mcp.example.com/mcp");
    expect_redact("HTTP://Example.com", "HTTP://Example.com");
    expect_redact("http://h:8080", "http://h:8080");
    expect_redact("http://[::1]/mcp?x=1#y", "http://[::1]/mcp?x=1#y");
    expect_redact("https://${MCPTOP_TEST_TOKEN}.example.com/mcp",
        "https://${MCPTOP_TEST_TOKEN}.example.com/mcp");
}

/* Text libcurl cannot parse: kept when it cannot hold a secret, else cut
 * to its scheme. NULL gives NULL. */
static void
test_redact_unparsed(void **state)
{
    (void)state;
    expect_redact("http://exa mple.com/", "http://exa mple.com/");
    expect_redact("http://u:" SECRET "@exa mple.com/", "http://***");
    expect_redact("not a url?token=" SECRET, "***");
    expect_redact("", "");
    assert_null(url_redact(NULL));
}

/* url_origin: lower case, default ports explicit, brackets kept. */
static void
test_origin(void **state)
{
    static const struct {
        const char *url;
        const char *origin;
    } ok[] = {
        { "http://Example.COM/x?y#z", "http://example.com:80" },
        { "https://h", "https://h:443" },
        { "HTTPS://H:8443/mcp", "https://h:8443" },
        { "http://[::1]:9000/mcp", "http://[::1]:9000" },
        { "http://user:pw@host:81/", "http://host:81" },
    };
    size_t i;
    char  *o;

    (void)state;
    for (i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        o = url_origin(ok[i].url);
        assert_non_null(o);
        assert_string_equal(o, ok[i].origin);
        free(o);
    }
    assert_null(url_origin(NULL));
    assert_null(url_origin("relative/path"));
    assert_null(url_origin("http://"));
    assert_null(url_origin("http://exa mple.com/"));
}

/* url_same_origin: RFC 6454 scheme, host and port. */
static void
test_same_origin(void **state)
{
    (void)state;
    assert_true(url_same_origin("http://h/a", "http://h:80/b?c"));
    assert_true(url_same_origin("https://H.example/x",
        "https://h.example:443/sse"));
    assert_false(url_same_origin("http://h/", "https://h/"));
    assert_false(url_same_origin("http://h:8080/", "http://h:8081/"));
    assert_false(url_same_origin("http://h/", "http://i/"));
    assert_false(url_same_origin("http://h/", NULL));
    assert_false(url_same_origin(NULL, NULL));
    assert_false(url_same_origin("/relative", "/relative"));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_redact_userinfo),
        cmocka_unit_test(test_redact_query),
        cmocka_unit_test(test_redact_fragment),
        cmocka_unit_test(test_redact_untouched),
        cmocka_unit_test(test_redact_unparsed),
        cmocka_unit_test(test_origin),
        cmocka_unit_test(test_same_origin),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
