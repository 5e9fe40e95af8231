/*
 * Tests for the TUI's model (no terminal): the filter language (words,
 * fields, negation, an unknown field, health words), the sort by name and
 * its reversal, missing values last, the counts and the sort by health,
 * and the line buffer's ellipsis. The fleet is built
 * from a config; only the invalid declaration is started (it is judged at
 * once, with no network), so every other server is idle, with no
 * observation, and the loop never runs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "engine/config.h"
#include "engine/fleet.h"
#include "ui/line.h"
#include "ui/model.h"

static const char fixture[] =
    "{\"mcpServers\": {"
    "  \"alpha\": {\"url\": \"http://127.0.0.1:1/mcp\", \"tags\": [\"prod\"]},"
    "  \"beta\": {\"url\": \"http://127.0.0.1:1/mcp\","
    "            \"tags\": [\"preprod\", \"eu\"]},"
    "  \"gamma\": {\"command\": \"/bin/true\", \"tags\": [\"prod\"]},"
    "  \"broken\": {\"url\": \"not a url\"}"
    "}}";

struct fx {
    struct config *cfg;
    struct fleet  *fleet;
    struct model   m;
};

static int
setup(void **state)
{
    struct fx            *fx = calloc(1, sizeof(*fx));
    struct fleet_options  opt = { 0 };
    char                 *cause = NULL;

    assert_non_null(fx);
    assert_int_equal(config_parse(fixture, strlen(fixture), "test",
        &fx->cfg, &cause), 0);
    fx->fleet = fleet_new(EV_DEFAULT, fx->cfg, &opt, &cause);
    assert_non_null(fx->fleet);
    {
        bool chosen[8] = { false };

        assert_true(fleet_size(fx->fleet) <= 8);
        for (size_t i = 0; i < fleet_size(fx->fleet); i++)
            chosen[i] = strcmp(server_name(fleet_server(fx->fleet, i)),
                "broken") == 0;
        fleet_start_some(fx->fleet, chosen);
    }
    model_init(&fx->m, fx->fleet);
    *state = fx;
    return 0;
}

static int
teardown(void **state)
{
    struct fx *fx = *state;

    model_done(&fx->m);
    fleet_free(fx->fleet);
    config_free(fx->cfg);
    free(fx);
    return 0;
}

/* The visible names, in order, joined by spaces. */
static const char *
shown(struct model *m, const char *filter)
{
    static char buf[256];

    model_set_filter(m, filter);
    model_rebuild(m, 0);
    buf[0] = '\0';
    for (size_t p = 0; p < m->nvis; p++) {
        if (p > 0)
            strcat(buf, " ");
        strcat(buf, server_name(fleet_server(m->fleet, m->order[p])));
    }
    return buf;
}

static void
test_filter_words_and_fields(void **state)
{
    struct fx *fx = *state;

    assert_string_equal(shown(&fx->m, ""), "alpha beta broken gamma");
    assert_string_equal(shown(&fx->m, "ALP"), "alpha");
    /* A bare word matches tags by substring; tag: needs the whole tag. */
    assert_string_equal(shown(&fx->m, "prod"), "alpha beta gamma");
    assert_string_equal(shown(&fx->m, "tag:prod"), "alpha gamma");
    assert_string_equal(shown(&fx->m, "tag:PROD"), "alpha gamma");
    assert_string_equal(shown(&fx->m, "trans:stdio"), "gamma");
    assert_string_equal(shown(&fx->m, "name:a"), "alpha beta gamma");
    /* Every term must match. */
    assert_string_equal(shown(&fx->m, "tag:prod trans:http"), "alpha");
    assert_string_equal(shown(&fx->m, "  tag:eu   b  "), "beta");
    assert_string_equal(fx->m.filter_error, "");
}

static void
test_filter_negation(void **state)
{
    struct fx *fx = *state;

    assert_string_equal(shown(&fx->m, "!tag:prod"), "beta broken");
    assert_string_equal(shown(&fx->m, "!tag:prod !broken"), "beta");
    /* A lone "!" is no term. */
    assert_string_equal(shown(&fx->m, "!"), "alpha beta broken gamma");
}

static void
test_filter_kind_and_liveness(void **state)
{
    struct fx *fx = *state;

    /* Never dialed: no observation; the invalid entry is absent too, and
     * its current failure is its invalid_config. */
    assert_string_equal(shown(&fx->m, "kind:invalid"), "broken");
    assert_string_equal(shown(&fx->m, "invalid_config"), "broken");
    assert_string_equal(shown(&fx->m, "live:absent"),
        "alpha beta broken gamma");
    assert_string_equal(shown(&fx->m, "live:reachable"), "");
    assert_string_equal(shown(&fx->m, "kind:timeout"), "");
    assert_string_equal(shown(&fx->m, "http:5"), "");
}

