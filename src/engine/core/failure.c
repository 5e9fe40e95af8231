/*
 * The failure classifier and the delivery verdict (DESIGN.md sections 2-3).
 *
 * The classifier is an ordered table: each rule reads only the structure in
 * a struct failure_evidence and names one kind; the first match wins and the
 * last rule matches everything, so every failure gets exactly one kind. It
 * must never look at message text. The delivery table is indexed by kind and
 * sized by FAILURE__COUNT, so adding a kind without a verdict fails the
 * build (the static assertion below) and the completeness test.
 */
#include "engine/failure.h"

#include <stdio.h>
#include <string.h>

#include "util/str.h"

static const char *const failure_kind_names[FAILURE__COUNT] = {
#define X(id, name) [FAILURE_##id] = name,
    FAILURE_KINDS(X)
#undef X
};

static const char *const failure_reason_names[FAILURE_REASON__COUNT] = {
#define X(id, name) [FAILURE_REASON_##id] = name,
    FAILURE_REASONS(X)
#undef X
};

/* DESIGN.md section 3, site `request`. */
static const enum delivered failure_delivery_table[] = {
    [FAILURE_CONNECT_REFUSED]   = DELIVERED_NO,
    [FAILURE_CONNECTION_FAILED] = DELIVERED_UNKNOWN,
    [FAILURE_CONNECTION_CLOSED] = DELIVERED_UNKNOWN,
    [FAILURE_HTTP_STATUS]       = DELIVERED_UNKNOWN,
    [FAILURE_NOT_MCP_RESPONSE]  = DELIVERED_UNKNOWN,
    [FAILURE_SPAWN_FAILED]      = DELIVERED_NO,
    [FAILURE_TIMEOUT]           = DELIVERED_UNKNOWN,
    [FAILURE_PROTOCOL]          = DELIVERED_YES,
    [FAILURE_INVALID_CONFIG]    = DELIVERED_NO,
    [FAILURE_UNKNOWN]           = DELIVERED_UNKNOWN,
};
_Static_assert(sizeof(failure_delivery_table) /
    sizeof(failure_delivery_table[0]) == FAILURE__COUNT,
    "the delivery table must name every failure kind");

const char *
failure_kind_name(enum failure_kind k)
{
    if ((unsigned)k >= FAILURE__COUNT)
        return "?";
    return failure_kind_names[k];
}

int
failure_kind_from_name(const char *name)
{
    for (int k = 0; k < FAILURE__COUNT; k++) {
        if (strcmp(failure_kind_names[k], name) == 0)
            return k;
    }
    return -1;
}

const char *
failure_reason_name(enum failure_reason r)
{
    if ((unsigned)r >= FAILURE_REASON__COUNT)
        return "?";
    return failure_reason_names[r];
}

enum failure_reason
failure_reason_of(const struct failure_evidence *evd)
{
    long st = evd->http_status;

    if (st == 0 || (st >= 200 && st < 300))
        return FAILURE_REASON_NONE;
    if (evd->cf_challenge)
        return FAILURE_REASON_CHALLENGE;
    if (st == 401 || (st == 403 && evd->www_authenticate))
        return FAILURE_REASON_AUTH;
    switch (st) {
    case 403:
        return FAILURE_REASON_FORBIDDEN;
    case 404:
        return FAILURE_REASON_NOT_FOUND;
    case 405:
        return FAILURE_REASON_METHOD_NOT_ALLOWED;
    case 429:
        return FAILURE_REASON_RATE_LIMITED;
    case 502:
        return FAILURE_REASON_BAD_GATEWAY;
    case 503:
        return FAILURE_REASON_UNAVAILABLE;
    case 504:
        return FAILURE_REASON_GATEWAY_TIMEOUT;
    default:
        break;
    }
    if (st >= 300 && st < 400)
        return FAILURE_REASON_REDIRECT;
    if (st >= 500)
        return FAILURE_REASON_SERVER_ERROR;
    return FAILURE_REASON_CLIENT_ERROR;
}

const char *
delivered_name(enum delivered d)
{
    switch (d) {
    case DELIVERED_NO:
        return "no";
    case DELIVERED_YES:
        return "yes";
    default:
        return "unknown";
    }
}

const char *
failure_site_name(enum failure_site s)
{
    return s == FAILURE_SITE_CONNECT ? "connect" : "request";
}

/* --- the rules, in order ------------------------------------------------ */

static bool
rule_config(const struct failure_evidence *evd)
{
    return evd->config_invalid || evd->net == NET_URL_MALFORMAT ||
        evd->net == NET_UNSUPPORTED;
}

