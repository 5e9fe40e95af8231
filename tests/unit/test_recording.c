/*
 * Tests for the recording's reader (src/export/recording_read.c), the
 * incident report's timelines and minute buckets (src/export/report.c),
 * the time arguments, and the engine's replayed servers
 * (src/engine/server_replay.c): a recording parsed, cut mid-line, with
 * lines not understood; health changes into timelines with the failure
 * at that moment; servers per kind per minute, a failure that spans
 * minutes counted in each; facts fed to a replayed server read back
 * through the live getters, and every command refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "engine/fleet.h"
#include "engine/server.h"
#include "export/recording.h"
#include "export/report.h"
#include "util/xmalloc.h"

/* 2026-01-02T03:04:00.000Z */
#define T0 1767323040000LL

#define FLEET_LINE \
    "{\"ts\":\"2026-01-02T03:04:00.000Z\",\"mono_ms\":1,\"event\":" \
    "\"recording\",\"mcptop\":\"9.9.9\",\"servers\":[{\"name\":\"a\"," \
    "\"transport\":\"http\",\"target\":\"http://***@h/mcp\",\"tags\":" \
    "[\"prod\"]},{\"name\":\"b\",\"transport\":\"stdio\",\"target\":" \
    "\"srv --x\",\"tags\":[]}]}\n"

static const char recording_text[] =
    FLEET_LINE
    "{\"ts\":\"2026-01-02T03:04:00.100Z\",\"mono_ms\":2,\"event\":\"health\","
    "\"server\":\"a\",\"state\":\"pending\",\"was\":null,\"reason\":\"no "
    "observation yet\"}\n"
    "{\"ts\":\"2026-01-02T03:04:01.000Z\",\"mono_ms\":3,\"event\":"
    "\"exchange\",\"server\":\"a\",\"op\":\"dial\",\"outcome\":\"completed\","
    "\"ms\":4.5}\n"
    "{\"ts\":\"2026-01-02T03:04:01.000Z\",\"mono_ms\":3,\"event\":\"health\","
    "\"server\":\"a\",\"state\":\"ok\",\"was\":\"pending\",\"reason\":\"\"}\n"
    "this is not json\n"
    "{\"ts\":\"2026-01-02T03:04:50.000Z\",\"mono_ms\":4,\"event\":"
    "\"exchange\",\"server\":\"a\",\"op\":\"ping\",\"outcome\":"
    "\"http_status\",\"delivered\":\"unknown\",\"http_status\":502,"
    "\"reason\":\"bad_gateway\",\"site\":\"request\",\"detail\":\"502 from "
    "the gateway\",\"ms\":3}\n"
    "{\"ts\":\"2026-01-02T03:04:50.000Z\",\"mono_ms\":4,\"event\":\"health\","
    "\"server\":\"a\",\"state\":\"unknown\",\"was\":\"ok\",\"reason\":\"an "
    "answer\"}\n"
    "{\"ts\":\"2026-01-02T03:05:10.000Z\",\"mono_ms\":5,\"event\":"
    "\"exchange\",\"server\":\"b\",\"op\":\"dial\",\"outcome\":"
    "\"connect_refused\",\"delivered\":\"no\",\"site\":\"connect\","
    "\"detail\":\"refused\",\"ms\":1}\n"
    "{\"ts\":\"2026-01-02T03:05:10.000Z\",\"mono_ms\":5,\"event\":\"health\","
    "\"server\":\"b\",\"state\":\"down\",\"was\":\"pending\",\"reason\":"
    "\"unreachable\"}\n"
    "{\"ts\":\"2026-01-02T03:06:30.000Z\",\"mono_ms\":6,\"event\":"
    "\"exchange\",\"server\":\"a\",\"op\":\"ping\",\"outcome\":\"completed\","
    "\"ms\":2}\n"
    "{\"ts\":\"2026-01-02T03:06:30.000Z\",\"mono_ms\":6,\"event\":\"health\","
    "\"server\":\"a\",\"state\":\"ok\",\"was\":\"unknown\",\"reason\":\"\"}\n"
    "{\"ts\":\"2026-01-02T03:06:40.000Z\",\"mono_ms\":7,\"event\":\"ending\","
    "\"server\":\"a\",\"outcome\":\"terminated\",\"http_status\":200,"
    "\"duration_ms\":12.5,\"settled_ms\":null,\"half_open\":false}\n"
    "{\"ts\":\"2026-01-02T03:06:40.010Z\",\"mono_ms\":7,\"event\":"
    "\"settled\",\"server\":\"a\",\"outcome\":\"terminated\","
    "\"duration_ms\":12.5,\"settled_ms\":20,\"half_open\":false}\n"
    "{\"ts\":\"2026-01-02T03:06:41.000Z\",\"mono_ms\":8,\"event\":\"exit\","
    "\"sessions_ended\":1,\"sessions_not_ended\":0}\n"
    "{\"ts\":\"2026-01-02T03:06:42.000Z\",\"mono_ms\":9,\"event\":\"heal";

