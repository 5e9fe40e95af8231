/*
 * One HTTP exchange of MCP's Streamable HTTP transport (MCP 2025-03-26 ..
 * 2025-11-25, basic/transports): a POST of one JSON-RPC message, the GET
 * stream, or a DELETE (and, for the session-hygiene audit's probes, a
 * HEAD or an OPTIONS). The transfer reads the answer as JSON or as SSE
 * (parsed incrementally, each event handed up as it completes), bounds it
 * by max_bytes, and at its end fills a struct http_result with the
 * evidence the classifier reads. It knows the headers MCP names, not the
 * lifecycle: that is the client's.
 */
#ifndef MCPTOP_ENGINE_HTTP_H
#define MCPTOP_ENGINE_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/failure.h"
#include "util/str.h"

struct curlev;
struct http_xfer;

/* The bound on one message or body when a request names none: the
 * config's default (CONFIG_DEFAULT_MAX_MESSAGE_BYTES is this). */
#define HTTP_MAX_BYTES (16u * 1024 * 1024)

/* The longest Mcp-Session-Id taken: one that long goes back in a header of
 * every request. */
#define HTTP_SESSION_ID_MAX 4096
/* The longest wait a Retry-After may ask, seconds (longer is clamped). */
#define HTTP_RETRY_AFTER_MAX 3600

enum http_method {
    HTTP_POST,
    HTTP_GET,
    HTTP_DELETE,
    HTTP_HEAD,              /* the audit's probes: no body is read */
    HTTP_OPTIONS,
};

struct http_request {
    enum http_method        method;
    const char             *url;
    const char             *body;           /* POST only; copied */
    size_t                  body_len;
    const struct str_kv *headers;        /* user headers; copied */
    size_t                  nheaders;
    const char             *session_id;     /* Mcp-Session-Id, or NULL */
    const char             *protocol_version;/* MCP-Protocol-Version or NULL */
    const char             *last_event_id;  /* GET resumption, or NULL */
    const char             *mcp_method;     /* Mcp-Method (2026-07-28) */
    bool                    no_cache;       /* Cache-Control: no-cache */
    size_t                  pool_key;       /* the server's number: keeps
                                               its connections together */
    size_t                  max_bytes;      /* one message / body bound;
                                               0: HTTP_MAX_BYTES */
    const char             *ca_file;
    bool                    tls_insecure;
    bool                    no_reuse;       /* close the connection after
                                               this transfer instead of
                                               keeping it for the next */
    bool                    maybe_resent;   /* a pooled connection may be
                                               reused: a failure may hide
                                               libcurl's silent re-send */
    bool                    cert_info;      /* https: keep the server
                                               certificate's expiry of a
                                               new connection under
                                               pool_key (the MCP endpoint's;
                                               never another origin's) */
    /* OAuth (MCP basic/authorization). Each is optional: when all are
     * NULL the request is exactly the MCP one. */
    const char             *authorization;  /* Authorization value; secret:
                                               never logged */
    const char             *content_type;   /* POST body type instead of
                                               application/json */
    const char             *accept;         /* Accept instead of MCP's */
    /* The session's header list (http_hdrs_for), or NULL: a list of the
     * transfer's own, built for it alone. */
    struct http_hdrs      **hdrs_slot;
};

/* An answer's buffer starts this small and doubles as it fills. */
#define HTTP_BODY_START 256

/* The capacity (bytes) a buffer of cap grows to so that it holds need
 * bytes: HTTP_BODY_START at first (cap 0), doubled until it does, never
 * past bound (need > bound: bound, which the caller refuses). */
size_t http_buffer_grow(size_t cap, size_t need, size_t bound);

/*
 * One header list for the requests of a session, built once and rebuilt
 * only when a header changes (a new session id, a refreshed token, the
 * protocol version, another method's Accept or Mcp-Method). Refcounted:
 * the slot holds one reference, each transfer using the list another,
 * dropped when libcurl is done with it, so a list replaced while a
 * transfer is in flight lives until that transfer ends.
 */
struct http_hdrs;

/* True when h (NULL: none) holds exactly the header lines rq asks for. */
bool http_hdrs_fit(const struct http_hdrs *h, const struct http_request *rq);
/* The list for rq: *slot when it fits, else a new one that replaces it
 * there (the old one unreferenced). Returns a reference for the caller,
 * dropped with http_hdrs_unref. */
struct http_hdrs *http_hdrs_for(struct http_hdrs **slot,
    const struct http_request *rq);
/* Drop a reference (NULL: nothing); the last one wipes the lines, which
 * may carry the session id and a token, and frees the list. */
void http_hdrs_unref(struct http_hdrs *h);

