/*
 * JSON-RPC parsing and every accessor (src/engine/jsonrpc.c) over arbitrary
 * bytes, as one HTTP body, SSE event or stdio line would hand them over.
 *
 * Checked:
 *  - jsonrpc_parse gives a message or a cause, never both, never neither;
 *  - the kind agrees with what the accessors see (a request or notification
 *    has a method, a notification no id, an error an "error" object);
 *  - every string accessor returns NULL or a NUL-terminated string, the
 *    array and key accessors stay within what they report;
 *  - the paths server.c reads are walked, plus paths taken from the input
 *    itself (long, empty, dotted, with empty segments), so the path walker
 *    sees hostile paths too;
 *  - what the builders make from strings of the input parses back as the
 *    same message (the method, the cursor, the id).
 */
#include <stdbool.h>
#include <string.h>

#include "jsonrpc.h"
#include "fuzz.h"

/* The paths server.c and the CLI read from answers. */
static const char *const fuzz_jsonrpc_paths[] = {
    "result", "result.tools", "result.nextCursor", "result.protocolVersion",
    "result.serverInfo.name", "result.serverInfo.version",
    "result.capabilities", "result.capabilities.tools",
    "result.capabilities.tools.listChanged", "result.supportedVersions",
    "result.resultType", "result.cacheScope", "result.ttlMs",
    "error", "error.code", "error.message", "error.data",
    "error.data.supported", "params", "params.requestId", "id", "method",
    "jsonrpc", "", ".", "..", "result.", ".result", "result..tools",
    NULL
};

/* Touch every byte of a returned string (ASan sees an over-read). */
static size_t
fuzz_touch(const char *s)
{
    return s != NULL ? strlen(s) : 0;
}

/* Read path with every accessor and check they agree with each other. */
static void
fuzz_jsonrpc_path(const struct jsonrpc_msg *m, const char *path)
{
    const char *names[16];
    const char *s;
    double      d;
    bool        b;
    long        n;
    long        i;
    size_t      k;
    size_t      j;

    s = jsonrpc_get_string(m, path);
    fuzz_touch(s);
    if (s != NULL)
        FUZZ_CHECK(jsonrpc_has(m, path), "a string at \"%s\" but no has",
            path);
    if (jsonrpc_get_bool(m, path, &b))
        FUZZ_CHECK(jsonrpc_has(m, path) && s == NULL,
            "a bool at \"%s\" that is absent or a string", path);
    if (jsonrpc_get_number(m, path, &d))
        FUZZ_CHECK(jsonrpc_has(m, path) && s == NULL,
            "a number at \"%s\" that is absent or a string", path);
    n = jsonrpc_array_len(m, path);
    FUZZ_CHECK(n >= -1, "array length %ld", n);
    if (n >= 0)
        FUZZ_CHECK(jsonrpc_has(m, path) && s == NULL,
            "an array at \"%s\" that is absent or a string", path);
    /* Bounded: each lookup by index walks the list from its head. */
    for (i = -1; i <= n && i < 64; i++) {
        s = jsonrpc_array_string(m, path, i, NULL);
        FUZZ_CHECK(i >= 0 && i < n ? true : s == NULL,
            "element %ld of %ld at \"%s\"", i, n, path);
        fuzz_touch(s);
        if (s != NULL)
            FUZZ_CHECK(jsonrpc_array_has(m, path, s),
                "element %ld at \"%s\" not found by array_has", i, path);
        fuzz_touch(jsonrpc_array_string(m, path, i, "name"));
        fuzz_touch(jsonrpc_array_string(m, path, i, ""));
    }
    FUZZ_CHECK(jsonrpc_array_string(m, path, n + 1, NULL) == NULL,
        "an element past the end at \"%s\"", path);
    FUZZ_CHECK(jsonrpc_array_string(m, path, 2147483648L, NULL) == NULL,
        "an element past INT_MAX at \"%s\"", path);
    k = jsonrpc_object_keys(m, path, names, 16);
    FUZZ_CHECK(k <= 16, "%zu keys for a room of 16", k);
    for (j = 0; j < k; j++)
        FUZZ_CHECK(names[j] != NULL, "key %zu is NULL", j);
    for (j = 0; j < k; j++)
        fuzz_touch(names[j]);
    FUZZ_CHECK(jsonrpc_object_keys(m, path, names, 0) == 0,
        "keys written into a room of 0");
    if (k > 0)
        FUZZ_CHECK(jsonrpc_has(m, path), "keys at absent \"%s\"", path);
}

