/*
 * `mcptop login NAME` and `mcptop logout NAME`: MCP authorization for one
 * configured server. login dials the server the way check does, with
 * consent enabled for it: when the server asks for authorization, the
 * oauth module discovers its authorization server and runs the grant (the
 * authorization code in the user's browser, or client credentials), the
 * token goes into the token cache, and the request is sent again. login
 * succeeds when the dial completes. logout forgets the cached tokens.
 *
 * The browser: $BROWSER (a command; "%s" in it stands for the URL, else
 * the URL is its last argument), else xdg-open, and the URL is always
 * printed on stderr too. The engine starts it (oauth_open_browser),
 * detached, its output discarded.
 */
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "engine/oauth.h"
#include "engine/oauth_store.h"
#include "engine/oauth_url.h"
#include "util/clock.h"
#include "util/str.h"
#include "util/xmalloc.h"

#define LOGIN_DEFAULT_WAIT_MS 300000L

struct login {
    struct cli_run run;
    struct server *server;
    bool           dialed;
    bool           probing;     /* its deep check is in flight */
};

const struct cli_entry cli_login_entry = {
    .name = "login",
    .usage = "NAME [-c FILE] [--wait MS] [--log FILE]",
    .summary = "authorize mcptop for server NAME (OAuth)",
    .exec = cli_login,
    .needs_http = true,
};

const struct cli_entry cli_logout_entry = {
    .name = "logout",
    .usage = "NAME [-c FILE]",
    .summary = "forget NAME's cached tokens",
    .exec = cli_logout,
    .needs_http = true,
};

/* The help of login and of logout: one text, both synopses. */
static void
login_usage(FILE *out)
{
    cli_usage(out, &cli_login_entry);
    cli_usage_also(out, &cli_logout_entry);
    fprintf(out,
        "\n"
        "login: dial the configured HTTP server NAME; when it asks for\n"
        "authorization (MCP authorization, OAuth 2.1), discover its\n"
        "authorization server and get a token: in the browser (the\n"
        "authorization code grant with PKCE, through a redirect to\n"
        "127.0.0.1) or, for \"grant\": \"client_credentials\", without one.\n"
        "The token is cached for check, watch and the TUI, which refresh\n"
        "it but never open a browser.\n"
        "logout: forget NAME's cached tokens.\n"
        "\n"
        "  -c, --config FILE  the fleet config\n"
        "      --wait MS      how long to wait for the browser (default "
        "%ld)\n"
        "      --log FILE     append a debug log (never a token)\n"
        "  -h, --help         this help\n"
        "\n"
        "The browser: $BROWSER (\"%%s\" stands for the URL), else xdg-open;\n"
        "the URL is printed on stderr as well. Tokens: %s\n"
        "Exit status: 0 authorized (or no authorization needed), 1 not,\n"
        "2 usage or config error.\n", LOGIN_DEFAULT_WAIT_MS,
        "$XDG_STATE_HOME/mcptop/tokens.json (mode 0600)");
}

/* oauth_consent.open_url: tell the person, open the browser. */
static void
login_open_url(void *arg, const char *server, const char *url)
{
    char *name = str_sanitized(server);
    char *cause = NULL;

    (void)arg;
    fprintf(stderr, "mcptop login: authorize mcptop for %s in the browser; "
        "if it does not open, visit:\n  %s\n", name, url);
    fflush(stderr);
    free(name);
    if (oauth_open_browser(url, &cause) != 0) {
        fprintf(stderr, "mcptop login: %s\n", cause);
        free(cause);
    }
}

/* Did this login cache a token for decl (obtained at or after since)? */
static bool
login_fresh_token(const struct config_server *decl, int64_t since)
{
    char                     *cause = NULL;
    struct oauth_store       *st = oauth_store_open(NULL, &cause);
    char                     *res = oauth_url_resource(decl->url);
    const struct oauth_token *t = NULL;
    bool                      fresh;

    if (st != NULL && res != NULL && oauth_store_reload(st, &cause) == 0)
        t = oauth_store_find(st, decl->name, res);
    fresh = t != NULL && t->obtained_at >= since;
    free(cause);
    free(res);
    oauth_store_free(st);
    return fresh;
}

