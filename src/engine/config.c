/*
 * The fleet declaration: the config files of other MCP clients (JSON with
 * comments, or YAML) become a struct config, one struct config_server per
 * entry, with mcptop's own keys resolved as default <- fleet ("mcptop"
 * object) <- server entry.
 *
 * Every client shape goes through one reader: the containers it keeps its
 * servers in are found first (config_containers), and each entry is read
 * by kind of key (config_keys), so an alias such as "serverUrl" is "url"
 * and a key another client uses for its own behaviour is a note rather
 * than silence.
 *
 * Structure is checked strictly and extras leniently. A broken entry gets
 * ->invalid and keeps its name; only a file that cannot be read or parsed
 * or has no server map fails whole. Every string kept is copied out of
 * cJSON, and the tree is deleted by the function that parsed it.
 *
 * Header and env values, whatever ${VAR} or ${input:ID} expands to and
 * what an envFile holds are secrets: no message built here quotes a value
 * (only key, header, variable, input and server names), and owned copies
 * are wiped before they are freed. URLs are shown only redacted.
 */
#include "engine/config.h"

#include "config_int.h"

#include <cjson/cJSON.h>
#include <ctype.h>
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

#include "engine/config_yaml.h"
#include "engine/envfile.h"
#include "engine/url.h"
#include "util/str.h"
#include "util/xmalloc.h"

#define CONFIG_MAX_FILE_BYTES   (16u * 1024 * 1024)
#define CONFIG_MAX_INT          INT_MAX
#define CONFIG_NOTE_NAMES       8       /* servers named per note */
#define CONFIG_HEADER_MAX       8192    /* one header, name and value */
#define CONFIG_TIMEOUT_MAX_S    3600    /* larger bare "timeout"s are ms */

/* What a key of a server entry means to mcptop. */
enum config_key {
    CONFIG_KEY_UNKNOWN,
    CONFIG_KEY_TYPE,            /* type, transportType (Cline) */
    CONFIG_KEY_URL,             /* url, serverUrl, httpUrl, uri */
    CONFIG_KEY_HEADERS,
    CONFIG_KEY_REQUEST,         /* requestOptions (Continue): its headers */
    CONFIG_KEY_COMMAND,         /* command (string, array or object), cmd */
    CONFIG_KEY_ARGS,
    CONFIG_KEY_ENV,             /* env, envs (Goose), environment (opencode) */
    CONFIG_KEY_ENVFILE,
    CONFIG_KEY_CWD,
    CONFIG_KEY_ENV_KEYS,        /* Goose: variables from its keyring */
    CONFIG_KEY_DISABLED,
    CONFIG_KEY_ENABLED,
    CONFIG_KEY_TIMEOUT,         /* another client's request timeout */
    CONFIG_KEY_OPT,             /* mcptop's own */
    CONFIG_KEY_NAME,            /* the name of a list entry */
    CONFIG_KEY_SILENT,          /* no bearing on a monitor */
    CONFIG_KEY_NOTE,            /* another client's behaviour: a note */
    CONFIG_KEY_OAUTH,           /* mcptop's "oauth" (config_oauth.c) */
    CONFIG_KEY_PROBE,           /* mcptop's "probe_tool" (config_probe.c) */
};

/* Notes for keys mcptop reads but does not apply. */
#define CONFIG_NOTE_TOOLS "it sets which tools the client may call, and " \
    "mcptop calls none"
#define CONFIG_NOTE_OAUTH "another client's way to authorize: mcptop reads " \
    "its own \"oauth\" object"
#define CONFIG_NOTE_DEV "VS Code's development mode (watch, debug)"

/* One known key: its kind, the transport it belongs to (-1: either) and,
 * for CONFIG_KEY_NOTE, why it is not applied. */
struct config_keydef {
    const char      *key;
    enum config_key  kind;
    int              transport;
    const char      *note;
};

static const struct config_keydef config_keys[] = {
    { "type", CONFIG_KEY_TYPE, -1, NULL },
    { "transportType", CONFIG_KEY_TYPE, -1, NULL },
    { "url", CONFIG_KEY_URL, CONFIG_HTTP, NULL },
    { "serverUrl", CONFIG_KEY_URL, CONFIG_HTTP, NULL },
    { "httpUrl", CONFIG_KEY_URL, CONFIG_HTTP, NULL },
    { "uri", CONFIG_KEY_URL, CONFIG_HTTP, NULL },
    { "headers", CONFIG_KEY_HEADERS, CONFIG_HTTP, NULL },
    { "requestOptions", CONFIG_KEY_REQUEST, CONFIG_HTTP, NULL },
    { "ca_file", CONFIG_KEY_OPT, CONFIG_HTTP, NULL },
    { "tls_insecure", CONFIG_KEY_OPT, CONFIG_HTTP, NULL },
    { "command", CONFIG_KEY_COMMAND, CONFIG_STDIO, NULL },
    { "cmd", CONFIG_KEY_COMMAND, CONFIG_STDIO, NULL },
    { "args", CONFIG_KEY_ARGS, CONFIG_STDIO, NULL },
    { "env", CONFIG_KEY_ENV, CONFIG_STDIO, NULL },
    { "envs", CONFIG_KEY_ENV, CONFIG_STDIO, NULL },
    { "environment", CONFIG_KEY_ENV, CONFIG_STDIO, NULL },
    { "envFile", CONFIG_KEY_ENVFILE, CONFIG_STDIO, NULL },
    { "cwd", CONFIG_KEY_CWD, CONFIG_STDIO, NULL },
    { "env_keys", CONFIG_KEY_ENV_KEYS, CONFIG_STDIO, NULL },
    { "disabled", CONFIG_KEY_DISABLED, -1, NULL },
    { "enabled", CONFIG_KEY_ENABLED, -1, NULL },
    { "timeout", CONFIG_KEY_TIMEOUT, -1, NULL },
    { "ping_interval_s", CONFIG_KEY_OPT, -1, NULL },
    { "timeout_ms", CONFIG_KEY_OPT, -1, NULL },
    { "open_deadline_ms", CONFIG_KEY_OPT, -1, NULL },
    { "teardown_ms", CONFIG_KEY_OPT, -1, NULL },
    { "max_message_bytes", CONFIG_KEY_OPT, -1, NULL },
    { "tags", CONFIG_KEY_OPT, -1, NULL },
    { "era", CONFIG_KEY_OPT, -1, NULL },
    { "name", CONFIG_KEY_NAME, -1, NULL },
    { "description", CONFIG_KEY_SILENT, -1, NULL },
    { "display_name", CONFIG_KEY_SILENT, -1, NULL },
    { "bundled", CONFIG_KEY_SILENT, -1, NULL },
    { "source", CONFIG_KEY_SILENT, -1, NULL },
    { "settings", CONFIG_KEY_SILENT, -1, NULL },
    { "gallery", CONFIG_KEY_SILENT, -1, NULL },
    { "version", CONFIG_KEY_SILENT, -1, NULL },
    { "$schema", CONFIG_KEY_SILENT, -1, NULL },
    { "autoApprove", CONFIG_KEY_NOTE, -1, CONFIG_NOTE_TOOLS },
    { "alwaysAllow", CONFIG_KEY_NOTE, -1, CONFIG_NOTE_TOOLS },
    { "disabledTools", CONFIG_KEY_NOTE, -1, CONFIG_NOTE_TOOLS },
    { "includeTools", CONFIG_KEY_NOTE, -1, CONFIG_NOTE_TOOLS },
    { "excludeTools", CONFIG_KEY_NOTE, -1, CONFIG_NOTE_TOOLS },
    { "allowedTools", CONFIG_KEY_NOTE, -1, CONFIG_NOTE_TOOLS },
    { "available_tools", CONFIG_KEY_NOTE, -1, CONFIG_NOTE_TOOLS },
    { "trust", CONFIG_KEY_NOTE, -1, CONFIG_NOTE_TOOLS },
    { "oauth", CONFIG_KEY_OAUTH, CONFIG_HTTP, NULL },
    { "probe_tool", CONFIG_KEY_PROBE, -1, NULL },
    { "authProviderType", CONFIG_KEY_NOTE, -1, CONFIG_NOTE_OAUTH },
    { "dev", CONFIG_KEY_NOTE, -1, CONFIG_NOTE_DEV },
};

