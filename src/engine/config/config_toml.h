/*
 * The TOML side of the config loader (Codex's config.toml): toml++ parses
 * the text and one bounded walk copies the table into the same cJSON tree
 * a JSON or YAML file gives, so that one mapping reads all three. Part of
 * the config module; only config_file.c calls it. The one C++ file of the
 * tree is its implementation (config_toml.cpp), behind this C face.
 */
#ifndef MCPTOP_ENGINE_CONFIG_TOML_H
#define MCPTOP_ENGINE_CONFIG_TOML_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct cJSON;

/* The deepest nesting and the most values a TOML config may have. */
#define CONFIG_TOML_MAX_DEPTH  64
#define CONFIG_TOML_MAX_NODES  200000

/*
 * Parse TOML text (len bytes) into a cJSON tree (caller frees with
 * cJSON_Delete): tables become objects, arrays arrays, strings strings,
 * integers and floats numbers, booleans booleans, and dates and times
 * their TOML text. NULL with *cause (caller frees with free()) naming
 * origin, line and column (never the text) for text that is not TOML,
 * nests deeper than CONFIG_TOML_MAX_DEPTH, holds more than
 * CONFIG_TOML_MAX_NODES values, or holds a NUL in a string or key.
 * Never throws.
 */
struct cJSON *config_toml_parse(const char *text, size_t len,
    const char *origin, char **cause);

#ifdef __cplusplus
}
#endif

#endif
