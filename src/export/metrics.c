/*
 * The Prometheus view of a fleet (metrics.h). One record per server holds
 * what only the event stream knows (histograms, counters, the start of the
 * open session); everything else is read from the engine's getters while
 * the scrape is written. Records are found by the server's pointer (one
 * hash probe per event) and matched to servers by name when the fleet
 * changes, so a server keeps its counters across a reload.
 *
 * This file keeps the records, folds the events into them, makes the
 * label values and negotiates the format; metrics_write.c writes the
 * families of a scrape from them (metrics_int.h is what the two share).
 */
#include "export/metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/ending.h"
#include "engine/failure.h"
#include "engine/fleet.h"
#include "engine/health.h"
#include "engine/liveness.h"
#include "engine/oauth_url.h"
#include "engine/server.h"
#include "engine/shard.h"
#include "util/clock.h"
#include "util/str.h"
#include "util/xmalloc.h"

#include "metrics_int.h"

const double metrics_live_bounds[METRICS_LIVE_BUCKETS] = {
    0.001, 0.005, 0.025, 0.1, 0.5, 2.5, 10,
};
const double metrics_session_bounds[METRICS_SESSION_BUCKETS] = {
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300,
};

static const char *const metrics_live_le_text[] = {
    "0.001", "0.005", "0.025", "0.1", "0.5", "2.5", "10", "+Inf",
};
static const char *const metrics_live_le_om[] = {
    "0.001", "0.005", "0.025", "0.1", "0.5", "2.5", "10.0", "+Inf",
};
static const char *const metrics_session_le_text[] = {
    "0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "1", "2", "5", "10", "30",
    "60", "120", "300", "+Inf",
};
static const char *const metrics_session_le_om[] = {
    "0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "1.0", "2.0", "5.0",
    "10.0", "30.0", "60.0", "120.0", "300.0", "+Inf",
};

