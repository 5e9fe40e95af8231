/*
 * Environment files as VS Code and Cursor read them for a server's
 * "envFile" (the dotenv format): KEY=VALUE lines, blank lines and '#'
 * comments, an optional "export " before the key, values in double quotes
 * (escapes \n \r \t \" \\, may span lines), single quotes (literal) or
 * bare (trimmed, cut at " #"). A repeated key keeps its last value. Values
 * are secrets: no message quotes one.
 */
#ifndef MCPTOP_ENGINE_ENVFILE_H
#define MCPTOP_ENGINE_ENVFILE_H

#include <stddef.h>

#include "engine/config.h"

/* The largest environment file read, bytes. */
#define ENVFILE_MAX_BYTES (1024u * 1024)

/*
 * Parse text (len bytes). 0 with *out and *n set (caller frees each name
 * and value, wiping the value, then the array; *out is NULL when n is 0),
 * or -1 with *cause (caller frees) naming the line and the problem, never
 * a value.
 */
int envfile_parse(const char *text, size_t len, struct str_kv **out,
    size_t *n, char **cause);

/*
 * Read and parse the file at path. -1 with *cause (naming the file as
 * shown, which the caller passes so that an expanded path is not
 * printed) when it cannot be read, is larger than ENVFILE_MAX_BYTES, or
 * envfile_parse fails.
 */
int envfile_read(const char *path, const char *shown, struct str_kv **out,
    size_t *n, char **cause);

/* Free n pairs from envfile_parse, wiping the values. NULL does nothing. */
void envfile_free(struct str_kv *kv, size_t n);

#endif
