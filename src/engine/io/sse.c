/*
 * An incremental text/event-stream parser following the WHATWG "server-sent
 * events" interpretation rules. It models one stream: bytes come in chunks
 * of any size, a line is gathered until CR, LF or CRLF (the CR/LF pair may
 * straddle two chunks), and each complete line either dispatches the pending
 * event (blank line), is a comment, or sets a field. It keeps the spec's
 * buffers: data, event type, last event ID buffer, and the last event ID
 * string that the buffer is copied into at each blank line, which is what a
 * reconnection resends. Bytes are passed through as they are; decoding and
 * sanitizing for display are the caller's business.
 *
 * It must never read a clock and never hold more than max_bytes in a line
 * or in one event's data: past that the parser fails and refuses input.
 */
#include "engine/sse.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xmalloc.h"

/* A growable byte buffer, NUL-terminated whenever p is not NULL. */
struct sse_buf {
    char  *p;
    size_t len;
    size_t cap;
};

struct sse {
    size_t         max_bytes;
    sse_event_cb   cb;
    void          *arg;

    struct sse_buf line;        /* the line being gathered */
    struct sse_buf data;        /* data buffer, each line + '\n' */
    struct sse_buf type;        /* event type buffer */
    struct sse_buf id_buf;      /* last event ID buffer */
    struct sse_buf id;          /* last event ID string (as dispatched) */

    size_t         bom_matched; /* BOM bytes seen at the stream start */
    bool           started;     /* past the place a BOM may sit */
    bool           after_cr;    /* the last line ended in CR */
    bool           failed;
    bool           finished;
    char           err[96];

    int64_t        retry_ms;
    uint64_t       recognised;
    uint64_t       events;
};

static const unsigned char sse_bom[3] = { 0xef, 0xbb, 0xbf };

/* Make room for need bytes plus a NUL in b. */
static void
sse_buf_reserve(struct sse_buf *b, size_t need)
{
    size_t cap;

    if (b->p != NULL && need < b->cap)
        return;
    cap = b->cap ? b->cap : 64;
    while (cap <= need)
        cap = cap > SIZE_MAX / 2 ? need + 1 : cap * 2;
    b->p = xrealloc(b->p, cap);
    b->cap = cap;
}

