/*
 * Tests for the failure classifier and the delivery verdict (DESIGN.md
 * sections 2 and 3): every rule of the ordered table with evidence that
 * hits it, the order between rules where evidence matches two, the
 * delivery table for every kind, the site rule, the evidence rule,
 * failure_make and the kind names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "engine/failure.h"

/* DESIGN.md section 3, site `request`, written out by hand. */
static const enum delivered expected_delivery[FAILURE__COUNT] = {
    [FAILURE_CONNECT_REFUSED]   = DELIVERED_NO,
    [FAILURE_CONNECTION_FAILED] = DELIVERED_UNKNOWN,
    [FAILURE_CONNECTION_CLOSED] = DELIVERED_UNKNOWN,
    [FAILURE_HTTP_STATUS]       = DELIVERED_UNKNOWN,
    [FAILURE_NOT_MCP_RESPONSE]  = DELIVERED_UNKNOWN,
    [FAILURE_SPAWN_FAILED]      = DELIVERED_NO,
    [FAILURE_TIMEOUT]           = DELIVERED_UNKNOWN,
    [FAILURE_PROTOCOL]          = DELIVERED_YES,
    [FAILURE_INVALID_CONFIG]    = DELIVERED_NO,
    [FAILURE_UNKNOWN]           = DELIVERED_UNKNOWN,
};

/* The kind names of DESIGN.md section 2, in enum order. */
static const char *const expected_names[FAILURE__COUNT] = {
    [FAILURE_CONNECT_REFUSED]   = "connect_refused",
    [FAILURE_CONNECTION_FAILED] = "connection_failed",
    [FAILURE_CONNECTION_CLOSED] = "connection_closed",
    [FAILURE_HTTP_STATUS]       = "http_status",
    [FAILURE_NOT_MCP_RESPONSE]  = "not_mcp_response",
    [FAILURE_SPAWN_FAILED]      = "spawn_failed",
    [FAILURE_TIMEOUT]           = "timeout",
    [FAILURE_PROTOCOL]          = "protocol",
    [FAILURE_INVALID_CONFIG]    = "invalid_config",
    [FAILURE_UNKNOWN]           = "unknown",
};

/* The rule table as the classifier must order it: index -> kind. */
enum {
    R_CONFIG,
    R_SPAWN,
    R_REFUSED,
    R_TIMEOUT,
    R_RPC_ERROR,
    R_CLOSED,
    R_TRANSPORT,
    R_STATUS,
    R_FOREIGN,
    R_VERSION,
    R_NOT_MCP,
    R_OTHER_NET,
    R_ANY,
    R__COUNT
};

static const enum failure_kind expected_rule_kind[R__COUNT] = {
    [R_CONFIG]    = FAILURE_INVALID_CONFIG,
    [R_SPAWN]     = FAILURE_SPAWN_FAILED,
    [R_REFUSED]   = FAILURE_CONNECT_REFUSED,
    [R_TIMEOUT]   = FAILURE_TIMEOUT,
    [R_RPC_ERROR] = FAILURE_PROTOCOL,
    [R_FOREIGN]   = FAILURE_PROTOCOL,
    [R_CLOSED]    = FAILURE_CONNECTION_CLOSED,
    [R_TRANSPORT] = FAILURE_CONNECTION_FAILED,
    [R_STATUS]    = FAILURE_HTTP_STATUS,
    [R_VERSION]   = FAILURE_PROTOCOL,
    [R_NOT_MCP]   = FAILURE_NOT_MCP_RESPONSE,
    [R_OTHER_NET] = FAILURE_UNKNOWN,
    [R_ANY]       = FAILURE_UNKNOWN,
};

/* Evidence `evd` must hit rule `rule` and be classified as its kind. */
static void
expect_rule(const struct failure_evidence *evd, size_t rule, const char *what)
{
    size_t            got = failure_rule_match(evd);
    enum failure_kind k = failure_classify(evd);

    if (got != rule || k != expected_rule_kind[rule]) {
        print_error("%s: rule %zu (%s) kind %s, expected rule %zu (%s) "
            "kind %s\n", what, got,
            failure_rule_name(got) != NULL ? failure_rule_name(got) : "?",
            failure_kind_name(k), rule,
            failure_rule_name(rule) != NULL ? failure_rule_name(rule) : "?",
            failure_kind_name(expected_rule_kind[rule]));
    }
    assert_int_equal(got, rule);
    assert_int_equal(k, expected_rule_kind[rule]);
}

/* Evidence `evd` must be classified as `kind`. */
static void
expect_kind(const struct failure_evidence *evd, enum failure_kind kind,
    const char *what)
{
    enum failure_kind k = failure_classify(evd);

    if (k != kind) {
        print_error("%s: got %s, expected %s\n", what, failure_kind_name(k),
            failure_kind_name(kind));
    }
    assert_int_equal(k, kind);
}

/* The table has the expected length, its names, and an end. */
static void
test_rule_table_shape(void **state)
{
    size_t i, j;
    size_t n = failure_rule_count();

    (void)state;
    assert_int_equal(n, R__COUNT);
    for (i = 0; i < n; i++) {
        const char *name = failure_rule_name(i);

        assert_non_null(name);
        assert_true(strlen(name) > 0);
        for (j = 0; j < i; j++)
            assert_string_not_equal(name, failure_rule_name(j));
    }
    assert_null(failure_rule_name(n));
    assert_null(failure_rule_name(n + 100));
}

/* Rule 0: the declaration cannot be dialed. */
static void
test_rule_config(void **state)
{
    struct failure_evidence evd;

    (void)state;
    memset(&evd, 0, sizeof(evd));
    evd.config_invalid = true;
    expect_rule(&evd, R_CONFIG, "config_invalid");

    memset(&evd, 0, sizeof(evd));
    evd.net = NET_URL_MALFORMAT;
    expect_rule(&evd, R_CONFIG, "NET_URL_MALFORMAT");

    memset(&evd, 0, sizeof(evd));
    evd.net = NET_UNSUPPORTED;
    evd.phase = FAILURE_PHASE_NONE;
    expect_rule(&evd, R_CONFIG, "NET_UNSUPPORTED");
}