static struct recording_log *
parse(void)
{
    struct recording_log *log = NULL;
    char                 *cause = NULL;

    assert_int_equal(recording_parse(recording_text, strlen(recording_text),
        &log, &cause), 0);
    assert_null(cause);
    return log;
}

static void
test_parse_lines_cut_and_skipped(void **state)
{
    struct recording_log *log = parse();

    (void)state;
    assert_string_equal(log->mcptop, "9.9.9");
    assert_int_equal(log->started_at, T0);
    assert_int_equal(log->nservers, 2);
    assert_string_equal(log->servers[0].name, "a");
    assert_string_equal(log->servers[0].target, "http://***@h/mcp");
    assert_int_equal(log->servers[0].ntags, 1);
    assert_string_equal(log->servers[1].transport, "stdio");
    assert_true(log->cut);
    assert_int_equal(log->skipped, 1);
    assert_int_equal(log->nevents, 12);
    assert_int_equal(log->events[1].type, RECORDING_EXCHANGE);
    assert_true(log->events[1].completed);
    assert_string_equal(log->events[1].op, "dial");
    assert_int_equal(log->events[1].at, T0 + 1000);
    assert_int_equal(log->events[3].kind, FAILURE_HTTP_STATUS);
    assert_int_equal(log->events[3].http_status, 502);
    assert_int_equal(log->events[3].reason, FAILURE_REASON_BAD_GATEWAY);
    assert_string_equal(log->events[3].detail, "502 from the gateway");
    assert_int_equal(log->events[4].was, HEALTH_OK);
    assert_int_equal(log->events[0].was, HEALTH__COUNT);
    assert_int_equal(log->events[9].type, RECORDING_ENDING);
    assert_int_equal(log->events[9].ending->outcome, ENDING_TERMINATED);
    assert_false(log->events[9].ending->settled);
    assert_true(log->events[10].ending->settled);
    assert_int_equal(log->events[11].type, RECORDING_EXIT);
    assert_int_equal(log->events[11].sessions_ended, 1);
    recording_log_free(log);
}

/* A last line whose newline was never written: cut, though it parses. */
static void
test_parse_whole_line_without_newline_is_cut(void **state)
{
    static const char     text[] = FLEET_LINE
        "{\"ts\":\"2026-01-02T03:04:01.000Z\",\"event\":\"tools_changed\","
        "\"server\":\"a\",\"tools\":7}";
    struct recording_log *log = NULL;
    char                 *cause = NULL;

    (void)state;
    assert_int_equal(recording_parse(text, strlen(text), &log, &cause), 0);
    assert_true(log->cut);
    assert_int_equal(log->nevents, 1);
    assert_int_equal(log->skipped, 0);
    recording_log_free(log);
}

static void
test_parse_refuses_what_is_no_recording(void **state)
{
    struct recording_log *log = NULL;
    char                 *cause = NULL;
    const char           *text = "{\"a\":1}\n";

    (void)state;
    assert_int_equal(recording_parse(text, strlen(text), &log, &cause), -1);
    assert_non_null(cause);
    assert_null(log);
    free(cause);
}

