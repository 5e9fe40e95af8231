/*
 * `mcptop audit`: the session-hygiene report (src/audit) of the chosen
 * servers (all by default), one server at a time unless --parallel says
 * more, printed as a table (a server a row, a check a column, a glyph and
 * a word per cell, a legend) or as one JSON document. Nothing is dialed
 * the monitor's way: every exchange is the audit's own, and every session
 * it opens is ended before it exits. Exit 0 when every server audited is
 * spec-clean, 1 otherwise, 2 usage, 130 interrupted.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit.h"
#include "cli/cli.h"
#include "export/jsonl.h"
#include "util/str.h"
#include "util/xmalloc.h"

#define AUDIT_CLI_NAME_COLS 20
#define AUDIT_CLI_GRACE_MS  2000

struct audit_cli {
    struct cli_fleet     cf;
    struct cli_run       run;
    bool                *chosen;        /* per server of cf.cfg */
    struct audit       **audits;        /* per chosen server, in order */
    size_t               naudits;
    size_t               next;          /* the next to start */
    size_t               running;
    size_t               finished;
    /* the options */
    const char         **names;         /* --server NAME... */
    size_t               nnames;
    bool                 json;
    long                 parallel;      /* --parallel N */
    long                 timeout;       /* --timeout MS, or -1 */
};

const struct cli_entry cli_audit_entry = {
    .name = "audit",
    .usage =
        APP_USAGE "\n"
        "                    [--server NAME]... [--json] [--parallel N]\n"
        "                    [--timeout MS] " APP_USAGE_END,
    .summary = "session-hygiene report per server (ends all it opens)",
    .exec = cli_audit,
    .needs_http = true,
};

static void
audit_cli_usage(FILE *out)
{
    cli_usage(out, &cli_audit_entry);
    fprintf(out,
        "\n"
        "A session-hygiene report per server: how it ends, frees, expires\n"
        "and leaks sessions, judged against MCP 2025-11-25 (basic/transports,\n"
        "Session Management, Streamable HTTP; basic/lifecycle). Each check\n"
        "is bounded by its own timeout and ends every session it opens (a\n"
        "refused request's too, when its answer carried an id).\n"
        "\n"
        "  -s, --server NAME  audit this server (repeatable; default all)\n"
        "      --json         one JSON object instead of a table\n"
        "      --parallel N   audit N servers at once (default 1)\n"
        "      --timeout MS   each check's bound (default 15000); a request in\n"
        "                     it waits at most 2/3 of it, and timeout_ms\n"
        "  -h, --help         this help\n");
    app_usage_options(out);
    fprintf(out,
        "\n"
        "Checks (HTTP): delete (terminated, not_allowed, other), freed (yes,\n"
        "no, other), unknown_session (spec, nonstandard, accepted, other),\n"
        "missing_session (spec, accepted, other), probe_leak (none, leaks),\n"
        "session_ids (unique, reused),\n"
        "ping (supported, unsupported, error), stream (opens, none, other),\n"
        "affinity (stable, broken, other), versions (negotiates, echoes,\n"
        "refuses, none), era (legacy, legacy_sse, modern, dual); stdio:\n"
        "ping, versions, era, shutdown (stdin, sigterm, sigkill). Any check\n"
        "may say n/a or error.\n"
        "Exit status: 0 when every server audited is spec-clean (no check\n"
        "bad or in error; a disabled server does not count), 1 otherwise,\n"
        "2 usage, 130 interrupted (sessions are still ended first).\n");
    app_usage_sources(out);
}

/* cli_preamble.option */
static int
audit_cli_option(void *arg, int ch, char *value, int *rc)
{
    struct audit_cli *r = arg;

    switch (ch) {
    case 's':
        r->names = xrealloc(r->names, (r->nnames + 1) * sizeof(*r->names));
        r->names[r->nnames++] = value;
        break;
    case 'j':
        r->json = true;
        break;
    case 'P':
        r->parallel = cli_parse_ms(value);
        if (r->parallel < 1 || r->parallel > 64) {
            *rc = app_usage_error("audit", "--parallel takes a count from "
                "1 to 64, not '%.40s'", value);
            return -1;
        }
        break;
    case 't':
        r->timeout = cli_parse_ms(value);
        if (r->timeout < 0) {
            *rc = app_usage_error("audit", "--timeout takes a positive "
                "number of milliseconds, not '%.40s'", value);
            return -1;
        }
        break;
    }
    return 0;
}

