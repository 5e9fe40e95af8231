/*
 * A request's header lines (io/http.c's transfers): the list of one
 * transfer's own, or one shared by the POSTs of a session, built once and
 * rebuilt only when a header changes (issue 30; engine/http.h). libcurl
 * reads a transfer's list until its easy handle is cleaned up, so a
 * shared list is refcounted: the session's slot holds one reference, each
 * transfer using it another.
 */
#include "engine/http.h"

#include <curl/curl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/http_hdrs.h"
#include "util/xmalloc.h"

/*
 * A request's header list, shared by the transfers of one session
 * (refcounted): each transfer holds a reference until libcurl is done with
 * it (curl_easy_cleanup), so a list replaced while a transfer still uses
 * it lives until that transfer ends.
 */
struct http_hdrs {
    unsigned           refs;
    size_t             len;     /* the block's bytes, this struct first */
    struct curl_slist *list;    /* in the block, after this struct */
};

/* One header line of a request: "name: value", or name as the whole line
 * when literal. */
typedef void (*http_hdrs_line_cb)(void *ctx, const char *name, const char *value,
    bool literal);

/* Every header line rq asks for, in the order they are sent. */
static void
http_hdrs_lines(const struct http_request *rq, http_hdrs_line_cb cb, void *ctx)
{
    switch (rq->method) {
    case HTTP_POST:
        if (rq->content_type != NULL) {
            /* An OAuth request: a form or a registration document. */
            cb(ctx, "Content-Type", rq->content_type, false);
            cb(ctx, "Accept", rq->accept != NULL ? rq->accept :
                "application/json", false);
        } else {
            /* Exactly this: some servers reject a charset parameter. */
            cb(ctx, "Content-Type: application/json", NULL, true);
            cb(ctx, "Accept: application/json, text/event-stream", NULL,
                true);
        }
        cb(ctx, "Expect:", NULL, true);
        break;
    case HTTP_GET:
        if (rq->accept != NULL)
            cb(ctx, "Accept", rq->accept, false);
        else
            cb(ctx, "Accept: text/event-stream", NULL, true);
        break;
    case HTTP_DELETE:
    case HTTP_HEAD:
    case HTTP_OPTIONS:
        break;
    }
    for (size_t i = 0; i < rq->nheaders; i++)
        cb(ctx, rq->headers[i].name, rq->headers[i].value, false);
    if (rq->session_id != NULL)
        cb(ctx, "Mcp-Session-Id", rq->session_id, false);
    if (rq->protocol_version != NULL)
        cb(ctx, "MCP-Protocol-Version", rq->protocol_version, false);
    if (rq->last_event_id != NULL && rq->last_event_id[0] != '\0')
        cb(ctx, "Last-Event-ID", rq->last_event_id, false);
    if (rq->mcp_method != NULL)
        cb(ctx, "Mcp-Method", rq->mcp_method, false);
    if (rq->no_cache)
        cb(ctx, "Cache-Control", "no-cache", false);
    if (rq->authorization != NULL)
        cb(ctx, "Authorization", rq->authorization, false);
}

/* http_hdrs_line_cb: "Name: value" onto the list, joined on the stack when it
 * fits (a printf per header cost more than the rest of it). */
static void
http_hdrs_append(void *ctx, const char *name, const char *value,
    bool literal)
{
    struct curl_slist **list = ctx;
    size_t              nl, vl;
    char                buf[512];
    char               *line;

    if (literal) {
        *list = curl_slist_append(*list, name);
        return;
    }
    if (value == NULL)
        value = "";     /* never sent as "(null)", never a crash */
    nl = strlen(name);
    vl = strlen(value);
    line = nl + vl + 3 <= sizeof(buf) ? buf : xmalloc(nl + vl + 3);
    memcpy(line, name, nl);
    line[nl] = ':';
    line[nl + 1] = ' ';
    memcpy(line + nl + 2, value, vl + 1);
    *list = curl_slist_append(*list, line);
    if (line != buf)
        free(line);
}

/* Walking a built list against the lines a request asks for. */
struct http_hdrs_match {
    const struct curl_slist *at;    /* the next line to compare */
    bool                     same;
};

