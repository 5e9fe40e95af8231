/*
 * Clock reads. Only observed_at stamps use the wall clock; every deadline in
 * the engine is a libev timer and never calls into this file.
 */
#include "util/clock.h"

#include <stdio.h>
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

void
clock_format_iso(int64_t epoch_ms, char *buf, unsigned long bufsz)
{
    time_t    secs = (time_t)(epoch_ms / 1000);
    struct tm tm;

    gmtime_r(&secs, &tm);
    snprintf(buf, bufsz, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
        tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
        tm.tm_sec, (int)(epoch_ms % 1000));
}
