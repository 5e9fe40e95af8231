/*
 * The one place mcptop reads the wall clock. Deadlines never use it: they
 * are libev timers on the monotonic clock. Wall time only stamps records.
 */
#ifndef MCPTOP_UTIL_CLOCK_H
#define MCPTOP_UTIL_CLOCK_H

#include <stdint.h>

/* Wall-clock time in epoch milliseconds, for observed_at stamps. */
int64_t clock_wall_ms(void);
/* Monotonic milliseconds (CLOCK_MONOTONIC), for durations outside libev. */
int64_t clock_mono_ms(void);
/* Format epoch ms as RFC 3339 UTC with milliseconds into buf (>= 32 bytes). */
void clock_format_iso(int64_t epoch_ms, char *buf, unsigned long bufsz);

#endif