/* The kinds of server map a file may hold. */
enum config_shape {
    CONFIG_SHAPE_MAP,           /* mcpServers, servers, mcp.servers */
    CONFIG_SHAPE_LIST,          /* mcpServers as a list (Continue) */
    CONFIG_SHAPE_OPENCODE,      /* mcp */
    CONFIG_SHAPE_ZED,           /* context_servers */
    CONFIG_SHAPE_GOOSE,         /* extensions */
};

/* One server map found in a file. */
struct config_container {
    const cJSON       *obj;
    enum config_shape  shape;
};

/* The most containers one file may hold (see config_containers). */
#define CONFIG_MAX_CONTAINERS 7

/* One note being gathered: its text and the servers it concerns. */
struct config_note {
    char   *text;
    char  **names;
    size_t  nnames;     /* servers concerned; the first
                           CONFIG_NOTE_NAMES are in names */
};

/* An ${input:ID} value already given during this parse (a secret). */
struct config_input_value {
    char *id;
    char *value;
};

/* A set of server names, each with a number (a server's index), by
 * open addressing, so that a repeated name is found in O(1) rather than
 * by comparing with every earlier server. */
struct config_name_slot {
    const char *name;           /* borrowed; NULL: empty */
    long        value;
};

struct config_names {
    struct config_name_slot *slot;
    size_t                   cap;   /* a power of two */
    size_t                   n;
};

/* The state of one parse: options, the file's inputs, notes, inputs
 * given so far and the directories ${userHome} and ${workspaceFolder}
 * name. */
struct config_ctx {
    struct config               *cfg;
    const struct config_options *opt;
    const cJSON                 *inputs;    /* VS Code "inputs", or NULL */
    struct config_note          *notes;
    size_t                       nnotes;
    struct config_input_value   *given;
    size_t                       ngiven;
    char                        *home;
    char                        *workspace;
    struct config_names          names;     /* of the servers loaded */
};

/* What an entry's keys leave to be applied after all of them are read. */
struct config_entry {
    const cJSON       *timeout;
    const cJSON       *envfile;
    const cJSON       *env_keys;
    bool               has_timeout_ms;
    enum config_shape  shape;
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
void
config_wipe_free(char *s)
{
    if (s == NULL)
        return;
    explicit_bzero(s, strlen(s));
    free(s);
}

/* True when key is one of the NULL-terminated list. */
bool
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
const char *
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
const char *
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

/* FNV-1a, 64 bits. */
static uint64_t
config_hash(const char *s)
{
    uint64_t h = 14695981039346656037ull;

    for (; *s != '\0'; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    return h;
}

/* The slot of name in x: where it is, or the empty one it would take. */
static struct config_name_slot *
config_names_slot(const struct config_names *x, const char *name)
{
    size_t i = (size_t)config_hash(name) & (x->cap - 1);

    while (x->slot[i].name != NULL && strcmp(x->slot[i].name, name) != 0)
        i = (i + 1) & (x->cap - 1);
    return &x->slot[i];
}

/* The number stored with name, or -1 when name is not in x. */
static long
config_names_find(const struct config_names *x, const char *name)
{
    const struct config_name_slot *sl;

    if (x->cap == 0)
        return -1;
    sl = config_names_slot(x, name);
    return sl->name != NULL ? sl->value : -1;
}

/* Add name (borrowed: it must outlive x) with value, unless it is in x
 * already. The table stays at most half full. */
static void
config_names_add(struct config_names *x, const char *name, long value)
{
    struct config_name_slot *sl;

    if ((x->n + 1) * 2 > x->cap) {
        struct config_names bigger = { NULL, x->cap ? x->cap * 2 : 64, 0 };
        size_t              i;

        bigger.slot = xcalloc(bigger.cap, sizeof *bigger.slot);
        for (i = 0; i < x->cap; i++) {
            if (x->slot[i].name != NULL)
                *config_names_slot(&bigger, x->slot[i].name) = x->slot[i];
        }
        bigger.n = x->n;
        free(x->slot);
        *x = bigger;
    }
    sl = config_names_slot(x, name);
    if (sl->name == NULL) {
        sl->name = name;
        sl->value = value;
        x->n++;
    }
}

/* Free the table (not the names). */
static void
config_names_done(struct config_names *x)
{
    free(x->slot);
    x->slot = NULL;
    x->cap = x->n = 0;
}

/* The definition of key in config_keys, or NULL when it is unknown. */
static const struct config_keydef *
config_keydef(const char *key)
{
    size_t i;

    for (i = 0; i < sizeof config_keys / sizeof config_keys[0]; i++) {
        if (strcmp(config_keys[i].key, key) == 0)
            return &config_keys[i];
    }
    return NULL;
}

/* See config.h. */
char *
config_input_env(const char *id)
{
    static const char prefix[] = "MCPTOP_INPUT_";
    char             *s = str_printf("%s%s", prefix, id);
    char             *p;

    for (p = s + sizeof prefix - 1; *p != '\0'; p++) {
        unsigned char c = (unsigned char)*p;

        *p = (char)(isalnum(c) && c < 0x80 ? toupper(c) : '_');
    }
    return s;
}

/* The "inputs" entry (VS Code) whose "id" is id, or NULL. */
static const cJSON *
config_input_decl(const struct config_ctx *ctx, const char *id)
{
    const cJSON *e;
    const cJSON *v;

    if (ctx->inputs == NULL)
        return NULL;
    cJSON_ArrayForEach(e, ctx->inputs) {
        v = cJSON_GetObjectItemCaseSensitive(e, "id");
        if (cJSON_IsString(v) && strcmp(v->valuestring, id) == 0)
            return e;
    }
    return NULL;
}

/*
 * The value of ${input:id}: given earlier in this parse, else from
 * MCPTOP_INPUT_<ID>, else asked through the options' input function, else
 * the input's "default". Borrowed until the parse ends; NULL with *cause
 * naming the variable to set.
 */
static const char *
config_input_value(struct config_ctx *ctx, const char *id, char **cause)
{
    char         shown[CONFIG_SHOWN_SIZE];
    const cJSON *decl;
    const cJSON *d;
    const char  *v;
    char        *env;
    size_t       i;

    for (i = 0; i < ctx->ngiven; i++) {
        if (strcmp(ctx->given[i].id, id) == 0)
            return ctx->given[i].value;
    }
    env = config_input_env(id);
    v = getenv(env);
    decl = config_input_decl(ctx, id);
    if (v == NULL && ctx->opt != NULL && ctx->opt->input != NULL) {
        d = decl != NULL ? cJSON_GetObjectItemCaseSensitive(decl,
            "description") : NULL;
        v = ctx->opt->input(ctx->opt->input_arg, id,
            cJSON_IsString(d) ? d->valuestring : NULL, decl != NULL
            && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(decl,
            "password")));
    }
    if (v == NULL && decl != NULL) {
        d = cJSON_GetObjectItemCaseSensitive(decl, "default");
        if (cJSON_IsString(d))
            v = d->valuestring;
    }
    if (v == NULL) {
        *cause = str_printf("input \"%s\" is not given (set %s)",
            config_shown(shown, id), env);
        free(env);
        return NULL;
    }
    free(env);
    ctx->given = xrealloc(ctx->given, (ctx->ngiven + 1) * sizeof *ctx->given);
    ctx->given[ctx->ngiven].id = xstrdup(id);
    ctx->given[ctx->ngiven].value = xstrdup(v);
    return ctx->given[ctx->ngiven++].value;
}

/*
 * The value of a predefined variable of VS Code and Cursor (userHome,
 * workspaceFolder, workspaceFolderBasename, pathSeparator, "/") named by
 * ref[0..n), or NULL when ref is none of them. *known tells which.
 */
static const char *
config_predefined(const struct config_ctx *ctx, const char *ref, size_t n,
    bool *known)
{
    const char *slash;

    *known = true;
    if (n == 8 && strncmp(ref, "userHome", n) == 0)
        return ctx->home;
    if (n == 15 && strncmp(ref, "workspaceFolder", n) == 0)
        return ctx->workspace;
    if (n == 23 && strncmp(ref, "workspaceFolderBasename", n) == 0) {
        if (ctx->workspace == NULL)
            return NULL;
        slash = strrchr(ctx->workspace, '/');
        return slash != NULL && slash[1] != '\0' ? slash + 1
            : ctx->workspace;
    }
    if ((n == 13 && strncmp(ref, "pathSeparator", n) == 0)
        || (n == 1 && ref[0] == '/'))
        return "/";
    *known = false;
    return NULL;
}

/*
 * Expand the reference whose body (between "${" and "}") is ref[0..n)
 * onto b: VAR, env:VAR (VS Code) or VAR:-default (used when VAR is unset
 * or empty); with a parse context also input:ID and the predefined
 * variables. 0, or -1 with *cause naming the variable.
 */
static int
config_expand_ref(struct config_ctx *ctx, struct config_buf *b,
    const char *ref, size_t n, char **cause)
{
    char        shown[CONFIG_SHOWN_SIZE];
    const char *dflt = NULL;
    const char *value;
    char       *name;
    size_t      namelen = n;
    size_t      i;
    bool        known;

    if (ctx != NULL && n > 6 && strncmp(ref, "input:", 6) == 0) {
        name = str_ndup(ref + 6, n - 6);
        value = config_input_value(ctx, name, cause);
        free(name);
        if (value == NULL)
            return -1;
        config_buf_add(b, value, strlen(value));
        return 0;
    }
    if (ctx != NULL) {
        value = config_predefined(ctx, ref, n, &known);
        if (known && value == NULL) {
            name = str_ndup(ref, n);
            *cause = str_printf("\"${%s}\": HOME or the current directory "
                "is not known", name);
            free(name);
            return -1;
        }
        if (known) {
            config_buf_add(b, value, strlen(value));
            return 0;
        }
    }
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

/* config_expand within a parse (ctx may be NULL: the environment only).
 * The partial result is wiped on failure. */
static char *
config_expand_ctx(struct config_ctx *ctx, const char *s, char **cause)
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
        if (config_expand_ref(ctx, &b, s + 2, (size_t)(end - s - 2),
            cause) != 0)
            goto fail;
        s = end + 1;
    }
    return b.p;

fail:
    config_buf_wipe(&b);
    return NULL;
}

