/*
 * The tap's in-flight ledger (tap_ledger.h): requests keyed by (direction,
 * id) and by (direction, progressToken) in two seeded hash tables, and
 * kept in one list by start, oldest first. Each line is parsed once with
 * cJSON; what is kept of it is copied and sanitized, and the tree is
 * freed before the line's callbacks return.
 *
 * What it must never do: trust the size of anything a peer sends (ids and
 * methods are bounded, the number followed is bounded), or look at a line
 * more than once.
 */
#include "tap_ledger.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/str.h"
#include "util/xmalloc.h"

#define TAP_LEDGER_DEFAULT_MAX   10000
#define TAP_LEDGER_CANCELLED_MAX 256
#define TAP_LEDGER_CANCELLED_S   60.0  /* a late answer is watched for so
                                           long after a cancel */

/* An operator-cancelled id whose late answer may still come. */
struct tap_cancelled {
    enum tap_dir dir;
    char        *id;
    double       at;
};

struct tap_ledger {
    const struct tap_ledger_host *host;
    void                         *arg;
    size_t                        max;
    size_t                        count;
    struct tap_request           *oldest, *newest;
    struct tap_request          **by_id, **by_tok;
    size_t                        nbuckets;     /* a power of two */
    uint64_t                      seed;
    struct tap_ledger_stats       stats;
    struct tap_cancelled          cancelled[TAP_LEDGER_CANCELLED_MAX];
    size_t                        ncancelled;
    size_t                        nown;         /* own requests in flight */
};

const char *
tap_dir_name(enum tap_dir d)
{
    return d == TAP_DIR_TO_AGENT ? "to_agent" : "to_server";
}

const char *
tap_end_name(enum tap_end e)
{
    switch (e) {
    case TAP_END_COMPLETED:
        return "completed";
    case TAP_END_FAILED:
        return "failed";
    case TAP_END_CANCELLED:
        return "cancelled";
    case TAP_END_OPERATOR:
        return "cancelled_by_operator";
    }
    return "?";
}

/* --- hashing ------------------------------------------------------------ */

