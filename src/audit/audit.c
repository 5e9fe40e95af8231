/*
 * The session-hygiene audit of one server: the closed tables (checks,
 * verdicts, the grade of each verdict a check may give), and the runner
 * that takes the checks one after another, each on raw channels of its
 * own (engine/fleet.h), each bounded by its own timer, and ends every
 * session a check's channels hold before the next check begins.
 *
 * What must never happen here: a session left without its ending when a
 * check is over (judged, timed out or interrupted), a channel freed from
 * inside one of its own callbacks (every callback only records and kicks
 * the step, which runs from its own timer), or a verdict a check's table
 * does not list.
 */
#include "audit_int.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/config.h"
#include "engine/server.h"
#include "util/str.h"
#include "util/xmalloc.h"

#define AUDIT_DEFAULT_CHECK_MS 15000
#define AUDIT_GRACE_MS         1000    /* past the teardown deadline */

static const char *const audit_check_names[AUDIT_CHECK__COUNT] = {
#define X(id, name, spec) [AUDIT_CHECK_##id] = name,
    AUDIT_CHECKS(X)
#undef X
};

static const char *const audit_check_specs[AUDIT_CHECK__COUNT] = {
#define X(id, name, spec) [AUDIT_CHECK_##id] = spec,
    AUDIT_CHECKS(X)
#undef X
};

static const char *const audit_verdict_names[AUDIT_VERDICT__COUNT] = {
#define X(id, name) [AUDIT_VERDICT_##id] = name,
    AUDIT_VERDICTS(X)
#undef X
};

static const char *const audit_grade_names[AUDIT_GRADE__COUNT] = {
    [AUDIT_GRADE_INVALID] = "invalid",
    [AUDIT_GRADE_CLEAN] = "clean",
    [AUDIT_GRADE_NOTE] = "note",
    [AUDIT_GRADE_BAD] = "bad",
    [AUDIT_GRADE_ERROR] = "error",
    [AUDIT_GRADE_NA] = "n/a",
};

static const char *const audit_grade_glyphs[AUDIT_GRADE__COUNT] = {
    [AUDIT_GRADE_INVALID] = "?",
    [AUDIT_GRADE_CLEAN] = "\xe2\x9c\x93",       /* ✓ */
    [AUDIT_GRADE_NOTE] = "\xe2\x97\x90",        /* ◐ */
    [AUDIT_GRADE_BAD] = "\xe2\x9c\x97",         /* ✗ */
    [AUDIT_GRADE_ERROR] = "?",
    [AUDIT_GRADE_NA] = "\xe2\x80\x94",          /* — */
};

#define C AUDIT_GRADE_CLEAN
#define N AUDIT_GRADE_NOTE
#define B AUDIT_GRADE_BAD
#define V(v) [AUDIT_VERDICT_##v]
/*
 * Which verdict each check may give, and its grade there (the README's
 * table says what each means for an operator). Every check may say n/a
 * and error; nothing else is ever given.
 */
static const enum audit_grade
audit_grades[AUDIT_CHECK__COUNT][AUDIT_VERDICT__COUNT] = {
    [AUDIT_CHECK_DELETE] = { V(TERMINATED) = C, V(NOT_ALLOWED) = N,
        V(OTHER) = B },
    [AUDIT_CHECK_FREED] = { V(YES) = C, V(NO) = B, V(OTHER) = B },
    [AUDIT_CHECK_UNKNOWN_SESSION] = { V(SPEC) = C, V(NONSTANDARD) = B,
        V(ACCEPTED) = B, V(OTHER) = B },
    [AUDIT_CHECK_MISSING_SESSION] = { V(SPEC) = C, V(ACCEPTED) = N,
        V(OTHER) = B },
    [AUDIT_CHECK_PROBE_LEAK] = { V(NONE) = C, V(LEAKS) = B },
    [AUDIT_CHECK_SESSION_IDS] = { V(UNIQUE) = C, V(REUSED) = B },
    [AUDIT_CHECK_PING] = { V(SUPPORTED) = C, V(UNSUPPORTED) = B },
    [AUDIT_CHECK_STREAM] = { V(OPENS) = C, V(NONE) = C, V(OTHER) = B },
    [AUDIT_CHECK_AFFINITY] = { V(STABLE) = C, V(BROKEN) = B, V(OTHER) = B },
    [AUDIT_CHECK_VERSIONS] = { V(NEGOTIATES) = C, V(ECHOES) = B,
        V(REFUSES) = B, V(NONE) = B },
    [AUDIT_CHECK_ERA] = { V(LEGACY) = C, V(LEGACY_SSE) = C, V(MODERN) = C,
        V(DUAL) = C },
    [AUDIT_CHECK_SHUTDOWN] = { V(STDIN) = C, V(SIGTERM) = N,
        V(SIGKILL) = B },
};
#undef V
#undef B
#undef N
#undef C

