/*
 * Tests for the event line's one writer (export/jsonl.c) where it writes
 * a tap's lines: each line byte for byte, as a {"tap": PATH} reader
 * (the engine's tap_source.c) and the integration tests' TapReader parse
 * them: the head {"ts", "event", "server", "source": "tap"}, the members
 * in their order, a failure's fields, a request with and without
 * progress, ids as the agent wrote them, numbers as cJSON prints them,
 * the server's name sanitized, one buffer reused across lines. Also the
 * exit line of watch.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "engine/failure.h"
#include "engine/health.h"
#include "engine/liveness.h"
#include "export/jsonl.h"
#include "util/jsonw.h"

#define TS      1700000000123   /* 2023-11-14T22:13:20.123Z */
#define HEAD(e) "{\"ts\":\"2023-11-14T22:13:20.123Z\",\"event\":\"" e \
                "\",\"server\":\"srv\",\"source\":\"tap\""

static struct failure
protocol_error(void)
{
    struct failure f = { .kind = FAILURE_PROTOCOL,
        .delivered = DELIVERED_YES, .site = FAILURE_SITE_REQUEST,
        .has_rpc_code = true, .rpc_code = -32601 };

    strcpy(f.detail, "Method not found");
    return f;
}

/* An exchange: completed with the agent's id, failed with a JSON-RPC
 * error (its code kept), and the tap's own observation (no id). */
static void
test_exchange(void **state)
{
    struct jsonw   w;
    struct failure f = protocol_error();

    (void)state;
    jsonw_init(&w);
    jsonl_tap_exchange(&w, "srv", TS, 1, "tools/call", "7", NULL, 12.34);
    assert_string_equal(w.buf, HEAD("exchange") ",\"op\":\"tools/call\","
        "\"outcome\":\"completed\",\"ms\":12.3,\"observed_at\":1700000000123,"
        "\"seq\":1,\"id\":7,\"direction\":\"to_server\"}");
    jsonl_tap_exchange(&w, "srv", TS, 2, "ping", "\"a-1\"", &f, 5.0);
    assert_string_equal(w.buf, HEAD("exchange") ",\"op\":\"ping\","
        "\"outcome\":\"protocol\",\"delivered\":\"yes\",\"rpc_code\":-32601,"
        "\"site\":\"request\",\"detail\":\"Method not found\",\"ms\":5,"
        "\"observed_at\":1700000000123,\"seq\":2,\"id\":\"a-1\","
        "\"direction\":\"to_server\"}");
    f.kind = FAILURE_CONNECTION_CLOSED;
    f.delivered = DELIVERED_UNKNOWN;
    f.has_rpc_code = false;
    strcpy(f.detail, "the server exited with status 3");
    jsonl_tap_exchange(&w, "srv", TS, 3, "process", NULL, &f, 0);
    assert_string_equal(w.buf, HEAD("exchange") ",\"op\":\"process\","
        "\"outcome\":\"connection_closed\",\"delivered\":\"unknown\","
        "\"site\":\"request\",\"detail\":\"the server exited with status 3\","
        "\"ms\":0,\"observed_at\":1700000000123,\"seq\":3}");
    jsonw_done(&w);
}

/* Liveness and health lines: the record's state and the verdict. */
static void
test_liveness_health(void **state)
{
    struct jsonw    w;
    struct liveness l = { .present = true, .state = LIVENESS_UNREACHABLE,
        .observed_at = TS - 3, .has_error_code = true,
        .error_code = FAILURE_CONNECTION_CLOSED };
    struct health   h = { HEALTH_DEGRADED, "answers with JSON-RPC errors" };

    (void)state;
    jsonw_init(&w);
    jsonl_tap_liveness(&w, TS, "srv", &l);
    assert_string_equal(w.buf, HEAD("liveness") ",\"state\":\"unreachable\","
        "\"error_code\":\"connection_closed\",\"observed_at\":1700000000120}");
    l.state = LIVENESS_REACHABLE;
    l.has_error_code = false;
    jsonl_tap_liveness(&w, TS, "srv", &l);
    assert_string_equal(w.buf, HEAD("liveness") ",\"state\":\"reachable\","
        "\"observed_at\":1700000000120}");
    jsonl_tap_health(&w, TS, "srv", &h, HEALTH_OK);
    assert_string_equal(w.buf, HEAD("health") ",\"state\":\"degraded\","
        "\"was\":\"ok\",\"reason\":\"answers with JSON-RPC errors\"}");
    h = (struct health){ HEALTH_PENDING, "no observation yet" };
    jsonl_tap_health(&w, TS, "srv", &h, HEALTH__COUNT);
    assert_string_equal(w.buf, HEAD("health") ",\"state\":\"pending\","
        "\"was\":null,\"reason\":\"no observation yet\"}");
    jsonw_done(&w);
}

