/*
 * Tests of a server (fleet/server*.c) through its public face
 * (engine/server.h), on a real libev loop (every run bounded, so none can
 * hang), one case or more per kind of server:
 *
 *   - dialed, on a fake transport the test makes (server_env's
 *     make_transport) that answers from a script: the schedule of pings
 *     (never sooner than the interval less its jitter), the backoff after
 *     failed dials (growing, with jitter, the next attempt said), the wait
 *     a server asked for (Retry-After) as the floor of the next exchange,
 *     and the endings (outcome and settlement apart, then stopped or
 *     dialed again);
 *   - replay: the recorded facts through the same record and getters, and
 *     no command acting on it;
 *   - tap: a {"tap": PATH} server read from a Unix socket the test
 *     listens on: linked on the tap's snapshot, down when it goes; never
 *     dialed, pinged or ended.
 *
 * Every event the server publishes is recorded and asserted on.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <ev.h>

#include "core/jsonrpc.h"
#include "engine/config.h"
#include "engine/failure.h"
#include "engine/server.h"
#include "fleet/server_int.h"
#include "transport/ending_run.h"
#include "transport/transport.h"
#include "util/clock.h"
#include "util/str.h"
#include "util/xmalloc.h"

#define BOUND_S 8.0     /* no run of the loop lasts longer */

/* How the fake answers one method (the first rule matching, not used
 * up); a method without one is never answered (or taken, for a
 * notification). */
enum fake_kind {
    FAKE_RESULT,        /* result with the request's id; a session issued
                           with an initialize's */
    FAKE_FAIL,          /* below JSON-RPC: evd */
};

struct fake_rule {
    const char             *method;
    int                     uses;       /* 0: every request */
    enum fake_kind          kind;
    const char             *result;
    struct failure_evidence evd;
    long                    retry_after_s;  /* 0: none asked */
};

#define MAX_RULES   16
#define MAX_SENT    256
#define MAX_EVENTS  512

struct sent {
    char      method[48];
    ev_tstamp at;           /* loop time */
};

struct seen {
    enum event_type   type;
    char              op[24];
    bool              completed;
    enum failure_kind kind;
    enum server_state state;
    int               outcome;      /* EVENT_ENDING / _SETTLED */
    bool              next_attempt; /* EVENT_EXCHANGE: one was said */
    enum health_state health;       /* EVENT_HEALTH */
};

struct fixture;
typedef bool (*until_fn)(const struct fixture *fx);

struct fake_transport;

struct fixture {
    struct ev_loop        *loop;
    struct server_env      env;
    struct config_server   decl;
    struct server         *s;
    struct fake_transport *ft;

    struct fake_rule       rules[MAX_RULES];
    int                    used[MAX_RULES];
    size_t                 nrules;
    struct sent            sent[MAX_SENT];
    size_t                 nsent;
    struct seen            seen[MAX_EVENTS];
    size_t                 nseen;
    unsigned               ends;            /* endings asked of the fake */
    unsigned               sessions_issued;
    unsigned               sessions_freed;  /* adopted ones given back */

    until_fn               until;
    size_t                 want;
    const char            *want_op;

    /* a child that exits crash_after_s after its listing, the first
     * crash_uses times (0: never) */
    double                 crash_after_s;
    unsigned               crash_uses;
    unsigned               crashed;
};

/* --- the fake transport ------------------------------------------------- */

struct fake_req {
    struct fake_transport  *ft;
    struct fake_req        *next;
    void                   *owner;
    int64_t                 id;
    const struct fake_rule *rule;
    ev_timer                go;         /* answered from the loop */
};

struct fake_transport {
    struct transport   base;
    struct fixture    *fx;
    char              *session;
    struct fake_req   *reqs;
    struct ending_run *run;             /* an ending under way */
    ev_timer           end_go;
    bool               dead;            /* the "child" exited */
    ev_timer           crash_go;
};

static struct fake_transport *
fake_of(struct transport *t)
{
    return (struct fake_transport *)t;
}

static void
fake_req_free(struct fake_req *r)
{
    struct fake_transport *ft = r->ft;

    for (struct fake_req **pp = &ft->reqs; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == r) {
            *pp = r->next;
            break;
        }
    }
    ev_timer_stop(ft->fx->loop, &r->go);
    free(r);
}

