/*
 * HTTP results judged into transport results. It reads only the structure
 * libcurl and the answer gave (status, content type, bytes, the JSON-RPC
 * object), never message text; every server-provided string it quotes is
 * sanitized.
 */
#include "transport/http_judge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "io/http_words.h"
#include "core/jsonrpc.h"
#include "util/str.h"

/* Bytes of a detail left free after the server's words, for what the
 * lifecycle adds ("; session presumed lost: ...", the dial's step). */
#define HTTP_JUDGE_RESERVE 56

void
http_judge_net(const struct http_result *r, char *detail, size_t dsz)
{
    static const char *const phases[] = {
        [FAILURE_PHASE_NONE] = "start", [FAILURE_PHASE_RESOLVE] = "resolve",
        [FAILURE_PHASE_CONNECT] = "connect", [FAILURE_PHASE_TLS] = "tls",
        [FAILURE_PHASE_SENT] = "request sent",
        [FAILURE_PHASE_RESPONSE] = "response",
    };
    char err[120] = "";

    if (r->evd.local_limit) {
        snprintf(detail, dsz, "local limit: too many open files (mcptop "
            "could not open a socket; nothing was sent)");
        return;
    }
    if (r->error_text != NULL)
        str_sanitize(err, sizeof(err), r->error_text, strlen(r->error_text));
    snprintf(detail, dsz, "%s%s(phase %s, errno %d, %lld/%lld body bytes "
        "sent%s)", err, err[0] ? " " : "", phases[r->evd.phase],
        r->evd.os_errno, (long long)r->evd.body_bytes_sent,
        (long long)r->evd.body_bytes_expected,
        r->evd.resent ? ", may have been re-sent" : "");
}

void
http_judge_status(const struct http_result *r, struct failure_evidence *evd,
    int64_t id, const char *what, char *detail, size_t dsz,
    struct jsonrpc_msg **answer)
{
    struct jsonrpc_msg *m = NULL;
    char                msg[96] = "";
    char                versions[96] = "";
    size_t              off = 0;

    if (r->body_len > 0 && r->evd.content_json)
        m = jsonrpc_parse(r->body, r->body_len, NULL);
    if (m != NULL && jsonrpc_kind(m) == JSONRPC_ERROR) {
        const char *em = jsonrpc_error_message(m);
        long        n = jsonrpc_array_len(m, "error.data.supported");

        evd->rpc_error = true;
        evd->rpc_error_code = jsonrpc_error_code(m);
        evd->rpc_error_id_null = !(id >= 0 && jsonrpc_id_is(m, id));
        if (em != NULL)
            str_sanitize(msg, sizeof(msg), em, strlen(em));
        for (long i = 0; i < n && i < 6; i++) {
            const char *v = jsonrpc_array_string(m, "error.data.supported",
                i, NULL);
            char        clean[24];

            if (v == NULL)
                continue;
            str_sanitize(clean, sizeof(clean), v, strlen(v));
            off += (size_t)snprintf(versions + off, sizeof(versions) - off,
                "%s%s", off ? ", " : "", clean);
            if (off >= sizeof(versions))
                break;
        }
    }
    off = (size_t)snprintf(detail, dsz, "HTTP %ld%s%s", r->status,
        what != NULL ? " to " : "", what != NULL ? what : "");
    switch (failure_reason_of(&r->evd)) {
    case FAILURE_REASON_AUTH:
        off += (size_t)snprintf(detail + off, dsz - off,
            r->auth_scheme != NULL ? "; auth needed (%s)" : "; auth needed%s",
            r->auth_scheme != NULL ? r->auth_scheme : "");
        break;
    case FAILURE_REASON_CHALLENGE:
        off += (size_t)snprintf(detail + off, dsz - off, "; a CDN/WAF "
            "challenge (cf-mitigated), not the MCP server's answer");
        break;
    case FAILURE_REASON_FORBIDDEN:
        off += (size_t)snprintf(detail + off, dsz - off, "; forbidden");
        break;
    case FAILURE_REASON_REDIRECT: {
        char to[96] = "none";

        if (r->location != NULL)
            str_sanitize(to, sizeof(to), r->location, strlen(r->location));
        off += (size_t)snprintf(detail + off, dsz - off, "; redirect to %s "
            "not followed (%s)", to, r->redirect_url == NULL ? "no usable "
            "Location" : "another origin, or too many hops");
        break;
    }
    default:
        break;
    }
    if (off >= dsz)
        off = dsz - 1;
    if (evd->rpc_error && off < dsz)
        off += (size_t)snprintf(detail + off, dsz - off,
            "; JSON-RPC error %ld%s%s", evd->rpc_error_code,
            msg[0] ? ": " : "", msg);
    if (versions[0] != '\0' && off < dsz)
        off += (size_t)snprintf(detail + off, dsz - off,
            "; server supports %s", versions);
    if (r->retry_after_s >= 0 && off < dsz) {
        if (r->retry_after_clamped)
            off += (size_t)snprintf(detail + off, dsz - off, "; Retry-After "
                "%s (clamped to %ld s)", r->retry_after_text,
                r->retry_after_s);
        else
            off += (size_t)snprintf(detail + off, dsz - off,
                "; Retry-After %ld s", r->retry_after_s);
    }
    /* The server's own words: a sentence, or a page's title. */
    if (!evd->rpc_error && off < dsz)
        http_words_append(detail, dsz, off, HTTP_JUDGE_RESERVE, r->body,
            r->body_len, r->content_type);
    if (answer != NULL && m != NULL && evd->rpc_error &&
        !evd->rpc_error_id_null) {
        *answer = m;
        return;
    }
    jsonrpc_free(m);
}

