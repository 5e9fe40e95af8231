/*
 * The fleet declaration: the config files of other MCP clients (JSON with
 * comments, or YAML) become a struct config, one struct config_server per
 * entry, with mcptop's own keys resolved as default <- fleet ("mcptop"
 * object) <- server entry.
 *
 * This file is the module's public face: loading a file or a descriptor,
 * the top level of a document (its keys, the fleet object, the walk over
 * the server maps), one-server configs from the command line, merging,
 * freeing, discovery and comparing declarations, plus what every part of
 * the module shares. The parts live beside it (config_int.h): the text of
 * a file (config_file.c), the containers and keys other clients write
 * (config_formats.c), one server entry (config_server.c), ${...}
 * expansion (config_input.c), notes and warnings (config_notes.c), and the
 * "oauth" and "probe_tool" objects (config_oauth.c, config_probe.c).
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

#include "config/config_int.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/clients.h"
#include "engine/url.h"
#include "util/file.h"
#include "util/str.h"
#include "util/xmalloc.h"

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
long
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
void
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

/* True when name is in x already; else it is added (borrowed, as with
 * config_names_add): a repeated key is found in one walk. */
bool
config_names_seen(struct config_names *x, const char *name)
{
    size_t n = x->n;

    config_names_add(x, name, 0);
    return x->n == n;
}

/* Free the table (not the names). */
void
config_names_done(struct config_names *x)
{
    free(x->slot);
    x->slot = NULL;
    x->cap = x->n = 0;
}

/*
 * Read the fleet-wide "mcptop" object into fleet. 0, or -1 with *cause
 * (a whole-file error naming origin and the key).
 */
static int
config_fleet_load(struct config *cfg, struct config_server *fleet,
    const cJSON *obj, char **cause)
{
    struct config_names seen = { NULL, 0, 0 };
    char                shown[CONFIG_SHOWN_SIZE];
    const cJSON        *e;
    char               *why = NULL;
    int                 r;

    if (!cJSON_IsObject(obj)) {
        *cause = str_printf("%s: \"mcptop\" is %s, expected an object",
            cfg->origin, config_kind(obj));
        return -1;
    }
    cJSON_ArrayForEach(e, obj) {
        config_shown(shown, e->string);
        if (config_names_seen(&seen, e->string)) {
            *cause = str_printf("%s: \"mcptop\": duplicate key \"%s\"",
                cfg->origin, shown);
            goto fail;
        }
        r = config_opt(fleet, e, &why);
        if (r < 0) {
            *cause = str_printf("%s: \"mcptop\": %s", cfg->origin, why);
            free(why);
            goto fail;
        }
        if (r == 0)
            config_warn(cfg, "\"mcptop\": unknown key \"%s\" (ignored)",
                shown);
    }
    config_names_done(&seen);
    return 0;

fail:
    config_names_done(&seen);
    return -1;
}

/* The top-level keys mcptop reads, which must not repeat. */
static const char *const config_top_keys[] = {
    "mcpServers", "servers", "mcptop", "mcp", "context_servers",
    "extensions", "inputs", "mcp_servers", NULL
};

/* What a file with no server map is told mcptop looked for. */
#define CONFIG_LOOKED_FOR "looked for \"mcpServers\" (an object, or a " \
    "list as Continue writes it), \"servers\" (VS Code), \"mcp\": " \
    "{\"servers\"} (VS Code settings), \"mcp\" (opencode), " \
    "\"context_servers\" (Zed), \"extensions\" (Goose), " \
    "\"mcp_servers\" (Codex) and " \
    "\"projects\" for this directory (Claude Code)"

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
    config_notes_done(ctx);
    config_input_done(ctx);
    config_names_done(&ctx->names);
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
    struct config_names      top = { NULL, 0, 0 };
    struct config           *cfg;
    const cJSON             *inputs = NULL;
    const cJSON             *e;
    const char              *home;
    enum config_vars         vars, byname;
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
            && config_names_seen(&top, e->string)) {
            *cause = str_printf("%s: duplicate key \"%s\"", origin,
                e->string);
            config_names_done(&top);
            return -1;
        }
    }
    config_names_done(&top);
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
    vars = opt != NULL ? opt->vars : CONFIG_VARS_AUTO;
    byname = vars != CONFIG_VARS_AUTO ? vars : clients_vars_of_path(origin);
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
        /* A file of no known name is read in the syntax of the client
         * its shape belongs to, when only one writes it. */
        ctx.vars = byname;
        if (vars == CONFIG_VARS_AUTO && byname == CONFIG_VARS_DEFAULT
            && cont[i].shape == CONFIG_SHAPE_OPENCODE)
            ctx.vars = CONFIG_VARS_OPENCODE;
        else if (vars == CONFIG_VARS_AUTO && byname == CONFIG_VARS_DEFAULT
            && cont[i].shape == CONFIG_SHAPE_GOOSE)
            ctx.vars = CONFIG_VARS_NONE;
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
            ctx.cur = s;
            ctx.expanded = 0;
            config_server_load(&ctx, s, nm != NULL ? nm->valuestring
                : e->string, e, &fleet, cont[i].shape);
            ctx.cur = NULL;
            cfg->nservers++;
        }
    }
    config_server_done(&fleet);
    config_ctx_done(&ctx);
    *out = cfg;
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
    cJSON *root;
    int    rc;

    *out = NULL;
    *cause = NULL;
    root = config_parse_tree(text, len, origin, cause);
    if (root == NULL)
        return -1;
    rc = config_from_json(root, origin, opt, out, cause);
    cJSON_Delete(root);
    return rc;
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
    const char *why;
    char       *buf = NULL;
    size_t      size = 0;
    size_t      len = 0;
    int         fd;
    int         rc = -1;

    *out = NULL;
    *cause = NULL;
    /* A FIFO, a device, a directory: refused before a read can wait
     * (standard input is "-", read by config_load_fd). */
    fd = file_open_regular(path, &st, &why);
    if (fd < 0) {
        *cause = str_printf("%s: %s", path, why);
        return -1;
    }
    if ((uintmax_t)st.st_size > CONFIG_MAX_FILE_BYTES) {
        *cause = str_printf("%s: larger than 16 MiB", path);
        close(fd);
        return -1;
    }
    size = (size_t)st.st_size;
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
config_for_server(const struct config_server *decl)
{
    struct config *cfg = xcalloc(1, sizeof *cfg);

    cfg->origin = str_dup(decl->origin != NULL ? decl->origin : "copy");
    cfg->servers = xcalloc(1, sizeof *cfg->servers);
    cfg->nservers = 1;
    config_server_copy(&cfg->servers[0], decl);
    return cfg;
}

