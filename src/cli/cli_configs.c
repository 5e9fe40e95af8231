/*
 * `mcptop configs`: what the fleet would be, dialing nothing. Every file
 * --from looked at (read, absent, broken), every server with its client,
 * file, transport and target (redacted, arguments as written), whether
 * it would be dialed (or why it is disabled or invalid), the variables
 * expanded in it (names only), the keys read and not applied, the entries
 * skipped and the duplicates merged; as a table or as one JSON document.
 *
 * No value a variable expanded to, no header or env value, is ever
 * printed: names only, and targets as written.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli/cli.h"
#include "util/str.h"
#include "util/xmalloc.h"

struct configs {
    struct app_common common;
    bool              json;
};

const struct cli_entry cli_configs_entry = {
    .name = "configs",
    .usage =
        APP_USAGE " [--json]\n"
        "                    " APP_USAGE_END,
    .summary = "every server the sources give, dialing nothing",
    .exec = cli_configs,
};

static void
configs_usage(FILE *out)
{
    cli_usage(out, &cli_configs_entry);
    fprintf(out,
        "\n"
        "Show the fleet the sources give, dialing nothing: each file --from\n"
        "looked at, each server with its client, file, transport and target\n"
        "(redacted; arguments as written), whether it would be dialed or why\n"
        "not (disabled by its client, invalid), the variables expanded in it\n"
        "(names only), the keys read and not applied, the entries skipped\n"
        "and the duplicates merged into one server.\n"
        "\n"
        "      --json         one JSON document on stdout\n"
        "  -h, --help         this help\n");
    app_usage_options(out);
    fprintf(out,
        "\n"
        "Exit status: 0 the sources were read, 2 usage or config error.\n");
    app_usage_sources(out);
}

/* The target as shown: the URL redacted, the command and arguments as
 * written (caller frees; sanitized). */
static char *
configs_target(const struct config_server *s)
{
    const char *cmd;
    char       *t, *joined;
    size_t      n, i, at;

    if (s->transport == CONFIG_HTTP)
        return str_sanitized(s->url_shown != NULL ? s->url_shown : "");
    if (s->tap != NULL && s->command == NULL)
        return str_sanitized(s->tap);       /* {"tap": PATH} */
    cmd = s->command_shown != NULL ? s->command_shown : s->command != NULL
        ? s->command : "";
    n = strlen(cmd) + 1;
    for (i = 0; s->args_shown != NULL && i < s->nargs; i++)
        n += strlen(s->args_shown[i]) + 1;
    joined = xmalloc(n);
    at = strlen(cmd);
    memcpy(joined, cmd, at);
    for (i = 0; s->args_shown != NULL && i < s->nargs; i++) {
        joined[at++] = ' ';
        memcpy(joined + at, s->args_shown[i], strlen(s->args_shown[i]));
        at += strlen(s->args_shown[i]);
    }
    joined[at] = '\0';
    t = str_sanitized(joined);
    free(joined);
    return t;
}

/* "ready", "disabled" or "invalid", and why (borrowed, or NULL). */
static const char *
configs_state(const struct config_server *s, const char **why)
{
    if (s->invalid != NULL) {
        *why = s->invalid;
        return "invalid";
    }
    if (s->disabled) {
        *why = s->disabled_why != NULL ? s->disabled_why
            : "disabled in the config";
        return "disabled";
    }
    *why = NULL;
    return "ready";
}

static const char *
configs_transport(const struct config_server *s)
{
    return s->tap != NULL ? "tap" : s->transport == CONFIG_STDIO ? "stdio" :
        s->http_sse ? "sse" : "http";
}

static const char *const configs_file_status[] = {
    [APP_FILE_READ] = "read",
    [APP_FILE_ABSENT] = "absent",
    [APP_FILE_BROKEN] = "skipped",
};

