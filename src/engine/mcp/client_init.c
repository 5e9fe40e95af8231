/*
 * The legacy handshake (MCP 2025-03-26 .. 2025-11-25 basic/lifecycle):
 * initialize offering the newest revision mcptop speaks, the answer taken
 * (the version agreed, the capabilities, the server's name, the session
 * it issued), notifications/initialized, and the era the answer revises
 * (-32022 naming 2026-07-28, a 2024-11-05 answer). Part of the lifecycle
 * (client.c); reports only through the host.
 */
#include "mcp/client_int.h"

#include <stdlib.h>
#include <string.h>

#include "core/jsonrpc.h"
#include "transport/transport.h"
#include "util/str.h"
#include "util/xmalloc.h"

/* Revisions of the legacy era mcptop accepts, newest first (DESIGN.md
 * section 6): it offers the newest and speaks whichever the server picks. */
static const char *const client_legacy_versions[] = {
    MCP_PROTOCOL_LATEST, "2025-06-18", "2025-03-26", "2024-11-05",
};

static bool
client_version_spoken(const char *v)
{
    for (size_t i = 0; v != NULL && i < sizeof(client_legacy_versions) /
        sizeof(client_legacy_versions[0]); i++) {
        if (strcmp(v, client_legacy_versions[i]) == 0)
            return true;
    }
    return false;
}

/* --- legacy: initialize, initialized ------------------------------------ */

void
client_send_initialize(struct client *c)
{
    int64_t            id = c->next_id++;
    struct client_req *rq = client_req_new(c, CLIENT_OP_INITIALIZE, id,
        "initialize");
    size_t             len;
    char              *body = jsonrpc_build_initialize(id,
        MCP_PROTOCOL_LATEST, "mcptop", MCPTOP_VERSION, &len);

    client_dial_step(c, rq, body, len, client_timeout_ms(c));
}

static void
client_take_capabilities(struct client *c, const struct jsonrpc_msg *m)
{
    const char *names[CLIENT_MAX_CAPS];
    size_t      n = jsonrpc_object_keys(m, "result.capabilities", names,
        CLIENT_MAX_CAPS);

    for (size_t i = 0; i < c->ncaps; i++)
        free(c->caps[i]);
    for (size_t i = 0; i < n; i++)
        c->caps[i] = str_sanitized(names[i]);
    c->ncaps = n;
}

/* What initialize or discover says of the server. */
void
client_take_server(struct client *c, const struct jsonrpc_msg *m,
    const char *name, const char *version)
{
    bool b = false;

    client_take_capabilities(c, m);
    free(c->peer_name);
    c->peer_name = name != NULL ? str_sanitized(name) : NULL;
    free(c->peer_version);
    c->peer_version = version != NULL ? str_sanitized(version) : NULL;
    c->has_tools_cap = jsonrpc_has(m, "result.capabilities.tools");
    c->tools_list_changed = jsonrpc_get_bool(m,
        "result.capabilities.tools.listChanged", &b) && b;
}

/* The dial's handshake is done: list, or complete with no tools. */
void
client_handshake_done(struct client *c)
{
    if (c->has_tools_cap) {
        client_begin_list(c, true);
        return;
    }
    client_free_strv(c->tool_names, c->ntools);
    c->tool_names = NULL;
    c->ntools = 0;
    client_dial_completed(c);
}

static void
client_send_initialized(struct client *c)
{
    struct client_req *rq = client_req_new(c, CLIENT_OP_INITIALIZED, -1, NULL);
    size_t             len;
    char              *body = jsonrpc_build_notification(
        "notifications/initialized", &len);

    client_dial_step(c, rq, body, len, client_timeout_ms(c));
}

/*
 * A child that answered initialize with a JSON-RPC error after the era
 * probe (a stdio bridge such as supergateway forwards server/discover
 * upstream and then refuses initialize: "Server already initialized") is
 * treated like one that died on the probe: a fresh child, initialize with
 * no probe (the era is legacy once it works, never before). The warning says so once the dial works. The
 * answer is read inside the old child's stdout callback, which must not
 * see its child freed: the fresh one is opened on the next loop turn.
 */
