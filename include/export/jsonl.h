/*
 * The JSON view of a fleet, for scripts: each engine event as one line of
 * JSON Lines (what `mcptop watch` writes; jsonl_event_line is a writer of
 * the event stream like metrics_event_cb), each server's record and the
 * fleet's (the `check --json` document, also served as /fleet), and each
 * ending's (`end --json`, and the ending lines of `watch`), and a tap's
 * lines (what `mcptop tap` publishes: the same event line, from values).
 * Server text in a record is sanitized. Records are written straight into
 * a JSON writer (util/jsonw.h); the functions that return cJSON trees
 * parse that same text. No I/O but jsonl_write and jsonl_write_text, to
 * the stream they are given.
 */
#ifndef MCPTOP_EXPORT_JSONL_H
#define MCPTOP_EXPORT_JSONL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/event.h"
#include "engine/health.h"

struct cJSON;
struct ending;
struct failure;
struct fleet;
struct jsonw;
struct liveness;
struct server;

/* The record of one server (an element of `check --json`'s "servers"),
 * now. Caller frees with cJSON_Delete. */
struct cJSON *jsonl_server(const struct server *s);

/* The fleet as `check --json` reports it, now: {"servers": [...],
 * "summary": {reachable, unreachable, unknown, absent, disabled}}. Caller
 * frees with cJSON_Delete. */
struct cJSON *jsonl_fleet(const struct fleet *f);

/* Members a caller adds to each server's record of the fleet document
 * (s) and to its summary (s NULL), written last in each. */
typedef void (*jsonl_extra_fn)(struct jsonw *w, const struct server *s,
    void *arg);

/* The members "servers" and "summary" of the fleet document (what
 * jsonl_fleet gives), written into the object w is writing; extra, when
 * not NULL, adds members to each record and to the summary. */
void jsonl_fleet_write(struct jsonw *w, const struct fleet *f,
    jsonl_extra_fn extra, void *arg);

/* The record of one ending (`end --json`, the ending lines of `watch`).
 * Caller frees with cJSON_Delete. */
struct cJSON *jsonl_ending(const struct ending *e);

/*
 * The line of e, without its newline: {"ts", "event", "server", ...}.
 * NULL for an event that has no line (EVENT_STATE). Caller frees with
 * free().
 */
char *jsonl_event_line(const struct event *e);

/* The line of e (as jsonl_event_line) into w, which is reset first, so one
 * writer serves every line. false for an event that has no line. */
bool jsonl_event_write(struct jsonw *w, const struct event *e);

/*
 * A stdio server's last stderr lines as a failure's cause: at most max
 * lines (oldest first, each once) whose lengths add up to at most
 * max_bytes, into lines (borrowed, sanitized; valid until the next event
 * on s). Returns how many.
 */
#define JSONL_STDERR_TAIL_LINES 5
#define JSONL_STDERR_TAIL_BYTES 300
size_t jsonl_stderr_tail(const struct server *s, const char **lines,
    size_t max, size_t max_bytes);

/*
 * The last line of a stream that ended every session it could:
 * {"ts","event":"exit","sessions_ended","sessions_not_ended"}, from
 * fleet_unended's counts (asked endings, of which not_ended did not end
 * their session). Caller frees with free().
 */
char *jsonl_exit_line(size_t asked, size_t not_ended);

/* "liveness": the record's {state, observed_at, error_code?}, or null when
 * absent (check --json's member, and a tap's snapshot's). */
void jsonl_liveness(struct jsonw *w, const struct liveness *l);

/*
 * A tap's lines (src/tap): the event stream a tap publishes on its socket,
 * in watch's shapes with "source":"tap", read back by a {"tap": PATH}
 * server (the engine's tap reader) and by scripts. The tap has no struct
 * server: these take values. Strings are borrowed for the call and
 * written as they are (the tap sanitized them); the server's name is
 * sanitized here as on every line. ts and at are epoch ms (the tap reads
 * the clock, never this file). Each line writer resets w and leaves one
 * whole line in it (no newline); jsonl_tap_head leaves the object open
 * for the tap's own answers (a snapshot, a command's result), whose
 * pieces are jsonl_tap_failure, jsonl_tap_request and jsonl_liveness.
 */

