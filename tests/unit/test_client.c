/*
 * Tests of the MCP lifecycle (mcp/client*.c) alone, on a real libev loop
 * (every run bounded by a timer, so none can hang), between two fakes:
 *
 *   - a host (struct client_host) that records every report: each
 *     exchange with its op and failure kind, the dial's end with its site,
 *     kind and named step, the retry policy's questions and what follows,
 *     orphan sessions handed over to be ended, tools changed, busy work,
 *     log lines; it plays the server's part only as far as a test needs
 *     (a dial again when the policy says so);
 *   - a transport (struct transport_ops, given through
 *     client_host.make_transport) that answers from a script: a JSON-RPC
 *     result or error for a method, a failure below JSON-RPC with its
 *     evidence (http_status 404, a refused connect), a session issued with
 *     an answer, an answer held back on a timer or never sent; it records
 *     every message sent (method, id, flags, body, whether it carried the
 *     session) and delivers from the loop, never inside a send.
 *
 * Each case asserts what the code does today (read from client*.c), so a
 * change of behaviour shows here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "engine/config.h"
#include "engine/failure.h"
#include "engine/server.h"
#include "core/jsonrpc.h"
#include "mcp/client_int.h"
#include "transport/transport.h"
#include "util/str.h"
#include "util/xmalloc.h"

#define BOUND_S 5.0     /* no run of the loop lasts longer */

/* --- the script --------------------------------------------------------- */

enum fake_kind {
    FAKE_RESULT,        /* {"result": result} with the request's id */
    FAKE_ERROR,         /* {"error": {"code": code}} with the request's id */
    FAKE_FAIL,          /* a failure below JSON-RPC: evd, detail */
    FAKE_ACCEPT,        /* a notification taken (HTTP 202) */
    FAKE_SILENT,        /* never answered */
};

/* How the transport answers a request for `method` (the first rule that
 * matches and is not used up). */
struct fake_rule {
    const char             *method;
    int                     uses;       /* requests it answers; 0: all */
    enum fake_kind          kind;
    const char             *result;     /* JSON text ("{}" when NULL) */
    long                    code;
    struct failure_evidence evd;
    const char             *detail;
    const char             *session;    /* issued with the answer */
    double                  delay_s;    /* answered later, on a timer */
};

#define MAX_RULES 16

static const struct fake_rule fake_default_accept = { .kind = FAKE_ACCEPT };
static const struct fake_rule fake_default_silent = { .kind = FAKE_SILENT };

/* One message the lifecycle sent. */
struct fake_sent {
    char        method[48];
    int64_t     id;
    unsigned    flags;
    bool        carried;        /* it carried the session */
    char       *body;
    ev_tstamp   at;             /* loop time */
};

/* --- the host's records ------------------------------------------------- */

struct rec {
    const char        *op;      /* exchanges; NULL for dials */
    bool               completed;
    enum failure_kind  kind;
    enum delivered     delivered;
    enum failure_site  site;
    long               http_status;
    bool               has_rpc_code;
    long               rpc_code;
    char               detail[256];
};

struct orphan {
    char *session;
    char *protocol_version;     /* NULL when none was given */
    char  why[160];
    bool  half_open;            /* a dial left it (not an open session) */
};

#define MAX_RECS    64
#define MAX_LOG     256

struct fake_transport;
struct fixture;

/* A condition run_until waits for. */
typedef bool (*until_fn)(const struct fixture *fx);

struct fixture {
    struct ev_loop        *loop;
    struct client_env      env;
    struct config_server   decl;
    struct client         *c;
    struct fake_transport *ft;          /* the client's transport */

    /* the transport's script */
    struct fake_rule       rules[MAX_RULES];
    int                    used[MAX_RULES];
    size_t                 nrules;
    unsigned               caps;        /* TRANSPORT_CAP_* */

    /* what the transport saw */
    struct fake_sent      *sent;
    size_t                 nsent, sent_cap;
    unsigned               cancels;
    unsigned               abandons;
    unsigned               opens;
    unsigned               sessions_dropped;    /* issued, not taken */

    /* the host: what it answers */
    enum client_phase      state;
    long                   timeout_ms;
    long                   open_deadline_ms;
    bool                   redials;     /* retries' answer */

    /* the host: what it was told */
    struct rec             exchanges[MAX_RECS];
    size_t                 nexchanges;
    struct rec             dials[MAX_RECS];
    size_t                 ndials;
    enum client_loss       asked[MAX_RECS];     /* retries */
    size_t                 nasked;
    enum client_loss       retried[MAX_RECS];   /* retry */
    size_t                 nretried;
    struct orphan          orphans[8];
    size_t                 norphans;
    long                   tools_changed[8];
    size_t                 ntools_changed;
    char                   server_asked[8][96];    /* method id answered */
    size_t                 nserver_asked;
    int                    busy, busy_max;
    char                  *log[MAX_LOG];
    size_t                 nlog;

    until_fn               until;       /* what run_until waits for */
    size_t                 want;        /* ...and its number */
};

/* --- the fake transport ------------------------------------------------- */

struct fake_req {
    struct fake_transport  *ft;
    struct fake_req        *next;       /* in flight */
    void                   *owner;
    int64_t                 id;
    bool                    carried;
    const struct fake_rule *rule;
    ev_timer                later;
    bool                    queued;
};

/* An answer or a message waiting for the flush. */
struct fake_item {
    struct fake_item   *next;
    struct fake_req    *req;
    struct jsonrpc_msg *msg;
};

struct fake_transport {
    struct transport      base;
    struct transport_ops  ops;          /* fake_ops with the test's caps */
    struct fixture       *fx;
    char                 *session;
    struct fake_req      *reqs;
    struct fake_item     *head, **tail;
    ev_prepare            flush;
};

static struct fake_transport *
fake_of(struct transport *t)
{
    return (struct fake_transport *)t;
}

static const struct fake_rule *
fake_rule_for(struct fixture *fx, const char *method, int64_t id)
{
    for (size_t i = 0; i < fx->nrules; i++) {
        const struct fake_rule *ru = &fx->rules[i];

        if (strcmp(ru->method, method) != 0)
            continue;
        if (ru->uses > 0 && fx->used[i] >= ru->uses)
            continue;
        fx->used[i]++;
        return ru;
    }
    return id < 0 ? &fake_default_accept : &fake_default_silent;
}

static void
fake_queue(struct fake_transport *ft, struct fake_req *r,
    struct jsonrpc_msg *msg)
{
    struct fake_item *it = xcalloc(1, sizeof(*it));

    it->req = r;
    it->msg = msg;
    if (r != NULL)
        r->queued = true;
    *ft->tail = it;
    ft->tail = &it->next;
    if (!ev_is_active(&ft->flush))
        ev_prepare_start(ft->fx->loop, &ft->flush);
}

static struct fake_item *
fake_pop(struct fake_transport *ft)
{
    struct fake_item *it = ft->head;

    if (it == NULL)
        return NULL;
    ft->head = it->next;
    if (ft->head == NULL)
        ft->tail = &ft->head;
    return it;
}

/* Unlink r (and its queued answer), stop its timer, free it. */
static void
fake_req_free(struct fake_transport *ft, struct fake_req *r)
{
    for (struct fake_req **pp = &ft->reqs; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == r) {
            *pp = r->next;
            break;
        }
    }
    if (r->queued) {
        struct fake_item **pp = &ft->head;

        ft->tail = &ft->head;
        while (*pp != NULL) {
            struct fake_item *it = *pp;

            if (it->req == r) {
                *pp = it->next;
                free(it);
            } else {
                pp = &it->next;
                ft->tail = pp;
            }
        }
    }
    ev_timer_stop(ft->fx->loop, &r->later);
    free(r);
}

/* TRANSPORT_DONE for r, as its rule says. */
static void
fake_answer(struct fake_transport *ft, struct fake_req *r)
{
    struct fixture          *fx = ft->fx;
    const struct fake_rule  *ru = r->rule;
    struct transport_result  res = { .retry_after_s = -1 };
    struct transport_event   e = { .type = TRANSPORT_DONE, .retry_ms = -1 };
    char                    *text = NULL;

    e.owner = r->owner;
    e.result = &res;
    res.carried_session = r->carried;
    switch (ru->kind) {
    case FAKE_RESULT:
        text = str_printf("{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":%s}",
            (long long)r->id, ru->result != NULL ? ru->result : "{}");
        res.f.evd.http_status = 200;
        res.f.evd.content_json = true;
        break;
    case FAKE_ERROR:
        text = str_printf("{\"jsonrpc\":\"2.0\",\"id\":%lld,\"error\":"
            "{\"code\":%ld,\"message\":\"scripted\"}}", (long long)r->id,
            ru->code);
        res.f.evd.http_status = 200;
        res.f.evd.content_json = true;
        break;
    case FAKE_FAIL:
        res.failed = true;
        transport_failure_set(&res.f, &ru->evd, "%s",
            ru->detail != NULL ? ru->detail : "scripted failure");
        break;
    case FAKE_ACCEPT:
        res.accepted = true;
        res.f.evd.http_status = 202;
        break;
    case FAKE_SILENT:
        return;
    }
    if (text != NULL) {
        res.answer = jsonrpc_parse(text, strlen(text), NULL);
        free(text);
        assert_non_null(res.answer);
    }
    if (ru->session != NULL)
        res.session = xstrdup(ru->session);
    /* Done with it before the lifecycle hears (it may send at once). */
    fake_req_free(ft, r);
    transport_emit(&ft->base, &e);
    jsonrpc_free(res.answer);
    if (res.session != NULL) {
        /* Every session issued must be adopted or handed on. */
        fx->sessions_dropped++;
        free(res.session);
    }
}

