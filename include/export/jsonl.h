/*
 * The JSON view of a fleet, for scripts: each engine event as one line of
 * JSON Lines (what `mcptop watch` writes; jsonl_event_line is a writer of
 * the event stream like metrics_event_cb), each server's record and the
 * fleet's (the `check --json` document, also served as /fleet), and each
 * ending's (`end --json`, and the ending lines of `watch`). Server text in
 * a record is sanitized. Records are written straight into a JSON writer
 * (util/jsonw.h); the functions that return cJSON trees parse that same
 * text. No I/O but jsonl_write and jsonl_write_text, to the stream they
 * are given.
 */
#ifndef MCPTOP_EXPORT_JSONL_H
#define MCPTOP_EXPORT_JSONL_H

#include <stdbool.h>
#include <stdio.h>

#include "engine/event.h"

struct cJSON;
struct ending;
struct fleet;
struct jsonw;
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

/* Write o unformatted, then a newline, to out (not flushed). -1 when the
 * write failed (errno from stdio), else 0. */
int jsonl_write(FILE *out, const struct cJSON *o);

/* Append a newline to what w holds and write it all to out (not flushed).
 * -1 when the write failed (errno from stdio), else 0. */
int jsonl_write_text(FILE *out, struct jsonw *w);

#endif
