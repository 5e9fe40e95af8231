/*
 * One server's authorization: the token it holds, and at most one flow at
 * a time that gets a new one. A flow is a chain of HTTP steps on the loop
 * (refresh; or metadata, registration, consent, token); every request the
 * server had answered 401/403 waits on the flow and is resumed once when
 * it ends, whatever the end. The flow's last failure is kept as a short
 * text for the failure detail of the answer that is finally recorded.
 *
 * Never here: a token, a secret, a code or a verifier in a log line or a
 * detail; an HTTP request to anything but http(s) URLs taken from the
 * configured server, its metadata documents and the authorization
 * server's metadata; a wait without a timer.
 */
#include "engine/oauth.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/http.h"
#include "engine/oauth_challenge.h"
#include "engine/oauth_crypto.h"
#include "engine/oauth_doc.h"
#include "engine/oauth_listen.h"
#include "engine/oauth_store.h"
#include "engine/oauth_url.h"
#include "util/clock.h"
#include "util/str.h"
#include "util/xmalloc.h"

#define OAUTH_DOC_MAX_BYTES   (1024u * 1024)
#define OAUTH_CANDIDATES      4
#define OAUTH_SCOPES_MAX      64        /* scopes taken from a document */
#define OAUTH_ASSERTION_S     300       /* client assertion lifetime */
#define OAUTH_DEFAULT_WAIT_MS 300000L

enum oauth_step {
    OAUTH_RESUME,           /* nothing to fetch: resume on the next turn */
    OAUTH_REFRESH,          /* refresh_token grant */
    OAUTH_PRM,              /* protected resource metadata */
    OAUTH_AS,               /* authorization server metadata */
    OAUTH_REGISTER,         /* dynamic client registration */
    OAUTH_CONSENT,          /* waiting for the browser's redirect */
    OAUTH_TOKEN,            /* the grant's token request */
};

struct oauth_waiter {
    struct oauth_waiter *next;
    oauth_resume_cb      cb;
    void                *arg;
};

struct oauth_flow {
    struct oauth        *o;
    enum oauth_step      step;
    bool                 full_after_refresh;    /* on refresh failure */
    bool                 step_up;
    bool                 background;            /* a refresh ahead of
                                                   expiry */
    char                *challenge_scope;
    char                *prm_hint;              /* resource_metadata */
    char                *cand[OAUTH_CANDIDATES];
    size_t               ncand, at;
    bool                 legacy;                /* no PRM: 2025-03-26 */
    char                *resource_indicator;
    char                *prm_scopes;
    char                *issuer;
    bool                 have_as;               /* metadata was found */
    struct oauth_doc    *as;
    char                *authorization_endpoint;
    char                *token_endpoint;
    char                *registration_endpoint;
    char                *client_id;
    char                *client_secret;
    char                *auth_method;
    char                *scope;                 /* requested */
    char                *verifier;
    char                *state;
    struct oauth_listen *listen;
    struct http_xfer    *xfer;
    ev_timer             timer;
};

struct oauth {
    struct ev_loop             *loop;
    struct curlev              *ce;
    const struct config_server *decl;
    size_t                      pool_key;
    FILE                       *log;
    char                       *name;           /* sanitized, for text */
    char                       *origin;         /* the server's origin */
    char                       *resource;       /* canonical server URI */
    struct oauth_token          tok;
    bool                        have_tok;
    bool                        loaded;
    char                       *authz;          /* "Bearer ..." */
    struct oauth_flow          *flow;
    struct oauth_waiter        *waiters;        /* on the flow */
    struct oauth_waiter        *resuming;       /* being resumed now */
    char                        detail[200];
    ev_tstamp                   failed_at;      /* 0: the last flow ok */
    ev_tstamp                   token_at;       /* obtained here, or 0 */
    unsigned                    step_ups;
    ev_tstamp                   step_up_at;
    bool                        used;
};

/* Process-wide: the token file (shared by every server) and consent. */
static struct oauth_store  *oauth_store_g;
static unsigned             oauth_refs;
static struct oauth_consent oauth_consent_g;
static bool                 oauth_consent_on;

