/*
 * What the TUI and the commands share: the options naming where the fleet
 * comes from, loading every source into one config (merging them, asking
 * for ${input:ID} values on the terminal in the TUI), and the debug log.
 */
#include "front/app.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/clients.h"
#include "front/prompt.h"
#include "engine/url.h"
#include "util/clock.h"
#include "util/str.h"
#include "util/xmalloc.h"

/* Exit status after an interrupted question (128 + SIGINT). */
#define APP_EXIT_INTERRUPTED 130

/* One ${input:ID} answer (a secret), kept while the fleet loads. */
struct app_input {
    char *id;
    char *value;
};

/* The answers given while loading, and whether asking still makes sense. */
struct app_inputs {
    bool              interactive;
    bool              interrupted;
    bool              no_terminal;
    struct app_input *v;
    size_t            n;
};

/* Lines for the loaded config's notes, gathered before it exists. */
struct app_lines {
    char   **v;
    size_t   n;
};

/* See app.h. */
bool
app_is_url(const char *arg)
{
    return strncasecmp(arg, "http://", 7) == 0 ||
        strncasecmp(arg, "https://", 8) == 0;
}

/* See app.h. */
int
app_split_command(struct app_common *c, int argc, char **argv)
{
    int i;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            c->has_command = true;
            c->command = argv + i + 1;
            c->ncommand = (size_t)(argc - i - 1);
            return i;
        }
    }
    return argc;
}

/* See app.h. */
int
app_option(struct app_common *c, int ch, const char *arg)
{
    switch (ch) {
    case 'c':
        if (c->nconfig == APP_MAX_CONFIGS) {
            fprintf(stderr, "mcptop: at most %d -c options\n",
                APP_MAX_CONFIGS);
            c->bad_option = true;
            return -1;
        }
        c->config_paths[c->nconfig++] = arg;
        return 1;
    case APP_OPT_FROM:
        if (!clients_known(arg)) {
            fprintf(stderr, "mcptop: --from takes %s, not '%s'\n",
                clients_names(), arg);
            c->bad_option = true;
            return -1;
        }
        if (c->from != NULL && strcmp(c->from, arg) != 0) {
            fprintf(stderr, "mcptop: give --from once ('--from all' reads "
                "every client)\n");
            c->bad_option = true;
            return -1;
        }
        c->from = arg;
        return 1;
    case APP_OPT_TAPS:
        c->taps = arg;
        return 1;
    case 'v':
        c->verbose = true;
        return 1;
    case APP_OPT_LOG:
        c->log_path = arg;
        return 1;
    case APP_OPT_RECORD:
        c->record_path = arg;
        return 1;
    case APP_OPT_RECORD_MAX: {
        char  *end = NULL;
        double mb = strtod(arg, &end);

        if (end == arg || *end != '\0' || !(mb > 0) || mb > 1e6) {
            fprintf(stderr, "mcptop: --record-max takes a size in MB "
                "(more than 0), not '%s'\n", arg);
            c->bad_option = true;
            return -1;
        }
        c->record_max_bytes = (long long)(mb * 1024 * 1024);
        if (c->record_max_bytes < 4096)
            c->record_max_bytes = 4096;
        return 1;
    }
    case APP_OPT_SHARD: {
        char *cause = NULL;

        if (shard_parse(arg, &c->shard, &cause) != 0) {
            fprintf(stderr, "mcptop: --shard %s\n", cause);
            free(cause);
            c->bad_option = true;
            return -1;
        }
        return 1;
    }
    default:
        return 0;
    }
}

/* See app.h. */
int
app_args(struct app_common *c, const char *cmd, int argc, char **argv,
    int first)
{
    char *shown;
    int   i;

    if (c->bad_option)
        return EXIT_USAGE;
    for (i = first; i < argc; i++) {
        if (app_is_url(argv[i]) && c->url == NULL) {
            c->url = argv[i];
            continue;
        }
        shown = url_redact(argv[i]);
        app_usage_error(strncmp(cmd, "mcptop ", 7) == 0 ? cmd + 7 : NULL,
            "unexpected argument '%.60s' (give -c FILE, --from CLIENT, one "
            "http(s):// URL or -- CMD ARGS...)", shown != NULL ? shown :
            "?");
        free(shown);
        return EXIT_USAGE;
    }
    return 0;
}