/* unknown_session before delete: freed reads it (a server that serves
 * any id proves nothing by serving an ended one). */
const enum audit_check audit_order[] = {
    AUDIT_CHECK_ERA, AUDIT_CHECK_UNKNOWN_SESSION, AUDIT_CHECK_DELETE,
    AUDIT_CHECK_FREED, AUDIT_CHECK_MISSING_SESSION,
    AUDIT_CHECK_PROBE_LEAK, AUDIT_CHECK_PING, AUDIT_CHECK_STREAM,
    AUDIT_CHECK_AFFINITY, AUDIT_CHECK_VERSIONS, AUDIT_CHECK_SHUTDOWN,
    AUDIT_CHECK_SESSION_IDS,    /* last: judged from every session opened */
};
const size_t audit_norder = sizeof(audit_order) / sizeof(audit_order[0]);

const char *
audit_check_name(enum audit_check c)
{
    return (unsigned)c < AUDIT_CHECK__COUNT ? audit_check_names[c] : "?";
}

const char *
audit_check_spec(enum audit_check c)
{
    return (unsigned)c < AUDIT_CHECK__COUNT ? audit_check_specs[c] : "?";
}

const char *
audit_verdict_name(enum audit_verdict v)
{
    return (unsigned)v < AUDIT_VERDICT__COUNT ? audit_verdict_names[v] :
        "?";
}

const char *
audit_grade_name(enum audit_grade g)
{
    return (unsigned)g < AUDIT_GRADE__COUNT ? audit_grade_names[g] : "?";
}

const char *
audit_grade_glyph(enum audit_grade g)
{
    return (unsigned)g < AUDIT_GRADE__COUNT ? audit_grade_glyphs[g] : "?";
}

enum audit_grade
audit_grade(enum audit_check c, enum audit_verdict v)
{
    if ((unsigned)c >= AUDIT_CHECK__COUNT ||
        (unsigned)v >= AUDIT_VERDICT__COUNT)
        return AUDIT_GRADE_INVALID;
    if (v == AUDIT_VERDICT_NA)
        return AUDIT_GRADE_NA;
    if (v == AUDIT_VERDICT_ERROR)
        return AUDIT_GRADE_ERROR;
    return audit_grades[c][v];
}

/* --- the runner ---------------------------------------------------------- */

static void audit_begin(struct audit *a);

/* Run the step on the next loop turn (once, however often asked). */
static void
audit_kick(struct audit *a)
{
    if (!ev_is_active(&a->kick)) {
        ev_timer_set(&a->kick, 0., 0.);
        ev_timer_start(a->loop, &a->kick);
    }
}

/* fleet_raw_host.result */
static void
audit_result_cb(void *arg, struct fleet_raw *ch,
    const struct fleet_raw_result *r)
{
    struct audit *a = arg;

    for (size_t k = 0; k < a->nch; k++) {
        if (a->ch[k] == ch) {
            a->chres[k] = *r;
            a->chhas[k] = true;
        }
    }
    a->res = *r;
    a->has_result = true;
    audit_kick(a);
}

/* fleet_raw_host.ending */
static void
audit_ending_cb(void *arg, struct fleet_raw *ch, int session,
    const struct ending *e)
{
    struct audit *a = arg;

    (void)ch;
    (void)session;
    a->end = *e;
    a->has_ending = true;
    audit_kick(a);
}

/* fleet_raw_host.settled */
static void
audit_settled_cb(void *arg, struct fleet_raw *ch)
{
    (void)ch;
    audit_kick(arg);
}

