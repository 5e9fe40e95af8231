/*
 * The debug log writer. It reads the wall clock only to stamp lines.
 */
#include "util/dlog.h"

#include "util/clock.h"

void
dlogv(FILE *f, const char *who, const char *fmt, va_list ap)
{
    char ts[40];

    if (f == NULL)
        return;
    clock_format_iso(clock_wall_ms(), ts, sizeof(ts));
    fprintf(f, "%s %s: ", ts, who);
    vfprintf(f, fmt, ap);
    fputc('\n', f);
    fflush(f);
}

void
dlog(FILE *f, const char *who, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    dlogv(f, who, fmt, ap);
    va_end(ap);
}
