/*
 * `mcptop check`: dial every server once, ping each that dialed, print a
 * report, exit 0 when every server is ok. Nothing is retried: a check is
 * one observation per server, bounded by the open deadline plus the
 * request timeout.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <sys/resource.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "export/jsonl.h"
#include "engine/http.h"
#include "util/jsonw.h"
#include "util/str.h"
#include "util/xmalloc.h"

/* One server's ping round trips, and where it is in the check. */
struct check_rtts {
    double *ms;
    size_t  n;
    bool    dialed;         /* its dial's one outcome came */
    bool    pinging;        /* a ping of this round is in flight */
    bool    probing;        /* its deep check (tools/call) is in flight */
};

/* CPU, wall time and peak RSS of one phase. */
struct check_phase {
    double cpu_us;
    double wall_ms;
    long   max_rss_kib;
};

enum check_step { CHECK_DIAL, CHECK_PROBES, CHECK_PINGS, CHECK_DONE };

struct check {
    struct cli_fleet    cf;
    struct cli_run      run;
    enum check_step     at;
    /* The options. */
    bool                json;       /* --json */
    bool                stats;      /* --stats */
    bool                with_pings; /* --pings given */
    long                timeout;    /* --timeout MS, or -1 */
    long                rounds;     /* --pings R */
    long                round;
    struct check_rtts  *rtts;
    size_t              dials_pending;  /* O(1) per event at 10,000 */
    size_t              pings_pending;
    size_t              probes_pending;
    /* --stats */
    struct rusage       ru_mark;
    ev_tstamp           wall_mark;
    struct check_phase  dial, pings, endings;
    double             *round_ms;
    ev_tstamp           round_start;
};

const struct cli_entry cli_check_entry = {
    .name = "check",
    .usage =
        APP_USAGE "\n"
        "                    [--json] [--timeout MS] [--pings R] [--stats]\n"
        "                    " APP_USAGE_END,
    .summary = "dial every server once, ping, report, exit",
    .exec = cli_check,
    .needs_http = true,
};

static void
check_usage(FILE *out)
{
    cli_usage(out, &cli_check_entry);
    fprintf(out,
        "\n"
        "Dial every configured MCP server once, make its deep check once\n"
        "(probe_tool: a tools/call), ping each that dialed, and report\n"
        "liveness, the last failure's kind and delivery verdict.\n"
        "\n"
        "      --json         one JSON object instead of a table\n"
        "      --timeout MS   request timeout and open deadline, ms\n"
        "      --pings R      ping every server R times, in rounds (default 1);\n"
        "                     report min / median / p99 round trip\n"
        "      --stats        add CPU time, wall time and peak RSS per phase\n"
        "                     (dial, pings, endings)\n"
        "  -h, --help         this help\n");
    app_usage_options(out);
    fprintf(out,
        "\n"
        "Exit status: 0 every server ok (dialed, its deep check and its\n"
        "ping completed; a disabled server does not count: \"ok\": null),\n"
        "1 some server not ok, 2 usage, unreadable config or unwritable\n"
        "output, 130 interrupted (sessions are still ended first).\n");
    app_usage_sources(out);
}

/* Close a phase: CPU and wall time since the last mark, peak RSS. */
static void
check_mark(struct check *c, struct check_phase *ph)
{
    struct rusage ru;
    ev_tstamp     now;

    getrusage(RUSAGE_SELF, &ru);
    ev_now_update(fleet_loop(c->cf.fleet));
    now = ev_now(fleet_loop(c->cf.fleet));
    if (ph != NULL) {
        ph->cpu_us = (double)(ru.ru_utime.tv_sec - c->ru_mark.ru_utime.tv_sec)
            * 1e6 + (double)(ru.ru_utime.tv_usec - c->ru_mark.ru_utime.tv_usec)
            + (double)(ru.ru_stime.tv_sec - c->ru_mark.ru_stime.tv_sec) * 1e6
            + (double)(ru.ru_stime.tv_usec - c->ru_mark.ru_stime.tv_usec);
        ph->wall_ms = (now - c->wall_mark) * 1000.0;
        ph->max_rss_kib = ru.ru_maxrss;
    }
    c->ru_mark = ru;
    c->wall_mark = now;
}

