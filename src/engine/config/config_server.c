/*
 * One server entry: its transport (from "type", a URL or a command), its
 * switch ("disabled", "enabled"), a look over its keys (unknown ones,
 * the other transport's, repeated ones), then each key read into a
 * struct config_server over the fleet's defaults: the URL, headers,
 * command, arguments, environment and envFile, and mcptop's own keys
 * (timings, tags, era, TLS), which the fleet object uses too.
 *
 * A broken entry gets ->invalid and keeps its name; it never stops the
 * others. Header and env values, arguments as expanded and what an
 * envFile holds are secrets: they are wiped when freed, and no message
 * quotes them (arguments are shown only as written, in args_shown). A URL
 * is expanded in the file's syntax and shown only as written, redacted.
 */
#include "config/config_int.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config/envfile.h"
#include "engine/url.h"
#include "util/str.h"
#include "util/xmalloc.h"

#define CONFIG_HEADER_MAX       8192    /* one header, name and value */

/*
 * Check that url is http(s)://host[:port]... with no whitespace or
 * control characters, and find its host and port. 0, or -1 with *why.
 */
int
config_url_parse(const char *url, struct config_url *u, char **why)
{
    char        shown[CONFIG_SHOWN_SIZE];
    const char *p;
    const char *auth;
    size_t      authlen;
    size_t      i;
    char       *scheme;

    memset(u, 0, sizeof *u);
    if (*url == '\0') {
        *why = str_printf("malformed url (empty)");
        return -1;
    }
    for (p = url; *p != '\0'; p++) {
        if ((unsigned char)*p <= 0x20 || *p == 0x7f) {
            *why = str_printf("malformed url (whitespace or control "
                "character)");
            return -1;
        }
    }
    p = strstr(url, "://");
    if (p == NULL) {
        *why = str_printf("unsupported scheme (expected http:// or "
            "https://)");
        return -1;
    }
    if ((size_t)(p - url) == 5 && strncasecmp(url, "https", 5) == 0) {
        u->https = true;
    } else if ((size_t)(p - url) != 4 || strncasecmp(url, "http", 4) != 0) {
        scheme = str_ndup(url, (size_t)(p - url));
        /* Quote only what can be a scheme: text before "://" may also
         * hold a mistyped userinfo. */
        if (scheme[0] != '\0' && strspn(scheme, "abcdefghijklmnopqrstuvwxyz"
            "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-") == strlen(scheme))
            *why = str_printf("unsupported scheme \"%s\" (expected http:// "
                "or https://)", config_shown(shown, scheme));
        else
            *why = str_printf("unsupported scheme (expected http:// or "
                "https://)");
        free(scheme);
        return -1;
    }
    auth = p + 3;
    authlen = strcspn(auth, "/?#");
    for (i = authlen; i > 0; i--) {
        if (auth[i - 1] == '@')
            break;
    }
    u->host = auth + i;
    authlen -= i;
    if (authlen > 0 && u->host[0] == '[') {
        p = memchr(u->host, ']', authlen);
        if (p == NULL) {
            *why = str_printf("malformed url (unclosed '[')");
            return -1;
        }
        u->hostlen = (size_t)(p - u->host) + 1;
    } else {
        p = memchr(u->host, ':', authlen);
        u->hostlen = p != NULL ? (size_t)(p - u->host) : authlen;
    }
    if (u->hostlen == 0 || (u->hostlen == 2 && u->host[0] == '[')) {
        *why = str_printf("malformed url (empty host)");
        return -1;
    }
    if (u->hostlen < authlen) {
        if (u->host[u->hostlen] != ':') {
            *why = str_printf("malformed url (bad host)");
            return -1;
        }
        u->port = u->host + u->hostlen + 1;
        u->portlen = authlen - u->hostlen - 1;
        for (i = 0; i < u->portlen; i++) {
            if (u->port[i] < '0' || u->port[i] > '9' || i >= 5) {
                *why = str_printf("malformed url (bad port)");
                return -1;
            }
        }
        if (u->portlen > 0
            && (atoi(u->port) < 1 || atoi(u->port) > 65535)) {
            *why = str_printf("malformed url (bad port)");
            return -1;
        }
        if (u->portlen == 0)
            u->port = NULL;
    }
    return 0;
}

/* True when v says something: not null, false, 0, "" or empty. */
bool
config_meaningful(const cJSON *v)
{
    if (v == NULL || cJSON_IsNull(v) || cJSON_IsFalse(v))
        return false;
    if (cJSON_IsString(v))
        return v->valuestring[0] != '\0';
    if (cJSON_IsNumber(v))
        return v->valuedouble != 0;
    if (cJSON_IsArray(v) || cJSON_IsObject(v))
        return v->child != NULL;
    return true;
}