/* ev_prepare: deliver what waits, in order, before the loop blocks. */
static void
fake_flush_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
    struct fake_transport *ft = w->data;
    struct fake_item      *it;

    (void)revents;
    ev_prepare_stop(loop, w);
    while ((it = fake_pop(ft)) != NULL) {
        struct fake_req    *r = it->req;
        struct jsonrpc_msg *msg = it->msg;

        free(it);
        if (r != NULL) {
            r->queued = false;
            fake_answer(ft, r);
        } else {
            struct transport_event e = { .type = TRANSPORT_MESSAGE,
                                         .msg = msg, .retry_ms = -1 };

            transport_emit(&ft->base, &e);
            jsonrpc_free(msg);
        }
    }
}

/* ev_timer: an answer held back is due. */
static void
fake_later_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct fake_req *r = w->data;

    (void)loop;
    (void)revents;
    fake_answer(r->ft, r);
}

/* transport_ops.open: ready at once. */
static int
fake_open(struct transport *t, struct transport_failure *f)
{
    (void)f;
    fake_of(t)->fx->opens++;
    return 0;
}

/* transport_ops.send */
static struct transport_req *
fake_send(struct transport *t, const struct transport_msg *m, void *owner,
    char **cause)
{
    struct fake_transport *ft = fake_of(t);
    struct fixture        *fx = ft->fx;
    struct fake_req       *r = xcalloc(1, sizeof(*r));
    struct fake_sent      *s;

    (void)cause;
    if (fx->nsent == fx->sent_cap) {
        fx->sent_cap = fx->sent_cap ? fx->sent_cap * 2 : 16;
        fx->sent = xrealloc(fx->sent, fx->sent_cap * sizeof(*fx->sent));
    }
    r->ft = ft;
    r->owner = owner;
    r->id = m->id;
    /* As Streamable HTTP: every legacy POST but initialize carries it. */
    r->carried = ft->session != NULL &&
        !(m->flags & (TRANSPORT_INITIALIZE | TRANSPORT_MODERN));
    r->rule = fake_rule_for(fx, m->method, m->id);
    r->next = ft->reqs;
    ft->reqs = r;
    ev_timer_init(&r->later, fake_later_cb, 0., 0.);
    r->later.data = r;
    s = &fx->sent[fx->nsent++];
    memset(s, 0, sizeof(*s));
    snprintf(s->method, sizeof(s->method), "%s", m->method);
    s->id = m->id;
    s->flags = m->flags;
    s->carried = r->carried;
    s->body = xmalloc(m->len + 1);
    memcpy(s->body, m->body, m->len);
    s->body[m->len] = '\0';
    s->at = ev_now(fx->loop);
    if (r->rule->kind != FAKE_SILENT) {
        if (r->rule->delay_s > 0) {
            ev_timer_set(&r->later, r->rule->delay_s, 0.);
            ev_timer_start(fx->loop, &r->later);
        } else {
            fake_queue(ft, r, NULL);
        }
    }
    return (struct transport_req *)r;
}

/* transport_ops.cancel: no TRANSPORT_DONE follows. */
static void
fake_cancel(struct transport *t, struct transport_req *tr,
    struct failure_evidence *evd_out)
{
    (void)evd_out;
    fake_of(t)->fx->cancels++;
    fake_req_free(fake_of(t), (struct fake_req *)tr);
}

/* transport_ops.peek: nothing to tell. */
static void
fake_peek(struct transport *t, struct transport_req *tr,
    struct failure_evidence *evd_out)
{
    (void)t;
    (void)tr;
    (void)evd_out;
}

/* transport_ops.adopt (takes session) */
static void
fake_adopt(struct transport *t, char *session, const char *protocol_version)
{
    struct fake_transport *ft = fake_of(t);

    (void)protocol_version;
    free(ft->session);
    ft->session = session;
}

/* transport_ops.release (the caller takes it) */
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
    (void)t;
    return true;
}

static void
fake_abandon(struct transport *t)
{
    fake_of(t)->fx->abandons++;
}

/* transport_ops.end: these tests hand orphans to the host, which records
 * them; nothing here ends a session on the wire. */
static void
fake_end(struct transport *t, struct ending_run *run, char *session,
    const char *protocol_version)
{
    (void)t;
    (void)run;
    (void)protocol_version;
    free(session);
    fail_msg("the fake transport was asked to end a session");
}

static void
fake_end_deadline(struct transport *t, struct ending_run *run)
{
    (void)t;
    (void)run;
    fail_msg("the fake transport runs no ending");
}

/* transport_ops.close: everything in flight goes, with no DONE. */
static void
fake_close(struct transport *t)
{
    struct fake_transport *ft = fake_of(t);
    struct fake_item      *it;

    while ((it = fake_pop(ft)) != NULL) {
        jsonrpc_free(it->msg);
        if (it->req != NULL)
            it->req->queued = false;
        free(it);
    }
    while (ft->reqs != NULL)
        fake_req_free(ft, ft->reqs);
    ev_prepare_stop(ft->fx->loop, &ft->flush);
    free(ft->session);
    ft->session = NULL;
}

