/*
 * The server's own words in an HTTP body: a sentence that is not markup,
 * or a page's <title>, made safe to show. Every byte read here is
 * untrusted: nothing is kept, the scan is linear and bounded (the first
 * 64 KiB), and what comes out went through str_sanitize.
 */
#include "io/http_words.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/str.h"
#include "util/xmalloc.h"

#define HTTP_WORDS_SCAN  (64 * 1024)   /* bytes of a body looked at */
#define HTTP_WORDS_TAKE  4096          /* bytes of a text cleaned */
#define HTTP_WORDS_PROBE 1024          /* bytes judged for binary */

static bool
http_words_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' ||
        c == '\v';
}

/* A NUL, or more than one byte in eight a control character (ESC aside:
 * a colored sentence is still a sentence): binary. */
static bool
http_words_binary(const unsigned char *p, size_t n)
{
    size_t ctrl = 0;

    if (n > HTTP_WORDS_PROBE)
        n = HTTP_WORDS_PROBE;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == 0)
            return true;
        if ((p[i] < 0x20 && p[i] != 0x1b && !http_words_space(p[i])) ||
            p[i] == 0x7f)
            ctrl++;
    }
    return ctrl * 8 > n;
}

/*
 * src (srclen bytes) into out (size n): white space folded, sanitized,
 * trimmed, at most max characters and n - 1 bytes, "..." after a cut
 * (at a word's end when one is near).
 * false when nothing is left.
 */
