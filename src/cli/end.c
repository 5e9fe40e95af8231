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
#include "util/str.h"
#include "util/xmalloc.h"

#define END_GRACE_MS 1000

struct end_run {
    struct fleet *fleet;
    bool         *chosen;
    bool         *asked;
    struct cli_run run;
};

static void
end_usage(FILE *out)
{
    fprintf(out,
        "Usage: mcptop end " APP_USAGE "\n"
        "                  [--server NAME]... [--json] [--teardown MS] "
        APP_USAGE_END "\n"
        "       mcptop end [-c FILE | URL] --list-servers\n"
        "       mcptop end --session ID (URL | -c FILE --server NAME)\n"
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
        "                     whole\n"
        "      --list-servers print the configured server names (what\n"
        "                     --server takes), one per line, and exit\n"
        "  -h, --help         this help\n");
    app_usage_options(out);
    fprintf(out,
        "\n"
        "Outcomes: terminated (DELETE 2xx), not_allowed (405), already_gone\n"
        "(404), rejected (other status), failed (transport), timed_out,\n"
        "no_session (no session id was issued; nothing sent), and for stdio\n"
        "exited / signalled / killed.\n"
        "Test hook: MCPTOP_TEST_REPEAT_DELETE=1 sends each ended session's\n"
        "DELETE once more and reports it as a second ending.\n"
        "Exit status: 0 when every outcome is terminated, not_allowed,\n"
        "already_gone, exited or no_session; 1 otherwise; 2 usage. A server\n"
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
    for (size_t i = 0; i < fleet_size(r->fleet); i++) {
        struct server *s = fleet_server(r->fleet, i);

        if (!r->chosen[i] || r->asked[i])
            continue;
        if (!server_dial_settled(s)) {
            all = false;
            continue;
        }
        r->asked[i] = true;
        server_end(s, false);
    }
    if (all && !fleet_endings_busy(r->fleet))
        ev_break(loop, EVBREAK_ONE);
}

static void
end_event_cb(void *arg, const struct event *e)
{
    struct end_run *r = arg;

    (void)e;
    cli_run_kick(&r->run);
}

static void
end_print(struct end_run *r, bool json, int *rc)
{
    if (!json)
        printf("%-20s %-13s %-5s %-17s %-9s %11s %10s %s\n", "SERVER",
            "OUTCOME", "HTTP", "KIND", "DELIVERED", "DURATION_MS",
            "SETTLED_MS", "HALF_OPEN");
    for (size_t i = 0; i < fleet_size(r->fleet); i++) {
        const struct server *s = fleet_server(r->fleet, i);

        if (!r->chosen[i])
            continue;
        if (server_ending_count(s) == 0) {
            /* Nothing could be ended: the declaration was not dialable,
             * or it is disabled. */
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
            /* A server disabled in the config had nothing to end: it
             * counts neither way. */
            if (server_state(s) != SERVER_DISABLED)
                *rc = EXIT_NOT_OK;
            continue;
        }
        for (size_t k = 0; k < server_ending_count(s); k++) {
            const struct ending *e = server_ending(s, k);

            if (!ending_outcome_ok(e->outcome))
                *rc = EXIT_NOT_OK;
            if (json) {
                cJSON *o = jsonl_ending(e);

                jsonl_write(stdout, o);
                cJSON_Delete(o);
            } else {
                char *name = str_sanitized(server_name(s));
                char  st[8] = "-", settled[16] = "settling";

                if (e->http_status != 0)
                    snprintf(st, sizeof(st), "%ld", e->http_status);
                if (e->settled)
                    snprintf(settled, sizeof(settled), "%.1f",
                        e->settled_ms);
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
        }
    }
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
    struct app_common    common = { 0 };
    struct fleet_options opt = { .no_streams = true, .no_pings = true,
        .no_redial = true };
    struct end_run       r = { 0 };
    bool                 list = false;
    const char          *session = NULL;
    struct config       *cfg = NULL;
    struct ev_loop      *loop = EV_DEFAULT;
    const char         **names = NULL;
    size_t               nnames = 0;
    bool                 json = false;
    long                 teardown = -1, bound_ms = 0;
    int                  ch, rc = 0;
    char                *cause = NULL;

    argc = app_split_command(&common, argc, argv);
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":" APP_SHORTOPTS "s:h", longopts,
        NULL)) != -1) {
        if (app_option(&common, ch, optarg))
            continue;
        switch (ch) {
        case 's':
            names = xrealloc(names, (nnames + 1) * sizeof(*names));
            names[nnames++] = optarg;
            break;
        case 'j':
            json = true;
            break;
        case 't':
            teardown = cli_parse_ms(optarg);
            if (teardown < 0) {
                free(names);
                return app_usage_error("end", "--teardown takes a positive "
                    "number of milliseconds, not '%.40s'", optarg);
            }
            break;
        case 'L':
            list = true;
            break;
        case 'S':
            session = optarg;
            break;
        case 'h':
            end_usage(stdout);
            free(names);
            return 0;
        default:
            free(names);
            return app_option_error("end", ch, argv, longopts);
        }
    }
    rc = app_args(&common, "mcptop end", argc, argv, optind);
    if (rc != 0) {
        free(names);
        return rc;
    }
    rc = app_load_config(&common, &cfg);
    if (rc != 0) {
        free(names);
        return rc;
    }
    if (list) {
        /* For completions and scripts: one name per line, nothing dialed. */
        for (size_t i = 0; i < cfg->nservers; i++) {
            char *name = str_sanitized(cfg->servers[i].name);

            printf("%s\n", name);
            free(name);
        }
        free(names);
        config_free(cfg);
        return fflush(stdout) == 0 && !ferror(stdout) ? 0 : EXIT_USAGE;
    }
    r.chosen = xcalloc(cfg->nservers + 1, sizeof(bool));
    r.asked = xcalloc(cfg->nservers + 1, sizeof(bool));
    for (size_t k = 0; k < nnames; k++) {
        bool found = false;

        for (size_t i = 0; i < cfg->nservers; i++) {
            if (strcmp(cfg->servers[i].name, names[k]) == 0) {
                r.chosen[i] = true;
                found = true;
            }
        }
        if (!found)
            rc = app_usage_error("end", "no server named '%.60s' in %s",
                names[k], cfg->origin);
    }
    free(names);
    if (rc != 0)
        goto out_cfg;
    if (session != NULL && !(nnames == 1 || (nnames == 0 &&
        cfg->nservers == 1))) {
        rc = app_usage_error("end", "--session ID needs one server: a URL "
            "or --server NAME");
        goto out_cfg;
    }
    for (size_t i = 0; i < cfg->nservers; i++) {
        if (nnames == 0)
            r.chosen[i] = true;
        if (teardown > 0)
            cfg->servers[i].teardown_ms = teardown;
        if (r.chosen[i] && cfg->servers[i].open_deadline_ms +
            cfg->servers[i].timeout_ms + cfg->servers[i].teardown_ms >
            bound_ms)
            bound_ms = cfg->servers[i].open_deadline_ms +
                cfg->servers[i].timeout_ms + cfg->servers[i].teardown_ms;
    }
    rc = app_open_log(&common);
    if (rc != 0)
        goto out_cfg;
    opt.log = common.log;
    opt.test_keep_id = getenv("MCPTOP_TEST_REPEAT_DELETE") != NULL;
    r.fleet = fleet_new(loop, cfg, &opt, &cause);
    if (r.fleet == NULL) {
        fprintf(stderr, "mcptop end: %s\n", cause);
        free(cause);
        rc = EXIT_USAGE;
        goto out_log;
    }
    if (fleet_warning(r.fleet) != NULL)
        fprintf(stderr, "mcptop end: warning: %s\n", fleet_warning(r.fleet));
    if (session != NULL) {
        /* A session of another client: its DELETE, nothing dialed. */
        for (size_t i = 0; i < fleet_size(r.fleet); i++) {
            if (r.chosen[i] && server_end_session(fleet_server(r.fleet, i),
                session) == NULL) {
                rc = app_usage_error("end", "--session: %.60s cannot end a "
                    "session by id (a stdio or invalid server)",
                    server_name(fleet_server(r.fleet, i)));
                fleet_free(r.fleet);
                goto out_log;
            }
        }
        cli_wait_endings(r.fleet, fleet_teardown_ms(r.fleet) + END_GRACE_MS);
        rc = 0;
        end_print(&r, json, &rc);
        fleet_free(r.fleet);
        goto out_log;
    }
    cli_run_init(&r.run, loop, bound_ms + END_GRACE_MS, end_step_cb, &r);
    fleet_subscribe(r.fleet, end_event_cb, &r);
    fleet_start_some(r.fleet, r.chosen);
    cli_run_kick(&r.run);
    ev_run(loop, 0);
    if (r.run.interrupted) {
        /* Interrupted mid-dial: what a dial was issued is ended all the
         * same (a second signal cuts the wait short). */
        for (size_t i = 0; i < fleet_size(r.fleet); i++) {
            if (r.chosen[i] && !r.asked[i]) {
                r.asked[i] = true;
                server_end(fleet_server(r.fleet, i), false);
            }
        }
        cli_wait_endings(r.fleet, fleet_teardown_ms(r.fleet) + END_GRACE_MS);
    }
    if (opt.test_keep_id && !r.run.interrupted) {
        /* Test hook: DELETE each ended session once more. */
        for (size_t i = 0; i < fleet_size(r.fleet); i++)
            server_test_repeat_delete(fleet_server(r.fleet, i));
        cli_wait_endings(r.fleet, fleet_teardown_ms(r.fleet) + END_GRACE_MS);
    }
    cli_run_done(&r.run);
    rc = 0;
    end_print(&r, json, &rc);
    if (r.run.interrupted)
        rc = 130;
    if (!fleet_exit(r.fleet)) {
        app_close_log(&common);
        return rc;
    }
out_log:
    app_close_log(&common);
out_cfg:
    free(r.chosen);
    free(r.asked);
    config_free(cfg);
    return rc;
}