static bool
rule_spawn(const struct failure_evidence *evd)
{
    return evd->spawn_error;
}

/* A connection that was never made, including one that did not complete
 * before a timer (curl's connect timeout or one of ours) fired. */
static bool
rule_refused(const struct failure_evidence *evd)
{
    bool before_connected = evd->phase == FAILURE_PHASE_RESOLVE ||
        evd->phase == FAILURE_PHASE_CONNECT;

    /* A local resource that ran out is never the server refusing: such a
     * failure falls through to unknown. */
    if (evd->local_limit)
        return false;
    if (evd->net == NET_RESOLVE || evd->net == NET_CONNECT)
        return true;
    if (evd->net == NET_TIMEDOUT && before_connected)
        return true;
    return evd->timer != FAILURE_TIMER_NONE && evd->timer != FAILURE_TIMER_TEARDOWN &&
        before_connected;
}

static bool
rule_timeout(const struct failure_evidence *evd)
{
    return evd->timer != FAILURE_TIMER_NONE || evd->net == NET_TIMEDOUT;
}

/* A JSON-RPC error carrying this request's own id: only the server could
 * have written it, whatever status the HTTP layer put around it. */
static bool
rule_rpc_error(const struct failure_evidence *evd)
{
    return evd->rpc_error && !evd->rpc_error_id_null;
}

static bool
rule_closed(const struct failure_evidence *evd)
{
    return evd->child_closed || evd->peer_known_dead || evd->stream_ended;
}

static bool
rule_transport(const struct failure_evidence *evd)
{
    switch (evd->net) {
    case NET_SEND:
    case NET_RECV:
    case NET_GOT_NOTHING:
    case NET_PARTIAL:
    case NET_TLS:
    case NET_TLS_VERIFY:
    case NET_HTTP2:
        return true;
    default:
        return false;
    }
}

static bool
rule_status(const struct failure_evidence *evd)
{
    return evd->http_status != 0 &&
        (evd->http_status < 200 || evd->http_status >= 300);
}

/* The server handed us a URL on another origin: it answered, against the
 * rules (DESIGN.md section 6); nothing went there. */
static bool
rule_foreign(const struct failure_evidence *evd)
{
    return evd->foreign_url;
}

static bool
rule_version(const struct failure_evidence *evd)
{
    return evd->bad_protocol_version;
}

static bool
rule_not_mcp(const struct failure_evidence *evd)
{
    if (evd->too_large || evd->sse_no_lines || evd->body_unparsable ||
        evd->bad_encoding || evd->no_matching_response)
        return true;
    /* 2xx to a request, with neither content type MCP allows. */
    return evd->http_status >= 200 && evd->http_status < 300 &&
        !evd->content_json && !evd->content_sse;
}

static bool
rule_other_net(const struct failure_evidence *evd)
{
    return evd->net != NET_OK;
}

static bool
rule_any(const struct failure_evidence *evd)
{
    (void)evd;
    return true;
}

struct failure_rule {
    const char        *name;
    bool             (*match)(const struct failure_evidence *);
    enum failure_kind  kind;
};

static const struct failure_rule failure_rules[] = {
    { "declaration cannot be dialed", rule_config,    FAILURE_INVALID_CONFIG },
    { "command could not start",      rule_spawn,     FAILURE_SPAWN_FAILED },
    { "connection never made",        rule_refused,   FAILURE_CONNECT_REFUSED },
    { "a timer fired",                rule_timeout,   FAILURE_TIMEOUT },
    { "json-rpc error with our id",   rule_rpc_error, FAILURE_PROTOCOL },
    { "transport closed",             rule_closed,    FAILURE_CONNECTION_CLOSED },
    { "transport error",              rule_transport, FAILURE_CONNECTION_FAILED },
    { "http status instead of mcp",   rule_status,    FAILURE_HTTP_STATUS },
    { "a url to another origin",      rule_foreign,   FAILURE_PROTOCOL },
    { "unsupported protocol version", rule_version,   FAILURE_PROTOCOL },
    { "answer is not mcp",            rule_not_mcp,   FAILURE_NOT_MCP_RESPONSE },
    { "other transport result",       rule_other_net, FAILURE_UNKNOWN },
    { "anything else",                rule_any,       FAILURE_UNKNOWN },
};

#define FAILURE_NRULES (sizeof(failure_rules) / sizeof(failure_rules[0]))

size_t
failure_rule_count(void)
{
    return FAILURE_NRULES;
}

const char *
failure_rule_name(size_t i)
{
    return i < FAILURE_NRULES ? failure_rules[i].name : NULL;
}