/* ev_timer: TRANSPORT_DONE for the request, as its rule says. */
static void
fake_answer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct fake_req         *r = w->data;
    struct fake_transport   *ft = r->ft;
    const struct fake_rule  *ru = r->rule;
    struct transport_result  res = { .retry_after_s = -1 };
    struct transport_event   e = { .type = TRANSPORT_DONE, .retry_ms = -1,
                                   .result = &res, .owner = r->owner };
    char                    *text = NULL;

    (void)loop;
    (void)revents;
    res.carried_session = ft->session != NULL;
    if (ru == NULL) {
        res.accepted = true;
        res.f.evd.http_status = 202;
    } else if (ru->kind == FAKE_RESULT) {
        text = str_printf("{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":%s}",
            (long long)r->id, ru->result != NULL ? ru->result : "{}");
        res.answer = jsonrpc_parse(text, strlen(text), NULL);
        free(text);
        assert_non_null(res.answer);
        res.f.evd.http_status = 200;
        res.f.evd.content_json = true;
        if (strcmp(ru->method, "initialize") == 0) {
            res.session = str_printf("sess-%u",
                ++ft->fx->sessions_issued);
        }
    } else {
        res.failed = true;
        transport_failure_set(&res.f, &ru->evd, "scripted failure");
        res.f.evd.http_status = ru->evd.http_status;
        if (ru->retry_after_s > 0)
            res.retry_after_s = ru->retry_after_s;
    }
    if (ru != NULL && ru->kind == FAKE_RESULT &&
        strcmp(ru->method, "tools/list") == 0 &&
        ft->fx->crashed < ft->fx->crash_uses) {
        ev_timer_set(&ft->crash_go, ft->fx->crash_after_s, 0.);
        ev_timer_start(ft->fx->loop, &ft->crash_go);
    }
    fake_req_free(r);
    transport_emit(&ft->base, &e);
    jsonrpc_free(res.answer);
    /* A session issued must be taken: adopted, or handed on. */
    assert_null(res.session);
}

static const struct fake_rule *
fake_rule_for(struct fixture *fx, const char *method)
{
    for (size_t i = 0; i < fx->nrules; i++) {
        const struct fake_rule *ru = &fx->rules[i];

        if (strcmp(ru->method, method) != 0 ||
            (ru->uses > 0 && fx->used[i] >= ru->uses))
            continue;
        fx->used[i]++;
        return ru;
    }
    return NULL;
}

static int
fake_open(struct transport *t, struct transport_failure *f)
{
    (void)f;
    fake_of(t)->dead = false;      /* a fresh "child" */
    return 0;
}

/* ev_timer: the "child" exits while idle, as stdio reports it: the
 * session goes with it, and the exit is the exchange "process". */
static void
fake_crash_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct fake_transport   *ft = w->data;
    struct transport_failure f = { .evd = { .child_closed = true,
                                            .peer_known_dead = true } };
    struct transport_event   e = { .type = TRANSPORT_LOST, .retry_ms = -1,
                                   .failure = &f, .op = "process" };

    (void)loop;
    (void)revents;
    ft->fx->crashed++;
    ft->dead = true;
    free(ft->session);
    ft->session = NULL;
    snprintf(f.detail, sizeof(f.detail), "the child exited with status 0");
    transport_emit(&ft->base, &e);
}

static struct transport_req *
fake_send(struct transport *t, const struct transport_msg *m, void *owner,
    char **cause)
{
    struct fake_transport *ft = fake_of(t);
    struct fixture        *fx = ft->fx;
    struct fake_req       *r = xcalloc(1, sizeof(*r));

    (void)cause;
    assert_true(fx->nsent < MAX_SENT);
    snprintf(fx->sent[fx->nsent].method, sizeof(fx->sent[0].method), "%s",
        m->method);
    fx->sent[fx->nsent++].at = ev_now(fx->loop);
    r->ft = ft;
    r->owner = owner;
    r->id = m->id;
    r->rule = fake_rule_for(fx, m->method);
    r->next = ft->reqs;
    ft->reqs = r;
    ev_timer_init(&r->go, fake_answer_cb, 0.001, 0.);
    r->go.data = r;
    /* A notification is taken (a 202); a request without a rule is never
     * answered. */
    if (r->rule != NULL || m->id < 0)
        ev_timer_start(fx->loop, &r->go);
    return (struct transport_req *)r;
}

static void
fake_cancel(struct transport *t, struct transport_req *tr,
    struct failure_evidence *evd_out)
{
    (void)t;
    (void)evd_out;
    fake_req_free((struct fake_req *)tr);
}

static void
fake_peek(struct transport *t, struct transport_req *tr,
    struct failure_evidence *evd_out)
{
    (void)t;
    (void)tr;
    (void)evd_out;
}

static void
fake_adopt(struct transport *t, char *session, const char *version)
{
    struct fake_transport *ft = fake_of(t);

    (void)version;
    free(ft->session);
    ft->session = session;
}

