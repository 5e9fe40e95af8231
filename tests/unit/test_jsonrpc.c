/*
 * Tests for the JSON-RPC module: every builder's text parses back with the
 * right fields, escaping of untrusted strings, the kinds a parse yields and
 * the messages it refuses, id matching (integers only), the path accessors
 * with their type checks, and the error code range.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/jsonrpc.h"

/* Parse text that must be a message; fails the test otherwise. */
static struct jsonrpc_msg *
parse_ok(const char *text)
{
    char               *cause = NULL;
    struct jsonrpc_msg *m = jsonrpc_parse(text, strlen(text), &cause);

    if (m == NULL) {
        print_error("%s: %s\n", text, cause != NULL ? cause : "(no cause)");
        free(cause);
        fail();
    }
    assert_null(cause);
    return m;
}

/* Parse text that must be refused, with a cause containing `needle`. */
static void
parse_fail(const char *text, const char *needle)
{
    char               *cause = NULL;
    struct jsonrpc_msg *m = jsonrpc_parse(text, strlen(text), &cause);

    if (m != NULL) {
        print_error("%s: parsed, expected a refusal\n", text);
        jsonrpc_free(m);
        fail();
    }
    assert_non_null(cause);
    if (strstr(cause, needle) == NULL)
        print_error("%s: cause \"%s\" lacks \"%s\"\n", text, cause, needle);
    assert_non_null(strstr(cause, needle));
    free(cause);
    /* cause may be NULL. */
    assert_null(jsonrpc_parse(text, strlen(text), NULL));
}

/* Parse what a builder made, checking its length and compactness. */
static struct jsonrpc_msg *
parse_built(char *text, size_t len)
{
    struct jsonrpc_msg *m;

    assert_non_null(text);
    assert_int_equal(len, strlen(text));
    assert_null(strchr(text, '\n'));
    m = parse_ok(text);
    assert_string_equal(jsonrpc_get_string(m, "jsonrpc"), "2.0");
    return m;
}

/* --- builders ------------------------------------------------------------ */

static void
test_build_initialize(void **state)
{
    size_t              len = 0;
    char               *text;
    struct jsonrpc_msg *m;

    (void)state;
    text = jsonrpc_build_initialize(1, "2025-11-25", "mcptop", "0.1.0",
        &len);
    m = parse_built(text, len);
    assert_int_equal(jsonrpc_kind(m), JSONRPC_REQUEST);
    assert_string_equal(jsonrpc_method(m), "initialize");
    assert_true(jsonrpc_id_is(m, 1));
    assert_false(jsonrpc_id_is(m, 2));
    assert_false(jsonrpc_id_is_null(m));
    assert_string_equal(jsonrpc_get_string(m, "params.protocolVersion"),
        "2025-11-25");
    assert_string_equal(jsonrpc_get_string(m, "params.clientInfo.name"),
        "mcptop");
    assert_string_equal(jsonrpc_get_string(m, "params.clientInfo.version"),
        "0.1.0");
    /* capabilities is an (empty) object, not absent, not another type. */
    assert_true(jsonrpc_has(m, "params.capabilities"));
    assert_null(jsonrpc_get_string(m, "params.capabilities"));
    assert_int_equal(jsonrpc_array_len(m, "params.capabilities"), -1);
    assert_non_null(strstr(text, "\"capabilities\":{}"));
    jsonrpc_free(m);
    free(text);

    /* A large id survives the trip; len_out may be NULL. */
    text = jsonrpc_build_initialize(INT64_C(3000000000), "2025-06-18", "a",
        "b", NULL);
    m = parse_ok(text);
    assert_true(jsonrpc_id_is(m, INT64_C(3000000000)));
    assert_false(jsonrpc_id_is(m, 0));
    jsonrpc_free(m);
    free(text);
}

/* The id as it came, with its JSON type, for a detail (issue 26, item 8),
 * and whether it is an integral number. */