static const struct fleet_raw_host audit_raw_host = {
    .result = audit_result_cb,
    .ending = audit_ending_cb,
    .settled = audit_settled_cb,
};

/* Keep the tag of each session id ch was issued; one already kept is a
 * reused id. The audit opens a fixed number of sessions (a few dozen), so
 * the walk is short whatever the server does. */
static void
audit_note_ids(struct audit *a, const struct fleet_raw *ch)
{
    for (int k = 0; k < fleet_raw_sessions(ch); k++) {
        uint64_t tag = fleet_raw_session_tag(ch, k);
        size_t   j;

        if (tag == 0)
            continue;
        for (j = 0; j < a->ntags && a->tags[j] != tag; j++)
            ;
        if (j < a->ntags) {
            a->reused_ids++;
            continue;
        }
        if (a->ntags == a->tcap) {
            a->tcap = a->tcap != 0 ? a->tcap * 2 : 16;
            a->tags = xrealloc(a->tags, a->tcap * sizeof(*a->tags));
        }
        a->tags[a->ntags++] = tag;
    }
}

/* Every channel of the check is settled (or its grace passed): add the
 * counts, free them, go on. */
static void
audit_close_channels(struct audit *a)
{
    for (size_t i = 0; i < a->nch; i++) {
        unsigned opened, ended, terminated;

        fleet_raw_counts(a->ch[i], &opened, &ended, &terminated);
        audit_note_ids(a, a->ch[i]);
        a->opened += opened;
        a->ended += ended;
        a->terminated += terminated;
        fleet_raw_free(a->ch[i]);
        a->ch[i] = NULL;
    }
    a->nch = 0;
    ev_timer_stop(a->loop, &a->grace);
    a->concluding = false;
    cJSON_Delete(a->ev);
    a->ev = NULL;
    a->at++;
    if (a->stopping)
        a->at = audit_norder;
    audit_begin(a);
}

/* The step: the check under way, or the wait for its endings. */
static void
audit_step(struct audit *a)
{
    if (a->finished)
        return;
    if (a->concluding) {
        for (size_t i = 0; i < a->nch; i++) {
            if (fleet_raw_busy(a->ch[i]))
                return;     /* a settlement will kick again */
        }
        audit_close_channels(a);
        return;
    }
    if (a->at >= audit_norder) {
        a->finished = true;
        a->done(a->done_arg, a);
        return;
    }
    audit_checks_step(a, audit_order[a->at]);
    a->has_result = false;
    a->has_ending = false;
}

static void
audit_kick_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    audit_step(w->data);
}

/* ev_timer: the check passed its bound: what it has not judged is an
 * error, and its sessions are ended. */
static void
audit_bound_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct audit     *a = w->data;
    enum audit_check  c = audit_order[a->at];

    (void)loop;
    (void)revents;
    if (c == AUDIT_CHECK_ERA)
        a->mode = AUDIT_MODE_DOWN;      /* nothing more would answer */
    for (int k = 0; k < 2; k++) {
        enum audit_check t = k == 0 ? c : AUDIT_CHECK_FREED;

        if (k == 1 && c != AUDIT_CHECK_DELETE)
            break;
        if (!a->results[t].done)
            audit_judge(a, t, AUDIT_VERDICT_ERROR, "the check passed its "
                "bound of %ld ms (at step %d)", a->opt.check_timeout_ms,
                a->step);
    }
    audit_conclude(a);
}

/* ev_timer: the endings did not all settle in time: close anyway (a
 * child is killed and reaped with its channel). */
static void
audit_grace_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    audit_close_channels(w->data);
}

