/*
 * The event source of `mcptop replay`: a recording (export/recording.h)
 * played into a fleet of replayed servers (engine/server.h), so the TUI's
 * model is fed the same events, through the same getters, as from a live
 * fleet. A replay clock in recorded time (epoch ms) moves at a speed, and
 * can pause, step and seek; seeking back resets every server and plays
 * the recording again from its start up to the new time. No network, no
 * terminal here.
 */
#ifndef MCPTOP_UI_REPLAY_H
#define MCPTOP_UI_REPLAY_H

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/config.h"
#include "engine/fleet.h"

struct recording_log;

struct replay {
    struct recording_log *log;
    struct config        *cfg;      /* built from the fleet lines */
    struct fleet         *fleet;    /* replayed servers, never started */
    size_t                next;     /* the next event to play */
    int64_t               start, end;   /* the recording's span */
    int64_t               from, to;     /* what is played */
    int64_t               now;      /* the replay clock */
    double                speed;    /* recorded seconds per second */
    bool                  paused;
    int64_t              *changes;  /* when some health changed */
    size_t                nchanges;
};

/*
 * Read path and make its fleet on loop (nothing is played yet). from and
 * to (epoch ms, -1: the recording's own ends) bound the replay. NULL with
 * *cause (caller frees) when the file is no recording.
 */
struct replay *replay_open(const char *path, struct ev_loop *loop,
    int64_t from, int64_t to, char **cause);
/* Free the fleet, then the log. NULL does nothing. */
void replay_free(struct replay *r);
/* Play up to t (clamped to [from, to]); back in time: from the start. */
void replay_seek(struct replay *r, int64_t t);
/* Advance the clock by dt_s seconds of real time at the speed (nothing
 * while paused; the end pauses it). */
void replay_tick(struct replay *r, double dt_s);
/* Slower / faster: the speed halves / doubles (1/16x .. 1024x). */
void replay_speed(struct replay *r, bool faster);

#endif
