/*
 * The well-known config files of MCP clients, as one table: each row is
 * a client, the tag its servers get, the base directory, the path under
 * it (a directory of blocks when it ends in '/') and the variable syntax
 * the client expands there. The same table resolves the paths for --from,
 * tells the syntax of a file given with -c by its name, and prints the
 * list for --help, so the three never disagree.
 */
#include "engine/clients.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/str.h"
#include "util/xmalloc.h"

/* What a path is relative to. */
enum clients_base {
    CLIENTS_HOME,           /* $HOME */
    CLIENTS_XDG,            /* $XDG_CONFIG_HOME, default ~/.config */
    CLIENTS_MAC,            /* ~/Library/Application Support (macOS) */
    CLIENTS_CODEX,          /* $CODEX_HOME, default ~/.codex */
    CLIENTS_CWD,            /* the current directory: the project */
};

/* One file (or, when rel ends in '/', a directory of YAML and JSON
 * blocks) a client reads, and the variable syntax it is written in. */
struct clients_row {
    const char        *client;
    const char        *source;
    enum clients_base  base;
    const char        *rel;
    enum config_vars   vars;
};

#define CLIENTS_VSCODE_STORE "Code/User/globalStorage/"
#define CLIENTS_CLINE CLIENTS_VSCODE_STORE \
    "saoudrizwan.claude-dev/settings/cline_mcp_settings.json"
#define CLIENTS_ROO CLIENTS_VSCODE_STORE \
    "rooveterinaryinc.roo-cline/settings/mcp_settings.json"

static const struct clients_row clients_rows[] = {
    { "claude", "claude", CLIENTS_XDG,
      "Claude/claude_desktop_config.json", CONFIG_VARS_NONE },
    { "claude", "claude", CLIENTS_MAC,
      "Claude/claude_desktop_config.json", CONFIG_VARS_NONE },
    { "claude-code", "claude-code", CLIENTS_HOME, ".claude.json",
      CONFIG_VARS_DEFAULT },
    { "claude-code", "claude-code:project", CLIENTS_CWD, ".mcp.json",
      CONFIG_VARS_DEFAULT },
    { "cursor", "cursor", CLIENTS_HOME, ".cursor/mcp.json",
      CONFIG_VARS_DEFAULT },
    { "cursor", "cursor:project", CLIENTS_CWD, ".cursor/mcp.json",
      CONFIG_VARS_DEFAULT },
    { "vscode", "vscode", CLIENTS_XDG, "Code/User/mcp.json",
      CONFIG_VARS_DEFAULT },
    { "vscode", "vscode", CLIENTS_XDG, "Code/User/settings.json",
      CONFIG_VARS_DEFAULT },
    { "vscode", "vscode", CLIENTS_MAC, "Code/User/mcp.json",
      CONFIG_VARS_DEFAULT },
    { "vscode", "vscode", CLIENTS_MAC, "Code/User/settings.json",
      CONFIG_VARS_DEFAULT },
    { "vscode", "vscode:project", CLIENTS_CWD, ".vscode/mcp.json",
      CONFIG_VARS_DEFAULT },
    { "windsurf", "windsurf", CLIENTS_HOME,
      ".codeium/windsurf/mcp_config.json", CONFIG_VARS_DEFAULT },
    { "zed", "zed", CLIENTS_XDG, "zed/settings.json", CONFIG_VARS_NONE },
    { "zed", "zed:project", CLIENTS_CWD, ".zed/settings.json",
      CONFIG_VARS_NONE },
    { "gemini", "gemini", CLIENTS_HOME, ".gemini/settings.json",
      CONFIG_VARS_GEMINI },
    { "gemini", "gemini:project", CLIENTS_CWD, ".gemini/settings.json",
      CONFIG_VARS_GEMINI },
    { "codex", "codex", CLIENTS_CODEX, "config.toml", CONFIG_VARS_NONE },
    { "codex", "codex:project", CLIENTS_CWD, ".codex/config.toml",
      CONFIG_VARS_NONE },
    { "opencode", "opencode", CLIENTS_XDG, "opencode/opencode.json",
      CONFIG_VARS_OPENCODE },
    { "opencode", "opencode", CLIENTS_XDG, "opencode/opencode.jsonc",
      CONFIG_VARS_OPENCODE },
    { "opencode", "opencode:project", CLIENTS_CWD, "opencode.json",
      CONFIG_VARS_OPENCODE },
    { "opencode", "opencode:project", CLIENTS_CWD, "opencode.jsonc",
      CONFIG_VARS_OPENCODE },
    { "goose", "goose", CLIENTS_XDG, "goose/config.yaml",
      CONFIG_VARS_NONE },
    { "continue", "continue", CLIENTS_HOME, ".continue/config.yaml",
      CONFIG_VARS_CONTINUE },
    { "continue", "continue", CLIENTS_HOME, ".continue/mcpServers/",
      CONFIG_VARS_CONTINUE },
    { "continue", "continue:project", CLIENTS_CWD, ".continue/mcpServers/",
      CONFIG_VARS_CONTINUE },
    { "cline", "cline", CLIENTS_XDG, CLIENTS_CLINE, CONFIG_VARS_NONE },
    { "cline", "cline", CLIENTS_MAC, CLIENTS_CLINE, CONFIG_VARS_NONE },
    { "roo", "roo", CLIENTS_XDG, CLIENTS_ROO, CONFIG_VARS_DEFAULT },
    { "roo", "roo", CLIENTS_MAC, CLIENTS_ROO, CONFIG_VARS_DEFAULT },
    { "roo", "roo:project", CLIENTS_CWD, ".roo/mcp.json",
      CONFIG_VARS_DEFAULT },
    { "lmstudio", "lmstudio", CLIENTS_HOME, ".lmstudio/mcp.json",
      CONFIG_VARS_DEFAULT },
};