/* Build with strings of the input and parse the result back. */
static void
fuzz_jsonrpc_build(const char *a, const char *b, int64_t id)
{
    struct jsonrpc_msg *m;
    size_t              len;
    char               *t;
    char               *cause = NULL;

    t = jsonrpc_build_request(id, a, b, &len);
    FUZZ_CHECK(strlen(t) == len, "length %zu of a %zu-byte text", len,
        strlen(t));
    m = jsonrpc_parse(t, len, &cause);
    FUZZ_CHECK(m != NULL, "a built request does not parse: %s", cause);
    FUZZ_CHECK(jsonrpc_kind(m) == JSONRPC_REQUEST, "not a request");
    FUZZ_CHECK(jsonrpc_method(m) != NULL && strcmp(jsonrpc_method(m), a)
        == 0, "method changed");
    FUZZ_CHECK(jsonrpc_get_string(m, "params.cursor") != NULL
        && strcmp(jsonrpc_get_string(m, "params.cursor"), b) == 0,
        "cursor changed");
    /* Ids mcptop sends are small; doubles carry them exactly. */
    FUZZ_CHECK(jsonrpc_id_is(m, id), "id %lld changed", (long long)id);
    jsonrpc_free(m);
    free(t);

    t = jsonrpc_build_modern(id, a, b, a, b, b, true, &len);
    m = jsonrpc_parse(t, len, NULL);
    FUZZ_CHECK(m != NULL, "a built modern request does not parse");
    FUZZ_CHECK(jsonrpc_get_stringv(m, "params", "_meta",
        "io.modelcontextprotocol/protocolVersion", NULL) != NULL
        && strcmp(jsonrpc_get_stringv(m, "params", "_meta",
        "io.modelcontextprotocol/protocolVersion", NULL), b) == 0,
        "protocol version changed");
    jsonrpc_free(m);
    free(t);

    t = jsonrpc_build_cancelled(id, a, &len);
    m = jsonrpc_parse(t, len, NULL);
    FUZZ_CHECK(m != NULL && jsonrpc_kind(m) == JSONRPC_NOTIFICATION,
        "a built notification does not parse as one");
    jsonrpc_free(m);
    free(t);
    free(jsonrpc_build_initialize(id, a, b, a, NULL));
    free(jsonrpc_build_notification(b, NULL));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct jsonrpc_msg *m;
    struct jsonrpc_msg *again;
    enum jsonrpc_kind   kind;
    char               *cause = NULL;
    char               *path;
    char               *a;
    const char         *s;
    size_t              i;
    size_t              cut;

    m = jsonrpc_parse((const char *)data, size, &cause);
    FUZZ_CHECK((m == NULL) != (cause == NULL), "message %p, cause %s",
        (void *)m, cause != NULL ? cause : "(none)");
    free(cause);
    again = jsonrpc_parse((const char *)data, size, NULL);
    FUZZ_CHECK((again == NULL) == (m == NULL),
        "parse differs with a NULL cause");
    jsonrpc_free(again);
    if (m != NULL) {
        kind = jsonrpc_kind(m);
        FUZZ_CHECK(kind <= JSONRPC_ERROR, "kind %d", (int)kind);
        s = jsonrpc_method(m);
        if (kind == JSONRPC_REQUEST || kind == JSONRPC_NOTIFICATION)
            FUZZ_CHECK(s != NULL, "a request without a method");
        else
            FUZZ_CHECK(s == NULL, "a method outside a request");
        fuzz_touch(s);
        if (kind == JSONRPC_NOTIFICATION)
            FUZZ_CHECK(jsonrpc_id_is_null(m) && !jsonrpc_has(m, "id"),
                "a notification with an id");
        if (kind == JSONRPC_RESULT)
            FUZZ_CHECK(jsonrpc_has(m, "id") && jsonrpc_has(m, "result"),
                "a result without id or result");
        if (kind == JSONRPC_ERROR)
            FUZZ_CHECK(jsonrpc_has(m, "error"), "an error without error");
        (void)jsonrpc_error_code(m);
        fuzz_touch(jsonrpc_error_message(m));
        for (i = 0; i < 8; i++)
            (void)jsonrpc_id_is(m, (int64_t)i - 1);
        (void)jsonrpc_id_is(m, INT64_MAX);
        (void)jsonrpc_id_is(m, INT64_MIN);
        for (i = 0; fuzz_jsonrpc_paths[i] != NULL; i++)
            fuzz_jsonrpc_path(m, fuzz_jsonrpc_paths[i]);
        fuzz_touch(jsonrpc_get_stringv(m, "result", "_meta",
            "io.modelcontextprotocol/protocolVersion", NULL));
        fuzz_touch(jsonrpc_get_stringv(m, NULL));
        /* The input itself as a path: hostile paths for the walker. */
        path = malloc(size + 1);
        memcpy(path, data, size);
        path[size] = '\0';
        fuzz_jsonrpc_path(m, path);
        free(path);
        jsonrpc_free(m);
    }

    /* The builders, with the input split in two strings at a NUL or half. */
    cut = size / 2;
    for (i = 0; i < size; i++) {
        if (data[i] == '\0') {
            cut = i;
            break;
        }
    }
    a = malloc(size + 2);
    memcpy(a, data, size);
    a[cut] = '\0';
    a[size] = '\0';
    a[size + 1] = '\0';
    fuzz_jsonrpc_build(a, a + cut + (cut < size ? 1 : 0),
        (int64_t)(size * 7919));
    free(a);
    return 0;
}