static void
test_filter_unknown_field(void **state)
{
    struct fx *fx = *state;

    assert_string_equal(shown(&fx->m, "colour:red"), "");
    assert_non_null(strstr(fx->m.filter_error, "\"colour\""));
    /* Cleared by the next filter. */
    assert_string_equal(shown(&fx->m, "alpha"), "alpha");
    assert_string_equal(fx->m.filter_error, "");
}

static void
test_sort_name_and_reverse(void **state)
{
    struct fx *fx = *state;

    model_set_sort(&fx->m, MODEL_SORT_NAME);   /* already: reverses */
    assert_true(fx->m.invert);
    assert_string_equal(shown(&fx->m, ""), "gamma broken beta alpha");
    model_set_sort(&fx->m, MODEL_SORT_NAME);
    assert_false(fx->m.invert);
    assert_string_equal(shown(&fx->m, ""), "alpha beta broken gamma");
}

static void
test_sort_missing_last_both_ways(void **state)
{
    struct fx *fx = *state;

    /* No server has a round trip: all missing, so by name either way. */
    model_set_sort(&fx->m, MODEL_SORT_RTT);
    assert_false(fx->m.invert);
    assert_string_equal(shown(&fx->m, ""), "alpha beta broken gamma");
    model_set_sort(&fx->m, MODEL_SORT_RTT);
    assert_true(fx->m.invert);
    assert_string_equal(shown(&fx->m, ""), "alpha beta broken gamma");
    /* Failure: the one with a current failure first, either way. */
    model_set_sort(&fx->m, MODEL_SORT_FAILURE);
    assert_string_equal(shown(&fx->m, ""), "broken alpha beta gamma");
    model_set_sort(&fx->m, MODEL_SORT_FAILURE);
    assert_string_equal(shown(&fx->m, ""), "broken alpha beta gamma");
}

static void
test_current_failure_and_rtt(void **state)
{
    struct fx           *fx = *state;
    const struct server *broken = NULL, *alpha = NULL;

    for (size_t i = 0; i < fleet_size(fx->fleet); i++) {
        const struct server *s = fleet_server(fx->fleet, i);

        if (strcmp(server_name(s), "broken") == 0)
            broken = s;
        if (strcmp(server_name(s), "alpha") == 0)
            alpha = s;
    }
    assert_non_null(broken);
    assert_non_null(alpha);
    assert_non_null(model_current_failure(broken));
    assert_int_equal(model_current_failure(broken)->kind,
        FAILURE_INVALID_CONFIG);
    assert_true(model_rtt(broken) < 0);
    assert_int_equal(model_fail_streak(broken, NULL), 1);
    /* Never dialed: nothing failed, nothing to show. */
    assert_null(model_current_failure(alpha));
    assert_true(model_rtt(alpha) < 0);
}

static void
refresh_stop_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)w;
    (void)revents;
    ev_break(loop, EVBREAK_ALL);
}

/* Start the server named name and run the loop until it has an
 * observation (127.0.0.1:1 refuses at once), 5 s at most. Its index. */
static size_t
observe(struct fx *fx, const char *name)
{
    bool            chosen[8] = { false };
    size_t          k = MODEL_NONE;
    ev_timer        stop;
    struct ev_loop *loop = EV_DEFAULT;

    for (size_t i = 0; i < fleet_size(fx->fleet); i++) {
        if (strcmp(server_name(fleet_server(fx->fleet, i)), name) == 0)
            k = i;
    }
    assert_true(k != MODEL_NONE);
    chosen[k] = true;
    fleet_start_some(fx->fleet, chosen);
    ev_timer_init(&stop, refresh_stop_cb, 5.0, 0.);
    ev_timer_start(loop, &stop);
    while (!server_liveness(fleet_server(fx->fleet, k))->present &&
        ev_is_active(&stop))
        ev_run(loop, EVRUN_ONCE);
    ev_timer_stop(loop, &stop);
    assert_true(server_liveness(fleet_server(fx->fleet, k))->present);
    return k;
}

/* Engine events: a refresh recounts; the order and the visible set move
 * only when the sort or the filter reads state. */