/* An answer in a content encoding that could not be decoded: the
 * encoding it named, and whether this libcurl has it at all. */
static void
http_judge_encoding(const struct http_result *r, char *detail, size_t dsz)
{
    const char *enc = r->content_encoding != NULL ? r->content_encoding :
        "(none named)";
    const char *known = http_decoded_encodings();
    char        err[96] = "";
    bool        has = false;

    for (const char *p = known; *p != '\0' && !has; ) {
        size_t k = strcspn(p, ",");

        has = k == strlen(enc) && strncasecmp(p, enc, k) == 0;
        p += k;
        while (*p == ',' || *p == ' ')
            p++;
    }
    if (has) {
        if (r->error_text != NULL)
            str_sanitize(err, sizeof(err), r->error_text,
                strlen(r->error_text));
        snprintf(detail, dsz, "HTTP %ld answer in content-encoding %s "
            "that could not be decoded%s%s%s", r->status, enc,
            err[0] ? " (" : "", err, err[0] ? ")" : "");
    } else {
        snprintf(detail, dsz, "HTTP %ld answer in content-encoding %s, "
            "which mcptop's libcurl cannot decode (it decodes %s)",
            r->status, enc, known[0] ? known : "none");
    }
}

/* A JSON body: parse it and keep the answer with our id. */
static void
http_judge_json_body(const struct http_result *r, int64_t id,
    struct jsonrpc_msg **answer, struct transport_failure *f)
{
    char               *cause = NULL;
    struct jsonrpc_msg *m;

    if (r->body_len == 0) {
        f->evd.no_matching_response = true;
        snprintf(f->detail, sizeof(f->detail), "empty %ld answer", r->status);
        return;
    }
    m = jsonrpc_parse(r->body, r->body_len, &cause);
    if (m == NULL) {
        f->evd.body_unparsable = true;
        snprintf(f->detail, sizeof(f->detail), "answer body is %s", cause);
        free(cause);
        return;
    }
    if ((jsonrpc_kind(m) == JSONRPC_RESULT ||
        jsonrpc_kind(m) == JSONRPC_ERROR) && jsonrpc_id_is(m, id)) {
        *answer = m;
        return;
    }
    f->evd.no_matching_response = true;
    if (jsonrpc_kind(m) == JSONRPC_ERROR && jsonrpc_id_is_null(m)) {
        const char *em = jsonrpc_error_message(m);
        char        msg[120] = "";

        f->evd.rpc_error = true;
        f->evd.rpc_error_id_null = true;
        f->evd.rpc_error_code = jsonrpc_error_code(m);
        if (em != NULL)
            str_sanitize(msg, sizeof(msg), em, strlen(em));
        snprintf(f->detail, sizeof(f->detail), "no JSON-RPC response with "
            "id %lld; a JSON-RPC error with a null id: %ld%s%s",
            (long long)id, f->evd.rpc_error_code, msg[0] ? ": " : "", msg);
    } else if (jsonrpc_kind(m) == JSONRPC_RESULT ||
        jsonrpc_kind(m) == JSONRPC_ERROR) {
        /* An answer, but to no request of ours: the body is complete, so
         * nothing else can come (issue 26, item 8). */
        char said[64];

        jsonrpc_id_describe(m, said, sizeof(said));
        jsonrpc_stray_words(said, id, f->detail, sizeof(f->detail));
    } else {
        snprintf(f->detail, sizeof(f->detail), "no JSON-RPC response with "
            "id %lld", (long long)id);
    }
    jsonrpc_free(m);
}

