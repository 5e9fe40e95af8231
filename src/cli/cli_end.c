/*
 * `mcptop end`: dial the chosen servers, end each session by the procedure
 * of DESIGN.md section 5, wait for every settlement (bounded by the
 * teardown deadline plus a grace) and print one row or one JSON object per
 * ending. Exit 0 when every outcome is one the operator can rest on.
 */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "engine/ending.h"
#include "export/jsonl.h"
#include "tap/tap.h"
#include "util/str.h"
#include "util/xmalloc.h"

#define END_GRACE_MS 1000

struct end_run {
    struct cli_fleet cf;
    bool            *chosen;        /* per server of cf.cfg */
    bool            *asked;         /* its ending was asked for */
    struct cli_run   run;
    long             bound_ms;      /* for the dials and the endings */
    /* The options. */
    const char     **names;         /* --server NAME..., until loaded */
    size_t           nnames;
    bool             json;          /* --json */
    bool             list;          /* --list-servers */
    const char      *session;       /* --session ID */
    long             teardown;      /* --teardown MS, or -1 */
};

const struct cli_entry cli_end_entry = {
    .name = "end",
    .usage =
        APP_USAGE "\n"
        "                  [--server NAME]... [--json] [--teardown MS] "
        APP_USAGE_END "\n"
        "       mcptop end [-c FILE | URL] --list-servers\n"
        "       mcptop end --session ID (URL | -c FILE --server NAME)",
    .summary = "dial, end each session, report outcomes",
    .exec = cli_end,
    .needs_http = true,
};

static void
end_usage(FILE *out)
{
    cli_usage(out, &cli_end_entry);
    fprintf(out,
        "\n"
        "Without --session: dial the chosen servers (all by default) to get\n"
        "sessions of its own, end each session and\n"
        "report each ending's outcome and, apart from it, its settlement.\n"
        "\n"
        "  -s, --server NAME  end this server (repeatable)\n"
        "      --json         one JSON object per line, one per ending\n"
        "      --teardown MS  the teardown deadline (default 3000)\n"
        "      --session ID   end the session ID of another client on the\n"
        "                     one server given (a URL or --server NAME): its\n"
        "                     DELETE, nothing dialed; the id is never shown\n"
        "                     whole. On a tap entry ({\"tap\": PATH} of an\n"
        "                     HTTP tap) ID is an agent's session's prefix\n"
        "                     (check --json's sessions[].id_prefix) and the\n"
        "                     tap sends the DELETE\n"
        "      --list-servers print the configured server names (what\n"
        "                     --server takes), one per line, and exit\n"
        "  -h, --help         this help\n");
    app_usage_options(out);
    fprintf(out,
        "\n"
        "Outcomes: terminated (DELETE 2xx), not_allowed (405), already_gone\n"
        "(404), rejected (other status), failed (transport), timed_out,\n"
        "no_session (no session id was issued; nothing sent), for stdio\n"
        "exited / signalled / killed, and for 2024-11-05 HTTP+SSE\n"
        "stream_closed (that transport has no DELETE).\n"
        "Test hook: MCPTOP_TEST_REPEAT_DELETE=1 sends each ended session's\n"
        "DELETE once more and reports it as a second ending.\n"
        "Exit status: 0 when every outcome is terminated, not_allowed,\n"
        "already_gone, exited, no_session or stream_closed; 1 otherwise;\n"
        "2 usage. A server\n"
        "disabled in the config is not dialed and counts neither way.\n");
    app_usage_sources(out);
}

/* Once a chosen server's dial settled, end it (once). */
static void
end_step_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct end_run *r = w->data;
    bool            all = true;

    (void)revents;
    for (size_t i = 0; i < fleet_size(r->cf.fleet); i++) {
        struct server *s = fleet_server(r->cf.fleet, i);

        if (!r->chosen[i] || r->asked[i])
            continue;
        if (!server_dial_settled(s)) {
            all = false;
            continue;
        }
        r->asked[i] = true;
        server_end(s, false);
    }
    if (all && !fleet_endings_busy(r->cf.fleet))
        ev_break(loop, EVBREAK_ONE);
}