/* Read a positive integer (up to INT_MAX) for key. 0, or -1 with *why. */
static int
config_int(const cJSON *v, long *out, char **why)
{
    double d = v->valuedouble;

    if (!cJSON_IsNumber(v) || !isfinite(d) || d < 1 || d != floor(d)
        || d > CONFIG_MAX_INT) {
        *why = str_printf("\"%s\" must be an integer from 1 to %d",
            v->string, CONFIG_MAX_INT);
        return -1;
    }
    *out = (long)d;
    return 0;
}

/* Free an array of n strings that may hold secrets. */
static void
config_strings_free(char **a, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        str_wipe_free(a[i]);
    free(a);
}

/*
 * Read v (key v->string) from element `from` on as an array of strings,
 * expanding ${VAR} (and, with ctx, ${input:ID} and the predefined
 * variables) when expand is set and refusing empty ones when nonempty is.
 * 0 with *out and *n set (caller frees), or -1 with *why (indexes as in
 * the file).
 */
int
config_strings(struct config_ctx *ctx, const cJSON *v, bool expand,
    bool nonempty, size_t from, char ***out, size_t *n, char **why)
{
    const cJSON *e;
    char       **a;
    char        *x;
    char        *c;
    size_t       i = 0;
    size_t       idx = 0;

    if (!cJSON_IsArray(v)) {
        *why = str_printf("\"%s\" is %s, expected an array of strings",
            v->string, config_kind(v));
        return -1;
    }
    a = xcalloc((size_t)cJSON_GetArraySize(v) + 1, sizeof *a);
    cJSON_ArrayForEach(e, v) {
        if (idx++ < from)
            continue;
        if (!cJSON_IsString(e)) {
            *why = str_printf("\"%s\"[%zu] is %s, expected a string",
                v->string, idx - 1, config_kind(e));
            goto fail;
        }
        if (nonempty && e->valuestring[0] == '\0') {
            *why = str_printf("\"%s\"[%zu] is empty", v->string, idx - 1);
            goto fail;
        }
        if (expand) {
            x = config_expand_ctx(ctx, e->valuestring, &c);
            if (x == NULL) {
                *why = str_printf("\"%s\"[%zu]: %s", v->string, idx - 1,
                    c);
                free(c);
                goto fail;
            }
        } else {
            x = xstrdup(e->valuestring);
        }
        a[i++] = x;
    }
    *out = a;
    *n = i;
    return 0;

fail:
    config_strings_free(a, i);
    return -1;
}

/* Expand text, the value of key, into *out (caller wipes and frees).
 * 0, or -1 with *why naming key (never the value). */
int
config_expand_key(struct config_ctx *ctx, const char *key, const char *text,
    char **out, char **why)
{
    char *c = NULL;

    *out = config_expand_ctx(ctx, text, &c);
    if (*out == NULL) {
        *why = str_printf("\"%s\": %s", key, c);
        free(c);
        return -1;
    }
    return 0;
}

/* Free n name=value pairs, wiping the values. */
static void
config_kvs_free(struct str_kv *kv, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        free(kv[i].name);
        str_wipe_free(kv[i].value);
    }
    free(kv);
}

/* True when name is an HTTP header field name (an RFC 9110 token). */
bool
config_header_name_ok(const char *name)
{
    const char *p;

    if (*name == '\0')
        return false;
    for (p = name; *p != '\0'; p++) {
        if (((unsigned char)*p <= 0x20 || *p == 0x7f
            || (unsigned char)*p >= 0x80)
            || strchr("\"(),/:;<=>?@[\\]{}", *p) != NULL)
            return false;
    }
    return true;
}

/* True when an (expanded) header value holds a control character. */
bool
config_header_value_bad(const char *value)
{
    const unsigned char *p;

    for (p = (const unsigned char *)value; *p != '\0'; p++) {
        if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
            return true;
    }
    return false;
}

/*
 * Read v ("headers", "env" or an alias) as an object of strings,
 * expanding each value (with ctx as in config_strings). 0 with *out and
 * *n set (caller frees), or -1 with *why, which names the entry but never
 * its value.
 */
int
config_kvs(struct config_ctx *ctx, const cJSON *v, bool headers,
    struct str_kv **out, size_t *n, char **why)
{
    const char       *what = headers ? "header" : "env";
    char              shown[CONFIG_SHOWN_SIZE];
    const cJSON      *e;
    struct str_kv *kv;
    char             *x;
    char             *c;
    size_t            i = 0;