/* See config.h. */
char *
config_expand(const char *s, char **cause)
{
    return config_expand_ctx(NULL, s, cause);
}

/* Append a warning (printf-style) to cfg->warnings. */
void
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

/*
 * Gather a note (printf-style text) about server name (NULL: about the
 * file): notes with the same text become one line naming every server.
 */
static void config_note(struct config_ctx *ctx, const char *name,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
config_note(struct config_ctx *ctx, const char *name, const char *fmt, ...)
{
    struct config_note *n = NULL;
    va_list             ap;
    char               *text;
    size_t              i;

    va_start(ap, fmt);
    text = str_vprintf(fmt, ap);
    va_end(ap);
    for (i = 0; i < ctx->nnotes; i++) {
        if (strcmp(ctx->notes[i].text, text) == 0) {
            n = &ctx->notes[i];
            free(text);
            break;
        }
    }
    if (n == NULL) {
        ctx->notes = xrealloc(ctx->notes,
            (ctx->nnotes + 1) * sizeof *ctx->notes);
        n = &ctx->notes[ctx->nnotes++];
        n->text = text;
        n->names = NULL;
        n->nnames = 0;
    }
    /* Only the first few names are shown; the rest are counted. */
    if (name != NULL && n->nnames < CONFIG_NOTE_NAMES) {
        n->names = xrealloc(n->names, (n->nnames + 1) * sizeof *n->names);
        n->names[n->nnames] = str_sanitized(name);
    }
    if (name != NULL)
        n->nnames++;
}

/* Turn the gathered notes into cfg->notes and free them. */
static void
config_notes_done(struct config_ctx *ctx)
{
    struct config *cfg = ctx->cfg;
    size_t         i, k;

    for (i = 0; i < ctx->nnotes; i++) {
        struct config_note *n = &ctx->notes[i];
        struct config_buf   b = { NULL, 0, 0 };

        config_buf_add(&b, n->text, strlen(n->text));
        for (k = 0; k < n->nnames && k < CONFIG_NOTE_NAMES; k++) {
            const char *sep = k > 0 ? ", " : n->nnames == 1 ? " (server "
                : " (servers ";

            config_buf_add(&b, sep, strlen(sep));
            config_buf_add(&b, n->names[k], strlen(n->names[k]));
        }
        if (n->nnames > CONFIG_NOTE_NAMES) {
            char more[40];

            snprintf(more, sizeof more, " and %zu more",
                n->nnames - CONFIG_NOTE_NAMES);
            config_buf_add(&b, more, strlen(more));
        }
        if (n->nnames > 0)
            config_buf_add(&b, ")", 1);
        if (cfg != NULL) {
            cfg->notes = xrealloc(cfg->notes,
                (cfg->nnotes + 1) * sizeof *cfg->notes);
            cfg->notes[cfg->nnotes++] = b.p;
        } else {
            free(b.p);
        }
        for (k = 0; k < n->nnames && k < CONFIG_NOTE_NAMES; k++)
            free(n->names[k]);
        free(n->names);
        free(n->text);
    }
    free(ctx->notes);
    ctx->notes = NULL;
    ctx->nnotes = 0;
}

/* True when v says something: not null, false, 0, "" or empty. */
static bool
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
        config_wipe_free(a[i]);
    free(a);
}

/*
 * Read v (key v->string) from element `from` on as an array of strings,
 * expanding ${VAR} (and, with ctx, ${input:ID} and the predefined
 * variables) when expand is set and refusing empty ones when nonempty is.
 * 0 with *out and *n set (caller frees), or -1 with *why (indexes as in
 * the file).
 */
static int
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
static int
config_kvs(struct config_ctx *ctx, const cJSON *v, bool headers,
    struct config_kv **out, size_t *n, char **why)
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
        x = config_expand_ctx(ctx, e->valuestring, &c);
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
        if (headers && strlen(e->string) + strlen(x) > CONFIG_HEADER_MAX) {
            /* It would go on every request, and libcurl refuses it. */
            size_t len = strlen(e->string) + strlen(x);

            config_wipe_free(x);
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
    free(s->url_shown);
    config_kvs_free(s->headers, s->nheaders);
    free(s->ca_file);
    free(s->command);
    config_strings_free(s->args, s->nargs);
    config_strings_free(s->args_shown, s->args_shown != NULL ? s->nargs : 0);
    config_kvs_free(s->env, s->nenv);
    free(s->cwd);
    config_strings_free(s->tags, s->ntags);
    free(s->source);
    free(s->origin);
    config_oauth_free(s->oauth);
    config_probe_free(s->probe);
    free(s->invalid);
}

/* Copy a "type" value into dst (size bytes) in lower case, without '-',
 * '_' and spaces: "Streamable_HTTP" and "streamableHttp" both give
 * "streamablehttp". */
static void
config_type_norm(char *dst, size_t size, const char *src)
{
    size_t n = 0;

    for (; *src != '\0' && n + 1 < size; src++) {
        if (*src == '-' || *src == '_' || *src == ' ')
            continue;
        dst[n++] = (char)tolower((unsigned char)*src);
    }
    dst[n] = '\0';
}

/* The transport a normalised "type" names: CONFIG_HTTP, CONFIG_STDIO, or
 * -1 when none. */
