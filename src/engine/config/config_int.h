/*
 * What the files of the config module share (engine-private): config.c
 * (the public face, the top level, the fleet), config_file.c (the text),
 * config_formats.c (other clients' shapes), config_server.c (one server
 * entry), config_input.c (${...} expansion), config_notes.c (notes and
 * warnings), config_oauth.c and config_probe.c. Messages never quote a
 * value; secrets are wiped before they are freed.
 */
#ifndef MCPTOP_ENGINE_CONFIG_INT_H
#define MCPTOP_ENGINE_CONFIG_INT_H

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "engine/config.h"

#define CONFIG_SHOWN_MAX        64      /* longest name quoted in a message */
#define CONFIG_SHOWN_SIZE       (CONFIG_SHOWN_MAX + 4)
#define CONFIG_MAX_FILE_BYTES   (16u * 1024 * 1024)
#define CONFIG_MAX_INT          INT_MAX

/* What a key of a server entry means to mcptop. */
enum config_key {
    CONFIG_KEY_UNKNOWN,
    CONFIG_KEY_TYPE,            /* type, transportType (Cline) */
    CONFIG_KEY_URL,             /* url, serverUrl, httpUrl, uri */
    CONFIG_KEY_HEADERS,
    CONFIG_KEY_REQUEST,         /* requestOptions (Continue): its headers */
    CONFIG_KEY_COMMAND,         /* command (string, array or object), cmd */
    CONFIG_KEY_ARGS,
    CONFIG_KEY_ENV,             /* env, envs (Goose), environment (opencode) */
    CONFIG_KEY_ENVFILE,
    CONFIG_KEY_CWD,
    CONFIG_KEY_ENV_KEYS,        /* Goose: variables from its keyring */
    CONFIG_KEY_DISABLED,
    CONFIG_KEY_ENABLED,
    CONFIG_KEY_TIMEOUT,         /* another client's request timeout */
    CONFIG_KEY_OPT,             /* mcptop's own */
    CONFIG_KEY_NAME,            /* the name of a list entry */
    CONFIG_KEY_SILENT,          /* no bearing on a monitor */
    CONFIG_KEY_NOTE,            /* another client's behaviour: a note */
    CONFIG_KEY_OAUTH,           /* mcptop's "oauth" (config_oauth.c) */
    CONFIG_KEY_PROBE,           /* mcptop's "probe_tool" (config_probe.c) */
    CONFIG_KEY_TAP,             /* mcptop's "tap": a tap's socket */
    CONFIG_KEY_ENV_AUTH,        /* Codex: bearer_token_env_var,
                                   env_http_headers (config_codex.c) */
    CONFIG_KEY_ENV_VARS,        /* Codex: env_vars */
    CONFIG_KEY_STARTUP,         /* Codex: startup_timeout_sec, _ms */
};

/* Why another client's "oauth" (or way to authorize) is not applied. */
#define CONFIG_NOTE_OAUTH "another client's way to authorize: mcptop reads " \
    "its own \"oauth\" object"

/* One known key: its kind, the transport it belongs to (-1: either) and,
 * for CONFIG_KEY_NOTE, why it is not applied. */
struct config_keydef {
    const char      *key;
    enum config_key  kind;
    int              transport;
    const char      *note;
};

/* The kinds of server map a file may hold. */
enum config_shape {
    CONFIG_SHAPE_MAP,           /* mcpServers, servers, mcp.servers */
    CONFIG_SHAPE_LIST,          /* mcpServers as a list (Continue) */
    CONFIG_SHAPE_OPENCODE,      /* mcp */
    CONFIG_SHAPE_ZED,           /* context_servers */
    CONFIG_SHAPE_GOOSE,         /* extensions */
};

/* One server map found in a file. */
struct config_container {
    const cJSON       *obj;
    enum config_shape  shape;
};

/* The most containers one file may hold (see config_containers). */
#define CONFIG_MAX_CONTAINERS 8

/* One note being gathered: its text and the servers it concerns. */
struct config_note {
    char   *text;
    char  **names;
    size_t  nnames;     /* servers concerned; the first
                           CONFIG_NOTE_NAMES are in names */
};

/* An ${input:ID} value already given during this parse (a secret). */
struct config_input_value {
    char *id;
    char *value;
};

/* A set of names from the file (server names, keys, note texts, input
 * ids), each with a number (an index), by open addressing, so that a
 * repeated name is found in O(1) rather than by comparing with every
 * earlier one. */
struct config_name_slot {
    const char *name;           /* borrowed; NULL: empty */
    long        value;
};

struct config_names {
    struct config_name_slot *slot;
    size_t                   cap;   /* a power of two */
    size_t                   n;
};

