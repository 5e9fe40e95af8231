/*
 * The server stream: the GET stream of a legacy session, or
 * subscriptions/listen of the 2026-07-28 era, for server-initiated
 * messages (list_changed). It is reopened when it closes or falls silent,
 * after the server's `retry` or a backoff, never sooner than a floor, with
 * jitter, at most CLIENT_STREAM_PER_MIN times a minute whether or not the
 * reopenings succeed. The messages that answer nothing in flight, from any
 * stream, are read here too: an answer whose id no request of ours ever
 * had is remembered, so that a request out of time says it was not ours.
 */
#include "mcp/client_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonrpc.h"
#include "util/str.h"
#include "util/xmalloc.h"

static void
client_listen(struct client *c)
{
    int64_t            id;
    struct client_req *rq;
    size_t             len;
    char              *body, *cause = NULL;

    if (client_find(c, CLIENT_OP_LISTEN) != NULL || client_state(c) !=
        CLIENT_PHASE_READY)
        return;
    id = c->next_id++;
    rq = client_req_new(c, CLIENT_OP_LISTEN, id, "subscriptions/listen");
    body = jsonrpc_build_modern(id, rq->method, MCP_PROTOCOL_MODERN,
        "mcptop", MCPTOP_VERSION, NULL, true, &len);
    c->stream_started = client_now(c);
    if (!client_send(c, rq, body, len, client_flags(c, CLIENT_OP_LISTEN), 0,
        &cause)) {
        client_log(c, "listen not sent: %s", cause);
        free(cause);
        client_req_free(rq, NULL);
    }
    free(body);
}

/* Open the server stream when the server offers list changes. */
void
client_streams_start(struct client *c)
{
    if (c->env->no_streams || !c->tools_list_changed ||
        client_state(c) != CLIENT_PHASE_READY)
        return;
    if (c->era == MCP_ERA_MODERN) {
        client_listen(c);
    } else if (!c->stream_none && transport_has_stream(c->t) &&
        transport_has_session(c->t)) {
        char *cause = NULL;

        c->stream_started = client_now(c);
        if (transport_stream_open(c->t, &cause) != 0) {
            client_log(c, "stream not opened: %s", cause);
            free(cause);
        }
    }
}

void
client_stream_retry_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct client *c = w->data;

    (void)loop;
    (void)revents;
    c->stream_none = false;     /* asked again, rarely (client_no_stream) */
    client_streams_start(c);
}

/*
 * Plan a reconnect of the server stream after `retry` (floored) or a
 * backoff, with jitter, capped per minute: the cap counts every reconnect
 * of the window, opened or not, so a server that keeps closing the stream
 * is not hammered.
 */
void
client_stream_later(struct client *c)
{
    ev_tstamp now = client_now(c);
    double    jitter = 0.9 + 0.2 * ((double)rand() / RAND_MAX);
    double    delay;

    if (now - c->stream_window > 60.0) {
        c->stream_window = now;
        c->stream_reconnects = 0;
    }
    if (++c->stream_reconnects > CLIENT_STREAM_PER_MIN) {
        delay = 60.0 - (now - c->stream_window);
        client_log(c, "stream: reconnect cap reached; next in %.0f s",
            delay);
    } else if (c->stream_retry_ms >= 0) {
        delay = c->stream_retry_ms / 1000.0;
    } else {
        delay = fmin(CLIENT_STREAM_CAP_S,
            pow(1.5, (double)c->stream_reconnects - 1));
    }
    delay = fmax(delay, CLIENT_STREAM_FLOOR_S) * jitter;
    delay = fmax(delay, client_wait_left(c));
    ev_timer_stop(c->env->loop, &c->stream_timer);
    ev_timer_set(&c->stream_timer, delay, 0.);
    ev_timer_start(c->env->loop, &c->stream_timer);
}

/* The idle watchdog's length: a silent stream is re-opened, not failed. */
static double
client_stream_idle_s(const struct client *c)
{
    if (c->decl->stream_idle_ms > 0)
        return c->decl->stream_idle_ms / 1000.0;
    return fmax(CLIENT_STREAM_IDLE_MIN_S,
        4.0 * c->decl->ping_interval_ms / 1000.0);
}