/* event_cb: the dial's one outcome ends the login. */
static void
login_event_cb(void *arg, const struct event *e)
{
    struct login *l = arg;

    if (e->type == EVENT_EXCHANGE && e->server == l->server &&
        e->op != NULL && strcmp(e->op, "dial") == 0 && !l->dialed) {
        l->dialed = true;
        /* The deep check too, when one is configured: a tool that needs
         * more scope asks for it here, where consent can be given. */
        if (e->completed)
            l->probing = server_probe_now(l->server);
        cli_run_kick(&l->run);
    } else if (e->type == EVENT_EXCHANGE && e->server == l->server &&
        e->op != NULL && strcmp(e->op, "tools/call") == 0) {
        l->probing = false;
        cli_run_kick(&l->run);
    }
}

static void
login_step_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct login *l = w->data;

    (void)revents;
    if (l->dialed && !l->probing)
        ev_break(loop, EVBREAK_ONE);
}

/* The index of the server named name, or -1 (message printed). */
static long
login_find(const struct config *cfg, const char *cmd, const char *name)
{
    for (size_t i = 0; i < cfg->nservers; i++) {
        if (strcmp(cfg->servers[i].name, name) == 0)
            return (long)i;
    }
    {
        char *clean = str_sanitized(name);

        fprintf(stderr, "mcptop %s: no server named \"%s\" in %s\n", cmd,
            clean, cfg->origin);
        free(clean);
    }
    return -1;
}

/* Parse the shared options; the NAME is the one positional argument. */
static int
login_args(int argc, char **argv, const char *cmd, struct app_common *c,
    const char **name, long *wait_ms)
{
    static const struct option longopts[] = {
        APP_LONGOPTS,
        { "wait", required_argument, NULL, 'w' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int ch;

    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":" APP_SHORTOPTS "h", longopts,
        NULL)) != -1) {
        if (app_option(c, ch, optarg))
            continue;
        switch (ch) {
        case 'w':
            *wait_ms = cli_parse_ms(optarg);
            if (*wait_ms < 0)
                return app_usage_error(cmd, "--wait takes a positive "
                    "number of milliseconds, not '%.40s'", optarg);
            break;
        case 'h':
            login_usage(stdout);
            return -1;
        default:
            return app_option_error(cmd, ch, argv, longopts);
        }
    }
    if (c->bad_option)
        return EXIT_USAGE;
    if (optind + 1 != argc)
        return app_usage_error(cmd, "give the NAME of one configured "
            "server");
    *name = argv[optind];
    return 0;
}