bool
http_judge_post(const struct http_result *r, int64_t id, const char *method,
    size_t max_bytes, const char *stray, struct jsonrpc_msg **answer,
    struct transport_failure *f)
{
    f->evd = r->evd;
    f->detail[0] = '\0';
    if (id < 0) {
        /* A notification: any 2xx takes it. */
        if (r->completed && r->status >= 200 && r->status < 300)
            return false;
        if (r->evd.net != NET_OK && !r->completed)
            http_judge_net(r, f->detail, sizeof(f->detail));
        else
            http_judge_status(r, &f->evd, -1, method, f->detail,
                sizeof(f->detail), NULL);
        return true;
    }
    if (*answer != NULL)
        return false;
    if (r->header_too_large) {
        snprintf(f->detail, sizeof(f->detail), "an answer header to %s is "
            "longer than libcurl takes (its limit is 100 KiB)", method);
        return true;
    }
    if (!r->completed && !r->stopped && r->evd.net != NET_OK) {
        http_judge_net(r, f->detail, sizeof(f->detail));
        return true;
    }
    if (r->status < 200 || r->status >= 300) {
        http_judge_status(r, &f->evd, id, method, f->detail,
            sizeof(f->detail), answer);
        return true;
    }
    if (f->evd.bad_encoding) {
        http_judge_encoding(r, f->detail, sizeof(f->detail));
        return true;
    }
    if (f->evd.too_large) {
        snprintf(f->detail, sizeof(f->detail), "answer exceeds the message "
            "size limit (%zu bytes)", max_bytes);
        return true;
    }
    if (f->evd.content_sse) {
        if (f->evd.sse_no_lines) {
            snprintf(f->detail, sizeof(f->detail), "text/event-stream body "
                "with no SSE line in it");
        } else if (stray != NULL && stray[0] != '\0') {
            /* It answered, with another id, and the stream is over:
             * nothing else can come (issue 26, item 8). */
            f->evd.no_matching_response = true;
            jsonrpc_stray_words(stray, id, f->detail, sizeof(f->detail));
        } else if (f->evd.sse_empty) {
            /* A stream cut under the request (a gateway whose child
             * died): no byte came, so nothing of it is MCP or not. */
            f->evd.stream_ended = true;
            snprintf(f->detail, sizeof(f->detail), "the event stream "
                "answering id %lld closed before any event", (long long)id);
        } else {
            f->evd.stream_ended = true;
            snprintf(f->detail, sizeof(f->detail), "SSE stream ended before "
                "the answer to id %lld", (long long)id);
        }
        return true;
    }
    if (f->evd.content_json) {
        http_judge_json_body(r, id, answer, f);
        return *answer == NULL;
    }
    {
        char   ct[48] = "none";
        size_t n;

        if (r->content_type != NULL)
            str_sanitize(ct, sizeof(ct), r->content_type,
                strlen(r->content_type));
        n = (size_t)snprintf(f->detail, sizeof(f->detail), "HTTP %ld with "
            "content type %s, not an MCP answer", r->status, ct);
        http_words_append(f->detail, sizeof(f->detail), n,
            HTTP_JUDGE_RESERVE, r->body, r->body_len, r->content_type);
    }
    return true;
}

void
http_judge_other(const struct http_result *r, struct transport_failure *f,
    const char *what, const char *otherwise)
{
    f->evd = r->evd;
    if (r->evd.net != NET_OK && !r->completed)
        http_judge_net(r, f->detail, sizeof(f->detail));
    else if (r->status < 200 || r->status >= 300)
        http_judge_status(r, &f->evd, -1, what, f->detail, sizeof(f->detail),
            NULL);
    else if (r->evd.bad_encoding)
        http_judge_encoding(r, f->detail, sizeof(f->detail));
    else {
        f->evd.no_matching_response = true;
        snprintf(f->detail, sizeof(f->detail), "%s", otherwise);
    }
}
