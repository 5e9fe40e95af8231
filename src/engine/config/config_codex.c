/*
 * Codex's keys that name environment variables instead of holding values
 * (config.toml's [mcp_servers.NAME]): bearer_token_env_var (the bearer
 * token's variable, sent as "Authorization: Bearer ..."),
 * env_http_headers (a header's value from a variable), env_vars (the
 * variables passed to a stdio server from Codex's environment) and
 * startup_timeout_sec / _ms (how long a server may take to start: the
 * open deadline here).
 *
 * A variable named for a header that is not set makes the entry invalid,
 * naming the variable and the file (Codex would send no credential; a
 * monitor must not pretend to). What a variable holds is a secret: it is
 * never quoted, only its name is kept (config_var_used).
 */
#include "config/config_int.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/str.h"
#include "util/xmalloc.h"

/* The value of the variable that key names (v), for header hdr; the name
 * is checked and the value must be set. NULL with *why. */
static const char *
config_codex_var(struct config_ctx *ctx, const cJSON *v, const char *key,
    char **why)
{
    char        shown[CONFIG_SHOWN_SIZE];
    const char *value;

    if (!cJSON_IsString(v) || v->valuestring[0] == '\0') {
        *why = str_printf("\"%s\" must name an environment variable", key);
        return NULL;
    }
    value = getenv(v->valuestring);
    if (value == NULL) {
        *why = str_printf("\"%s\": variable \"%s\" is not set (%s names "
            "it: set it in mcptop's environment)", key,
            config_shown(shown, v->valuestring), ctx->cfg->origin);
        return NULL;
    }
    config_var_used(ctx, v->valuestring, strlen(v->valuestring));
    return value;
}

/* Append header name: value (value is built by the caller and taken). */
static void
config_codex_header(struct config_server *s, const char *name, char *value)
{
    s->headers = xrealloc(s->headers, (s->nheaders + 1) * sizeof *s->headers);
    s->headers[s->nheaders].name = xstrdup(name);
    s->headers[s->nheaders].value = value;
    s->nheaders++;
}

/* See config_int.h. */
int
config_entry_codex(struct config_ctx *ctx, struct config_server *s,
    const struct config_entry *st, char **why)
{
    char         shown[CONFIG_SHOWN_SIZE];
    const cJSON *e;
    const char  *value;
    double       ms;

    if (st->bearer_env != NULL) {
        value = config_codex_var(ctx, st->bearer_env, st->bearer_env->string,
            why);
        if (value == NULL)
            return -1;
        if (config_header_value_bad(value)) {
            *why = str_printf("\"%s\": the variable holds a control "
                "character", st->bearer_env->string);
            return -1;
        }
        config_codex_header(s, "Authorization", str_printf("Bearer %s",
            value));
    }
    if (st->env_headers != NULL) {
        if (!cJSON_IsObject(st->env_headers)) {
            *why = str_printf("\"%s\" is %s, expected a table of header "
                "names and variable names", st->env_headers->string,
                config_kind(st->env_headers));
            return -1;
        }
        cJSON_ArrayForEach(e, st->env_headers) {
            config_shown(shown, e->string);
            if (!config_header_name_ok(e->string)) {
                *why = str_printf("header \"%s\": not a valid name", shown);
                return -1;
            }
            value = config_codex_var(ctx, e, st->env_headers->string, why);
            if (value == NULL)
                return -1;
            if (config_header_value_bad(value)) {
                *why = str_printf("header \"%s\": the variable holds a "
                    "control character", shown);
                return -1;
            }
            config_codex_header(s, e->string, xstrdup(value));
        }
    }
    if (st->env_vars != NULL && cJSON_IsArray(st->env_vars)) {
        /* The child inherits mcptop's environment: each one named and
         * set reaches it, as under Codex. */
        cJSON_ArrayForEach(e, st->env_vars) {
            if (cJSON_IsString(e) && getenv(e->valuestring) != NULL)
                config_var_used(ctx, e->valuestring, strlen(e->valuestring));
        }
    }
    if (st->startup != NULL) {
        const cJSON *v = st->startup;
        bool         sec = strcmp(v->string, "startup_timeout_sec") == 0;

        ms = cJSON_IsNumber(v) ? round(sec ? v->valuedouble * 1000.0
            : v->valuedouble) : 0;
        if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || ms < 1
            || ms > CONFIG_MAX_INT) {
            *why = str_printf("\"%s\" must be a positive number", v->string);
            return -1;
        }
        s->open_deadline_ms = (long)ms;
        config_note(ctx, s->name, "\"%s\" is read as the open deadline "
            "(how long the first exchange may take)", v->string);
    }
    return 0;
}
