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
 *    same message (the method, the cursor, the id);
 *  - the light path (jsonrpc_scan.c) against cJSON's verdict: the scan
 *    says "a plain success" only where cJSON reads a result with that
 *    integer id and that resultType, and jsonrpc_parse (which takes the
 *    scan's word where it gives one) agrees with cJSON on every input: a
 *    message or none, its kind, which ids it has (a string "5" is not 5),
 *    a null id, the error code, result.resultType.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "core/jsonrpc.h"
#include "core/jsonrpc_scan.h"
#include "fuzz.h"

/* cJSON's verdict, as jsonrpc_parse gave it before the light path: the
 * kind, or -1 when the bytes are not a JSON-RPC message. */
static int
fuzz_cjson_kind(const cJSON *root)
{
    const cJSON *v, *id;

    if (!cJSON_IsObject(root))
        return -1;
    v = cJSON_GetObjectItemCaseSensitive(root, "jsonrpc");
    if (!cJSON_IsString(v) || strcmp(v->valuestring, "2.0") != 0)
        return -1;
    id = cJSON_GetObjectItemCaseSensitive(root, "id");
    if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(root, "method")))
        return id == NULL ? JSONRPC_NOTIFICATION : JSONRPC_REQUEST;
    if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "error")))
        return JSONRPC_ERROR;
    if (cJSON_GetObjectItemCaseSensitive(root, "result") != NULL &&
        id != NULL)
        return JSONRPC_RESULT;
    return -1;
}

/* cJSON's reading of "does the id equal x". */
static bool
fuzz_cjson_id_is(const cJSON *root, int64_t x)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "id");
    double       d;

    if (!cJSON_IsNumber(v))
        return false;
    d = v->valuedouble;
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
        return false;
    return d == floor(d) && (int64_t)d == x;
}

/* result.resultType as cJSON reads it, or NULL. */
static const char *
fuzz_cjson_rt(const cJSON *root)
{
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(root, "result");
    const cJSON *t = cJSON_IsObject(r) ?
        cJSON_GetObjectItemCaseSensitive(r, "resultType") : NULL;

    return cJSON_IsString(t) ? t->valuestring : NULL;
}

static bool
fuzz_same_str(const char *a, const char *b)
{
    return (a == NULL && b == NULL) ||
        (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* The light path and jsonrpc_parse against cJSON's verdict. */
static void
fuzz_jsonrpc_verdict(const uint8_t *data, size_t size,
    const struct jsonrpc_msg *m)
{
    struct jsonrpc_envelope env;
    cJSON                  *root = cJSON_ParseWithLength((const char *)data,
        size);
    int                     kind = fuzz_cjson_kind(root);
    const cJSON            *idv = cJSON_GetObjectItemCaseSensitive(root,
        "id");
    int64_t                 ids[12];
    size_t                  nids = 0;

    if (jsonrpc_scan_success((const char *)data, size, &env)) {
        FUZZ_CHECK(kind == JSONRPC_RESULT, "the scan says a success, cJSON "
            "says kind %d", kind);
        FUZZ_CHECK(fuzz_cjson_id_is(root, env.id), "the scan's id %lld is "
            "not cJSON's", (long long)env.id);
        FUZZ_CHECK(env.rt_len == SIZE_MAX ? fuzz_cjson_rt(root) == NULL :
            fuzz_cjson_rt(root) != NULL &&
            strlen(fuzz_cjson_rt(root)) == env.rt_len &&
            memcmp(fuzz_cjson_rt(root), data + env.rt_off, env.rt_len) == 0,
            "the scan's resultType is not cJSON's");
    }
    FUZZ_CHECK((m != NULL) == (kind >= 0), "parse %s, cJSON's kind %d",
        m != NULL ? "gave a message" : "gave none", kind);
    if (m != NULL) {
        FUZZ_CHECK((int)jsonrpc_kind(m) == kind, "kind %d, cJSON's %d",
            (int)jsonrpc_kind(m), kind);
        for (int64_t x = -1; x <= 8; x++)
            ids[nids++] = x;
        if (cJSON_IsNumber(idv) && fabs(idv->valuedouble) < 1e18)
            ids[nids++] = (int64_t)idv->valuedouble;
        for (size_t i = 0; i < nids; i++)
            FUZZ_CHECK(jsonrpc_id_is(m, ids[i]) == fuzz_cjson_id_is(root,
                ids[i]), "id %lld: %d, cJSON %d", (long long)ids[i],
                jsonrpc_id_is(m, ids[i]), fuzz_cjson_id_is(root, ids[i]));
        FUZZ_CHECK(jsonrpc_id_is_null(m) == (idv == NULL ||
            cJSON_IsNull(idv)), "a null id differs");
        FUZZ_CHECK(fuzz_same_str(jsonrpc_get_string(m, "result.resultType"),
            fuzz_cjson_rt(root)), "resultType differs");
        FUZZ_CHECK(jsonrpc_has(m, "result") ==
            (cJSON_GetObjectItemCaseSensitive(root, "result") != NULL),
            "result differs");
        FUZZ_CHECK(fuzz_same_str(jsonrpc_error_message(m),
            cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(root, "error"), "message"))),
            "error message differs");
    }
    cJSON_Delete(root);
}

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

