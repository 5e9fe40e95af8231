/*
 * JSON-RPC 2.0 over cJSON. What comes from a server is untrusted: every
 * accessor checks types, and nothing here prints. Ids mcptop sends are
 * integers, so a response only matches when its id is that integer (a
 * string "5" is another id than 5).
 *
 * The light path: a short plain success with an integer id (a ping's
 * answer) is recognised by a scan of its bytes (jsonrpc_scan.c)
 * and kept as those bytes; its kind, id, the members it lacks ("error",
 * "method") and result.resultType are read without a tree, and the cJSON
 * tree is built from the bytes only when an accessor asks for more (an
 * initialize's serverInfo, a listing's tools). Whatever the scan is not
 * sure of is parsed by cJSON at once, as before.
 */
#include "core/jsonrpc.h"
#include "core/jsonrpc_scan.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/str.h"
#include "util/jsonw.h"
#include "util/xmalloc.h"

struct jsonrpc_msg {
    cJSON            *root;     /* light: NULL until an accessor needs it */
    enum jsonrpc_kind kind;
    bool              light;    /* a plain success, read by the scan */
    int64_t           id;       /* light: the integer id */
    const char       *rt;       /* light: result.resultType, or NULL */
    size_t            len;      /* light: the bytes of the message */
    char              text[];   /* light: them, then rt's, NUL-ended */
};

/* The tree of m, parsed from its bytes on first use (a light message):
 * the fields only a tree serves. NULL only if cJSON cannot allocate. */
static const cJSON *
jsonrpc_root(const struct jsonrpc_msg *m)
{
    if (m->root == NULL && m->light) {
        /* m is never const where it lives (jsonrpc_parse made it): the
         * tree is a cache of what its bytes say. */
        ((struct jsonrpc_msg *)m)->root = cJSON_ParseWithLength(m->text,
            m->len);
    }
    return m->root;
}

/* A path a light message has nothing at: under "error" or "method",
 * members a plain success does not have. */
static bool
jsonrpc_light_absent(const struct jsonrpc_msg *m, const char *path)
{
    size_t n = strcspn(path, ".");

    return m->light && ((n == 5 && strncmp(path, "error", 5) == 0) ||
        (n == 6 && strncmp(path, "method", 6) == 0));
}

/* A light message: the bytes kept, nothing parsed. */
static struct jsonrpc_msg *
jsonrpc_light(const char *text, size_t len, const struct jsonrpc_envelope *env)
{
    size_t              rt = env->rt_len != SIZE_MAX ? env->rt_len + 1 : 0;
    struct jsonrpc_msg *m = xmalloc(sizeof(*m) + len + 1 + rt);

    m->root = NULL;
    m->kind = JSONRPC_RESULT;
    m->light = true;
    m->id = env->id;
    m->len = len;
    memcpy(m->text, text, len);
    m->text[len] = '\0';
    m->rt = NULL;
    if (rt > 0) {
        char *r = m->text + len + 1;

        memcpy(r, text + env->rt_off, env->rt_len);
        r[env->rt_len] = '\0';
        m->rt = r;
    }
    return m;
}

static void
jsonrpc_set_cause(char **cause, const char *what)
{
    if (cause != NULL)
        *cause = xstrdup(what);
}