static uint64_t
tap_ledger_hash(const struct tap_ledger *l, enum tap_dir dir, const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL ^ l->seed;

    h = (h ^ (uint64_t)dir) * 0x100000001b3ULL;
    for (; *s != '\0'; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    return h ^ (h >> 29);
}

static size_t
tap_ledger_slot(const struct tap_ledger *l, enum tap_dir dir, const char *s)
{
    return (size_t)tap_ledger_hash(l, dir, s) & (l->nbuckets - 1);
}

static void tap_ledger_index(struct tap_ledger *l, struct tap_request *r);

/* Double the tables when they hold more than one request a bucket,
 * indexing every request again; false when they had room. */
static bool
tap_ledger_grow(struct tap_ledger *l)
{
    struct tap_request *r;

    if (l->count <= l->nbuckets)
        return false;
    free(l->by_id);
    free(l->by_tok);
    l->nbuckets *= 2;
    l->by_id = xcalloc(l->nbuckets, sizeof(*l->by_id));
    l->by_tok = xcalloc(l->nbuckets, sizeof(*l->by_tok));
    for (r = l->oldest; r != NULL; r = r->newer)
        tap_ledger_index(l, r);
    return true;
}

static void
tap_ledger_index(struct tap_ledger *l, struct tap_request *r)
{
    size_t i = tap_ledger_slot(l, r->dir, r->id);

    r->hnext_id = l->by_id[i];
    l->by_id[i] = r;
    r->hnext_tok = NULL;
    if (r->token != NULL) {
        i = tap_ledger_slot(l, r->dir, r->token);
        r->hnext_tok = l->by_tok[i];
        l->by_tok[i] = r;
    }
}

static struct tap_request *
tap_ledger_by_id(const struct tap_ledger *l, enum tap_dir dir,
    const char *id)
{
    struct tap_request *r = l->by_id[tap_ledger_slot(l, dir, id)];

    while (r != NULL && (r->dir != dir || strcmp(r->id, id) != 0))
        r = r->hnext_id;
    return r;
}

static struct tap_request *
tap_ledger_by_token(const struct tap_ledger *l, enum tap_dir dir,
    const char *tok)
{
    struct tap_request *r = l->by_tok[tap_ledger_slot(l, dir, tok)];

    while (r != NULL && (r->dir != dir || strcmp(r->token, tok) != 0))
        r = r->hnext_tok;
    return r;
}

/* --- lifetime ----------------------------------------------------------- */

struct tap_ledger *
tap_ledger_new(const struct tap_ledger_host *host, void *arg, size_t max)
{
    struct tap_ledger *l = xcalloc(1, sizeof(*l));
    struct timespec    ts;

    l->host = host;
    l->arg = arg;
    l->max = max > 0 ? max : TAP_LEDGER_DEFAULT_MAX;
    l->nbuckets = 16;
    l->by_id = xcalloc(l->nbuckets, sizeof(*l->by_id));
    l->by_tok = xcalloc(l->nbuckets, sizeof(*l->by_tok));
    clock_gettime(CLOCK_MONOTONIC, &ts);
    l->seed = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^
        ((uint64_t)getpid() << 40);
    return l;
}

static void
tap_request_free(struct tap_request *r)
{
    free(r->id);
    free(r->method);
    free(r->tool);
    free(r->token);
    free(r->message);
    free(r);
}

void
tap_ledger_free(struct tap_ledger *l)
{
    struct tap_request *r, *next;

    if (l == NULL)
        return;
    for (r = l->oldest; r != NULL; r = next) {
        next = r->newer;
        tap_request_free(r);
    }
    for (size_t i = 0; i < l->ncancelled; i++)
        free(l->cancelled[i].id);
    free(l->by_id);
    free(l->by_tok);
    free(l);
}

/* Take r out of the tables and the list (not freed). */
static void
tap_ledger_unlink(struct tap_ledger *l, struct tap_request *r)
{
    struct tap_request **pp;

    for (pp = &l->by_id[tap_ledger_slot(l, r->dir, r->id)]; *pp != NULL;
        pp = &(*pp)->hnext_id) {
        if (*pp == r) {
            *pp = r->hnext_id;
            break;
        }
    }
    if (r->token != NULL) {
        for (pp = &l->by_tok[tap_ledger_slot(l, r->dir, r->token)];
            *pp != NULL; pp = &(*pp)->hnext_tok) {
            if (*pp == r) {
                *pp = r->hnext_tok;
                break;
            }
        }
    }
    if (r->older != NULL)
        r->older->newer = r->newer;
    else
        l->oldest = r->newer;
    if (r->newer != NULL)
        r->newer->older = r->older;
    else
        l->newest = r->older;
    l->count--;
}

/* r ends: counted, reported, freed. */
static void
tap_ledger_end(struct tap_ledger *l, struct tap_request *r, enum tap_end how,
    const struct failure *f, double now)
{
    double ms = (now - r->started) * 1000.0;

    tap_ledger_unlink(l, r);
    if (r->own)
        l->nown--;
    if (how == TAP_END_COMPLETED)
        l->stats.completed++;
    else if (how == TAP_END_FAILED)
        l->stats.failed++;
    else
        l->stats.cancelled++;
    if (l->host->ended != NULL)
        l->host->ended(l->arg, r, how, f, ms < 0 ? 0 : ms);
    tap_request_free(r);
}

/* --- reading a line ----------------------------------------------------- */

/* The JSON text of an id or token (a string or a number), or NULL for
 * anything else or one longer than TAP_ID_MAX. Caller frees. */
static char *
tap_ledger_key(const cJSON *v)
{
    char *t;

    if (v == NULL || !(cJSON_IsString(v) || cJSON_IsNumber(v)))
        return NULL;
    t = cJSON_PrintUnformatted(v);
    if (t != NULL && strlen(t) > TAP_ID_MAX) {
        free(t);
        return NULL;
    }
    return t;
}

/* A sanitized copy of a string member, cut at max bytes; NULL when it is
 * no string. */
static char *
tap_ledger_text(const cJSON *v, size_t max)
{
    char  *out;
    size_t n;

    if (!cJSON_IsString(v) || v->valuestring == NULL)
        return NULL;
    n = strlen(v->valuestring);
    out = xmalloc(max + 1);
    str_sanitize(out, max + 1, v->valuestring, n < max ? n : max);
    return out;
}

static bool
tap_ledger_cancelled_take(struct tap_ledger *l, enum tap_dir dir,
    const char *id, double now)
{
    bool   found = false;
    size_t j = 0;

    for (size_t i = 0; i < l->ncancelled; i++) {
        struct tap_cancelled *c = &l->cancelled[i];

        if (!found && c->dir == dir && strcmp(c->id, id) == 0) {
            found = true;
            free(c->id);
            continue;
        }
        if (now - c->at > TAP_LEDGER_CANCELLED_S) {
            free(c->id);
            continue;
        }
        l->cancelled[j++] = *c;
    }
    l->ncancelled = j;
    return found;
}

/* A request from side: into the ledger. */
static void
tap_ledger_request(struct tap_ledger *l, enum tap_side side, const cJSON *m,
    const char *method, char *id, size_t len, double now, int64_t wall)
{
    enum tap_dir        dir = side == TAP_SIDE_AGENT ? TAP_DIR_TO_SERVER :
        TAP_DIR_TO_AGENT;
    const cJSON        *params = cJSON_GetObjectItemCaseSensitive(m,
        "params");
    const cJSON        *meta = cJSON_GetObjectItemCaseSensitive(params,
        "_meta");
    struct tap_request *r;

    if (tap_ledger_by_id(l, dir, id) != NULL) {
        l->stats.duplicate_ids++;
        free(id);
        return;
    }
    if (l->count >= l->max) {
        l->stats.untracked++;
        free(id);
        return;
    }
    r = xcalloc(1, sizeof(*r));
    r->dir = dir;
    r->id = id;
    r->method = xmalloc(TAP_METHOD_MAX + 1);
    str_sanitize(r->method, TAP_METHOD_MAX + 1, method,
        strlen(method) < TAP_METHOD_MAX ? strlen(method) : TAP_METHOD_MAX);
    if (strcmp(method, "tools/call") == 0)
        r->tool = tap_ledger_text(cJSON_GetObjectItemCaseSensitive(params,
            "name"), TAP_METHOD_MAX);
    r->token = tap_ledger_key(cJSON_GetObjectItemCaseSensitive(meta,
        "progressToken"));
    if (r->token != NULL && tap_ledger_by_token(l, dir, r->token) != NULL) {
        /* A token already in use names the first request only. */
        free(r->token);
        r->token = NULL;
    }
    r->started = now;
    r->started_ms = wall;
    r->bytes = len;
    r->older = l->newest;
    if (l->newest != NULL)
        l->newest->newer = r;
    else
        l->oldest = r;
    l->newest = r;
    l->count++;
    if (!tap_ledger_grow(l))
        tap_ledger_index(l, r);
    if (l->host->started != NULL)
        l->host->started(l->arg, r);
}

/* An answer from side: the request it answers ends. false: drop it. */
static bool
tap_ledger_answer(struct tap_ledger *l, enum tap_side side, const cJSON *m,
    double now)
{
    /* The agent answers the server's requests, and the other way. */
    enum tap_dir        dir = side == TAP_SIDE_AGENT ? TAP_DIR_TO_AGENT :
        TAP_DIR_TO_SERVER;
    const cJSON        *err = cJSON_GetObjectItemCaseSensitive(m, "error");
    char               *id = tap_ledger_key(cJSON_GetObjectItemCaseSensitive(
        m, "id"));
    struct tap_request *r;
    bool                pass = true;

    if (id == NULL) {
        /* An error with a null id answers nothing in particular. */
        l->stats.unmatched[side]++;
        return true;
    }
    r = tap_ledger_by_id(l, dir, id);
    if (r == NULL) {
        bool late = tap_ledger_cancelled_take(l, dir, id, now);

        free(id);
        if (late) {
            l->stats.late_dropped++;
            return false;
        }
        l->stats.unmatched[side]++;
        return true;
    }
    free(id);
    if (r->own)
        pass = false;           /* the tap's own: the agent never asked */
    if (cJSON_IsObject(err)) {
        struct failure_evidence evd = { .rpc_error = true };
        const cJSON            *code = cJSON_GetObjectItemCaseSensitive(err,
            "code");
        char                   *msg = tap_ledger_text(
            cJSON_GetObjectItemCaseSensitive(err, "message"), 160);
        char                    detail[224];
        struct failure          f;

        /* A code past an int's range (JSON-RPC's codes are integers) is
         * none, as jsonrpc_error_code has it: never a cast out of range. */
        evd.rpc_error_code = cJSON_IsNumber(code) &&
            code->valuedouble <= 2147483647.0 &&
            code->valuedouble >= -2147483648.0 ?
            (long)code->valuedouble : 0;
        snprintf(detail, sizeof(detail), "JSON-RPC error %ld%s%s",
            evd.rpc_error_code, msg != NULL ? ": " : "",
            msg != NULL ? msg : "");
        free(msg);
        failure_make(&f, &evd, FAILURE_SITE_REQUEST, detail);
        f.has_rpc_code = true;
        f.rpc_code = evd.rpc_error_code;
        tap_ledger_end(l, r, TAP_END_FAILED, &f, now);
    } else {
        tap_ledger_end(l, r, TAP_END_COMPLETED, NULL, now);
    }
    return pass;
}

/* A notification from side: progress or a cancel. */
static void
tap_ledger_notice(struct tap_ledger *l, enum tap_side side,
    const cJSON *m, const char *method, size_t len, int64_t wall,
    double now)
{
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(m, "params");

    if (strcmp(method, "notifications/progress") == 0) {
        /* The receiver of a request reports its progress. */
        enum tap_dir        dir = side == TAP_SIDE_SERVER ?
            TAP_DIR_TO_SERVER : TAP_DIR_TO_AGENT;
        char               *tok = tap_ledger_key(
            cJSON_GetObjectItemCaseSensitive(params, "progressToken"));
        struct tap_request *r = tok != NULL ?
            tap_ledger_by_token(l, dir, tok) : NULL;
        const cJSON        *v;
        char               *msg;

        free(tok);
        if (r == NULL)
            return;
        r->bytes += len;
        r->progress_count++;
        r->progress_ms = wall;
        v = cJSON_GetObjectItemCaseSensitive(params, "progress");
        if (cJSON_IsNumber(v)) {
            r->has_progress = true;
            r->progress = v->valuedouble;
        }
        v = cJSON_GetObjectItemCaseSensitive(params, "total");
        r->has_total = cJSON_IsNumber(v);
        r->total = r->has_total ? v->valuedouble : 0;
        msg = tap_ledger_text(cJSON_GetObjectItemCaseSensitive(params,
            "message"), 200);
        if (msg != NULL) {
            free(r->message);
            r->message = msg;
        }
        if (l->host->progress != NULL)
            l->host->progress(l->arg, r);
    } else if (strcmp(method, "notifications/cancelled") == 0) {
        /* Its sender gives a request up. */
        enum tap_dir        dir = side == TAP_SIDE_AGENT ?
            TAP_DIR_TO_SERVER : TAP_DIR_TO_AGENT;
        char               *id = tap_ledger_key(
            cJSON_GetObjectItemCaseSensitive(params, "requestId"));
        struct tap_request *r = id != NULL ?
            tap_ledger_by_id(l, dir, id) : NULL;

        free(id);
        if (r != NULL)
            tap_ledger_end(l, r, TAP_END_CANCELLED, NULL, now);
    }
}

/* True when a line may matter to the ledger: it names an id, or is a
 * progress or cancel notice, or holds an escape (a key "id" may be
 * written "\u0069d"). A plain notification (a log message, a list change)
 * is then passed on without being parsed. One memchr walk over the quotes
 * and one over the backslashes: most of a busy server's bytes are read at
 * memchr's speed rather than cJSON's (or memmem's). */
static bool
tap_ledger_relevant(const char *line, size_t len)
{
    const char *end = line + len, *p;

    for (p = memchr(line, '"', len); p != NULL;
        p = memchr(p + 1, '"', (size_t)(end - p - 1))) {
        size_t left = (size_t)(end - p);

        if (left >= 4 && memcmp(p, "\"id\"", 4) == 0)
            return true;
        if (left >= 24 && memcmp(p + 1, "notifications/", 14) == 0 &&
            (memcmp(p + 15, "progress\"", 9) == 0 ||
            (left >= 26 && memcmp(p + 15, "cancelled\"", 10) == 0)))
            return true;
        if (left <= 1)
            break;
    }
    for (p = memchr(line, '\\', len); p != NULL && p + 1 < end;
        p = memchr(p + 1, '\\', (size_t)(end - p - 1))) {
        if (p[1] == 'u')
            return true;
    }
    return false;
}

/* One JSON-RPC message m (parsed, an object with "jsonrpc": "2.0") of len
 * bytes that side wrote. False when it must not be passed on. */
static bool
tap_ledger_message(struct tap_ledger *l, enum tap_side side, const cJSON *m,
    size_t len, double now, int64_t wall)
{
    const cJSON *method = cJSON_GetObjectItemCaseSensitive(m, "method");
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(m, "id");

    if (cJSON_IsString(method) && method->valuestring != NULL) {
        if (id != NULL && !cJSON_IsNull(id)) {
            char *key = tap_ledger_key(id);

            if (key != NULL)
                tap_ledger_request(l, side, m, method->valuestring, key,
                    len, now, wall);
            else
                l->stats.untracked++;
        } else {
            tap_ledger_notice(l, side, m, method->valuestring, len, wall,
                now);
        }
        return true;
    }
    if (cJSON_GetObjectItemCaseSensitive(m, "result") != NULL ||
        cJSON_GetObjectItemCaseSensitive(m, "error") != NULL)
        return tap_ledger_answer(l, side, m, now);
    l->stats.unparsed[side]++;
    return true;
}

static bool
tap_ledger_is_message(const cJSON *m)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, "jsonrpc");

    return cJSON_IsObject(m) && cJSON_IsString(v) &&
        strcmp(v->valuestring, "2.0") == 0;
}

