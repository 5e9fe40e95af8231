/*
 * The Prometheus view of a fleet (metrics.h). One record per server holds
 * what only the event stream knows (histograms, counters, the start of the
 * open session); everything else is read from the engine's getters while
 * the scrape is written. Records are found by the server's pointer (one
 * hash probe per event) and matched to servers by name when the fleet
 * changes, so a server keeps its counters across a reload.
 *
 * The text is written by hand into one growing buffer: a scrape of 10,000
 * servers is some 400,000 lines, and printf per line would cost more than
 * the 100 ms of CPU.
 */
#include "export/metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <unistd.h>

#include "engine/ending.h"
#include "engine/failure.h"
#include "engine/fleet.h"
#include "engine/liveness.h"
#include "engine/server.h"
#include "engine/shard.h"
#include "util/clock.h"
#include "util/str.h"
#include "util/xmalloc.h"

const double metrics_bucket_bounds[METRICS_BUCKETS] = {
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300,
};

/* The same bounds as `le` values: shortest form for text 0.0.4 (as the
 * Go client writes them), a float form for OpenMetrics ("1.0"). */
static const char *const metrics_le_text[METRICS_BUCKETS + 1] = {
    "0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "1", "2", "5", "10", "30",
    "60", "120", "300", "+Inf",
};
static const char *const metrics_le_om[METRICS_BUCKETS + 1] = {
    "0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "1.0", "2.0", "5.0",
    "10.0", "30.0", "60.0", "120.0", "300.0", "+Inf",
};
static const unsigned char metrics_le_text_len[METRICS_BUCKETS + 1] = {
    4, 4, 4, 3, 3, 3, 1, 1, 1, 2, 2, 2, 3, 3, 4,
};
static const unsigned char metrics_le_om_len[METRICS_BUCKETS + 1] = {
    4, 4, 4, 3, 3, 3, 3, 3, 3, 4, 4, 4, 5, 5, 4,
};

/*
 * mcptop's exchange names (event.op) as mcp_method_name. Real MCP methods
 * keep their spec names; the rest are mcptop's own steps: "dial" (connect,
 * initialize or server/discover, and the first listing, timed as one),
 * "delete" (ending a session), "stream" and "sse_stream" (opening the GET
 * stream). Anything else is "other", so the set stays closed.
 */
static const struct {
    const char *op;
    const char *method;
} metrics_methods[] = {
    { "dial",       "dial" },
    { "ping",       "ping" },
    { "discover",   "server/discover" },
    { "tools/list", "tools/list" },
    { "tools/call", "tools/call" },
    { "initialize", "initialize" },
    { "listen",     "subscriptions/listen" },
    { "delete",     "delete" },
    { "stream",     "stream" },
    { "sse stream", "sse_stream" },
};
#define METRICS_NMETHODS (sizeof(metrics_methods) / sizeof(metrics_methods[0]))
#define METRICS_METHOD_OTHER METRICS_NMETHODS

/* Labels mcptop writes itself: a tag may not take their names. */
static const char *const metrics_reserved_labels[] = {
    "server", "state", "le", "quantile", "kind", "delivered", "reason",
    "outcome", "mcp_method_name", "error_type", "transport", "era",
    "protocol_version", "server_name", "server_version", "version",
    "libcurl", "libmicrohttpd", "shard", "job", "instance",
};

struct metrics_hist {
    uint64_t bucket[METRICS_BUCKETS + 1];   /* per bucket, not cumulative */
    uint64_t count;
    double   sum;                           /* seconds */
};

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
    struct metrics_hist    session;
    int64_t                session_start;   /* epoch ms; -1: none open */
    char                  *info_key;    /* mcp_server_info's values, raw */
    char                  *info_labels; /* ... and as labels, escaped */
    size_t                 info_len;
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
};

/* ------------------------------------------------------------ the buffer */

struct metrics_buf {
    char  *p;
    size_t len, cap;
};

static void
metrics_buf_need(struct metrics_buf *b, size_t n)
{
    if (b->len + n <= b->cap)
        return;
    b->cap = b->cap * 2 > b->len + n + 4096 ? b->cap * 2 :
        b->len + n + 4096;
    b->p = xrealloc(b->p, b->cap);
}

static void
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

static void
metrics_buf_str(struct metrics_buf *b, const char *s)
{
    metrics_buf_add(b, s, strlen(s));
}

static void
metrics_buf_u64(struct metrics_buf *b, uint64_t v)
{
    metrics_buf_need(b, 24);
    metrics_buf_put_u64(b, v);
}

/* A float the way both formats read it: NaN, +Inf, -Inf or %.15g. */
static void
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
static void
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
static void
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

/* ------------------------------------------------------------ labels */

/* Escape n bytes of clean text for a label value: \\, \" and \n. */
static size_t
metrics_escape(char *dst, size_t dstsz, const char *src, size_t n)
{
    size_t out = 0;

    if (dstsz == 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = src[i];
        char esc = c == '\\' ? '\\' : c == '"' ? '"' : c == '\n' ? 'n' : 0;

        if (out + (esc != 0 ? 2 : 1) >= dstsz)
            break;
        if (esc != 0) {
            dst[out++] = '\\';
            dst[out++] = esc;
        } else {
            dst[out++] = c;
        }
    }
    dst[out] = '\0';
    return out;
}

size_t
metrics_label_value(char *dst, size_t dstsz, const char *src)
{
    char   clean[METRICS_LABEL_MAX + 1];
    size_t n;

    n = str_sanitize(clean, sizeof(clean), src != NULL ? src : "",
        src != NULL ? strlen(src) : 0);
    return metrics_escape(dst, dstsz, clean, n);
}

