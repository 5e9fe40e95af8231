/*
 * A tap read by the monitor (tap_source.h): one non-blocking Unix socket
 * on the loop, JSON Lines in (bounded: a line past 16 MiB drops the
 * link), a command line out now and then. What the tap classified is
 * taken as it said it (kind, delivered, rpc code, detail): the verdict
 * was made once, by the classifier, in the tap. The ledger view is
 * bounded (TAP_SOURCE_VIEW_MAX requests; the rest are counted by the tap
 * itself), so each event costs at most a bounded walk.
 *
 * What it must never do: block (connect, read and write are
 * non-blocking), or trust a line's size or fields.
 */
#include "fleet/tap_source.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "engine/tap_command.h"
#include "util/clock.h"
#include "util/file.h"
#include "util/str.h"
#include "util/xmalloc.h"

#define TAP_SOURCE_LINE_MAX (16u * 1024 * 1024)
#define TAP_SOURCE_VIEW_MAX 1000
#define TAP_SOURCE_OPS_MAX  128
#define TAP_SOURCE_RETRY_S  1.0
#define TAP_SOURCE_RETRY_CAP_S 30.0

struct tap_source {
    struct ev_loop               *loop;
    char                         *path;
    const struct tap_source_host *host;
    void                         *arg;
    int                           fd;
    bool                          connecting, connected, running;
    bool                          linked;       /* a snapshot came */
    ev_io                         rw, ww;
    ev_timer                      retry;
    unsigned                      failures;     /* in a row, for backoff */
    char                         *in;
    size_t                        ilen, icap;
    char                         *out;
    size_t                        olen, ocap;
    struct server_request        *view;
    size_t                        nview;
    int64_t                       last_seen;    /* the newest exchange
                                                   taken (epoch ms) */
    double                        last_seq;     /* and its seq (0: none;
                                                   many share a ms) */
    char                         *ops[TAP_SOURCE_OPS_MAX];
    size_t                        nops;
    long                          pid, server_pid;
    char                         *command;
    struct server_agent_session  *sessions;
    long                          nsessions;    /* -1: none listed */
};

/* An op name as a string that lives as long as the source. */
static const char *
tap_source_op(struct tap_source *ts, const char *op)
{
    for (size_t i = 0; i < ts->nops; i++) {
        if (strcmp(ts->ops[i], op) == 0)
            return ts->ops[i];
    }
    if (ts->nops == TAP_SOURCE_OPS_MAX)
        return "other";
    ts->ops[ts->nops] = str_sanitized(op);
    if (strlen(ts->ops[ts->nops]) > 64)
        ts->ops[ts->nops][64] = '\0';
    return ts->ops[ts->nops++];
}

/* --- the link ------------------------------------------------------------ */

static void tap_source_connect(struct tap_source *ts);

static void
tap_source_close(struct tap_source *ts)
{
    ev_io_stop(ts->loop, &ts->rw);
    ev_io_stop(ts->loop, &ts->ww);
    if (ts->fd >= 0)
        close(ts->fd);
    ts->fd = -1;
    ts->connecting = ts->connected = ts->linked = false;
    ts->ilen = ts->olen = 0;
}

/* Every request of the view ends (the tap is gone: their fate is not
 * known here). */
static void
tap_source_view_clear(struct tap_source *ts, const char *outcome)
{
    while (ts->nview > 0) {
        struct server_request r = ts->view[ts->nview - 1];

        ts->nview--;
        snprintf(r.outcome, sizeof(r.outcome), "%s", outcome);
        if (ts->host->request != NULL)
            ts->host->request(ts->arg, SERVER_REQUEST_END, &r);
    }
}

/* The link failed (connect) or went away: said once as an exchange of
 * the monitor's own, then a reconnect after the backoff. */
