/*
 * The era probe (MCP 2026-07-28 basic/versioning, compatibility): a dial
 * begins with server/discover unless the era is known or configured
 * legacy. A DiscoverResult that lists 2026-07-28 is proof of modern; a
 * -32022 naming it is asked once more; a legacy answer (a 4xx that is no
 * modern error, -32022 listing only legacy versions, silence where servers
 * may ignore unknown methods, a transport that closed on the probe) means
 * initialize. An outage is never an era verdict.
 */
#include "mcp/client_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonrpc.h"
#include "util/str.h"
#include "util/xmalloc.h"

void
client_fallback_legacy(struct client *c, const char *why)
{
    client_log(c, "era: legacy (%s)", why);
    c->era = MCP_ERA_LEGACY;
    if (!transport_alive(c->t)) {
        /* The transport went away on the probe (a child that exited): a
         * fresh one for initialize. */
        struct transport_failure f;

        c->respawned = true;
        if (transport_open(c->t, &f) < 0) {
            client_dial_failed(c, &f.evd, f.detail);
            return;
        }
    }
    client_send_initialize(c);
}

/* The transport is ready: the first step of the dial. */
void
client_dial_begin(struct client *c)
{
    if (c->decl->era == CONFIG_ERA_MODERN || (c->decl->era ==
        CONFIG_ERA_AUTO && c->era != MCP_ERA_LEGACY &&
        c->era != MCP_ERA_LEGACY_SSE)) {
        /* 2026-07-28 compatibility rules: probe with server/discover. */
        client_send_discover(c);
        return;
    }
    client_send_initialize(c);
}

void
client_send_discover(struct client *c)
{
    int64_t            id = c->next_id++;
    struct client_req *rq = client_req_new(c, CLIENT_OP_DISCOVER, id,
        "server/discover");
    size_t             len;
    char              *body = jsonrpc_build_modern(id, rq->method,
        MCP_PROTOCOL_MODERN, "mcptop", MCPTOP_VERSION, NULL, false, &len);
    long               timeout = client_timeout_ms(c);

    c->probe_id = id;
    c->probed_this_dial = true;
    /* Where a legacy server may simply never answer the probe: wait a
     * bounded part of the request timeout, then fall back. */
    if (transport_has_cap(c->t, TRANSPORT_CAP_SILENT_PROBE) &&
        c->decl->era == CONFIG_ERA_AUTO)
        timeout = timeout / 2 < 3000 ? timeout / 2 : 3000;
    client_dial_step(c, rq, body, len, timeout);
}

static void
client_take_discover(struct client *c, const struct jsonrpc_msg *m)
{
    const char *v;

    free(c->protocol_version);
    c->protocol_version = xstrdup(MCP_PROTOCOL_MODERN);
    client_take_server(c, m,
        jsonrpc_get_stringv(m, "result", "_meta",
            "io.modelcontextprotocol/serverInfo", "name", (char *)NULL),
        jsonrpc_get_stringv(m, "result", "_meta",
            "io.modelcontextprotocol/serverInfo", "version", (char *)NULL));
    free(c->cache_scope);
    v = jsonrpc_get_string(m, "result.cacheScope");
    c->cache_scope = v != NULL ? str_sanitized(v) : NULL;
}

/*
 * The probe got a JSON-RPC error that is none of 2026-07-28's own: no era
 * evidence (a gateway whose child died answers every method -32603). The
 * era is left as it is and initialize is tried in the same dial: only its
 * result is evidence (DESIGN.md section 6). -32601 (method not found) is
 * what a legacy server says to a method it does not know: nothing to say;
 * any other code is kept, to be said as the warning either way.
 */
static void
client_unproven_initialize(struct client *c,
    const struct failure_evidence *evd, const char *detail)
{
    if (evd->rpc_error_code != -32601) {
        free(c->probe_note);
        c->probe_note = str_printf("server/discover answered %.160s",
            detail);
    }
    client_log(c, "era: server/discover got JSON-RPC error %ld, no era "
        "evidence; trying initialize", evd->rpc_error_code);
    if (!transport_alive(c->t)) {
        struct transport_failure f;

        c->respawned = true;
        if (transport_open(c->t, &f) < 0) {
            client_dial_failed(c, &f.evd, f.detail);
            return;
        }
    }
    client_send_initialize(c);
}

/* Is this JSON-RPC error one only a 2026-07-28 server sends? */
static bool
client_modern_error(long code)
{
    return code == -32020 || code == -32021 || code == -32022;
}

void
client_on_discover(struct client *c, struct client_req *rq,
    struct transport_result *res)
{
    struct failure_evidence evd;
    char                    detail[256];
    bool                    auto_era = c->decl->era == CONFIG_ERA_AUTO;
    long                    status = res->f.evd.http_status;

