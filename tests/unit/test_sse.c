/*
 * Tests for the text/event-stream parser: each WHATWG rule the header
 * promises, bounded memory, the callback's stop, the end of stream, and
 * that the events do not depend on where the chunks are cut.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/sse.h"
#include "util/xmalloc.h"

#define REC_MAX 32

/* One event as the callback saw it, copied out. */
struct rec_event {
    char  *type;
    char  *data;
    size_t data_len;
    char  *id;
};

/* What the callback collected; stop_after > 0 stops at that event. */
struct rec {
    struct rec_event event[REC_MAX];
    size_t           n;
    size_t           stop_after;
};

/* Heap copy of n bytes plus a NUL. */
static char *
rec_copy(const char *s, size_t n)
{
    char *p = xmalloc(n + 1);

    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

/* sse_event_cb: record the event, stop when asked. */
static int
rec_cb(void *arg, const struct sse_event *event)
{
    struct rec       *r = arg;
    struct rec_event *e;

    assert_true(r->n < REC_MAX);
    assert_non_null(event->type);
    assert_non_null(event->data);
    assert_non_null(event->id);
    assert_int_equal(event->data[event->data_len], '\0');
    e = &r->event[r->n++];
    e->type = rec_copy(event->type, strlen(event->type));
    e->data = rec_copy(event->data, event->data_len);
    e->data_len = event->data_len;
    e->id = rec_copy(event->id, strlen(event->id));
    if (r->stop_after > 0 && r->n >= r->stop_after)
        return 1;
    return 0;
}

/* Free what rec_cb copied and empty the record. */
static void
rec_clear(struct rec *r)
{
    size_t i;

    for (i = 0; i < r->n; i++) {
        free(r->event[i].type);
        free(r->event[i].data);
        free(r->event[i].id);
    }
    r->n = 0;
}

/* Assert event i has this type, NUL-free data and id. */
static void
rec_expect(const struct rec *r, size_t i, const char *type, const char *data,
    const char *id)
{
    assert_true(i < r->n);
    assert_string_equal(r->event[i].type, type);
    assert_int_equal(r->event[i].data_len, strlen(data));
    assert_memory_equal(r->event[i].data, data, strlen(data) + 1);
    assert_string_equal(r->event[i].id, id);
}

/* Assert two recordings hold the same events. */
static void
rec_same(const struct rec *a, const struct rec *b)
{
    size_t i;

    assert_int_equal(a->n, b->n);
    for (i = 0; i < a->n; i++) {
        assert_string_equal(a->event[i].type, b->event[i].type);
        assert_int_equal(a->event[i].data_len, b->event[i].data_len);
        assert_memory_equal(a->event[i].data, b->event[i].data, a->event[i].data_len);
        assert_string_equal(a->event[i].id, b->event[i].id);
    }
}

/* Parse a whole NUL-terminated stream in one chunk into r; returns parser. */
static struct sse *
parse_all(struct rec *r, const char *s)
{
    struct sse *p = sse_new(4096, rec_cb, r);

    assert_non_null(p);
    assert_int_equal(sse_feed(p, s, strlen(s)), 0);
    assert_null(sse_error(p));
    return p;
}

/* A new parser starts empty. */
static void
test_initial_state(void **state)
{
    struct sse *p = sse_new(64, NULL, NULL);

    (void)state;
    assert_non_null(p);
    assert_null(sse_error(p));
    assert_string_equal(sse_last_id(p), "");
    assert_int_equal(sse_retry_ms(p), -1);
    assert_int_equal(sse_lines_recognised(p), 0);
    assert_int_equal(sse_events(p), 0);
    assert_int_equal(sse_finish(p), 0);
    sse_free(p);
    sse_free(NULL);
}

/* A data line and a blank line make one "message" event. */
static void
test_simple_event(void **state)
{
    struct rec  r = { 0 };
    struct sse *p = parse_all(&r, "data: hello\n\n");

    (void)state;
    assert_int_equal(r.n, 1);
    rec_expect(&r, 0, "message", "hello", "");
    assert_int_equal(sse_events(p), 1);
    assert_int_equal(sse_lines_recognised(p), 1);
    sse_free(p);
    rec_clear(&r);
}

/* No blank line yet: nothing is dispatched. */
static void
test_needs_blank_line(void **state)
{
    struct rec  r = { 0 };
    struct sse *p = parse_all(&r, "data: a\n");

    (void)state;
    assert_int_equal(r.n, 0);
    assert_int_equal(sse_feed(p, "\n", 1), 0);
    assert_int_equal(r.n, 1);
    rec_expect(&r, 0, "message", "a", "");
    sse_free(p);
    rec_clear(&r);
}

/* Data lines join with '\n'; only the final '\n' goes. */
static void
test_data_join(void **state)
{
    struct rec  r = { 0 };
    struct sse *p = parse_all(&r,
        "data: a\ndata: b\ndata: c\n\n"
        "data: x\ndata\n\n"
        "data\ndata\n\n");

    (void)state;
    assert_int_equal(r.n, 3);
    rec_expect(&r, 0, "message", "a\nb\nc", "");
    rec_expect(&r, 1, "message", "x\n", "");
    rec_expect(&r, 2, "message", "\n", "");
    sse_free(p);
    rec_clear(&r);
}

/* CR, LF and CRLF all end lines, mixed in one stream. */
static void
test_line_ends(void **state)
{
    struct rec  r = { 0 };
    struct sse *p = parse_all(&r,
        "data: cr\r\r"
        "data: crlf\r\n\r\n"
        "data: lf\n\n"
        "data: a\rdata: b\r\ndata: c\n\r");

    (void)state;
    assert_int_equal(r.n, 4);
    rec_expect(&r, 0, "message", "cr", "");
    rec_expect(&r, 1, "message", "crlf", "");
    rec_expect(&r, 2, "message", "lf", "");
    rec_expect(&r, 3, "message", "a\nb\nc", "");
    assert_int_equal(sse_lines_recognised(p), 6);
    sse_free(p);
    rec_clear(&r);
}

/* CR ending one chunk and LF starting the next are one line end. */
static void
test_crlf_across_chunks(void **state)
{
    struct rec  r = { 0 };
    struct sse *p = sse_new(4096, rec_cb, &r);

    (void)state;
    assert_int_equal(sse_feed(p, "data: a\r", 8), 0);
    assert_int_equal(sse_feed(p, "\ndata: b\r", 9), 0);
    assert_int_equal(r.n, 0);
    assert_int_equal(sse_feed(p, "\n", 1), 0);
    assert_int_equal(r.n, 0);
    assert_int_equal(sse_feed(p, "\r", 1), 0);
    assert_int_equal(r.n, 1);
    rec_expect(&r, 0, "message", "a\nb", "");
    /* The CR above ended a line; a later LF alone is not a second one. */
    assert_int_equal(sse_feed(p, "\ndata: c\n\n", 10), 0);
    assert_int_equal(r.n, 2);
    rec_expect(&r, 1, "message", "c", "");
    sse_free(p);
    rec_clear(&r);
}

/* One BOM at the stream start is skipped, even split across chunks. */
static void
test_bom(void **state)
{
    struct rec  r = { 0 };
    struct sse *p = parse_all(&r, "\xef\xbb\xbf" "data: x\n\n");

    (void)state;
    assert_int_equal(r.n, 1);
    rec_expect(&r, 0, "message", "x", "");
    sse_free(p);
    rec_clear(&r);

    p = sse_new(4096, rec_cb, &r);
    assert_int_equal(sse_feed(p, "\xef", 1), 0);
    assert_int_equal(sse_feed(p, "\xbb", 1), 0);
    assert_int_equal(sse_feed(p, "\xbf" "data: y\n\n", 10), 0);
    assert_int_equal(r.n, 1);
    rec_expect(&r, 0, "message", "y", "");
    sse_free(p);
    rec_clear(&r);

    /* A second BOM is part of the field name: an unknown field. */
    p = parse_all(&r, "\xef\xbb\xbf\xef\xbb\xbf" "data: z\n\n");
    assert_int_equal(r.n, 0);
    assert_int_equal(sse_lines_recognised(p), 0);
    sse_free(p);

    /* A BOM later in the stream is not skipped either. */
    p = parse_all(&r, "data: a\n\n\xef\xbb\xbf" "data: b\n\n");
    assert_int_equal(r.n, 1);
    rec_expect(&r, 0, "message", "a", "");
    sse_free(p);
    rec_clear(&r);
}

/* Bytes that only began like a BOM are kept as content, not dropped. */
static void
test_partial_bom_kept(void **state)
{
    struct rec  r = { 0 };
    struct sse *p = sse_new(4096, rec_cb, &r);

    (void)state;
    /* Field name "\xef\xbb" "data" is unknown: no event may come out. */
    assert_int_equal(sse_feed(p, "\xef\xbb", 2), 0);
    assert_int_equal(sse_feed(p, "data: x\n\n", 9), 0);
    assert_int_equal(r.n, 0);
    assert_int_equal(sse_lines_recognised(p), 0);
    sse_free(p);

    p = parse_all(&r, "\xef" "data: x\n\n");
    assert_int_equal(r.n, 0);
    sse_free(p);
}

/* Comments count as SSE, dispatch nothing and do not split an event. */
static void
test_comments(void **state)
{
    struct rec  r = { 0 };
    struct sse *p = parse_all(&r,
        ": keep-alive\n"
        ":\n"
        "data: a\n"
        ": in the middle\n"
        "data: b\n\n");

    (void)state;
    assert_int_equal(r.n, 1);
    rec_expect(&r, 0, "message", "a\nb", "");
    assert_int_equal(sse_lines_recognised(p), 5);
    sse_free(p);
    rec_clear(&r);

    p = parse_all(&r, ": only comments\n\n: more\n\n");
    assert_int_equal(r.n, 0);
    assert_int_equal(sse_lines_recognised(p), 2);
    assert_int_equal(sse_events(p), 0);
    sse_free(p);
}

/* Exactly one space after the colon is dropped, and only a space. */
static void
test_leading_space(void **state)
{
    struct rec  r = { 0 };
    struct sse *p = parse_all(&r,
        "data:nospace\n\n"
        "data:  two\n\n"
        "data:\tTab\n\n"
        "data: a:b: c\n\n");

    (void)state;
    assert_int_equal(r.n, 4);
    rec_expect(&r, 0, "message", "nospace", "");
    rec_expect(&r, 1, "message", " two", "");
    rec_expect(&r, 2, "message", "\tTab", "");
    rec_expect(&r, 3, "message", "a:b: c", "");
    sse_free(p);
    rec_clear(&r);
}

/* A line with no colon is a field with an empty value. */
static void
test_field_without_colon(void **state)
{
    struct rec  r = { 0 };
    struct sse *p = parse_all(&r,
        "event: custom\nevent\ndata\n\n"
        "id: 4\n\nid\ndata: y\n\n");

    (void)state;
    assert_int_equal(r.n, 2);
    rec_expect(&r, 0, "message", "", "");
    rec_expect(&r, 1, "message", "y", "");
    assert_string_equal(sse_last_id(p), "");
    sse_free(p);
    rec_clear(&r);
}

/* "event" sets the type of one event; the next one is "message" again. */
static void
test_event_type(void **state)
{
    struct rec  r = { 0 };
    struct sse *p = parse_all(&r,
        "event: ping\ndata: 1\n\n"
        "data: 2\n\n"
        "event: a\nevent: b\ndata: 3\n\n"
        "event:\ndata: 4\n\n");

    (void)state;
    assert_int_equal(r.n, 4);
    rec_expect(&r, 0, "ping", "1", "");
    rec_expect(&r, 1, "message", "2", "");
    rec_expect(&r, 2, "b", "3", "");
    rec_expect(&r, 3, "message", "4", "");
    sse_free(p);
    rec_clear(&r);
}

/* "id" sets the last id, which sticks until changed or cleared. */
static void
test_id(void **state)
{
    struct rec  r = { 0 };
    struct sse *p = parse_all(&r,
        "id: 7\ndata: a\n\n"
        "data: b\n\n"
        "id: 8\ndata: c\n\n");

    (void)state;
    assert_int_equal(r.n, 3);
    rec_expect(&r, 0, "message", "a", "7");
    rec_expect(&r, 1, "message", "b", "7");
    rec_expect(&r, 2, "message", "c", "8");
    assert_string_equal(sse_last_id(p), "8");
    assert_int_equal(sse_feed(p, "id\n\n", 4), 0);
    assert_string_equal(sse_last_id(p), "");
    assert_int_equal(sse_feed(p, "id:  sp\n\n", 9), 0);
    assert_string_equal(sse_last_id(p), " sp");
    sse_free(p);
    rec_clear(&r);
}

/* An id containing NUL is ignored (but still an SSE line). */
static void
test_id_with_nul(void **state)
{
    static const char s[] = "id: good\n\nid: b\0d\ndata: x\n\n";
    struct rec        r = { 0 };
    struct sse       *p = sse_new(4096, rec_cb, &r);

    (void)state;
    assert_int_equal(sse_feed(p, s, sizeof s - 1), 0);
    assert_int_equal(r.n, 1);
    rec_expect(&r, 0, "message", "x", "good");
    assert_string_equal(sse_last_id(p), "good");
    assert_int_equal(sse_lines_recognised(p), 3);
    sse_free(p);
    rec_clear(&r);
}

/*
 * An event whose type holds NUL is not handed up: as a C string its type
 * would read as "" or as "message" (found by tests/fuzz/fuzz_sse.c). The
 * events around it and its id are kept.
 */
static void
test_event_type_with_nul(void **state)
{
    static const char s[] = "event: message\0x\nid: 1\ndata: hidden\n\n"
        "event: \0\ndata: also hidden\n\n"
        "data: shown\n\n";
    struct rec        r = { 0 };
    struct sse       *p = sse_new(4096, rec_cb, &r);

    (void)state;
    assert_int_equal(sse_feed(p, s, sizeof s - 1), 0);
    assert_int_equal(r.n, 1);
    rec_expect(&r, 0, "message", "shown", "1");
    assert_int_equal(sse_events(p), 1);
    assert_null(sse_error(p));
    sse_free(p);
    rec_clear(&r);
}

/* Data may hold NUL bytes; data_len says how many bytes there are. */
static void
test_data_with_nul(void **state)
{
    static const char s[] = "data: a\0b\n\n";
    struct rec        r = { 0 };
    struct sse       *p = sse_new(4096, rec_cb, &r);

    (void)state;
    assert_int_equal(sse_feed(p, s, sizeof s - 1), 0);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.event[0].data_len, 3);
    assert_memory_equal(r.event[0].data, "a\0b", 4);
    sse_free(p);
    rec_clear(&r);
}

