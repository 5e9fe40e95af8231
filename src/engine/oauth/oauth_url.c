/*
 * Discovery URLs built from parsed parts (url.c, libcurl's URL API), never
 * by pasting strings into a URL the server gave us: the host, port and
 * path of each candidate come from the parsed server or issuer URL.
 */
#include "engine/oauth_url.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/url.h"
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

static int
oauth_url_split(const char *url, struct oauth_url_parts *u)
{
    memset(u, 0, sizeof(*u));
    return url_split_http(url, &u->origin, &u->path, &u->query);
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

/* The host of an origin "scheme://host[:port]" (brackets kept), as a
 * length into it; 0 when it has none. */
static size_t
oauth_url_host_of(const char *origin, const char **host)
{
    const char *p = strstr(origin, "://"), *end;

    if (p == NULL)
        return 0;
    p += 3;
    if (*p == '[')
        end = strchr(p, ']') != NULL ? strchr(p, ']') + 1 : p + strlen(p);
    else
        end = strchr(p, ':') != NULL ? strchr(p, ':') : p + strlen(p);
    *host = p;
    return (size_t)(end - p);
}

bool
oauth_url_same_host(const char *a, const char *b)
{
    char       *oa = oauth_url_origin(a), *ob = oauth_url_origin(b);
    const char *ha = NULL, *hb = NULL;
    size_t      la = oa != NULL ? oauth_url_host_of(oa, &ha) : 0;
    size_t      lb = ob != NULL ? oauth_url_host_of(ob, &hb) : 0;
    bool        same = la > 0 && la == lb && memcmp(ha, hb, la) == 0;

    free(oa);
    free(ob);
    return same;
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