static void
tap_source_lost(struct tap_source *ts, bool at_connect, int err,
    const char *what)
{
    struct failure_evidence evd = { 0 };
    struct failure          f;
    char                    detail[200];
    double                  delay;
    bool                    was_up = ts->linked;

    tap_source_close(ts);
    if (at_connect) {
        evd.net = NET_CONNECT;
        evd.os_errno = err;
        snprintf(detail, sizeof(detail), "no tap at %.120s: %s", ts->path,
            what != NULL ? what : err == ENOENT ?
            "no socket there (the tap is not running)" : strerror(err));
    } else {
        evd.child_closed = true;
        snprintf(detail, sizeof(detail), "the tap went away (%s)", what);
    }
    failure_make(&f, &evd, at_connect ? FAILURE_SITE_CONNECT :
        FAILURE_SITE_REQUEST, detail);
    if (was_up)
        tap_source_view_clear(ts, "tap_lost");
    if (ts->host->link != NULL)
        ts->host->link(ts->arg, false, &f);
    if (!ts->running)
        return;
    ts->failures++;
    delay = TAP_SOURCE_RETRY_S * (double)(1u << (ts->failures > 5 ? 5 :
        ts->failures - 1));
    if (delay > TAP_SOURCE_RETRY_CAP_S)
        delay = TAP_SOURCE_RETRY_CAP_S;
    delay *= 0.8 + 0.4 * ((double)rand() / RAND_MAX);
    ev_timer_stop(ts->loop, &ts->retry);
    ev_timer_set(&ts->retry, delay, 0.);
    ev_timer_start(ts->loop, &ts->retry);
}

/* --- what the tap says --------------------------------------------------- */

static const char *
tap_source_str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    return cJSON_IsString(v) && v->valuestring != NULL ? v->valuestring :
        NULL;
}

static bool
tap_source_num(const cJSON *o, const char *key, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    if (!cJSON_IsNumber(v))
        return false;
    *out = v->valuedouble;
    return true;
}

/* A sanitized copy of o's string member into dst. */
static void
tap_source_copy(char *dst, size_t n, const cJSON *o, const char *key)
{
    const char *s = tap_source_str(o, key);

    dst[0] = '\0';
    if (s != NULL)
        str_sanitize(dst, n, s, strlen(s) < n ? strlen(s) : n - 1);
}

/* A request object of the tap's into r. false when it has no id. */
static bool
tap_source_request_of(const cJSON *o, struct server_request *r)
{
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "progress");
    char        *text;
    double       v;

    memset(r, 0, sizeof(*r));
    if (!(cJSON_IsNumber(id) || cJSON_IsString(id)))
        return false;
    text = cJSON_PrintUnformatted(id);
    if (text == NULL)
        return false;
    str_sanitize(r->id, sizeof(r->id), text, strlen(text) < sizeof(r->id) ?
        strlen(text) : sizeof(r->id) - 1);
    free(text);
    tap_source_copy(r->direction, sizeof(r->direction), o, "direction");
    tap_source_copy(r->method, sizeof(r->method), o, "method");
    tap_source_copy(r->tool, sizeof(r->tool), o, "tool");
    if (tap_source_num(o, "started_at", &v))
        r->started_at = (int64_t)v;
    if (tap_source_num(o, "bytes", &v) && v >= 0)
        r->bytes = (uint64_t)v;
    if (cJSON_IsObject(p)) {
        r->has_progress = tap_source_num(p, "progress", &r->progress);
        r->has_total = tap_source_num(p, "total", &r->total);
        tap_source_copy(r->message, sizeof(r->message), p, "message");
    }
    return true;
}

static struct server_request *
tap_source_view_find(struct tap_source *ts, const char *id, const char *dir)
{
    for (size_t i = 0; i < ts->nview; i++) {
        if (strcmp(ts->view[i].id, id) == 0 &&
            strcmp(ts->view[i].direction, dir) == 0)
            return &ts->view[i];
    }
    return NULL;
}

static void
tap_source_view_add(struct tap_source *ts, const struct server_request *r)
{
    if (ts->nview == TAP_SOURCE_VIEW_MAX ||
        tap_source_view_find(ts, r->id, r->direction) != NULL)
        return;
    if (ts->view == NULL)
        ts->view = xcalloc(TAP_SOURCE_VIEW_MAX, sizeof(*ts->view));
    ts->view[ts->nview++] = *r;
    if (ts->host->request != NULL)
        ts->host->request(ts->arg, SERVER_REQUEST_START, r);
}

/* A failure as the tap classified it, from an exchange line or the
 * snapshot's last_failure. */
