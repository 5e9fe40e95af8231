/*
 * WWW-Authenticate parsing: a list of challenges, each a scheme followed by
 * a token68 or by comma-separated auth-params whose values are tokens or
 * quoted strings (RFC 9110 section 11.6.1 and 5.6). One pass, no
 * backtracking beyond one token: linear in the header's length.
 */
#include "oauth/oauth_challenge.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/str.h"
#include "util/xmalloc.h"

/* RFC 9110 tchar. */
static bool
oauth_challenge_tchar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
        (c >= '0' && c <= '9') || (c != '\0' && strchr("!#$%&'*+-.^_`|~",
        c) != NULL);
}

/* token68 adds '/' (and '=' padding at its end). */
static bool
oauth_challenge_t68char(char c)
{
    return oauth_challenge_tchar(c) || c == '/';
}

static const char *
oauth_challenge_ows(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/*
 * Read a quoted-string at p (which is '"'): its unescaped value into a heap
 * string (NULL when longer than the limit or unterminated), *end past it.
 */
static char *
oauth_challenge_quoted(const char *p, const char **end)
{
    char   *v = xmalloc(strlen(p) + 1);
    size_t  n = 0;
    bool    ok = false;

    for (p++; *p != '\0'; p++) {
        if (*p == '"') {
            p++;
            ok = true;
            break;
        }
        if (*p == '\\' && p[1] != '\0')
            p++;
        v[n++] = *p;
    }
    v[n] = '\0';
    *end = p;
    if (!ok || n > OAUTH_CHALLENGE_VALUE_MAX) {
        free(v);
        return NULL;
    }
    return v;
}

/* Keep value for a parameter of the Bearer challenge we read. */
static void
oauth_challenge_keep(struct oauth_challenge *c, const char *name,
    size_t nlen, char *value)
{
    static const char *const names[] = {
        "resource_metadata", "scope", "error", "error_description",
    };
    char **slots[] = {
        &c->resource_metadata, &c->scope, &c->error, &c->error_description,
    };

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strlen(names[i]) == nlen &&
            strncasecmp(names[i], name, nlen) == 0 && *slots[i] == NULL) {
            *slots[i] = value;
            return;
        }
    }
    free(value);
}

void
oauth_challenge_parse(const char *value, struct oauth_challenge *out)
{
    const char *p = value;
    bool        in_bearer = false, first = true;

    memset(out, 0, sizeof(*out));
    if (value == NULL)
        return;
    out->present = true;
    while (*p != '\0') {
        const char *tok, *save;
        size_t      tlen;

        p = oauth_challenge_ows(p);
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p == '\0')
            break;
        tok = p;
        while (oauth_challenge_tchar(*p))
            p++;
        tlen = (size_t)(p - tok);
        if (tlen == 0) {
            p++;                        /* junk: skip a byte */
            continue;
        }
        save = p;
        p = oauth_challenge_ows(p);
        if (*p == '=' && in_bearer) {
            /* token68 padding ("abc==") or an auth-param "name=value" */
            const char *q = oauth_challenge_ows(p + 1);
            char       *v = NULL;

            if (*q == '"') {
                v = oauth_challenge_quoted(q, &p);
            } else if (oauth_challenge_tchar(*q)) {
                const char *vs = q;

                while (oauth_challenge_tchar(*q))
                    q++;
                if ((size_t)(q - vs) <= OAUTH_CHALLENGE_VALUE_MAX)
                    v = str_ndup(vs, (size_t)(q - vs));
                p = q;
            } else {
                while (*p == '=')
                    p++;                /* token68 padding */
                continue;
            }
            if (v != NULL)
                oauth_challenge_keep(out, tok, tlen, v);
            continue;
        }
        if (*p == '=') {
            /* a parameter of a challenge that is not ours: skip its value */
            p = oauth_challenge_ows(p + 1);
            if (*p == '"') {
                free(oauth_challenge_quoted(p, &p));
            } else {
                while (oauth_challenge_t68char(*p) || *p == '=')
                    p++;
            }
            continue;
        }
        /* A new challenge's scheme (a token followed by space, comma or
         * end), possibly followed by a token68. */
        p = save;
        if (first) {
            size_t n = tlen < sizeof(out->scheme) - 1 ? tlen :
                sizeof(out->scheme) - 1;

            memcpy(out->scheme, tok, n);
            out->scheme[n] = '\0';
            first = false;
        }
        if (out->bearer) {
            break;                      /* the Bearer challenge is over */
        }
        in_bearer = tlen == 6 && strncasecmp(tok, "Bearer", 6) == 0;
        if (in_bearer)
            out->bearer = true;
        p = oauth_challenge_ows(p);
        if (oauth_challenge_t68char(*p)) {
            /* A token68 or the first auth-param: peek past the token. */
            const char *q = p;

            while (oauth_challenge_t68char(*q))
                q++;
            while (*q == '=')
                q++;
            q = oauth_challenge_ows(q);
            if ((*q == ',' || *q == '\0') && !in_bearer)
                p = q;                  /* a token68: skip it */
        }
    }
}

void
oauth_challenge_done(struct oauth_challenge *c)
{
    free(c->resource_metadata);
    free(c->scope);
    free(c->error);
    free(c->error_description);
    memset(c, 0, sizeof(*c));
}

bool
oauth_challenge_insufficient_scope(const struct oauth_challenge *c)
{
    return c->bearer && c->error != NULL &&
        strcmp(c->error, "insufficient_scope") == 0;
}
