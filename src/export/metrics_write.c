/*
 * The families of one scrape (metrics_render in metrics.c asks for them):
 * HELP, TYPE and UNIT of each family, then its samples, one line per
 * server and label set, written into the buffer of metrics_int.h. Gauges
 * are read from the servers now; counters and histograms come from the
 * records the event stream fed. No I/O but /proc/self/statm for the
 * process_* family.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "engine/ending.h"
#include "engine/failure.h"
#include "engine/fleet.h"
#include "engine/health.h"
#include "engine/liveness.h"
#include "engine/oauth_store.h"
#include "engine/server.h"
#include "util/clock.h"
#include "util/str.h"

#include "metrics_int.h"

enum metrics_type {
    METRICS_TYPE_GAUGE,
    METRICS_TYPE_COUNTER,
    METRICS_TYPE_HISTOGRAM,
    METRICS_TYPE_INFO,
};

static bool
metrics_write_ends_with(const char *s, const char *suffix)
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
metrics_write_head(struct metrics_buf *b, enum metrics_format fmt,
    const char *name, enum metrics_type type, const char *help)
{
    static const char *const types[] = {
        [METRICS_TYPE_GAUGE] = "gauge", [METRICS_TYPE_COUNTER] = "counter",
        [METRICS_TYPE_HISTOGRAM] = "histogram", [METRICS_TYPE_INFO] = "info",
    };
    char   family[96];
    size_t n = strlen(name);

    if (fmt == METRICS_OPENMETRICS && type == METRICS_TYPE_COUNTER &&
        metrics_write_ends_with(name, "_total"))
        n -= 6;
    else if (fmt == METRICS_OPENMETRICS && type == METRICS_TYPE_INFO &&
        metrics_write_ends_with(name, "_info"))
        n -= 5;
    snprintf(family, sizeof(family), "%.*s", (int)n, name);
    metrics_buf_str(b, "# HELP ");
    metrics_buf_str(b, family);
    metrics_buf_str(b, " ");
    metrics_buf_str(b, help);
    metrics_buf_str(b, "\n# TYPE ");
    metrics_buf_str(b, family);
    metrics_buf_str(b, " ");
    metrics_buf_str(b, fmt == METRICS_TEXT && type == METRICS_TYPE_INFO ?
        "gauge" : types[type]);
    metrics_buf_str(b, "\n");
    if (fmt == METRICS_OPENMETRICS &&
        (metrics_write_ends_with(family, "_seconds") ||
        metrics_write_ends_with(family, "_bytes"))) {
        metrics_buf_str(b, "# UNIT ");
        metrics_buf_str(b, family);
        metrics_buf_str(b, metrics_write_ends_with(family, "_seconds") ?
            " seconds\n" : " bytes\n");
    }
}

/* name{SERVER LABELS extra} (extra is "" or starts with ','), then a
 * space, with room for a value and the newline after it. */
