/*
 * The fleet declaration: a JSON file in the shapes users already have
 * ({"mcpServers": {...}} of Claude Desktop / Cursor, {"servers": {...}} of
 * VS Code), plus mcptop's own optional keys. See DESIGN.md section 7.
 *
 * Parsing is strict about structure and lenient about extras: an unknown
 * key is a warning; a broken server entry marks that server invalid
 * (invalid_config, no liveness record) and the others still load; only an
 * unreadable or non-JSON file, or a file with no server map, fails whole.
 *
 * Values expanded from ${VAR} and every header and env value are secrets:
 * nothing here prints them, and no other module may.
 */
#ifndef MCPTOP_ENGINE_CONFIG_H
#define MCPTOP_ENGINE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

enum config_transport {
    CONFIG_HTTP,            /* Streamable HTTP */
    CONFIG_STDIO,
};

enum config_era {
    CONFIG_ERA_AUTO,
    CONFIG_ERA_MODERN,
    CONFIG_ERA_LEGACY,
};

/* A name=value pair (header or env var). value is a secret: never shown. */
struct config_kv {
    char *name;
    char *value;
};

/* Defaults; a server inherits the fleet's, then applies its own keys. */
#define CONFIG_DEFAULT_PING_INTERVAL_MS   15000
#define CONFIG_DEFAULT_TIMEOUT_MS         10000
#define CONFIG_DEFAULT_OPEN_DEADLINE_MS   10000
#define CONFIG_DEFAULT_TEARDOWN_MS         3000
#define CONFIG_DEFAULT_MAX_MESSAGE_BYTES  (16u * 1024 * 1024)

struct config_server {
    char                 *name;
    enum config_transport transport;
    /* HTTP */
    char                 *url;          /* as written (no secrets in URLs) */
    struct config_kv     *headers;
    size_t                nheaders;
    char                 *ca_file;      /* NULL: system store */
    bool                  tls_insecure;
    /* stdio */
    char                 *command;
    char                **args;         /* expanded */
    char                **args_shown;   /* as written: for display */
    size_t                nargs;
    struct config_kv     *env;          /* expanded; added to mcptop's env */
    size_t                nenv;
    char                 *cwd;
    /* mcptop's keys (fleet-wide under "mcptop", per server at top level) */
    long                  ping_interval_ms;   /* ping_interval_s * 1000 */
    long                  timeout_ms;
    long                  open_deadline_ms;
    long                  teardown_ms;
    size_t                max_message_bytes;
    enum config_era       era;
    char                **tags;
    size_t                ntags;
    /* Non-NULL: why this declaration cannot be dialed (invalid_config). */
    char                 *invalid;
};

struct config {
    char                 *origin;       /* file path, or "command line" */
    struct config_server *servers;
    size_t                nservers;
    char                **warnings;     /* e.g. unknown keys, with location */
    size_t                nwarnings;
};

/*
 * Parse a config from text (len bytes). origin names it in messages.
 * 0 and *out set (caller frees with config_free), or -1 with *cause set
 * (caller frees): for text that is empty, not JSON (the message names
 * origin, line and column), or has neither "mcpServers" nor "servers"
 * as an object. Per-server problems are not errors: see ->invalid.
 */
int config_parse(const char *text, size_t len, const char *origin,
    struct config **out, char **cause);

/* Read and parse a file. -1 with *cause (naming the path) when unreadable,
 * larger than 16 MiB, or config_parse fails. */
int config_load_file(const char *path, struct config **out, char **cause);

/* A one-server fleet for an ad-hoc URL given on the command line. The
 * server is named after the URL's host:port. Never NULL. */
struct config *config_for_url(const char *url);

/* config_free(NULL) does nothing. */
void config_free(struct config *cfg);

/*
 * Keep only the servers for which keep(decl, arg) is true, in their order,
 * and free the others (a shard's share of the fleet). Warnings are kept.
 * Returns how many servers remain. Call before a fleet borrows cfg.
 */
size_t config_retain(struct config *cfg,
    bool (*keep)(const struct config_server *decl, void *arg), void *arg);

/*
 * Expand ${VAR} in s from the environment ("$$" is a literal '$'; a '$'
 * not followed by '{' is kept). Returns a heap string (caller frees), or
 * NULL with *cause set naming the variable when one is unset or the
 * reference is unterminated. Never puts a variable's value in *cause.
 */
char *config_expand(const char *s, char **cause);

/*
 * Find the config when none was given: $MCPTOP_CONFIG, ./mcptop.json,
 * $XDG_CONFIG_HOME/mcptop/config.json (XDG_CONFIG_HOME defaults to
 * ~/.config). Returns the first that exists (caller frees) or NULL.
 */
char *config_discover(void);

/* The discovery order as one line, for --help. Static string. */
const char *config_discover_help(void);

#endif
