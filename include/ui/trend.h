/*
 * Trends (issue 34): the round-trip sparkline of a table row (TREND) and
 * the fleet's ok graph in the header. Pure arithmetic and glyphs: no
 * terminal, no engine state, no allocation. The row's samples are read
 * from the engine's history ring (server_history) at draw time; the
 * fleet's graph keeps its own ring of ten-second buckets.
 */
#ifndef MCPTOP_UI_TREND_H
#define MCPTOP_UI_TREND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TREND_LEVELS 8          /* bar heights: ▁▂▃▄▅▆▇█ */
#define TREND_SAMPLES 32        /* the most round trips a TREND cell shows */
#define TREND_FLEET_BUCKETS 60  /* the header graph's ring: ten minutes... */
#define TREND_FLEET_BUCKET_MS 10000     /* ...of ten-second buckets */

/* The glyph of bar level (0 lowest .. TREND_LEVELS - 1 full; clamped):
 * a block element in UTF-8, "_.-=+*#@" in ASCII. Static. */
const char *trend_glyph(int level, bool utf8);
/* The mark of a failed exchange (no round trip): "·", ASCII "x". */
const char *trend_gap(bool utf8);
/* The scale for values up to max: the smallest 1, 2 or 5 x 10^k that is
 * >= max (max 87 gives 100, 0.3 gives 0.5); 0 when max <= 0. ms. */
double trend_scale(double max);
/* The bar level of v (ms) on [0, scale]: ceil(v / scale x 8) - 1, clamped
 * to 0 .. TREND_LEVELS - 1 (so any v > 0 shows at least the lowest bar,
 * and v >= scale the full one); 0 when scale <= 0. */
int trend_level(double v, double scale);
/* The scale as text for the column's title: "120ms", "0.5ms", "2s". */
void trend_scale_text(char *buf, size_t n, double scale_ms);
/* The fleet's ok count over the last ten minutes: one bucket per ten
 * seconds, each the fewest servers ok seen in it (a dip is not hidden by
 * a recovery in the same bucket), and the fleet's size then. */
struct trend_fleet {
    int64_t  bucket;            /* the newest bucket (epoch ms / BUCKET_MS) */
    uint32_t ok[TREND_FLEET_BUCKETS];
    uint32_t total[TREND_FLEET_BUCKETS];
    size_t   head;              /* the newest bucket's slot */
    size_t   len;               /* buckets held, 0 .. TREND_FLEET_BUCKETS */
};

/*
 * A sample at now_ms: ok servers of total. A new bucket starts every
 * TREND_FLEET_BUCKET_MS; buckets skipped (no sample in them: nothing
 * changed, the screen was not drawn) repeat the last bucket's value. A
 * clock that went back (a replay's seek) starts the ring again.
 */
void trend_fleet_sample(struct trend_fleet *f, int64_t now_ms, size_t ok,
    size_t total);
/* Bucket i, oldest 0 (i < f->len). */
void trend_fleet_get(const struct trend_fleet *f, size_t i, size_t *ok,
    size_t *total);

#endif
