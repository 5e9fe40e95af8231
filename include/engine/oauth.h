/*
 * MCP authorization for one HTTP server (MCP 2025-11-25 and 2025-03-26
 * basic/authorization; OAuth 2.1): the bearer token every request carries,
 * and the work a 401 or a 403 insufficient_scope calls for.
 *
 * The work, all on the shared loop through http_start (no libcurl here):
 *   refresh       a cached refresh token at the cached token endpoint
 *                 (RFC 6749 section 6), before expiry and on a 401;
 *   discovery     protected resource metadata (RFC 9728) from the
 *                 challenge's resource_metadata, else the path-based then
 *                 root well-known URL; authorization server metadata
 *                 (RFC 8414, then OpenID Connect Discovery, in the spec's
 *                 path-insertion order); without either, the 2025-03-26
 *                 fallbacks (the server's origin; /authorize, /token,
 *                 /register);
 *   client        a configured client_id, else a Client ID Metadata
 *                 Document URL when the server supports it, else dynamic
 *                 registration (RFC 7591);
 *   grant         client credentials (RFC 6749 section 4.4; secret basic,
 *                 secret post or private_key_jwt, RFC 7523) anywhere, or
 *                 the authorization code with PKCE S256 (RFC 7636) and the
 *                 resource parameter (RFC 8707) through a loopback
 *                 redirect, only where consent was enabled (mcptop login);
 *   scopes        the challenge's scope, else the metadata's
 *                 scopes_supported, else none; step-up on 403
 *                 insufficient_scope, at most OAUTH_MAX_STEP_UPS times.
 * Tokens are cached per server and resource (engine/oauth_store.h). A
 * token is never printed, logged or put in a failure detail.
 *
 * What this module must never do: send a token to any URL but the
 * server's own requests and the token endpoint's; run a browser flow
 * where consent was not enabled; block the loop.
 */
#ifndef MCPTOP_ENGINE_OAUTH_H
#define MCPTOP_ENGINE_OAUTH_H

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "engine/config.h"

struct curlev;
struct oauth;

/* How many 403 insufficient_scope step-ups one server gets within
 * OAUTH_STEP_UP_WINDOW_S before they are refused as a loop. */
#define OAUTH_MAX_STEP_UPS      2
#define OAUTH_STEP_UP_WINDOW_S  600.0
/* After a failed authorization, a challenge within this many seconds is
 * answered with the same failure instead of new requests to the
 * authorization server (the floor of its retries). */
#define OAUTH_RETRY_FLOOR_S     30.0
/* A token this fresh that is answered 401 is not refreshed again. */
#define OAUTH_FRESH_S           30.0
/* A token this close to its expiry is refreshed before it is used. */
#define OAUTH_REFRESH_AHEAD_S   60

/*
 * Consent: where the browser flow may run. Process-wide, set by the
 * command that can show a URL to a person (mcptop login); NULL everywhere
 * else, where a grant that needs consent fails with "consent needed: run
 * mcptop login NAME".
 */
struct oauth_consent {
    const char *server;         /* the one server it applies to */
    long        wait_ms;        /* how long to wait for the redirect */
    /* Show the authorization URL to the person (open a browser, print
     * it). The URL carries no secret. */
    void      (*open_url)(void *arg, const char *server, const char *url);
    void       *arg;
};

/* Set (copied; server must outlive it) or clear (NULL) consent. */
void oauth_set_consent(const struct oauth_consent *c);

/*
 * Open url in the person's browser, for an open_url of consent: $BROWSER
 * (a command run by /bin/sh; "%s" in it stands for the URL, else the URL
 * is its last argument; the URL is passed as an argument, never pasted
 * into the shell text), else xdg-open when it is on PATH. The browser
 * runs detached, its output discarded. 0 when one was started or none is
 * known; -1 with *cause ("cannot start xdg-open", caller frees) when it
 * could not be started.
 */
int oauth_open_browser(const char *url, char **cause);

/* Does decl need its OAuth state before a challenge: it declares "oauth",
 * or the token file may hold a token (one look at the file a process,
 * however many servers ask). A transport makes the state on first use:
 * then, or at a 401 or 403. */
bool oauth_wanted(const struct config_server *decl);
/*
 * The authorization state of one server. NULL (nothing to do) for a stdio
 * server and for one whose headers already carry Authorization. decl,
 * loop, ce and log are borrowed and must outlive it; pool_key is the
 * server's number (http_request.pool_key).
 */
struct oauth *oauth_new(struct ev_loop *loop, struct curlev *ce,
    const struct config_server *decl, size_t pool_key, FILE *log);

/* Abort what runs (no resume is called) and free. NULL does nothing. */
void oauth_free(struct oauth *o);

/*
 * The Authorization value for the server's next request ("Bearer ..."),
 * or NULL when no token is held (o may be NULL). Borrowed: valid until the
 * next call on o. A token close to its expiry starts a refresh in the
 * background (the current one is still returned).
 */
const char *oauth_authorization(struct oauth *o);

/* The work is over (it succeeded or failed): send the request once more. */
typedef void (*oauth_resume_cb)(void *arg);

/*
 * An answer with this status and WWW-Authenticate value (NULL when none)
 * came back. For a 401, or a 403 whose challenge says
 * error="insufficient_scope", start (or join) the work it calls for and
 * return true: resume(arg) is called exactly once, later, from the loop,
 * unless oauth_forget(o, arg) comes first. Return false (and call nothing)
 * when no work can help: another status, another scheme, consent needed,
 * the step-up limit, the retry floor; oauth_explain then says why.
 */
bool oauth_on_challenge(struct oauth *o, long status,
    const char *www_authenticate, oauth_resume_cb resume, void *arg);

/*
 * A request that was held for authorization `rounds` times is refused
 * (401 or 403) once more, and no more work is done for it: what
 * oauth_explain says next is that the authorization gave up, and why (the
 * step-up's scope was not granted, or was granted and still refused; a
 * new token refused too). o may be NULL.
 */
void oauth_gave_up(struct oauth *o, long status,
    const char *www_authenticate, int rounds);

/* Drop every pending resume of arg (its request was abandoned). */
void oauth_forget(struct oauth *o, void *arg);

/*
 * Append "; <what the authorization work found>" to a failure detail of
 * size dsz: the step that failed (e.g. "authorization server metadata
 * not found", "token endpoint 400 invalid_client", "consent needed: run
 * mcptop login NAME"). Nothing when there is nothing to say (o may be
 * NULL). Server text in it is sanitized.
 */
void oauth_explain(const struct oauth *o, char *detail, size_t dsz);

/*
 * How many token requests (refresh or code exchange) are in flight. Their
 * answers must reach the token file before the process exits: a refresh
 * token the server rotated is spent, and the new one exists only in that
 * answer. Commands wait for this to reach 0, bounded, before they exit.
 */
unsigned oauth_token_requests(void);

/*
 * Forget every cached token of the server named `server` (mcptop
 * logout). The number of entries removed, or -1 with *cause (caller
 * frees). Where consent runs (mcptop login), cached tokens are not used
 * either: the login asks for a new grant, which replaces them.
 */
long oauth_logout(const char *server, char **cause);

/*
 * Why the last token obtained in this process could not be written to the
 * token file ("NAME: PATH: reason"), or NULL when the last write worked
 * (or none was tried). Borrowed; valid until the next token is saved. A
 * token that was obtained and not saved is lost with the process: login
 * reports it as an error.
 */
const char *oauth_save_error(void);

#endif
