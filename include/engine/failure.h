/*
 * The closed set of failure kinds, the delivery verdict and the classifier
 * (DESIGN.md sections 2 and 3). A failure is decided from the structure of
 * what happened (curl result code, errno, HTTP status, content type, the
 * JSON-RPC error object, the spawn errno), never from message text.
 *
 * The classifier is an ordered table of rules, first match wins, and the
 * last rule matches everything. The delivery table is indexed by kind and
 * sized by the kind count, so a new kind cannot be added without a verdict.
 */
#ifndef MCPTOP_ENGINE_FAILURE_H
#define MCPTOP_ENGINE_FAILURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FAILURE_KINDS(X)                                \
    X(CONNECT_REFUSED,   "connect_refused")             \
    X(CONNECTION_FAILED, "connection_failed")           \
    X(CONNECTION_CLOSED, "connection_closed")           \
    X(HTTP_STATUS,       "http_status")                 \
    X(NOT_MCP_RESPONSE,  "not_mcp_response")            \
    X(SPAWN_FAILED,      "spawn_failed")                \
    X(TIMEOUT,           "timeout")                     \
    X(PROTOCOL,          "protocol")                    \
    X(INVALID_CONFIG,    "invalid_config")              \
    X(UNKNOWN,           "unknown")

enum failure_kind {
#define X(id, name) FAILURE_##id,
    FAILURE_KINDS(X)
#undef X
    FAILURE__COUNT
};

enum delivered {
    DELIVERED_NO,
    DELIVERED_UNKNOWN,
    DELIVERED_YES,
    DELIVERED__COUNT
};

/*
 * Why an endpoint answered with an HTTP status instead of MCP (DESIGN.md
 * section 2), read from structure: the status, WWW-Authenticate, a
 * CDN/WAF's cf-mitigated header. Only http_status failures carry one.
 */
#define FAILURE_REASONS(X)                              \
    X(NONE,               "")                           \
    X(AUTH,               "auth")                       \
    X(FORBIDDEN,          "forbidden")                  \
    X(CHALLENGE,          "challenge")                  \
    X(RATE_LIMITED,       "rate_limited")               \
    X(UNAVAILABLE,        "unavailable")                \
    X(BAD_GATEWAY,        "bad_gateway")                \
    X(GATEWAY_TIMEOUT,    "gateway_timeout")            \
    X(REDIRECT,           "redirect")                   \
    X(NOT_FOUND,          "not_found")                  \
    X(METHOD_NOT_ALLOWED, "method_not_allowed")         \
    X(SERVER_ERROR,       "server_error")               \
    X(CLIENT_ERROR,       "client_error")                 \
    X(TOOL_ERROR,         "tool_error")                   \
    X(UNEXPECTED_RESULT,  "unexpected_result")            \
    X(INPUT_REQUIRED,     "input_required")

enum failure_reason {
#define X(id, name) FAILURE_REASON_##id,
    FAILURE_REASONS(X)
#undef X
    FAILURE_REASON__COUNT
};

/* Where the failure was judged: during the dial (connect, initialize,
 * first listing) or on an established session. */
enum failure_site {
    FAILURE_SITE_CONNECT,
    FAILURE_SITE_REQUEST,
    FAILURE_SITE__COUNT
};

/* Which mcptop timer fired, for FAILURE_TIMEOUT. */
enum failure_timer {
    FAILURE_TIMER_NONE,
    FAILURE_TIMER_REQUEST,      /* per-request timeout */
    FAILURE_TIMER_OPEN,         /* the dial's open deadline */
    FAILURE_TIMER_IDLE,         /* idle watchdog on a stream */
    FAILURE_TIMER_TEARDOWN,     /* an ending's deadline */
};

/* How far an HTTP attempt got, from libcurl's timings. */
enum failure_phase {
    FAILURE_PHASE_NONE,         /* nothing started (resolve not begun) */
    FAILURE_PHASE_RESOLVE,      /* name lookup */
    FAILURE_PHASE_CONNECT,      /* TCP connect */
    FAILURE_PHASE_TLS,          /* TLS handshake */
    FAILURE_PHASE_SENT,         /* request (partly) written, no response byte */
    FAILURE_PHASE_RESPONSE,     /* at least one response byte received */
};

/* What an HTTP transport reported, mapped from the library's result code by
 * the transport (so the classifier also reads exchanges mcptop did not
 * make itself, and needs no HTTP library). */
enum net_error {
    NET_OK,
    NET_RESOLVE,            /* host or proxy name did not resolve */
    NET_CONNECT,            /* connect() failed */
    NET_TIMEDOUT,           /* the library's own timer (connect timeout) */
    NET_SEND,               /* error writing the request */
    NET_RECV,               /* error reading the answer (reset) */
    NET_GOT_NOTHING,        /* connection closed with no answer at all */
    NET_PARTIAL,            /* answer cut short */
    NET_TLS,                /* TLS handshake or record failure */
    NET_TLS_VERIFY,         /* the peer's certificate did not verify */
    NET_HTTP2,              /* HTTP/2 framing or stream error */
    NET_URL_MALFORMAT,      /* the URL cannot be parsed */
    NET_UNSUPPORTED,        /* unsupported scheme */
    NET_ABORTED,            /* aborted by mcptop (a callback said stop) */
    NET_OTHER,              /* anything else */
};

