/*
 * The shapes other MCP clients write, read as one: where a file keeps its
 * servers (mcpServers as an object or as Continue's list, servers,
 * mcp.servers, opencode's mcp, Zed's context_servers, Goose's extensions,
 * Claude Code's projects), what each key of an entry means whichever
 * client wrote it (config_keys: "serverUrl" is "url", "cmd" is
 * "command"), the spellings of "type", and the keys whose meaning depends
 * on the client: a command as an array (opencode) or an object (Zed),
 * Continue's requestOptions, another client's "timeout", Goose's
 * env_keys.
 *
 * A key another client uses for its own behaviour is a note, never an
 * error and never silence; an entry mcptop cannot run (a Goose built-in,
 * a Zed extension's server) is skipped with a note. Messages name keys
 * and servers, never values.
 */
#include "config/config_int.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/str.h"
#include "util/xmalloc.h"

#define CONFIG_TIMEOUT_MAX_S    3600    /* larger bare "timeout"s are ms */

/* Notes for keys mcptop reads but does not apply. */
#define CONFIG_NOTE_TOOLS "it sets which tools the client may call, and " \
    "mcptop calls none"
#define CONFIG_NOTE_DEV "VS Code's development mode (watch, debug)"
#define CONFIG_NOTE_TOOL_TIMEOUT "a tool call's timeout in the client: " \
    "mcptop's probe_tool has its own"
#define CONFIG_NOTE_WATCH "the client restarts the server when these " \
    "files change"

/* Every key of a server entry mcptop knows, whichever client writes it:
 * an alias has the kind of the key it stands for. */
static const struct config_keydef config_keys[] = {
    { "type", CONFIG_KEY_TYPE, -1, NULL },
    { "transportType", CONFIG_KEY_TYPE, -1, NULL },
    { "url", CONFIG_KEY_URL, CONFIG_HTTP, NULL },
    { "serverUrl", CONFIG_KEY_URL, CONFIG_HTTP, NULL },
    { "httpUrl", CONFIG_KEY_URL, CONFIG_HTTP, NULL },
    { "uri", CONFIG_KEY_URL, CONFIG_HTTP, NULL },
    { "headers", CONFIG_KEY_HEADERS, CONFIG_HTTP, NULL },
    { "http_headers", CONFIG_KEY_HEADERS, CONFIG_HTTP, NULL },
    { "bearer_token_env_var", CONFIG_KEY_ENV_AUTH, CONFIG_HTTP, NULL },
    { "env_http_headers", CONFIG_KEY_ENV_AUTH, CONFIG_HTTP, NULL },
    { "env_vars", CONFIG_KEY_ENV_VARS, CONFIG_STDIO, NULL },
    { "startup_timeout_sec", CONFIG_KEY_STARTUP, -1, NULL },
    { "startup_timeout_ms", CONFIG_KEY_STARTUP, -1, NULL },
    { "tool_timeout_sec", CONFIG_KEY_NOTE, -1, CONFIG_NOTE_TOOL_TIMEOUT },
    { "enabled_tools", CONFIG_KEY_NOTE, -1, CONFIG_NOTE_TOOLS },
    { "disabled_tools", CONFIG_KEY_NOTE, -1, CONFIG_NOTE_TOOLS },
    { "scopes", CONFIG_KEY_NOTE, -1, CONFIG_NOTE_OAUTH },
    { "watchPaths", CONFIG_KEY_NOTE, -1, CONFIG_NOTE_WATCH },
    { "networkTimeout", CONFIG_KEY_NOTE, -1, CONFIG_NOTE_TOOL_TIMEOUT },
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
    { "crash_window_ms", CONFIG_KEY_OPT, -1, NULL },
    { "stream_idle_ms", CONFIG_KEY_OPT, -1, NULL },
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
    { "tap", CONFIG_KEY_TAP, -1, NULL },
    { "authProviderType", CONFIG_KEY_NOTE, -1, CONFIG_NOTE_OAUTH },
    { "dev", CONFIG_KEY_NOTE, -1, CONFIG_NOTE_DEV },
};

/* The definition of key in config_keys, or NULL when it is unknown. */
const struct config_keydef *
config_keydef(const char *key)
{
    size_t i;

    for (i = 0; i < sizeof config_keys / sizeof config_keys[0]; i++) {
        if (strcmp(config_keys[i].key, key) == 0)
            return &config_keys[i];
    }
    return NULL;
}

/* Copy a "type" value into dst (size bytes) in lower case, without '-',
 * '_' and spaces: "Streamable_HTTP" and "streamableHttp" both give
 * "streamablehttp". */