/* Start ping round c->round + 1 on every server with a session. */
static bool
check_start_round(struct check *c)
{
    size_t sent = 0;

    c->round++;
    ev_now_update(fleet_loop(c->cf.fleet));
    c->round_start = ev_now(fleet_loop(c->cf.fleet));
    for (size_t i = 0; i < fleet_size(c->cf.fleet); i++) {
        if (server_ping_now(fleet_server(c->cf.fleet, i))) {
            c->rtts[i].pinging = true;
            sent++;
        }
    }
    c->pings_pending = sent;
    return sent > 0;
}

/* The deep check of every server that has one (probe_tool), once. */
static bool
check_start_probes(struct check *c)
{
    size_t sent = 0;

    for (size_t i = 0; i < fleet_size(c->cf.fleet); i++) {
        if (server_probe_now(fleet_server(c->cf.fleet, i))) {
            c->rtts[i].probing = true;
            sent++;
        }
    }
    c->probes_pending = sent;
    return sent > 0;
}

static void
check_step_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct check *c = w->data;

    (void)revents;
    if (c->at == CHECK_DONE)
        return;         /* events of the endings that follow */
    if (c->at == CHECK_DIAL) {
        if (c->dials_pending > 0)
            return;
        check_mark(c, &c->dial);
        c->at = CHECK_PROBES;
        if (!check_start_probes(c)) {
            c->at = CHECK_PINGS;
            if (!check_start_round(c))
                c->at = CHECK_DONE;
        }
    } else if (c->at == CHECK_PROBES) {
        if (c->probes_pending > 0)
            return;
        c->at = CHECK_PINGS;
        if (!check_start_round(c))
            c->at = CHECK_DONE;
    } else if (c->at == CHECK_PINGS) {
        if (c->pings_pending > 0)
            return;
        ev_now_update(loop);
        c->round_ms[c->round - 1] = (ev_now(loop) - c->round_start) * 1000.0;
        if (c->round >= c->rounds || !check_start_round(c))
            c->at = CHECK_DONE;
    }
    if (c->at == CHECK_DONE) {
        check_mark(c, &c->pings);
        ev_break(loop, EVBREAK_ONE);
    }
}

/* event_cb: any event may finish a server; look on the next turn. */
static void
check_event_cb(void *arg, const struct event *e)
{
    struct check *c = arg;

    if (e->type == EVENT_STATE && server_is_tap(e->server) &&
        server_dial_settled(e->server)) {
        /* A tap's server is read, not dialed: its link is its dial. */
        struct check_rtts *r = server_data(e->server);

        if (r != NULL && !r->dialed) {
            r->dialed = true;
            c->dials_pending--;
        }
    } else if (e->type == EVENT_STATE &&
        server_state(e->server) == SERVER_DISABLED) {
        /* Disabled in the config: no dial comes, nothing to wait for. */
        struct check_rtts *r = server_data(e->server);

        if (r != NULL && !r->dialed) {
            r->dialed = true;
            c->dials_pending--;
        }
    } else if (e->type == EVENT_EXCHANGE && e->op != NULL) {
        struct check_rtts *r = server_data(e->server);

        if (r != NULL && !r->dialed && strcmp(e->op, "dial") == 0) {
            r->dialed = true;
            c->dials_pending--;
        } else if (r != NULL && r->probing &&
            strcmp(e->op, "tools/call") == 0) {
            r->probing = false;
            c->probes_pending--;
        } else if (r != NULL && r->pinging && (strcmp(e->op, "ping") == 0 ||
            strcmp(e->op, "discover") == 0)) {
            r->pinging = false;
            c->pings_pending--;
            if (e->completed && r->n < (size_t)c->rounds)
                r->ms[r->n++] = e->ms;
        }
    }
    cli_run_kick(&c->run);
}

