/*
 * Tests for the tap's in-flight ledger (tap_ledger.c, issue 31): pairing
 * by id in both directions (numbers and strings, ids shared by the two
 * sides kept apart), the classification of what ends a request (result:
 * completed; error: protocol, delivered yes; the transport closing:
 * connection_closed, delivered unknown), progress by token, a sender's
 * own cancel, the operator's cancel and its late answer dropped, lines
 * that are no message, duplicates and the bound, and a flood of ids in
 * linear time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "engine/failure.h"
#include "tap_ledger.h"

/* What the host saw. */
struct seen {
    int            started, progress, ended;
    enum tap_end   how;
    bool           has_failure;
    struct failure f;
    char           id[64], method[64], tool[64];
    enum tap_dir   dir;
    double         ms, last_progress, last_total;
};

static void
seen_started(void *arg, const struct tap_request *r)
{
    struct seen *s = arg;

    s->started++;
    snprintf(s->id, sizeof(s->id), "%s", r->id);
    snprintf(s->method, sizeof(s->method), "%s", r->method);
    snprintf(s->tool, sizeof(s->tool), "%s", r->tool != NULL ? r->tool :
        "");
    s->dir = r->dir;
}

static void
seen_progress(void *arg, const struct tap_request *r)
{
    struct seen *s = arg;

    s->progress++;
    s->last_progress = r->progress;
    s->last_total = r->total;
}

static void
seen_ended(void *arg, const struct tap_request *r, enum tap_end how,
    const struct failure *f, double ms)
{
    struct seen *s = arg;

    s->ended++;
    s->how = how;
    s->has_failure = f != NULL;
    if (f != NULL)
        s->f = *f;
    s->ms = ms;
    snprintf(s->id, sizeof(s->id), "%s", r->id);
    s->dir = r->dir;
}

static const struct tap_ledger_host host = {
    .started = seen_started,
    .progress = seen_progress,
    .ended = seen_ended,
};

static bool
line(struct tap_ledger *l, enum tap_side side, const char *text, double now)
{
    return tap_ledger_line(l, side, text, strlen(text), now, 1000);
}

static void
test_result_completes(void **state)
{
    struct seen        s = { 0 };
    struct tap_ledger *l = tap_ledger_new(&host, &s, 0);

    (void)state;
    line(l, TAP_SIDE_AGENT, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":"
        "\"tools/call\",\"params\":{\"name\":\"echo\"}}", 1.0);
    assert_int_equal(s.started, 1);
    assert_string_equal(s.id, "7");
    assert_string_equal(s.method, "tools/call");
    assert_string_equal(s.tool, "echo");
    assert_int_equal(s.dir, TAP_DIR_TO_SERVER);
    assert_int_equal(tap_ledger_count(l), 1);
    assert_true(line(l, TAP_SIDE_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":7,"
        "\"result\":{}}", 1.5));
    assert_int_equal(s.ended, 1);
    assert_int_equal(s.how, TAP_END_COMPLETED);
    assert_false(s.has_failure);
    assert_true(s.ms > 499 && s.ms < 501);
    assert_int_equal(tap_ledger_count(l), 0);
    assert_int_equal(tap_ledger_stats(l)->completed, 1);
    tap_ledger_free(l);
}

static void
test_error_is_protocol(void **state)
{
    struct seen        s = { 0 };
    struct tap_ledger *l = tap_ledger_new(&host, &s, 0);

    (void)state;
    line(l, TAP_SIDE_AGENT, "{\"jsonrpc\":\"2.0\",\"id\":\"a-1\",\"method\":"
        "\"nosuch\"}", 1.0);
    line(l, TAP_SIDE_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":\"a-1\",\"error\":"
        "{\"code\":-32601,\"message\":\"Method not found\"}}", 1.1);
    assert_int_equal(s.ended, 1);
    assert_int_equal(s.how, TAP_END_FAILED);
    assert_true(s.has_failure);
    assert_int_equal(s.f.kind, FAILURE_PROTOCOL);
    assert_int_equal(s.f.delivered, DELIVERED_YES);
    assert_true(s.f.has_rpc_code);
    assert_int_equal(s.f.rpc_code, -32601);
    assert_non_null(strstr(s.f.detail, "Method not found"));
    tap_ledger_free(l);
}