/* Rule 1: a stdio command could not start. */
static void
test_rule_spawn(void **state)
{
    struct failure_evidence evd;

    (void)state;
    memset(&evd, 0, sizeof(evd));
    evd.spawn_error = true;
    evd.os_errno = ENOENT;
    expect_rule(&evd, R_SPAWN, "spawn ENOENT");

    memset(&evd, 0, sizeof(evd));
    evd.spawn_error = true;
    evd.os_errno = EACCES;
    expect_rule(&evd, R_SPAWN, "spawn EACCES");
}

/* Rule 2: the connection was never made, including a timer that fired
 * before it was. */
static void
test_rule_refused(void **state)
{
    struct failure_evidence evd;

    (void)state;
    memset(&evd, 0, sizeof(evd));
    evd.net = NET_RESOLVE;
    evd.phase = FAILURE_PHASE_RESOLVE;
    expect_rule(&evd, R_REFUSED, "NET_RESOLVE");

    memset(&evd, 0, sizeof(evd));
    evd.net = NET_CONNECT;
    evd.phase = FAILURE_PHASE_CONNECT;
    evd.os_errno = ECONNREFUSED;
    expect_rule(&evd, R_REFUSED, "NET_CONNECT");

    memset(&evd, 0, sizeof(evd));
    evd.net = NET_TIMEDOUT;
    evd.phase = FAILURE_PHASE_CONNECT;
    expect_rule(&evd, R_REFUSED, "connect timeout (library)");

    memset(&evd, 0, sizeof(evd));
    evd.net = NET_TIMEDOUT;
    evd.phase = FAILURE_PHASE_RESOLVE;
    expect_rule(&evd, R_REFUSED, "resolve timeout (library)");

    memset(&evd, 0, sizeof(evd));
    evd.timer = FAILURE_TIMER_REQUEST;
    evd.phase = FAILURE_PHASE_CONNECT;
    expect_rule(&evd, R_REFUSED, "request timer during connect");

    memset(&evd, 0, sizeof(evd));
    evd.timer = FAILURE_TIMER_OPEN;
    evd.phase = FAILURE_PHASE_RESOLVE;
    expect_rule(&evd, R_REFUSED, "open deadline during resolve");

    memset(&evd, 0, sizeof(evd));
    evd.timer = FAILURE_TIMER_IDLE;
    evd.phase = FAILURE_PHASE_CONNECT;
    expect_rule(&evd, R_REFUSED, "idle timer during connect");
}

/* Rule 3: a timer fired after the connection was made. */
static void
test_rule_timeout(void **state)
{
    struct failure_evidence evd;

    (void)state;
    memset(&evd, 0, sizeof(evd));
    evd.timer = FAILURE_TIMER_REQUEST;
    evd.phase = FAILURE_PHASE_SENT;
    evd.body_bytes_expected = 50;
    evd.body_bytes_sent = 50;
    expect_rule(&evd, R_TIMEOUT, "request timer after send");

    memset(&evd, 0, sizeof(evd));
    evd.timer = FAILURE_TIMER_IDLE;
    evd.phase = FAILURE_PHASE_RESPONSE;
    evd.response_bytes = 10;
    expect_rule(&evd, R_TIMEOUT, "idle timer on a stream");

    memset(&evd, 0, sizeof(evd));
    evd.timer = FAILURE_TIMER_OPEN;
    evd.phase = FAILURE_PHASE_NONE;
    expect_rule(&evd, R_TIMEOUT, "open deadline, nothing in flight");

    memset(&evd, 0, sizeof(evd));
    evd.net = NET_TIMEDOUT;
    evd.phase = FAILURE_PHASE_SENT;
    expect_rule(&evd, R_TIMEOUT, "library timer after send");

    /* The teardown deadline is an ending's, never a refused connect. */
    memset(&evd, 0, sizeof(evd));
    evd.timer = FAILURE_TIMER_TEARDOWN;
    evd.phase = FAILURE_PHASE_CONNECT;
    expect_rule(&evd, R_TIMEOUT, "teardown timer during connect");
}

/* Rule 4: a JSON-RPC error carrying our id. */
static void
test_rule_rpc_error(void **state)
{
    struct failure_evidence evd;

    (void)state;
    memset(&evd, 0, sizeof(evd));
    evd.http_status = 200;
    evd.content_json = true;
    evd.phase = FAILURE_PHASE_RESPONSE;
    evd.response_bytes = 80;
    evd.rpc_error = true;
    evd.rpc_error_code = -32601;
    expect_rule(&evd, R_RPC_ERROR, "json-rpc error on 200");

    /* Over stdio: no HTTP status at all. */
    memset(&evd, 0, sizeof(evd));
    evd.rpc_error = true;
    evd.rpc_error_code = -32602;
    expect_rule(&evd, R_RPC_ERROR, "json-rpc error over stdio");
}

/* Rule 5: the transport closed. */
static void
test_rule_closed(void **state)
{
    struct failure_evidence evd;

    (void)state;
    memset(&evd, 0, sizeof(evd));
    evd.child_closed = true;
    expect_rule(&evd, R_CLOSED, "child closed");

    memset(&evd, 0, sizeof(evd));
    evd.peer_known_dead = true;
    expect_rule(&evd, R_CLOSED, "peer known dead");

    memset(&evd, 0, sizeof(evd));
    evd.http_status = 200;
    evd.content_sse = true;
    evd.phase = FAILURE_PHASE_RESPONSE;
    evd.response_bytes = 120;
    evd.stream_ended = true;
    expect_rule(&evd, R_CLOSED, "SSE stream ended early");
}

/* Rule 6: any other transport error. */
static void
test_rule_transport(void **state)
{
    static const enum net_error nets[] = {
        NET_SEND, NET_RECV, NET_GOT_NOTHING, NET_PARTIAL, NET_TLS,
        NET_TLS_VERIFY, NET_HTTP2,
    };
    struct failure_evidence evd;
    size_t                  i;
    char                    what[64];

    (void)state;
    for (i = 0; i < sizeof(nets) / sizeof(nets[0]); i++) {
        memset(&evd, 0, sizeof(evd));
        evd.net = nets[i];
        evd.phase = FAILURE_PHASE_SENT;
        snprintf(what, sizeof(what), "net error %d", (int)nets[i]);
        expect_rule(&evd, R_TRANSPORT, what);
    }
}

