/*
 * OAuth's JSON documents on cJSON. A parsed document is kept whole and read
 * by member; members of the wrong type read as absent. A token answer in
 * a form (application/x-www-form-urlencoded, as GitHub sends when Accept
 * is not honoured) is read into the same shape.
 */
#include "oauth/oauth_doc.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/url.h"
#include "util/str.h"
#include "util/xmalloc.h"

struct oauth_doc {
    cJSON *root;
};

struct oauth_doc *
oauth_doc_parse(const char *text, size_t len)
{
    cJSON            *root;
    struct oauth_doc *d;

    if (text == NULL || len == 0)
        return NULL;
    root = cJSON_ParseWithLength(text, len);
    if (root == NULL)
        return NULL;
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return NULL;
    }
    d = xcalloc(1, sizeof(*d));
    d->root = root;
    return d;
}

struct oauth_doc *
oauth_doc_parse_form(const char *text, size_t len)
{
    /* The members of a token answer, success or error (RFC 6749 sections
     * 5.1 and 5.2): only these are kept, each once (the first), so the
     * walk stays linear in the body whatever it holds. */
    static const char *const keys[] = {
        "access_token", "token_type", "expires_in", "refresh_token",
        "scope", "error", "error_description", "error_uri",
    };
    bool              seen[sizeof(keys) / sizeof(keys[0])] = { false };
    struct oauth_doc *d;
    size_t            i = 0, kept = 0;

    if (text == NULL || len == 0)
        return NULL;
    d = xcalloc(1, sizeof(*d));
    d->root = cJSON_CreateObject();
    while (i < len) {
        const char *pair = text + i, *eq, *amp;
        size_t      n, klen;
        char       *k, *v;

        amp = memchr(pair, '&', len - i);
        n = amp != NULL ? (size_t)(amp - pair) : len - i;
        i += n + 1;
        eq = memchr(pair, '=', n);
        if (eq == NULL)
            continue;
        klen = (size_t)(eq - pair);
        k = url_unescape_form(pair, klen);
        for (size_t j = 0; k != NULL && j < sizeof(keys) / sizeof(keys[0]);
            j++) {
            if (seen[j] || strcmp(k, keys[j]) != 0)
                continue;
            v = url_unescape_form(eq + 1, n - klen - 1);
            if (v == NULL)
                break;
            seen[j] = true;
            kept++;
            if (strcmp(keys[j], "expires_in") == 0 && v[0] != '\0' &&
                strspn(v, "0123456789") == strlen(v) && strlen(v) < 10)
                cJSON_AddNumberToObject(d->root, keys[j], atof(v));
            else
                cJSON_AddStringToObject(d->root, keys[j], v);
            str_wipe_free(v);
            break;
        }
        free(k);
    }
    if (kept == 0) {
        oauth_doc_free(d);
        return NULL;
    }
    return d;
}

struct oauth_doc *
oauth_doc_parse_answer(const char *text, size_t len, const char *content_type)
{
    if (content_type != NULL && strncasecmp(content_type,
        "application/x-www-form-urlencoded", 33) == 0)
        return oauth_doc_parse_form(text, len);
    return oauth_doc_parse(text, len);
}

void
oauth_doc_free(struct oauth_doc *d)
{
    if (d == NULL)
        return;
    cJSON_Delete(d->root);
    free(d);
}

static const cJSON *
oauth_doc_item(const struct oauth_doc *d, const char *key)
{
    return d != NULL ? cJSON_GetObjectItemCaseSensitive(d->root, key) : NULL;
}

const char *
oauth_doc_string(const struct oauth_doc *d, const char *key)
{
    const cJSON *v = oauth_doc_item(d, key);

    return cJSON_IsString(v) ? v->valuestring : NULL;
}

bool
oauth_doc_bool(const struct oauth_doc *d, const char *key, bool dflt)
{
    const cJSON *v = oauth_doc_item(d, key);

    return cJSON_IsBool(v) ? cJSON_IsTrue(v) : dflt;
}

bool
oauth_doc_number(const struct oauth_doc *d, const char *key, double *out)
{
    const cJSON *v = oauth_doc_item(d, key);

    if (!cJSON_IsNumber(v))
        return false;
    *out = v->valuedouble;
    return true;
}

