/*
 * The fleet: every server of a config on one libev loop, sharing one
 * libcurl multi handle, publishing engine events to subscribers. Used alike
 * by the TUI, `check` and `watch`.
 */
#ifndef MCPTOP_ENGINE_FLEET_H
#define MCPTOP_ENGINE_FLEET_H

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/config.h"
#include "engine/ending.h"
#include "engine/event.h"
#include "engine/http.h"
#include "engine/server.h"

struct fleet;

struct fleet_options {
    bool  no_streams;       /* never open GET streams */
    bool  no_pings;         /* no periodic pings */
    bool  no_redial;        /* a failed dial is final */
    long  timeout_ms;       /* override every server's, when > 0 */
    long  open_deadline_ms; /* likewise */
    FILE *log;              /* debug log, or NULL; borrowed */
    bool  test_keep_id;     /* see server_test_repeat_delete */
    /* A short-lived fleet beside the process's own (serve's /probe):
     * fleet_free leaves alone what other fleets started (it kills no
     * other process group and waits for no orphan); its own children are
     * ended by its endings. */
    bool  nested;
};

/* New fleet over cfg (borrowed: must outlive the fleet) on loop. NULL with
 * *cause set (caller frees) when the HTTP machinery cannot start. */
struct fleet *fleet_new(struct ev_loop *loop, const struct config *cfg,
    const struct fleet_options *opt, char **cause);
/* What the operator should know before the fleet starts (it may not fit
 * in this process's file descriptor limit), or NULL. Borrowed. */
const char *fleet_warning(const struct fleet *f);
/* Stop and free every server, then the HTTP machinery. NULL does nothing. */
void fleet_free(struct fleet *f);
/* At the process's exit, after the endings: fleet_free when a leak checker
 * is watching (xmalloc_leak_checked); otherwise only what the kernel would
 * not do at exit (every child's process group killed), leaving memory and
 * descriptors to it. Returns true when f was freed. */
bool fleet_exit(struct fleet *f);

/* Add a subscriber; every event goes to every subscriber in order. */
void fleet_subscribe(struct fleet *f, event_cb cb, void *arg);
/* Start dialing every server, at most 50 first dials in flight at once. */
void fleet_start(struct fleet *f);
/* The same for the servers whose chosen[i] is true (chosen has
 * fleet_size entries; NULL means all). */
void fleet_start_some(struct fleet *f, const bool *chosen);
/*
 * Reload: the fleet becomes cfg's (taken: freed with the fleet). A server
 * whose declaration did not change goes on untouched; one removed or
 * changed has its session ended (the ending procedure) and is closed; new
 * and changed ones dial, at most 50 at once. Server numbers (fleet_server)
 * change: subscribers re-read the fleet after it. 0, or -1 with *cause.
 */
int fleet_reload(struct fleet *f, struct config *cfg, char **cause);
/* Close every server locally (no remote ending). */
void fleet_stop(struct fleet *f);
/* What reloads retired and the fleet still holds: servers whose endings
 * have not settled (the return), and reload configs (*configs, may be
 * NULL) still in use. Freed as they settle (checked every 2 s). */
size_t fleet_retired_count(const struct fleet *f, size_t *configs);

/* End every server's session (server_end with redial false). Returns how
 * many endings were started or already under way. */
size_t fleet_end_all(struct fleet *f);
/*
 * After fleet_end_all and the wait for its endings: how many of those
 * endings did not end their session (no outcome yet, or rejected other
 * than with a 400, failed, timed out: the server may keep the session
 * until it expires), with
 * *asked set to how many endings there were. 0 before fleet_end_all.
 */
size_t fleet_unended(const struct fleet *f, size_t *asked);
/* True while any ending (or abandoned dial) has not settled. */
bool fleet_endings_busy(const struct fleet *f);
/* True while something must finish before the process may exit: an
 * ending, or a token request whose answer must reach the token file
 * (oauth_token_requests). */