bool
metrics_tag_label_ok(const char *name)
{
    if (name == NULL || name[0] == '\0' || strncmp(name, "__", 2) == 0)
        return false;
    for (const char *c = name; *c != '\0'; c++) {
        bool alpha = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
            *c == '_';

        if (!alpha && !(c != name && *c >= '0' && *c <= '9'))
            return false;
    }
    for (size_t i = 0; i < sizeof(metrics_reserved_labels) /
        sizeof(metrics_reserved_labels[0]); i++) {
        if (strcmp(name, metrics_reserved_labels[i]) == 0)
            return false;
    }
    return true;
}

/* The value of tag key in decl's tags ("KEY=VALUE" or "KEY:VALUE"), or
 * "" when it has none. Borrowed. */
static const char *
metrics_tag_value(const struct config_server *decl, const char *key)
{
    size_t klen = strlen(key);

    for (size_t i = 0; i < decl->ntags; i++) {
        const char *t = decl->tags[i];

        if (strncmp(t, key, klen) == 0 && (t[klen] == '=' || t[klen] == ':'))
            return t + klen + 1;
    }
    return "";
}

/* ------------------------------------------------------------ records */

static size_t
metrics_ptr_hash(const void *p)
{
    uintptr_t v = (uintptr_t)p;

    return (size_t)shard_hash(&v, sizeof(v));
}

static struct metrics_server *
metrics_find(const struct metrics *m, const struct server *s)
{
    size_t i;

    if (m->cap == 0)
        return NULL;
    for (i = metrics_ptr_hash(s) & (m->cap - 1); m->table[i] != NULL;
        i = (i + 1) & (m->cap - 1)) {
        if (m->table[i]->server == s)
            return m->table[i];
    }
    return NULL;
}

static void
metrics_record_free(struct metrics_server *r)
{
    if (r == NULL)
        return;
    free(r->name);
    free(r->labels);
    free(r->series);
    free(r->fails);
    free(r->info_key);
    free(r->info_labels);
    free(r);
}

/*
 * The label string of record r for server s: server="VALUE" (made unique
 * among the fleet's through seen, a set of VALUEs already used) and the
 * --label-from-tags labels.
 */
static void
metrics_record_labels(struct metrics *m, struct metrics_server *r,
    const struct server *s, char **seen, size_t seencap)
{
    const char *name = server_name(s);
    char        value[METRICS_LABEL_MAX + 32];
    char        esc[2 * (METRICS_LABEL_MAX + 32) + 1];
    char        tag[2 * METRICS_LABEL_MAX + 1];
    struct metrics_buf b = { 0 };
    size_t      n = str_sanitize(value, METRICS_LABEL_MAX + 1, name,
        strlen(name));
    size_t      base;

    /* Sanitizing or cutting may have made two names one: tell them apart
     * by the FNV-1a of the name as written, then by a count. */
    if (strlen(name) != n || memcmp(value, name, n) != 0)
        n += (size_t)snprintf(value + n, sizeof(value) - n, "~%08x",
            (unsigned)(shard_hash(name, strlen(name)) & 0xffffffffu));
    base = n;
    for (unsigned extra = 2;; extra++) {
        size_t i = shard_hash(value, n) & (seencap - 1);
        bool   dup = false;

        for (; seen[i] != NULL; i = (i + 1) & (seencap - 1)) {
            if (strcmp(seen[i], value) == 0) {
                dup = true;
                break;
            }
        }
        if (!dup) {
            seen[i] = xstrdup(value);
            break;
        }
        n = base + (size_t)snprintf(value + base, sizeof(value) - base,
            "~%u", extra);
    }
    metrics_buf_str(&b, "server=\"");
    metrics_buf_add(&b, esc, metrics_escape(esc, sizeof(esc), value, n));
    metrics_buf_str(&b, "\"");
    for (size_t t = 0; t < m->opt.ntag_labels; t++) {
        metrics_buf_str(&b, ",");
        metrics_buf_str(&b, m->opt.tag_labels[t]);
        metrics_buf_str(&b, "=\"");
        metrics_buf_add(&b, tag, metrics_label_value(tag, sizeof(tag),
            metrics_tag_value(server_decl(s), m->opt.tag_labels[t])));
        metrics_buf_str(&b, "\"");
    }
    metrics_buf_add(&b, "", 1);
    free(r->labels);
    r->labels = b.p;
    r->labels_len = b.len - 1;
}

static size_t
metrics_pow2_above(size_t n)
{
    size_t cap = 16;

    while (cap <= 2 * n)
        cap *= 2;
    return cap;
}