void
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
int
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

/* Set s->command to text expanded; the text as written is kept for
 * display when they differ. 0, or -1 with *why. */
static int
config_command_set(struct config_ctx *ctx, struct config_server *s,
    const char *key, const char *text, char **why)
{
    if (config_expand_key(ctx, key, text, &s->command, why) != 0)
        return -1;
    if (strcmp(s->command, text) != 0)
        s->command_shown = xstrdup(text);
    return 0;
}

/*
 * Read "command" as a string, an array (opencode: the command and its
 * arguments) or an object (Zed: {"path", "args", "env"}). 0, or -1 with
 * *why.
 */
int
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
        if (config_command_set(ctx, s, v->string, e->valuestring, why) != 0)
            return -1;
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
        if (config_command_set(ctx, s, v->string, e->valuestring, why) != 0)
            return -1;
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
    return config_command_set(ctx, s, v->string, v->valuestring, why);
}

/* Continue's "requestOptions": its "headers" are read, the rest noted.
 * 0, or -1 with *why. */
int
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
            config_key_unapplied(ctx, v->string);
        }
    }
    return 0;
}

/* Apply another client's "timeout": seconds for Goose and for values up
 * to CONFIG_TIMEOUT_MAX_S (Cline writes seconds), else milliseconds
 * (Gemini CLI, Amazon Q, opencode); mcptop's "timeout_ms" wins. */
void
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
    else if (st->shape == CONFIG_SHAPE_OPENCODE
        || ctx->vars == CONFIG_VARS_GEMINI)
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

/* Goose's "env_keys": variables it takes from its keyring; here they come
 * from mcptop's environment, which the server inherits. The names "env"
 * sets are looked up in a set, not compared with each key. */
void
config_entry_env_keys(struct config_ctx *ctx, struct config_server *s,
    const cJSON *v)
{
    struct config_names env = { NULL, 0, 0 };
    char                shown_name[CONFIG_SHOWN_SIZE];
    char                shown_key[CONFIG_SHOWN_SIZE];
    const cJSON        *e;
    size_t              i;
    bool                set;

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
    for (i = 0; i < s->nenv; i++)
        config_names_add(&env, s->env[i].name, 0);
    cJSON_ArrayForEach(e, v) {
        if (!cJSON_IsString(e))
            continue;
        set = getenv(e->valuestring) != NULL
            || config_names_find(&env, e->valuestring) >= 0;
        if (!set)
            config_warn(ctx->cfg, "server \"%s\": %s \"%s\" is not set in "
                "mcptop's environment (Goose keeps it in its keyring)",
                shown_name, v->string, config_shown(shown_key,
                e->valuestring));
    }
    config_names_done(&env);
}

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
int
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
    m = cJSON_GetObjectItemCaseSensitive(root, "mcp_servers");
    if (m != NULL) {
        if (!cJSON_IsObject(m)) {
            *cause = str_printf("%s: \"mcp_servers\" is %s, expected a "
                "table", origin, config_kind(m));
            return -1;
        }
        config_container_add(out, n, m, CONFIG_SHAPE_MAP);
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
bool
config_entry_skipped(struct config_ctx *ctx, const cJSON *e,
    const char *name, enum config_shape shape)
{
    static const char *const goose_inner[] = {
        "builtin", "platform", "frontend", "inlinepython", NULL
    };

    const char *why = NULL;

    if (!cJSON_IsObject(e))
        return false;
    if (shape == CONFIG_SHAPE_GOOSE && config_entry_type_in(e, goose_inner))
        why = "a Goose extension that runs inside Goose, not a server";
    else if (shape == CONFIG_SHAPE_ZED
        && cJSON_GetObjectItemCaseSensitive(e, "command") == NULL
        && cJSON_GetObjectItemCaseSensitive(e, "url") == NULL)
        why = "a server a Zed extension starts (its command is not in the "
            "settings)";
    if (why == NULL)
        return false;
    config_note(ctx, name, "skipped: %s", why);
    ctx->cfg->skipped = xrealloc(ctx->cfg->skipped,
        (ctx->cfg->nskipped + 1) * sizeof *ctx->cfg->skipped);
    ctx->cfg->skipped[ctx->cfg->nskipped].name = xstrdup(name);
    ctx->cfg->skipped[ctx->cfg->nskipped].origin = xstrdup(ctx->cfg->origin);
    ctx->cfg->skipped[ctx->cfg->nskipped].why = xstrdup(why);
    ctx->cfg->nskipped++;
    return true;
}