static bool
client_initialize_fresh(struct client *c, const struct failure_evidence *evd,
    const char *detail)
{
    c->respawned = true;
    free(c->probe_note);
    c->probe_note = str_printf("the child refused initialize after "
        "server/discover (%.120s), so a fresh child was dialed with no "
        "probe", detail);
    client_log(c, "era: legacy (initialize after server/discover got "
        "JSON-RPC error %ld); initialize on a fresh child, no probe",
        evd->rpc_error_code);
    ev_timer_stop(c->env->loop, &c->fresh_timer);
    ev_timer_set(&c->fresh_timer, 0., 0.);
    ev_timer_start(c->env->loop, &c->fresh_timer);
    return true;
}

void
client_fresh_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct client           *c = w->data;
    struct transport_failure f;

    (void)loop;
    (void)revents;
    if (client_state(c) != CLIENT_PHASE_DIALING)
        return;     /* the dial ended meanwhile (its deadline, an ending) */
    if (transport_open(c->t, &f) < 0) {
        client_dial_failed(c, &f.evd, f.detail);
        return;
    }
    client_send_initialize(c);
}

/*
 * Evidence against the era a failed initialize went out under (DESIGN.md
 * section 6): a -32022 listing only 2026-07-28 is proof of modern; a 4xx
 * where a remembered legacy verdict used to work means probing again; a
 * child that died right after an unanswered probe, or refused initialize
 * after an answered one, gets one fresh child. Each at most once a dial.
 * true when the dial goes on.
 */
static bool
client_initialize_revises_era(struct client *c,
    const struct transport_result *res, const struct failure_evidence *evd,
    const char *detail)
{
    long status = evd->http_status;
    bool auto_era = c->decl->era == CONFIG_ERA_AUTO;

    if (evd->rpc_error && !evd->rpc_error_id_null &&
        evd->rpc_error_code == -32022 && res->answer != NULL && auto_era &&
        !c->init_said_modern &&
        jsonrpc_array_has(res->answer, "error.data.supported",
        MCP_PROTOCOL_MODERN)) {
        bool legacy = false;

        for (size_t i = 0; i < 4 && !legacy; i++) {
            static const char *const v[] = { MCP_PROTOCOL_LATEST,
                "2025-06-18", "2025-03-26", "2024-11-05" };

            legacy = jsonrpc_array_has(res->answer, "error.data.supported",
                v[i]);
        }
        if (!legacy) {
            c->init_said_modern = true;
            client_log(c, "era: initialize got -32022 listing only %s: "
                "modern", MCP_PROTOCOL_MODERN);
            c->era = MCP_ERA_MODERN;
            client_send_discover(c);
            return true;
        }
    }
    if (auto_era && c->era == MCP_ERA_LEGACY && !c->probed_this_dial &&
        !evd->rpc_error && (status == 400 || status == 404 ||
        status == 405)) {
        /* The remembered verdict stopped working: probe again. */
        client_log(c, "era: legacy stopped working (HTTP %ld to "
            "initialize); probing again", status);
        c->era = MCP_ERA_NONE;
        client_send_discover(c);
        return true;
    }
    if (c->silent_probe && !c->respawned &&
        (evd->child_closed || evd->peer_known_dead)) {
        /* It ignored the probe and then died: a fresh one for initialize. */
        struct transport_failure f;

        c->respawned = true;
        client_log(c, "era: the transport closed after an unanswered "
            "probe; initialize on a fresh one");
        if (transport_open(c->t, &f) < 0) {
            client_dial_failed(c, &f.evd, f.detail);
            return true;
        }
        client_send_initialize(c);
        return true;
    }
    if (auto_era && c->probed_this_dial && !c->respawned &&
        evd->rpc_error && evd->rpc_error_code != -32022 &&
        transport_has_cap(c->t, TRANSPORT_CAP_FRESH_PEER))
        return client_initialize_fresh(c, evd, detail);
    return false;
}

/* An initialize whose dial was abandoned settled: a session it brought
 * is ended half-open. */
static void
client_on_detached(struct client *c, struct transport_result *res)
{
    const char *pv = res->answer != NULL ? jsonrpc_get_string(res->answer,
        "result.protocolVersion") : NULL;

    if (res->session == NULL) {
        client_log(c, "abandoned initialize settled without a session");
        return;
    }
    client_report_orphan(c, res->session,
        client_version_spoken(pv) ? pv : NULL,
        "session issued after the dial was abandoned", true);
    res->session = NULL;
}