static void
end_event_cb(void *arg, const struct event *e)
{
    struct end_run *r = arg;

    (void)e;
    cli_run_kick(&r->run);
}

/* The row of a chosen server with nothing ended: the declaration was
 * not dialable, or it is disabled. */
static void
end_print_none(const struct server *s, bool json)
{
    char *name = str_sanitized(server_name(s));

    if (json) {
        cJSON *o = cJSON_CreateObject();
        char   why[64];

        snprintf(why, sizeof(why), "not dialed (%s)",
            server_state_name(server_state(s)));
        cJSON_AddStringToObject(o, "server", name);
        cJSON_AddNullToObject(o, "outcome");
        cJSON_AddStringToObject(o, "detail", why);
        jsonl_write(stdout, o);
        cJSON_Delete(o);
    } else {
        cli_cell(stdout, name, 20, false);
        printf(" %-13s (not dialed: %s)\n", "-",
            server_state_name(server_state(s)));
    }
    free(name);
}

/* The row of one ending of s. */
static void
end_print_ending(const struct server *s, const struct ending *e, bool json)
{
    char *name;
    char  st[8] = "-", settled[16] = "settling";

    if (json) {
        cJSON *o = jsonl_ending(e);

        jsonl_write(stdout, o);
        cJSON_Delete(o);
        return;
    }
    name = str_sanitized(server_name(s));
    if (e->http_status != 0)
        snprintf(st, sizeof(st), "%ld", e->http_status);
    if (e->settled)
        snprintf(settled, sizeof(settled), "%.1f", e->settled_ms);
    cli_cell(stdout, name, 20, false);
    printf(" %-13s %-5s %-17s %-9s %11.1f %10s %s\n",
        ending_outcome_name(e->outcome), st,
        e->has_failure ? failure_kind_name(e->kind) : "-",
        e->has_failure ? delivered_name(e->delivered) : "-",
        e->duration_ms, settled, e->half_open ? "yes" : "no");
    if (e->detail[0] != '\0')
        printf("  %s\n", e->detail);
    free(name);
}

/* Every chosen server's endings. Returns the exit code: 0 when every
 * outcome is one to rest on, else EXIT_NOT_OK. */
static int
end_print(const struct end_run *r)
{
    int rc = 0;

    if (!r->json)
        printf("%-20s %-13s %-5s %-17s %-9s %11s %10s %s\n", "SERVER",
            "OUTCOME", "HTTP", "KIND", "DELIVERED", "DURATION_MS",
            "SETTLED_MS", "HALF_OPEN");
    for (size_t i = 0; i < fleet_size(r->cf.fleet); i++) {
        const struct server *s = fleet_server(r->cf.fleet, i);

        if (!r->chosen[i])
            continue;
        if (server_ending_count(s) == 0) {
            end_print_none(s, r->json);
            /* A server disabled in the config had nothing to end: it
             * counts neither way. */
            if (server_state(s) != SERVER_DISABLED)
                rc = EXIT_NOT_OK;
            continue;
        }
        for (size_t k = 0; k < server_ending_count(s); k++) {
            const struct ending *e = server_ending(s, k);

            if (!ending_outcome_ok(e->outcome))
                rc = EXIT_NOT_OK;
            end_print_ending(s, e, r->json);
        }
    }
    return rc;
}

/* cli_preamble.option: end's own options. */
static int
end_option(void *arg, int ch, char *value, int *rc)
{
    struct end_run *r = arg;

    switch (ch) {
    case 's':
        r->names = xrealloc(r->names, (r->nnames + 1) * sizeof(*r->names));
        r->names[r->nnames++] = value;
        break;
    case 'j':
        r->json = true;
        break;
    case 't':
        r->teardown = cli_parse_ms(value);
        if (r->teardown < 0) {
            *rc = app_usage_error("end", "--teardown takes a positive "
                "number of milliseconds, not '%.40s'", value);
            return -1;
        }
        break;
    case 'L':
        r->list = true;
        break;
    case 'S':
        r->session = value;
        break;
    }
    return 0;
}

/* --list-servers, for completions and scripts: one name per line,
 * nothing dialed. Returns the exit code. */
