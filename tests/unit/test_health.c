/*
 * Tests for the one mint of health (DESIGN.md section 4b): every state
 * from its inputs, the operator's states before any observation, and the
 * closed set's names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "engine/health.h"

static struct liveness
live(enum liveness_state st)
{
    struct liveness l = { .present = true, .state = st,
        .observed_at = 1000 };

    return l;
}

static enum health_state
of(enum health_operator op, const struct liveness *l, unsigned long streak,
    bool probe, bool loop)
{
    struct health_input in = { .operator_state = op, .liveness = l,
        .fail_streak = streak, .probe_failing = probe,
        .pagination_loop = loop };

    return health_of(&in).state;
}

/* Monitored: the liveness record decides, then what the answers say. */
static void
test_from_liveness(void **state)
{
    struct liveness r = live(LIVENESS_REACHABLE);
    struct liveness u = live(LIVENESS_UNREACHABLE);
    struct liveness k = live(LIVENESS_UNKNOWN);
    struct liveness absent = { .present = false };

    (void)state;
    assert_int_equal(of(HEALTH_OPERATOR_MONITORED, &r, 0, false, false),
        HEALTH_OK);
    assert_int_equal(of(HEALTH_OPERATOR_MONITORED, &u, 3, false, false),
        HEALTH_DOWN);
    assert_int_equal(of(HEALTH_OPERATOR_MONITORED, &k, 3, false, false),
        HEALTH_UNKNOWN);
    assert_int_equal(of(HEALTH_OPERATOR_MONITORED, &absent, 0, false,
        false), HEALTH_PENDING);
    assert_int_equal(of(HEALTH_OPERATOR_MONITORED, NULL, 0, false, false),
        HEALTH_PENDING);
}

/* Reachable but failing: JSON-RPC errors, a failing deep check, a
 * pagination loop are degraded, never ok and never down. */
static void
test_degraded(void **state)
{
    struct liveness r = live(LIVENESS_REACHABLE);
    struct health_input in = { .operator_state = HEALTH_OPERATOR_MONITORED,
        .liveness = &r, .fail_streak = 2 };
    struct health       h = health_of(&in);

    (void)state;
    assert_int_equal(h.state, HEALTH_DEGRADED);
    assert_string_equal(h.reason, "answers with JSON-RPC errors");
    in.fail_streak = 0;
    in.probe_failing = true;
    h = health_of(&in);
    assert_int_equal(h.state, HEALTH_DEGRADED);
    assert_string_equal(h.reason, "the deep check fails");
    in.probe_failing = false;
    in.pagination_loop = true;
    assert_int_equal(health_of(&in).state, HEALTH_DEGRADED);
    in.pagination_loop = false;
    h = health_of(&in);
    assert_int_equal(h.state, HEALTH_OK);
    assert_string_equal(h.reason, "");
}

/* Reachable, but every initialize refused with a JSON-RPC error (a
 * gateway whose child died): down, "cannot be initialized", not the
 * degraded of a server whose calls fail. */
static void
test_cannot_be_initialized(void **state)
{
    struct liveness r = live(LIVENESS_REACHABLE);
    struct liveness u = live(LIVENESS_UNREACHABLE);
    struct health_input in = { .operator_state = HEALTH_OPERATOR_MONITORED,
        .liveness = &r, .fail_streak = 3, .init_refused = true };
    struct health       h = health_of(&in);

    (void)state;
    assert_int_equal(h.state, HEALTH_DOWN);
    assert_string_equal(h.reason, "cannot be initialized");
    in.liveness = &u;
    assert_string_equal(health_of(&in).reason, "unreachable");
    in.liveness = &r;
    in.operator_state = HEALTH_OPERATOR_PAUSED;
    assert_int_equal(health_of(&in).state, HEALTH_PAUSED);
    in.operator_state = HEALTH_OPERATOR_MONITORED;
    in.init_refused = false;
    assert_int_equal(health_of(&in).state, HEALTH_DEGRADED);
}

/* A crash loop (issue 45, item 4): down while its words are given, even
 * when the fresh child answers (reachable, nothing failing); ok only once
 * they are gone. The operator's states still win. */
