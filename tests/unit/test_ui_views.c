/*
 * Tests for the console's views (issue 34), no terminal: --sort's words
 * and suffixes, --filter's check, groups (by tag, host, transport; the
 * header rows, their counts, the order, folding, the selected header kept
 * by name) and the event log's ring (bounded at EVENTLOG_CAP, newest
 * first, the first verdict not logged, its filter), the palette's Tab
 * completion and the modes' tables (struct ui_view). The fleet is built
 * from a config and never started but for the invalid entry.
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
#include "ui/eventlog.h"
#include "ui/model.h"
#include "ui/ui.h"

static const char fixture[] =
    "{\"mcpServers\": {"
    "  \"alpha\": {\"url\": \"http://u:p@edge-1.example:8080/mcp\","
    "              \"tags\": [\"prod\"]},"
    "  \"beta\": {\"url\": \"https://edge-1.example/mcp\","
    "             \"tags\": [\"preprod\", \"prod\"]},"
    "  \"gamma\": {\"command\": \"/usr/bin/node\", \"tags\": [\"prod\"]},"
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
    bool                  chosen[8] = { false };

    assert_non_null(fx);
    assert_int_equal(config_parse(fixture, strlen(fixture), "test",
        &fx->cfg, &cause), 0);
    fx->fleet = fleet_new(EV_DEFAULT, fx->cfg, &opt, &cause);
    assert_non_null(fx->fleet);
    for (size_t i = 0; i < fleet_size(fx->fleet); i++)
        chosen[i] = strcmp(server_name(fleet_server(fx->fleet, i)),
            "broken") == 0;
    fleet_start_some(fx->fleet, chosen);
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

/* The rows: "[name:count]" for a header, the server's name for a row. */
static const char *
rows(struct model *m)
{
    static char buf[512];

    m->dirty = true;
    model_rebuild(m, 0);
    buf[0] = '\0';
    for (size_t p = 0; p < m->nvis; p++) {
        const struct model_group_row *g = model_header(m, m->order[p]);

        if (p > 0)
            strcat(buf, " ");
        if (g != NULL)
            snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf),
                "[%s:%zu%s]", g->name, g->count, g->folded ? "+" : "");
        else
            strcat(buf, server_name(fleet_server(m->fleet, m->order[p])));
    }
    return buf;
}

static void
test_sort_parse(void **state)
{
    enum model_sort s;
    bool            inv;
    char            err[256];

    (void)state;
    assert_true(model_sort_parse("rtt", &s, &inv, err, sizeof(err)));
    assert_int_equal(s, MODEL_SORT_RTT);
    assert_false(inv);
    assert_true(model_sort_parse("Name,desc", &s, &inv, err, sizeof(err)));
    assert_int_equal(s, MODEL_SORT_NAME);
    assert_true(inv);
    assert_true(model_sort_parse("health,asc", &s, &inv, err, sizeof(err)));
    assert_int_equal(s, MODEL_SORT_HEALTH);
    assert_false(inv);
    assert_true(model_sort_parse("last-failure", &s, &inv, err,
        sizeof(err)));
    assert_int_equal(s, MODEL_SORT_FAILURE);
    assert_false(model_sort_parse("colour", &s, &inv, err, sizeof(err)));
    assert_non_null(strstr(err, "no column \"colour\" (name transport"));
    assert_false(model_sort_parse("name,up", &s, &inv, err, sizeof(err)));
    assert_non_null(strstr(err, "\"up\" after the comma"));
    assert_false(model_sort_parse("", &s, &inv, err, sizeof(err)));
    /* Every column has a word that parses back to it. */
    for (int i = 0; i < MODEL_SORT__COUNT; i++) {
        assert_true(model_sort_parse(model_sort_word((enum model_sort)i), &s,
            &inv, err, sizeof(err)));
        assert_int_equal(s, i);
    }
    assert_true(model_filter_check("tag:prod !kind:timeout", err,
        sizeof(err)));
    assert_false(model_filter_check("colour:red", err, sizeof(err)));
    assert_non_null(strstr(err, "no field \"colour\""));
}

static void
test_group_by_tag_host_transport(void **state)
{
    struct fx        *fx = *state;
    enum model_group  g;

    assert_string_equal(rows(&fx->m), "alpha beta broken gamma");
    assert_true(model_group_parse("TAG", &g));
    assert_false(model_group_parse("colour", &g));
    model_set_group(&fx->m, MODEL_GROUP_TAG);
    /* invalid is the worst health: its group first; then by name. */
    assert_string_equal(rows(&fx->m),
        "[no tag:1] broken [preprod:1] beta [prod:2] alpha gamma");
    assert_int_equal(fx->m.nmatch, 4);
    assert_int_equal(fx->m.ngroups, 3);
    model_set_group(&fx->m, MODEL_GROUP_HOST);
    assert_string_equal(rows(&fx->m),
        "[no host:1] broken [edge-1.example:2] alpha beta [node:1] gamma");
    model_set_group(&fx->m, MODEL_GROUP_TRANSPORT);
    assert_string_equal(rows(&fx->m),
        "[http:3] alpha beta broken [stdio:1] gamma");
    /* The sort holds inside a group. */
    model_set_sort(&fx->m, MODEL_SORT_NAME);    /* again: reversed */
    assert_string_equal(rows(&fx->m),
        "[http:3] broken beta alpha [stdio:1] gamma");
    model_set_group(&fx->m, MODEL_GROUP_NONE);
    assert_string_equal(rows(&fx->m), "gamma broken beta alpha");
}

