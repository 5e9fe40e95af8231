/*
 * A small JSON writer: values appended to one growable buffer, in order,
 * with the commas and the escaping done here. It writes what
 * cJSON_PrintUnformatted writes for the same values (no spaces; the same
 * string escapes; integers and one-decimal values as cJSON prints them),
 * without building a tree and without a printf per number.
 *
 * Strings are untrusted: '"', '\\' and every control character below 0x20
 * are escaped as cJSON escapes them (\b \f \n \r \t, else \u00xx); each
 * byte that is not part of a well-formed UTF-8 character (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF) becomes U+FFFD.
 * cJSON copies such bytes through, which makes a text that is not JSON
 * (RFC 8259 §8.1); here the output is always valid UTF-8, and a string that
 * was valid UTF-8 parses back to exactly itself.
 *
 * Every function with a key writes a member of the object being written
 * (key NULL: an element of an array, or the top value). Nesting deeper
 * than JSONW_MAX_DEPTH is a programming error (the writer then stops
 * nesting commas correctly; nothing is read out of bounds).
 */
#ifndef MCPTOP_UTIL_JSONW_H
#define MCPTOP_UTIL_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSONW_MAX_DEPTH 63

struct jsonw {
    char     *buf;      /* NUL-terminated once anything was written */
    size_t    len;
    size_t    cap;
    unsigned  depth;
    uint64_t  empty;    /* bit d: the container at depth d has no member */
};

/* An empty writer (no allocation until the first write). */
void jsonw_init(struct jsonw *w);
/* Free the buffer; w is empty again. */
void jsonw_done(struct jsonw *w);
/* Forget what was written, keep the buffer for the next text. */
void jsonw_reset(struct jsonw *w);
/* The text written so far, NUL-terminated, and its length in *len (may be
 * NULL). Caller frees; w is empty again. Never NULL. */
char *jsonw_take(struct jsonw *w, size_t *len);

void jsonw_object_open(struct jsonw *w, const char *key);
void jsonw_object_close(struct jsonw *w);
void jsonw_array_open(struct jsonw *w, const char *key);
void jsonw_array_close(struct jsonw *w);

/* A string value (NULL writes null). */
void jsonw_string(struct jsonw *w, const char *key, const char *s);
/* A string of n bytes (any bytes; a NUL is escaped as \u0000). */
void jsonw_string_n(struct jsonw *w, const char *key, const char *s,
    size_t n);
/* A string of n bytes escaped as cJSON escapes them, bytes from 0x80 up
 * copied as they are, valid UTF-8 or not: for text that must reach a
 * server unchanged (a cursor it gave), where cJSON's bytes are the
 * contract. */
void jsonw_bytes(struct jsonw *w, const char *key, const char *s, size_t n);
/* An integer, in decimal. cJSON prints a double: the same digits up to
 * 10^15, beyond which cJSON rounds to 15 digits and this stays exact. */
void jsonw_int(struct jsonw *w, const char *key, int64_t v);
/* The value tenths / 10 with one decimal ("12.3"), or none when it is
 * whole ("12"): what cJSON prints for a double cut to one decimal. */
void jsonw_tenths(struct jsonw *w, const char *key, int64_t tenths);
void jsonw_bool(struct jsonw *w, const char *key, bool v);
void jsonw_null(struct jsonw *w, const char *key);
/* Raw bytes, as they are (a newline between lines of JSON Lines). Not a
 * value: no comma, no key. */
void jsonw_raw(struct jsonw *w, const char *s, size_t n);

#endif
