/*
 * Where MCP clients keep their config files, for --from: the per-user
 * files (under $HOME and $XDG_CONFIG_HOME, which defaults to ~/.config)
 * and the per-project ones (under the current directory).
 */
#ifndef MCPTOP_ENGINE_CLIENTS_H
#define MCPTOP_ENGINE_CLIENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "engine/config.h"

/* One well-known file of a client. */
struct clients_file {
    const char      *client;    /* "cursor", ... */
    const char      *source;    /* the tag its servers get: "cursor",
                                   "cursor:project", ... */
    char            *path;      /* resolved; freed by clients_free */
    enum config_vars vars;      /* the variables the client expands */
};

/* True when name is a client --from knows, or "all". */
bool clients_known(const char *name);

/* The names --from takes, for messages: "claude, claude-code, ...". */
const char *clients_names(void);

/*
 * The files of client name ("all": every client's), in reading order:
 * per-user files first, then per-project ones; a directory of blocks
 * (Continue's mcpServers/) gives its YAML and JSON files in name order,
 * or the directory itself when it has none. Files whose base directory
 * is unknown (no HOME) are left out. *n entries; caller frees with
 * clients_free. NULL with *n 0 for an unknown name.
 */
struct clients_file *clients_files(const char *name, size_t *n);

/* Free what clients_files returned. */
void clients_free(struct clients_file *f, size_t n);

/* Print the table of clients, files and variables, for --help. */
void clients_usage(FILE *out);

/* The variable syntax of the client whose well-known file path is (by
 * its trailing components: ".gemini/settings.json", "opencode.json"),
 * or CONFIG_VARS_DEFAULT for any other file. */
enum config_vars clients_vars_of_path(const char *path);

/*
 * Apply Claude Code's project switches to the servers of cfg that came
 * from the project's .mcp.json (source "claude-code:project"): a server
 * runs when ~/.claude.json's projects[cwd] (or a settings file:
 * ~/.claude/settings.json, ./.claude/settings.json,
 * ./.claude/settings.local.json) lists it in enabledMcpjsonServers or
 * sets enableAllProjectMcpServers, and no list names it in
 * disabledMcpjsonServers; any other is disabled, with the reason.
 */
void clients_claude_switches(struct config *cfg);

#endif