/* See config.h. */
struct config *
config_for_taps(const char *dir, char **cause)
{
    DIR           *d = opendir(dir);
    struct dirent *e;
    struct config *cfg;
    size_t         cap = 0;

    if (d == NULL) {
        *cause = str_printf("%s: %s", dir, strerror(errno));
        return NULL;
    }
    cfg = xcalloc(1, sizeof *cfg);
    cfg->origin = str_printf("--taps %s", dir);
    while ((e = readdir(d)) != NULL) {
        size_t                len = strlen(e->d_name);
        struct config_server *s;
        struct stat           st;
        char                 *path;

        if (len <= 9 || strncmp(e->d_name, "tap-", 4) != 0 ||
            strcmp(e->d_name + len - 5, ".sock") != 0)
            continue;
        path = str_printf("%s/%s", dir, e->d_name);
        if (lstat(path, &st) != 0 || !S_ISSOCK(st.st_mode)) {
            free(path);
            continue;
        }
        if (cfg->nservers == cap) {
            cap = cap ? cap * 2 : 8;
            cfg->servers = xrealloc(cfg->servers, cap * sizeof *cfg->servers);
        }
        s = &cfg->servers[cfg->nservers++];
        memset(s, 0, sizeof *s);
        config_server_defaults(s);
        s->transport = CONFIG_STDIO;
        s->origin = xstrdup(cfg->origin);
        s->name = str_ndup(e->d_name + 4, len - 9);
        s->tap = path;
    }
    closedir(d);
    return cfg;
}

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

/* Append piece to b as "LEN:piece", so that no two lists of pieces give
 * the same key. */
static void
config_key_piece(struct config_buf *b, const char *piece)
{
    char len[24];

    snprintf(len, sizeof len, "%zu:", strlen(piece));
    config_buf_add(b, len, strlen(len));
    config_buf_add(b, piece, strlen(piece));
}

/* What s dials, as one string (caller wipes and frees: env values and
 * the URL may be secrets), or NULL for an entry that cannot be dialed:
 * the URL and transport, or the command, arguments, env and cwd. */
static char *
config_target_key(const struct config_server *s)
{
    struct config_buf b = { NULL, 0, 0 };
    char              n[24];
    size_t            i;

    if (s->invalid != NULL)
        return NULL;
    if (s->transport == CONFIG_HTTP) {
        config_key_piece(&b, s->http_sse ? "sse" : "http");
        config_key_piece(&b, s->url);
        return b.p;
    }
    config_key_piece(&b, "stdio");
    config_key_piece(&b, s->command);
    snprintf(n, sizeof n, "%zu", s->nargs);
    config_key_piece(&b, n);
    for (i = 0; i < s->nargs; i++)
        config_key_piece(&b, s->args[i]);
    for (i = 0; i < s->nenv; i++) {
        config_key_piece(&b, s->env[i].name);
        config_key_piece(&b, s->env[i].value);
    }
    config_key_piece(&b, s->cwd != NULL ? s->cwd : "");
    return b.p;
}

/* Add (client, origin) to s's sources. */
static void
config_source_add(struct config_server *s, const char *client,
    const char *origin)
{
    s->sources = xrealloc(s->sources, (s->nsources + 1) * sizeof *s->sources);
    s->sources[s->nsources].client = str_dup(client);
    s->sources[s->nsources].origin = xstrdup(origin);
    s->nsources++;
}