static void
test_group_fold_and_selection(void **state)
{
    struct fx *fx = *state;

    model_set_group(&fx->m, MODEL_GROUP_TRANSPORT);
    model_set_filter(&fx->m, "!broken");
    assert_string_equal(rows(&fx->m), "[http:2] alpha beta [stdio:1] gamma");
    model_goto(&fx->m, 0);
    assert_int_equal(model_sel_server(&fx->m), MODEL_NONE);
    assert_true(model_group_toggle(&fx->m));
    assert_string_equal(rows(&fx->m), "[http:2+] [stdio:1] gamma");
    /* The selected header stays selected by its name. */
    assert_non_null(model_header(&fx->m, fx->m.sel));
    assert_string_equal(model_header(&fx->m, fx->m.sel)->name, "http");
    model_goto(&fx->m, 2);
    assert_false(model_group_toggle(&fx->m));   /* a server row */
    assert_string_equal(server_name(fleet_server(fx->fleet,
        model_sel_server(&fx->m))), "gamma");
    model_goto(&fx->m, 0);
    assert_true(model_group_toggle(&fx->m));
    assert_string_equal(rows(&fx->m), "[http:2] alpha beta [stdio:1] gamma");
    /* Another grouping forgets the folds. */
    assert_true(model_group_toggle(&fx->m));
    model_set_group(&fx->m, MODEL_GROUP_TAG);
    model_set_group(&fx->m, MODEL_GROUP_TRANSPORT);
    assert_string_equal(rows(&fx->m), "[http:2] alpha beta [stdio:1] gamma");
}

static void
test_eventlog_ring(void **state)
{
    struct fx       *fx = *state;
    struct eventlog  g;
    struct health    h = { .state = HEALTH_DOWN, .reason = "refused" };
    struct liveness  l = { .present = true,
                           .state = LIVENESS_UNREACHABLE };
    struct event     e = { .type = EVENT_HEALTH, .health = &h };
    int              was = 0;

    eventlog_init(&g);
    e.server = fleet_server(fx->fleet, 0);
    /* The first verdict is not a change. */
    e.health_was = HEALTH__COUNT;
    assert_false(eventlog_event(&g, &e, NULL));
    e.health_was = HEALTH_PENDING;
    for (int i = 0; i < EVENTLOG_CAP + 5; i++) {
        e.ts = i;
        assert_true(eventlog_event(&g, &e, NULL));
    }
    assert_int_equal(g.n, EVENTLOG_CAP);
    assert_int_equal(g.total, EVENTLOG_CAP + 5);
    assert_int_equal(eventlog_get(&g, 0)->ts, EVENTLOG_CAP + 4);
    assert_int_equal(eventlog_get(&g, EVENTLOG_CAP - 1)->ts, 5);
    assert_null(eventlog_get(&g, EVENTLOG_CAP));
    assert_string_equal(eventlog_get(&g, 0)->from, "pending");
    assert_string_equal(eventlog_get(&g, 0)->to, "down");
    /* A liveness change from what was seen; the same state again is
     * none. */
    e.type = EVENT_LIVENESS;
    e.liveness = &l;
    e.server = fleet_server(fx->fleet, 1);
    e.ts = 99999;
    assert_true(eventlog_event(&g, &e, &was));
    assert_string_equal(eventlog_get(&g, 0)->from, "absent");
    assert_string_equal(eventlog_get(&g, 0)->to, "unreachable");
    assert_false(eventlog_event(&g, &e, &was));
    /* Its filter: the table's language. */
    eventlog_set_filter(&g, "live:unreach");
    assert_true(eventlog_matches(&g, eventlog_get(&g, 0)));
    assert_false(eventlog_matches(&g, eventlog_get(&g, 1)));
    eventlog_set_filter(&g, "health:down !live:x");
    assert_false(eventlog_matches(&g, eventlog_get(&g, 0)));
    assert_true(eventlog_matches(&g, eventlog_get(&g, 1)));
    eventlog_set_filter(&g, "tag:preprod");
    assert_string_equal(eventlog_get(&g, 0)->server, "beta");
    assert_true(eventlog_matches(&g, eventlog_get(&g, 0)));
    eventlog_set_filter(&g, "bogus:1");
    assert_string_not_equal(g.filter_error, "");
    eventlog_done(&g);
}