static void
fake_free(struct transport *t)
{
    struct fake_transport *ft = fake_of(t);

    fake_close(t);
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

/* client_host.make_transport */
static struct transport *
fake_make_transport(void *arg, const struct transport_env *env)
{
    struct fixture        *fx = arg;
    struct fake_transport *ft = xcalloc(1, sizeof(*ft));

    ft->ops = fake_ops;
    ft->ops.caps = fx->caps;
    ft->base.ops = &ft->ops;
    ft->base.env = env;
    ft->fx = fx;
    ft->tail = &ft->head;
    ev_prepare_init(&ft->flush, fake_flush_cb);
    ft->flush.data = ft;
    fx->ft = ft;
    return &ft->base;
}

/* A message from the server that answers nothing of ours. */
static void
fake_message(struct fixture *fx, const char *json)
{
    struct jsonrpc_msg *m = jsonrpc_parse(json, strlen(json), NULL);

    assert_non_null(m);
    assert_non_null(fx->ft);
    fake_queue(fx->ft, NULL, m);
}

/* --- the fake host ------------------------------------------------------ */

static void
host_record(struct rec *r, const char *op, const struct failure *f)
{
    memset(r, 0, sizeof(*r));
    r->op = op;
    r->completed = f == NULL;
    if (f != NULL) {
        r->kind = f->kind;
        r->delivered = f->delivered;
        r->site = f->site;
        r->http_status = f->http_status;
        r->has_rpc_code = f->has_rpc_code;
        r->rpc_code = f->rpc_code;
        snprintf(r->detail, sizeof(r->detail), "%s", f->detail);
    }
}

static void
host_exchange_cb(void *arg, const char *op, const struct failure *f,
    double ms)
{
    struct fixture *fx = arg;

    assert_true(fx->nexchanges < MAX_RECS);
    assert_true(ms >= 0);
    host_record(&fx->exchanges[fx->nexchanges++], op, f);
}

static void
host_dial_done_cb(void *arg, const struct failure *f, double ms)
{
    struct fixture *fx = arg;

    assert_true(fx->ndials < MAX_RECS);
    assert_true(ms >= 0);
    host_record(&fx->dials[fx->ndials++], NULL, f);
    fx->state = f == NULL ? CLIENT_PHASE_READY : CLIENT_PHASE_OTHER;
}

static bool
host_retries_cb(void *arg, enum client_loss loss)
{
    struct fixture *fx = arg;

    assert_true(fx->nasked < MAX_RECS);
    fx->asked[fx->nasked++] = loss;
    return fx->redials;
}

/* The server's part, as far as these tests need: a lost session or era
 * dials again now; a lost connection waits for a backoff that never comes
 * here. */
static void
host_retry_cb(void *arg, enum client_loss loss)
{
    struct fixture *fx = arg;

    assert_true(fx->nretried < MAX_RECS);
    fx->retried[fx->nretried++] = loss;
    switch (loss) {
    case CLIENT_LOSS_SESSION:
    case CLIENT_LOSS_ERA_STALE:
    case CLIENT_LOSS_ERA_PROVEN:
        fx->state = CLIENT_PHASE_DIALING;
        client_dial(fx->c);
        break;
    case CLIENT_LOSS_UNREACHABLE:
    case CLIENT_LOSS_CONNECTION:
        fx->state = CLIENT_PHASE_OTHER;
        break;
    default:
        break;
    }
}

static void
host_end_orphan_cb(void *arg, char *session, const char *protocol_version,
    const char *why, bool half_open)
{
    struct fixture *fx = arg;
    struct orphan  *o;

    assert_true(fx->norphans < 8);
    o = &fx->orphans[fx->norphans++];
    o->session = session;
    o->protocol_version = protocol_version != NULL ?
        xstrdup(protocol_version) : NULL;
    snprintf(o->why, sizeof(o->why), "%s", why != NULL ? why : "");
    o->half_open = half_open;
}

static void
host_tools_changed_cb(void *arg, long ntools)
{
    struct fixture *fx = arg;

    assert_true(fx->ntools_changed < 8);
    fx->tools_changed[fx->ntools_changed++] = ntools;
}

static void
host_busy_cb(void *arg, bool on)
{
    struct fixture *fx = arg;

    fx->busy += on ? 1 : -1;
    assert_true(fx->busy >= 0);
    if (fx->busy > fx->busy_max)
        fx->busy_max = fx->busy;
}

static void
host_retry_after_cb(void *arg, long seconds)
{
    (void)arg;
    (void)seconds;
    fail_msg("no scripted answer asks for a wait");
}

static enum client_phase
host_state_cb(void *arg)
{
    return ((struct fixture *)arg)->state;
}

static ev_tstamp
host_now_cb(void *arg)
{
    struct fixture *fx = arg;

    ev_now_update(fx->loop);
    return ev_now(fx->loop);
}

static long
host_timeout_ms_cb(void *arg)
{
    return ((struct fixture *)arg)->timeout_ms;
}

static long
host_open_deadline_ms_cb(void *arg)
{
    return ((struct fixture *)arg)->open_deadline_ms;
}

static double
host_wait_left_cb(void *arg)
{
    (void)arg;
    return 0;
}

static void
host_log_cb(void *arg, const char *fmt, va_list ap)
{
    struct fixture *fx = arg;
    char            line[512];

    vsnprintf(line, sizeof(line), fmt, ap);
    if (fx->nlog < MAX_LOG)
        fx->log[fx->nlog++] = xstrdup(line);
}

static void
host_asked_cb(void *arg, enum mcp_asked kind, const char *method,
    const char *id, const char *answered)
{
    struct fixture *fx = arg;

    (void)kind;
    if (fx->nserver_asked < 8)
        snprintf(fx->server_asked[fx->nserver_asked++], 96, "%s %s %s",
            method, id, answered);
}

static const struct client_host fake_host = {
    .exchange = host_exchange_cb,
    .dial_done = host_dial_done_cb,
    .retries = host_retries_cb,
    .retry = host_retry_cb,
    .end_orphan = host_end_orphan_cb,
    .tools_changed = host_tools_changed_cb,
    .asked = host_asked_cb,
    .busy = host_busy_cb,
    .retry_after = host_retry_after_cb,
    .phase = host_state_cb,
    .now = host_now_cb,
    .timeout_ms = host_timeout_ms_cb,
    .open_deadline_ms = host_open_deadline_ms_cb,
    .wait_left = host_wait_left_cb,
    .log = host_log_cb,
    .make_transport = fake_make_transport,
};

/* --- fixtures and helpers ----------------------------------------------- */

static char fake_name[] = "fake";
static char fake_url[] = "http://127.0.0.1:9/mcp";

static int
setup(void **state)
{
    struct fixture *fx = xcalloc(1, sizeof(*fx));

    fx->loop = ev_loop_new(EVFLAG_AUTO);
    if (fx->loop == NULL)
        return -1;
    fx->env.loop = fx->loop;
    fx->env.no_streams = true;
    fx->decl.name = fake_name;
    fx->decl.transport = CONFIG_HTTP;
    fx->decl.url = fake_url;
    fx->decl.url_shown = fake_url;
    fx->decl.ping_interval_ms = 60000;
    fx->decl.timeout_ms = 1000;
    fx->decl.open_deadline_ms = 4000;
    fx->decl.teardown_ms = 1000;
    fx->decl.max_message_bytes = 1 << 20;
    fx->decl.era = CONFIG_ERA_LEGACY;
    fx->state = CLIENT_PHASE_OTHER;
    fx->timeout_ms = 1000;
    fx->open_deadline_ms = 4000;
    fx->redials = true;
    *state = fx;
    return 0;
}

/* The client is made once the test set caps (they are the transport's). */
static struct client *
client_of(struct fixture *fx)
{
    if (fx->c == NULL)
        fx->c = client_new(&fake_host, fx, &fx->env, &fx->decl, 0,
            fake_name);
    return fx->c;
}

static int
teardown(void **state)
{
    struct fixture *fx = *state;

    client_free(fx->c);
    for (size_t i = 0; i < fx->nsent; i++)
        free(fx->sent[i].body);
    free(fx->sent);
    for (size_t i = 0; i < fx->norphans; i++) {
        free(fx->orphans[i].session);
        free(fx->orphans[i].protocol_version);
    }
    for (size_t i = 0; i < fx->nlog; i++)
        free(fx->log[i]);
    ev_loop_destroy(fx->loop);
    free(fx);
    return 0;
}

static void
rule(struct fixture *fx, struct fake_rule r)
{
    assert_true(fx->nrules < MAX_RULES);
    fx->rules[fx->nrules++] = r;
}

/* ev_prepare: the condition holds: stop the loop. */
static void
until_prepare_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
    struct fixture *fx = w->data;

    (void)revents;
    if (fx->until != NULL && fx->until(fx))
        ev_break(loop, EVBREAK_ONE);
}

/* ev_timer: the bound passed. */
static void
until_bound_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)w;
    (void)revents;
    ev_break(loop, EVBREAK_ONE);
}

/* Run the loop until fn holds or `seconds` pass (fn NULL: run them all).
 * True when fn held. */
static bool
run_until(struct fixture *fx, until_fn fn, double seconds)
{
    ev_prepare prep;
    ev_timer   bound;

    if (fn != NULL && fn(fx))
        return true;
    fx->until = fn;
    ev_prepare_init(&prep, until_prepare_cb);
    prep.data = fx;
    /* After the fake's flush (libev runs prepares by priority). */
    ev_set_priority(&prep, EV_MINPRI);
    ev_prepare_start(fx->loop, &prep);
    ev_timer_init(&bound, until_bound_cb, seconds, 0.);
    ev_timer_start(fx->loop, &bound);
    ev_now_update(fx->loop);
    ev_run(fx->loop, 0);
    ev_prepare_stop(fx->loop, &prep);
    ev_timer_stop(fx->loop, &bound);
    fx->until = NULL;
    return fn != NULL && fn(fx);
}

static bool
dials_reached(const struct fixture *fx)
{
    return fx->ndials >= fx->want;
}

static bool
exchanges_reached(const struct fixture *fx)
{
    return fx->nexchanges >= fx->want;
}

static bool
orphans_reached(const struct fixture *fx)
{
    return fx->norphans >= fx->want;
}

/* Begin a dial (as the server does: DIALING first) and wait for the n-th
 * dial to end. */
static void
dial_until(struct fixture *fx, size_t n)
{
    fx->state = CLIENT_PHASE_DIALING;
    client_dial(client_of(fx));
    fx->want = n;
    assert_true(run_until(fx, dials_reached, BOUND_S));
}

static void
wait_exchanges(struct fixture *fx, size_t n)
{
    fx->want = n;
    assert_true(run_until(fx, exchanges_reached, BOUND_S));
}

/* How many requests for method were sent. */
static size_t
sent_count(const struct fixture *fx, const char *method)
{
    size_t n = 0;

    for (size_t i = 0; i < fx->nsent; i++)
        n += strcmp(fx->sent[i].method, method) == 0;
    return n;
}

/* The i-th request for method (0 first), or NULL. */
static const struct fake_sent *
sent_nth(const struct fixture *fx, const char *method, size_t i)
{
    for (size_t k = 0; k < fx->nsent; k++) {
        if (strcmp(fx->sent[k].method, method) == 0 && i-- == 0)
            return &fx->sent[k];
    }
    return NULL;
}

static bool
log_has(const struct fixture *fx, const char *text)
{
    for (size_t i = 0; i < fx->nlog; i++) {
        if (strstr(fx->log[i], text) != NULL)
            return true;
    }
    return false;
}

static size_t
retried_count(const struct fixture *fx, enum client_loss loss)
{
    size_t n = 0;

    for (size_t i = 0; i < fx->nretried; i++)
        n += fx->retried[i] == loss;
    return n;
}

#define INIT_RESULT(version, caps)                                      \
    "{\"protocolVersion\":\"" version "\",\"capabilities\":" caps       \
    ",\"serverInfo\":{\"name\":\"fake\",\"version\":\"1.0\"}}"
#define TOOLS_CAP           "{\"tools\":{}}"
#define TOOLS_CAP_CHANGES   "{\"tools\":{\"listChanged\":true}}"
#define TOOLS_ABC           "{\"tools\":[{\"name\":\"a\"},{\"name\":\"b\"}," \
                            "{\"name\":\"c\"}]}"

/* A healthy legacy server: initialize (issuing session), the
 * notification taken, one page of three tools. */