static void
test_id_describe(void **state)
{
    static const struct {
        const char *json;
        const char *said;
    } cases[] = {
        { "{\"jsonrpc\":\"2.0\",\"id\":\"3\",\"result\":{}}",
          "\"3\" (string)" },
        { "{\"jsonrpc\":\"2.0\",\"id\":1003,\"result\":{}}",
          "1003 (number)" },
        { "{\"jsonrpc\":\"2.0\",\"id\":2.5,\"result\":{}}",
          "2.5 (number)" },
        { "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":1}}",
          "null" },
        { "{\"jsonrpc\":\"2.0\",\"id\":\"a\\u001b[2Jb\",\"result\":{}}",
          "\"ab\" (string)" },
    };
    char    said[64], words[160];
    int64_t id = 0;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct jsonrpc_msg *m = parse_ok(cases[i].json);

        jsonrpc_id_describe(m, said, sizeof(said));
        assert_string_equal(said, cases[i].said);
        assert_int_equal(jsonrpc_id_int(m, &id), i == 1);
        jsonrpc_free(m);
    }
    assert_int_equal(id, 1003);
    jsonrpc_stray_words("\"3\" (string)", 3, words, sizeof(words));
    assert_string_equal(words, "answer id \"3\" (string) matches no request; "
        "ours was 3 (number)");
}

static void
test_build_request(void **state)
{
    size_t              len = 0;
    char               *text;
    struct jsonrpc_msg *m;

    (void)state;
    /* Without a cursor: no params at all. */
    text = jsonrpc_build_request(5, "tools/list", NULL, &len);
    m = parse_built(text, len);
    assert_int_equal(jsonrpc_kind(m), JSONRPC_REQUEST);
    assert_string_equal(jsonrpc_method(m), "tools/list");
    assert_true(jsonrpc_id_is(m, 5));
    assert_false(jsonrpc_has(m, "params"));
    assert_false(jsonrpc_has(m, "params.cursor"));
    jsonrpc_free(m);
    free(text);

    /* With one. */
    text = jsonrpc_build_request(6, "tools/list", "page-2", &len);
    m = parse_built(text, len);
    assert_int_equal(jsonrpc_kind(m), JSONRPC_REQUEST);
    assert_true(jsonrpc_id_is(m, 6));
    assert_string_equal(jsonrpc_get_string(m, "params.cursor"), "page-2");
    jsonrpc_free(m);
    free(text);

    /* id 0 is a real id. */
    text = jsonrpc_build_request(0, "ping", NULL, NULL);
    m = parse_ok(text);
    assert_int_equal(jsonrpc_kind(m), JSONRPC_REQUEST);
    assert_true(jsonrpc_id_is(m, 0));
    assert_false(jsonrpc_id_is_null(m));
    assert_string_equal(jsonrpc_method(m), "ping");
    jsonrpc_free(m);
    free(text);
}

/* A cursor is server text: quotes, backslashes and control characters
 * are escaped and survive the round trip. */
static void
test_build_escaping(void **state)
{
    static const char cursor[] = "a\"b\\c/d\n\r\t\x01\x1f end \xc3\xa9";
    size_t            len = 0;
    char             *text;
    const char       *p;
    struct jsonrpc_msg *m;

    (void)state;
    text = jsonrpc_build_request(7, "tools/list", cursor, &len);
    m = parse_built(text, len);
    for (p = text; *p != '\0'; p++)
        assert_true((unsigned char)*p >= 0x20);
    assert_non_null(strstr(text, "a\\\"b\\\\c"));
    assert_non_null(strstr(text, "\\n"));
    assert_non_null(strstr(text, "\\t"));
    assert_non_null(strstr(text, "\\u0001"));
    assert_non_null(strstr(text, "\\u001f"));
    assert_string_equal(jsonrpc_get_string(m, "params.cursor"), cursor);
    jsonrpc_free(m);
    free(text);

    /* Names in initialize are escaped the same way. */
    text = jsonrpc_build_initialize(1, "2025-11-25", "my \"top\"", "1\\2",
        &len);
    m = parse_built(text, len);
    assert_string_equal(jsonrpc_get_string(m, "params.clientInfo.name"),
        "my \"top\"");
    assert_string_equal(jsonrpc_get_string(m, "params.clientInfo.version"),
        "1\\2");
    jsonrpc_free(m);
    free(text);
}