/* A block with no data line dispatches nothing, but its id stands. */
static void
test_empty_data_not_dispatched(void **state)
{
    struct rec  r = { 0 };
    struct sse *p = parse_all(&r, "id: 5\nevent: foo\n\n");

    (void)state;
    assert_int_equal(r.n, 0);
    assert_int_equal(sse_events(p), 0);
    assert_string_equal(sse_last_id(p), "5");
    /* The type was reset with the empty event. */
    assert_int_equal(sse_feed(p, "data: x\n\n", 9), 0);
    assert_int_equal(r.n, 1);
    rec_expect(&r, 0, "message", "x", "5");
    /* Blank lines alone dispatch nothing. */
    assert_int_equal(sse_feed(p, "\n\n\r\n\r", 5), 0);
    assert_int_equal(sse_events(p), 1);
    sse_free(p);
    rec_clear(&r);
}

/* "retry" takes only ASCII digits; anything else leaves it alone. */
static void
test_retry(void **state)
{
    struct rec  r = { 0 };
    struct sse *p = parse_all(&r, "retry: 3000\n");

    (void)state;
    assert_int_equal(sse_retry_ms(p), 3000);
    assert_int_equal(sse_feed(p, "retry: 12a\n", 11), 0);
    assert_int_equal(sse_retry_ms(p), 3000);
    assert_int_equal(sse_feed(p, "retry: -5\n", 10), 0);
    assert_int_equal(sse_retry_ms(p), 3000);
    assert_int_equal(sse_feed(p, "retry:  5\n", 10), 0);
    assert_int_equal(sse_retry_ms(p), 3000);
    assert_int_equal(sse_feed(p, "retry: 1.5\n", 11), 0);
    assert_int_equal(sse_retry_ms(p), 3000);
    assert_int_equal(sse_feed(p, "retry\n", 6), 0);
    assert_int_equal(sse_retry_ms(p), 3000);
    assert_int_equal(sse_feed(p, "retry:0\n", 8), 0);
    assert_int_equal(sse_retry_ms(p), 0);
    assert_int_equal(sse_feed(p, "retry: 99999999999999999999999\n", 31), 0);
    assert_true(sse_retry_ms(p) == INT64_MAX);
    /* Every one of those is a retry field, valid or not. */
    assert_int_equal(sse_lines_recognised(p), 8);
    assert_int_equal(r.n, 0);
    sse_free(p);
}

