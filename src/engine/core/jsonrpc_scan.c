/*
 * The envelope scan (jsonrpc_scan.h). One pass over the bytes, never
 * past len, nesting bounded by JSONRPC_SCAN_MAX_DEPTH (no recursion
 * deeper than that), nothing allocated. It accepts a subset of what cJSON
 * 1.7 parses, and for that subset reads what cJSON would:
 *   - whitespace is every byte up to 0x20, as cJSON skips it;
 *   - a string runs to its closing quote; raw bytes (controls, NUL,
 *     invalid UTF-8) are taken as cJSON takes them; an escape must be one
 *     cJSON decodes (\" \\ \/ \b \f \n \r \t, \u with four hex digits, a
 *     surrogate only as a valid pair);
 *   - a number is JSON's grammar, at most 63 bytes, not followed by a byte
 *     cJSON would read as part of it ([0-9+-.eE]);
 *   - the literals, arrays and objects are cJSON's (no trailing comma);
 *   - what follows the top value is ignored, as cJSON_ParseWithLength
 *     ignores it.
 * The members looked up are the first of their name, as
 * cJSON_GetObjectItemCaseSensitive finds them; a key with an escape or a
 * NUL (which could read as another name) leaves the message to cJSON.
 */
#include "core/jsonrpc_scan.h"

#include <string.h>

struct jsonrpc_scan {
    const unsigned char *p;
    const unsigned char *end;
    unsigned             depth;
};

static void
jsonrpc_scan_ws(struct jsonrpc_scan *s)
{
    while (s->p < s->end && *s->p <= 0x20)
        s->p++;
}

static int
jsonrpc_scan_hex4(const unsigned char *h)
{
    int v = 0;

    for (int i = 0; i < 4; i++) {
        unsigned char c = h[i];

        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= c - '0';
        else if (c >= 'a' && c <= 'f')
            v |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            v |= c - 'A' + 10;
        else
            return -1;
    }
    return v;
}

/* A string at s->p (a quote). Its bytes between the quotes at *start,
 * *len; *plain: no escape and no NUL in them (they are the string). */
static bool
jsonrpc_scan_string(struct jsonrpc_scan *s, const unsigned char **start,
    size_t *len, bool *plain)
{
    const unsigned char *p = s->p + 1;

    *plain = true;
    *start = p;
    while (p < s->end && *p != '"') {
        if (*p == 0) {
            *plain = false;
            p++;
        } else if (*p != '\\') {
            p++;
        } else {
            int h;

            *plain = false;
            if (s->end - p < 2)
                return false;
            if (strchr("\"\\/bfnrt", p[1]) != NULL && p[1] != '\0') {
                p += 2;
                continue;
            }
            if (p[1] != 'u' || s->end - p < 6 ||
                (h = jsonrpc_scan_hex4(p + 2)) < 0 ||
                (h >= 0xdc00 && h <= 0xdfff))
                return false;
            if (h >= 0xd800 && h <= 0xdbff) {
                int l;

                if (s->end - p < 12 || p[6] != '\\' || p[7] != 'u' ||
                    (l = jsonrpc_scan_hex4(p + 8)) < 0 || l < 0xdc00 ||
                    l > 0xdfff)
                    return false;
                p += 12;
            } else {
                p += 6;
            }
        }
    }
    if (p >= s->end)
        return false;           /* no closing quote */
    *len = (size_t)(p - *start);
    s->p = p + 1;
    return true;
}

static bool
jsonrpc_scan_digit(const struct jsonrpc_scan *s, const unsigned char *p)
{
    return p < s->end && *p >= '0' && *p <= '9';
}

/* A number at s->p ('-' or a digit). *is_int and *v: an integer of at
 * most 15 digits (not "-0"), exactly. */