/* See app.h. */
void
app_usage_options(FILE *out)
{
    fprintf(out,
        "  -c, --config FILE  a fleet config, JSON or YAML in any client's "
        "shape;\n"
        "                     repeat to merge fleets; '-' reads standard "
        "input\n"
        "      --from CLIENT  the configs of an MCP client (files below):\n"
        "                     %s\n"
        "  URL                an http:// or https:// MCP endpoint: a "
        "one-server fleet\n"
        "  -- CMD [ARG]...    a stdio server started from this command "
        "line\n"
        "  -v, --verbose      list the config keys read but not applied, "
        "and more\n"
        "      --taps DIR     every tap socket in DIR (tap-NAME.sock): its "
        "server,\n"
        "                     read from the tap (see mcptop tap)\n"
        "      --log FILE     append a debug log of every exchange\n"
        "      --shard K/N    only the servers whose name hashes to shard K "
        "of N\n"
        "                     (FNV-1a 64 of the name, mod N, is K-1)\n",
        clients_names());
}

/* See app.h. */
void
app_usage_record(FILE *out)
{
    fprintf(out,
        "      --record FILE  record the event stream to FILE (JSON Lines, "
        "redacted),\n"
        "                     for 'mcptop replay' and 'mcptop report'\n"
        "      --record-max MB  rotate FILE at MB (default %d), keeping "
        "one FILE.1\n", APP_RECORD_MAX_MB_DEFAULT);
}

/* See app.h. */
char *
app_state_dir(char **cause)
{
    const char *state = getenv("XDG_STATE_HOME");
    const char *home = getenv("HOME");
    char       *dir, *parent;

    /* The token cache's rule (oauth_store_open). */
    if (state != NULL && state[0] == '/') {
        parent = xstrdup(state);
        dir = str_printf("%s/mcptop", state);
    } else if (home != NULL && home[0] != '\0') {
        parent = str_printf("%s/.local/state", home);
        dir = str_printf("%s/.local/state/mcptop", home);
    } else {
        *cause = xstrdup("no state directory: neither XDG_STATE_HOME nor "
            "HOME is set");
        return NULL;
    }
    if (mkdir(parent, 0700) != 0 && errno != EEXIST) {
        /* $HOME/.local may be missing too. */
        char *local = str_printf("%s/.local", home != NULL ? home : "");

        if (state == NULL || state[0] != '/')
            mkdir(local, 0700);
        free(local);
        mkdir(parent, 0700);
    }
    free(parent);
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        *cause = str_printf("cannot make %s: %s", dir, strerror(errno));
        free(dir);
        return NULL;
    }
    return dir;
}

/* See app.h. */
void
app_usage_sources(FILE *out)
{
    fprintf(out, "Without -c, --from, URL or --, the config is searched "
        "in:\n  %s\n", config_discover_help());
    fprintf(out, "${input:ID} in a config comes from MCPTOP_INPUT_<ID> (ID "
        "upper-cased, other\ncharacters as _); the TUI asks for a missing "
        "one before it starts.\n");
    clients_usage(out);
}

