/*
 * The HTTP tap's sessions and its own requests (tap_http.h): every
 * Mcp-Session-Id the server issued in an initialize answer, with its age,
 * requests and last activity, kept to be listed (8 characters of the id,
 * as mcptop shows its own) and ended by the operator: a DELETE in that
 * session under the tap's teardown deadline, its outcome as DESIGN.md
 * section 5 names them. The full id and the agent's Authorization are
 * kept for that and never published. A cancel's notification goes
 * upstream the same way.
 */
#include "tap_http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/jsonl.h"
#include "util/clock.h"
#include "util/str.h"
#include "util/xmalloc.h"

/* --- sessions ------------------------------------------------------------ */

struct tap_session *
tap_session_find(struct tap_http *h, const char *id)
{
    for (struct tap_session *s = h->sessions; s != NULL; s = s->next) {
        if (strcmp(s->id, id) == 0)
            return s;
    }
    return NULL;
}

void
tap_session_free(struct tap_session *s)
{
    free(s->id);
    free(s->protocol);
    str_wipe_free(s->authorization);
    free(s);
}

void
tap_session_drop(struct tap_http *h, const char *id, const char *why)
{
    for (struct tap_session **p = &h->sessions; *p != NULL;
        p = &(*p)->next) {
        struct tap_session *s = *p;
        struct jsonw       *w;
        char                pre[16];

        if (strcmp(s->id, id) != 0)
            continue;
        snprintf(pre, sizeof(pre), "%.8s", s->id);
        if ((w = tap_line(h->t)) != NULL) {
            jsonl_tap_session(w, clock_wall_ms(), "session_gone",
                h->t->name, str_is_visible_ascii(pre, strlen(pre)) ? pre :
                "?", why);
            tap_line_send(h->t);
        }
        *p = s->next;
        tap_session_free(s);
        h->nsessions--;
        return;
    }
}

/* The session x's request belongs to saw activity. */
void
tap_session_touch(struct tap_http *h, struct tap_hx *x)
{
    struct tap_session *s = x->session != NULL ?
        tap_session_find(h, x->session) : NULL;
    const char         *auth, *proto;

    if (s == NULL)
        return;
    s->requests++;
    s->last = tap_now(h->t);
    auth = tap_http_header(x->hdrs, x->nhdrs, "Authorization");
    if (auth != NULL && (s->authorization == NULL ||
        strcmp(s->authorization, auth) != 0)) {
        str_wipe_free(s->authorization);
        s->authorization = xstrdup(auth);
    }
    proto = tap_http_header(x->hdrs, x->nhdrs, "MCP-Protocol-Version");
    if (proto != NULL && (s->protocol == NULL ||
        strcmp(s->protocol, proto) != 0)) {
        free(s->protocol);
        s->protocol = xstrdup(proto);
    }
}

/* An initialize answer issued id. */
void
tap_session_new(struct tap_http *h, struct tap_hx *x, const char *id)
{
    struct tap_session *s;
    const char         *auth;
    struct jsonw       *w;
    char                pre[16];

    if (id[0] == '\0' || strlen(id) > 512 || tap_session_find(h, id) != NULL)
        return;
    if (h->nsessions >= TAP_HTTP_SESSIONS_MAX) {
        /* The oldest goes from the list (the agent keeps its session). */
        struct tap_session **p = &h->sessions;

        while ((*p)->next != NULL)
            p = &(*p)->next;
        tap_session_free(*p);
        *p = NULL;
        h->nsessions--;
    }
    s = xcalloc(1, sizeof(*s));
    s->id = xstrdup(id);
    s->created_ms = clock_wall_ms();
    s->created = s->last = tap_now(h->t);
    auth = tap_http_header(x->hdrs, x->nhdrs, "Authorization");
    if (auth != NULL)
        s->authorization = xstrdup(auth);
    s->next = h->sessions;
    h->sessions = s;
    h->nsessions++;
    snprintf(pre, sizeof(pre), "%.8s", id);
    if ((w = tap_line(h->t)) != NULL) {
        jsonl_tap_session(w, clock_wall_ms(), "session", h->t->name,
            str_is_visible_ascii(pre, strlen(pre)) ? pre : "?", NULL);
        tap_line_send(h->t);
    }
}

