/*
 * A server's record (DESIGN.md section 4): the history of its exchanges,
 * the liveness record minted from them by liveness_of, the streak of
 * observations that gave the current state, the last failure. Every
 * exchange mcptop makes with a server ends here, exactly once.
 *
 * A face of the engine for the tap (tap.c): the agent's exchanges
 * it classifies go into a record of its own, the same as a dialed
 * server's, so liveness and health are minted by the same rules. The
 * fields are read-only outside record.c.
 */
#ifndef MCPTOP_ENGINE_RECORD_H
#define MCPTOP_ENGINE_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/failure.h"
#include "engine/liveness.h"
#include "engine/mcp.h"

struct record {
    struct liveness          liveness;      /* present=false: absent */
    unsigned long            streak;
    unsigned long            fail_streak;   /* failed exchanges in a row */
    struct failure           last_failure;
    bool                     has_failure;
    const char              *last_failure_op;   /* static */
    struct mcp_exchange     *history;       /* a ring of hist_cap: 16 at the
                                               first exchange, doubled as it
                                               fills, up to MCP_HISTORY */
    size_t                   hist_start, hist_len, hist_cap;
    uint64_t                 exchanges;     /* ever: the newest one's
                                               sequence number (1 first) */
};

/* An empty record (absent). */
void record_init(struct record *r);
void record_done(struct record *r);

/*
 * One exchange ended: op (static string) completed (f NULL) or failed
 * with f, after ms (monotonic), observed at now_ms (epoch). Returns true
 * when the liveness record changed state (or error code).
 */
bool record_exchange(struct record *r, const char *op,
    const struct failure *f, double ms, int64_t now_ms);

/* History entry i, oldest first; NULL past the end. */
const struct mcp_exchange *record_history(const struct record *r,
    size_t i);
/* History entry i's sequence number (1 for the record's first exchange
 * ever; the ring forgets the oldest, never renumbers). A reader that
 * joins late takes what is newer than the last it took by this, never
 * by the timestamp: many exchanges share a millisecond. */
uint64_t record_seq(const struct record *r, size_t i);

#endif