static char *
fake_release(struct transport *t)
{
    struct fake_transport *ft = fake_of(t);
    char                  *s = ft->session;

    ft->session = NULL;
    return s;
}

static bool
fake_has_session(const struct transport *t)
{
    return ((const struct fake_transport *)t)->session != NULL;
}

static void
fake_session_prefix(const struct transport *t, char *buf, size_t n)
{
    const char *s = ((const struct fake_transport *)t)->session;

    snprintf(buf, n, "%.8s", s != NULL ? s : "");
}

static bool
fake_alive(const struct transport *t)
{
    return !((const struct fake_transport *)t)->dead;
}

static void
fake_abandon(struct transport *t)
{
    (void)t;
}

/* ev_timer: the DELETE was answered 200: its exchange, the outcome, then
 * the settlement, as the HTTP transport reports them. */
static void
fake_end_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct fake_transport *ft = w->data;
    struct ending_run     *run = ft->run;
    struct ending_report   rep = { .outcome = ENDING_TERMINATED,
                                   .http_status = 200, .exit_code = -1 };

    (void)loop;
    (void)revents;
    ft->run = NULL;
    ending_run_report(run, &rep);
    ending_run_exchange(run, NULL, 2.0);
    ending_run_settle(run);
}

static void
fake_end(struct transport *t, struct ending_run *run, char *session,
    const char *version)
{
    struct fake_transport *ft = fake_of(t);

    (void)version;
    ft->fx->ends++;
    if (session == NULL)
        session = fake_release(t);
    if (session != NULL)
        ft->fx->sessions_freed++;
    free(session);
    ft->run = run;
    ev_timer_set(&ft->end_go, 0.01, 0.);
    ev_timer_start(ft->fx->loop, &ft->end_go);
}

static void
fake_end_deadline(struct transport *t, struct ending_run *run)
{
    (void)t;
    (void)run;
    fail_msg("the fake answers every DELETE before its deadline");
}

static void
fake_close(struct transport *t)
{
    struct fake_transport *ft = fake_of(t);

    while (ft->reqs != NULL)
        fake_req_free(ft->reqs);
    free(ft->session);
    ft->session = NULL;
}

static void
fake_free(struct transport *t)
{
    struct fake_transport *ft = fake_of(t);

    fake_close(t);
    ev_timer_stop(ft->fx->loop, &ft->end_go);
    ev_timer_stop(ft->fx->loop, &ft->crash_go);
    if (ft->fx->ft == ft)
        ft->fx->ft = NULL;
    free(ft);
}

static const struct transport_ops fake_ops = {
    .name = "fake",
    .open = fake_open,
    .send = fake_send,
    .cancel = fake_cancel,
    .peek = fake_peek,
    .adopt = fake_adopt,
    .release = fake_release,
    .has_session = fake_has_session,
    .session_prefix = fake_session_prefix,
    .alive = fake_alive,
    .abandon = fake_abandon,
    .end = fake_end,
    .end_deadline = fake_end_deadline,
    .close = fake_close,
    .free = fake_free,
};

/* server_env.make_transport */
static struct transport *
fake_make_transport(void *arg, const struct transport_env *env)
{
    struct fixture        *fx = arg;
    struct fake_transport *ft = xcalloc(1, sizeof(*ft));

    ft->base.ops = &fake_ops;
    ft->base.env = env;
    ft->fx = fx;
    ev_timer_init(&ft->end_go, fake_end_cb, 0., 0.);
    ft->end_go.data = ft;
    ev_timer_init(&ft->crash_go, fake_crash_cb, 0., 0.);
    ft->crash_go.data = ft;
    fx->ft = ft;
    return &ft->base;
}

/* --- the subscriber ----------------------------------------------------- */

static void
fixture_event_cb(void *arg, const struct event *e)
{
    struct fixture *fx = arg;
    struct seen    *v;

    assert_true(fx->nseen < MAX_EVENTS);
    v = &fx->seen[fx->nseen++];
    memset(v, 0, sizeof(*v));
    v->type = e->type;
    v->state = server_state(e->server);
    if (e->type == EVENT_EXCHANGE) {
        snprintf(v->op, sizeof(v->op), "%s", e->op);
        v->completed = e->completed;
        if (!e->completed)
            v->kind = e->failure->kind;
        v->next_attempt = server_next_attempt_ms(e->server) >= 0;
    }
    if (e->type == EVENT_HEALTH)
        v->health = e->health->state;
    if (e->type == EVENT_ENDING || e->type == EVENT_SETTLED)
        v->outcome = (int)e->ending->outcome;
}

/* --- fixtures and helpers ----------------------------------------------- */

