/*
 * The debug log (`--log FILE`): one line per event, stamped with the wall
 * clock, prefixed with the sanitized name of the server it concerns. What
 * goes in: methods, statuses, timings, kinds. Never a header value, a
 * session id or an expanded secret: callers pass only such text.
 */
#ifndef MCPTOP_UTIL_DLOG_H
#define MCPTOP_UTIL_DLOG_H

#include <stdarg.h>
#include <stdio.h>

/* Append one line "TS WHO: TEXT" to f and flush it. f NULL does nothing. */
void dlog(FILE *f, const char *who, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void dlogv(FILE *f, const char *who, const char *fmt, va_list ap);

#endif
