/*
 * The deep check (a server's "probe_tool"): a tools/call of the one tool
 * the config names, with its arguments, at its own interval (and once in
 * `check`), as an exchange of its own, op "tools/call". It completes when
 * the result comes without isError and, if expect_text is set, a text
 * content item holds it; otherwise it fails as protocol, with the tool's
 * own words (sanitized) or "expected text not found". Its round trip is
 * kept apart from the ping's. It never calls a tool that is not
 * configured.
 */
#include "mcp/client_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonrpc.h"
#include "util/str.h"
#include "util/xmalloc.h"

/* A deep check failed: recorded as a tools/call exchange whose detail
 * names its step, as a dial's names the step that failed. */
static void
client_probe_fail(struct client *c, const struct failure_evidence *evd,
    double ms, const char *detail)
{
    char named[280];

    if (detail != NULL && strstr(detail, "tools/call") == NULL) {
        snprintf(named, sizeof(named), "tools/call: %.260s", detail);
        detail = named;
    }
    client_fail(c, "tools/call", evd, ms, detail);
}

/* The probe's own timeout: the configured one, else the server's. */
static long
client_probe_timeout_ms(const struct client *c)
{
    const struct config_probe *p = c->decl->probe;

    return p != NULL && p->timeout_ms > 0 ? p->timeout_ms :
        client_timeout_ms(c);
}

/* The last deep check held (ok) or not. */
static void
client_probe_held(struct client *c, bool ok)
{
    if (c->deep != NULL)
        c->deep->ok = ok;
}

void
client_probe_schedule(struct client *c)
{
    const struct config_probe *p = c->decl->probe;
    double                     in;

    if (c->deep == NULL)
        return;
    ev_timer_stop(c->env->loop, &c->deep->timer);
    if (p == NULL || c->env->no_pings || client_state(c) != CLIENT_PHASE_READY)
        return;
    /* The first call right after the dial, then at the interval, with
     * the ping's jitter (a fleet does not call in one burst). */
    in = c->deep->calls == 0 ? 0. : p->interval_ms / 1000.0 *
        (0.9 + 0.2 * ((double)rand() / RAND_MAX));
    if (client_wait_left(c) > in)
        in = client_wait_left(c);
    ev_timer_set(&c->deep->timer, in, 0.);
    ev_timer_start(c->env->loop, &c->deep->timer);
}

void
client_probe_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct client *c = w->data;

    (void)loop;
    (void)revents;
    if (!client_probe_now(c))
        client_probe_schedule(c);
}

bool
client_probe_now(struct client *c)
{
    const struct config_probe *p = c->decl->probe;
    int64_t                    id;
    struct client_req         *rq;
    size_t                     len;
    char                      *body, *cause = NULL;

    if (p == NULL || c->deep == NULL ||
        client_find(c, CLIENT_OP_CALL) != NULL ||
        client_state(c) != CLIENT_PHASE_READY || client_wait_left(c) > 0)
        return false;
    id = c->next_id++;
    rq = client_req_new(c, CLIENT_OP_CALL, id, "tools/call");
    body = jsonrpc_build_tool_call(id, p->name, p->arguments,
        c->era == MCP_ERA_MODERN ? MCP_PROTOCOL_MODERN : NULL, "mcptop",
        MCPTOP_VERSION, &len);
    c->deep->calls++;
    client_log(c, "tools/call %s (the deep check)", p->name);
    if (!client_send(c, rq, body, len, c->era == MCP_ERA_MODERN ?
        TRANSPORT_MODERN : 0, client_probe_timeout_ms(c), &cause)) {
        struct failure_evidence evd = { .net = NET_OTHER };

        client_req_free(rq, NULL);
        client_probe_fail(c, &evd, 0, cause);
        free(cause);
        free(body);
        return false;
    }
    free(body);
    return true;
}

void
client_probe_timed_out(struct client *c, struct failure_evidence *evd,
    double ms, const char *why)
{
    const struct config_probe *p = c->decl->probe;
    char                       detail[160];

    snprintf(detail, sizeof(detail), "no answer to tools/call %.60s within "
        "%ld ms (the deep check's timeout)", p != NULL ? p->name : "?",
        client_probe_timeout_ms(c));
    client_probe_held(c, false);
    client_probe_fail(c, evd, ms, why != NULL ? why : detail);
    client_probe_schedule(c);
}

void
client_on_call(struct client *c, struct client_req *rq,
    struct transport_result *res)
{
    const struct config_probe *p = c->decl->probe;
    struct failure_evidence    evd;
    char                       detail[256], said[160], clean[160];
    double                     ms = client_elapsed_ms(c, rq->started);
    bool                       is_error = false, found = true;

    client_req_free(rq, NULL);
    if (client_judge(res, &evd, detail, sizeof(detail))) {
        client_probe_held(c, false);
        if (!client_session_lost(c, "tools/call", res->carried_session, &evd,
            ms, detail))
            client_probe_fail(c, &evd, ms, detail);
        client_probe_schedule(c);
        return;
    }
    jsonrpc_tool_result(res->answer, p != NULL ? p->expect_text : NULL,
        &is_error, said, sizeof(said), &found);
    if (is_error || !found) {
        /* The server answered: the tool did not do its work. */
        str_sanitize(clean, sizeof(clean), said, strlen(said));
        evd.rpc_error = true;
        evd.rpc_error_code = 0;
        evd.tool_error = is_error;
        evd.unexpected_result = !is_error;
        evd.http_status = 0;
        if (is_error)
            snprintf(detail, sizeof(detail), "tool %.60s answered isError%s"
                "%s", p != NULL ? p->name : "?", clean[0] ? ": " : "",
                clean);
        else
            snprintf(detail, sizeof(detail), "tool %.60s: expected text not "
                "found%s%.120s", p != NULL ? p->name : "?", clean[0] ?
                "; it said: " : "", clean);
        client_probe_held(c, false);
        client_probe_fail(c, &evd, ms, detail);
        client_probe_schedule(c);
        return;
    }
    client_probe_held(c, true);
    if (c->deep != NULL)
        c->deep->ms = ms;
    client_report_exchange(c, "tools/call", NULL, ms);
    client_probe_schedule(c);
}