/* Unknown fields are ignored and not counted as SSE. */
static void
test_unknown_fields(void **state)
{
    struct rec  r = { 0 };
    struct sse *p = parse_all(&r,
        "foo: bar\nDATA: no\ndata : no\n data: no\ndata: yes\n\n");

    (void)state;
    assert_int_equal(r.n, 1);
    rec_expect(&r, 0, "message", "yes", "");
    assert_int_equal(sse_lines_recognised(p), 1);
    sse_free(p);
    rec_clear(&r);
}

/* A JSON body sent as text/event-stream holds no SSE line. */
static void
test_raw_json_is_not_sse(void **state)
{
    static const char *bodies[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[]}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[]}}\n",
        "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 1,\n"
        "  \"result\": {\"data\": \"x\"}\n}\n\n",
        "[{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":"
        "{\"code\":-32600,\"message\":\"bad\"}}]\r\n\r\n",
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
        struct rec  r = { 0 };
        struct sse *p = parse_all(&r, bodies[i]);

        assert_int_equal(sse_finish(p), 0);
        assert_int_equal(sse_lines_recognised(p), 0);
        assert_int_equal(sse_events(p), 0);
        assert_int_equal(r.n, 0);
        sse_free(p);
    }
}

/* A line longer than max_bytes fails at once, before its end arrives. */
static void
test_line_limit(void **state)
{
    struct rec  r = { 0 };
    struct sse *p = sse_new(16, rec_cb, &r);

    (void)state;
    /* Exactly 16 bytes is fine. */
    assert_int_equal(sse_feed(p, "data: 0123456789\n\n", 18), 0);
    assert_int_equal(r.n, 1);
    rec_expect(&r, 0, "message", "0123456789", "");
    /* 17 bytes without a line end: refused now, in two chunks. */
    assert_int_equal(sse_feed(p, ": 34567890", 10), 0);
    assert_int_equal(sse_feed(p, "abcdefg", 7), -1);
    assert_non_null(sse_error(p));
    assert_non_null(strstr(sse_error(p), "line"));
    /* Failed for good. */
    assert_int_equal(sse_feed(p, "\n", 1), -1);
    assert_int_equal(sse_feed(p, "data: x\n\n", 9), -1);
    assert_int_equal(sse_finish(p), -1);
    assert_int_equal(r.n, 1);
    sse_free(p);
    rec_clear(&r);
}