/*
 * A batch (JSON-RPC 2.0 section 6; MCP 2025-03-26 allows them, later
 * revisions do not, and agents on that revision still send them): each
 * message in it is followed as if it came alone, its bytes the batch's
 * share. The line is always passed on whole: the tap never rewrites
 * bytes, so a late answer to a cancelled request inside a batch reaches
 * the agent (which must ignore an id it has no request for) and is
 * counted as such.
 */
static void
tap_ledger_batch(struct tap_ledger *l, enum tap_side side, const cJSON *a,
    size_t len, double now, int64_t wall)
{
    const cJSON *m;
    size_t       n = (size_t)cJSON_GetArraySize(a), share;

    if (n == 0) {
        l->stats.unparsed[side]++;
        return;
    }
    l->stats.batches[side]++;
    share = len / n;
    cJSON_ArrayForEach(m, a) {
        unsigned long dropped = l->stats.late_dropped;

        if (!tap_ledger_is_message(m))
            l->stats.unparsed[side]++;
        else if (!tap_ledger_message(l, side, m, share, now, wall) &&
            l->stats.late_dropped > dropped) {
            /* Passed on with its batch, not dropped. */
            l->stats.late_dropped = dropped;
            l->stats.late_passed++;
        }
    }
}

bool
tap_ledger_line(struct tap_ledger *l, enum tap_side side, const char *line,
    size_t len, double now, int64_t wall)
{
    cJSON *m;
    bool   pass = true, batch;
    size_t i = 0;

    l->stats.lines[side]++;
    while (i < len && (line[i] == ' ' || line[i] == '\t'))
        i++;
    if (i == len || (line[i] != '{' && line[i] != '[')) {
        /* No message (a log line, a blank): passed on. */
        l->stats.unparsed[side]++;
        return true;
    }
    batch = line[i] == '[';
    if (!tap_ledger_relevant(line, len))
        return true;
    m = cJSON_ParseWithLength(line, len);
    if (batch && cJSON_IsArray(m))
        tap_ledger_batch(l, side, m, len, now, wall);
    else if (!batch && tap_ledger_is_message(m))
        pass = tap_ledger_message(l, side, m, len, now, wall);
    else
        /* Not a message (a log line that starts with a brace). */
        l->stats.unparsed[side]++;
    cJSON_Delete(m);
    return pass;
}