void
tap_session_list_write(struct jsonw *w, const struct tap *t)
{
    double now;

    jsonw_array_open(w, "sessions");
    if (t->http == NULL) {
        jsonw_array_close(w);
        return;
    }
    now = tap_now(t);
    for (const struct tap_session *s = t->http->sessions; s != NULL;
        s = s->next) {
        char pre[16];

        snprintf(pre, sizeof(pre), "%.8s", s->id);
        jsonw_object_open(w, NULL);
        jsonw_string(w, "id_prefix", str_is_visible_ascii(pre,
            strlen(pre)) ? pre : "?");
        jsonw_int(w, "created_at", s->created_ms);
        jsonw_int(w, "age_ms", (int64_t)(long)((now - s->created) *
            1000.0));
        jsonw_int(w, "requests", (int64_t)s->requests);
        jsonw_int(w, "idle_ms", (int64_t)(long)((now - s->last) * 1000.0));
        jsonw_bool(w, "ending", s->ending);
        jsonw_object_close(w);
    }
    jsonw_array_close(w);
}

/* --- the tap's own requests ---------------------------------------------- */

void
tap_session_own_free(struct tap_own *o)
{
    struct tap_http *h = o->h;

    if (o->prev != NULL)
        o->prev->next = o->next;
    else
        h->owns = o->next;
    if (o->next != NULL)
        o->next->prev = o->prev;
    http_relay_abort(o->up);
    free(o->session);
    free(o);
}

static void
tap_session_own_head_cb(void *arg, long status, const char *const *lines, size_t n)
{
    struct tap_own *o = arg;

    (void)lines;
    (void)n;
    o->status = status;
}

static enum http_relay_take
tap_session_own_body_cb(void *arg, const char *p, size_t n)
{
    struct tap_own *o = arg;

    (void)p;
    (void)n;
    /* An ending's outcome is its status: a body (a stream the server
     * keeps open) is not waited for, or a 200 would end as timed_out. */
    if (o->end && o->status >= 200) {
        o->head_only = true;
        return HTTP_RELAY_STOP;
    }
    return HTTP_RELAY_TAKEN;    /* not read */
}

/* An ending's outcome, by DESIGN.md section 5. */
static const char *
tap_session_outcome(const struct tap_own *o, const struct failure_evidence *evd)
{
    if (evd->net == NET_TIMEDOUT)
        return "timed_out";
    if (evd->net != NET_OK)
        return "failed";
    if (o->status >= 200 && o->status < 300)
        return "terminated";
    if (o->status == 405)
        return "not_allowed";
    if (o->status == 404)
        return "already_gone";
    return "rejected";
}

static void
tap_session_own_done_cb(void *arg, const struct failure_evidence *evd,
    const char *text)
{
    struct tap_own         *o = arg;
    struct tap             *t = o->h->t;
    struct failure_evidence head_only;
    struct jsonw           *w;

    o->up = NULL;
    if (o->head_only || (o->end && o->status >= 200 &&
        evd->net == NET_TIMEDOUT)) {
        /* Stopped by the tap at the head, or the deadline came after
         * it: the status is the answer. */
        head_only = *evd;
        head_only.net = NET_OK;
        evd = &head_only;
        text = NULL;
    }
    if (o->end) {
        const char *outcome = tap_session_outcome(o, evd);

        if ((w = tap_line(t)) != NULL) {
            struct failure f;
            char          *clean = NULL;

            if (evd->net != NET_OK) {
                clean = str_sanitized(text != NULL ? text :
                    "the DELETE failed");
                failure_make(&f, evd, FAILURE_SITE_REQUEST, clean);
            }
            jsonl_tap_session_end(w, clock_wall_ms(), t->name, o->prefix,
                outcome, o->status, evd->net != NET_OK ? &f : NULL,
                (int64_t)(long)((tap_now(t) - o->started) * 1000.0));
            tap_line_send(t);
            free(clean);
        }
        /* A DELETE is an exchange too (DESIGN.md section 5): an answer
         * the spec allows is reach, a transport failure counts against
         * it, another status is the ending's outcome only. */
        if (strcmp(outcome, "rejected") != 0) {
            struct failure f;
            char          *clean = NULL;

            if (evd->net != NET_OK) {
                clean = str_sanitized(text != NULL ? text :
                    "the DELETE failed");
                failure_make(&f, evd, FAILURE_SITE_REQUEST, clean);
            }
            tap_exchange(t, "delete", NULL, evd->net != NET_OK ? &f : NULL,
                (tap_now(t) - o->started) * 1000.0);
            free(clean);
        }
        if (strcmp(outcome, "terminated") == 0 ||
            strcmp(outcome, "already_gone") == 0)
            tap_session_drop(o->h, o->session, "the operator ended it");
        else {
            struct tap_session *s = tap_session_find(o->h, o->session);

            if (s != NULL)
                s->ending = false;
        }
    }
    tap_session_own_free(o);
}

