/*
 * The fleet declaration: JSON text in the shapes other MCP clients write
 * ({"mcpServers": {...}}, VS Code's {"servers": {...}}) becomes a struct
 * config, one struct config_server per entry, with mcptop's own keys
 * resolved as default <- fleet ("mcptop" object) <- server entry.
 *
 * Structure is checked strictly and extras leniently. A broken entry gets
 * ->invalid and keeps its name; only a file that cannot be read, is not
 * JSON (comments and trailing commas, as VS Code writes, are tolerated) or
 * has no server map fails whole. Every string kept is copied out of cJSON,
 * and the tree is deleted by the function that parsed it.
 *
 * Header and env values and whatever ${VAR} expands to are secrets: no
 * message built here quotes a value (only key, header, variable and server
 * names), and owned copies are wiped before they are freed.
 */
#include "engine/config.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/str.h"
#include "util/xmalloc.h"

#define CONFIG_MAX_FILE_BYTES   (16u * 1024 * 1024)
#define CONFIG_MAX_INT          INT_MAX
#define CONFIG_SHOWN_MAX        64      /* longest name quoted in a message */
#define CONFIG_SHOWN_SIZE       (CONFIG_SHOWN_MAX + 4)

/* Keys read for a stdio server only. */
static const char *const config_stdio_keys[] = {
    "command", "args", "env", "cwd", NULL
};

/* Keys read for an HTTP server only. */
static const char *const config_http_keys[] = {
    "url", "headers", "ca_file", "tls_insecure", NULL
};

/* mcptop's own keys: fleet-wide under "mcptop", or in a server entry. */
static const char *const config_opt_keys[] = {
    "ping_interval_s", "timeout_ms", "open_deadline_ms", "teardown_ms",
    "max_message_bytes", "tags", "era", "ca_file", "tls_insecure", NULL
};

/* Other clients' keys that mcptop does not use and does not warn about. */
static const char *const config_ignored_keys[] = {
    "disabled", "autoApprove", "alwaysAllow", "description", "timeout",
    "transportType", "envFile", "trust", "includeTools", "excludeTools",
    NULL
};

/* "type" values meaning HTTP (Streamable HTTP; "sse" is the legacy one). */
static const char *const config_http_types[] = {
    "http", "streamable-http", "streamableHttp", "sse", NULL
};

/* A growable byte buffer whose old copies are wiped when it grows. */
struct config_buf {
    char   *p;
    size_t  len;
    size_t  cap;
};

/* The parts of an http(s) URL mcptop looks at; spans point into the URL. */
struct config_url {
    const char *host;
    size_t      hostlen;
    const char *port;           /* NULL when absent or empty */
    size_t      portlen;
    bool        https;
};

/* Overwrite and free a string that may hold a secret. */
static void
config_wipe_free(char *s)
{
    if (s == NULL)
        return;
    explicit_bzero(s, strlen(s));
    free(s);
}

/* True when key is one of the NULL-terminated list. */
static bool
config_in(const char *const *list, const char *key)
{
    size_t i;

    for (i = 0; list[i] != NULL; i++) {
        if (strcmp(list[i], key) == 0)
            return true;
    }
    return false;
}

/*
 * Copy a name from the file into buf (CONFIG_SHOWN_SIZE bytes) fit for a
 * message: non-printable bytes become '?', long names are cut with "...".
 */
static const char *
config_shown(char *buf, const char *s)
{
    size_t i;

    for (i = 0; s[i] != '\0' && i < CONFIG_SHOWN_MAX; i++) {
        unsigned char c = (unsigned char)s[i];

        buf[i] = (c >= 0x20 && c < 0x7f && c != '"') ? (char)c : '?';
    }
    buf[i] = '\0';
    if (s[i] != '\0')
        memcpy(buf + i, "...", 4);
    return buf;
}