struct jsonrpc_msg *
jsonrpc_parse(const char *text, size_t len, char **cause)
{
    cJSON              *root;
    const cJSON        *v, *id;
    struct jsonrpc_msg *m;
    enum jsonrpc_kind   kind;
    struct jsonrpc_envelope env;

    if (jsonrpc_scan_success(text, len, &env))
        return jsonrpc_light(text, len, &env);
    root = cJSON_ParseWithLength(text, len);
    if (root == NULL) {
        jsonrpc_set_cause(cause, "not JSON");
        return NULL;
    }
    if (!cJSON_IsObject(root)) {
        jsonrpc_set_cause(cause, "JSON but not an object");
        goto out_free;
    }
    v = cJSON_GetObjectItemCaseSensitive(root, "jsonrpc");
    if (!cJSON_IsString(v) || strcmp(v->valuestring, "2.0") != 0) {
        jsonrpc_set_cause(cause, "not JSON-RPC 2.0 (no \"jsonrpc\": \"2.0\")");
        goto out_free;
    }
    id = cJSON_GetObjectItemCaseSensitive(root, "id");
    if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(root, "method"))) {
        kind = (id == NULL) ? JSONRPC_NOTIFICATION : JSONRPC_REQUEST;
    } else if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root,
        "error"))) {
        kind = JSONRPC_ERROR;
    } else if (cJSON_GetObjectItemCaseSensitive(root, "result") != NULL &&
        id != NULL) {
        kind = JSONRPC_RESULT;
    } else {
        jsonrpc_set_cause(cause,
            "JSON-RPC object with neither method, result nor error");
        goto out_free;
    }
    m = xmalloc(sizeof(*m));
    m->root = root;
    m->kind = kind;
    m->light = false;
    m->id = 0;
    m->rt = NULL;
    m->len = 0;
    return m;
out_free:
    cJSON_Delete(root);
    return NULL;
}

void
jsonrpc_free(struct jsonrpc_msg *m)
{
    if (m == NULL)
        return;
    cJSON_Delete(m->root);
    free(m);
}

enum jsonrpc_kind
jsonrpc_kind(const struct jsonrpc_msg *m)
{
    return m->kind;
}

bool
jsonrpc_id_is(const struct jsonrpc_msg *m, int64_t id)
{
    const cJSON *v;
    double       d;

    if (m->light)
        return m->id == id;
    v = cJSON_GetObjectItemCaseSensitive(m->root, "id");
    if (!cJSON_IsNumber(v))
        return false;
    d = v->valuedouble;
    /* Range first: converting an out-of-range double is undefined. */
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
        return false;
    return d == floor(d) && (int64_t)d == id;
}

bool
jsonrpc_id_int(const struct jsonrpc_msg *m, int64_t *out)
{
    const cJSON *v;
    double       d;

    if (m->light) {
        *out = m->id;
        return true;
    }
    v = cJSON_GetObjectItemCaseSensitive(m->root, "id");
    if (!cJSON_IsNumber(v))
        return false;
    d = v->valuedouble;
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) ||
        d != floor(d))
        return false;
    *out = (int64_t)d;
    return true;
}

size_t
jsonrpc_id_describe(const struct jsonrpc_msg *m, char *buf, size_t n)
{
    const cJSON *v;
    char         clean[40];
    int          k;

    if (n == 0)
        return 0;
    if (m->light) {
        k = snprintf(buf, n, "%lld (number)", (long long)m->id);
        return k < 0 ? 0 : (size_t)k < n ? (size_t)k : n - 1;
    }
    v = cJSON_GetObjectItemCaseSensitive(m->root, "id");
    if (v == NULL)
        k = snprintf(buf, n, "(none)");
    else if (cJSON_IsNull(v))
        k = snprintf(buf, n, "null");
    else if (cJSON_IsString(v)) {
        size_t len = strlen(v->valuestring);

        /* At most 32 bytes of it, sanitized. */
        str_sanitize(clean, sizeof(clean), v->valuestring,
            len > 32 ? 32 : len);
        k = snprintf(buf, n, "\"%s%s\" (string)", clean,
            len > 32 ? "..." : "");
    } else if (cJSON_IsNumber(v))
        k = snprintf(buf, n, "%.17g (number)", v->valuedouble);
    else if (cJSON_IsBool(v))
        k = snprintf(buf, n, "%s (boolean)", cJSON_IsTrue(v) ? "true" :
            "false");
    else
        k = snprintf(buf, n, "(%s)", cJSON_IsArray(v) ? "an array" :
            "an object");
    if (k < 0)
        k = 0;
    return (size_t)k < n ? (size_t)k : n - 1;
}

size_t
jsonrpc_stray_words(const char *described, int64_t ours, char *buf,
    size_t n)
{
    int k;

    if (n == 0)
        return 0;
    k = snprintf(buf, n, "answer id %s matches no request; ours was %lld "
        "(number)", described, (long long)ours);
    if (k < 0)
        k = 0;
    return (size_t)k < n ? (size_t)k : n - 1;
}

