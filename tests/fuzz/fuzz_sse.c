/*
 * The text/event-stream parser (src/engine/sse.c) over arbitrary bytes.
 *
 * The input is one stream. It is parsed four times: in one chunk, in
 * chunks of sizes drawn from a generator seeded by the input's hash, one
 * byte at a time, and in random chunks with a callback that stops after
 * some event. Checked:
 *  - no event hands up data longer than max_bytes, data is NUL-terminated
 *    at data_len, type and id hold no line end, id no NUL, and neither is
 *    longer than max_bytes (a line is bounded by it);
 *  - the events (type, data, id), the last id, the retry value, the count
 *    of recognised lines and the failure are the same whatever the chunks;
 *  - a stopping callback ends the feed with -1 after exactly that event,
 *    and the events before it are the same ones;
 *  - once failed, the parser refuses more input and keeps its reason.
 * max_bytes is drawn from the same generator, from 1 byte to 1 MiB.
 * Without a limit (1 GiB), the events, last id, retry and recognised-line
 * count must be those of a model of the WHATWG rules written here.
 */
#include <stdbool.h>
#include <string.h>

#include "engine/sse.h"
#include "fuzz.h"

/* What one run saw, reduced to a digest. */
struct run {
    size_t   max_bytes;
    uint64_t digest;
    uint64_t events;
    uint64_t stop_after;     /* 0: never stop */
    uint64_t capture_at;     /* keep the digest after this many events */
    uint64_t captured;
};

/* sse_event_cb: check the event's shape and fold it into the digest. */
static int
fuzz_sse_cb(void *arg, const struct sse_event *event)
{
    struct run *r = arg;
    size_t      tlen;
    size_t      ilen;

    FUZZ_CHECK(event->type != NULL && event->data != NULL && event->id != NULL,
        "an event field is NULL");
    FUZZ_CHECK(event->data_len <= r->max_bytes,
        "event data of %zu bytes, limit %zu", event->data_len, r->max_bytes);
    FUZZ_CHECK(event->data[event->data_len] == '\0', "data not NUL-terminated");
    FUZZ_CHECK(memchr(event->data, '\r', event->data_len) == NULL,
        "a CR in event data");
    tlen = strlen(event->type);
    ilen = strlen(event->id);
    FUZZ_CHECK(tlen > 0, "empty event type handed up");
    FUZZ_CHECK(tlen <= r->max_bytes && ilen <= r->max_bytes,
        "type (%zu) or id (%zu) past the limit %zu", tlen, ilen,
        r->max_bytes);
    FUZZ_CHECK(strpbrk(event->type, "\r\n") == NULL, "line end in type");
    FUZZ_CHECK(strpbrk(event->id, "\r\n") == NULL, "line end in id");
    r->events++;
    r->digest = fuzz_hash_field(r->digest, event->type, tlen);
    r->digest = fuzz_hash_field(r->digest, event->data, event->data_len);
    r->digest = fuzz_hash_field(r->digest, event->id, ilen);
    if (r->events == r->capture_at)
        r->captured = r->digest;
    if (r->stop_after > 0 && r->events == r->stop_after)
        return 1;
    return 0;
}

/* Everything a run leaves behind, for comparing runs. */
struct outcome {
    uint64_t digest;
    uint64_t captured;       /* the digest after capture_at events */
    uint64_t events;
    uint64_t recognised;
    int64_t  retry_ms;
    uint64_t last_id;
    bool     failed;
    char     error[128];
};

/*
 * Parse data in chunks: chunk 0 means all at once, 1 one byte at a time,
 * otherwise sizes from gen (1..chunk). Fills *o.
 */
static void
fuzz_sse_run(const uint8_t *data, size_t size, size_t max_bytes,
    size_t chunk, uint64_t gen, uint64_t stop_after, uint64_t capture_at,
    struct outcome *o)
{
    struct run  r = { max_bytes, FUZZ_HASH_INIT, 0, stop_after, capture_at,
        0 };
    struct sse *p = sse_new(max_bytes, fuzz_sse_cb, &r);
    size_t      off = 0;
    int         rc = 0;
    const char *err;