static bool
jsonrpc_scan_number(struct jsonrpc_scan *s, bool *is_int, int64_t *v)
{
    const unsigned char *p = s->p, *digits;
    bool                 neg = false;
    int64_t              n = 0;

    *is_int = false;
    if (*p == '-') {
        neg = true;
        p++;
    }
    digits = p;
    if (!jsonrpc_scan_digit(s, p))
        return false;
    if (*p == '0') {
        p++;
    } else {
        while (jsonrpc_scan_digit(s, p)) {
            if (p - digits < 15)
                n = n * 10 + (*p - '0');
            p++;
        }
    }
    *is_int = p - digits <= 15 && !(neg && *digits == '0');
    if (p < s->end && *p == '.') {
        *is_int = false;
        p++;
        if (!jsonrpc_scan_digit(s, p))
            return false;
        while (jsonrpc_scan_digit(s, p))
            p++;
    }
    if (p < s->end && (*p == 'e' || *p == 'E')) {
        *is_int = false;
        p++;
        if (p < s->end && (*p == '+' || *p == '-'))
            p++;
        if (!jsonrpc_scan_digit(s, p))
            return false;
        while (jsonrpc_scan_digit(s, p))
            p++;
    }
    /* cJSON reads at most 63 bytes of [0-9+-.eE] and hands them to
     * strtod: past that, or with one of them next, it may read another
     * number than this one. */
    if (p - s->p > 63 || (p < s->end && strchr("0123456789+-.eE", *p) !=
        NULL && *p != '\0'))
        return false;
    *v = neg ? -n : n;
    s->p = p;
    return true;
}

static bool jsonrpc_scan_value(struct jsonrpc_scan *s);

/* An array or an object at s->p, its members checked. */
static bool
jsonrpc_scan_container(struct jsonrpc_scan *s)
{
    bool          object = *s->p == '{';
    unsigned char close = object ? '}' : ']';

    if (++s->depth > JSONRPC_SCAN_MAX_DEPTH)
        return false;
    s->p++;
    jsonrpc_scan_ws(s);
    if (s->p < s->end && *s->p == close) {
        s->p++;
        s->depth--;
        return true;
    }
    for (;;) {
        if (object) {
            const unsigned char *k;
            size_t               kl;
            bool                 plain;

            if (s->p >= s->end || *s->p != '"' ||
                !jsonrpc_scan_string(s, &k, &kl, &plain))
                return false;
            jsonrpc_scan_ws(s);
            if (s->p >= s->end || *s->p != ':')
                return false;
            s->p++;
            jsonrpc_scan_ws(s);
        }
        if (!jsonrpc_scan_value(s))
            return false;
        jsonrpc_scan_ws(s);
        if (s->p < s->end && *s->p == ',') {
            s->p++;
            jsonrpc_scan_ws(s);
            continue;
        }
        if (s->p < s->end && *s->p == close) {
            s->p++;
            s->depth--;
            return true;
        }
        return false;
    }
}

/* A literal's bytes at s->p. */
static bool
jsonrpc_scan_word(struct jsonrpc_scan *s, const char *w, size_t n)
{
    if ((size_t)(s->end - s->p) < n || memcmp(s->p, w, n) != 0)
        return false;
    s->p += n;
    return true;
}

/* Any value at s->p (whitespace skipped before it). */
static bool
jsonrpc_scan_value(struct jsonrpc_scan *s)
{
    const unsigned char *k;
    size_t               kl;
    bool                 flag;
    int64_t              v;

    if (s->p >= s->end)
        return false;
    switch (*s->p) {
    case 'n':
        return jsonrpc_scan_word(s, "null", 4);
    case 'f':
        return jsonrpc_scan_word(s, "false", 5);
    case 't':
        return jsonrpc_scan_word(s, "true", 4);
    case '"':
        return jsonrpc_scan_string(s, &k, &kl, &flag);
    case '[':
    case '{':
        return jsonrpc_scan_container(s);
    default:
        if (*s->p == '-' || (*s->p >= '0' && *s->p <= '9'))
            return jsonrpc_scan_number(s, &flag, &v);
        return false;
    }
}

/* Is the key at k (kl bytes, plain) name? */
static bool
jsonrpc_scan_is(const unsigned char *k, size_t kl, const char *name)
{
    return kl == strlen(name) && memcmp(k, name, kl) == 0;
}

/* The result object at s->p: its first "resultType" member. */
static bool
jsonrpc_scan_result(struct jsonrpc_scan *s, const unsigned char *base,
    struct jsonrpc_envelope *env)
{
    bool seen = false;