static void
test_palette_complete(void **state)
{
    char buf[160];

    (void)state;
    snprintf(buf, sizeof(buf), "so");
    assert_true(palette_complete(NULL, buf, sizeof(buf)));
    assert_string_equal(buf, "sort ");
    snprintf(buf, sizeof(buf), "sort de");
    assert_true(palette_complete(NULL, buf, sizeof(buf)));
    assert_string_equal(buf, "sort delivered ");
    snprintf(buf, sizeof(buf), "sort s");      /* session, streak */
    assert_true(palette_complete(NULL, buf, sizeof(buf)));
    assert_string_equal(buf, "sort s");
    snprintf(buf, sizeof(buf), "group tr");
    assert_true(palette_complete(NULL, buf, sizeof(buf)));
    assert_string_equal(buf, "group transport ");
    snprintf(buf, sizeof(buf), "group t");
    assert_true(palette_complete(NULL, buf, sizeof(buf)));
    assert_string_equal(buf, "group t");
    snprintf(buf, sizeof(buf), "zz");
    assert_false(palette_complete(NULL, buf, sizeof(buf)));
    assert_string_equal(buf, "zz");
    snprintf(buf, sizeof(buf), "filter ta");   /* free text: nothing */
    assert_false(palette_complete(NULL, buf, sizeof(buf)));
    /* :columns completes after the last comma, with no space after. */
    snprintf(buf, sizeof(buf), "co");
    assert_true(palette_complete(NULL, buf, sizeof(buf)));
    assert_string_equal(buf, "columns ");
    snprintf(buf, sizeof(buf), "columns name,he");
    assert_true(palette_complete(NULL, buf, sizeof(buf)));
    assert_string_equal(buf, "columns name,health");
    snprintf(buf, sizeof(buf), "columns name rt");    /* after a space */
    assert_true(palette_complete(NULL, buf, sizeof(buf)));
    assert_string_equal(buf, "columns name rtt");
    snprintf(buf, sizeof(buf), "columns pro");
    assert_true(palette_complete(NULL, buf, sizeof(buf)));
    assert_string_equal(buf, "columns protocol");
    snprintf(buf, sizeof(buf), "vi");
    assert_true(palette_complete(NULL, buf, sizeof(buf)));
    assert_string_equal(buf, "view ");
    snprintf(buf, sizeof(buf), "view sa");     /* its verbs, no ui */
    assert_true(palette_complete(NULL, buf, sizeof(buf)));
    assert_string_equal(buf, "view save ");
    /* The column words: named, or the title's first word. */
    assert_int_equal(view_table_column_of("RTT", 3),
        view_table_column_of("rtt", 3));
    assert_true(view_table_column_of("rtt", 3) > 0);
    assert_true(view_table_column_of("streak", 6) > 0);
    assert_true(view_table_column_of("protocol", 8) > 0);
    assert_int_equal(view_table_column_of("bogus", 5), -1);
    assert_true(view_table_column_fixed(view_table_column_of("name", 4)));
    assert_true(view_table_column_fixed(view_table_column_of("health", 6)));
    assert_false(view_table_column_fixed(view_table_column_of("rtt", 3)));
}

/* Every mode can be drawn, read keys and name them on the status line;
 * only the table has clicks; the help reads every key but the mouse's,
 * the column chooser every key before anything else. */
static void
test_view_tables(void **state)
{
    const struct ui_view *const v[] = {
        &view_table_mode, &view_endings_mode, &view_help_mode,
        &view_log_mode, &view_columns_mode, &view_procs_mode,
    };

    (void)state;
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        assert_non_null(v[i]->draw);
        assert_non_null(v[i]->key);
        assert_non_null(v[i]->hint);
        assert_true(v[i] == &view_table_mode ? v[i]->click != NULL :
            v[i]->click == NULL);
        /* Each but the table has state to reset as it comes on screen. */
        assert_true(v[i] == &view_table_mode ? v[i]->open == NULL :
            v[i]->open != NULL);
    }
    assert_int_equal(view_table_mode.keys, UI_VIEW_KEYS_SHARED);
    assert_int_equal(view_help_mode.keys, UI_VIEW_KEYS_OWN);
    assert_int_equal(view_columns_mode.keys, UI_VIEW_KEYS_RAW);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sort_parse),
        cmocka_unit_test(test_palette_complete),
        cmocka_unit_test(test_view_tables),
        cmocka_unit_test_setup_teardown(test_group_by_tag_host_transport,
            setup, teardown),
        cmocka_unit_test_setup_teardown(test_group_fold_and_selection, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_eventlog_ring, setup,
            teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