static void
script_legacy(struct fixture *fx, const char *session, const char *caps)
{
    rule(fx, (struct fake_rule){ .method = "initialize", .uses = 1,
        .kind = FAKE_RESULT, .result = caps, .session = session });
    rule(fx, (struct fake_rule){ .method = "notifications/initialized",
        .kind = FAKE_ACCEPT });
    rule(fx, (struct fake_rule){ .method = "tools/list", .uses = 1,
        .kind = FAKE_RESULT, .result = TOOLS_ABC });
}

/* Dial the server script_legacy describes; the dial completes. */
static void
dial_legacy(struct fixture *fx, const char *session)
{
    script_legacy(fx, session, INIT_RESULT("2025-06-18", TOOLS_CAP));
    dial_until(fx, 1);
    assert_true(fx->dials[0].completed);
}

/* --- the dial ----------------------------------------------------------- */

/* initialize, notifications/initialized, tools/list: the tools and the
 * version as answered, the session adopted and carried from then on. */
static void
test_dial_completes(void **state)
{
    struct fixture            *fx = *state;
    struct mcp_session_info info = { 0 };

    script_legacy(fx, "sess-1", INIT_RESULT("2025-06-18", TOOLS_CAP));
    dial_until(fx, 1);
    assert_true(fx->dials[0].completed);
    assert_int_equal(fx->state, CLIENT_PHASE_READY);
    assert_int_equal(fx->nsent, 3);
    assert_string_equal(fx->sent[0].method, "initialize");
    assert_true(fx->sent[0].flags & TRANSPORT_INITIALIZE);
    assert_false(fx->sent[0].carried);
    assert_non_null(strstr(fx->sent[0].body, MCP_PROTOCOL_LATEST));
    assert_string_equal(fx->sent[1].method, "notifications/initialized");
    assert_int_equal(fx->sent[1].id, -1);
    assert_true(fx->sent[1].carried);
    assert_string_equal(fx->sent[2].method, "tools/list");
    assert_true(fx->sent[2].carried);
    assert_int_equal(client_tools(fx->c), 3);
    assert_string_equal(client_tool_name(fx->c, 0), "a");
    assert_string_equal(client_tool_name(fx->c, 2), "c");
    assert_int_equal(client_era(fx->c), MCP_ERA_LEGACY);
    client_session(fx->c, &info);
    assert_string_equal(info.protocol_version, "2025-06-18");
    assert_string_equal(info.server_name, "fake");
    assert_string_equal(info.id_prefix, "sess-1");
    assert_true(client_has_session(fx->c));
    assert_true(client_dialed_once(fx->c));
    assert_true(client_last_ping_ok(fx->c));
    /* The dial is one exchange, the host's to record: no other report. */
    assert_int_equal(fx->nexchanges, 0);
    assert_int_equal(fx->ntools_changed, 0);
    assert_int_equal(fx->norphans, 0);
    assert_int_equal(fx->sessions_dropped, 0);
}

/* A refused connect to initialize: the dial fails at site connect,
 * delivered no, the step named; nothing else is sent. */
static void
test_dial_fails_at_initialize(void **state)
{
    struct fixture *fx = *state;

    rule(fx, (struct fake_rule){ .method = "initialize", .kind = FAKE_FAIL,
        .evd = { .net = NET_CONNECT, .phase = FAILURE_PHASE_CONNECT },
        .detail = "connection refused" });
    dial_until(fx, 1);
    assert_false(fx->dials[0].completed);
    assert_int_equal(fx->dials[0].kind, FAILURE_CONNECT_REFUSED);
    assert_int_equal(fx->dials[0].site, FAILURE_SITE_CONNECT);
    assert_int_equal(fx->dials[0].delivered, DELIVERED_NO);
    assert_string_equal(fx->dials[0].detail,
        "initialize: connection refused");
    assert_int_equal(fx->nsent, 1);
    assert_int_equal(fx->abandons, 1);
    assert_false(client_has_session(fx->c));
    assert_true(client_dialed_once(fx->c));
    assert_false(client_last_ping_ok(fx->c));
    assert_int_equal(client_tools(fx->c), -1);
}

/* notifications/initialized answered 500 after initialize issued a
 * session: the dial fails naming that step and that initialize worked,
 * and the session goes to the host to be ended. */
static void
test_dial_fails_at_initialized(void **state)
{
    struct fixture *fx = *state;

    rule(fx, (struct fake_rule){ .method = "initialize",
        .kind = FAKE_RESULT, .result = INIT_RESULT("2025-11-25", TOOLS_CAP),
        .session = "sess-2" });
    rule(fx, (struct fake_rule){ .method = "notifications/initialized",
        .kind = FAKE_FAIL, .evd = { .http_status = 500 },
        .detail = "HTTP 500 to notifications/initialized" });
    dial_until(fx, 1);
    assert_false(fx->dials[0].completed);
    assert_int_equal(fx->dials[0].kind, FAILURE_HTTP_STATUS);
    assert_int_equal(fx->dials[0].http_status, 500);
    assert_int_equal(fx->dials[0].site, FAILURE_SITE_CONNECT);
    assert_string_equal(fx->dials[0].detail, "notifications/initialized "
        "answered 500 after initialize succeeded");
    assert_int_equal(sent_count(fx, "tools/list"), 0);
    assert_int_equal(fx->norphans, 1);
    assert_string_equal(fx->orphans[0].session, "sess-2");
    assert_string_equal(fx->orphans[0].protocol_version, "2025-11-25");
    assert_string_equal(fx->orphans[0].why,
        "the dial failed after the session was issued");
    assert_true(fx->orphans[0].half_open);
    assert_false(client_has_session(fx->c));
}

/*
 * A JSON-RPC error to the dial's tools/list fails the dial as protocol,
 * and the detail names that step (it used to name the step before it,
 * notifications/initialized).
 */
static void
test_dial_fails_at_list(void **state)
{
    struct fixture *fx = *state;

    rule(fx, (struct fake_rule){ .method = "initialize",
        .kind = FAKE_RESULT, .result = INIT_RESULT("2025-06-18", TOOLS_CAP),
        .session = "sess-3" });
    rule(fx, (struct fake_rule){ .method = "notifications/initialized",
        .kind = FAKE_ACCEPT });
    rule(fx, (struct fake_rule){ .method = "tools/list",
        .kind = FAKE_ERROR, .code = -32603 });
    dial_until(fx, 1);
    assert_false(fx->dials[0].completed);
    assert_int_equal(fx->dials[0].kind, FAILURE_PROTOCOL);
    assert_true(fx->dials[0].has_rpc_code);
    assert_int_equal(fx->dials[0].rpc_code, -32603);
    assert_int_equal(fx->dials[0].delivered, DELIVERED_YES);
    assert_string_equal(fx->dials[0].detail, "tools/list: "
        "JSON-RPC error -32603: scripted");
    assert_int_equal(sent_count(fx, "tools/list"), 1);
    assert_int_equal(client_tools(fx->c), -1);
    /* The session it was issued is handed on, never dropped. */
    assert_int_equal(fx->norphans, 1);
    assert_string_equal(fx->orphans[0].session, "sess-3");
}

/* The open deadline passes during an initialize that will answer late:
 * the dial fails by the deadline, the initialize is left to settle (busy),
 * and the session its late answer issues goes to the host to be ended. */
static void
test_abandoned_initialize_session_ended(void **state)
{
    struct fixture *fx = *state;

    fx->caps = TRANSPORT_CAP_LATE_SESSION;
    fx->open_deadline_ms = 60;
    fx->timeout_ms = 3000;
    rule(fx, (struct fake_rule){ .method = "initialize",
        .kind = FAKE_RESULT, .result = INIT_RESULT("2025-11-25", TOOLS_CAP),
        .session = "late-1", .delay_s = 0.25 });
    dial_until(fx, 1);
    assert_false(fx->dials[0].completed);
    assert_int_equal(fx->dials[0].kind, FAILURE_TIMEOUT);
    assert_int_equal(fx->dials[0].site, FAILURE_SITE_CONNECT);
    assert_string_equal(fx->dials[0].detail,
        "open deadline 60 ms passed during initialize");
    assert_int_equal(fx->busy, 1);
    assert_int_equal(fx->norphans, 0);
    assert_int_equal(fx->cancels, 0);

    fx->want = 1;
    assert_true(run_until(fx, orphans_reached, BOUND_S));
    assert_string_equal(fx->orphans[0].session, "late-1");
    assert_string_equal(fx->orphans[0].protocol_version, "2025-11-25");
    assert_string_equal(fx->orphans[0].why,
        "session issued after the dial was abandoned");
    assert_true(fx->orphans[0].half_open);
    assert_int_equal(fx->busy, 0);
    assert_int_equal(fx->busy_max, 1);
    /* Nothing more of that dial: no handshake on the late session. */
    assert_int_equal(fx->nsent, 1);
    assert_int_equal(fx->ndials, 1);
    assert_false(client_has_session(fx->c));
    assert_int_equal(fx->sessions_dropped, 0);
}

/* --- eras --------------------------------------------------------------- */

/* The probe answered -32601 (a legacy server that knows no
 * server/discover): initialize in the same dial, legacy from then on. */
