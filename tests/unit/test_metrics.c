/*
 * Tests for the Prometheus view (export/metrics.h): the exposition read back
 * by a small checker of both formats (names, HELP/TYPE once per family and
 * before its samples, label syntax and escapes, no duplicate series,
 * histograms cumulative with +Inf equal to _count), the OpenTelemetry MCP
 * buckets and error_type, label sanitizing and uniqueness, the per-server
 * series cap, Accept negotiation, and records kept by name across a new
 * fleet. The fleet is real (fleet_new over a parsed config) but never
 * started; exchanges are fed as the engine publishes them.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <ev.h>

#include "export/metrics.h"
#include "engine/config.h"
#include "engine/ending.h"
#include "engine/event.h"
#include "engine/failure.h"
#include "engine/fleet.h"
#include "engine/health.h"
#include "engine/http.h"
#include "engine/server.h"

/* ------------------------------------------------------------ the checker */

struct sample {
    char   name[128];
    char   labels[1024];    /* as written, without the braces */
    double value;
};

struct expo {
    struct sample *s;
    size_t         n;
    char           families[64][128];
    char           types[64][16];
    size_t         nfam;
};

static bool
name_char(char c, bool first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
        c == ':' || (!first && c >= '0' && c <= '9');
}

/* Does the sample name belong to family fam of type type in fmt? */
static bool
belongs(const char *name, const char *fam, const char *type,
    enum metrics_format fmt)
{
    char want[160];

    if (strcmp(type, "histogram") == 0) {
        static const char *const sfx[] = { "_bucket", "_sum", "_count" };

        for (size_t i = 0; i < 3; i++) {
            snprintf(want, sizeof(want), "%s%s", fam, sfx[i]);
            if (strcmp(name, want) == 0)
                return true;
        }
        return false;
    }
    if (fmt == METRICS_OPENMETRICS && strcmp(type, "counter") == 0) {
        snprintf(want, sizeof(want), "%s_total", fam);
        return strcmp(name, want) == 0;
    }
    if (fmt == METRICS_OPENMETRICS && strcmp(type, "info") == 0) {
        snprintf(want, sizeof(want), "%s_info", fam);
        return strcmp(name, want) == 0;
    }
    return strcmp(name, fam) == 0;
}

/* Check one label list "a=\"x\",b=\"y\"": names, quotes, escapes. */
static void
check_labels(const char *l, size_t n)
{
    size_t i = 0;

    while (i < n) {
        assert_true(name_char(l[i], true));
        while (i < n && name_char(l[i], false))
            i++;
        assert_true(i + 1 < n && l[i] == '=' && l[i + 1] == '"');
        i += 2;
        while (i < n && l[i] != '"') {
            assert_true((unsigned char)l[i] >= 0x20);
            if (l[i] == '\\') {
                assert_true(i + 1 < n);
                assert_non_null(strchr("\\\"n", l[i + 1]));
                i++;
            }
            i++;
        }
        assert_true(i < n);         /* the closing quote */
        i++;
        if (i < n) {
            assert_int_equal(l[i], ',');
            i++;
        }
    }
}

/* Parse and check a whole exposition; fills e (free with expo_free). */
static void
expo_parse(const char *text, size_t len, enum metrics_format fmt,
    struct expo *e)
{
    const char *p = text, *end = text + len;
    const char *type = NULL, *fam = NULL;
    bool        eof = false;

    memset(e, 0, sizeof(*e));
    assert_true(len > 0 && text[len - 1] == '\n');
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t      n = (size_t)(nl - p);
        char        line[2048];