/* The state of one parse: options, the file's inputs, notes, inputs
 * given so far and the directories ${userHome} and ${workspaceFolder}
 * name. */
struct config_ctx {
    struct config               *cfg;
    const struct config_options *opt;
    const cJSON                 *inputs;    /* VS Code "inputs", or NULL */
    struct config_note          *notes;
    size_t                       nnotes;
    struct config_names          note_ix;   /* text -> index in notes */
    struct config_input_value   *given;
    size_t                       ngiven;
    struct config_names          given_ix;  /* id -> index in given */
    const cJSON                **decls;     /* inputs with an "id" ... */
    struct config_names          decl_ix;   /* ... by id (the first) */
    bool                         decls_read;
    char                        *home;
    char                        *workspace;
    struct config_names          names;     /* of the servers loaded */
    enum config_vars             vars;      /* the file's syntax (never
                                               CONFIG_VARS_AUTO here) */
    struct config_server        *cur;       /* the entry being read: what
                                               it expands is named here */
    size_t                       expanded;  /* bytes references expanded
                                               to in cur (capped) */
    size_t                       expanded_all;  /* ...in the whole file */
};

/* The most variable names kept per server (config_server.vars). */
#define CONFIG_MAX_VARS 32

/* What an entry's keys leave to be applied after all of them are read. */
struct config_entry {
    const cJSON       *timeout;
    const cJSON       *envfile;
    const cJSON       *env_keys;
    bool               has_timeout_ms;
    enum config_shape  shape;
    const cJSON       *bearer_env;      /* Codex's, see config_codex.c */
    const cJSON       *env_headers;
    const cJSON       *env_vars;
    const cJSON       *startup;
};

/* A growable byte buffer whose old copies are wiped when it grows. */
struct config_buf {
    char   *p;
    size_t  len;
    size_t  cap;
};

/* The parts of an http(s) URL mcptop looks at; spans point into the URL. */
struct config_url {
    const char *host;
    size_t      hostlen;
    const char *port;           /* NULL when absent or empty */
    size_t      portlen;
    bool        https;
};

/* --- config.c: what every part uses ------------------------------------ */

/* True when key is one of the NULL-terminated list. */
bool config_in(const char *const *list, const char *key);
/* A name from the file fit for a message, in buf (CONFIG_SHOWN_SIZE). */
const char *config_shown(char *buf, const char *s);
/* "a number", "an object"...: v's JSON kind, for messages. */
const char *config_kind(const cJSON *v);
/* The number stored with name, or -1 when name is not in x. */
long config_names_find(const struct config_names *x, const char *name);
/* Add name (borrowed: it must outlive x) with value, unless it is in x. */
void config_names_add(struct config_names *x, const char *name, long value);
/* True when name is in x already; else it is added (borrowed). */
bool config_names_seen(struct config_names *x, const char *name);
/* Free the table (not the names). */
void config_names_done(struct config_names *x);

/* --- config_file.c: the text ------------------------------------------- */

/* Parse a config's text (JSON with comments, or YAML) into a cJSON tree
 * (caller deletes). NULL with *cause naming origin (and a position). */
cJSON *config_parse_tree(const char *text, size_t len, const char *origin,
    char **cause);
/* Read fd to its end (at most CONFIG_MAX_FILE_BYTES) into *buf (caller
 * wipes and frees) and *len; size is the file's size when known, else 0.
 * 0, or -1 with *cause naming name. */
int config_read_fd(int fd, const char *name, size_t size, char **buf,
    size_t *len, char **cause);

/* --- config_notes.c: warnings and notes -------------------------------- */