static void
test_build_notification(void **state)
{
    size_t              len = 0;
    char               *text;
    struct jsonrpc_msg *m;

    (void)state;
    text = jsonrpc_build_notification("notifications/initialized", &len);
    m = parse_built(text, len);
    assert_int_equal(jsonrpc_kind(m), JSONRPC_NOTIFICATION);
    assert_string_equal(jsonrpc_method(m), "notifications/initialized");
    assert_false(jsonrpc_has(m, "id"));
    assert_true(jsonrpc_id_is_null(m));
    assert_false(jsonrpc_id_is(m, 0));
    assert_null(strstr(text, "\"id\""));
    jsonrpc_free(m);
    free(text);
}

static void
test_build_cancelled(void **state)
{
    size_t              len = 0;
    char               *text;
    struct jsonrpc_msg *m;

    (void)state;
    text = jsonrpc_build_cancelled(9, "timeout", &len);
    m = parse_built(text, len);
    assert_int_equal(jsonrpc_kind(m), JSONRPC_NOTIFICATION);
    assert_string_equal(jsonrpc_method(m), "notifications/cancelled");
    assert_false(jsonrpc_has(m, "id"));
    assert_true(jsonrpc_has(m, "params.requestId"));
    /* requestId is the number, not a string. */
    assert_null(jsonrpc_get_string(m, "params.requestId"));
    assert_non_null(strstr(text, "\"requestId\":9,"));
    assert_string_equal(jsonrpc_get_string(m, "params.reason"), "timeout");
    jsonrpc_free(m);
    free(text);

    /* Without a reason: no reason member. */
    text = jsonrpc_build_cancelled(12, NULL, &len);
    m = parse_built(text, len);
    assert_int_equal(jsonrpc_kind(m), JSONRPC_NOTIFICATION);
    assert_non_null(strstr(text, "\"requestId\":12"));
    assert_false(jsonrpc_has(m, "params.reason"));
    jsonrpc_free(m);
    free(text);
}

/* --- parsing ------------------------------------------------------------- */

static void
test_parse_result(void **state)
{
    struct jsonrpc_msg *m;

    (void)state;
    m = parse_ok("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"x\":\"y\"}}");
    assert_int_equal(jsonrpc_kind(m), JSONRPC_RESULT);
    assert_true(jsonrpc_id_is(m, 1));
    assert_false(jsonrpc_id_is_null(m));
    assert_null(jsonrpc_method(m));
    assert_string_equal(jsonrpc_get_string(m, "result.x"), "y");
    jsonrpc_free(m);

    /* A result may be any value, even null. */
    m = parse_ok("{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":null}");
    assert_int_equal(jsonrpc_kind(m), JSONRPC_RESULT);
    assert_true(jsonrpc_id_is(m, 2));
    jsonrpc_free(m);

    /* A result without an id is no response. */
    parse_fail("{\"jsonrpc\":\"2.0\",\"result\":{}}", "neither");

    jsonrpc_free(NULL);
}

