/*
 * The fleet declaration: the config files MCP clients already have, plus
 * mcptop's own optional keys. See DESIGN.md section 7 and the README's
 * table of clients. JSON (with comments and trailing commas) or YAML, with
 * the server map under any of:
 *
 *   "mcpServers"        Claude Desktop, Claude Code, Cursor, Windsurf,
 *                       Cline, Gemini CLI, Amazon Q, ... (an object), or
 *                       Continue (a list of entries with "name")
 *   "servers"           VS Code's mcp.json (with "inputs")
 *   "mcp": {"servers"}  VS Code's user settings.json
 *   "mcp"               opencode ("type": "local" | "remote")
 *   "context_servers"   Zed (flat, or "command": {"path", "args", "env"})
 *   "extensions"        Goose's config.yaml
 *   "projects"[cwd].mcpServers   Claude Code's per-project servers
 *
 * Key aliases (serverUrl, httpUrl, uri, cmd, envs, environment, a command
 * array) and "type" spellings are read case-insensitively. TOML (Codex) is
 * refused with a message naming the JSON equivalent.
 *
 * Parsing is strict about structure and lenient about extras: an unknown
 * key is a warning; a key another client uses for its own behaviour is a
 * note (see struct config); a broken server entry marks that server
 * invalid (invalid_config, no liveness record) and the others still load;
 * only an unreadable or unparsable file, or one with no server map, fails
 * whole.
 *
 * Values expanded from ${VAR} or ${input:ID}, values read from an envFile,
 * and every header and env value are secrets: nothing here prints them,
 * and no other module may. A URL may hold secrets too: show url_shown.
 */
#ifndef MCPTOP_ENGINE_CONFIG_H
#define MCPTOP_ENGINE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/http.h"
#include "util/str.h"

enum config_transport {
    CONFIG_HTTP,            /* Streamable HTTP */
    CONFIG_STDIO,
};

enum config_era {
    CONFIG_ERA_AUTO,
    CONFIG_ERA_MODERN,
    CONFIG_ERA_LEGACY,
};

/* --- oauth: MCP authorization (issue 16) ------------------------------ */
enum config_oauth_grant {
    CONFIG_OAUTH_AUTHORIZATION_CODE,    /* the default: needs consent */
    CONFIG_OAUTH_CLIENT_CREDENTIALS,    /* RFC 6749 section 4.4 */
};

/* A server's "oauth" object (every key optional). Strings are expanded
 * like headers; client_secret is a secret: never shown or logged. */
struct config_oauth {
    char                   *client_id;
    char                   *client_secret;
    char                   *token_endpoint_auth_method; /* NULL: chosen
                                            from the server's metadata */
    char                   *private_key_file;   /* private_key_jwt */
    char                   *signing_algorithm;  /* "ES256", "RS256" or
                                                   NULL (from the key) */
    enum config_oauth_grant grant;
    char                   *scope;
    char                   *client_metadata_url;
    /* The authorization server client_secret belongs to: the secret goes
     * only to this issuer's token endpoint. NULL: only to one on the MCP
     * server's own host. */
    char                   *issuer;
};
/* --- end oauth --------------------------------------------------------- */

/* Defaults; a server inherits the fleet's, then applies its own keys. */
#define CONFIG_DEFAULT_PING_INTERVAL_MS   15000
#define CONFIG_DEFAULT_TIMEOUT_MS         10000
#define CONFIG_DEFAULT_OPEN_DEADLINE_MS   10000
#define CONFIG_DEFAULT_TEARDOWN_MS         3000
#define CONFIG_DEFAULT_CRASH_WINDOW_MS    10000  /* a child that dies this
                                                soon after its dial is a
                                                crash (DESIGN.md 4b) */
#define CONFIG_DEFAULT_MAX_MESSAGE_BYTES  HTTP_MAX_BYTES

/* A server's "probe_tool" (a deep check): a tools/call mcptop makes at its
 * own interval, judged by its result (and expect_text, when set). */
struct config_probe {
    char                 *name;         /* the tool */
    char                 *arguments;    /* a JSON object's text ("{}") */
    long                  interval_ms;  /* between calls (60000) */
    long                  timeout_ms;   /* 0: the server's timeout_ms */
    char                 *expect_text;  /* NULL: any result will do */
};