bool fleet_settling(const struct fleet *f);
/* The largest teardown deadline of the fleet, ms. */
long fleet_teardown_ms(const struct fleet *f);

size_t fleet_size(const struct fleet *f);
struct server *fleet_server(const struct fleet *f, size_t i);
const struct config *fleet_config(const struct fleet *f);
struct ev_loop *fleet_loop(const struct fleet *f);

/*
 * The processes the fleet answers for (fleet_procs.c; the TUI's process
 * view). fleet_procs_walk: one walk of /proc into t (engine/proc.h; reset
 * first, proc_table_done frees it): 0, or -1 with errno. Details (the
 * command line, the uid) are read only for the entries asked about, with
 * fleet_procs_details. fleet_procs_spawns: s is a stdio server mcptop
 * spawns (not a tap, not HTTP). fleet_procs_match: the index of the first
 * such server whose configured command line e's is (proc_argv_matches;
 * e detailed first), -1 for none.
 */
struct proc_table;
struct proc_entry;
int fleet_procs_walk(const struct fleet *f, struct proc_table *t);
void fleet_procs_details(const struct fleet *f, const struct proc_table *t,
    struct proc_entry *e);
bool fleet_procs_spawns(const struct server *s);
long fleet_procs_match(const struct fleet *f, const struct proc_entry *e);

/*
 * Raw exchanges (fleet_raw.c; `mcptop audit`): a channel is a fresh
 * transport for one server's declaration, outside its lifecycle and its
 * record, on which the caller makes one exchange at a time, shaped as it
 * wants: for Streamable HTTP any method, with a session the channel was
 * issued, with none, or with a well-formed id the server never issued,
 * or a body sent as it is; for stdio and 2024-11-05 HTTP+SSE, JSON-RPC
 * requests on the transport's own session (the child, the stream).
 *
 * The channel keeps every session it was issued: an Mcp-Session-Id on
 * any answer (a refused request's too), the child it spawned, the stream
 * it opened. Their ids never leave it; the caller names them by number.
 * Each is ended by the ending procedure (DESIGN.md section 5) when the
 * caller asks, and the channel counts how many it opened and ended.
 * A result comes from the loop, never from inside fleet_raw_send; an
 * ending's outcome known at once (nothing to send, a DELETE that could
 * not start) is reported from inside fleet_raw_end.
 */
struct fleet_raw;

/* A request's session: a number >= 0 (one the channel was issued), or: */
#define FLEET_RAW_NO_SESSION (-1)   /* no Mcp-Session-Id */
#define FLEET_RAW_FORGED     (-2)   /* a well-formed id never issued (the
                                       shape of one that was) */

struct fleet_raw_request {
    enum http_method method;    /* POST; GET, HEAD, OPTIONS: HTTP only */
    /* POST: a JSON-RPC message of this method is built ("initialize",
     * "ping", "tools/list", "server/discover" in the 2026-07-28 form,
     * "notifications/initialized"); NULL: `body` as it is. */
    const char *rpc;
    const char *body;
    /* initialize: the revision offered; otherwise the
     * MCP-Protocol-Version header sent (NULL: none). */
    const char *version;
    int         session;        /* HTTP: see above; stdio, sse: ignored */
    long        timeout_ms;     /* the exchange's bound */
};

/* What one exchange met. Borrowed during the callback. */
struct fleet_raw_result {
    bool           answered;    /* a status came, or a JSON-RPC answer */
    struct failure failure;     /* !answered: why (site request) */
    long           status;      /* HTTP status; 0 none */
    bool           event_stream;/* answered as text/event-stream */
    int            issued;      /* the session this answer issued (an id
                                   the channel had not seen), or -1 */
    bool           rpc_result;  /* a JSON-RPC result answering it */
    bool           rpc_error;   /* a JSON-RPC error answering it, or one
                                   with a null id */
    bool           rpc_null_id; /* ...whose id is null */
    long           rpc_code;
    char           version[32]; /* result.protocolVersion, sanitized */
    bool           lists_modern;/* result.supportedVersions holds
                                   2026-07-28 (a DiscoverResult) */
    char           message[128];/* the error's message, sanitized */
    double         ms;
};