/* Width of the NAME column of the plain tables, in display columns. */
#define CHECK_NAME_COLS 20

/* A failing stdio server's last stderr lines: often its only cause. */
static void
check_print_stderr_tail(const struct server *s)
{
    const char *lines[JSONL_STDERR_TAIL_LINES];
    size_t      n;

    if (server_health(s, NULL).state == HEALTH_OK)
        return;
    n = jsonl_stderr_tail(s, lines, JSONL_STDERR_TAIL_LINES,
        JSONL_STDERR_TAIL_BYTES);
    for (size_t i = 0; i < n; i++)
        printf("  stderr: %s\n", lines[i]);
}

static void
check_print_table(struct check *c)
{
    printf("%-*s %-5s %-8s %-11s %-17s %-9s %-4s %5s %8s\n",
        CHECK_NAME_COLS, "NAME", "TRANS", "HEALTH", "LIVENESS",
        "LAST FAILURE", "DELIVERED", "HTTP", "TOOLS", "RTT_MS");
    for (size_t i = 0; i < fleet_size(c->cf.fleet); i++) {
        const struct server   *s = fleet_server(c->cf.fleet, i);
        const struct liveness *l = server_liveness(s);
        const struct failure  *f = server_last_failure(s, NULL);
        char                   tools[16] = "-", rtt[16] = "-", st[8] = "-";
        char                  *name = str_sanitized(server_name(s));
        const char            *kind = "-";

        if (server_tools(s) >= 0)
            snprintf(tools, sizeof(tools), "%ld", server_tools(s));
        if (server_rtt_ms(s) >= 0)
            snprintf(rtt, sizeof(rtt), "%.1f", server_rtt_ms(s));
        if (f != NULL && f->http_status != 0)
            snprintf(st, sizeof(st), "%ld", f->http_status);
        if (server_state(s) == SERVER_UNSUPPORTED)
            kind = "stdio: not yet supported";
        else if (server_state(s) == SERVER_DISABLED)
            kind = "(disabled)";
        else if (f != NULL)
            kind = failure_kind_name(f->kind);
        cli_cell(stdout, name, CHECK_NAME_COLS, false);
        printf(" %-5s %-8s ", server_transport_name(s),
            health_state_name(server_health(s, NULL).state));
        cli_cell(stdout, l->present ? liveness_state_name(l->state) : "—",
            11, false);
        printf(" %-17s %-9s %-4s %5s %8s\n", kind,
            f != NULL ? delivered_name(f->delivered) : "-", st, tools, rtt);
        if (f != NULL && f->detail[0] != '\0')
            printf("  %s: %s\n", failure_site_name(f->site), f->detail);
        check_print_stderr_tail(s);
        free(name);
    }
}

static int
check_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* min / median / p99 of a server's pings (sorts r in place). false when
 * none completed. */
static bool
check_ping_stats(struct check_rtts *r, double *min, double *med, double *p99)
{
    size_t k;

    if (r == NULL || r->n == 0)
        return false;
    qsort(r->ms, r->n, sizeof(double), check_cmp_double);
    *min = r->ms[0];
    *med = r->n % 2 ? r->ms[r->n / 2] :
        (r->ms[r->n / 2 - 1] + r->ms[r->n / 2]) / 2;
    k = (size_t)ceil(0.99 * (double)r->n);
    *p99 = r->ms[k > 0 ? k - 1 : 0];
    return true;
}

/* v rounded to one decimal, in tenths. */
static int64_t
check_tenths(double v)
{
    return (int64_t)floor(v * 10.0 + 0.5);
}

