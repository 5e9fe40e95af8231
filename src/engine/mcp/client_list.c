/*
 * Listings (MCP basic/server/tools, tools/list with cursors): the dial's
 * first listing to the last page, and re-lists after a list_changed notice
 * or an expired ttlMs, one at a time and at most one a second, notices
 * that arrive meanwhile coalesced into the next. Tool names are read in one
 * pass over each page: nothing here is quadratic in what a server sends.
 *
 * A nextCursor already seen in this listing is a pagination loop: the
 * listing stops there (the open deadline is not spent walking it), the
 * tools are those listed, counted by unique name (duplicates noted), and
 * the server's health is degraded (pagination_loop) until a listing ends
 * without one.
 */
#include "mcp/client_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonrpc.h"
#include "util/str.h"
#include "util/xmalloc.h"

static void client_send_list(struct client *c, const char *cursor);

/* FNV-1a of a cursor: a listing remembers its cursors by these. */
static uint64_t
client_cursor_hash(const char *s)
{
    uint64_t h = 14695981039346656037ull;

    for (; *s != '\0'; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* True when this listing already followed cursor (else remember it). At
 * most CLIENT_MAX_PAGES cursors: bounded work per page. */
static bool
client_cursor_seen(struct client *c, const char *cursor)
{
    uint64_t h = client_cursor_hash(cursor);

    for (int i = 0; i < c->list_pages; i++) {
        if (c->list_cursors[i] == h)
            return true;
    }
    if (c->list_cursors == NULL)
        c->list_cursors = xcalloc(CLIENT_MAX_PAGES, sizeof(*c->list_cursors));
    c->list_cursors[c->list_pages] = h;
    return false;
}

void
client_list_free(struct client *c)
{
    free(c->list_cursors);
    c->list_cursors = NULL;
    free(c->list_note);
    c->list_note = NULL;
}

void
client_begin_list(struct client *c, bool in_dial)
{
    client_free_strv(c->list_acc, c->list_n);
    c->list_acc = NULL;
    c->list_n = c->list_cap = 0;
    c->list_pages = 0;
    c->list_in_dial = in_dial;
    c->list_started = client_now(c);
    if (!in_dial)
        c->relisted_at = c->list_started;
    client_send_list(c, NULL);
}

static void
client_send_list(struct client *c, const char *cursor)
{
    int64_t            id = c->next_id++;
    struct client_req *rq = client_req_new(c, CLIENT_OP_LIST, id, "tools/list");
    size_t             len;
    char              *body;
    char              *cause = NULL;

    if (c->era == MCP_ERA_MODERN)
        body = jsonrpc_build_modern(id, rq->method, MCP_PROTOCOL_MODERN,
            "mcptop", MCPTOP_VERSION, cursor, false, &len);
    else
        body = jsonrpc_build_request(id, "tools/list", cursor, &len);
    rq->in_dial = c->list_in_dial;
    if (c->list_in_dial)
        c->dial_step = "tools/list";    /* a failure names this step */
    if (!client_send(c, rq, body, len, client_flags(c, CLIENT_OP_LIST),
        client_timeout_ms(c), &cause)) {
        struct failure_evidence evd = { .net = NET_OTHER };

        client_req_free(rq, NULL);
        if (c->list_in_dial)
            client_dial_failed(c, &evd, cause);
        else
            client_fail(c, "tools/list", &evd, 0, cause);
        free(cause);
    }
    free(body);
}

/* A listing failed (the dial's fails the dial). */
void
client_list_failed(struct client *c, const struct failure_evidence *evd,
    const char *detail)
{
    free(c->list_cursors);      /* a listing's own: not kept after it */
    c->list_cursors = NULL;
    if (c->list_in_dial) {
        client_dial_failed(c, evd, detail);
        return;
    }
    client_free_strv(c->list_acc, c->list_n);
    c->list_acc = NULL;
    c->list_n = c->list_cap = 0;
    client_fail(c, "tools/list", evd, client_elapsed_ms(c, c->list_started),
        detail);
    client_relist(c);
}

/* qsort over indexes into the listing: by name, then by position. */
static char **client_name_base;

static int
client_name_cmp(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    int  r = strcmp(client_name_base[x], client_name_base[y]);

    return r != 0 ? r : (x > y) - (x < y);
}

/* Keep the first of each tool name, in listing order (O(n log n)); the
 * number of duplicates dropped. */
static long
client_list_unique(struct client *c)
{
    long *by, dups = 0, k = 0;

    if (c->list_n < 2)
        return 0;
    by = xcalloc((size_t)c->list_n, sizeof(*by));
    for (long i = 0; i < c->list_n; i++)
        by[i] = i;
    client_name_base = c->list_acc;
    qsort(by, (size_t)c->list_n, sizeof(*by), client_name_cmp);
    client_name_base = NULL;
    /* In each run of one name, the first is the earliest: drop the rest. */
    for (long i = 1; i < c->list_n; i++) {
        if (strcmp(c->list_acc[by[i]], c->list_acc[by[i - 1]]) != 0)
            continue;
        /* by[i - 1] may have been dropped already: compare by the run's
         * surviving name, which is equal. */
        free(c->list_acc[by[i]]);
        c->list_acc[by[i]] = NULL;
        by[i] = by[i - 1];
        dups++;
    }
    free(by);
    for (long i = 0; i < c->list_n; i++) {
        if (c->list_acc[i] != NULL)
            c->list_acc[k++] = c->list_acc[i];
    }
    c->list_n = k;
    return dups;
}

/* Listing finished: swap in the new tool set. */
static void
client_list_finished(struct client *c)
{
    long old = c->ntools;
    bool was_dial = c->list_in_dial;
    bool same = old == c->list_n;

    free(c->list_cursors);      /* a listing's own: not kept after it */
    c->list_cursors = NULL;
    c->listed_at = client_now(c);
    for (long i = 0; same && i < old; i++)
        same = strcmp(c->tool_names[i], c->list_acc[i]) == 0;
    client_free_strv(c->tool_names, c->ntools);
    c->tool_names = c->list_acc;
    c->ntools = c->list_n;
    c->list_acc = NULL;
    c->list_n = c->list_cap = 0;
    if (was_dial)
        client_dial_completed(c);
    else
        client_report_exchange(c, "tools/list", NULL,
            client_elapsed_ms(c, c->list_started));
    if (!same && old >= 0)
        client_report_tools_changed(c, c->ntools);
    client_relist(c);
}

/* jsonrpc_array_each: one tool's name into the listing. */
static void
client_take_tool(void *arg, const char *name)
{
    struct client *c = arg;

    if (c->list_n == c->list_cap) {
        c->list_cap = c->list_cap ? c->list_cap * 2 : 16;
        c->list_acc = xrealloc(c->list_acc, (size_t)c->list_cap *
            sizeof(*c->list_acc));
    }
    c->list_acc[c->list_n++] = str_sanitized(name != NULL ? name : "?");
}

void
client_on_list(struct client *c, struct client_req *rq,
    struct transport_result *res)
{
    struct failure_evidence evd;
    char                    detail[256];
    const char             *cursor;
    char                   *next = NULL;
    double                  ttl;

    client_req_free(rq, NULL);
    if (client_judge(res, &evd, detail, sizeof(detail))) {
        client_list_failed(c, &evd, detail);
        return;
    }
    if (jsonrpc_array_each(res->answer, "result.tools", "name",
        CLIENT_MAX_TOOLS - c->list_n, client_take_tool, c) < 0) {
        evd.no_matching_response = true;
        client_list_failed(c, &evd, "tools/list result has no tools array");
        return;
    }
    /* Each page has its own freshness; the listing is as fresh as its
     * stalest page (2026-07-28 server/utilities/caching). */
    if (jsonrpc_get_number(res->answer, "result.ttlMs", &ttl)) {
        if (ttl < 0)
            ttl = 0;
        if (c->list_pages == 0 || c->list_ttl_ms < 0 || ttl < c->list_ttl_ms)
            c->list_ttl_ms = ttl;
    } else if (c->list_pages == 0) {
        c->list_ttl_ms = -1;
    }
    cursor = jsonrpc_get_string(res->answer, "result.nextCursor");
    if (cursor != NULL && cursor[0] != '\0')
        next = xstrdup(cursor);
    if (next != NULL && client_cursor_seen(c, next)) {
        char clean[64];
        long dups;

        str_sanitize(clean, sizeof(clean), next, strlen(next));
        c->list_pages++;
        dups = client_list_unique(c);
        free(c->list_note);
        c->list_note = str_printf("pagination_loop: nextCursor \"%s\" came "
            "again after %d page%s; the listing stopped there%s", clean,
            c->list_pages, c->list_pages == 1 ? "" : "s", dups > 0 ?
            " (duplicate tool names dropped)" : "");
        c->list_loop = true;
        client_log(c, "tools/list: %s", c->list_note);
        free(next);
        client_list_finished(c);
        return;
    }
    c->list_pages++;
    if (next != NULL && c->list_pages < CLIENT_MAX_PAGES) {
        client_send_list(c, next);
        free(next);
        return;
    }
    if (next != NULL)
        client_log(c, "tools/list stopped after %d pages", c->list_pages);
    free(next);
    if (client_list_unique(c) > 0)
        client_log(c, "tools/list: duplicate tool names dropped");
    c->list_loop = false;
    free(c->list_note);
    c->list_note = NULL;
    client_list_finished(c);
}

/* ev_timer: a re-list held back by the rate limit is due. */
void
client_relist_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    client_relist(w->data);
}

/* Re-list when one is wanted and may go: one listing at a time, at most
 * one a second; notices that arrive meanwhile are coalesced into it. */
void
client_relist(struct client *c)
{
    ev_tstamp now;
    double    wait;

    if (!c->relist_wanted || client_state(c) != CLIENT_PHASE_READY ||
        client_find(c, CLIENT_OP_LIST) != NULL || ev_is_active(&c->relist_timer))
        return;
    now = client_now(c);
    wait = c->relisted_at > 0 ? c->relisted_at + CLIENT_RELIST_MIN_S - now :
        0;
    wait = fmax(wait, client_wait_left(c));
    if (wait > 0) {
        ev_timer_set(&c->relist_timer, wait, 0.);
        ev_timer_start(c->env->loop, &c->relist_timer);
        return;
    }
    c->relist_wanted = false;
    client_begin_list(c, false);
}