/* An array of the n strings of v, sanitized, as o's key. */
static void
configs_json_strings(cJSON *o, const char *key, char *const *v, size_t n)
{
    cJSON *a = cJSON_AddArrayToObject(o, key);

    for (size_t i = 0; i < n; i++) {
        char *t = str_sanitized(v[i]);

        cJSON_AddItemToArray(a, cJSON_CreateString(t));
        free(t);
    }
}

/* Add string value (sanitized) to o as key. */
static void
configs_json_str(cJSON *o, const char *key, const char *value)
{
    char *t;

    if (value == NULL) {
        cJSON_AddNullToObject(o, key);
        return;
    }
    t = str_sanitized(value);
    cJSON_AddStringToObject(o, key, t);
    free(t);
}

/* The whole document. */
static int
configs_json(const struct configs *c, const struct config *cfg)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *a, *e;
    char  *text;
    size_t i, k;

    cJSON_AddBoolToObject(root, "from_fallback", c->common.from_fallback);
    a = cJSON_AddArrayToObject(root, "files");
    for (i = 0; i < c->common.nfiles; i++) {
        const struct app_file *f = &c->common.files[i];

        e = cJSON_CreateObject();
        configs_json_str(e, "file", f->path);
        cJSON_AddStringToObject(e, "client", f->client);
        cJSON_AddStringToObject(e, "source", f->source);
        cJSON_AddStringToObject(e, "status", configs_file_status[f->status]);
        if (f->status == APP_FILE_READ)
            cJSON_AddNumberToObject(e, "servers", (double)f->nservers);
        if (f->error != NULL)
            configs_json_str(e, "error", f->error);
        cJSON_AddItemToArray(a, e);
    }
    a = cJSON_AddArrayToObject(root, "servers");
    for (i = 0; i < cfg->nservers; i++) {
        const struct config_server *s = &cfg->servers[i];
        const char                 *why;
        char                       *target = configs_target(s);
        cJSON                      *src;

        e = cJSON_CreateObject();
        configs_json_str(e, "name", s->name);
        configs_json_str(e, "client", s->source);
        configs_json_str(e, "file", s->origin);
        cJSON_AddNullToObject(e, "line");
        cJSON_AddStringToObject(e, "transport", configs_transport(s));
        cJSON_AddStringToObject(e, "target", target);
        free(target);
        cJSON_AddStringToObject(e, "state", configs_state(s, &why));
        configs_json_str(e, "reason", why);
        configs_json_strings(e, "variables", s->vars, s->nvars);
        configs_json_strings(e, "not_applied", s->unapplied, s->nunapplied);
        src = cJSON_AddArrayToObject(e, "sources");
        for (k = 0; k < s->nsources; k++) {
            cJSON *o = cJSON_CreateObject();

            configs_json_str(o, "client", s->sources[k].client);
            configs_json_str(o, "file", s->sources[k].origin);
            cJSON_AddItemToArray(src, o);
        }
        cJSON_AddItemToArray(a, e);
    }
    a = cJSON_AddArrayToObject(root, "skipped");
    for (i = 0; i < cfg->nskipped; i++) {
        e = cJSON_CreateObject();
        configs_json_str(e, "name", cfg->skipped[i].name);
        configs_json_str(e, "file", cfg->skipped[i].origin);
        configs_json_str(e, "why", cfg->skipped[i].why);
        cJSON_AddItemToArray(a, e);
    }
    configs_json_strings(root, "merged", cfg->merged, cfg->nmerged);
    configs_json_strings(root, "warnings", cfg->warnings, cfg->nwarnings);
    configs_json_strings(root, "notes", cfg->notes, cfg->nnotes);
    text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (text == NULL)
        return EXIT_USAGE;
    printf("%s\n", text);
    free(text);
    return 0;
}