bool
jsonrpc_id_is_null(const struct jsonrpc_msg *m)
{
    const cJSON *v;

    if (m->light)
        return false;           /* an integer */
    v = cJSON_GetObjectItemCaseSensitive(m->root, "id");
    return v == NULL || cJSON_IsNull(v);
}

const char *
jsonrpc_method(const struct jsonrpc_msg *m)
{
    if (m->kind != JSONRPC_REQUEST && m->kind != JSONRPC_NOTIFICATION)
        return NULL;
    return jsonrpc_get_string(m, "method");
}

long
jsonrpc_error_code(const struct jsonrpc_msg *m)
{
    const cJSON *e, *c;

    if (m->light)
        return 0;               /* no "error" */
    e = cJSON_GetObjectItemCaseSensitive(m->root, "error");
    c = cJSON_GetObjectItemCaseSensitive(e, "code");
    if (!cJSON_IsNumber(c))
        return 0;
    if (c->valuedouble > 2147483647.0 || c->valuedouble < -2147483648.0)
        return 0;
    return (long)c->valuedouble;
}

const char *
jsonrpc_error_message(const struct jsonrpc_msg *m)
{
    return jsonrpc_get_string(m, "error.message");
}

/* Walk a dotted path of object members. */
static const cJSON *
jsonrpc_walk(const struct jsonrpc_msg *m, const char *path)
{
    const cJSON *cur;
    char         name[128];
    const char  *p = path;

    if (jsonrpc_light_absent(m, path))
        return NULL;
    cur = jsonrpc_root(m);
    while (cur != NULL && *p != '\0') {
        const char *dot = strchr(p, '.');
        size_t      n = dot != NULL ? (size_t)(dot - p) : strlen(p);

        if (n >= sizeof(name) || !cJSON_IsObject(cur))
            return NULL;
        memcpy(name, p, n);
        name[n] = '\0';
        cur = cJSON_GetObjectItemCaseSensitive(cur, name);
        p += n;
        if (*p == '.')
            p++;
    }
    return cur;
}

