/*
 * What config.c shares with the files that read parts of a server entry
 * (engine-private): messages that never quote a value, and wiping secrets.
 */
#ifndef MCPTOP_ENGINE_CONFIG_INT_H
#define MCPTOP_ENGINE_CONFIG_INT_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "engine/config.h"

#define CONFIG_SHOWN_MAX        64      /* longest name quoted in a message */
#define CONFIG_SHOWN_SIZE       (CONFIG_SHOWN_MAX + 4)

/* Overwrite and free a string that may hold a secret. NULL does nothing. */
void config_wipe_free(char *s);
/* True when key is one of the NULL-terminated list. */
bool config_in(const char *const *list, const char *key);
/* A name from the file fit for a message, in buf (CONFIG_SHOWN_SIZE). */
const char *config_shown(char *buf, const char *s);
/* "a number", "an object"...: v's JSON kind, for messages. */
const char *config_kind(const cJSON *v);
/* Append a warning to cfg->warnings. */
void config_warn(struct config *cfg, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* True when an (expanded) header value holds a control character. */
bool config_header_value_bad(const char *value);

/* config_oauth.c: a server's "oauth" object (MCP authorization). */
int config_oauth(struct config *cfg, const char *server, const cJSON *v,
    struct config_oauth **out, char **why);
void config_oauth_free(struct config_oauth *o);
/* Is this "oauth" object mcptop's (empty, or one of its keys), rather
 * than another client's (Gemini CLI, opencode)? */
bool config_oauth_is_ours(const cJSON *v);

/* config_probe.c: a server's "probe_tool" object (a deep check). */
int config_probe(struct config *cfg, const char *server, const cJSON *v,
    struct config_probe **out, char **why);
void config_probe_free(struct config_probe *p);

#endif