static char fake_name[] = "fake";
static char fake_url[] = "http://127.0.0.1:9/mcp";

#define INIT_RESULT                                                     \
    "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"tools\":{}}," \
    "\"serverInfo\":{\"name\":\"fake\",\"version\":\"1.0\"}}"
#define TOOLS_AB    "{\"tools\":[{\"name\":\"a\"},{\"name\":\"b\"}]}"

static int
setup(void **state)
{
    struct fixture *fx = xcalloc(1, sizeof(*fx));

    /* The default loop: a tap's reader, like the fleet, runs on it. */
    fx->loop = ev_default_loop(0);
    fx->env.loop = fx->loop;
    fx->env.emit = fixture_event_cb;
    fx->env.emit_arg = fx;
    fx->env.no_streams = true;
    fx->env.make_transport = fake_make_transport;
    fx->env.make_transport_arg = fx;
    fx->decl.name = fake_name;
    fx->decl.transport = CONFIG_HTTP;
    fx->decl.url = fake_url;
    fx->decl.url_shown = fake_url;
    fx->decl.ping_interval_ms = 60000;
    fx->decl.timeout_ms = 2000;
    fx->decl.open_deadline_ms = 4000;
    fx->decl.teardown_ms = 1000;
    fx->decl.max_message_bytes = 1 << 20;
    fx->decl.era = CONFIG_ERA_LEGACY;
    *state = fx;
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *fx = *state;

    server_free(fx->s);
    /* What the loop still holds of it (none may fire once it is gone). */
    ev_run(fx->loop, EVRUN_NOWAIT);
    free(fx);
    return 0;
}

static void
rule(struct fixture *fx, struct fake_rule r)
{
    assert_true(fx->nrules < MAX_RULES);
    fx->rules[fx->nrules++] = r;
}

/* A healthy legacy server: initialize, one page of tools, pings. */
static void
script_healthy(struct fixture *fx)
{
    rule(fx, (struct fake_rule){ .method = "initialize",
        .kind = FAKE_RESULT, .result = INIT_RESULT });
    rule(fx, (struct fake_rule){ .method = "tools/list",
        .kind = FAKE_RESULT, .result = TOOLS_AB });
    rule(fx, (struct fake_rule){ .method = "ping", .kind = FAKE_RESULT });
}

static void
until_prepare_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
    struct fixture *fx = w->data;

    (void)revents;
    if (fx->until != NULL && fx->until(fx))
        ev_break(loop, EVBREAK_ONE);
}

static void
until_bound_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)w;
    (void)revents;
    ev_break(loop, EVBREAK_ONE);
}

/* Run the loop until fn holds or `seconds` pass. True when fn held. */
static bool
run_until(struct fixture *fx, until_fn fn, double seconds)
{
    ev_prepare prep;
    ev_timer   bound;

    if (fn(fx))
        return true;
    fx->until = fn;
    ev_prepare_init(&prep, until_prepare_cb);
    prep.data = fx;
    ev_set_priority(&prep, EV_MINPRI);
    ev_prepare_start(fx->loop, &prep);
    ev_timer_init(&bound, until_bound_cb, seconds, 0.);
    ev_timer_start(fx->loop, &bound);
    ev_now_update(fx->loop);
    ev_run(fx->loop, 0);
    ev_prepare_stop(fx->loop, &prep);
    ev_timer_stop(fx->loop, &bound);
    fx->until = NULL;
    return fn(fx);
}

static size_t
sent_count(const struct fixture *fx, const char *method)
{
    size_t n = 0;

    for (size_t i = 0; i < fx->nsent; i++)
        n += strcmp(fx->sent[i].method, method) == 0;
    return n;
}

/* The i-th request for method (0 first); NULL when fewer went. */
static const struct sent *
sent_nth(const struct fixture *fx, const char *method, size_t i)
{
    for (size_t k = 0; k < fx->nsent; k++) {
        if (strcmp(fx->sent[k].method, method) == 0 && i-- == 0)
            return &fx->sent[k];
    }
    return NULL;
}

/* How many exchanges of op ended (completed or failed). */
static size_t
exchanges_of(const struct fixture *fx, const char *op, bool completed)
{
    size_t n = 0;

    for (size_t i = 0; i < fx->nseen; i++)
        n += fx->seen[i].type == EVENT_EXCHANGE &&
            strcmp(fx->seen[i].op, op) == 0 &&
            fx->seen[i].completed == completed;
    return n;
}

static size_t
events_of(const struct fixture *fx, enum event_type type)
{
    size_t n = 0;

    for (size_t i = 0; i < fx->nseen; i++)
        n += fx->seen[i].type == type;
    return n;
}