/* The next check that applies, or the end. */
static void
audit_begin(struct audit *a)
{
    while (a->at < audit_norder) {
        enum audit_check   c = audit_order[a->at];
        enum audit_verdict v = AUDIT_VERDICT_NA;
        const char        *why;

        if (a->results[c].done) {
            a->at++;            /* judged with another (freed, by delete) */
            continue;
        }
        why = audit_checks_not_for(a, c, &v);
        if (why != NULL) {
            audit_judge(a, c, v, "%s", why);
            a->at++;
            continue;
        }
        a->step = 0;
        a->open_step = 0;
        a->has_result = a->has_ending = false;
        a->session = -1;
        a->version[0] = '\0';
        a->why[0] = '\0';
        a->n = a->served = a->gone = a->other_status = 0;
        a->first_404 = -1;
        a->lost_after_init = a->init_refused = false;
        memset(a->chhas, 0, sizeof(a->chhas));
        cJSON_Delete(a->ev);
        a->ev = cJSON_CreateObject();
        ev_timer_stop(a->loop, &a->bound);
        ev_timer_set(&a->bound, a->opt.check_timeout_ms / 1000.0, 0.);
        ev_timer_start(a->loop, &a->bound);
        audit_kick(a);
        return;
    }
    audit_kick(a);              /* finished: done from the loop */
}

void
audit_conclude(struct audit *a)
{
    long teardown = 0;

    ev_timer_stop(a->loop, &a->bound);
    a->concluding = true;
    for (size_t i = 0; i < a->nch; i++) {
        fleet_raw_cancel(a->ch[i]);
        fleet_raw_end_all(a->ch[i]);
    }
    teardown = server_decl(fleet_server(a->fleet, a->index))->teardown_ms;
    if (teardown <= 0)
        teardown = CONFIG_DEFAULT_TEARDOWN_MS;
    ev_timer_stop(a->loop, &a->grace);
    ev_timer_set(&a->grace, (teardown + AUDIT_GRACE_MS) / 1000.0, 0.);
    ev_timer_start(a->loop, &a->grace);
    audit_kick(a);
}

/* --- helpers for the checks ---------------------------------------------- */

struct fleet_raw *
audit_channel(struct audit *a, bool sse)
{
    struct fleet_raw *ch;

    if (a->nch >= AUDIT_CHANNELS)
        return NULL;
    ch = fleet_raw_open(a->fleet, a->index, sse, &audit_raw_host, a);
    if (ch != NULL)
        a->ch[a->nch++] = ch;
    return ch;
}

long
audit_timeout_ms(const struct audit *a)
{
    long t = server_decl(fleet_server(a->fleet, a->index))->timeout_ms;

    if (t <= 0)
        t = CONFIG_DEFAULT_TIMEOUT_MS;
    /* Inside the check's bound, so that a request's own timeout is what
     * a silent server meets first. */
    if (t > a->opt.check_timeout_ms * 2 / 3)
        t = a->opt.check_timeout_ms * 2 / 3;
    return t > 0 ? t : 1;
}

/* Send rq on ch; false (a->why says) when it cannot be sent. */
static bool
audit_request(struct audit *a, struct fleet_raw *ch,
    const struct fleet_raw_request *rq)
{
    char *cause = NULL;

    if (ch == NULL) {
        snprintf(a->why, sizeof(a->why), "no channel to the server");
        return false;
    }
    if (fleet_raw_send(ch, rq, &cause) != 0) {
        snprintf(a->why, sizeof(a->why), "%s", cause != NULL ? cause :
            "the request could not be sent");
        free(cause);
        return false;
    }
    return true;
}

bool
audit_send_within(struct audit *a, struct fleet_raw *ch, const char *rpc,
    const char *version, int session, long timeout_ms)
{
    struct fleet_raw_request rq = { .method = HTTP_POST, .rpc = rpc,
                                    .version = version, .session = session,
                                    .timeout_ms = timeout_ms };

    return audit_request(a, ch, &rq);
}

bool
audit_send(struct audit *a, struct fleet_raw *ch, const char *rpc,
    const char *version, int session)
{
    return audit_send_within(a, ch, rpc, version, session,
        audit_timeout_ms(a));
}

bool
audit_send_method(struct audit *a, struct fleet_raw *ch,
    enum http_method method, const char *body, const char *version,
    int session)
{
    struct fleet_raw_request rq = { .method = method, .body = body,
                                    .version = version, .session = session,
                                    .timeout_ms = audit_timeout_ms(a) };

    return audit_request(a, ch, &rq);
}