        assert_non_null(nl);
        assert_true(n > 0 && n < sizeof(line));
        memcpy(line, p, n);
        line[n] = '\0';
        p = nl + 1;
        assert_false(eof);          /* nothing after # EOF */
        if (strcmp(line, "# EOF") == 0) {
            assert_int_equal(fmt, METRICS_OPENMETRICS);
            eof = true;
            continue;
        }
        if (strncmp(line, "# HELP ", 7) == 0) {
            char *sp = strchr(line + 7, ' ');

            assert_non_null(sp);
            assert_true(e->nfam < 64);
            *sp = '\0';
            for (size_t i = 0; i < e->nfam; i++)
                assert_string_not_equal(e->families[i], line + 7);
            assert_true(strlen(line + 7) < sizeof(e->families[0]));
            memcpy(e->families[e->nfam], line + 7, strlen(line + 7) + 1);
            /* OpenMetrics forbids a raw quote in HELP. */
            assert_null(strchr(sp + 1, '"'));
            continue;
        }
        if (strncmp(line, "# TYPE ", 7) == 0) {
            char *sp = strchr(line + 7, ' ');

            assert_non_null(sp);
            *sp = '\0';
            assert_string_equal(line + 7, e->families[e->nfam]);
            assert_true(strcmp(sp + 1, "gauge") == 0 ||
                strcmp(sp + 1, "counter") == 0 ||
                strcmp(sp + 1, "histogram") == 0 ||
                (fmt == METRICS_OPENMETRICS && strcmp(sp + 1, "info") == 0));
            if (fmt == METRICS_TEXT && strcmp(sp + 1, "counter") == 0)
                assert_non_null(strstr(line + 7, "_total"));
            snprintf(e->types[e->nfam], sizeof(e->types[0]), "%s", sp + 1);
            fam = e->families[e->nfam];
            type = e->types[e->nfam];
            e->nfam++;
            continue;
        }
        if (strncmp(line, "# UNIT ", 7) == 0) {
            assert_int_equal(fmt, METRICS_OPENMETRICS);
            assert_non_null(fam);
            continue;
        }
        assert_true(line[0] != '#');
        {
            struct sample s = { 0 };
            char         *brace = strchr(line, '{');
            char         *sp, *vend;
            size_t        k = 0;

            while (name_char(line[k], k == 0))
                k++;
            assert_true(k > 0 && k < sizeof(s.name));
            memcpy(s.name, line, k);
            assert_non_null(fam);
            assert_true(belongs(s.name, fam, type, fmt));
            if (brace == line + k) {
                char *close = strstr(line + k, "} ");

                assert_non_null(close);
                check_labels(brace + 1, (size_t)(close - brace - 1));
                assert_true((size_t)(close - brace - 1) < sizeof(s.labels));
                memcpy(s.labels, brace + 1, (size_t)(close - brace - 1));
                sp = close + 1;
            } else {
                sp = line + k;
            }
            assert_int_equal(*sp, ' ');
            s.value = strtod(sp + 1, &vend);
            assert_true(vend != sp + 1 && *vend == '\0');
            for (size_t i = 0; i < e->n; i++)
                assert_false(strcmp(e->s[i].name, s.name) == 0 &&
                    strcmp(e->s[i].labels, s.labels) == 0);
            e->s = realloc(e->s, (e->n + 1) * sizeof(*e->s));
            e->s[e->n++] = s;
        }
    }
    assert_int_equal(eof, fmt == METRICS_OPENMETRICS);
}

static void
expo_free(struct expo *e)
{
    free(e->s);
}

/* The value of the sample name{labels}; fails when absent. */
static double
expo_value(const struct expo *e, const char *name, const char *labels)
{
    for (size_t i = 0; i < e->n; i++) {
        if (strcmp(e->s[i].name, name) == 0 &&
            strcmp(e->s[i].labels, labels) == 0)
            return e->s[i].value;
    }
    fail_msg("no sample %s{%s}", name, labels);
    return -1;
}

static bool
expo_has(const struct expo *e, const char *name, const char *labels)
{
    for (size_t i = 0; i < e->n; i++) {
        if (strcmp(e->s[i].name, name) == 0 &&
            (labels == NULL || strcmp(e->s[i].labels, labels) == 0))
            return true;
    }
    return false;
}

/* Samples whose name is name and whose labels start with prefix. */
static size_t
expo_count(const struct expo *e, const char *name, const char *prefix)
{
    size_t n = 0;

    for (size_t i = 0; i < e->n; i++) {
        if (strcmp(e->s[i].name, name) == 0 &&
            strncmp(e->s[i].labels, prefix, strlen(prefix)) == 0)
            n++;
    }
    return n;
}

/* Every histogram series: nb finite buckets and +Inf, cumulative, the
 * last +Inf == _count. */
static void
expo_check_histograms(const struct expo *e, const char *fam, size_t nb)
{
    char bucket[160], count[160];

    snprintf(bucket, sizeof(bucket), "%s_bucket", fam);
    snprintf(count, sizeof(count), "%s_count", fam);
    for (size_t i = 0; i < e->n; i++) {
        char   base[1100];
        char  *le;
        double last = -1;
        size_t seen = 0;

        if (strcmp(e->s[i].name, count) != 0)
            continue;
        snprintf(base, sizeof(base), "%s%sle=\"", e->s[i].labels,
            e->s[i].labels[0] != '\0' ? "," : "");
        for (size_t j = 0; j < e->n; j++) {
            if (strcmp(e->s[j].name, bucket) != 0 ||
                strncmp(e->s[j].labels, base, strlen(base)) != 0)
                continue;
            le = e->s[j].labels + strlen(base);
            assert_true(e->s[j].value >= last);
            last = e->s[j].value;
            seen++;
            if (strcmp(le, "+Inf\"") == 0)
                assert_true(e->s[j].value == e->s[i].value);
        }
        assert_int_equal(seen, nb + 1);
    }
}

/* ------------------------------------------------------------ fixtures */

struct fixture {
    struct ev_loop *loop;
    struct config  *cfg;
    struct fleet   *fleet;
    struct metrics *m;
};

/* Servers that are never dialed (the fleet is not started). */
static const char fleet_json[] =
    "{\"mcpServers\": {"
    " \"alpha\": {\"url\": \"http://127.0.0.1:9/mcp\", "
    "\"tags\": [\"team=core\", \"env:prod\"]},"
    " \"we\\\"ird\\\\name\": {\"url\": \"http://127.0.0.1:9/b\"},"
    " \"esc\\u001b[31mred\": {\"url\": \"http://127.0.0.1:9/c\"},"
    " \"escred\": {\"url\": \"http://127.0.0.1:9/d\"},"
    " \"tool\": {\"command\": \"/bin/true\"}"
    "}}";

static const char *const tag_keys[] = { "team", "env" };