static bool
is_ready(const struct fixture *fx)
{
    return server_state(fx->s) == SERVER_READY;
}

static bool
is_stopped(const struct fixture *fx)
{
    return server_state(fx->s) == SERVER_STOPPED;
}

static bool
pings_reached(const struct fixture *fx)
{
    return exchanges_of(fx, "ping", true) >= fx->want;
}

static bool
failed_dials_reached(const struct fixture *fx)
{
    return exchanges_of(fx, "dial", false) >= fx->want;
}

static bool
settled_reached(const struct fixture *fx)
{
    return events_of(fx, EVENT_SETTLED) >= fx->want;
}

static bool
dials_reached(const struct fixture *fx)
{
    return exchanges_of(fx, "dial", true) >= fx->want &&
        server_state(fx->s) == SERVER_READY;
}

/* Make the server and dial it until it is ready. */
static void
start_ready(struct fixture *fx)
{
    fx->s = server_new(&fx->env, &fx->decl, 0);
    server_start(fx->s);
    assert_true(run_until(fx, is_ready, BOUND_S));
}

/* --- dialed: the schedule ----------------------------------------------- */

/* A ready server pings at its interval: never sooner than the interval
 * less the 10% jitter, and each ping is an exchange of the record. */
static void
test_dialed_pings_at_the_interval(void **state)
{
    struct fixture *fx = *state;
    const double    iv = 0.2;

    fx->decl.ping_interval_ms = (long)(iv * 1000);
    script_healthy(fx);
    start_ready(fx);
    assert_int_equal(exchanges_of(fx, "dial", true), 1);
    assert_int_equal(sent_count(fx, "initialize"), 1);
    assert_string_equal(server_transport_name(fx->s), "fake");
    assert_int_equal(server_tools(fx->s), 2);
    fx->want = 3;
    assert_true(run_until(fx, pings_reached, BOUND_S));
    for (size_t i = 1; i < 3; i++) {
        double gap = sent_nth(fx, "ping", i)->at -
            sent_nth(fx, "ping", i - 1)->at;

        assert_true(gap >= iv * 0.9 - 0.005);
    }
    assert_true(server_pings_done(fx->s) >= 3);
    assert_int_equal(server_health(fx->s, NULL).state, HEALTH_OK);
    assert_true(server_ok(fx->s));
}

/* Failed dials back off: about 1 s, then about 2 s (exponential, jitter
 * 0.8-1.2), each planned before its failure is published so that
 * next_attempt says when; the liveness record is unreachable and health
 * down. */
static void
test_dialed_backoff_grows(void **state)
{
    struct fixture *fx = *state;
    int64_t         first, second;

    rule(fx, (struct fake_rule){ .method = "initialize", .kind = FAKE_FAIL,
        .evd = { .net = NET_CONNECT, .os_errno = ECONNREFUSED } });
    fx->s = server_new(&fx->env, &fx->decl, 0);
    server_start(fx->s);
    fx->want = 1;
    assert_true(run_until(fx, failed_dials_reached, BOUND_S));
    assert_int_equal(server_state(fx->s), SERVER_BACKOFF);
    first = server_next_attempt_ms(fx->s) - clock_wall_ms();
    assert_in_range(first, 700, 1300);
    assert_int_equal(server_liveness(fx->s)->state, LIVENESS_UNREACHABLE);
    assert_int_equal(server_health(fx->s, NULL).state, HEALTH_DOWN);
    fx->want = 2;
    assert_true(run_until(fx, failed_dials_reached, BOUND_S));
    second = server_next_attempt_ms(fx->s) - clock_wall_ms();
    assert_in_range(second, 1500, 2500);
    assert_int_equal(sent_count(fx, "initialize"), 2);
    assert_int_equal(server_fail_streak(fx->s), 2);
    assert_int_equal(server_dials(fx->s), 2);
}

static bool
crashes_reached(const struct fixture *fx)
{
    return exchanges_of(fx, "process", false) >= fx->want &&
        server_state(fx->s) == SERVER_BACKOFF;
}

static bool
is_health_ok(const struct fixture *fx)
{
    return server_health(fx->s, NULL).state == HEALTH_OK;
}

/* A crash loop (issue 45, item 4): a child that exits 50 ms after its
 * dial, twice. Each exit is a failed dial: the backoff grows (about 1 s,
 * then about 2 s), the "process" exchange says when the next start is,
 * and health stays down, in the crash loop's words, through the next
 * dial that completes; only the child that outlives the window (1 s
 * here) makes it ok again. */