    if (!cJSON_IsObject(v)) {
        *why = str_printf("\"%s\" is %s, expected an object of strings",
            v->string, config_kind(v));
        return -1;
    }
    kv = xcalloc((size_t)cJSON_GetArraySize(v), sizeof *kv);
    cJSON_ArrayForEach(e, v) {
        config_shown(shown, e->string);
        if (!cJSON_IsString(e)) {
            *why = str_printf("%s \"%s\" is %s, expected a string", what,
                shown, config_kind(e));
            goto fail;
        }
        if (headers ? !config_header_name_ok(e->string)
            : (e->string[0] == '\0' || strchr(e->string, '=') != NULL)) {
            *why = str_printf("%s \"%s\": not a valid name", what, shown);
            goto fail;
        }
        x = config_expand_ctx(ctx, e->valuestring, &c);
        if (x == NULL) {
            *why = str_printf("%s \"%s\": %s", what, shown, c);
            free(c);
            goto fail;
        }
        if (headers && config_header_value_bad(x)) {
            str_wipe_free(x);
            *why = str_printf("%s \"%s\": value contains a control "
                "character", what, shown);
            goto fail;
        }
        if (headers && strlen(e->string) + strlen(x) > CONFIG_HEADER_MAX) {
            /* It would go on every request, and libcurl refuses it. */
            size_t len = strlen(e->string) + strlen(x);

            str_wipe_free(x);
            *why = str_printf("%s \"%s\" is %zu bytes; the limit is %d "
                "for a header", what, shown, len, CONFIG_HEADER_MAX);
            goto fail;
        }
        kv[i].name = xstrdup(e->string);
        kv[i].value = x;
        i++;
    }
    *out = kv;
    *n = i;
    return 0;

fail:
    config_kvs_free(kv, i);
    return -1;
}

/*
 * Apply one of mcptop's own keys (v->string) to s. 1 when applied, 0 when
 * the key is not one of them, -1 with *why (naming the key) when its value
 * has the wrong type or range.
 */
int
config_opt(struct config_server *s, const cJSON *v, char **why)
{
    const char *key = v->string;
    char      **tags;
    size_t      ntags;
    double      ms;
    long        n;

    if (strcmp(key, "ping_interval_s") == 0) {
        ms = round(v->valuedouble * 1000.0);
        if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)
            || v->valuedouble <= 0 || ms < 1 || ms > CONFIG_MAX_INT) {
            *why = str_printf("\"%s\" must be a number of seconds > 0 "
                "(at most %d ms)", key, CONFIG_MAX_INT);
            return -1;
        }
        s->ping_interval_ms = (long)ms;
    } else if (strcmp(key, "timeout_ms") == 0) {
        if (config_int(v, &s->timeout_ms, why) != 0)
            return -1;
    } else if (strcmp(key, "open_deadline_ms") == 0) {
        if (config_int(v, &s->open_deadline_ms, why) != 0)
            return -1;
    } else if (strcmp(key, "teardown_ms") == 0) {
        if (config_int(v, &s->teardown_ms, why) != 0)
            return -1;
    } else if (strcmp(key, "crash_window_ms") == 0) {
        if (config_int(v, &s->crash_window_ms, why) != 0)
            return -1;
    } else if (strcmp(key, "stream_idle_ms") == 0) {
        if (config_int(v, &s->stream_idle_ms, why) != 0)
            return -1;
    } else if (strcmp(key, "max_message_bytes") == 0) {
        if (config_int(v, &n, why) != 0)
            return -1;
        s->max_message_bytes = (size_t)n;
    } else if (strcmp(key, "tags") == 0) {
        if (config_strings(NULL, v, false, true, 0, &tags, &ntags, why) != 0)
            return -1;
        config_strings_free(s->tags, s->ntags);
        s->tags = tags;
        s->ntags = ntags;
    } else if (strcmp(key, "era") == 0) {
        if (cJSON_IsString(v) && strcmp(v->valuestring, "auto") == 0) {
            s->era = CONFIG_ERA_AUTO;
        } else if (cJSON_IsString(v)
            && strcmp(v->valuestring, "modern") == 0) {
            s->era = CONFIG_ERA_MODERN;
        } else if (cJSON_IsString(v)
            && strcmp(v->valuestring, "legacy") == 0) {
            s->era = CONFIG_ERA_LEGACY;
        } else {
            *why = str_printf("\"%s\" must be \"auto\", \"modern\" or "
                "\"legacy\"", key);
            return -1;
        }
    } else if (strcmp(key, "ca_file") == 0) {
        if (!cJSON_IsString(v) || v->valuestring[0] == '\0') {
            *why = str_printf("\"%s\" must be a non-empty string", key);
            return -1;
        }
        free(s->ca_file);
        s->ca_file = xstrdup(v->valuestring);
    } else if (strcmp(key, "tls_insecure") == 0) {
        if (!cJSON_IsBool(v)) {
            *why = str_printf("\"%s\" is %s, expected true or false", key,
                config_kind(v));
            return -1;
        }
        s->tls_insecure = cJSON_IsTrue(v);
    } else {
        return 0;
    }
    return 1;
}

/* Set s to the built-in defaults. */
void
config_server_defaults(struct config_server *s)
{
    memset(s, 0, sizeof *s);
    s->transport = CONFIG_HTTP;
    s->ping_interval_ms = CONFIG_DEFAULT_PING_INTERVAL_MS;
    s->timeout_ms = CONFIG_DEFAULT_TIMEOUT_MS;
    s->open_deadline_ms = CONFIG_DEFAULT_OPEN_DEADLINE_MS;
    s->teardown_ms = CONFIG_DEFAULT_TEARDOWN_MS;
    s->max_message_bytes = CONFIG_DEFAULT_MAX_MESSAGE_BYTES;
    s->era = CONFIG_ERA_AUTO;
}