static void
test_era_discover_unknown_falls_back(void **state)
{
    struct fixture *fx = *state;

    fx->decl.era = CONFIG_ERA_AUTO;
    rule(fx, (struct fake_rule){ .method = "server/discover",
        .kind = FAKE_ERROR, .code = -32601 });
    script_legacy(fx, "sess-4", INIT_RESULT("2025-06-18", TOOLS_CAP));
    dial_until(fx, 1);
    assert_true(fx->dials[0].completed);
    assert_int_equal(fx->nsent, 4);
    assert_string_equal(fx->sent[0].method, "server/discover");
    assert_true(fx->sent[0].flags & TRANSPORT_MODERN);
    assert_non_null(strstr(fx->sent[0].body, MCP_PROTOCOL_MODERN));
    assert_string_equal(fx->sent[1].method, "initialize");
    assert_string_equal(fx->sent[2].method, "notifications/initialized");
    assert_string_equal(fx->sent[3].method, "tools/list");
    assert_false(fx->sent[3].flags & TRANSPORT_MODERN);
    assert_int_equal(client_era(fx->c), MCP_ERA_LEGACY);
    assert_true(log_has(fx, "no era evidence; trying initialize"));
    /* -32601 is what a legacy server says to an unknown method: no
     * warning; the probe's error is no failure of the dial. */
    assert_null(client_warning(fx->c));
    assert_int_equal(fx->nexchanges, 0);
    assert_int_equal(client_tools(fx->c), 3);
}

/*
 * A stdio bridge that forwards the probe upstream and then refuses
 * initialize (supergateway: "Server already initialized"; issue 26, item
 * 3): on a transport whose open starts a fresh peer, the dial opens it
 * again and sends initialize with no probe; legacy is remembered, the
 * warning says why, and the refusal is no failure of the dial. Without
 * that capability (HTTP) the refusal fails the dial.
 */
static void
test_era_initialize_refused_after_probe_fresh_peer(void **state)
{
    struct fixture *fx = *state;
    const char     *w;

    fx->caps = TRANSPORT_CAP_FRESH_PEER;
    fx->decl.era = CONFIG_ERA_AUTO;
    rule(fx, (struct fake_rule){ .method = "server/discover",
        .kind = FAKE_ERROR, .code = -32601 });
    rule(fx, (struct fake_rule){ .method = "initialize", .uses = 1,
        .kind = FAKE_ERROR, .code = -32600 });
    script_legacy(fx, NULL, INIT_RESULT("2025-11-25", TOOLS_CAP));
    dial_until(fx, 1);
    assert_true(fx->dials[0].completed);
    assert_int_equal(fx->opens, 2);
    assert_int_equal(sent_count(fx, "server/discover"), 1);
    assert_int_equal(sent_count(fx, "initialize"), 2);
    assert_string_equal(fx->sent[2].method, "initialize");
    assert_int_equal(client_era(fx->c), MCP_ERA_LEGACY);
    assert_int_equal(client_tools(fx->c), 3);
    assert_int_equal(fx->nexchanges, 0);
    w = client_warning(fx->c);
    assert_non_null(w);
    assert_non_null(strstr(w, "refused initialize after server/discover"));
    assert_non_null(strstr(w, "-32600"));
    assert_non_null(strstr(w, "fresh child"));
}

static void
test_era_initialize_refused_after_probe_http(void **state)
{
    struct fixture *fx = *state;

    fx->decl.era = CONFIG_ERA_AUTO;
    rule(fx, (struct fake_rule){ .method = "server/discover",
        .kind = FAKE_ERROR, .code = -32601 });
    rule(fx, (struct fake_rule){ .method = "initialize", .uses = 1,
        .kind = FAKE_ERROR, .code = -32600 });
    script_legacy(fx, NULL, INIT_RESULT("2025-11-25", TOOLS_CAP));
    dial_until(fx, 1);
    assert_false(fx->dials[0].completed);
    assert_int_equal(fx->dials[0].kind, FAILURE_PROTOCOL);
    assert_int_equal(fx->dials[0].rpc_code, -32600);
    assert_int_equal(fx->opens, 1);
    assert_int_equal(sent_count(fx, "initialize"), 1);
    assert_null(client_warning(fx->c));
}

/*
 * A gateway whose child died answers every method 200 with -32603
 * (issue 45, item 2): no era evidence. The era stays empty, the warning
 * names what was seen, the server is refused at initialize ("cannot be
 * initialized"); once initialize works, legacy on that evidence.
 */
static void
test_era_gateway_error_no_evidence(void **state)
{
    struct fixture *fx = *state;
    const char     *w;

    fx->decl.era = CONFIG_ERA_AUTO;
    rule(fx, (struct fake_rule){ .method = "server/discover",
        .kind = FAKE_ERROR, .code = -32603 });
    rule(fx, (struct fake_rule){ .method = "initialize", .uses = 1,
        .kind = FAKE_ERROR, .code = -32603 });
    script_legacy(fx, "sess-g", INIT_RESULT("2025-06-18", TOOLS_CAP));
    dial_until(fx, 1);
    assert_false(fx->dials[0].completed);
    assert_int_equal(fx->dials[0].rpc_code, -32603);
    assert_int_equal(client_era(fx->c), MCP_ERA_NONE);
    assert_true(client_init_refused(fx->c));
    w = client_warning(fx->c);
    assert_non_null(w);
    assert_non_null(strstr(w, "no era evidence"));
    assert_non_null(strstr(w, "server/discover answered JSON-RPC error "
        "-32603"));

    /* The next dial probes again (nothing was remembered), and this time
     * initialize works: legacy, said. */
    dial_until(fx, 2);
    assert_true(fx->dials[1].completed);
    assert_int_equal(sent_count(fx, "server/discover"), 2);
    assert_int_equal(client_era(fx->c), MCP_ERA_LEGACY);
    assert_false(client_init_refused(fx->c));
    w = client_warning(fx->c);
    assert_non_null(w);
    assert_non_null(strstr(w, "era legacy: server/discover answered "
        "JSON-RPC error -32603"));
    assert_non_null(strstr(w, "initialize worked"));
}

/* The same gateway over stdio, where a refused initialize after the
 * probe gets one fresh child: the fresh child refused too, so no era. */
static void
test_era_gateway_error_fresh_peer(void **state)
{
    struct fixture *fx = *state;

    fx->caps = TRANSPORT_CAP_FRESH_PEER;
    fx->decl.era = CONFIG_ERA_AUTO;
    rule(fx, (struct fake_rule){ .method = "server/discover",
        .kind = FAKE_ERROR, .code = -32603 });
    rule(fx, (struct fake_rule){ .method = "initialize",
        .kind = FAKE_ERROR, .code = -32603 });
    dial_until(fx, 1);
    assert_false(fx->dials[0].completed);
    assert_int_equal(fx->opens, 2);
    assert_int_equal(sent_count(fx, "initialize"), 2);
    assert_int_equal(client_era(fx->c), MCP_ERA_NONE);
    assert_true(client_init_refused(fx->c));
    assert_non_null(strstr(client_warning(fx->c), "no era evidence"));
}

/* A DiscoverResult listing 2026-07-28: modern, no initialize, the listing
 * and the liveness exchange in the modern shape (server/discover, op
 * "discover"). */
static void
test_era_modern_keeps_modern(void **state)
{
    struct fixture            *fx = *state;
    struct mcp_session_info info = { 0 };

    fx->decl.era = CONFIG_ERA_AUTO;
    rule(fx, (struct fake_rule){ .method = "server/discover",
        .kind = FAKE_RESULT, .result = "{\"supportedVersions\":"
        "[\"2026-07-28\"],\"capabilities\":{\"tools\":{}},"
        "\"cacheScope\":\"public\"}" });
    rule(fx, (struct fake_rule){ .method = "tools/list", .uses = 1,
        .kind = FAKE_RESULT, .result = "{\"tools\":[{\"name\":\"m\"}]}" });
    dial_until(fx, 1);
    assert_true(fx->dials[0].completed);
    assert_int_equal(client_era(fx->c), MCP_ERA_MODERN);
    assert_int_equal(sent_count(fx, "initialize"), 0);
    assert_int_equal(sent_count(fx, "notifications/initialized"), 0);
    assert_int_equal(fx->nsent, 2);
    assert_string_equal(fx->sent[1].method, "tools/list");
    assert_true(fx->sent[1].flags & TRANSPORT_MODERN);
    assert_int_equal(client_tools(fx->c), 1);
    client_session(fx->c, &info);
    assert_string_equal(info.protocol_version, MCP_PROTOCOL_MODERN);
    assert_string_equal(info.cache_scope, "public");
    assert_false(client_has_session(fx->c));

    assert_true(client_ping(fx->c, false));
    wait_exchanges(fx, 1);
    assert_int_equal(fx->nsent, 3);
    assert_string_equal(fx->sent[2].method, "server/discover");
    assert_true(fx->sent[2].flags & TRANSPORT_NO_CACHE);
    assert_string_equal(fx->exchanges[0].op, "discover");
    assert_true(fx->exchanges[0].completed);
    assert_int_equal(client_era(fx->c), MCP_ERA_MODERN);
}

