/*
 * Endings (DESIGN.md section 5): ending one server's session, at most once
 * per session, by one deadline. The outcome answers the operator by the
 * teardown deadline; the settlement (the DELETE's transfer finished or
 * aborted, the child reaped) is reported apart, possibly later.
 */
#ifndef MCPTOP_ENGINE_ENDING_H
#define MCPTOP_ENGINE_ENDING_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/failure.h"

#define ENDING_OUTCOMES(X)                  \
    X(PENDING,      "pending")              \
    X(TERMINATED,   "terminated")           \
    X(NOT_ALLOWED,  "not_allowed")          \
    X(ALREADY_GONE, "already_gone")         \
    X(REJECTED,     "rejected")             \
    X(FAILED,       "failed")               \
    X(TIMED_OUT,    "timed_out")            \
    X(NO_SESSION,   "no_session")           \
    X(EXITED,       "exited")               \
    X(SIGNALLED,    "signalled")            \
    X(KILLED,       "killed")               \
    X(STREAM_CLOSED, "stream_closed")

enum ending_outcome {
#define X(id, name) ENDING_##id,
    ENDING_OUTCOMES(X)
#undef X
    ENDING__COUNT
};

struct server;

/* One ending. A plain value owned by its server; read through the
 * pointer the server hands out, valid while the server lives. */
struct ending {
    const struct server *server;
    enum ending_outcome  outcome;       /* PENDING until the deadline at most */
    long                 http_status;   /* rejected / not_allowed ... */
    bool                 has_failure;   /* failed: kind and delivered kept */
    enum failure_kind    kind;
    enum delivered       delivered;
    int                  exit_code;     /* exited: status; -1 if none */
    int                  signal;        /* signalled/killed: the signal */
    bool                 half_open;     /* ended after a failed dial */
    bool                 sessionless;   /* nothing to end remotely */
    int64_t              started_at;    /* epoch ms */
    double               duration_ms;   /* start to outcome, monotonic */
    bool                 settled;
    double               settled_ms;    /* start to settlement, monotonic */
    unsigned             group_left;    /* stdio: members of the child's
                                           process group still there when
                                           it was reaped (the outcome and
                                           settlement cover them) */
    char                 detail[160];
};

/* "terminated" ... Static string. */
const char *ending_outcome_name(enum ending_outcome o);
/* True for the outcomes `mcptop end` counts as success: terminated,
 * not_allowed, already_gone, exited, no_session, stream_closed (a
 * 2024-11-05 HTTP+SSE session, which ends when its stream closes). */
bool ending_outcome_ok(enum ending_outcome o);

#endif