static void
check_json_pings(struct jsonw *w, struct check_rtts *r, long rounds)
{
    double min, med, p99;

    if (!check_ping_stats(r, &min, &med, &p99)) {
        jsonw_null(w, "pings");
        return;
    }
    jsonw_object_open(w, "pings");
    jsonw_int(w, "count", (int64_t)r->n);
    jsonw_int(w, "asked", rounds);
    jsonw_tenths(w, "min_ms", check_tenths(min));
    jsonw_tenths(w, "median_ms", check_tenths(med));
    jsonw_tenths(w, "p99_ms", check_tenths(p99));
    jsonw_object_close(w);
}

/* jsonl_extra_fn: a server's pings, and every ping's in the summary. */
static void
check_json_extra(struct jsonw *w, const struct server *s, void *arg)
{
    struct check      *c = arg;
    struct check_rtts  all = { 0 };
    size_t             n = fleet_size(c->cf.fleet);

    if (s != NULL) {
        check_json_pings(w, server_data(s), c->rounds);
        return;
    }
    all.ms = xmalloc((n * (size_t)c->rounds + 1) * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        struct check_rtts *r = server_data(fleet_server(c->cf.fleet, i));

        memcpy(all.ms + all.n, r->ms, r->n * sizeof(double));
        all.n += r->n;
    }
    check_json_pings(w, &all, c->rounds * (long)n);
    free(all.ms);
}

/* Every server's record, before the endings change anything: the
 * document is left open for the stats that come after them. */
static void
check_build_json(struct check *c, struct jsonw *w, bool with_pings)
{
    jsonw_object_open(w, NULL);
    jsonl_fleet_write(w, c->cf.fleet, with_pings ? check_json_extra : NULL,
        c);
}

static void
check_json_phase(struct jsonw *w, const char *name,
    const struct check_phase *ph)
{
    jsonw_object_open(w, name);
    jsonw_int(w, "cpu_us", (int64_t)floor(ph->cpu_us));
    jsonw_tenths(w, "wall_ms", check_tenths(ph->wall_ms));
    jsonw_int(w, "max_rss_kib", ph->max_rss_kib);
    jsonw_object_close(w);
}

static void
check_json_stats(struct check *c, struct jsonw *w)
{
    jsonw_object_open(w, "stats");
    jsonw_int(w, "servers", (int64_t)fleet_size(c->cf.fleet));
    check_json_phase(w, "dial", &c->dial);
    check_json_phase(w, "pings", &c->pings);
    check_json_phase(w, "endings", &c->endings);
    jsonw_array_open(w, "ping_round_ms");
    for (long i = 0; i < c->round && i < c->rounds; i++)
        jsonw_tenths(w, NULL, check_tenths(c->round_ms[i]));
    jsonw_array_close(w);
    jsonw_object_close(w);
}

static void
check_print_pings_table(struct check *c)
{
    printf("\n%-*s %6s %8s %9s %8s\n", CHECK_NAME_COLS, "PINGS", "COUNT",
        "MIN_MS", "MEDIAN_MS", "P99_MS");
    for (size_t i = 0; i < fleet_size(c->cf.fleet); i++) {
        const struct server *s = fleet_server(c->cf.fleet, i);
        struct check_rtts   *r = server_data(s);
        double               min, med, p99;
        char                *name = str_sanitized(server_name(s));

        cli_cell(stdout, name, CHECK_NAME_COLS, false);
        if (check_ping_stats(r, &min, &med, &p99))
            printf(" %6zu %8.1f %9.1f %8.1f\n", r->n, min, med, p99);
        else
            printf(" %6d %8s %9s %8s\n", 0, "-", "-", "-");
        free(name);
    }
}

static void
check_print_stats_table(struct check *c)
{
    const struct check_phase *ph[] = { &c->dial, &c->pings, &c->endings };
    const char *names[] = { "dial", "pings", "endings" };

    printf("\n%-8s %12s %10s %12s\n", "PHASE", "CPU_US", "WALL_MS",
        "MAX_RSS_KIB");
    for (size_t i = 0; i < 3; i++)
        printf("%-8s %12.0f %10.1f %12ld\n", names[i], ph[i]->cpu_us,
            ph[i]->wall_ms, ph[i]->max_rss_kib);
}

