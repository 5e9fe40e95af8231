/*
 * Expanding references in the strings of a config, in the syntax of the
 * client that wrote it (enum config_vars): by default ${VAR}, ${env:VAR}
 * and ${VAR:-default} from the environment, and within a parse VS Code's
 * ${input:ID} (given earlier, MCPTOP_INPUT_<ID>, asked, or the input's
 * "default") and the predefined ${userHome}, ${workspaceFolder},
 * ${workspaceFolderBasename} and ${pathSeparator}; "$$" is a '$'. Gemini
 * CLI's $VAR and ${VAR}; opencode's {env:VAR} and {file:PATH}; Continue's
 * ${{ secrets.NAME }}; none at all for the clients that expand none.
 *
 * A reference the client would expand and mcptop cannot is an error that
 * names the variable and the file, so that no literal "$TOKEN" is ever
 * sent to a server. The names expanded are kept on the entry (names only).
 *
 * Whatever a reference expands to is a secret: it is built in a buffer
 * whose old copies are wiped, a partial result is wiped on failure, and a
 * message names the variable or input, never its value. An input given
 * once is reused for the rest of the parse, so it is asked for only once.
 */
#include "config/config_int.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/file.h"
#include "util/str.h"
#include "util/xmalloc.h"

/* Append n bytes to b, moving (and wiping) the old storage to grow. */
void
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
void
config_buf_wipe(struct config_buf *b)
{
    if (b->p != NULL) {
        explicit_bzero(b->p, b->cap);
        free(b->p);
    }
    b->p = NULL;
    b->len = b->cap = 0;
}

/*
 * What references may expand to: each value (one string of the config,
 * expanded) and each entry's values in all at most CONFIG_EXPAND_MAX, as
 * a {file:} is; a whole file's at most CONFIG_EXPAND_FILE_MAX, so that
 * many small entries cannot make up what one may not. Past a cap the
 * entry is invalid: a 120 KB variable named 5,000 times is 600 MB of
 * copies, and no client needs that.
 */
#define CONFIG_EXPAND_MAX      (1024u * 1024)
#define CONFIG_EXPAND_FILE_MAX (16u * 1024 * 1024)

/* 0 when the caps leave room for n more bytes of expansion onto b, or -1
 * with *cause saying which cap (never the value). */
static int
config_expand_room(const struct config_ctx *ctx, const struct config_buf *b,
    size_t n, char **cause)
{
    if (ctx != NULL && ctx->expanded_all + n > CONFIG_EXPAND_FILE_MAX) {
        *cause = str_printf("the values of %s expand to more than 16 MiB "
            "in all (the cap of a config)", ctx->cfg->origin);
        return -1;
    }
    if (b->len + n > CONFIG_EXPAND_MAX) {
        *cause = str_printf("expands to more than 1 MiB (the cap of a "
            "value)");
        return -1;
    }
    if (ctx != NULL && ctx->cur != NULL
        && ctx->expanded + n > CONFIG_EXPAND_MAX) {
        *cause = str_printf("the entry's values expand to more than 1 MiB "
            "in all (the cap of an entry)");
        return -1;
    }
    return 0;
}

/* Add what a reference expanded to (value[0..n)) onto b, within the caps.
 * 0, or -1 with *cause. */