/* Pieces of an envelope, for the generated messages of fuzz_envelope:
 * each member's value from its own list, edge cases of cJSON's rules
 * among them. "" in a list means: a piece of the input instead. */
static const char *const fuzz_env_keys[] = {
    "jsonrpc", "id", "result", "jsonrpc", "id", "result", "jsonrpc", "id",
    "result", "error", "method", "params", "\\u0069d", "resultType", "",
    "x", "id\\u0000",
};
static const char *const fuzz_env_version[] = {
    "\"2.0\"", "\"2.0\"", "\"2.0\"", "\"2.0\"", "\"2.0\"", "\"2.0\"",
    "\"2\\u002e0\"", "\"2.0\\u0000x\"",
    "\"1.0\"", "2.0", "null", "\"2.0 \"",
};
static const char *const fuzz_env_ids[] = {
    "5", "5", "5", "5", "7", "7", "-1", "0", "-0", "01", "5.0", "5e0", "\"5\"", "null",
    "123456789012345", "1234567890123456", "99999999999999999999", "1e400",
    "[]", "-", "5x", "5 ", "7",
};
static const char *const fuzz_env_results[] = {
    "{}", "{}", "{\"resultType\":\"complete\"}",
    "{\"resultType\":\"in\\u0063omplete\"}", "{\"resultType\":5}",
    "{\"a\":1,\"resultType\":\"x\",\"resultType\":\"y\"}",
    "{\"resultT\\u0079pe\":\"x\"}", "[]", "null", "\"s\"", "true",
    "{\"k\":\"\\uD800\\uDC00\"}", "{\"k\":\"\\uD800\"}",
    "{\"k\":\"\\uDC00\"}", "{\"k\":\"\\uZZZZ\"}", "{\"k\":1,}",
    "{\"k\":tru}", "[1,2.5,-0.0e+1,\"\\n\"]", "{\"k\":[1 2]}",
    "{\"tools\":[{\"name\":\"a\"}],\"nextCursor\":\"c\"}",
    "{\"k\":1e}", "{\"k\":.5}", "{\"k\":+1}", "{\"k\":\"a\x01\x7f\xff\"}",
    "{\"resultType\":\"a\x01z\"}", "",
};
static const char *const fuzz_env_errors[] = {
    "{}", "{\"code\":-32601,\"message\":\"m\"}", "5", "null",
};
static const char *const fuzz_env_methods[] = {
    "\"ping\"", "5", "null",
};
static const char *const fuzz_env_other[] = {
    "1", "\"x\"", "{}", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
    "[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
    "]]]]", "",
};
static const char *const fuzz_env_ws[] = {
    "", "", "", " ", "\t\n", "\x01", "\r",
};

#define FUZZ_PICK(list, g) (list)[fuzz_range(g, 0, \
    sizeof(list) / sizeof((list)[0]) - 1)]

/* Append s; with piece, "" stands for up to 16 bytes of the input as a
 * JSON string. */
static void
fuzz_env_add(char *buf, size_t *n, size_t cap, const char *s, bool piece,
    uint64_t *g, const uint8_t *data, size_t size)
{
    size_t len = strlen(s);

    if (len == 0 && piece) {
        size_t off = size ? fuzz_range(g, 0, size - 1) : 0;
        size_t k = size ? fuzz_range(g, 0, size - off < 16 ? size - off :
            16) : 0;

        if (*n + k + 2 < cap) {
            buf[(*n)++] = '"';
            memcpy(buf + *n, data + off, k);
            *n += k;
            buf[(*n)++] = '"';
        }
        return;
    }
    if (*n + len < cap) {
        memcpy(buf + *n, s, len);
        *n += len;
    }
}