/* --- answering the server ----------------------------------------------- */

static bool
answers_reached(const struct fixture *fx)
{
    return sent_count(fx, "response") >= fx->want;
}

/*
 * The server's own requests are answered at once (issue 45, item 1):
 * ping with an empty result under the id as it came (a string here), any
 * method mcptop declared no capability for with -32601; each counted and
 * reported, none an exchange of the liveness record.
 */
static void
test_server_requests_answered(void **state)
{
    struct fixture *fx = *state;

    dial_legacy(fx, "sess-a");
    fake_message(fx, "{\"jsonrpc\":\"2.0\",\"id\":\"srv-1\","
        "\"method\":\"ping\"}");
    fake_message(fx, "{\"jsonrpc\":\"2.0\",\"id\":7,"
        "\"method\":\"roots/list\"}");
    fake_message(fx, "{\"jsonrpc\":\"2.0\",\"id\":8,"
        "\"method\":\"sampling/createMessage\",\"params\":{}}");
    fx->want = 3;
    assert_true(run_until(fx, answers_reached, BOUND_S));
    assert_string_equal(sent_nth(fx, "response", 0)->body,
        "{\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"result\":{}}");
    assert_non_null(strstr(sent_nth(fx, "response", 1)->body,
        "\"id\":7,\"error\":{\"code\":-32601"));
    assert_non_null(strstr(sent_nth(fx, "response", 2)->body,
        "\"id\":8,\"error\":{\"code\":-32601"));
    assert_true(sent_nth(fx, "response", 0)->carried);
    assert_int_equal(client_asked(fx->c, MCP_ASKED_PING), 1);
    assert_int_equal(client_asked(fx->c, MCP_ASKED_ROOTS), 1);
    assert_int_equal(client_asked(fx->c, MCP_ASKED_SAMPLING), 1);
    assert_int_equal(client_asked(fx->c, MCP_ASKED_OTHER), 0);
    assert_int_equal(fx->nserver_asked, 3);
    assert_string_equal(fx->server_asked[0], "ping \"srv-1\" (string) "
        "result");
    assert_string_equal(fx->server_asked[1], "roots/list 7 (number) "
        "-32601");
    assert_int_equal(fx->nexchanges, 0);
    assert_true(client_has_session(fx->c));    /* nothing lost */
}

/* An id no response can name (an object): not answered, said. */
static void
test_server_request_bad_id(void **state)
{
    struct fixture *fx = *state;

    dial_legacy(fx, "sess-b");
    fake_message(fx, "{\"jsonrpc\":\"2.0\",\"id\":{\"a\":1},"
        "\"method\":\"ping\"}");
    fake_message(fx, "{\"jsonrpc\":\"2.0\",\"id\":9,"
        "\"method\":\"ping\"}");
    fx->want = 1;
    assert_true(run_until(fx, answers_reached, BOUND_S));
    assert_int_equal(sent_count(fx, "response"), 1);
    assert_non_null(strstr(sent_nth(fx, "response", 0)->body, "\"id\":9"));
    assert_int_equal(client_asked(fx->c, MCP_ASKED_PING), 2);
    assert_true(log_has(fx, "no response can name it"));
}

/* --- listing ------------------------------------------------------------ */

/* nextCursor is followed to the last page; every page's tools count. */
static void
test_list_follows_cursors(void **state)
{
    struct fixture *fx = *state;

    rule(fx, (struct fake_rule){ .method = "initialize",
        .kind = FAKE_RESULT, .result = INIT_RESULT("2025-06-18", TOOLS_CAP),
        .session = "sess-5" });
    rule(fx, (struct fake_rule){ .method = "tools/list", .uses = 1,
        .kind = FAKE_RESULT, .result = "{\"tools\":[{\"name\":\"a\"},"
        "{\"name\":\"b\"}],\"nextCursor\":\"p2\"}" });
    rule(fx, (struct fake_rule){ .method = "tools/list", .uses = 1,
        .kind = FAKE_RESULT, .result = "{\"tools\":[{\"name\":\"c\"},"
        "{\"name\":\"d\"}],\"nextCursor\":\"p3\"}" });
    rule(fx, (struct fake_rule){ .method = "tools/list", .uses = 1,
        .kind = FAKE_RESULT, .result = "{\"tools\":[{\"name\":\"e\"}],"
        "\"nextCursor\":\"\"}" });
    dial_until(fx, 1);
    assert_true(fx->dials[0].completed);
    assert_int_equal(sent_count(fx, "tools/list"), 3);
    assert_null(strstr(sent_nth(fx, "tools/list", 0)->body, "cursor"));
    assert_non_null(strstr(sent_nth(fx, "tools/list", 1)->body,
        "\"cursor\":\"p2\""));
    assert_non_null(strstr(sent_nth(fx, "tools/list", 2)->body,
        "\"cursor\":\"p3\""));
    assert_int_equal(client_tools(fx->c), 5);
    assert_string_equal(client_tool_name(fx->c, 0), "a");
    assert_string_equal(client_tool_name(fx->c, 4), "e");
}

/* A nextCursor already seen is a pagination loop: the listing stops at
 * once (not at the page bound, CLIENT_MAX_PAGES: it used to walk 1,000
 * pages and count every page's tools), the tools are counted by unique
 * name, and the loop is kept for health (degraded) with how it went. */
static void
test_list_repeated_cursor_stops(void **state)
{
    struct fixture *fx = *state;

    rule(fx, (struct fake_rule){ .method = "initialize",
        .kind = FAKE_RESULT, .result = INIT_RESULT("2025-06-18", TOOLS_CAP),
        .session = "sess-6" });
    rule(fx, (struct fake_rule){ .method = "tools/list",
        .kind = FAKE_RESULT, .result = "{\"tools\":[{\"name\":\"t\"}],"
        "\"nextCursor\":\"same\"}" });
    dial_until(fx, 1);
    assert_true(fx->dials[0].completed);
    /* Page 1 names "same", page 2 (asked with "same") names it again: the
     * loop is seen there, not walked to the page cap. */
    assert_int_equal(sent_count(fx, "tools/list"), 2);
    assert_non_null(strstr(sent_nth(fx, "tools/list", 1)->body,
        "\"cursor\":\"same\""));
    /* One tool, counted once by name. */
    assert_int_equal(client_tools(fx->c), 1);
    assert_true(client_pagination_loop(fx->c));
    assert_non_null(strstr(client_list_note(fx->c), "nextCursor \"same\" "
        "came again after 2 pages"));
}

static bool
two_relists_done(const struct fixture *fx)
{
    return fx->nexchanges >= 2;
}

/*
 * A burst of list_changed notices: the first re-lists at once, the rest
 * (arriving while that listing runs) are coalesced into exactly one more,
 * held back to one listing a second (CLIENT_RELIST_MIN_S). The new tool
 * set is reported once.
 */
static void
test_list_changed_burst_coalesced(void **state)
{
    struct fixture         *fx = *state;
    const char             *notice = "{\"jsonrpc\":\"2.0\",\"method\":"
        "\"notifications/tools/list_changed\"}";
    const struct fake_sent *first, *second;

    script_legacy(fx, "sess-7", INIT_RESULT("2025-06-18",
        TOOLS_CAP_CHANGES));
    rule(fx, (struct fake_rule){ .method = "tools/list",
        .kind = FAKE_RESULT, .result = "{\"tools\":[{\"name\":\"x\"}]}" });
    dial_until(fx, 1);
    assert_true(fx->dials[0].completed);
    assert_int_equal(sent_count(fx, "tools/list"), 1);

    for (int i = 0; i < 5; i++)
        fake_message(fx, notice);
    assert_true(run_until(fx, two_relists_done, BOUND_S));
    assert_int_equal(sent_count(fx, "tools/list"), 3);
    first = sent_nth(fx, "tools/list", 1);
    second = sent_nth(fx, "tools/list", 2);
    assert_true(second->at - first->at >= CLIENT_RELIST_MIN_S - 0.01);
    assert_int_equal(fx->c->notices_coalesced, 3);
    assert_false(fx->c->relist_wanted);
    assert_false(ev_is_active(&fx->c->relist_timer));
    assert_string_equal(fx->exchanges[0].op, "tools/list");
    assert_true(fx->exchanges[0].completed);
    assert_string_equal(fx->exchanges[1].op, "tools/list");
    assert_true(fx->exchanges[1].completed);
    assert_int_equal(fx->ntools_changed, 1);
    assert_int_equal(fx->tools_changed[0], 1);
    assert_int_equal(client_tools(fx->c), 1);
}

/* --- the liveness exchange ---------------------------------------------- */

/* A ping that completes: one exchange, no failure; the next ping is the
 * host's to plan (retry NONE); no loss is asked about. */