static struct fleet *
fixture_fleet(struct fixture *fx, const char *json)
{
    struct fleet_options opt = { 0 };
    char                *cause = NULL;
    struct fleet        *f;

    assert_int_equal(config_parse(json, strlen(json), "test", &fx->cfg,
        &cause), 0);
    f = fleet_new(fx->loop, fx->cfg, &opt, &cause);
    assert_non_null(f);
    return f;
}

static int
setup(void **state)
{
    struct fixture        *fx = calloc(1, sizeof(*fx));
    struct metrics_options mo = {
        .version = "9.9.9", .libcurl = "libcurl/8.0 \"q\"",
        .libmicrohttpd = "0.9.75", .shard = "2/3",
        .tag_labels = tag_keys, .ntag_labels = 2, .process = true,
    };

    http_global_init();
    fx->loop = ev_loop_new(EVFLAG_AUTO);
    fx->fleet = fixture_fleet(fx, fleet_json);
    fx->m = metrics_new(&mo);
    metrics_sync(fx->m, fx->fleet);
    *state = fx;
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *fx = *state;

    metrics_free(fx->m);
    fleet_free(fx->fleet);
    config_free(fx->cfg);
    ev_loop_destroy(fx->loop);
    http_global_cleanup();
    free(fx);
    return 0;
}

static struct server *
server_named(struct fleet *f, const char *name)
{
    for (size_t i = 0; i < fleet_size(f); i++) {
        if (strcmp(server_name(fleet_server(f, i)), name) == 0)
            return fleet_server(f, i);
    }
    fail_msg("no server %s", name);
    return NULL;
}

/* Feed one exchange as the engine publishes it. */
static void
feed(struct metrics *m, const struct server *s, const char *op, double ms,
    const struct failure *f)
{
    struct event e = { .type = EVENT_EXCHANGE, .server = s, .ts = 1000,
        .op = op, .completed = f == NULL, .failure = f, .ms = ms };

    metrics_event_cb(m, &e);
}

static void
render(struct fixture *fx, enum metrics_format fmt, struct expo *e,
    char **text)
{
    size_t len = 0;
    char  *t = metrics_render(fx->m, fmt, &len);

    expo_parse(t, len, fmt, e);
    if (text != NULL) {
        *text = realloc(t, len + 1);
        (*text)[len] = '\0';
    } else {
        free(t);
    }
}

#define A "server=\"alpha\",team=\"core\",env=\"prod\""

/* ------------------------------------------------------------ tests */

/* Every family present, well-formed in both formats; gauges of servers
 * that were never dialed; build and process metrics. */
static void
test_families(void **state)
{
    struct fixture *fx = *state;
    struct expo     e;
    char           *text;
    static const char *const families[] = {
        "mcp_up", "mcp_last_rtt_seconds",
        "mcp_last_success_timestamp_seconds", "mcp_last_failure_info",
        "mcp_probe_success", "mcp_health", "mcp_dial_duration_seconds",
        "mcp_tools", "mcp_tools_changes_total", "mcp_failures_total",
        "mcp_endings_total", "mcp_server_info",
        "mcp_client_operation_duration_seconds",
        "mcp_client_session_duration_seconds", "mcptop_build_info",
        "mcptop_servers", "mcptop_shard_info",
        "mcptop_config_last_reload_successful",
        "mcptop_config_last_reload_success_timestamp_seconds",
        "process_cpu_seconds_total", "process_resident_memory_bytes",
        "process_max_fds", "process_start_time_seconds",
    };

    render(fx, METRICS_TEXT, &e, &text);
    for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
        bool found = false;

        for (size_t k = 0; k < e.nfam; k++)
            found |= strcmp(e.families[k], families[i]) == 0;
        if (!found)
            fail_msg("family %s missing", families[i]);
    }
    assert_true(expo_value(&e, "mcp_up", A) == 0);
    assert_true(expo_value(&e, "mcp_probe_success", A) == 0);
    assert_true(expo_value(&e, "mcp_health", A ",state=\"pending\"") == 1);
    /* The lean set: no liveness state set, no observation timestamp. */
    assert_false(expo_has(&e, "mcp_liveness", NULL));
    assert_false(expo_has(&e, "mcp_last_observation_timestamp_seconds",
        NULL));
    /* No observation: no round trip, no success, no failure, no tools,
     * no histogram series. */
    assert_false(expo_has(&e, "mcp_last_rtt_seconds", NULL));
    assert_false(expo_has(&e, "mcp_last_success_timestamp_seconds", NULL));
    assert_false(expo_has(&e, "mcp_last_failure_info", NULL));
    assert_false(expo_has(&e, "mcp_tools", NULL));
    assert_false(expo_has(&e, "mcp_dial_duration_seconds_count", NULL));
    assert_true(expo_value(&e, "mcp_tools_changes_total", A) == 0);
    assert_true(expo_value(&e, "mcp_server_info", A ",transport=\"http\","
        "era=\"\",protocol_version=\"\",server_name=\"\","
        "server_version=\"\",liveness_method=\"ping\"") == 1);
    assert_true(expo_value(&e, "mcptop_servers", "") == 5);
    assert_true(expo_value(&e, "mcptop_shard_info", "shard=\"2/3\"") == 1);
    assert_true(expo_value(&e, "mcptop_build_info", "version=\"9.9.9\","
        "libcurl=\"libcurl/8.0 \\\"q\\\"\",libmicrohttpd=\"0.9.75\"") == 1);
    assert_true(expo_value(&e, "mcptop_config_last_reload_successful", "")
        == 1);
    assert_true(expo_value(&e, "process_cpu_seconds_total", "") > 0);
    assert_true(expo_value(&e, "process_max_fds", "") > 2);
    /* Nothing waits (never dialed): the family is declared, no sample. */
    assert_non_null(strstr(text,
        "# TYPE mcp_next_attempt_timestamp_seconds gauge\n"));
    assert_false(expo_has(&e, "mcp_next_attempt_timestamp_seconds", NULL));
    /* Text: the info is a gauge, no EOF. */
    assert_non_null(strstr(text, "# TYPE mcp_server_info gauge\n"));
    assert_null(strstr(text, "# EOF"));
    free(text);
    expo_free(&e);

    render(fx, METRICS_OPENMETRICS, &e, &text);
    assert_non_null(strstr(text, "# TYPE mcp_failures counter\n"));
    assert_non_null(strstr(text, "# TYPE mcp_server info\n"));
    assert_non_null(strstr(text, "# TYPE mcptop_build info\n"));
    assert_non_null(strstr(text, "# UNIT mcp_client_operation_duration_"
        "seconds seconds\n"));
    assert_true(strlen(text) > 6 &&
        strcmp(text + strlen(text) - 6, "# EOF\n") == 0);
    assert_true(expo_value(&e, "mcp_up", A) == 0);
    free(text);
    expo_free(&e);
}

