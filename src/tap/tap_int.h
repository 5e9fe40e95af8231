/*
 * The tap's parts, shared by its files (private): tap_relay.c moves the
 * bytes (the agent's stdin and stdout, the server's pipes, flow control,
 * the shutdown sequence), tap.c reads what they carry (the ledger's
 * reports, the record, the events, the snapshot, the socket's commands).
 */
#ifndef MCPTOP_TAP_INT_H
#define MCPTOP_TAP_INT_H

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/config.h"
#include "engine/health.h"
#include "engine/record.h"
#include "tap/tap.h"
#include "tap_ledger.h"
#include "tap_publish.h"
#include "util/jsonw.h"

struct child;
struct tap_http;

/* Past this much queued one way, reading that way's source pauses. */
#define TAP_HIGH_WATER (1024u * 1024)
#define TAP_OPS_MAX    128     /* distinct method names kept for the
                                  record; the rest are "other" */

/* The copy of the line one side is writing. */
struct tap_copy {
    char  *buf;
    size_t len, cap;
    bool   skipping;            /* past the size limit: not read */
    bool   mid;                 /* bytes of it already passed on */
    bool   held;                /* it is held until its end (see relay) */
};

/* A non-blocking writer to one of the tap's own descriptors. */
struct tap_out {
    int    fd;
    ev_io  w;
    char  *buf;
    size_t off, len, cap;       /* queued: buf[off..len) */
    int    saved_flags;         /* -1: flags not changed */
    bool   small_writes;        /* blocking fd: PIPE_BUF at a time */
    bool   failed;              /* the reader went away */
};

/* Messages of the tap's own waiting for a line boundary. */
struct tap_inject {
    char **msgs;
    size_t n, cap;
};

struct tap {
    struct ev_loop      *loop;          /* the caller's */
    const struct tap_host *host;        /* the caller's, with arg */
    void                *arg;
    struct tap_options   opt;
    char                *name;          /* sanitized */
    char                *command;       /* the command line, sanitized */
    struct config_server decl;          /* what child_spawn reads */
    struct child        *child;
    struct tap_ledger   *ledger;
    struct tap_publish  *pub;
    struct jsonw         line;          /* each event line, in turn */
    struct record        rec;
    struct health_track  health;        /* the last one published */
    int64_t              started_ms;
    const char          *ops[TAP_OPS_MAX];
    size_t               nops;
    /* the relay */
    ev_io                in_w;          /* the agent's requests (fd 0) */
    int                  in_saved_flags;
    bool                 in_eof;
    struct tap_out       out, err;      /* fd 1 to the agent, fd 2 */
    struct tap_copy      from_agent, from_server;
    struct tap_inject    to_agent, to_server;
    ev_prepare           flow;
    unsigned long        bytes[2];      /* by side */
    /* the server's end */
    bool                 exited;
    int                  status;        /* waitpid's */
    bool                 stdout_closed;
    bool                 closed_said;   /* the ledger was closed */
    ev_timer             eof_timer;
    int                  stage;         /* shutdown: 0 none, 1 stdin
                                           closed, 2 TERM, 3 KILL */
    bool                 shutdown;      /* the agent or a signal ended it */
    ev_timer             stage_timer;
    ev_timer             probe_timer;
    unsigned long        probe_seq;
    struct tap_request  *probe;         /* --probe's ping in flight */
    bool                 initialized;   /* initialize was answered */
    double               last_traffic;  /* an exchange last began or
                                           ended (monotonic) */
    ev_timer             linger;        /* the last lines' drain at exit */
    double               linger_until;
    bool                 done;
    struct tap_http     *http;          /* the HTTP form (tap_http.c) */
};

/* tap_relay.c */
int  tap_relay_start(struct tap *t, char **cause);
void tap_relay_stop(struct tap *t);
/* Queue msg (a JSON text, no newline) for the agent / the server, at the
 * next line boundary of that stream. */
void tap_relay_to_agent(struct tap *t, const char *msg);
void tap_relay_to_server(struct tap *t, const char *msg);
/* Start the shutdown sequence (close the server's stdin, then TERM, then
 * KILL at thirds of the teardown deadline). */
void tap_relay_shutdown(struct tap *t);
/* Nothing is left to write to the agent. */
bool tap_relay_drained(const struct tap *t);
/* Try to write what is queued for the agent and stderr now. */
void tap_relay_flush(struct tap *t);

/* tap.c: what the relay reports */
void tap_server_closed(struct tap *t);  /* exited and stdout shut (or the
                                           grace after one passed) */
double tap_now(const struct tap *t);
/* A line for the user, through the host (printf-style, no newline). */
void tap_say(struct tap *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The buffer for one event line (export/jsonl.h writes it), when a reader
 * would get it; NULL when none would (nothing need be written). */
struct jsonw *tap_line(struct tap *t);
/* Publish the line the buffer holds. */
void   tap_line_send(struct tap *t);
/* An exchange for the record (op lives as long as the call; id the
 * request's JSON text or NULL; f NULL: completed), published. */
void   tap_exchange(struct tap *t, const char *op, const char *id,
    const struct failure *f, double ms);

/* tap_http.c: the HTTP form. Listen on t->opt.listen and pass every
 * request on to t->opt.upstream (0), or -1 with *cause. */
int  tap_http_start(struct tap *t, char **cause);
/* Stop listening, end every transfer, free. */
void tap_http_stop(struct tap *t);
/* The operator's cancel of the agent's request r over HTTP: to_server
 * (notifications/cancelled) goes upstream in the agent's session, to_agent
 * (the -32800 error) answers the agent's open request (as JSON, or as an
 * SSE event ending its stream). 0, or -1 with *detail (caller frees). */
int  tap_http_cancel(struct tap *t, const struct tap_request *r,
    const char *to_server, const char *to_agent, char **detail);
/* tap_session.c: the operator's ending of the agent's session whose id
 * starts with prefix: a DELETE upstream under the teardown deadline; the
 * answer line (end_result; caller frees) now, the outcome later as a
 * session_end event. */
char *tap_session_end(struct tap *t, const char *prefix);
/* "sessions": the agent's sessions for the snapshot (never their full
 * ids). */
void tap_session_list_write(struct jsonw *w, const struct tap *t);
/* tap_http.c: "127.0.0.1:8808"; the upstream URL as shown (no userinfo, no query). */
const char *tap_http_listen(const struct tap *t);
const char *tap_http_upstream(const struct tap *t);

#endif