#define CLIENTS_NROWS (sizeof clients_rows / sizeof clients_rows[0])

/* See clients.h. */
const char *
clients_names(void)
{
    return "claude, claude-code, cursor, vscode, windsurf, zed, gemini, "
        "codex, opencode, goose, continue, cline, roo, lmstudio or all";
}

/* See clients.h. */
bool
clients_known(const char *name)
{
    size_t i;

    if (strcmp(name, "all") == 0)
        return true;
    for (i = 0; i < CLIENTS_NROWS; i++) {
        if (strcmp(clients_rows[i].client, name) == 0)
            return true;
    }
    return false;
}

/* True when path ends with "/" rel, or is rel. A directory row (rel ends
 * in '/') matches a file right inside that directory. */
static bool
clients_path_is(const char *path, const char *rel)
{
    size_t      pl = strlen(path), rl = strlen(rel);
    const char *base;

    if (rl > 0 && rel[rl - 1] == '/') {
        base = strrchr(path, '/');
        if (base == NULL)
            return false;
        pl = (size_t)(base - path) + 1;
    }
    if (pl < rl || strncmp(path + pl - rl, rel, rl) != 0)
        return false;
    return pl == rl || path[pl - rl - 1] == '/';
}

/* See clients.h. */
enum config_vars
clients_vars_of_path(const char *path)
{
    size_t i;

    for (i = 0; i < CLIENTS_NROWS; i++) {
        if (clients_path_is(path, clients_rows[i].rel))
            return clients_rows[i].vars;
    }
    return CONFIG_VARS_DEFAULT;
}

/* How a base is written in --help. */
static const char *
clients_base_shown(enum clients_base b)
{
    switch (b) {
    case CLIENTS_HOME:
        return "~/";
    case CLIENTS_XDG:
        return "~/.config/";
    case CLIENTS_MAC:
        return "~/Library/Application Support/";
    case CLIENTS_CODEX:
        return "~/.codex/";
    default:
        return "./";
    }
}

/* The directory base stands for (caller frees), or NULL when unknown. */
static char *
clients_base_dir(enum clients_base b)
{
    const char *home = getenv("HOME");
    const char *xdg = getenv("XDG_CONFIG_HOME");
    const char *codex = getenv("CODEX_HOME");
    char        cwd[4096];

    if (home != NULL && home[0] == '\0')
        home = NULL;
    switch (b) {
    case CLIENTS_HOME:
        return home != NULL ? xstrdup(home) : NULL;
    case CLIENTS_XDG:
        /* A relative XDG_CONFIG_HOME is ignored (XDG spec). */
        if (xdg != NULL && xdg[0] == '/')
            return xstrdup(xdg);
        return home != NULL ? str_printf("%s/.config", home) : NULL;
    case CLIENTS_MAC:
        return home != NULL ? str_printf("%s/Library/Application Support",
            home) : NULL;
    case CLIENTS_CODEX:
        if (codex != NULL && codex[0] == '/')
            return xstrdup(codex);
        return home != NULL ? str_printf("%s/.codex", home) : NULL;
    default:
        return getcwd(cwd, sizeof cwd) != NULL ? xstrdup(cwd) : NULL;
    }
}

