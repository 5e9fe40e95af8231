/*
 * Incremental parser for text/event-stream bodies (the WHATWG "server-sent
 * events" format), as MCP's Streamable HTTP transport uses it for POST
 * responses and the GET stream (MCP 2025-03-26..2025-11-25,
 * basic/transports). Bytes arrive in arbitrary chunks; lines end in CRLF, LF
 * or CR (a CR at the end of one chunk followed by LF at the start of the
 * next is one line end); an event is dispatched at a blank line; lines
 * starting with ':' are comments; unknown fields are ignored; a single
 * leading space after the colon is dropped; "data" lines join with '\n';
 * "retry" takes only ASCII digits; an "id" containing NUL is ignored; an
 * event whose type contains NUL is not handed up (no listener can name
 * it). An event left without its blank line when the stream ends is
 * discarded.
 *
 * The parser never reads a clock and never allocates without bound: a line
 * or an event's data past max_bytes is an error.
 *
 * A face of the engine for the HTTP tap (tap_http.c), which reads
 * a copy of each SSE answer it passes on to the agent.
 */
#ifndef MCPTOP_ENGINE_SSE_H
#define MCPTOP_ENGINE_SSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sse;

/* One dispatched event. All pointers are borrowed, valid during the callback. */
struct sse_event {
    const char *type;     /* "message" when the event set no type */
    const char *data;     /* NUL-terminated, may be "" */
    size_t      data_len;
    const char *id;       /* last event id after this event, "" if none */
};

/* Called once per dispatched event. Return 0 to go on, non-zero to stop:
 * sse_feed then returns -1 and sse_error says "stopped by callback". */
typedef int (*sse_event_cb)(void *arg, const struct sse_event *event);

/* New parser. max_bytes bounds one line and one event's data (bytes).
 * cb may be NULL. NULL only on OOM. Free with sse_free. */
struct sse *sse_new(size_t max_bytes, sse_event_cb cb, void *arg);
/* sse_free(NULL) does nothing. */
void sse_free(struct sse *p);

/* Feed len bytes. 0 on success; -1 when a line or event exceeded
 * max_bytes or the callback stopped; the parser then refuses more input. */
int sse_feed(struct sse *p, const char *buf, size_t len);
/* The stream ended: discard any undispatched event. 0, or -1 if failed. */
int sse_finish(struct sse *p);

/* Human-readable reason for the last -1, or NULL. Borrowed. */
const char *sse_error(const struct sse *p);
/* The last-event-id buffer ("" when none): what Last-Event-ID resends. */
const char *sse_last_id(const struct sse *p);
/* The last valid "retry" value in ms, or -1 when none was seen. */
int64_t sse_retry_ms(const struct sse *p);
/* How many complete lines were recognised as SSE: a comment, or a field
 * named data, event, id or retry. A body where this stays 0 held no SSE
 * (raw JSON sent with the SSE content type, for example). */
uint64_t sse_lines_recognised(const struct sse *p);
/* How many events were dispatched so far. */
uint64_t sse_events(const struct sse *p);

#endif
