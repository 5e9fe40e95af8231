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
#include "oauth/oauth_flow.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "engine/http.h"
#include "engine/child.h"
#include "oauth/oauth_challenge.h"
#include "oauth/oauth_crypto.h"
#include "oauth/oauth_doc.h"
#include "oauth/oauth_listen.h"
#include "engine/oauth_store.h"
#include "engine/oauth_url.h"
#include "util/clock.h"
#include "util/str.h"
#include "util/xmalloc.h"


/* Process-wide: the last token that could not be written (see
 * oauth_save_error). */
static char *oauth_save_error_g;

/* Process-wide: the token file (shared by every server) and consent. */
static struct oauth_store  *oauth_store_g;
static unsigned             oauth_refs;
static struct oauth_consent oauth_consent_g;
static bool                 oauth_consent_on;
/* Process-wide: the token file was read once on behalf of the servers
 * that declare no "oauth", and held no entry (see oauth_store_may_hold). */
static bool                 oauth_probed_g;
static bool                 oauth_empty_g;


const struct oauth_consent *
oauth_consent_get(void)
{
    return &oauth_consent_g;
}

void
oauth_set_consent(const struct oauth_consent *c)
{
    oauth_consent_on = c != NULL;
    if (c != NULL)
        oauth_consent_g = *c;
    else
        memset(&oauth_consent_g, 0, sizeof(oauth_consent_g));
}

/* True when name is an executable on PATH. */
static bool
oauth_on_path(const char *name)
{
    const char *path = getenv("PATH");

    while (path != NULL && *path != '\0') {
        size_t n = strcspn(path, ":");
        char  *f = str_printf("%.*s/%s", (int)n, path, name);
        bool   ok = access(f, X_OK) == 0;

        free(f);
        if (ok)
            return true;
        path += n;
        path += *path == ':';
    }
    return false;
}

int
oauth_open_browser(const char *url, char **cause)
{
    const char *browser = getenv("BROWSER");

    if (browser != NULL && browser[0] != '\0') {
        /* "%s" in $BROWSER becomes "$1", the URL. */
        char *script = NULL, *pct = strstr(browser, "%s");
        char *argv[6];
        bool  ok;

        if (pct != NULL)
            script = str_printf("%.*s\"$1\"%s", (int)(pct - browser),
                browser, pct + 2);
        else
            script = str_printf("%s \"$1\"", browser);
        argv[0] = "/bin/sh";
        argv[1] = "-c";
        argv[2] = script;
        argv[3] = "mcptop-browser";
        argv[4] = (char *)url;
        argv[5] = NULL;
        ok = child_detached(argv);
        free(script);
        if (!ok) {
            *cause = xstrdup("cannot start $BROWSER");
            return -1;
        }
        return 0;
    }
    if (oauth_on_path("xdg-open")) {
        char *argv[] = { "xdg-open", (char *)url, NULL };

        if (!child_detached(argv)) {
            *cause = xstrdup("cannot start xdg-open");
            return -1;
        }
    }
    return 0;
}

void
oauth_log(const struct oauth *o, const char *fmt, ...)
{
    va_list ap;

    if (o->log == NULL)
        return;
    fprintf(o->log, "oauth %s: ", o->name != NULL ? o->name : "?");
    va_start(ap, fmt);
    vfprintf(o->log, fmt, ap);
    va_end(ap);
    fputc('\n', o->log);
    fflush(o->log);
}

/* What a server's OAuth work needs of its declaration, taken on first use
 * (a server that never needs them costs no URL parse): the sanitized name
 * for text, the origin and the canonical resource URI. */
static void
oauth_facts(struct oauth *o)
{
    if (o->name != NULL)
        return;
    o->name = str_sanitized(o->decl->name != NULL ? o->decl->name : "?");
    o->origin = oauth_url_origin(o->decl->url);
    o->resource = oauth_url_resource(o->decl->url);
}

/*
 * May the token file hold a token for a server that declares no "oauth"
 * (one cached by mcptop login)? The file is read once per process to
 * know: when it is missing or empty, no such server reads it again before
 * a 401 (oauth_on_challenge loads then), so a fleet without OAuth costs
 * one look at the file, not one per server. A file that cannot be read
 * says yes: each server then reads it and logs why it cannot, as before.
 */