static void
test_close_is_connection_closed(void **state)
{
    struct seen        s = { 0 };
    struct tap_ledger *l = tap_ledger_new(&host, &s, 0);

    (void)state;
    line(l, TAP_SIDE_AGENT, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}",
        1.0);
    line(l, TAP_SIDE_AGENT, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"b\"}",
        1.0);
    line(l, TAP_SIDE_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":"
        "\"sampling/createMessage\"}", 1.0);
    assert_int_equal(tap_ledger_count(l), 3);
    tap_ledger_close(l, "the server was killed by signal 9", 2.0);
    assert_int_equal(s.ended, 3);
    assert_int_equal(s.how, TAP_END_FAILED);
    assert_int_equal(s.f.kind, FAILURE_CONNECTION_CLOSED);
    assert_int_equal(s.f.delivered, DELIVERED_UNKNOWN);
    assert_string_equal(s.f.detail, "the server was killed by signal 9");
    assert_int_equal(tap_ledger_count(l), 0);
    tap_ledger_free(l);
}

/* The same id from each side names two requests; each answer pairs with
 * the one its writer received. */
static void
test_both_directions(void **state)
{
    struct seen        s = { 0 };
    struct tap_ledger *l = tap_ledger_new(&host, &s, 0);

    (void)state;
    line(l, TAP_SIDE_AGENT, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":"
        "\"tools/call\"}", 1.0);
    line(l, TAP_SIDE_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":"
        "\"roots/list\"}", 1.0);
    assert_int_equal(tap_ledger_count(l), 2);
    /* The agent answers the server's roots/list. */
    line(l, TAP_SIDE_AGENT, "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":"
        "{\"roots\":[]}}", 1.2);
    assert_int_equal(s.ended, 1);
    assert_int_equal(s.dir, TAP_DIR_TO_AGENT);
    assert_non_null(tap_ledger_find(l, TAP_DIR_TO_SERVER, "0"));
    assert_null(tap_ledger_find(l, TAP_DIR_TO_AGENT, "0"));
    line(l, TAP_SIDE_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}",
        1.3);
    assert_int_equal(s.ended, 2);
    assert_int_equal(s.dir, TAP_DIR_TO_SERVER);
    tap_ledger_free(l);
}

static void
test_progress_by_token(void **state)
{
    struct seen               s = { 0 };
    struct tap_ledger        *l = tap_ledger_new(&host, &s, 0);
    const struct tap_request *r;

    (void)state;
    line(l, TAP_SIDE_AGENT, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
        "\"tools/call\",\"params\":{\"name\":\"slow\",\"_meta\":"
        "{\"progressToken\":\"t1\"}}}", 1.0);
    /* Another token, and the agent's own progress: not this request's. */
    line(l, TAP_SIDE_SERVER, "{\"jsonrpc\":\"2.0\",\"method\":"
        "\"notifications/progress\",\"params\":{\"progressToken\":\"t2\","
        "\"progress\":9}}", 1.1);
    line(l, TAP_SIDE_AGENT, "{\"jsonrpc\":\"2.0\",\"method\":"
        "\"notifications/progress\",\"params\":{\"progressToken\":\"t1\","
        "\"progress\":9}}", 1.1);
    assert_int_equal(s.progress, 0);
    line(l, TAP_SIDE_SERVER, "{\"jsonrpc\":\"2.0\",\"method\":"
        "\"notifications/progress\",\"params\":{\"progressToken\":\"t1\","
        "\"progress\":2,\"total\":5,\"message\":\"step \\u001b[31m2\"}}",
        1.2);
    assert_int_equal(s.progress, 1);
    r = tap_ledger_oldest(l);
    assert_non_null(r);
    assert_true(r->has_progress && r->has_total);
    assert_true(r->progress == 2 && r->total == 5);
    /* Escapes are stripped from what a server says. */
    assert_string_equal(r->message, "step 2");
    assert_true(r->bytes > 100);
    tap_ledger_free(l);
}

static void
test_sender_cancel(void **state)
{
    struct seen        s = { 0 };
    struct tap_ledger *l = tap_ledger_new(&host, &s, 0);

    (void)state;
    line(l, TAP_SIDE_AGENT, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":"
        "\"tools/call\"}", 1.0);
    line(l, TAP_SIDE_AGENT, "{\"jsonrpc\":\"2.0\",\"method\":"
        "\"notifications/cancelled\",\"params\":{\"requestId\":5}}", 1.5);
    assert_int_equal(s.ended, 1);
    assert_int_equal(s.how, TAP_END_CANCELLED);
    assert_false(s.has_failure);
    /* A late answer is only unmatched (the agent ignores it itself). */
    assert_true(line(l, TAP_SIDE_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":5,"
        "\"result\":{}}", 2.0));
    assert_int_equal(tap_ledger_stats(l)->unmatched[TAP_SIDE_SERVER], 1);
    tap_ledger_free(l);
}