/* Give s (already defaulted) a copy of the fleet's mcptop keys. */
static void
config_server_inherit(struct config_server *s,
    const struct config_server *fleet)
{
    size_t i;

    s->ping_interval_ms = fleet->ping_interval_ms;
    s->timeout_ms = fleet->timeout_ms;
    s->open_deadline_ms = fleet->open_deadline_ms;
    s->teardown_ms = fleet->teardown_ms;
    s->crash_window_ms = fleet->crash_window_ms;
    s->stream_idle_ms = fleet->stream_idle_ms;
    s->max_message_bytes = fleet->max_message_bytes;
    s->era = fleet->era;
    s->tls_insecure = fleet->tls_insecure;
    s->ca_file = str_dup(fleet->ca_file);
    if (fleet->ntags > 0) {
        s->tags = xcalloc(fleet->ntags, sizeof *s->tags);
        for (i = 0; i < fleet->ntags; i++)
            s->tags[i] = xstrdup(fleet->tags[i]);
        s->ntags = fleet->ntags;
    }
}

/* Free everything s owns (not s itself). */
void
config_server_done(struct config_server *s)
{
    free(s->name);
    free(s->url);
    free(s->url_shown);
    config_kvs_free(s->headers, s->nheaders);
    free(s->ca_file);
    str_wipe_free(s->command);
    free(s->command_shown);
    config_strings_free(s->args, s->nargs);
    config_strings_free(s->args_shown, s->args_shown != NULL ? s->nargs : 0);
    config_kvs_free(s->env, s->nenv);
    free(s->cwd);
    free(s->tap);
    config_strings_free(s->tags, s->ntags);
    free(s->source);
    free(s->origin);
    free(s->disabled_why);
    config_strings_free(s->vars, s->nvars);
    config_strings_free(s->unapplied, s->nunapplied);
    for (size_t i = 0; i < s->nsources; i++) {
        free(s->sources[i].client);
        free(s->sources[i].origin);
    }
    free(s->sources);
    config_oauth_free(s->oauth);
    config_probe_free(s->probe);
    free(s->invalid);
}

/* A copy of n strings (NULL when n is 0). */
static char **
config_strings_copy(char *const *a, size_t n)
{
    char **out;

    if (a == NULL || n == 0)
        return NULL;
    out = xcalloc(n + 1, sizeof *out);
    for (size_t i = 0; i < n; i++)
        out[i] = str_dup(a[i]);
    return out;
}

static struct str_kv *
config_kvs_copy(const struct str_kv *kv, size_t n)
{
    struct str_kv *out;

    if (kv == NULL || n == 0)
        return NULL;
    out = xcalloc(n, sizeof *out);
    for (size_t i = 0; i < n; i++) {
        out[i].name = str_dup(kv[i].name);
        out[i].value = str_dup(kv[i].value);
    }
    return out;
}

void
config_server_copy(struct config_server *dst, const struct config_server *src)
{
    *dst = *src;
    dst->name = str_dup(src->name);
    dst->url = str_dup(src->url);
    dst->url_shown = str_dup(src->url_shown);
    dst->headers = config_kvs_copy(src->headers, src->nheaders);
    dst->nheaders = dst->headers != NULL ? src->nheaders : 0;
    dst->ca_file = str_dup(src->ca_file);
    if (src->oauth != NULL) {
        dst->oauth = xcalloc(1, sizeof *dst->oauth);
        *dst->oauth = *src->oauth;
        dst->oauth->client_id = str_dup(src->oauth->client_id);
        dst->oauth->client_secret = str_dup(src->oauth->client_secret);
        dst->oauth->token_endpoint_auth_method =
            str_dup(src->oauth->token_endpoint_auth_method);
        dst->oauth->private_key_file = str_dup(src->oauth->private_key_file);
        dst->oauth->signing_algorithm =
            str_dup(src->oauth->signing_algorithm);
        dst->oauth->scope = str_dup(src->oauth->scope);
        dst->oauth->client_metadata_url =
            str_dup(src->oauth->client_metadata_url);
        dst->oauth->issuer = str_dup(src->oauth->issuer);
    }
    if (src->probe != NULL) {
        dst->probe = xcalloc(1, sizeof *dst->probe);
        *dst->probe = *src->probe;
        dst->probe->name = str_dup(src->probe->name);
        dst->probe->arguments = str_dup(src->probe->arguments);
        dst->probe->expect_text = str_dup(src->probe->expect_text);
    }
    dst->command = str_dup(src->command);
    dst->args = config_strings_copy(src->args, src->nargs);
    dst->args_shown = src->args_shown != NULL ?
        config_strings_copy(src->args_shown, src->nargs) : NULL;
    dst->nargs = dst->args != NULL ? src->nargs : 0;
    dst->env = config_kvs_copy(src->env, src->nenv);
    dst->nenv = dst->env != NULL ? src->nenv : 0;
    dst->cwd = str_dup(src->cwd);
    dst->tags = config_strings_copy(src->tags, src->ntags);
    dst->ntags = dst->tags != NULL ? src->ntags : 0;
    dst->source = str_dup(src->source);
    dst->origin = str_dup(src->origin);
    dst->invalid = str_dup(src->invalid);
}