/* Everything known when the transfer ended. Borrowed during on_done. */
struct http_result {
    struct failure_evidence evd;             /* net, phase, status, bytes... */
    bool        completed;                  /* transfer ran to its end */
    bool        stopped;                    /* the owner asked it to stop */
    long        status;
    const char *content_type;               /* NULL if none */
    const char *session_id;                 /* visible-ASCII Mcp-Session-Id
                                               of the answer, or NULL */
    bool        session_id_invalid;         /* present but not visible ASCII */
    long        keep_alive_s;               /* Keep-Alive: timeout=N, how
                                               long the server keeps an idle
                                               connection; -1 when absent */
    long        retry_after_s;              /* -1 when absent; clamped to
                                               HTTP_RETRY_AFTER_MAX */
    bool        retry_after_clamped;        /* it asked for more */
    const char *retry_after_text;           /* as sent (sanitized, cut) */
    size_t      session_id_len;             /* >0: an id refused as longer
                                               than HTTP_SESSION_ID_MAX */
    const char *auth_scheme;                /* WWW-Authenticate scheme */
    bool        header_too_large;           /* libcurl refused an answer
                                               header (past 100 KiB) */
    const char *location;                   /* Location, as sent, or NULL */
    const char *redirect_url;               /* 3xx: Location resolved */
    const char *www_authenticate;           /* the whole value (the first
                                               Bearer one when several), or
                                               NULL; untrusted text */
    const char *body;                       /* non-SSE body (bounded) */
    size_t      body_len;
    const char *error_text;                 /* libcurl's message, or NULL */
    const char *content_encoding;           /* Content-Encoding, as sent
                                               (sanitized, cut), or NULL */
    double      total_ms;                   /* libcurl's total time */
    long        num_connects;               /* new connections made */
    const char *last_event_id;              /* SSE: "" if none */
    int64_t     retry_ms;                   /* SSE retry, -1 if none */
};

struct http_callbacks {
    /* Headers are in (status known). May return non-zero to stop. */
    int  (*on_headers)(void *arg, struct http_xfer *x, long status,
        const char *content_type);
    /* One SSE event (or, for a JSON body, the whole body once complete:
     * type NULL). Return non-zero to stop the transfer (result.stopped). */
    int  (*on_message)(void *arg, struct http_xfer *x, const char *type,
        const char *data, size_t len);
    /* Optional: bytes of the body arrived (any: an SSE comment too). */
    void (*on_activity)(void *arg, struct http_xfer *x);
    /* Exactly once per transfer, unless http_xfer_abort came first. The
     * transfer is freed right after this returns. */
    void (*on_done)(void *arg, struct http_xfer *x,
        const struct http_result *r);
};

/*
 * Start a transfer on ce. The request is copied. NULL with *cause set when
 * the handle cannot be made (then nothing runs). cb and arg must outlive
 * the transfer.
 */
struct http_xfer *http_start(struct curlev *ce, const struct http_request *rq,
    const struct http_callbacks *cb, void *arg, char **cause);

/*
 * Abort a running transfer now: on_done is NOT called and the transfer is
 * freed. evd_out (may be NULL) gets the evidence known at the abort (how far
 * the attempt got, bytes sent), for classifying a timeout.
 */
void http_xfer_abort(struct http_xfer *x, struct failure_evidence *evd_out);

/* The evidence known so far of a running transfer, which goes on. */
void http_xfer_peek(struct http_xfer *x, struct failure_evidence *evd_out);

/* The Mcp-Session-Id of a running transfer's answer so far (borrowed, NULL
 * when none), whether one was refused as not visible ASCII, and its length
 * when refused as too long (else 0). */
void http_xfer_session(struct http_xfer *x, const char **id, bool *invalid,
    size_t *too_long);

/* ref (absolute, or relative as in an HTTP+SSE `endpoint` event) resolved
 * against base. Caller frees; NULL when either cannot be parsed. */
char *http_resolve_url(const char *base, const char *ref);

/* "scheme://host:port" of url (host lower-cased, the default port made
 * explicit): what a URL a server hands us must share with the configured
 * one. Caller frees; NULL when url cannot be parsed. */
char *http_url_origin(const char *url);
/* True when both parse and have the same origin. */
bool http_same_origin(const char *a, const char *b);

/* Short name of a method ("POST"). */
const char *http_method_name(enum http_method m);

/* The linked libcurl's version and its TLS backend's (NULL when none),
 * as it reports them at run time. Static strings. */
void http_library_versions(const char **version, const char **tls);

/* The content encodings the linked libcurl decodes (it asks for them
 * all, Accept-Encoding, and decodes what comes), as it reports them at run
 * time: "gzip, deflate, br, zstd", or "" when none. Static string. */
const char *http_decoded_encodings(void);

/* Global init/cleanup of the HTTP library; call once from main. */
int  http_global_init(void);
void http_global_cleanup(void);

#endif