static void
test_parse_error(void **state)
{
    struct jsonrpc_msg *m;

    (void)state;
    /* With our id. */
    m = parse_ok("{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32601,"
        "\"message\":\"Method not found\"}}");
    assert_int_equal(jsonrpc_kind(m), JSONRPC_ERROR);
    assert_true(jsonrpc_id_is(m, 7));
    assert_false(jsonrpc_id_is_null(m));
    assert_int_equal(jsonrpc_error_code(m), -32601);
    assert_string_equal(jsonrpc_error_message(m), "Method not found");
    assert_null(jsonrpc_method(m));
    jsonrpc_free(m);

    /* With a null id. */
    m = parse_ok("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":"
        "-32700,\"message\":\"Parse error\"}}");
    assert_int_equal(jsonrpc_kind(m), JSONRPC_ERROR);
    assert_true(jsonrpc_id_is_null(m));
    assert_false(jsonrpc_id_is(m, 0));
    assert_int_equal(jsonrpc_error_code(m), -32700);
    assert_string_equal(jsonrpc_error_message(m), "Parse error");
    jsonrpc_free(m);

    /* With no id at all. */
    m = parse_ok("{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32600}}");
    assert_int_equal(jsonrpc_kind(m), JSONRPC_ERROR);
    assert_true(jsonrpc_id_is_null(m));
    assert_false(jsonrpc_id_is(m, 0));
    assert_int_equal(jsonrpc_error_code(m), -32600);
    assert_null(jsonrpc_error_message(m));
    jsonrpc_free(m);

    /* Code and message of the wrong types read as absent. */
    m = parse_ok("{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":\"-1\","
        "\"message\":42}}");
    assert_int_equal(jsonrpc_kind(m), JSONRPC_ERROR);
    assert_int_equal(jsonrpc_error_code(m), 0);
    assert_null(jsonrpc_error_message(m));
    jsonrpc_free(m);

    /* An error member that is not an object makes no error. */
    parse_fail("{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":\"boom\"}",
        "neither");
}

/* An error code outside the 32-bit range reads as 0. */
static void
test_error_code_range(void **state)
{
    struct jsonrpc_msg *m;

    (void)state;
    m = parse_ok("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":"
        "3000000000}}");
    assert_int_equal(jsonrpc_error_code(m), 0);
    jsonrpc_free(m);

    m = parse_ok("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":"
        "-3000000000}}");
    assert_int_equal(jsonrpc_error_code(m), 0);
    jsonrpc_free(m);

    m = parse_ok("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1e300}}");
    assert_int_equal(jsonrpc_error_code(m), 0);
    jsonrpc_free(m);

    /* The bounds themselves are in range. */
    m = parse_ok("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":"
        "2147483647}}");
    assert_int_equal(jsonrpc_error_code(m), 2147483647L);
    jsonrpc_free(m);

    m = parse_ok("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":"
        "-2147483648}}");
    assert_true(jsonrpc_error_code(m) == -2147483647L - 1);
    jsonrpc_free(m);
}

static void
test_parse_request_notification(void **state)
{
    struct jsonrpc_msg *m;

    (void)state;
    m = parse_ok("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}");
    assert_int_equal(jsonrpc_kind(m), JSONRPC_REQUEST);
    assert_string_equal(jsonrpc_method(m), "ping");
    assert_true(jsonrpc_id_is(m, 3));
    jsonrpc_free(m);

    /* A server's request may use a string id. */
    m = parse_ok("{\"jsonrpc\":\"2.0\",\"id\":\"s-1\",\"method\":"
        "\"roots/list\",\"params\":{}}");
    assert_int_equal(jsonrpc_kind(m), JSONRPC_REQUEST);
    assert_string_equal(jsonrpc_method(m), "roots/list");
    assert_false(jsonrpc_id_is_null(m));
    jsonrpc_free(m);

    m = parse_ok("{\"jsonrpc\":\"2.0\",\"method\":"
        "\"notifications/tools/list_changed\"}");
    assert_int_equal(jsonrpc_kind(m), JSONRPC_NOTIFICATION);
    assert_string_equal(jsonrpc_method(m),
        "notifications/tools/list_changed");
    assert_true(jsonrpc_id_is_null(m));
    jsonrpc_free(m);

    /* A method that is not a string makes no request. */
    parse_fail("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":5}", "neither");
}