/*
 * Decide s->transport from the type, URL and command keys (any alias).
 * It is set to the best guess even on failure. 0, or -1 with *why.
 */
static int
config_server_transport(struct config_server *s, const cJSON *entry,
    char **why)
{
    char                        shown[CONFIG_SHOWN_SIZE];
    char                        norm[32];
    const struct config_keydef *k;
    const cJSON                *type = NULL, *url = NULL, *cmd = NULL;
    const cJSON                *tap = NULL;
    const cJSON                *url2 = NULL, *cmd2 = NULL;
    const cJSON                *e;
    int                         t;

    cJSON_ArrayForEach(e, entry) {
        k = config_keydef(e->string);
        if (k == NULL)
            continue;
        if (k->kind == CONFIG_KEY_TYPE) {
            if (type == NULL || strcmp(e->string, "type") == 0)
                type = e;
        } else if (k->kind == CONFIG_KEY_URL) {
            if (url == NULL)
                url = e;
            else if (url2 == NULL && strcmp(url->string, e->string) != 0)
                url2 = e;
        } else if (k->kind == CONFIG_KEY_TAP) {
            tap = e;
        } else if (k->kind == CONFIG_KEY_COMMAND) {
            if (cmd == NULL)
                cmd = e;
            else if (cmd2 == NULL && strcmp(cmd->string, e->string) != 0)
                cmd2 = e;
        }
    }
    s->transport = (cmd != NULL && url == NULL) ? CONFIG_STDIO : CONFIG_HTTP;
    if (tap != NULL) {
        /* Read from a tap: neither dialed nor spawned. */
        s->transport = CONFIG_STDIO;
        if (url != NULL || cmd != NULL || type != NULL) {
            *why = str_printf("has both \"tap\" and \"%s\" (a tap entry "
                "is read from the tap's socket only)", url != NULL ?
                url->string : cmd != NULL ? cmd->string : type->string);
            return -1;
        }
        return 0;
    }
    if (type != NULL) {
        if (!cJSON_IsString(type)) {
            *why = str_printf("\"%s\" is %s, expected a string",
                type->string, config_kind(type));
            return -1;
        }
        config_shown(shown, type->valuestring);
        config_type_norm(norm, sizeof norm, type->valuestring);
        t = config_type_transport(norm);
        if (t < 0) {
            *why = str_printf("unsupported \"%s\" \"%s\" (expected "
                "\"stdio\", \"http\", \"streamable-http\" or \"sse\")",
                type->string, shown);
            return -1;
        }
        s->transport = (enum config_transport)t;
        s->http_sse = strcmp(norm, "sse") == 0;
    }
    if (url != NULL && cmd != NULL) {
        *why = str_printf("has both \"%s\" and \"%s\"", url->string,
            cmd->string);
        return -1;
    }
    if (url2 != NULL || cmd2 != NULL) {
        *why = str_printf("has both \"%s\" and \"%s\"",
            url2 != NULL ? url->string : cmd->string,
            url2 != NULL ? url2->string : cmd2->string);
        return -1;
    }
    if (type != NULL && s->transport == CONFIG_HTTP && url == NULL) {
        *why = str_printf("\"%s\" \"%s\" needs a \"url\"", type->string,
            shown);
        return -1;
    }
    if (type != NULL && s->transport == CONFIG_STDIO && cmd == NULL) {
        *why = str_printf("\"%s\" \"%s\" needs a \"command\"",
            type->string, shown);
        return -1;
    }
    if (url == NULL && cmd == NULL) {
        *why = str_printf("has neither \"url\" nor \"command\"");
        return -1;
    }
    return 0;
}

/* Read "disabled" and "enabled" (Goose, opencode, Zed) into s->disabled.
 * 0, or -1 with *why when one is not a boolean. */
static int
config_server_switch(struct config_server *s, const cJSON *entry,
    char **why)
{
    const struct config_keydef *k;
    const cJSON                *e;

    cJSON_ArrayForEach(e, entry) {
        k = config_keydef(e->string);
        if (k == NULL || (k->kind != CONFIG_KEY_DISABLED
            && k->kind != CONFIG_KEY_ENABLED))
            continue;
        if (!cJSON_IsBool(e)) {
            *why = str_printf("\"%s\" is %s, expected true or false",
                e->string, config_kind(e));
            return -1;
        }
        if (k->kind == CONFIG_KEY_DISABLED ? cJSON_IsTrue(e)
            : cJSON_IsFalse(e)) {
            s->disabled = true;
            free(s->disabled_why);
            s->disabled_why = str_printf("disabled in the config (\"%s\": "
                "%s)", e->string, cJSON_IsTrue(e) ? "true" : "false");
        }
    }
    return 0;
}