static void
test_refresh_recounts_and_resorts_only_on_state(void **state)
{
    struct fx *fx = *state;
    size_t     alpha;

    /* A filter on liveness: the refresh refilters. */
    model_set_sort(&fx->m, MODEL_SORT_LIVENESS);
    assert_string_equal(shown(&fx->m, "live:absent"),
        "alpha beta broken gamma");
    alpha = observe(fx, "alpha");
    model_refresh(&fx->m, 1);
    assert_int_equal(fx->m.nvis, 3);
    assert_int_equal(fx->m.counts.absent, 3);
    assert_int_equal(fx->m.counts.live[LIVENESS_UNREACHABLE], 1);
    /* By name, no filter: same order, new counts. */
    model_set_sort(&fx->m, MODEL_SORT_NAME);
    assert_string_equal(shown(&fx->m, ""), "alpha beta broken gamma");
    (void)observe(fx, "beta");
    model_refresh(&fx->m, 2);
    assert_int_equal(fx->m.nvis, 4);
    assert_int_equal(fx->m.order[0], alpha);
    assert_int_equal(fx->m.counts.absent, 2);
    assert_int_equal(fx->m.counts.live[LIVENESS_UNREACHABLE], 2);
    fleet_stop(fx->fleet);
}

static size_t
index_of(struct fleet *f, const char *name)
{
    for (size_t i = 0; i < fleet_size(f); i++) {
        if (strcmp(server_name(fleet_server(f, i)), name) == 0)
            return i;
    }
    return MODEL_NONE;
}

/* The header counts health: never dialed is pending, the invalid entry
 * invalid; a refused dial is down; pause and stop move a server to their
 * own word, and it shows no observation as current. */
static void
test_health_counts(void **state)
{
    struct fx     *fx = *state;
    struct server *beta, *gamma;
    size_t         b;

    model_rebuild(&fx->m, 0);
    assert_int_equal(fx->m.counts.health[HEALTH_INVALID], 1);
    assert_int_equal(fx->m.counts.health[HEALTH_PENDING], 3);
    assert_int_equal(fx->m.counts.health[HEALTH_OK], 0);
    (void)observe(fx, "alpha");
    b = observe(fx, "beta");
    model_refresh(&fx->m, 1);
    assert_int_equal(fx->m.counts.health[HEALTH_DOWN], 2);
    assert_int_equal(fx->m.counts.health[HEALTH_PENDING], 1);
    assert_int_equal(fx->m.counts.kind[FAILURE_CONNECT_REFUSED], 2);
    beta = fleet_server(fx->fleet, b);
    gamma = fleet_server(fx->fleet, index_of(fx->fleet, "gamma"));
    assert_true(model_monitored(beta));
    assert_non_null(model_current_failure(beta));
    /* Paused: its own word; its last failure is history, not counted. */
    server_pause(beta);
    assert_int_equal(server_health(beta, NULL).state, HEALTH_PAUSED);
    server_stop(gamma);
    model_refresh(&fx->m, 2);
    assert_int_equal(fx->m.counts.health[HEALTH_DOWN], 1);
    assert_int_equal(fx->m.counts.health[HEALTH_PAUSED], 1);
    assert_int_equal(fx->m.counts.health[HEALTH_STOPPED], 1);
    assert_int_equal(fx->m.counts.health[HEALTH_PENDING], 0);
    assert_int_equal(fx->m.counts.kind[FAILURE_CONNECT_REFUSED], 1);
    assert_false(model_monitored(beta));
    assert_null(model_current_failure(beta));
    assert_true(model_rtt(beta) < 0);
    /* The liveness counts stay (the detail pane and LIVENESS use them). */
    assert_int_equal(fx->m.counts.live[LIVENESS_UNREACHABLE], 2);
    fleet_stop(fx->fleet);
}

/* The state column sorts by health, worst first: down, invalid, pending,
 * then the operator's states; again reverses it. The filter takes health
 * words, as a field and as a bare word. */
static void
test_health_sort_and_filter(void **state)
{
    struct fx *fx = *state;

    (void)observe(fx, "beta");
    server_stop(fleet_server(fx->fleet, index_of(fx->fleet, "gamma")));
    model_set_sort(&fx->m, MODEL_SORT_HEALTH);
    assert_false(fx->m.invert);
    assert_string_equal(shown(&fx->m, ""), "beta broken alpha gamma");
    model_set_sort(&fx->m, MODEL_SORT_HEALTH);
    assert_true(fx->m.invert);
    assert_string_equal(shown(&fx->m, ""), "gamma alpha broken beta");
    assert_string_equal(shown(&fx->m, "health:down"), "beta");
    assert_string_equal(shown(&fx->m, "state:stop"), "gamma");
    assert_string_equal(shown(&fx->m, "health:pending"), "alpha");
    assert_string_equal(shown(&fx->m, "!health:pending !health:invalid"),
        "gamma beta");
    assert_string_equal(shown(&fx->m, "stopped"), "gamma");
    assert_string_equal(fx->m.filter_error, "");
    assert_string_equal(model_sort_name(MODEL_SORT_HEALTH), "health");
    fleet_stop(fx->fleet);
}