static const struct http_relay_callbacks tap_session_own_cb = {
    .on_head = tap_session_own_head_cb,
    .on_body = tap_session_own_body_cb,
    .on_done = tap_session_own_done_cb,
};

/* Send a request of the tap's own upstream, with the agent's session,
 * protocol version and credentials. */
struct tap_own *
tap_session_send(struct tap_http *h, const char *method, const char *session,
    const char *protocol, const char *authorization, const char *body,
    long timeout_ms)
{
    struct tap_own           *o = xcalloc(1, sizeof(*o));
    const char               *lines[6];
    char                     *owned[6];
    size_t                    n = 0;
    struct http_relay_request rq = { .method = method, .url = h->upstream,
        .body = body, .body_len = body != NULL ? strlen(body) : 0,
        .timeout_ms = timeout_ms, .connect_timeout_ms = timeout_ms };
    char                     *cause = NULL;

    if (body != NULL) {
        owned[n] = xstrdup("Content-Type: application/json");
        lines[n] = owned[n];
        n++;
        owned[n] = xstrdup("Accept: application/json, text/event-stream");
        lines[n] = owned[n];
        n++;
    }
    if (session != NULL) {
        owned[n] = str_printf("Mcp-Session-Id: %s", session);
        lines[n] = owned[n];
        n++;
    }
    if (protocol != NULL) {
        owned[n] = str_printf("MCP-Protocol-Version: %s", protocol);
        lines[n] = owned[n];
        n++;
    }
    if (authorization != NULL) {
        owned[n] = str_printf("Authorization: %s", authorization);
        lines[n] = owned[n];
        n++;
    }
    rq.headers = lines;
    rq.nheaders = n;
    o->h = h;
    o->started = tap_now(h->t);
    o->up = http_relay_start(h->ce, &rq, &tap_session_own_cb, o, &cause);
    for (size_t i = 0; i < n; i++) {
        if (strncmp(owned[i], "Authorization", 13) == 0)
            str_wipe_free(owned[i]);
        else
            free(owned[i]);
    }
    if (o->up == NULL) {
        free(cause);
        free(o);
        return NULL;
    }
    o->next = h->owns;
    if (h->owns != NULL)
        h->owns->prev = o;
    h->owns = o;
    return o;
}

/* --- the operator's ending ---------------------------------------------- */

char *
tap_session_end(struct tap *t, const char *prefix)
{
    struct tap_http    *h = t->http;
    struct tap_session *hit = NULL;
    size_t              hits = 0, pl = prefix != NULL ? strlen(prefix) : 0;
    struct tap_own     *own;
    struct jsonw        w;
    const char         *refused = NULL;

    jsonw_init(&w);
    jsonl_tap_head(&w, clock_wall_ms(), "end_result", t->name);
    if (prefix != NULL)
        jsonw_string(&w, "session", prefix);
    if (h == NULL) {
        refused = "a stdio tap offers cancel only: ending the agent's "
            "session would end its server";
        goto out;
    }
    for (struct tap_session *s = h->sessions; s != NULL && pl > 0;
        s = s->next) {
        if (strncmp(s->id, prefix, pl) == 0) {
            hit = s;
            hits++;
        }
    }
    if (hits != 1 || hit->ending) {
        refused = hits == 0 ? "no session of the agent's starts with that" :
            hits > 1 ? "more than one session starts with that: give more "
            "of the id" : "that session is being ended already";
        goto out;
    }
    own = tap_session_send(h, "DELETE", hit->id, hit->protocol,
        hit->authorization, NULL, t->opt.teardown_ms);
    if (own == NULL) {
        refused = "cannot start the DELETE";
        goto out;
    }
    own->end = true;
    own->session = xstrdup(hit->id);
    snprintf(own->prefix, sizeof(own->prefix), "%.8s", hit->id);
    hit->ending = true;
    jsonw_bool(&w, "ok", true);
    jsonw_int(&w, "deadline_ms", t->opt.teardown_ms);
out:
    if (refused != NULL) {
        jsonw_bool(&w, "ok", false);
        jsonw_string(&w, "detail", refused);
    }
    jsonw_object_close(&w);
    return jsonw_take(&w, NULL);
}