    while (off < size) {
        size_t n = chunk == 0 ? size - off
            : chunk == 1 ? 1 : fuzz_range(&gen, 1, chunk);

        if (n > size - off)
            n = size - off;
        rc = sse_feed(p, (const char *)data + off, n);
        off += n;
        if (rc != 0)
            break;
    }
    if (rc == 0)
        rc = sse_finish(p);
    err = sse_error(p);
    FUZZ_CHECK((rc != 0) == (err != NULL), "rc %d but error %s", rc,
        err != NULL ? err : "(none)");
    if (rc != 0) {
        /* Failed for good: more input is refused, the reason stays. */
        FUZZ_CHECK(sse_feed(p, "data: x\n\n", 9) == -1,
            "a failed parser took more input");
        FUZZ_CHECK(sse_error(p) != NULL && strcmp(sse_error(p), err) == 0,
            "the failure reason changed");
    }
    FUZZ_CHECK(sse_events(p) == r.events, "sse_events %llu, callback %llu",
        (unsigned long long)sse_events(p), (unsigned long long)r.events);
    FUZZ_CHECK(sse_retry_ms(p) >= -1, "retry %lld",
        (long long)sse_retry_ms(p));
    FUZZ_CHECK(strlen(sse_last_id(p)) <= max_bytes, "last id too long");
    FUZZ_CHECK(strpbrk(sse_last_id(p), "\r\n") == NULL, "line end in id");

    memset(o, 0, sizeof *o);
    o->digest = r.digest;
    o->captured = r.captured;
    o->events = r.events;
    o->recognised = sse_lines_recognised(p);
    o->retry_ms = sse_retry_ms(p);
    o->last_id = fuzz_hash_field(FUZZ_HASH_INIT, sse_last_id(p),
        strlen(sse_last_id(p)));
    o->failed = rc != 0;
    if (err != NULL)
        snprintf(o->error, sizeof o->error, "%s", err);
    sse_free(p);
}

/* Fold one event into a digest the way fuzz_sse_cb does. */
static uint64_t
fuzz_sse_fold(uint64_t h, const char *type, size_t tlen, const char *data,
    size_t dlen, const char *id, size_t ilen)
{
    h = fuzz_hash_field(h, type, tlen);
    h = fuzz_hash_field(h, data, dlen);
    return fuzz_hash_field(h, id, ilen);
}

/*
 * The WHATWG interpretation of a whole stream, written apart from sse.c
 * and without limits: one leading BOM dropped; lines end at CRLF, LF or
 * CR; an unterminated last line and an undispatched event are dropped; a
 * blank line sets the last event id from its buffer, then dispatches when
 * the data buffer is not empty (less its final LF; type "message" when
 * none); ':' starts a comment; the value starts after the first ':' and
 * one space; data appends value and LF, event sets the type, id sets the
 * id buffer unless the value holds NUL, retry takes only ASCII digits.
 * And mcptop's rule: an event whose type holds NUL is not handed up.
 */
static void
fuzz_sse_model(const uint8_t *d, size_t n, struct outcome *o)
{
    char   *data = malloc(n + 1);
    char   *type = malloc(n + 1);
    char   *idb = malloc(n + 1);
    char   *lid = malloc(n + 1);
    size_t  dlen = 0, tlen = 0, ilen = 0, llen = 0;
    size_t  i = 0;

    memset(o, 0, sizeof *o);
    o->digest = FUZZ_HASH_INIT;
    o->retry_ms = -1;
    if (n >= 3 && memcmp(d, "\xef\xbb\xbf", 3) == 0)
        i = 3;
    while (i < n) {
        const char *line = (const char *)d + i;
        const char *value;
        size_t      j = i;
        size_t      len, flen, vlen;

        while (j < n && d[j] != '\r' && d[j] != '\n')
            j++;
        if (j == n)
            break;                      /* no line end: dropped */
        len = j - i;
        i = j + 1;
        if (d[j] == '\r' && i < n && d[i] == '\n')
            i++;
        if (len == 0) {
            memcpy(lid, idb, ilen);
            llen = ilen;
            if (dlen > 0 && memchr(type, '\0', tlen) == NULL) {
                o->events++;
                o->digest = tlen > 0
                    ? fuzz_sse_fold(o->digest, type, tlen, data, dlen - 1,
                        lid, llen)
                    : fuzz_sse_fold(o->digest, "message", 7, data, dlen - 1,
                        lid, llen);
            }
            dlen = 0;
            tlen = 0;
            continue;
        }
        if (line[0] == ':') {
            o->recognised++;
            continue;
        }
        value = memchr(line, ':', len);
        flen = value != NULL ? (size_t)(value - line) : len;
        value = value != NULL ? value + 1 : line + len;
        vlen = len - (size_t)(value - line);
        if (vlen > 0 && value[0] == ' ') {
            value++;
            vlen--;
        }
        if (flen == 4 && memcmp(line, "data", 4) == 0) {
            memcpy(data + dlen, value, vlen);
            dlen += vlen;
            data[dlen++] = '\n';
        } else if (flen == 5 && memcmp(line, "event", 5) == 0) {
            memcpy(type, value, vlen);
            tlen = vlen;
        } else if (flen == 2 && memcmp(line, "id", 2) == 0) {
            if (memchr(value, '\0', vlen) == NULL) {
                memcpy(idb, value, vlen);
                ilen = vlen;
            }
        } else if (flen == 5 && memcmp(line, "retry", 5) == 0) {
            int64_t ms = 0;
            size_t  k;

            for (k = 0; k < vlen && value[k] >= '0' && value[k] <= '9'; k++) {
                if (__builtin_mul_overflow(ms, 10, &ms)
                    || __builtin_add_overflow(ms, value[k] - '0', &ms))
                    ms = INT64_MAX;
            }
            if (vlen > 0 && k == vlen)
                o->retry_ms = ms;
        } else {
            continue;
        }
        o->recognised++;
    }
    o->last_id = fuzz_hash_field(FUZZ_HASH_INIT, lid, llen);
    free(data);
    free(type);
    free(idb);
    free(lid);
}