/* What a channel tells its owner; arg is the one given to open. */
struct fleet_raw_host {
    /* The exchange in flight ended. */
    void (*result)(void *arg, struct fleet_raw *ch,
        const struct fleet_raw_result *r);
    /* Session `session` has its ending's outcome (e is borrowed). */
    void (*ending)(void *arg, struct fleet_raw *ch, int session,
        const struct ending *e);
    /* One of its endings settled (see fleet_raw_busy). */
    void (*settled)(void *arg, struct fleet_raw *ch);
};

/* A channel on server i of f (a stdio server's child is spawned at the
 * first exchange; sse true: the 2024-11-05 HTTP+SSE transport whatever
 * the declaration says). host and arg outlive it. NULL when server i
 * cannot be dialed (invalid, disabled). */
struct fleet_raw *fleet_raw_open(struct fleet *f, size_t i, bool sse,
    const struct fleet_raw_host *host, void *arg);
/* Stop everything (an exchange in flight is aborted, endings are
 * forgotten, a child is killed and reaped), wipe the ids, free. Never
 * from inside one of ch's callbacks. NULL does nothing. */
void fleet_raw_free(struct fleet_raw *ch);
/* "http", "sse" or "stdio". */
const char *fleet_raw_transport(const struct fleet_raw *ch);
/* True when the channel takes raw HTTP shapes (methods, bodies, session
 * ids): Streamable HTTP. */
bool fleet_raw_has_raw(const struct fleet_raw *ch);
/* Start one exchange; its result comes through host->result. 0, or -1
 * with *cause (caller frees) when it cannot be made: one is in flight,
 * or the shape is not this transport's. */
int fleet_raw_send(struct fleet_raw *ch, const struct fleet_raw_request *rq,
    char **cause);
/* Abort the exchange in flight: no result comes. */
void fleet_raw_cancel(struct fleet_raw *ch);
/* End session k by the ending procedure (the DELETE with its id; the
 * stdio shutdown sequence; the stream closed), bounded by the server's
 * teardown deadline. -1 when there is no such session or its ending
 * already started. */
int fleet_raw_end(struct fleet_raw *ch, int k);
/* End every session whose ending has not started; returns how many. */
size_t fleet_raw_end_all(struct fleet_raw *ch);
/* The session a request with it was served after its ending said it
 * ended (a server that does not free it): it is not counted as ended. */
void fleet_raw_served_after(struct fleet_raw *ch, int k);
/* Sessions issued; of those, how many ended (terminated, already_gone, a
 * 400 refusal, exited, signalled, killed, stream_closed, or gone before
 * its ending) and were not served after it; and of those, how many by a
 * DELETE answered 2xx (terminated): a server that does not free sessions
 * keeps those. */
void fleet_raw_counts(const struct fleet_raw *ch, unsigned *opened,
    unsigned *ended, unsigned *terminated);
/* How many sessions were issued (numbers 0 .. n-1). An initialize sent
 * with no session and answered with an id opens one, even when the id is
 * one the server gave before (a server that reuses ids). */
int fleet_raw_sessions(const struct fleet_raw *ch);
/* Session k's tag: equal for equal Mcp-Session-Ids (a keyed hash: the id
 * itself never leaves the channel, and a tag means nothing outside this
 * process); 0 for a session with no id (a child, a stream) or no such
 * session. */
uint64_t fleet_raw_session_tag(const struct fleet_raw *ch, int k);
/* True while an exchange or an ending has not settled. */
bool fleet_raw_busy(const struct fleet_raw *ch);

#endif
