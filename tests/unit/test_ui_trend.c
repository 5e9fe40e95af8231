/*
 * Tests for the trends (issue 34, include/ui/trend.h): TREND's nice scale
 * and bar levels, the scale's text, the glyphs (UTF-8 and ASCII, clamped)
 * and the header graph's ring of ten-second buckets (the fewest ok in a
 * bucket, skipped buckets repeated, the ring's wrap, a clock that went
 * back); and the filter's tools:changed term (the incident line's "tools
 * changed" entry) and the empty value of reason: and http: on a fleet
 * built from a config and never started.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/config.h"
#include "engine/fleet.h"
#include "engine/server.h"
#include "ui/model.h"
#include "ui/trend.h"

static void
test_scale(void **state)
{
    (void)state;
    assert_true(trend_scale(0) == 0);
    assert_true(trend_scale(-3) == 0);
    assert_true(trend_scale(87) == 100);
    assert_true(trend_scale(100) == 100);
    assert_true(trend_scale(101) == 200);
    assert_true(trend_scale(200) == 200);
    assert_true(trend_scale(201) == 500);
    assert_true(trend_scale(501) == 1000);
    assert_true(trend_scale(1000) == 1000);
    assert_true(trend_scale(1200) == 2000);
    assert_true(trend_scale(402.5) == 500);
    assert_true(trend_scale(3.2) == 5);
    assert_true(trend_scale(1.5) == 2);
    assert_in_range((long)(trend_scale(0.3) * 1000 + 0.5), 500, 500);
    assert_in_range((long)(trend_scale(0.01) * 1000 + 0.5), 10, 10);
}

static void
test_level(void **state)
{
    (void)state;
    /* Eight levels on [0, scale]: ceil(v / scale x 8) - 1. */
    assert_int_equal(trend_level(0, 100), 0);
    assert_int_equal(trend_level(-1, 100), 0);
    assert_int_equal(trend_level(0.1, 100), 0);     /* any v > 0: a bar */
    assert_int_equal(trend_level(12.5, 100), 0);
    assert_int_equal(trend_level(12.6, 100), 1);
    assert_int_equal(trend_level(50, 100), 3);
    assert_int_equal(trend_level(87.5, 100), 6);
    assert_int_equal(trend_level(88, 100), 7);
    assert_int_equal(trend_level(100, 100), 7);
    assert_int_equal(trend_level(1e9, 100), 7);     /* clamped */
    assert_int_equal(trend_level(50, 0), 0);        /* no scale */
    /* The fleet graph: ok of total. */
    assert_int_equal(trend_level(12, 12), 7);
    assert_int_equal(trend_level(1, 12), 0);
    assert_int_equal(trend_level(6, 12), 3);
}

static void
test_text_and_glyphs(void **state)
{
    char buf[16];

    (void)state;
    trend_scale_text(buf, sizeof(buf), 500);
    assert_string_equal(buf, "500ms");
    trend_scale_text(buf, sizeof(buf), 0.5);
    assert_string_equal(buf, "0.5ms");
    trend_scale_text(buf, sizeof(buf), 2000);
    assert_string_equal(buf, "2s");
    trend_scale_text(buf, sizeof(buf), 10000);
    assert_string_equal(buf, "10s");
    assert_string_equal(trend_glyph(0, true), "\xe2\x96\x81");   /* ▁ */
    assert_string_equal(trend_glyph(7, true), "\xe2\x96\x88");   /* █ */
    assert_string_equal(trend_glyph(-5, true), "\xe2\x96\x81");
    assert_string_equal(trend_glyph(99, true), "\xe2\x96\x88");
    assert_string_equal(trend_glyph(0, false), "_");
    assert_string_equal(trend_glyph(7, false), "@");
    for (int l = 0; l < TREND_LEVELS; l++)
        assert_int_equal(strlen(trend_glyph(l, false)), 1);
    /* A failure is no bar of either alphabet. */
    for (int l = 0; l < TREND_LEVELS; l++) {
        assert_string_not_equal(trend_gap(true), trend_glyph(l, true));
        assert_string_not_equal(trend_gap(false), trend_glyph(l, false));
    }
}

static void
assert_bucket(const struct trend_fleet *f, size_t i, size_t ok, size_t total)
{
    size_t o, t;

    trend_fleet_get(f, i, &o, &t);
    assert_int_equal(o, ok);
    assert_int_equal(t, total);
}