static int
config_type_transport(const char *norm)
{
    static const char *const http[] = {
        "http", "streamablehttp", "streamable", "sse", "remote", NULL
    };
    static const char *const stdio[] = { "stdio", "local", NULL };
    size_t i;

    for (i = 0; http[i] != NULL; i++) {
        if (strcmp(norm, http[i]) == 0)
            return CONFIG_HTTP;
    }
    for (i = 0; stdio[i] != NULL; i++) {
        if (strcmp(norm, stdio[i]) == 0)
            return CONFIG_STDIO;
    }
    return -1;
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
        } else if (k->kind == CONFIG_KEY_COMMAND) {
            if (cmd == NULL)
                cmd = e;
            else if (cmd2 == NULL && strcmp(cmd->string, e->string) != 0)
                cmd2 = e;
        }
    }
    s->transport = (cmd != NULL && url == NULL) ? CONFIG_STDIO : CONFIG_HTTP;
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
            : cJSON_IsFalse(e))
            s->disabled = true;
    }
    return 0;
}

/*
 * Look over the keys of a server entry: unknown ones and those of the
 * other transport (when known is set and they hold something) are
 * warnings, other clients' behaviour keys are notes. A repeated key that
 * mcptop reads sets *why unless it is already set.
 */
static void
config_server_scan(struct config_ctx *ctx, const struct config_server *s,
    const cJSON *entry, bool known, char **why)
{
    char                        shown_name[CONFIG_SHOWN_SIZE];
    char                        shown_key[CONFIG_SHOWN_SIZE];
    const struct config_keydef *k;
    const cJSON                *e;

    config_shown(shown_name, s->name);
    cJSON_ArrayForEach(e, entry) {
        config_shown(shown_key, e->string);
        k = config_keydef(e->string);
        if (k == NULL) {
            config_warn(ctx->cfg, "server \"%s\": unknown key \"%s\" "
                "(ignored)", shown_name, shown_key);
            continue;
        }
        if (k->kind == CONFIG_KEY_NOTE) {
            if (config_meaningful(e))
                config_note(ctx, s->name, "\"%s\" is ignored: %s",
                    shown_key, k->note);
            continue;
        }
        if (k->kind == CONFIG_KEY_SILENT || k->kind == CONFIG_KEY_NAME)
            continue;
        if (config_dup_key(entry, e)) {
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
}

/*
 * Read "command" as a string, an array (opencode: the command and its
 * arguments) or an object (Zed: {"path", "args", "env"}). 0, or -1 with
 * *why.
 */
static int
config_command(struct config_ctx *ctx, struct config_server *s,
    const cJSON *v, char **why)
{
    char         shown[CONFIG_SHOWN_SIZE];
    const cJSON *e;
    const char  *p;
    size_t       n;

    if (cJSON_IsArray(v)) {
        e = v->child;
        if (e == NULL || !cJSON_IsString(e)) {
            *why = str_printf("\"%s\" is %s, expected the command and its "
                "arguments as strings", v->string, e == NULL
                ? "an empty array" : "an array not starting with a string");
            return -1;
        }
        if (s->args_shown != NULL) {
            *why = str_printf("arguments given both in \"%s\" and in "
                "\"args\"", v->string);
            return -1;
        }
        p = e->valuestring + strspn(e->valuestring, " \t\r\n");
        if (*p == '\0') {
            *why = str_printf("empty command");
            return -1;
        }
        s->command = xstrdup(e->valuestring);
        if (config_strings(ctx, v, true, false, 1, &s->args, &s->nargs,
            why) != 0)
            return -1;
        return config_strings(ctx, v, false, false, 1, &s->args_shown, &n,
            why);
    }
    if (cJSON_IsObject(v)) {
        e = cJSON_GetObjectItemCaseSensitive(v, "path");
        if (!cJSON_IsString(e) || e->valuestring[strspn(e->valuestring,
            " \t\r\n")] == '\0') {
            *why = str_printf("\"%s\" is an object without a \"path\" "
                "string", v->string);
            return -1;
        }
        s->command = xstrdup(e->valuestring);
        cJSON_ArrayForEach(e, v) {
            if (strcmp(e->string, "path") == 0)
                continue;
            if (strcmp(e->string, "args") == 0) {
                if (s->args_shown != NULL) {
                    *why = str_printf("\"args\" given twice");
                    return -1;
                }
                if (config_strings(ctx, e, true, false, 0, &s->args,
                    &s->nargs, why) != 0
                    || config_strings(ctx, e, false, false, 0,
                    &s->args_shown, &n, why) != 0)
                    return -1;
            } else if (strcmp(e->string, "env") == 0) {
                if (s->env != NULL) {
                    *why = str_printf("\"env\" given twice");
                    return -1;
                }
                if (config_kvs(ctx, e, false, &s->env, &s->nenv, why) != 0)
                    return -1;
            } else {
                config_warn(ctx->cfg, "server \"%s\": unknown key "
                    "\"%s.%s\" (ignored)", config_shown(shown, s->name),
                    v->string, e->string);
            }
        }
        return 0;
    }
    if (!cJSON_IsString(v)) {
        *why = str_printf("\"%s\" is %s, expected a string", v->string,
            config_kind(v));
        return -1;
    }
    p = v->valuestring + strspn(v->valuestring, " \t\r\n");
    if (*p == '\0') {
        *why = str_printf("empty command");
        return -1;
    }
    s->command = xstrdup(v->valuestring);
    return 0;
}

/* Continue's "requestOptions": its "headers" are read, the rest noted.
 * 0, or -1 with *why. */
static int
config_request(struct config_ctx *ctx, struct config_server *s,
    const cJSON *v, char **why)
{
    char         shown[CONFIG_SHOWN_SIZE];
    const cJSON *e;

    if (!cJSON_IsObject(v)) {
        *why = str_printf("\"%s\" is %s, expected an object", v->string,
            config_kind(v));
        return -1;
    }
    cJSON_ArrayForEach(e, v) {
        if (strcmp(e->string, "headers") == 0) {
            if (s->headers != NULL) {
                *why = str_printf("headers given twice (\"headers\" and "
                    "\"%s.headers\")", v->string);
                return -1;
            }
            if (config_kvs(ctx, e, true, &s->headers, &s->nheaders,
                why) != 0)
                return -1;
        } else if (config_meaningful(e)) {
            config_note(ctx, s->name, "\"%s.%s\" is ignored", v->string,
                config_shown(shown, e->string));
        }
    }
    return 0;
}

/* Read one key of a server entry whose transport is known. 0 or -1. */
static int
config_server_key(struct config_ctx *ctx, struct config_server *s,
    struct config_entry *st, const cJSON *v, char **why)
{
    char                        shown[CONFIG_SHOWN_SIZE];
    const struct config_keydef *k = config_keydef(v->string);
    struct config_url           u;
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
        if (config_url_parse(v->valuestring, &u, why) != 0) {
            if (strstr(v->valuestring, "${") != NULL) {
                free(*why);
                *why = str_printf("\"%s\" uses \"${...}\", which mcptop "
                    "does not expand in a URL: write the URL out",
                    v->string);
            }
            return -1;
        }
        if (strstr(v->valuestring, "${") != NULL)
            config_warn(ctx->cfg, "server \"%s\": \"%s\" is not expanded; "
                "\"${\" is kept as written", config_shown(shown, s->name),
                v->string);
        s->url = xstrdup(v->valuestring);
        s->url_shown = url_redact(s->url);
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
        s->cwd = xstrdup(v->valuestring);
        return 0;
    case CONFIG_KEY_ENV_KEYS:
        st->env_keys = v;
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
            return 0;
        }
        return config_oauth(ctx->cfg, s->name, v, &s->oauth, why);
    default:
        return 0;
    }
}

/* Apply another client's "timeout": seconds for Goose and for values up
 * to CONFIG_TIMEOUT_MAX_S (Cline writes seconds), else milliseconds
 * (Gemini CLI, Amazon Q, opencode); mcptop's "timeout_ms" wins. */