void
audit_describe(const struct fleet_raw_result *r, char *buf, size_t n)
{
    if (!r->answered) {
        snprintf(buf, n, "%s: %s", failure_kind_name(r->failure.kind),
            r->failure.detail);
        return;
    }
    if (r->rpc_error)
        snprintf(buf, n, "HTTP %ld with JSON-RPC error %ld%s%s%s", r->status,
            r->rpc_code, r->rpc_null_id ? " (id null)" : "",
            r->message[0] != '\0' ? ": " : "", r->message);
    else if (r->rpc_result)
        snprintf(buf, n, "HTTP %ld with a result", r->status);
    else if (r->status != 0)
        snprintf(buf, n, "HTTP %ld%s", r->status, r->event_stream ?
            " (text/event-stream)" : "");
    else
        snprintf(buf, n, "accepted");
}

enum audit_open
audit_open_step(struct audit *a, struct fleet_raw *ch, const char *version)
{
    const struct fleet_raw_result *r = &a->res;
    char                           said[160];

    switch (a->open_step) {
    case 0:
        a->open_step = 1;
        if (!audit_send(a, ch, "initialize", version, FLEET_RAW_NO_SESSION))
            return AUDIT_OPEN_FAILED;
        return AUDIT_OPEN_BUSY;
    case 1:
        if (!a->has_result)
            return AUDIT_OPEN_BUSY;
        if (!r->rpc_result) {
            audit_describe(r, said, sizeof(said));
            snprintf(a->why, sizeof(a->why), "initialize: %s", said);
            a->init_refused = r->answered;
            a->open_step = 4;
            return AUDIT_OPEN_FAILED;
        }
        snprintf(a->version, sizeof(a->version), "%s", r->version[0] !=
            '\0' ? r->version : version != NULL ? version :
            MCP_PROTOCOL_LATEST);
        /* Over stdio and HTTP+SSE the session is the channel's own. */
        a->session = fleet_raw_has_raw(ch) ? r->issued : 0;
        a->open_step = 2;
        if (!audit_send(a, ch, "notifications/initialized", a->version,
            a->session)) {
            a->open_step = 4;
            return AUDIT_OPEN_FAILED;
        }
        return AUDIT_OPEN_BUSY;
    case 2:
        if (!a->has_result)
            return AUDIT_OPEN_BUSY;
        if (!r->answered || r->status >= 300) {
            audit_describe(r, said, sizeof(said));
            snprintf(a->why, sizeof(a->why), "notifications/initialized "
                "after initialize worked: %.140s", said);
            /* 404 for the id just issued: the server did not lose it, a
             * replica that never held it answered (2025-11-25
             * basic/transports, Session Management: 404 is for an id the
             * server no longer knows). */
            if (r->status == 404 && a->session >= 0)
                a->lost_after_init = true;
            a->open_step = 4;
            return AUDIT_OPEN_FAILED;
        }
        a->open_step = 3;
        return a->session >= 0 ? AUDIT_OPEN_OK : AUDIT_OPEN_NO_SESSION;
    case 3:
        return a->session >= 0 ? AUDIT_OPEN_OK : AUDIT_OPEN_NO_SESSION;
    default:
        return AUDIT_OPEN_FAILED;
    }
}

void
audit_judge(struct audit *a, enum audit_check c, enum audit_verdict v,
    const char *fmt, ...)
{
    struct audit_result *r = &a->results[c];
    va_list              ap;

    if (r->done)
        return;
    r->done = true;
    r->verdict = v;
    r->grade = audit_grade(c, v);
    if (r->grade == AUDIT_GRADE_INVALID) {
        /* A check's own table never lists this: a bug, said as such. */
        r->grade = AUDIT_GRADE_ERROR;
        r->verdict = AUDIT_VERDICT_ERROR;
    }
    snprintf(r->word, sizeof(r->word), "%s", audit_verdict_name(r->verdict));
    r->detail[0] = '\0';
    if (fmt != NULL) {
        va_start(ap, fmt);
        vsnprintf(r->detail, sizeof(r->detail), fmt, ap);
        va_end(ap);
    }
    r->evidence = a->ev != NULL ? a->ev : cJSON_CreateObject();
    a->ev = cJSON_CreateObject();
}

/* --- public -------------------------------------------------------------- */