/* A server named in an event before any fleet line names it is added. */
static void
test_parse_server_known_only_by_its_events(void **state)
{
    static const char     text[] = FLEET_LINE
        "{\"ts\":\"2026-01-02T03:04:01.000Z\",\"event\":\"tools_changed\","
        "\"server\":\"late\",\"tools\":7}\n";
    struct recording_log *log = NULL;
    char                 *cause = NULL;

    (void)state;
    assert_int_equal(recording_parse(text, strlen(text), &log, &cause), 0);
    assert_int_equal(log->nservers, 3);
    assert_string_equal(log->servers[2].name, "late");
    assert_int_equal(log->events[0].server, 2);
    assert_int_equal(log->events[0].tools, 7);
    assert_int_equal(log->events[0].mono_ms, -1);
    recording_log_free(log);
}

static void
test_times(void **state)
{
    (void)state;
    assert_int_equal(recording_parse_iso("2026-01-02T03:04:00.000Z"), T0);
    assert_int_equal(recording_parse_iso("2026-01-02T03:04:00Z"), T0);
    assert_int_equal(recording_parse_iso("2026-01-02T04:04:00.5+01:00"),
        T0 + 500);
    assert_int_equal(recording_parse_iso("2026-01-02 03:04:00Z"), -1);
    assert_int_equal(recording_parse_iso("2026-01-02T03:04:00"), -1);
    assert_int_equal(recording_parse_time("03:05", T0 + 5), T0 + 60000);
    assert_int_equal(recording_parse_time("03:04:30", T0), T0 + 30000);
    assert_int_equal(recording_parse_time("+90s", T0), T0 + 90000);
    assert_int_equal(recording_parse_time("+2m", T0), T0 + 120000);
    assert_int_equal(recording_parse_time("+1h", T0), T0 + 3600000);
    assert_int_equal(recording_parse_time("+5", T0), T0 + 5000);
    assert_int_equal(recording_parse_time("yesterday", T0), -1);
    assert_int_equal(recording_parse_time("25:00", T0), -1);
    assert_int_equal(recording_parse_time("+2x", T0), -1);
}

static void
test_report_timelines(void **state)
{
    struct recording_log *log = parse();
    struct report        *r = report_new(log, -1, -1);
    struct report_server *a = &r->servers[0];

    (void)state;
    assert_int_equal(r->from, T0);
    assert_int_equal(r->to, T0 + 161000);
    assert_true(a->changed);
    assert_int_equal(a->n, 4);
    assert_int_equal(a->timeline[2].health, HEALTH_UNKNOWN);
    assert_int_equal(a->timeline[2].was, HEALTH_OK);
    assert_int_equal(a->timeline[2].kind, FAILURE_HTTP_STATUS);
    assert_int_equal(a->timeline[2].http_status, 502);
    assert_string_equal(a->timeline[2].reason, "bad_gateway");
    assert_int_equal(a->timeline[3].kind, -1);
    /* b's only verdict is down from pending: a change. */
    assert_true(r->servers[1].changed);
    assert_int_equal(r->servers[1].timeline[0].kind, FAILURE_CONNECT_REFUSED);
    assert_string_equal(r->servers[1].timeline[0].reason, "unreachable");
    assert_int_equal(r->first_failure, 0);
    assert_int_equal(r->first_failure_at, T0 + 50000);
    assert_int_equal(r->last_recovery, 0);
    assert_int_equal(r->last_recovery_at, T0 + 150000);
    assert_int_equal(r->nendings, 1);
    assert_non_null(r->endings[0].settled);
    assert_int_equal(r->outcomes[ENDING_TERMINATED], 1);
    assert_non_null(r->exit);
    report_free(r);
    recording_log_free(log);
}

/* a fails with http_status from 03:04:50 to 03:06:30: minutes 03:04,
 * 03:05 and 03:06; b with connect_refused from 03:05:10 to the end. */