static void
test_parse_refused(void **state)
{
    char               *cause = NULL;
    struct jsonrpc_msg *m;
    static const char   half[] = "{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}";

    (void)state;
    parse_fail("not json at all", "not JSON");
    parse_fail("{\"jsonrpc\":\"2.0\",", "not JSON");
    parse_fail("", "not JSON");
    parse_fail("[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}]",
        "not an object");
    parse_fail("\"2.0\"", "not an object");
    parse_fail("42", "not an object");
    parse_fail("{\"id\":1,\"result\":{}}", "2.0");
    parse_fail("{\"jsonrpc\":\"1.0\",\"id\":1,\"result\":{}}", "2.0");
    parse_fail("{\"jsonrpc\":2.0,\"id\":1,\"result\":{}}", "2.0");
    parse_fail("{\"jsonrpc\":\"2.00\",\"id\":1,\"result\":{}}", "2.0");
    parse_fail("{\"jsonrpc\":\"2.0\"}", "neither");
    parse_fail("{\"jsonrpc\":\"2.0\",\"id\":1}", "neither");
    parse_fail("{\"jsonrpc\":\"2.0\",\"id\":1,\"params\":{}}", "neither");

    /* The length is honoured: a cut message is not JSON. */
    m = jsonrpc_parse(half, sizeof(half) - 1 - 10, &cause);
    assert_null(m);
    assert_non_null(cause);
    free(cause);
    cause = NULL;
    m = jsonrpc_parse(half, sizeof(half) - 1, &cause);
    assert_non_null(m);
    assert_null(cause);
    jsonrpc_free(m);
}

/* Only an integer id equal to ours matches. */
static void
test_id_is(void **state)
{
    struct jsonrpc_msg *m;

    (void)state;
    m = parse_ok("{\"jsonrpc\":\"2.0\",\"id\":42,\"result\":{}}");
    assert_true(jsonrpc_id_is(m, 42));
    assert_false(jsonrpc_id_is(m, 41));
    assert_false(jsonrpc_id_is(m, 43));
    assert_false(jsonrpc_id_is(m, -42));
    jsonrpc_free(m);

    m = parse_ok("{\"jsonrpc\":\"2.0\",\"id\":-5,\"result\":{}}");
    assert_true(jsonrpc_id_is(m, -5));
    assert_false(jsonrpc_id_is(m, 5));
    jsonrpc_free(m);

    m = parse_ok("{\"jsonrpc\":\"2.0\",\"id\":9007199254740992,"
        "\"result\":{}}");
    assert_true(jsonrpc_id_is(m, INT64_C(9007199254740992)));
    jsonrpc_free(m);

    /* A string id never matches, even with our number in it. */
    m = parse_ok("{\"jsonrpc\":\"2.0\",\"id\":\"42\",\"result\":{}}");
    assert_false(jsonrpc_id_is(m, 42));
    assert_false(jsonrpc_id_is_null(m));
    jsonrpc_free(m);

    /* A fractional id never matches. */
    m = parse_ok("{\"jsonrpc\":\"2.0\",\"id\":42.5,\"result\":{}}");
    assert_false(jsonrpc_id_is(m, 42));
    assert_false(jsonrpc_id_is(m, 43));
    jsonrpc_free(m);
    m = parse_ok("{\"jsonrpc\":\"2.0\",\"id\":0.25,\"result\":{}}");
    assert_false(jsonrpc_id_is(m, 0));
    assert_false(jsonrpc_id_is(m, 1));
    jsonrpc_free(m);

    /* Other id types never match. */
    m = parse_ok("{\"jsonrpc\":\"2.0\",\"id\":true,\"result\":{}}");
    assert_false(jsonrpc_id_is(m, 1));
    jsonrpc_free(m);
    m = parse_ok("{\"jsonrpc\":\"2.0\",\"id\":[1],\"result\":{}}");
    assert_false(jsonrpc_id_is(m, 1));
    jsonrpc_free(m);

}

/* An id beyond the int64 range is no int64 id: it must not match whatever
 * the double-to-int64 conversion happens to produce (that conversion is
 * undefined behaviour, C11 6.3.1.4). Results are taken before the asserts
 * so a failure leaks nothing. */
