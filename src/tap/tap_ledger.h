/*
 * The tap's in-flight ledger (issue 31): a copy of every JSON-RPC line
 * that crosses the tap, read to pair requests and answers by id in both
 * directions (the agent's requests to the server, and the server's to the
 * agent: sampling, elicitation, roots), to follow progress
 * (notifications/progress by progressToken) and cancellation
 * (notifications/cancelled), and to classify each exchange that ends with
 * the one classifier (failure.c): an answer is completed, a JSON-RPC error
 * is protocol, the transport closing under a request is connection_closed.
 *
 * It sees text only; it never writes to a process. Lookups are hashed
 * (keys are the sender's, seeded), so a flood of ids costs linear time;
 * at most `max` requests are followed at once, the rest only counted.
 */
#ifndef MCPTOP_TAP_LEDGER_H
#define MCPTOP_TAP_LEDGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/failure.h"

/* Who wrote a line. */
enum tap_side {
    TAP_SIDE_AGENT,
    TAP_SIDE_SERVER,
};

/* Which way a request went: the agent's to the server, or the server's
 * to the agent. */
enum tap_dir {
    TAP_DIR_TO_SERVER,
    TAP_DIR_TO_AGENT,
    TAP_DIR__COUNT
};

/* "to_server" / "to_agent". Static. */
const char *tap_dir_name(enum tap_dir d);

#define TAP_METHOD_MAX 64       /* a method name is cut there */
#define TAP_ID_MAX     128      /* an id's JSON text longer is not followed */

/* One request in flight. Strings are sanitized copies, owned by the
 * ledger; valid until the request ends (the ended callback included). */
struct tap_request {
    enum tap_dir dir;
    char        *id;            /* the id's JSON text: 3, "a-1" */
    char        *method;
    char        *tool;          /* tools/call: params.name; else NULL */
    char        *token;         /* the progressToken's JSON text, or NULL */
    int64_t      started_ms;    /* epoch ms */
    double       started;       /* monotonic s */
    bool         has_progress;
    double       progress;
    bool         has_total;
    double       total;
    char        *message;       /* the last progress message, or NULL */
    int64_t      progress_ms;   /* epoch ms of the last progress */
    uint64_t     bytes;         /* the request and what related to it */
    unsigned     progress_count;
    bool         own;           /* the tap's own (--probe): its answer is
                                   not passed on */
    /* the ledger's links */
    struct tap_request *older, *newer;
    struct tap_request *hnext_id, *hnext_tok;
};

/* How a request left the ledger. */
enum tap_end {
    TAP_END_COMPLETED,      /* answered with a result */
    TAP_END_FAILED,         /* a JSON-RPC error, or the transport closed */
    TAP_END_CANCELLED,      /* notifications/cancelled from its sender */
    TAP_END_OPERATOR,       /* cancelled by the operator through the tap */
};

/* "completed" / "failed" / "cancelled" / "cancelled_by_operator". */
const char *tap_end_name(enum tap_end e);

/* What the ledger reports, from inside tap_ledger_line and friends. */
struct tap_ledger_host {
    void (*started)(void *arg, const struct tap_request *r);
    void (*progress)(void *arg, const struct tap_request *r);
    /* f: the classified failure for TAP_END_FAILED, else NULL; ms since
     * the request started (monotonic). r is freed after the call. */
    void (*ended)(void *arg, const struct tap_request *r, enum tap_end how,
        const struct failure *f, double ms);
};

/* Counters for the snapshot. */
struct tap_ledger_stats {
    unsigned long lines[2];         /* by side */
    unsigned long unparsed[2];      /* not a JSON-RPC message */
    unsigned long unmatched[2];     /* an answer to nothing in flight */
    unsigned long late_dropped;     /* answers to operator-cancelled ones */
    unsigned long late_passed;      /* the same inside a batch: passed on */
    unsigned long batches[2];       /* JSON-RPC batches, by side */
    unsigned long untracked;        /* past max, or an id too long */
    unsigned long duplicate_ids;    /* a request reused an id in flight */
    unsigned long completed, failed, cancelled;
};

struct tap_ledger;

/* New ledger; host callbacks get arg. At most max requests followed
 * (0: 10000). Never NULL. */
struct tap_ledger *tap_ledger_new(const struct tap_ledger_host *host,
    void *arg, size_t max);
/* Free every request (no callbacks). NULL does nothing. */
void tap_ledger_free(struct tap_ledger *l);

/*
 * One complete line (without its newline) that side wrote, at monotonic
 * now (s) and wall (epoch ms). Returns false when the line must not be
 * passed on: a late answer to a request the operator cancelled (the tap
 * already answered it). A line that is no JSON-RPC message is counted.
 */
bool tap_ledger_line(struct tap_ledger *l, enum tap_side side,
    const char *line, size_t len, double now, int64_t wall);

/* A line past the size limit was passed on unread. */
void tap_ledger_skipped(struct tap_ledger *l, enum tap_side side);

/*
 * The server's side closed (the child exited or closed its stdout): every
 * request in flight fails as connection_closed (delivered unknown), with
 * detail. Requests to the agent fail the same way.
 */
void tap_ledger_close(struct tap_ledger *l, const char *detail, double now);

/* The agent's request with id text `id` (JSON text, e.g. 7 or "x"), or
 * NULL. A bare word that is no JSON is taken as a string id. */
struct tap_request *tap_ledger_find(struct tap_ledger *l, enum tap_dir dir,
    const char *id);

/* The operator cancelled r (from tap_ledger_find): it ends now
 * (TAP_END_OPERATOR), and a later answer to its id is dropped (false from
 * tap_ledger_line) and counted. */
void tap_ledger_cancel(struct tap_ledger *l, struct tap_request *r,
    double now);

/* The tap's own request (--probe's ping) with id (JSON text), in
 * flight from now: it ends as any exchange does, and its answer is not
 * passed on (false from tap_ledger_line). Returned borrowed. */
struct tap_request *tap_ledger_own(struct tap_ledger *l, const char *id,
    const char *method, double now, int64_t wall);
/* End r (in flight) as failed with f now: the tap's own timer fired. */
void tap_ledger_fail(struct tap_ledger *l, struct tap_request *r,
    const struct failure *f, double now);
/* True while the server's lines must be read whole before they are
 * passed on: an answer may have to be dropped (an operator-cancelled
 * request's late answer, the answer to the tap's own request). */
bool tap_ledger_hold(const struct tap_ledger *l);

/* Requests in flight, and the oldest (NULL when none); newer links walk
 * from it, oldest first. */
size_t tap_ledger_count(const struct tap_ledger *l);
const struct tap_request *tap_ledger_oldest(const struct tap_ledger *l);
const struct tap_ledger_stats *tap_ledger_stats(const struct tap_ledger *l);
/* Operator-cancelled ids whose late answer is still watched for. */
size_t tap_ledger_cancelled_pending(const struct tap_ledger *l);

#endif