static void
test_ping_completes(void **state)
{
    struct fixture *fx = *state;

    dial_legacy(fx, "sess-8");
    rule(fx, (struct fake_rule){ .method = "ping", .kind = FAKE_RESULT });
    assert_true(client_ping(fx->c, true));
    /* One in flight at a time. */
    assert_false(client_ping(fx->c, false));
    wait_exchanges(fx, 1);
    assert_int_equal(fx->nexchanges, 1);
    assert_string_equal(fx->exchanges[0].op, "ping");
    assert_true(fx->exchanges[0].completed);
    assert_int_equal(sent_count(fx, "ping"), 1);
    assert_true(sent_nth(fx, "ping", 0)->carried);
    assert_true(sent_nth(fx, "ping", 0)->flags & TRANSPORT_IDLE_AFTER);
    assert_int_equal(fx->nretried, 1);
    assert_int_equal(fx->retried[0], CLIENT_LOSS_NONE);
    assert_int_equal(fx->nasked, 0);
    assert_true(client_last_ping_ok(fx->c));
    assert_int_equal(client_pings_done(fx->c), 1);
    assert_true(client_rtt_ms(fx->c) >= 0);
}

/* -32601 to ping: ping is optional in practice, so "method not found" is
 * an answer (the exchange completes: reach proven, nothing failed) and the
 * liveness exchange is tools/list for the rest of the session, never ping
 * again (it used to be a protocol failure at every ping). */
static void
test_ping_unsupported(void **state)
{
    struct fixture *fx = *state;

    dial_legacy(fx, "sess-9");
    assert_string_equal(client_liveness_method(fx->c), "ping");
    rule(fx, (struct fake_rule){ .method = "ping", .kind = FAKE_ERROR,
        .code = -32601 });
    assert_true(client_ping(fx->c, false));
    wait_exchanges(fx, 1);
    /* An answer: reach proven, nothing failed. */
    assert_string_equal(fx->exchanges[0].op, "ping");
    assert_true(fx->exchanges[0].completed);
    assert_int_equal(fx->nretried, 1);
    assert_int_equal(fx->retried[0], CLIENT_LOSS_NONE);
    assert_true(client_last_ping_ok(fx->c));
    assert_true(client_has_session(fx->c));
    assert_string_equal(client_liveness_method(fx->c), "tools/list");
    rule(fx, (struct fake_rule){ .method = "tools/list",
        .result = "{\"tools\":[]}" });

    /* From now on the liveness exchange is tools/list, never ping. */
    assert_true(client_ping(fx->c, false));
    wait_exchanges(fx, 2);
    assert_int_equal(sent_count(fx, "ping"), 1);
    assert_string_equal(fx->exchanges[1].op, "tools/list");
    assert_true(fx->exchanges[1].completed);
    assert_true(client_ping(fx->c, false));
    wait_exchanges(fx, 3);
    assert_int_equal(sent_count(fx, "ping"), 1);
    assert_string_equal(fx->exchanges[2].op, "tools/list");
}

/* No answer within the request timeout: a timeout of the ping (the
 * request timer), the request cancelled at the transport and a best-effort
 * notifications/cancelled sent for it; the next ping planned. */
static void
test_ping_timeout(void **state)
{
    struct fixture *fx = *state;
    char            want[64];

    dial_legacy(fx, "sess-10");
    fx->timeout_ms = 80;
    rule(fx, (struct fake_rule){ .method = "ping", .kind = FAKE_SILENT });
    assert_true(client_ping(fx->c, false));
    wait_exchanges(fx, 1);
    assert_string_equal(fx->exchanges[0].op, "ping");
    assert_false(fx->exchanges[0].completed);
    assert_int_equal(fx->exchanges[0].kind, FAILURE_TIMEOUT);
    assert_int_equal(fx->exchanges[0].delivered, DELIVERED_UNKNOWN);
    assert_string_equal(fx->exchanges[0].detail,
        "no answer to ping within 80 ms (request timeout)");
    assert_int_equal(fx->cancels, 1);
    assert_int_equal(sent_count(fx, "notification"), 1);
    assert_non_null(strstr(sent_nth(fx, "notification", 0)->body,
        "notifications/cancelled"));
    snprintf(want, sizeof(want), "\"requestId\":%lld",
        (long long)sent_nth(fx, "ping", 0)->id);
    assert_non_null(strstr(sent_nth(fx, "notification", 0)->body, want));
    assert_int_equal(fx->nretried, 1);
    assert_int_equal(fx->retried[0], CLIENT_LOSS_NONE);
    assert_int_equal(client_pings_done(fx->c), 1);
    assert_false(client_last_ping_ok(fx->c));
}

/* An answer whose id no request of ours has (a gateway that writes the
 * numeric id back as a string) is not the ping's answer: when the ping's
 * time is out, the failure is not_mcp_response (delivered unknown), and
 * the detail says which id came, with its JSON type, and which was ours
 * (issue 26, item 8). A late answer to a request of ours (an integral id
 * we gave) changes nothing: that ping is a timeout. */
