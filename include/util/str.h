/*
 * Small string helpers shared by the engine and the UI: formatted
 * allocation, bounded copies and the sanitizer that every piece of
 * server-provided text passes through before it is shown.
 */
#ifndef MCPTOP_UTIL_STR_H
#define MCPTOP_UTIL_STR_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/* A name=value pair (a header, an environment variable). value may be a
 * secret: never shown. */
struct str_kv {
    char *name;
    char *value;
};

/* printf into a fresh heap string. Caller frees. NULL only on OOM. */
char *str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* vprintf flavour of str_printf. Caller frees. */
char *str_vprintf(const char *fmt, va_list ap);
/* strdup that accepts NULL (returns NULL). Caller frees. */
char *str_dup(const char *s);
/* Copy at most n bytes of s into a fresh NUL-terminated string. */
char *str_ndup(const char *s, size_t n);
/* Overwrite a string that may hold a secret (explicit_bzero, which the
 * compiler may not drop), then free it. NULL is a no-op. */
void str_wipe_free(char *s);

/*
 * Copy untrusted text into dst (size dstsz, always NUL-terminated), dropping
 * C0/C1 control characters, DEL and whole ESC/CSI/OSC sequences, and
 * replacing invalid UTF-8 bytes with '?'. Tabs become one space. Returns the
 * length written. Used on every server-provided string before display.
 */
size_t str_sanitize(char *dst, size_t dstsz, const char *src, size_t srclen);
/* Heap flavour of str_sanitize for a NUL-terminated src. Caller frees. */
char *str_sanitized(const char *src);

/* True when every byte of s is visible ASCII (0x21-0x7E) and s is non-empty. */
bool str_is_visible_ascii(const char *s, size_t len);
/* One character at s (len > 0 bytes left) under the current LC_CTYPE:
 * returns its length in bytes and puts its display columns in *cols; an
 * invalid or unprintable character counts one byte, one column. */
size_t str_char_cols(const char *s, size_t len, int *cols);

#endif