/* http_hdrs_line_cb: does the list's next line say exactly this? */
static void
http_hdrs_compare(void *ctx, const char *name, const char *value,
    bool literal)
{
    struct http_hdrs_match *m = ctx;
    const char             *d;
    size_t                  nl;

    if (!m->same)
        return;
    if (m->at == NULL) {
        m->same = false;
        return;
    }
    d = m->at->data;
    m->at = m->at->next;
    if (literal) {
        m->same = strcmp(d, name) == 0;
        return;
    }
    nl = strlen(name);
    m->same = strncmp(d, name, nl) == 0 && d[nl] == ':' && d[nl + 1] == ' ' &&
        strcmp(d + nl + 2, value != NULL ? value : "") == 0;
}

bool
http_hdrs_fit(const struct http_hdrs *h, const struct http_request *rq)
{
    struct http_hdrs_match m = { h != NULL ? h->list : NULL, h != NULL };

    if (h != NULL)
        http_hdrs_lines(rq, http_hdrs_compare, &m);
    return m.same && m.at == NULL;
}

/* Sizing a list before it is laid out in one block. */
struct http_hdrs_size {
    size_t n;       /* lines */
    size_t bytes;   /* their text, NULs included */
};

/* http_hdrs_line_cb: count the line. */
static void
http_hdrs_measure(void *ctx, const char *name, const char *value,
    bool literal)
{
    struct http_hdrs_size *z = ctx;

    z->n++;
    if (!literal)       /* a literal line is a string constant: not copied */
        z->bytes += strlen(name) + 3 + strlen(value != NULL ? value : "");
}

/* Laying a list out in its block: the next node and text. */
struct http_hdrs_fill {
    struct curl_slist *node;
    char              *text;
};

/* http_hdrs_line_cb: the next node, its text "Name: value" after the last. */
static void
http_hdrs_place(void *ctx, const char *name, const char *value,
    bool literal)
{
    struct http_hdrs_fill *f = ctx;
    size_t                 nl, vl;

    f->node->next = f->node + 1;
    if (literal) {
        /* A string constant of http_hdrs_lines, which libcurl only
         * reads: pointed at, not copied (nor wiped). */
        f->node->data = (char *)(uintptr_t)name;
        f->node++;
        return;
    }
    if (value == NULL)
        value = "";     /* never sent as "(null)", never a crash */
    nl = strlen(name);
    vl = strlen(value);
    f->node->data = f->text;
    memcpy(f->text, name, nl);
    f->text += nl;
    *f->text++ = ':';
    *f->text++ = ' ';
    memcpy(f->text, value, vl);
    f->text += vl;
    *f->text++ = '\0';
    f->node++;
}

/* A session's list in one allocation: the struct, the nodes, the text of
 * the lines that carry values (a session keeps it, so no allocation of
 * its own per line); the constant lines point at their literals. libcurl
 * only reads a header list; this one is never curl_slist_free_all'd. */
static struct http_hdrs *
http_hdrs_build(const struct http_request *rq)
{
    struct http_hdrs_size z = { 0, 0 };
    struct http_hdrs_fill f;
    struct http_hdrs     *h;

    http_hdrs_lines(rq, http_hdrs_measure, &z);
    h = xmalloc(sizeof(*h) + z.n * sizeof(struct curl_slist) + z.bytes);
    h->refs = 1;
    h->len = sizeof(*h) + z.n * sizeof(struct curl_slist) + z.bytes;
    h->list = z.n > 0 ? (struct curl_slist *)(h + 1) : NULL;
    f.node = h->list;
    f.text = (char *)(h + 1) + z.n * sizeof(struct curl_slist);
    http_hdrs_lines(rq, http_hdrs_place, &f);
    if (z.n > 0)
        h->list[z.n - 1].next = NULL;
    return h;
}

struct http_hdrs *
http_hdrs_for(struct http_hdrs **slot, const struct http_request *rq)
{
    if (!http_hdrs_fit(*slot, rq)) {
        /* A header changed (a new session id, a refreshed token, the
         * protocol version, another method): the old list stays alive for
         * the transfers that hold it. */
        http_hdrs_unref(*slot);
        *slot = http_hdrs_build(rq);
    }
    (*slot)->refs++;
    return *slot;
}

void
http_hdrs_unref(struct http_hdrs *h)
{
    if (h == NULL || --h->refs > 0)
        return;
    /* The lines may carry the session id and a bearer token. */
    explicit_bzero(h, h->len);
    free(h);
}

struct curl_slist *
http_hdrs_own(const struct http_request *rq)
{
    struct curl_slist *list = NULL;

    http_hdrs_lines(rq, http_hdrs_append, &list);
    return list;
}

struct curl_slist *
http_hdrs_list(const struct http_hdrs *h)
{
    return h->list;
}