/* A request line with progress, one without (the tap's own ping), and a
 * request's end. */
static void
test_request(void **state)
{
    struct jsonw             w;
    struct jsonl_tap_request r = { .id = "3", .direction = "to_server",
        .method = "tools/call", .tool = "slow", .started_at = TS - 123,
        .age_ms = 123.45, .has_progress = true, .progress = 0.5,
        .message = "half", .progress_age_ms = 20, .bytes = 99 };
    struct failure           f = { .kind = FAILURE_CONNECTION_CLOSED };

    (void)state;
    jsonw_init(&w);
    jsonl_tap_request_line(&w, TS, "progress", "srv", &r);
    assert_string_equal(w.buf, HEAD("progress") ",\"request\":{\"id\":3,"
        "\"direction\":\"to_server\",\"method\":\"tools/call\","
        "\"tool\":\"slow\",\"started_at\":1700000000000,\"age_ms\":123.4,"
        "\"progress\":{\"progress\":0.5,\"total\":null,\"message\":\"half\","
        "\"age_ms\":20},\"bytes\":99}}");
    r = (struct jsonl_tap_request){ .id = "\"mcptop-tap-ping-1\"",
        .direction = "to_server", .method = "ping", .started_at = TS,
        .own = true };
    jsonl_tap_request_line(&w, TS, "request", "srv", &r);
    assert_string_equal(w.buf, HEAD("request") ",\"request\":{"
        "\"id\":\"mcptop-tap-ping-1\",\"direction\":\"to_server\","
        "\"method\":\"ping\",\"tool\":null,\"started_at\":1700000000123,"
        "\"age_ms\":0,\"progress\":null,\"bytes\":0,\"own\":true}}");
    r = (struct jsonl_tap_request){ .id = "\"x\"", .direction = "to_agent",
        .method = "sampling/createMessage" };
    jsonl_tap_request_end(&w, TS, "srv", &r, "failed", &f, 1.56);
    assert_string_equal(w.buf, HEAD("request_end") ",\"id\":\"x\","
        "\"direction\":\"to_agent\",\"method\":\"sampling/createMessage\","
        "\"outcome\":\"failed\",\"kind\":\"connection_closed\",\"ms\":1.5}");
    r.tool = "t";
    jsonl_tap_request_end(&w, TS, "srv", &r, "completed", NULL, 2);
    assert_string_equal(w.buf, HEAD("request_end") ",\"id\":\"x\","
        "\"direction\":\"to_agent\",\"method\":\"sampling/createMessage\","
        "\"tool\":\"t\",\"outcome\":\"completed\",\"ms\":2}");
    jsonw_done(&w);
}

/* Ids as the agent wrote them: big numbers exact, fractions as cJSON
 * prints them, strings escaped, text that is no JSON as a string. */
static void
test_ids(void **state)
{
    static const struct {
        const char *id, *want;
    } cases[] = {
        { "9007199254740991", "9007199254740991" },
        { "-4", "-4" },
        { "1.5", "1.5" },
        { "1e3", "1000" },
        { "\"a\\\"b\"", "\"a\\\"b\"" },
        { "\"tab\\there\"", "\"tab\\there\"" },
        { "not json", "\"not json\"" },
    };
    struct jsonw w;
    char         want[256];

    (void)state;
    jsonw_init(&w);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        jsonl_tap_exchange(&w, "srv", TS, i + 1, "x", cases[i].id, NULL,
            0);
        snprintf(want, sizeof(want), ",\"id\":%s,\"direction\"",
            cases[i].want);
        assert_non_null(strstr(w.buf, want));
    }
    jsonw_done(&w);
}