/*
 * Everything the classifier reads: the structure of one failed exchange.
 * Zero-initialise, then fill what is known. No pointer is kept.
 */
struct failure_evidence {
    /* HTTP transport */
    enum net_error net;             /* NET_OK = transfer completed */
    int         os_errno;           /* CURLINFO_OS_ERRNO or the syscall's */
    enum failure_phase phase;
    long        http_status;        /* 0 = none received */
    bool        www_authenticate;   /* the answer had WWW-Authenticate */
    bool        cf_challenge;       /* cf-mitigated: challenge */
    bool        content_json;       /* Content-Type application/json */
    bool        content_sse;        /* Content-Type text/event-stream */
    int64_t     body_bytes_expected;/* request body length */
    int64_t     body_bytes_sent;    /* what libcurl reports as uploaded */
    int64_t     response_bytes;     /* response header+body bytes seen */
    bool        resent;             /* libcurl may have re-sent the request
                                       on a fresh connection */
    bool        too_large;          /* past max_message_bytes */
    bool        sse_no_lines;       /* SSE body with no SSE in it */
    bool        sse_empty;          /* an event stream closed with no
                                       byte of body */
    bool        stream_ended;       /* SSE stream ended before the answer */
    bool        primed;             /* ...after the server primed it with
                                       an event id: it had the request */
    /* JSON-RPC */
    bool        body_unparsable;    /* 2xx JSON body that is not JSON */
    bool        bad_encoding;       /* an answer in a Content-Encoding the
                                       HTTP library could not decode */
    bool        no_matching_response; /* parsed, but no response with our id */
    bool        rpc_error;          /* an `error` member answering our id */
    bool        rpc_error_id_null;  /* an `error` member with null/no id */
    long        rpc_error_code;
    bool        tool_error;         /* a tools/call result with isError */
    bool        unexpected_result;  /* ...without the text expected */
    bool        input_required;     /* ...an InputRequiredResult (MRTR,
                                       2026-07-28 basic/patterns/mrtr):
                                       the server asks its client first */
    bool        bad_protocol_version; /* initialize answered a version we
                                         do not speak */
    bool        foreign_url;        /* the server pointed us at a URL on
                                       another origin (refused, unsent) */
    /* stdio */
    bool        spawn_error;        /* exec/spawn failed, os_errno set */
    bool        child_closed;       /* EOF/EPIPE, or the child exited */
    bool        peer_known_dead;    /* nothing was sent: already dead */
    /* ours */
    bool        local_limit;        /* a local resource ran out (EMFILE,
                                       ENFILE): not the server's doing */
    enum failure_timer timer;       /* an mcptop timer fired */
    bool        config_invalid;     /* declaration cannot be dialed */
};

/* One classified failure. `detail` is mcptop's own text, already safe to
 * show (server-provided parts are sanitized when it is built). */
struct failure {
    enum failure_kind kind;
    enum delivered    delivered;
    enum failure_site site;
    long              http_status;  /* kept for http_status and protocol */
    enum failure_reason reason;     /* http_status only; else FAILURE_REASON_NONE */
    bool              has_rpc_code; /* protocol: the JSON-RPC error code */
    long              rpc_code;     /* of the error object, when has_rpc_code */
    bool              evidence_no;  /* delivered became no by evidence */
    char              detail[256];
};

/* The kind's name ("connect_refused"). Static string; "?" if out of range. */
const char *failure_kind_name(enum failure_kind k);
/* Parse a kind name; -1 when unknown. */
int failure_kind_from_name(const char *name);
/* The reason's name ("rate_limited"); "" for FAILURE_REASON_NONE. Static. */
const char *failure_reason_name(enum failure_reason r);
/* The reason an HTTP status answer supports, from its structure (status,
 * WWW-Authenticate, cf-mitigated). FAILURE_REASON_NONE for a 2xx or no status. */
enum failure_reason failure_reason_of(const struct failure_evidence *evd);

/* "yes" / "no" / "unknown". Static string. */
const char *delivered_name(enum delivered d);
/* "connect" / "request". Static string. */
const char *failure_site_name(enum failure_site s);

/* Run the ordered rule table over evd: first matching rule names the kind. */
enum failure_kind failure_classify(const struct failure_evidence *evd);

/* The delivery table for a kind on an established connection (site
 * request). DESIGN.md section 3. */
enum delivered failure_delivered_by_kind(enum failure_kind k);

/*
 * The full verdict: the table, then the site rule (at the dial everything
 * is `no` except protocol and http_status, which keep the table's word),
 * then the evidence rule (unknown becomes no when libcurl proves the body
 * did not completely leave and no response byte came back, unless libcurl
 * may have re-sent the request). *by_evidence is set when the evidence
 * rule decided; it may be NULL.
 */
enum delivered failure_delivered(enum failure_kind k, enum failure_site site,
    const struct failure_evidence *evd, bool *by_evidence);

/*
 * Classify evd at site and fill *out (kind, delivered, status, evidence
 * flag) with a detail built from `detail` (may be NULL; copied, truncated).
 */
void failure_make(struct failure *out, const struct failure_evidence *evd,
    enum failure_site site, const char *detail);

/* Number of rules in the classifier table; for tests that walk it. */
size_t failure_rule_count(void);
/* The name of rule i (for tests and the debug log). NULL past the end. */
const char *failure_rule_name(size_t i);
/* The index of the first rule matching evd. */
size_t failure_rule_match(const struct failure_evidence *evd);

#endif