void
metrics_sync(struct metrics *m, const struct fleet *f)
{
    size_t                  n = fleet_size(f);
    size_t                  cap = metrics_pow2_above(n);
    struct metrics_server **order = xcalloc(n + 1, sizeof(*order));
    struct metrics_server **table = xcalloc(cap, sizeof(*table));
    char                  **seen = xcalloc(cap, sizeof(*seen));
    /* Sized for the old records, which may outnumber the new servers. */
    size_t                  namecap = metrics_pow2_above(m->norder);
    struct metrics_server **byname = xcalloc(namecap, sizeof(*byname));

    /* The old records by name, for servers that were replaced. */
    for (size_t i = 0; i < m->norder; i++) {
        struct metrics_server *r = m->order[i];
        size_t                 h = shard_hash(r->name, strlen(r->name));

        r->claimed = false;
        for (h &= namecap - 1; byname[h] != NULL; h = (h + 1) & (namecap - 1))
            ;
        byname[h] = r;
    }
    for (size_t i = 0; i < n; i++) {
        const struct server   *s = fleet_server(f, i);
        struct metrics_server *r = metrics_find(m, s);
        size_t                 h;

        if (r != NULL && (r->claimed || strcmp(r->name, server_name(s)) != 0))
            r = NULL;
        if (r == NULL) {
            /* First unclaimed old record of that name. */
            h = shard_hash(server_name(s), strlen(server_name(s)));
            for (h &= namecap - 1; byname[h] != NULL;
                h = (h + 1) & (namecap - 1)) {
                if (!byname[h]->claimed &&
                    strcmp(byname[h]->name, server_name(s)) == 0) {
                    r = byname[h];
                    break;
                }
            }
        }
        if (r == NULL) {
            r = xcalloc(1, sizeof(*r));
            r->name = xstrdup(server_name(s));
            r->session_start = -1;
        }
        if (r->server != s) {
            /* Another server object: its session is not the old one's. */
            r->session_start = -1;
        }
        r->claimed = true;
        r->server = s;
        metrics_record_labels(m, r, s, seen, cap);
        order[i] = r;
        for (h = metrics_ptr_hash(s) & (cap - 1); table[h] != NULL;
            h = (h + 1) & (cap - 1))
            ;
        table[h] = r;
    }
    for (size_t i = 0; i < m->norder; i++) {
        if (!m->order[i]->claimed)
            metrics_record_free(m->order[i]);
    }
    for (size_t i = 0; i < cap; i++)
        free(seen[i]);
    free(seen);
    free(byname);
    free(m->order);
    free(m->table);
    m->order = order;
    m->norder = n;
    m->table = table;
    m->cap = cap;
    m->fleet = f;
}

struct metrics *
metrics_new(const struct metrics_options *opt)
{
    struct metrics *m = xcalloc(1, sizeof(*m));

    if (opt != NULL)
        m->opt = *opt;
    m->started = clock_wall_ms();
    m->reload_ok = true;
    m->reload_ok_at = m->started;
    return m;
}

void
metrics_free(struct metrics *m)
{
    if (m == NULL)
        return;
    for (size_t i = 0; i < m->norder; i++)
        metrics_record_free(m->order[i]);
    free(m->order);
    free(m->table);
    free(m);
}

void
metrics_reload_result(struct metrics *m, bool ok, int64_t ts)
{
    m->reload_ok = ok;
    if (ok)
        m->reload_ok_at = ts;
}

/* ------------------------------------------------------------ events */

static void
metrics_observe(struct metrics_hist *h, double seconds)
{
    size_t i = 0;

    if (!(seconds >= 0))            /* negative or NaN: a clock oddity */
        seconds = 0;
    while (i < METRICS_BUCKETS && seconds > metrics_bucket_bounds[i])
        i++;
    h->bucket[i]++;
    h->count++;
    h->sum += seconds;
}

static unsigned char
metrics_method_of(const char *op)
{
    for (size_t i = 0; op != NULL && i < METRICS_NMETHODS; i++) {
        if (strcmp(op, metrics_methods[i].op) == 0)
            return (unsigned char)i;
    }
    return (unsigned char)METRICS_METHOD_OTHER;
}

static const char *
metrics_method_name(unsigned char method)
{
    return method < METRICS_NMETHODS ? metrics_methods[method].method :
        "other";
}

/* The series of (method, error_type), added when new; past the cap the
 * overflow series. */
static struct metrics_series *
metrics_series_of(struct metrics_server *r, unsigned char method,
    const char *error_type)
{
    struct metrics_series *sr;

    for (size_t i = 0; i < r->nseries; i++) {
        if (r->series[i].method == method &&
            strcmp(r->series[i].error_type, error_type) == 0)
            return &r->series[i];
    }
    if (r->nseries >= METRICS_MAX_SERIES) {
        /* Full: the one overflow series, slot METRICS_MAX_SERIES. */
        if (r->nseries > METRICS_MAX_SERIES)
            return &r->series[METRICS_MAX_SERIES];
        method = (unsigned char)METRICS_METHOD_OTHER;
        error_type = "_OTHER";
    }
    if (r->nseries == r->capseries) {
        r->capseries = r->capseries == 0 ? 2 : r->capseries * 2;
        if (r->capseries > METRICS_MAX_SERIES + 1)
            r->capseries = METRICS_MAX_SERIES + 1;
        r->series = xrealloc(r->series, r->capseries * sizeof(*r->series));
    }
    sr = &r->series[r->nseries++];
    memset(sr, 0, sizeof(*sr));
    sr->method = method;
    snprintf(sr->error_type, sizeof(sr->error_type), "%s", error_type);
    /* The series' own labels, written once (error_type is a kind name or
     * a decimal code: nothing to escape). */
    if (sr->error_type[0] != '\0')
        snprintf(sr->labels, sizeof(sr->labels),
            ",mcp_method_name=\"%s\",error_type=\"%s\"",
            metrics_method_name(method), sr->error_type);
    else
        snprintf(sr->labels, sizeof(sr->labels), ",mcp_method_name=\"%s\"",
            metrics_method_name(method));
    sr->labels_len = (unsigned char)strlen(sr->labels);
    return sr;
}