static void
test_report_minute_buckets(void **state)
{
    struct recording_log *log = parse();
    struct report        *r = report_new(log, -1, -1);

    (void)state;
    assert_int_equal(r->nbuckets, 3);
    assert_int_equal(r->buckets[0].minute, T0);
    assert_int_equal(r->buckets[0].kinds[FAILURE_HTTP_STATUS], 1);
    assert_int_equal(r->buckets[0].kinds[FAILURE_CONNECT_REFUSED], 0);
    assert_int_equal(r->buckets[0].total, 1);
    assert_int_equal(r->buckets[1].kinds[FAILURE_HTTP_STATUS], 1);
    assert_int_equal(r->buckets[1].kinds[FAILURE_CONNECT_REFUSED], 1);
    assert_int_equal(r->buckets[1].total, 2);
    assert_int_equal(r->buckets[2].kinds[FAILURE_HTTP_STATUS], 1);
    assert_int_equal(r->buckets[2].total, 2);
    report_free(r);
    recording_log_free(log);
}

/* --from after a's failure began: the state before still counts. */
static void
test_report_window(void **state)
{
    struct recording_log *log = parse();
    struct report        *r = report_new(log, T0 + 60000, T0 + 100000);
    cJSON                *o, *servers;

    (void)state;
    assert_int_equal(r->servers[0].at_start, HEALTH_UNKNOWN);
    assert_int_equal(r->servers[0].n, 0);
    assert_false(r->servers[0].changed);
    assert_int_equal(r->servers[1].n, 1);
    assert_int_equal(r->nbuckets, 1);
    assert_int_equal(r->buckets[0].kinds[FAILURE_HTTP_STATUS], 1);
    assert_int_equal(r->buckets[0].kinds[FAILURE_CONNECT_REFUSED], 1);
    assert_int_equal(r->first_failure, 1);
    assert_null(r->exit);
    o = report_json(r, "x.jsonl");
    servers = cJSON_GetObjectItem(o, "servers");
    assert_int_equal(cJSON_GetArraySize(servers), 1);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(servers, 0),
        "name")->valuestring, "b");
    cJSON_Delete(o);
    report_free(r);
    recording_log_free(log);
}

/* What mcptop's leaving did is listed, but is no recovery and no change. */
static void
test_report_stopping(void **state)
{
    static const char     text[] = FLEET_LINE
        "{\"ts\":\"2026-01-02T03:04:01.000Z\",\"event\":\"health\","
        "\"server\":\"a\",\"state\":\"ok\",\"was\":\"pending\"}\n"
        "{\"ts\":\"2026-01-02T03:04:02.000Z\",\"event\":\"health\","
        "\"server\":\"b\",\"state\":\"down\",\"was\":\"ok\"}\n"
        "{\"ts\":\"2026-01-02T03:04:03.000Z\",\"event\":\"stopping\"}\n"
        "{\"ts\":\"2026-01-02T03:04:03.100Z\",\"event\":\"health\","
        "\"server\":\"b\",\"state\":\"ok\",\"was\":\"down\"}\n"
        "{\"ts\":\"2026-01-02T03:04:03.200Z\",\"event\":\"health\","
        "\"server\":\"a\",\"state\":\"stopped\",\"was\":\"ok\"}\n";
    struct recording_log *log = NULL;
    struct report        *r;
    char                 *cause = NULL;

    (void)state;
    assert_int_equal(recording_parse(text, strlen(text), &log, &cause), 0);
    assert_int_equal(log->events[2].type, RECORDING_STOPPING);
    r = report_new(log, -1, -1);
    assert_int_equal(r->stopping_at, T0 + 3000);
    assert_int_equal(r->last_recovery, (size_t)-1);
    assert_int_equal(r->first_failure, 1);
    assert_false(r->servers[0].changed);
    assert_true(r->servers[1].changed);
    assert_int_equal(r->servers[1].n, 2);
    report_free(r);
    recording_log_free(log);
}

static size_t replay_events[EVENT_HEALTH + 1];

static void
count_cb(void *arg, const struct event *e)
{
    (void)arg;
    replay_events[e->type]++;
}