/* cli_preamble.loaded: the servers --server names (all when none). */
static int
audit_cli_loaded(void *arg, struct config *cfg, int *rc)
{
    struct audit_cli *r = arg;

    r->chosen = xcalloc(cfg->nservers + 1, sizeof(bool));
    for (size_t k = 0; k < r->nnames; k++) {
        bool found = false;

        for (size_t i = 0; i < cfg->nservers; i++) {
            if (strcmp(cfg->servers[i].name, r->names[k]) == 0) {
                r->chosen[i] = true;
                found = true;
            }
        }
        if (!found) {
            *rc = app_usage_error("audit", "no server named '%.60s' in %s",
                r->names[k], cfg->origin);
            return -1;
        }
    }
    for (size_t i = 0; i < cfg->nservers; i++) {
        if (r->nnames == 0)
            r->chosen[i] = true;
    }
    return 0;
}

/* Start audits until --parallel are running. */
static void
audit_cli_start_more(struct audit_cli *r)
{
    while (r->running < (size_t)r->parallel && r->next < r->naudits) {
        r->running++;
        audit_start(r->audits[r->next++]);
    }
}

/* audit done: the next one, or the end. */
static void
audit_cli_done_cb(void *arg, struct audit *a)
{
    struct audit_cli *r = arg;

    (void)a;
    r->finished++;
    if (r->running > 0)
        r->running--;
    if (r->finished >= r->naudits) {
        ev_break(r->run.loop, EVBREAK_ONE);
        return;
    }
    if (!r->run.interrupted)
        audit_cli_start_more(r);
}

/* cli_run's step: nothing to look at (the audits call back). */
static void
audit_cli_step_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)w;
    (void)revents;
}

static void
audit_cli_wait_stop_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)w;
    (void)revents;
    ev_break(loop, EVBREAK_ONE);
}

/* How long the whole run may take, ms: every check of every server at
 * its bound, plus its endings, in turns of --parallel. */
static long
audit_cli_bound_ms(const struct audit_cli *r)
{
    const struct config *cfg = r->cf.cfg;
    long                 per = 0, check = r->timeout > 0 ? r->timeout : 15000;
    size_t               turns = (r->naudits + (size_t)r->parallel - 1) /
        (size_t)r->parallel;

    for (size_t i = 0; i < cfg->nservers; i++) {
        long t = (check + cfg->servers[i].teardown_ms + 1000) *
            AUDIT_CHECK__COUNT;

        if (t > per)
            per = t;
    }
    return per * (long)(turns > 0 ? turns : 1) + 5000;
}

/* Audit every chosen server, until all are done, the bound passes or a
 * signal comes (then every audit under way ends its sessions). */
static void
audit_cli_run(struct audit_cli *r)
{
    struct fleet        *f = r->cf.fleet;
    struct ev_loop      *loop = fleet_loop(f);
    struct audit_options opt = { .check_timeout_ms = r->timeout };

    r->audits = xcalloc(fleet_size(f) + 1, sizeof(*r->audits));
    for (size_t i = 0; i < fleet_size(f); i++) {
        if (r->chosen[i])
            r->audits[r->naudits++] = audit_new(f, i, &opt,
                audit_cli_done_cb, r);
    }
    if (r->naudits == 0)
        return;
    cli_run_init(&r->run, loop, audit_cli_bound_ms(r), audit_cli_step_cb, r);
    audit_cli_start_more(r);
    ev_run(loop, 0);
    if (r->finished < r->naudits) {
        /* Interrupted, or past the bound: stop what runs (its sessions
         * are ended), give the endings their deadline, then report. A
         * second signal cuts it short. */
        ev_timer bound;

        for (size_t k = 0; k < r->naudits; k++)
            audit_stop(r->audits[k]);
        ev_timer_init(&bound, audit_cli_wait_stop_cb,
            (fleet_teardown_ms(f) + AUDIT_CLI_GRACE_MS) / 1000.0, 0.);
        ev_timer_start(loop, &bound);
        if (r->finished < r->naudits)
            ev_run(loop, 0);
        ev_timer_stop(loop, &bound);
    }
    cli_run_done(&r->run);
}