/* Append a printf-style line to l. */
static void app_line(struct app_lines *l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
app_line(struct app_lines *l, const char *fmt, ...)
{
    va_list ap;

    l->v = xrealloc(l->v, (l->n + 1) * sizeof *l->v);
    va_start(ap, fmt);
    l->v[l->n++] = str_vprintf(fmt, ap);
    va_end(ap);
}

/* Move the lines of l to the end of cfg's notes. */
static void
app_lines_to_notes(struct app_lines *l, struct config *cfg)
{
    if (l->n > 0) {
        cfg->notes = xrealloc(cfg->notes,
            (cfg->nnotes + l->n) * sizeof *cfg->notes);
        memcpy(cfg->notes + cfg->nnotes, l->v, l->n * sizeof *l->v);
        cfg->nnotes += l->n;
    }
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

/* Free the lines of l. */
static void
app_lines_free(struct app_lines *l)
{
    size_t i;

    for (i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
}

/*
 * config_input_fn: an input's answer, asked once on the terminal in the
 * TUI; the answers of earlier files are reused.
 */
static const char *
app_input_cb(void *arg, const char *id, const char *description,
    bool password)
{
    struct app_inputs *in = arg;
    char              *q, *what, *shown_id, *answer, *cause = NULL;
    size_t             i;

    for (i = 0; i < in->n; i++) {
        if (strcmp(in->v[i].id, id) == 0)
            return in->v[i].value;
    }
    if (!in->interactive || in->interrupted || in->no_terminal)
        return NULL;
    shown_id = str_sanitized(id);
    what = str_sanitized(description != NULL && description[0] != '\0'
        ? description : id);
    q = str_printf("mcptop: %s (input %s%s): ", what, shown_id,
        password ? ", not echoed" : "");
    answer = prompt_ask(q, password, &in->interrupted, &cause);
    free(q);
    free(what);
    if (answer == NULL) {
        if (!in->interrupted) {
            fprintf(stderr, "mcptop: cannot ask for input %s: %s\n",
                shown_id, cause);
            in->no_terminal = true;
        }
        free(shown_id);
        free(cause);
        return NULL;
    }
    free(shown_id);
    in->v = xrealloc(in->v, (in->n + 1) * sizeof *in->v);
    in->v[in->n].id = xstrdup(id);
    in->v[in->n].value = answer;
    return in->v[in->n++].value;
}

/* Wipe and free the answers. */
static void
app_inputs_free(struct app_inputs *in)
{
    size_t i;

    for (i = 0; i < in->n; i++) {
        free(in->v[i].id);
        explicit_bzero(in->v[i].value, strlen(in->v[i].value));
        free(in->v[i].value);
    }
    free(in->v);
}

/* Add part to *fleet (which takes it). 0, or -1 after printing why. */
static int
app_add(struct config **fleet, struct config *part, bool rename)
{
    char *cause = NULL;

    if (*fleet == NULL) {
        *fleet = part;
        return 0;
    }
    if (config_merge(*fleet, part, rename, &cause) != 0) {
        fprintf(stderr, "mcptop: %s\n", cause);
        free(cause);
        config_free(part);
        return -1;
    }
    return 0;
}

/* Note what became of file f in c->files. */
static void
app_file_seen(struct app_common *c, const struct clients_file *f,
    enum app_file_status status, size_t nservers, const char *error)
{
    struct app_file *a;

    if (!c->keep_files)
        return;
    c->files = xrealloc(c->files, (c->nfiles + 1) * sizeof *c->files);
    a = &c->files[c->nfiles++];
    a->path = xstrdup(f->path);
    a->client = f->client;
    a->source = f->source;
    a->status = status;
    a->nservers = nservers;
    a->error = error != NULL ? xstrdup(error) : NULL;
}

/* See app.h. */
void
app_files_free(struct app_common *c)
{
    for (size_t i = 0; i < c->nfiles; i++) {
        free(c->files[i].path);
        free(c->files[i].error);
    }
    free(c->files);
    c->files = NULL;
    c->nfiles = 0;
}

/* True when some file of every client exists (bare `mcptop` reads them
 * then). */
static bool
app_client_file_exists(void)
{
    struct clients_file *f;
    struct stat          st;
    size_t               n, i;
    bool                 any = false;

    f = clients_files("all", &n);
    for (i = 0; i < n && !any; i++)
        any = stat(f[i].path, &st) == 0 && !S_ISDIR(st.st_mode);
    clients_free(f, n);
    return any;
}

/*
 * Read every file of --from that exists, tagging each server with its
 * source; a server name seen before is renamed NAME@SOURCE, and one that
 * dials what another already does is folded into it. 0, or EXIT_USAGE
 * after printing why (no file at all could be read).
 */
static int
app_load_from(struct app_common *c, const struct config_options *opt,
    struct config **fleet, struct app_lines *notes)
{
    struct config_options  o = *opt;
    struct clients_file   *f;
    struct config         *part;
    struct stat            st;
    char                  *cause = NULL;
    size_t                 n, i, k, found = 0;
    int                    rc = 0;

    o.allow_none = true;
    f = clients_files(c->from, &n);
    for (i = 0; i < n; i++) {
        o.vars = f[i].vars;
        if (stat(f[i].path, &st) != 0 || S_ISDIR(st.st_mode)) {
            app_line(notes, "--from %s: %s is absent", c->from, f[i].path);
            app_file_seen(c, &f[i], APP_FILE_ABSENT, 0, NULL);
            continue;
        }
        if (config_load_file_with(f[i].path, &o, &part, &cause) != 0) {
            fprintf(stderr, "mcptop: warning: --from %s: %s (skipped)\n",
                c->from, cause);
            app_file_seen(c, &f[i], APP_FILE_BROKEN, 0, cause);
            free(cause);
            cause = NULL;
            continue;
        }
        found++;
        app_file_seen(c, &f[i], APP_FILE_READ, part->nservers, NULL);
        app_line(notes, "--from %s: read %s (%zu server%s, source %s)",
            c->from, f[i].path, part->nservers,
            part->nservers == 1 ? "" : "s", f[i].source);
        for (k = 0; k < part->nservers; k++) {
            free(part->servers[k].source);
            part->servers[k].source = xstrdup(f[i].source);
        }
        clients_claude_switches(part);
        if (app_add(fleet, part, true) != 0) {
            rc = EXIT_USAGE;
            break;
        }
    }
    if (rc == 0 && found == 0) {
        fprintf(stderr, "mcptop: --from %s: none of its config files "
            "exists (looked in:", c->from);
        for (i = 0; i < n; i++)
            fprintf(stderr, "%s %s", i > 0 ? "," : "", f[i].path);
        fprintf(stderr, ")\n");
        rc = EXIT_USAGE;
    }
    clients_free(f, n);
    return rc;
}

/* The paths of every client's files, ", "-separated, on out. */
static void
app_print_client_files(FILE *out)
{
    struct clients_file *f;
    size_t               n, i;

    f = clients_files("all", &n);
    for (i = 0; i < n; i++)
        fprintf(out, "%s %s", i > 0 ? "," : "", f[i].path);
    clients_free(f, n);
}

/* Load one -c path ("-": standard input). */
static int
app_load_path(const char *path, const struct config_options *opt,
    struct config **out, char **cause)
{
    if (strcmp(path, "-") == 0)
        return config_load_fd(STDIN_FILENO, "stdin", opt, out, cause);
    return config_load_file_with(path, opt, out, cause);
}

/* Give standard input back to the terminal (after -c - in the TUI). */
static int
app_reopen_tty(void)
{
    int fd = open("/dev/tty", O_RDWR | O_CLOEXEC);

    if (fd < 0 || dup2(fd, STDIN_FILENO) < 0) {
        fprintf(stderr, "mcptop: the config came on standard input and "
            "there is no terminal to take it back from (/dev/tty: %s)\n",
            strerror(errno));
        if (fd >= 0)
            close(fd);
        return EXIT_USAGE;
    }
    if (fd != STDIN_FILENO)
        close(fd);
    return 0;
}

static bool
app_shard_keeps(const struct config_server *decl, void *arg)
{
    return shard_keeps(arg, decl->name);
}

/* Keep sh's share of cfg; say so when that share is empty. */
static void
app_apply_shard(const struct shard *sh, struct config *cfg)
{
    size_t all = cfg->nservers;

    if (sh->n == 0)
        return;
    if (config_retain(cfg, app_shard_keeps, (void *)sh) == 0 && all > 0)
        fprintf(stderr, "mcptop: shard %u/%u holds none of the %zu "
            "server%s\n", sh->k, sh->n, all, all == 1 ? "" : "s");
}

/* See app.h. */
int
app_load_config(struct app_common *c, struct config **out)
{
    struct app_inputs     in = { .interactive = c->interactive };
    struct config_options opt = { .input = app_input_cb, .input_arg = &in };
    struct app_lines      notes = { NULL, 0 };
    struct config        *fleet = NULL;
    struct config        *part;
    char                 *cause = NULL;
    char                 *found = NULL;
    bool                  stdin_used = false;
    size_t                i;
    int                   rc = EXIT_USAGE;

    *out = NULL;
    if (c->url != NULL && app_add(&fleet, config_for_url(c->url), false) != 0)
        goto out;
    for (i = 0; i < c->nconfig; i++) {
        if (strcmp(c->config_paths[i], "-") == 0) {
            if (stdin_used) {
                fprintf(stderr, "mcptop: -c - (standard input) given "
                    "twice\n");
                goto out;
            }
            stdin_used = true;
            if (c->cfg != NULL) {
                /* A reload (SIGHUP): standard input was read to its end
                 * at the start; reading it again would wait on it (a
                 * terminal) with the loop stopped. */
                fprintf(stderr, "mcptop: -c - (standard input) was read "
                    "at the start and cannot be read again\n");
                goto out;
            }
        }
        if (app_load_path(c->config_paths[i], &opt, &part, &cause) != 0) {
            fprintf(stderr, "mcptop: %s\n", cause);
            free(cause);
            goto out;
        }
        if (app_add(&fleet, part, false) != 0)
            goto out;
    }
    if (c->from != NULL && app_load_from(c, &opt, &fleet, &notes) != 0)
        goto out;
    if (c->taps != NULL) {
        part = config_for_taps(c->taps, &cause);
        if (part == NULL) {
            fprintf(stderr, "mcptop: --taps %s\n", cause);
            free(cause);
            goto out;
        }
        if (app_add(&fleet, part, false) != 0)
            goto out;
    }
    if (c->has_command && app_add(&fleet, config_for_command(c->command,
        c->ncommand), false) != 0)
        goto out;
    if (fleet == NULL) {
        found = config_discover();
        if (found == NULL && c->from == NULL && app_client_file_exists()) {
            /* No config of mcptop's own, but the clients' files are
             * there: read them, and say so (the TUI's header, -v). */
            c->from = "all";
            c->from_fallback = true;
            if (app_load_from(c, &opt, &fleet, &notes) != 0)
                goto out;
            app_line(&notes, "no config of mcptop's own (%s): read every "
                "client's files, as --from all does",
                config_discover_help());
            {
                char *o = str_printf("--from all (no config of its own): "
                    "%s", fleet->origin);

                free(fleet->origin);
                fleet->origin = o;
            }
        } else if (found == NULL) {
            fprintf(stderr, "mcptop: no config given and none found "
                "(looked in %s, and for every client's files:",
                config_discover_help());
            app_print_client_files(stderr);
            fprintf(stderr, ")\n"
                "Try 'mcptop check http://127.0.0.1:PORT/mcp', "
                "'mcptop check -c FILE' or 'mcptop check --from CLIENT' "
                "(%s).\n", clients_names());
            goto out;
        }
    }
    if (fleet == NULL) {
        if (config_load_file_with(found, &opt, &fleet, &cause) != 0) {
            fprintf(stderr, "mcptop: %s\n", cause);
            free(cause);
            goto out;
        }
    }
    if (in.interrupted) {
        fprintf(stderr, "mcptop: interrupted\n");
        rc = APP_EXIT_INTERRUPTED;
        goto out;
    }
    if (stdin_used && c->interactive && app_reopen_tty() != 0)
        goto out;
    app_lines_to_notes(&notes, fleet);
    app_apply_shard(&c->shard, fleet);
    for (i = 0; i < fleet->nwarnings; i++)
        fprintf(stderr, "mcptop: warning: %s\n", fleet->warnings[i]);
    for (i = 0; c->verbose && i < fleet->nnotes; i++)
        fprintf(stderr, "mcptop: note: %s\n", fleet->notes[i]);
    for (i = 0; c->verbose && i < fleet->nmerged; i++) {
        char *line = str_sanitized(fleet->merged[i]);

        fprintf(stderr, "mcptop: note: merged: %s\n", line);
        free(line);
    }
    c->cfg = fleet;
    *out = fleet;
    fleet = NULL;
    rc = 0;

out:
    config_free(fleet);
    app_lines_free(&notes);
    app_inputs_free(&in);
    free(found);
    return rc;
}

/* One line of the log, stamped like the engine's. */
static void app_log(FILE *log, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
app_log(FILE *log, const char *fmt, ...)
{
    va_list ap;
    char    ts[40];

    clock_format_iso(clock_wall_ms(), ts, sizeof(ts));
    fprintf(log, "%s mcptop: ", ts);
    va_start(ap, fmt);
    vfprintf(log, fmt, ap);
    va_end(ap);
    fputc('\n', log);
}

/* Write the loaded fleet to the log: each server as shown (URLs
 * redacted, arguments as written), then the warnings and notes. */
static void
app_log_config(FILE *log, const struct config *cfg)
{
    size_t i, k;

    app_log(log, "config %s: %zu server%s", cfg->origin, cfg->nservers,
        cfg->nservers == 1 ? "" : "s");
    for (i = 0; i < cfg->nservers; i++) {
        const struct config_server *s = &cfg->servers[i];
        char                       *name = str_sanitized(s->name);
        char                       *target;

        if (s->transport == CONFIG_HTTP) {
            target = str_sanitized(s->url_shown != NULL ? s->url_shown : "");
        } else {
            const char *cmd = s->command_shown != NULL ? s->command_shown
                : s->command != NULL ? s->command : "";
            size_t      len = strlen(cmd) + 1, at;
            char       *joined;

            for (k = 0; s->args_shown != NULL && k < s->nargs; k++)
                len += strlen(s->args_shown[k]) + 1;
            joined = xmalloc(len);
            at = strlen(cmd);
            memcpy(joined, cmd, at);
            for (k = 0; s->args_shown != NULL && k < s->nargs; k++) {
                joined[at++] = ' ';
                memcpy(joined + at, s->args_shown[k],
                    strlen(s->args_shown[k]));
                at += strlen(s->args_shown[k]);
            }
            joined[at] = '\0';
            target = str_sanitized(joined);
            free(joined);
        }
        app_log(log, "config server %s: %s %s%s%s%s%s", name,
            s->transport != CONFIG_HTTP ? "stdio" : s->http_sse ? "sse" :
            "http", target,
            s->source != NULL ? " (from " : "",
            s->source != NULL ? s->source : "",
            s->source != NULL ? ")" : "",
            s->disabled ? " (disabled)" : "");
        if (s->invalid != NULL)
            app_log(log, "config server %s: invalid: %s", name, s->invalid);
        for (k = 0; k < s->nsources; k++)
            app_log(log, "config server %s: source %s %s", name,
                s->sources[k].client != NULL ? s->sources[k].client : "-",
                s->sources[k].origin);
        free(name);
        free(target);
    }
    for (i = 0; i < cfg->nwarnings; i++)
        app_log(log, "config warning: %s", cfg->warnings[i]);
    for (i = 0; i < cfg->nnotes; i++)
        app_log(log, "config note: %s", cfg->notes[i]);
    fflush(log);
}

/* See app.h. */
int
app_open_log(struct app_common *c)
{
    if (c->log_path == NULL)
        return 0;
    c->log = fopen(c->log_path, "a");
    if (c->log == NULL) {
        fprintf(stderr, "mcptop: cannot open log %s: %s\n", c->log_path,
            strerror(errno));
        return EXIT_USAGE;
    }
    if (c->cfg != NULL)
        app_log_config(c->log, c->cfg);
    return 0;
}

/* See app.h. */
void
app_close_log(struct app_common *c)
{
    if (c->log != NULL)
        fclose(c->log);
    c->log = NULL;
}