/* The liveness exchange's buckets, 1 ms to 10 s: each observation in the
 * first bucket whose bound it does not exceed (le is inclusive);
 * cumulative; sum in seconds. */
static void
test_histogram_buckets(void **state)
{
    struct fixture      *fx = *state;
    const struct server *a = server_named(fx->fleet, "alpha");
    struct expo          e;
    char                *text;
    static const double  ms[] = { 0.5, 1, 3, 30, 250, 1000, 400000 };
    static const struct {
        const char *le;
        double      want;
    } cum[] = {
        { "0.001", 2 }, { "0.005", 3 }, { "0.025", 3 }, { "0.1", 4 },
        { "0.5", 5 }, { "2.5", 6 }, { "10", 6 }, { "+Inf", 7 },
    };
    char labels[256];

    assert_int_equal(METRICS_LIVE_BUCKETS, 7);
    assert_true(metrics_live_bounds[0] == 0.001);
    assert_true(metrics_live_bounds[METRICS_LIVE_BUCKETS - 1] == 10);
    assert_int_equal(METRICS_SESSION_BUCKETS, 14);
    assert_true(metrics_session_bounds[13] == 300);
    /* What the man page (METRICS) and the integration test count. */
    assert_int_equal(METRICS_SERIES_HEALTHY, 18);
    for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++)
        feed(fx->m, a, "ping", ms[i], NULL);
    render(fx, METRICS_TEXT, &e, &text);
    for (size_t i = 0; i < sizeof(cum) / sizeof(cum[0]); i++) {
        snprintf(labels, sizeof(labels),
            A ",mcp_method_name=\"ping\",le=\"%s\"", cum[i].le);
        if (expo_value(&e, "mcp_client_operation_duration_seconds_bucket",
            labels) != cum[i].want)
            fail_msg("le=%s: want %g", cum[i].le, cum[i].want);
    }
    assert_true(expo_value(&e, "mcp_client_operation_duration_seconds_count",
        A ",mcp_method_name=\"ping\"") == 7);
    assert_true(fabs(expo_value(&e,
        "mcp_client_operation_duration_seconds_sum",
        A ",mcp_method_name=\"ping\"") - 401.2845) < 1e-9);
    expo_check_histograms(&e, "mcp_client_operation_duration_seconds",
        METRICS_LIVE_BUCKETS);
    /* A completed exchange is the last success (ts 1000 ms). */
    assert_true(expo_value(&e, "mcp_last_success_timestamp_seconds", A) ==
        1);
    free(text);
    expo_free(&e);

    /* OpenMetrics writes the bounds as floats. */
    render(fx, METRICS_OPENMETRICS, &e, NULL);
    assert_true(expo_value(&e, "mcp_client_operation_duration_seconds_bucket",
        A ",mcp_method_name=\"ping\",le=\"0.001\"") == 2);
    assert_true(expo_value(&e, "mcp_client_operation_duration_seconds_bucket",
        A ",mcp_method_name=\"ping\",le=\"10.0\"") == 6);
    expo_check_histograms(&e, "mcp_client_operation_duration_seconds",
        METRICS_LIVE_BUCKETS);
    expo_free(&e);
}

/* error_type: the JSON-RPC code for protocol failures, the kind below
 * JSON-RPC, absent on success; failures counted by kind, delivered and
 * reason; methods named as MCP names them; endings and tool changes. */