static void
test_replayed_server(void **state)
{
    struct config        *cfg = xcalloc(1, sizeof(*cfg));
    struct fleet_options  opt = { .no_streams = true };
    struct fleet         *f;
    struct server        *s;
    struct failure        fl = { .kind = FAILURE_CONNECT_REFUSED,
        .delivered = DELIVERED_NO, .site = FAILURE_SITE_CONNECT };
    struct ending         e = { .outcome = ENDING_TERMINATED };
    struct server_fact    fact = { .type = SERVER_FACT_EXCHANGE,
        .at = T0, .op = "dial", .ms = 3, .tools = -1, .rtt_ms = -1 };
    char                 *cause = NULL;

    (void)state;
    cfg->origin = xstrdup("test");
    cfg->servers = xcalloc(1, sizeof(*cfg->servers));
    cfg->nservers = 1;
    cfg->servers[0].name = xstrdup("r");
    cfg->servers[0].url = xstrdup("http://127.0.0.1:1/mcp");
    cfg->servers[0].url_shown = xstrdup("http://127.0.0.1:1/mcp");
    cfg->servers[0].teardown_ms = 100;
    f = fleet_new(EV_DEFAULT, cfg, &opt, &cause);
    assert_non_null(f);
    fleet_subscribe(f, count_cb, NULL);
    s = fleet_server(f, 0);
    server_replay_begin(s);
    assert_int_equal(server_health(s, NULL).state, HEALTH_PENDING);
    server_replay(s, &fact);                    /* a completed dial */
    fact.type = SERVER_FACT_HEALTH;
    fact.health = HEALTH_OK;
    fact.health_reason = "";
    server_replay(s, &fact);
    fact.type = SERVER_FACT_STATE;
    fact.state = SERVER_READY;
    fact.tools = 4;
    fact.protocol_version = "2025-06-18";
    server_replay(s, &fact);
    assert_int_equal(server_health(s, NULL).state, HEALTH_OK);
    assert_int_equal(server_liveness(s)->state, LIVENESS_REACHABLE);
    assert_int_equal(server_tools(s), 4);
    assert_true(server_rtt_ms(s) == 3);
    fact.type = SERVER_FACT_EXCHANGE;
    fact.at = T0 + 1000;
    fact.op = "ping";
    fact.failure = &fl;
    server_replay(s, &fact);                    /* a refused ping */
    assert_int_equal(server_liveness(s)->state, LIVENESS_UNREACHABLE);
    assert_int_equal(server_history_len(s), 2);
    assert_int_equal(server_fail_streak(s), 1);
    assert_int_equal(server_last_failure(s, NULL)->kind,
        FAILURE_CONNECT_REFUSED);
    fact.type = SERVER_FACT_ENDING;
    fact.ending = &e;
    server_replay(s, &fact);
    assert_int_equal(server_ending_count(s), 1);
    assert_ptr_equal(server_ending(s, 0)->server, s);
    /* Commands reach nothing. */
    assert_null(server_end(s, false));
    assert_false(server_ping_now(s));
    server_redial(s);
    assert_int_equal(server_state(s), SERVER_READY);
    assert_int_equal(replay_events[EVENT_EXCHANGE], 2);
    assert_int_equal(replay_events[EVENT_LIVENESS], 2);
    assert_int_equal(replay_events[EVENT_HEALTH], 1);
    assert_int_equal(replay_events[EVENT_STATE], 1);
    assert_int_equal(replay_events[EVENT_ENDING], 1);
    /* Seeking back: no observation again. */
    server_replay_reset(s);
    assert_false(server_liveness(s)->present);
    assert_int_equal(server_health(s, NULL).state, HEALTH_PENDING);
    assert_int_equal(server_ending_count(s), 0);
    fleet_stop(f);
    fleet_free(f);
    config_free(cfg);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_lines_cut_and_skipped),
        cmocka_unit_test(test_parse_whole_line_without_newline_is_cut),
        cmocka_unit_test(test_parse_refuses_what_is_no_recording),
        cmocka_unit_test(test_parse_server_known_only_by_its_events),
        cmocka_unit_test(test_times),
        cmocka_unit_test(test_report_timelines),
        cmocka_unit_test(test_report_minute_buckets),
        cmocka_unit_test(test_report_window),
        cmocka_unit_test(test_report_stopping),
        cmocka_unit_test(test_replayed_server),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