static bool
http_words_clean(const char *src, size_t srclen, char *out, size_t n,
    size_t max)
{
    char  *spaced, *clean;
    size_t len, o = 0, chars = 0, i = 0;
    bool   cut = false, pending = false;

    out[0] = '\0';
    if (n < 5)
        return false;
    if (srclen > HTTP_WORDS_TAKE)
        srclen = HTTP_WORDS_TAKE;
    spaced = xmalloc(srclen + 1);
    clean = xmalloc(srclen + 1);
    for (size_t k = 0; k < srclen; k++)
        spaced[k] = http_words_space((unsigned char)src[k]) ? ' ' : src[k];
    len = str_sanitize(clean, srclen + 1, spaced, srclen);
    while (i < len) {
        unsigned char c = (unsigned char)clean[i];
        size_t        clen = 1;

        if (c == ' ') {
            pending = o > 0;
            i++;
            continue;
        }
        while (i + clen < len && ((unsigned char)clean[i + clen] & 0xc0) ==
            0x80)
            clen++;
        if (chars + (pending ? 1 : 0) + 1 > max ||
            o + (pending ? 1 : 0) + clen + 3 > n - 1) {
            cut = true;
            break;
        }
        if (pending) {
            out[o++] = ' ';
            chars++;
            pending = false;
        }
        memcpy(out + o, clean + i, clen);
        o += clen;
        chars++;
        i += clen;
    }
    if (cut && o > 0) {
        /* At the last word's end, when one ended not long before. */
        for (size_t k = o; k > 0 && o - k < 24; k--) {
            if (out[k - 1] == ' ') {
                o = k - 1;
                break;
            }
        }
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
    free(spaced);
    free(clean);
    return o > 0;
}

/* Where s (case-insensitive) starts in p[0..n), or NULL. */
static const char *
http_words_find(const char *p, size_t n, const char *s)
{
    size_t k = strlen(s);

    for (size_t i = 0; i + k <= n; i++) {
        if (p[i] == s[0] && strncasecmp(p + i, s, k) == 0)
            return p + i;
    }
    return NULL;
}

/* A few character references a title may carry, into out (as long as
 * src at most). */
static size_t
http_words_unescape(const char *src, size_t n, char *out)
{
    static const struct {
        const char *ref;
        char        c;
    } refs[] = {
        { "&amp;", '&' }, { "&lt;", '<' }, { "&gt;", '>' },
        { "&quot;", '"' }, { "&#39;", '\'' }, { "&apos;", '\'' },
        { "&nbsp;", ' ' }, { "&#x27;", '\'' },
    };
    size_t o = 0;

    for (size_t i = 0; i < n; i++) {
        bool done = false;

        for (size_t r = 0; src[i] == '&' && r < sizeof(refs) /
            sizeof(refs[0]); r++) {
            size_t k = strlen(refs[r].ref);

            if (i + k <= n && strncasecmp(src + i, refs[r].ref, k) == 0) {
                out[o++] = refs[r].c;
                i += k - 1;
                done = true;
                break;
            }
        }
        if (!done)
            out[o++] = src[i];
    }
    return o;
}

/* The <title> of markup p[0..n) into out; false when it has none. */
static bool
http_words_title(const char *p, size_t n, char *out, size_t on, size_t max)
{
    const char *t = http_words_find(p, n, "<title");
    const char *end = p + n, *open, *close;
    char       *text;
    size_t      len;
    bool        ok;

    if (t == NULL)
        return false;
    open = t + 6;
    if (open < end && *open != '>' && !http_words_space((unsigned char)*open))
        return false;
    open = memchr(open, '>', (size_t)(end - open));
    if (open == NULL)
        return false;
    open++;
    close = http_words_find(open, (size_t)(end - open), "</title");
    if (close == NULL)
        close = memchr(open, '<', (size_t)(end - open));
    if (close == NULL)
        close = end;
    len = (size_t)(close - open);
    if (len > HTTP_WORDS_TAKE)
        len = HTTP_WORDS_TAKE;
    text = xmalloc(len + 1);
    len = http_words_unescape(open, len, text);
    ok = http_words_clean(text, len, out, on, max);
    free(text);
    return ok;
}

enum http_words_kind
http_words(const char *body, size_t len, const char *content_type,
    char *out, size_t n, size_t max)
{
    const unsigned char *p = (const unsigned char *)body;
    size_t               i = 0;

    if (n > 0)
        out[0] = '\0';
    if (body == NULL || len == 0 || n == 0)
        return HTTP_WORDS_NONE;
    if (content_type != NULL && (strncasecmp(content_type,
        "application/json", 16) == 0 || http_words_find(content_type,
        strlen(content_type), "+json") != NULL))
        return HTTP_WORDS_NONE;
    if (len > HTTP_WORDS_SCAN)
        len = HTTP_WORDS_SCAN;
    if (len >= 3 && p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf)
        i = 3;                          /* a UTF-8 byte order mark */
    while (i < len && http_words_space(p[i]))
        i++;
    if (i == len || p[i] == '{' || p[i] == '[' ||
        http_words_binary(p + i, len - i))
        return HTTP_WORDS_NONE;
    if (p[i] == '<')
        return http_words_title(body + i, len - i, out, n,
            max < HTTP_WORDS_TITLE ? max : HTTP_WORDS_TITLE) ?
            HTTP_WORDS_TITLED : HTTP_WORDS_PAGE;
    return http_words_clean(body + i, len - i, out, n,
        max < HTTP_WORDS_MAX ? max : HTTP_WORDS_MAX) ? HTTP_WORDS_TEXT :
        HTTP_WORDS_NONE;
}

size_t
http_words_append(char *detail, size_t dsz, size_t off, size_t reserve,
    const char *body, size_t len, const char *content_type)
{
    static const size_t frame = 24;     /* `; an HTML page titled ""` */
    char                words[HTTP_WORDS_MAX * 4 + 8];
    size_t              room, wn;
    int                 k = 0;

    if (off + reserve + frame + 8 >= dsz)
        return off;
    room = dsz - off - reserve - frame;
    wn = room < sizeof(words) ? room : sizeof(words);
    switch (http_words(body, len, content_type, words, wn, HTTP_WORDS_MAX)) {
    case HTTP_WORDS_TEXT:
        k = snprintf(detail + off, dsz - off, "; the server says \"%s\"",
            words);
        break;
    case HTTP_WORDS_TITLED:
        k = snprintf(detail + off, dsz - off, "; an HTML page titled "
            "\"%s\"", words);
        break;
    case HTTP_WORDS_PAGE:
        k = snprintf(detail + off, dsz - off, "; an HTML page");
        break;
    case HTTP_WORDS_NONE:
        break;
    }
    if (k < 0)
        return off;
    off += (size_t)k;
    return off < dsz ? off : dsz - 1;
}