static int
end_list_servers(const struct config *cfg)
{
    for (size_t i = 0; i < cfg->nservers; i++) {
        char *name = str_sanitized(cfg->servers[i].name);

        printf("%s\n", name);
        free(name);
    }
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : EXIT_USAGE;
}

/* Mark the servers --server names (every one when none is named). 0, or
 * EXIT_USAGE after saying which name is unknown, or why --session cannot
 * be done. */
static int
end_choose(struct end_run *r, const struct config *cfg)
{
    int rc = 0;

    r->chosen = xcalloc(cfg->nservers + 1, sizeof(bool));
    r->asked = xcalloc(cfg->nservers + 1, sizeof(bool));
    for (size_t k = 0; k < r->nnames; k++) {
        bool found = false;

        for (size_t i = 0; i < cfg->nservers; i++) {
            if (strcmp(cfg->servers[i].name, r->names[k]) == 0) {
                r->chosen[i] = true;
                found = true;
            }
        }
        if (!found)
            rc = app_usage_error("end", "no server named '%.60s' in %s",
                r->names[k], cfg->origin);
    }
    if (rc != 0)
        return rc;
    if (r->session != NULL && !(r->nnames == 1 || (r->nnames == 0 &&
        cfg->nservers == 1)))
        return app_usage_error("end", "--session ID needs one server: a "
            "URL or --server NAME");
    for (size_t i = 0; i < cfg->nservers; i++) {
        if (r->nnames == 0)
            r->chosen[i] = true;
    }
    return 0;
}

/* --session PREFIX on a tap entry ({"tap": PATH} of an HTTP tap): the
 * tap ends the agent's session (its DELETE, under the tap's deadline).
 * Returns the exit code. */
static int
end_tap_session(struct end_run *r, const struct config_server *d)
{
    char        *answer = NULL, *cause = NULL, *name;
    cJSON       *o;
    const cJSON *oc, *st, *ms;
    int          rc = EXIT_NOT_OK;

    name = str_sanitized(d->name);
    if (tap_end(d->tap, r->session, (r->teardown > 0 ? r->teardown :
        CONFIG_DEFAULT_TEARDOWN_MS) + 5000, &answer, &cause) != 0) {
        fprintf(stderr, "mcptop end: %s: %s\n", name, cause != NULL ? cause :
            "not ended");
        free(cause);
        free(name);
        return EXIT_NOT_OK;
    }
    o = cJSON_Parse(answer);
    oc = cJSON_GetObjectItemCaseSensitive(o, "outcome");
    st = cJSON_GetObjectItemCaseSensitive(o, "status");
    ms = cJSON_GetObjectItemCaseSensitive(o, "ms");
    if (cJSON_IsString(oc) && (strcmp(oc->valuestring, "terminated") == 0 ||
        strcmp(oc->valuestring, "not_allowed") == 0 ||
        strcmp(oc->valuestring, "already_gone") == 0))
        rc = 0;
    if (r->json) {
        printf("%s\n", answer);
    } else {
        char *outcome = str_sanitized(cJSON_IsString(oc) ? oc->valuestring :
            "?");

        printf("%s: the agent's session %.8s: %s", name, r->session, outcome);
        if (cJSON_IsNumber(st))
            printf(" (HTTP %d)", st->valueint);
        if (cJSON_IsNumber(ms))
            printf(" in %.0f ms", ms->valuedouble);
        printf("\n");
        free(outcome);
    }
    cJSON_Delete(o);
    free(answer);
    free(name);
    return rc;
}

/* cli_preamble.loaded: --list-servers, or the servers chosen, their
 * teardown deadline, and the bound of the whole run. */
static int
end_loaded(void *arg, struct config *cfg, int *rc)
{
    struct end_run *r = arg;

    if (r->list) {
        *rc = end_list_servers(cfg);
        return -1;
    }
    *rc = end_choose(r, cfg);
    if (*rc != 0)
        return -1;
    for (size_t i = 0; r->session != NULL && i < cfg->nservers; i++) {
        if (r->chosen[i] && cfg->servers[i].tap != NULL) {
            *rc = end_tap_session(r, &cfg->servers[i]);
            return -1;
        }
    }
    for (size_t i = 0; i < cfg->nservers; i++) {
        const struct config_server *d = &cfg->servers[i];

        if (r->teardown > 0)
            cfg->servers[i].teardown_ms = r->teardown;
        if (r->chosen[i] && d->open_deadline_ms + d->timeout_ms +
            d->teardown_ms > r->bound_ms)
            r->bound_ms = d->open_deadline_ms + d->timeout_ms +
                d->teardown_ms;
    }
    return 0;
}