static void
tap_source_failure(const cJSON *o, const char *kind, struct failure *f)
{
    const char *d = tap_source_str(o, "delivered");
    double      code;
    int         k = failure_kind_from_name(kind);

    memset(f, 0, sizeof(*f));
    f->kind = k >= 0 ? (enum failure_kind)k : FAILURE_UNKNOWN;
    f->delivered = d == NULL ? DELIVERED_UNKNOWN :
        strcmp(d, "yes") == 0 ? DELIVERED_YES :
        strcmp(d, "no") == 0 ? DELIVERED_NO : DELIVERED_UNKNOWN;
    f->site = FAILURE_SITE_REQUEST;
    if (tap_source_num(o, "rpc_code", &code)) {
        f->has_rpc_code = true;
        f->rpc_code = (long)code;
    }
    tap_source_copy(f->detail, sizeof(f->detail), o, "detail");
}

static void
tap_source_exchange(struct tap_source *ts, const cJSON *o, int64_t at,
    const cJSON *last_failure)
{
    const char    *op = tap_source_str(o, "op");
    const char    *outcome = tap_source_str(o, "outcome");
    struct failure f;
    double         ms = 0, seq;

    if (op == NULL || outcome == NULL)
        return;
    tap_source_num(o, "ms", &ms);
    if (at > ts->last_seen)
        ts->last_seen = at;
    if (tap_source_num(o, "seq", &seq) && seq > ts->last_seq)
        ts->last_seq = seq;
    if (strcmp(outcome, "completed") == 0) {
        ts->host->exchange(ts->arg, tap_source_op(ts, op), NULL, ms, at);
        return;
    }
    tap_source_failure(last_failure != NULL ? last_failure : o, outcome, &f);
    ts->host->exchange(ts->arg, tap_source_op(ts, op), &f, ms, at);
}

/* An HTTP tap's sessions, from its snapshot (at most 256 kept). */
static void
tap_source_sessions_of(struct tap_source *ts, const cJSON *arr)
{
    const cJSON *e;
    int64_t      now = clock_wall_ms();
    double       v;

    free(ts->sessions);
    ts->sessions = NULL;
    ts->nsessions = -1;
    if (!cJSON_IsArray(arr))
        return;
    ts->nsessions = 0;
    ts->sessions = xcalloc(256, sizeof(*ts->sessions));
    cJSON_ArrayForEach(e, arr) {
        struct server_agent_session *s = &ts->sessions[ts->nsessions];

        if (ts->nsessions == 256)
            break;
        tap_source_copy(s->id_prefix, sizeof(s->id_prefix), e, "id_prefix");
        s->created_at = tap_source_num(e, "created_at", &v) ? (int64_t)v : 0;
        s->last_at = tap_source_num(e, "idle_ms", &v) ? now - (int64_t)v :
            s->created_at;
        s->requests = tap_source_num(e, "requests", &v) && v > 0 ?
            (unsigned long)v : 0;
        s->ending = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e,
            "ending"));
        ts->nsessions++;
    }
}

long
tap_source_sessions(const struct tap_source *ts)
{
    return ts->nsessions;
}

const struct server_agent_session *
tap_source_session(const struct tap_source *ts, size_t i)
{
    return ts->nsessions >= 0 && i < (size_t)ts->nsessions ?
        &ts->sessions[i] : NULL;
}

