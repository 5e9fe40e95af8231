/*
 * The well-known config files of MCP clients, as one table: each row is
 * a client, the tag its servers get, the base directory and the path
 * under it. The same table resolves the paths for --from and prints the
 * list for --help, so the two never disagree.
 */
#include "engine/clients.h"

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
    CLIENTS_CWD,            /* the current directory: the project */
};

struct clients_row {
    const char        *client;
    const char        *source;
    enum clients_base  base;
    const char        *rel;
};

static const struct clients_row clients_rows[] = {
    { "claude", "claude", CLIENTS_XDG,
      "Claude/claude_desktop_config.json" },
    { "claude", "claude", CLIENTS_MAC,
      "Claude/claude_desktop_config.json" },
    { "claude-code", "claude-code", CLIENTS_HOME, ".claude.json" },
    { "claude-code", "claude-code:project", CLIENTS_CWD, ".mcp.json" },
    { "cursor", "cursor", CLIENTS_HOME, ".cursor/mcp.json" },
    { "cursor", "cursor:project", CLIENTS_CWD, ".cursor/mcp.json" },
    { "vscode", "vscode", CLIENTS_XDG, "Code/User/mcp.json" },
    { "vscode", "vscode", CLIENTS_XDG, "Code/User/settings.json" },
    { "vscode", "vscode", CLIENTS_MAC, "Code/User/mcp.json" },
    { "vscode", "vscode", CLIENTS_MAC, "Code/User/settings.json" },
    { "vscode", "vscode:project", CLIENTS_CWD, ".vscode/mcp.json" },
    { "windsurf", "windsurf", CLIENTS_HOME,
      ".codeium/windsurf/mcp_config.json" },
    { "zed", "zed", CLIENTS_XDG, "zed/settings.json" },
    { "zed", "zed:project", CLIENTS_CWD, ".zed/settings.json" },
};

#define CLIENTS_NROWS (sizeof clients_rows / sizeof clients_rows[0])

/* See clients.h. */
const char *
clients_names(void)
{
    return "claude, claude-code, cursor, vscode, windsurf, zed or all";
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
    default:
        return getcwd(cwd, sizeof cwd) != NULL ? xstrdup(cwd) : NULL;
    }
}

/* See clients.h. */
struct clients_file *
clients_files(const char *name, size_t *n)
{
    struct clients_file *f;
    size_t               i;
    bool                 all = strcmp(name, "all") == 0;

    *n = 0;
    if (!clients_known(name))
        return NULL;
    f = xcalloc(CLIENTS_NROWS, sizeof *f);
    /* Per-user files first, then the project's: a project's server that
     * repeats a user one is the one renamed. */
    for (int pass = 0; pass < 2; pass++) {
        for (i = 0; i < CLIENTS_NROWS; i++) {
            const struct clients_row *r = &clients_rows[i];
            char                     *dir;

            if ((r->base == CLIENTS_CWD) != (pass == 1))
                continue;
            if (!all && strcmp(r->client, name) != 0)
                continue;
            dir = clients_base_dir(r->base);
            if (dir == NULL)
                continue;
            f[*n].client = r->client;
            f[*n].source = r->source;
            f[*n].path = str_printf("%s/%s", dir, r->rel);
            free(dir);
            (*n)++;
        }
    }
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

/* See clients.h. */
void
clients_usage(FILE *out)
{
    const char *last = "";
    size_t      i;

    fprintf(out, "--from CLIENT reads these files when they exist (~/.config "
        "is $XDG_CONFIG_HOME\nwhen set; ./ is the current directory):\n");
    for (i = 0; i < CLIENTS_NROWS; i++) {
        const struct clients_row *r = &clients_rows[i];

        fprintf(out, "  %-12s %s%s\n", strcmp(last, r->client) != 0
            ? r->client : "", clients_base_shown(r->base), r->rel);
        last = r->client;
    }
}