struct config_server {
    char                 *name;
    enum config_transport transport;
    /* "type": "sse" (Claude Code, Cursor and VS Code write it): the
     * 2024-11-05 HTTP+SSE transport at once, with no probe */
    bool                  http_sse;
    /* HTTP */
    char                 *url;          /* as written: its userinfo or query
                                           may be a secret; never shown */
    char                 *url_shown;    /* url_redact(url): the only form
                                           shown, logged or written */
    struct str_kv     *headers;
    size_t                nheaders;
    char                 *ca_file;      /* NULL: system store */
    bool                  tls_insecure;
    struct config_oauth  *oauth;        /* NULL: no "oauth" key (oauth) */
    struct config_probe  *probe;        /* NULL: no "probe_tool" */
    /* stdio */
    char                 *command;      /* expanded */
    char                 *command_shown;    /* as written (NULL: same as
                                               command): for display */
    char                **args;         /* expanded */
    char                **args_shown;   /* as written: for display */
    size_t                nargs;
    struct str_kv     *env;          /* expanded, then the envFile's
                                           variables not set here; added to
                                           mcptop's env */
    size_t                nenv;
    char                 *cwd;
    /* a tap (issue 31): the socket of an `mcptop tap` that stands in for
     * this server; the server is shown from its observations and never
     * dialed. NULL: none. transport is CONFIG_STDIO for it. */
    char                 *tap;
    /* mcptop's keys (fleet-wide under "mcptop", per server at top level) */
    long                  ping_interval_ms;   /* ping_interval_s * 1000 */
    long                  timeout_ms;
    long                  open_deadline_ms;
    long                  teardown_ms;
    long                  crash_window_ms;    /* 0: the default (the
                                                 longer of 10 s and two
                                                 ping intervals) */
    long                  stream_idle_ms;     /* a silent GET stream is
                                                 opened afresh after it;
                                                 0: the default (four
                                                 ping intervals, at
                                                 least 60 s) */
    size_t                max_message_bytes;
    enum config_era       era;
    char                **tags;
    size_t                ntags;
    /* "disabled": true (or "enabled": false): declared but switched off
     * in the client; not to be dialed until enabled. */
    bool                  disabled;
    /* The client whose config it came from under --from ("cursor",
     * "vscode:project", ...), or NULL. */
    char                 *source;
    /* The file it was declared in (as given), "stdin" or "command line". */
    char                 *origin;
    /* Non-NULL: why this declaration cannot be dialed (invalid_config). */
    char                 *invalid;
    /* Why its client does not run it (with disabled), or NULL: "\"enabled\":
     * false", "not approved in ~/.claude.json", ... */
    char                 *disabled_why;
    /* The variables expanded in it, names only ("GITHUB_TOKEN",
     * "input:api-key", "file:~/token"): never their values. */
    char                **vars;
    size_t                nvars;
    /* Keys of the entry read and not applied (another client's
     * behaviour): names only. */
    char                **unapplied;
    size_t                nunapplied;
    /* Every file that declares this same target, the first being the
     * one it is named after (see config_merge); 0 when not merged. */
    struct config_source *sources;
    size_t                nsources;
};

/* An entry of a file that is not a server mcptop can run, and why. */
struct config_skip {
    char *name;
    char *origin;
    char *why;
};

struct config {
    char                 *origin;       /* file path(s), or "command line" */
    struct config_server *servers;
    size_t                nservers;
    char                **warnings;     /* e.g. unknown keys, with location */
    size_t                nwarnings;
    /* Keys read but not applied (another client's tool permissions, its
     * OAuth, ...), how a "timeout" was read, entries skipped: one line per
     * kind naming its servers, for --verbose and the log. */
    char                **notes;
    size_t                nnotes;
    /* Entries skipped (a Goose built-in, a Zed extension's server). */
    struct config_skip   *skipped;
    size_t                nskipped;
    /* Servers merged into another with the same target (config_merge):
     * "NAME (FILE) is SERVER", for --verbose and `configs`. */
    char                **merged;
    size_t                nmerged;
};

/*
 * Asks for the value of ${input:ID} when MCPTOP_INPUT_<ID> is not set
 * (the TUI asks on the terminal before it starts). description and
 * password come from the file's "inputs" (NULL and false when it declares
 * none). Returns the value, borrowed until the parse returns, or NULL.
 */
typedef const char *(*config_input_fn)(void *arg, const char *id,
    const char *description, bool password);

/*
 * The variable syntax of the client whose file is read: each client
 * expands its own, in the fields it expands (url, command, args, env,
 * headers, cwd). A reference that client would expand and mcptop cannot
 * (an unset variable, a VS Code command variable, a missing file) makes
 * the entry invalid, naming the variable and the file: never a literal
 * sent to a server.
 */
enum config_vars {
    CONFIG_VARS_AUTO,       /* from the file's name and shape, else
                               CONFIG_VARS_DEFAULT */
    CONFIG_VARS_DEFAULT,    /* ${VAR}, ${VAR:-default}, ${env:VAR} (Claude
                               Code, Cursor, Windsurf, Roo Code, LM
                               Studio), and VS Code's ${input:ID} and
                               predefined variables; "$$" is a '$' */
    CONFIG_VARS_GEMINI,     /* $VAR and ${VAR} (Gemini CLI) */
    CONFIG_VARS_OPENCODE,   /* {env:VAR} and {file:PATH} (opencode) */
    CONFIG_VARS_CONTINUE,   /* ${{ secrets.NAME }} (Continue): NAME from
                               the environment */
    CONFIG_VARS_NONE,       /* none: strings as written (Claude Desktop,
                               Codex, Goose, Zed, Cline) */
};

