/*
 * Discovery URLs built from parsed parts (libcurl's URL API), never by
 * pasting strings into a URL the server gave us: the host, port and path
 * of each candidate come from the parsed server or issuer URL.
 */
#include "engine/oauth_url.h"

#include <ctype.h>
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/str.h"
#include "util/xmalloc.h"

/* The parts of an http(s) URL, heap copies. */
struct oauth_url_parts {
    char *origin;       /* scheme://host[:port], normalised */
    char *path;         /* "" for none or "/" */
    char *query;        /* NULL when none */
};

static void
oauth_url_parts_done(struct oauth_url_parts *u)
{
    free(u->origin);
    free(u->path);
    free(u->query);
}

/* Copy a curl_url part (NULL when absent). */
static char *
oauth_url_get(CURLU *h, CURLUPart part, unsigned flags)
{
    char *v = NULL, *r;

    if (curl_url_get(h, part, &v, flags) != CURLUE_OK || v == NULL)
        return NULL;
    r = xstrdup(v);
    curl_free(v);
    return r;
}

static int
oauth_url_split(const char *url, struct oauth_url_parts *u)
{
    CURLU *h;
    char  *scheme = NULL, *host = NULL, *port = NULL;
    int    rc = -1;

    memset(u, 0, sizeof(*u));
    if (url == NULL || (strncasecmp(url, "http://", 7) != 0 &&
        strncasecmp(url, "https://", 8) != 0))
        return -1;
    h = curl_url();
    if (h == NULL)
        return -1;
    if (curl_url_set(h, CURLUPART_URL, url, 0) != CURLUE_OK)
        goto out;
    scheme = oauth_url_get(h, CURLUPART_SCHEME, 0);
    host = oauth_url_get(h, CURLUPART_HOST, 0);
    port = oauth_url_get(h, CURLUPART_PORT, CURLU_NO_DEFAULT_PORT);
    if (scheme == NULL || host == NULL || host[0] == '\0')
        goto out;
    for (char *p = scheme; *p != '\0'; p++)
        *p = (char)tolower((unsigned char)*p);
    for (char *p = host; *p != '\0'; p++)
        *p = (char)tolower((unsigned char)*p);
    u->origin = port != NULL ? str_printf("%s://%s:%s", scheme, host, port) :
        str_printf("%s://%s", scheme, host);
    u->path = oauth_url_get(h, CURLUPART_PATH, 0);
    if (u->path == NULL || strcmp(u->path, "/") == 0) {
        free(u->path);
        u->path = xstrdup("");
    }
    u->query = oauth_url_get(h, CURLUPART_QUERY, 0);
    rc = 0;
out:
    free(scheme);
    free(host);
    free(port);
    curl_url_cleanup(h);
    if (rc != 0)
        oauth_url_parts_done(u);
    return rc;
}

bool
oauth_url_is_http(const char *url)
{
    struct oauth_url_parts u;

    if (oauth_url_split(url, &u) != 0)
        return false;
    oauth_url_parts_done(&u);
    return true;
}

char *
oauth_url_origin(const char *url)
{
    struct oauth_url_parts u;
    char                  *r;

    if (oauth_url_split(url, &u) != 0)
        return NULL;
    r = u.origin;
    u.origin = NULL;
    oauth_url_parts_done(&u);
    return r;
}

char *
oauth_url_resource(const char *url)
{
    struct oauth_url_parts u;
    char                  *r;

    if (oauth_url_split(url, &u) != 0)
        return NULL;
    r = str_printf("%s%s%s%s", u.origin, u.path, u.query != NULL ? "?" : "",
        u.query != NULL ? u.query : "");
    oauth_url_parts_done(&u);
    return r;
}

size_t
oauth_url_prm(const char *server_url, char *out[OAUTH_URL_PRM_MAX])
{
    static const char wk[] = "/.well-known/oauth-protected-resource";
    struct oauth_url_parts u;
    size_t                 n = 0;

    if (oauth_url_split(server_url, &u) != 0)
        return 0;
    if (u.path[0] != '\0' || u.query != NULL)
        out[n++] = str_printf("%s%s%s%s%s", u.origin, wk, u.path,
            u.query != NULL ? "?" : "", u.query != NULL ? u.query : "");
    out[n++] = str_printf("%s%s", u.origin, wk);
    oauth_url_parts_done(&u);
    return n;
}

size_t
oauth_url_as_metadata(const char *issuer, char *out[OAUTH_URL_AS_MAX])
{
    static const char oa[] = "/.well-known/oauth-authorization-server";
    static const char oidc[] = "/.well-known/openid-configuration";
    struct oauth_url_parts u;
    size_t                 n = 0, len;

    if (oauth_url_split(issuer, &u) != 0)
        return 0;
    len = strlen(u.path);
    if (len > 0 && u.path[len - 1] == '/')
        u.path[len - 1] = '\0';
    if (u.path[0] != '\0') {
        out[n++] = str_printf("%s%s%s", u.origin, oa, u.path);
        out[n++] = str_printf("%s%s%s", u.origin, oidc, u.path);
        out[n++] = str_printf("%s%s%s", u.origin, u.path, oidc);
    } else {
        out[n++] = str_printf("%s%s", u.origin, oa);
        out[n++] = str_printf("%s%s", u.origin, oidc);
    }
    oauth_url_parts_done(&u);
    return n;
}

bool
oauth_url_resource_covers(const char *resource, const char *server_url)
{
    struct oauth_url_parts r, s;
    bool                   ok = false;
    size_t                 rl;

    if (oauth_url_split(resource, &r) != 0)
        return false;
    if (oauth_url_split(server_url, &s) != 0) {
        oauth_url_parts_done(&r);
        return false;
    }
    rl = strlen(r.path);
    if (rl > 0 && r.path[rl - 1] == '/')
        rl--;
    if (strcmp(r.origin, s.origin) == 0 &&
        strncmp(r.path, s.path, rl) == 0 &&
        (s.path[rl] == '\0' || s.path[rl] == '/'))
        ok = true;
    oauth_url_parts_done(&r);
    oauth_url_parts_done(&s);
    return ok;
}

bool
oauth_url_same_issuer(const char *a, const char *b)
{
    size_t la, lb;

    if (a == NULL || b == NULL)
        return false;
    la = strlen(a);
    lb = strlen(b);
    if (la > 0 && a[la - 1] == '/')
        la--;
    if (lb > 0 && b[lb - 1] == '/')
        lb--;
    return la == lb && strncmp(a, b, la) == 0;
}

char *
oauth_url_escape(const char *s)
{
    char *e = curl_easy_escape(NULL, s, 0), *r;

    if (e == NULL)
        return xstrdup("");
    r = xstrdup(e);
    curl_free(e);
    return r;
}

char *
oauth_url_unescape(const char *s, size_t n)
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