static void
metrics_count_failure(struct metrics_server *r, const struct failure *f)
{
    struct metrics_fail *mf;

    for (size_t i = 0; i < r->nfails; i++) {
        mf = &r->fails[i];
        if (mf->kind == f->kind && mf->delivered == f->delivered &&
            mf->reason == f->reason) {
            mf->n++;
            return;
        }
    }
    if (r->nfails == r->capfails) {
        r->capfails = r->capfails == 0 ? 2 : r->capfails * 2;
        r->fails = xrealloc(r->fails, r->capfails * sizeof(*r->fails));
    }
    mf = &r->fails[r->nfails++];
    mf->kind = (unsigned char)f->kind;
    mf->delivered = (unsigned char)f->delivered;
    mf->reason = (unsigned char)f->reason;
    mf->n = 1;
}

static void
metrics_exchange(struct metrics_server *r, const struct event *e)
{
    char        code[24];
    const char *error_type = "";
    const struct failure *f = e->completed ? NULL : e->failure;

    if (f != NULL) {
        /* The conventions' error.type: the JSON-RPC code as a string, and
         * below JSON-RPC the failure kind. */
        if (f->reason == FAILURE_REASON_TOOL_ERROR ||
            f->reason == FAILURE_REASON_UNEXPECTED_RESULT) {
            error_type = failure_reason_name(f->reason);
        } else if (f->kind == FAILURE_PROTOCOL && f->has_rpc_code) {
            snprintf(code, sizeof(code), "%ld", f->rpc_code);
            error_type = code;
        } else {
            error_type = failure_kind_name(f->kind);
        }
        if ((unsigned)f->kind < FAILURE__COUNT &&
            (unsigned)f->delivered < DELIVERED__COUNT &&
            (unsigned)f->reason < FAILURE_REASON__COUNT)
            metrics_count_failure(r, f);
    } else if (!e->completed) {
        error_type = failure_kind_name(FAILURE_UNKNOWN);
    }
    metrics_observe(&metrics_series_of(r, metrics_method_of(e->op),
        error_type)->h, e->ms / 1000.0);
}

/* A session is open from READY (with a session to end) until the server
 * leaves READY: that span is mcp.client.session.duration. */
static void
metrics_state(struct metrics_server *r, const struct event *e)
{
    if (server_state(e->server) == SERVER_READY) {
        if (r->session_start < 0 && server_has_session(e->server))
            r->session_start = e->ts;
    } else if (r->session_start >= 0) {
        metrics_observe(&r->session,
            (double)(e->ts - r->session_start) / 1000.0);
        r->session_start = -1;
    }
}

void
metrics_event_cb(void *arg, const struct event *e)
{
    struct metrics        *m = arg;
    struct metrics_server *r = metrics_find(m, e->server);

    /* A pointer can come back for another server after a reload: the name
     * must match too. */
    if (r == NULL || strcmp(r->name, server_name(e->server)) != 0)
        return;
    switch (e->type) {
    case EVENT_EXCHANGE:
        metrics_exchange(r, e);
        break;
    case EVENT_TOOLS_CHANGED:
        r->tools_changes++;
        break;
    case EVENT_ENDING:
        if (e->ending != NULL && e->ending->outcome != ENDING_PENDING &&
            (unsigned)e->ending->outcome < ENDING__COUNT)
            r->endings[e->ending->outcome]++;
        break;
    case EVENT_STATE:
        metrics_state(r, e);
        break;
    default:
        break;
    }
}

size_t
metrics_pending_dials(const struct metrics *m)
{
    size_t pending = 0;

    if (m->fleet == NULL)
        return 0;
    for (size_t i = 0; i < fleet_size(m->fleet); i++) {
        const struct server *s = fleet_server(m->fleet, i);

        if (!server_dial_settled(s) && server_state(s) != SERVER_STOPPED)
            pending++;
    }
    return pending;
}

/* ------------------------------------------------------------ writing */

enum metrics_type {
    METRICS_TYPE_GAUGE,
    METRICS_TYPE_COUNTER,
    METRICS_TYPE_HISTOGRAM,
    METRICS_TYPE_INFO,
};

static bool
metrics_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);

    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/*
 * HELP and TYPE (and in OpenMetrics UNIT) of the family whose samples are
 * named name (counters end in _total, infos in _info: OpenMetrics names
 * the family without the suffix).
 */
static void
metrics_head(struct metrics_buf *b, enum metrics_format fmt, const char *name,
    enum metrics_type type, const char *help)
{
    static const char *const types[] = {
        [METRICS_TYPE_GAUGE] = "gauge", [METRICS_TYPE_COUNTER] = "counter",
        [METRICS_TYPE_HISTOGRAM] = "histogram", [METRICS_TYPE_INFO] = "info",
    };
    char   family[96];
    size_t n = strlen(name);

    if (fmt == METRICS_OPENMETRICS && type == METRICS_TYPE_COUNTER &&
        metrics_ends_with(name, "_total"))
        n -= 6;
    else if (fmt == METRICS_OPENMETRICS && type == METRICS_TYPE_INFO &&
        metrics_ends_with(name, "_info"))
        n -= 5;
    snprintf(family, sizeof(family), "%.*s", (int)n, name);
    metrics_buf_str(b, "# HELP ");
    metrics_buf_str(b, family);
    metrics_buf_str(b, " ");
    metrics_buf_str(b, help);
    metrics_buf_str(b, "\n# TYPE ");
    metrics_buf_str(b, family);
    metrics_buf_str(b, " ");
    metrics_buf_str(b, fmt == METRICS_TEXT && type == METRICS_TYPE_INFO ? "gauge" :
        types[type]);
    metrics_buf_str(b, "\n");
    if (fmt == METRICS_OPENMETRICS && (metrics_ends_with(family, "_seconds")
        || metrics_ends_with(family, "_bytes"))) {
        metrics_buf_str(b, "# UNIT ");
        metrics_buf_str(b, family);
        metrics_buf_str(b, metrics_ends_with(family, "_seconds") ?
            " seconds\n" : " bytes\n");
    }
}