/* The limits tried: tiny ones reach the bounds, the last is realistic. */
static const size_t fuzz_sse_limits[] = {
    1, 2, 7, 16, 64, 256, 4096, 1u << 20
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t       gen = fuzz_hash(FUZZ_HASH_INIT, data, size);
    size_t         max_bytes = fuzz_sse_limits[fuzz_next(&gen)
        % (sizeof fuzz_sse_limits / sizeof fuzz_sse_limits[0])];
    uint64_t       stop_after = fuzz_range(&gen, 1, 8);
    struct outcome whole, chunks, bytes, stopped, unlimited, model;

    fuzz_sse_run(data, size, max_bytes, 0, 0, 0, stop_after, &whole);
    fuzz_sse_run(data, size, max_bytes, fuzz_range(&gen, 2, 64),
        fuzz_next(&gen), 0, 0, &chunks);
    fuzz_sse_run(data, size, max_bytes, 1, 0, 0, 0, &bytes);

    FUZZ_CHECK(whole.digest == chunks.digest && whole.digest == bytes.digest
        && whole.events == chunks.events && whole.events == bytes.events,
        "events depend on the chunks (%llu/%llu/%llu)",
        (unsigned long long)whole.events, (unsigned long long)chunks.events,
        (unsigned long long)bytes.events);
    FUZZ_CHECK(whole.recognised == chunks.recognised
        && whole.recognised == bytes.recognised,
        "recognised lines depend on the chunks");
    FUZZ_CHECK(whole.retry_ms == chunks.retry_ms
        && whole.retry_ms == bytes.retry_ms, "retry depends on the chunks");
    FUZZ_CHECK(whole.last_id == chunks.last_id
        && whole.last_id == bytes.last_id, "last id depends on the chunks");
    FUZZ_CHECK(whole.failed == chunks.failed && whole.failed == bytes.failed
        && strcmp(whole.error, chunks.error) == 0
        && strcmp(whole.error, bytes.error) == 0,
        "failure depends on the chunks: \"%s\" / \"%s\" / \"%s\"",
        whole.error, chunks.error, bytes.error);

    /* Without a limit in the way, the parser is the model. */
    fuzz_sse_run(data, size, (size_t)1 << 30, fuzz_range(&gen, 2, 64),
        fuzz_next(&gen), 0, 0, &unlimited);
    fuzz_sse_model(data, size, &model);
    FUZZ_CHECK(!unlimited.failed, "failed without a limit: %s",
        unlimited.error);
    FUZZ_CHECK(unlimited.events == model.events
        && unlimited.digest == model.digest,
        "events differ from the WHATWG model (%llu, model %llu)",
        (unsigned long long)unlimited.events,
        (unsigned long long)model.events);
    FUZZ_CHECK(unlimited.last_id == model.last_id,
        "last id differs from the model");
    FUZZ_CHECK(unlimited.retry_ms == model.retry_ms,
        "retry %lld, model %lld", (long long)unlimited.retry_ms,
        (long long)model.retry_ms);
    FUZZ_CHECK(unlimited.recognised == model.recognised,
        "%llu lines recognised, model %llu",
        (unsigned long long)unlimited.recognised,
        (unsigned long long)model.recognised);

    if (whole.events >= stop_after) {
        fuzz_sse_run(data, size, max_bytes, fuzz_range(&gen, 2, 64),
            fuzz_next(&gen), stop_after, 0, &stopped);
        FUZZ_CHECK(stopped.failed && stopped.events == stop_after
            && stopped.digest == whole.captured
            && strcmp(stopped.error, "stopped by callback") == 0,
            "stop after %llu: %llu events, \"%s\"",
            (unsigned long long)stop_after,
            (unsigned long long)stopped.events, stopped.error);
    }
    return 0;
}
