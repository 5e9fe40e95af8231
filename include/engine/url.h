/*
 * URLs as mcptop shows and compares them, parsed and rebuilt with
 * libcurl's URL API (curl_url), never by string surgery on a parsed URL.
 *
 * A configured URL may carry secrets: userinfo ("http://user:pass@host/")
 * and query or fragment values whose names look secret. url_redact gives
 * the form every output path uses (table, detail pane, check --json,
 * watch, the log, errors).
 */
#ifndef MCPTOP_ENGINE_URL_H
#define MCPTOP_ENGINE_URL_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The URL with its secrets replaced by "***": the userinfo (user and
 * password become one "***"), and the value of every query or fragment
 * parameter whose name looks secret. Caller frees.
 *
 * A parameter name looks secret when, decoded and compared without case,
 * it is one of key, sig, code, pwd, pass, jwt, or it contains token,
 * secret, passw, apikey, api_key, api-key, signature, credential, session
 * or auth, or it ends in "key".
 *
 * A URL with nothing to redact comes back exactly as written. One that
 * libcurl cannot parse comes back as written when it holds none of '@',
 * '?' and '#' (so it has no userinfo, query or fragment to hide), and
 * otherwise as its scheme, "://" and the mask "***" (the mask alone when
 * it has no "://"). NULL gives NULL.
 */
char *url_redact(const char *url);

/*
 * The origin of an absolute URL as "scheme://host:port": scheme and host
 * in lower case, the port always present (80 and 443 made explicit for
 * http and https), an IPv6 host in brackets. Caller frees. NULL when url
 * is NULL, not absolute, has no host or cannot be parsed.
 */
char *url_origin(const char *url);

/*
 * True when a and b have the same origin (RFC 6454: scheme, host and port
 * equal, default ports made explicit). False when either is NULL or has no
 * origin.
 */
bool url_same_origin(const char *a, const char *b);

/*
 * The parts of an http(s) URL with a host: *origin "scheme://host[:port]"
 * (scheme and host in lower case, the port only when written and not the
 * scheme's default), *path ("" for none or "/"), *query (NULL when none;
 * query may be NULL when not wanted). 0, or -1 when url is not such a
 * URL. Caller frees the strings.
 */
int url_split_http(const char *url, char **origin, char **path,
    char **query);

/* s percent-encoded, RFC 3986 unreserved characters kept (a form or a
 * query value). Caller frees. */
char *url_escape(const char *s);

/* n bytes of a form value (application/x-www-form-urlencoded) decoded:
 * '+' is a space, %XX a byte. NULL when it decodes to a NUL byte. Caller
 * frees. */
char *url_unescape_form(const char *s, size_t n);

#endif
