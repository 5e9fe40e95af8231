/*
 * URLs for display and comparison, on libcurl's URL API: url_redact hides
 * the secrets a configured URL may carry, url_origin and url_same_origin
 * compare where two URLs point. Parsing and rebuilding go through
 * curl_url_set/curl_url_get; the only text handled here is the inside of
 * a query or fragment, split on '&' to find the parameter names.
 */
#include "engine/url.h"

#include <ctype.h>
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/str.h"
#include "util/xmalloc.h"

#define URL_MASK        "***"
#define URL_NAME_MAX    128     /* longest parameter name compared */

/* Exact (case-insensitive) parameter names that look secret. */
static const char *const url_secret_names[] = {
    "key", "sig", "code", "pwd", "pass", "jwt", NULL
};

/* Substrings that make a parameter name look secret. */
static const char *const url_secret_parts[] = {
    "token", "secret", "passw", "apikey", "api_key", "api-key", "signature",
    "credential", "session", "auth", NULL
};

/* The value of hex digit c, or -1. */
static int
url_hex(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/*
 * True when the parameter name s[0..n) (as written: percent-encoded, '+'
 * for space) looks secret. Names longer than URL_NAME_MAX bytes are
 * compared on their first URL_NAME_MAX decoded bytes.
 */
static bool
url_name_secret(const char *s, size_t n)
{
    char   name[URL_NAME_MAX + 1];
    size_t len = 0;
    size_t i;

    for (i = 0; i < n && len < URL_NAME_MAX; i++) {
        int c = (unsigned char)s[i];

        if (c == '%' && i + 2 < n && url_hex(s[i + 1]) >= 0
            && url_hex(s[i + 2]) >= 0) {
            c = url_hex(s[i + 1]) * 16 + url_hex(s[i + 2]);
            i += 2;
        } else if (c == '+') {
            c = ' ';
        }
        name[len++] = (char)tolower(c);
    }
    name[len] = '\0';
    if (len == 0)
        return false;
    for (i = 0; url_secret_names[i] != NULL; i++) {
        if (strcmp(name, url_secret_names[i]) == 0)
            return true;
    }
    for (i = 0; url_secret_parts[i] != NULL; i++) {
        if (strstr(name, url_secret_parts[i]) != NULL)
            return true;
    }
    return len >= 3 && strcmp(name + len - 3, "key") == 0;
}

/*
 * The "name=value&..." text params with every secret-looking value
 * replaced by URL_MASK, or NULL when nothing in it needs hiding. Caller
 * frees.
 */
static char *
url_redact_params(const char *params)
{
    const char *p = params;
    char       *out;
    size_t      len = 0;
    size_t      nparams = 1;
    bool        changed = false;

    for (p = params; *p != '\0'; p++) {
        if (*p == '&')
            nparams++;
    }
    p = params;
    /* A masked value is at least one byte replaced by the mask. */
    out = xmalloc(strlen(params) + nparams * strlen(URL_MASK) + 1);
    for (;;) {
        size_t      n = strcspn(p, "&");
        const char *eq = memchr(p, '=', n);

        if (eq != NULL && (size_t)(eq - p) + 1 < n
            && url_name_secret(p, (size_t)(eq - p))) {
            memcpy(out + len, p, (size_t)(eq - p) + 1);
            len += (size_t)(eq - p) + 1;
            memcpy(out + len, URL_MASK, strlen(URL_MASK));
            len += strlen(URL_MASK);
            changed = true;
        } else {
            memcpy(out + len, p, n);
            len += n;
        }
        if (p[n] == '\0')
            break;
        out[len++] = '&';
        p += n + 1;
    }
    out[len] = '\0';
    if (!changed) {
        free(out);
        return NULL;
    }
    return out;
}

/* True when part is present in u (with any value, even empty). */
static bool
url_has(CURLU *u, CURLUPart part)
{
    char *v = NULL;

    if (curl_url_get(u, part, &v, 0) != CURLUE_OK)
        return false;
    curl_free(v);
    return true;
}

/*
 * Replace the secret-looking values of query or fragment part of u. true
 * when something changed; false when nothing needed it or setting failed.
 */
static bool
url_redact_part(CURLU *u, CURLUPart part)
{
    char *v = NULL;
    char *red;
    bool  ok;

    if (curl_url_get(u, part, &v, 0) != CURLUE_OK)
        return false;
    red = url_redact_params(v);
    curl_free(v);
    if (red == NULL)
        return false;
    ok = curl_url_set(u, part, red, 0) == CURLUE_OK;
    free(red);
    return ok;
}

/* The fallback of url_redact for text libcurl cannot parse. */
static char *
url_redact_unparsed(const char *url)
{
    const char *sep;

    if (strpbrk(url, "@?#") == NULL)
        return xstrdup(url);
    sep = strstr(url, "://");
    if (sep == NULL)
        return xstrdup(URL_MASK);
    return str_printf("%.*s://" URL_MASK, (int)(sep - url), url);
}

/* See url.h. */
char *
url_redact(const char *url)
{
    CURLU *u;
    char  *built = NULL;
    char  *out;
    bool   changed = false;

    if (url == NULL)
        return NULL;
    u = curl_url();
    if (u == NULL)
        return url_redact_unparsed(url);
    if (curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME)
        != CURLUE_OK) {
        curl_url_cleanup(u);
        return url_redact_unparsed(url);
    }
    if (url_has(u, CURLUPART_USER) || url_has(u, CURLUPART_PASSWORD)
        || url_has(u, CURLUPART_OPTIONS)) {
        if (curl_url_set(u, CURLUPART_USER, URL_MASK, 0) != CURLUE_OK
            || curl_url_set(u, CURLUPART_PASSWORD, NULL, 0) != CURLUE_OK
            || curl_url_set(u, CURLUPART_OPTIONS, NULL, 0) != CURLUE_OK) {
            curl_url_cleanup(u);
            return url_redact_unparsed(url);
        }
        changed = true;
    }
    if (url_redact_part(u, CURLUPART_QUERY))
        changed = true;
    if (url_redact_part(u, CURLUPART_FRAGMENT))
        changed = true;
    if (!changed) {
        curl_url_cleanup(u);
        return xstrdup(url);
    }
    if (curl_url_get(u, CURLUPART_URL, &built, 0) != CURLUE_OK) {
        curl_url_cleanup(u);
        return url_redact_unparsed(url);
    }
    out = xstrdup(built);
    curl_free(built);
    curl_url_cleanup(u);
    return out;
}