static void
config_entry_timeout(struct config_ctx *ctx, struct config_server *s,
    const struct config_entry *st)
{
    char         shown[CONFIG_SHOWN_SIZE];
    const cJSON *v = st->timeout;
    double       ms;
    bool         seconds;

    if (v == NULL)
        return;
    if (st->has_timeout_ms) {
        config_note(ctx, s->name, "\"timeout\" is ignored: \"timeout_ms\" "
            "is set");
        return;
    }
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)
        || v->valuedouble <= 0) {
        config_warn(ctx->cfg, "server \"%s\": \"timeout\" is not a positive "
            "number (ignored)", config_shown(shown, s->name));
        return;
    }
    if (st->shape == CONFIG_SHAPE_GOOSE)
        seconds = true;
    else if (st->shape == CONFIG_SHAPE_OPENCODE)
        seconds = false;
    else
        seconds = v->valuedouble <= CONFIG_TIMEOUT_MAX_S;
    ms = round(seconds ? v->valuedouble * 1000.0 : v->valuedouble);
    if (ms < 1 || ms > CONFIG_MAX_INT) {
        config_warn(ctx->cfg, "server \"%s\": \"timeout\" is out of range "
            "(ignored)", config_shown(shown, s->name));
        return;
    }
    s->timeout_ms = (long)ms;
    config_note(ctx, s->name, "\"timeout\" is read as the request timeout, "
        "in %s", seconds ? "seconds (as Cline and Goose write it)"
        : "milliseconds (as Gemini CLI, Amazon Q and opencode write it)");
}

/*
 * Read the envFile named by v and add each of its variables that "env"
 * does not set. The path may use ${userHome}, ${workspaceFolder} (the
 * current directory), ${VAR} and a leading "~". 0, or -1 with *why.
 */
static int
config_entry_envfile(struct config_ctx *ctx, struct config_server *s,
    const cJSON *v, char **why)
{
    struct config_kv *kv = NULL;
    char             *path;
    char             *shown;
    char             *c = NULL;
    size_t            n = 0, i, k;

    path = config_expand_ctx(ctx, v->valuestring, &c);
    if (path == NULL) {
        *why = str_printf("\"%s\": %s", v->string, c);
        free(c);
        return -1;
    }
    if (path[0] == '~' && (path[1] == '/' || path[1] == '\0')) {
        char *full;

        if (ctx->home == NULL) {
            config_wipe_free(path);
            *why = str_printf("\"%s\": \"~\" but HOME is not set",
                v->string);
            return -1;
        }
        full = str_printf("%s%s", ctx->home, path + 1);
        config_wipe_free(path);
        path = full;
    }
    shown = str_sanitized(v->valuestring);
    if (envfile_read(path, shown, &kv, &n, why) != 0) {
        free(shown);
        config_wipe_free(path);
        return -1;
    }
    free(shown);
    config_wipe_free(path);
    s->env = xrealloc(s->env, (s->nenv + n + 1) * sizeof *s->env);
    k = s->nenv;
    for (i = 0; i < n; i++) {
        bool set = false;

        for (size_t j = 0; j < k; j++) {
            if (strcmp(s->env[j].name, kv[i].name) == 0)
                set = true;
        }
        if (set) {
            free(kv[i].name);
            config_wipe_free(kv[i].value);
            continue;
        }
        s->env[s->nenv++] = kv[i];
    }
    free(kv);
    return 0;
}

/* Goose's "env_keys": variables it takes from its keyring; here they come
 * from mcptop's environment, which the server inherits. */
static void
config_entry_env_keys(struct config_ctx *ctx, struct config_server *s,
    const cJSON *v)
{
    char         shown_name[CONFIG_SHOWN_SIZE];
    char         shown_key[CONFIG_SHOWN_SIZE];
    const cJSON *e;
    size_t       i;
    bool         set;

    if (!config_meaningful(v))
        return;
    config_shown(shown_name, s->name);
    if (!cJSON_IsArray(v)) {
        config_warn(ctx->cfg, "server \"%s\": \"%s\" is %s, expected an "
            "array of names (ignored)", shown_name, v->string,
            config_kind(v));
        return;
    }
    config_note(ctx, s->name, "\"%s\" (Goose's keyring) is read from "
        "mcptop's environment", v->string);
    cJSON_ArrayForEach(e, v) {
        if (!cJSON_IsString(e))
            continue;
        set = getenv(e->valuestring) != NULL;
        for (i = 0; i < s->nenv && !set; i++)
            set = strcmp(s->env[i].name, e->valuestring) == 0;
        if (!set)
            config_warn(ctx->cfg, "server \"%s\": %s \"%s\" is not set in "
                "mcptop's environment (Goose keeps it in its keyring)",
                shown_name, v->string, config_shown(shown_key,
                e->valuestring));
    }
}

/*
 * Fill s from one entry of a server map (the servers before it in the
 * config are loaded). Problems go to s->invalid or the warnings.
 */
static void
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
        s->invalid = str_printf("duplicate server name \"%s\" (the first "
            "declaration is used)", config_shown(shown, s->name));
        return;
    }
    config_names_add(&ctx->names, s->name, (long)(s - ctx->cfg->servers));
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
        s->invalid = why;
        return;
    }
    cJSON_ArrayForEach(e, entry) {
        if (config_server_key(ctx, s, &st, e, &why) != 0) {
            s->invalid = why;
            return;
        }
    }
    config_entry_timeout(ctx, s, &st);
    if (st.envfile != NULL && config_entry_envfile(ctx, s, st.envfile,
        &why) != 0) {
        s->invalid = why;
        return;
    }
    if (st.env_keys != NULL)
        config_entry_env_keys(ctx, s, st.env_keys);
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

/* The top-level keys mcptop reads, which must not repeat. */
static const char *const config_top_keys[] = {
    "mcpServers", "servers", "mcptop", "mcp", "context_servers",
    "extensions", "inputs", NULL
};

/* What a file with no server map is told mcptop looked for. */
#define CONFIG_LOOKED_FOR "looked for \"mcpServers\" (an object, or a " \
    "list as Continue writes it), \"servers\" (VS Code), \"mcp\": " \
    "{\"servers\"} (VS Code settings), \"mcp\" (opencode), " \
    "\"context_servers\" (Zed), \"extensions\" (Goose) and " \
    "\"projects\" for this directory (Claude Code)"

/* True when the normalised "type" of entry e is one of names. */
static bool
config_entry_type_in(const cJSON *e, const char *const *names)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, "type");
    char         norm[32];
    size_t       i;

    if (!cJSON_IsString(t))
        return false;
    config_type_norm(norm, sizeof norm, t->valuestring);
    for (i = 0; names[i] != NULL; i++) {
        if (strcmp(norm, names[i]) == 0)
            return true;
    }
    return false;
}

/* True when some member of map is an entry as opencode writes them. */
static bool
config_looks_opencode(const cJSON *map)
{
    static const char *const types[] = { "local", "remote", NULL };
    const cJSON             *e;

    cJSON_ArrayForEach(e, map) {
        if (cJSON_IsObject(e) && (config_entry_type_in(e, types)
            || cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(e,
            "command"))))
            return true;
    }
    return false;
}

/* True when some member of map is an extension as Goose writes them. */
static bool
config_looks_goose(const cJSON *map)
{
    const cJSON *e;

    cJSON_ArrayForEach(e, map) {
        if (cJSON_IsObject(e)
            && (cJSON_GetObjectItemCaseSensitive(e, "cmd") != NULL
            || cJSON_GetObjectItemCaseSensitive(e, "uri") != NULL
            || cJSON_IsString(cJSON_GetObjectItemCaseSensitive(e, "type"))))
            return true;
    }
    return false;
}

/* Claude Code's servers for the current directory in ~/.claude.json:
 * root.projects[cwd].mcpServers, or NULL. */
static const cJSON *
config_claude_project(const cJSON *root, const char *cwd)
{
    const cJSON *projects = cJSON_GetObjectItemCaseSensitive(root,
        "projects");
    const cJSON *p;
    const cJSON *m;

    if (cwd == NULL || !cJSON_IsObject(projects))
        return NULL;
    p = cJSON_GetObjectItemCaseSensitive(projects, cwd);
    if (!cJSON_IsObject(p))
        return NULL;
    m = cJSON_GetObjectItemCaseSensitive(p, "mcpServers");
    return cJSON_IsObject(m) ? m : NULL;
}