/* Rule 7: an HTTP status instead of an MCP response. */
static void
test_rule_status(void **state)
{
    static const long statuses[] = { 400, 401, 404, 429, 500, 502, 503, 504,
        300, 302, 101, 199 };
    struct failure_evidence evd;
    size_t                  i;
    char                    what[64];

    (void)state;
    for (i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
        memset(&evd, 0, sizeof(evd));
        evd.http_status = statuses[i];
        evd.phase = FAILURE_PHASE_RESPONSE;
        evd.response_bytes = 40;
        snprintf(what, sizeof(what), "status %ld", statuses[i]);
        expect_rule(&evd, R_STATUS, what);
    }
}

/* Rule 8: initialize answered a version we do not speak. */
static void
test_rule_version(void **state)
{
    struct failure_evidence evd;

    (void)state;
    memset(&evd, 0, sizeof(evd));
    evd.http_status = 200;
    evd.content_json = true;
    evd.phase = FAILURE_PHASE_RESPONSE;
    evd.response_bytes = 200;
    evd.bad_protocol_version = true;
    expect_rule(&evd, R_VERSION, "bad protocol version");

    memset(&evd, 0, sizeof(evd));
    evd.bad_protocol_version = true;
    expect_rule(&evd, R_VERSION, "bad protocol version over stdio");
}

/* A URL a server handed us on another origin: protocol, delivered yes (the
 * server answered), and nothing went there. */
static void
test_rule_foreign(void **state)
{
    struct failure_evidence evd;
    struct failure          f;

    (void)state;
    memset(&evd, 0, sizeof(evd));
    evd.http_status = 200;
    evd.content_sse = true;
    evd.phase = FAILURE_PHASE_RESPONSE;
    evd.response_bytes = 80;
    evd.foreign_url = true;
    expect_rule(&evd, R_FOREIGN, "endpoint on another origin");
    failure_make(&f, &evd, FAILURE_SITE_REQUEST, "endpoint on http://127.0.0.1:9");
    assert_int_equal(f.kind, FAILURE_PROTOCOL);
    assert_int_equal(f.delivered, DELIVERED_YES);
}

/* A local resource limit (EMFILE) is never the server refusing: unknown,
 * delivered no, whatever the connect step said. */
static void
test_local_limit(void **state)
{
    struct failure_evidence evd;
    struct failure          f;

    (void)state;
    memset(&evd, 0, sizeof(evd));
    evd.net = NET_CONNECT;
    evd.phase = FAILURE_PHASE_CONNECT;
    evd.local_limit = true;
    failure_make(&f, &evd, FAILURE_SITE_REQUEST, "local limit: too many open files");
    assert_int_equal(f.kind, FAILURE_UNKNOWN);
    assert_int_equal(f.delivered, DELIVERED_NO);
    evd.local_limit = false;
    assert_int_equal(failure_classify(&evd), FAILURE_CONNECT_REFUSED);

    memset(&evd, 0, sizeof(evd));
    evd.local_limit = true;      /* stdio: the child could not start */
    failure_make(&f, &evd, FAILURE_SITE_CONNECT, "local limit");
    assert_int_equal(f.kind, FAILURE_UNKNOWN);
    assert_int_equal(f.delivered, DELIVERED_NO);
}

/* An http_status failure carries a reason read from structure only. */
static void
test_reasons(void **state)
{
    static const struct {
        long status; bool www; bool cf; enum failure_reason want;
    } rows[] = {
        { 401, false, false, FAILURE_REASON_AUTH },
        { 403, true,  false, FAILURE_REASON_AUTH },
        { 403, false, false, FAILURE_REASON_FORBIDDEN },
        { 403, false, true,  FAILURE_REASON_CHALLENGE },
        { 503, false, true,  FAILURE_REASON_CHALLENGE },
        { 429, false, false, FAILURE_REASON_RATE_LIMITED },
        { 503, false, false, FAILURE_REASON_UNAVAILABLE },
        { 502, false, false, FAILURE_REASON_BAD_GATEWAY },
        { 504, false, false, FAILURE_REASON_GATEWAY_TIMEOUT },
        { 307, false, false, FAILURE_REASON_REDIRECT },
        { 404, false, false, FAILURE_REASON_NOT_FOUND },
        { 405, false, false, FAILURE_REASON_METHOD_NOT_ALLOWED },
        { 500, false, false, FAILURE_REASON_SERVER_ERROR },
        { 418, false, false, FAILURE_REASON_CLIENT_ERROR },
        { 200, false, false, FAILURE_REASON_NONE },
    };
    struct failure_evidence evd;
    struct failure          f;

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        memset(&evd, 0, sizeof(evd));
        evd.http_status = rows[i].status;
        evd.www_authenticate = rows[i].www;
        evd.cf_challenge = rows[i].cf;
        evd.phase = FAILURE_PHASE_RESPONSE;
        evd.response_bytes = 100;
        assert_int_equal(failure_reason_of(&evd), rows[i].want);
        failure_make(&f, &evd, FAILURE_SITE_REQUEST, NULL);
        if (rows[i].status >= 300)
            assert_int_equal(f.reason, rows[i].want);
    }
    assert_string_equal(failure_reason_name(FAILURE_REASON_RATE_LIMITED),
        "rate_limited");
    assert_string_equal(failure_reason_name(FAILURE_REASON_NONE), "");
    /* Only http_status carries one. */
    memset(&evd, 0, sizeof(evd));
    evd.http_status = 400;
    evd.rpc_error = true;
    failure_make(&f, &evd, FAILURE_SITE_REQUEST, NULL);
    assert_int_equal(f.kind, FAILURE_PROTOCOL);
    assert_int_equal(f.reason, FAILURE_REASON_NONE);
}

