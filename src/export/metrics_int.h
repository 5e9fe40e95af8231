/*
 * What metrics.c (the records, fed by events) and metrics_write.c (the
 * families of a scrape) share: the per-server records and the growing
 * text buffer a scrape is written into. Private to src/export/.
 *
 * The text is written by hand into one growing buffer: a scrape of 10,000
 * servers is some 400,000 lines, and printf per line would cost more than
 * the 100 ms of CPU. The buffer's functions are inline here, as
 * they were static in one file: both files call them once per sample.
 */
#ifndef MCPTOP_EXPORT_METRICS_INT_H
#define MCPTOP_EXPORT_METRICS_INT_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "engine/ending.h"
#include "engine/health.h"
#include "engine/server.h"
#include "export/metrics.h"
#include "util/xmalloc.h"

/* A set of bucket bounds with their `le` values as each format writes
 * them: the shortest form in text 0.0.4 (as the Go client writes them), a
 * float in OpenMetrics ("1.0"). */
struct metrics_bounds {
    size_t              n;          /* finite bounds; +Inf is n */
    const double       *v;
    const char *const  *le_text;    /* n + 1, "+Inf" last */
    const char *const  *le_om;
};
extern const struct metrics_bounds metrics_live, metrics_session;

/* A histogram over up to the largest bounds set (the session's). */
struct metrics_hist {
    uint64_t bucket[METRICS_SESSION_BUCKETS + 1];   /* per bucket, not
                                                       cumulative */
    uint64_t count;
    double   sum;                                   /* seconds */
};

/* A fleet-wide histogram series: one per (transport, era). */
struct metrics_fleet_hist {
    char                labels[64];     /* transport="..",era=".." */
    size_t              labels_len;
    struct metrics_hist h;
};

/* At most this many (transport, era) series per fleet-wide histogram:
 * both sets are closed (3 transports, 4 eras with "none"). */
#define METRICS_FLEET_SERIES 16

/* One operation series: a method and an error_type ("" on success). */
struct metrics_series {
    unsigned char       method;
    char                error_type[24];
    char                labels[80];     /* ,mcp_method_name=".."
                                           [,error_type=".."] */
    unsigned char       labels_len;
    struct metrics_hist h;
};

struct metrics_fail {
    unsigned char kind, delivered, reason;
    uint64_t      n;
};

struct metrics_server {
    const struct server   *server;  /* the key; read only through fleet */
    char                  *name;    /* its config name when synced */
    char                  *labels;  /* server="..."[,tag="..."], escaped */
    size_t                 labels_len;
    struct metrics_series *series;
    size_t                 nseries, capseries;
    struct metrics_fail   *fails;
    size_t                 nfails, capfails;
    uint64_t               endings[ENDING__COUNT];
    uint64_t               tools_changes;
    uint64_t               asked[MCP_ASKED__COUNT]; /* the server's own
                                                       requests, answered */
    int64_t                session_start;   /* epoch ms; -1: none open */
    int64_t                last_success;    /* epoch ms of the last
                                               completed exchange; 0 */
    char                  *resource;    /* http(s): the OAuth resource (the
                                           token cache's key); else NULL */
    char                  *info_key;    /* mcp_server_info's values, raw */
    char                  *info_labels; /* ... and as labels, escaped */
    size_t                 info_len;
    struct health          health;      /* the last EVENT_HEALTH */
    bool                   health_set;  /* ... of this server object */
    bool                   claimed;         /* scratch for metrics_sync */
};

struct metrics {
    struct metrics_options  opt;
    const struct fleet     *fleet;
    struct metrics_server **order;      /* fleet order */
    size_t                  norder;
    struct metrics_server **table;      /* by server pointer */
    size_t                  cap;        /* power of two, > 2 * norder */
    int64_t                 started;    /* epoch ms */
    size_t                  last_len;   /* the last scrape's size */
    bool                    reload_ok;
    int64_t                 reload_ok_at;   /* epoch ms */
    /* Fleet-wide: completed dials, and sessions that ended. */
    struct metrics_fleet_hist dials[METRICS_FLEET_SERIES];
    size_t                  ndials;
    struct metrics_fleet_hist sessions[METRICS_FLEET_SERIES];
    size_t                  nsessions;
};