/* ev_timer: the server stream was silent too long: open it afresh. */
void
client_stream_idle_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct client     *c = w->data;
    struct client_req *l = client_find(c, CLIENT_OP_LISTEN);
    double             idle = client_stream_idle_s(c);
    double             quiet;
    ev_tstamp          last;

    (void)revents;
    ev_timer_stop(loop, w);
    if (transport_activity(c->t, &last)) {
        /* Any bytes keep it alive, a keep-alive comment too: re-arm for
         * what is left since the last ones (libev's lazy idle timer). */
        quiet = ev_now(loop) - last;
        if (quiet < idle) {
            w->repeat = idle - quiet;
            ev_timer_again(loop, w);
            w->repeat = idle;
            return;
        }
    }
    client_log(c, "stream: silent for %.0f s; reopening",
        client_stream_idle_s(c));
    if (l != NULL)
        client_req_free(l, NULL);
    else
        transport_stream_close(c->t);
    c->stream_opened = false;
    client_stream_later(c);
}

/* A stream's 2xx headers came: one completed outcome, then watch it. */
void
client_on_stream_open(struct client *c, struct client_req *listen)
{
    if (listen != NULL)
        listen->opened = true;
    c->stream_opened = true;
    client_report_exchange(c, listen != NULL ? "listen" : "stream", NULL,
        client_elapsed_ms(c, c->stream_started));
    c->stream_idle.repeat = client_stream_idle_s(c);
    ev_timer_again(c->env->loop, &c->stream_idle);
}

/*
 * The optional GET was answered with no stream (a 405, a 4xx that is no
 * auth or rate refusal, a 2xx that is no event stream: JSON, an empty
 * body): the server has no stream for us now. An answer, never a failure
 * of the server: said once a session, and asked again only rarely (from
 * 30 s, doubling to 10 min, with jitter).
 */
static void
client_no_stream(struct client *c, double ms, const char *what)
{
    double jitter = 0.9 + 0.2 * ((double)rand() / RAND_MAX);
    double delay;

    if (c->stream_nones++ == 0)
        client_log(c, "stream: %s: the server has no stream for us; asked "
            "again rarely", what);
    c->stream_none = true;
    client_report_exchange(c, "stream", NULL, ms);
    delay = fmin(CLIENT_STREAM_NONE_CAP_S, CLIENT_STREAM_NONE_FLOOR_S *
        pow(2.0, (double)(c->stream_nones > 6 ? 6 : c->stream_nones - 1)));
    delay = fmax(delay * jitter, client_wait_left(c));
    ev_timer_stop(c->env->loop, &c->stream_timer);
    ev_timer_set(&c->stream_timer, delay, 0.);
    ev_timer_start(c->env->loop, &c->stream_timer);
}

void
client_on_stream_closed(struct client *c, const struct transport_event *e)
{
    double ms = client_elapsed_ms(c, c->stream_started);
    long   st;

    ev_timer_stop(c->env->loop, &c->stream_idle);
    c->stream_opened = false;
    if (e->retry_ms >= 0)
        c->stream_retry_ms = e->retry_ms;
    if (e->none) {
        client_no_stream(c, ms, "HTTP 405 to the optional GET");
        return;
    }
    if (e->opened) {
        /* A cleanly closed stream is not a failure; resume later. */
        client_log(c, "stream closed after %.0f ms", ms);
        client_stream_later(c);
        return;
    }
    st = e->failure->evd.http_status;
    if (st == 404 && transport_has_session(c->t)) {
        /* The spec's "session gone" to a GET that carried our id: one
         * POST confirms it at once (a 404 there too ends the session and
         * redials), instead of waiting for the next ping. */
        client_fail(c, "stream", &e->failure->evd, ms, e->failure->detail);
        client_ping(c, false);
        return;
    }
    if ((st >= 400 && st < 500 && st != 401 && st != 403 && st != 407 &&
        st != 429) || (st >= 200 && st < 300)) {
        /* A 4xx (Express's 400 "No sessionId"), or a 2xx that is no event
         * stream (a JSON body, an empty one): no stream for us. */
        char what[200];

        snprintf(what, sizeof(what), "HTTP %ld to the optional GET (%.150s)",
            st, e->failure->detail);
        client_no_stream(c, ms, what);
        return;
    }
    client_fail(c, "stream", &e->failure->evd, ms, e->failure->detail);
    client_stream_later(c);
}