/* name{SERVER LABELS extra} (extra is "" or starts with ','), then a
 * space, with room for a value and the newline after it. */
static void
metrics_open_n(struct metrics_buf *b, const char *name, size_t nlen,
    const struct metrics_server *r, const char *extra, size_t elen)
{
    metrics_buf_need(b, nlen + r->labels_len + elen + 64);
    metrics_buf_put(b, name, nlen);
    metrics_buf_put(b, "{", 1);
    metrics_buf_put(b, r->labels, r->labels_len);
    metrics_buf_put(b, extra, elen);
    metrics_buf_put(b, "} ", 2);
}

/* The same for a literal name and a NUL-terminated extra. */
#define metrics_open(b, name, r, extra) \
    metrics_open_n((b), (name), sizeof(name) - 1, (r), (extra), \
        strlen(extra))

/* One label ,key="escaped value" appended to a fixed buffer. */
static size_t
metrics_label(char *dst, size_t dstsz, size_t off, const char *key,
    const char *value)
{
    char esc[2 * METRICS_LABEL_MAX + 1];

    metrics_label_value(esc, sizeof(esc), value);
    if (off < dstsz)
        off += (size_t)snprintf(dst + off, dstsz - off, ",%s=\"%s\"", key,
            esc);
    return off < dstsz ? off : dstsz - 1;
}

static void
metrics_hist_lines(struct metrics_buf *b, enum metrics_format fmt,
    const char *name, const struct metrics_server *r, const char *extra,
    size_t elen, const struct metrics_hist *h)
{
    const char *const  *le = fmt == METRICS_OPENMETRICS ? metrics_le_om :
        metrics_le_text;
    const unsigned char *lelen = fmt == METRICS_OPENMETRICS ?
        metrics_le_om_len : metrics_le_text_len;
    size_t              nlen = strlen(name);
    size_t              line = nlen + r->labels_len + elen + 64;
    uint64_t            cum = 0;

    /* One reservation for the whole series: 17 lines. */
    metrics_buf_need(b, (METRICS_BUCKETS + 3) * line);
    for (size_t i = 0; i <= METRICS_BUCKETS; i++) {
        cum += h->bucket[i];
        metrics_buf_put(b, name, nlen);
        metrics_buf_put(b, "_bucket{", 8);
        metrics_buf_put(b, r->labels, r->labels_len);
        metrics_buf_put(b, extra, elen);
        metrics_buf_put(b, ",le=\"", 5);
        metrics_buf_put(b, le[i], lelen[i]);
        metrics_buf_put(b, "\"} ", 3);
        metrics_buf_put_u64(b, cum);
        metrics_buf_put(b, "\n", 1);
    }
    metrics_buf_put(b, name, nlen);
    metrics_buf_put(b, "_sum{", 5);
    metrics_buf_put(b, r->labels, r->labels_len);
    metrics_buf_put(b, extra, elen);
    metrics_buf_put(b, "} ", 2);
    metrics_buf_seconds(b, h->sum);
    metrics_buf_add(b, "\n", 1);
    metrics_buf_need(b, line);
    metrics_buf_put(b, name, nlen);
    metrics_buf_put(b, "_count{", 7);
    metrics_buf_put(b, r->labels, r->labels_len);
    metrics_buf_put(b, extra, elen);
    metrics_buf_put(b, "} ", 2);
    metrics_buf_put_u64(b, h->count);
    metrics_buf_put(b, "\n", 1);
}

static void
metrics_write_liveness(struct metrics *m, struct metrics_buf *b,
    enum metrics_format fmt)
{
    static const char *const states[] = {
        ",state=\"reachable\"", ",state=\"unreachable\"",
        ",state=\"unknown\"", ",state=\"absent\"",
    };
    static const size_t state_len[] = { 18, 20, 16, 15 };

    metrics_head(b, fmt, "mcp_up", METRICS_TYPE_GAUGE, "1 when the server's liveness "
        "is reachable (mcptop completed an exchange with it), else 0.");
    for (size_t i = 0; i < m->norder; i++) {
        const struct liveness *l = server_liveness(m->order[i]->server);

        metrics_open_n(b, "mcp_up", 6, m->order[i], "", 0);
        metrics_buf_put(b, l->present && l->state == LIVENESS_REACHABLE ?
            "1\n" : "0\n", 2);
    }
    metrics_head(b, fmt, "mcp_liveness", METRICS_TYPE_GAUGE, "The liveness record, "
        "one-hot over reachable, unreachable, unknown and absent (no "
        "observation yet).");
    for (size_t i = 0; i < m->norder; i++) {
        const struct liveness *l = server_liveness(m->order[i]->server);
        size_t                 now = l->present ? (size_t)l->state : 3;

        for (size_t k = 0; k < 4; k++) {
            metrics_open_n(b, "mcp_liveness", 12, m->order[i], states[k],
                state_len[k]);
            metrics_buf_put(b, k == now ? "1\n" : "0\n", 2);
        }
    }
    metrics_head(b, fmt, "mcp_last_observation_timestamp_seconds", METRICS_TYPE_GAUGE,
        "When the liveness record was last minted from an exchange, epoch "
        "seconds.");
    for (size_t i = 0; i < m->norder; i++) {
        const struct liveness *l = server_liveness(m->order[i]->server);

        if (!l->present)
            continue;
        metrics_open(b, "mcp_last_observation_timestamp_seconds",
            m->order[i], "");
        metrics_buf_epoch_ms(b, l->observed_at);
        metrics_buf_add(b, "\n", 1);
    }
    metrics_head(b, fmt, "mcp_next_attempt_timestamp_seconds", METRICS_TYPE_GAUGE,
        "When the next dial or request may go (backoff, Retry-After), "
        "epoch seconds; absent when nothing waits.");
    for (size_t i = 0; i < m->norder; i++) {
        int64_t at = server_next_attempt_ms(m->order[i]->server);

        if (at < 0)
            continue;
        metrics_open(b, "mcp_next_attempt_timestamp_seconds",
            m->order[i], "");
        metrics_buf_epoch_ms(b, at);
        metrics_buf_add(b, "\n", 1);
    }
}