/* Add one container to out[*n]. */
static void
config_container_add(struct config_container *out, size_t *n,
    const cJSON *obj, enum config_shape shape)
{
    out[*n].obj = obj;
    out[*n].shape = shape;
    (*n)++;
}

/*
 * Find the server maps of root (see config.h) into out (room for
 * CONFIG_MAX_CONTAINERS), and VS Code's "inputs" into *inputs. 0 with *n
 * set (0 when there is none), or -1 with *cause for a map of the wrong
 * type.
 */
static int
config_containers(const cJSON *root, const char *origin, const char *cwd,
    struct config_container *out, size_t *n, const cJSON **inputs,
    char **cause)
{
    const cJSON *m;
    const cJSON *e;
    bool         list = true;

    *n = 0;
    *inputs = NULL;
    m = cJSON_GetObjectItemCaseSensitive(root, "mcpServers");
    if (m != NULL) {
        if (cJSON_IsArray(m)) {
            cJSON_ArrayForEach(e, m) {
                if (!cJSON_IsObject(e))
                    list = false;
            }
        }
        if (cJSON_IsObject(m)) {
            config_container_add(out, n, m, CONFIG_SHAPE_MAP);
        } else if (cJSON_IsArray(m) && list) {
            config_container_add(out, n, m, CONFIG_SHAPE_LIST);
        } else {
            *cause = str_printf("%s: \"mcpServers\" is %s, expected an "
                "object", origin, config_kind(m));
            return -1;
        }
    }
    m = cJSON_GetObjectItemCaseSensitive(root, "servers");
    if (m != NULL) {
        if (!cJSON_IsObject(m)) {
            *cause = str_printf("%s: \"servers\" is %s, expected an object",
                origin, config_kind(m));
            return -1;
        }
        config_container_add(out, n, m, CONFIG_SHAPE_MAP);
    }
    e = cJSON_GetObjectItemCaseSensitive(root, "inputs");
    if (cJSON_IsArray(e))
        *inputs = e;
    m = cJSON_GetObjectItemCaseSensitive(root, "mcp");
    if (cJSON_IsObject(m)) {
        e = cJSON_GetObjectItemCaseSensitive(m, "servers");
        if (e != NULL) {
            if (!cJSON_IsObject(e)) {
                *cause = str_printf("%s: \"mcp.servers\" is %s, expected an "
                    "object", origin, config_kind(e));
                return -1;
            }
            config_container_add(out, n, e, CONFIG_SHAPE_MAP);
            e = cJSON_GetObjectItemCaseSensitive(m, "inputs");
            if (cJSON_IsArray(e) && *inputs == NULL)
                *inputs = e;
        } else if (config_looks_opencode(m)) {
            config_container_add(out, n, m, CONFIG_SHAPE_OPENCODE);
        }
    }
    m = cJSON_GetObjectItemCaseSensitive(root, "context_servers");
    if (m != NULL) {
        if (!cJSON_IsObject(m)) {
            *cause = str_printf("%s: \"context_servers\" is %s, expected an "
                "object", origin, config_kind(m));
            return -1;
        }
        config_container_add(out, n, m, CONFIG_SHAPE_ZED);
    }
    m = cJSON_GetObjectItemCaseSensitive(root, "extensions");
    if (cJSON_IsObject(m) && config_looks_goose(m))
        config_container_add(out, n, m, CONFIG_SHAPE_GOOSE);
    m = config_claude_project(root, cwd);
    if (m != NULL)
        config_container_add(out, n, m, CONFIG_SHAPE_MAP);
    return 0;
}

/*
 * True when entry e of a container is not a server mcptop can run (a
 * Goose built-in, a Zed extension's server); the reason is noted.
 */
static bool
config_entry_skipped(struct config_ctx *ctx, const cJSON *e,
    const char *name, enum config_shape shape)
{
    static const char *const goose_inner[] = {
        "builtin", "platform", "frontend", "inlinepython", NULL
    };

    if (!cJSON_IsObject(e))
        return false;
    if (shape == CONFIG_SHAPE_GOOSE && config_entry_type_in(e, goose_inner)) {
        config_note(ctx, name, "skipped: a Goose extension that runs inside "
            "Goose, not a server");
        return true;
    }
    if (shape == CONFIG_SHAPE_ZED
        && cJSON_GetObjectItemCaseSensitive(e, "command") == NULL
        && cJSON_GetObjectItemCaseSensitive(e, "url") == NULL) {
        config_note(ctx, name, "skipped: a server a Zed extension starts "
            "(its command is not in the settings)");
        return true;
    }
    return false;
}

/* Set s to an invalid server called name (a list entry without one). */
static void
config_server_unnamed(struct config_ctx *ctx, struct config_server *s,
    const char *name)
{
    config_server_defaults(s);
    s->name = xstrdup(name);
    s->origin = xstrdup(ctx->cfg->origin);
    s->invalid = str_printf("a list entry needs a \"name\" string");
}

/* Free what a parse context owns; its notes go to ctx->cfg. */
static void
config_ctx_done(struct config_ctx *ctx)
{
    size_t i;

    config_notes_done(ctx);
    config_names_done(&ctx->names);
    for (i = 0; i < ctx->ngiven; i++) {
        free(ctx->given[i].id);
        config_wipe_free(ctx->given[i].value);
    }
    free(ctx->given);
    free(ctx->home);
    free(ctx->workspace);
}

