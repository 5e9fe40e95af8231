/*
 * Tests for a session's one header list (engine/http.h, issue 30): built
 * once, kept while every header it carries is the same, rebuilt when one
 * changes (a new session id, a refreshed token, the protocol version,
 * another method), and alive for a transfer that still holds the old one;
 * and for an answer buffer that grows on demand from a small start.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/config.h"
#include "engine/http.h"

static struct http_request
post(const char *session, const char *pv, const char *auth)
{
    struct http_request rq = {
        .method = HTTP_POST,
        .url = "http://127.0.0.1:1/mcp",
        .body = "{}",
        .body_len = 2,
        .session_id = session,
        .protocol_version = pv,
        .authorization = auth,
    };

    return rq;
}

static void
test_same_headers_same_list(void **state)
{
    struct http_hdrs   *slot = NULL, *a, *b;
    struct http_request rq = post("s1", "2025-06-18", NULL);

    (void)state;
    assert_false(http_hdrs_fit(NULL, &rq));
    a = http_hdrs_for(&slot, &rq);
    assert_non_null(a);
    assert_ptr_equal(a, slot);
    assert_true(http_hdrs_fit(a, &rq));
    /* The same values from other strings: the same list. */
    {
        char                session[] = "s1";
        struct http_request again = post(session, "2025-06-18", NULL);

        again.body = "{\"other\":1}";
        b = http_hdrs_for(&slot, &again);
        assert_ptr_equal(a, b);
    }
    http_hdrs_unref(a);
    http_hdrs_unref(b);
    http_hdrs_unref(slot);
}

static void
test_a_changed_header_rebuilds(void **state)
{
    struct http_hdrs   *slot = NULL, *old, *cur;
    struct http_request rq = post("s1", "2025-06-18", "Bearer one");
    struct http_request v[6];

    (void)state;
    v[0] = post("s2", "2025-06-18", "Bearer one");     /* new session id */
    v[1] = post("s1", "2025-06-18", "Bearer two");     /* token refresh */
    v[2] = post("s1", "2025-03-26", "Bearer one");     /* protocol version */
    v[3] = post("s1", "2025-06-18", NULL);             /* token dropped */
    v[4] = post(NULL, "2025-06-18", "Bearer one");     /* session gone */
    v[5] = rq;
    v[5].method = HTTP_GET;                            /* another method */
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        old = http_hdrs_for(&slot, &rq);
        assert_true(http_hdrs_fit(old, &rq));
        assert_false(http_hdrs_fit(old, &v[i]));
        cur = http_hdrs_for(&slot, &v[i]);
        assert_ptr_not_equal(cur, old);
        assert_ptr_equal(cur, slot);
        assert_true(http_hdrs_fit(cur, &v[i]));
        /* The transfer that holds the old list can still read it (ASan
         * would say otherwise): it fits what it was built for. */
        assert_true(http_hdrs_fit(old, &rq));
        http_hdrs_unref(old);
        http_hdrs_unref(cur);
    }
    http_hdrs_unref(slot);
}

static void
test_modern_method_header(void **state)
{
    struct http_hdrs   *slot = NULL, *a, *b;
    struct http_request ping = post(NULL, "2026-07-28", NULL);
    struct http_request list;

    (void)state;
    ping.mcp_method = "ping";
    list = ping;
    list.mcp_method = "tools/list";
    a = http_hdrs_for(&slot, &ping);
    b = http_hdrs_for(&slot, &list);
    assert_ptr_not_equal(a, b);
    assert_false(http_hdrs_fit(b, &ping));
    list.no_cache = true;
    assert_false(http_hdrs_fit(b, &list));
    http_hdrs_unref(a);
    http_hdrs_unref(b);
    http_hdrs_unref(slot);
}

static void
test_user_headers_and_empty_values(void **state)
{
    struct str_kv    kv[2] = { { "X-Team", "blue" }, { "X-Empty", NULL } };
    struct str_kv    kv2[2] = { { "X-Team", "red" }, { "X-Empty", NULL } };
    struct http_hdrs   *slot = NULL, *a;
    struct http_request rq = post("s", "2025-06-18", NULL);
    struct http_request other;

    (void)state;
    rq.headers = kv;
    rq.nheaders = 2;
    other = rq;
    other.headers = kv2;
    a = http_hdrs_for(&slot, &rq);
    assert_true(http_hdrs_fit(a, &rq));
    assert_false(http_hdrs_fit(a, &other));
    other.nheaders = 1;
    assert_false(http_hdrs_fit(a, &other));
    http_hdrs_unref(a);
    http_hdrs_unref(slot);
    http_hdrs_unref(NULL);
}

static void
test_buffer_grows_on_demand(void **state)
{
    (void)state;
    /* A small start, whatever the bound. */
    assert_int_equal(http_buffer_grow(0, 41, 4u << 20), HTTP_BODY_START);
    assert_true(HTTP_BODY_START < 4096);
    /* Doubled until it holds what is needed. */
    assert_int_equal(http_buffer_grow(HTTP_BODY_START, HTTP_BODY_START + 1,
        4u << 20), 2 * HTTP_BODY_START);
    assert_int_equal(http_buffer_grow(0, 5000, 4u << 20), 8192);
    /* Never past the bound. */
    assert_int_equal(http_buffer_grow(0, 900, 1000), 900);
    assert_int_equal(http_buffer_grow(512, 1000, 1000), 1000);
    assert_int_equal(http_buffer_grow(0, 10, 100), 100);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_headers_same_list),
        cmocka_unit_test(test_a_changed_header_rebuilds),
        cmocka_unit_test(test_modern_method_header),
        cmocka_unit_test(test_user_headers_and_empty_values),
        cmocka_unit_test(test_buffer_grows_on_demand),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
