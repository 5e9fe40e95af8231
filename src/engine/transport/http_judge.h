/*
 * Judging a finished HTTP exchange (engine-private; used by the two HTTP
 * transports only): an http_result becomes the response carrying the
 * request's id, or the evidence and words of a failure (DESIGN.md section
 * 2). What only MCP can judge (a JSON-RPC error, resultType) is left to the
 * lifecycle.
 */
#ifndef MCPTOP_ENGINE_HTTP_JUDGE_H
#define MCPTOP_ENGINE_HTTP_JUDGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/http.h"
#include "transport/transport.h"

struct jsonrpc_msg;

/*
 * A POST that asked for id (-1: a notification) finished. *answer holds
 * what an SSE answer already delivered for id (or NULL); a JSON body is
 * read here. stray (may be NULL) is the id, as jsonrpc_id_describe gave
 * it, of an answer with another id that came on the POST's SSE stream: a
 * stream that then ended without ours is not_mcp_response, not a closed
 * transport. Returns true when the exchange failed (f set; *answer may
 * then hold a JSON-RPC error with our id that came behind a non-2xx);
 * false when *answer holds the response (or the notification was
 * accepted). max_bytes names the size limit in a detail.
 */
bool http_judge_post(const struct http_result *r, int64_t id,
    const char *method, size_t max_bytes, const char *stray,
    struct jsonrpc_msg **answer, struct transport_failure *f);

/* The words for a non-2xx answer to `what` (a method, or "DELETE"; may
 * be NULL): the status, its reason (an auth challenge, a CDN's, a redirect
 * not followed), a JSON-RPC error body (code, sanitized message, versions
 * supported), or else the server's own words (a short sentence that is not
 * markup, a page's title: io/http_words.h); evd
 * gains what the body shows. If the body is a JSON-RPC error carrying id,
 * it is handed out in *answer (may be NULL: then freed). */
void http_judge_status(const struct http_result *r,
    struct failure_evidence *evd, int64_t id, const char *what, char *detail,
    size_t dsz, struct jsonrpc_msg **answer);

/* The words for a transport failure: libcurl's message (sanitized), how
 * far it got, the body bytes sent. */
void http_judge_net(const struct http_result *r, char *detail, size_t dsz);

/* Any failure of a transfer that is not a POST (a GET stream, a DELETE):
 * a transport error, a status, or `otherwise` for a 2xx. */
void http_judge_other(const struct http_result *r, struct transport_failure *f,
    const char *what, const char *otherwise);

#endif