    client_req_free(rq, NULL);
    if (!client_judge(res, &evd, detail, sizeof(detail))) {
        /* A result that is no DiscoverResult (supportedVersions is
         * required: a server answering any method with a result), or one
         * that lists no version mcptop speaks: not modern for us. */
        bool        listed = jsonrpc_array_len(res->answer,
            "result.supportedVersions") >= 0;
        const char *why = !listed ?
            "server/discover answered without supportedVersions" :
            !jsonrpc_array_has(res->answer, "result.supportedVersions",
            MCP_PROTOCOL_MODERN) ? "server/discover lists no version "
            "mcptop speaks (it speaks 2026-07-28)" : NULL;

        if (why != NULL) {
            if (auto_era) {
                client_fallback_legacy(c, why);
                return;
            }
            evd.no_matching_response = !listed;
            evd.bad_protocol_version = listed;
            client_dial_failed(c, &evd, why);
            return;
        }
        c->era = MCP_ERA_MODERN;
        client_take_discover(c, res->answer);
        client_log(c, "era: modern (%s)", MCP_PROTOCOL_MODERN);
        client_handshake_done(c);
        return;
    }
    if (evd.rpc_error && !evd.rpc_error_id_null) {
        /* The server answered the probe with a JSON-RPC error, in a 2xx
         * body or behind a 4xx. */
        long code = evd.rpc_error_code;
        bool names_modern = res->answer != NULL &&
            jsonrpc_array_has(res->answer, "error.data.supported",
            MCP_PROTOCOL_MODERN);

        if (code == -32022 && names_modern && !c->probe_retried) {
            c->probe_retried = true;
            client_log(c, "era: -32022 names %s; probing once more",
                MCP_PROTOCOL_MODERN);
            client_send_discover(c);
            return;
        }
        if (code == -32022 && auto_era) {
            client_fallback_legacy(c, "-32022 lists only legacy versions");
            return;
        }
        if (client_modern_error(code) || !auto_era) {
            /* A recognised modern error: the request is wrong, not the
             * era; report it (MCP 2026-07-28 basic/transports). */
            if (client_modern_error(code))
                c->era = MCP_ERA_MODERN;
            client_dial_failed(c, &evd, detail);
            return;
        }
        client_unproven_initialize(c, &evd, detail);
        return;
    }
    if (!auto_era) {
        client_dial_failed(c, &evd, detail);
        return;
    }
    if (evd.child_closed || evd.peer_known_dead) {
        client_fallback_legacy(c, "the transport closed on server/discover");
        return;
    }
    if ((status >= 500 && status != 502 && status != 503 && status != 504) ||
        (status >= 200 && status < 300)) {
        /* The server answered, but not with a JSON-RPC response for the
         * probe (an exception page, a body that is not MCP): evidence of
         * nothing yet. Try initialize in the same dial; if it completes,
         * that is the proof of legacy, and it is said. */
        free(c->probe_note);
        c->probe_note = str_printf("server/discover answered HTTP %ld with "
            "no JSON-RPC response", status);
        client_log(c, "era: %s; trying initialize", c->probe_note);
        client_send_initialize(c);
        return;
    }
    /* A 4xx that is not a modern error means a legacy server; 401/403,
     * 429, a gateway's 502/503/504, transport failures and timeouts are
     * failures, never an era verdict. */
    if (status >= 400 && status < 500 && status != 401 && status != 403 &&
        status != 429 && !(evd.rpc_error &&
        client_modern_error(evd.rpc_error_code))) {
        client_fallback_legacy(c, "4xx to server/discover");
        return;
    }
    client_dial_failed(c, &evd, detail);
}

/*
 * A response that answers no request in flight: a DiscoverResult to a
 * probe given up as unanswered (a slow stdio server) is late proof of
 * modern, acted on at once: the dial goes on as modern, or a legacy
 * session is left for a modern dial.
 */
void
client_era_late_answer(struct client *c, const struct jsonrpc_msg *m)
{
    enum client_phase st = client_state(c);

    if (c->probe_id <= 0 || c->decl->era != CONFIG_ERA_AUTO ||
        c->era == MCP_ERA_MODERN || jsonrpc_kind(m) != JSONRPC_RESULT ||
        !jsonrpc_id_is(m, c->probe_id) ||
        !jsonrpc_array_has(m, "result.supportedVersions",
        MCP_PROTOCOL_MODERN))
        return;
    client_log(c, "era: a late DiscoverResult lists %s: modern",
        MCP_PROTOCOL_MODERN);
    c->era = MCP_ERA_MODERN;
    c->silent_probe = false;
    if (st == CLIENT_PHASE_DIALING) {
        for (struct client_req *rq = c->reqs, *n; rq != NULL; rq = n) {
            n = rq->next;
            if (rq->in_dial)
                client_req_free(rq, NULL);
        }
        client_send_discover(c);
    } else if (client_retries(c, CLIENT_LOSS_ERA_PROVEN)) {
        client_drop(c, "the era changed", false);
        client_retry(c, CLIENT_LOSS_ERA_PROVEN);
    }
}