/* Rule 9: the answer is not MCP. */
static void
test_rule_not_mcp(void **state)
{
    struct failure_evidence evd;

    (void)state;
    memset(&evd, 0, sizeof(evd));
    evd.too_large = true;
    expect_rule(&evd, R_NOT_MCP, "too large (stdio)");

    memset(&evd, 0, sizeof(evd));
    evd.http_status = 200;
    evd.content_json = true;
    evd.too_large = true;
    expect_rule(&evd, R_NOT_MCP, "too large (http)");

    memset(&evd, 0, sizeof(evd));
    evd.http_status = 200;
    evd.content_sse = true;
    evd.sse_no_lines = true;
    expect_rule(&evd, R_NOT_MCP, "SSE with no SSE line");

    memset(&evd, 0, sizeof(evd));
    evd.http_status = 200;
    evd.content_json = true;
    evd.body_unparsable = true;
    expect_rule(&evd, R_NOT_MCP, "unparsable JSON");

    memset(&evd, 0, sizeof(evd));
    evd.http_status = 200;
    evd.content_json = true;
    evd.no_matching_response = true;
    expect_rule(&evd, R_NOT_MCP, "no response with our id");

    /* An answer in a content encoding libcurl could not decode (issue 26,
     * item 7): the server answered, unreadably; not a transport error. */
    memset(&evd, 0, sizeof(evd));
    evd.http_status = 200;
    evd.content_json = true;
    evd.bad_encoding = true;
    evd.phase = FAILURE_PHASE_RESPONSE;
    expect_rule(&evd, R_NOT_MCP, "an encoding that could not be decoded");

    memset(&evd, 0, sizeof(evd));
    evd.http_status = 200;
    evd.phase = FAILURE_PHASE_RESPONSE;
    evd.response_bytes = 300;
    expect_rule(&evd, R_NOT_MCP, "2xx text/html");

    memset(&evd, 0, sizeof(evd));
    evd.http_status = 204;
    expect_rule(&evd, R_NOT_MCP, "204 with no content type");

    memset(&evd, 0, sizeof(evd));
    evd.http_status = 299;
    expect_rule(&evd, R_NOT_MCP, "299 with no content type");
}

/* Rule 10: a transport result no earlier rule names. */
static void
test_rule_other_net(void **state)
{
    struct failure_evidence evd;

    (void)state;
    memset(&evd, 0, sizeof(evd));
    evd.net = NET_OTHER;
    expect_rule(&evd, R_OTHER_NET, "NET_OTHER");

    memset(&evd, 0, sizeof(evd));
    evd.net = NET_ABORTED;
    evd.phase = FAILURE_PHASE_SENT;
    expect_rule(&evd, R_OTHER_NET, "NET_ABORTED");
}

/* Rule 11: the last rule matches everything. */
static void
test_rule_any(void **state)
{
    struct failure_evidence evd;

    (void)state;
    memset(&evd, 0, sizeof(evd));
    expect_rule(&evd, R_ANY, "empty evidence");

    /* A 2xx JSON answer with nothing wrong in the evidence. */
    memset(&evd, 0, sizeof(evd));
    evd.http_status = 200;
    evd.content_json = true;
    evd.phase = FAILURE_PHASE_RESPONSE;
    evd.response_bytes = 100;
    expect_rule(&evd, R_ANY, "2xx json, nothing else");

    memset(&evd, 0, sizeof(evd));
    evd.http_status = 200;
    evd.content_sse = true;
    expect_rule(&evd, R_ANY, "2xx sse, nothing else");
}

/* config_invalid wins over every other piece of evidence. */
static void
test_order_config_first(void **state)
{
    struct failure_evidence evd;

    (void)state;
    memset(&evd, 0, sizeof(evd));
    evd.config_invalid = true;
    evd.spawn_error = true;
    evd.net = NET_CONNECT;
    evd.phase = FAILURE_PHASE_CONNECT;
    evd.timer = FAILURE_TIMER_REQUEST;
    evd.http_status = 500;
    evd.rpc_error = true;
    evd.child_closed = true;
    evd.stream_ended = true;
    evd.too_large = true;
    evd.bad_protocol_version = true;
    expect_rule(&evd, R_CONFIG, "config_invalid with everything");

    /* A malformed URL beats the connect error a library may add. */
    memset(&evd, 0, sizeof(evd));
    evd.net = NET_URL_MALFORMAT;
    evd.timer = FAILURE_TIMER_OPEN;
    evd.phase = FAILURE_PHASE_RESOLVE;
    expect_rule(&evd, R_CONFIG, "malformed url with a timer");

    /* A spawn error beats the child's closed pipes. */
    memset(&evd, 0, sizeof(evd));
    evd.spawn_error = true;
    evd.child_closed = true;
    evd.os_errno = ENOENT;
    expect_rule(&evd, R_SPAWN, "spawn error and closed child");
}

/* A JSON-RPC error behind a non-2xx status: our id makes it protocol, a
 * null or missing id leaves it http_status. The status is kept both ways. */
static void
test_order_rpc_error_behind_status(void **state)
{
    struct failure_evidence evd;
    struct failure          f;

    (void)state;
    memset(&evd, 0, sizeof(evd));
    evd.http_status = 500;
    evd.content_json = true;
    evd.phase = FAILURE_PHASE_RESPONSE;
    evd.response_bytes = 90;
    evd.rpc_error = true;
    evd.rpc_error_code = -32603;
    expect_rule(&evd, R_RPC_ERROR, "our id behind 500");
    failure_make(&f, &evd, FAILURE_SITE_REQUEST, "rpc error");
    assert_int_equal(f.kind, FAILURE_PROTOCOL);
    assert_int_equal(f.http_status, 500);
    assert_int_equal(f.delivered, DELIVERED_YES);
    /* The error object's code rides with protocol (error.type). */
    assert_true(f.has_rpc_code);
    assert_int_equal(f.rpc_code, -32603);

    evd.rpc_error_id_null = true;
    expect_rule(&evd, R_STATUS, "null id behind 500");
    failure_make(&f, &evd, FAILURE_SITE_REQUEST, "rpc error, null id");
    assert_int_equal(f.kind, FAILURE_HTTP_STATUS);
    assert_int_equal(f.http_status, 500);
    assert_int_equal(f.delivered, DELIVERED_UNKNOWN);
    /* ... and with nothing else: a gateway may have written that one. */
    assert_false(f.has_rpc_code);
    assert_int_equal(f.rpc_code, 0);

    /* Same with a gateway status. */
    evd.http_status = 502;
    expect_kind(&evd, FAILURE_HTTP_STATUS, "null id behind 502");
    evd.rpc_error_id_null = false;
    expect_kind(&evd, FAILURE_PROTOCOL, "our id behind 502");

    /* A deep check's tool that answered isError, or without the text
     * expected: protocol, delivered yes, a reason instead of a code. */
    memset(&evd, 0, sizeof(evd));
    evd.http_status = 200;
    evd.phase = FAILURE_PHASE_RESPONSE;
    evd.response_bytes = 80;
    evd.rpc_error = true;
    evd.tool_error = true;
    failure_make(&f, &evd, FAILURE_SITE_REQUEST, "tool answered isError");
    assert_int_equal(f.kind, FAILURE_PROTOCOL);
    assert_int_equal(f.delivered, DELIVERED_YES);
    assert_int_equal(f.reason, FAILURE_REASON_TOOL_ERROR);
    assert_string_equal(failure_reason_name(f.reason), "tool_error");
    assert_false(f.has_rpc_code);
    evd.tool_error = false;
    evd.unexpected_result = true;
    failure_make(&f, &evd, FAILURE_SITE_REQUEST, "expected text not found");
    assert_int_equal(f.reason, FAILURE_REASON_UNEXPECTED_RESULT);
    assert_false(f.has_rpc_code);

    /* A non-2xx status beats a body that is not MCP. */
    memset(&evd, 0, sizeof(evd));
    evd.http_status = 502;
    evd.body_unparsable = true;
    expect_kind(&evd, FAILURE_HTTP_STATUS, "502 unparsable body");
    memset(&evd, 0, sizeof(evd));
    evd.http_status = 502;
    evd.bad_encoding = true;
    expect_kind(&evd, FAILURE_HTTP_STATUS, "502 in an undecodable encoding");
    memset(&evd, 0, sizeof(evd));
    evd.http_status = 503;
    evd.response_bytes = 500;
    evd.phase = FAILURE_PHASE_RESPONSE;
    expect_kind(&evd, FAILURE_HTTP_STATUS, "503 text/html");
}