/* --session ID: the DELETE of another client's session on the one chosen
 * server, nothing dialed. Frees the fleet. Returns the exit code. */
static int
end_by_session(struct end_run *r)
{
    struct fleet *f = r->cf.fleet;
    int           rc;

    for (size_t i = 0; i < fleet_size(f); i++) {
        if (r->chosen[i] && server_end_session(fleet_server(f, i),
            r->session) == NULL) {
            rc = app_usage_error("end", "--session: %.60s cannot end a "
                "session by id (a stdio or invalid server)",
                server_name(fleet_server(f, i)));
            fleet_free(f);
            return rc;
        }
    }
    cli_wait_endings(f, fleet_teardown_ms(f) + END_GRACE_MS);
    rc = end_print(r);
    fleet_free(f);
    return rc;
}

/* Dial the chosen servers and end each session as its dial settles,
 * until all settled, the bound passes or a signal comes. */
static void
end_dial_all(struct end_run *r)
{
    struct fleet   *f = r->cf.fleet;
    struct ev_loop *loop = fleet_loop(f);

    cli_run_init(&r->run, loop, r->bound_ms + END_GRACE_MS, end_step_cb, r);
    fleet_subscribe(f, end_event_cb, r);
    fleet_start_some(f, r->chosen);
    cli_run_kick(&r->run);
    ev_run(loop, 0);
    if (r->run.interrupted) {
        /* Interrupted mid-dial: what a dial was issued is ended all the
         * same (a second signal cuts the wait short). */
        for (size_t i = 0; i < fleet_size(f); i++) {
            if (r->chosen[i] && !r->asked[i]) {
                r->asked[i] = true;
                server_end(fleet_server(f, i), false);
            }
        }
        cli_wait_endings(f, fleet_teardown_ms(f) + END_GRACE_MS);
    }
    if (r->cf.opt.test_keep_id && !r->run.interrupted) {
        /* Test hook: DELETE each ended session once more. */
        for (size_t i = 0; i < fleet_size(f); i++)
            server_test_repeat_delete(fleet_server(f, i));
        cli_wait_endings(f, fleet_teardown_ms(f) + END_GRACE_MS);
    }
    cli_run_done(&r->run);
}

int
cli_end(int argc, char **argv)
{
    static const struct option longopts[] = {
        APP_LONGOPTS,
        { "server", required_argument, NULL, 's' },
        { "json", no_argument, NULL, 'j' },
        { "teardown", required_argument, NULL, 't' },
        { "list-servers", no_argument, NULL, 'L' },
        { "session", required_argument, NULL, 'S' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct end_run            r = { .teardown = -1,
        .cf.opt = { .no_streams = true, .no_pings = true,
                    .no_redial = true } };
    const struct cli_preamble pre = { .cmd = "end", .longopts = longopts,
        .shortopts = "s:h", .usage = end_usage, .option = end_option,
        .loaded = end_loaded, .arg = &r };
    int                       rc;

    r.cf.opt.test_keep_id = getenv("MCPTOP_TEST_REPEAT_DELETE") != NULL;
    if (cli_preamble(&pre, argc, argv, &r.cf, &rc) != 0)
        goto out_chosen;
    if (r.session != NULL) {
        rc = end_by_session(&r);
        goto out_fleet;
    }
    end_dial_all(&r);
    rc = end_print(&r);
    if (r.run.interrupted)
        rc = 130;
    if (!fleet_exit(r.cf.fleet)) {
        /* The fleet is left to the process's exit, and what it borrows. */
        app_close_log(&r.cf.common);
        free(r.names);
        return rc;
    }
out_fleet:
    app_close_log(&r.cf.common);
    config_free(r.cf.cfg);
out_chosen:
    free(r.names);
    free(r.chosen);
    free(r.asked);
    return rc;
}