static void
test_dialed_crash_loop_backs_off(void **state)
{
    struct fixture    *fx = *state;
    const struct sent *d1, *d2;
    struct health      h;
    size_t             first_down = 0;

    fx->decl.crash_window_ms = 1000;
    fx->crash_after_s = 0.05;
    fx->crash_uses = 2;
    script_healthy(fx);
    start_ready(fx);
    fx->want = 1;
    assert_true(run_until(fx, crashes_reached, BOUND_S));
    h = server_health(fx->s, NULL);
    assert_int_equal(h.state, HEALTH_DOWN);
    assert_non_null(strstr(h.reason, "crash loop: exited 1 time"));
    fx->want = 2;
    assert_true(run_until(fx, dials_reached, BOUND_S));
    /* The fresh child answers; it has not outlived the window. */
    assert_int_equal(server_health(fx->s, NULL).state, HEALTH_DOWN);
    assert_true(run_until(fx, crashes_reached, BOUND_S));
    h = server_health(fx->s, NULL);
    assert_int_equal(h.state, HEALTH_DOWN);
    assert_non_null(strstr(h.reason, "crash loop: exited 2 times"));
    assert_in_range(server_next_attempt_ms(fx->s) - clock_wall_ms(),
        1400, 2500);
    fx->want = 3;
    assert_true(run_until(fx, dials_reached, BOUND_S));
    d1 = sent_nth(fx, "initialize", 1);
    d2 = sent_nth(fx, "initialize", 2);
    assert_non_null(d2);
    assert_true(d2->at - d1->at >= 1.5);
    assert_int_equal(server_health(fx->s, NULL).state, HEALTH_DOWN);
    assert_true(run_until(fx, is_health_ok, 3.0));
    for (size_t i = 0; i < fx->nseen; i++) {
        const struct seen *v = &fx->seen[i];

        if (v->type == EVENT_EXCHANGE && strcmp(v->op, "process") == 0)
            assert_true(v->next_attempt);
        if (v->type == EVENT_HEALTH && v->health == HEALTH_DOWN &&
            first_down == 0)
            first_down = i;
    }
    assert_true(first_down > 0);
    /* Between the first crash and the window outlived: never ok but
     * the last. */
    for (size_t i = first_down, oks = 0; i < fx->nseen; i++) {
        if (fx->seen[i].type == EVENT_HEALTH &&
            fx->seen[i].health == HEALTH_OK)
            assert_int_equal(++oks, 1);
    }
    assert_int_equal(server_dials(fx->s), 3);
}

/* The crash window's default: the longer of 10 s and two pings; a
 * configured one wins. */
static void
test_crash_window(void **state)
{
    struct config_server d = { .ping_interval_ms = 15000 };

    (void)state;
    assert_true(server_crash_window_s(&d) == 30.0);
    d.ping_interval_ms = 1000;
    assert_true(server_crash_window_s(&d) == 10.0);
    d.crash_window_ms = 2500;
    assert_true(server_crash_window_s(&d) == 2.5);
}

static bool
ping_failed(const struct fixture *fx)
{
    return exchanges_of(fx, "ping", false) >= 1;
}

/* A 429 with Retry-After to a ping: nothing goes to the server before
 * the wait passes (the next attempt says when), then the pings go on. */
static void
test_dialed_retry_after_is_the_floor(void **state)
{
    struct fixture    *fx = *state;
    const struct sent *failed, *next;
    int64_t            at;
    size_t             before;

    fx->decl.ping_interval_ms = 100;
    rule(fx, (struct fake_rule){ .method = "initialize", .uses = 1,
        .kind = FAKE_RESULT, .result = INIT_RESULT });
    rule(fx, (struct fake_rule){ .method = "tools/list",
        .kind = FAKE_RESULT, .result = TOOLS_AB });
    rule(fx, (struct fake_rule){ .method = "ping", .uses = 1,
        .kind = FAKE_FAIL, .evd = { .http_status = 429 },
        .retry_after_s = 2 });
    rule(fx, (struct fake_rule){ .method = "ping", .kind = FAKE_RESULT });
    start_ready(fx);
    assert_true(run_until(fx, ping_failed, BOUND_S));
    at = server_next_attempt_ms(fx->s);
    assert_true(at - clock_wall_ms() >= 1500);
    /* For a second of the wait, nothing more goes out. */
    before = fx->nsent;
    run_until(fx, is_stopped, 1.0);
    assert_int_equal(fx->nsent, before);
    fx->want = 1;
    assert_true(run_until(fx, pings_reached, BOUND_S));
    failed = sent_nth(fx, "ping", 0);
    next = sent_nth(fx, "ping", 1);
    assert_non_null(next);
    assert_true(next->at - failed->at >= 1.9);
}

