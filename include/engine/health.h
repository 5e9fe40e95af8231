/*
 * Health: the verdict an operator acts on (DESIGN.md section 4b). Liveness
 * answers "can an exchange with this server complete?"; health answers
 * "can agents use this server now?". It is derived, never observed: one
 * function, health_of, mints it from the liveness record, the current
 * failure streak, the deep check and the operator's state. It is what the
 * TUI's state column and header counts, `check`'s "ok", `watch`'s health
 * events and /metrics' mcp_probe_success show, everywhere the same word.
 */
#ifndef MCPTOP_ENGINE_HEALTH_H
#define MCPTOP_ENGINE_HEALTH_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/liveness.h"

#define HEALTH_STATES(X)                                                \
    X(OK,       "ok")       /* the liveness exchange completed and     \
                               nothing monitored fails now */          \
    X(DEGRADED, "degraded") /* it answers, but what it answers fails */ \
    X(DOWN,     "down")     /* liveness unreachable, or a crash loop */ \
    X(UNKNOWN,  "unknown")  /* liveness unknown */                     \
    X(PENDING,  "pending")  /* no observation yet */                   \
    X(INVALID,  "invalid")  /* the entry cannot be dialed */           \
    X(PAUSED,   "paused")   /* the operator's states: not monitored */ \
    X(STOPPED,  "stopped")                                             \
    X(DISABLED, "disabled")

enum health_state {
#define X(id, name) HEALTH_##id,
    HEALTH_STATES(X)
#undef X
    HEALTH__COUNT
};

/* What the operator (or the client's config) decided for a server. */
enum health_operator {
    HEALTH_OPERATOR_MONITORED,
    HEALTH_OPERATOR_PAUSED,
    HEALTH_OPERATOR_STOPPED,
    HEALTH_OPERATOR_DISABLED,
    HEALTH_OPERATOR_INVALID,    /* not the operator's: the entry's */
};

/* What health is minted from. Borrowed. */
struct health_input {
    enum health_operator   operator_state;
    const struct liveness *liveness;        /* present=false: absent */
    unsigned long          fail_streak;     /* exchanges failed in a row */
    bool                   probe_failing;   /* the deep check's last call
                                               failed */
    bool                   pagination_loop; /* the last listing repeated a
                                               cursor */
    bool                   init_refused;    /* the last dial's initialize
                                               was answered with a JSON-RPC
                                               error, none completed since */
    const char            *disabled_reason; /* why the client does not run
                                               it (the declaration's), or
                                               NULL */
    const char            *crash_loop;      /* non-NULL: its children die
                                               within the crash window of
                                               their dial, in these words
                                               ("crash loop: ..."); NULL
                                               none */
};

/* The verdict, with why in a few words (a static string, "" for ok; for
 * disabled, the input's disabled_reason when given, and for a crash loop
 * the input's crash_loop: borrowed). */
struct health {
    enum health_state state;
    const char       *reason;
};

/* "ok" ... Static string. */
const char *health_state_name(enum health_state s);

/* False for the operator's states (paused, stopped, disabled): not
 * monitored now, never counted as ok or not ok. An invalid entry is
 * monitored, and not ok. */
bool health_monitored(enum health_state s);

/* THE mint (DESIGN.md section 4b). */
struct health health_of(const struct health_input *in);

/* The verdict last published for one server (a fleet's, or the one a tap
 * stands in for). Zeroed: none yet. */
struct health_track {
    struct health health;       /* the last one published */
    bool          set;          /* ...once there is one */
    int64_t       since;        /* epoch ms it was published */
};

/*
 * THE rule of publishing health, for every server that mints its own: in's
 * verdict (health_of) is published when its state differs from the one t
 * keeps, or t has none yet; a new reason under the same state is no
 * change. On a change: t keeps the verdict, stamped now_ms (epoch ms),
 * *was (may be NULL) gets the state before (HEALTH__COUNT: none), and it
 * returns true. Otherwise false, t and *was untouched.
 */
bool health_track_update(struct health_track *t,
    const struct health_input *in, int64_t now_ms, enum health_state *was);

#endif