static void
test_error_type_and_counters(void **state)
{
    struct fixture      *fx = *state;
    const struct server *a = server_named(fx->fleet, "alpha");
    struct failure       rpc = { .kind = FAILURE_PROTOCOL,
        .delivered = DELIVERED_YES, .has_rpc_code = true,
        .rpc_code = -32601 };
    struct failure       to = { .kind = FAILURE_TIMEOUT,
        .delivered = DELIVERED_UNKNOWN };
    struct failure       st = { .kind = FAILURE_HTTP_STATUS,
        .delivered = DELIVERED_UNKNOWN, .http_status = 429,
        .reason = FAILURE_REASON_RATE_LIMITED };
    struct ending        end = { .server = a,
        .outcome = ENDING_TERMINATED };
    struct event         evd = { .type = EVENT_ENDING, .server = a,
        .ending = &end };
    struct event         tc = { .type = EVENT_TOOLS_CHANGED, .server = a,
        .tools = 4 };
    struct expo          e;

    feed(fx->m, a, "tools/list", 20, &rpc);
    feed(fx->m, a, "discover", 20, &rpc);
    feed(fx->m, a, "ping", 1500, &to);
    feed(fx->m, a, "ping", 1500, &to);
    feed(fx->m, a, "dial", 30, &st);
    feed(fx->m, a, "dial", 30, NULL);
    feed(fx->m, a, "some future op", 1, NULL);
    metrics_event_cb(fx->m, &evd);
    metrics_event_cb(fx->m, &evd);
    end.outcome = ENDING_PENDING;       /* not an outcome yet: not counted */
    metrics_event_cb(fx->m, &evd);
    metrics_event_cb(fx->m, &tc);
    render(fx, METRICS_TEXT, &e, NULL);
    /* Per server, the liveness exchange only: a re-list (alpha's
     * liveness method is ping), a dial and an unknown op have no series. */
    assert_true(expo_value(&e, "mcp_client_operation_duration_seconds_count",
        A ",mcp_method_name=\"server/discover\",error_type=\"-32601\"") == 1);
    assert_true(expo_value(&e, "mcp_client_operation_duration_seconds_count",
        A ",mcp_method_name=\"ping\",error_type=\"timeout\"") == 2);
    assert_int_equal(expo_count(&e,
        "mcp_client_operation_duration_seconds_count", A), 2);
    /* The dial is fleet-wide, completed dials only. */
    assert_true(expo_value(&e, "mcp_dial_duration_seconds_count",
        "transport=\"http\",era=\"\"") == 1);
    assert_int_equal(expo_count(&e, "mcp_dial_duration_seconds_count", ""),
        1);
    assert_true(expo_value(&e, "mcp_dial_duration_seconds_bucket",
        "transport=\"http\",era=\"\",le=\"0.025\"") == 0);
    assert_true(expo_value(&e, "mcp_dial_duration_seconds_bucket",
        "transport=\"http\",era=\"\",le=\"0.1\"") == 1);
    expo_check_histograms(&e, "mcp_dial_duration_seconds",
        METRICS_LIVE_BUCKETS);
    assert_true(expo_value(&e, "mcp_failures_total", A ",kind=\"protocol\","
        "delivered=\"yes\",reason=\"\"") == 2);
    assert_true(expo_value(&e, "mcp_failures_total", A ",kind=\"timeout\","
        "delivered=\"unknown\",reason=\"\"") == 2);
    assert_true(expo_value(&e, "mcp_failures_total", A ",kind="
        "\"http_status\",delivered=\"unknown\",reason=\"rate_limited\"") == 1);
    assert_int_equal(expo_count(&e, "mcp_failures_total", A), 3);
    assert_true(expo_value(&e, "mcp_endings_total",
        A ",outcome=\"terminated\"") == 2);
    assert_int_equal(expo_count(&e, "mcp_endings_total", A), 1);
    assert_true(expo_value(&e, "mcp_tools_changes_total", A) == 1);
    expo_check_histograms(&e, "mcp_client_operation_duration_seconds",
        METRICS_LIVE_BUCKETS);
    expo_free(&e);
}

/* Server-chosen JSON-RPC codes cannot grow the series without bound. */
static void
test_series_cap(void **state)
{
    struct fixture      *fx = *state;
    const struct server *a = server_named(fx->fleet, "alpha");
    struct failure       rpc = { .kind = FAILURE_PROTOCOL,
        .delivered = DELIVERED_YES, .has_rpc_code = true };
    struct expo          e;
    double               total = 0;

    for (long code = 0; code < 500; code++) {
        rpc.rpc_code = -32000 - code;
        feed(fx->m, a, "ping", 3, &rpc);
    }
    render(fx, METRICS_TEXT, &e, NULL);
    assert_int_equal(expo_count(&e,
        "mcp_client_operation_duration_seconds_count", A),
        METRICS_MAX_SERIES + 1);
    assert_true(expo_value(&e, "mcp_client_operation_duration_seconds_count",
        A ",mcp_method_name=\"other\",error_type=\"_OTHER\"") ==
        500 - METRICS_MAX_SERIES);
    for (size_t i = 0; i < e.n; i++) {
        if (strcmp(e.s[i].name,
            "mcp_client_operation_duration_seconds_count") == 0)
            total += e.s[i].value;
    }
    assert_true(total == 500);          /* nothing lost */
    /* One failure counter: every one of them was protocol/yes. */
    assert_true(expo_value(&e, "mcp_failures_total", A ",kind=\"protocol\","
        "delivered=\"yes\",reason=\"\"") == 500);
    expo_free(&e);
}