/* A timer before the connection is made is a refused connect; after the
 * request was sent it is a timeout. */
static void
test_order_timer_phase(void **state)
{
    struct failure_evidence evd;

    (void)state;
    memset(&evd, 0, sizeof(evd));
    evd.timer = FAILURE_TIMER_REQUEST;
    evd.phase = FAILURE_PHASE_CONNECT;
    expect_kind(&evd, FAILURE_CONNECT_REFUSED, "timer in connect");
    evd.phase = FAILURE_PHASE_RESOLVE;
    expect_kind(&evd, FAILURE_CONNECT_REFUSED, "timer in resolve");
    evd.phase = FAILURE_PHASE_SENT;
    expect_kind(&evd, FAILURE_TIMEOUT, "timer after send");
    evd.phase = FAILURE_PHASE_RESPONSE;
    evd.response_bytes = 1;
    expect_kind(&evd, FAILURE_TIMEOUT, "timer after a response byte");

    /* NET_RESOLVE/NET_CONNECT are refused whatever timer is set. */
    memset(&evd, 0, sizeof(evd));
    evd.net = NET_CONNECT;
    evd.timer = FAILURE_TIMER_REQUEST;
    evd.phase = FAILURE_PHASE_SENT;
    expect_kind(&evd, FAILURE_CONNECT_REFUSED, "connect error and timer");

    /* A timer beats the transport error its abort may leave. */
    memset(&evd, 0, sizeof(evd));
    evd.net = NET_RECV;
    evd.timer = FAILURE_TIMER_IDLE;
    evd.phase = FAILURE_PHASE_RESPONSE;
    expect_kind(&evd, FAILURE_TIMEOUT, "idle timer and recv error");
}

/* SSE: no line at all is not MCP; a good stream that ended early is a
 * closed connection. */
static void
test_order_sse(void **state)
{
    struct failure_evidence evd;

    (void)state;
    memset(&evd, 0, sizeof(evd));
    evd.http_status = 200;
    evd.content_sse = true;
    evd.phase = FAILURE_PHASE_RESPONSE;
    evd.response_bytes = 60;
    evd.sse_no_lines = true;
    expect_kind(&evd, FAILURE_NOT_MCP_RESPONSE, "raw JSON in an SSE body");

    evd.sse_no_lines = false;
    evd.stream_ended = true;
    expect_kind(&evd, FAILURE_CONNECTION_CLOSED, "stream ended early");
}

/* The remaining readings the brief names, each against its neighbours. */
static void
test_order_misc(void **state)
{
    struct failure_evidence evd;

    (void)state;
    /* 2xx text/html */
    memset(&evd, 0, sizeof(evd));
    evd.http_status = 200;
    evd.phase = FAILURE_PHASE_RESPONSE;
    evd.response_bytes = 512;
    expect_kind(&evd, FAILURE_NOT_MCP_RESPONSE, "200 text/html");

    /* too_large, even with an MCP content type */
    memset(&evd, 0, sizeof(evd));
    evd.http_status = 200;
    evd.content_sse = true;
    evd.too_large = true;
    expect_kind(&evd, FAILURE_NOT_MCP_RESPONSE, "too large SSE");

    /* bad_protocol_version is protocol, even with a 2xx json body */
    memset(&evd, 0, sizeof(evd));
    evd.http_status = 200;
    evd.content_json = true;
    evd.bad_protocol_version = true;
    expect_kind(&evd, FAILURE_PROTOCOL, "bad protocol version");

    /* NET_OTHER and empty evidence are unknown */
    memset(&evd, 0, sizeof(evd));
    evd.net = NET_OTHER;
    expect_kind(&evd, FAILURE_UNKNOWN, "NET_OTHER");
    memset(&evd, 0, sizeof(evd));
    expect_kind(&evd, FAILURE_UNKNOWN, "empty");
    assert_int_equal(failure_rule_match(&evd), failure_rule_count() - 1);

    /* A stdio child that closed beats a transport error reading. */
    memset(&evd, 0, sizeof(evd));
    evd.child_closed = true;
    evd.net = NET_RECV;
    expect_kind(&evd, FAILURE_CONNECTION_CLOSED, "child closed and recv");

    /* A transport error beats a status seen before it. */
    memset(&evd, 0, sizeof(evd));
    evd.net = NET_PARTIAL;
    evd.http_status = 200;
    evd.content_json = true;
    evd.phase = FAILURE_PHASE_RESPONSE;
    expect_kind(&evd, FAILURE_CONNECTION_FAILED, "partial 200");
}