bool
oauth_doc_has(const struct oauth_doc *d, const char *key)
{
    return oauth_doc_item(d, key) != NULL;
}

long
oauth_doc_array_len(const struct oauth_doc *d, const char *key)
{
    const cJSON *v = oauth_doc_item(d, key);

    return cJSON_IsArray(v) ? (long)cJSON_GetArraySize(v) : -1;
}

const char *
oauth_doc_array_string(const struct oauth_doc *d, const char *key, long i)
{
    const cJSON *v = oauth_doc_item(d, key), *e;

    if (!cJSON_IsArray(v) || i < 0)
        return NULL;
    e = cJSON_GetArrayItem(v, (int)i);
    return cJSON_IsString(e) ? e->valuestring : NULL;
}

bool
oauth_doc_array_has(const struct oauth_doc *d, const char *key,
    const char *s)
{
    const cJSON *v = oauth_doc_item(d, key), *e;

    if (!cJSON_IsArray(v))
        return false;
    cJSON_ArrayForEach(e, v) {
        if (cJSON_IsString(e) && strcmp(e->valuestring, s) == 0)
            return true;
    }
    return false;
}

char *
oauth_doc_array_join(const struct oauth_doc *d, const char *key,
    long max_items)
{
    const cJSON *v = oauth_doc_item(d, key), *e;
    size_t       n = 0, len = 0;
    char        *out;
    long         k = 0;

    if (!cJSON_IsArray(v))
        return NULL;
    cJSON_ArrayForEach(e, v) {
        if (k++ >= max_items)
            break;
        if (cJSON_IsString(e) && e->valuestring[0] != '\0')
            len += strlen(e->valuestring) + 1;
    }
    if (len == 0)
        return NULL;
    out = xmalloc(len);
    k = 0;
    cJSON_ArrayForEach(e, v) {
        if (k++ >= max_items)
            break;
        if (!cJSON_IsString(e) || e->valuestring[0] == '\0')
            continue;
        if (n > 0)
            out[n++] = ' ';
        memcpy(out + n, e->valuestring, strlen(e->valuestring));
        n += strlen(e->valuestring);
    }
    out[n] = '\0';
    return out;
}

/* Print and free a built document. */
static char *
oauth_doc_print(cJSON *o)
{
    char *t = cJSON_PrintUnformatted(o);
    char *r = xstrdup(t != NULL ? t : "{}");

    cJSON_free(t);
    cJSON_Delete(o);
    return r;
}

char *
oauth_doc_registration(const char *redirect_uri,
    const char *const *grant_types, const char *auth_method,
    const char *scope)
{
    cJSON *o = cJSON_CreateObject(), *a;
    bool   code = false;

    cJSON_AddStringToObject(o, "client_name", "mcptop");
    if (redirect_uri != NULL) {
        a = cJSON_AddArrayToObject(o, "redirect_uris");
        cJSON_AddItemToArray(a, cJSON_CreateString(redirect_uri));
    }
    a = cJSON_AddArrayToObject(o, "grant_types");
    for (size_t i = 0; grant_types[i] != NULL; i++) {
        cJSON_AddItemToArray(a, cJSON_CreateString(grant_types[i]));
        if (strcmp(grant_types[i], "authorization_code") == 0)
            code = true;
    }
    if (code) {
        a = cJSON_AddArrayToObject(o, "response_types");
        cJSON_AddItemToArray(a, cJSON_CreateString("code"));
    }
    cJSON_AddStringToObject(o, "token_endpoint_auth_method", auth_method);
    if (scope != NULL)
        cJSON_AddStringToObject(o, "scope", scope);
    cJSON_AddStringToObject(o, "software_id", "mcptop");
    cJSON_AddStringToObject(o, "software_version", MCPTOP_VERSION);
    return oauth_doc_print(o);
}

char *
oauth_doc_assertion_claims(const char *client_id, const char *aud,
    int64_t iat, int64_t exp, const char *jti)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddStringToObject(o, "iss", client_id);
    cJSON_AddStringToObject(o, "sub", client_id);
    cJSON_AddStringToObject(o, "aud", aud);
    cJSON_AddNumberToObject(o, "iat", (double)iat);
    cJSON_AddNumberToObject(o, "exp", (double)exp);
    cJSON_AddStringToObject(o, "jti", jti);
    return oauth_doc_print(o);
}
