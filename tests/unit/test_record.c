/*
 * Tests for the record's history ring (src/engine/record.c): it starts
 * small, grows while it fills, keeps the last MCP_HISTORY exchanges in
 * order once it wraps, and keeps each exchange's fields.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "engine/record.h"

static void
test_ring_grows_then_wraps_in_order(void **state)
{
    struct record  r;
    struct failure f;

    (void)state;
    record_init(&r);
    assert_null(record_history(&r, 0));
    memset(&f, 0, sizeof(f));
    f.kind = FAILURE_HTTP_STATUS;
    f.delivered = DELIVERED_UNKNOWN;
    f.http_status = 503;
    for (int i = 0; i < 250; i++) {
        record_exchange(&r, i % 2 ? "ping" : "delete", i % 5 == 0 ? &f :
            NULL, i + 0.5, 1000 + i);
        if (i == 9)
            assert_true(r.hist_cap < MCP_HISTORY);
    }
    assert_int_equal(r.hist_len, MCP_HISTORY);
    assert_int_equal(r.hist_cap, MCP_HISTORY);
    assert_null(record_history(&r, MCP_HISTORY));
    for (size_t k = 0; k < MCP_HISTORY; k++) {
        const struct mcp_exchange *x = record_history(&r, k);
        int i = 150 + (int)k;

        assert_non_null(x);
        assert_int_equal(x->ts, 1000 + i);
        assert_int_equal(record_seq(&r, k), (uint64_t)i + 1);
        assert_true(x->ms > i && x->ms < i + 1);
        assert_string_equal(x->op, i % 2 ? "ping" : "delete");
        assert_int_equal(x->ending, i % 2 == 0);
        assert_int_equal(x->completed, i % 5 != 0);
        if (i % 5 == 0) {
            assert_int_equal(x->kind, FAILURE_HTTP_STATUS);
            assert_int_equal(x->delivered, DELIVERED_UNKNOWN);
            assert_int_equal(x->http_status, 503);
        } else {
            assert_int_equal(x->http_status, 0);
        }
    }
    record_done(&r);
    assert_null(record_history(&r, 0));
}

/* A short life: the ring never takes a hundred entries. */
static void
test_short_history_stays_small(void **state)
{
    struct record r;

    (void)state;
    record_init(&r);
    for (int i = 0; i < 5; i++)
        record_exchange(&r, "ping", NULL, 1.0, 1000 + i);
    assert_int_equal(r.hist_len, 5);
    assert_true(r.hist_cap <= 16);
    assert_int_equal(record_history(&r, 4)->ts, 1004);
    record_done(&r);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_grows_then_wraps_in_order),
        cmocka_unit_test(test_short_history_stays_small),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