static void
test_ping_stray_answer(void **state)
{
    struct fixture *fx = *state;
    char            json[96], want[160];
    int64_t         id;

    dial_legacy(fx, "sess-12");
    fx->timeout_ms = 80;
    rule(fx, (struct fake_rule){ .method = "ping", .kind = FAKE_SILENT });
    assert_true(client_ping(fx->c, false));
    id = sent_nth(fx, "ping", 0)->id;
    snprintf(json, sizeof(json), "{\"jsonrpc\":\"2.0\",\"id\":\"%lld\","
        "\"result\":{}}", (long long)id);
    fake_message(fx, json);
    wait_exchanges(fx, 1);
    assert_string_equal(fx->exchanges[0].op, "ping");
    assert_false(fx->exchanges[0].completed);
    assert_int_equal(fx->exchanges[0].kind, FAILURE_NOT_MCP_RESPONSE);
    assert_int_equal(fx->exchanges[0].delivered, DELIVERED_UNKNOWN);
    snprintf(want, sizeof(want), "answer id \"%lld\" (string) matches no "
        "request; ours was %lld (number); no answer to ping within 80 ms "
        "(request timeout)", (long long)id, (long long)id);
    assert_string_equal(fx->exchanges[0].detail, want);

    /* A late answer with an id we gave earlier (initialize's): a timeout. */
    assert_true(client_ping(fx->c, false));
    fake_message(fx, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
    wait_exchanges(fx, 2);
    assert_int_equal(fx->exchanges[1].kind, FAILURE_TIMEOUT);
}

/* The same at the dial: an answer to initialize with its id as a string
 * is none of ours; at the open deadline the dial fails not_mcp_response
 * (site connect: delivered no, DESIGN.md section 3), naming both ids. */
static void
test_dial_stray_answer(void **state)
{
    struct fixture *fx = *state;
    char            json[96], want[160];
    int64_t         id;

    fx->open_deadline_ms = 100;
    fx->decl.open_deadline_ms = 100;
    rule(fx, (struct fake_rule){ .method = "initialize",
        .kind = FAKE_SILENT });
    fx->state = CLIENT_PHASE_DIALING;
    client_dial(client_of(fx));
    assert_int_equal(sent_count(fx, "initialize"), 1);
    id = sent_nth(fx, "initialize", 0)->id;
    snprintf(json, sizeof(json), "{\"jsonrpc\":\"2.0\",\"id\":\"%lld\","
        "\"result\":{}}", (long long)id);
    fake_message(fx, json);
    fx->want = 1;
    assert_true(run_until(fx, dials_reached, BOUND_S));
    assert_false(fx->dials[0].completed);
    assert_int_equal(fx->dials[0].kind, FAILURE_NOT_MCP_RESPONSE);
    assert_int_equal(fx->dials[0].site, FAILURE_SITE_CONNECT);
    assert_int_equal(fx->dials[0].delivered, DELIVERED_NO);
    snprintf(want, sizeof(want), "answer id \"%lld\" (string) matches no "
        "request; ours was %lld (number); open deadline 100 ms passed "
        "during initialize", (long long)id, (long long)id);
    assert_string_equal(fx->dials[0].detail, want);
}

/* A deep check whose tool never answers: each call times out at the
 * probe's own timeout, is recorded as the tools/call exchange's failure
 * (kind timeout), and the next call is planned at the interval (it was
 * dropped silently, and never sent again). */
static void
test_probe_timeout_recorded_and_rescheduled(void **state)
{
    static char                probe_name[] = "slow";
    static char                probe_args[] = "{}";
    static struct config_probe probe = { .name = probe_name,
        .arguments = probe_args, .interval_ms = 100, .timeout_ms = 60 };
    struct fixture            *fx = *state;

    fx->decl.probe = &probe;
    rule(fx, (struct fake_rule){ .method = "tools/call", .kind = FAKE_SILENT });
    dial_legacy(fx, "sess-14");
    wait_exchanges(fx, 2);
    for (size_t i = 0; i < 2; i++) {
        assert_string_equal(fx->exchanges[i].op, "tools/call");
        assert_false(fx->exchanges[i].completed);
        assert_int_equal(fx->exchanges[i].kind, FAILURE_TIMEOUT);
        assert_string_equal(fx->exchanges[i].detail, "no answer to "
            "tools/call slow within 60 ms (the deep check's timeout)");
    }
    assert_true(sent_count(fx, "tools/call") >= 2);
    assert_false(client_probe_ok(fx->c));
}

/* A deep check whose tool answers isError: a tools/call exchange whose
 * detail names the step first, as a dial's does (issue 45, item 8). */
static void
test_probe_error_names_step(void **state)
{
    static char                probe_name[] = "boom";
    static char                probe_args[] = "{}";
    static struct config_probe probe = { .name = probe_name,
        .arguments = probe_args, .interval_ms = 100, .timeout_ms = 500 };
    struct fixture            *fx = *state;

    fx->decl.probe = &probe;
    rule(fx, (struct fake_rule){ .method = "tools/call", .kind = FAKE_RESULT,
        .result = "{\"content\":[{\"type\":\"text\",\"text\":"
        "\"disk full\"}],\"isError\":true}" });
    dial_legacy(fx, "sess-15");
    wait_exchanges(fx, 1);
    assert_string_equal(fx->exchanges[0].op, "tools/call");
    assert_false(fx->exchanges[0].completed);
    assert_string_equal(fx->exchanges[0].detail,
        "tools/call: tool boom answered isError: disk full");
    assert_false(client_probe_ok(fx->c));
}

/* A refused connect to ping: the server is unreachable; the host's policy
 * decides. Yes: the session goes to be ended and the host plans a dial
 * after a backoff. No (check mode): the session stays, the next ping is
 * planned. */
static void
test_ping_refused_unreachable(void **state)
{
    struct fixture *fx = *state;

    dial_legacy(fx, "sess-11");
    rule(fx, (struct fake_rule){ .method = "ping", .kind = FAKE_FAIL,
        .evd = { .net = NET_CONNECT, .phase = FAILURE_PHASE_CONNECT },
        .detail = "connection refused" });
    fx->redials = false;
    assert_true(client_ping(fx->c, false));
    wait_exchanges(fx, 1);
    assert_int_equal(fx->exchanges[0].kind, FAILURE_CONNECT_REFUSED);
    assert_int_equal(fx->exchanges[0].delivered, DELIVERED_NO);
    assert_int_equal(fx->nasked, 1);
    assert_int_equal(fx->asked[0], CLIENT_LOSS_UNREACHABLE);
    assert_int_equal(fx->retried[0], CLIENT_LOSS_NONE);
    assert_true(client_has_session(fx->c));

    fx->redials = true;
    assert_true(client_ping(fx->c, false));
    wait_exchanges(fx, 2);
    assert_int_equal(fx->nasked, 2);
    assert_int_equal(fx->asked[1], CLIENT_LOSS_UNREACHABLE);
    assert_int_equal(fx->retried[1], CLIENT_LOSS_UNREACHABLE);
    assert_int_equal(fx->state, CLIENT_PHASE_OTHER);
    assert_false(client_has_session(fx->c));
    assert_int_equal(fx->norphans, 1);
    assert_string_equal(fx->orphans[0].session, "sess-11");
    assert_string_equal(fx->orphans[0].why, "the connection was lost");
    assert_false(fx->orphans[0].half_open);
    assert_int_equal(fx->ndials, 1);
}

/* --- a lost session ----------------------------------------------------- */

/* 404 to a ping that carried the session id: the failure recorded as the
 * session expired, the session handed to the host to be ended, one dial
 * again, and that dial's new session serves the next ping. */
static void
test_session_lost_redialed_once(void **state)
{
    struct fixture *fx = *state;

    dial_legacy(fx, "old-1");
    rule(fx, (struct fake_rule){ .method = "ping", .uses = 1,
        .kind = FAKE_FAIL, .evd = { .http_status = 404 },
        .detail = "HTTP 404 to ping" });
    rule(fx, (struct fake_rule){ .method = "initialize", .uses = 1,
        .kind = FAKE_RESULT, .result = INIT_RESULT("2025-06-18", TOOLS_CAP),
        .session = "new-1" });
    rule(fx, (struct fake_rule){ .method = "tools/list", .uses = 1,
        .kind = FAKE_RESULT, .result = TOOLS_ABC });
    rule(fx, (struct fake_rule){ .method = "ping", .kind = FAKE_RESULT });
    assert_true(client_ping(fx->c, false));
    fx->want = 2;
    assert_true(run_until(fx, dials_reached, BOUND_S));

    assert_true(sent_nth(fx, "ping", 0)->carried);
    assert_int_equal(fx->nexchanges, 1);
    assert_string_equal(fx->exchanges[0].op, "ping");
    assert_int_equal(fx->exchanges[0].kind, FAILURE_HTTP_STATUS);
    assert_int_equal(fx->exchanges[0].http_status, 404);
    assert_string_equal(fx->exchanges[0].detail,
        "HTTP 404 to ping; session expired");
    assert_int_equal(fx->nasked, 1);
    assert_int_equal(fx->asked[0], CLIENT_LOSS_SESSION);
    assert_int_equal(fx->nretried, 1);
    assert_int_equal(fx->retried[0], CLIENT_LOSS_SESSION);
    assert_int_equal(fx->norphans, 1);
    assert_string_equal(fx->orphans[0].session, "old-1");
    assert_string_equal(fx->orphans[0].protocol_version, "2025-06-18");
    assert_string_equal(fx->orphans[0].why, "the session expired (404)");
    assert_false(fx->orphans[0].half_open);
    assert_int_equal(client_expiries(fx->c), 1);
    assert_int_equal(fx->ndials, 2);
    assert_true(fx->dials[1].completed);
    assert_int_equal(sent_count(fx, "initialize"), 2);

    assert_true(client_ping(fx->c, false));
    wait_exchanges(fx, 2);
    assert_true(fx->exchanges[1].completed);
    assert_true(sent_nth(fx, "ping", 1)->carried);
    assert_int_equal(retried_count(fx, CLIENT_LOSS_SESSION), 1);
    assert_int_equal(fx->ndials, 2);
    assert_int_equal(fx->norphans, 1);
}

/* 400 to a ping that carried the id (a server that does not know it):
 * presumed lost and dialed again once; the same answer on the new session
 * before any exchange completed is only a failure (no second redial). */
static void
test_session_presumed_lost_only_once(void **state)
{
    struct fixture *fx = *state;

    dial_legacy(fx, "old-2");
    rule(fx, (struct fake_rule){ .method = "ping", .kind = FAKE_FAIL,
        .evd = { .http_status = 400 }, .detail = "HTTP 400 to ping" });
    rule(fx, (struct fake_rule){ .method = "initialize", .uses = 1,
        .kind = FAKE_RESULT, .result = INIT_RESULT("2025-06-18", TOOLS_CAP),
        .session = "new-2" });
    rule(fx, (struct fake_rule){ .method = "tools/list", .uses = 1,
        .kind = FAKE_RESULT, .result = TOOLS_ABC });
    assert_true(client_ping(fx->c, false));
    fx->want = 2;
    assert_true(run_until(fx, dials_reached, BOUND_S));
    assert_true(fx->dials[1].completed);
    assert_string_equal(fx->exchanges[0].detail, "HTTP 400 to ping; "
        "session presumed lost: the server does not know it");
    assert_string_equal(fx->orphans[0].why, "the session was presumed lost");
    /* an open session, lost: its ending is no half-open (issue 45) */
    assert_false(fx->orphans[0].half_open);
    assert_int_equal(client_expiries(fx->c), 1);

    assert_true(client_ping(fx->c, false));
    wait_exchanges(fx, 2);
    assert_int_equal(fx->exchanges[1].kind, FAILURE_HTTP_STATUS);
    assert_string_equal(fx->exchanges[1].detail, "HTTP 400 to ping");
    assert_int_equal(retried_count(fx, CLIENT_LOSS_SESSION), 1);
    assert_int_equal(fx->retried[fx->nretried - 1], CLIENT_LOSS_NONE);
    assert_int_equal(fx->ndials, 2);
    assert_int_equal(fx->norphans, 1);
    assert_true(client_has_session(fx->c));
    assert_int_equal(client_expiries(fx->c), 1);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
        T(test_dial_completes),
        T(test_dial_fails_at_initialize),
        T(test_dial_fails_at_initialized),
        T(test_dial_fails_at_list),
        T(test_abandoned_initialize_session_ended),
        T(test_era_discover_unknown_falls_back),
        T(test_era_gateway_error_no_evidence),
        T(test_era_gateway_error_fresh_peer),
        T(test_era_modern_keeps_modern),
        T(test_era_initialize_refused_after_probe_fresh_peer),
        T(test_era_initialize_refused_after_probe_http),
        T(test_server_requests_answered),
        T(test_server_request_bad_id),
        T(test_list_follows_cursors),
        T(test_list_repeated_cursor_stops),
        T(test_list_changed_burst_coalesced),
        T(test_ping_completes),
        T(test_ping_unsupported),
        T(test_ping_timeout),
        T(test_ping_stray_answer),
        T(test_dial_stray_answer),
        T(test_probe_timeout_recorded_and_rescheduled),
        T(test_probe_error_names_step),
        T(test_ping_refused_unreachable),
        T(test_session_lost_redialed_once),
        T(test_session_presumed_lost_only_once),
#undef T
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