/* Names: escaped, sanitized, and two names that sanitize alike stay two
 * series; tag labels; a server with no tags gets "". */
static void
test_server_labels(void **state)
{
    struct fixture *fx = *state;
    struct expo     e;
    char            labels[256];
    size_t          red = 0;

    render(fx, METRICS_TEXT, &e, NULL);
    assert_true(expo_value(&e, "mcp_up", "server=\"we\\\"ird\\\\name\","
        "team=\"\",env=\"\"") == 0);
    assert_true(expo_value(&e, "mcp_up", "server=\"escred\",team=\"\","
        "env=\"\"") == 0);
    /* "esc\x1b[31mred" sanitizes to "escred": it gets the name's hash. */
    for (size_t i = 0; i < e.n; i++) {
        if (strcmp(e.s[i].name, "mcp_up") == 0 &&
            strncmp(e.s[i].labels, "server=\"escred~", 15) == 0) {
            red++;
            assert_int_equal(strlen(e.s[i].labels),
                strlen("server=\"escred~12345678\",team=\"\",env=\"\""));
        }
    }
    assert_int_equal(red, 1);
    snprintf(labels, sizeof(labels), "server=\"tool\",team=\"\",env=\"\","
        "transport=\"stdio\",era=\"\",protocol_version=\"\","
        "server_name=\"\",server_version=\"\",liveness_method=\"ping\"");
    assert_true(expo_value(&e, "mcp_server_info", labels) == 1);
    expo_free(&e);
}

/* metrics_label_value: sanitize, cut on a character, escape. */
static void
test_label_value(void **state)
{
    char out[2 * METRICS_LABEL_MAX + 1];
    char longname[METRICS_LABEL_MAX + 8];

    (void)state;
    assert_int_equal(metrics_label_value(out, sizeof(out), "a\"b\\c"), 7);
    assert_string_equal(out, "a\\\"b\\\\c");
    /* Control characters and escape sequences go; invalid UTF-8 is '?'. */
    metrics_label_value(out, sizeof(out), "x\ny\x1b[2Jz\xff");
    assert_string_equal(out, "xyz?");
    metrics_label_value(out, sizeof(out), "caf\xc3\xa9");
    assert_string_equal(out, "caf\xc3\xa9");
    metrics_label_value(out, sizeof(out), NULL);
    assert_string_equal(out, "");
    /* Cut at METRICS_LABEL_MAX bytes, never inside a character. */
    memset(longname, 'a', METRICS_LABEL_MAX - 1);
    memcpy(longname + METRICS_LABEL_MAX - 1, "\xc3\xa9zz", 5);
    assert_int_equal(metrics_label_value(out, sizeof(out), longname),
        METRICS_LABEL_MAX - 1);
    /* A small buffer never gets half an escape. */
    assert_int_equal(metrics_label_value(out, 3, "a\"b"), 1);
    assert_string_equal(out, "a");
}

static void
test_tag_label_ok(void **state)
{
    (void)state;
    assert_true(metrics_tag_label_ok("team"));
    assert_true(metrics_tag_label_ok("_x9"));
    assert_true(metrics_tag_label_ok("Env_2"));
    assert_false(metrics_tag_label_ok(""));
    assert_false(metrics_tag_label_ok("9x"));
    assert_false(metrics_tag_label_ok("a-b"));
    assert_false(metrics_tag_label_ok("a.b"));
    assert_false(metrics_tag_label_ok("__name__"));
    assert_false(metrics_tag_label_ok("server"));
    assert_false(metrics_tag_label_ok("le"));
    assert_false(metrics_tag_label_ok("error_type"));
    assert_false(metrics_tag_label_ok(NULL));
}

static void
test_negotiate(void **state)
{
    (void)state;
    /* What Prometheus 2.42 sends. */
    assert_int_equal(metrics_negotiate("application/openmetrics-text;"
        "version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
        "text/plain;version=0.0.4;q=0.5,*/*;q=0.1"), METRICS_OPENMETRICS);
    assert_int_equal(metrics_negotiate("application/openmetrics-text"),
        METRICS_OPENMETRICS);
    assert_int_equal(metrics_negotiate("Application/OpenMetrics-Text; "
        "version=1.0.0; charset=utf-8"), METRICS_OPENMETRICS);
    assert_int_equal(metrics_negotiate(NULL), METRICS_TEXT);
    assert_int_equal(metrics_negotiate(""), METRICS_TEXT);
    assert_int_equal(metrics_negotiate("*/*"), METRICS_TEXT);
    assert_int_equal(metrics_negotiate("text/plain;version=0.0.4"),
        METRICS_TEXT);
    assert_int_equal(metrics_negotiate("application/openmetrics-text;q=0"),
        METRICS_TEXT);
    assert_int_equal(metrics_negotiate("application/openmetrics-text;"
        "version=0.0.1"), METRICS_TEXT);
    assert_int_equal(metrics_negotiate("text/plain;q=0.9,"
        "application/openmetrics-text;q=0.5"), METRICS_TEXT);
    assert_int_equal(metrics_negotiate("application/json"), METRICS_TEXT);
    assert_string_equal(metrics_content_type(METRICS_TEXT),
        "text/plain; version=0.0.4; charset=utf-8");
    assert_string_equal(metrics_content_type(METRICS_OPENMETRICS),
        "application/openmetrics-text; version=1.0.0; charset=utf-8");
}

