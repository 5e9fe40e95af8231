/*
 * Tests for the liveness record (DESIGN.md section 4): the one mint,
 * liveness_of, for a completed exchange and for every failure kind against
 * a table written out here, error_code only on unreachable, invalid_config
 * as no observation, and observed_at carried through.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/failure.h"
#include "engine/liveness.h"

#define T_OBSERVED INT64_C(1767225600123)    /* 2026-01-01T00:00:00.123Z */

/* DESIGN.md section 4: the state each kind supports; present=false is
 * "no observation" (shown as a dash). */
struct expect_row {
    bool                present;
    enum liveness_state state;
};

static const struct expect_row expected[FAILURE__COUNT] = {
    [FAILURE_CONNECT_REFUSED]   = { true,  LIVENESS_UNREACHABLE },
    [FAILURE_CONNECTION_FAILED] = { true,  LIVENESS_UNREACHABLE },
    [FAILURE_CONNECTION_CLOSED] = { true,  LIVENESS_UNREACHABLE },
    [FAILURE_HTTP_STATUS]       = { true,  LIVENESS_UNKNOWN },
    [FAILURE_NOT_MCP_RESPONSE]  = { true,  LIVENESS_UNKNOWN },
    [FAILURE_SPAWN_FAILED]      = { true,  LIVENESS_UNREACHABLE },
    [FAILURE_TIMEOUT]           = { true,  LIVENESS_UNREACHABLE },
    [FAILURE_PROTOCOL]          = { true,  LIVENESS_REACHABLE },
    [FAILURE_INVALID_CONFIG]    = { false, LIVENESS_UNKNOWN },
    [FAILURE_UNKNOWN]           = { true,  LIVENESS_UNKNOWN },
};

/* A completed exchange: reachable, no error code, the time kept. */
static void
test_completed(void **state)
{
    struct outcome  o = outcome_completed();
    struct liveness l;

    (void)state;
    assert_true(o.completed);
    l = liveness_of(o, T_OBSERVED);
    assert_true(l.present);
    assert_int_equal(l.state, LIVENESS_REACHABLE);
    assert_int_equal(l.observed_at, T_OBSERVED);
    assert_false(l.has_error_code);

    /* completed wins whatever kind rides along. */
    o.kind = FAILURE_TIMEOUT;
    l = liveness_of(o, 5);
    assert_true(l.present);
    assert_int_equal(l.state, LIVENESS_REACHABLE);
    assert_int_equal(l.observed_at, 5);
    assert_false(l.has_error_code);
}

/* Every kind against DESIGN.md section 4. */
static void
test_every_kind(void **state)
{
    int k;

    (void)state;
    for (k = 0; k < FAILURE__COUNT; k++) {
        struct outcome      o = outcome_failed(k);
        struct liveness     l = liveness_of(o, T_OBSERVED + k);
        enum liveness_state st = LIVENESS__COUNT;
        bool                has;

        assert_false(o.completed);
        assert_int_equal(o.kind, k);
        if (l.present != expected[k].present ||
            (l.present && l.state != expected[k].state)) {
            print_error("kind %s: present %d state %s, expected present %d "
                "state %s\n", failure_kind_name(k), l.present,
                liveness_state_name(l.state), expected[k].present,
                liveness_state_name(expected[k].state));
        }
        assert_int_equal(l.present, expected[k].present);
        has = liveness_state_of_kind(k, &st);
        assert_int_equal(has, expected[k].present);
        if (!expected[k].present) {
            /* No observation: no time, no code. */
            assert_int_equal(l.observed_at, 0);
            assert_false(l.has_error_code);
            assert_int_equal(st, LIVENESS__COUNT);
            continue;
        }
        assert_int_equal(l.state, expected[k].state);
        assert_int_equal(st, expected[k].state);
        assert_int_equal(l.observed_at, T_OBSERVED + k);
        /* error_code rides only on unreachable, and names the kind. */
        if (expected[k].state == LIVENESS_UNREACHABLE) {
            assert_true(l.has_error_code);
            assert_int_equal(l.error_code, k);
        } else {
            assert_false(l.has_error_code);
        }
    }
}

/* Spot checks named in DESIGN.md, independent of the table above. */
static void
test_named_cases(void **state)
{
    struct liveness l;

    (void)state;
    /* An answer proves reach, even an error. */
    l = liveness_of(outcome_failed(FAILURE_PROTOCOL), 42);
    assert_true(l.present);
    assert_int_equal(l.state, LIVENESS_REACHABLE);
    assert_false(l.has_error_code);

    /* A gateway may have written the status: unknown. */
    l = liveness_of(outcome_failed(FAILURE_HTTP_STATUS), 42);
    assert_true(l.present);
    assert_int_equal(l.state, LIVENESS_UNKNOWN);
    assert_false(l.has_error_code);

    /* A timeout proves the exchange did not complete. */
    l = liveness_of(outcome_failed(FAILURE_TIMEOUT), 42);
    assert_true(l.present);
    assert_int_equal(l.state, LIVENESS_UNREACHABLE);
    assert_true(l.has_error_code);
    assert_int_equal(l.error_code, FAILURE_TIMEOUT);

    /* invalid_config is no observation at all. */
    l = liveness_of(outcome_failed(FAILURE_INVALID_CONFIG), 42);
    assert_false(l.present);
    assert_false(l.has_error_code);
    assert_int_equal(l.observed_at, 0);

    /* A kind out of range is no observation either. */
    l = liveness_of(outcome_failed(FAILURE__COUNT), 42);
    assert_false(l.present);
    assert_false(l.has_error_code);
}

/* observed_at is carried through untouched, whatever its value. */
static void
test_observed_at_kept(void **state)
{
    static const int64_t times[] = { 0, 1, T_OBSERVED, INT64_MAX, -1 };
    size_t               i;

    (void)state;
    for (i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
        struct liveness l;

        l = liveness_of(outcome_completed(), times[i]);
        assert_int_equal(l.observed_at, times[i]);
        l = liveness_of(outcome_failed(FAILURE_CONNECT_REFUSED), times[i]);
        assert_int_equal(l.observed_at, times[i]);
        l = liveness_of(outcome_failed(FAILURE_UNKNOWN), times[i]);
        assert_int_equal(l.observed_at, times[i]);
    }
}

/* State names. */
static void
test_state_names(void **state)
{
    (void)state;
    assert_string_equal(liveness_state_name(LIVENESS_REACHABLE),
        "reachable");
    assert_string_equal(liveness_state_name(LIVENESS_UNREACHABLE),
        "unreachable");
    assert_string_equal(liveness_state_name(LIVENESS_UNKNOWN), "unknown");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_completed),
        cmocka_unit_test(test_every_kind),
        cmocka_unit_test(test_named_cases),
        cmocka_unit_test(test_observed_at_kept),
        cmocka_unit_test(test_state_names),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