/* A reload: a server that stayed keeps its row's data and mark, and the
 * selection; one removed is detached; one added starts blank. */
static void
test_refleet_keeps_what_stayed(void **state)
{
    struct fx      *fx = *state;
    static const char next_cfg[] =
        "{\"mcpServers\": {"
        "  \"alpha\": {\"url\": \"http://127.0.0.1:1/mcp\", \"tags\": [\"prod\"]},"
        "  \"delta\": {\"url\": \"http://127.0.0.1:1/mcp\"}"
        "}}";
    struct config  *cfg = NULL;
    char           *cause = NULL;
    struct server  *old[8], *beta;
    size_t          nold = fleet_size(fx->fleet), a, d;
    struct model_server *ms;

    assert_true(nold <= 8);
    for (size_t i = 0; i < nold; i++)
        old[i] = fleet_server(fx->fleet, i);
    a = index_of(fx->fleet, "alpha");
    beta = fleet_server(fx->fleet, index_of(fx->fleet, "beta"));
    model_set_sort(&fx->m, MODEL_SORT_LIVENESS);
    assert_string_equal(shown(&fx->m, "prod"), "alpha beta gamma");
    model_toggle_mark(&fx->m, a);
    fx->m.sel = a;
    fx->m.srv[a].tool_changes = 7;
    assert_int_equal(config_parse(next_cfg, strlen(next_cfg), "test", &cfg,
        &cause), 0);
    assert_int_equal(fleet_reload(fx->fleet, cfg, &cause), 0);
    model_refleet(&fx->m, old, nold);
    a = index_of(fx->fleet, "alpha");
    d = index_of(fx->fleet, "delta");
    assert_true(a != MODEL_NONE && d != MODEL_NONE);
    assert_int_equal(fx->m.n, 2);
    assert_true(fx->m.marked[a]);
    assert_false(fx->m.marked[d]);
    assert_int_equal(fx->m.nmarked, 1);
    assert_int_equal(fx->m.sel, a);
    assert_int_equal(fx->m.srv[a].tool_changes, 7);
    assert_int_equal(fx->m.srv[d].tool_changes, 0);
    assert_int_equal(fx->m.srv[d].ntools, -1);
    ms = server_data(fleet_server(fx->fleet, a));
    assert_ptr_equal(ms, &fx->m.srv[a]);
    assert_null(server_data(beta));
    /* The sort and the filter stayed. */
    assert_int_equal(fx->m.sort, MODEL_SORT_LIVENESS);
    assert_string_equal(fx->m.filter, "prod");
    model_rebuild(&fx->m, 0);
    assert_int_equal(fx->m.nvis, 1);
    fleet_stop(fx->fleet);
}

static void
test_line_cell_ellipsis(void **state)
{
    struct ui_line l;

    (void)state;
    ui_line_reset(&l, UI_ROLE_NORMAL);
    ui_line_cell(&l, UI_ROLE_NORMAL, "everything-stdio", 10, false, true);
    assert_int_equal(l.cols, 10);
    assert_string_equal(l.text, "everythin\xe2\x80\xa6");
    ui_line_reset(&l, UI_ROLE_NORMAL);
    ui_line_cell(&l, UI_ROLE_NORMAL, "everything-stdio", 16, false, true);
    assert_string_equal(l.text, "everything-stdio");
    ui_line_reset(&l, UI_ROLE_NORMAL);
    ui_line_cell(&l, UI_ROLE_NORMAL, "502", 6, true, false);
    assert_string_equal(l.text, "   502");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_filter_words_and_fields, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_filter_negation, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_filter_kind_and_liveness, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_filter_unknown_field, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_sort_name_and_reverse, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_sort_missing_last_both_ways,
            setup, teardown),
        cmocka_unit_test_setup_teardown(test_current_failure_and_rtt, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_refresh_recounts_and_resorts_only_on_state, setup, teardown),
        cmocka_unit_test_setup_teardown(test_health_counts, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_health_sort_and_filter, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_refleet_keeps_what_stayed,
            setup, teardown),
        cmocka_unit_test(test_line_cell_ellipsis),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
