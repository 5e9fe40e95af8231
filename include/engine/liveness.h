/*
 * The liveness record: one per server, answering "can mcptop complete an
 * exchange with this server?" (DESIGN.md section 4). It is minted only from
 * an exchange that really happened, by one function, liveness_of.
 */
#ifndef MCPTOP_ENGINE_LIVENESS_H
#define MCPTOP_ENGINE_LIVENESS_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/failure.h"

enum liveness_state {
    LIVENESS_REACHABLE,
    LIVENESS_UNREACHABLE,
    LIVENESS_UNKNOWN,
    LIVENESS__COUNT
};

/* An exchange's outcome: completed, or the kind it failed with. */
struct outcome {
    bool              completed;
    enum failure_kind kind;         /* when !completed */
};

/* The record. `present` false means no observation ("—", absent). */
struct liveness {
    bool                present;
    enum liveness_state state;
    int64_t             observed_at;    /* epoch ms */
    bool                has_error_code; /* only on unreachable */
    enum failure_kind   error_code;
};

/* "reachable" / "unreachable" / "unknown". Static string. */
const char *liveness_state_name(enum liveness_state s);

/* The state a failure kind supports; false when the kind is not an
 * observation at all (invalid_config). */
bool liveness_state_of_kind(enum failure_kind k, enum liveness_state *out);

/*
 * THE mint: the record an exchange outcome supports at observed_at (epoch
 * ms). Returns a record with present=false for invalid_config. error_code
 * rides only on unreachable.
 */
struct liveness liveness_of(struct outcome o, int64_t observed_at);

/* Helpers to build outcomes. */
struct outcome outcome_completed(void);
struct outcome outcome_failed(enum failure_kind k);

#endif