/* Build *out from a parsed document. 0, or -1 with *cause. */
static int
config_from_json(const cJSON *root, const char *origin,
    const struct config_options *opt, struct config **out, char **cause)
{
    struct config_container  cont[CONFIG_MAX_CONTAINERS];
    struct config_server     fleet;
    struct config_ctx        ctx = { .opt = opt };
    struct config           *cfg;
    const cJSON             *inputs = NULL;
    const cJSON             *e;
    const char              *home;
    char                     cwd[PATH_MAX];
    char                     name[64];
    size_t                   ncont = 0;
    size_t                   count = 0;
    size_t                   i, k;

    if (!cJSON_IsObject(root)) {
        *cause = str_printf("%s: top level is %s, expected an object",
            origin, config_kind(root));
        return -1;
    }
    cJSON_ArrayForEach(e, root) {
        if (config_in(config_top_keys, e->string)
            && config_dup_key(root, e)) {
            *cause = str_printf("%s: duplicate key \"%s\"", origin,
                e->string);
            return -1;
        }
    }
    if (getcwd(cwd, sizeof cwd) == NULL)
        cwd[0] = '\0';
    if (config_containers(root, origin, cwd[0] != '\0' ? cwd : NULL, cont,
        &ncont, &inputs, cause) != 0)
        return -1;
    e = cJSON_GetObjectItemCaseSensitive(root, "mcptop");
    if (ncont == 0 && (opt == NULL || !opt->allow_none)) {
        *cause = str_printf("%s: no \"mcpServers\" or \"servers\" object "
            "(%s)", origin, CONFIG_LOOKED_FOR);
        return -1;
    }

    cfg = xcalloc(1, sizeof *cfg);
    cfg->origin = xstrdup(origin);
    ctx.cfg = cfg;
    ctx.inputs = inputs;
    home = getenv("HOME");
    ctx.home = home != NULL && home[0] != '\0' ? xstrdup(home) : NULL;
    ctx.workspace = cwd[0] != '\0' ? xstrdup(cwd) : NULL;
    if (ncont == 0)
        config_note(&ctx, NULL, "%s: no server map in it", origin);
    config_server_defaults(&fleet);
    if (e != NULL && config_fleet_load(cfg, &fleet, e, cause) != 0) {
        config_server_done(&fleet);
        config_ctx_done(&ctx);
        config_free(cfg);
        return -1;
    }
    for (i = 0; i < ncont; i++)
        count += (size_t)cJSON_GetArraySize(cont[i].obj);
    cfg->servers = xcalloc(count + 1, sizeof *cfg->servers);
    for (i = 0; i < ncont; i++) {
        k = 0;
        cJSON_ArrayForEach(e, cont[i].obj) {
            struct config_server *s = &cfg->servers[cfg->nservers];
            const cJSON          *nm;

            if (cont[i].shape == CONFIG_SHAPE_LIST) {
                nm = cJSON_GetObjectItemCaseSensitive(e, "name");
                if (!cJSON_IsString(nm)) {
                    snprintf(name, sizeof name, "mcpServers[%zu]", k++);
                    config_server_unnamed(&ctx, s, name);
                    cfg->nservers++;
                    continue;
                }
                k++;
            } else {
                nm = NULL;
            }
            if (config_entry_skipped(&ctx, e, nm != NULL ? nm->valuestring
                : e->string, cont[i].shape))
                continue;
            config_server_load(&ctx, s, nm != NULL ? nm->valuestring
                : e->string, e, &fleet, cont[i].shape);
            cfg->nservers++;
        }
    }
    config_server_done(&fleet);
    config_ctx_done(&ctx);
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

/* The formats a config may be in. */
enum config_format {
    CONFIG_FORMAT_JSON,
    CONFIG_FORMAT_YAML,
    CONFIG_FORMAT_TOML,
};

/* True when line[0..n) is a TOML table header ("[a.b]" or "[[a]]"). */
static bool
config_toml_header(const char *line, size_t n)
{
    size_t i = 0;

    while (n > 0 && strchr(" \t\r", line[n - 1]) != NULL)
        n--;
    if (n < 3 || line[0] != '[' || line[n - 1] != ']')
        return false;
    for (i = 1; i + 1 < n; i++) {
        char c = line[i];

        if (!(isalnum((unsigned char)c) || strchr("_-.\"' []", c) != NULL))
            return false;
    }
    return true;
}

/* True when line[0..n) is a TOML "key = value" line. */
static bool
config_toml_pair(const char *line, size_t n)
{
    size_t i = 0;

    while (i < n && (isalnum((unsigned char)line[i])
        || strchr("_-.\"", line[i]) != NULL))
        i++;
    if (i == 0)
        return false;
    while (i < n && (line[i] == ' ' || line[i] == '\t'))
        i++;
    return i < n && line[i] == '=' && (i + 1 >= n || line[i + 1] != '=');
}

/*
 * The format of a config: by origin's extension (.json/.jsonc/.json5,
 * .yaml/.yml, .toml), else by its first significant line: '{' or '[' or
 * a comment in the JSONC style is JSON, a TOML table header or
 * "key = value" is TOML, anything else YAML.
 */
static enum config_format
config_format(const char *text, size_t len, const char *origin)
{
    const char *base = strrchr(origin, '/');
    const char *dot;
    const char *p = text;
    const char *end = text + len;
    size_t      n;

    base = base != NULL ? base + 1 : origin;
    dot = strrchr(base, '.');
    if (dot != NULL && dot != base) {
        if (strcasecmp(dot, ".toml") == 0)
            return CONFIG_FORMAT_TOML;
        if (strcasecmp(dot, ".yaml") == 0 || strcasecmp(dot, ".yml") == 0)
            return CONFIG_FORMAT_YAML;
        if (strcasecmp(dot, ".json") == 0 || strcasecmp(dot, ".jsonc") == 0
            || strcasecmp(dot, ".json5") == 0)
            return CONFIG_FORMAT_JSON;
    }
    while (p < end) {
        while (p < end && strchr(" \t\r\n", *p) != NULL)
            p++;
        if (p >= end)
            break;
        n = (size_t)((const char *)memchr(p, '\n', (size_t)(end - p)) != NULL
            ? (const char *)memchr(p, '\n', (size_t)(end - p)) - p
            : end - p);
        if (*p == '#') {            /* a YAML or TOML comment */
            p += n;
            continue;
        }
        if (*p == '[' && config_toml_header(p, n))
            return CONFIG_FORMAT_TOML;
        if (*p == '{' || *p == '[' || *p == '/')
            return CONFIG_FORMAT_JSON;
        if (config_toml_pair(p, n))
            return CONFIG_FORMAT_TOML;
        return CONFIG_FORMAT_YAML;
    }
    return CONFIG_FORMAT_JSON;
}

/* Parse JSON text into *root. 0, or -1 with *cause naming the position. */
static int
config_parse_json(const char *text, size_t len, const char *origin,
    cJSON **root, char **cause)
{
    const char *nul;
    const char *end = NULL;
    char       *copy;
    size_t      off;

    *root = NULL;
    nul = memchr(text, '\0', len);
    if (nul != NULL) {
        *cause = config_json_error(text, (size_t)(nul - text), origin);
        return -1;
    }
    copy = xmalloc(len + 1);
    memcpy(copy, text, len);
    copy[len] = '\0';
    config_jsonc_blank(copy, len);
    *root = cJSON_ParseWithLengthOpts(copy, len, &end, 0);
    off = end != NULL ? (size_t)(end - copy) : 0;
    if (*root != NULL) {
        while (off < len && strchr(" \t\r\n", copy[off]) != NULL)
            off++;
    }
    explicit_bzero(copy, len);
    free(copy);
    if (*root == NULL || off < len) {
        *cause = config_json_error(text, off < len ? off : len, origin);
        cJSON_Delete(*root);
        *root = NULL;
        return -1;
    }
    return 0;
}

/* See config.h. */
int
config_parse(const char *text, size_t len, const char *origin,
    struct config **out, char **cause)
{
    return config_parse_with(text, len, origin, NULL, out, cause);
}

/* See config.h. */
int
config_parse_with(const char *text, size_t len, const char *origin,
    const struct config_options *opt, struct config **out, char **cause)
{
    cJSON  *root = NULL;
    size_t  off;
    int     rc;

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
    switch (config_format(text, len, origin)) {
    case CONFIG_FORMAT_TOML:
        *cause = str_printf("%s: TOML (Codex's config.toml) is not read: "
            "Debian has no C library for TOML. Give mcptop the same "
            "servers as JSON with -c: each [mcp_servers.NAME] table "
            "becomes {\"mcpServers\": {\"NAME\": {\"command\": \"...\", "
            "\"args\": [...], \"env\": {...}}}}, or "
            "{\"url\": \"https://...\"} for a remote one", origin);
        return -1;
    case CONFIG_FORMAT_YAML:
        root = config_yaml_parse(text, len, origin, cause);
        if (root == NULL)
            return -1;
        break;
    default:
        if (config_parse_json(text, len, origin, &root, cause) != 0)
            return -1;
        break;
    }
    rc = config_from_json(root, origin, opt, out, cause);
    cJSON_Delete(root);
    return rc;
}

/*
 * Read fd to its end into *buf (caller wipes and frees) and *len; size is
 * the file's size when known (0 otherwise). 0, or -1 with *cause naming
 * name.
 */
static int
config_read_fd(int fd, const char *name, size_t size, char **buf,
    size_t *len, char **cause)
{
    size_t  cap = size > 0 ? size + 1 : 64 * 1024;
    ssize_t n;
    char   *p;

    *len = 0;
    *buf = xmalloc(cap);
    for (;;) {
        if (*len == cap) {
            if (cap > CONFIG_MAX_FILE_BYTES) {
                *cause = str_printf("%s: larger than 16 MiB", name);
                return -1;
            }
            cap = cap * 2 > CONFIG_MAX_FILE_BYTES + 1
                ? CONFIG_MAX_FILE_BYTES + 1 : cap * 2;
            /* Grow by copying, so no secret is left in freed memory. */
            p = xmalloc(cap);
            memcpy(p, *buf, *len);
            explicit_bzero(*buf, *len);
            free(*buf);
            *buf = p;
        }
        n = read(fd, *buf + *len, cap - *len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            *cause = str_printf("%s: %s", name, strerror(errno));
            return -1;
        }
        if (n == 0)
            return 0;
        *len += (size_t)n;
    }
}

/* See config.h. The text is wiped after parsing. */
int
config_load_fd(int fd, const char *origin, const struct config_options *opt,
    struct config **out, char **cause)
{
    char  *buf = NULL;
    size_t len = 0;
    int    rc = -1;

    *out = NULL;
    *cause = NULL;
    if (config_read_fd(fd, origin, 0, &buf, &len, cause) == 0)
        rc = config_parse_with(buf, len, origin, opt, out, cause);
    explicit_bzero(buf, len);
    free(buf);
    return rc;
}

/* See config.h. */
int
config_load_file(const char *path, struct config **out, char **cause)
{
    return config_load_file_with(path, NULL, out, cause);
}

/* See config.h. The file text is wiped after parsing. */
int
config_load_file_with(const char *path, const struct config_options *opt,
    struct config **out, char **cause)
{
    struct stat st;
    char       *buf = NULL;
    size_t      size = 0;
    size_t      len = 0;
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
        size = (size_t)st.st_size;
    }
    if (config_read_fd(fd, path, size, &buf, &len, cause) == 0)
        rc = config_parse_with(buf, len, path, opt, out, cause);
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
    s->origin = xstrdup(cfg->origin);
    s->url = xstrdup(url);
    s->url_shown = url_redact(url);
    if (config_url_parse(url, &u, &why) != 0) {
        /* The name is shown: the redacted form, never the secrets. */
        s->name = xstrdup(s->url_shown);
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
struct config *
config_for_command(char *const *argv, size_t argc)
{
    struct config        *cfg;
    struct config_server *s;
    const char           *base;
    size_t                i;

    cfg = xcalloc(1, sizeof *cfg);
    cfg->origin = xstrdup("command line");
    cfg->servers = xcalloc(1, sizeof *cfg->servers);
    cfg->nservers = 1;
    s = &cfg->servers[0];
    config_server_defaults(s);
    s->transport = CONFIG_STDIO;
    s->origin = xstrdup(cfg->origin);
    if (argc == 0 || argv[0][strspn(argv[0], " \t\r\n")] == '\0') {
        s->name = xstrdup("command line");
        s->invalid = str_printf("empty command after \"--\"");
        return cfg;
    }
    base = strrchr(argv[0], '/');
    base = base != NULL && base[1] != '\0' ? base + 1 : argv[0];
    s->name = xstrdup(base);
    s->command = xstrdup(argv[0]);
    s->nargs = argc - 1;
    s->args = xcalloc(argc, sizeof *s->args);
    s->args_shown = xcalloc(argc, sizeof *s->args_shown);
    for (i = 1; i < argc; i++) {
        s->args[i - 1] = xstrdup(argv[i]);
        s->args_shown[i - 1] = xstrdup(argv[i]);
    }
    return cfg;
}

/* Append n strings of from to *to (moving them). */
static void
config_move_strings(char ***to, size_t *nto, char **from, size_t n)
{
    if (n == 0)
        return;
    *to = xrealloc(*to, (*nto + n) * sizeof **to);
    memcpy(*to + *nto, from, n * sizeof *from);
    *nto += n;
}

/* See config.h. */
int
config_merge(struct config *into, struct config *from, bool rename,
    char **cause)
{
    struct config_names ix = { NULL, 0, 0 };
    char                shown[CONFIG_SHOWN_SIZE];
    char              **names;
    size_t              i;
    long                k;

    *cause = NULL;
    for (i = 0; i < into->nservers; i++)
        config_names_add(&ix, into->servers[i].name, (long)i);
    names = xcalloc(from->nservers + 1, sizeof *names);
    for (i = 0; i < from->nservers; i++) {
        struct config_server *s = &from->servers[i];

        names[i] = xstrdup(s->name);
        k = config_names_find(&ix, names[i]);
        if (k >= 0 && rename && s->source != NULL) {
            free(names[i]);
            names[i] = str_printf("%s@%s", s->name, s->source);
            k = config_names_find(&ix, names[i]);
        }
        if (k >= 0) {
            *cause = str_printf("server \"%s\" is declared in both %s and "
                "%s", config_shown(shown, names[i]),
                into->servers[k].origin, s->origin);
            for (size_t j = 0; j <= i; j++)
                free(names[j]);
            free(names);
            config_names_done(&ix);
            return -1;
        }
        /* A name repeated within from is already invalid there: -2 keeps
         * it from being taken for one of into's. */
        config_names_add(&ix, names[i], -2);
    }
    config_names_done(&ix);
    into->servers = xrealloc(into->servers,
        (into->nservers + from->nservers + 1) * sizeof *into->servers);
    for (i = 0; i < from->nservers; i++) {
        struct config_server *s = &from->servers[i];

        free(s->name);
        s->name = names[i];
        into->servers[into->nservers++] = *s;
    }
    free(names);
    from->nservers = 0;
    config_move_strings(&into->warnings, &into->nwarnings, from->warnings,
        from->nwarnings);
    from->nwarnings = 0;
    config_move_strings(&into->notes, &into->nnotes, from->notes,
        from->nnotes);
    from->nnotes = 0;
    {
        char *origin = str_printf("%s, %s", into->origin, from->origin);

        free(into->origin);
        into->origin = origin;
    }
    config_free(from);
    return 0;
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
    for (i = 0; i < cfg->nnotes; i++)
        free(cfg->notes[i]);
    free(cfg->notes);
    free(cfg->origin);
    free(cfg);
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

/* --- comparing declarations (a reload keeps what did not change) -------- */

static bool
config_str_same(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL &&
        strcmp(a, b) == 0);
}

static bool
config_kvs_same(const struct config_kv *a, size_t na,
    const struct config_kv *b, size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++) {
        if (!config_str_same(a[i].name, b[i].name) ||
            !config_str_same(a[i].value, b[i].value))
            return false;
    }
    return true;
}

static bool
config_strv_same(char *const *a, size_t na, char *const *b, size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++) {
        if (!config_str_same(a[i], b[i]))
            return false;
    }
    return true;
}

