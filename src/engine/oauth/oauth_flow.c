/*
 * One authorization flow's HTTP steps, chained on the loop through
 * http_start: a refresh; or the protected resource metadata, the
 * authorization server metadata, the client identity (configured, a
 * Client ID Metadata Document, or dynamic registration), the consent in
 * the browser through the loopback redirect, and the token request. Each
 * step has the server's request timeout, the consent its own wait. The
 * flow ends in oauth_finish, exactly once.
 *
 * Never here: a token, a secret, a code or a verifier in a log line or a
 * detail; a request to a URL that is not http(s).
 */
#include "oauth/oauth_flow.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/http.h"
#include "io/http_words.h"
#include "oauth/oauth_crypto.h"
#include "oauth/oauth_doc.h"
#include "oauth/oauth_listen.h"
#include "engine/oauth_url.h"
#include "engine/url.h"
#include "util/clock.h"
#include "util/str.h"
#include "util/xmalloc.h"

#define OAUTH_DOC_MAX_BYTES   (1024u * 1024)
#define OAUTH_SCOPES_MAX      64        /* scopes taken from a document */
#define OAUTH_ASSERTION_S     300       /* client assertion lifetime */

static void oauth_flow_next(struct oauth_flow *f);

/* How long the consent may take, ms. */
static long
oauth_flow_wait_ms(void)
{
    long w = oauth_consent_get()->wait_ms;

    return w > 0 ? w : OAUTH_DEFAULT_WAIT_MS;
}

/* Token requests in flight, over every flow (oauth_token_requests). */
static unsigned oauth_flow_token_xfers;

unsigned
oauth_token_requests(void)
{
    return oauth_flow_token_xfers;
}

/* The flow's transfer is over (done or aborted): uncount it. */
static void
oauth_flow_xfer_over(struct oauth_flow *f)
{
    if (f->xfer_token && oauth_flow_token_xfers > 0)
        oauth_flow_token_xfers--;
    f->xfer_token = false;
    f->xfer = NULL;
}

void
oauth_flow_free(struct oauth_flow *f)
{
    if (f->xfer != NULL) {
        http_xfer_abort(f->xfer, NULL);
        oauth_flow_xfer_over(f);
    }
    ev_timer_stop(f->o->loop, &f->timer);
    oauth_listen_free(f->listen);
    free(f->rotated_why);
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
    str_wipe_free(f->client_secret);
    free(f->auth_method);
    free(f->scope);
    str_wipe_free(f->verifier);
    free(f->state);
    free(f);
}

/* --- HTTP steps ---------------------------------------------------------- */

static void oauth_flow_xfer_done_cb(void *arg, struct http_xfer *hx,
    const struct http_result *r);

static const struct http_callbacks oauth_flow_http_cb = {
    .on_done = oauth_flow_xfer_done_cb,
};

/*
 * OAUTH_ROTATED: the refresh token was spent. Another process sharing the
 * token file may have refreshed first (the server rotates refresh tokens),
 * and its new pair may reach the file a moment after our refusal: read the
 * file under its lock now and a few times more, OAUTH_ROTATED_STEP_S
 * apart; take the pair when it comes, else report the refusal.
 */
#define OAUTH_ROTATED_LOOKS  8
#define OAUTH_ROTATED_STEP_S 0.25

void
oauth_flow_rotated(struct oauth_flow *f)
{
    struct oauth *o = f->o;

    if (oauth_take_rotated(o)) {
        oauth_log(o, "the refresh token was spent by another process; "
            "took the new token from the token file");
        oauth_finish(f, true, "%s", "");
        return;
    }
    if (++f->rotated_looks < OAUTH_ROTATED_LOOKS) {
        oauth_flow_arm(f, OAUTH_ROTATED_STEP_S);
        return;
    }
    if (!f->background) {
        /* The refresh token is spent: drop it from memory, so that the
         * next challenge asks for a new grant. */
        struct oauth_token keep = { 0 };

        oauth_token_copy(&keep, &o->tok);
        oauth_set_token(o, &keep, false);
        oauth_token_done(&keep);
    }
    oauth_finish(f, false, "%s", f->rotated_why);
}

