/*
 * String helpers: heap formatting and copies, and the sanitizer that stands
 * between untrusted server text and the terminal. The sanitizer reads its
 * input as UTF-8 and writes one line of printable text: every C0 and C1
 * control, DEL and whole escape sequence (ESC, CSI, OSC and the other
 * string sequences, whether introduced by ESC, by a UTF-8 encoded C1 code
 * or by a raw 8-bit C1 byte) is dropped, each byte that is not part of a
 * valid UTF-8 character becomes '?', and a tab becomes a space. Output is
 * never longer than input, never runs past the caller's buffer and never
 * ends in half a character. Nothing here may write a control byte out.
 */
#define _XOPEN_SOURCE 700   /* wcwidth */

#include "util/str.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "util/xmalloc.h"

/* printf into a fresh heap string; NULL only when vsnprintf itself fails. */
char *
str_vprintf(const char *fmt, va_list ap)
{
    va_list ap2;
    char   *p;
    int     n;

    va_copy(ap2, ap);
    n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return NULL;
    p = xmalloc((size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    return p;
}

/* Variadic front of str_vprintf. */
char *
str_printf(const char *fmt, ...)
{
    va_list ap;
    char   *p;

    va_start(ap, fmt);
    p = str_vprintf(fmt, ap);
    va_end(ap);
    return p;
}

/* Heap copy of s, or NULL for NULL. */
char *
str_dup(const char *s)
{
    if (s == NULL)
        return NULL;
    return xstrdup(s);
}

/* See str.h. */
void
str_wipe_free(char *s)
{
    if (s == NULL)
        return;
    explicit_bzero(s, strlen(s));
    free(s);
}

/* Heap copy of the first n bytes of s (fewer if a NUL comes first). */
char *
str_ndup(const char *s, size_t n)
{
    char *p;

    if (s == NULL)
        return NULL;
    n = strnlen(s, n);
    p = xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

/* Length (1-4) of the valid UTF-8 character at s, 0 if it is not one. */
static size_t
str_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    uint32_t v;
    uint32_t min;
    size_t   len;
    size_t   k;

    if (s[0] >= 0xc2 && s[0] <= 0xdf) {
        len = 2;
        min = 0x80;
        v = s[0] & 0x1f;
    } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
        len = 3;
        min = 0x800;
        v = s[0] & 0x0f;
    } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
        len = 4;
        min = 0x10000;
        v = s[0] & 0x07;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (k = 1; k < len; k++) {
        if ((s[k] & 0xc0) != 0x80)
            return 0;
        v = (v << 6) | (s[k] & 0x3f);
    }
    /* Overlong forms, surrogates and code points past Unicode. */
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return len;
}

/* Index just past a CSI body starting at s[j]; stops early if malformed. */
static size_t
str_skip_csi(const unsigned char *s, size_t n, size_t j)
{
    while (j < n) {
        unsigned char c = s[j];

        if (c >= 0x40 && c <= 0x7e)
            return j + 1;               /* final byte */
        /* CAN, SUB and ESC abort; a non-ASCII byte cannot belong. */
        if (c == 0x18 || c == 0x1a || c == 0x1b || c >= 0x80)
            return j;
        j++;                            /* parameter, intermediate, C0 */
    }
    return n;
}

/*
 * Index just past an OSC/DCS/SOS/PM/APC body starting at s[j]. It ends at
 * BEL, ESC \, a UTF-8 encoded ST, or (raw8: the introducer was a raw 8-bit
 * byte) a raw ST byte. Any other ESC aborts it and is read again.
 */
static size_t
str_skip_string(const unsigned char *s, size_t n, size_t j, bool raw8)
{
    while (j < n) {
        unsigned char c = s[j];

        if (c == 0x07 || c == 0x18 || c == 0x1a)
            return j + 1;
        if (c == 0x1b) {
            if (j + 1 < n && s[j + 1] == '\\')
                return j + 2;
            return j;
        }
        if (c == 0xc2 && j + 1 < n && s[j + 1] == 0x9c)
            return j + 2;
        if (raw8 && c == 0x9c)
            return j + 1;
        j++;
    }
    return n;
}

/* Index just past the escape sequence whose ESC is at s[i]. */
static size_t
str_skip_esc(const unsigned char *s, size_t n, size_t i)
{
    size_t        j = i + 1;
    unsigned char c;

    if (j >= n)
        return n;
    c = s[j];
    switch (c) {
    case '[':
        return str_skip_csi(s, n, j + 1);
    case ']':                           /* OSC */
    case 'P':                           /* DCS */
    case 'X':                           /* SOS */
    case '^':                           /* PM */
    case '_':                           /* APC */
        return str_skip_string(s, n, j + 1, false);
    default:
        break;
    }
    if (c >= 0x20 && c <= 0x2f) {
        /* Intermediates then one final byte, as in ESC ( B. */
        while (j < n && s[j] >= 0x20 && s[j] <= 0x2f)
            j++;
        if (j < n && s[j] >= 0x30 && s[j] <= 0x7e)
            j++;
        return j;
    }
    if (c >= 0x30 && c <= 0x7e)
        return j + 1;                   /* two-byte sequence */
    return j;                           /* lone ESC: read c normally */
}

/* Index past the C1 control cp (already consumed up to s[j]) and its body. */
static size_t
str_skip_c1(const unsigned char *s, size_t n, size_t j, uint32_t cp)
{
    switch (cp) {
    case 0x9b:
        return str_skip_csi(s, n, j);
    case 0x90:
    case 0x98:
    case 0x9d:
    case 0x9e:
    case 0x9f:
        return str_skip_string(s, n, j, false);
    default:
        return j;
    }
}

/* Sanitize src into dst; see str.h. */
size_t
str_sanitize(char *dst, size_t dstsz, const char *src, size_t srclen)
{
    const unsigned char *s = (const unsigned char *)src;
    size_t               room;
    size_t               out = 0;
    size_t               i = 0;

    if (dstsz == 0)
        return 0;
    if (s == NULL)
        srclen = 0;
    room = dstsz - 1;
    while (i < srclen) {
        unsigned char c = s[i];
        uint32_t      cp = 0;
        size_t        len;
        size_t        k;

        if (c == 0x1b) {
            i = str_skip_esc(s, srclen, i);
            continue;
        }
        if (c == '\t') {
            if (out + 1 > room)
                break;
            dst[out++] = ' ';
            i++;
            continue;
        }
        if (c < 0x20 || c == 0x7f) {
            i++;
            continue;
        }
        if (c < 0x80) {
            if (out + 1 > room)
                break;
            dst[out++] = (char)c;
            i++;
            continue;
        }
        len = str_utf8_decode(s + i, srclen - i, &cp);
        if (len == 0) {
            /* Not UTF-8: a raw 8-bit CSI or OSC still opens a sequence. */
            if (c == 0x9b) {
                i = str_skip_csi(s, srclen, i + 1);
                continue;
            }
            if (c == 0x9d) {
                i = str_skip_string(s, srclen, i + 1, true);
                continue;
            }
            if (out + 1 > room)
                break;
            dst[out++] = '?';
            i++;
            continue;
        }
        if (cp >= 0x80 && cp <= 0x9f) {
            i = str_skip_c1(s, srclen, i + len, cp);
            continue;
        }
        if ((cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
            cp == 0x200e || cp == 0x200f || cp == 0x061c) {
            /* Bidirectional overrides and marks: they reorder what the
             * terminal shows around them (a name could read as another). */
            i += len;
            continue;
        }
        if (len > room - out)
            break;                      /* never half a character */
        /* Byte by byte: out <= i, so this is safe even when dst == src. */
        for (k = 0; k < len; k++)
            dst[out++] = (char)s[i + k];
        i += len;
    }
    dst[out] = '\0';
    return out;
}

/* Heap copy of src, sanitized; NULL for NULL. Never longer than src. */
char *
str_sanitized(const char *src)
{
    size_t n;
    char  *p;

    if (src == NULL)
        return NULL;
    n = strlen(src);
    p = xmalloc(n + 1);
    str_sanitize(p, n + 1, src, n);
    return p;
}

/* True for a non-empty run of bytes in 0x21-0x7E. */
bool
str_is_visible_ascii(const char *s, size_t len)
{
    size_t i;

    if (s == NULL || len == 0)
        return false;
    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];

        if (c < 0x21 || c > 0x7e)
            return false;
    }
    return true;
}

size_t
str_char_cols(const char *s, size_t len, int *cols)
{
    mbstate_t st;
    wchar_t   wc;
    size_t    n;
    int       w;

    memset(&st, 0, sizeof(st));
    n = mbrtowc(&wc, s, len, &st);
    if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
        *cols = 1;
        return 1;
    }
    w = wcwidth(wc);
    *cols = w < 0 ? 1 : w;
    return n;
}