/*
 * Look over the keys of a server entry: unknown ones and those of the
 * other transport (when known is set and they hold something) are
 * warnings, other clients' behaviour keys are notes. A repeated key that
 * mcptop reads sets *why unless it is already set. Keys already seen
 * are kept in a set, so a repeat is found in one walk.
 */
static void
config_server_scan(struct config_ctx *ctx, const struct config_server *s,
    const cJSON *entry, bool known, char **why)
{
    struct config_names         seen = { NULL, 0, 0 };
    char                        shown_name[CONFIG_SHOWN_SIZE];
    char                        shown_key[CONFIG_SHOWN_SIZE];
    const struct config_keydef *k;
    const cJSON                *e;
    bool                        dup;

    config_shown(shown_name, s->name);
    cJSON_ArrayForEach(e, entry) {
        dup = config_names_seen(&seen, e->string);
        config_shown(shown_key, e->string);
        k = config_keydef(e->string);
        if (k == NULL) {
            config_warn(ctx->cfg, "server \"%s\": unknown key \"%s\" "
                "(ignored)", shown_name, shown_key);
            continue;
        }
        if (k->kind == CONFIG_KEY_NOTE) {
            if (config_meaningful(e)) {
                config_note(ctx, s->name, "\"%s\" is ignored: %s",
                    shown_key, k->note);
                config_key_unapplied(ctx, e->string);
            }
            continue;
        }
        if (k->kind == CONFIG_KEY_SILENT || k->kind == CONFIG_KEY_NAME)
            continue;
        if (dup) {
            if (*why == NULL)
                *why = str_printf("duplicate key \"%s\"", shown_key);
            continue;
        }
        if (known && k->transport >= 0 && k->transport != (int)s->transport
            && config_meaningful(e))
            config_warn(ctx->cfg, "server \"%s\": key \"%s\" is ignored "
                "for %s server", shown_name, shown_key,
                s->transport == CONFIG_STDIO ? "a stdio" : "an http");
    }
    config_names_done(&seen);
}

/* Read one key of a server entry whose transport is known. 0 or -1. */
static int
config_server_key(struct config_ctx *ctx, struct config_server *s,
    struct config_entry *st, const cJSON *v, char **why)
{
    const struct config_keydef *k = config_keydef(v->string);
    struct config_url           u;
    char                       *x;
    size_t                      n;

    if (k == NULL || (k->transport >= 0 && k->transport != (int)s->transport))
        return 0;
    switch (k->kind) {
    case CONFIG_KEY_URL:
        if (!cJSON_IsString(v)) {
            *why = str_printf("\"%s\" is %s, expected a string", v->string,
                config_kind(v));
            return -1;
        }
        if (config_expand_key(ctx, v->string, v->valuestring, &x,
            why) != 0)
            return -1;
        if (config_url_parse(x, &u, why) != 0) {
            if (strcmp(x, v->valuestring) != 0) {
                /* What a reference expanded to is never quoted (it may
                 * be a secret): the reason is the declared URL's, or
                 * that its references broke it. */
                struct config_url u2;
                char             *w2 = NULL;

                free(*why);
                if (config_url_parse(v->valuestring, &u2, &w2) != 0)
                    *why = w2;
                else
                    *why = str_printf("malformed url (once its "
                        "references are expanded)");
            }
            str_wipe_free(x);
            return -1;
        }
        s->url = x;
        /* As written: what a reference expanded to is never shown. */
        s->url_shown = url_redact(v->valuestring);
        return 0;
    case CONFIG_KEY_HEADERS:
        if (s->headers != NULL) {
            *why = str_printf("headers given twice (\"headers\" and "
                "\"requestOptions.headers\")");
            return -1;
        }
        return config_kvs(ctx, v, true, &s->headers, &s->nheaders, why);
    case CONFIG_KEY_REQUEST:
        return config_request(ctx, s, v, why);
    case CONFIG_KEY_COMMAND:
        return config_command(ctx, s, v, why);
    case CONFIG_KEY_TAP:
        if (!cJSON_IsString(v) || v->valuestring[0] == '\0') {
            *why = str_printf("\"tap\" must be a socket's path");
            return -1;
        }
        s->tap = config_expand(v->valuestring, why);
        return s->tap != NULL ? 0 : -1;
    case CONFIG_KEY_ARGS:
        if (s->args_shown != NULL) {
            *why = str_printf("arguments given both in \"command\" and in "
                "\"%s\"", v->string);
            return -1;
        }
        if (config_strings(ctx, v, true, false, 0, &s->args, &s->nargs,
            why) != 0)
            return -1;
        /* As written, ${VAR} unexpanded: the only form ever shown. */
        return config_strings(ctx, v, false, false, 0, &s->args_shown, &n,
            why);
    case CONFIG_KEY_ENV:
        if (s->env != NULL) {
            *why = str_printf("environment given twice (\"%s\")",
                v->string);
            return -1;
        }
        return config_kvs(ctx, v, false, &s->env, &s->nenv, why);
    case CONFIG_KEY_ENVFILE:
        if (!cJSON_IsString(v) || v->valuestring[0] == '\0') {
            *why = str_printf("\"%s\" must be a non-empty string",
                v->string);
            return -1;
        }
        st->envfile = v;
        return 0;
    case CONFIG_KEY_CWD:
        if (!cJSON_IsString(v) || v->valuestring[0] == '\0') {
            *why = str_printf("\"cwd\" must be a non-empty string");
            return -1;
        }
        return config_expand_key(ctx, v->string, v->valuestring, &s->cwd,
            why);
    case CONFIG_KEY_ENV_KEYS:
        st->env_keys = v;
        return 0;
    case CONFIG_KEY_ENV_AUTH:
        if (strcmp(v->string, "bearer_token_env_var") == 0)
            st->bearer_env = v;
        else
            st->env_headers = v;
        return 0;
    case CONFIG_KEY_ENV_VARS:
        st->env_vars = v;
        return 0;
    case CONFIG_KEY_STARTUP:
        st->startup = v;
        return 0;
    case CONFIG_KEY_TIMEOUT:
        st->timeout = v;
        return 0;
    case CONFIG_KEY_OPT:
        if (strcmp(v->string, "timeout_ms") == 0)
            st->has_timeout_ms = true;
        return config_opt(s, v, why) < 0 ? -1 : 0;
    case CONFIG_KEY_PROBE:
        return config_probe(ctx->cfg, s->name, v, &s->probe, why);
    case CONFIG_KEY_OAUTH:
        if (!config_oauth_is_ours(v)) {
            /* Gemini CLI's and opencode's "oauth" are their own. */
            config_note(ctx, s->name, "\"oauth\" is ignored: %s (mcptop's "
                "keys: client_id, client_secret, grant, scope, ...)",
                CONFIG_NOTE_OAUTH);
            config_key_unapplied(ctx, v->string);
            return 0;
        }
        return config_oauth(ctx->cfg, s->name, v, &s->oauth, why);
    default:
        return 0;
    }
}