bool
config_server_same(const struct config_server *a,
    const struct config_server *b)
{
    const struct config_oauth *oa = a->oauth, *ob = b->oauth;

    if (!config_str_same(a->name, b->name) || a->transport != b->transport ||
        !config_str_same(a->url, b->url) ||
        !config_kvs_same(a->headers, a->nheaders, b->headers, b->nheaders) ||
        !config_str_same(a->ca_file, b->ca_file) ||
        a->tls_insecure != b->tls_insecure ||
        !config_str_same(a->command, b->command) ||
        !config_strv_same(a->args, a->nargs, b->args, b->nargs) ||
        !config_kvs_same(a->env, a->nenv, b->env, b->nenv) ||
        !config_str_same(a->cwd, b->cwd) ||
        a->ping_interval_ms != b->ping_interval_ms ||
        a->timeout_ms != b->timeout_ms ||
        a->open_deadline_ms != b->open_deadline_ms ||
        a->teardown_ms != b->teardown_ms ||
        a->max_message_bytes != b->max_message_bytes || a->era != b->era ||
        !config_strv_same(a->tags, a->ntags, b->tags, b->ntags) ||
        a->disabled != b->disabled || !config_str_same(a->invalid, b->invalid))
        return false;
    if ((a->probe == NULL) != (b->probe == NULL) || (a->probe != NULL &&
        (!config_str_same(a->probe->name, b->probe->name) ||
        !config_str_same(a->probe->arguments, b->probe->arguments) ||
        !config_str_same(a->probe->expect_text, b->probe->expect_text) ||
        a->probe->interval_ms != b->probe->interval_ms ||
        a->probe->timeout_ms != b->probe->timeout_ms)))
        return false;
    if ((oa == NULL) != (ob == NULL))
        return false;
    return oa == NULL || (config_str_same(oa->client_id, ob->client_id) &&
        config_str_same(oa->client_secret, ob->client_secret) &&
        config_str_same(oa->token_endpoint_auth_method,
        ob->token_endpoint_auth_method) &&
        config_str_same(oa->private_key_file, ob->private_key_file) &&
        config_str_same(oa->signing_algorithm, ob->signing_algorithm) &&
        oa->grant == ob->grant && config_str_same(oa->scope, ob->scope) &&
        config_str_same(oa->client_metadata_url, ob->client_metadata_url));
}