/* The JSON kind of v with its article, for "is a number" messages. */
static const char *
config_kind(const cJSON *v)
{
    if (cJSON_IsNumber(v))
        return "a number";
    if (cJSON_IsString(v))
        return "a string";
    if (cJSON_IsBool(v))
        return "a boolean";
    if (cJSON_IsNull(v))
        return "null";
    if (cJSON_IsArray(v))
        return "an array";
    if (cJSON_IsObject(v))
        return "an object";
    return "not a JSON value";
}

/* True when an earlier sibling of item has the same key. */
static bool
config_dup_key(const cJSON *object, const cJSON *item)
{
    const cJSON *e;

    for (e = object->child; e != NULL && e != item; e = e->next) {
        if (strcmp(e->string, item->string) == 0)
            return true;
    }
    return false;
}

/* Append n bytes to b, moving (and wiping) the old storage to grow. */
static void
config_buf_add(struct config_buf *b, const char *s, size_t n)
{
    char  *p;
    size_t cap;

    if (b->len + n + 1 > b->cap) {
        cap = b->cap ? b->cap : 32;
        while (b->len + n + 1 > cap)
            cap *= 2;
        p = xmalloc(cap);
        if (b->p != NULL) {
            memcpy(p, b->p, b->len);
            explicit_bzero(b->p, b->cap);
            free(b->p);
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

/* Wipe and free b's storage. */
static void
config_buf_wipe(struct config_buf *b)
{
    if (b->p != NULL) {
        explicit_bzero(b->p, b->cap);
        free(b->p);
    }
    b->p = NULL;
    b->len = b->cap = 0;
}

/* True when s[0..n) is a shell-style variable name. */
static bool
config_var_name_ok(const char *s, size_t n)
{
    size_t i;

    if (n == 0 || (s[0] >= '0' && s[0] <= '9'))
        return false;
    for (i = 0; i < n; i++) {
        char c = s[i];

        if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
            || (c >= '0' && c <= '9')))
            return false;
    }
    return true;
}

/*
 * Expand the reference whose body (between "${" and "}") is ref[0..n)
 * onto b: VAR, env:VAR (VS Code) or VAR:-default (used when VAR is unset
 * or empty). 0, or -1 with *cause naming the variable.
 */
static int
config_expand_ref(struct config_buf *b, const char *ref, size_t n,
    char **cause)
{
    char        shown[CONFIG_SHOWN_SIZE];
    const char *dflt = NULL;
    const char *value;
    char       *name;
    size_t      namelen = n;
    size_t      i;

    for (i = 0; i + 1 < n; i++) {
        if (ref[i] == ':' && ref[i + 1] == '-') {
            namelen = i;
            dflt = ref + i + 2;
            break;
        }
    }
    if (namelen > 4 && strncmp(ref, "env:", 4) == 0) {
        ref += 4;
        namelen -= 4;
        n -= 4;
    }
    name = str_ndup(ref, namelen);
    if (!config_var_name_ok(name, namelen)) {
        *cause = str_printf("unsupported reference \"${%s}\"",
            config_shown(shown, name));
        free(name);
        return -1;
    }
    value = getenv(name);
    if (dflt != NULL && (value == NULL || *value == '\0')) {
        config_buf_add(b, dflt, (size_t)(ref + n - dflt));
    } else if (value == NULL) {
        *cause = str_printf("variable \"%s\" is not set", name);
        free(name);
        return -1;
    } else {
        config_buf_add(b, value, strlen(value));
    }
    free(name);
    return 0;
}

/* See config.h. The partial result is wiped on failure. */
char *
config_expand(const char *s, char **cause)
{
    struct config_buf b = { NULL, 0, 0 };
    char              shown[CONFIG_SHOWN_SIZE];
    const char       *end;
    char             *name;

    *cause = NULL;
    config_buf_add(&b, "", 0);
    while (*s != '\0') {
        if (s[0] == '$' && s[1] == '$') {
            config_buf_add(&b, "$", 1);
            s += 2;
            continue;
        }
        if (s[0] != '$' || s[1] != '{') {
            config_buf_add(&b, s, 1);
            s++;
            continue;
        }
        end = strchr(s + 2, '}');
        if (end == NULL) {
            name = str_ndup(s + 2, strcspn(s + 2, " \t\r\n\"'$/"));
            *cause = str_printf("unterminated reference \"${%s\"",
                config_shown(shown, name));
            free(name);
            goto fail;
        }
        if (end == s + 2) {
            *cause = str_printf("empty reference \"${}\"");
            goto fail;
        }
        if (config_expand_ref(&b, s + 2, (size_t)(end - s - 2), cause) != 0)
            goto fail;
        s = end + 1;
    }
    return b.p;

fail:
    config_buf_wipe(&b);
    return NULL;
}

/* Append a warning (printf-style) to cfg->warnings. */
static void config_warn(struct config *cfg, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
config_warn(struct config *cfg, const char *fmt, ...)
{
    va_list ap;

    cfg->warnings = xrealloc(cfg->warnings,
        (cfg->nwarnings + 1) * sizeof *cfg->warnings);
    va_start(ap, fmt);
    cfg->warnings[cfg->nwarnings++] = str_vprintf(fmt, ap);
    va_end(ap);
}

/*
 * Check that url is http(s)://host[:port]... with no whitespace or
 * control characters, and find its host and port. 0, or -1 with *why.
 */
static int
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
        *why = str_printf("unsupported scheme \"%s\" (expected http:// or "
            "https://)", config_shown(shown, scheme));
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
        config_wipe_free(a[i]);
    free(a);
}

/*
 * Read v (key v->string) as an array of strings, expanding ${VAR} when
 * expand is set and refusing empty ones when nonempty is. 0 with *out and
 * *n set (caller frees), or -1 with *why.
 */
static int
config_strings(const cJSON *v, bool expand, bool nonempty, char ***out,
    size_t *n, char **why)
{
    const cJSON *e;
    char       **a;
    char        *x;
    char        *c;
    size_t       i = 0;

    if (!cJSON_IsArray(v)) {
        *why = str_printf("\"%s\" is %s, expected an array of strings",
            v->string, config_kind(v));
        return -1;
    }
    a = xcalloc((size_t)cJSON_GetArraySize(v), sizeof *a);
    cJSON_ArrayForEach(e, v) {
        if (!cJSON_IsString(e)) {
            *why = str_printf("\"%s\"[%zu] is %s, expected a string",
                v->string, i, config_kind(e));
            goto fail;
        }
        if (nonempty && e->valuestring[0] == '\0') {
            *why = str_printf("\"%s\"[%zu] is empty", v->string, i);
            goto fail;
        }
        if (expand) {
            x = config_expand(e->valuestring, &c);
            if (x == NULL) {
                *why = str_printf("\"%s\"[%zu]: %s", v->string, i, c);
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

/* Free n name=value pairs, wiping the values. */
static void
config_kvs_free(struct config_kv *kv, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        free(kv[i].name);
        config_wipe_free(kv[i].value);
    }
    free(kv);
}

/* True when name is an HTTP header field name (an RFC 9110 token). */
static bool
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
static bool
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
 * Read v ("headers" or "env") as an object of strings, expanding each
 * value. 0 with *out and *n set (caller frees), or -1 with *why, which
 * names the entry but never its value.
 */
static int
config_kvs(const cJSON *v, bool headers, struct config_kv **out, size_t *n,
    char **why)
{
    const char       *what = headers ? "header" : "env";
    char              shown[CONFIG_SHOWN_SIZE];
    const cJSON      *e;
    struct config_kv *kv;
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
        x = config_expand(e->valuestring, &c);
        if (x == NULL) {
            *why = str_printf("%s \"%s\": %s", what, shown, c);
            free(c);
            goto fail;
        }
        if (headers && config_header_value_bad(x)) {
            config_wipe_free(x);
            *why = str_printf("%s \"%s\": value contains a control "
                "character", what, shown);
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
static int
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
    } else if (strcmp(key, "max_message_bytes") == 0) {
        if (config_int(v, &n, why) != 0)
            return -1;
        s->max_message_bytes = (size_t)n;
    } else if (strcmp(key, "tags") == 0) {
        if (config_strings(v, false, true, &tags, &ntags, why) != 0)
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
static void
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
static void
config_server_done(struct config_server *s)
{
    free(s->name);
    free(s->url);
    config_kvs_free(s->headers, s->nheaders);
    free(s->ca_file);
    free(s->command);
    config_strings_free(s->args, s->nargs);
    config_strings_free(s->args_shown, s->args_shown != NULL ? s->nargs : 0);
    config_kvs_free(s->env, s->nenv);
    free(s->cwd);
    config_strings_free(s->tags, s->ntags);
    free(s->invalid);
}

/*
 * Decide s->transport from "type", "url" and "command". It is set to the
 * best guess even on failure. 0, or -1 with *why.
 */
static int
config_server_transport(struct config_server *s, const cJSON *entry,
    char **why)
{
    char         shown[CONFIG_SHOWN_SIZE];
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(entry, "type");
    bool         has_url =
        cJSON_GetObjectItemCaseSensitive(entry, "url") != NULL;
    bool         has_cmd =
        cJSON_GetObjectItemCaseSensitive(entry, "command") != NULL;

    s->transport = (has_cmd && !has_url) ? CONFIG_STDIO : CONFIG_HTTP;
    if (type != NULL) {
        if (!cJSON_IsString(type)) {
            *why = str_printf("\"type\" is %s, expected a string",
                config_kind(type));
            return -1;
        }
        config_shown(shown, type->valuestring);
        if (config_in(config_http_types, type->valuestring)) {
            s->transport = CONFIG_HTTP;
        } else if (strcmp(type->valuestring, "stdio") == 0) {
            s->transport = CONFIG_STDIO;
        } else {
            *why = str_printf("unsupported \"type\" \"%s\" (expected "
                "\"stdio\", \"http\", \"streamable-http\" or \"sse\")",
                shown);
            return -1;
        }
    }
    if (has_url && has_cmd) {
        *why = str_printf("has both \"url\" and \"command\"");
        return -1;
    }
    if (type != NULL && s->transport == CONFIG_HTTP && !has_url) {
        *why = str_printf("\"type\" \"%s\" needs a \"url\"", shown);
        return -1;
    }
    if (type != NULL && s->transport == CONFIG_STDIO && !has_cmd) {
        *why = str_printf("\"type\" \"stdio\" needs a \"command\"");
        return -1;
    }
    if (!has_url && !has_cmd) {
        *why = str_printf("has neither \"url\" nor \"command\"");
        return -1;
    }
    return 0;
}

/*
 * Warn about keys in a server entry that mcptop ignores: unknown ones and
 * those of the other transport (when known is set). A repeated key that
 * mcptop reads sets *why unless it is already set.
 */
static void
config_server_scan(struct config *cfg, const struct config_server *s,
    const cJSON *entry, bool known, char **why)
{
    char         shown_name[CONFIG_SHOWN_SIZE];
    char         shown_key[CONFIG_SHOWN_SIZE];
    const cJSON *e;
    const char  *key;
    bool         http_only;
    bool         stdio_only;

    config_shown(shown_name, s->name);
    cJSON_ArrayForEach(e, entry) {
        key = e->string;
        config_shown(shown_key, key);
        http_only = config_in(config_http_keys, key);
        stdio_only = config_in(config_stdio_keys, key);
        if (http_only || stdio_only || strcmp(key, "type") == 0
            || config_in(config_opt_keys, key)) {
            if (config_dup_key(entry, e)) {
                if (*why == NULL)
                    *why = str_printf("duplicate key \"%s\"", shown_key);
                continue;
            }
            if (known && s->transport == CONFIG_STDIO && http_only)
                config_warn(cfg, "server \"%s\": key \"%s\" is ignored for "
                    "a stdio server", shown_name, shown_key);
            if (known && s->transport == CONFIG_HTTP && stdio_only)
                config_warn(cfg, "server \"%s\": key \"%s\" is ignored for "
                    "an http server", shown_name, shown_key);
            continue;
        }
        if (!config_in(config_ignored_keys, key))
            config_warn(cfg, "server \"%s\": unknown key \"%s\" (ignored)",
                shown_name, shown_key);
    }
}

/* Read one key of a server entry whose transport is known. 0 or -1. */
static int
config_server_key(struct config *cfg, struct config_server *s,
    const cJSON *v, char **why)
{
    char              shown[CONFIG_SHOWN_SIZE];
    const char       *key = v->string;
    struct config_url u;
    const char       *p;

    if (s->transport == CONFIG_STDIO && config_in(config_http_keys, key))
        return 0;
    if (s->transport == CONFIG_HTTP && config_in(config_stdio_keys, key))
        return 0;
    if (strcmp(key, "url") == 0) {
        if (!cJSON_IsString(v)) {
            *why = str_printf("\"url\" is %s, expected a string",
                config_kind(v));
            return -1;
        }
        if (config_url_parse(v->valuestring, &u, why) != 0)
            return -1;
        if (strstr(v->valuestring, "${") != NULL)
            config_warn(cfg, "server \"%s\": \"url\" is not expanded; "
                "\"${\" is kept as written", config_shown(shown, s->name));
        s->url = xstrdup(v->valuestring);
    } else if (strcmp(key, "headers") == 0) {
        return config_kvs(v, true, &s->headers, &s->nheaders, why);
    } else if (strcmp(key, "command") == 0) {
        if (!cJSON_IsString(v)) {
            *why = str_printf("\"command\" is %s, expected a string",
                config_kind(v));
            return -1;
        }
        p = v->valuestring;
        p += strspn(p, " \t\r\n");
        if (*p == '\0') {
            *why = str_printf("empty command");
            return -1;
        }
        s->command = xstrdup(v->valuestring);
    } else if (strcmp(key, "args") == 0) {
        size_t n;

        if (config_strings(v, true, false, &s->args, &s->nargs, why) != 0)
            return -1;
        /* As written, ${VAR} unexpanded: the only form ever shown. */
        return config_strings(v, false, false, &s->args_shown, &n, why);
    } else if (strcmp(key, "env") == 0) {
        return config_kvs(v, false, &s->env, &s->nenv, why);
    } else if (strcmp(key, "cwd") == 0) {
        if (!cJSON_IsString(v) || v->valuestring[0] == '\0') {
            *why = str_printf("\"cwd\" must be a non-empty string");
            return -1;
        }
        s->cwd = xstrdup(v->valuestring);
    } else if (config_opt(s, v, why) < 0) {
        return -1;
    }
    return 0;
}

/*
 * Fill s from one entry of a server map; the first n servers of cfg are
 * already loaded. Problems go to s->invalid or cfg->warnings.
 */
static void
config_server_load(struct config *cfg, struct config_server *s,
    const cJSON *entry, const struct config_server *fleet, size_t n)
{
    char         shown[CONFIG_SHOWN_SIZE];
    const cJSON *e;
    char        *why = NULL;
    size_t       i;

    config_server_defaults(s);
    s->name = xstrdup(entry->string);
    config_server_inherit(s, fleet);
    for (i = 0; i < n; i++) {
        if (strcmp(cfg->servers[i].name, s->name) == 0) {
            s->invalid = str_printf("duplicate server name \"%s\" (the "
                "first declaration is used)", config_shown(shown, s->name));
            return;
        }
    }
    if (s->name[0] == '\0') {
        s->invalid = str_printf("empty server name");
        return;
    }
    if (!cJSON_IsObject(entry)) {
        s->invalid = str_printf("server entry is %s, expected an object",
            config_kind(entry));
        return;
    }
    config_server_transport(s, entry, &why);
    config_server_scan(cfg, s, entry, why == NULL, &why);
    if (why != NULL) {
        s->invalid = why;
        return;
    }
    cJSON_ArrayForEach(e, entry) {
        if (config_server_key(cfg, s, e, &why) != 0) {
            s->invalid = why;
            return;
        }
    }
}

/*
 * Read the fleet-wide "mcptop" object into fleet. 0, or -1 with *cause
 * (a whole-file error naming origin and the key).
 */
static int
config_fleet_load(struct config *cfg, struct config_server *fleet,
    const cJSON *obj, char **cause)
{
    char         shown[CONFIG_SHOWN_SIZE];
    const cJSON *e;
    char        *why = NULL;
    int          r;

    if (!cJSON_IsObject(obj)) {
        *cause = str_printf("%s: \"mcptop\" is %s, expected an object",
            cfg->origin, config_kind(obj));
        return -1;
    }
    cJSON_ArrayForEach(e, obj) {
        config_shown(shown, e->string);
        if (config_dup_key(obj, e)) {
            *cause = str_printf("%s: \"mcptop\": duplicate key \"%s\"",
                cfg->origin, shown);
            return -1;
        }
        r = config_opt(fleet, e, &why);
        if (r < 0) {
            *cause = str_printf("%s: \"mcptop\": %s", cfg->origin, why);
            free(why);
            return -1;
        }
        if (r == 0)
            config_warn(cfg, "\"mcptop\": unknown key \"%s\" (ignored)",
                shown);
    }
    return 0;
}

/* Build *out from a parsed document. 0, or -1 with *cause. */
static int
config_from_json(const cJSON *root, const char *origin, struct config **out,
    char **cause)
{
    static const char *const maps[] = {
        "mcpServers", "servers", "mcptop", NULL
    };
    struct config_server     fleet;
    struct config           *cfg;
    const cJSON             *map[2];
    const cJSON             *e;
    size_t                   count = 0;
    size_t                   i;

    if (!cJSON_IsObject(root)) {
        *cause = str_printf("%s: top level is %s, expected an object",
            origin, config_kind(root));
        return -1;
    }
    cJSON_ArrayForEach(e, root) {
        if (config_in(maps, e->string) && config_dup_key(root, e)) {
            *cause = str_printf("%s: duplicate key \"%s\"", origin,
                e->string);
            return -1;
        }
    }
    for (i = 0; i < 2; i++) {
        map[i] = cJSON_GetObjectItemCaseSensitive(root, maps[i]);
        if (map[i] != NULL && !cJSON_IsObject(map[i])) {
            *cause = str_printf("%s: \"%s\" is %s, expected an object",
                origin, maps[i], config_kind(map[i]));
            return -1;
        }
        if (map[i] != NULL)
            count += (size_t)cJSON_GetArraySize(map[i]);
    }
    if (map[0] == NULL && map[1] == NULL) {
        *cause = str_printf("%s: no \"mcpServers\" or \"servers\" object",
            origin);
        return -1;
    }

    cfg = xcalloc(1, sizeof *cfg);
    cfg->origin = xstrdup(origin);
    config_server_defaults(&fleet);
    e = cJSON_GetObjectItemCaseSensitive(root, "mcptop");
    if (e != NULL && config_fleet_load(cfg, &fleet, e, cause) != 0) {
        config_server_done(&fleet);
        config_free(cfg);
        return -1;
    }
    cfg->servers = xcalloc(count, sizeof *cfg->servers);
    for (i = 0; i < 2; i++) {
        if (map[i] == NULL)
            continue;
        cJSON_ArrayForEach(e, map[i]) {
            config_server_load(cfg, &cfg->servers[cfg->nservers], e, &fleet,
                cfg->nservers);
            cfg->nservers++;
        }
    }
    config_server_done(&fleet);
    *out = cfg;
    return 0;
}

/*
 * Blank comments and trailing commas outside strings with spaces (JSONC,
 * as VS Code writes it). Offsets and newlines are kept, so error
 * positions still match the file.
 */
static void
config_jsonc_blank(char *t, size_t len)
{
    size_t i = 0;
    size_t j;
    bool   in_str = false;
    char   last = '\0';

    while (i < len) {
        if (in_str) {
            if (t[i] == '\\')
                i++;
            else if (t[i] == '"')
                in_str = false;
            i++;
        } else if (t[i] == '/' && i + 1 < len && t[i + 1] == '/') {
            while (i < len && t[i] != '\n')
                t[i++] = ' ';
        } else if (t[i] == '/' && i + 1 < len && t[i + 1] == '*') {
            t[i++] = ' ';
            t[i++] = ' ';
            while (i < len && !(t[i] == '*' && i + 1 < len
                && t[i + 1] == '/')) {
                if (t[i] != '\n')
                    t[i] = ' ';
                i++;
            }
            if (i < len) {
                t[i++] = ' ';
                t[i++] = ' ';
            }
        } else {
            if (t[i] == '"')
                in_str = true;
            i++;
        }
    }

    in_str = false;
    for (i = 0; i < len; i++) {
        if (in_str) {
            if (t[i] == '\\')
                i++;
            else if (t[i] == '"')
                in_str = false;
            continue;
        }
        if (t[i] == '"')
            in_str = true;
        if (t[i] == ',' && last != ',' && last != '[' && last != '{') {
            j = i + 1;
            while (j < len && strchr(" \t\r\n", t[j]) != NULL)
                j++;
            if (j < len && (t[j] == '}' || t[j] == ']')) {
                t[i] = ' ';
                continue;
            }
        }
        if (strchr(" \t\r\n", t[i]) == NULL)
            last = t[i];
    }
}

/*
 * The "<origin>:LINE:COL: not valid JSON" message for byte offset off (as
 * cJSON reports it: for a missing object key it is one byte past).
 */
static char *
config_json_error(const char *text, size_t off, const char *origin)
{
    size_t line = 1;
    size_t col = 1;
    size_t i;

    for (i = 0; i < off; i++) {
        if (text[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    return str_printf("%s:%zu:%zu: not valid JSON", origin, line, col);
}

/* See config.h. */
int
config_parse(const char *text, size_t len, const char *origin,
    struct config **out, char **cause)
{
    const char *nul;
    const char *end = NULL;
    cJSON      *root;
    char       *copy;
    size_t      off;
    int         rc = -1;

    *out = NULL;
    *cause = NULL;
    for (off = 0; off < len; off++) {
        if (strchr(" \t\r\n", text[off]) == NULL || text[off] == '\0')
            break;
    }
    if (off == len) {
        *cause = str_printf("%s: empty file", origin);
        return -1;
    }
    nul = memchr(text, '\0', len);
    if (nul != NULL) {
        *cause = config_json_error(text, (size_t)(nul - text), origin);
        return -1;
    }

    copy = xmalloc(len + 1);
    memcpy(copy, text, len);
    copy[len] = '\0';
    config_jsonc_blank(copy, len);
    root = cJSON_ParseWithLengthOpts(copy, len, &end, 0);
    off = end != NULL ? (size_t)(end - copy) : 0;
    if (root != NULL) {
        while (off < len && strchr(" \t\r\n", copy[off]) != NULL)
            off++;
    }
    if (root == NULL || off < len) {
        *cause = config_json_error(text, off < len ? off : len, origin);
        goto out;
    }
    rc = config_from_json(root, origin, out, cause);

out:
    cJSON_Delete(root);
    explicit_bzero(copy, len);
    free(copy);
    return rc;
}

/* See config.h. The file text is wiped after parsing. */
int
config_load_file(const char *path, struct config **out, char **cause)
{
    struct stat st;
    char       *buf;
    size_t      cap = 64 * 1024;
    size_t      len = 0;
    ssize_t     n;
    int         fd;
    int         rc = -1;

    *out = NULL;
    *cause = NULL;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        *cause = str_printf("%s: %s", path, strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        if ((uintmax_t)st.st_size > CONFIG_MAX_FILE_BYTES) {
            *cause = str_printf("%s: larger than 16 MiB", path);
            close(fd);
            return -1;
        }
        cap = (size_t)st.st_size + 1;
    }
    buf = xmalloc(cap);
    for (;;) {
        if (len == cap) {
            if (cap > CONFIG_MAX_FILE_BYTES) {
                *cause = str_printf("%s: larger than 16 MiB", path);
                goto out;
            }
            cap = cap * 2 > CONFIG_MAX_FILE_BYTES + 1
                ? CONFIG_MAX_FILE_BYTES + 1 : cap * 2;
            buf = xrealloc(buf, cap);
        }
        n = read(fd, buf + len, cap - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            *cause = str_printf("%s: %s", path, strerror(errno));
            goto out;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    rc = config_parse(buf, len, path, out, cause);

out:
    explicit_bzero(buf, len);
    free(buf);
    close(fd);
    return rc;
}

/* See config.h. */
struct config *
config_for_url(const char *url)
{
    struct config        *cfg;
    struct config_server *s;
    struct config_url     u;
    char                 *why = NULL;

    if (url == NULL)
        url = "";
    cfg = xcalloc(1, sizeof *cfg);
    cfg->origin = xstrdup("command line");
    cfg->servers = xcalloc(1, sizeof *cfg->servers);
    cfg->nservers = 1;
    s = &cfg->servers[0];
    config_server_defaults(s);
    s->url = xstrdup(url);
    if (config_url_parse(url, &u, &why) != 0) {
        s->name = xstrdup(url);
        s->invalid = why;
        return cfg;
    }
    if (u.port != NULL)
        s->name = str_printf("%.*s:%.*s", (int)u.hostlen, u.host,
            (int)u.portlen, u.port);
    else
        s->name = str_printf("%.*s:%d", (int)u.hostlen, u.host,
            u.https ? 443 : 80);
    return cfg;
}

/* See config.h. */
void
config_free(struct config *cfg)
{
    size_t i;

    if (cfg == NULL)
        return;
    for (i = 0; i < cfg->nservers; i++)
        config_server_done(&cfg->servers[i]);
    free(cfg->servers);
    for (i = 0; i < cfg->nwarnings; i++)
        free(cfg->warnings[i]);
    free(cfg->warnings);
    free(cfg->origin);
    free(cfg);
}

size_t
config_retain(struct config *cfg,
    bool (*keep)(const struct config_server *decl, void *arg), void *arg)
{
    size_t kept = 0;

    for (size_t i = 0; i < cfg->nservers; i++) {
        if (keep(&cfg->servers[i], arg))
            cfg->servers[kept++] = cfg->servers[i];
        else
            config_server_done(&cfg->servers[i]);
    }
    cfg->nservers = kept;
    return kept;
}

/* True when path names something that is not a directory. */
static bool
config_exists(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && !S_ISDIR(st.st_mode);
}

/* See config.h. A relative XDG_CONFIG_HOME is ignored (XDG spec). */
char *
config_discover(void)
{
    const char *env;
    char       *path = NULL;

    env = getenv("MCPTOP_CONFIG");
    if (env != NULL && *env != '\0') {
        /* Named explicitly: even a missing file is the answer, so that
         * loading it reports the error instead of checking another. */
        return xstrdup(env);
    }
    if (config_exists("./mcptop.json"))
        return xstrdup("./mcptop.json");
    env = getenv("XDG_CONFIG_HOME");
    if (env != NULL && env[0] == '/') {
        path = str_printf("%s/mcptop/config.json", env);
    } else {
        env = getenv("HOME");
        if (env != NULL && *env != '\0')
            path = str_printf("%s/.config/mcptop/config.json", env);
    }
    if (path != NULL && config_exists(path))
        return path;
    free(path);
    return NULL;
}

/* See config.h. */
const char *
config_discover_help(void)
{
    return "$MCPTOP_CONFIG, ./mcptop.json, "
        "$XDG_CONFIG_HOME/mcptop/config.json "
        "(XDG_CONFIG_HOME defaults to ~/.config)";
}