void
tap_ledger_skipped(struct tap_ledger *l, enum tap_side side)
{
    l->stats.lines[side]++;
    l->stats.unparsed[side]++;
}

void
tap_ledger_close(struct tap_ledger *l, const char *detail, double now)
{
    struct failure_evidence evd = { .child_closed = true };
    struct failure          f;

    failure_make(&f, &evd, FAILURE_SITE_REQUEST, detail);
    while (l->oldest != NULL)
        tap_ledger_end(l, l->oldest, TAP_END_FAILED, &f, now);
}

struct tap_request *
tap_ledger_find(struct tap_ledger *l, enum tap_dir dir, const char *id)
{
    cJSON              *v = cJSON_Parse(id);
    char               *key = NULL;
    struct tap_request *r;

    if (v != NULL && (cJSON_IsNumber(v) || cJSON_IsString(v)))
        key = tap_ledger_key(v);
    cJSON_Delete(v);
    if (key == NULL) {
        /* A bare word: the string id it spells. */
        cJSON *s = cJSON_CreateString(id);

        key = tap_ledger_key(s);
        cJSON_Delete(s);
    }
    if (key == NULL)
        return NULL;
    r = tap_ledger_by_id(l, dir, key);
    free(key);
    return r;
}

void
tap_ledger_cancel(struct tap_ledger *l, struct tap_request *r, double now)
{
    struct tap_cancelled *c;

    if (l->ncancelled == TAP_LEDGER_CANCELLED_MAX) {
        /* The oldest watch goes. */
        free(l->cancelled[0].id);
        memmove(&l->cancelled[0], &l->cancelled[1],
            (TAP_LEDGER_CANCELLED_MAX - 1) * sizeof(l->cancelled[0]));
        l->ncancelled--;
    }
    c = &l->cancelled[l->ncancelled++];
    c->dir = r->dir;
    c->id = xstrdup(r->id);
    c->at = now;
    tap_ledger_end(l, r, TAP_END_OPERATOR, NULL, now);
}

