/*
 * The liveness record (DESIGN.md section 4) and its one mint, liveness_of.
 * The state table is indexed by kind and deliberately not derived from the
 * delivery table: a timeout leaves delivery unknown yet proves the exchange
 * did not complete, and a protocol error is a failure that proves reach.
 */
#include "engine/liveness.h"

#include <stddef.h>

/* -1 marks the one kind that is no observation (invalid_config). */
static const int liveness_table[] = {
    [FAILURE_CONNECT_REFUSED]   = LIVENESS_UNREACHABLE,
    [FAILURE_CONNECTION_FAILED] = LIVENESS_UNREACHABLE,
    [FAILURE_CONNECTION_CLOSED] = LIVENESS_UNREACHABLE,
    [FAILURE_HTTP_STATUS]       = LIVENESS_UNKNOWN,
    [FAILURE_NOT_MCP_RESPONSE]  = LIVENESS_UNKNOWN,
    [FAILURE_SPAWN_FAILED]      = LIVENESS_UNREACHABLE,
    [FAILURE_TIMEOUT]           = LIVENESS_UNREACHABLE,
    [FAILURE_PROTOCOL]          = LIVENESS_REACHABLE,
    [FAILURE_INVALID_CONFIG]    = -1,
    [FAILURE_UNKNOWN]           = LIVENESS_UNKNOWN,
};
_Static_assert(sizeof(liveness_table) / sizeof(liveness_table[0]) ==
    FAILURE__COUNT, "the liveness table must name every failure kind");

const char *
liveness_state_name(enum liveness_state s)
{
    switch (s) {
    case LIVENESS_REACHABLE:
        return "reachable";
    case LIVENESS_UNREACHABLE:
        return "unreachable";
    default:
        return "unknown";
    }
}

bool
liveness_state_of_kind(enum failure_kind k, enum liveness_state *out)
{
    if ((unsigned)k >= FAILURE__COUNT || liveness_table[k] < 0)
        return false;
    *out = (enum liveness_state)liveness_table[k];
    return true;
}

struct liveness
liveness_of(struct outcome o, int64_t observed_at)
{
    struct liveness l = { 0 };

    if (o.completed) {
        l.present = true;
        l.state = LIVENESS_REACHABLE;
    } else if (liveness_state_of_kind(o.kind, &l.state)) {
        l.present = true;
        if (l.state == LIVENESS_UNREACHABLE) {
            l.has_error_code = true;
            l.error_code = o.kind;
        }
    }
    if (l.present)
        l.observed_at = observed_at;
    return l;
}

struct outcome
outcome_completed(void)
{
    struct outcome o = { .completed = true, .kind = FAILURE_UNKNOWN };

    return o;
}

struct outcome
outcome_failed(enum failure_kind k)
{
    struct outcome o = { .completed = false, .kind = k };

    return o;
}