static void
metrics_write_open_n(struct metrics_buf *b, const char *name, size_t nlen,
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
#define metrics_write_open(b, name, r, extra) \
    metrics_write_open_n((b), (name), sizeof(name) - 1, (r), (extra), \
        strlen(extra))

/* One label ,key="escaped value" appended to a fixed buffer. */
static size_t
metrics_write_label(char *dst, size_t dstsz, size_t off, const char *key,
    const char *value)
{
    char esc[2 * METRICS_LABEL_MAX + 1];

    metrics_label_value(esc, sizeof(esc), value);
    if (off < dstsz)
        off += (size_t)snprintf(dst + off, dstsz - off, ",%s=\"%s\"", key,
            esc);
    return off < dstsz ? off : dstsz - 1;
}

/*
 * One histogram series: name_bucket{LABELS extra,le=".."} per bound of bd,
 * then _sum and _count. labels (the server's, or a fleet-wide series' own)
 * and extra ("" or starting with ',') are written as given.
 */
static void
metrics_write_hist(struct metrics_buf *b, enum metrics_format fmt,
    const char *name, const char *labels, size_t llen, const char *extra,
    size_t elen, const struct metrics_bounds *bd,
    const struct metrics_hist *h)
{
    const char *const *le = fmt == METRICS_OPENMETRICS ? bd->le_om :
        bd->le_text;
    size_t             nlen = strlen(name);
    size_t             line = nlen + llen + elen + 64;
    const char        *sep = llen + elen > 0 ? "," : "";
    uint64_t           cum = 0;

    /* One reservation for the whole series. */
    metrics_buf_need(b, (bd->n + 3) * line);
    for (size_t i = 0; i <= bd->n; i++) {
        cum += h->bucket[i];
        metrics_buf_put(b, name, nlen);
        metrics_buf_put(b, "_bucket{", 8);
        metrics_buf_put(b, labels, llen);
        metrics_buf_put(b, extra, elen);
        metrics_buf_put(b, sep, strlen(sep));
        metrics_buf_put(b, "le=\"", 4);
        metrics_buf_put(b, le[i], strlen(le[i]));
        metrics_buf_put(b, "\"} ", 3);
        metrics_buf_put_u64(b, cum);
        metrics_buf_put(b, "\n", 1);
    }
    metrics_buf_put(b, name, nlen);
    metrics_buf_put(b, "_sum{", 5);
    metrics_buf_put(b, labels, llen);
    metrics_buf_put(b, extra, elen);
    metrics_buf_put(b, "} ", 2);
    metrics_buf_seconds(b, h->sum);
    metrics_buf_add(b, "\n", 1);
    metrics_buf_need(b, line);
    metrics_buf_put(b, name, nlen);
    metrics_buf_put(b, "_count{", 7);
    metrics_buf_put(b, labels, llen);
    metrics_buf_put(b, extra, elen);
    metrics_buf_put(b, "} ", 2);
    metrics_buf_put_u64(b, h->count);
    metrics_buf_put(b, "\n", 1);
}

/*
 * Liveness and what the last exchanges said: mcp_up (an exchange
 * completes: a degraded server is up), the last round trip and success,
 * the failure it is in now (a 1-valued info, only while failing), and
 * when the next attempt may go.
 */
static void
metrics_write_liveness(struct metrics *m, struct metrics_buf *b,
    enum metrics_format fmt)
{
    metrics_write_head(b, fmt, "mcp_up", METRICS_TYPE_GAUGE, "1 when the "
        "server's liveness is reachable (mcptop completed an exchange with "
        "it), else 0.");
    for (size_t i = 0; i < m->norder; i++) {
        const struct liveness *l = server_liveness(m->order[i]->server);

        metrics_write_open_n(b, "mcp_up", 6, m->order[i], "", 0);
        metrics_buf_put(b, l->present && l->state == LIVENESS_REACHABLE ?
            "1\n" : "0\n", 2);
    }
    metrics_write_head(b, fmt, "mcp_last_rtt_seconds", METRICS_TYPE_GAUGE,
        "The round trip of the last completed liveness exchange (or dial); "
        "absent while the server is failing or not monitored.");
    for (size_t i = 0; i < m->norder; i++) {
        const struct metrics_server *r = m->order[i];
        enum health_state            h = metrics_health_state(r);
        double                       rtt = server_rtt_ms(r->server);

        if (rtt < 0 || !health_monitored(h) ||
            metrics_current_failure(r->server) != NULL)
            continue;
        metrics_write_open(b, "mcp_last_rtt_seconds", r, "");
        metrics_buf_seconds(b, rtt / 1000.0);
        metrics_buf_add(b, "\n", 1);
    }
    metrics_write_head(b, fmt, "mcp_last_success_timestamp_seconds",
        METRICS_TYPE_GAUGE, "When an exchange with the server last "
        "completed (a dial, the liveness exchange, a listing, the deep "
        "check), epoch seconds; absent before one did.");
    for (size_t i = 0; i < m->norder; i++) {
        const struct metrics_server *r = m->order[i];

        if (r->last_success <= 0)
            continue;
        metrics_write_open(b, "mcp_last_success_timestamp_seconds", r, "");
        metrics_buf_epoch_ms(b, r->last_success);
        metrics_buf_add(b, "\n", 1);
    }
    metrics_write_head(b, fmt, "mcp_last_failure_info", METRICS_TYPE_INFO,
        "The failure the server is in now (its last exchange failed): kind, "
        "delivery verdict and (http_status only) reason; absent when it is "
        "not failing.");
    for (size_t i = 0; i < m->norder; i++) {
        const struct metrics_server *r = m->order[i];
        const struct failure        *f = metrics_current_failure(
            r->server);
        char                         extra[128];

        if (f == NULL || (unsigned)f->kind >= FAILURE__COUNT ||
            (unsigned)f->delivered >= DELIVERED__COUNT ||
            (unsigned)f->reason >= FAILURE_REASON__COUNT)
            continue;
        snprintf(extra, sizeof(extra),
            ",kind=\"%s\",delivered=\"%s\",reason=\"%s\"",
            failure_kind_name(f->kind), delivered_name(f->delivered),
            failure_reason_name(f->reason));
        metrics_write_open(b, "mcp_last_failure_info", r, extra);
        metrics_buf_add(b, "1\n", 2);
    }
    metrics_write_head(b, fmt, "mcp_next_attempt_timestamp_seconds",
        METRICS_TYPE_GAUGE, "When the next dial or request may go (backoff, "
        "Retry-After), epoch seconds; absent when nothing waits.");
    for (size_t i = 0; i < m->norder; i++) {
        int64_t at = server_next_attempt_ms(m->order[i]->server);

        if (at < 0)
            continue;
        metrics_write_open(b, "mcp_next_attempt_timestamp_seconds",
            m->order[i], "");
        metrics_buf_epoch_ms(b, at);
        metrics_buf_add(b, "\n", 1);
    }
}

/*
 * Health (DESIGN.md section 4b), the verdict check and watch show:
 * mcp_probe_success, blackbox_exporter's name, is 1 exactly when it is ok
 * and 0 for every other monitored state; the operator's states (paused,
 * stopped, disabled) get no sample, so an alert on == 0 never takes them
 * for down. mcp_health is the state set, one series per server: the
 * current state's, valued 1.
 */
static void
metrics_write_health(struct metrics *m, struct metrics_buf *b,
    enum metrics_format fmt)
{
    static const char *const states[HEALTH__COUNT] = {
#define X(id, name) ",state=\"" name "\"",
        HEALTH_STATES(X)
#undef X
    };

    metrics_write_head(b, fmt, "mcp_probe_success", METRICS_TYPE_GAUGE, "1 "
        "when the server's health is ok, else 0; no sample while it is "
        "paused, stopped or disabled (not monitored).");
    for (size_t i = 0; i < m->norder; i++) {
        enum health_state h = metrics_health_state(m->order[i]);

        if (!health_monitored(h))
            continue;
        metrics_write_open_n(b, "mcp_probe_success", 17, m->order[i], "", 0);
        metrics_buf_put(b, h == HEALTH_OK ? "1\n" : "0\n", 2);
    }
    metrics_write_head(b, fmt, "mcp_health", METRICS_TYPE_GAUGE, "The "
        "server's health, one series valued 1 labelled with the current "
        "state: ok, degraded, down, unknown, pending, invalid, paused, "
        "stopped or disabled.");
    for (size_t i = 0; i < m->norder; i++) {
        enum health_state h = metrics_health_state(m->order[i]);

        metrics_write_open_n(b, "mcp_health", 10, m->order[i], states[h],
            strlen(states[h]));
        metrics_buf_put(b, "1\n", 2);
    }
}

/* A tap's server (issue 31): the agent's requests in flight now, and how
 * long the oldest has waited (0 when none). Only tap entries have them. */
static void
metrics_write_tap(struct metrics *m, struct metrics_buf *b,
    enum metrics_format fmt)
{
    int64_t now = clock_wall_ms();

    metrics_write_head(b, fmt, "mcp_tap_in_flight_requests",
        METRICS_TYPE_GAUGE, "Requests in flight through the server's tap "
        "(both directions).");
    for (size_t i = 0; i < m->norder; i++) {
        const struct server *s = m->order[i]->server;

        if (!server_is_tap(s))
            continue;
        metrics_write_open(b, "mcp_tap_in_flight_requests", m->order[i], "");
        metrics_buf_u64(b, (uint64_t)server_in_flight(s));
        metrics_buf_add(b, "\n", 1);
    }
    metrics_write_head(b, fmt, "mcp_tap_oldest_in_flight_seconds",
        METRICS_TYPE_GAUGE, "How long the oldest request in flight through "
        "the server's tap has waited; 0 when none.");
    for (size_t i = 0; i < m->norder; i++) {
        const struct server         *s = m->order[i]->server;
        const struct server_request *r;
        double                       age = 0;

        if (!server_is_tap(s))
            continue;
        r = server_request(s, 0);
        if (r != NULL && now > r->started_at)
            age = (double)(now - r->started_at) / 1000.0;
        metrics_write_open(b, "mcp_tap_oldest_in_flight_seconds",
            m->order[i], "");
        metrics_buf_seconds(b, age);
        metrics_buf_add(b, "\n", 1);
    }
}

static void
metrics_write_counts(struct metrics *m, struct metrics_buf *b,
    enum metrics_format fmt)
{
    metrics_write_head(b, fmt, "mcp_tools", METRICS_TYPE_GAUGE, "Tools in the "
        "server's last complete tools/list.");
    for (size_t i = 0; i < m->norder; i++) {
        long n = server_tools(m->order[i]->server);

        if (n < 0)
            continue;
        metrics_write_open(b, "mcp_tools", m->order[i], "");
        metrics_buf_u64(b, (uint64_t)n);
        metrics_buf_add(b, "\n", 1);
    }
    metrics_write_tap(m, b, fmt);
    metrics_write_head(b, fmt, "mcp_tools_changes_total", METRICS_TYPE_COUNTER,
        "Listings that found a different tool set than the one before.");
    for (size_t i = 0; i < m->norder; i++) {
        metrics_write_open(b, "mcp_tools_changes_total", m->order[i], "");
        metrics_buf_u64(b, m->order[i]->tools_changes);
        metrics_buf_add(b, "\n", 1);
    }
    metrics_write_head(b, fmt, "mcp_failures_total", METRICS_TYPE_COUNTER,
        "Failed exchanges by failure kind, delivery verdict and (http_status "
        "only) reason.");
    for (size_t i = 0; i < m->norder; i++) {
        const struct metrics_server *r = m->order[i];

        for (size_t k = 0; k < r->nfails; k++) {
            char extra[128];

            snprintf(extra, sizeof(extra),
                ",kind=\"%s\",delivered=\"%s\",reason=\"%s\"",
                failure_kind_name(r->fails[k].kind),
                delivered_name(r->fails[k].delivered),
                failure_reason_name(r->fails[k].reason));
            metrics_write_open(b, "mcp_failures_total", r, extra);
            metrics_buf_u64(b, r->fails[k].n);
            metrics_buf_add(b, "\n", 1);
        }
    }
    metrics_write_head(b, fmt, "mcp_server_requests_total",
        METRICS_TYPE_COUNTER, "Requests the server sent its client (ping, "
        "roots/list, sampling/createMessage, elicitation/create, other), "
        "each answered at once.");
    for (size_t i = 0; i < m->norder; i++) {
        const struct metrics_server *r = m->order[i];

        for (int k = 0; k < MCP_ASKED__COUNT; k++) {
            char extra[64];

            if (r->asked[k] == 0)
                continue;
            snprintf(extra, sizeof(extra), ",method=\"%s\"",
                mcp_asked_name((enum mcp_asked)k));
            metrics_write_open(b, "mcp_server_requests_total", r, extra);
            metrics_buf_u64(b, r->asked[k]);
            metrics_buf_add(b, "\n", 1);
        }
    }
    metrics_write_head(b, fmt, "mcp_endings_total", METRICS_TYPE_COUNTER,
        "Session endings by outcome.");
    for (size_t i = 0; i < m->norder; i++) {
        const struct metrics_server *r = m->order[i];

        for (size_t o = 0; o < ENDING__COUNT; o++) {
            char extra[64];

            if (r->endings[o] == 0)
                continue;
            snprintf(extra, sizeof(extra), ",outcome=\"%s\"",
                ending_outcome_name((enum ending_outcome)o));
            metrics_write_open(b, "mcp_endings_total", r, extra);
            metrics_buf_u64(b, r->endings[o]);
            metrics_buf_add(b, "\n", 1);
        }
    }
}

/*
 * What will stop working on a date: the certificate an https server
 * presented (from libcurl's certificate info, on each new connection) and
 * a cached OAuth token (the token cache's expires_at), with whether mcptop
 * can get another without a person: a refresh token, or the client
 * credentials grant.
 */
static void
metrics_write_expiry(struct metrics *m, struct metrics_buf *b,
    enum metrics_format fmt)
{
    metrics_write_head(b, fmt, "mcp_tls_cert_not_after_timestamp_seconds",
        METRICS_TYPE_GAUGE, "When the certificate the https server "
        "presented on its last new connection expires (notAfter), epoch "
        "seconds.");
    for (size_t i = 0; i < m->norder; i++) {
        int64_t t = server_tls_not_after(m->order[i]->server);

        if (t <= 0)
            continue;
        metrics_write_open(b, "mcp_tls_cert_not_after_timestamp_seconds",
            m->order[i], "");
        metrics_buf_u64(b, (uint64_t)t);
        metrics_buf_add(b, "\n", 1);
    }
    metrics_write_head(b, fmt, "mcp_oauth_token_expiry_timestamp_seconds",
        METRICS_TYPE_GAUGE, "When the server's cached OAuth access token "
        "expires, epoch seconds; refreshable is false when no new one can "
        "come without a person (no refresh token, not client_credentials).");
    for (size_t i = 0; m->opt.tokens != NULL && i < m->norder; i++) {
        const struct metrics_server *r = m->order[i];
        const struct config_server  *d = server_decl(r->server);
        const struct oauth_token    *t;
        bool                         fresh;

        if (r->resource == NULL)
            continue;
        t = oauth_store_find(m->opt.tokens, r->name, r->resource);
        if (t == NULL || t->expires_at <= 0)
            continue;
        fresh = (t->refresh_token != NULL && t->token_endpoint != NULL) ||
            (d->oauth != NULL &&
            d->oauth->grant == CONFIG_OAUTH_CLIENT_CREDENTIALS);
        metrics_write_open(b, "mcp_oauth_token_expiry_timestamp_seconds", r,
            fresh ? ",refreshable=\"true\"" : ",refreshable=\"false\"");
        metrics_buf_u64(b, (uint64_t)t->expires_at);
        metrics_buf_add(b, "\n", 1);
    }
}

static void
metrics_write_info(struct metrics *m, struct metrics_buf *b,
    enum metrics_format fmt)
{
    metrics_write_head(b, fmt, "mcp_server_info", METRICS_TYPE_INFO, "The "
        "server as mcptop last saw it: transport, era, MCP revision, "
        "serverInfo name and version (sanitized), and the liveness "
        "exchange's method (ping, tools/list, server/discover).");
    for (size_t i = 0; i < m->norder; i++) {
        struct metrics_server     *r = m->order[i];
        const struct server       *s = r->server;
        struct mcp_session_info si;
        const char                *era = mcp_era_name(server_era(s));
        const char                *v[6];
        char                       key[6 * (METRICS_LABEL_MAX + 1)];
        size_t                     klen = 0;

        memset(&si, 0, sizeof(si));
        server_session(s, &si);
        v[0] = server_transport_name(s);
        v[1] = era != NULL ? era : "";
        v[2] = si.protocol_version != NULL ? si.protocol_version : "";
        v[3] = si.server_name != NULL ? si.server_name : "";
        v[4] = si.server_version != NULL ? si.server_version : "";
        v[5] = server_liveness_method(s);
        /* The labels are rebuilt only when a value changed (the server
         * texts pass the sanitizer and the escaper once per change). */
        for (size_t k = 0; k < 6; k++) {
            size_t n = strnlen(v[k], METRICS_LABEL_MAX);

            memcpy(key + klen, v[k], n);
            klen += n;
            key[klen++] = '\x1f';
        }
        if (r->info_key == NULL || strlen(r->info_key) != klen ||
            memcmp(r->info_key, key, klen) != 0) {
            char   extra[7 * (2 * METRICS_LABEL_MAX + 24)];
            size_t off = 0;

            extra[0] = '\0';
            off = metrics_write_label(extra, sizeof(extra), off,
                "transport", v[0]);
            off = metrics_write_label(extra, sizeof(extra), off, "era",
                v[1]);
            off = metrics_write_label(extra, sizeof(extra), off,
                "protocol_version", v[2]);
            off = metrics_write_label(extra, sizeof(extra), off,
                "server_name", v[3]);
            off = metrics_write_label(extra, sizeof(extra), off,
                "server_version", v[4]);
            off = metrics_write_label(extra, sizeof(extra), off,
                "liveness_method", v[5]);
            free(r->info_key);
            free(r->info_labels);
            r->info_key = str_ndup(key, klen);
            r->info_labels = str_ndup(extra, off);
            r->info_len = off;
        }
        metrics_write_open_n(b, "mcp_server_info", 15, r, r->info_labels,
            r->info_len);
        metrics_buf_put(b, "1\n", 2);
    }
}

static void
metrics_write_histograms(struct metrics *m, struct metrics_buf *b,
    enum metrics_format fmt)
{
    metrics_write_head(b, fmt, "mcp_client_operation_duration_seconds",
        METRICS_TYPE_HISTOGRAM, "The liveness exchange (ping, "
        "server/discover, or tools/list where ping is unsupported), from "
        "send to outcome (OpenTelemetry mcp.client.operation.duration); "
        "error_type is the JSON-RPC error code or the mcptop failure kind, "
        "absent on success.");
    for (size_t i = 0; i < m->norder; i++) {
        const struct metrics_server *r = m->order[i];

        for (size_t k = 0; k < r->nseries; k++) {
            const struct metrics_series *sr = &r->series[k];

            metrics_write_hist(b, fmt,
                "mcp_client_operation_duration_seconds", r->labels,
                r->labels_len, sr->labels, sr->labels_len, &metrics_live,
                &sr->h);
        }
    }
    metrics_write_head(b, fmt, "mcp_dial_duration_seconds",
        METRICS_TYPE_HISTOGRAM, "Dials that completed (connect, initialize "
        "or server/discover, and the first listing, timed as one), "
        "fleet-wide by transport and era.");
    for (size_t i = 0; i < m->ndials; i++)
        metrics_write_hist(b, fmt, "mcp_dial_duration_seconds",
            m->dials[i].labels, m->dials[i].labels_len, "", 0,
            &metrics_live, &m->dials[i].h);
    metrics_write_head(b, fmt, "mcp_client_session_duration_seconds",
        METRICS_TYPE_HISTOGRAM, "Sessions that ended, from open to no longer "
        "usable (OpenTelemetry mcp.client.session.duration), fleet-wide by "
        "transport and era.");
    for (size_t i = 0; i < m->nsessions; i++)
        metrics_write_hist(b, fmt, "mcp_client_session_duration_seconds",
            m->sessions[i].labels, m->sessions[i].labels_len, "", 0,
            &metrics_session, &m->sessions[i].h);
}

/* A sample with no server label: name{labels} value. */
static void
metrics_write_plain(struct metrics_buf *b, const char *name,
    const char *labels, double value)
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
    off = metrics_write_label(labels, sizeof(labels), off, "version",
        m->opt.version != NULL ? m->opt.version : "");
    off = metrics_write_label(labels, sizeof(labels), off, "libcurl",
        m->opt.libcurl != NULL ? m->opt.libcurl : "");
    metrics_write_label(labels, sizeof(labels), off, "libmicrohttpd",
        m->opt.libmicrohttpd != NULL ? m->opt.libmicrohttpd : "");
    metrics_write_head(b, fmt, "mcptop_build_info", METRICS_TYPE_INFO,
        "mcptop's version and the versions of the libraries it runs on.");
    metrics_write_plain(b, "mcptop_build_info", labels + 1, 1);
    metrics_write_head(b, fmt, "mcptop_servers", METRICS_TYPE_GAUGE, "Servers "
        "this mcptop watches (its shard's share of the config).");
    metrics_write_plain(b, "mcptop_servers", NULL, (double)m->norder);
    if (m->opt.shard != NULL) {
        labels[0] = '\0';
        metrics_write_label(labels, sizeof(labels), 0, "shard", m->opt.shard);
        metrics_write_head(b, fmt, "mcptop_shard_info", METRICS_TYPE_INFO,
            "The shard K/N this mcptop watches (--shard).");
        metrics_write_plain(b, "mcptop_shard_info", labels + 1, 1);
    }
    metrics_write_head(b, fmt, "mcptop_config_last_reload_successful",
        METRICS_TYPE_GAUGE, "0 when the last config reload (SIGHUP) failed "
        "and the config before it still runs, else 1.");
    metrics_write_plain(b, "mcptop_config_last_reload_successful", NULL,
        m->reload_ok ? 1 : 0);
    metrics_write_head(b, fmt,
        "mcptop_config_last_reload_success_timestamp_seconds",
        METRICS_TYPE_GAUGE, "When the running config was loaded, epoch "
        "seconds.");
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
        metrics_write_head(b, fmt, "process_cpu_seconds_total",
            METRICS_TYPE_COUNTER, "User and system CPU time spent, seconds.");
        metrics_write_plain(b, "process_cpu_seconds_total", NULL,
            (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
            ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) /
            1e6);
    }
    f = fopen("/proc/self/statm", "r");
    if (f != NULL) {
        if (fscanf(f, "%lu %lu", &vsz, &rss) == 2 && page > 0) {
            metrics_write_head(b, fmt, "process_virtual_memory_bytes",
                METRICS_TYPE_GAUGE, "Virtual memory size, bytes.");
            metrics_write_plain(b, "process_virtual_memory_bytes", NULL,
                (double)vsz * (double)page);
            metrics_write_head(b, fmt, "process_resident_memory_bytes",
                METRICS_TYPE_GAUGE, "Resident memory size, bytes.");
            metrics_write_plain(b, "process_resident_memory_bytes", NULL,
                (double)rss * (double)page);
        }
        fclose(f);
    }
    /* No process_open_fds: counting /proc/self/fd costs the kernel a
     * lookup per descriptor, a fifth of a scrape at 10,000 servers. */
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        metrics_write_head(b, fmt, "process_max_fds", METRICS_TYPE_GAUGE,
            "The file descriptor limit (soft).");
        metrics_write_plain(b, "process_max_fds", NULL,
            rl.rlim_cur == RLIM_INFINITY ? INFINITY : (double)rl.rlim_cur);
    }
    metrics_write_head(b, fmt, "process_start_time_seconds",
        METRICS_TYPE_GAUGE, "When the process started, epoch seconds.");
    metrics_buf_str(b, "process_start_time_seconds ");
    metrics_buf_epoch_ms(b, m->started);
    metrics_buf_add(b, "\n", 1);
}

/* Every family, in the order a scrape has always listed them. */
void
metrics_write(struct metrics *m, struct metrics_buf *b,
    enum metrics_format fmt)
{
    metrics_write_liveness(m, b, fmt);
    metrics_write_health(m, b, fmt);
    metrics_write_counts(m, b, fmt);
    metrics_write_expiry(m, b, fmt);
    metrics_write_info(m, b, fmt);
    metrics_write_histograms(m, b, fmt);
    metrics_write_self(m, b, fmt);
    if (m->opt.process)
        metrics_write_process(m, b, fmt);
}