static void
test_operator_cancel_drops_late_answer(void **state)
{
    struct seen         s = { 0 };
    struct tap_ledger  *l = tap_ledger_new(&host, &s, 0);
    struct tap_request *r;

    (void)state;
    line(l, TAP_SIDE_AGENT, "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":"
        "\"tools/call\"}", 1.0);
    assert_null(tap_ledger_find(l, TAP_DIR_TO_SERVER, "y"));
    r = tap_ledger_find(l, TAP_DIR_TO_SERVER, "x");     /* a bare word */
    assert_non_null(r);
    assert_ptr_equal(tap_ledger_find(l, TAP_DIR_TO_SERVER, "\"x\""), r);
    tap_ledger_cancel(l, r, 2.0);
    assert_int_equal(s.how, TAP_END_OPERATOR);
    assert_int_equal(tap_ledger_cancelled_pending(l), 1);
    assert_false(line(l, TAP_SIDE_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":"
        "\"x\",\"result\":{}}", 3.0));
    assert_int_equal(tap_ledger_stats(l)->late_dropped, 1);
    assert_int_equal(tap_ledger_cancelled_pending(l), 0);
    /* Only once: another answer with that id is passed on. */
    assert_true(line(l, TAP_SIDE_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":"
        "\"x\",\"result\":{}}", 3.0));
    tap_ledger_free(l);
}

static void
test_not_messages(void **state)
{
    struct seen        s = { 0 };
    struct tap_ledger *l = tap_ledger_new(&host, &s, 0);

    (void)state;
    assert_true(line(l, TAP_SIDE_SERVER, "starting up...", 1.0));
    assert_true(line(l, TAP_SIDE_SERVER, "[{\"jsonrpc\":\"2.0\",\"id\":3}]",
        1.0));
    assert_true(line(l, TAP_SIDE_SERVER, "{\"id\":1,\"result\":{}}", 1.0));
    assert_true(line(l, TAP_SIDE_AGENT, "{\"jsonrpc\":\"2.0\",\"id\":{},"
        "\"method\":\"x\"}", 1.0));
    tap_ledger_skipped(l, TAP_SIDE_SERVER);
    assert_int_equal(tap_ledger_stats(l)->unparsed[TAP_SIDE_SERVER], 4);
    assert_int_equal(tap_ledger_stats(l)->untracked, 1);
    assert_int_equal(s.started, 0);
    tap_ledger_free(l);
}

static void
test_batch(void **state)
{
    struct seen         s = { 0 };
    struct tap_ledger  *l = tap_ledger_new(&host, &s, 0);
    struct tap_request *r;

    (void)state;
    /* Two requests and a notification in one batch: both followed. */
    assert_true(line(l, TAP_SIDE_AGENT, " [{\"jsonrpc\":\"2.0\",\"id\":1,"
        "\"method\":\"tools/list\"},{\"jsonrpc\":\"2.0\",\"method\":"
        "\"notifications/initialized\"},{\"jsonrpc\":\"2.0\",\"id\":2,"
        "\"method\":\"tools/call\",\"params\":{\"name\":\"slow\"}}]", 1.0));
    assert_int_equal(s.started, 2);
    assert_int_equal(tap_ledger_count(l), 2);
    assert_int_equal(tap_ledger_stats(l)->batches[TAP_SIDE_AGENT], 1);
    /* The answers in one batch, out of order, one an error. */
    assert_true(line(l, TAP_SIDE_SERVER, "[{\"jsonrpc\":\"2.0\",\"id\":2,"
        "\"error\":{\"code\":-32603,\"message\":\"boom\"}},{\"jsonrpc\":"
        "\"2.0\",\"id\":1,\"result\":{\"tools\":[]}}]", 1.2));
    assert_int_equal(s.ended, 2);
    assert_int_equal(tap_ledger_count(l), 0);
    assert_int_equal(tap_ledger_stats(l)->completed, 1);
    assert_int_equal(tap_ledger_stats(l)->failed, 1);
    /* A late answer to a cancelled request inside a batch is passed on
     * with its batch (the tap never rewrites bytes), and counted so. */
    line(l, TAP_SIDE_AGENT, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
        "\"tools/call\"}", 2.0);
    r = tap_ledger_find(l, TAP_DIR_TO_SERVER, "3");
    assert_non_null(r);
    tap_ledger_cancel(l, r, 2.1);
    assert_true(line(l, TAP_SIDE_SERVER, "[{\"jsonrpc\":\"2.0\",\"id\":3,"
        "\"result\":{}},7,{}]", 2.2));
    assert_int_equal(tap_ledger_stats(l)->late_dropped, 0);
    assert_int_equal(tap_ledger_stats(l)->late_passed, 1);
    assert_int_equal(tap_ledger_stats(l)->unparsed[TAP_SIDE_SERVER], 2);
    /* An empty batch names no id: passed on unread. A broken one is no
     * message. */
    assert_true(line(l, TAP_SIDE_SERVER, "[]", 3.0));
    assert_true(line(l, TAP_SIDE_SERVER, "[{\"id\":1,", 3.0));
    assert_int_equal(tap_ledger_stats(l)->unparsed[TAP_SIDE_SERVER], 3);
    assert_int_equal(tap_ledger_stats(l)->batches[TAP_SIDE_SERVER], 2);
    tap_ledger_free(l);
}