static void
test_fleet_ring(void **state)
{
    struct trend_fleet f;
    int64_t            t0 = 1700000000000LL;    /* on a bucket's start */
    size_t             o, t;

    (void)state;
    memset(&f, 0, sizeof(f));
    trend_fleet_get(&f, 0, &o, &t);
    assert_int_equal(o + t, 0);
    trend_fleet_sample(&f, t0, 5, 12);
    assert_int_equal(f.len, 1);
    assert_bucket(&f, 0, 5, 12);
    /* The same bucket keeps the fewest ok. */
    trend_fleet_sample(&f, t0 + 2000, 3, 12);
    trend_fleet_sample(&f, t0 + 9999, 9, 12);
    assert_int_equal(f.len, 1);
    assert_bucket(&f, 0, 3, 12);
    /* The next bucket. */
    trend_fleet_sample(&f, t0 + 10000, 9, 12);
    assert_int_equal(f.len, 2);
    assert_bucket(&f, 0, 3, 12);
    assert_bucket(&f, 1, 9, 12);
    /* Three buckets without a sample repeat the last value. */
    trend_fleet_sample(&f, t0 + 50000, 12, 12);
    assert_int_equal(f.len, 6);
    assert_bucket(&f, 2, 9, 12);
    assert_bucket(&f, 4, 9, 12);
    assert_bucket(&f, 5, 12, 12);
    /* Past the end: nothing. */
    trend_fleet_get(&f, 6, &o, &t);
    assert_int_equal(o + t, 0);
    /* The ring wraps: the newest TREND_FLEET_BUCKETS stay, oldest first. */
    for (int i = 0; i < TREND_FLEET_BUCKETS + 7; i++)
        trend_fleet_sample(&f, t0 + 60000 + (int64_t)i * 10000, (size_t)i,
            100);
    assert_int_equal(f.len, TREND_FLEET_BUCKETS);
    assert_bucket(&f, 0, 7, 100);
    assert_bucket(&f, TREND_FLEET_BUCKETS - 1, TREND_FLEET_BUCKETS + 6, 100);
    /* A long gap fills at most a ring's worth, then the new value. */
    trend_fleet_sample(&f, t0 + 100000000LL, 1, 2);
    assert_int_equal(f.len, TREND_FLEET_BUCKETS);
    assert_bucket(&f, TREND_FLEET_BUCKETS - 1, 1, 2);
    assert_bucket(&f, TREND_FLEET_BUCKETS - 2, TREND_FLEET_BUCKETS + 6, 100);
    /* A clock that went back (a replay's seek) starts again. */
    trend_fleet_sample(&f, t0, 4, 4);
    assert_int_equal(f.len, 1);
    assert_bucket(&f, 0, 4, 4);
}

static const char fixture[] =
    "{\"mcpServers\": {"
    "  \"alpha\": {\"url\": \"http://127.0.0.1:1/mcp\"},"
    "  \"beta\": {\"url\": \"http://127.0.0.1:2/mcp\"},"
    "  \"gamma\": {\"url\": \"http://127.0.0.1:3/mcp\"}"
    "}}";

/* The names the filter keeps, space separated. */
static const char *
kept(struct model *m, const char *filter)
{
    static char buf[256];

    model_set_filter(m, filter);
    model_rebuild(m, 0);
    buf[0] = '\0';
    for (size_t p = 0; p < m->nvis; p++)
        snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s",
            p > 0 ? " " : "", server_name(fleet_server(m->fleet,
            m->order[p])));
    return buf;
}

static void
test_filter_tools_changed(void **state)
{
    struct config       *cfg = NULL;
    struct fleet        *fleet;
    struct fleet_options opt = { 0 };
    struct model         m;
    char                *cause = NULL;

    (void)state;
    assert_int_equal(config_parse(fixture, strlen(fixture), "test", &cfg,
        &cause), 0);
    fleet = fleet_new(EV_DEFAULT, cfg, &opt, &cause);
    assert_non_null(fleet);
    model_init(&m, fleet);
    assert_string_equal(kept(&m, "tools:changed"), "");
    for (size_t i = 0; i < m.n; i++) {
        if (strcmp(server_name(fleet_server(fleet, i)), "beta") == 0)
            m.srv[i].tool_changes = 2;
    }
    assert_string_equal(kept(&m, "tools:changed"), "beta");
    assert_string_equal(kept(&m, "tools:"), "beta");
    assert_string_equal(kept(&m, "!tools:changed"), "alpha gamma");
    assert_string_equal(kept(&m, "tools:other"), "");
    assert_string_equal(m.filter_error, "");
    /* No current failure: an empty reason: or http: matches nothing, so
     * its negation keeps every row. */
    assert_string_equal(kept(&m, "reason:"), "");
    assert_string_equal(kept(&m, "!reason: !http:"), "alpha beta gamma");
    model_done(&m);
    fleet_free(fleet);
    config_free(cfg);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scale),
        cmocka_unit_test(test_level),
        cmocka_unit_test(test_text_and_glyphs),
        cmocka_unit_test(test_fleet_ring),
        cmocka_unit_test(test_filter_tools_changed),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