/* ev_timer: a step's own deadline (an HTTP request, or the consent). */
static void
oauth_flow_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct oauth_flow *f = w->data;

    (void)loop;
    (void)revents;
    if (f->step == OAUTH_RESUME) {
        oauth_finish(f, true, "%s", "");
        return;
    }
    if (f->step == OAUTH_ROTATED) {
        oauth_flow_rotated(f);
        return;
    }
    if (f->step == OAUTH_CONSENT) {
        unsigned long n = oauth_listen_ignored(f->listen);

        if (n > 0)
            oauth_finish(f, false, "authorization: the browser did not "
                "come back to mcptop within %ld s (%lu callback%s with "
                "another state ignored: not this login's)",
                oauth_flow_wait_ms() / 1000, n, n == 1 ? "" : "s");
        else
            oauth_finish(f, false, "authorization: the browser did not "
                "come back to mcptop within %ld s",
                oauth_flow_wait_ms() / 1000);
        return;
    }
    if (f->xfer != NULL) {
        http_xfer_abort(f->xfer, NULL);
        oauth_flow_xfer_over(f);
    }
    oauth_finish(f, false, "authorization: no answer from %s within %ld ms",
        f->step == OAUTH_PRM ? "the protected resource metadata" :
        f->step == OAUTH_AS ? "the authorization server metadata" :
        f->step == OAUTH_REGISTER ? "the registration endpoint" :
        "the token endpoint", f->o->decl->timeout_ms);
}

void
oauth_flow_arm(struct oauth_flow *f, double seconds)
{
    ev_timer_stop(f->o->loop, &f->timer);
    ev_timer_set(&f->timer, seconds, 0.);
    ev_timer_start(f->o->loop, &f->timer);
}

/* Start one request of the flow. false with the flow finished when it
 * cannot start. */
static bool
oauth_flow_send(struct oauth_flow *f, enum http_method method, const char *url,
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
    f->xfer = http_start(o->ce, &rq, &oauth_flow_http_cb, f, &cause);
    if (f->xfer == NULL) {
        oauth_finish(f, false, "authorization: %s", cause);
        free(cause);
        return false;
    }
    oauth_log(o, "%s %s", http_method_name(method),
        f->step == OAUTH_TOKEN || f->step == OAUTH_REFRESH ?
        "token endpoint" : url);
    oauth_flow_arm(f, o->decl->timeout_ms / 1000.0);
    return true;
}

/* "<status> <error>" of an OAuth error answer, sanitized, into buf; an
 * answer with no OAuth error in it says what it was instead: an HTML page
 * (a login form, a proxy's) with its title, the server's own words. */
static const char *
oauth_flow_error_of(const struct http_result *r, char *buf, size_t n)
{
    struct oauth_doc *d = oauth_doc_parse_answer(r->body, r->body_len,
        r->content_type);
    const char       *e = oauth_doc_string(d, "error");
    char              clean[48] = "", words[96];

    if (e != NULL)
        str_sanitize(clean, sizeof(clean), e, strlen(e));
    if (!r->completed && r->status == 0) {
        char err[80] = "";

        if (r->error_text != NULL)
            str_sanitize(err, sizeof(err), r->error_text,
                strlen(r->error_text));
        snprintf(buf, n, "failed (%s)", err[0] ? err : "transport error");
    } else if (clean[0] != '\0' || d != NULL) {
        snprintf(buf, n, "%ld%s%s", r->status, clean[0] ? " " : "", clean);
    } else {
        switch (http_words(r->body, r->body_len, r->content_type, words,
            sizeof(words), 80)) {
        case HTTP_WORDS_TITLED:
            snprintf(buf, n, "%ld, an HTML page titled \"%s\" (not a token "
                "answer)", r->status, words);
            break;
        case HTTP_WORDS_PAGE:
            snprintf(buf, n, "%ld, an HTML page (not a token answer)",
                r->status);
            break;
        case HTTP_WORDS_TEXT:
            snprintf(buf, n, "%ld; the server says \"%s\"", r->status, words);
            break;
        default:
            snprintf(buf, n, "%ld", r->status);
            break;
        }
    }
    oauth_doc_free(d);
    return buf;
}