static void
test_error_code_out_of_range(void **state)
{
    struct seen        s = { 0 };
    struct tap_ledger *l = tap_ledger_new(&host, &s, 0);

    (void)state;
    /* A code no integer type holds is no code (never a cast out of
     * range: UBSan's finding of fuzz_tap). */
    line(l, TAP_SIDE_AGENT, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
        "\"x\"}", 1.0);
    line(l, TAP_SIDE_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":"
        "{\"code\":-3.2e69,\"message\":\"m\"}}", 1.1);
    assert_int_equal(s.ended, 1);
    assert_true(s.has_failure);
    assert_int_equal(s.f.rpc_code, 0);
    line(l, TAP_SIDE_AGENT, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
        "\"x\"}", 1.2);
    line(l, TAP_SIDE_SERVER, "{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":"
        "{\"code\":-32601,\"message\":\"m\"}}", 1.3);
    assert_int_equal(s.f.rpc_code, -32601);
    tap_ledger_free(l);
}

static void
test_duplicates_and_bound(void **state)
{
    struct seen        s = { 0 };
    struct tap_ledger *l = tap_ledger_new(&host, &s, 2);

    (void)state;
    line(l, TAP_SIDE_AGENT, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}",
        1.0);
    line(l, TAP_SIDE_AGENT, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"b\"}",
        1.0);
    assert_int_equal(tap_ledger_stats(l)->duplicate_ids, 1);
    line(l, TAP_SIDE_AGENT, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"c\"}",
        1.0);
    line(l, TAP_SIDE_AGENT, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"d\"}",
        1.0);
    assert_int_equal(tap_ledger_count(l), 2);
    assert_int_equal(tap_ledger_stats(l)->untracked, 1);
    /* Oldest first. */
    assert_string_equal(tap_ledger_oldest(l)->method, "a");
    assert_string_equal(tap_ledger_oldest(l)->newer->method, "c");
    tap_ledger_free(l);
}

/* 50,000 requests in flight and their answers in reverse: every one is
 * found (the tables grow), in well under the time a quadratic walk
 * would take. */
static void
test_flood(void **state)
{
    struct seen        s = { 0 };
    struct tap_ledger *l = tap_ledger_new(&host, &s, 100000);
    char               buf[128];

    (void)state;
    for (int i = 0; i < 50000; i++) {
        snprintf(buf, sizeof(buf), "{\"jsonrpc\":\"2.0\",\"id\":%d,"
            "\"method\":\"m\",\"params\":{\"_meta\":{\"progressToken\":%d}}}",
            i, i);
        line(l, TAP_SIDE_AGENT, buf, 1.0);
    }
    assert_int_equal(tap_ledger_count(l), 50000);
    for (int i = 49999; i >= 0; i--) {
        snprintf(buf, sizeof(buf), "{\"jsonrpc\":\"2.0\",\"id\":%d,"
            "\"result\":{}}", i);
        line(l, TAP_SIDE_SERVER, buf, 2.0);
    }
    assert_int_equal(s.ended, 50000);
    assert_int_equal(tap_ledger_count(l), 0);
    assert_int_equal(tap_ledger_stats(l)->unmatched[TAP_SIDE_SERVER], 0);
    tap_ledger_free(l);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_result_completes),
        cmocka_unit_test(test_error_is_protocol),
        cmocka_unit_test(test_close_is_connection_closed),
        cmocka_unit_test(test_both_directions),
        cmocka_unit_test(test_progress_by_token),
        cmocka_unit_test(test_sender_cancel),
        cmocka_unit_test(test_operator_cancel_drops_late_answer),
        cmocka_unit_test(test_not_messages),
        cmocka_unit_test(test_batch),
        cmocka_unit_test(test_error_code_out_of_range),
        cmocka_unit_test(test_duplicates_and_bound),
        cmocka_unit_test(test_flood),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
