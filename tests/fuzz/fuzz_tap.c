/*
 * The tap's ledger (src/tap/tap_ledger.c) over arbitrary lines, as
 * a hostile agent and server would write them: the input is split at its
 * newlines into lines, each given to one side (drawn from the input's
 * hash), with an operator's cancel, a close and the tap's own request
 * mixed in.
 *
 * Checked:
 *  - the count of requests in flight agrees with a walk of the list, both
 *    ways, oldest first (start times never decrease);
 *  - every request the host was told of ended exactly once (started ==
 *    ended + in flight), and each ended one had a kind when it failed;
 *  - a request's strings are NUL-terminated and bounded (method and tool
 *    at most TAP_METHOD_MAX, id at most TAP_ID_MAX);
 *  - after the close nothing is in flight.
 */
#include <stdbool.h>
#include <string.h>

#include "tap_ledger.h"
#include "fuzz.h"

struct fuzz_tap {
    unsigned long started, ended;
};

static void
fuzz_tap_check(const struct tap_request *r)
{
    FUZZ_CHECK(r->id != NULL && strlen(r->id) <= TAP_ID_MAX, "id bounded");
    FUZZ_CHECK(r->method != NULL && strlen(r->method) <= TAP_METHOD_MAX,
        "method bounded");
    FUZZ_CHECK(r->tool == NULL || strlen(r->tool) <= TAP_METHOD_MAX,
        "tool bounded");
    FUZZ_CHECK(r->message == NULL || strlen(r->message) <= 200,
        "message bounded");
}

static void
fuzz_tap_started(void *arg, const struct tap_request *r)
{
    ((struct fuzz_tap *)arg)->started++;
    fuzz_tap_check(r);
}

static void
fuzz_tap_progress(void *arg, const struct tap_request *r)
{
    (void)arg;
    fuzz_tap_check(r);
}

static void
fuzz_tap_ended(void *arg, const struct tap_request *r, enum tap_end how,
    const struct failure *f, double ms)
{
    ((struct fuzz_tap *)arg)->ended++;
    fuzz_tap_check(r);
    FUZZ_CHECK((how == TAP_END_FAILED) == (f != NULL), "a failure iff "
        "failed");
    FUZZ_CHECK(f == NULL || (f->kind == FAILURE_PROTOCOL ||
        f->kind == FAILURE_CONNECTION_CLOSED), "kind %d", f->kind);
    FUZZ_CHECK(ms >= 0, "elapsed %f", ms);
}

static const struct tap_ledger_host fuzz_tap_host = {
    .started = fuzz_tap_started,
    .progress = fuzz_tap_progress,
    .ended = fuzz_tap_ended,
};

static void
fuzz_tap_walk(const struct tap_ledger *l)
{
    size_t                    n = 0;
    double                    last = 0;
    const struct tap_request *r, *prev = NULL;

    for (r = tap_ledger_oldest(l); r != NULL; r = r->newer) {
        FUZZ_CHECK(r->older == prev, "the list links both ways");
        FUZZ_CHECK(r->started >= last, "oldest first");
        last = r->started;
        prev = r;
        n++;
    }
    FUZZ_CHECK(n == tap_ledger_count(l), "count %zu, walked %zu",
        tap_ledger_count(l), n);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_tap    seen = { 0 };
    struct tap_ledger *l = tap_ledger_new(&fuzz_tap_host, &seen, 64);
    uint64_t           h = fuzz_hash(FUZZ_HASH_INIT, data, size);
    const char        *p = (const char *)data, *end = p + size;
    double             now = 1.0;

    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t      len = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);

        h = h * 6364136223846793005ULL + 1442695040888963407ULL;
        now += (double)(h >> 60) / 8.0;
        tap_ledger_line(l, (h >> 33) & 1 ? TAP_SIDE_SERVER : TAP_SIDE_AGENT,
            p, len, now, (int64_t)(now * 1000));
        if ((h >> 40) % 13 == 0 && tap_ledger_oldest(l) != NULL)
            tap_ledger_cancel(l, (struct tap_request *)tap_ledger_oldest(l),
                now);
        if ((h >> 44) % 17 == 0 && !tap_ledger_hold(l))
            tap_ledger_own(l, "\"fuzz-own\"", "ping", now, 0);
        fuzz_tap_walk(l);
        FUZZ_CHECK(seen.started == seen.ended + tap_ledger_count(l),
            "started %lu, ended %lu, in flight %zu", seen.started,
            seen.ended, tap_ledger_count(l));
        p += len + (nl != NULL ? 1 : 0);
    }
    tap_ledger_close(l, "fuzz: closed", now + 1);
    FUZZ_CHECK(tap_ledger_count(l) == 0, "nothing in flight after close");
    FUZZ_CHECK(seen.started == seen.ended, "every request ended once");
    tap_ledger_free(l);
    return 0;
}