/* One request of a tap's ledger. */
struct jsonl_tap_request {
    const char *id;             /* its JSON text: 7, "a-1" */
    const char *direction;      /* "to_server" / "to_agent" */
    const char *method;
    const char *tool;           /* tools/call's tool; NULL: none */
    int64_t     started_at;     /* epoch ms */
    double      age_ms;         /* since it started (monotonic) */
    bool        has_progress;
    double      progress;
    bool        has_total;
    double      total;
    const char *message;        /* the last progress message; NULL */
    int64_t     progress_age_ms;    /* since the last progress */
    uint64_t    bytes;
    bool        own;            /* the tap's own (--probe's ping) */
};

/* {"ts", "event", "server", "source": "tap", left open (w reset first). */
void jsonl_tap_head(struct jsonw *w, int64_t ts, const char *event,
    const char *server);
/* A failure's members: outcome (its kind), delivered, rpc_code?, site,
 * detail. */
void jsonl_tap_failure(struct jsonw *w, const struct failure *f);
/* r as an object (key NULL: an array's element): id, direction, method,
 * tool|null, started_at, age_ms, progress {progress, total, message,
 * age_ms}|null, bytes, own?. */
void jsonl_tap_request(struct jsonw *w, const char *key,
    const struct jsonl_tap_request *r);

/* exchange: op completed (f NULL) or failed with f, after ms (monotonic),
 * observed at (epoch ms), the record's seq-th exchange (record_seq); id
 * (JSON text; NULL: none) the agent's request's. */
void jsonl_tap_exchange(struct jsonw *w, const char *server, int64_t at,
    uint64_t seq, const char *op, const char *id, const struct failure *f,
    double ms);
/* liveness: the record's new state (and when it was observed). */
void jsonl_tap_liveness(struct jsonw *w, int64_t ts, const char *server,
    const struct liveness *l);
/* health: the new verdict, was before (HEALTH__COUNT: none, null). */
void jsonl_tap_health(struct jsonw *w, int64_t ts, const char *server,
    const struct health *h, enum health_state was);
/* request or progress (event): {"request": r}. */
void jsonl_tap_request_line(struct jsonw *w, int64_t ts, const char *event,
    const char *server, const struct jsonl_tap_request *r);
/* request_end: r left the ledger with outcome ("completed", "failed",
 * ...), f's kind when it failed (f NULL: none), ms after it started. */
void jsonl_tap_request_end(struct jsonw *w, int64_t ts, const char *server,
    const struct jsonl_tap_request *r, const char *outcome,
    const struct failure *f, double ms);
/* exit: the server exited with code (-1: not known) or was killed by
 * signal (> 0), said in detail. */
void jsonl_tap_exit(struct jsonw *w, int64_t ts, const char *server, int code,
    int signal, const char *detail);
/* session or session_gone (event): an HTTP tap's agent session, by its
 * shown prefix; detail (NULL: none) why it went. */
void jsonl_tap_session(struct jsonw *w, int64_t ts, const char *event,
    const char *server, const char *session, const char *detail);
/* session_end: the operator's ending of session: its outcome, the
 * DELETE's status (0: none, null), f when it failed at the transport
 * (NULL: none), ms it took. */
void jsonl_tap_session_end(struct jsonw *w, int64_t ts, const char *server,
    const char *session, const char *outcome, long status,
    const struct failure *f, int64_t ms);

/* Write o unformatted, then a newline, to out (not flushed). -1 when the
 * write failed (errno from stdio), else 0. */
int jsonl_write(FILE *out, const struct cJSON *o);

/* Append a newline to what w holds and write it all to out (not flushed).
 * -1 when the write failed (errno from stdio), else 0. */
int jsonl_write_text(FILE *out, struct jsonw *w);

#endif