static void
metrics_write_counts(struct metrics *m, struct metrics_buf *b,
    enum metrics_format fmt)
{
    metrics_head(b, fmt, "mcp_tools", METRICS_TYPE_GAUGE, "Tools in the server's last "
        "complete tools/list.");
    for (size_t i = 0; i < m->norder; i++) {
        long n = server_tools(m->order[i]->server);

        if (n < 0)
            continue;
        metrics_open(b, "mcp_tools", m->order[i], "");
        metrics_buf_u64(b, (uint64_t)n);
        metrics_buf_add(b, "\n", 1);
    }
    metrics_head(b, fmt, "mcp_tools_changes_total", METRICS_TYPE_COUNTER, "Listings "
        "that found a different tool set than the one before.");
    for (size_t i = 0; i < m->norder; i++) {
        metrics_open(b, "mcp_tools_changes_total", m->order[i], "");
        metrics_buf_u64(b, m->order[i]->tools_changes);
        metrics_buf_add(b, "\n", 1);
    }
    metrics_head(b, fmt, "mcp_failures_total", METRICS_TYPE_COUNTER, "Failed exchanges "
        "by failure kind, delivery verdict and (http_status only) reason.");
    for (size_t i = 0; i < m->norder; i++) {
        const struct metrics_server *r = m->order[i];

        for (size_t k = 0; k < r->nfails; k++) {
            char extra[128];

            snprintf(extra, sizeof(extra),
                ",kind=\"%s\",delivered=\"%s\",reason=\"%s\"",
                failure_kind_name(r->fails[k].kind),
                delivered_name(r->fails[k].delivered),
                failure_reason_name(r->fails[k].reason));
            metrics_open(b, "mcp_failures_total", r, extra);
            metrics_buf_u64(b, r->fails[k].n);
            metrics_buf_add(b, "\n", 1);
        }
    }
    metrics_head(b, fmt, "mcp_endings_total", METRICS_TYPE_COUNTER, "Session endings "
        "by outcome.");
    for (size_t i = 0; i < m->norder; i++) {
        const struct metrics_server *r = m->order[i];

        for (size_t o = 0; o < ENDING__COUNT; o++) {
            char extra[64];

            if (r->endings[o] == 0)
                continue;
            snprintf(extra, sizeof(extra), ",outcome=\"%s\"",
                ending_outcome_name((enum ending_outcome)o));
            metrics_open(b, "mcp_endings_total", r, extra);
            metrics_buf_u64(b, r->endings[o]);
            metrics_buf_add(b, "\n", 1);
        }
    }
}

static void
metrics_write_info(struct metrics *m, struct metrics_buf *b,
    enum metrics_format fmt)
{
    metrics_head(b, fmt, "mcp_server_info", METRICS_TYPE_INFO, "The server as mcptop "
        "last saw it: transport, era, MCP revision, serverInfo name and "
        "version (sanitized).");
    for (size_t i = 0; i < m->norder; i++) {
        struct metrics_server     *r = m->order[i];
        const struct server       *s = r->server;
        struct server_session_info si;
        const char                *era = server_era_name(server_era(s));
        const char                *v[5];
        char                       key[5 * (METRICS_LABEL_MAX + 1)];
        size_t                     klen = 0;

        memset(&si, 0, sizeof(si));
        server_session(s, &si);
        v[0] = server_transport_name(s);
        v[1] = era != NULL ? era : "";
        v[2] = si.protocol_version != NULL ? si.protocol_version : "";
        v[3] = si.server_name != NULL ? si.server_name : "";
        v[4] = si.server_version != NULL ? si.server_version : "";
        /* The labels are rebuilt only when a value changed (the server
         * texts pass the sanitizer and the escaper once per change). */
        for (size_t k = 0; k < 5; k++) {
            size_t n = strnlen(v[k], METRICS_LABEL_MAX);

            memcpy(key + klen, v[k], n);
            klen += n;
            key[klen++] = '\x1f';
        }
        if (r->info_key == NULL || strlen(r->info_key) != klen ||
            memcmp(r->info_key, key, klen) != 0) {
            char   extra[6 * (2 * METRICS_LABEL_MAX + 24)];
            size_t off = 0;

            extra[0] = '\0';
            off = metrics_label(extra, sizeof(extra), off, "transport", v[0]);
            off = metrics_label(extra, sizeof(extra), off, "era", v[1]);
            off = metrics_label(extra, sizeof(extra), off, "protocol_version",
                v[2]);
            off = metrics_label(extra, sizeof(extra), off, "server_name",
                v[3]);
            off = metrics_label(extra, sizeof(extra), off, "server_version",
                v[4]);
            free(r->info_key);
            free(r->info_labels);
            r->info_key = str_ndup(key, klen);
            r->info_labels = str_ndup(extra, off);
            r->info_len = off;
        }
        metrics_open_n(b, "mcp_server_info", 15, r, r->info_labels,
            r->info_len);
        metrics_buf_put(b, "1\n", 2);
    }
}