const char *
jsonrpc_get_string(const struct jsonrpc_msg *m, const char *path)
{
    const cJSON *v;

    /* Every result is asked this (client_judge): no tree for it. */
    if (m->light && strcmp(path, "result.resultType") == 0)
        return m->rt;
    v = jsonrpc_walk(m, path);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

bool
jsonrpc_get_bool(const struct jsonrpc_msg *m, const char *path, bool *out)
{
    const cJSON *v = jsonrpc_walk(m, path);

    if (!cJSON_IsBool(v))
        return false;
    *out = cJSON_IsTrue(v);
    return true;
}

bool
jsonrpc_has(const struct jsonrpc_msg *m, const char *path)
{
    if (m->light && (strcmp(path, "result") == 0 || strcmp(path, "id") == 0
        || strcmp(path, "jsonrpc") == 0))
        return true;
    return jsonrpc_walk(m, path) != NULL;
}

long
jsonrpc_array_len(const struct jsonrpc_msg *m, const char *path)
{
    const cJSON *v = jsonrpc_walk(m, path);

    return cJSON_IsArray(v) ? (long)cJSON_GetArraySize(v) : -1;
}

const char *
jsonrpc_array_string(const struct jsonrpc_msg *m, const char *path, long i,
    const char *member)
{
    const cJSON *a = jsonrpc_walk(m, path);
    const cJSON *e;

    if (!cJSON_IsArray(a) || i < 0 || i > INT_MAX)
        return NULL;
    e = cJSON_GetArrayItem(a, (int)i);
    if (member != NULL)
        e = cJSON_IsObject(e) ?
            cJSON_GetObjectItemCaseSensitive(e, member) : NULL;
    return cJSON_IsString(e) ? e->valuestring : NULL;
}

long
jsonrpc_array_each(const struct jsonrpc_msg *m, const char *path,
    const char *member, long max, void (*fn)(void *arg, const char *s),
    void *arg)
{
    const cJSON *a = jsonrpc_walk(m, path);
    const cJSON *e;
    long         n = 0;

    if (!cJSON_IsArray(a))
        return -1;
    /* One walk down the list: indexing element by element would be
     * quadratic in what a server chose to send. */
    cJSON_ArrayForEach(e, a) {
        const cJSON *v = e;

        if (n == max)
            break;
        if (member != NULL)
            v = cJSON_IsObject(e) ?
                cJSON_GetObjectItemCaseSensitive(e, member) : NULL;
        fn(arg, cJSON_IsString(v) ? v->valuestring : NULL);
        n++;
    }
    return n;
}

size_t
jsonrpc_object_keys(const struct jsonrpc_msg *m, const char *path,
    const char **names, size_t max)
{
    const cJSON *o = jsonrpc_walk(m, path);
    const cJSON *c;
    size_t       n = 0;

    if (!cJSON_IsObject(o))
        return 0;
    cJSON_ArrayForEach(c, o) {
        if (n == max)
            break;
        if (c->string != NULL)
            names[n++] = c->string;
    }
    return n;
}

/* Print compactly and free the tree. */
static char *
jsonrpc_print(cJSON *root, size_t *len_out)
{
    char *text = cJSON_PrintUnformatted(root);

    cJSON_Delete(root);
    if (text == NULL) {
        text = xstrdup("{}");
    }
    if (len_out != NULL)
        *len_out = strlen(text);
    return text;
}

/* A string member in cJSON's bytes (a NULL one left out, as cJSON left
 * it out): what servers have always been sent. */
static void
jsonrpc_w_str(struct jsonw *w, const char *key, const char *v)
{
    if (v != NULL)
        jsonw_bytes(w, key, v, strlen(v));
}

/* {"jsonrpc":"2.0","method":method (when given), left open. */
static void
jsonrpc_w_head(struct jsonw *w, const char *method)
{
    jsonw_init(w);
    jsonw_object_open(w, NULL);
    jsonrpc_w_str(w, "jsonrpc", "2.0");
    jsonrpc_w_str(w, "method", method);
}

/* Close the message; its text (caller frees) and length. */
static char *
jsonrpc_w_done(struct jsonw *w, size_t *len_out)
{
    jsonw_object_close(w);
    return jsonw_take(w, len_out);
}

char *
jsonrpc_build_initialize(int64_t id, const char *protocol_version,
    const char *client_name, const char *client_version, size_t *len_out)
{
    struct jsonw w;

    jsonrpc_w_head(&w, "initialize");
    jsonw_int(&w, "id", id);
    jsonw_object_open(&w, "params");
    jsonrpc_w_str(&w, "protocolVersion", protocol_version);
    /* No client capabilities: a monitor takes no sampling, elicitation or
     * roots requests from the servers it watches. */
    jsonw_object_open(&w, "capabilities");
    jsonw_object_close(&w);
    jsonw_object_open(&w, "clientInfo");
    jsonrpc_w_str(&w, "name", client_name);
    jsonrpc_w_str(&w, "version", client_version);
    jsonw_object_close(&w);
    jsonw_object_close(&w);
    return jsonrpc_w_done(&w, len_out);
}

char *
jsonrpc_build_request(int64_t id, const char *method, const char *cursor,
    size_t *len_out)
{
    struct jsonw w;

    jsonrpc_w_head(&w, method);
    jsonw_int(&w, "id", id);
    if (cursor != NULL) {
        jsonw_object_open(&w, "params");
        jsonrpc_w_str(&w, "cursor", cursor);
        jsonw_object_close(&w);
    }
    return jsonrpc_w_done(&w, len_out);
}

char *
jsonrpc_build_ping(int64_t id, const char *method, size_t *len_out)
{
    struct jsonw w;

    jsonw_init(&w);
    jsonw_object_open(&w, NULL);
    jsonrpc_w_str(&w, "jsonrpc", "2.0");
    jsonw_int(&w, "id", id);
    jsonrpc_w_str(&w, "method", method);
    return jsonrpc_w_done(&w, len_out);
}

char *
jsonrpc_build_notification(const char *method, size_t *len_out)
{
    struct jsonw w;

    jsonrpc_w_head(&w, method);
    return jsonrpc_w_done(&w, len_out);
}

char *
jsonrpc_build_cancelled(int64_t request_id, const char *reason,
    size_t *len_out)
{
    struct jsonw w;

    jsonrpc_w_head(&w, "notifications/cancelled");
    jsonw_object_open(&w, "params");
    jsonw_int(&w, "requestId", request_id);
    jsonrpc_w_str(&w, "reason", reason);
    jsonw_object_close(&w);
    return jsonrpc_w_done(&w, len_out);
}

char *
jsonrpc_build_answer(const struct jsonrpc_msg *req, long code,
    const char *message, size_t *len_out)
{
    const cJSON *id;
    cJSON       *o, *e;
    char        *text;

    if (req == NULL || req->light || req->kind != JSONRPC_REQUEST)
        return NULL;
    id = cJSON_GetObjectItemCaseSensitive(req->root, "id");
    if (id == NULL || (!cJSON_IsString(id) && !cJSON_IsNumber(id)))
        return NULL;
    o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "jsonrpc", "2.0");
    cJSON_AddItemToObject(o, "id", cJSON_Duplicate(id, false));
    if (code == 0) {
        cJSON_AddItemToObject(o, "result", cJSON_CreateObject());
    } else {
        e = cJSON_AddObjectToObject(o, "error");
        cJSON_AddNumberToObject(e, "code", (double)code);
        cJSON_AddStringToObject(e, "message", message != NULL ? message :
            "");
    }
    text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (text != NULL && len_out != NULL)
        *len_out = strlen(text);
    return text;
}