struct audit *
audit_new(struct fleet *f, size_t i, const struct audit_options *opt,
    void (*done)(void *arg, struct audit *a), void *arg)
{
    struct audit               *a = xcalloc(1, sizeof(*a));
    const struct config_server *d = server_decl(fleet_server(f, i));

    a->fleet = f;
    a->index = i;
    a->name = d->name;
    a->stdio = d->transport == CONFIG_STDIO;
    a->sse_decl = d->transport == CONFIG_HTTP && d->http_sse;
    a->mode = a->stdio ? AUDIT_MODE_STDIO : a->sse_decl ? AUDIT_MODE_SSE :
        AUDIT_MODE_HTTP;
    if (opt != NULL)
        a->opt = *opt;
    if (a->opt.check_timeout_ms <= 0)
        a->opt.check_timeout_ms = AUDIT_DEFAULT_CHECK_MS;
    a->loop = fleet_loop(f);
    a->done = done;
    a->done_arg = arg;
    ev_timer_init(&a->kick, audit_kick_cb, 0., 0.);
    a->kick.data = a;
    ev_timer_init(&a->bound, audit_bound_cb, 0., 0.);
    a->bound.data = a;
    ev_timer_init(&a->grace, audit_grace_cb, 0., 0.);
    a->grace.data = a;
    if (d->invalid != NULL)
        a->skipped = "invalid";
    else if (d->disabled)
        a->skipped = "disabled";
    else if (d->tap != NULL)
        a->skipped = "tap";     /* an agent's server, read from its tap:
                                   not the monitor's to dial */
    return a;
}

void
audit_start(struct audit *a)
{
    if (a->started)
        return;
    a->started = true;
    a->at = 0;
    if (a->skipped != NULL)
        a->at = audit_norder;
    audit_begin(a);
}

void
audit_stop(struct audit *a)
{
    if (a->finished || a->stopping)
        return;
    a->stopping = true;
    if (!a->started) {
        a->skipped = "interrupted";
        a->started = true;
        a->at = audit_norder;
        audit_kick(a);
        return;
    }
    if (!a->concluding)
        audit_conclude(a);
}

void
audit_free(struct audit *a)
{
    if (a == NULL)
        return;
    ev_timer_stop(a->loop, &a->kick);
    ev_timer_stop(a->loop, &a->bound);
    ev_timer_stop(a->loop, &a->grace);
    for (size_t i = 0; i < a->nch; i++)
        fleet_raw_free(a->ch[i]);
    for (size_t c = 0; c < AUDIT_CHECK__COUNT; c++)
        cJSON_Delete(a->results[c].evidence);
    cJSON_Delete(a->ev);
    free(a->tags);
    free(a);
}

bool
audit_finished(const struct audit *a)
{
    return a->finished;
}

bool
audit_started(const struct audit *a)
{
    return a->started;
}

const char *
audit_skipped(const struct audit *a)
{
    return a->skipped;
}

size_t
audit_index(const struct audit *a)
{
    return a->index;
}

const char *
audit_transport(const struct audit *a)
{
    switch (a->mode) {
    case AUDIT_MODE_SSE:
        return "sse";
    case AUDIT_MODE_STDIO:
    case AUDIT_MODE_STDIO_MODERN:
        return "stdio";
    default:
        return a->stdio ? "stdio" : "http";
    }
}

const struct audit_result *
audit_result(const struct audit *a, enum audit_check c)
{
    return (unsigned)c < AUDIT_CHECK__COUNT ? &a->results[c] : NULL;
}

void
audit_sessions(const struct audit *a, unsigned *opened, unsigned *ended)
{
    *opened = a->opened;
    /* A server seen serving a session after its 2xx DELETE keeps every
     * one it acknowledged so. */
    *ended = a->ended - (a->keeps_deleted ? a->terminated : 0);
}

bool
audit_clean(const struct audit *a)
{
    if (a->skipped != NULL || !a->finished)
        return false;
    for (size_t c = 0; c < AUDIT_CHECK__COUNT; c++) {
        const struct audit_result *r = &a->results[c];

        if (!r->done || r->grade == AUDIT_GRADE_BAD ||
            r->grade == AUDIT_GRADE_ERROR)
            return false;
    }
    return true;
}