/* --- the table ------------------------------------------------------------ */

/* The cell of check c of a: glyph and word. */
static void
audit_cli_cell(const struct audit *a, enum audit_check c, char *buf,
    size_t n)
{
    const struct audit_result *res = audit_result(a, c);

    if (!res->done)
        snprintf(buf, n, "%s", "\xc2\xb7");        /* ·: not reached */
    else
        snprintf(buf, n, "%s %s", audit_grade_glyph(res->grade), res->word);
}

static void
audit_cli_upper(const char *s, char *buf, size_t n)
{
    size_t i;

    for (i = 0; s[i] != '\0' && i + 1 < n; i++)
        buf[i] = (char)(s[i] >= 'a' && s[i] <= 'z' ? s[i] - 32 : s[i]);
    buf[i] = '\0';
}

/* Is check c's detail one to print under the row (not as the spec says,
 * not judged, or worth knowing)? */
static bool
audit_cli_said(const struct audit *a, enum audit_check c)
{
    const struct audit_result *res = audit_result(a, c);

    return res->done && res->detail[0] != '\0' &&
        (res->grade == AUDIT_GRADE_BAD || res->grade == AUDIT_GRADE_ERROR ||
        res->grade == AUDIT_GRADE_NOTE);
}

/* The details of a row: "  check[, check...]: detail", one line for the
 * checks that say the same. */
static void
audit_cli_details(const struct audit *a)
{
    bool shown[AUDIT_CHECK__COUNT] = { false };

    for (size_t c = 0; c < AUDIT_CHECK__COUNT; c++) {
        const char *detail = audit_result(a, c)->detail;

        if (shown[c] || !audit_cli_said(a, c))
            continue;
        printf("  %s", audit_check_name(c));
        for (size_t d = c + 1; d < AUDIT_CHECK__COUNT; d++) {
            if (!shown[d] && audit_cli_said(a, d) &&
                strcmp(audit_result(a, d)->detail, detail) == 0) {
                shown[d] = true;
                printf(", %s", audit_check_name(d));
            }
        }
        printf(": %s\n", detail);
    }
}

static void
audit_cli_table(const struct audit_cli *r)
{
    int  width[AUDIT_CHECK__COUNT];
    char cell[64], head[32];

    for (size_t c = 0; c < AUDIT_CHECK__COUNT; c++) {
        audit_cli_upper(audit_check_name(c), head, sizeof(head));
        width[c] = cli_text_cols(head);
        for (size_t k = 0; k < r->naudits; k++) {
            if (audit_skipped(r->audits[k]) != NULL)
                continue;
            audit_cli_cell(r->audits[k], c, cell, sizeof(cell));
            if (cli_text_cols(cell) > width[c])
                width[c] = cli_text_cols(cell);
        }
    }
    cli_cell(stdout, "SERVER", AUDIT_CLI_NAME_COLS, false);
    printf(" %-5s", "TRANS");
    for (size_t c = 0; c < AUDIT_CHECK__COUNT; c++) {
        audit_cli_upper(audit_check_name(c), head, sizeof(head));
        putchar(' ');
        cli_cell(stdout, head, width[c], false);
    }
    printf(" SESSIONS\n");
    for (size_t k = 0; k < r->naudits; k++) {
        const struct audit  *a = r->audits[k];
        const struct server *s = fleet_server(r->cf.fleet, audit_index(a));
        char                *name = str_sanitized(server_name(s));
        unsigned             opened, ended;

        cli_cell(stdout, name, AUDIT_CLI_NAME_COLS, false);
        free(name);
        printf(" %-5s", audit_transport(a));
        if (audit_skipped(a) != NULL) {
            printf(" (not audited: %s)\n", audit_skipped(a));
            continue;
        }
        for (size_t c = 0; c < AUDIT_CHECK__COUNT; c++) {
            audit_cli_cell(a, c, cell, sizeof(cell));
            putchar(' ');
            cli_cell(stdout, cell, width[c], false);
        }
        audit_sessions(a, &opened, &ended);
        printf(" %u/%u\n", ended, opened);
        audit_cli_details(a);
    }
    printf("\n%s as the spec says   %s the spec allows it, worth knowing   "
        "%s not as the spec says (some clients break)\n"
        "? could not be judged   %s not applicable   \xc2\xb7 not reached   "
        "SESSIONS: ended/opened by the audit\n",
        audit_grade_glyph(AUDIT_GRADE_CLEAN),
        audit_grade_glyph(AUDIT_GRADE_NOTE),
        audit_grade_glyph(AUDIT_GRADE_BAD),
        audit_grade_glyph(AUDIT_GRADE_NA));
}