static void
test_crash_loop(void **state)
{
    static const char words[] = "crash loop: exited 2 times in 1 s";
    struct liveness     r = live(LIVENESS_REACHABLE);
    struct liveness     u = live(LIVENESS_UNREACHABLE);
    struct health_input in = { .operator_state = HEALTH_OPERATOR_MONITORED,
        .liveness = &r, .crash_loop = words };
    struct health       h = health_of(&in);

    (void)state;
    assert_int_equal(h.state, HEALTH_DOWN);
    assert_string_equal(h.reason, words);
    in.liveness = &u;
    h = health_of(&in);
    assert_int_equal(h.state, HEALTH_DOWN);
    assert_string_equal(h.reason, words);
    in.operator_state = HEALTH_OPERATOR_PAUSED;
    assert_int_equal(health_of(&in).state, HEALTH_PAUSED);
    in.operator_state = HEALTH_OPERATOR_MONITORED;
    in.liveness = &r;
    in.crash_loop = NULL;
    assert_int_equal(health_of(&in).state, HEALTH_OK);
}

/* The operator's states win over any observation, and are not
 * monitored; an invalid entry is monitored and not ok. */
static void
test_operator_states(void **state)
{
    struct liveness u = live(LIVENESS_UNREACHABLE);

    (void)state;
    assert_int_equal(of(HEALTH_OPERATOR_PAUSED, &u, 5, true, false),
        HEALTH_PAUSED);
    assert_int_equal(of(HEALTH_OPERATOR_STOPPED, &u, 5, false, false),
        HEALTH_STOPPED);
    assert_int_equal(of(HEALTH_OPERATOR_DISABLED, NULL, 0, false, false),
        HEALTH_DISABLED);
    assert_int_equal(of(HEALTH_OPERATOR_INVALID, NULL, 0, false, false),
        HEALTH_INVALID);
    assert_false(health_monitored(HEALTH_PAUSED));
    assert_false(health_monitored(HEALTH_STOPPED));
    assert_false(health_monitored(HEALTH_DISABLED));
    assert_true(health_monitored(HEALTH_INVALID));
    assert_true(health_monitored(HEALTH_DOWN));
}

/* Publishing: the first verdict and each change of state, never the same
 * state again (a new reason under it is no change). */
static void
test_track(void **state)
{
    struct liveness     r = live(LIVENESS_REACHABLE);
    struct liveness     u = live(LIVENESS_UNREACHABLE);
    struct health_input in = { .operator_state = HEALTH_OPERATOR_MONITORED };
    struct health_track t = { 0 };
    enum health_state   was = HEALTH_OK;

    (void)state;
    assert_true(health_track_update(&t, &in, 10, &was));
    assert_int_equal(was, HEALTH__COUNT);
    assert_true(t.set);
    assert_int_equal(t.health.state, HEALTH_PENDING);
    assert_int_equal(t.since, 10);
    assert_false(health_track_update(&t, &in, 20, &was));
    assert_int_equal(t.since, 10);
    in.liveness = &r;
    in.fail_streak = 1;
    assert_true(health_track_update(&t, &in, 30, &was));
    assert_int_equal(was, HEALTH_PENDING);
    assert_int_equal(t.health.state, HEALTH_DEGRADED);
    /* Degraded for another reason: the same state, not published. */
    in.fail_streak = 0;
    in.probe_failing = true;
    assert_false(health_track_update(&t, &in, 40, NULL));
    assert_string_equal(t.health.reason, "answers with JSON-RPC errors");
    in.liveness = &u;
    assert_true(health_track_update(&t, &in, 50, NULL));
    assert_int_equal(t.health.state, HEALTH_DOWN);
    assert_int_equal(t.since, 50);
}

/* The closed set and its words. */
static void
test_names(void **state)
{
    static const char *const want[] = { "ok", "degraded", "down",
        "unknown", "pending", "invalid", "paused", "stopped", "disabled" };

    (void)state;
    assert_int_equal(HEALTH__COUNT, sizeof(want) / sizeof(want[0]));
    for (int i = 0; i < HEALTH__COUNT; i++)
        assert_string_equal(health_state_name((enum health_state)i),
            want[i]);
    assert_string_equal(health_state_name(HEALTH__COUNT), "?");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_from_liveness),
        cmocka_unit_test(test_degraded),
        cmocka_unit_test(test_cannot_be_initialized),
        cmocka_unit_test(test_crash_loop),
        cmocka_unit_test(test_operator_states),
        cmocka_unit_test(test_track),
        cmocka_unit_test(test_names),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
