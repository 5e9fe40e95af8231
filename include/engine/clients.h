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

/* One well-known file of a client. */
struct clients_file {
    const char *client;     /* "cursor", ... */
    const char *source;     /* the tag its servers get: "cursor",
                               "cursor:project", ... */
    char       *path;       /* resolved; freed by clients_free */
};

/* True when name is a client --from knows, or "all". */
bool clients_known(const char *name);

/* The names --from takes, for messages: "claude, claude-code, ...". */
const char *clients_names(void);

/*
 * The files of client name ("all": every client's), in reading order:
 * per-user files first, then per-project ones. Files whose base directory
 * is unknown (no HOME) are left out. *n entries; caller frees with
 * clients_free. NULL with *n 0 for an unknown name.
 */
struct clients_file *clients_files(const char *name, size_t *n);

/* Free what clients_files returned. */
void clients_free(struct clients_file *f, size_t n);

/* Print the table of clients and files, for --help. */
void clients_usage(FILE *out);

#endif