const struct metrics_bounds metrics_live = {
    METRICS_LIVE_BUCKETS, metrics_live_bounds, metrics_live_le_text,
    metrics_live_le_om,
};
const struct metrics_bounds metrics_session = {
    METRICS_SESSION_BUCKETS, metrics_session_bounds, metrics_session_le_text,
    metrics_session_le_om,
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
    "liveness_method", "refreshable",
};


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
    free(r->resource);
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
            /* Another server object: its session and its health are not
             * the old one's. */
            r->session_start = -1;
            r->health_set = false;
        }
        r->claimed = true;
        r->server = s;
        free(r->resource);
        r->resource = server_decl(s)->transport == CONFIG_HTTP &&
            server_decl(s)->url != NULL && server_decl(s)->invalid == NULL ?
            oauth_url_resource(server_decl(s)->url) : NULL;
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
metrics_observe(struct metrics_hist *h, const struct metrics_bounds *bd,
    double seconds)
{
    size_t i = 0;

    if (!(seconds >= 0))            /* negative or NaN: a clock oddity */
        seconds = 0;
    while (i < bd->n && seconds > bd->v[i])
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

/* The fleet-wide series of (s's transport, era) in hs (n of them), added
 * when new; NULL past METRICS_FLEET_SERIES (cannot happen: both sets are
 * closed). */
static struct metrics_hist *
metrics_fleet_hist_of(struct metrics_fleet_hist *hs, size_t *n,
    const struct server *s)
{
    const char *era = mcp_era_name(server_era(s));
    char        labels[sizeof(hs->labels)];
    int         len;

    /* Both values are mcptop's own closed names: nothing to escape. */
    len = snprintf(labels, sizeof(labels), "transport=\"%s\",era=\"%s\"",
        server_transport_name(s), era != NULL ? era : "");
    if (len < 0 || (size_t)len >= sizeof(labels))
        return NULL;
    for (size_t i = 0; i < *n; i++) {
        if (hs[i].labels_len == (size_t)len &&
            memcmp(hs[i].labels, labels, (size_t)len) == 0)
            return &hs[i].h;
    }
    if (*n == METRICS_FLEET_SERIES)
        return NULL;
    memset(&hs[*n], 0, sizeof(hs[*n]));
    memcpy(hs[*n].labels, labels, (size_t)len + 1);
    hs[*n].labels_len = (size_t)len;
    return &hs[(*n)++].h;
}

/* Is op, on s, the liveness exchange (ping, server/discover, or
 * tools/list where the server has no ping)? */
static bool
metrics_is_liveness(const struct server *s, const char *op)
{
    if (strcmp(op, "ping") == 0 || strcmp(op, "discover") == 0)
        return true;
    return strcmp(op, "tools/list") == 0 &&
        strcmp(server_liveness_method(s), "tools/list") == 0;
}

static void
metrics_exchange(struct metrics *m, struct metrics_server *r,
    const struct event *e)
{
    char        code[24];
    const char *error_type = "";
    const char *op = e->op != NULL ? e->op : "";
    const struct failure *f = e->completed ? NULL : e->failure;

    if (e->completed && strcmp(op, "delete") != 0)
        r->last_success = e->ts;
    if (f != NULL) {
        /* The conventions' error.type: the JSON-RPC code as a string, and
         * below JSON-RPC the failure kind. */
        if (f->reason == FAILURE_REASON_TOOL_ERROR ||
            f->reason == FAILURE_REASON_UNEXPECTED_RESULT ||
            f->reason == FAILURE_REASON_INPUT_REQUIRED) {
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
    if (strcmp(op, "dial") == 0) {
        /* Fleet-wide, completed dials only: a refused port's 0.1 ms is
         * not a dial's duration (its failure is counted above). */
        struct metrics_hist *h = e->completed ?
            metrics_fleet_hist_of(m->dials, &m->ndials, e->server) : NULL;

        if (h != NULL)
            metrics_observe(h, &metrics_live, e->ms / 1000.0);
        return;
    }
    if (!metrics_is_liveness(e->server, op))
        return;
    metrics_observe(&metrics_series_of(r, metrics_method_of(op),
        error_type)->h, &metrics_live, e->ms / 1000.0);
}

/* A session is open from READY (with a session to end) until the server
 * leaves READY: that span is mcp.client.session.duration, fleet-wide. */
static void
metrics_state(struct metrics *m, struct metrics_server *r,
    const struct event *e)
{
    if (server_state(e->server) == SERVER_READY) {
        if (r->session_start < 0 && server_has_session(e->server))
            r->session_start = e->ts;
    } else if (r->session_start >= 0) {
        struct metrics_hist *h = metrics_fleet_hist_of(m->sessions,
            &m->nsessions, e->server);

        if (h != NULL)
            metrics_observe(h, &metrics_session,
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
        metrics_exchange(m, r, e);
        break;
    case EVENT_TOOLS_CHANGED:
        r->tools_changes++;
        break;
    case EVENT_ASKED:
        if ((unsigned)e->asked_kind < MCP_ASKED__COUNT)
            r->asked[e->asked_kind]++;
        break;
    case EVENT_ENDING:
        if (e->ending != NULL && e->ending->outcome != ENDING_PENDING &&
            (unsigned)e->ending->outcome < ENDING__COUNT)
            r->endings[e->ending->outcome]++;
        break;
    case EVENT_STATE:
        metrics_state(m, r, e);
        break;
    case EVENT_HEALTH:
        if (e->health != NULL && (unsigned)e->health->state < HEALTH__COUNT) {
            r->health = *e->health;
            r->health_set = true;
        }
        break;
    default:
        break;
    }
}

const struct failure *
metrics_current_failure(const struct server *s)
{
    const struct failure         *f = server_last_failure(s, NULL);
    const struct liveness        *l = server_liveness(s);
    size_t                        len = server_history_len(s);
    const struct mcp_exchange *x;

    if (f == NULL || !health_monitored(server_health(s, NULL).state))
        return NULL;
    if (len > 0) {
        x = server_history(s, len - 1);
        return x != NULL && !x->completed ? f : NULL;
    }
    if (f->kind == FAILURE_INVALID_CONFIG)
        return f;
    return l->present && l->state != LIVENESS_REACHABLE ? f : NULL;
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
    metrics_write(m, &b, fmt);
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