/* The 2026-07-28 per-request fields, params' "_meta". */
static void
jsonrpc_w_meta(struct jsonw *w, const char *protocol_version,
    const char *client_name, const char *client_version)
{
    jsonw_object_open(w, "_meta");
    jsonrpc_w_str(w, "io.modelcontextprotocol/protocolVersion",
        protocol_version);
    /* No optional capabilities: a monitor takes no requests. */
    jsonw_object_open(w, "io.modelcontextprotocol/clientCapabilities");
    jsonw_object_close(w);
    jsonw_object_open(w, "io.modelcontextprotocol/clientInfo");
    jsonrpc_w_str(w, "name", client_name);
    jsonrpc_w_str(w, "version", client_version);
    jsonw_object_close(w);
    jsonw_object_close(w);
}

const char *
jsonrpc_get_stringv(const struct jsonrpc_msg *m, ...)
{
    const cJSON *cur;
    const char  *name;
    va_list      ap;
    bool         first = true;

    va_start(ap, m);
    cur = jsonrpc_root(m);
    while (cur != NULL && (name = va_arg(ap, const char *)) != NULL) {
        if (first && jsonrpc_light_absent(m, name)) {
            cur = NULL;
            break;
        }
        first = false;
        cur = cJSON_IsObject(cur) ?
            cJSON_GetObjectItemCaseSensitive(cur, name) : NULL;
    }
    va_end(ap);
    return cJSON_IsString(cur) ? cur->valuestring : NULL;
}

bool
jsonrpc_array_has(const struct jsonrpc_msg *m, const char *path,
    const char *s)
{
    const cJSON *a = jsonrpc_walk(m, path);
    const cJSON *e;

    if (!cJSON_IsArray(a))
        return false;
    cJSON_ArrayForEach(e, a) {
        if (cJSON_IsString(e) && strcmp(e->valuestring, s) == 0)
            return true;
    }
    return false;
}

bool
jsonrpc_get_number(const struct jsonrpc_msg *m, const char *path,
    double *out)
{
    const cJSON *v = jsonrpc_walk(m, path);

    if (!cJSON_IsNumber(v))
        return false;
    *out = v->valuedouble;
    return true;
}