void
client_on_initialize(struct client *c, struct client_req *rq,
    struct transport_result *res)
{
    struct failure_evidence evd;
    char                    detail[256];
    const char             *v;

    if (rq->detached) {
        client_req_free(rq, NULL);
        client_on_detached(c, res);
        return;
    }
    client_req_free(rq, NULL);
    if (client_judge(res, &evd, detail, sizeof(detail))) {
        if (res->session != NULL) {
            client_report_orphan(c, res->session, NULL,
                "session issued to an initialize that failed", true);
            res->session = NULL;
        }
        if (client_initialize_revises_era(c, res, &evd, detail))
            return;
        if (transport_has_older(c->t) && c->decl->era == CONFIG_ERA_AUTO &&
            !c->sse_tried && (evd.http_status == 400 ||
            evd.http_status == 404 || evd.http_status == 405) &&
            !(evd.rpc_error && !evd.rpc_error_id_null)) {
            /* Neither era's POST works here: try the older transport
             * (2024-11-05 HTTP+SSE: GET, then the `endpoint` event). */
            struct transport_failure f;
            int                      rc;

            c->sse_tried = true;
            c->sse_fallback_now = true;
            if (c->sse_fallback == NULL)
                c->sse_fallback = xcalloc(1, sizeof(*c->sse_fallback));
            c->sse_fallback->evd = evd;
            snprintf(c->sse_fallback->detail, sizeof(c->sse_fallback->detail),
                "%s", detail);
            client_use_transport(c, transport_older(c->t, &c->tenv));
            c->era = MCP_ERA_LEGACY_SSE;
            rc = transport_open(c->t, &f);
            if (rc < 0)
                client_dial_failed(c, &f.evd, f.detail);
            else if (rc == 0)
                client_send_initialize(c);
            return;
        }
        client_dial_failed(c, &evd, detail);
        return;
    }
    v = jsonrpc_get_string(res->answer, "result.protocolVersion");
    if (!client_version_spoken(v)) {
        char clean[40] = "none";

        if (v != NULL)
            str_sanitize(clean, sizeof(clean), v, strlen(v));
        evd.bad_protocol_version = true;
        snprintf(detail, sizeof(detail), "server chose protocol version "
            "%s; mcptop speaks 2025-11-25, 2025-06-18, 2025-03-26, "
            "2024-11-05", clean);
        if (res->session != NULL) {
            client_report_orphan(c, res->session, NULL,
                "session issued in a version mcptop does not speak", true);
            res->session = NULL;
        }
        client_dial_failed(c, &evd, detail);
        return;
    }
    free(c->protocol_version);
    c->protocol_version = xstrdup(v);
    client_take_server(c, res->answer,
        jsonrpc_get_string(res->answer, "result.serverInfo.name"),
        jsonrpc_get_string(res->answer, "result.serverInfo.version"));
    if (c->era != MCP_ERA_LEGACY_SSE)
        c->era = MCP_ERA_LEGACY;
    /* Only a 2xx answer to initialize issues a session. */
    transport_adopt(c->t, res->session, c->protocol_version);
    res->session = NULL;
    client_send_initialized(c);
}

void
client_on_initialized(struct client *c, struct client_req *rq,
    struct transport_result *res)
{
    struct failure_evidence evd;
    char                    detail[256];

    client_req_free(rq, NULL);
    if (client_judge(res, &evd, detail, sizeof(detail))) {
        char        said[256];
        const char *rest = detail;
        char        head[64];

        if (evd.http_status >= 300) {
            /* Say which step failed, and that the one before worked. */
            snprintf(head, sizeof(head), "HTTP %ld to %s", evd.http_status,
                "notifications/initialized");
            if (strncmp(rest, head, strlen(head)) == 0)
                rest += strlen(head);
            snprintf(said, sizeof(said), "notifications/initialized "
                "answered %ld after initialize succeeded%.180s", evd.http_status,
                rest);
        } else {
            snprintf(said, sizeof(said), "notifications/initialized failed "
                "after initialize succeeded: %.180s", detail);
        }
        client_dial_failed(c, &evd, said);
        return;
    }
    client_handshake_done(c);
}