/* The end of the server, and an HTTP tap's session lines. */
static void
test_exit_sessions(void **state)
{
    struct jsonw   w;
    struct failure f = { .kind = FAILURE_CONNECT_REFUSED,
        .delivered = DELIVERED_NO };

    (void)state;
    strcpy(f.detail, "connection refused");
    jsonw_init(&w);
    jsonl_tap_exit(&w, TS, "srv", 3, 0, "the server exited with status 3");
    assert_string_equal(w.buf, HEAD("exit") ",\"code\":3,"
        "\"detail\":\"the server exited with status 3\"}");
    jsonl_tap_exit(&w, TS, "srv", -1, 9, "killed");
    assert_string_equal(w.buf, HEAD("exit") ",\"signal\":9,"
        "\"detail\":\"killed\"}");
    jsonl_tap_exit(&w, TS, "srv", -1, 0, "the server closed its stdout");
    assert_string_equal(w.buf, HEAD("exit") ",\"detail\":\"the server "
        "closed its stdout\"}");
    jsonl_tap_session(&w, TS, "session", "srv", "abcd1234", NULL);
    assert_string_equal(w.buf, HEAD("session") ",\"session\":\"abcd1234\"}");
    jsonl_tap_session(&w, TS, "session_gone", "srv", "abcd1234",
        "the operator ended it");
    assert_string_equal(w.buf, HEAD("session_gone") ",\"session\":"
        "\"abcd1234\",\"detail\":\"the operator ended it\"}");
    jsonl_tap_session_end(&w, TS, "srv", "abcd1234", "terminated", 204,
        NULL, 12);
    assert_string_equal(w.buf, HEAD("session_end") ",\"session\":"
        "\"abcd1234\",\"outcome\":\"terminated\",\"status\":204,\"ms\":12}");
    jsonl_tap_session_end(&w, TS, "srv", "abcd1234", "failed", 0, &f, 3);
    assert_string_equal(w.buf, HEAD("session_end") ",\"session\":"
        "\"abcd1234\",\"outcome\":\"failed\",\"status\":null,"
        "\"kind\":\"connect_refused\",\"delivered\":\"no\","
        "\"detail\":\"connection refused\",\"ms\":3}");
    jsonw_done(&w);
}

/* The head left open for the tap's answers, its pieces, and the name:
 * sanitized (no escape sequence reaches a terminal) and escaped. */
static void
test_head_pieces(void **state)
{
    struct jsonw    w;
    struct failure  f = protocol_error();
    struct liveness absent = { .present = false };
    cJSON          *o;

    (void)state;
    jsonw_init(&w);
    jsonl_tap_head(&w, TS, "snapshot", "a\x1b[31mb\"c");
    jsonl_liveness(&w, &absent);
    jsonw_object_open(&w, "last_failure");
    jsonl_tap_failure(&w, &f);
    jsonw_object_close(&w);
    jsonw_object_close(&w);
    assert_string_equal(w.buf, "{\"ts\":\"2023-11-14T22:13:20.123Z\","
        "\"event\":\"snapshot\",\"server\":\"ab\\\"c\",\"source\":\"tap\","
        "\"liveness\":null,\"last_failure\":{\"outcome\":\"protocol\","
        "\"delivered\":\"yes\",\"rpc_code\":-32601,\"site\":\"request\","
        "\"detail\":\"Method not found\"}}");
    o = cJSON_Parse(w.buf);
    assert_non_null(o);
    assert_string_equal(cJSON_GetObjectItem(o, "server")->valuestring,
        "ab\"c");
    cJSON_Delete(o);
    jsonw_done(&w);
}

/* watch's last line: how many sessions were ended and how many not. */
static void
test_exit_line(void **state)
{
    char  *line = jsonl_exit_line(5, 2);
    cJSON *o = cJSON_Parse(line);

    (void)state;
    assert_non_null(o);
    assert_int_equal(strncmp(line, "{\"ts\":\"", 7), 0);
    assert_non_null(strstr(line, ",\"event\":\"exit\",\"sessions_ended\":3,"
        "\"sessions_not_ended\":2}"));
    cJSON_Delete(o);
    free(line);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exchange),
        cmocka_unit_test(test_liveness_health),
        cmocka_unit_test(test_request),
        cmocka_unit_test(test_ids),
        cmocka_unit_test(test_exit_sessions),
        cmocka_unit_test(test_head_pieces),
        cmocka_unit_test(test_exit_line),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