#define fuzz_env_put(buf, n, cap, s, g, data, size) \
    fuzz_env_add(buf, n, cap, s, false, g, data, size)

/* A generated envelope: members drawn from the lists above in an order
 * and number from the input's hash, then the same verdict checks. */
static void
fuzz_envelope(const uint8_t *data, size_t size)
{
    char                buf[2048];
    size_t              n = 0;
    uint64_t            g = fuzz_hash(FUZZ_HASH_INIT, data, size);
    const char         *keys[8];
    size_t              members = 0;
    struct jsonrpc_msg *m;

    /* Mostly the three members of a success, shuffled, with up to three
     * others; else any members. */
    if (fuzz_range(&g, 0, 3) != 0) {
        keys[members++] = "jsonrpc";
        keys[members++] = "id";
        keys[members++] = "result";
    }
    for (size_t i = fuzz_range(&g, 0, 3) + (members == 0 ? 2 : 0); i > 0;
        i--)
        keys[members++] = FUZZ_PICK(fuzz_env_keys, &g);
    for (size_t i = members; i > 1; i--) {
        size_t      j = fuzz_range(&g, 0, i - 1);
        const char *t = keys[i - 1];

        keys[i - 1] = keys[j];
        keys[j] = t;
    }

    if (fuzz_range(&g, 0, 15) == 0)
        fuzz_env_put(buf, &n, sizeof(buf), "\xef\xbb\xbf", &g, data, size);
    fuzz_env_put(buf, &n, sizeof(buf), FUZZ_PICK(fuzz_env_ws, &g), &g, data,
        size);
    fuzz_env_put(buf, &n, sizeof(buf), "{", &g, data, size);
    for (size_t i = 0; i < members; i++) {
        const char *k = keys[i], *v;

        if (i > 0)
            fuzz_env_put(buf, &n, sizeof(buf), ",", &g, data, size);
        fuzz_env_put(buf, &n, sizeof(buf), FUZZ_PICK(fuzz_env_ws, &g), &g,
            data, size);
        if (k[0] == '\0') {
            fuzz_env_add(buf, &n, sizeof(buf), "", true, &g, data, size);
        } else {
            fuzz_env_put(buf, &n, sizeof(buf), "\"", &g, data, size);
            fuzz_env_put(buf, &n, sizeof(buf), k, &g, data, size);
            fuzz_env_put(buf, &n, sizeof(buf), "\"", &g, data, size);
        }
        fuzz_env_put(buf, &n, sizeof(buf), FUZZ_PICK(fuzz_env_ws, &g), &g,
            data, size);
        fuzz_env_put(buf, &n, sizeof(buf), ":", &g, data, size);
        fuzz_env_put(buf, &n, sizeof(buf), FUZZ_PICK(fuzz_env_ws, &g), &g,
            data, size);
        if (strcmp(k, "jsonrpc") == 0)
            v = FUZZ_PICK(fuzz_env_version, &g);
        else if (strcmp(k, "id") == 0)
            v = FUZZ_PICK(fuzz_env_ids, &g);
        else if (strcmp(k, "result") == 0)
            v = FUZZ_PICK(fuzz_env_results, &g);
        else if (strcmp(k, "error") == 0)
            v = FUZZ_PICK(fuzz_env_errors, &g);
        else if (strcmp(k, "method") == 0)
            v = FUZZ_PICK(fuzz_env_methods, &g);
        else
            v = FUZZ_PICK(fuzz_env_other, &g);
        fuzz_env_add(buf, &n, sizeof(buf), v, true, &g, data, size);
        fuzz_env_put(buf, &n, sizeof(buf), FUZZ_PICK(fuzz_env_ws, &g), &g,
            data, size);
    }
    if (fuzz_range(&g, 0, 15) != 0)
        fuzz_env_put(buf, &n, sizeof(buf), "}", &g, data, size);
    if (fuzz_range(&g, 0, 3) == 0)
        fuzz_env_put(buf, &n, sizeof(buf), "garbage", &g, data, size);
    m = jsonrpc_parse(buf, n, NULL);
    fuzz_jsonrpc_verdict((const uint8_t *)buf, n, m);
    jsonrpc_free(m);
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
    /* Before any accessor built a tree for m: the light one's own word. */
    fuzz_jsonrpc_verdict(data, size, again);
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

    fuzz_envelope(data, size);

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