int
cli_login(int argc, char **argv)
{
    struct app_common    common = { 0 };
    struct fleet_options opt = { .no_streams = true, .no_pings = true,
        .no_redial = true };
    struct login         l = { 0 };
    struct config       *cfg = NULL;
    struct fleet        *fleet;
    struct ev_loop      *loop = EV_DEFAULT;
    const char          *name = NULL;
    long                 wait_ms = LOGIN_DEFAULT_WAIT_MS, idx;
    int64_t              started = clock_wall_ms() / 1000;
    char                *cause = NULL, *clean;
    bool                *chosen;
    int                  rc;
    struct oauth_consent consent = { 0 };

    rc = login_args(argc, argv, "login", &common, &name, &wait_ms);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    rc = app_load_config(&common, &cfg);
    if (rc != 0)
        return rc;
    idx = login_find(cfg, "login", name);
    clean = str_sanitized(name);
    if (idx >= 0 && (cfg->servers[idx].transport != CONFIG_HTTP ||
        cfg->servers[idx].invalid != NULL)) {
        fprintf(stderr, "mcptop login: %s is %s\n", clean,
            cfg->servers[idx].invalid != NULL ? "not a valid declaration" :
            "a stdio server: MCP authorization is for HTTP servers");
        idx = -1;
    }
    if (idx < 0 || app_open_log(&common) != 0) {
        free(clean);
        config_free(cfg);
        return EXIT_USAGE;
    }
    opt.log = common.log;
    /* The dial may wait for the browser: its deadline covers the wait. */
    opt.open_deadline_ms = wait_ms + cfg->servers[idx].open_deadline_ms;
    consent.server = cfg->servers[idx].name;
    consent.wait_ms = wait_ms;
    consent.open_url = login_open_url;
    oauth_set_consent(&consent);
    fleet = fleet_new(loop, cfg, &opt, &cause);
    if (fleet == NULL) {
        fprintf(stderr, "mcptop: %s\n", cause);
        free(cause);
        free(clean);
        config_free(cfg);
        app_close_log(&common);
        oauth_set_consent(NULL);
        return EXIT_USAGE;
    }
    l.server = fleet_server(fleet, (size_t)idx);
    chosen = xcalloc(fleet_size(fleet), sizeof(*chosen));
    chosen[idx] = true;
    cli_run_init(&l.run, loop, 2 * opt.open_deadline_ms + 5000, login_step_cb,
        &l);
    fleet_subscribe(fleet, login_event_cb, &l);
    fleet_start_some(fleet, chosen);
    ev_run(loop, 0);
    cli_run_done(&l.run);
    oauth_set_consent(NULL);

    rc = EXIT_NOT_OK;
    if (l.run.interrupted) {
        fprintf(stderr, "mcptop login: interrupted\n");
        rc = 130;
    } else if (!l.dialed) {
        fprintf(stderr, "mcptop login: %s: no outcome in time\n", clean);
    } else if (server_state(l.server) == SERVER_READY &&
        oauth_save_error() != NULL) {
        /* Authorized, but the token is lost with this process. */
        fprintf(stderr, "mcptop login: %s: authorized, but the token "
            "could not be saved: %s\n", clean, oauth_save_error() +
            strlen(cfg->servers[idx].name) + 2);
    } else if (server_state(l.server) == SERVER_READY) {
        rc = 0;
        if (login_fresh_token(&cfg->servers[idx], started))
            printf("%s: authorized; the token is cached\n", clean);
        else
            printf("%s: dialed without being asked for authorization; no "
                "token needed\n", clean);
    } else {
        const struct failure *f = server_last_failure(l.server, NULL);

        fprintf(stderr, "mcptop login: %s: %s%s%s%s%s\n", clean,
            f != NULL ? failure_kind_name(f->kind) : "not dialed",
            f != NULL && f->reason != FAILURE_REASON_NONE ? " " : "",
            f != NULL ? failure_reason_name(f->reason) : "",
            f != NULL && f->detail[0] != '\0' ? ": " : "",
            f != NULL ? f->detail : "");
    }
    fleet_end_all(fleet);
    cli_wait_endings(fleet, fleet_teardown_ms(fleet) + 1000);
    fleet_free(fleet);
    free(chosen);
    free(clean);
    config_free(cfg);
    app_close_log(&common);
    return rc;
}

int
cli_logout(int argc, char **argv)
{
    struct app_common common = { 0 };
    struct config    *cfg = NULL;
    const char       *name = NULL;
    long              wait_ms = 0, n;
    char             *cause = NULL, *clean;
    int               rc;

    rc = login_args(argc, argv, "logout", &common, &name, &wait_ms);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    /* The config only confirms the name; tokens of a server that left the
     * config can still be forgotten. */
    if (app_load_config(&common, &cfg) == 0 &&
        login_find(cfg, "logout", name) < 0)
        fprintf(stderr, "mcptop logout: forgetting its tokens anyway\n");
    config_free(cfg);
    clean = str_sanitized(name);
    n = oauth_logout(name, &cause);
    if (n < 0) {
        fprintf(stderr, "mcptop logout: %s\n", cause);
        free(cause);
        free(clean);
        return EXIT_NOT_OK;
    }
    printf("%s: forgot %ld cached token%s\n", clean, n, n == 1 ? "" : "s");
    free(clean);
    return 0;
}