struct tap_request *
tap_ledger_own(struct tap_ledger *l, const char *id, const char *method,
    double now, int64_t wall)
{
    struct tap_request *r = xcalloc(1, sizeof(*r));

    r->dir = TAP_DIR_TO_SERVER;
    r->id = xstrdup(id);
    r->method = xstrdup(method);
    r->own = true;
    r->started = now;
    r->started_ms = wall;
    r->older = l->newest;
    if (l->newest != NULL)
        l->newest->newer = r;
    else
        l->oldest = r;
    l->newest = r;
    l->count++;
    l->nown++;
    if (!tap_ledger_grow(l))
        tap_ledger_index(l, r);
    if (l->host->started != NULL)
        l->host->started(l->arg, r);
    return r;
}

void
tap_ledger_fail(struct tap_ledger *l, struct tap_request *r,
    const struct failure *f, double now)
{
    tap_ledger_end(l, r, TAP_END_FAILED, f, now);
}

bool
tap_ledger_hold(const struct tap_ledger *l)
{
    return l->ncancelled > 0 || l->nown > 0;
}

size_t
tap_ledger_count(const struct tap_ledger *l)
{
    return l->count;
}

const struct tap_request *
tap_ledger_oldest(const struct tap_ledger *l)
{
    return l->oldest;
}

const struct tap_ledger_stats *
tap_ledger_stats(const struct tap_ledger *l)
{
    return &l->stats;
}

size_t
tap_ledger_cancelled_pending(const struct tap_ledger *l)
{
    return l->ncancelled;
}