/* --- the verdict and the JSON --------------------------------------------- */

/* 0 when every server audited is spec-clean, else EXIT_NOT_OK. */
static int
audit_cli_verdict(const struct audit_cli *r, size_t *clean, size_t *skipped)
{
    int rc = 0;

    *clean = *skipped = 0;
    for (size_t k = 0; k < r->naudits; k++) {
        const struct audit *a = r->audits[k];
        const char         *why = audit_skipped(a);

        if (why != NULL && (strcmp(why, "disabled") == 0 ||
            strcmp(why, "tap") == 0)) {
            (*skipped)++;       /* counts neither way */
            continue;
        }
        if (audit_clean(a))
            (*clean)++;
        else
            rc = EXIT_NOT_OK;
    }
    return rc;
}

static cJSON *
audit_cli_json(const struct audit_cli *r, size_t clean, size_t skipped)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *arr = cJSON_AddArrayToObject(root, "servers");
    cJSON *sum;

    for (size_t k = 0; k < r->naudits; k++)
        cJSON_AddItemToArray(arr, audit_json(r->audits[k]));
    sum = cJSON_AddObjectToObject(root, "summary");
    cJSON_AddNumberToObject(sum, "servers", (double)r->naudits);
    cJSON_AddNumberToObject(sum, "clean", (double)clean);
    cJSON_AddNumberToObject(sum, "not_clean",
        (double)(r->naudits - clean - skipped));
    cJSON_AddNumberToObject(sum, "disabled", (double)skipped);
    if (r->run.interrupted)
        cJSON_AddTrueToObject(sum, "interrupted");
    return root;
}

/* Print the report. Returns the exit code. */
static int
audit_cli_report(struct audit_cli *r)
{
    size_t clean, skipped;
    int    rc = audit_cli_verdict(r, &clean, &skipped);

    if (r->json) {
        cJSON *doc = audit_cli_json(r, clean, skipped);

        jsonl_write(stdout, doc);
        cJSON_Delete(doc);
    } else {
        audit_cli_table(r);
    }
    if (r->run.interrupted)
        fprintf(stderr, "mcptop audit: interrupted: the checks not reached "
            "are not judged; every session opened was ended\n");
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "mcptop audit: cannot write the report: %s\n",
            strerror(errno != 0 ? errno : EIO));
        return EXIT_USAGE;
    }
    return r->run.interrupted ? 130 : rc;
}

int
cli_audit(int argc, char **argv)
{
    static const struct option longopts[] = {
        APP_LONGOPTS,
        { "server", required_argument, NULL, 's' },
        { "json", no_argument, NULL, 'j' },
        { "parallel", required_argument, NULL, 'P' },
        { "timeout", required_argument, NULL, 't' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct audit_cli          r = { .parallel = 1, .timeout = -1,
        .cf.opt = { .no_streams = true, .no_pings = true,
                    .no_redial = true } };
    const struct cli_preamble pre = { .cmd = "audit", .longopts = longopts,
        .shortopts = "s:h", .usage = audit_cli_usage,
        .option = audit_cli_option, .loaded = audit_cli_loaded, .arg = &r };
    int                       rc;

    if (cli_preamble(&pre, argc, argv, &r.cf, &rc) != 0) {
        free(r.names);
        free(r.chosen);
        return rc;
    }
    audit_cli_run(&r);
    rc = audit_cli_report(&r);
    for (size_t k = 0; k < r.naudits; k++)
        audit_free(r.audits[k]);
    free(r.audits);
    if (fleet_exit(r.cf.fleet))
        config_free(r.cf.cfg);
    app_close_log(&r.cf.common);
    free(r.names);
    free(r.chosen);
    return rc;
}