/* The snapshot: the history not yet taken, the ledger as it is now. */
static void
tap_source_snapshot(struct tap_source *ts, const cJSON *o)
{
    const cJSON *tap = cJSON_GetObjectItemCaseSensitive(o, "tap");
    const cJSON *hist = cJSON_GetObjectItemCaseSensitive(o, "history");
    const cJSON *lf = cJSON_GetObjectItemCaseSensitive(o, "last_failure");
    const cJSON *fl = cJSON_GetObjectItemCaseSensitive(o, "in_flight");
    const cJSON *e;
    double       v;
    int          n = cJSON_GetArraySize(hist), i = 0;

    if (tap_source_num(tap, "pid", &v)) {
        /* Another tap at this path numbers its exchanges from 1. */
        if (ts->pid != 0 && ts->pid != (long)v)
            ts->last_seq = 0;
        ts->pid = (long)v;
    }
    tap_source_sessions_of(ts, cJSON_GetObjectItemCaseSensitive(o,
        "sessions"));
    ts->server_pid = tap_source_num(tap, "server_pid", &v) ? (long)v : 0;
    free(ts->command);
    ts->command = tap_source_str(tap, "command") != NULL ?
        str_sanitized(tap_source_str(tap, "command")) : NULL;
    cJSON_ArrayForEach(e, hist) {
        double at = 0, seq;

        i++;
        if (!tap_source_num(e, "ts", &at))
            continue;
        /* Taken already? By its number where the tap gives one: a
         * millisecond holds many exchanges. */
        if (tap_source_num(e, "seq", &seq) ? seq <= ts->last_seq :
            (int64_t)at <= ts->last_seen)
            continue;
        /* The last failure's detail goes with the newest failure. */
        tap_source_exchange(ts, e, (int64_t)at, i == n && cJSON_IsObject(lf) &&
            tap_source_str(e, "outcome") != NULL &&
            strcmp(tap_source_str(e, "outcome"), "completed") != 0 ? lf :
            NULL);
    }
    /* The ledger: what ended meanwhile ends, what is new starts. */
    for (size_t k = 0; k < ts->nview;) {
        bool keep = false;

        cJSON_ArrayForEach(e, fl) {
            struct server_request r;

            if (tap_source_request_of(e, &r) &&
                strcmp(r.id, ts->view[k].id) == 0 &&
                strcmp(r.direction, ts->view[k].direction) == 0)
                keep = true;
        }
        if (keep) {
            k++;
            continue;
        }
        {
            struct server_request gone = ts->view[k];

            memmove(&ts->view[k], &ts->view[k + 1], (ts->nview - k - 1) *
                sizeof(*ts->view));
            ts->nview--;
            snprintf(gone.outcome, sizeof(gone.outcome), "ended");
            if (ts->host->request != NULL)
                ts->host->request(ts->arg, SERVER_REQUEST_END, &gone);
        }
    }
    cJSON_ArrayForEach(e, fl) {
        struct server_request r;

        if (tap_source_request_of(e, &r)) {
            struct server_request *have = tap_source_view_find(ts, r.id,
                r.direction);

            if (have != NULL)
                *have = r;
            else
                tap_source_view_add(ts, &r);
        }
    }
}

static int tap_source_send(struct tap_source *ts, const char *line);

/* One line from the tap. */
static void
tap_source_line(struct tap_source *ts, const char *line, size_t len)
{
    cJSON                 *o = cJSON_ParseWithLength(line, len);
    const char            *ev = tap_source_str(o, "event");
    struct server_request  r, *have;

    if (ev == NULL) {
        cJSON_Delete(o);
        return;
    }
    if (strcmp(ev, "snapshot") == 0) {
        tap_source_snapshot(ts, o);
        if (!ts->linked) {
            /* Linked once the tap said where it stands. */
            ts->linked = true;
            if (ts->host->link != NULL)
                ts->host->link(ts->arg, true, NULL);
        }
    } else if (strcmp(ev, "exchange") == 0) {
        double at = 0;

        /* When the tap saw it (a snapshot after a gap compares these). */
        if (!tap_source_num(o, "observed_at", &at) || at <= 0)
            at = (double)clock_wall_ms();
        tap_source_exchange(ts, o, (int64_t)at, NULL);
    } else if (strcmp(ev, "request") == 0 || strcmp(ev, "progress") == 0) {
        if (tap_source_request_of(cJSON_GetObjectItemCaseSensitive(o,
            "request"), &r)) {
            have = tap_source_view_find(ts, r.id, r.direction);
            if (have == NULL) {
                tap_source_view_add(ts, &r);
            } else {
                *have = r;
                if (ts->host->request != NULL)
                    ts->host->request(ts->arg, SERVER_REQUEST_PROGRESS, &r);
            }
        }
    } else if (strcmp(ev, "request_end") == 0) {
        if (tap_source_request_of(o, &r) && (have = tap_source_view_find(ts,
            r.id, r.direction)) != NULL) {
            struct server_request gone = *have;

            memmove(have, have + 1, (size_t)(ts->view + ts->nview - have - 1) *
                sizeof(*have));
            ts->nview--;
            tap_source_copy(gone.outcome, sizeof(gone.outcome), o,
                "outcome");
            if (ts->host->request != NULL)
                ts->host->request(ts->arg, SERVER_REQUEST_END, &gone);
        }
    } else if (strcmp(ev, "cancel_result") == 0) {
        const cJSON *ok = cJSON_GetObjectItemCaseSensitive(o, "ok");

        if (!tap_source_request_of(o, &r))
            memset(&r, 0, sizeof(r));
        tap_source_copy(r.outcome, sizeof(r.outcome), o, cJSON_IsTrue(ok) ?
            "reason" : "detail");
        if (ts->host->request != NULL)
            ts->host->request(ts->arg, cJSON_IsTrue(ok) ?
                SERVER_REQUEST_CANCEL_OK : SERVER_REQUEST_CANCEL_FAILED, &r);
    } else if (strcmp(ev, "session") == 0 ||
        strcmp(ev, "session_gone") == 0 || strcmp(ev, "session_end") == 0) {
        /* An HTTP tap's sessions changed: the list comes with a fresh
         * snapshot (rare: a session's start and end). */
        tap_source_send(ts, "{\"cmd\":\"snapshot\"}");
    } else if (strcmp(ev, "gap") == 0) {
        /* Lines were lost: a fresh snapshot puts the view right. */
        tap_source_send(ts, "{\"cmd\":\"snapshot\"}");
    }
    cJSON_Delete(o);
}