static void
metrics_write_histograms(struct metrics *m, struct metrics_buf *b,
    enum metrics_format fmt)
{
    metrics_head(b, fmt, "mcp_client_operation_duration_seconds",
        METRICS_TYPE_HISTOGRAM, "Exchanges mcptop made, from send to outcome "
        "(OpenTelemetry mcp.client.operation.duration); error_type is the "
        "JSON-RPC error code or the mcptop failure kind, absent on success.");
    for (size_t i = 0; i < m->norder; i++) {
        const struct metrics_server *r = m->order[i];

        for (size_t k = 0; k < r->nseries; k++) {
            const struct metrics_series *sr = &r->series[k];

            metrics_hist_lines(b, fmt,
                "mcp_client_operation_duration_seconds", r, sr->labels,
                sr->labels_len, &sr->h);
        }
    }
    metrics_head(b, fmt, "mcp_client_session_duration_seconds",
        METRICS_TYPE_HISTOGRAM, "Sessions that ended, from open to no longer usable "
        "(OpenTelemetry mcp.client.session.duration).");
    for (size_t i = 0; i < m->norder; i++) {
        const struct metrics_server *r = m->order[i];

        if (r->session.count > 0)
            metrics_hist_lines(b, fmt, "mcp_client_session_duration_seconds",
                r, "", 0, &r->session);
    }
}

/* A sample with no server label: name{labels} value. */
static void
metrics_plain(struct metrics_buf *b, const char *name, const char *labels,
    double value)
{
    metrics_buf_str(b, name);
    if (labels != NULL && labels[0] != '\0') {
        metrics_buf_add(b, "{", 1);
        metrics_buf_str(b, labels);
        metrics_buf_add(b, "}", 1);
    }
    metrics_buf_add(b, " ", 1);
    metrics_buf_double(b, value);
    metrics_buf_add(b, "\n", 1);
}

static void
metrics_write_self(struct metrics *m, struct metrics_buf *b,
    enum metrics_format fmt)
{
    char   labels[3 * (2 * METRICS_LABEL_MAX + 24)];
    size_t off = 0;

    labels[0] = '\0';
    off = metrics_label(labels, sizeof(labels), off, "version",
        m->opt.version != NULL ? m->opt.version : "");
    off = metrics_label(labels, sizeof(labels), off, "libcurl",
        m->opt.libcurl != NULL ? m->opt.libcurl : "");
    metrics_label(labels, sizeof(labels), off, "libmicrohttpd",
        m->opt.libmicrohttpd != NULL ? m->opt.libmicrohttpd : "");
    metrics_head(b, fmt, "mcptop_build_info", METRICS_TYPE_INFO, "mcptop's version "
        "and the versions of the libraries it runs on.");
    metrics_plain(b, "mcptop_build_info", labels + 1, 1);
    metrics_head(b, fmt, "mcptop_servers", METRICS_TYPE_GAUGE, "Servers this mcptop "
        "watches (its shard's share of the config).");
    metrics_plain(b, "mcptop_servers", NULL, (double)m->norder);
    if (m->opt.shard != NULL) {
        labels[0] = '\0';
        metrics_label(labels, sizeof(labels), 0, "shard", m->opt.shard);
        metrics_head(b, fmt, "mcptop_shard_info", METRICS_TYPE_INFO, "The shard K/N "
            "this mcptop watches (--shard).");
        metrics_plain(b, "mcptop_shard_info", labels + 1, 1);
    }
    metrics_head(b, fmt, "mcptop_config_last_reload_successful", METRICS_TYPE_GAUGE,
        "0 when the last config reload (SIGHUP) failed and the config "
        "before it still runs, else 1.");
    metrics_plain(b, "mcptop_config_last_reload_successful", NULL,
        m->reload_ok ? 1 : 0);
    metrics_head(b, fmt,
        "mcptop_config_last_reload_success_timestamp_seconds", METRICS_TYPE_GAUGE,
        "When the running config was loaded, epoch seconds.");
    metrics_buf_str(b, "mcptop_config_last_reload_success_timestamp_seconds ");
    metrics_buf_epoch_ms(b, m->reload_ok_at);
    metrics_buf_add(b, "\n", 1);
}