static void
test_id_is_out_of_range(void **state)
{
    struct jsonrpc_msg *m;
    bool                big_min, big_max, big_zero, neg_min, neg_max;

    (void)state;
    m = parse_ok("{\"jsonrpc\":\"2.0\",\"id\":1e20,\"result\":{}}");
    big_min = jsonrpc_id_is(m, INT64_MIN);
    big_max = jsonrpc_id_is(m, INT64_MAX);
    big_zero = jsonrpc_id_is(m, 0);
    jsonrpc_free(m);
    m = parse_ok("{\"jsonrpc\":\"2.0\",\"id\":-1e20,\"result\":{}}");
    neg_min = jsonrpc_id_is(m, INT64_MIN);
    neg_max = jsonrpc_id_is(m, INT64_MAX);
    jsonrpc_free(m);
    assert_false(big_min);
    assert_false(big_max);
    assert_false(big_zero);
    assert_false(neg_min);
    assert_false(neg_max);
}

/* --- path accessors ------------------------------------------------------ */

static const char accessor_doc[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{"
    "\"protocolVersion\":\"2025-06-18\","
    "\"serverInfo\":{\"name\":\"srv\",\"version\":\"1.2\"},"
    "\"capabilities\":{\"tools\":{\"listChanged\":true},"
    "\"resources\":{},\"prompts\":{\"listChanged\":false}},"
    "\"tools\":[{\"name\":\"a\"},{\"name\":\"b\"},{\"title\":\"no name\"},"
    "\"plain\",5,{\"name\":7}],"
    "\"empty\":[],"
    "\"num\":3,\"flag\":false,\"nothing\":null}}";

static void
test_get_string_bool_has(void **state)
{
    struct jsonrpc_msg *m = parse_ok(accessor_doc);
    bool                b;
    char                longpath[300];

    (void)state;
    assert_string_equal(jsonrpc_get_string(m, "result.protocolVersion"),
        "2025-06-18");
    assert_string_equal(jsonrpc_get_string(m, "result.serverInfo.name"),
        "srv");
    assert_string_equal(jsonrpc_get_string(m, "result.serverInfo.version"),
        "1.2");
    /* Wrong types and missing members. */
    assert_null(jsonrpc_get_string(m, "result.num"));
    assert_null(jsonrpc_get_string(m, "result.serverInfo"));
    assert_null(jsonrpc_get_string(m, "result.nothing"));
    assert_null(jsonrpc_get_string(m, "result.missing"));
    assert_null(jsonrpc_get_string(m, "result.serverInfo.missing"));
    assert_null(jsonrpc_get_string(m, "missing.serverInfo.name"));
    /* A path through a non-object goes nowhere. */
    assert_null(jsonrpc_get_string(m, "result.protocolVersion.x"));
    assert_null(jsonrpc_get_string(m, "result.num.x"));
    assert_null(jsonrpc_get_string(m, "result.tools.name"));
    /* Names are case sensitive. */
    assert_null(jsonrpc_get_string(m, "result.serverinfo.name"));

    b = false;
    assert_true(jsonrpc_get_bool(m, "result.capabilities.tools.listChanged",
        &b));
    assert_true(b);
    b = true;
    assert_true(jsonrpc_get_bool(m,
        "result.capabilities.prompts.listChanged", &b));
    assert_false(b);
    b = true;
    assert_true(jsonrpc_get_bool(m, "result.flag", &b));
    assert_false(b);
    /* Not a bool: false, *out untouched. */
    b = true;
    assert_false(jsonrpc_get_bool(m, "result.num", &b));
    assert_true(b);
    assert_false(jsonrpc_get_bool(m, "result.protocolVersion", &b));
    assert_false(jsonrpc_get_bool(m, "result.nothing", &b));
    assert_false(jsonrpc_get_bool(m,
        "result.capabilities.resources.listChanged", &b));
    assert_false(jsonrpc_get_bool(m, "result.missing", &b));
    assert_true(b);

    assert_true(jsonrpc_has(m, "result"));
    assert_true(jsonrpc_has(m, "result.capabilities.resources"));
    assert_true(jsonrpc_has(m, "result.nothing"));
    assert_false(jsonrpc_has(m, "result.capabilities.logging"));
    assert_false(jsonrpc_has(m, "error"));
    assert_false(jsonrpc_has(m, "result.num.x"));

    /* A member name longer than any we use is not found, not cut. */
    memset(longpath, 'a', sizeof(longpath) - 1);
    longpath[sizeof(longpath) - 1] = '\0';
    memcpy(longpath, "result.", 7);
    assert_false(jsonrpc_has(m, longpath));
    assert_null(jsonrpc_get_string(m, longpath));
    jsonrpc_free(m);
}

static void
test_arrays(void **state)
{
    struct jsonrpc_msg *m = parse_ok(accessor_doc);

    (void)state;
    assert_int_equal(jsonrpc_array_len(m, "result.tools"), 6);
    assert_int_equal(jsonrpc_array_len(m, "result.empty"), 0);
    assert_int_equal(jsonrpc_array_len(m, "result.serverInfo"), -1);
    assert_int_equal(jsonrpc_array_len(m, "result.num"), -1);
    assert_int_equal(jsonrpc_array_len(m, "result.missing"), -1);

    /* With a member. */
    assert_string_equal(jsonrpc_array_string(m, "result.tools", 0, "name"),
        "a");
    assert_string_equal(jsonrpc_array_string(m, "result.tools", 1, "name"),
        "b");
    assert_null(jsonrpc_array_string(m, "result.tools", 2, "name"));
    assert_string_equal(jsonrpc_array_string(m, "result.tools", 2, "title"),
        "no name");
    assert_null(jsonrpc_array_string(m, "result.tools", 3, "name"));
    assert_null(jsonrpc_array_string(m, "result.tools", 4, "name"));
    assert_null(jsonrpc_array_string(m, "result.tools", 5, "name"));

    /* Without: the element itself must be a string. */
    assert_string_equal(jsonrpc_array_string(m, "result.tools", 3, NULL),
        "plain");
    assert_null(jsonrpc_array_string(m, "result.tools", 0, NULL));
    assert_null(jsonrpc_array_string(m, "result.tools", 4, NULL));

    /* Out of range and not arrays. */
    assert_null(jsonrpc_array_string(m, "result.tools", 6, NULL));
    assert_null(jsonrpc_array_string(m, "result.tools", 6, "name"));
    assert_null(jsonrpc_array_string(m, "result.tools", -1, "name"));
    assert_null(jsonrpc_array_string(m, "result.empty", 0, NULL));
    assert_null(jsonrpc_array_string(m, "result.serverInfo", 0, "name"));
    assert_null(jsonrpc_array_string(m, "result.missing", 0, NULL));
    jsonrpc_free(m);
}

/* An index past what an int holds is past the end too, not element
 * i mod 2^32. Results are taken before the asserts so a failure leaks
 * nothing. */
static void
test_array_index_past_int(void **state)
{
    struct jsonrpc_msg *m = parse_ok(accessor_doc);
    const char         *by_member, *by_self;

    (void)state;
    by_member = jsonrpc_array_string(m, "result.tools",
        (long)INT64_C(4294967296), "name");
    by_self = jsonrpc_array_string(m, "result.tools",
        (long)INT64_C(4294967299), NULL);
    jsonrpc_free(m);
    assert_null(by_member);
    assert_null(by_self);
}

static void
test_object_keys(void **state)
{
    struct jsonrpc_msg *m = parse_ok(accessor_doc);
    const char         *names[8];
    const char         *sentinel = "untouched";
    size_t              i, n;

    (void)state;
    for (i = 0; i < 8; i++)
        names[i] = sentinel;
    n = jsonrpc_object_keys(m, "result.capabilities", names, 8);
    assert_int_equal(n, 3);
    assert_string_equal(names[0], "tools");
    assert_string_equal(names[1], "resources");
    assert_string_equal(names[2], "prompts");
    assert_ptr_equal(names[3], sentinel);

    /* max caps the count and the writes. */
    for (i = 0; i < 8; i++)
        names[i] = sentinel;
    n = jsonrpc_object_keys(m, "result.capabilities", names, 2);
    assert_int_equal(n, 2);
    assert_string_equal(names[0], "tools");
    assert_string_equal(names[1], "resources");
    assert_ptr_equal(names[2], sentinel);

    n = jsonrpc_object_keys(m, "result.capabilities", names, 0);
    assert_int_equal(n, 0);

    /* Empty object, non-objects and missing paths give nothing. */
    for (i = 0; i < 8; i++)
        names[i] = sentinel;
    assert_int_equal(jsonrpc_object_keys(m, "result.capabilities.resources",
        names, 8), 0);
    assert_int_equal(jsonrpc_object_keys(m, "result.tools", names, 8), 0);
    assert_int_equal(jsonrpc_object_keys(m, "result.num", names, 8), 0);
    assert_int_equal(jsonrpc_object_keys(m, "result.missing", names, 8), 0);
    assert_ptr_equal(names[0], sentinel);

    /* The root's keys, in document order. */
    n = jsonrpc_object_keys(m, "", names, 8);
    assert_int_equal(n, 3);
    assert_string_equal(names[0], "jsonrpc");
    assert_string_equal(names[1], "id");
    assert_string_equal(names[2], "result");
    jsonrpc_free(m);
}

/* 2026-07-28 MRTR: an InputRequiredResult names what the server asks its
 * client; the first few only, whatever it names. */
static void
test_input_required(void **state)
{
    const char *ir = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{"
        "\"resultType\":\"input_required\",\"inputRequests\":{"
        "\"a\":{\"method\":\"elicitation/create\"},"
        "\"b\":{\"method\":\"roots/list\"},\"c\":{\"method\":\"x\"},"
        "\"d\":{\"method\":\"y\"},\"e\":{\"method\":\"z\"}}}}";
    const char *st = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{"
        "\"resultType\":\"input_required\",\"requestState\":\"s\"}}";
    const char *done = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{"
        "\"resultType\":\"complete\"}}";
    struct jsonrpc_msg *m;
    char                asked[64], small[12];

    (void)state;
    m = jsonrpc_parse(ir, strlen(ir), NULL);
    assert_non_null(m);
    assert_true(jsonrpc_input_required(m, asked, sizeof(asked)));
    assert_string_equal(asked, "elicitation/create, roots/list, x, y");
    assert_true(jsonrpc_input_required(m, small, sizeof(small)));
    assert_string_equal(small, "elicitation");
    jsonrpc_free(m);
    m = jsonrpc_parse(st, strlen(st), NULL);
    assert_true(jsonrpc_input_required(m, asked, sizeof(asked)));
    assert_string_equal(asked, "");
    jsonrpc_free(m);
    m = jsonrpc_parse(done, strlen(done), NULL);
    assert_false(jsonrpc_input_required(m, asked, sizeof(asked)));
    jsonrpc_free(m);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_initialize),
        cmocka_unit_test(test_build_request),
        cmocka_unit_test(test_id_describe),
        cmocka_unit_test(test_build_escaping),
        cmocka_unit_test(test_build_notification),
        cmocka_unit_test(test_build_cancelled),
        cmocka_unit_test(test_parse_result),
        cmocka_unit_test(test_parse_error),
        cmocka_unit_test(test_error_code_range),
        cmocka_unit_test(test_parse_request_notification),
        cmocka_unit_test(test_parse_refused),
        cmocka_unit_test(test_id_is),
        cmocka_unit_test(test_id_is_out_of_range),
        cmocka_unit_test(test_get_string_bool_has),
        cmocka_unit_test(test_arrays),
        cmocka_unit_test(test_array_index_past_int),
        cmocka_unit_test(test_object_keys),
        cmocka_unit_test(test_input_required),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
