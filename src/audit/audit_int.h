/*
 * What the audit's files share (private to src/audit): the audit's state,
 * the runner's helpers the checks are written with (audit.c) and the
 * checks themselves (audit_checks.c).
 *
 * A check is a step function: the runner calls it on the loop, once at
 * its start and again each time something it waits for came (a result, an
 * ending's outcome); it sends one exchange or starts one ending and
 * returns, or judges and calls audit_conclude. The runner then ends every
 * session the check's channels still hold, waits for their settlement,
 * adds their counts and frees the channels: a check never leaves a
 * session behind, whatever it judged.
 */
#ifndef MCPTOP_AUDIT_AUDIT_INT_H
#define MCPTOP_AUDIT_AUDIT_INT_H

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "audit/audit.h"
#include "engine/ending.h"
#include "engine/fleet.h"

struct cJSON;

#define AUDIT_CHANNELS   8      /* a check's channels at most */
#define AUDIT_AFFINITY_N 10     /* requests on one session */
#define AUDIT_VERSIONS_N 5      /* the revisions offered, and one unknown */
#define AUDIT_UNKNOWN_VERSION "2099-01-01"

/* How the server is reached, once the era check has said. */
enum audit_mode {
    AUDIT_MODE_HTTP,        /* Streamable HTTP, legacy or dual */
    AUDIT_MODE_MODERN,      /* Streamable HTTP, 2026-07-28 only */
    AUDIT_MODE_SSE,         /* 2024-11-05 HTTP+SSE */
    AUDIT_MODE_STDIO,
    AUDIT_MODE_STDIO_MODERN,
    AUDIT_MODE_DOWN,        /* neither era could be dialed */
};

/* Where a session being opened (initialize, initialized) is. */
enum audit_open {
    AUDIT_OPEN_BUSY,        /* an exchange was sent: wait */
    AUDIT_OPEN_OK,          /* a->session is open, at a->version */
    AUDIT_OPEN_NO_SESSION,  /* initialize worked; no id was issued */
    AUDIT_OPEN_FAILED,      /* a->why says how */
};

struct audit {
    struct fleet           *fleet;
    size_t                  index;
    const char             *name;       /* the declaration's */
    bool                    stdio;      /* a command, not a URL */
    bool                    sse_decl;   /* "type": "sse" */
    struct audit_options    opt;
    struct ev_loop         *loop;
    void                  (*done)(void *arg, struct audit *a);
    void                   *done_arg;
    ev_timer                kick;       /* the step, on the next turn */
    ev_timer                bound;      /* the check's bound */
    ev_timer                grace;      /* the endings' bound */
    enum audit_mode         mode;
    struct audit_result     results[AUDIT_CHECK__COUNT];
    unsigned                opened, ended;
    unsigned                terminated; /* of ended: by a 2xx DELETE */
    bool                    keeps_deleted;  /* freed said no: a 2xx DELETE
                                               does not end a session */
    const char             *skipped;
    bool                    started, finished, stopping;
    /* the check under way */
    size_t                  at;         /* in audit_order */
    int                     step;       /* its own */
    bool                    concluding; /* its sessions are being ended */
    struct fleet_raw       *ch[AUDIT_CHANNELS];
    size_t                  nch;
    /* what came since the last step */
    bool                    has_result;
    struct fleet_raw_result res;
    bool                    has_ending;
    struct ending           end;
    /* ...per channel, for a check with several in flight at once */
    struct fleet_raw_result chres[AUDIT_CHANNELS];
    bool                    chhas[AUDIT_CHANNELS];
    /* the check's scratch */
    int                     open_step;
    int                     session;    /* open: the session's number */
    char                    version[32];/* ...and its revision */
    char                    why[200];   /* open: why it failed */
    int                     n, served, gone, first_404, other_status;
    bool                    ping_unsupported;   /* the ping check said */
    bool                    init_refused;       /* open: initialize was
                                                   answered, not a result */
    bool                    lost_after_init;    /* open: the request after
                                                   initialize was answered
                                                   404 on the session it had
                                                   just issued (replicas
                                                   without affinity) */
    uint64_t               *tags;       /* each distinct session id's tag
                                           (fleet_raw_session_tag) */
    size_t                  ntags, tcap;
    unsigned                reused_ids; /* sessions opened with an id
                                           another had */
    struct cJSON           *ev;         /* the check's evidence */
};

/* The order the checks run in (era first: it says how to reach the
 * server), NULL-free; audit.c's. */
extern const enum audit_check audit_order[];
extern const size_t audit_norder;

/* --- helpers for the checks (audit.c) ------------------------------------ */

/* A channel on the audited server (sse: force 2024-11-05 HTTP+SSE); NULL
 * when none can be opened (the check is then judged error). */
struct fleet_raw *audit_channel(struct audit *a, bool sse);
/* Send one JSON-RPC exchange (rpc, offering or carrying version, with
 * session) on ch, bounded by audit_timeout_ms or timeout_ms; false when
 * it cannot be sent (a->why says). */
bool audit_send(struct audit *a, struct fleet_raw *ch, const char *rpc,
    const char *version, int session);
bool audit_send_within(struct audit *a, struct fleet_raw *ch,
    const char *rpc, const char *version, int session, long timeout_ms);
/* The same with any method (HTTP), body sent as it is (POST). */
bool audit_send_method(struct audit *a, struct fleet_raw *ch,
    enum http_method method, const char *body, const char *version,
    int session);
/* The request bound for each exchange of a check, ms. */
long audit_timeout_ms(const struct audit *a);
/* Open a session on ch: initialize (offering version, NULL the newest),
 * then notifications/initialized. Call on each step until it is not
 * AUDIT_OPEN_BUSY. */
enum audit_open audit_open_step(struct audit *a, struct fleet_raw *ch,
    const char *version);
/* Judge check c: v, a detail (printf-style; may be NULL), the evidence
 * a->ev holds so far (taken). */
void audit_judge(struct audit *a, enum audit_check c, enum audit_verdict v,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* The check is over: end its sessions, then the next one. */
void audit_conclude(struct audit *a);
/* The words for a result that is not the answer hoped for: a failure's
 * kind and detail, an HTTP status with the JSON-RPC error it carried. */
void audit_describe(const struct fleet_raw_result *r, char *buf, size_t n);

/* --- the checks (audit_checks.c) ----------------------------------------- */

/* Run one step of check c (its first step when a->step is 0). */
void audit_checks_step(struct audit *a, enum audit_check c);
/* Why check c is not made in a->mode (with the verdict that says so in
 * *v: n/a, or error when the server could not be reached); NULL when it
 * is made. */
const char *audit_checks_not_for(const struct audit *a, enum audit_check c,
    enum audit_verdict *v);

#endif