void
client_on_listen_done(struct client *c, struct client_req *rq,
    struct transport_result *res)
{
    bool graceful = !res->failed && res->answer != NULL &&
        jsonrpc_kind(res->answer) == JSONRPC_RESULT;
    bool was_open = rq->opened;

    client_req_free(rq, NULL);
    ev_timer_stop(c->env->loop, &c->stream_idle);
    c->stream_opened = false;
    if (client_state(c) != CLIENT_PHASE_READY)
        return;
    if (!graceful) {
        /* A close without the listen's result: an unexpected disconnect. */
        c->listen_drops++;
        client_log(c, "listen closed unexpectedly (%lu so far)%s",
            c->listen_drops, was_open ? "" : " before it opened");
        if (!was_open && res->failed && (res->f.evd.http_status >= 300 ||
            res->f.evd.net != NET_OK))
            client_fail(c, "listen", &res->f.evd, 0, res->f.detail);
    }
    /* Resubscribe later, with the stream's backoff and cap. */
    c->stream_retry_ms = -1;
    client_stream_later(c);
}

/* An answer that answers nothing in flight: a late one to a request of
 * ours (an integral id we gave), or one whose id no request of ours ever
 * had, which is remembered (issue 26, item 8). */
static void
client_stray_note(struct client *c, const struct jsonrpc_msg *m)
{
    int64_t id;

    if (jsonrpc_kind(m) != JSONRPC_RESULT && (jsonrpc_kind(m) !=
        JSONRPC_ERROR || jsonrpc_id_is_null(m)))
        return;
    if (jsonrpc_id_int(m, &id) && id >= 1 && id < c->next_id)
        return;
    c->stray_at = client_now(c);
    jsonrpc_id_describe(m, c->stray_id, sizeof(c->stray_id));
    client_log(c, "an answer with id %s: no request of ours has it",
        c->stray_id);
}

bool
client_stray_judge(const struct client *c, int64_t id, ev_tstamp started,
    const char *timed_out, struct failure_evidence *evd, char *detail,
    size_t dsz)
{
    size_t n;

    if (id < 0 || c->stray_at <= 0 || c->stray_at < started)
        return false;
    evd->timer = FAILURE_TIMER_NONE;
    evd->net = NET_OK;
    evd->no_matching_response = true;
    n = jsonrpc_stray_words(c->stray_id, id, detail, dsz);
    if (n + 4 < dsz)
        snprintf(detail + n, dsz - n, "; %s", timed_out);
    return true;
}

/* A message that answers nothing in flight: a notice, a request, or an
 * answer (a late one, or one whose id is none of ours). */
void
client_on_message(struct client *c, const struct jsonrpc_msg *m,
    struct client_req *on)
{
    const char *method = jsonrpc_method(m);

    if (on != NULL && on->op == CLIENT_OP_CALL && method != NULL &&
        (strcmp(method, "notifications/progress") == 0 ||
        strcmp(method, "notifications/message") == 0)) {
        /* Progress or a log line before the tool's result: counted. */
        if (c->deep != NULL)
            c->deep->notices++;
        client_log(c, "tools/call: %s", method);
        return;
    }
    if (c->stream_opened)
        ev_timer_again(c->env->loop, &c->stream_idle);
    if (method == NULL) {
        client_stray_note(c, m);
        client_era_late_answer(c, m);
        return;
    }
    if (jsonrpc_kind(m) == JSONRPC_REQUEST) {
        /* The server asks its client: answered at once, whatever the
         * transport and wherever it came (a POST's stream, the GET's). */
        client_answer_server(c, m, method);
        return;
    }
    if (strcmp(method, "notifications/tools/list_changed") == 0) {
        client_log(c, "notice: tools list changed");
        if (c->relist_wanted)
            c->notices_coalesced++;
        c->relist_wanted = true;
        client_relist(c);
    }
}