/* ------------------------------------------------------------ the buffer */

struct metrics_buf {
    char  *p;
    size_t len, cap;
};

static inline void
metrics_buf_need(struct metrics_buf *b, size_t n)
{
    if (b->len + n <= b->cap)
        return;
    b->cap = b->cap * 2 > b->len + n + 4096 ? b->cap * 2 :
        b->len + n + 4096;
    b->p = xrealloc(b->p, b->cap);
}

static inline void
metrics_buf_add(struct metrics_buf *b, const char *s, size_t n)
{
    metrics_buf_need(b, n);
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

/* Append with room already made by metrics_buf_need. */
static inline void
metrics_buf_put(struct metrics_buf *b, const char *s, size_t n)
{
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

/* Decimal v with room already made (20 bytes at most). */
static inline void
metrics_buf_put_u64(struct metrics_buf *b, uint64_t v)
{
    char   tmp[24];
    size_t i = sizeof(tmp);

    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    metrics_buf_put(b, tmp + i, sizeof(tmp) - i);
}

static inline void
metrics_buf_str(struct metrics_buf *b, const char *s)
{
    metrics_buf_add(b, s, strlen(s));
}

static inline void
metrics_buf_u64(struct metrics_buf *b, uint64_t v)
{
    metrics_buf_need(b, 24);
    metrics_buf_put_u64(b, v);
}

/* A float the way both formats read it: NaN, +Inf, -Inf or %.15g. */
static inline void
metrics_buf_double(struct metrics_buf *b, double v)
{
    char tmp[40];
    int  n;

    if (isnan(v)) {
        metrics_buf_str(b, "NaN");
        return;
    }
    if (isinf(v)) {
        metrics_buf_str(b, v > 0 ? "+Inf" : "-Inf");
        return;
    }
    if (v >= 0 && v < 1e15 && v == floor(v)) {
        metrics_buf_u64(b, (uint64_t)v);
        return;
    }
    n = snprintf(tmp, sizeof(tmp), "%.15g", v);
    metrics_buf_add(b, tmp, (size_t)n);
}

/* Non-negative seconds with microsecond resolution, trailing zeros cut
 * ("0.0123", "12", "401.28"): exact enough for durations, and no printf. */
static inline void
metrics_buf_seconds(struct metrics_buf *b, double v)
{
    uint64_t us, frac;
    char     digits[8];
    int      n = 6;

    if (!(v >= 0) || v > 1e12) {
        metrics_buf_double(b, v);
        return;
    }
    us = (uint64_t)llround(v * 1e6);
    metrics_buf_u64(b, us / 1000000);
    frac = us % 1000000;
    if (frac == 0)
        return;
    for (int i = 5; i >= 0; i--) {
        digits[i + 1] = (char)('0' + frac % 10);
        frac /= 10;
    }
    digits[0] = '.';
    while (digits[n] == '0')
        n--;
    metrics_buf_add(b, digits, (size_t)n + 1);
}

/* Epoch ms as seconds with exactly three decimals. */
static inline void
metrics_buf_epoch_ms(struct metrics_buf *b, int64_t ms)
{
    char frac[4];

    if (ms < 0)
        ms = 0;
    metrics_buf_u64(b, (uint64_t)(ms / 1000));
    frac[0] = '.';
    frac[1] = (char)('0' + (ms / 100) % 10);
    frac[2] = (char)('0' + (ms / 10) % 10);
    frac[3] = (char)('0' + ms % 10);
    metrics_buf_add(b, frac, 4);
}

/* The health of r's server: the verdict it last published (it publishes
 * on every change, so this is server_health's), or server_health() when
 * nothing was published to this record yet. */
static inline enum health_state
metrics_health_state(const struct metrics_server *r)
{
    return r->health_set ? r->health.state :
        server_health(r->server, NULL).state;
}

/* metrics_write.c: every family of one scrape of m, in fleet order, in
 * fmt, appended to b. */
void metrics_write(struct metrics *m, struct metrics_buf *b,
    enum metrics_format fmt);

#endif