/* The usual process_* metrics, from getrusage and /proc (Linux). */
static void
metrics_write_process(struct metrics *m, struct metrics_buf *b,
    enum metrics_format fmt)
{
    struct rusage ru;
    struct rlimit rl;
    FILE         *f;
    long          page = sysconf(_SC_PAGESIZE);
    unsigned long vsz = 0, rss = 0;

    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        metrics_head(b, fmt, "process_cpu_seconds_total", METRICS_TYPE_COUNTER,
            "User and system CPU time spent, seconds.");
        metrics_plain(b, "process_cpu_seconds_total", NULL,
            (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
            ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) /
            1e6);
    }
    f = fopen("/proc/self/statm", "r");
    if (f != NULL) {
        if (fscanf(f, "%lu %lu", &vsz, &rss) == 2 && page > 0) {
            metrics_head(b, fmt, "process_virtual_memory_bytes", METRICS_TYPE_GAUGE,
                "Virtual memory size, bytes.");
            metrics_plain(b, "process_virtual_memory_bytes", NULL,
                (double)vsz * (double)page);
            metrics_head(b, fmt, "process_resident_memory_bytes", METRICS_TYPE_GAUGE,
                "Resident memory size, bytes.");
            metrics_plain(b, "process_resident_memory_bytes", NULL,
                (double)rss * (double)page);
        }
        fclose(f);
    }
    /* No process_open_fds: counting /proc/self/fd costs the kernel a
     * lookup per descriptor, a fifth of a scrape at 10,000 servers. */
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        metrics_head(b, fmt, "process_max_fds", METRICS_TYPE_GAUGE,
            "The file descriptor limit (soft).");
        metrics_plain(b, "process_max_fds", NULL,
            rl.rlim_cur == RLIM_INFINITY ? INFINITY : (double)rl.rlim_cur);
    }
    metrics_head(b, fmt, "process_start_time_seconds", METRICS_TYPE_GAUGE,
        "When the process started, epoch seconds.");
    metrics_buf_str(b, "process_start_time_seconds ");
    metrics_buf_epoch_ms(b, m->started);
    metrics_buf_add(b, "\n", 1);
}

char *
metrics_render(struct metrics *m, enum metrics_format fmt, size_t *len)
{
    struct metrics_buf b = { 0 };

    /* A fleet that changed without a sync is synced now: the order must
     * be the fleet's, or a record could name a freed server. */
    if (m->fleet != NULL) {
        bool same = fleet_size(m->fleet) == m->norder;

        for (size_t i = 0; same && i < m->norder; i++)
            same = fleet_server(m->fleet, i) == m->order[i]->server;
        if (!same)
            metrics_sync(m, m->fleet);
    }
    /* The last scrape's size and a little more: one allocation. */
    metrics_buf_need(&b, m->last_len > 0 ?
        m->last_len + m->last_len / 8 + 4096 : 4096 + m->norder * 1024);
    metrics_write_liveness(m, &b, fmt);
    metrics_write_counts(m, &b, fmt);
    metrics_write_info(m, &b, fmt);
    metrics_write_histograms(m, &b, fmt);
    metrics_write_self(m, &b, fmt);
    if (m->opt.process)
        metrics_write_process(m, &b, fmt);
    if (fmt == METRICS_OPENMETRICS)
        metrics_buf_str(&b, "# EOF\n");
    m->last_len = b.len;
    *len = b.len;
    return b.p;
}

/* ------------------------------------------------------------ negotiation */

/* The q of one media range's parameters ("; q=0.5; version=..."), and
 * whether its version (when given) is want. */
static double
metrics_accept_q(const char *params, size_t n, const char *want, bool *ok)
{
    double q = 1.0;
    size_t i = 0;

    *ok = true;
    while (i < n) {
        size_t start, klen;

        while (i < n && (params[i] == ';' || params[i] == ' ' ||
            params[i] == '\t'))
            i++;
        start = i;
        while (i < n && params[i] != ';')
            i++;
        klen = i - start;
        if (klen > 2 && strncasecmp(params + start, "q=", 2) == 0) {
            char tmp[16];

            snprintf(tmp, sizeof(tmp), "%.*s", (int)(klen - 2),
                params + start + 2);
            q = strtod(tmp, NULL);
        } else if (want != NULL && klen > 8 &&
            strncasecmp(params + start, "version=", 8) == 0) {
            *ok = klen - 8 == strlen(want) &&
                strncmp(params + start + 8, want, klen - 8) == 0;
        }
    }
    return q;
}

enum metrics_format
metrics_negotiate(const char *accept)
{
    double q_om = 0, q_text = 0;
    size_t i = 0, n;

    if (accept == NULL)
        return METRICS_TEXT;
    n = strlen(accept);
    while (i < n) {
        size_t      start, end, tlen;
        const char *semi;
        bool        ok;
        double      q;

        while (i < n && (accept[i] == ',' || accept[i] == ' '))
            i++;
        start = i;
        while (i < n && accept[i] != ',')
            i++;
        end = i;
        semi = memchr(accept + start, ';', end - start);
        tlen = (semi != NULL ? (size_t)(semi - accept) : end) - start;
        while (tlen > 0 && (accept[start + tlen - 1] == ' ' ||
            accept[start + tlen - 1] == '\t'))
            tlen--;
        if (tlen == 28 && strncasecmp(accept + start,
            "application/openmetrics-text", 28) == 0) {
            q = metrics_accept_q(accept + start + tlen, end - start - tlen,
                "1.0.0", &ok);
            if (ok && q > q_om)
                q_om = q;
        } else if ((tlen == 10 && strncasecmp(accept + start, "text/plain",
            10) == 0) || (tlen == 3 && strncmp(accept + start, "*/*", 3) ==
            0) || (tlen == 6 && strncasecmp(accept + start, "text/*", 6) ==
            0)) {
            q = metrics_accept_q(accept + start + tlen, end - start - tlen,
                NULL, &ok);
            if (q > q_text)
                q_text = q;
        }
    }
    return q_om > 0 && q_om >= q_text ? METRICS_OPENMETRICS : METRICS_TEXT;
}

const char *
metrics_content_type(enum metrics_format fmt)
{
    return fmt == METRICS_OPENMETRICS ?
        "application/openmetrics-text; version=1.0.0; charset=utf-8" :
        "text/plain; version=0.0.4; charset=utf-8";
}
