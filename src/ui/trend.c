/*
 * Trends: see include/ui/trend.h. The scale is a nice number (1, 2, 5 x
 * 10^k) so the title reads "TREND <=200ms", not "<=187.3ms", and the bars
 * of every row are drawn on the same scale.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ui/trend.h"

static const char *const trend_utf8[TREND_LEVELS] = {
    "\xe2\x96\x81", "\xe2\x96\x82", "\xe2\x96\x83", "\xe2\x96\x84",
    "\xe2\x96\x85", "\xe2\x96\x86", "\xe2\x96\x87", "\xe2\x96\x88",
};                                          /* ▁▂▃▄▅▆▇█ */
static const char *const trend_ascii[TREND_LEVELS] = {
    "_", ".", "-", "=", "+", "*", "#", "@",
};

const char *
trend_glyph(int level, bool utf8)
{
    if (level < 0)
        level = 0;
    if (level >= TREND_LEVELS)
        level = TREND_LEVELS - 1;
    return utf8 ? trend_utf8[level] : trend_ascii[level];
}

const char *
trend_gap(bool utf8)
{
    return utf8 ? "\xc2\xb7" : "x";         /* · */
}

double
trend_scale(double max)
{
    double p;

    if (!(max > 0) || !isfinite(max))
        return 0;
    p = pow(10, floor(log10(max)));
    /* Rounding in log10 may leave p a hair off a power of ten. */
    if (p * 10 <= max)
        p *= 10;
    if (p > max * (1 + 1e-9))
        p /= 10;
    if (max <= p * (1 + 1e-9))
        return p;
    if (max <= 2 * p * (1 + 1e-9))
        return 2 * p;
    if (max <= 5 * p * (1 + 1e-9))
        return 5 * p;
    return 10 * p;
}

int
trend_level(double v, double scale)
{
    double l;

    if (!(scale > 0) || !(v > 0))
        return 0;
    l = ceil(v / scale * TREND_LEVELS - 1e-9) - 1;
    if (l < 0)
        return 0;
    if (l > TREND_LEVELS - 1)
        return TREND_LEVELS - 1;
    return (int)l;
}

void
trend_scale_text(char *buf, size_t n, double scale_ms)
{
    if (scale_ms >= 1000)
        snprintf(buf, n, "%gs", scale_ms / 1000);
    else
        snprintf(buf, n, "%gms", scale_ms);
}

void
trend_fleet_sample(struct trend_fleet *f, int64_t now_ms, size_t ok,
    size_t total)
{
    int64_t  b = now_ms / TREND_FLEET_BUCKET_MS;
    uint32_t o = ok > UINT32_MAX ? UINT32_MAX : (uint32_t)ok;
    uint32_t t = total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;

    if (f->len > 0 && b < f->bucket)
        f->len = 0;             /* the clock went back: start again */
    if (f->len == 0) {
        f->bucket = b;
        f->head = 0;
        f->len = 1;
        f->ok[0] = o;
        f->total[0] = t;
        return;
    }
    if (b == f->bucket) {
        if (o < f->ok[f->head])
            f->ok[f->head] = o;
        f->total[f->head] = t;
        return;
    }
    /* Buckets with no sample repeat the last value (at most a ring's
     * worth of them). */
    {
        int64_t  gap = b - f->bucket - 1;
        uint32_t last_ok = f->ok[f->head], last_total = f->total[f->head];

        if (gap > TREND_FLEET_BUCKETS)
            gap = TREND_FLEET_BUCKETS;
        for (int64_t i = 0; i < gap; i++) {
            f->head = (f->head + 1) % TREND_FLEET_BUCKETS;
            f->ok[f->head] = last_ok;
            f->total[f->head] = last_total;
            if (f->len < TREND_FLEET_BUCKETS)
                f->len++;
        }
    }
    f->head = (f->head + 1) % TREND_FLEET_BUCKETS;
    f->ok[f->head] = o;
    f->total[f->head] = t;
    if (f->len < TREND_FLEET_BUCKETS)
        f->len++;
    f->bucket = b;
}

void
trend_fleet_get(const struct trend_fleet *f, size_t i, size_t *ok,
    size_t *total)
{
    size_t slot;

    if (i >= f->len) {
        *ok = *total = 0;
        return;
    }
    slot = (f->head + TREND_FLEET_BUCKETS - (f->len - 1 - i)) %
        TREND_FLEET_BUCKETS;
    *ok = f->ok[slot];
    *total = f->total[slot];
}