/* Flush stdout; keep the first write error's errno in *werr. */
static void
check_flush(int *werr)
{
    errno = 0;
    if ((fflush(stdout) != 0 || ferror(stdout)) && *werr == 0)
        *werr = errno != 0 ? errno : EIO;
}

/* cli_preamble.option: check's own options. */
static int
check_option(void *arg, int ch, char *value, int *rc)
{
    struct check *c = arg;

    switch (ch) {
    case 'j':
        c->json = true;
        break;
    case 't':
        c->timeout = cli_parse_ms(value);
        if (c->timeout < 0) {
            *rc = app_usage_error("check", "--timeout takes a positive "
                "number of milliseconds, not '%.40s'", value);
            return -1;
        }
        c->cf.opt.timeout_ms = c->timeout;
        c->cf.opt.open_deadline_ms = c->timeout;
        break;
    case 'p':
        c->rounds = cli_parse_ms(value);
        if (c->rounds < 0 || c->rounds > 100000) {
            *rc = app_usage_error("check", "--pings takes a count from "
                "1 to 100000, not '%.40s'", value);
            return -1;
        }
        c->with_pings = true;
        break;
    case 's':
        c->stats = true;
        break;
    }
    return 0;
}

/* How long the whole check may take, ms: the slowest server's open
 * deadline and its request timeout per round, and the turns of dials. */
static long
check_bound_ms(const struct check *c)
{
    const struct config *cfg = c->cf.cfg;
    long                 bound_ms = 0, t, o;

    for (size_t i = 0; i < cfg->nservers; i++) {
        t = c->timeout > 0 ? c->timeout : cfg->servers[i].timeout_ms;
        o = c->timeout > 0 ? c->timeout : cfg->servers[i].open_deadline_ms;
        if (o + t * c->rounds > bound_ms)
            bound_ms = o + t * c->rounds;
    }
    /* First dials go at most 50 at a time, each bounded by its open
     * deadline: a large fleet of hanging servers takes that many turns. */
    if (cfg->nservers > 50) {
        long turns = (long)((cfg->nservers + 49) / 50);
        long open = c->timeout > 0 ? c->timeout :
            CONFIG_DEFAULT_OPEN_DEADLINE_MS;

        for (size_t i = 0; i < cfg->nservers; i++) {
            if (c->timeout <= 0 && cfg->servers[i].open_deadline_ms > open)
                open = cfg->servers[i].open_deadline_ms;
        }
        bound_ms += (turns - 1) * open;
    }
    return bound_ms;
}

/* Dial, probe and ping every server, in phases, until all is done, the
 * bound passes or a signal comes. */
static void
check_run(struct check *c)
{
    const struct config *cfg = c->cf.cfg;
    struct ev_loop      *loop = fleet_loop(c->cf.fleet);

    c->rtts = xcalloc(cfg->nservers + 1, sizeof(*c->rtts));
    c->dials_pending = cfg->nservers;
    c->round_ms = xcalloc((size_t)c->rounds, sizeof(double));
    for (size_t i = 0; i < cfg->nservers; i++) {
        c->rtts[i].ms = xcalloc((size_t)c->rounds, sizeof(double));
        server_set_data(fleet_server(c->cf.fleet, i), &c->rtts[i]);
    }
    cli_run_init(&c->run, loop, check_bound_ms(c) + 2000, check_step_cb, c);
    fleet_subscribe(c->cf.fleet, check_event_cb, c);
    check_mark(c, NULL);
    c->at = CHECK_DIAL;
    fleet_start(c->cf.fleet);
    cli_run_kick(&c->run);
    ev_run(loop, 0);
    if (c->at != CHECK_DONE)
        check_mark(c, c->at == CHECK_DIAL ? &c->dial : &c->pings);
    /* Whatever stopped the loop, the phases are over: events of the
     * endings that follow must not restart them. */
    c->at = CHECK_DONE;
    cli_run_done(&c->run);
}