/* An event's data past max_bytes fails; exactly max_bytes is fine. */
static void
test_data_limit(void **state)
{
    struct rec  r = { 0 };
    struct sse *p = sse_new(9, rec_cb, &r);

    (void)state;
    /* "1234\n5678" is 9 bytes. */
    assert_int_equal(sse_feed(p, "data:1234\ndata:5678\n\n", 21), 0);
    assert_int_equal(r.n, 1);
    rec_expect(&r, 0, "message", "1234\n5678", "");
    /* The limit is per event: the same again is fine. */
    assert_int_equal(sse_feed(p, "data:1234\ndata:5678\n", 20), 0);
    /* One more byte of data is not. */
    assert_int_equal(sse_feed(p, "data\n", 5), -1);
    assert_non_null(strstr(sse_error(p), "data"));
    assert_int_equal(sse_feed(p, "\n", 1), -1);
    assert_int_equal(r.n, 1);
    sse_free(p);
    rec_clear(&r);
}

/* A callback returning non-zero stops the parser mid-chunk. */
static void
test_callback_stop(void **state)
{
    struct rec  r = { 0 };
    struct sse *p = sse_new(4096, rec_cb, &r);

    (void)state;
    r.stop_after = 1;
    assert_int_equal(sse_feed(p, "data: a\n\ndata: b\n\n", 18), -1);
    assert_int_equal(r.n, 1);
    rec_expect(&r, 0, "message", "a", "");
    assert_int_equal(sse_events(p), 1);
    assert_string_equal(sse_error(p), "stopped by callback");
    assert_int_equal(sse_feed(p, "data: c\n\n", 9), -1);
    assert_int_equal(sse_finish(p), -1);
    assert_int_equal(r.n, 1);
    sse_free(p);
    rec_clear(&r);
}