/* The delivery table for every kind at site request, exactly as
 * DESIGN.md section 3. */
static void
test_delivery_table(void **state)
{
    struct failure_evidence evd;
    int                     k;

    (void)state;
    memset(&evd, 0, sizeof(evd));
    for (k = 0; k < FAILURE__COUNT; k++) {
        bool by_evidence = true;

        if (failure_delivered_by_kind(k) != expected_delivery[k])
            print_error("kind %s: table says %s, DESIGN.md says %s\n",
                failure_kind_name(k),
                delivered_name(failure_delivered_by_kind(k)),
                delivered_name(expected_delivery[k]));
        assert_int_equal(failure_delivered_by_kind(k), expected_delivery[k]);
        assert_int_equal(failure_delivered(k, FAILURE_SITE_REQUEST, &evd,
            &by_evidence), expected_delivery[k]);
        assert_false(by_evidence);
        assert_int_equal(failure_delivered(k, FAILURE_SITE_REQUEST, NULL, NULL),
            expected_delivery[k]);
    }
    /* Out of range: unknown, never a guess. */
    assert_int_equal(failure_delivered_by_kind(FAILURE__COUNT),
        DELIVERED_UNKNOWN);
    assert_int_equal(failure_delivered_by_kind((enum failure_kind)-1),
        DELIVERED_UNKNOWN);
}

/* At the dial, everything is no except protocol (yes) and http_status
 * (unknown). */
static void
test_delivery_site_connect(void **state)
{
    struct failure_evidence evd;
    int                     k;

    (void)state;
    memset(&evd, 0, sizeof(evd));
    for (k = 0; k < FAILURE__COUNT; k++) {
        enum delivered want = DELIVERED_NO;
        bool           by_evidence = true;

        if (k == FAILURE_PROTOCOL)
            want = DELIVERED_YES;
        else if (k == FAILURE_HTTP_STATUS)
            want = DELIVERED_UNKNOWN;
        if (failure_delivered(k, FAILURE_SITE_CONNECT, &evd, &by_evidence) != want)
            print_error("kind %s at connect: expected %s\n",
                failure_kind_name(k), delivered_name(want));
        assert_int_equal(failure_delivered(k, FAILURE_SITE_CONNECT, &evd,
            &by_evidence), want);
        assert_false(by_evidence);
        assert_int_equal(failure_delivered(k, FAILURE_SITE_CONNECT, NULL, NULL),
            want);
    }
}

/* connection_closed on a server already known dead, nothing sent: no. */
static void
test_delivery_peer_known_dead(void **state)
{
    struct failure_evidence evd;
    bool                    by_evidence = true;
    struct failure          f;

    (void)state;
    memset(&evd, 0, sizeof(evd));
    evd.peer_known_dead = true;
    assert_int_equal(failure_delivered(FAILURE_CONNECTION_CLOSED,
        FAILURE_SITE_REQUEST, &evd, &by_evidence), DELIVERED_NO);
    assert_false(by_evidence);

    failure_make(&f, &evd, FAILURE_SITE_REQUEST, "child already dead");
    assert_int_equal(f.kind, FAILURE_CONNECTION_CLOSED);
    assert_int_equal(f.delivered, DELIVERED_NO);
    assert_false(f.evidence_no);
    assert_string_equal(f.detail, "child already dead");

    /* Without it, a closed child leaves delivery unknown. */
    memset(&evd, 0, sizeof(evd));
    evd.child_closed = true;
    failure_make(&f, &evd, FAILURE_SITE_REQUEST, "child exited");
    assert_int_equal(f.kind, FAILURE_CONNECTION_CLOSED);
    assert_int_equal(f.delivered, DELIVERED_UNKNOWN);
    assert_false(f.evidence_no);
}

/* Evidence that the body did not completely leave and nothing came back. */
static void
not_sent(struct failure_evidence *evd)
{
    memset(evd, 0, sizeof(*evd));
    evd->phase = FAILURE_PHASE_SENT;
    evd->body_bytes_expected = 1000;
    evd->body_bytes_sent = 300;
    evd->response_bytes = 0;
}

/* unknown becomes no by evidence, and only then. */
static void
test_delivery_evidence_rule(void **state)
{
    struct failure_evidence evd;
    bool                    by_evidence;
    int                     k;

    (void)state;
    /* Every kind the table leaves unknown becomes no; the others keep
     * their word and the flag stays clear. */
    not_sent(&evd);
    for (k = 0; k < FAILURE__COUNT; k++) {
        enum delivered d;

        by_evidence = false;
        d = failure_delivered(k, FAILURE_SITE_REQUEST, &evd, &by_evidence);
        if (expected_delivery[k] == DELIVERED_UNKNOWN) {
            assert_int_equal(d, DELIVERED_NO);
            assert_true(by_evidence);
        } else {
            assert_int_equal(d, expected_delivery[k]);
            assert_false(by_evidence);
        }
    }
    /* by_evidence may be NULL. */
    assert_int_equal(failure_delivered(FAILURE_TIMEOUT, FAILURE_SITE_REQUEST, &evd,
        NULL), DELIVERED_NO);

    /* Never turns yes into no. */
    by_evidence = true;
    assert_int_equal(failure_delivered(FAILURE_PROTOCOL, FAILURE_SITE_REQUEST, &evd,
        &by_evidence), DELIVERED_YES);
    assert_false(by_evidence);
    assert_int_equal(failure_delivered(FAILURE_PROTOCOL, FAILURE_SITE_CONNECT, &evd,
        &by_evidence), DELIVERED_YES);
    assert_false(by_evidence);

    /* At connect http_status is unknown, so the evidence decides. */
    by_evidence = false;
    assert_int_equal(failure_delivered(FAILURE_HTTP_STATUS, FAILURE_SITE_CONNECT,
        &evd, &by_evidence), DELIVERED_NO);
    assert_true(by_evidence);

    /* A kind already no at connect is not credited to the evidence. */
    by_evidence = true;
    assert_int_equal(failure_delivered(FAILURE_TIMEOUT, FAILURE_SITE_CONNECT, &evd,
        &by_evidence), DELIVERED_NO);
    assert_false(by_evidence);

    /* Not when libcurl may have re-sent the request. */
    not_sent(&evd);
    evd.resent = true;
    by_evidence = true;
    assert_int_equal(failure_delivered(FAILURE_CONNECTION_FAILED,
        FAILURE_SITE_REQUEST, &evd, &by_evidence), DELIVERED_UNKNOWN);
    assert_false(by_evidence);

    /* Not when a response byte came back. */
    not_sent(&evd);
    evd.response_bytes = 1;
    by_evidence = true;
    assert_int_equal(failure_delivered(FAILURE_CONNECTION_FAILED,
        FAILURE_SITE_REQUEST, &evd, &by_evidence), DELIVERED_UNKNOWN);
    assert_false(by_evidence);

    /* Not when the whole body left. */
    not_sent(&evd);
    evd.body_bytes_sent = evd.body_bytes_expected;
    by_evidence = true;
    assert_int_equal(failure_delivered(FAILURE_TIMEOUT, FAILURE_SITE_REQUEST, &evd,
        &by_evidence), DELIVERED_UNKNOWN);
    assert_false(by_evidence);

    /* Not when nothing was expected (no body length known). */
    memset(&evd, 0, sizeof(evd));
    by_evidence = true;
    assert_int_equal(failure_delivered(FAILURE_CONNECTION_FAILED,
        FAILURE_SITE_REQUEST, &evd, &by_evidence), DELIVERED_UNKNOWN);
    assert_false(by_evidence);

    /* One byte short is enough. */
    not_sent(&evd);
    evd.body_bytes_sent = evd.body_bytes_expected - 1;
    by_evidence = false;
    assert_int_equal(failure_delivered(FAILURE_CONNECTION_FAILED,
        FAILURE_SITE_REQUEST, &evd, &by_evidence), DELIVERED_NO);
    assert_true(by_evidence);

    /* Nothing sent at all is also not sent. */
    not_sent(&evd);
    evd.body_bytes_sent = 0;
    by_evidence = false;
    assert_int_equal(failure_delivered(FAILURE_UNKNOWN, FAILURE_SITE_REQUEST, &evd,
        &by_evidence), DELIVERED_NO);
    assert_true(by_evidence);
}

