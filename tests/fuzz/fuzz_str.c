/*
 * The sanitizer every piece of server text passes through before it is
 * shown (src/util/str.c), and the helpers the header code uses on a value
 * (str_ndup, str_is_visible_ascii), over arbitrary bytes.
 *
 * Checked, for buffer sizes drawn from the input's hash (0, 1, tiny, exact
 * and roomy, each in its own heap block so ASan sees one byte past it):
 *  - str_sanitize never writes past dstsz, NUL-terminates, returns the
 *    length it wrote, and writes no more than srclen bytes;
 *  - the output holds no C0 control (a tab became a space), no DEL, no ESC,
 *    no C1 control (neither raw 0x80-0x9f bytes outside a UTF-8 character
 *    nor U+0080-U+009F), no bidi control (U+202A-U+202E, U+2066-U+2069,
 *    U+200E, U+200F, U+061C), is valid UTF-8 and never ends in half a
 *    character;
 *  - a smaller buffer gives a prefix of what a roomy one gives;
 *  - sanitizing is idempotent, and sanitizing in place (dst == src) gives
 *    the same text;
 *  - str_sanitized agrees with str_sanitize up to the first NUL;
 *  - str_is_visible_ascii is true exactly for non-empty runs of 0x21-0x7e;
 *  - str_ndup copies up to n bytes or the first NUL.
 */
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "util/str.h"

/* Length of the valid UTF-8 character at s (n bytes left), 0 if none;
 * *cp gets its code point. Written apart from str.c on purpose. */
static size_t
fuzz_utf8(const unsigned char *s, size_t n, unsigned long *cp)
{
    size_t        len;
    size_t        k;
    unsigned long v;

    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    if ((s[0] & 0xe0) == 0xc0) {
        len = 2;
        v = s[0] & 0x1f;
    } else if ((s[0] & 0xf0) == 0xe0) {
        len = 3;
        v = s[0] & 0x0f;
    } else if ((s[0] & 0xf8) == 0xf0) {
        len = 4;
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
    if ((len == 2 && v < 0x80) || (len == 3 && v < 0x800)
        || (len == 4 && v < 0x10000) || v > 0x10ffff
        || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return len;
}

/* The sanitizer's promise about its output (n bytes, NUL at n). */
static void
fuzz_str_clean(const char *out, size_t n)
{
    const unsigned char *s = (const unsigned char *)out;
    unsigned long        cp;
    size_t               i = 0;
    size_t               len;

    FUZZ_CHECK(out[n] == '\0', "not NUL-terminated at %zu", n);
    FUZZ_CHECK(strlen(out) == n, "a NUL inside the output");
    while (i < n) {
        len = fuzz_utf8(s + i, n - i, &cp);
        FUZZ_CHECK(len > 0, "invalid UTF-8 (or half a character) at %zu: "
            "0x%02x", i, s[i]);
        FUZZ_CHECK(cp >= 0x20 && cp != 0x7f, "control U+%04lX at %zu", cp, i);
        FUZZ_CHECK(!(cp >= 0x80 && cp <= 0x9f), "C1 control U+%04lX at %zu",
            cp, i);
        FUZZ_CHECK(!((cp >= 0x202a && cp <= 0x202e)
            || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e || cp == 0x200f
            || cp == 0x061c), "bidi control U+%04lX at %zu", cp, i);
        i += len;
    }
}

/* Sanitize into a heap block of exactly dstsz bytes; returns the text. */
static char *
fuzz_str_into(const uint8_t *data, size_t size, size_t dstsz, size_t *n)
{
    char *dst = malloc(dstsz > 0 ? dstsz : 1);

    *n = str_sanitize(dstsz > 0 ? dst : NULL, dstsz, (const char *)data,
        size);
    if (dstsz == 0) {
        FUZZ_CHECK(*n == 0, "wrote %zu bytes into a 0-byte buffer", *n);
        dst[0] = '\0';
        return dst;
    }
    FUZZ_CHECK(*n < dstsz, "returned %zu for a %zu-byte buffer", *n, dstsz);
    FUZZ_CHECK(*n <= size, "output %zu longer than input %zu", *n, size);
    fuzz_str_clean(dst, *n);
    return dst;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t gen = fuzz_hash(FUZZ_HASH_INIT, data, size);
    char    *full;
    char    *part;
    char    *again;
    char    *copy;
    char    *heap;
    size_t   nfull;
    size_t   npart;
    size_t   nagain;
    size_t   ncopy;
    size_t   i;
    size_t   sizes[4];
    size_t   k;
    bool     visible;

    full = fuzz_str_into(data, size, size + 1, &nfull);

    sizes[0] = 0;
    sizes[1] = 1;
    sizes[2] = fuzz_range(&gen, 2, 8);
    sizes[3] = fuzz_range(&gen, 1, size + 1);
    for (k = 0; k < 4; k++) {
        part = fuzz_str_into(data, size, sizes[k], &npart);
        FUZZ_CHECK(npart <= nfull && memcmp(part, full, npart) == 0,
            "a %zu-byte buffer is not a prefix of the full output",
            sizes[k]);
        free(part);
    }

    /* Idempotent: clean text passes through unchanged. */
    again = fuzz_str_into((const uint8_t *)full, nfull, nfull + 1, &nagain);
    FUZZ_CHECK(nagain == nfull && memcmp(again, full, nfull) == 0,
        "sanitizing twice changed the text");
    free(again);

    /* In place, as callers may do. */
    copy = malloc(size + 1);
    memcpy(copy, data, size);
    copy[size] = '\0';
    ncopy = str_sanitize(copy, size + 1, copy, size);
    FUZZ_CHECK(ncopy == nfull && memcmp(copy, full, nfull + 1) == 0,
        "sanitizing in place differs");
    free(copy);

    /* The heap flavour reads up to the first NUL. */
    copy = malloc(size + 1);
    memcpy(copy, data, size);
    copy[size] = '\0';
    heap = str_sanitized(copy);
    part = fuzz_str_into(data, strlen(copy), strlen(copy) + 1, &npart);
    FUZZ_CHECK(strcmp(heap, part) == 0, "str_sanitized differs");
    free(part);
    free(heap);

    /* The header helpers: a value copied up to a NUL, then judged. */
    k = fuzz_range(&gen, 0, size);
    heap = str_ndup(copy, k);
    FUZZ_CHECK(strlen(heap) == strnlen(copy, k), "str_ndup length");
    FUZZ_CHECK(memcmp(heap, copy, strlen(heap)) == 0, "str_ndup bytes");
    free(heap);
    visible = size > 0;
    for (i = 0; i < size; i++)
        visible = visible && data[i] >= 0x21 && data[i] <= 0x7e;
    FUZZ_CHECK(str_is_visible_ascii((const char *)data, size) == visible,
        "str_is_visible_ascii disagrees");
    free(copy);
    free(full);
    return 0;
}