/* --- dialed: endings ---------------------------------------------------- */

/* server_end on a ready session: the DELETE's outcome, then its
 * settlement, apart; the session id was given to the ending (once), and
 * the server stops. Asking again while it runs gives the same ending. */
static void
test_dialed_end_then_stop(void **state)
{
    struct fixture      *fx = *state;
    const struct ending *e, *again;

    script_healthy(fx);
    start_ready(fx);
    assert_true(server_has_session(fx->s));
    e = server_end(fx->s, false);
    assert_non_null(e);
    again = server_end(fx->s, false);
    assert_ptr_equal(e, again);
    assert_int_equal(server_state(fx->s), SERVER_ENDING);
    assert_true(server_ending_busy(fx->s));
    fx->want = 1;
    assert_true(run_until(fx, settled_reached, BOUND_S));
    assert_true(run_until(fx, is_stopped, BOUND_S));
    assert_int_equal(fx->ends, 1);
    assert_int_equal(fx->sessions_freed, 1);
    assert_int_equal(events_of(fx, EVENT_ENDING), 1);
    assert_int_equal(e->outcome, ENDING_TERMINATED);
    assert_true(e->settled);
    assert_int_equal(server_ending_count(fx->s), 1);
    assert_ptr_equal(server_ending(fx->s, 0), e);
    assert_false(server_ending_busy(fx->s));
    /* The DELETE is an exchange of the record. */
    assert_int_equal(exchanges_of(fx, "delete", true), 1);
    /* Nothing to end any more. */
    assert_null(server_end(fx->s, false));
}

/* server_end with redial: the fresh dial follows the settlement. */
static void
test_dialed_end_then_redial(void **state)
{
    struct fixture *fx = *state;

    script_healthy(fx);
    start_ready(fx);
    assert_non_null(server_end(fx->s, true));
    fx->want = 2;
    assert_true(run_until(fx, dials_reached, BOUND_S));
    assert_int_equal(fx->ends, 1);
    assert_int_equal(fx->sessions_issued, 2);
    assert_int_equal(server_dials(fx->s), 2);
    assert_true(server_has_session(fx->s));
}

/* Pause and resume: no pings while paused, one soon after. */
static void
test_dialed_pause_resume(void **state)
{
    struct fixture *fx = *state;
    size_t          pings;

    fx->decl.ping_interval_ms = 100;
    script_healthy(fx);
    start_ready(fx);
    server_pause(fx->s);
    assert_int_equal(server_state(fx->s), SERVER_PAUSED);
    assert_int_equal(server_health(fx->s, NULL).state, HEALTH_PAUSED);
    pings = sent_count(fx, "ping");
    run_until(fx, is_stopped, 0.5);
    assert_int_equal(sent_count(fx, "ping"), pings);
    server_resume(fx->s);
    assert_int_equal(server_state(fx->s), SERVER_READY);
    fx->want = exchanges_of(fx, "ping", true) + 1;
    assert_true(run_until(fx, pings_reached, BOUND_S));
}

/* --- replay ------------------------------------------------------------- */

/* A replayed server: each fact through the same record and events; no
 * command acts on it. */
static void
test_replay_facts_and_no_commands(void **state)
{
    struct fixture          *fx = *state;
    struct failure_evidence  evd = { .net = NET_CONNECT,
                                     .os_errno = ECONNREFUSED };
    struct failure           f;
    struct server_fact       fact = { 0 };
    struct mcp_session_info  si;

    fx->s = server_new(&fx->env, &fx->decl, 0);
    server_replay_begin(fx->s);
    failure_make(&f, &evd, FAILURE_SITE_REQUEST, "refused");
    fact.type = SERVER_FACT_EXCHANGE;
    fact.at = 1700000000000;
    fact.op = "ping";
    fact.failure = &f;
    server_replay(fx->s, &fact);
    assert_int_equal(server_liveness(fx->s)->state, LIVENESS_UNREACHABLE);
    assert_int_equal(events_of(fx, EVENT_LIVENESS), 1);
    assert_int_equal(server_history_len(fx->s), 1);
    memset(&fact, 0, sizeof(fact));
    fact.type = SERVER_FACT_STATE;
    fact.state = SERVER_READY;
    fact.era = MCP_ERA_LEGACY;
    fact.protocol_version = "2025-06-18";
    fact.tools = 4;
    fact.rtt_ms = 12.5;
    server_replay(fx->s, &fact);
    memset(&fact, 0, sizeof(fact));
    fact.type = SERVER_FACT_HEALTH;
    fact.health = HEALTH_DOWN;
    fact.health_reason = "recorded";
    server_replay(fx->s, &fact);
    assert_int_equal(server_health(fx->s, NULL).state, HEALTH_DOWN);
    assert_int_equal(server_tools(fx->s), 4);
    assert_int_equal(server_era(fx->s), MCP_ERA_LEGACY);
    server_session(fx->s, &si);
    assert_string_equal(si.protocol_version, "2025-06-18");
    /* Inert: nothing is dialed, pinged or ended. */
    assert_null(server_end(fx->s, false));
    assert_false(server_ping_now(fx->s));
    server_redial(fx->s);
    server_pause(fx->s);
    assert_int_equal(server_state(fx->s), SERVER_READY);
    assert_false(server_is_tap(fx->s));
    run_until(fx, is_stopped, 0.2);
    assert_int_equal(fx->nsent, 0);
    server_replay_reset(fx->s);
    assert_int_equal(server_history_len(fx->s), 0);
}

