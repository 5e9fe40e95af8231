/*
 * The JSON writer (jsonw.h): one buffer grown by doubling, a bit per open
 * container for its first member, strings copied in runs between the
 * bytes that need work. It never reads past the n bytes it is given and
 * never writes a byte that is not valid UTF-8.
 */
#include "util/jsonw.h"

#include <stdlib.h>
#include <string.h>

#include "util/xmalloc.h"

/* Room for n more bytes and the NUL. */
static void
jsonw_reserve(struct jsonw *w, size_t n)
{
    size_t need = w->len + n + 1;

    if (need <= w->cap)
        return;
    if (w->cap == 0)
        w->cap = 256;
    while (w->cap < need)
        w->cap *= 2;
    w->buf = xrealloc(w->buf, w->cap);
}

static void
jsonw_put(struct jsonw *w, const char *s, size_t n)
{
    jsonw_reserve(w, n);
    memcpy(w->buf + w->len, s, n);
    w->len += n;
    w->buf[w->len] = '\0';
}

static void
jsonw_putc(struct jsonw *w, char c)
{
    jsonw_reserve(w, 1);
    w->buf[w->len++] = c;
    w->buf[w->len] = '\0';
}

void
jsonw_init(struct jsonw *w)
{
    memset(w, 0, sizeof(*w));
}

void
jsonw_done(struct jsonw *w)
{
    free(w->buf);
    jsonw_init(w);
}

void
jsonw_reset(struct jsonw *w)
{
    w->len = 0;
    w->depth = 0;
    w->empty = 0;
    if (w->buf != NULL)
        w->buf[0] = '\0';
}

char *
jsonw_take(struct jsonw *w, size_t *len)
{
    char *text;

    jsonw_reserve(w, 0);
    w->buf[w->len] = '\0';
    text = w->buf;
    if (len != NULL)
        *len = w->len;
    jsonw_init(w);
    return text;
}

/* What a byte of a string needs: 0 nothing, 1 an escape, 2 a look at its
 * UTF-8 character. */
static unsigned char
jsonw_class(unsigned char c)
{
    if (c >= 0x80)
        return 2;
    return c < 0x20 || c == '"' || c == '\\';
}

/* Length of the well-formed UTF-8 character at s (n > 0 bytes, s[0] >=
 * 0x80), 0 when s[0] does not start one (RFC 3629, section 4). */
static size_t
jsonw_utf8_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0], lo = 0x80, hi = 0xbf;
    size_t        len;

    if (c >= 0xc2 && c <= 0xdf)
        len = 2;
    else if (c >= 0xe0 && c <= 0xef)
        len = 3;
    else if (c >= 0xf0 && c <= 0xf4)
        len = 4;
    else
        return 0;
    if (c == 0xe0)
        lo = 0xa0;
    else if (c == 0xed)
        hi = 0x9f;      /* no surrogates */
    else if (c == 0xf0)
        lo = 0x90;
    else if (c == 0xf4)
        hi = 0x8f;      /* nothing above U+10FFFF */
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++) {
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    }
    return len;
}

/* The escape cJSON writes for c (a control, '"' or '\\'). */
static void
jsonw_escape(struct jsonw *w, unsigned char c)
{
    static const char hex[] = "0123456789abcdef";
    char              e[6] = { '\\', 0, 0, 0, 0, 0 };

    switch (c) {
    case '"':  e[1] = '"'; break;
    case '\\': e[1] = '\\'; break;
    case '\b': e[1] = 'b'; break;
    case '\f': e[1] = 'f'; break;
    case '\n': e[1] = 'n'; break;
    case '\r': e[1] = 'r'; break;
    case '\t': e[1] = 't'; break;
    default:
        e[1] = 'u';
        e[2] = '0';
        e[3] = '0';
        e[4] = hex[c >> 4];
        e[5] = hex[c & 0xf];
        jsonw_put(w, e, 6);
        return;
    }
    jsonw_put(w, e, 2);
}

/* A quoted string: runs that need nothing are copied whole; raw8: bytes
 * from 0x80 up need nothing either. */