static bool
oauth_flow_ok(const struct http_result *r)
{
    return r->completed && r->status >= 200 && r->status < 300;
}

/* --- discovery ------------------------------------------------------------ */

static void
oauth_flow_cand_reset(struct oauth_flow *f)
{
    for (size_t i = 0; i < f->ncand; i++)
        free(f->cand[i]);
    f->ncand = 0;
    f->at = 0;
}

static void
oauth_flow_cand_add(struct oauth_flow *f, char *url)
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

void
oauth_flow_start_prm(struct oauth_flow *f)
{
    char  *w[OAUTH_URL_PRM_MAX];
    size_t n = oauth_url_prm(f->o->decl->url, w);

    f->step = OAUTH_PRM;
    oauth_flow_cand_reset(f);
    if (f->prm_hint != NULL && oauth_url_is_http(f->prm_hint))
        oauth_flow_cand_add(f, xstrdup(f->prm_hint));
    for (size_t i = 0; i < n; i++)
        oauth_flow_cand_add(f, w[i]);
    oauth_flow_next(f);
}

static void
oauth_flow_start_as(struct oauth_flow *f)
{
    char  *w[OAUTH_URL_AS_MAX];
    size_t n = oauth_url_as_metadata(f->issuer, w);

    f->step = OAUTH_AS;
    oauth_flow_cand_reset(f);
    for (size_t i = 0; i < n; i++)
        oauth_flow_cand_add(f, w[i]);
    if (f->ncand == 0) {
        oauth_finish(f, false, "authorization: the authorization server "
            "is not an http(s) URL");
        return;
    }
    oauth_flow_next(f);
}