char *
jsonrpc_build_modern(int64_t id, const char *method,
    const char *protocol_version, const char *client_name,
    const char *client_version, const char *cursor, bool listen_tools,
    size_t *len_out)
{
    struct jsonw w;

    jsonrpc_w_head(&w, method);
    jsonw_int(&w, "id", id);
    jsonw_object_open(&w, "params");
    jsonrpc_w_str(&w, "cursor", cursor);
    if (listen_tools) {
        jsonw_object_open(&w, "notifications");
        jsonw_bool(&w, "toolsListChanged", true);
        jsonw_object_close(&w);
    }
    jsonrpc_w_meta(&w, protocol_version, client_name, client_version);
    jsonw_object_close(&w);
    return jsonrpc_w_done(&w, len_out);
}

char *
jsonrpc_build_tool_call(int64_t id, const char *name,
    const char *arguments_json, const char *modern_version,
    const char *client_name, const char *client_version, size_t *len_out)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *params, *args;

    cJSON_AddStringToObject(root, "jsonrpc", "2.0");
    cJSON_AddStringToObject(root, "method", "tools/call");
    cJSON_AddNumberToObject(root, "id", (double)id);
    params = cJSON_AddObjectToObject(root, "params");
    cJSON_AddStringToObject(params, "name", name);
    args = arguments_json != NULL ? cJSON_Parse(arguments_json) : NULL;
    if (!cJSON_IsObject(args)) {
        cJSON_Delete(args);
        args = cJSON_CreateObject();
    }
    cJSON_AddItemToObject(params, "arguments", args);
    if (modern_version != NULL) {
        cJSON *meta = cJSON_AddObjectToObject(params, "_meta");
        cJSON *info;

        cJSON_AddStringToObject(meta,
            "io.modelcontextprotocol/protocolVersion", modern_version);
        cJSON_AddObjectToObject(meta,
            "io.modelcontextprotocol/clientCapabilities");
        info = cJSON_AddObjectToObject(meta,
            "io.modelcontextprotocol/clientInfo");
        cJSON_AddStringToObject(info, "name", client_name);
        cJSON_AddStringToObject(info, "version", client_version);
    }
    return jsonrpc_print(root, len_out);
}

bool
jsonrpc_input_required(const struct jsonrpc_msg *m, char *asked, size_t n)
{
    const cJSON *r = jsonrpc_walk(m, "result");
    const cJSON *type, *req;
    size_t       used = 0;
    int          shown = 0;

    if (n > 0)
        asked[0] = '\0';
    type = cJSON_IsObject(r) ?
        cJSON_GetObjectItemCaseSensitive(r, "resultType") : NULL;
    if (!cJSON_IsString(type) ||
        strcmp(type->valuestring, "input_required") != 0)
        return false;
    /* The first few only: a server may name any number. */
    cJSON_ArrayForEach(req, cJSON_GetObjectItemCaseSensitive(r,
        "inputRequests")) {
        const cJSON *method = cJSON_GetObjectItemCaseSensitive(req,
            "method");
        int          k;

        if (!cJSON_IsString(method) || shown >= 4 || used >= n)
            break;
        k = snprintf(asked + used, n - used, "%s%s", shown > 0 ? ", " : "",
            method->valuestring);
        used = k < 0 ? n : used + (size_t)k;
        shown++;
    }
    return true;
}

bool
jsonrpc_tool_result(const struct jsonrpc_msg *m, const char *expect,
    bool *is_error, char *text, size_t tsz, bool *found)
{
    const cJSON *r = jsonrpc_walk(m, "result");
    const cJSON *content, *c;
    bool         first = true;

    *is_error = false;
    *found = expect == NULL;
    if (tsz > 0)
        text[0] = '\0';
    if (!cJSON_IsObject(r))
        return false;
    *is_error = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "isError"));
    content = cJSON_GetObjectItemCaseSensitive(r, "content");
    /* One pass over the content, whatever its size. */
    cJSON_ArrayForEach(c, content) {
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(c, "type");
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "text");

        if (!cJSON_IsString(type) || strcmp(type->valuestring, "text") != 0 ||
            !cJSON_IsString(t))
            continue;
        if (first && tsz > 0) {
            snprintf(text, tsz, "%s", t->valuestring);
            first = false;
        }
        if (expect != NULL && strstr(t->valuestring, expect) != NULL)
            *found = true;
    }
    return true;
}