static int
config_expand_put(struct config_ctx *ctx, struct config_buf *b,
    const char *value, size_t n, char **cause)
{
    if (config_expand_room(ctx, b, n, cause) != 0)
        return -1;
    config_buf_add(b, value, n);
    if (ctx != NULL) {
        ctx->expanded += n;
        ctx->expanded_all += n;
    }
    return 0;
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

/*
 * The "inputs" entry (VS Code) whose "id" is id (the first, if several),
 * or NULL. The entries are indexed by id on the first call, so that each
 * lookup does not walk them all.
 */
static const cJSON *
config_input_decl(struct config_ctx *ctx, const char *id)
{
    const cJSON *e;
    const cJSON *v;
    size_t       n = 0;
    long         k;

    if (ctx->inputs == NULL)
        return NULL;
    if (!ctx->decls_read) {
        ctx->decls_read = true;
        ctx->decls = xcalloc((size_t)cJSON_GetArraySize(ctx->inputs) + 1,
            sizeof *ctx->decls);
        cJSON_ArrayForEach(e, ctx->inputs) {
            v = cJSON_GetObjectItemCaseSensitive(e, "id");
            if (!cJSON_IsString(v))
                continue;
            ctx->decls[n] = e;
            config_names_add(&ctx->decl_ix, v->valuestring, (long)n++);
        }
    }
    k = config_names_find(&ctx->decl_ix, id);
    return k >= 0 ? ctx->decls[k] : NULL;
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
    long         i;

    i = config_names_find(&ctx->given_ix, id);
    if (i >= 0)
        return ctx->given[i].value;
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
    config_names_add(&ctx->given_ix, ctx->given[ctx->ngiven].id,
        (long)ctx->ngiven);
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

/* The message for an unset variable name, written open..close in the
 * file: the file is named within a parse. */
static char *
config_unset(const struct config_ctx *ctx, const char *name,
    const char *open, const char *close)
{
    if (ctx == NULL)
        return str_printf("variable \"%s\" is not set", name);
    return str_printf("variable \"%s\" is not set (%s writes "
        "\"%s%s%s\": set it in mcptop's environment)", name,
        ctx->cfg->origin, open, name, close);
}

/* See config_int.h. The list is bounded (CONFIG_MAX_VARS). */
void
config_var_used(struct config_ctx *ctx, const char *name, size_t n)
{
    struct config_server *s = ctx != NULL ? ctx->cur : NULL;
    size_t                i;

    if (s == NULL)
        return;
    for (i = 0; i < s->nvars; i++) {
        if (strlen(s->vars[i]) == n && strncmp(s->vars[i], name, n) == 0)
            return;
    }
    if (s->nvars >= CONFIG_MAX_VARS)
        return;
    s->vars = xrealloc(s->vars, (s->nvars + 1) * sizeof *s->vars);
    s->vars[s->nvars++] = str_ndup(name, n);
}

/* See config_int.h. The list is bounded (CONFIG_MAX_VARS). */
void
config_key_unapplied(struct config_ctx *ctx, const char *key)
{
    struct config_server *s = ctx != NULL ? ctx->cur : NULL;
    size_t                i;

    if (s == NULL)
        return;
    for (i = 0; i < s->nunapplied; i++) {
        if (strcmp(s->unapplied[i], key) == 0)
            return;
    }
    if (s->nunapplied >= CONFIG_MAX_VARS)
        return;
    s->unapplied = xrealloc(s->unapplied,
        (s->nunapplied + 1) * sizeof *s->unapplied);
    s->unapplied[s->nunapplied++] = xstrdup(key);
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
    size_t      vlen;
    size_t      i;
    bool        known;

    if (ctx != NULL && n > 6 && strncmp(ref, "input:", 6) == 0) {
        name = str_ndup(ref + 6, n - 6);
        value = config_input_value(ctx, name, cause);
        free(name);
        if (value == NULL
            || config_expand_put(ctx, b, value, strlen(value), cause) != 0)
            return -1;
        config_var_used(ctx, ref, n);
        return 0;
    }
    if (ctx != NULL && n > 8 && strncmp(ref, "command:", 8) == 0) {
        name = str_ndup(ref, n);
        *cause = str_printf("\"${%s}\" is a VS Code command variable, "
            "which only VS Code can run (%s)", config_shown(shown, name),
            ctx->cfg->origin);
        free(name);
        return -1;
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
            if (config_expand_put(ctx, b, value, strlen(value), cause) != 0)
                return -1;
            config_var_used(ctx, ref, n);
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
        value = dflt;
        vlen = (size_t)(ref + n - dflt);
    } else if (value == NULL) {
        *cause = config_unset(ctx, name, "${", "}");
        free(name);
        return -1;
    } else {
        vlen = strlen(value);
    }
    if (config_expand_put(ctx, b, value, vlen, cause) != 0) {
        free(name);
        return -1;
    }
    config_var_used(ctx, name, namelen);
    free(name);
    return 0;
}

/* The default syntax (see config.h): ${...} and "$$". */
static char *
config_expand_default(struct config_ctx *ctx, const char *s, char **cause)
{
    struct config_buf b = { NULL, 0, 0 };
    char              shown[CONFIG_SHOWN_SIZE];
    const char       *end;
    char             *name;

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

/* Add the value of environment variable name[0..n) to b, written
 * open..close in the file. 0, or -1 with *cause. */
static int
config_expand_env(struct config_ctx *ctx, struct config_buf *b,
    const char *name, size_t n, const char *open, const char *close,
    char **cause)
{
    char        shown[CONFIG_SHOWN_SIZE];
    char       *var = str_ndup(name, n);
    const char *value;

    if (!config_var_name_ok(var, n)) {
        *cause = str_printf("unsupported reference \"%s%s%s\" (%s)", open,
            config_shown(shown, var), close, ctx->cfg->origin);
        free(var);
        return -1;
    }
    value = getenv(var);
    if (value == NULL) {
        *cause = config_unset(ctx, var, open, close);
        free(var);
        return -1;
    }
    if (config_expand_put(ctx, b, value, strlen(value), cause) != 0) {
        free(var);
        return -1;
    }
    config_var_used(ctx, var, n);
    free(var);
    return 0;
}

/* Gemini CLI: $VAR and ${VAR} in every string; any other '$' is kept. */
static char *
config_expand_gemini(struct config_ctx *ctx, const char *s, char **cause)
{
    struct config_buf b = { NULL, 0, 0 };
    const char       *end;
    size_t            n;

    config_buf_add(&b, "", 0);
    while (*s != '\0') {
        if (s[0] == '$' && s[1] == '{') {
            end = strchr(s + 2, '}');
            if (end == NULL) {
                *cause = str_printf("unterminated reference \"${\" (%s)",
                    ctx->cfg->origin);
                goto fail;
            }
            if (config_expand_env(ctx, &b, s + 2, (size_t)(end - s - 2),
                "${", "}", cause) != 0)
                goto fail;
            s = end + 1;
            continue;
        }
        if (s[0] == '$' && (s[1] == '_' || isalpha((unsigned char)s[1]))) {
            n = 1;
            while (s[1 + n] == '_' || isalnum((unsigned char)s[1 + n]))
                n++;
            if (config_expand_env(ctx, &b, s + 1, n, "$", "", cause) != 0)
                goto fail;
            s += 1 + n;
            continue;
        }
        config_buf_add(&b, s, 1);
        s++;
    }
    return b.p;

fail:
    config_buf_wipe(&b);
    return NULL;
}

#define CONFIG_FILE_REF_MAX (1024 * 1024)   /* opencode's {file:...} */

/* opencode's {file:PATH}: the file's text, trimmed, onto b. PATH is
 * relative to the config's directory, or "~/..." or absolute. */
static int
config_expand_file(struct config_ctx *ctx, struct config_buf *b,
    const char *ref, size_t n, char **cause)
{
    char        shown[CONFIG_SHOWN_SIZE];
    char       *rel = str_ndup(ref, n);
    char       *path;
    char       *text = NULL;
    const char *slash;
    const char *why = NULL;
    struct stat st;
    size_t      len = 0, a, z;
    int         fd;

    if (rel[0] == '~' && rel[1] == '/' && ctx->home != NULL) {
        path = str_printf("%s%s", ctx->home, rel + 1);
    } else if (rel[0] == '/') {
        path = xstrdup(rel);
    } else {
        slash = strrchr(ctx->cfg->origin, '/');
        path = slash != NULL ? str_printf("%.*s/%s",
            (int)(slash - ctx->cfg->origin), ctx->cfg->origin, rel)
            : xstrdup(rel);
    }
    /* A FIFO or a device is refused before a read can wait; a file
     * past the cap before it is read. */
    fd = file_open_regular(path, &st, &why);
    if (fd >= 0 && (uintmax_t)st.st_size > CONFIG_FILE_REF_MAX)
        len = (size_t)CONFIG_FILE_REF_MAX + 1;
    if (fd < 0 || len > CONFIG_FILE_REF_MAX
        || config_read_fd(fd, path, 0, &text, &len, cause) != 0
        || len > CONFIG_FILE_REF_MAX) {
        free(*cause);
        *cause = str_printf("\"{file:%s}\": %s (%s)", config_shown(shown,
            rel), fd < 0 ? why : len > CONFIG_FILE_REF_MAX
            ? "larger than 1 MiB" : "cannot be read", ctx->cfg->origin);
        if (fd >= 0)
            close(fd);
        if (text != NULL)
            explicit_bzero(text, len);
        free(text);
        free(path);
        free(rel);
        return -1;
    }
    close(fd);
    for (a = 0; a < len && isspace((unsigned char)text[a]); a++)
        ;
    for (z = len; z > a && isspace((unsigned char)text[z - 1]); z--)
        ;
    config_buf_add(b, text + a, z - a);
    explicit_bzero(text, len);
    free(text);
    config_var_used(ctx, ref - 5, n + 5);
    free(path);
    free(rel);
    return 0;
}

/* opencode: {env:VAR} and {file:PATH}; any other '{' is kept. */
static char *
config_expand_opencode(struct config_ctx *ctx, const char *s, char **cause)
{
    struct config_buf b = { NULL, 0, 0 };
    const char       *end;

    config_buf_add(&b, "", 0);
    while (*s != '\0') {
        end = s[0] == '{' ? strchr(s, '}') : NULL;
        if (end != NULL && strncmp(s, "{env:", 5) == 0) {
            if (config_expand_env(ctx, &b, s + 5, (size_t)(end - s - 5),
                "{env:", "}", cause) != 0)
                goto fail;
            s = end + 1;
            continue;
        }
        if (end != NULL && strncmp(s, "{file:", 6) == 0 && end > s + 6) {
            if (config_expand_file(ctx, &b, s + 6, (size_t)(end - s - 6),
                cause) != 0)
                goto fail;
            s = end + 1;
            continue;
        }
        config_buf_add(&b, s, 1);
        s++;
    }
    return b.p;

fail:
    config_buf_wipe(&b);
    return NULL;
}

/* Continue: ${{ secrets.NAME }} (and ${{ inputs.NAME }}), NAME from the
 * environment; the rest is kept. */
static char *
config_expand_continue(struct config_ctx *ctx, const char *s, char **cause)
{
    struct config_buf b = { NULL, 0, 0 };
    const char       *p, *end, *dot;
    size_t            n;

    config_buf_add(&b, "", 0);
    while (*s != '\0') {
        if (strncmp(s, "${{", 3) != 0) {
            config_buf_add(&b, s, 1);
            s++;
            continue;
        }
        end = strstr(s + 3, "}}");
        if (end == NULL) {
            *cause = str_printf("unterminated reference \"${{\" (%s)",
                ctx->cfg->origin);
            goto fail;
        }
        p = s + 3;
        while (p < end && *p == ' ')
            p++;
        n = (size_t)(end - p);
        while (n > 0 && p[n - 1] == ' ')
            n--;
        dot = memchr(p, '.', n);
        if (dot == NULL) {
            *cause = str_printf("unsupported reference \"${{ ... }}\" "
                "(%s)", ctx->cfg->origin);
            goto fail;
        }
        if (config_expand_env(ctx, &b, dot + 1, n - (size_t)(dot + 1 - p),
            "${{ secrets.", " }}", cause) != 0)
            goto fail;
        s = end + 2;
    }
    return b.p;

fail:
    config_buf_wipe(&b);
    return NULL;
}

/* config_expand within a parse (ctx may be NULL: the environment only),
 * in the file's syntax. The partial result is wiped on failure. */
char *
config_expand_ctx(struct config_ctx *ctx, const char *s, char **cause)
{
    *cause = NULL;
    switch (ctx != NULL ? ctx->vars : CONFIG_VARS_DEFAULT) {
    case CONFIG_VARS_NONE:
        return xstrdup(s);
    case CONFIG_VARS_GEMINI:
        return config_expand_gemini(ctx, s, cause);
    case CONFIG_VARS_OPENCODE:
        return config_expand_opencode(ctx, s, cause);
    case CONFIG_VARS_CONTINUE:
        return config_expand_continue(ctx, s, cause);
    default:
        return config_expand_default(ctx, s, cause);
    }
}

/* See config.h. */
char *
config_expand(const char *s, char **cause)
{
    return config_expand_ctx(NULL, s, cause);
}

/* Free the inputs given during a parse (wiping their values) and the
 * indexes of given and declared inputs. */
void
config_input_done(struct config_ctx *ctx)
{
    size_t i;

    for (i = 0; i < ctx->ngiven; i++) {
        free(ctx->given[i].id);
        str_wipe_free(ctx->given[i].value);
    }
    free(ctx->given);
    ctx->given = NULL;
    ctx->ngiven = 0;
    config_names_done(&ctx->given_ix);
    free(ctx->decls);
    ctx->decls = NULL;
    ctx->decls_read = false;
    config_names_done(&ctx->decl_ix);
}