/* Append n bytes to b. The caller has checked the bound. */
static void
sse_buf_append(struct sse_buf *b, const char *s, size_t n)
{
    sse_buf_reserve(b, b->len + n);
    if (n > 0)
        memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

/* Replace the contents of b with n bytes of s. */
static void
sse_buf_set(struct sse_buf *b, const char *s, size_t n)
{
    b->len = 0;
    sse_buf_append(b, s, n);
}

/* Contents of b as a C string ("" when never set). */
static const char *
sse_buf_str(const struct sse_buf *b)
{
    return b->p != NULL ? b->p : "";
}

/* Put the parser in the failed state with a formatted reason; returns -1. */
static int __attribute__((format(printf, 2, 3)))
sse_fail(struct sse *p, const char *fmt, ...)
{
    va_list ap;

    p->failed = true;
    va_start(ap, fmt);
    vsnprintf(p->err, sizeof p->err, fmt, ap);
    va_end(ap);
    return -1;
}

/* Dispatch the pending event (a blank line was read). */
static int
sse_dispatch(struct sse *p)
{
    struct sse_event event;
    int              rc = 0;

    sse_buf_set(&p->id, sse_buf_str(&p->id_buf), p->id_buf.len);
    if (p->data.len == 0) {
        /* No data line: nothing to dispatch, but the id above stands. */
        p->type.len = 0;
        return 0;
    }
    if (p->data.p[p->data.len - 1] == '\n')
        p->data.p[--p->data.len] = '\0';
    if (p->type.len > 0 && memchr(p->type.p, '\0', p->type.len) != NULL) {
        /* A type holding NUL names no listener a C string can name: as a
         * string it would read as "" or as its head ("message\0x" as
         * "message"). Nobody listens for it, so nobody gets it. */
        p->data.len = 0;
        p->data.p[0] = '\0';
        p->type.len = 0;
        p->type.p[0] = '\0';
        return 0;
    }
    event.type = p->type.len > 0 ? p->type.p : "message";
    event.data = p->data.p;
    event.data_len = p->data.len;
    event.id = sse_buf_str(&p->id);
    p->events++;
    if (p->cb != NULL)
        rc = p->cb(p->arg, &event);
    p->data.len = 0;
    p->data.p[0] = '\0';
    p->type.len = 0;
    if (p->type.p != NULL)
        p->type.p[0] = '\0';
    if (rc != 0)
        return sse_fail(p, "stopped by callback");
    return 0;
}

/* True when field (n bytes) is the name lit. */
static bool
sse_field_is(const char *field, size_t n, const char *lit)
{
    return n == strlen(lit) && memcmp(field, lit, n) == 0;
}

/* Apply a "retry" value: only ASCII digits count; huge values saturate. */
static void
sse_set_retry(struct sse *p, const char *v, size_t n)
{
    int64_t ms = 0;
    size_t  i;

    if (n == 0)
        return;
    for (i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9')
            return;
    }
    for (i = 0; i < n; i++) {
        int d = v[i] - '0';

        if (ms > (INT64_MAX - d) / 10) {
            ms = INT64_MAX;
            break;
        }
        ms = ms * 10 + d;
    }
    p->retry_ms = ms;
}

/* Interpret one complete line (without its line end). */
static int
sse_line(struct sse *p, const char *line, size_t len)
{
    const char *colon;
    const char *value;
    size_t      flen;
    size_t      vlen;

    if (len == 0)
        return sse_dispatch(p);
    if (line[0] == ':') {
        p->recognised++;
        return 0;
    }
    colon = memchr(line, ':', len);
    if (colon != NULL) {
        flen = (size_t)(colon - line);
        value = colon + 1;
        vlen = len - flen - 1;
        if (vlen > 0 && value[0] == ' ') {
            value++;
            vlen--;
        }
    } else {
        flen = len;
        value = line + len;
        vlen = 0;
    }

    if (sse_field_is(line, flen, "data")) {
        /* The dispatched data is the buffer less its final '\n'. */
        if (vlen > p->max_bytes || p->data.len > p->max_bytes - vlen)
            return sse_fail(p, "event data longer than %zu bytes",
                p->max_bytes);
        sse_buf_append(&p->data, value, vlen);
        sse_buf_append(&p->data, "\n", 1);
    } else if (sse_field_is(line, flen, "event")) {
        sse_buf_set(&p->type, value, vlen);
    } else if (sse_field_is(line, flen, "id")) {
        if (memchr(value, '\0', vlen) == NULL)
            sse_buf_set(&p->id_buf, value, vlen);
    } else if (sse_field_is(line, flen, "retry")) {
        sse_set_retry(p, value, vlen);
    } else {
        return 0;                       /* unknown field: ignored */
    }
    p->recognised++;
    return 0;
}

/* Split bytes (BOM already handled) into lines and interpret them. */
static int
sse_feed_bytes(struct sse *p, const char *buf, size_t len)
{
    size_t i = 0;

    while (i < len) {
        size_t j;

        if (p->after_cr) {
            p->after_cr = false;
            if (buf[i] == '\n') {
                i++;                    /* the LF of a CRLF */
                continue;
            }
        }
        j = i;
        while (j < len && buf[j] != '\r' && buf[j] != '\n')
            j++;
        if (j - i > p->max_bytes - p->line.len)
            return sse_fail(p, "line longer than %zu bytes", p->max_bytes);
        sse_buf_append(&p->line, buf + i, j - i);
        if (j == len)
            break;
        p->after_cr = buf[j] == '\r';
        i = j + 1;
        if (sse_line(p, p->line.p, p->line.len) != 0)
            return -1;
        p->line.len = 0;
        p->line.p[0] = '\0';
    }
    return 0;
}

/* New parser; see sse.h. */
struct sse *
sse_new(size_t max_bytes, sse_event_cb cb, void *arg)
{
    struct sse *p = xcalloc(1, sizeof *p);

    p->max_bytes = max_bytes;
    p->cb = cb;
    p->arg = arg;
    p->retry_ms = -1;
    return p;
}

/* Free the parser and its buffers. */
void
sse_free(struct sse *p)
{
    if (p == NULL)
        return;
    free(p->line.p);
    free(p->data.p);
    free(p->type.p);
    free(p->id_buf.p);
    free(p->id.p);
    free(p);
}

/* Feed a chunk, first skipping one BOM at the very start of the stream. */
int
sse_feed(struct sse *p, const char *buf, size_t len)
{
    if (p->failed)
        return -1;
    if (p->finished)
        return sse_fail(p, "fed after the stream ended");
    while (!p->started && len > 0) {
        if ((unsigned char)buf[0] == sse_bom[p->bom_matched]) {
            buf++;
            len--;
            p->bom_matched++;
            if (p->bom_matched == sizeof sse_bom)
                p->started = true;
            continue;
        }
        /* Not a BOM after all: the bytes matched so far are content. */
        p->started = true;
        if (sse_feed_bytes(p, (const char *)sse_bom, p->bom_matched) != 0)
            return -1;
    }
    return sse_feed_bytes(p, buf, len);
}

/* End of stream: drop the partial line and the undispatched event. */
int
sse_finish(struct sse *p)
{
    if (p->failed)
        return -1;
    p->finished = true;
    p->line.len = 0;
    p->data.len = 0;
    p->type.len = 0;
    return 0;
}

/* Reason for the last failure, or NULL. */
const char *
sse_error(const struct sse *p)
{
    return p->failed ? p->err : NULL;
}

/* The last event ID string, as set at the last blank line. */
const char *
sse_last_id(const struct sse *p)
{
    return sse_buf_str(&p->id);
}

/* Last valid retry, or -1. */
int64_t
sse_retry_ms(const struct sse *p)
{
    return p->retry_ms;
}

/* Count of complete comment or known-field lines. */
uint64_t
sse_lines_recognised(const struct sse *p)
{
    return p->recognised;
}

/* Count of dispatched events. */
uint64_t
sse_events(const struct sse *p)
{
    return p->events;
}