/* --- the socket ---------------------------------------------------------- */

/* ev_io: lines from the tap. */
static void
tap_source_rw_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    struct tap_source *ts = w->data;
    char               buf[65536];
    ssize_t            n;
    size_t             start = 0;

    (void)loop;
    (void)revents;
    n = recv(ts->fd, buf, sizeof(buf), 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        tap_source_lost(ts, false, n < 0 ? errno : 0, n < 0 ?
            strerror(errno) : "its socket closed");
        return;
    }
    for (size_t i = 0; i < (size_t)n; i++) {
        if (buf[i] != '\n')
            continue;
        if (ts->ilen > 0) {
            if (ts->ilen + (i - start) > TAP_SOURCE_LINE_MAX)
                goto too_long;
            if (ts->ilen + (i - start) > ts->icap) {
                ts->icap = ts->ilen + (i - start) + 4096;
                ts->in = xrealloc(ts->in, ts->icap);
            }
            memcpy(ts->in + ts->ilen, buf + start, i - start);
            ts->ilen += i - start;
            tap_source_line(ts, ts->in, ts->ilen);
            ts->ilen = 0;
        } else {
            tap_source_line(ts, buf + start, i - start);
        }
        if (ts->fd < 0)
            return;
        start = i + 1;
    }
    if (start < (size_t)n) {
        size_t rest = (size_t)n - start;

        if (ts->ilen + rest > TAP_SOURCE_LINE_MAX)
            goto too_long;
        if (ts->ilen + rest > ts->icap) {
            ts->icap = (ts->ilen + rest) * 2;
            ts->in = xrealloc(ts->in, ts->icap);
        }
        memcpy(ts->in + ts->ilen, buf + start, rest);
        ts->ilen += rest;
    }
    return;
too_long:
    tap_source_lost(ts, false, 0, "a line past 16 MiB");
}

