/*
 * The WWW-Authenticate challenge of an MCP server that wants a token
 * (RFC 9110 section 11.6.1 syntax; RFC 6750 section 3 Bearer parameters;
 * RFC 9728 section 5.1 resource_metadata; MCP 2025-11-25
 * basic/authorization, "Scope Selection Strategy" and "Step-Up
 * Authorization Flow"). The header is untrusted server text: every value
 * kept here is bounded, and nothing is shown without sanitizing it.
 */
#ifndef MCPTOP_ENGINE_OAUTH_CHALLENGE_H
#define MCPTOP_ENGINE_OAUTH_CHALLENGE_H

#include <stdbool.h>

/* Longest parameter value kept; longer ones are dropped as malformed. */
#define OAUTH_CHALLENGE_VALUE_MAX 2048

struct oauth_challenge {
    bool  present;              /* a header was given at all */
    bool  bearer;               /* it holds a Bearer challenge */
    char  scheme[32];           /* the first challenge's scheme, as sent
                                   (cut), for a message; "" if none */
    char *resource_metadata;    /* the PRM URL, or NULL */
    char *scope;                /* space-separated scopes, or NULL */
    char *error;                /* e.g. "insufficient_scope", or NULL */
    char *error_description;    /* untrusted text, or NULL */
};

/*
 * Parse a WWW-Authenticate value (NULL: no header), which may hold several
 * challenges; the parameters are those of the first Bearer challenge
 * (scheme and parameter names are case-insensitive). Never fails: what
 * cannot be parsed is left out. Free with oauth_challenge_done.
 */
void oauth_challenge_parse(const char *value, struct oauth_challenge *out);

/* Free what c holds. */
void oauth_challenge_done(struct oauth_challenge *c);

/* True when c says error="insufficient_scope" (RFC 6750 section 3.1). */
bool oauth_challenge_insufficient_scope(const struct oauth_challenge *c);

#endif
