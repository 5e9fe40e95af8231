/*
 * The JSON writer (src/util/jsonw.c) against cJSON's parser: a document of
 * objects, arrays, strings, integers, one-decimal numbers, booleans and
 * nulls, its shape and values drawn from the input (strings and keys are
 * the input's own bytes: controls, quotes, backslashes, NULs, invalid
 * UTF-8), written with jsonw and parsed back with cJSON.
 *
 * Checked:
 *  - cJSON parses the text, and it is valid UTF-8 (checked by a decoder of
 *    this file's own);
 *  - the parsed tree is what was written: the same shape, keys and strings
 *    (a valid UTF-8 string exactly; an invalid byte as U+FFFD; cJSON's
 *    strings end at a NUL, \u0000), integers and tenths as the same
 *    doubles;
 *  - where cJSON could have written the same document (valid UTF-8, no
 *    NUL, numbers under 10^15), the text is byte for byte what
 *    cJSON_PrintUnformatted prints for the parsed tree.
 */
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <string.h>

#include "util/jsonw.h"
#include "fuzz.h"

struct fuzz_gen {
    uint64_t       seed;
    const uint8_t *data;
    size_t         size;
    size_t         off;
    bool           compatible;  /* cJSON could print the same text */
};

/* An independent UTF-8 decoder: the code point's length at s, 0 when the
 * bytes are not a well-formed character. */
