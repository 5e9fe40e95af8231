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
};

/* New fleet over cfg (borrowed: must outlive the fleet) on loop. NULL with
 * *cause set (caller frees) when the HTTP machinery cannot start. */
struct fleet *fleet_new(struct ev_loop *loop, const struct config *cfg,
    const struct fleet_options *opt, char **cause);
/* Stop and free every server, then the HTTP machinery. NULL does nothing. */
void fleet_free(struct fleet *f);

/* Add a subscriber; every event goes to every subscriber in order. */
void fleet_subscribe(struct fleet *f, event_cb cb, void *arg);
/* Start dialing every server, at most 50 first dials in flight at once. */
void fleet_start(struct fleet *f);
/* The same for the servers whose chosen[i] is true (chosen has
 * fleet_size entries; NULL means all). */
void fleet_start_some(struct fleet *f, const bool *chosen);
/* Close every server locally (no remote ending). */
void fleet_stop(struct fleet *f);

/*
 * Make the running fleet match cfg (SIGHUP in `mcptop serve`), comparing
 * servers by name: a new name is added and started; a name that left has
 * its session ended (as server_end with redial false) and is dropped once
 * that settles; a changed declaration is ended and replaced by a new
 * server; an unchanged one keeps running, its session, liveness record and
 * history untouched. cfg is borrowed like fleet_new's: it, and every
 * config given before it, must outlive the fleet (a server being ended
 * may still read its old declaration). fleet_size and fleet_server
 * describe the new fleet when it returns; subscribers get the events of
 * every change. 0, or -1 with *cause set (caller frees) and the fleet
 * unchanged.
 * Provided by the engine core rewrite (issue 11); `mcptop serve` checks
 * that it is linked in.
 */
int fleet_reload(struct fleet *f, const struct config *cfg, char **cause);

/* End every server's session (server_end with redial false). Returns how
 * many endings were started or already under way. */
size_t fleet_end_all(struct fleet *f);
/* True while any ending (or abandoned dial) has not settled. */
bool fleet_endings_busy(const struct fleet *f);
/* The largest teardown deadline of the fleet, ms. */
long fleet_teardown_ms(const struct fleet *f);

size_t fleet_size(const struct fleet *f);
struct server *fleet_server(const struct fleet *f, size_t i);
const struct config *fleet_config(const struct fleet *f);
struct ev_loop *fleet_loop(const struct fleet *f);

#endif