/* A new fleet over an overlapping config: counters follow the names that
 * stay, the others go; events of servers not synced are ignored. */
static void
test_sync_keeps_names(void **state)
{
    struct fixture *fx = *state;
    struct fixture  other = { .loop = fx->loop };
    struct fleet   *f2;
    struct expo     e;

    feed(fx->m, server_named(fx->fleet, "alpha"), "ping", 3, NULL);
    feed(fx->m, server_named(fx->fleet, "tool"), "ping", 3, NULL);
    f2 = fixture_fleet(&other, "{\"mcpServers\": {"
        "\"newcomer\": {\"url\": \"http://127.0.0.1:9/n\"},"
        "\"alpha\": {\"url\": \"http://127.0.0.1:9/changed\"}}}");
    /* Before the sync, f2's servers are strangers. */
    feed(fx->m, server_named(f2, "alpha"), "ping", 3, NULL);
    metrics_sync(fx->m, f2);
    feed(fx->m, server_named(f2, "alpha"), "ping", 3, NULL);
    feed(fx->m, server_named(f2, "newcomer"), "ping", 3, NULL);
    render(fx, METRICS_TEXT, &e, NULL);
    assert_true(expo_value(&e, "mcptop_servers", "") == 2);
    assert_true(expo_value(&e, "mcp_client_operation_duration_seconds_count",
        "server=\"alpha\",team=\"\",env=\"\",mcp_method_name=\"ping\"") ==
        2);
    assert_true(expo_value(&e, "mcp_client_operation_duration_seconds_count",
        "server=\"newcomer\",team=\"\",env=\"\",mcp_method_name=\"ping\"") ==
        1);
    assert_int_equal(expo_count(&e, "mcp_up", "server=\"tool\""), 0);
    expo_free(&e);
    /* Back to the first fleet before the fixture frees it. */
    metrics_sync(fx->m, fx->fleet);
    fleet_free(f2);
    config_free(other.cfg);
}

/* A fleet that shrinks a lot (50 servers to 1): the old records are
 * matched and dropped, the one left keeps its counters. */
static void
test_sync_shrinks(void **state)
{
    struct fixture *fx = *state;
    struct fixture  big = { .loop = fx->loop }, one = { .loop = fx->loop };
    char            json[8192];
    size_t          off = 0;
    struct fleet   *fb, *f1;
    struct expo     e;

    off += (size_t)snprintf(json + off, sizeof(json) - off,
        "{\"mcpServers\": {");
    for (int i = 0; i < 50; i++)
        off += (size_t)snprintf(json + off, sizeof(json) - off,
            "%s\"s%02d\": {\"url\": \"http://127.0.0.1:9/%d\"}",
            i > 0 ? "," : "", i, i);
    snprintf(json + off, sizeof(json) - off, "}}");
    fb = fixture_fleet(&big, json);
    metrics_sync(fx->m, fb);
    feed(fx->m, server_named(fb, "s07"), "ping", 3, NULL);
    f1 = fixture_fleet(&one, "{\"mcpServers\": {\"s07\": "
        "{\"url\": \"http://127.0.0.1:9/7\"}}}");
    metrics_sync(fx->m, f1);
    render(fx, METRICS_TEXT, &e, NULL);
    assert_true(expo_value(&e, "mcptop_servers", "") == 1);
    assert_true(expo_value(&e, "mcp_client_operation_duration_seconds_count",
        "server=\"s07\",team=\"\",env=\"\",mcp_method_name=\"ping\"") == 1);
    expo_free(&e);
    metrics_sync(fx->m, fx->fleet);
    fleet_free(f1);
    config_free(one.cfg);
    fleet_free(fb);
    config_free(big.cfg);
}

/* The reload gauges. */
static void
test_reload_result(void **state)
{
    struct fixture *fx = *state;
    struct expo     e;

    metrics_reload_result(fx->m, false, INT64_C(1800000000000));
    render(fx, METRICS_TEXT, &e, NULL);
    assert_true(expo_value(&e, "mcptop_config_last_reload_successful", "")
        == 0);
    expo_free(&e);
    metrics_reload_result(fx->m, true, INT64_C(1800000000123));
    render(fx, METRICS_TEXT, &e, NULL);
    assert_true(expo_value(&e, "mcptop_config_last_reload_successful", "")
        == 1);
    assert_true(fabs(expo_value(&e,
        "mcptop_config_last_reload_success_timestamp_seconds", "") -
        1800000000.123) < 1e-6);
    expo_free(&e);
}

/* Publish a health verdict for s as the engine does (EVENT_HEALTH). */
static void
feed_health(struct metrics *m, const struct server *s, enum health_state st,
    enum health_state was)
{
    struct health h = { .state = st, .reason = "test" };
    struct event  e = { .type = EVENT_HEALTH, .server = s, .ts = 1000,
        .health = &h, .health_was = was };

    metrics_event_cb(m, &e);
}