/* --- tap ---------------------------------------------------------------- */

struct tap_peer {
    int listen_fd;
    int fd;
};

static bool
tap_linked(const struct fixture *fx)
{
    return server_state(fx->s) == SERVER_READY;
}

static bool
tap_down(const struct fixture *fx)
{
    return exchanges_of(fx, "tap", false) >= fx->want;
}

/* A tap's server: linked on the tap's snapshot (READY), down with a
 * "tap" exchange when the tap goes; never dialed, pinged or ended. */
static void
test_tap_linked_then_lost(void **state)
{
    struct fixture     *fx = *state;
    struct sockaddr_un  sa = { .sun_family = AF_UNIX };
    char                path[96];
    struct tap_peer     peer = { -1, -1 };
    static const char   snap[] = "{\"event\":\"snapshot\",\"tap\":{\"pid\":1,"
                                 "\"server_pid\":2,\"command\":\"x\"},"
                                 "\"in_flight\":[]}\n";

    snprintf(path, sizeof(path), "/tmp/mcptop-test-server-%ld.sock",
        (long)getpid());
    unlink(path);
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    peer.listen_fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(peer.listen_fd >= 0);
    assert_int_equal(bind(peer.listen_fd, (struct sockaddr *)&sa,
        sizeof(sa)), 0);
    assert_int_equal(listen(peer.listen_fd, 4), 0);
    fx->decl.tap = path;
    fx->s = server_new(&fx->env, &fx->decl, 0);
    assert_true(server_is_tap(fx->s));
    assert_string_equal(server_transport_name(fx->s), "tap");
    assert_string_equal(server_liveness_method(fx->s), "traffic");
    server_start(fx->s);
    /* The reader connects from the loop: take it, then say where the
     * tap stands. */
    run_until(fx, tap_linked, 0.3);
    peer.fd = accept(peer.listen_fd, NULL, NULL);
    assert_true(peer.fd >= 0);
    assert_int_equal(write(peer.fd, snap, sizeof(snap) - 1),
        (ssize_t)(sizeof(snap) - 1));
    assert_true(run_until(fx, tap_linked, BOUND_S));
    assert_true(server_dial_settled(fx->s));
    assert_int_equal(server_in_flight(fx->s), 0);
    assert_null(server_end(fx->s, false));
    assert_false(server_ping_now(fx->s));
    assert_false(server_probe_now(fx->s));
    {
        struct mcp_session_info si;

        server_session(fx->s, &si);
        assert_false(si.open);
    }
    /* The tap goes away: down, with the link's exchange. */
    close(peer.fd);
    close(peer.listen_fd);
    unlink(path);
    fx->want = 1;
    assert_true(run_until(fx, tap_down, BOUND_S));
    assert_int_equal(server_state(fx->s), SERVER_BACKOFF);
    assert_int_equal(server_liveness(fx->s)->state, LIVENESS_UNREACHABLE);
    assert_int_equal(fx->nsent, 0);
    fx->decl.tap = NULL;
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_dialed_pings_at_the_interval,
            setup, teardown),
        cmocka_unit_test_setup_teardown(test_dialed_crash_loop_backs_off,
            setup, teardown),
        cmocka_unit_test(test_crash_window),
        cmocka_unit_test_setup_teardown(test_dialed_backoff_grows, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_dialed_retry_after_is_the_floor,
            setup, teardown),
        cmocka_unit_test_setup_teardown(test_dialed_end_then_stop, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_dialed_end_then_redial, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_dialed_pause_resume, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_replay_facts_and_no_commands,
            setup, teardown),
        cmocka_unit_test_setup_teardown(test_tap_linked_then_lost, setup,
            teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
