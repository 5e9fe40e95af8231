/*
 * Answering the server (DESIGN.md, answering the server): a server may
 * send its own requests to its client at any time, on any transport. Each
 * is answered at once, through the transport that carried it: `ping` with
 * an empty result (basic/utilities/ping: "the receiver MUST respond
 * promptly"), any other method with -32601, since mcptop declares no
 * client capability (no roots, sampling or elicitation). The answer is
 * fire-and-forget: it is no request of ours, awaits nothing and is no
 * liveness exchange; one that cannot be sent is logged, never a failure
 * of the server. What must never happen here: a server's request dropped
 * unanswered (a server that holds tools/list until its ping is answered
 * would time the dial out).
 */
#include "mcp/client_int.h"

#include <stdlib.h>
#include <string.h>

#include "core/jsonrpc.h"
#include "util/str.h"

#define CLIENT_NOT_DECLARED "Method not found: mcptop declares no client " \
    "capability for it"

void
client_answer_server(struct client *c, const struct jsonrpc_msg *m,
    const char *method)
{
    enum mcp_asked     kind = mcp_asked_of(method);
    bool               ping = kind == MCP_ASKED_PING;
    const char        *answered = ping ? "result" : "-32601";
    char               clean[64], id[48], *body, *cause = NULL;
    size_t             len = 0;
    struct client_req *rq;

    str_sanitize(clean, sizeof(clean), method, strlen(method));
    jsonrpc_id_describe(m, id, sizeof(id));
    c->asked[kind]++;
    body = jsonrpc_build_answer(m, ping ? 0 : -32601,
        ping ? NULL : CLIENT_NOT_DECLARED, &len);
    if (body == NULL) {
        /* No id a response can name (an object, an array, null). */
        client_log(c, "server request %s with id %s: no response can name "
            "it; not answered", clean, id);
        client_report_asked(c, kind, clean, id, "none");
        return;
    }
    client_log(c, "server request %s (id %s): answered %s", clean, id,
        answered);
    rq = client_req_new(c, CLIENT_OP_ANSWER, -1, "response");
    if (!client_send(c, rq, body, len, 0, client_timeout_ms(c), &cause)) {
        client_log(c, "the answer to the server's %s was not sent: %s",
            clean, cause != NULL ? cause : "?");
        free(cause);
        client_req_free(rq, NULL);
        answered = "unsent";
    }
    free(body);
    client_report_asked(c, kind, clean, id, answered);
}

void
client_on_answer_sent(struct client *c, struct client_req *rq,
    const struct transport_result *res)
{
    client_req_free(rq, NULL);
    if (res->failed)
        client_log(c, "the answer to a server request was not taken: %s",
            res->f.detail);
}

unsigned long
client_asked(const struct client *c, enum mcp_asked kind)
{
    return c != NULL && (unsigned)kind < MCP_ASKED__COUNT ?
        c->asked[kind] : 0;
}