/* Append a warning to cfg->warnings. */
void config_warn(struct config *cfg, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Gather a note about server name (NULL: about the file); notes with the
 * same text become one line naming every server. */
void config_note(struct config_ctx *ctx, const char *name, const char *fmt,
    ...) __attribute__((format(printf, 3, 4)));
/* Turn the gathered notes into ctx->cfg->notes and free them. */
void config_notes_done(struct config_ctx *ctx);

/* --- config_input.c: ${...} -------------------------------------------- */

/* Append n bytes to b, wiping the old storage when it grows. */
void config_buf_add(struct config_buf *b, const char *s, size_t n);
/* Wipe and free b's storage. */
void config_buf_wipe(struct config_buf *b);
/* config_expand within a parse (ctx may be NULL: the environment only).
 * Caller wipes and frees; NULL with *cause naming the reference. */
char *config_expand_ctx(struct config_ctx *ctx, const char *s, char **cause);
/* Free the inputs given during a parse and their indexes. */
void config_input_done(struct config_ctx *ctx);
/* Note that the entry being read (ctx->cur) expanded name. */
void config_var_used(struct config_ctx *ctx, const char *name, size_t n);
/* Note that the entry being read did not apply key (names only). */
void config_key_unapplied(struct config_ctx *ctx, const char *key);

/* --- config_server.c: one server entry --------------------------------- */

/* Check an http(s) URL and find its host and port. 0, or -1 with *why. */
int config_url_parse(const char *url, struct config_url *u, char **why);
/* True when v says something: not null, false, 0, "" or empty. */
bool config_meaningful(const cJSON *v);
/* Read v from element `from` on as an array of strings (see
 * config_server.c). 0 with *out and *n set (caller frees), or -1 with
 * *why. */
int config_strings(struct config_ctx *ctx, const cJSON *v, bool expand,
    bool nonempty, size_t from, char ***out, size_t *n, char **why);
/* Expand text (the value of key) into *out (caller wipes and frees).
 * 0, or -1 with *why naming key. */
int config_expand_key(struct config_ctx *ctx, const char *key,
    const char *text, char **out, char **why);
/* Read v as headers or env: an object of strings, each expanded. 0 with
 * *out and *n set (caller frees), or -1 with *why (never the value). */
int config_kvs(struct config_ctx *ctx, const cJSON *v, bool headers,
    struct str_kv **out, size_t *n, char **why);
/* True when an (expanded) header value holds a control character. */
bool config_header_value_bad(const char *value);
/* True when name is an HTTP header field name (an RFC 9110 token). */
bool config_header_name_ok(const char *name);
/* Apply one of mcptop's own keys to s: 1 applied, 0 not one of them, -1
 * with *why. */
int config_opt(struct config_server *s, const cJSON *v, char **why);
/* Set s to the built-in defaults. */
void config_server_defaults(struct config_server *s);
/* Free everything s owns (not s itself). */
void config_server_done(struct config_server *s);
/* Make dst a deep copy of src (every string and array its own; secrets
 * copied as they are). Free with config_server_done. */
void config_server_copy(struct config_server *dst,
    const struct config_server *src);
/* Fill s from one entry of a server map; problems go to s->invalid or
 * the warnings. */
void config_server_load(struct config_ctx *ctx, struct config_server *s,
    const char *name, const cJSON *entry, const struct config_server *fleet,
    enum config_shape shape);

/* --- config_formats.c: other clients' shapes --------------------------- */

/* The definition of key, or NULL when it is unknown. */
const struct config_keydef *config_keydef(const char *key);
/* A "type" value in lower case without '-', '_' and spaces, into dst. */
void config_type_norm(char *dst, size_t size, const char *src);
/* The transport a normalised "type" names, or -1 when none. */
int config_type_transport(const char *norm);
/* "command" as a string, an array (opencode) or an object (Zed). 0, or
 * -1 with *why. */
int config_command(struct config_ctx *ctx, struct config_server *s,
    const cJSON *v, char **why);
/* Continue's "requestOptions". 0, or -1 with *why. */
int config_request(struct config_ctx *ctx, struct config_server *s,
    const cJSON *v, char **why);
/* Apply another client's "timeout" (after every key is read). */
void config_entry_timeout(struct config_ctx *ctx, struct config_server *s,
    const struct config_entry *st);
/* Goose's "env_keys": warn about those mcptop's environment lacks. */
void config_entry_env_keys(struct config_ctx *ctx, struct config_server *s,
    const cJSON *v);
/* Find the server maps of root and its "inputs". 0 with *n set, or -1
 * with *cause. */
int config_containers(const cJSON *root, const char *origin,
    const char *cwd, struct config_container *out, size_t *n,
    const cJSON **inputs, char **cause);
/* True when entry e is not a server mcptop can run (noted). */
bool config_entry_skipped(struct config_ctx *ctx, const cJSON *e,
    const char *name, enum config_shape shape);

/* --- config_codex.c: Codex's keys that name variables ----------------- */

/* Apply bearer_token_env_var, env_http_headers, env_vars and
 * startup_timeout_* (after every key is read). 0, or -1 with *why naming
 * the variable and the file. */
int config_entry_codex(struct config_ctx *ctx, struct config_server *s,
    const struct config_entry *st, char **why);

/* --- config_oauth.c: a server's "oauth" object (MCP authorization) ----- */
int config_oauth(struct config *cfg, const char *server, const cJSON *v,
    struct config_oauth **out, char **why);
void config_oauth_free(struct config_oauth *o);
/* Is this "oauth" object mcptop's (empty, or one of its keys), rather
 * than another client's (Gemini CLI, opencode)? */
bool config_oauth_is_ours(const cJSON *v);

/* --- config_probe.c: a server's "probe_tool" object (a deep check) ----- */
int config_probe(struct config *cfg, const char *server, const cJSON *v,
    struct config_probe **out, char **why);
void config_probe_free(struct config_probe *p);

#endif