static void
tap_source_flush(struct tap_source *ts)
{
    ssize_t n;

    while (ts->olen > 0) {
        n = send(ts->fd, ts->out, ts->olen, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (n <= 0) {
            tap_source_lost(ts, false, errno, strerror(errno));
            return;
        }
        memmove(ts->out, ts->out + n, ts->olen - (size_t)n);
        ts->olen -= (size_t)n;
    }
    if (ts->olen > 0)
        ev_io_start(ts->loop, &ts->ww);
    else
        ev_io_stop(ts->loop, &ts->ww);
}

/* ev_io: writable: the connect finished, or queued lines can go. */
static void
tap_source_ww_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    struct tap_source *ts = w->data;
    const char        *why;
    int                err = 0;
    socklen_t          len = sizeof(err);

    (void)loop;
    (void)revents;
    if (ts->connecting) {
        if (getsockopt(ts->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
            err = errno;
        if (err != 0) {
            tap_source_lost(ts, true, err, NULL);
            return;
        }
        if (file_socket_peer_ours(ts->fd, &why) != 0) {
            tap_source_lost(ts, true, EPERM, why);
            return;
        }
        ts->connecting = false;
        ts->connected = true;
        ts->failures = 0;
        ev_io_start(ts->loop, &ts->rw);
    }
    tap_source_flush(ts);
}

static int
tap_source_send(struct tap_source *ts, const char *line)
{
    size_t len = strlen(line);

    if (ts->fd < 0)
        return -1;
    if (ts->olen + len + 1 > 1024 * 1024)
        return -1;
    if (ts->olen + len + 1 > ts->ocap) {
        ts->ocap = (ts->olen + len + 1) * 2;
        ts->out = xrealloc(ts->out, ts->ocap);
    }
    memcpy(ts->out + ts->olen, line, len);
    ts->out[ts->olen + len] = '\n';
    ts->olen += len + 1;
    if (ts->connected)
        tap_source_flush(ts);
    return 0;
}

static void
tap_source_connect(struct tap_source *ts)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };

    tap_source_close(ts);
    if (strlen(ts->path) >= sizeof(sa.sun_path)) {
        tap_source_lost(ts, true, ENAMETOOLONG, NULL);
        return;
    }
    memcpy(sa.sun_path, ts->path, strlen(ts->path) + 1);
    ts->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (ts->fd < 0) {
        tap_source_lost(ts, true, errno, NULL);
        return;
    }
    ev_io_set(&ts->rw, ts->fd, EV_READ);
    ev_io_set(&ts->ww, ts->fd, EV_WRITE);
    ts->connecting = true;
    if (connect(ts->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 &&
        errno != EINPROGRESS && errno != EAGAIN) {
        tap_source_lost(ts, true, errno, NULL);
        return;
    }
    /* Done or not, the writable event says so. */
    ev_io_start(ts->loop, &ts->ww);
}

/* ev_timer: try again. */
static void
tap_source_retry_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct tap_source *ts = w->data;

    (void)loop;
    (void)revents;
    if (ts->running)
        tap_source_connect(ts);
}

struct tap_source *
tap_source_new(struct ev_loop *loop, const char *path,
    const struct tap_source_host *host, void *arg)
{
    struct tap_source *ts = xcalloc(1, sizeof(*ts));

    ts->nsessions = -1;

    ts->loop = loop;
    ts->path = xstrdup(path);
    ts->host = host;
    ts->arg = arg;
    ts->fd = -1;
    ev_io_init(&ts->rw, tap_source_rw_cb, -1, EV_READ);
    ts->rw.data = ts;
    ev_io_init(&ts->ww, tap_source_ww_cb, -1, EV_WRITE);
    ts->ww.data = ts;
    ev_timer_init(&ts->retry, tap_source_retry_cb, 0., 0.);
    ts->retry.data = ts;
    return ts;
}

void
tap_source_start(struct tap_source *ts)
{
    ts->running = true;
    ev_timer_stop(ts->loop, &ts->retry);
    tap_source_connect(ts);
}

void
tap_source_stop(struct tap_source *ts)
{
    ts->running = false;
    ev_timer_stop(ts->loop, &ts->retry);
    tap_source_close(ts);
    ts->nview = 0;
}

void
tap_source_free(struct tap_source *ts)
{
    if (ts == NULL)
        return;
    tap_source_stop(ts);
    for (size_t i = 0; i < ts->nops; i++)
        free(ts->ops[i]);
    free(ts->view);
    free(ts->in);
    free(ts->out);
    free(ts->command);
    free(ts->sessions);
    free(ts->path);
    free(ts);
}

bool
tap_source_connected(const struct tap_source *ts)
{
    return ts->linked;
}

size_t
tap_source_in_flight(const struct tap_source *ts)
{
    return ts->nview;
}

const struct server_request *
tap_source_request(const struct tap_source *ts, size_t i)
{
    return i < ts->nview ? &ts->view[i] : NULL;
}

long
tap_source_pid(const struct tap_source *ts, long *server_pid)
{
    if (server_pid != NULL)
        *server_pid = ts->connected ? ts->server_pid : 0;
    return ts->connected ? ts->pid : 0;
}

const char *
tap_source_command(const struct tap_source *ts)
{
    return ts->command != NULL ? ts->command : "";
}

int
tap_source_cancel(struct tap_source *ts, const char *id, const char *reason)
{
    char  *line;
    int    rc;

    if (!ts->connected)
        return -1;
    line = tap_command_cancel(id, reason);
    rc = line != NULL ? tap_source_send(ts, line) : -1;
    free(line);
    return rc;
}
