/*
 * Claude Code's project switches: a server of the project's .mcp.json is
 * run only once the user approved it, which Claude Code records in
 * ~/.claude.json under projects[<the project's directory>] and may be
 * told in its settings files (~/.claude/settings.json,
 * ./.claude/settings.json, ./.claude/settings.local.json):
 * enabledMcpjsonServers (approved by name), disabledMcpjsonServers
 * (refused by name, which wins) and enableAllProjectMcpServers (every one
 * approved). A server Claude Code does not run is disabled here, with the
 * reason, so that it is shown and never dialed, counted or alerted on.
 *
 * Only names and booleans are read from these files; an unreadable or
 * broken one counts as saying nothing.
 */
#include "engine/clients.h"

#include "config/config_int.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/file.h"
#include "util/str.h"
#include "util/xmalloc.h"

/* What the files say, gathered: names are borrowed from the trees. */
struct clients_claude {
    cJSON       *trees[4];
    size_t       ntrees;
    const cJSON *enabled[4];
    const cJSON *disabled[4];
    size_t       nlists;
    bool         all;
};

/* Parse path into a tree (kept in st), or NULL. */
static cJSON *
clients_claude_read(struct clients_claude *st, const char *path)
{
    char       *buf = NULL, *cause = NULL;
    size_t      len = 0;
    cJSON      *t = NULL;
    const char *why;
    int         fd = file_open_regular(path, NULL, &why);

    if (fd < 0)
        return NULL;
    if (config_read_fd(fd, path, 0, &buf, &len, &cause) == 0 && len > 0)
        t = config_parse_tree(buf, len, path, &cause);
    close(fd);
    if (buf != NULL)
        explicit_bzero(buf, len);
    free(buf);
    free(cause);
    if (t != NULL && st->ntrees < 4)
        st->trees[st->ntrees++] = t;
    else if (t != NULL)
        cJSON_Delete(t);
    return t;
}

/* Take the switches of object o (a project entry or a settings file). */
static void
clients_claude_take(struct clients_claude *st, const cJSON *o)
{
    const cJSON *v;

    if (!cJSON_IsObject(o) || st->nlists >= 4)
        return;
    st->enabled[st->nlists] = cJSON_GetObjectItemCaseSensitive(o,
        "enabledMcpjsonServers");
    st->disabled[st->nlists] = cJSON_GetObjectItemCaseSensitive(o,
        "disabledMcpjsonServers");
    st->nlists++;
    v = cJSON_GetObjectItemCaseSensitive(o, "enableAllProjectMcpServers");
    if (cJSON_IsTrue(v))
        st->all = true;
}

/* True when name is a string of array a. */
static bool
clients_claude_has(const cJSON *a, const char *name)
{
    const cJSON *e;

    if (!cJSON_IsArray(a))
        return false;
    cJSON_ArrayForEach(e, a) {
        if (cJSON_IsString(e) && strcmp(e->valuestring, name) == 0)
            return true;
    }
    return false;
}

/* See clients.h. */
void
clients_claude_switches(struct config *cfg)
{
    struct clients_claude st = { .ntrees = 0 };
    const char           *home = getenv("HOME");
    char                  cwd[PATH_MAX];
    char                 *path;
    const cJSON          *t;
    size_t                i, k, n = 0;

    for (i = 0; i < cfg->nservers; i++) {
        if (cfg->servers[i].source != NULL &&
            strcmp(cfg->servers[i].source, "claude-code:project") == 0)
            n++;
    }
    if (n == 0 || getcwd(cwd, sizeof cwd) == NULL)
        return;
    if (home != NULL && home[0] != '\0') {
        path = str_printf("%s/.claude.json", home);
        t = clients_claude_read(&st, path);
        free(path);
        if (cJSON_IsObject(t))
            clients_claude_take(&st, cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(t, "projects"), cwd));
        path = str_printf("%s/.claude/settings.json", home);
        clients_claude_take(&st, clients_claude_read(&st, path));
        free(path);
    }
    clients_claude_take(&st, clients_claude_read(&st,
        ".claude/settings.json"));
    clients_claude_take(&st, clients_claude_read(&st,
        ".claude/settings.local.json"));
    for (i = 0; i < cfg->nservers; i++) {
        struct config_server *s = &cfg->servers[i];
        bool                  on = st.all, off = false;

        if (s->source == NULL || strcmp(s->source, "claude-code:project"))
            continue;
        for (k = 0; k < st.nlists; k++) {
            off = off || clients_claude_has(st.disabled[k], s->name);
            on = on || clients_claude_has(st.enabled[k], s->name);
        }
        if (!off && on)
            continue;
        s->disabled = true;
        free(s->disabled_why);
        s->disabled_why = xstrdup(off ? "refused in Claude Code "
            "(disabledMcpjsonServers)" : "not approved in Claude Code "
            "for this project (neither enabledMcpjsonServers nor "
            "enableAllProjectMcpServers in ~/.claude.json or "
            ".claude/settings*.json)");
    }
    for (i = 0; i < st.ntrees; i++)
        cJSON_Delete(st.trees[i]);
}
