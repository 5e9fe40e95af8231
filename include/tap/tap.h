/*
 * The passive tap (issue 31; DESIGN.md section 8): `mcptop tap -- CMD`
 * sits where an agent starts a stdio MCP server, starts CMD itself, passes
 * every byte on unchanged both ways, and reads a copy of each line: the
 * agent's own exchanges are classified (failure.c, liveness_of), the
 * requests in flight are kept in a ledger, and all of it is published on
 * a 0600 Unix socket as the `watch` event stream, which a config entry
 * {"tap": PATH} reads. Through the socket an operator may cancel one
 * request (notifications/cancelled to the server, error -32800 to the
 * agent).
 */
#ifndef MCPTOP_TAP_TAP_H
#define MCPTOP_TAP_TAP_H

#include <stdbool.h>
#include <stddef.h>

struct tap_options {
    const char  *name;          /* NULL: the command's base name */
    const char  *socket_path;   /* NULL: tap_publish_default_path */
    char *const *argv;          /* the server's command and arguments */
    size_t       argc;
    long         teardown_ms;   /* the shutdown sequence's deadline (3000) */
    bool         probe;         /* send pings of its own (off: nothing of
                                   the tap's goes to the server) */
    long         probe_interval_ms;
    bool         no_socket;     /* relay only */
    /* The HTTP form (argv unused): listen on listen ("127.0.0.1:8808"),
     * pass every request on to upstream (a Streamable HTTP endpoint). */
    const char  *listen;
    const char  *upstream;
    bool         listen_any;    /* a non-loopback listen is meant */
};

/*
 * Run the tap until the server exits (or the agent closes stdin and the
 * shutdown sequence ends it, or a signal; the HTTP form: until a signal,
 * exit status 0, or 2 when it cannot listen). Returns the process's exit
 * status: the server's own (128 + N for signal N); 2 when the server
 * could not be started (said on stderr), as a shell would say 127.
 * The socket cannot stop the relay: a socket that cannot be made is said
 * on stderr, and the bytes are passed on all the same.
 */
int tap_run(const struct tap_options *o);

/* The default socket path for a tap named name (see the man page). NULL
 * with *cause. Caller frees. */
char *tap_socket_path(const char *name, char **cause);
/* The directory default sockets go in (for --taps). Caller frees. */
char *tap_socket_dir(char **cause);

/*
 * Ask the tap at path to cancel the agent's request id (its JSON text, or
 * a bare string), with reason (may be NULL). Waits at most timeout_ms.
 * 0 when the tap cancelled it; -1 with *cause (caller frees) naming why
 * not (no tap there, no such request in flight, no answer in time).
 * *answer (may be NULL) gets the tap's answer line (caller frees).
 */
int tap_cancel(const char *path, const char *id, const char *reason,
    long timeout_ms, char **answer, char **cause);

/*
 * Ask the HTTP tap at path to end the agent's session whose id starts
 * with prefix (the snapshot's id_prefix): the tap sends the DELETE under
 * its teardown deadline. Waits at most timeout_ms. 0 with *answer (the
 * tap's session_end line: outcome, status, ms; caller frees) when the
 * ending has an outcome; -1 with *cause (caller frees) when the tap
 * refused (no such session, a stdio tap) or did not answer in time.
 */
int tap_end(const char *path, const char *prefix, long timeout_ms,
    char **answer, char **cause);

#endif