/* The health series: mcp_probe_success 1 exactly when ok, 0 for every
 * other monitored state, no sample for the operator's states; mcp_health
 * one series per server, the current state's, valued 1. Health comes from
 * EVENT_HEALTH, and from server_health() before any was published. */
static void
test_health(void **state)
{
    struct fixture *fx = *state;
    struct fixture  other = { .loop = fx->loop };
    struct fleet   *f;
    struct expo     e;
    char           *text;
    static const struct {
        const char *name;
        const char *state;
        double      probe;      /* -1: no sample */
    } want[] = {
        { "up", "ok", 1 },
        { "sick", "degraded", 0 },
        { "gone", "down", 0 },
        { "held", "paused", -1 },
        { "off", "disabled", -1 },
        { "broken", "invalid", 0 },
        { "new", "pending", 0 },
    };
    char labels[256];

    f = fixture_fleet(&other, "{\"mcpServers\": {"
        "\"up\": {\"url\": \"http://127.0.0.1:9/a\"},"
        "\"sick\": {\"url\": \"http://127.0.0.1:9/b\"},"
        "\"gone\": {\"url\": \"http://127.0.0.1:9/c\"},"
        "\"held\": {\"url\": \"http://127.0.0.1:9/d\"},"
        "\"off\": {\"url\": \"http://127.0.0.1:9/e\", \"disabled\": true},"
        "\"broken\": {\"url\": \"notaurl\"},"
        "\"new\": {\"url\": \"http://127.0.0.1:9/g\"}}}");
    metrics_sync(fx->m, f);
    /* Neither dials: they mint disabled and invalid themselves. */
    server_start(server_named(f, "off"));
    server_start(server_named(f, "broken"));
    feed_health(fx->m, server_named(f, "up"), HEALTH_OK, HEALTH__COUNT);
    feed_health(fx->m, server_named(f, "sick"), HEALTH_OK, HEALTH__COUNT);
    feed_health(fx->m, server_named(f, "sick"), HEALTH_DEGRADED, HEALTH_OK);
    feed_health(fx->m, server_named(f, "gone"), HEALTH_DOWN, HEALTH__COUNT);
    feed_health(fx->m, server_named(f, "held"), HEALTH_OK, HEALTH__COUNT);
    feed_health(fx->m, server_named(f, "held"), HEALTH_PAUSED, HEALTH_OK);
    render(fx, METRICS_TEXT, &e, &text);
    assert_non_null(strstr(text, "# TYPE mcp_probe_success gauge\n"));
    assert_non_null(strstr(text, "# TYPE mcp_health gauge\n"));
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        snprintf(labels, sizeof(labels), "server=\"%s\",team=\"\",env=\"\"",
            want[i].name);
        if (want[i].probe < 0)
            assert_false(expo_has(&e, "mcp_probe_success", labels));
        else if (expo_value(&e, "mcp_probe_success", labels) !=
            want[i].probe)
            fail_msg("mcp_probe_success of %s", want[i].name);
        /* One series, not nine. */
        assert_int_equal(expo_count(&e, "mcp_health", labels), 1);
        snprintf(labels, sizeof(labels), "server=\"%s\",team=\"\",env=\"\","
            "state=\"%s\"", want[i].name, want[i].state);
        assert_true(expo_value(&e, "mcp_health", labels) == 1);
    }
    assert_int_equal(expo_count(&e, "mcp_probe_success", ""), 5);
    assert_int_equal(expo_count(&e, "mcp_health", ""), 7);
    /* Liveness is another question: mcp_up is not health. */
    assert_true(expo_value(&e, "mcp_up",
        "server=\"sick\",team=\"\",env=\"\"") == 0);
    free(text);
    expo_free(&e);

    /* A change moves the one series; OpenMetrics writes the same. */
    feed_health(fx->m, server_named(f, "up"), HEALTH_DOWN, HEALTH_OK);
    render(fx, METRICS_OPENMETRICS, &e, NULL);
    assert_true(expo_value(&e, "mcp_health",
        "server=\"up\",team=\"\",env=\"\",state=\"down\"") == 1);
    assert_false(expo_has(&e, "mcp_health",
        "server=\"up\",team=\"\",env=\"\",state=\"ok\""));
    assert_true(expo_value(&e, "mcp_probe_success",
        "server=\"up\",team=\"\",env=\"\"") == 0);
    expo_free(&e);
    metrics_sync(fx->m, fx->fleet);
    fleet_free(f);
    config_free(other.cfg);
}

/* Nothing was dialed: every server is still pending. */
static void
test_pending_dials(void **state)
{
    struct fixture *fx = *state;

    assert_int_equal(metrics_pending_dials(fx->m), 5);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_families, setup, teardown),
        cmocka_unit_test_setup_teardown(test_histogram_buckets, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_error_type_and_counters, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_series_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_labels, setup, teardown),
        cmocka_unit_test(test_label_value),
        cmocka_unit_test(test_tag_label_ok),
        cmocka_unit_test(test_negotiate),
        cmocka_unit_test_setup_teardown(test_sync_keeps_names, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_sync_shrinks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reload_result, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pending_dials, setup, teardown),
        cmocka_unit_test_setup_teardown(test_health, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
