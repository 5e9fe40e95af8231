/*
 * The token cache: $XDG_STATE_HOME/mcptop/tokens.json (XDG_STATE_HOME
 * defaults to ~/.local/state), one entry per server name and resource
 * (RFC 8707), holding the tokens and what a refresh needs (token endpoint,
 * client id and secret, authentication method). The file is mode 0600 in
 * a 0700 directory and is replaced atomically (a temporary file, fsync,
 * rename); an update holds an exclusive lock on "tokens.json.lock" beside
 * it (flock, waited for at most 2 s) from re-reading the file to replacing
 * it, so processes updating at once merge their entries.
 *
 * Every token and secret here is a credential: nothing in this module
 * prints one, and no caller may. Memory that held one is wiped.
 */
#ifndef MCPTOP_ENGINE_OAUTH_STORE_H
#define MCPTOP_ENGINE_OAUTH_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One cached grant. Every string is owned; NULL when absent. */
struct oauth_token {
    char   *resource;           /* the server's canonical URI: the key */
    char   *resource_indicator; /* the `resource` sent (RFC 8707), when it
                                   is not `resource` (a metadata document
                                   named a parent) */
    char   *access_token;       /* secret */
    char   *token_type;         /* "Bearer" */
    int64_t expires_at;         /* epoch s; 0 = not said */
    int64_t obtained_at;        /* epoch s */
    char   *refresh_token;      /* secret */
    char   *scope;              /* granted (or requested when not said) */
    char   *step_up_scope;      /* scopes a 403 insufficient_scope asked
                                   for that consent has not granted yet */
    char   *issuer;             /* the authorization server */
    char   *token_endpoint;
    char   *client_id;
    char   *client_secret;      /* secret (a registered client's) */
    char   *auth_method;        /* token_endpoint_auth_method */
};

struct oauth_store;

/*
 * The store at path (nothing is read yet). path NULL: the default path;
 * NULL with *cause when neither XDG_STATE_HOME nor HOME is set.
 */
struct oauth_store *oauth_store_open(const char *path, char **cause);
/* NULL does nothing. */
void oauth_store_free(struct oauth_store *st);
/* The file's path. Borrowed. */
const char *oauth_store_path(const struct oauth_store *st);

/*
 * Read the file again if it changed since the last read (or was never
 * read). A missing file is an empty store. 0, or -1 with *cause (caller
 * frees) when it cannot be read or is not a token file; the store then
 * keeps what it had.
 */
int oauth_store_reload(struct oauth_store *st, char **cause);

/* oauth_store_reload under the file's lock: what a process that found
 * its refresh token spent reads, so that a refresh another process has
 * just finished is seen whole. 0, or -1 with *cause. */
int oauth_store_reload_locked(struct oauth_store *st, char **cause);
/* The entry of (server, resource), or NULL. Borrowed: valid until the next
 * call on st. O(log n). */
const struct oauth_token *oauth_store_find(const struct oauth_store *st,
    const char *server, const char *resource);

/* Add or replace the entry of (server, tok->resource) and write the file,
 * under the lock, after re-reading it. 0, or -1 with *cause (the lock
 * held too long, the directory or file not writable). tok is copied. */
int oauth_store_put(struct oauth_store *st, const char *server,
    const struct oauth_token *tok, char **cause);

/* Remove every entry of server and write the file, under the lock. The
 * number removed, or -1 with *cause. */
long oauth_store_forget(struct oauth_store *st, const char *server,
    char **cause);

/* Number of entries held. */
size_t oauth_store_count(const struct oauth_store *st);

/* A deep copy of src into dst. */
void oauth_token_copy(struct oauth_token *dst, const struct oauth_token *src);
/* Wipe and free what t holds (not t). */
void oauth_token_done(struct oauth_token *t);

#endif
