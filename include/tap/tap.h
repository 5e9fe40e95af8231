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
 *
 * The tap runs on a loop its caller owns (cli_tap.c: the loop, the
 * signals, the exit status and every word on stderr): tap_start,
 * tap_shutdown on a signal, tap_stop once the host was told it is done.
 */
#ifndef MCPTOP_TAP_TAP_H
#define MCPTOP_TAP_TAP_H

#include <stdbool.h>
#include <stddef.h>

struct ev_loop;
struct tap;

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

/* What the tap tells whoever runs its loop. Called from the loop. */
struct tap_host {
    /* The tap is done: its server is gone and the last bytes drained
     * (bounded), or the HTTP form was asked to end. The caller ends its
     * loop, then calls tap_stop. */
    void (*done)(void *arg);
    /* A line for the user (no "mcptop tap: ", no newline; borrowed for
     * the call): where it listens, where it publishes when the name was
     * taken, why it does not publish, the HTTP server's own messages. */
    void (*say)(void *arg, const char *text);
};

/*
 * Start the tap on loop, which must be the default loop (the server is a
 * child watched with ev_child): the stdio form starts the server, the
 * HTTP form listens; then it publishes, unless o->no_socket. The socket
 * cannot stop the relay: one that cannot be made is said through
 * host->say, and the bytes are passed on all the same. NULL when it
 * cannot start (the server could not be started, or the HTTP form cannot
 * listen), with *cause (caller frees; may be left NULL). o is copied, its
 * strings borrowed: they, host and arg must outlive the tap. Nothing runs
 * until the caller runs loop.
 */
struct tap *tap_start(struct ev_loop *loop, const struct tap_options *o,
    const struct tap_host *host, void *arg, char **cause);

/*
 * The operator asks the tap to end (a signal). The stdio form starts the
 * stdio shutdown sequence (the server's stdin closed, then TERM, then
 * KILL, a third of the teardown deadline apart) and is done when the
 * server is gone; asked again, it kills the server's group at once. The
 * HTTP form is done at once (its agents reconnect to the server's own URL
 * or to the next tap).
 */
void tap_shutdown(struct tap *t);

/* How the stdio form's server ended: true with *status (as waitpid gives
 * it) once it was reaped; false while it runs, and for the HTTP form. */
bool tap_server_exited(const struct tap *t, int *status);

/*
 * Stop relaying and publishing (the socket is removed), end what the
 * server left behind (its process group; processes re-parented to this
 * one, TERM then KILL after the teardown deadline: this blocks up to
 * about that long when there are some) and free. NULL does nothing.
 */
void tap_stop(struct tap *t);

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
