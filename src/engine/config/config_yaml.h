/*
 * The YAML side of the config loader (Continue's and Goose's config.yaml):
 * libyaml reads the first document, which becomes the same cJSON tree a
 * JSON file gives, so that one mapping reads both. Part of the config
 * module; only config_file.c calls it.
 */
#ifndef MCPTOP_ENGINE_CONFIG_YAML_H
#define MCPTOP_ENGINE_CONFIG_YAML_H

#include <stddef.h>

struct cJSON;

/* The deepest nesting and the most nodes (aliases counted each time they
 * are used) a YAML config may have. */
#define CONFIG_YAML_MAX_DEPTH  64
#define CONFIG_YAML_MAX_NODES  200000

/*
 * Parse the first YAML document of text (len bytes) into a cJSON tree
 * (caller frees with cJSON_Delete). Plain scalars become null, booleans
 * (true/false in any case) and numbers when they read as such; every other
 * scalar is a string; mapping keys must be scalars. NULL with *cause
 * (caller frees) naming origin, and the line and column when libyaml gives
 * them, for text that is not YAML, nests deeper than
 * CONFIG_YAML_MAX_DEPTH, expands past CONFIG_YAML_MAX_NODES, or holds a
 * NUL in a string.
 */
struct cJSON *config_yaml_parse(const char *text, size_t len,
    const char *origin, char **cause);

#endif