/* failure_make: kind, site, verdict and a copied, truncated detail. */
static void
test_make_basic(void **state)
{
    struct failure_evidence evd;
    struct failure          f;
    char                    longtext[600];

    (void)state;
    memset(&evd, 0, sizeof(evd));
    evd.net = NET_CONNECT;
    evd.phase = FAILURE_PHASE_CONNECT;
    evd.os_errno = ECONNREFUSED;
    memset(&f, 0xa5, sizeof(f));
    failure_make(&f, &evd, FAILURE_SITE_REQUEST, "connection refused by 127.0.0.1");
    assert_int_equal(f.kind, FAILURE_CONNECT_REFUSED);
    assert_int_equal(f.site, FAILURE_SITE_REQUEST);
    assert_int_equal(f.delivered, DELIVERED_NO);
    assert_int_equal(f.http_status, 0);
    assert_false(f.evidence_no);
    assert_string_equal(f.detail, "connection refused by 127.0.0.1");

    /* A NULL detail leaves an empty string. */
    memset(&f, 0xa5, sizeof(f));
    failure_make(&f, &evd, FAILURE_SITE_CONNECT, NULL);
    assert_int_equal(f.site, FAILURE_SITE_CONNECT);
    assert_string_equal(f.detail, "");

    /* The detail is copied: changing the source does not change it. */
    {
        char src[] = "original text";

        failure_make(&f, &evd, FAILURE_SITE_REQUEST, src);
        src[0] = 'X';
        assert_string_equal(f.detail, "original text");
    }

    /* A long detail is truncated to the buffer, NUL-terminated. */
    memset(longtext, 'd', sizeof(longtext) - 1);
    longtext[sizeof(longtext) - 1] = '\0';
    memset(&f, 0xa5, sizeof(f));
    failure_make(&f, &evd, FAILURE_SITE_REQUEST, longtext);
    assert_int_equal(strlen(f.detail), sizeof(f.detail) - 1);
    assert_memory_equal(f.detail, longtext, sizeof(f.detail) - 1);
}

/* http_status is kept for http_status and protocol, and only for them. */
static void
test_make_http_status(void **state)
{
    struct failure_evidence evd;
    struct failure          f;

    (void)state;
    memset(&evd, 0, sizeof(evd));
    evd.http_status = 502;
    evd.phase = FAILURE_PHASE_RESPONSE;
    evd.response_bytes = 150;
    failure_make(&f, &evd, FAILURE_SITE_REQUEST, "bad gateway");
    assert_int_equal(f.kind, FAILURE_HTTP_STATUS);
    assert_int_equal(f.http_status, 502);
    assert_int_equal(f.delivered, DELIVERED_UNKNOWN);

    failure_make(&f, &evd, FAILURE_SITE_CONNECT, "bad gateway");
    assert_int_equal(f.kind, FAILURE_HTTP_STATUS);
    assert_int_equal(f.http_status, 502);
    assert_int_equal(f.delivered, DELIVERED_UNKNOWN);

    /* protocol on a 200 carries no status: it rides only behind a
     * non-2xx answer. */
    memset(&evd, 0, sizeof(evd));
    evd.http_status = 200;
    evd.content_json = true;
    evd.rpc_error = true;
    failure_make(&f, &evd, FAILURE_SITE_CONNECT, "rpc error");
    assert_int_equal(f.kind, FAILURE_PROTOCOL);
    assert_int_equal(f.http_status, 0);
    assert_int_equal(f.delivered, DELIVERED_YES);

    /* behind a 400 it keeps the 400. */
    evd.http_status = 400;
    failure_make(&f, &evd, FAILURE_SITE_REQUEST, "rpc error");
    assert_int_equal(f.kind, FAILURE_PROTOCOL);
    assert_int_equal(f.http_status, 400);

    /* not_mcp_response on a 200 does not keep it. */
    memset(&evd, 0, sizeof(evd));
    evd.http_status = 200;
    evd.response_bytes = 10;
    failure_make(&f, &evd, FAILURE_SITE_REQUEST, "text/html");
    assert_int_equal(f.kind, FAILURE_NOT_MCP_RESPONSE);
    assert_int_equal(f.http_status, 0);

    /* Nor does a transport error cut after the status line. */
    memset(&evd, 0, sizeof(evd));
    evd.net = NET_PARTIAL;
    evd.http_status = 200;
    evd.content_json = true;
    evd.response_bytes = 10;
    failure_make(&f, &evd, FAILURE_SITE_REQUEST, "partial");
    assert_int_equal(f.kind, FAILURE_CONNECTION_FAILED);
    assert_int_equal(f.http_status, 0);

    /* Nor a closed stream. */
    memset(&evd, 0, sizeof(evd));
    evd.http_status = 200;
    evd.content_sse = true;
    evd.stream_ended = true;
    failure_make(&f, &evd, FAILURE_SITE_REQUEST, "ended");
    assert_int_equal(f.kind, FAILURE_CONNECTION_CLOSED);
    assert_int_equal(f.http_status, 0);
}