/* A client's file a server was found in (see config_server.sources). */
struct config_source {
    char *client;           /* "cursor", "vscode:project", ...; NULL for
                               -c */
    char *origin;           /* the file */
};

/* How a config is read. All zero: inputs from the environment only, the
 * variable syntax from the file's name, and a file with no server map is
 * an error. */
struct config_options {
    config_input_fn input;
    void           *input_arg;
    bool            allow_none;     /* no server map: an empty fleet and a
                                       note, not an error (--from) */
    enum config_vars vars;          /* whose variable syntax */
};

/*
 * Parse a config from text (len bytes). origin names it in messages and
 * its extension picks the format (.yaml/.yml YAML, .toml refused, .json
 * JSON; otherwise the text is sniffed). 0 and *out set (caller frees with
 * config_free), or -1 with *cause set (caller frees): for text that is
 * empty, not JSON or YAML (the message names origin, line and column),
 * TOML, or has no server map. Per-server problems are not errors: see
 * ->invalid.
 */
int config_parse(const char *text, size_t len, const char *origin,
    struct config **out, char **cause);

/* config_parse with options (NULL: all zero). */
int config_parse_with(const char *text, size_t len, const char *origin,
    const struct config_options *opt, struct config **out, char **cause);

/* Read and parse a file. -1 with *cause (naming the path) when unreadable,
 * larger than 16 MiB, or config_parse fails. */
int config_load_file(const char *path, struct config **out, char **cause);

/* config_load_file with options (NULL: all zero). */
int config_load_file_with(const char *path, const struct config_options *opt,
    struct config **out, char **cause);

/* Read fd to its end (at most 16 MiB) and parse it as origin (e.g.
 * "stdin"). The descriptor is not closed. Errors as config_load_file. */
int config_load_fd(int fd, const char *origin,
    const struct config_options *opt, struct config **out, char **cause);

/* A one-server fleet for an ad-hoc URL given on the command line. The
 * server is named after the URL's host:port. Never NULL. */
struct config *config_for_url(const char *url);

/* A one-server fleet holding a deep copy of decl (a declaration of a
 * running fleet, probed apart from it: it outlives a reload that frees
 * decl). Never NULL; free with config_free. */
struct config *config_for_server(const struct config_server *decl);

/*
 * A one-server stdio fleet for argv[0..argc) given on the command line
 * (after "--"): argv[0] is the command, the rest its arguments, taken as
 * they are (no ${VAR} expansion: the shell already did it). The server is
 * named after the command's last path component. Never NULL; argc 0 gives
 * an invalid server.
 */
struct config *config_for_command(char *const *argv, size_t argc);

/*
 * Move every server, warning and note of from into into, and free from.
 * With rename set (--from), a newcomer with a source that dials the same
 * target as one of into's (the same URL, or the same command, arguments,
 * env and cwd) is that server: it is folded into it (sources lists both
 * files, into->merged says so) whatever its name. A name into already has
 * is an error naming both files, unless rename is set and the newcomer
 * has a source: then it becomes "NAME@SOURCE". 0, or -1 with *cause
 * (caller frees; from may have lost its folded servers).
 */
int config_merge(struct config *into, struct config *from, bool rename,
    char **cause);

/* The environment variable that gives ${input:id}: "MCPTOP_INPUT_" and id
 * upper-cased, every byte that is not a letter or digit as '_'. Caller
 * frees. */
char *config_input_env(const char *id);

/* True when two declarations would be dialed alike (a reload keeps such a
 * server running): every key that changes behaviour compares equal. */
bool config_server_same(const struct config_server *a,
    const struct config_server *b);

/*
 * A fleet of the taps whose sockets are in dir (`--taps DIR`): each
 * socket named tap-NAME.sock (as `mcptop tap` makes them) is a server
 * NAME read from it ({"tap": PATH}); other entries are skipped. An empty
 * directory is an empty fleet. NULL with *cause when dir cannot be read.
 */
struct config *config_for_taps(const char *dir, char **cause);

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
 *
 * Within a config file (headers, env, args, the envFile path) the parser
 * also expands ${input:ID} and VS Code's predefined ${userHome},
 * ${workspaceFolder} (the current directory), ${workspaceFolderBasename},
 * ${pathSeparator} and ${/}; config_expand alone reads only the
 * environment.
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

/*
 * Where a tap named name publishes by default (config_tap.c), computed
 * only (the directory is neither made nor checked): dir/tap-NAME.sock,
 * name's bytes other than letters, digits, '.', '-' and '_' as '_'.
 * config_tap_dir: $XDG_RUNTIME_DIR/mcptop when XDG_RUNTIME_DIR is a
 * directory of this user's, else /tmp/mcptop-USER. Caller frees; never
 * NULL.
 */
char *config_tap_dir(void);
char *config_tap_path(const char *name);

#endif