static bool
oauth_store_may_hold(void)
{
    char *cause = NULL;

    if (oauth_probed_g)
        return !oauth_empty_g;
    oauth_probed_g = true;
    if (oauth_store_g == NULL)
        oauth_store_g = oauth_store_open(NULL, &cause);
    oauth_empty_g = oauth_store_g != NULL &&
        oauth_store_reload(oauth_store_g, &cause) == 0 &&
        oauth_store_count(oauth_store_g) == 0;
    free(cause);
    return !oauth_empty_g;
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

static bool
oauth_consent_here(const struct oauth *o)
{
    return oauth_consent_on && oauth_consent_g.server != NULL &&
        o->decl->name != NULL &&
        strcmp(oauth_consent_g.server, o->decl->name) == 0;
}

enum config_oauth_grant
oauth_grant(const struct oauth *o)
{
    return o->decl->oauth != NULL ? o->decl->oauth->grant :
        CONFIG_OAUTH_AUTHORIZATION_CODE;
}

/* True when s can stand in a shell word unquoted. */
static bool
oauth_shell_plain(const char *s)
{
    for (; *s != '\0'; s++) {
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
            (*s >= '0' && *s <= '9') || strchr("_./~:+-@%,=", *s) != NULL))
            return false;
    }
    return true;
}

void
oauth_login_hint(const struct oauth *o, char *buf, size_t n)
{
    const char *file = o->decl->origin;
    size_t      len;

    len = (size_t)snprintf(buf, n, "mcptop login %s",
        o->name != NULL ? o->name : "?");
    if (file == NULL || strcmp(file, "command line") == 0 ||
        strcmp(file, "stdin") == 0 || len >= n)
        return;
    if (oauth_shell_plain(file)) {
        snprintf(buf + len, n - len, " -c %s", file);
        return;
    }
    len += (size_t)snprintf(buf + len, n - len, " -c '");
    for (const char *p = file; *p != '\0' && len + 5 < n; p++) {
        if (*p == '\'') {
            memcpy(buf + len, "'\\''", 4);
            len += 4;
        } else if ((unsigned char)*p >= 0x20 && *p != 0x7f) {
            buf[len++] = *p;
        }
    }
    if (len + 2 <= n) {
        buf[len++] = '\'';
        buf[len] = '\0';
    }
}

/* Can a flow get a token from nothing (no refresh token)? */
bool
oauth_can_grant(const struct oauth *o)
{
    return oauth_grant(o) == CONFIG_OAUTH_CLIENT_CREDENTIALS ||
        oauth_consent_here(o);
}

/* --- scopes -------------------------------------------------------------- */

/* Is every space-separated scope of want in have? */
bool
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
char *
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

