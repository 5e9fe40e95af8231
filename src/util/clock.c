/*
 * Clock reads. Only observed_at stamps use the wall clock; every deadline in
 * the engine is a libev timer and never calls into this file.
 */
#include "util/clock.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

int64_t
clock_wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
clock_mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The last second formatted ("YYYY-MM-DDTHH:MM:SS."): lines come many a
 * second, and gmtime_r with a printf cost more than the rest of a line. */
static int64_t clock_iso_sec = -1;
static char    clock_iso_prefix[32];
static size_t  clock_iso_len;

void
clock_format_iso(int64_t epoch_ms, char *buf, unsigned long bufsz)
{
    time_t    secs = (time_t)(epoch_ms / 1000);
    struct tm tm;
    int       ms = (int)(epoch_ms % 1000);
    int       n;

    if (epoch_ms >= 0 && bufsz >= clock_iso_len + 5 &&
        epoch_ms / 1000 == clock_iso_sec) {
        memcpy(buf, clock_iso_prefix, clock_iso_len);
        buf[clock_iso_len] = (char)('0' + ms / 100);
        buf[clock_iso_len + 1] = (char)('0' + ms / 10 % 10);
        buf[clock_iso_len + 2] = (char)('0' + ms % 10);
        buf[clock_iso_len + 3] = 'Z';
        buf[clock_iso_len + 4] = '\0';
        return;
    }
    gmtime_r(&secs, &tm);
    snprintf(buf, bufsz, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
        tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
        tm.tm_sec, ms);
    n = snprintf(clock_iso_prefix, sizeof(clock_iso_prefix),
        "%04d-%02d-%02dT%02d:%02d:%02d.", tm.tm_year + 1900, tm.tm_mon + 1,
        tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    if (epoch_ms >= 0 && n > 0 && (size_t)n < sizeof(clock_iso_prefix)) {
        clock_iso_sec = epoch_ms / 1000;
        clock_iso_len = (size_t)n;
    }
}