/*
 * Fold the servers of from (tagged with a source) that dial what one of
 * into's already dials into that one: its sources gain the newcomer's,
 * it is enabled if either is, and the newcomer is freed. Targets are
 * found in a set, so n files of m servers cost O(n m).
 */
static void
config_merge_same(struct config *into, struct config *from)
{
    struct config_names ix = { NULL, 0, 0 };
    char              **keys = xcalloc(into->nservers + 1, sizeof *keys);
    char                shown[CONFIG_SHOWN_SIZE];
    size_t              i, kept = 0;

    for (i = 0; i < into->nservers; i++) {
        keys[i] = config_target_key(&into->servers[i]);
        if (keys[i] != NULL)
            config_names_add(&ix, keys[i], (long)i);
    }
    for (i = 0; i < from->nservers; i++) {
        struct config_server *s = &from->servers[i];
        struct config_server *t;
        char                 *key = s->source != NULL
            ? config_target_key(s) : NULL;
        long                  k = key != NULL ? config_names_find(&ix, key)
            : -1;

        str_wipe_free(key);
        if (k < 0) {
            from->servers[kept++] = *s;
            continue;
        }
        t = &into->servers[k];
        if (t->nsources == 0)
            config_source_add(t, t->source, t->origin);
        config_source_add(t, s->source, s->origin);
        if (t->disabled && !s->disabled) {
            t->disabled = false;
            free(t->disabled_why);
            t->disabled_why = NULL;
        }
        into->merged = xrealloc(into->merged,
            (into->nmerged + 1) * sizeof *into->merged);
        into->merged[into->nmerged] = str_printf("\"%s\" of %s (%s)",
            config_shown(shown, s->name), s->source, s->origin);
        {
            char *line = str_printf("%s is \"%s\": the same target",
                into->merged[into->nmerged], config_shown(shown, t->name));

            free(into->merged[into->nmerged]);
            into->merged[into->nmerged++] = line;
        }
        config_server_done(s);
    }
    from->nservers = kept;
    for (i = 0; i < into->nservers; i++)
        str_wipe_free(keys[i]);
    free(keys);
    config_names_done(&ix);
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
    if (rename)
        config_merge_same(into, from);
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
    config_move_strings(&into->merged, &into->nmerged, from->merged,
        from->nmerged);
    from->nmerged = 0;
    if (from->nskipped > 0) {
        into->skipped = xrealloc(into->skipped, (into->nskipped +
            from->nskipped) * sizeof *into->skipped);
        memcpy(into->skipped + into->nskipped, from->skipped,
            from->nskipped * sizeof *from->skipped);
        into->nskipped += from->nskipped;
        from->nskipped = 0;
    }
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
    for (i = 0; i < cfg->nskipped; i++) {
        free(cfg->skipped[i].name);
        free(cfg->skipped[i].origin);
        free(cfg->skipped[i].why);
    }
    free(cfg->skipped);
    for (i = 0; i < cfg->nmerged; i++)
        free(cfg->merged[i]);
    free(cfg->merged);
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

/* --- comparing declarations (a reload keeps what did not change) -------- */

/* True when a and b are both NULL or the same string. */
static bool
config_str_same(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL &&
        strcmp(a, b) == 0);
}

/* True when two lists of name=value pairs are the same, in order. */
static bool
config_kvs_same(const struct str_kv *a, size_t na,
    const struct str_kv *b, size_t nb)
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

/* True when two lists of strings are the same, in order. */
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

/* See config.h. */
bool
config_server_same(const struct config_server *a,
    const struct config_server *b)
{
    const struct config_oauth *oa = a->oauth, *ob = b->oauth;

    if (!config_str_same(a->name, b->name) || a->transport != b->transport ||
        a->http_sse != b->http_sse ||
        !config_str_same(a->url, b->url) ||
        !config_kvs_same(a->headers, a->nheaders, b->headers, b->nheaders) ||
        !config_str_same(a->ca_file, b->ca_file) ||
        a->tls_insecure != b->tls_insecure ||
        !config_str_same(a->command, b->command) ||
        !config_strv_same(a->args, a->nargs, b->args, b->nargs) ||
        !config_kvs_same(a->env, a->nenv, b->env, b->nenv) ||
        !config_str_same(a->cwd, b->cwd) ||
        !config_str_same(a->tap, b->tap) ||
        a->ping_interval_ms != b->ping_interval_ms ||
        a->timeout_ms != b->timeout_ms ||
        a->open_deadline_ms != b->open_deadline_ms ||
        a->teardown_ms != b->teardown_ms ||
        a->crash_window_ms != b->crash_window_ms ||
        a->stream_idle_ms != b->stream_idle_ms ||
        a->max_message_bytes != b->max_message_bytes || a->era != b->era ||
        !config_strv_same(a->tags, a->ntags, b->tags, b->ntags) ||
        a->disabled != b->disabled || !config_str_same(a->invalid, b->invalid)
        || !config_str_same(a->disabled_why, b->disabled_why))
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
        config_str_same(oa->client_metadata_url, ob->client_metadata_url) &&
        config_str_same(oa->issuer, ob->issuer));
}
