/*
 * The Prometheus view of a fleet (issue 20). Counters and histograms are
 * fed by the engine's event stream (metrics_event_cb is a subscriber like
 * the TUI or `watch`); gauges are read from the servers when a scrape asks.
 * metrics_render writes one scrape, in the Prometheus text format 0.0.4 or
 * in OpenMetrics 1.0.0. No I/O, no HTTP: `mcptop serve` hands the text to
 * its HTTP server, and the tests read it directly.
 *
 * The two MCP instruments follow the OpenTelemetry semantic conventions for
 * MCP (open-telemetry/semantic-conventions-genai, docs/gen-ai/mcp.md at
 * commit 1e01e830, status Development), translated the Prometheus way:
 * mcp.client.operation.duration (s) is mcp_client_operation_duration_seconds
 * {mcp_method_name, error_type}, kept per server for the liveness exchange
 * only (ping, server/discover, or tools/list where ping is unsupported),
 * with METRICS_LIVE_BUCKETS bounds from 1 ms to 10 s;
 * mcp.client.session.duration (s) is mcp_client_session_duration_seconds,
 * fleet-wide by transport and era, with the conventions' own bounds. The
 * dial (no convention names it) is mcp_dial_duration_seconds, fleet-wide by
 * transport and era too: a per-server histogram filled once a session was
 * a dozen series of nothing (issue 29).
 *
 * Labels stay bounded: a server is its config name (sanitized, escaped,
 * made unique), never a session id, a user, a URL path or query; every
 * other label takes values from a closed set, except error_type's JSON-RPC
 * codes (server-chosen), which are capped per server (METRICS_MAX_SERIES).
 * A healthy server has METRICS_SERIES_HEALTHY series (README, "mcptop
 * serve").
 */
#ifndef MCPTOP_EXPORT_METRICS_H
#define MCPTOP_EXPORT_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/event.h"

struct fleet;
struct metrics;
struct oauth_store;

enum metrics_format {
    METRICS_TEXT,           /* text/plain; version=0.0.4 */
    METRICS_OPENMETRICS,    /* application/openmetrics-text; version=1.0.0 */
};

/* The liveness exchange's and the dial's bucket upper bounds, seconds:
 * 1 ms to 10 s, a factor of 4 to 5 apart (loopback and LAN round trips
 * are 0.3-5 ms; the conventions' first bound, 10 ms, hid them). */
#define METRICS_LIVE_BUCKETS 7
extern const double metrics_live_bounds[METRICS_LIVE_BUCKETS];
/* The conventions' bucket upper bounds, seconds (mcp.md, "Metrics"), for
 * session durations. */
#define METRICS_SESSION_BUCKETS 14
extern const double metrics_session_bounds[METRICS_SESSION_BUCKETS];

/* Series a healthy server (ok, its liveness exchange completing, over
 * http or stdio) has in a scrape: mcp_probe_success, mcp_health, mcp_up,
 * mcp_last_rtt_seconds, mcp_last_success_timestamp_seconds, mcp_tools,
 * mcp_tools_changes_total, mcp_server_info, and the liveness histogram's
 * METRICS_LIVE_BUCKETS + 1 buckets, _sum and _count. An https server adds
 * its certificate's expiry, a server with a cached OAuth token the
 * token's. */
#define METRICS_SERIES_HEALTHY (8 + METRICS_LIVE_BUCKETS + 3)

/* Liveness histogram series per server (method x error_type) at most;
 * past it, new combinations count in one series {mcp_method_name="other",
 * error_type="_OTHER"}. */
#define METRICS_MAX_SERIES 8
/* Longest label value written (bytes, before escaping); longer ones are
 * cut on a UTF-8 boundary. */
#define METRICS_LABEL_MAX 128

struct metrics_options {
    const char         *version;        /* mcptop's; "" when NULL */
    const char         *libcurl;        /* library versions, for */
    const char         *libmicrohttpd;  /* mcptop_build_info */
    const char         *shard;          /* "K/N", or NULL when unsharded */
    /* --label-from-tags: tag keys that become labels of every per-server
     * series (a tag "KEY=VALUE" or "KEY:VALUE" gives KEY="VALUE"; ""
     * when the server has none). Checked with metrics_tag_label_ok.
     * Borrowed for the life of the metrics. */
    const char *const  *tag_labels;
    size_t              ntag_labels;
    bool                process;        /* the usual process_* metrics */
    /* The token cache, for mcp_oauth_token_expiry_timestamp_seconds (its
     * entries' expiry by server name and resource); NULL: none. Borrowed:
     * its owner reloads it before a scrape. */
    const struct oauth_store *tokens;
};

/* New, empty metrics. opt is copied (its strings are borrowed). Never
 * NULL. */
struct metrics *metrics_new(const struct metrics_options *opt);
/* NULL does nothing. */
void metrics_free(struct metrics *m);

/*
 * Match the per-server records to f's servers: call after fleet_new and
 * after every fleet_reload. A server keeps its counters while its name
 * stays in the fleet; the records of names that left are dropped. f is
 * borrowed until the next metrics_sync or metrics_free.
 */
void metrics_sync(struct metrics *m, const struct fleet *f);

/* event_cb: fold one engine event into the counters (arg is the
 * metrics). Events of servers not known at the last sync are ignored. */
void metrics_event_cb(void *arg, const struct event *e);

/* The outcome of a config reload (SIGHUP) at ts (epoch ms). */
void metrics_reload_result(struct metrics *m, bool ok, int64_t ts);

/*
 * One scrape of every family, in fleet order. Returns a heap buffer
 * (malloc'd: the caller frees it with free()) of *len bytes, not
 * NUL-terminated past *len.
 */
char *metrics_render(struct metrics *m, enum metrics_format fmt,
    size_t *len);

/*
 * The failure s is in now: its last failure while its last exchange
 * failed (or, before any exchange, while its declaration cannot be
 * dialed or its liveness is not reachable), and it is monitored. NULL
 * when it is not failing. Borrowed, as server_last_failure's. The TUI's
 * model_current_failure reads the same.
 */
struct server;
const struct failure *metrics_current_failure(const struct server *s);

/* Servers of the synced fleet whose first dial has not settled (0 when
 * the fleet is ready to be read). */
size_t metrics_pending_dials(const struct metrics *m);

/* The format an Accept header asks for: OpenMetrics when it names
 * application/openmetrics-text (version 1.0.0 or none) with a q at least
 * that of text/plain and above 0; else text. NULL means text. */
enum metrics_format metrics_negotiate(const char *accept);
/* The Content-Type of fmt. Static string. */
const char *metrics_content_type(enum metrics_format fmt);

/*
 * A label value as the exposition formats want it: src sanitized (control
 * characters and escape sequences dropped, invalid UTF-8 as '?'), cut to
 * METRICS_LABEL_MAX bytes, then '\\', '"' and newline escaped. Writes a
 * NUL-terminated string to dst (dstsz >= 2 * METRICS_LABEL_MAX + 1 holds
 * any value) and returns its length.
 */
size_t metrics_label_value(char *dst, size_t dstsz, const char *src);
/* True when name can be a --label-from-tags label: [a-zA-Z_][a-zA-Z0-9_]*,
 * not starting with "__", and not a label mcptop already writes. */
bool metrics_tag_label_ok(const char *name);

#endif