/* The end of the stream discards a partial event and a partial line. */
static void
test_finish_discards_partial(void **state)
{
    struct rec  r = { 0 };
    struct sse *p = parse_all(&r,
        "id: 1\ndata: a\n\n"
        "id: 2\nevent: late\ndata: b\n"
        "data: partial line");

    (void)state;
    assert_int_equal(r.n, 1);
    assert_int_equal(sse_finish(p), 0);
    assert_null(sse_error(p));
    assert_int_equal(r.n, 1);
    assert_int_equal(sse_events(p), 1);
    rec_expect(&r, 0, "message", "a", "1");
    /* The partial line never completed, so it was not counted. */
    assert_int_equal(sse_lines_recognised(p), 5);
    /* Last-Event-ID is that of the last event boundary actually read. */
    assert_string_equal(sse_last_id(p), "1");
    /* A finished stream takes no more bytes. */
    assert_int_equal(sse_feed(p, "\n\n", 2), -1);
    assert_non_null(sse_error(p));
    assert_int_equal(r.n, 1);
    sse_free(p);
    rec_clear(&r);
}

/* Without a callback events are still counted. */
static void
test_null_callback(void **state)
{
    struct sse *p = sse_new(4096, NULL, NULL);

    (void)state;
    assert_int_equal(sse_feed(p, "data: a\n\ndata: b\n\nid: 3\n\n", 25), 0);
    assert_int_equal(sse_events(p), 2);
    assert_string_equal(sse_last_id(p), "3");
    sse_free(p);
}