/* The table, then what was skipped, merged and warned about. */
static int
configs_text(const struct configs *c, const struct config *cfg)
{
    size_t i, k;

    if (c->common.from_fallback)
        printf("No config of mcptop's own: every client's files were read "
            "(--from all).\n\n");
    for (i = 0; i < c->common.nfiles; i++) {
        const struct app_file *f = &c->common.files[i];
        char                  *path = str_sanitized(f->path);

        if (f->status == APP_FILE_READ)
            printf("%-20s %s: %zu server%s\n", f->source, path, f->nservers,
                f->nservers == 1 ? "" : "s");
        else if (f->status == APP_FILE_BROKEN) {
            char *error = str_sanitized(f->error);

            printf("%-20s %s: skipped (%s)\n", f->source, path, error);
            free(error);
        }
        free(path);
    }
    if (c->common.nfiles > 0)
        printf("\n");
    for (i = 0; i < cfg->nservers; i++) {
        const struct config_server *s = &cfg->servers[i];
        const char                 *why;
        const char                 *state = configs_state(s, &why);
        char                       *name = str_sanitized(s->name);
        char                       *target = configs_target(s);
        char                       *origin = str_sanitized(s->origin);
        char                       *reason = why != NULL
            ? str_sanitized(why) : NULL;

        printf("%s  %s %s  [%s]\n", name, configs_transport(s), target,
            state);
        printf("    %s %s\n", s->source != NULL ? s->source : "file", origin);
        for (k = 1; k < s->nsources; k++) {
            char *o = str_sanitized(s->sources[k].origin);

            printf("    also %s %s (the same target)\n",
                s->sources[k].client != NULL ? s->sources[k].client : "-", o);
            free(o);
        }
        if (reason != NULL)
            printf("    %s: %s\n", state, reason);
        if (s->nvars > 0) {
            printf("    variables:");
            for (k = 0; k < s->nvars; k++) {
                char *v = str_sanitized(s->vars[k]);

                printf(" %s", v);
                free(v);
            }
            printf("\n");
        }
        if (s->nunapplied > 0) {
            printf("    read, not applied:");
            for (k = 0; k < s->nunapplied; k++) {
                char *v = str_sanitized(s->unapplied[k]);

                printf(" %s", v);
                free(v);
            }
            printf("\n");
        }
        free(name);
        free(target);
        free(origin);
        free(reason);
    }
    for (i = 0; i < cfg->nskipped; i++) {
        char *n = str_sanitized(cfg->skipped[i].name);
        char *o = str_sanitized(cfg->skipped[i].origin);

        printf("skipped %s (%s): %s\n", n, o, cfg->skipped[i].why);
        free(n);
        free(o);
    }
    for (i = 0; i < cfg->nmerged; i++) {
        char *m = str_sanitized(cfg->merged[i]);

        printf("merged %s\n", m);
        free(m);
    }
    printf("%zu server%s\n", cfg->nservers, cfg->nservers == 1 ? "" : "s");
    return 0;
}

int
cli_configs(int argc, char **argv)
{
    static const struct option longopts[] = {
        APP_LONGOPTS,
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct configs c = { .common.keep_files = true };
    struct config *cfg = NULL;
    char           shortopts[32];
    int            ch, rc;

    argc = app_split_command(&c.common, argc, argv);
    snprintf(shortopts, sizeof(shortopts), ":%sh", APP_SHORTOPTS);
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        if (app_option(&c.common, ch, optarg))
            continue;
        if (ch == 'h') {
            configs_usage(stdout);
            return 0;
        }
        if (ch == 'j') {
            c.json = true;
            continue;
        }
        return app_option_error("configs", ch, argv, longopts);
    }
    rc = app_args(&c.common, "mcptop configs", argc, argv, optind);
    if (rc != 0)
        return rc;
    rc = app_load_config(&c.common, &cfg);
    if (rc == 0)
        rc = c.json ? configs_json(&c, cfg) : configs_text(&c, cfg);
    config_free(cfg);
    app_files_free(&c.common);
    return rc;
}
