/*
 * The one mint of health (DESIGN.md section 4b): a closed set, each word
 * with one meaning, derived from what the record observed and what the
 * operator decided.
 */
#include "engine/health.h"

#include <stddef.h>

static const char *const health_names[HEALTH__COUNT] = {
#define X(id, name) name,
    HEALTH_STATES(X)
#undef X
};

const char *
health_state_name(enum health_state s)
{
    return s < HEALTH__COUNT ? health_names[s] : "?";
}

bool
health_monitored(enum health_state s)
{
    return s != HEALTH_PAUSED && s != HEALTH_STOPPED &&
        s != HEALTH_DISABLED;
}

struct health
health_of(const struct health_input *in)
{
    const struct liveness *l = in->liveness;

    switch (in->operator_state) {
    case HEALTH_OPERATOR_PAUSED:
        return (struct health){ HEALTH_PAUSED, "paused by the operator" };
    case HEALTH_OPERATOR_STOPPED:
        return (struct health){ HEALTH_STOPPED, "stopped by the operator" };
    case HEALTH_OPERATOR_DISABLED:
        return (struct health){ HEALTH_DISABLED, in->disabled_reason != NULL
            ? in->disabled_reason : "disabled in the config" };
    case HEALTH_OPERATOR_INVALID:
        return (struct health){ HEALTH_INVALID, "the entry cannot be "
            "dialed" };
    case HEALTH_OPERATOR_MONITORED:
        break;
    }
    if (l == NULL || !l->present)
        return (struct health){ HEALTH_PENDING, "no observation yet" };
    /* A child that dies right after every dial is down even while the
     * fresh one answers: only one that outlives the window is ok. */
    if (in->crash_loop != NULL)
        return (struct health){ HEALTH_DOWN, in->crash_loop };
    switch (l->state) {
    case LIVENESS_UNREACHABLE:
        return (struct health){ HEALTH_DOWN, "unreachable" };
    case LIVENESS_UNKNOWN:
        return (struct health){ HEALTH_UNKNOWN, "an answer that does not "
            "say whether it is MCP" };
    default:
        break;
    }
    /* Reachable, but every initialize refused: it answers and cannot be
     * used at all (the server's words are on the failed exchange). */
    if (in->init_refused)
        return (struct health){ HEALTH_DOWN, "cannot be initialized" };
    /* Reachable: it answers; is what it answers working? A failed
     * exchange that left liveness reachable was answered with a JSON-RPC
     * error. */
    if (in->fail_streak > 0)
        return (struct health){ HEALTH_DEGRADED, "answers with JSON-RPC "
            "errors" };
    if (in->probe_failing)
        return (struct health){ HEALTH_DEGRADED, "the deep check fails" };
    if (in->pagination_loop)
        return (struct health){ HEALTH_DEGRADED, "pagination_loop" };
    return (struct health){ HEALTH_OK, "" };
}

bool
health_track_update(struct health_track *t, const struct health_input *in,
    int64_t now_ms, enum health_state *was)
{
    struct health h = health_of(in);

    if (t->set && h.state == t->health.state)
        return false;
    if (was != NULL)
        *was = t->set ? t->health.state : HEALTH__COUNT;
    t->health = h;
    t->set = true;
    t->since = now_ms;
    return true;
}
