/*
 * The URLs of OAuth discovery for an MCP server (MCP 2025-11-25
 * basic/authorization, "Authorization Server Discovery"; RFC 9728 section
 * 3.1; RFC 8414 section 3.1; OpenID Connect Discovery 1.0 section 4; the
 * 2025-03-26 revision's fallbacks) and the resource indicator (RFC 8707;
 * MCP "Canonical Server URI"). URLs are parsed with libcurl's URL API: this
 * is one of the few files that may call libcurl.
 */
#ifndef MCPTOP_ENGINE_OAUTH_URL_H
#define MCPTOP_ENGINE_OAUTH_URL_H

#include <stdbool.h>
#include <stddef.h>

#define OAUTH_URL_PRM_MAX 2
#define OAUTH_URL_AS_MAX  3

/* "scheme://host[:port]" of an http(s) URL, scheme and host lower-case, a
 * default port dropped. Caller frees; NULL when url is not http(s). */
char *oauth_url_origin(const char *url);

/* The canonical URI of an MCP server for the `resource` parameter: the
 * origin as above plus the path and query, no fragment, and no path at all
 * for "/". Caller frees; NULL when url is not http(s). */
char *oauth_url_resource(const char *url);

/*
 * The protected resource metadata URLs to try, in order, when the
 * WWW-Authenticate header names none: the path-based well-known URL (the
 * server URL's path and query appended to
 * /.well-known/oauth-protected-resource), then the root one. A server URL
 * with no path gives only the root one. Fills out (caller frees each);
 * returns how many (0 when url is not http(s)).
 */
size_t oauth_url_prm(const char *server_url, char *out[OAUTH_URL_PRM_MAX]);

/*
 * The authorization server metadata URLs to try for an issuer, in the
 * MCP 2025-11-25 order. With a path (".../tenant1"): RFC 8414 path
 * insertion (/.well-known/oauth-authorization-server/tenant1), OpenID path
 * insertion (/.well-known/openid-configuration/tenant1), OpenID path
 * appending (/tenant1/.well-known/openid-configuration). Without:
 * /.well-known/oauth-authorization-server, /.well-known/openid-configuration.
 * A trailing '/' of the path is dropped. Fills out (caller frees each);
 * returns how many (0 when issuer is not http(s)).
 */
size_t oauth_url_as_metadata(const char *issuer, char *out[OAUTH_URL_AS_MAX]);

/*
 * May a protected resource metadata document that says `resource` speak
 * for server_url? True when both have the same origin and the resource's
 * path is the server's path or one of its parent paths (at a '/'
 * boundary). RFC 9728 section 3.3.
 */
bool oauth_url_resource_covers(const char *resource, const char *server_url);

/* Issuer identifiers compared as RFC 8414 section 3.3 asks, tolerating one
 * trailing '/' on either side. */
bool oauth_url_same_issuer(const char *a, const char *b);

/* True for an absolute http:// or https:// URL. */
bool oauth_url_is_http(const char *url);
/* True when two http(s) URLs name the same host (any scheme and port;
 * the host compared in lower case). False when either has none. */
bool oauth_url_same_host(const char *a, const char *b);

#endif