static void oauth_flow_next(struct oauth_flow *f);
static void oauth_finish(struct oauth_flow *f, bool ok, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

void
oauth_set_consent(const struct oauth_consent *c)
{
    oauth_consent_on = c != NULL;
    if (c != NULL)
        oauth_consent_g = *c;
    else
        memset(&oauth_consent_g, 0, sizeof(oauth_consent_g));
}

static void
oauth_log(const struct oauth *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
oauth_log(const struct oauth *o, const char *fmt, ...)
{
    va_list ap;

    if (o->log == NULL)
        return;
    fprintf(o->log, "oauth %s: ", o->name);
    va_start(ap, fmt);
    vfprintf(o->log, fmt, ap);
    va_end(ap);
    fputc('\n', o->log);
    fflush(o->log);
}

/* The shared store, opened on first use; NULL (logged) when it cannot. */
static struct oauth_store *
oauth_store(const struct oauth *o)
{
    char *cause = NULL;

    if (oauth_store_g == NULL) {
        oauth_store_g = oauth_store_open(NULL, &cause);
        if (oauth_store_g == NULL) {
            oauth_log(o, "%s", cause);
            free(cause);
        }
    }
    return oauth_store_g;
}

static void
oauth_wipe_free(char *s)
{
    if (s == NULL)
        return;
    explicit_bzero(s, strlen(s));
    free(s);
}

static bool
oauth_consent_here(const struct oauth *o)
{
    return oauth_consent_on && oauth_consent_g.server != NULL &&
        o->decl->name != NULL &&
        strcmp(oauth_consent_g.server, o->decl->name) == 0;
}

static enum config_oauth_grant
oauth_grant(const struct oauth *o)
{
    return o->decl->oauth != NULL ? o->decl->oauth->grant :
        CONFIG_OAUTH_AUTHORIZATION_CODE;
}

/* Can a flow get a token from nothing (no refresh token)? */
static bool
oauth_can_grant(const struct oauth *o)
{
    return oauth_grant(o) == CONFIG_OAUTH_CLIENT_CREDENTIALS ||
        oauth_consent_here(o);
}

/* --- scopes -------------------------------------------------------------- */

/* Is every space-separated scope of want in have? */
static bool
oauth_scope_covers(const char *have, const char *want)
{
    const char *p = want;

    while (p != NULL && *p != '\0') {
        size_t      n = strcspn(p, " ");
        const char *h = have;
        bool        found = false;

        while (n > 0 && h != NULL && *h != '\0') {
            size_t m = strcspn(h, " ");

            if (m == n && strncmp(h, p, n) == 0) {
                found = true;
                break;
            }
            h += m;
            h += strspn(h, " ");
        }
        if (n > 0 && !found)
            return false;
        p += n;
        p += strspn(p, " ");
    }
    return true;
}

/* a ∪ b as a space-separated list, a's order first (caller frees; NULL
 * when both are empty). Quadratic in the number of scopes, which are
 * bounded by OAUTH_SCOPES_MAX per document and the challenge's size. */
static char *
oauth_scope_union(const char *a, const char *b)
{
    size_t la = a != NULL ? strlen(a) : 0, lb = b != NULL ? strlen(b) : 0;
    char  *out = xmalloc(la + lb + 2);
    size_t n = 0;

    for (int pass = 0; pass < 2; pass++) {
        const char *p = pass == 0 ? a : b;

        while (p != NULL && *p != '\0') {
            size_t k = strcspn(p, " ");
            char  *one = str_ndup(p, k);

            out[n] = '\0';
            if (k > 0 && !oauth_scope_covers(out, one)) {
                if (n > 0)
                    out[n++] = ' ';
                memcpy(out + n, p, k);
                n += k;
            }
            free(one);
            p += k;
            p += strspn(p, " ");
        }
    }
    out[n] = '\0';
    if (n == 0) {
        free(out);
        return NULL;
    }
    return out;
}

/* --- the token held ---------------------------------------------------- */

static void
oauth_set_token(struct oauth *o, const struct oauth_token *t, bool tokens)
{
    oauth_token_done(&o->tok);
    oauth_wipe_free(o->authz);
    o->authz = NULL;
    o->have_tok = false;
    if (t == NULL)
        return;
    oauth_token_copy(&o->tok, t);
    if (!tokens) {
        /* A login asks anew: keep what the entry knows (a pending step-up
         * scope), not its tokens. */
        oauth_wipe_free(o->tok.access_token);
        oauth_wipe_free(o->tok.refresh_token);
        o->tok.access_token = NULL;
        o->tok.refresh_token = NULL;
        return;
    }
    o->have_tok = o->tok.access_token != NULL;
    if (o->have_tok)
        o->authz = str_printf("Bearer %s", o->tok.access_token);
}

/* Take the cached entry when it holds a token other than the one held
 * (where consent runs, only the first time, without its tokens). True
 * when a different token was taken. */
static bool
oauth_load(struct oauth *o)
{
    struct oauth_store       *st = oauth_store(o);
    const struct oauth_token *t;
    char                     *cause = NULL;
    bool                      first = !o->loaded;

    o->loaded = true;
    if (st == NULL || o->resource == NULL)
        return false;
    if (oauth_store_reload(st, &cause) != 0) {
        oauth_log(o, "token file: %s", cause);
        free(cause);
        return false;
    }
    t = oauth_store_find(st, o->decl->name, o->resource);
    if (t == NULL || t->access_token == NULL)
        return false;
    if (oauth_consent_here(o)) {
        if (first)
            oauth_set_token(o, t, false);
        return false;
    }
    if (o->have_tok && strcmp(o->tok.access_token, t->access_token) == 0)
        return false;
    oauth_set_token(o, t, true);
    return true;
}

/* Write o's token (or just its step-up scope) to the file. */
static void
oauth_save(struct oauth *o, const struct oauth_token *t)
{
    struct oauth_store *st = oauth_store(o);
    char               *cause = NULL;

    if (st == NULL)
        return;
    if (oauth_store_put(st, o->decl->name, t, &cause) != 0) {
        oauth_log(o, "token file: %s", cause);
        free(cause);
    }
}

/* --- life -------------------------------------------------------------- */

struct oauth *
oauth_new(struct ev_loop *loop, struct curlev *ce,
    const struct config_server *decl, size_t pool_key, FILE *log)
{
    struct oauth *o;

    if (decl->transport != CONFIG_HTTP || decl->url == NULL ||
        decl->invalid != NULL)
        return NULL;
    for (size_t i = 0; i < decl->nheaders; i++) {
        if (strcasecmp(decl->headers[i].name, "Authorization") == 0)
            return NULL;            /* the user's own credentials win */
    }
    o = xcalloc(1, sizeof(*o));
    o->loop = loop;
    o->ce = ce;
    o->decl = decl;
    o->pool_key = pool_key;
    o->log = log;
    o->name = str_sanitized(decl->name != NULL ? decl->name : "?");
    o->origin = oauth_url_origin(decl->url);
    o->resource = oauth_url_resource(decl->url);
    oauth_refs++;
    return o;
}

static void
oauth_flow_free(struct oauth_flow *f)
{
    if (f->xfer != NULL)
        http_xfer_abort(f->xfer, NULL);
    ev_timer_stop(f->o->loop, &f->timer);
    oauth_listen_free(f->listen);
    free(f->challenge_scope);
    free(f->prm_hint);
    for (size_t i = 0; i < f->ncand; i++)
        free(f->cand[i]);
    free(f->resource_indicator);
    free(f->prm_scopes);
    free(f->issuer);
    oauth_doc_free(f->as);
    free(f->authorization_endpoint);
    free(f->token_endpoint);
    free(f->registration_endpoint);
    free(f->client_id);
    oauth_wipe_free(f->client_secret);
    free(f->auth_method);
    free(f->scope);
    oauth_wipe_free(f->verifier);
    free(f->state);
    free(f);
}

static void
oauth_waiters_free(struct oauth_waiter *w)
{
    while (w != NULL) {
        struct oauth_waiter *n = w->next;

        free(w);
        w = n;
    }
}

void
oauth_free(struct oauth *o)
{
    if (o == NULL)
        return;
    if (o->flow != NULL)
        oauth_flow_free(o->flow);
    oauth_waiters_free(o->waiters);
    oauth_waiters_free(o->resuming);
    oauth_set_token(o, NULL, false);
    free(o->name);
    free(o->origin);
    free(o->resource);
    free(o);
    if (--oauth_refs == 0) {
        oauth_store_free(oauth_store_g);
        oauth_store_g = NULL;
    }
}

bool
oauth_authorized(const struct oauth *o)
{
    return o != NULL && o->used;
}

void
oauth_explain(const struct oauth *o, char *detail, size_t dsz)
{
    size_t off;

    if (o == NULL || o->detail[0] == '\0')
        return;
    off = strlen(detail);
    if (off + 3 < dsz)
        snprintf(detail + off, dsz - off, "; %s", o->detail);
}

void
oauth_forget(struct oauth *o, void *arg)
{
    struct oauth_waiter **lists[2], **pp;

    if (o == NULL)
        return;
    lists[0] = &o->waiters;
    lists[1] = &o->resuming;
    for (size_t i = 0; i < 2; i++) {
        pp = lists[i];
        while (*pp != NULL) {
            if ((*pp)->arg == arg) {
                struct oauth_waiter *w = *pp;

                *pp = w->next;
                free(w);
            } else {
                pp = &(*pp)->next;
            }
        }
    }
}

/* --- HTTP steps ---------------------------------------------------------- */

static void oauth_xfer_done_cb(void *arg, struct http_xfer *hx,
    const struct http_result *r);

static const struct http_callbacks oauth_http_cb = {
    .on_done = oauth_xfer_done_cb,
};

/* ev_timer: a step's own deadline (an HTTP request, or the consent). */
static void
oauth_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct oauth_flow *f = w->data;

    (void)loop;
    (void)revents;
    if (f->step == OAUTH_RESUME) {
        oauth_finish(f, true, "%s", "");
        return;
    }
    if (f->step == OAUTH_CONSENT) {
        oauth_finish(f, false, "authorization: the browser did not come "
            "back to mcptop within %ld s", (oauth_consent_g.wait_ms > 0 ?
            oauth_consent_g.wait_ms : OAUTH_DEFAULT_WAIT_MS) / 1000);
        return;
    }
    if (f->xfer != NULL) {
        http_xfer_abort(f->xfer, NULL);
        f->xfer = NULL;
    }
    oauth_finish(f, false, "authorization: no answer from %s within %ld ms",
        f->step == OAUTH_PRM ? "the protected resource metadata" :
        f->step == OAUTH_AS ? "the authorization server metadata" :
        f->step == OAUTH_REGISTER ? "the registration endpoint" :
        "the token endpoint", f->o->decl->timeout_ms);
}

static void
oauth_arm(struct oauth_flow *f, double seconds)
{
    ev_timer_stop(f->o->loop, &f->timer);
    ev_timer_set(&f->timer, seconds, 0.);
    ev_timer_start(f->o->loop, &f->timer);
}

/* Start one request of the flow. false with the flow finished when it
 * cannot start. */
static bool
oauth_send(struct oauth_flow *f, enum http_method method, const char *url,
    const char *body, const char *content_type, const char *authorization)
{
    struct oauth       *o = f->o;
    char               *cause = NULL;
    char               *origin = oauth_url_origin(url);
    bool                own = origin != NULL && o->origin != NULL &&
        strcmp(origin, o->origin) == 0;
    struct http_request rq = {
        .method = method,
        .url = url,
        .body = body,
        .body_len = body != NULL ? strlen(body) : 0,
        .pool_key = o->pool_key,
        .max_bytes = OAUTH_DOC_MAX_BYTES,
        .ca_file = own ? o->decl->ca_file : NULL,
        .tls_insecure = o->decl->tls_insecure,
        .authorization = authorization,
        .content_type = content_type,
        .accept = "application/json",
    };

    free(origin);
    f->xfer = http_start(o->ce, &rq, &oauth_http_cb, f, &cause);
    if (f->xfer == NULL) {
        oauth_finish(f, false, "authorization: %s", cause);
        free(cause);
        return false;
    }
    oauth_log(o, "%s %s", http_method_name(method),
        f->step == OAUTH_TOKEN || f->step == OAUTH_REFRESH ?
        "token endpoint" : url);
    oauth_arm(f, o->decl->timeout_ms / 1000.0);
    return true;
}

/* "<status> <error>" of an OAuth error answer, sanitized, into buf. */
static const char *
oauth_error_of(const struct http_result *r, char *buf, size_t n)
{
    struct oauth_doc *d = oauth_doc_parse(r->body, r->body_len);
    const char       *e = oauth_doc_string(d, "error");
    char              clean[48] = "";

    if (e != NULL)
        str_sanitize(clean, sizeof(clean), e, strlen(e));
    if (!r->completed && r->status == 0) {
        char err[80] = "";

        if (r->error_text != NULL)
            str_sanitize(err, sizeof(err), r->error_text,
                strlen(r->error_text));
        snprintf(buf, n, "failed (%s)", err[0] ? err : "transport error");
    } else {
        snprintf(buf, n, "%ld%s%s", r->status, clean[0] ? " " : "", clean);
    }
    oauth_doc_free(d);
    return buf;
}

static bool
oauth_ok(const struct http_result *r)
{
    return r->completed && r->status >= 200 && r->status < 300;
}

/* --- discovery ------------------------------------------------------------ */

static void
oauth_cand_reset(struct oauth_flow *f)
{
    for (size_t i = 0; i < f->ncand; i++)
        free(f->cand[i]);
    f->ncand = 0;
    f->at = 0;
}

static void
oauth_cand_add(struct oauth_flow *f, char *url)
{
    for (size_t i = 0; i < f->ncand; i++) {
        if (strcmp(f->cand[i], url) == 0) {
            free(url);
            return;
        }
    }
    if (f->ncand < OAUTH_CANDIDATES)
        f->cand[f->ncand++] = url;
    else
        free(url);
}

static void
oauth_start_prm(struct oauth_flow *f)
{
    char  *w[OAUTH_URL_PRM_MAX];
    size_t n = oauth_url_prm(f->o->decl->url, w);

    f->step = OAUTH_PRM;
    oauth_cand_reset(f);
    if (f->prm_hint != NULL && oauth_url_is_http(f->prm_hint))
        oauth_cand_add(f, xstrdup(f->prm_hint));
    for (size_t i = 0; i < n; i++)
        oauth_cand_add(f, w[i]);
    oauth_flow_next(f);
}

static void
oauth_start_as(struct oauth_flow *f)
{
    char  *w[OAUTH_URL_AS_MAX];
    size_t n = oauth_url_as_metadata(f->issuer, w);

    f->step = OAUTH_AS;
    oauth_cand_reset(f);
    for (size_t i = 0; i < n; i++)
        oauth_cand_add(f, w[i]);
    if (f->ncand == 0) {
        oauth_finish(f, false, "authorization: the authorization server "
            "is not an http(s) URL");
        return;
    }
    oauth_flow_next(f);
}

/* A protected resource metadata answer: take it or try the next URL. */
static void
oauth_on_prm(struct oauth_flow *f, const struct http_result *r)
{
    struct oauth     *o = f->o;
    struct oauth_doc *d = oauth_ok(r) ? oauth_doc_parse(r->body,
        r->body_len) : NULL;
    const char       *as = oauth_doc_array_string(d, "authorization_servers",
        0);
    const char       *res = oauth_doc_string(d, "resource");

    if (as == NULL || !oauth_url_is_http(as)) {
        oauth_doc_free(d);
        if (++f->at < f->ncand) {
            oauth_flow_next(f);
            return;
        }
        /* No metadata anywhere: the 2025-03-26 revision's discovery, the
         * authorization server at the server's origin. */
        oauth_log(o, "no protected resource metadata: using the server's "
            "origin (2025-03-26)");
        f->legacy = true;
        f->issuer = str_dup(o->origin);
        f->resource_indicator = str_dup(o->resource);
        oauth_start_as(f);
        return;
    }
    if (res != NULL && !oauth_url_resource_covers(res, o->decl->url)) {
        char clean[96];

        str_sanitize(clean, sizeof(clean), res, strlen(res));
        oauth_doc_free(d);
        oauth_finish(f, false, "authorization: the protected resource "
            "metadata is for %s, not this server", clean);
        return;
    }
    f->resource_indicator = res != NULL ? oauth_url_resource(res) :
        str_dup(o->resource);
    if (f->resource_indicator == NULL)
        f->resource_indicator = str_dup(o->resource);
    f->prm_scopes = oauth_doc_array_join(d, "scopes_supported",
        OAUTH_SCOPES_MAX);
    f->issuer = xstrdup(as);
    oauth_doc_free(d);
    oauth_start_as(f);
}

static void oauth_client(struct oauth_flow *f);

/* An authorization server metadata answer. */
static void
oauth_on_as(struct oauth_flow *f, const struct http_result *r)
{
    struct oauth_doc *d = oauth_ok(r) ? oauth_doc_parse(r->body,
        r->body_len) : NULL;
    const char       *tok = oauth_doc_string(d, "token_endpoint");
    const char       *iss = oauth_doc_string(d, "issuer");

    if (tok == NULL || !oauth_url_is_http(tok)) {
        oauth_doc_free(d);
        if (++f->at < f->ncand) {
            oauth_flow_next(f);
            return;
        }
        if (!f->legacy) {
            char clean[96];

            str_sanitize(clean, sizeof(clean), f->issuer,
                strlen(f->issuer));
            oauth_finish(f, false, "authorization: authorization server "
                "metadata not found for %s", clean);
            return;
        }
        /* 2025-03-26: the default endpoints at the server's origin. */
        oauth_log(f->o, "no authorization server metadata: default "
            "endpoints at the server's origin (2025-03-26)");
        f->authorization_endpoint = str_printf("%s/authorize", f->issuer);
        f->token_endpoint = str_printf("%s/token", f->issuer);
        f->registration_endpoint = str_printf("%s/register", f->issuer);
        oauth_client(f);
        return;
    }
    if (!f->legacy && iss != NULL && !oauth_url_same_issuer(iss, f->issuer)) {
        char clean[96];

        str_sanitize(clean, sizeof(clean), iss, strlen(iss));
        oauth_doc_free(d);
        oauth_finish(f, false, "authorization: the authorization server "
            "metadata names issuer %s, not the one asked for", clean);
        return;
    }
    f->have_as = true;
    f->as = d;
    if (iss != NULL) {
        free(f->issuer);
        f->issuer = xstrdup(iss);
    }
    f->token_endpoint = xstrdup(tok);
    if (oauth_doc_string(d, "authorization_endpoint") != NULL &&
        oauth_url_is_http(oauth_doc_string(d, "authorization_endpoint")))
        f->authorization_endpoint = xstrdup(oauth_doc_string(d,
            "authorization_endpoint"));
    if (oauth_doc_string(d, "registration_endpoint") != NULL &&
        oauth_url_is_http(oauth_doc_string(d, "registration_endpoint")))
        f->registration_endpoint = xstrdup(oauth_doc_string(d,
            "registration_endpoint"));
    oauth_client(f);
}

/* --- client identity ----------------------------------------------------- */

/* Does the server list method (absent list: RFC 8414's default,
 * client_secret_basic)? */
static bool
oauth_as_allows(const struct oauth_flow *f, const char *method)
{
    if (f->as == NULL ||
        oauth_doc_array_len(f->as, "token_endpoint_auth_methods_supported")
        < 0)
        return strcmp(method, "client_secret_basic") == 0;
    return oauth_doc_array_has(f->as, "token_endpoint_auth_methods_supported",
        method);
}

/* The authentication method for a client we know the credentials of. */
static const char *
oauth_pick_method(const struct oauth_flow *f, const struct config_oauth *c)
{
    if (c != NULL && c->token_endpoint_auth_method != NULL)
        return c->token_endpoint_auth_method;
    if (c != NULL && c->private_key_file != NULL)
        return "private_key_jwt";
    if (c == NULL || c->client_secret == NULL)
        return "none";
    if (!oauth_as_allows(f, "client_secret_basic") &&
        oauth_as_allows(f, "client_secret_post"))
        return "client_secret_post";
    return "client_secret_basic";
}

/* The method to register with: public ("none") when offered, else a
 * secret. */
static const char *
oauth_register_method(const struct oauth_flow *f)
{
    if (f->as != NULL && oauth_doc_array_has(f->as,
        "token_endpoint_auth_methods_supported", "none"))
        return "none";
    if (!oauth_as_allows(f, "client_secret_basic") &&
        oauth_as_allows(f, "client_secret_post"))
        return "client_secret_post";
    return "client_secret_basic";
}

static void oauth_grant_start(struct oauth_flow *f);
static void oauth_redirect_cb(void *arg, const char *code, const char *state,
    const char *error, const char *error_description);

/* The requested scope: the configured one, with the challenge's (or else
 * the metadata's scopes_supported), and any pending step-up scope. */
static void
oauth_pick_scope(struct oauth_flow *f)
{
    const struct config_oauth *c = f->o->decl->oauth;
    char                      *a, *b;

    a = oauth_scope_union(c != NULL ? c->scope : NULL,
        f->challenge_scope != NULL ? f->challenge_scope :
        (c != NULL && c->scope != NULL) ? NULL : f->prm_scopes);
    b = oauth_scope_union(a, f->o->tok.step_up_scope);
    free(a);
    if (f->step_up && f->o->have_tok) {
        a = oauth_scope_union(f->o->tok.scope, b);
        free(b);
        b = a;
    }
    f->scope = b;
}

static void
oauth_client(struct oauth_flow *f)
{
    struct oauth              *o = f->o;
    const struct config_oauth *c = o->decl->oauth;
    bool                       code = oauth_grant(o) ==
        CONFIG_OAUTH_AUTHORIZATION_CODE;
    const char                *grants_code[] = { "authorization_code",
        "refresh_token", NULL };
    const char                *grants_cc[] = { "client_credentials", NULL };
    char                      *cause = NULL, *body;

    oauth_pick_scope(f);
    if (code) {
        if (f->authorization_endpoint == NULL) {
            oauth_finish(f, false, "authorization: the authorization server "
                "has no authorization endpoint");
            return;
        }
        /* PKCE: the 2025-11-25 revision refuses a server that does not
         * say it supports S256 (the 2025-03-26 fallbacks have no
         * metadata to say it). */
        if (f->have_as && !f->legacy && !oauth_doc_array_has(f->as,
            "code_challenge_methods_supported", "S256")) {
            oauth_finish(f, false, "authorization: the authorization "
                "server does not list PKCE S256 support");
            return;
        }
        f->listen = oauth_listen_new(o->loop, oauth_redirect_cb, f, &cause);
        if (f->listen == NULL) {
            oauth_finish(f, false, "authorization: %s", cause);
            free(cause);
            return;
        }
    }
    if (c != NULL && c->client_id != NULL) {
        f->client_id = xstrdup(c->client_id);
        f->client_secret = str_dup(c->client_secret);
        f->auth_method = xstrdup(oauth_pick_method(f, c));
        oauth_grant_start(f);
        return;
    }
    if (code && c != NULL && c->client_metadata_url != NULL &&
        f->as != NULL && oauth_doc_bool(f->as,
        "client_id_metadata_document_supported", false)) {
        /* A Client ID Metadata Document: the URL is the client id. */
        f->client_id = xstrdup(c->client_metadata_url);
        f->auth_method = xstrdup("none");
        oauth_grant_start(f);
        return;
    }
    if (f->registration_endpoint == NULL) {
        oauth_finish(f, false, "authorization: no client identity: the "
            "authorization server offers no registration; set "
            "\"oauth\": {\"client_id\": ...}");
        return;
    }
    f->step = OAUTH_REGISTER;
    f->auth_method = xstrdup(oauth_register_method(f));
    body = oauth_doc_registration(code ?
        oauth_listen_redirect_uri(f->listen) : NULL,
        code ? grants_code : grants_cc, f->auth_method, f->scope);
    oauth_send(f, HTTP_POST, f->registration_endpoint, body,
        "application/json", NULL);
    free(body);
}

static void
oauth_on_register(struct oauth_flow *f, const struct http_result *r)
{
    struct oauth_doc *d = oauth_ok(r) ? oauth_doc_parse(r->body,
        r->body_len) : NULL;
    const char       *id = oauth_doc_string(d, "client_id");
    const char       *secret = oauth_doc_string(d, "client_secret");
    const char       *method = oauth_doc_string(d,
        "token_endpoint_auth_method");
    char              why[96];

    if (id == NULL || id[0] == '\0') {
        oauth_doc_free(d);
        oauth_finish(f, false, "authorization: client registration "
            "refused (%s)", oauth_error_of(r, why, sizeof(why)));
        return;
    }
    f->client_id = xstrdup(id);
    f->client_secret = str_dup(secret);
    if (method != NULL && (strcmp(method, "none") == 0 ||
        strcmp(method, "client_secret_basic") == 0 ||
        strcmp(method, "client_secret_post") == 0)) {
        free(f->auth_method);
        f->auth_method = xstrdup(method);
    }
    if (f->client_secret == NULL) {
        free(f->auth_method);
        f->auth_method = xstrdup("none");
    } else if (strcmp(f->auth_method, "none") == 0 && method == NULL) {
        free(f->auth_method);
        f->auth_method = xstrdup("client_secret_basic");
    }
    if (secret != NULL)
        explicit_bzero((char *)secret, strlen(secret));
    oauth_doc_free(d);
    oauth_log(f->o, "registered a client (%s)", f->auth_method);
    oauth_grant_start(f);
}

/* --- the grants -------------------------------------------------------- */

/* A form body being built. */
struct oauth_form {
    char  *p;
    size_t len;
};

static void
oauth_form_add(struct oauth_form *fm, const char *name, const char *value)
{
    char  *e;
    size_t need;

    if (value == NULL)
        return;
    e = oauth_url_escape(value);
    need = fm->len + strlen(name) + strlen(e) + 3;
    fm->p = xrealloc(fm->p, need);
    fm->len += (size_t)snprintf(fm->p + fm->len, need - fm->len, "%s%s=%s",
        fm->len > 0 ? "&" : "", name, e);
    explicit_bzero(e, strlen(e));
    free(e);
}

/* Client authentication at the token endpoint (RFC 6749 section 2.3;
 * RFC 7523 section 2.2): fields into fm, or a Basic header into *authz.
 * false with the flow finished when the assertion cannot be signed. */
static bool
oauth_client_auth(struct oauth_flow *f, struct oauth_form *fm, char **authz)
{
    const struct config_oauth *c = f->o->decl->oauth;
    const char                *m = f->auth_method != NULL ? f->auth_method :
        "none";

    *authz = NULL;
    if (strcmp(m, "client_secret_basic") == 0 && f->client_secret != NULL) {
        char *id = oauth_url_escape(f->client_id);
        char *sec = oauth_url_escape(f->client_secret);
        char *pair = str_printf("%s:%s", id, sec);
        char *b64 = oauth_crypto_b64((const unsigned char *)pair,
            strlen(pair));

        *authz = str_printf("Basic %s", b64);
        oauth_wipe_free(sec);
        oauth_wipe_free(pair);
        oauth_wipe_free(b64);
        free(id);
    } else if (strcmp(m, "client_secret_post") == 0) {
        oauth_form_add(fm, "client_id", f->client_id);
        oauth_form_add(fm, "client_secret", f->client_secret);
    } else if (strcmp(m, "private_key_jwt") == 0) {
        int64_t now = clock_wall_ms() / 1000;
        char   *jti = oauth_crypto_token(), *claims, *jwt, *cause = NULL;
        const char *aud = f->issuer != NULL && !f->legacy ? f->issuer :
            f->token_endpoint;

        claims = oauth_doc_assertion_claims(f->client_id, aud, now,
            now + OAUTH_ASSERTION_S, jti != NULL ? jti : "");
        jwt = c != NULL && c->private_key_file != NULL ?
            oauth_crypto_jwt(c->private_key_file, c->signing_algorithm,
            claims, &cause) : NULL;
        free(claims);
        free(jti);
        if (jwt == NULL) {
            oauth_finish(f, false, "authorization: %s", cause != NULL ?
                cause : "private_key_jwt needs \"private_key_file\"");
            free(cause);
            return false;
        }
        oauth_form_add(fm, "client_id", f->client_id);
        oauth_form_add(fm, "client_assertion_type",
            "urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
        oauth_form_add(fm, "client_assertion", jwt);
        oauth_wipe_free(jwt);
    } else {
        oauth_form_add(fm, "client_id", f->client_id);
    }
    return true;
}

/* POST the token request whose grant fields are in fm (taken). */
static void
oauth_token_request(struct oauth_flow *f, struct oauth_form *fm)
{
    char *authz = NULL;

    if (!oauth_client_auth(f, fm, &authz)) {
        oauth_wipe_free(fm->p);
        return;
    }
    oauth_send(f, HTTP_POST, f->token_endpoint, fm->p,
        "application/x-www-form-urlencoded", authz);
    oauth_wipe_free(fm->p);
    oauth_wipe_free(authz);
}

static void
oauth_grant_start(struct oauth_flow *f)
{
    struct oauth     *o = f->o;
    struct oauth_form fm = { 0 };
    char             *challenge, *url;

    if (oauth_grant(o) == CONFIG_OAUTH_CLIENT_CREDENTIALS) {
        f->step = OAUTH_TOKEN;
        oauth_form_add(&fm, "grant_type", "client_credentials");
        oauth_form_add(&fm, "scope", f->scope);
        oauth_form_add(&fm, "resource", f->resource_indicator);
        oauth_token_request(f, &fm);
        return;
    }
    f->verifier = oauth_crypto_token();
    f->state = oauth_crypto_token();
    if (f->verifier == NULL || f->state == NULL) {
        oauth_finish(f, false, "authorization: no random numbers");
        return;
    }
    challenge = oauth_crypto_s256(f->verifier);
    oauth_form_add(&fm, "response_type", "code");
    oauth_form_add(&fm, "client_id", f->client_id);
    oauth_form_add(&fm, "redirect_uri", oauth_listen_redirect_uri(f->listen));
    oauth_form_add(&fm, "code_challenge", challenge);
    oauth_form_add(&fm, "code_challenge_method", "S256");
    oauth_form_add(&fm, "state", f->state);
    oauth_form_add(&fm, "resource", f->resource_indicator);
    oauth_form_add(&fm, "scope", f->scope);
    url = str_printf("%s%s%s", f->authorization_endpoint,
        strchr(f->authorization_endpoint, '?') != NULL ? "&" : "?", fm.p);
    free(fm.p);
    free(challenge);
    f->step = OAUTH_CONSENT;
    oauth_arm(f, (oauth_consent_g.wait_ms > 0 ? oauth_consent_g.wait_ms :
        OAUTH_DEFAULT_WAIT_MS) / 1000.0);
    oauth_log(o, "waiting for consent in the browser");
    if (oauth_consent_g.open_url != NULL)
        oauth_consent_g.open_url(oauth_consent_g.arg, o->decl->name, url);
    free(url);
}

/* oauth_listen_cb: the browser came back. */
static void
oauth_redirect_cb(void *arg, const char *code, const char *state,
    const char *error, const char *error_description)
{
    struct oauth_flow *f = arg;
    struct oauth_form  fm = { 0 };

    (void)error_description;
    if (f->step != OAUTH_CONSENT)
        return;
    if (state == NULL || strcmp(state, f->state) != 0) {
        oauth_finish(f, false, "authorization: the redirect's state does "
            "not match (not this login's answer)");
        return;
    }
    if (error != NULL || code == NULL) {
        char clean[48] = "no code";

        if (error != NULL)
            str_sanitize(clean, sizeof(clean), error, strlen(error));
        oauth_finish(f, false, "authorization: refused at the "
            "authorization endpoint (%s)", clean);
        return;
    }
    f->step = OAUTH_TOKEN;
    oauth_form_add(&fm, "grant_type", "authorization_code");
    oauth_form_add(&fm, "code", code);
    oauth_form_add(&fm, "redirect_uri", oauth_listen_redirect_uri(f->listen));
    oauth_form_add(&fm, "code_verifier", f->verifier);
    oauth_form_add(&fm, "resource", f->resource_indicator);
    oauth_token_request(f, &fm);
}

/* A token endpoint answer (any grant). */
static void
oauth_on_token(struct oauth_flow *f, const struct http_result *r)
{
    struct oauth      *o = f->o;
    struct oauth_doc  *d = oauth_ok(r) ? oauth_doc_parse(r->body,
        r->body_len) : NULL;
    const char        *at = oauth_doc_string(d, "access_token");
    const char        *type = oauth_doc_string(d, "token_type");
    const char        *rt = oauth_doc_string(d, "refresh_token");
    const char        *scope = oauth_doc_string(d, "scope");
    double             exp = 0;
    struct oauth_token t = { 0 };
    char               why[96];
    int64_t            now = clock_wall_ms() / 1000;

    if (at == NULL || at[0] == '\0') {
        struct oauth_doc *e = oauth_doc_parse(r->body, r->body_len);
        bool              dead = f->step == OAUTH_REFRESH &&
            oauth_doc_string(e, "error") != NULL &&
            strcmp(oauth_doc_string(e, "error"), "invalid_grant") == 0;

        oauth_doc_free(e);
        oauth_doc_free(d);
        if (dead && !f->background) {
            /* The refresh token is spent: drop it from memory, so that
             * the next challenge asks for a new grant. */
            struct oauth_token keep = { 0 };

            oauth_token_copy(&keep, &o->tok);
            oauth_set_token(o, &keep, false);
            oauth_token_done(&keep);
        }
        oauth_finish(f, false, "authorization: token endpoint %s%s%s",
            oauth_error_of(r, why, sizeof(why)),
            f->step == OAUTH_REFRESH && !oauth_can_grant(o) ?
            "; consent needed: run mcptop login " : "",
            f->step == OAUTH_REFRESH && !oauth_can_grant(o) ? o->name : "");
        return;
    }
    if (!str_is_visible_ascii(at, strlen(at)) || strlen(at) > 16384 ||
        (type != NULL && strcasecmp(type, "Bearer") != 0)) {
        char clean[24] = "";

        if (type != NULL)
            str_sanitize(clean, sizeof(clean), type, strlen(type));
        oauth_doc_free(d);
        oauth_finish(f, false, "authorization: the token endpoint's token "
            "is not a usable bearer token%s%s", clean[0] ? ": type " : "",
            clean);
        return;
    }
    t.resource = o->resource;
    t.resource_indicator = f->resource_indicator != NULL &&
        strcmp(f->resource_indicator, o->resource) != 0 ?
        f->resource_indicator : NULL;
    t.access_token = (char *)at;
    t.token_type = "Bearer";
    if (oauth_doc_number(d, "expires_in", &exp) && isfinite(exp) && exp > 0 &&
        exp < 1e9)
        t.expires_at = now + (int64_t)exp;
    t.obtained_at = now;
    /* A refresh answer without a refresh token keeps the old one. */
    t.refresh_token = (char *)(rt != NULL ? rt : f->step == OAUTH_REFRESH &&
        o->have_tok ? o->tok.refresh_token : NULL);
    t.scope = (char *)(scope != NULL ? scope : f->scope != NULL ? f->scope :
        (o->have_tok && f->step == OAUTH_REFRESH ? o->tok.scope : NULL));
    t.issuer = f->issuer;
    t.token_endpoint = f->token_endpoint;
    t.client_id = f->client_id;
    t.client_secret = f->client_secret;
    t.auth_method = f->auth_method;
    t.step_up_scope = o->tok.step_up_scope != NULL &&
        !oauth_scope_covers(t.scope, o->tok.step_up_scope) ?
        o->tok.step_up_scope : NULL;
    /* t borrows; the copy below owns. */
    {
        struct oauth_token own = { 0 };

        oauth_token_copy(&own, &t);
        oauth_set_token(o, &own, true);
        oauth_save(o, &own);
        oauth_token_done(&own);
    }
    explicit_bzero((char *)at, strlen(at));
    if (rt != NULL)
        explicit_bzero((char *)rt, strlen(rt));
    oauth_doc_free(d);
    o->token_at = ev_now(o->loop);
    o->used = true;
    oauth_log(o, "%s a token (expires in %s s)", f->step == OAUTH_REFRESH ?
        "refreshed" : "obtained", exp > 0 ? "some" : "unknown");
    oauth_finish(f, true, "%s", "");
}

/* --- the flow ---------------------------------------------------------- */

/* Send the current step's next request. */
static void
oauth_flow_next(struct oauth_flow *f)
{
    oauth_send(f, HTTP_GET, f->cand[f->at], NULL, NULL, NULL);
}

/* Forget what a refresh set up, before a full flow. */
static void
oauth_flow_reset(struct oauth_flow *f)
{
    char **slots[] = { &f->token_endpoint, &f->issuer, &f->client_id,
        &f->auth_method, &f->resource_indicator };

    for (size_t i = 0; i < sizeof(slots) / sizeof(slots[0]); i++) {
        free(*slots[i]);
        *slots[i] = NULL;
    }
    oauth_wipe_free(f->client_secret);
    f->client_secret = NULL;
}

/* http_callbacks.on_done */
static void
oauth_xfer_done_cb(void *arg, struct http_xfer *hx,
    const struct http_result *r)
{
    struct oauth_flow *f = arg;

    (void)hx;
    f->xfer = NULL;
    ev_timer_stop(f->o->loop, &f->timer);
    if (f->step == OAUTH_PRM || f->step == OAUTH_AS)
        oauth_log(f->o, "GET %s -> %ld", f->cand[f->at], r->status);
    else
        oauth_log(f->o, "-> %ld", r->status);
    switch (f->step) {
    case OAUTH_PRM:
        oauth_on_prm(f, r);
        break;
    case OAUTH_AS:
        oauth_on_as(f, r);
        break;
    case OAUTH_REGISTER:
        oauth_on_register(f, r);
        break;
    case OAUTH_REFRESH:
        if (f->full_after_refresh && !oauth_ok(r)) {
            /* The refresh token is spent: start over with a grant. */
            oauth_log(f->o, "refresh refused: a new grant");
            oauth_flow_reset(f);
            oauth_start_prm(f);
            break;
        }
        oauth_on_token(f, r);
        break;
    case OAUTH_TOKEN:
        oauth_on_token(f, r);
        break;
    default:
        break;
    }
}

/* End the flow: resume every waiting request once. */
static void
oauth_finish(struct oauth_flow *f, bool ok, const char *fmt, ...)
{
    struct oauth *o = f->o;
    va_list       ap;

    if (ok) {
        o->failed_at = 0;
        o->detail[0] = '\0';
    } else {
        o->failed_at = ev_now(o->loop);
        va_start(ap, fmt);
        vsnprintf(o->detail, sizeof(o->detail), fmt, ap);
        va_end(ap);
        oauth_log(o, "%s", o->detail);
    }
    o->flow = NULL;
    oauth_flow_free(f);
    o->resuming = o->waiters;
    o->waiters = NULL;
    while (o->resuming != NULL) {
        struct oauth_waiter *w = o->resuming;

        o->resuming = w->next;
        w->cb(w->arg);
        free(w);
    }
}

static struct oauth_flow *
oauth_flow_new(struct oauth *o, enum oauth_step step,
    const struct oauth_challenge *c)
{
    struct oauth_flow *f = xcalloc(1, sizeof(*f));

    f->o = o;
    f->step = step;
    ev_timer_init(&f->timer, oauth_timer_cb, 0., 0.);
    f->timer.data = f;
    if (c != NULL) {
        f->challenge_scope = str_dup(c->scope);
        f->prm_hint = str_dup(c->resource_metadata);
    }
    o->flow = f;
    return f;
}

/* Start a refresh_token grant with what the cache holds. */
static void
oauth_start_refresh(struct oauth_flow *f)
{
    struct oauth     *o = f->o;
    struct oauth_form fm = { 0 };

    f->step = OAUTH_REFRESH;
    f->token_endpoint = xstrdup(o->tok.token_endpoint);
    f->issuer = str_dup(o->tok.issuer);
    f->client_id = str_dup(o->tok.client_id);
    f->client_secret = str_dup(o->tok.client_secret);
    f->auth_method = str_dup(o->tok.auth_method);
    f->resource_indicator = xstrdup(o->tok.resource_indicator != NULL ?
        o->tok.resource_indicator : o->resource);
    oauth_form_add(&fm, "grant_type", "refresh_token");
    oauth_form_add(&fm, "refresh_token", o->tok.refresh_token);
    oauth_form_add(&fm, "resource", f->resource_indicator);
    oauth_token_request(f, &fm);
}

static void
oauth_wait(struct oauth *o, oauth_resume_cb cb, void *arg)
{
    struct oauth_waiter *w = xcalloc(1, sizeof(*w)), **pp = &o->waiters;

    w->cb = cb;
    w->arg = arg;
    while (*pp != NULL)
        pp = &(*pp)->next;
    *pp = w;
}

const char *
oauth_authorization(struct oauth *o)
{
    int64_t now;

    if (o == NULL)
        return NULL;
    if (!o->loaded)
        oauth_load(o);
    if (!o->have_tok)
        return NULL;
    now = clock_wall_ms() / 1000;
    if (o->flow == NULL && o->tok.refresh_token != NULL &&
        o->tok.token_endpoint != NULL && o->tok.expires_at > 0 &&
        now + OAUTH_REFRESH_AHEAD_S >= o->tok.expires_at &&
        (o->failed_at == 0 ||
        ev_now(o->loop) - o->failed_at >= OAUTH_RETRY_FLOOR_S)) {
        struct oauth_flow *f = oauth_flow_new(o, OAUTH_REFRESH, NULL);

        f->background = true;
        oauth_log(o, "refreshing ahead of expiry");
        oauth_start_refresh(f);
    }
    o->used = true;
    return o->authz;
}

/* Record a scope a 403 asked for, for the next login. */
static void
oauth_note_step_up(struct oauth *o, const char *scope)
{
    char *u;

    if (!o->have_tok)
        return;
    u = oauth_scope_union(o->tok.step_up_scope, scope);
    free(o->tok.step_up_scope);
    o->tok.step_up_scope = u;
    oauth_save(o, &o->tok);
}

bool
oauth_on_challenge(struct oauth *o, long status,
    const char *www_authenticate, oauth_resume_cb resume, void *arg)
{
    struct oauth_challenge c;
    struct oauth_flow     *f;
    ev_tstamp              now;
    bool                   started = false;

    if (o == NULL || (status != 401 && status != 403))
        return false;
    oauth_challenge_parse(www_authenticate, &c);
    if (c.present && !c.bearer) {
        snprintf(o->detail, sizeof(o->detail), "the server asks for %s "
            "authentication, not an OAuth bearer token", c.scheme);
        oauth_challenge_done(&c);
        return false;
    }
    if (status == 403 && !oauth_challenge_insufficient_scope(&c)) {
        o->detail[0] = '\0';        /* forbidden: nothing OAuth can do */
        oauth_challenge_done(&c);
        return false;
    }
    if (o->flow != NULL && !o->flow->background) {
        oauth_wait(o, resume, arg);         /* join the flow under way */
        oauth_challenge_done(&c);
        return true;
    }
    now = ev_now(o->loop);
    if (o->flow == NULL && o->failed_at > 0 &&
        now - o->failed_at < OAUTH_RETRY_FLOOR_S) {
        oauth_challenge_done(&c);
        return false;               /* the same failure, not new requests */
    }
    if (o->flow == NULL && oauth_load(o)) {
        /* Another process (mcptop login) cached a new token: use it. */
        oauth_log(o, "a new token in the token file");
        f = oauth_flow_new(o, OAUTH_RESUME, NULL);
        oauth_arm(f, 0.);
        oauth_wait(o, resume, arg);
        oauth_challenge_done(&c);
        return true;
    }
    if (o->flow != NULL) {
        /* A refresh ahead of expiry is under way: wait for it. */
        oauth_wait(o, resume, arg);
        oauth_challenge_done(&c);
        return true;
    }
    if (status == 401) {
        if (o->have_tok && o->token_at > 0 &&
            now - o->token_at < OAUTH_FRESH_S) {
            snprintf(o->detail, sizeof(o->detail), "authorization: the "
                "server refused a token issued %.0f s ago", now -
                o->token_at);
        } else if (o->have_tok && o->tok.refresh_token != NULL &&
            o->tok.token_endpoint != NULL) {
            f = oauth_flow_new(o, OAUTH_REFRESH, &c);
            f->full_after_refresh = oauth_can_grant(o);
            oauth_log(o, "401: refreshing the token");
            oauth_wait(o, resume, arg);
            started = true;
            oauth_start_refresh(f);
        } else if (oauth_can_grant(o)) {
            f = oauth_flow_new(o, OAUTH_PRM, &c);
            oauth_log(o, "401: authorizing");
            oauth_wait(o, resume, arg);
            started = true;
            oauth_start_prm(f);
        } else {
            snprintf(o->detail, sizeof(o->detail), "consent needed: run "
                "mcptop login %s", o->name);
        }
        oauth_challenge_done(&c);
        return started;
    }
    /* 403 insufficient_scope: step up (MCP "Step-Up Authorization"). */
    if (c.scope == NULL || c.scope[0] == '\0') {
        snprintf(o->detail, sizeof(o->detail), "authorization: 403 "
            "insufficient_scope names no scope");
    } else if (o->have_tok && o->tok.scope != NULL &&
        oauth_scope_covers(o->tok.scope, c.scope)) {
        char clean[96];

        str_sanitize(clean, sizeof(clean), c.scope, strlen(c.scope));
        snprintf(o->detail, sizeof(o->detail), "authorization: "
            "insufficient_scope for \"%s\", which the token was already "
            "granted", clean);
    } else {
        char clean[96];

        str_sanitize(clean, sizeof(clean), c.scope, strlen(c.scope));
        if (now - o->step_up_at > OAUTH_STEP_UP_WINDOW_S)
            o->step_ups = 0;
        oauth_note_step_up(o, c.scope);
        if (o->step_ups >= OAUTH_MAX_STEP_UPS) {
            snprintf(o->detail, sizeof(o->detail), "authorization: "
                "insufficient_scope again after %u step-ups; giving up",
                o->step_ups);
        } else if (!oauth_can_grant(o)) {
            snprintf(o->detail, sizeof(o->detail), "consent needed for "
                "scope \"%s\": run mcptop login %s", clean, o->name);
        } else {
            o->step_ups++;
            o->step_up_at = now;
            f = oauth_flow_new(o, OAUTH_PRM, &c);
            f->step_up = true;
            oauth_log(o, "403 insufficient_scope: stepping up");
            oauth_wait(o, resume, arg);
            started = true;
            oauth_start_prm(f);
        }
    }
    oauth_challenge_done(&c);
    return started;
}

long
oauth_logout(const char *server, char **cause)
{
    struct oauth_store *st = oauth_store_open(NULL, cause);
    long                n;

    if (st == NULL)
        return -1;
    n = oauth_store_forget(st, server, cause);
    oauth_store_free(st);
    return n;
}