static void
jsonw_quoted(struct jsonw *w, const char *str, size_t n, bool raw8)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t               i = 0, run;

    /* Most strings (keys, names, states) need nothing: one tight pass,
     * one copy. */
    while (i < n && s[i] >= 0x20 && s[i] != '"' && s[i] != '\\' &&
        (s[i] < 0x80 || raw8))
        i++;
    jsonw_reserve(w, n + 2);
    w->buf[w->len++] = '"';
    memcpy(w->buf + w->len, str, i);
    w->len += i;
    if (i == n) {
        w->buf[w->len++] = '"';
        w->buf[w->len] = '\0';
        return;
    }
    run = i;
    while (i < n) {
        unsigned char k = jsonw_class(s[i]);
        size_t        len;

        if (k == 0 || (k == 2 && raw8)) {
            i++;
            continue;
        }
        jsonw_put(w, str + run, i - run);
        if (k == 1) {
            jsonw_escape(w, s[i]);
            i++;
        } else if ((len = jsonw_utf8_len(s + i, n - i)) > 0) {
            jsonw_put(w, str + i, len);
            i += len;
        } else {
            jsonw_put(w, "\xef\xbf\xbd", 3);     /* U+FFFD */
            i++;
        }
        run = i;
    }
    jsonw_put(w, str + run, i - run);
    jsonw_putc(w, '"');
}

/* The comma before a member or element, and the member's key. */
static void
jsonw_sep(struct jsonw *w, const char *key)
{
    uint64_t bit = (uint64_t)1 << (w->depth & JSONW_MAX_DEPTH);

    if (w->depth > 0) {
        if (w->empty & bit)
            w->empty &= ~bit;
        else
            jsonw_putc(w, ',');
    }
    if (key != NULL) {
        jsonw_quoted(w, key, strlen(key), false);
        jsonw_putc(w, ':');
    }
}

static void
jsonw_open(struct jsonw *w, const char *key, char c)
{
    jsonw_sep(w, key);
    jsonw_putc(w, c);
    if (w->depth < JSONW_MAX_DEPTH)
        w->depth++;
    w->empty |= (uint64_t)1 << w->depth;
}

static void
jsonw_close(struct jsonw *w, char c)
{
    w->empty &= ~((uint64_t)1 << w->depth);
    if (w->depth > 0)
        w->depth--;
    jsonw_putc(w, c);
}

void
jsonw_object_open(struct jsonw *w, const char *key)
{
    jsonw_open(w, key, '{');
}

void
jsonw_object_close(struct jsonw *w)
{
    jsonw_close(w, '}');
}

void
jsonw_array_open(struct jsonw *w, const char *key)
{
    jsonw_open(w, key, '[');
}

void
jsonw_array_close(struct jsonw *w)
{
    jsonw_close(w, ']');
}

void
jsonw_string_n(struct jsonw *w, const char *key, const char *s, size_t n)
{
    jsonw_sep(w, key);
    jsonw_quoted(w, s, n, false);
}

void
jsonw_bytes(struct jsonw *w, const char *key, const char *s, size_t n)
{
    jsonw_sep(w, key);
    jsonw_quoted(w, s, n, true);
}

void
jsonw_string(struct jsonw *w, const char *key, const char *s)
{
    if (s == NULL) {
        jsonw_null(w, key);
        return;
    }
    jsonw_string_n(w, key, s, strlen(s));
}

/* The digits of v (sign included) at the end of buf; returns where they
 * start. buf has room for 21 bytes. */
static char *
jsonw_digits(char *end, int64_t v)
{
    /* The magnitude as unsigned: INT64_MIN has no positive int64. */
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    char    *p = end;

    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u > 0);
    if (v < 0)
        *--p = '-';
    return p;
}

void
jsonw_int(struct jsonw *w, const char *key, int64_t v)
{
    char  buf[24];
    char *p = jsonw_digits(buf + sizeof(buf), v);

    jsonw_sep(w, key);
    jsonw_put(w, p, (size_t)(buf + sizeof(buf) - p));
}

void
jsonw_tenths(struct jsonw *w, const char *key, int64_t tenths)
{
    char     buf[28];
    char    *stop = buf + sizeof(buf), *end = stop, *p;
    uint64_t u = tenths < 0 ? (uint64_t)0 - (uint64_t)tenths :
        (uint64_t)tenths;
    unsigned frac = (unsigned)(u % 10);

    if (frac != 0) {
        *--end = (char)('0' + frac);
        *--end = '.';
    }
    p = end;
    u /= 10;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u > 0);
    if (tenths < 0)         /* -0.5 keeps its sign */
        *--p = '-';
    jsonw_sep(w, key);
    jsonw_put(w, p, (size_t)(stop - p));
}

void
jsonw_bool(struct jsonw *w, const char *key, bool v)
{
    jsonw_sep(w, key);
    if (v)
        jsonw_put(w, "true", 4);
    else
        jsonw_put(w, "false", 5);
}

void
jsonw_null(struct jsonw *w, const char *key)
{
    jsonw_sep(w, key);
    jsonw_put(w, "null", 4);
}

void
jsonw_raw(struct jsonw *w, const char *s, size_t n)
{
    jsonw_put(w, s, n);
}