    if (++s->depth > JSONRPC_SCAN_MAX_DEPTH)
        return false;
    s->p++;
    jsonrpc_scan_ws(s);
    if (s->p < s->end && *s->p == '}') {
        s->p++;
        s->depth--;
        return true;
    }
    for (;;) {
        const unsigned char *k, *vs;
        size_t               kl, vl;
        bool                 plain;

        if (s->p >= s->end || *s->p != '"' ||
            !jsonrpc_scan_string(s, &k, &kl, &plain) || !plain)
            return false;
        jsonrpc_scan_ws(s);
        if (s->p >= s->end || *s->p != ':')
            return false;
        s->p++;
        jsonrpc_scan_ws(s);
        if (!seen && jsonrpc_scan_is(k, kl, "resultType")) {
            seen = true;
            if (s->p < s->end && *s->p == '"') {
                if (!jsonrpc_scan_string(s, &vs, &vl, &plain) || !plain)
                    return false;
                env->rt_off = (size_t)(vs - base);
                env->rt_len = vl;
            } else if (!jsonrpc_scan_value(s)) {
                return false;
            }
        } else if (!jsonrpc_scan_value(s)) {
            return false;
        }
        jsonrpc_scan_ws(s);
        if (s->p < s->end && *s->p == ',') {
            s->p++;
            jsonrpc_scan_ws(s);
            continue;
        }
        if (s->p < s->end && *s->p == '}') {
            s->p++;
            s->depth--;
            return true;
        }
        return false;
    }
}

bool
jsonrpc_scan_success(const char *text, size_t len,
    struct jsonrpc_envelope *env)
{
    const unsigned char *base = (const unsigned char *)text;
    struct jsonrpc_scan  s = { base, base + len, 1 };
    bool                 got_version = false, got_id = false;
    bool                 got_result = false;

    env->rt_len = SIZE_MAX;
    env->rt_off = 0;
    if (len > JSONRPC_SCAN_MAX_BYTES)
        return false;
    if (len >= 3 && base[0] == 0xef)
        return false;           /* maybe a byte-order mark: cJSON's */
    jsonrpc_scan_ws(&s);
    if (s.p >= s.end || *s.p != '{')
        return false;
    s.p++;
    jsonrpc_scan_ws(&s);
    for (;;) {
        const unsigned char *k, *vs;
        size_t               kl, vl;
        bool                 plain, is_int;

        if (s.p >= s.end || *s.p != '"' ||
            !jsonrpc_scan_string(&s, &k, &kl, &plain) || !plain)
            return false;
        jsonrpc_scan_ws(&s);
        if (s.p >= s.end || *s.p != ':')
            return false;
        s.p++;
        jsonrpc_scan_ws(&s);
        if (s.p >= s.end)
            return false;
        if (jsonrpc_scan_is(k, kl, "method") ||
            jsonrpc_scan_is(k, kl, "error")) {
            return false;       /* a request or an error: cJSON's */
        } else if (!got_version && jsonrpc_scan_is(k, kl, "jsonrpc")) {
            got_version = true;
            if (*s.p != '"' || !jsonrpc_scan_string(&s, &vs, &vl, &plain) ||
                !plain || !jsonrpc_scan_is(vs, vl, "2.0"))
                return false;
        } else if (!got_id && jsonrpc_scan_is(k, kl, "id")) {
            got_id = true;
            if (!(*s.p == '-' || (*s.p >= '0' && *s.p <= '9')) ||
                !jsonrpc_scan_number(&s, &is_int, &env->id) || !is_int)
                return false;
        } else if (!got_result && jsonrpc_scan_is(k, kl, "result")) {
            got_result = true;
            if (*s.p == '{' ? !jsonrpc_scan_result(&s, base, env) :
                !jsonrpc_scan_value(&s))
                return false;
        } else if (!jsonrpc_scan_value(&s)) {
            return false;
        }
        jsonrpc_scan_ws(&s);
        if (s.p < s.end && *s.p == ',') {
            s.p++;
            jsonrpc_scan_ws(&s);
            continue;
        }
        if (s.p < s.end && *s.p == '}')
            break;
        return false;
    }
    return got_version && got_id && got_result;
}
