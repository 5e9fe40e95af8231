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
#include <stdio.h>

#include "engine/config.h"
#include "engine/event.h"
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
    long  stream_idle_ms;   /* test hook: the stream watchdog, when > 0 */
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

#endif
