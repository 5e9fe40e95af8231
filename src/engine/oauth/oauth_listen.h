/*
 * The loopback redirect listener of an authorization code grant (RFC 8252
 * section 7.3; MCP basic/authorization): an HTTP/1.x listener on
 * 127.0.0.1 with an ephemeral port, on the libev loop, that waits for the
 * browser to come back to /callback with `code` and `state` (or `error`),
 * answers it with a short page, and hands the values up once: the one
 * whose state is the flow's (RFC 6749 section 10.12); others are ignored.
 * It never blocks the loop: every connection is non-blocking, bounded in
 * size and in time.
 */
#ifndef MCPTOP_ENGINE_OAUTH_LISTEN_H
#define MCPTOP_ENGINE_OAUTH_LISTEN_H

#include <ev.h>

struct oauth_listen;

/*
 * The redirect arrived: code and state (or error, with error_description
 * when given) from its query, decoded; absent ones are NULL. Borrowed for
 * the call. Called at most once; the listener may be freed from inside.
 */
typedef void (*oauth_listen_cb)(void *arg, const char *code,
    const char *state, const char *error, const char *error_description);

/* Listen on 127.0.0.1:0. NULL with *cause (caller frees). */
struct oauth_listen *oauth_listen_new(struct ev_loop *loop,
    oauth_listen_cb cb, void *arg, char **cause);

/* "http://127.0.0.1:PORT/callback". Borrowed. */
const char *oauth_listen_redirect_uri(const struct oauth_listen *l);

/* Deliver only a callback carrying this state (copied): any other is
 * answered 400, counted and ignored. Until set, every callback is
 * delivered. */
void oauth_listen_expect_state(struct oauth_listen *l, const char *state);

/* How many callbacks were ignored for their state. */
unsigned long oauth_listen_ignored(const struct oauth_listen *l);

/* Close everything. NULL does nothing. */
void oauth_listen_free(struct oauth_listen *l);

#endif