/* qsort: names in byte order. */
static int
clients_name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* True when name is a YAML or JSON block (Continue's mcpServers/). */
static bool
clients_block_name(const char *name)
{
    const char *dot = strrchr(name, '.');

    return name[0] != '.' && dot != NULL && (strcmp(dot, ".yaml") == 0
        || strcmp(dot, ".yml") == 0 || strcmp(dot, ".json") == 0);
}

/* Add one file of row r to f[*n] (growing f, *cap entries). */
static void
clients_add(struct clients_file **f, size_t *n, size_t *cap,
    const struct clients_row *r, char *path)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : CLIENTS_NROWS;
        *f = xrealloc(*f, *cap * sizeof **f);
    }
    (*f)[*n].client = r->client;
    (*f)[*n].source = r->source;
    (*f)[*n].path = path;
    (*f)[*n].vars = r->vars;
    (*n)++;
}

/* Add the blocks of directory dir (row r), in name order; the directory
 * itself when it cannot be read (so that it is named as absent). At most
 * CLIENTS_MAX_BLOCKS. */
#define CLIENTS_MAX_BLOCKS 256
static void
clients_add_dir(struct clients_file **f, size_t *n, size_t *cap,
    const struct clients_row *r, char *dir)
{
    DIR           *d = opendir(dir);
    struct dirent *e;
    char         **names = NULL;
    size_t         nn = 0, i;

    if (d == NULL) {
        clients_add(f, n, cap, r, dir);
        return;
    }
    while ((e = readdir(d)) != NULL && nn < CLIENTS_MAX_BLOCKS) {
        if (!clients_block_name(e->d_name))
            continue;
        names = xrealloc(names, (nn + 1) * sizeof *names);
        names[nn++] = xstrdup(e->d_name);
    }
    closedir(d);
    qsort(names, nn, sizeof *names, clients_name_cmp);
    for (i = 0; i < nn; i++) {
        clients_add(f, n, cap, r, str_printf("%s%s", dir, names[i]));
        free(names[i]);
    }
    free(names);
    if (nn == 0)
        clients_add(f, n, cap, r, dir);
    else
        free(dir);
}

/* See clients.h. */
struct clients_file *
clients_files(const char *name, size_t *n)
{
    struct clients_file *f = NULL;
    size_t               i, cap = 0;
    bool                 all = strcmp(name, "all") == 0;

    *n = 0;
    if (!clients_known(name))
        return NULL;
    /* Per-user files first, then the project's: a project's server that
     * repeats a user one is the one renamed. */
    for (int pass = 0; pass < 2; pass++) {
        for (i = 0; i < CLIENTS_NROWS; i++) {
            const struct clients_row *r = &clients_rows[i];
            char                     *dir;
            size_t                    rl = strlen(r->rel);

            if ((r->base == CLIENTS_CWD) != (pass == 1))
                continue;
            if (!all && strcmp(r->client, name) != 0)
                continue;
            dir = clients_base_dir(r->base);
            if (dir == NULL)
                continue;
            if (r->rel[rl - 1] == '/')
                clients_add_dir(&f, n, &cap, r, str_printf("%s/%s", dir,
                    r->rel));
            else
                clients_add(&f, n, &cap, r, str_printf("%s/%s", dir,
                    r->rel));
            free(dir);
        }
    }
    if (f == NULL)
        f = xcalloc(1, sizeof *f);
    return f;
}

/* See clients.h. */
void
clients_free(struct clients_file *f, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        free(f[i].path);
    free(f);
}

/* How a syntax is written in --help. */
static const char *
clients_vars_shown(enum config_vars v)
{
    switch (v) {
    case CONFIG_VARS_NONE:
        return "none";
    case CONFIG_VARS_GEMINI:
        return "$VAR ${VAR}";
    case CONFIG_VARS_OPENCODE:
        return "{env:VAR} {file:PATH}";
    case CONFIG_VARS_CONTINUE:
        return "${{ secrets.NAME }}";
    default:
        return "${VAR} ${VAR:-default} ${env:VAR}";
    }
}

/* See clients.h. */
void
clients_usage(FILE *out)
{
    const char *last = "";
    size_t      i;

    fprintf(out, "--from CLIENT reads these files when they exist (~/.config "
        "is $XDG_CONFIG_HOME\nwhen set, ~/.codex is $CODEX_HOME; ./ is the "
        "current directory; a path\nending in / is a directory of YAML and "
        "JSON blocks), with the variables\neach client expands:\n");
    for (i = 0; i < CLIENTS_NROWS; i++) {
        const struct clients_row *r = &clients_rows[i];
        bool                      first = strcmp(last, r->client) != 0;

        fprintf(out, "  %-12s %s%s\n", first ? r->client : "",
            clients_base_shown(r->base), r->rel);
        last = r->client;
        if (i + 1 == CLIENTS_NROWS
            || strcmp(clients_rows[i + 1].client, r->client) != 0)
            fprintf(out, "  %-12s   variables: %s\n", "",
                clients_vars_shown(r->vars));
    }
}