/* A protected resource metadata answer: take it or try the next URL. */
static void
oauth_flow_on_prm(struct oauth_flow *f, const struct http_result *r)
{
    struct oauth     *o = f->o;
    struct oauth_doc *d = oauth_flow_ok(r) ? oauth_doc_parse(r->body,
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
        oauth_flow_start_as(f);
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
    /* The resource parameter (RFC 8707) is the metadata's own string, a
     * trailing slash kept: authorization servers compare it as sent. It
     * covers this server (same origin, a prefix of its path), checked
     * above; one that is not plain visible ASCII is sent normalised. */
    if (res != NULL && strlen(res) <= 2048 &&
        str_is_visible_ascii(res, strlen(res)))
        f->resource_indicator = xstrdup(res);
    else
        f->resource_indicator = res != NULL ? oauth_url_resource(res) :
            str_dup(o->resource);
    if (f->resource_indicator == NULL)
        f->resource_indicator = str_dup(o->resource);
    f->prm_scopes = oauth_doc_array_join(d, "scopes_supported",
        OAUTH_SCOPES_MAX);
    f->issuer = xstrdup(as);
    oauth_doc_free(d);
    oauth_flow_start_as(f);
}

static void oauth_flow_client(struct oauth_flow *f);

/* An authorization server metadata answer. */
static void
oauth_flow_on_as(struct oauth_flow *f, const struct http_result *r)
{
    struct oauth_doc *d = oauth_flow_ok(r) ? oauth_doc_parse(r->body,
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
        oauth_flow_client(f);
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
    oauth_flow_client(f);
}

/* --- client identity ----------------------------------------------------- */

/* Does the server list method (absent list: RFC 8414's default,
 * client_secret_basic)? */
static bool
oauth_flow_as_allows(const struct oauth_flow *f, const char *method)
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
oauth_flow_pick_method(const struct oauth_flow *f, const struct config_oauth *c)
{
    if (c != NULL && c->token_endpoint_auth_method != NULL)
        return c->token_endpoint_auth_method;
    if (c != NULL && c->private_key_file != NULL)
        return "private_key_jwt";
    if (c == NULL || c->client_secret == NULL)
        return "none";
    if (!oauth_flow_as_allows(f, "client_secret_basic") &&
        oauth_flow_as_allows(f, "client_secret_post"))
        return "client_secret_post";
    return "client_secret_basic";
}

/* The method to register with: public ("none") when offered, else a
 * secret. */
static const char *
oauth_flow_register_method(const struct oauth_flow *f)
{
    if (f->as != NULL && oauth_doc_array_has(f->as,
        "token_endpoint_auth_methods_supported", "none"))
        return "none";
    if (!oauth_flow_as_allows(f, "client_secret_basic") &&
        oauth_flow_as_allows(f, "client_secret_post"))
        return "client_secret_post";
    return "client_secret_basic";
}

static void oauth_flow_grant_start(struct oauth_flow *f);
static void oauth_flow_redirect_cb(void *arg, const char *code,
    const char *state, const char *error, const char *error_description);

/* The requested scope: the configured one, with the challenge's (or else
 * the metadata's scopes_supported), and any pending step-up scope. */
static void
oauth_flow_pick_scope(struct oauth_flow *f)
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

/*
 * A configured client_secret belongs to one authorization server: the
 * configured oauth.issuer, else one on the MCP server's own host. True
 * when this flow's token endpoint is it (or there is no secret to send);
 * else the flow is finished with a detail naming both origins, and the
 * secret goes nowhere. A secret the server registered for us (dynamic
 * registration) was issued by that server and is not bound here.
 */
static bool
oauth_flow_secret_bound(struct oauth_flow *f, const struct config_oauth *c)
{
    char *want, *got;
    bool  ok;

    if (c->client_secret == NULL)
        return true;
    if (c->issuer != NULL)
        ok = (f->legacy || oauth_url_same_issuer(f->issuer, c->issuer)) &&
            url_same_origin(f->token_endpoint, c->issuer);
    else
        ok = oauth_url_same_host(f->token_endpoint, f->o->decl->url);
    if (ok)
        return true;
    want = url_origin(c->issuer != NULL ? c->issuer : f->o->decl->url);
    got = url_origin(f->token_endpoint);
    oauth_finish(f, false, "authorization: the configured client secret "
        "belongs to %s%s, but this server's authorization server is %s: "
        "not sent (if that server is right, set \"oauth\": {\"issuer\": "
        "...})", c->issuer != NULL ? "issuer " : "",
        want != NULL ? want : "?", got != NULL ? got : "?");
    free(want);
    free(got);
    return false;
}

static void
oauth_flow_client(struct oauth_flow *f)
{
    struct oauth              *o = f->o;
    const struct config_oauth *c = o->decl->oauth;
    bool                       code = oauth_grant(o) ==
        CONFIG_OAUTH_AUTHORIZATION_CODE;
    const char                *grants_code[] = { "authorization_code",
        "refresh_token", NULL };
    const char                *grants_cc[] = { "client_credentials", NULL };
    char                      *cause = NULL, *body;

    oauth_flow_pick_scope(f);
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
        f->listen = oauth_listen_new(o->loop, oauth_flow_redirect_cb, f,
            &cause);
        if (f->listen == NULL) {
            oauth_finish(f, false, "authorization: %s", cause);
            free(cause);
            return;
        }
    }
    if (c != NULL && c->client_id != NULL) {
        if (!oauth_flow_secret_bound(f, c))
            return;
        f->client_id = xstrdup(c->client_id);
        f->client_secret = str_dup(c->client_secret);
        f->auth_method = xstrdup(oauth_flow_pick_method(f, c));
        oauth_flow_grant_start(f);
        return;
    }
    if (code && c != NULL && c->client_metadata_url != NULL &&
        f->as != NULL && oauth_doc_bool(f->as,
        "client_id_metadata_document_supported", false)) {
        /* A Client ID Metadata Document: the URL is the client id. */
        f->client_id = xstrdup(c->client_metadata_url);
        f->auth_method = xstrdup("none");
        oauth_flow_grant_start(f);
        return;
    }
    if (f->registration_endpoint == NULL) {
        oauth_finish(f, false, "authorization: no client identity: the "
            "authorization server offers no registration; set "
            "\"oauth\": {\"client_id\": ...}");
        return;
    }
    f->step = OAUTH_REGISTER;
    f->auth_method = xstrdup(oauth_flow_register_method(f));
    body = oauth_doc_registration(code ?
        oauth_listen_redirect_uri(f->listen) : NULL,
        code ? grants_code : grants_cc, f->auth_method, f->scope);
    oauth_flow_send(f, HTTP_POST, f->registration_endpoint, body,
        "application/json", NULL);
    free(body);
}

static void
oauth_flow_on_register(struct oauth_flow *f, const struct http_result *r)
{
    struct oauth_doc *d = oauth_flow_ok(r) ? oauth_doc_parse(r->body,
        r->body_len) : NULL;
    const char       *id = oauth_doc_string(d, "client_id");
    const char       *secret = oauth_doc_string(d, "client_secret");
    const char       *method = oauth_doc_string(d,
        "token_endpoint_auth_method");
    char              why[96];

    if (id == NULL || id[0] == '\0') {
        oauth_doc_free(d);
        oauth_finish(f, false, "authorization: client registration "
            "refused (%s)", oauth_flow_error_of(r, why, sizeof(why)));
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
    oauth_flow_grant_start(f);
}

/* --- the grants -------------------------------------------------------- */

/* A form body being built. */
struct oauth_flow_form {
    char  *p;
    size_t len;
};

static void
oauth_flow_form_add(struct oauth_flow_form *fm, const char *name,
    const char *value)
{
    char  *e;
    size_t need;

    if (value == NULL)
        return;
    e = url_escape(value);
    need = fm->len + strlen(name) + strlen(e) + 3;
    fm->p = xrealloc(fm->p, need);
    fm->len += (size_t)snprintf(fm->p + fm->len, need - fm->len, "%s%s=%s",
        fm->len > 0 ? "&" : "", name, e);
    str_wipe_free(e);
}

/* Client authentication at the token endpoint (RFC 6749 section 2.3;
 * RFC 7523 section 2.2): fields into fm, or a Basic header into *authz.
 * false with the flow finished when the assertion cannot be signed. */
static bool
oauth_flow_client_auth(struct oauth_flow *f, struct oauth_flow_form *fm,
    char **authz)
{
    const struct config_oauth *c = f->o->decl->oauth;
    const char                *m = f->auth_method != NULL ? f->auth_method :
        "none";

    *authz = NULL;
    if (strcmp(m, "client_secret_basic") == 0 && f->client_secret != NULL) {
        char *id = url_escape(f->client_id);
        char *sec = url_escape(f->client_secret);
        char *pair = str_printf("%s:%s", id, sec);
        char *b64 = oauth_crypto_b64((const unsigned char *)pair,
            strlen(pair));

        *authz = str_printf("Basic %s", b64);
        str_wipe_free(sec);
        str_wipe_free(pair);
        str_wipe_free(b64);
        free(id);
    } else if (strcmp(m, "client_secret_post") == 0) {
        oauth_flow_form_add(fm, "client_id", f->client_id);
        oauth_flow_form_add(fm, "client_secret", f->client_secret);
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
        oauth_flow_form_add(fm, "client_id", f->client_id);
        oauth_flow_form_add(fm, "client_assertion_type",
            "urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
        oauth_flow_form_add(fm, "client_assertion", jwt);
        str_wipe_free(jwt);
    } else {
        oauth_flow_form_add(fm, "client_id", f->client_id);
    }
    return true;
}

/* POST the token request whose grant fields are in fm (taken). */
static void
oauth_flow_token_request(struct oauth_flow *f, struct oauth_flow_form *fm)
{
    char *authz = NULL;

    if (!oauth_flow_client_auth(f, fm, &authz)) {
        str_wipe_free(fm->p);
        return;
    }
    oauth_flow_send(f, HTTP_POST, f->token_endpoint, fm->p,
        "application/x-www-form-urlencoded", authz);
    if (f->xfer != NULL) {
        f->xfer_token = true;
        oauth_flow_token_xfers++;
    }
    str_wipe_free(fm->p);
    str_wipe_free(authz);
}

static void
oauth_flow_grant_start(struct oauth_flow *f)
{
    struct oauth               *o = f->o;
    const struct oauth_consent *consent = oauth_consent_get();
    struct oauth_flow_form      fm = { 0 };
    char                       *challenge, *url;

    if (oauth_grant(o) == CONFIG_OAUTH_CLIENT_CREDENTIALS) {
        f->step = OAUTH_TOKEN;
        oauth_flow_form_add(&fm, "grant_type", "client_credentials");
        oauth_flow_form_add(&fm, "scope", f->scope);
        oauth_flow_form_add(&fm, "resource", f->resource_indicator);
        oauth_flow_token_request(f, &fm);
        return;
    }
    f->verifier = oauth_crypto_token();
    f->state = oauth_crypto_token();
    if (f->verifier == NULL || f->state == NULL) {
        oauth_finish(f, false, "authorization: no random numbers");
        return;
    }
    oauth_listen_expect_state(f->listen, f->state);
    challenge = oauth_crypto_s256(f->verifier);
    oauth_flow_form_add(&fm, "response_type", "code");
    oauth_flow_form_add(&fm, "client_id", f->client_id);
    oauth_flow_form_add(&fm, "redirect_uri",
        oauth_listen_redirect_uri(f->listen));
    oauth_flow_form_add(&fm, "code_challenge", challenge);
    oauth_flow_form_add(&fm, "code_challenge_method", "S256");
    oauth_flow_form_add(&fm, "state", f->state);
    oauth_flow_form_add(&fm, "resource", f->resource_indicator);
    oauth_flow_form_add(&fm, "scope", f->scope);
    url = str_printf("%s%s%s", f->authorization_endpoint,
        strchr(f->authorization_endpoint, '?') != NULL ? "&" : "?", fm.p);
    free(fm.p);
    free(challenge);
    f->step = OAUTH_CONSENT;
    oauth_flow_arm(f, oauth_flow_wait_ms() / 1000.0);
    oauth_log(o, "waiting for consent in the browser");
    if (consent->open_url != NULL)
        consent->open_url(consent->arg, o->decl->name, url);
    free(url);
}

/* oauth_listen_cb: the browser came back. */
static void
oauth_flow_redirect_cb(void *arg, const char *code, const char *state,
    const char *error, const char *error_description)
{
    struct oauth_flow *f = arg;
    struct oauth_flow_form  fm = { 0 };

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
    oauth_flow_form_add(&fm, "grant_type", "authorization_code");
    oauth_flow_form_add(&fm, "code", code);
    oauth_flow_form_add(&fm, "redirect_uri",
        oauth_listen_redirect_uri(f->listen));
    oauth_flow_form_add(&fm, "code_verifier", f->verifier);
    oauth_flow_form_add(&fm, "resource", f->resource_indicator);
    oauth_flow_token_request(f, &fm);
}

/* A token endpoint answer (any grant). */
static void
oauth_flow_on_token(struct oauth_flow *f, const struct http_result *r)
{
    struct oauth      *o = f->o;
    struct oauth_doc  *d = oauth_flow_ok(r) ? oauth_doc_parse_answer(r->body,
        r->body_len, r->content_type) : NULL;
    const char        *at = oauth_doc_string(d, "access_token");
    const char        *type = oauth_doc_string(d, "token_type");
    const char        *rt = oauth_doc_string(d, "refresh_token");
    const char        *scope = oauth_doc_string(d, "scope");
    double             exp = 0;
    struct oauth_token t = { 0 };
    char               why[160], hint[160] = "";
    int64_t            now = clock_wall_ms() / 1000;

    if (at == NULL || at[0] == '\0') {
        struct oauth_doc *e = oauth_doc_parse_answer(r->body, r->body_len,
            r->content_type);
        bool              dead = f->step == OAUTH_REFRESH &&
            oauth_doc_string(e, "error") != NULL &&
            strcmp(oauth_doc_string(e, "error"), "invalid_grant") == 0;

        oauth_doc_free(e);
        oauth_doc_free(d);
        if (f->step == OAUTH_REFRESH && !oauth_can_grant(o))
            oauth_login_hint(o, hint, sizeof(hint));
        free(f->rotated_why);
        f->rotated_why = str_printf("authorization: token endpoint %s%s%s",
            oauth_flow_error_of(r, why, sizeof(why)), hint[0] != '\0' ?
            "; consent needed: run " : "", hint);
        if (dead) {
            /* Spent: maybe by another process sharing the token file,
             * whose answer may not be written yet; look again, briefly. */
            f->step = OAUTH_ROTATED;
            oauth_flow_rotated(f);
            return;
        }
        oauth_finish(f, false, "%s", f->rotated_why);
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
    oauth_log(o, "%s a token (expires in %s s)", f->step == OAUTH_REFRESH ?
        "refreshed" : "obtained", exp > 0 ? "some" : "unknown");
    oauth_finish(f, true, "%s", "");
}

/* --- the flow ---------------------------------------------------------- */

/* Send the current step's next request. */
static void
oauth_flow_next(struct oauth_flow *f)
{
    oauth_flow_send(f, HTTP_GET, f->cand[f->at], NULL, NULL, NULL);
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
    str_wipe_free(f->client_secret);
    f->client_secret = NULL;
}

/* http_callbacks.on_done */
static void
oauth_flow_xfer_done_cb(void *arg, struct http_xfer *hx,
    const struct http_result *r)
{
    struct oauth_flow *f = arg;

    (void)hx;
    oauth_flow_xfer_over(f);
    ev_timer_stop(f->o->loop, &f->timer);
    if (f->step == OAUTH_PRM || f->step == OAUTH_AS)
        oauth_log(f->o, "GET %s -> %ld", f->cand[f->at], r->status);
    else
        oauth_log(f->o, "-> %ld", r->status);
    switch (f->step) {
    case OAUTH_PRM:
        oauth_flow_on_prm(f, r);
        break;
    case OAUTH_AS:
        oauth_flow_on_as(f, r);
        break;
    case OAUTH_REGISTER:
        oauth_flow_on_register(f, r);
        break;
    case OAUTH_REFRESH:
        if (f->full_after_refresh && !oauth_flow_ok(r)) {
            /* The refresh token is spent: start over with a grant. */
            oauth_log(f->o, "refresh refused: a new grant");
            oauth_flow_reset(f);
            oauth_flow_start_prm(f);
            break;
        }
        oauth_flow_on_token(f, r);
        break;
    case OAUTH_TOKEN:
        oauth_flow_on_token(f, r);
        break;
    default:
        break;
    }
}

struct oauth_flow *
oauth_flow_new(struct oauth *o, enum oauth_step step,
    const struct oauth_challenge *c)
{
    struct oauth_flow *f = xcalloc(1, sizeof(*f));

    f->o = o;
    f->step = step;
    ev_timer_init(&f->timer, oauth_flow_timer_cb, 0., 0.);
    f->timer.data = f;
    if (c != NULL) {
        f->challenge_scope = str_dup(c->scope);
        f->prm_hint = str_dup(c->resource_metadata);
    }
    o->flow = f;
    return f;
}

/* Start a refresh_token grant with what the cache holds. */
void
oauth_flow_start_refresh(struct oauth_flow *f)
{
    struct oauth     *o = f->o;
    struct oauth_flow_form fm = { 0 };

    f->step = OAUTH_REFRESH;
    f->token_endpoint = xstrdup(o->tok.token_endpoint);
    f->issuer = str_dup(o->tok.issuer);
    f->client_id = str_dup(o->tok.client_id);
    f->client_secret = str_dup(o->tok.client_secret);
    f->auth_method = str_dup(o->tok.auth_method);
    f->resource_indicator = xstrdup(o->tok.resource_indicator != NULL ?
        o->tok.resource_indicator : o->resource);
    oauth_flow_form_add(&fm, "grant_type", "refresh_token");
    oauth_flow_form_add(&fm, "refresh_token", o->tok.refresh_token);
    oauth_flow_form_add(&fm, "resource", f->resource_indicator);
    oauth_flow_token_request(f, &fm);
}