size_t
failure_rule_match(const struct failure_evidence *evd)
{
    size_t i;

    for (i = 0; i < FAILURE_NRULES - 1; i++) {
        if (failure_rules[i].match(evd))
            break;
    }
    return i;
}

enum failure_kind
failure_classify(const struct failure_evidence *evd)
{
    return failure_rules[failure_rule_match(evd)].kind;
}

enum delivered
failure_delivered_by_kind(enum failure_kind k)
{
    if ((unsigned)k >= FAILURE__COUNT)
        return DELIVERED_UNKNOWN;
    return failure_delivery_table[k];
}

/* libcurl proves the request did not completely leave: fewer body bytes
 * sent than the body holds and not one response byte. A request libcurl
 * may have re-sent on a fresh connection proves nothing about the first
 * attempt, so it never counts. */
static bool
failure_evidence_not_sent(const struct failure_evidence *evd)
{
    if (evd == NULL || evd->resent || evd->body_bytes_expected <= 0)
        return false;
    return evd->body_bytes_sent < evd->body_bytes_expected &&
        evd->response_bytes == 0;
}

enum delivered
failure_delivered(enum failure_kind k, enum failure_site site,
    const struct failure_evidence *evd, bool *by_evidence)
{
    enum delivered d = failure_delivered_by_kind(k);

    if (by_evidence != NULL)
        *by_evidence = false;
    if (k == FAILURE_CONNECTION_CLOSED && evd != NULL && evd->peer_known_dead)
        d = DELIVERED_NO;
    /* A stream the server primed (SEP-1699) proves it had the request. */
    if (k == FAILURE_CONNECTION_CLOSED && evd != NULL && evd->primed &&
        site == FAILURE_SITE_REQUEST)
        d = DELIVERED_YES;
    /* Nothing left here when a local resource ran out. */
    if (evd != NULL && evd->local_limit)
        d = DELIVERED_NO;
    /* A dial that failed mounted nothing, so no call was dispatched; only
     * the two kinds minted from an answer keep their word. */
    if (site == FAILURE_SITE_CONNECT && k != FAILURE_PROTOCOL &&
        k != FAILURE_HTTP_STATUS)
        d = DELIVERED_NO;
    if (d == DELIVERED_UNKNOWN && failure_evidence_not_sent(evd)) {
        d = DELIVERED_NO;
        if (by_evidence != NULL)
            *by_evidence = true;
    }
    return d;
}

void
failure_make(struct failure *out, const struct failure_evidence *evd,
    enum failure_site site, const char *detail)
{
    bool by_evidence = false;

    memset(out, 0, sizeof(*out));
    out->kind = failure_classify(evd);
    out->site = site;
    out->delivered = failure_delivered(out->kind, site, evd, &by_evidence);
    out->evidence_no = by_evidence;
    /* The status rides with http_status, and with protocol only when the
     * JSON-RPC error came behind a non-2xx status. */
    if (out->kind == FAILURE_HTTP_STATUS) {
        out->http_status = evd->http_status;
        out->reason = failure_reason_of(evd);
    }
    else if (out->kind == FAILURE_PROTOCOL && (evd->http_status < 200 ||
        evd->http_status >= 300))
        out->http_status = evd->http_status;
    /* A protocol failure keeps the code its error object carried (the
     * OpenTelemetry error.type of an MCP operation). */
    if (out->kind == FAILURE_PROTOCOL && evd->tool_error)
        out->reason = FAILURE_REASON_TOOL_ERROR;
    else if (out->kind == FAILURE_PROTOCOL && evd->unexpected_result)
        out->reason = FAILURE_REASON_UNEXPECTED_RESULT;
    else if (out->kind == FAILURE_PROTOCOL && evd->input_required)
        out->reason = FAILURE_REASON_INPUT_REQUIRED;
    else if (out->kind == FAILURE_PROTOCOL && evd->rpc_error) {
        out->has_rpc_code = true;
        out->rpc_code = evd->rpc_error_code;
    }
    if (by_evidence) {
        snprintf(out->detail, sizeof(out->detail),
            "%s; not sent: %lld of %lld body bytes left, no answer",
            detail != NULL ? detail : "",
            (long long)evd->body_bytes_sent,
            (long long)evd->body_bytes_expected);
    } else if (detail != NULL) {
        snprintf(out->detail, sizeof(out->detail), "%s", detail);
    }
    /* Details quote servers and configs: keep them safe to print. */
    str_sanitize(out->detail, sizeof(out->detail), out->detail,
        strlen(out->detail));
}