static size_t
fuzz_utf8(const uint8_t *s, size_t n)
{
    uint32_t cp;
    size_t   len, i;

    if (s[0] < 0x80)
        return 1;
    if ((s[0] & 0xe0) == 0xc0) {
        len = 2;
        cp = s[0] & 0x1f;
    } else if ((s[0] & 0xf0) == 0xe0) {
        len = 3;
        cp = s[0] & 0x0f;
    } else if ((s[0] & 0xf8) == 0xf0) {
        len = 4;
        cp = s[0] & 0x07;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
        (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

/* What a string of the input must parse back as: each invalid byte as
 * U+FFFD, cut at the first NUL (cJSON's strings are C strings). Caller
 * frees. *valid: the input was valid UTF-8 without a NUL. */
static char *
fuzz_expect(const uint8_t *s, size_t n, bool *valid)
{
    char  *out = malloc(n * 3 + 1);
    size_t i = 0, o = 0, len;

    *valid = true;
    while (i < n) {
        if (s[i] == 0) {
            *valid = false;
            break;
        }
        len = fuzz_utf8(s + i, n - i);
        if (len == 0) {
            memcpy(out + o, "\xef\xbf\xbd", 3);
            o += 3;
            i++;
            *valid = false;
        } else {
            memcpy(out + o, s + i, len);
            o += len;
            i += len;
        }
    }
    out[o] = '\0';
    return out;
}

/* The next piece of the input, at most 24 bytes. */
static const uint8_t *
fuzz_take(struct fuzz_gen *g, size_t *n)
{
    const uint8_t *p = g->data + g->off;

    *n = fuzz_range(&g->seed, 0, 24);
    if (*n > g->size - g->off)
        *n = g->size - g->off;
    g->off += *n;
    return p;
}

/* A value: written (w) or checked against the parsed item (it). Both
 * passes draw the same numbers from the same seed. */
static void
fuzz_value(struct fuzz_gen *g, struct jsonw *w, const cJSON *it,
    const char *key, int depth)
{
    size_t         n, i, count;
    const uint8_t *s;
    char          *want, *kbuf;
    bool           valid;
    int64_t        v;
    const cJSON   *c;
    unsigned       kind = (unsigned)fuzz_range(&g->seed, 0,
        depth < 8 ? 6 : 4);

    switch (kind) {
    case 0:
        s = fuzz_take(g, &n);
        want = fuzz_expect(s, n, &valid);
        if (w != NULL) {
            jsonw_string_n(w, key, (const char *)s, n);
            g->compatible = g->compatible && valid;
        } else {
            FUZZ_CHECK(cJSON_IsString(it) && strcmp(it->valuestring, want)
                == 0, "string \"%s\" read back as \"%s\"", want,
                cJSON_IsString(it) ? it->valuestring : "(not a string)");
        }
        free(want);
        break;
    case 1:
    case 2:
        v = (int64_t)fuzz_next(&g->seed);
        if (fuzz_range(&g->seed, 0, 3) != 0)
            v %= 100000;        /* mostly ordinary sizes */
        if (w != NULL) {
            if (kind == 1)
                jsonw_int(w, key, v);
            else
                jsonw_tenths(w, key, v);
            if (v >= 1000000000000000LL || v <= -1000000000000000LL)
                g->compatible = false;
        } else {
            /* The decimal meant, by printf, as cJSON's strtod reads it. */
            uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
            char     ref[48];
            double   d;

            if (kind == 1)
                snprintf(ref, sizeof(ref), "%s%llu", v < 0 ? "-" : "",
                    (unsigned long long)u);
            else
                snprintf(ref, sizeof(ref), "%s%llu.%u", v < 0 ? "-" : "",
                    (unsigned long long)(u / 10), (unsigned)(u % 10));
            d = strtod(ref, NULL);

            FUZZ_CHECK(cJSON_IsNumber(it) && it->valuedouble == d,
                "number %s (%s) read back as %.17g", ref,
                kind == 1 ? "int" : "tenths", it->valuedouble);
        }
        break;
    case 3:
        v = (int64_t)fuzz_range(&g->seed, 0, 1);
        if (w != NULL)
            jsonw_bool(w, key, v != 0);
        else
            FUZZ_CHECK(v ? cJSON_IsTrue(it) : cJSON_IsFalse(it), "bool");
        break;
    case 4:
        if (w != NULL)
            jsonw_null(w, key);
        else
            FUZZ_CHECK(cJSON_IsNull(it), "null");
        break;
    default:
        count = fuzz_range(&g->seed, 0, 5);
        if (w != NULL) {
            if (kind == 5)
                jsonw_object_open(w, key);
            else
                jsonw_array_open(w, key);
        } else {
            FUZZ_CHECK(kind == 5 ? cJSON_IsObject(it) : cJSON_IsArray(it),
                "a container of the wrong type");
            FUZZ_CHECK(cJSON_GetArraySize(it) == (int)count,
                "%d members, %zu written", cJSON_GetArraySize(it), count);
        }
        c = it != NULL ? it->child : NULL;
        for (i = 0; i < count; i++) {
            kbuf = NULL;
            if (kind == 5) {
                s = fuzz_take(g, &n);
                kbuf = malloc(n + 1);
                memcpy(kbuf, s, n);
                kbuf[n] = '\0';     /* a key is a C string: cut at a NUL */
                want = fuzz_expect((const uint8_t *)kbuf, strlen(kbuf),
                    &valid);
                if (w != NULL)
                    g->compatible = g->compatible && valid;
                else
                    FUZZ_CHECK(c != NULL && c->string != NULL &&
                        strcmp(c->string, want) == 0, "key \"%s\"", want);
                free(want);
            }
            fuzz_value(g, w, c, kbuf, depth + 1);
            free(kbuf);
            if (c != NULL)
                c = c->next;
        }
        if (w != NULL) {
            if (kind == 5)
                jsonw_object_close(w);
            else
                jsonw_array_close(w);
        }
        break;
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_gen g = { .data = data, .size = size, .compatible = true };
    struct jsonw    w;
    cJSON          *doc;
    char           *again;
    size_t          len, i, n;

    g.seed = fuzz_hash(FUZZ_HASH_INIT, data, size < 8 ? size : 8);
    jsonw_init(&w);
    /* Always a container at the top, as every mcptop document. */
    jsonw_array_open(&w, NULL);
    fuzz_value(&g, &w, NULL, NULL, 0);
    fuzz_value(&g, &w, NULL, NULL, 0);
    jsonw_array_close(&w);
    FUZZ_CHECK(strlen(w.buf) == w.len, "a NUL inside the text");
    for (i = 0; i < w.len; i += n) {
        n = fuzz_utf8((const uint8_t *)w.buf + i, w.len - i);
        FUZZ_CHECK(n > 0, "invalid UTF-8 at byte %zu of the text", i);
    }
    doc = cJSON_ParseWithLength(w.buf, w.len);
    FUZZ_CHECK(doc != NULL, "cJSON cannot parse: %s", w.buf);
    FUZZ_CHECK(cJSON_GetArraySize(doc) == 2, "two values, not %d",
        cJSON_GetArraySize(doc));

    /* Again from the start: the same draws, checked against the tree. */
    g.seed = fuzz_hash(FUZZ_HASH_INIT, data, size < 8 ? size : 8);
    g.off = 0;
    fuzz_value(&g, NULL, doc->child, NULL, 0);
    fuzz_value(&g, NULL, doc->child->next, NULL, 0);

    if (g.compatible) {
        again = cJSON_PrintUnformatted(doc);
        FUZZ_CHECK(again != NULL && strcmp(again, w.buf) == 0,
            "cJSON prints\n%s\nthe writer wrote\n%s", again, w.buf);
        free(again);
    }
    cJSON_Delete(doc);
    free(jsonw_take(&w, &len));
    return 0;
}