/* A stream exercising every rule; used by the chunking tests. */
static const char split_stream[] =
    "\xef\xbb\xbf"
    ": hello\r\n"
    "retry: 2500\r\n"
    "event: first\r\n"
    "id: 1\r\n"
    "data: one\r\n"
    "data:two\r\n"
    "\r\n"
    "data: cr\r\r"
    "id: 2\n"
    "event: e2\n"
    "data: {\"jsonrpc\":\"2.0\",\"id\":2}\n"
    "\n"
    "id: 3\r\n"
    "\r\n"
    "data\r"
    "data: x\r\n"
    "\n"
    "foo: bar\n"
    "data:  spaced\n"
    "\r"
    "event: tail\n"
    "data: unfinished\n";

/* Record what split_stream gives in one chunk, and check it by hand. */
static void
split_reference(struct rec *ref, uint64_t *recognised)
{
    struct sse *p = sse_new(4096, rec_cb, ref);

    assert_int_equal(sse_feed(p, split_stream, sizeof split_stream - 1), 0);
    assert_int_equal(sse_finish(p), 0);
    assert_int_equal(ref->n, 5);
    rec_expect(ref, 0, "first", "one\ntwo", "1");
    rec_expect(ref, 1, "message", "cr", "1");
    rec_expect(ref, 2, "e2", "{\"jsonrpc\":\"2.0\",\"id\":2}", "2");
    rec_expect(ref, 3, "message", "\nx", "3");
    rec_expect(ref, 4, "message", " spaced", "3");
    assert_string_equal(sse_last_id(p), "3");
    assert_int_equal(sse_retry_ms(p), 2500);
    *recognised = sse_lines_recognised(p);
    assert_int_equal(*recognised, 16);
    sse_free(p);
}

