/*
 * The JSON documents of OAuth: metadata (RFC 9728, RFC 8414), token and
 * registration responses (RFC 6749 section 5, RFC 7591 section 3.2) read
 * through member accessors, and the two documents mcptop writes: a client
 * registration request (RFC 7591 section 2) and the claims of a client
 * assertion (RFC 7523 section 3). Besides config, jsonrpc and the store,
 * the only engine file that sees cJSON. Every string read here is
 * untrusted server text.
 */
#ifndef MCPTOP_ENGINE_OAUTH_DOC_H
#define MCPTOP_ENGINE_OAUTH_DOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct oauth_doc;

/* Parse len bytes: NULL unless they are one JSON object. Free with
 * oauth_doc_free. */
struct oauth_doc *oauth_doc_parse(const char *text, size_t len);
/* A token answer as a form (application/x-www-form-urlencoded: GitHub's,
 * when Accept is not honoured): its access_token, token_type, expires_in
 * (a number when it is one), refresh_token, scope, error,
 * error_description and error_uri, each once (the first), read as a
 * document's members. NULL when it holds none of them. */
struct oauth_doc *oauth_doc_parse_form(const char *text, size_t len);
/* A token endpoint's answer: a form when content_type (may be NULL) says
 * so, else JSON. */
struct oauth_doc *oauth_doc_parse_answer(const char *text, size_t len,
    const char *content_type);
/* NULL does nothing. */
void oauth_doc_free(struct oauth_doc *d);

/* A top-level string member, or NULL (absent or not a string). Borrowed
 * from d. */
const char *oauth_doc_string(const struct oauth_doc *d, const char *key);
/* A top-level boolean member; dflt when absent or not a boolean. */
bool oauth_doc_bool(const struct oauth_doc *d, const char *key, bool dflt);
/* A top-level number member; false when absent or not a number. */
bool oauth_doc_number(const struct oauth_doc *d, const char *key,
    double *out);
/* Does the member exist at all? */
bool oauth_doc_has(const struct oauth_doc *d, const char *key);
/* Length of a top-level array member; -1 when it is not an array. */
long oauth_doc_array_len(const struct oauth_doc *d, const char *key);
/* String element i of an array member, or NULL. Borrowed from d. */
const char *oauth_doc_array_string(const struct oauth_doc *d,
    const char *key, long i);
/* Does the array member hold the string s? */
bool oauth_doc_array_has(const struct oauth_doc *d, const char *key,
    const char *s);
/* The string elements of an array member joined by one space, at most
 * max_items of them (caller frees); NULL when there is none. */
char *oauth_doc_array_join(const struct oauth_doc *d, const char *key,
    long max_items);

/*
 * A dynamic client registration request (RFC 7591 section 2): client_name
 * "mcptop", redirect_uris [redirect_uri] (when not NULL), grant_types
 * (NULL-terminated), response_types ["code"] when the grants include
 * authorization_code, token_endpoint_auth_method and scope (when not
 * NULL). Caller frees.
 */
char *oauth_doc_registration(const char *redirect_uri,
    const char *const *grant_types, const char *auth_method,
    const char *scope);

/* The claims of a client assertion (RFC 7523 section 3): iss and sub are
 * the client id, aud, iat, exp (epoch s) and jti. Caller frees. */
char *oauth_doc_assertion_claims(const char *client_id, const char *aud,
    int64_t iat, int64_t exp, const char *jti);

#endif