/*
 * Read the envFile named by v and add each of its variables that "env"
 * does not set (looked up in a set of env's names). The path may use
 * ${userHome}, ${workspaceFolder} (the current directory), ${VAR} and a
 * leading "~". 0, or -1 with *why.
 */
static int
config_entry_envfile(struct config_ctx *ctx, struct config_server *s,
    const cJSON *v, char **why)
{
    struct config_names env = { NULL, 0, 0 };
    struct str_kv   *kv = NULL;
    char               *path;
    char               *shown;
    char               *c = NULL;
    size_t              n = 0, i;

    path = config_expand_ctx(ctx, v->valuestring, &c);
    if (path == NULL) {
        *why = str_printf("\"%s\": %s", v->string, c);
        free(c);
        return -1;
    }
    if (path[0] == '~' && (path[1] == '/' || path[1] == '\0')) {
        char *full;

        if (ctx->home == NULL) {
            str_wipe_free(path);
            *why = str_printf("\"%s\": \"~\" but HOME is not set",
                v->string);
            return -1;
        }
        full = str_printf("%s%s", ctx->home, path + 1);
        str_wipe_free(path);
        path = full;
    }
    shown = str_sanitized(v->valuestring);
    if (envfile_read(path, shown, &kv, &n, why) != 0) {
        free(shown);
        str_wipe_free(path);
        return -1;
    }
    free(shown);
    str_wipe_free(path);
    s->env = xrealloc(s->env, (s->nenv + n + 1) * sizeof *s->env);
    for (i = 0; i < s->nenv; i++)
        config_names_add(&env, s->env[i].name, 0);
    for (i = 0; i < n; i++) {
        if (config_names_find(&env, kv[i].name) >= 0) {
            free(kv[i].name);
            str_wipe_free(kv[i].value);
            continue;
        }
        s->env[s->nenv++] = kv[i];
    }
    config_names_done(&env);
    free(kv);
    return 0;
}

/*
 * A broken entry keeps what it is: its tags are read all the same (when
 * they read), so that a filter, check --json and the exporter's labels see
 * the broken server under its team, instead of losing exactly the servers
 * an alert must reach. why is taken as s->invalid.
 */
static void
config_server_broken(struct config_server *s, const cJSON *entry, char *why)
{
    const cJSON *v = cJSON_IsObject(entry) ?
        cJSON_GetObjectItemCaseSensitive(entry, "tags") : NULL;
    char       **tags = NULL, *ignored = NULL;
    size_t       ntags = 0;

    s->invalid = why;
    if (v != NULL && config_strings(NULL, v, false, true, 0, &tags, &ntags,
        &ignored) == 0) {
        config_strings_free(s->tags, s->ntags);
        s->tags = tags;
        s->ntags = ntags;
    }
    free(ignored);
}