/* 0 when every server is ok, else EXIT_NOT_OK. */
static int
check_verdict(const struct check *c)
{
    int rc = 0;

    for (size_t i = 0; i < fleet_size(c->cf.fleet); i++) {
        const struct server *s = fleet_server(c->cf.fleet, i);

        struct health        h = server_health(s, NULL);

        /* A disabled (paused, stopped) server is neither ok nor a
         * failure: exactly health "ok" counts as ok. */
        if (health_monitored(h.state) && h.state != HEALTH_OK)
            rc = EXIT_NOT_OK;
    }
    return rc;
}

/* Leave no session behind on the servers, interrupted or not (a second
 * signal cuts the wait short). */
static void
check_end_sessions(struct check *c)
{
    check_mark(c, NULL);
    fleet_end_all(c->cf.fleet);
    cli_wait_endings(c->cf.fleet, fleet_teardown_ms(c->cf.fleet) + 1000);
    check_mark(c, &c->endings);
}

/* The report (taken before the endings, which are exchanges too), the
 * endings, then their cost with --stats. Returns the exit code. */
static int
check_report(struct check *c)
{
    struct jsonw doc;
    int          werr = 0;
    int          rc = check_verdict(c);
    size_t       unended;

    jsonw_init(&doc);
    if (c->json) {
        check_build_json(c, &doc, c->with_pings);
    } else {
        check_print_table(c);
        if (c->with_pings)
            check_print_pings_table(c);
        check_flush(&werr);
    }
    if (c->run.interrupted)
        rc = 130;
    check_end_sessions(c);
    unended = cli_report_unended(c->cf.fleet, "check", NULL);
    if (unended > 0 && rc == 0)
        rc = EXIT_NOT_OK;
    if (c->json) {
        if (c->stats)
            check_json_stats(c, &doc);
        if (unended > 0)        /* only then: the document keeps its keys */
            jsonw_int(&doc, "sessions_not_ended", (int64_t)unended);
        jsonw_object_close(&doc);
        jsonl_write_text(stdout, &doc);
        jsonw_done(&doc);
    } else if (c->stats) {
        check_print_stats_table(c);
    }
    check_flush(&werr);
    if (werr != 0) {
        fprintf(stderr, "mcptop check: cannot write the report: %s\n",
            strerror(werr));
        rc = EXIT_USAGE;
    }
    return rc;
}

/* Release the check, the fleet first (see fleet_exit). */
static void
check_done(struct check *c)
{
    if (fleet_exit(c->cf.fleet)) {
        for (size_t i = 0; i < c->cf.cfg->nservers; i++)
            free(c->rtts[i].ms);
        free(c->rtts);
        free(c->round_ms);
        config_free(c->cf.cfg);
    }
    app_close_log(&c->cf.common);
}

int
cli_check(int argc, char **argv)
{
    static const struct option longopts[] = {
        APP_LONGOPTS,
        { "json", no_argument, NULL, 'j' },
        { "timeout", required_argument, NULL, 't' },
        { "pings", required_argument, NULL, 'p' },
        { "stats", no_argument, NULL, 's' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct check              c = { .rounds = 1, .timeout = -1,
        .cf.opt = { .no_streams = true, .no_pings = true,
                    .no_redial = true } };
    const struct cli_preamble pre = { .cmd = "check", .longopts = longopts,
        .shortopts = "h", .usage = check_usage, .option = check_option,
        .arg = &c };
    int                       rc;

    if (cli_preamble(&pre, argc, argv, &c.cf, &rc) != 0)
        return rc;
    check_run(&c);
    rc = check_report(&c);
    check_done(&c);
    return rc;
}
