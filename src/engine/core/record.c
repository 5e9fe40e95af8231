/*
 * The record: history ring, streaks, last failure, and the liveness record
 * minted only through liveness_of (DESIGN.md section 4). It reads no clock:
 * the caller stamps each exchange.
 */
#include "engine/record.h"

#include <stdlib.h>
#include <string.h>

#include "util/xmalloc.h"

void
record_init(struct record *r)
{
    memset(r, 0, sizeof(*r));
}

void
record_done(struct record *r)
{
    free(r->history);
    r->history = NULL;
    r->hist_len = 0;
    r->hist_start = 0;
    r->hist_cap = 0;
}

bool
record_exchange(struct record *r, const char *op, const struct failure *f,
    double ms, int64_t now_ms)
{
    struct outcome          o = f == NULL ? outcome_completed() :
        outcome_failed(f->kind);
    struct liveness         l = liveness_of(o, now_ms);
    struct mcp_exchange *h;
    bool                    changed;

    /* Most servers of a short run never fill a hundred: the ring grows
     * while it has not wrapped (hist_start is 0 until it is full). */
    if (r->hist_len == r->hist_cap && r->hist_cap < MCP_HISTORY) {
        size_t cap = r->hist_cap == 0 ? 16 : r->hist_cap * 2;

        if (cap > MCP_HISTORY)
            cap = MCP_HISTORY;
        r->history = xrealloc(r->history, cap * sizeof(*r->history));
        r->hist_cap = cap;
    }
    if (r->hist_len < r->hist_cap) {
        h = &r->history[r->hist_len];
        r->hist_len++;
    } else {
        h = &r->history[r->hist_start];
        r->hist_start = (r->hist_start + 1) % r->hist_cap;
    }
    h->ts = l.present ? l.observed_at : now_ms;
    h->op = op;
    h->completed = f == NULL;
    h->kind = (uint8_t)(f != NULL ? f->kind : FAILURE_UNKNOWN);
    h->delivered = (uint8_t)(f != NULL ? f->delivered : DELIVERED_YES);
    h->http_status = (uint16_t)(f != NULL && f->http_status > 0 &&
        f->http_status < 1000 ? f->http_status : 0);
    h->ms = (float)ms;
    h->ending = strcmp(op, "delete") == 0;
    r->exchanges++;

    if (f != NULL) {
        r->last_failure = *f;
        r->has_failure = true;
        r->last_failure_op = op;
        r->fail_streak++;
    } else {
        r->fail_streak = 0;
    }
    if (!l.present)
        return false;
    changed = !r->liveness.present || r->liveness.state != l.state ||
        r->liveness.has_error_code != l.has_error_code ||
        (l.has_error_code && r->liveness.error_code != l.error_code);
    if (r->liveness.present && r->liveness.state == l.state)
        r->streak++;
    else
        r->streak = 1;
    r->liveness = l;
    return changed;
}

const struct mcp_exchange *
record_history(const struct record *r, size_t i)
{
    if (i >= r->hist_len)
        return NULL;
    return &r->history[(r->hist_start + i) % r->hist_cap];
}

uint64_t
record_seq(const struct record *r, size_t i)
{
    return r->exchanges - r->hist_len + i + 1;
}