/* Feed split_stream cut at the given offsets (sorted, <= len) into r. */
static void
split_feed(struct rec *r, const size_t *cuts, size_t ncuts,
    uint64_t recognised)
{
    struct sse *p = sse_new(4096, rec_cb, r);
    size_t      len = sizeof split_stream - 1;
    size_t      from = 0;
    size_t      i;

    for (i = 0; i <= ncuts; i++) {
        size_t to = i < ncuts ? cuts[i] : len;

        assert_int_equal(sse_feed(p, split_stream + from, to - from), 0);
        from = to;
    }
    assert_int_equal(sse_finish(p), 0);
    assert_string_equal(sse_last_id(p), "3");
    assert_int_equal(sse_retry_ms(p), 2500);
    assert_int_equal(sse_lines_recognised(p), recognised);
    assert_int_equal(sse_events(p), 5);
    sse_free(p);
}

/* Cutting the stream at any one or two places changes nothing. */
static void
test_split_every_boundary(void **state)
{
    struct rec ref = { 0 };
    uint64_t   recognised;
    size_t     len = sizeof split_stream - 1;
    size_t     cuts[2];

    (void)state;
    split_reference(&ref, &recognised);
    for (cuts[0] = 0; cuts[0] <= len; cuts[0]++) {
        struct rec r = { 0 };

        split_feed(&r, cuts, 1, recognised);
        rec_same(&ref, &r);
        rec_clear(&r);
    }
    for (cuts[0] = 0; cuts[0] <= len; cuts[0]++) {
        for (cuts[1] = cuts[0]; cuts[1] <= len; cuts[1]++) {
            struct rec r = { 0 };

            split_feed(&r, cuts, 2, recognised);
            rec_same(&ref, &r);
            rec_clear(&r);
        }
    }
    rec_clear(&ref);
}

/* Feeding one byte at a time changes nothing. */
static void
test_one_byte_at_a_time(void **state)
{
    struct rec ref = { 0 };
    struct rec r = { 0 };
    uint64_t   recognised;
    size_t     len = sizeof split_stream - 1;
    size_t    *cuts = xcalloc(len, sizeof *cuts);
    size_t     i;

    (void)state;
    split_reference(&ref, &recognised);
    for (i = 0; i < len; i++)
        cuts[i] = i + 1;
    split_feed(&r, cuts, len, recognised);
    rec_same(&ref, &r);
    free(cuts);
    rec_clear(&r);
    rec_clear(&ref);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_initial_state),
        cmocka_unit_test(test_simple_event),
        cmocka_unit_test(test_needs_blank_line),
        cmocka_unit_test(test_data_join),
        cmocka_unit_test(test_line_ends),
        cmocka_unit_test(test_crlf_across_chunks),
        cmocka_unit_test(test_bom),
        cmocka_unit_test(test_partial_bom_kept),
        cmocka_unit_test(test_comments),
        cmocka_unit_test(test_leading_space),
        cmocka_unit_test(test_field_without_colon),
        cmocka_unit_test(test_event_type),
        cmocka_unit_test(test_id),
        cmocka_unit_test(test_id_with_nul),
        cmocka_unit_test(test_event_type_with_nul),
        cmocka_unit_test(test_data_with_nul),
        cmocka_unit_test(test_empty_data_not_dispatched),
        cmocka_unit_test(test_retry),
        cmocka_unit_test(test_unknown_fields),
        cmocka_unit_test(test_raw_json_is_not_sse),
        cmocka_unit_test(test_line_limit),
        cmocka_unit_test(test_data_limit),
        cmocka_unit_test(test_callback_stop),
        cmocka_unit_test(test_finish_discards_partial),
        cmocka_unit_test(test_null_callback),
        cmocka_unit_test(test_split_every_boundary),
        cmocka_unit_test(test_one_byte_at_a_time),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