/* Lower-case the ASCII letters of s in place. */
static void
url_lower(char *s)
{
    for (; *s != '\0'; s++)
        *s = (char)tolower((unsigned char)*s);
}

/* See url.h. */
char *
url_origin(const char *url)
{
    CURLU *u;
    char  *scheme = NULL, *host = NULL, *port = NULL, *zone = NULL;
    char  *out = NULL;

    if (url == NULL)
        return NULL;
    u = curl_url();
    if (u == NULL)
        return NULL;
    if (curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME)
        != CURLUE_OK)
        goto out;
    if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK
        || curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK
        || host[0] == '\0')
        goto out;
    (void)curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT);
    (void)curl_url_get(u, CURLUPART_ZONEID, &zone, 0);
    url_lower(scheme);
    url_lower(host);
    if (zone != NULL && host[0] == '[' && host[strlen(host) - 1] == ']')
        out = str_printf("%s://%.*s%%25%s]", scheme,
            (int)strlen(host) - 1, host, zone);
    else
        out = str_printf("%s://%s", scheme, host);
    if (port != NULL) {
        char *with = str_printf("%s:%s", out, port);

        free(out);
        out = with;
    }

out:
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_free(zone);
    curl_url_cleanup(u);
    return out;
}

/* See url.h. */
bool
url_same_origin(const char *a, const char *b)
{
    char *oa = url_origin(a);
    char *ob = url_origin(b);
    bool  same = oa != NULL && ob != NULL && strcmp(oa, ob) == 0;

    free(oa);
    free(ob);
    return same;
}

/* A part of u (NULL when absent), a heap copy. */
static char *
url_get(CURLU *u, CURLUPart part, unsigned flags)
{
    char *v = NULL, *r;

    if (curl_url_get(u, part, &v, flags) != CURLUE_OK || v == NULL)
        return NULL;
    r = xstrdup(v);
    curl_free(v);
    return r;
}

/* See url.h. */
int
url_split_http(const char *url, char **origin, char **path, char **query)
{
    CURLU *u;
    char  *scheme = NULL, *host = NULL, *port = NULL;
    int    rc = -1;

    *origin = *path = NULL;
    if (query != NULL)
        *query = NULL;
    if (url == NULL || (strncasecmp(url, "http://", 7) != 0 &&
        strncasecmp(url, "https://", 8) != 0))
        return -1;
    u = curl_url();
    if (u == NULL)
        return -1;
    if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK)
        goto out;
    scheme = url_get(u, CURLUPART_SCHEME, 0);
    host = url_get(u, CURLUPART_HOST, 0);
    port = url_get(u, CURLUPART_PORT, CURLU_NO_DEFAULT_PORT);
    if (scheme == NULL || host == NULL || host[0] == '\0')
        goto out;
    url_lower(scheme);
    url_lower(host);
    *origin = port != NULL ? str_printf("%s://%s:%s", scheme, host, port) :
        str_printf("%s://%s", scheme, host);
    *path = url_get(u, CURLUPART_PATH, 0);
    if (*path == NULL || strcmp(*path, "/") == 0) {
        free(*path);
        *path = xstrdup("");
    }
    if (query != NULL)
        *query = url_get(u, CURLUPART_QUERY, 0);
    rc = 0;
out:
    free(scheme);
    free(host);
    free(port);
    curl_url_cleanup(u);
    return rc;
}

/* See url.h. */
char *
url_escape(const char *s)
{
    char *e = curl_easy_escape(NULL, s, 0), *r;

    if (e == NULL)
        return xstrdup("");
    r = xstrdup(e);
    curl_free(e);
    return r;
}

/* See url.h. */
char *
url_unescape_form(const char *s, size_t n)
{
    char *plus = str_ndup(s, n), *d, *r = NULL;
    int   len = 0;

    for (char *p = plus; *p != '\0'; p++) {
        if (*p == '+')
            *p = ' ';
    }
    d = curl_easy_unescape(NULL, plus, (int)n, &len);
    if (d != NULL && memchr(d, '\0', (size_t)len) == NULL)
        r = xstrdup(d);
    curl_free(d);
    free(plus);
    return r;
}