void
oauth_set_token(struct oauth *o, const struct oauth_token *t, bool tokens)
{
    oauth_token_done(&o->tok);
    str_wipe_free(o->authz);
    o->authz = NULL;
    o->have_tok = false;
    if (t == NULL)
        return;
    oauth_token_copy(&o->tok, t);
    if (!tokens) {
        /* A login asks anew: keep what the entry knows (a pending step-up
         * scope), not its tokens. */
        str_wipe_free(o->tok.access_token);
        str_wipe_free(o->tok.refresh_token);
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
    struct oauth_store       *st;
    const struct oauth_token *t;
    char                     *cause = NULL;
    bool                      first = !o->loaded;

    oauth_facts(o);
    st = oauth_store(o);
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

/* See oauth_flow.h. */
bool
oauth_take_rotated(struct oauth *o)
{
    struct oauth_store       *st = oauth_store(o);
    const struct oauth_token *t;
    char                     *cause = NULL;

    if (st == NULL || o->resource == NULL)
        return false;
    if (oauth_store_reload_locked(st, &cause) != 0) {
        oauth_log(o, "token file: %s", cause);
        free(cause);
        return false;
    }
    t = oauth_store_find(st, o->decl->name, o->resource);
    if (t == NULL || t->access_token == NULL || (o->have_tok &&
        strcmp(o->tok.access_token, t->access_token) == 0))
        return false;
    oauth_set_token(o, t, true);
    return true;
}

/* Write o's token (or just its step-up scope) to the file. */
void
oauth_save(struct oauth *o, const struct oauth_token *t)
{
    struct oauth_store *st = oauth_store(o);
    char               *cause = NULL;

    free(oauth_save_error_g);
    oauth_save_error_g = NULL;
    if (st == NULL) {
        oauth_save_error_g = str_printf("%s: the token file has no place "
            "(neither XDG_STATE_HOME nor HOME is set)", o->name);
        return;
    }
    if (oauth_store_put(st, o->decl->name, t, &cause) != 0) {
        oauth_log(o, "token file: %s", cause);
        oauth_save_error_g = str_printf("%s: %s", o->name, cause);
        free(cause);
    }
}

/* See oauth.h. */
const char *
oauth_save_error(void)
{
    return oauth_save_error_g;
}

/* --- life -------------------------------------------------------------- */

bool
oauth_wanted(const struct config_server *decl)
{
    return decl->oauth != NULL || oauth_store_may_hold();
}

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
    oauth_refs++;
    return o;
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
        oauth_probed_g = false;
        free(oauth_save_error_g);
        oauth_save_error_g = NULL;
    }
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

/* End the flow: resume every waiting request once. */
void
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
    /* A server that declares no "oauth" reads the token file only when
     * it may hold something (a token mcptop login cached for it). */
    if (!o->loaded && (o->decl->oauth != NULL || oauth_store_may_hold()))
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
        oauth_flow_start_refresh(f);
    }
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
    oauth_facts(o);
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
        oauth_flow_arm(f, 0.);
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
            oauth_flow_start_refresh(f);
        } else if (oauth_can_grant(o)) {
            f = oauth_flow_new(o, OAUTH_PRM, &c);
            oauth_log(o, "401: authorizing");
            oauth_wait(o, resume, arg);
            started = true;
            oauth_flow_start_prm(f);
        } else if (c.present && c.bearer) {
            char hint[160];

            oauth_login_hint(o, hint, sizeof(hint));
            snprintf(o->detail, sizeof(o->detail), "consent needed: run %s",
                hint);
        } else {
            /* No Bearer challenge: nothing says OAuth would help. */
            snprintf(o->detail, sizeof(o->detail), "authorization: the "
                "server wants credentials and advertises no OAuth: put them "
                "in the config (\"headers\": {\"Authorization\": ...})");
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
            char hint[160];

            oauth_login_hint(o, hint, sizeof(hint));
            snprintf(o->detail, sizeof(o->detail), "consent needed for "
                "scope \"%s\": run %s", clean, hint);
        } else {
            o->step_ups++;
            o->step_up_at = now;
            f = oauth_flow_new(o, OAUTH_PRM, &c);
            f->step_up = true;
            oauth_log(o, "403 insufficient_scope: stepping up");
            oauth_wait(o, resume, arg);
            started = true;
            oauth_flow_start_prm(f);
        }
    }
    oauth_challenge_done(&c);
    return started;
}

void
oauth_gave_up(struct oauth *o, long status, const char *www_authenticate,
    int rounds)
{
    struct oauth_challenge c;
    char                   clean[96] = "";

    if (o == NULL)
        return;
    oauth_challenge_parse(www_authenticate, &c);
    if (c.scope != NULL)
        str_sanitize(clean, sizeof(clean), c.scope, strlen(c.scope));
    if (status == 403 && oauth_challenge_insufficient_scope(&c))
        snprintf(o->detail, sizeof(o->detail), "authorization: the step-up "
            "gave up after %d rounds: insufficient_scope%s%s%s again, %s",
            rounds, clean[0] ? " for \"" : "", clean, clean[0] ? "\"" : "",
            o->have_tok && c.scope != NULL && o->tok.scope != NULL &&
            oauth_scope_covers(o->tok.scope, c.scope) ? "which the token was "
            "granted: the server refuses it still" : "which the "
            "authorization server did not grant");
    else if (status == 401)
        snprintf(o->detail, sizeof(o->detail), "authorization: gave up "
            "after %d rounds: the server refused the new token too", rounds);
    else
        o->detail[0] = '\0';
    if (o->detail[0] != '\0')
        oauth_log(o, "%s", o->detail);
    oauth_challenge_done(&c);
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