/*
 * An agent's entry that starts `mcptop tap [--name N] [--socket P] -- CMD`
 * is that tap's server: read from the tap's socket (the path the tap
 * publishes at), never started a second time (the second tap could not
 * publish, and the agent's server would run twice).
 */
static void
config_entry_tap_command(struct config_ctx *ctx, struct config_server *s)
{
    const char *base, *name = NULL, *sock = NULL, *cmd = NULL;
    char        shown[CONFIG_SHOWN_SIZE];

    if (s->transport != CONFIG_STDIO || s->tap != NULL || s->command == NULL ||
        s->nargs < 1 || strcmp(s->args[0], "tap") != 0)
        return;
    base = strrchr(s->command, '/');
    base = base != NULL ? base + 1 : s->command;
    if (strcmp(base, "mcptop") != 0)
        return;
    for (size_t i = 1; i < s->nargs; i++) {
        const char *a = s->args[i];

        if (strcmp(a, "--") == 0) {
            cmd = i + 1 < s->nargs ? s->args[i + 1] : NULL;
            break;
        }
        if (strcmp(a, "--no-socket") == 0)
            return;             /* it publishes nothing: started as is */
        if ((strcmp(a, "--name") == 0 || strcmp(a, "--socket") == 0) &&
            i + 1 < s->nargs) {
            if (a[2] == 'n')
                name = s->args[i + 1];
            else
                sock = s->args[i + 1];
            i++;
        } else if (strncmp(a, "--name=", 7) == 0) {
            name = a + 7;
        } else if (strncmp(a, "--socket=", 9) == 0) {
            sock = a + 9;
        }
    }
    if (cmd == NULL)
        return;
    if (name == NULL) {
        name = strrchr(cmd, '/');
        name = name != NULL ? name + 1 : cmd;
    }
    s->tap = sock != NULL ? xstrdup(sock) : config_tap_path(name);
    config_note(ctx, s->name, "starts mcptop tap: read from its socket %s, "
        "not started again", config_shown(shown, s->tap));
}

/*
 * Fill s from one entry of a server map (the servers before it in the
 * config are loaded). Problems go to s->invalid or the warnings.
 */
void
config_server_load(struct config_ctx *ctx, struct config_server *s,
    const char *name, const cJSON *entry, const struct config_server *fleet,
    enum config_shape shape)
{
    char                shown[CONFIG_SHOWN_SIZE];
    struct config_entry st = { .shape = shape };
    const cJSON        *e;
    char               *why = NULL;

    config_server_defaults(s);
    s->name = xstrdup(name);
    s->origin = xstrdup(ctx->cfg->origin);
    config_server_inherit(s, fleet);
    if (config_names_find(&ctx->names, s->name) >= 0) {
        config_server_broken(s, entry, str_printf("duplicate server name "
            "\"%s\" (the first declaration is used)",
            config_shown(shown, s->name)));
        return;
    }
    config_names_add(&ctx->names, s->name, (long)(s - ctx->cfg->servers));
    if (s->name[0] == '\0') {
        config_server_broken(s, entry, str_printf("empty server name"));
        return;
    }
    if (!cJSON_IsObject(entry)) {
        s->invalid = str_printf("server entry is %s, expected an object",
            config_kind(entry));
        return;
    }
    config_server_transport(s, entry, &why);
    /* Gemini CLI: "url" is its SSE transport, "httpUrl" Streamable HTTP. */
    if (ctx->vars == CONFIG_VARS_GEMINI && s->transport == CONFIG_HTTP
        && cJSON_GetObjectItemCaseSensitive(entry, "type") == NULL
        && cJSON_IsString(cJSON_GetObjectItemCaseSensitive(entry, "url")))
        s->http_sse = true;
    {
        char *off = NULL;

        /* Read even for a broken entry: the operator sees it was off. */
        config_server_switch(s, entry, &off);
        if (why == NULL)
            why = off;
        else
            free(off);
    }
    config_server_scan(ctx, s, entry, why == NULL, &why);
    if (why != NULL) {
        config_server_broken(s, entry, why);
        return;
    }
    cJSON_ArrayForEach(e, entry) {
        if (config_server_key(ctx, s, &st, e, &why) != 0) {
            config_server_broken(s, entry, why);
            return;
        }
    }
    config_entry_timeout(ctx, s, &st);
    if (config_entry_codex(ctx, s, &st, &why) != 0) {
        config_server_broken(s, entry, why);
        return;
    }
    if (st.envfile != NULL && config_entry_envfile(ctx, s, st.envfile,
        &why) != 0) {
        config_server_broken(s, entry, why);
        return;
    }
    if (st.env_keys != NULL)
        config_entry_env_keys(ctx, s, st.env_keys);
    config_entry_tap_command(ctx, s);
}
