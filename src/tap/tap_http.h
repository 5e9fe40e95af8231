/*
 * The HTTP tap's parts (private; tap_http.c, tap_session.c): one request
 * of the agent's and its answer (tap_hx), the agent's sessions the server
 * issued (tap_session), the tap's own requests (tap_own: a cancel's
 * notification, an operator's ending), and the whole (tap_http).
 * tap_http.c is the agent's side (libmicrohttpd) and the pass-through;
 * tap_session.c keeps the sessions and sends the tap's own requests.
 */
#ifndef MCPTOP_TAP_HTTP_H
#define MCPTOP_TAP_HTTP_H

#include <strings.h>

#include "engine/curlev.h"
#include "engine/http_relay.h"
#include "engine/sse.h"
#include "tap_int.h"

struct MHD_Connection;
struct MHD_Daemon;

#define TAP_HTTP_LOW_WATER     (TAP_HIGH_WATER / 4)
#define TAP_HTTP_HEADERS_MAX   100         /* the agent's, passed on */
#define TAP_HTTP_SESSIONS_MAX  256
#define TAP_HTTP_CONNECTIONS   64
#define TAP_HTTP_IDLE_S        600         /* an idle agent connection */
#define TAP_HTTP_BLOCK         (16 * 1024)
#define TAP_HTTP_LOG_BURST     20          /* MHD's messages a minute */

enum tap_hx_state {
    TAP_HX_BODY,        /* the agent's body is arriving */
    TAP_HX_WAIT,        /* upstream has it; no head yet (suspended) */
    TAP_HX_HEAD,        /* the head came: the answer goes on resume */
    TAP_HX_STREAM,      /* the answer is queued; its body flows */
};

/* One request of the agent's and its answer. */
struct tap_hx {
    struct tap_http       *h;
    struct MHD_Connection *conn;
    struct tap_hx         *prev, *next;
    char                   method[16];
    char                 **hdrs;            /* passed on, "Name: value" */
    size_t                 nhdrs;
    char                  *session;         /* its Mcp-Session-Id */
    char                  *body;
    size_t                 len, cap;
    bool                   too_large;
    bool                   bad_header;      /* not passed on: 400 */
    bool                   many_headers;    /* over the cap: 431 */
    char                 **ids;             /* requests in the body */
    size_t                 nids;
    bool                   initialize;
    struct http_relay     *up;
    enum tap_hx_state      state;
    bool                   suspended;
    ev_io                  gone;            /* the agent's socket, waiting */
    long                   status;
    char                 **rhdrs;           /* the answer's, passed on */
    size_t                 nrhdrs;
    bool                   sse;
    struct sse            *parser;
    char                  *copy;            /* a JSON answer's copy */
    size_t                 copy_len, copy_cap;
    bool                   copy_skip;
    char                  *out;             /* for the agent */
    size_t                 off, olen, ocap;
    bool                   up_done, cut;
    unsigned               nl_run;          /* line ends in a row */
    bool                   any;             /* a byte was passed on */
    char                  *inject;          /* the tap's SSE event */
    bool                   stopped;         /* the tap ended upstream */
    bool                   own;             /* the tap answers itself */
    int                    own_status;
    char                  *own_body;
    const char            *own_type;
};

/* An agent's session, as the server issued it. */
struct tap_session {
    char               *id;                 /* never published */
    char               *protocol;           /* MCP-Protocol-Version */
    char               *authorization;      /* never published */
    int64_t             created_ms;
    double              created, last;
    unsigned long       requests;
    bool                ending;             /* the operator's DELETE */
    struct tap_session *next;
};

/* A request of the tap's own (a cancel's notification, an ending). */
struct tap_own {
    struct tap_http   *h;
    struct http_relay *up;
    bool               end;
    char               prefix[16];
    double             started;
    long               status;
    bool               head_only;           /* stopped at its head */
    char              *session;             /* the ending's id */
    struct tap_own    *prev, *next;
};

struct tap_http {
    struct tap          *t;
    struct MHD_Daemon   *mhd;
    ev_io                io;
    ev_timer             timer, kick;
    ev_prepare           flow;
    struct curlev       *ce;
    char                *upstream;
    char                *shown;             /* the URL without secrets */
    char                 listen[80];
    struct tap_hx       *xs;
    struct tap_session  *sessions;
    size_t               nsessions;
    struct tap_own      *owns;
    bool                 resume_due;
    int64_t              log_since;         /* MHD's messages' minute */
    unsigned             log_count;
    unsigned long        log_dropped;
};


/* tap_http.c: the agent's headers, "Name: value" lines. */
static inline bool
tap_http_name_is(const char *line, const char *name)
{
    size_t n = strlen(name);

    return strncasecmp(line, name, n) == 0 && line[n] == ':';
}

/* The value of header name in lines, or NULL. Borrowed. */
static inline const char *
tap_http_header(char *const *lines, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++) {
        if (tap_http_name_is(lines[i], name)) {
            const char *v = lines[i] + strlen(name) + 1;

            while (*v == ' ' || *v == '\t')
                v++;
            return v;
        }
    }
    return NULL;
}

/* tap_session.c */
struct tap_session *tap_session_find(struct tap_http *h, const char *id);
void tap_session_free(struct tap_session *s);
/* The session with id left (the server said 404, the agent or the
 * operator ended it): said as a session_gone event with why. */
void tap_session_drop(struct tap_http *h, const char *id, const char *why);
/* x's request counts for its session (if listed). */
void tap_session_touch(struct tap_http *h, struct tap_hx *x);
/* x (an initialize) was answered with session id. */
void tap_session_new(struct tap_http *h, struct tap_hx *x, const char *id);
/* Send method upstream on the tap's own behalf, in the agent's session
 * (session, protocol, authorization may be NULL), body (NULL: none),
 * under timeout_ms. NULL when it could not start. */
struct tap_own *tap_session_send(struct tap_http *h, const char *method,
    const char *session, const char *protocol, const char *authorization,
    const char *body, long timeout_ms);
/* Abort (without an outcome) and free. */
void tap_session_own_free(struct tap_own *o);

#endif