/* The evidence flag and the detail that says why. */
static void
test_make_evidence_no(void **state)
{
    struct failure_evidence evd;
    struct failure          f;

    (void)state;
    not_sent(&evd);
    evd.net = NET_SEND;
    failure_make(&f, &evd, FAILURE_SITE_REQUEST, "send failed");
    assert_int_equal(f.kind, FAILURE_CONNECTION_FAILED);
    assert_int_equal(f.delivered, DELIVERED_NO);
    assert_true(f.evidence_no);
    /* The caller's detail first, then why. */
    assert_memory_equal(f.detail, "send failed", strlen("send failed"));
    assert_non_null(strstr(f.detail, "not sent"));
    assert_non_null(strstr(f.detail, "300"));
    assert_non_null(strstr(f.detail, "1000"));

    /* With no detail of the caller's, the why is still there. */
    failure_make(&f, &evd, FAILURE_SITE_REQUEST, NULL);
    assert_true(f.evidence_no);
    assert_non_null(strstr(f.detail, "not sent"));

    /* Same transport error with the body gone: unknown, no flag, the
     * detail exactly the caller's. */
    evd.body_bytes_sent = evd.body_bytes_expected;
    failure_make(&f, &evd, FAILURE_SITE_REQUEST, "send failed");
    assert_int_equal(f.delivered, DELIVERED_UNKNOWN);
    assert_false(f.evidence_no);
    assert_string_equal(f.detail, "send failed");

    /* Re-sent: no flag. */
    not_sent(&evd);
    evd.net = NET_SEND;
    evd.resent = true;
    failure_make(&f, &evd, FAILURE_SITE_REQUEST, "send failed");
    assert_int_equal(f.delivered, DELIVERED_UNKNOWN);
    assert_false(f.evidence_no);
    assert_string_equal(f.detail, "send failed");

    /* At connect the verdict is no by the site rule, not by evidence. */
    not_sent(&evd);
    evd.net = NET_SEND;
    failure_make(&f, &evd, FAILURE_SITE_CONNECT, "send failed");
    assert_int_equal(f.delivered, DELIVERED_NO);
    assert_false(f.evidence_no);
    assert_string_equal(f.detail, "send failed");

    /* A long caller detail still leaves a terminated buffer. */
    {
        char longtext[400];

        memset(longtext, 'x', sizeof(longtext) - 1);
        longtext[sizeof(longtext) - 1] = '\0';
        not_sent(&evd);
        evd.net = NET_SEND;
        failure_make(&f, &evd, FAILURE_SITE_REQUEST, longtext);
        assert_true(f.evidence_no);
        assert_int_equal(strlen(f.detail), sizeof(f.detail) - 1);
    }
}

/* Kind names round trip; unknown names are -1. */
static void
test_kind_names(void **state)
{
    int k;

    (void)state;
    for (k = 0; k < FAILURE__COUNT; k++) {
        assert_string_equal(failure_kind_name(k), expected_names[k]);
        assert_int_equal(failure_kind_from_name(expected_names[k]), k);
        assert_int_equal(failure_kind_from_name(failure_kind_name(k)), k);
    }
    assert_string_equal(failure_kind_name(FAILURE__COUNT), "?");
    assert_string_equal(failure_kind_name((enum failure_kind)-1), "?");
    assert_int_equal(failure_kind_from_name("bogus"), -1);
    assert_int_equal(failure_kind_from_name(""), -1);
    assert_int_equal(failure_kind_from_name("Timeout"), -1);
    assert_int_equal(failure_kind_from_name("timeout "), -1);
    assert_int_equal(failure_kind_from_name("?"), -1);

    assert_string_equal(delivered_name(DELIVERED_NO), "no");
    assert_string_equal(delivered_name(DELIVERED_UNKNOWN), "unknown");
    assert_string_equal(delivered_name(DELIVERED_YES), "yes");
    assert_string_equal(failure_site_name(FAILURE_SITE_CONNECT), "connect");
    assert_string_equal(failure_site_name(FAILURE_SITE_REQUEST), "request");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rule_table_shape),
        cmocka_unit_test(test_rule_config),
        cmocka_unit_test(test_rule_spawn),
        cmocka_unit_test(test_rule_refused),
        cmocka_unit_test(test_rule_timeout),
        cmocka_unit_test(test_rule_rpc_error),
        cmocka_unit_test(test_rule_closed),
        cmocka_unit_test(test_rule_transport),
        cmocka_unit_test(test_rule_status),
        cmocka_unit_test(test_rule_version),
        cmocka_unit_test(test_rule_foreign),
        cmocka_unit_test(test_local_limit),
        cmocka_unit_test(test_reasons),
        cmocka_unit_test(test_rule_not_mcp),
        cmocka_unit_test(test_rule_other_net),
        cmocka_unit_test(test_rule_any),
        cmocka_unit_test(test_order_config_first),
        cmocka_unit_test(test_order_rpc_error_behind_status),
        cmocka_unit_test(test_order_timer_phase),
        cmocka_unit_test(test_order_sse),
        cmocka_unit_test(test_order_misc),
        cmocka_unit_test(test_delivery_table),
        cmocka_unit_test(test_delivery_site_connect),
        cmocka_unit_test(test_delivery_peer_known_dead),
        cmocka_unit_test(test_delivery_evidence_rule),
        cmocka_unit_test(test_make_basic),
        cmocka_unit_test(test_make_http_status),
        cmocka_unit_test(test_make_evidence_no),
        cmocka_unit_test(test_kind_names),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
