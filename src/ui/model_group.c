/*
 * The table's groups (issue 34): the rows the filter keeps, gathered by
 * cause (the current failure's kind, HTTP status and reason), by first
 * tag, by host (the URL's host, or the stdio command's name) or by
 * transport, under one header row per group with its count and worst
 * health. Groups are ordered worst first, then by name; inside a group
 * the rows keep the table's sort. A folded group shows its header only.
 * Grouping sorts the keys (n log n), never compares every pair.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/server.h"
#include "ui/model.h"
#include "util/str.h"
#include "util/xmalloc.h"

static const char *const model_group_names[MODEL_GROUP__COUNT] = {
#define X(id, name) [MODEL_GROUP_##id] = name,
    MODEL_GROUPS(X)
#undef X
};

/* One visible server while grouping: its group's name and its place in
 * the table's sort. */
struct model_group_item {
    char   key[sizeof(((struct model_group_row *)0)->name)];
    size_t idx;
    size_t pos;
};

const char *
model_group_name(enum model_group g)
{
    if ((unsigned)g >= MODEL_GROUP__COUNT)
        return "?";
    return model_group_names[g];
}

bool
model_group_parse(const char *word, enum model_group *g)
{
    for (int i = 0; i < MODEL_GROUP__COUNT; i++) {
        if (strcasecmp(word, model_group_names[i]) == 0) {
            *g = (enum model_group)i;
            return true;
        }
    }
    return false;
}

void
model_set_group(struct model *m, enum model_group g)
{
    if ((unsigned)g >= MODEL_GROUP__COUNT)
        return;
    if (g != m->group)
        m->nfolded = 0;
    m->group = g;
    m->dirty = true;
}

const struct model_group_row *
model_header(const struct model *m, size_t idx)
{
    if (idx == MODEL_NONE || idx < m->n || idx - m->n >= m->ngroups)
        return NULL;
    return &m->groups[idx - m->n];
}

size_t
model_sel_server(const struct model *m)
{
    if (m->nvis == 0 || m->sel == MODEL_NONE || m->sel >= m->n)
        return MODEL_NONE;
    return m->sel;
}

/* The host of a URL as written: after "scheme://", without userinfo and
 * port, up to the path. */
static void
model_group_host(char *buf, size_t n, const char *url)
{
    const char *p = strstr(url, "://");
    const char *end, *at, *colon;

    p = p != NULL ? p + 3 : url;
    end = p + strcspn(p, "/?#");
    at = memchr(p, '@', (size_t)(end - p));
    while (at != NULL) {
        p = at + 1;
        at = memchr(p, '@', (size_t)(end - p));
    }
    if (*p == '[') {
        colon = memchr(p, ']', (size_t)(end - p));
        end = colon != NULL ? colon + 1 : end;
    } else {
        colon = memchr(p, ':', (size_t)(end - p));
        end = colon != NULL ? colon : end;
    }
    str_sanitize(buf, n, p, (size_t)(end - p));
}

/* The name of server s's group under m->group, into buf. */
static void
model_group_key(const struct model *m, const struct server *s, char *buf,
    size_t n)
{
    const struct config_server *d = server_decl(s);
    const struct failure       *f;
    const char                 *t;

    switch (m->group) {
    case MODEL_GROUP_CAUSE:
        f = model_current_failure(s);
        if (f == NULL) {
            snprintf(buf, n, "no current failure");
            break;
        }
        snprintf(buf, n, "%s", failure_kind_name(f->kind));
        if (f->http_status > 0)
            snprintf(buf + strlen(buf), n - strlen(buf), " %ld",
                f->http_status);
        if (f->reason != FAILURE_REASON_NONE)
            snprintf(buf + strlen(buf), n - strlen(buf), " %s",
                failure_reason_name(f->reason));
        break;
    case MODEL_GROUP_TAG:
        if (d == NULL || d->ntags == 0)
            snprintf(buf, n, "no tag");
        else
            str_sanitize(buf, n, d->tags[0], strlen(d->tags[0]));
        break;
    case MODEL_GROUP_HOST:
        if (d != NULL && d->url != NULL) {
            model_group_host(buf, n, d->url);
        } else if (d != NULL && d->command != NULL) {
            t = d->command_shown != NULL ? d->command_shown : d->command;
            if (strrchr(t, '/') != NULL && strrchr(t, '/')[1] != '\0')
                t = strrchr(t, '/') + 1;
            str_sanitize(buf, n, t, strlen(t));
        } else {
            buf[0] = '\0';
        }
        if (buf[0] == '\0')
            snprintf(buf, n, "no host");
        break;
    default:
        snprintf(buf, n, "%s", server_transport_name(s));
        break;
    }
}

static int
model_group_item_cmp(const void *a, const void *b)
{
    const struct model_group_item *x = a, *y = b;
    int                            c = strcmp(x->key, y->key);

    if (c != 0)
        return c;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Groups in row order: the worst health first, then by name. */
static int
model_group_row_cmp(const void *a, const void *b)
{
    const struct model_group_row *x = a, *y = b;
    int rx = model_health_rank(x->worst), ry = model_health_rank(y->worst);

    if (rx != ry)
        return rx < ry ? -1 : 1;
    return strcmp(x->name, y->name);
}

static bool
model_group_is_folded(const struct model *m, const char *name)
{
    for (size_t i = 0; i < m->nfolded; i++) {
        if (strcmp(m->folded[i], name) == 0)
            return true;
    }
    return false;
}

size_t
model_group_rows(struct model *m, size_t nv)
{
    struct model_group_item *it = xcalloc(nv + 1, sizeof(*it));
    size_t                   rows = 0;

    for (size_t p = 0; p < nv; p++) {
        model_group_key(m, fleet_server(m->fleet, m->order[p]), it[p].key,
            sizeof(it[p].key));
        it[p].idx = m->order[p];
        it[p].pos = p;
    }
    qsort(it, nv, sizeof(*it), model_group_item_cmp);
    m->ngroups = 0;
    for (size_t p = 0; p < nv; p++) {
        struct model_group_row *g;
        enum health_state       h =
            server_health(fleet_server(m->fleet, it[p].idx), NULL).state;

        if (p == 0 || strcmp(it[p].key, it[p - 1].key) != 0) {
            g = &m->groups[m->ngroups++];
            snprintf(g->name, sizeof(g->name), "%s", it[p].key);
            g->count = 0;
            g->worst = h;
            g->folded = model_group_is_folded(m, g->name);
        }
        g = &m->groups[m->ngroups - 1];
        g->count++;
        if (model_health_rank(h) < model_health_rank(g->worst))
            g->worst = h;
    }
    qsort(m->groups, m->ngroups, sizeof(*m->groups), model_group_row_cmp);
    for (size_t g = 0; g < m->ngroups; g++) {
        /* The group's first item: the items are sorted by name. */
        size_t lo = 0, hi = nv;

        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;

            if (strcmp(it[mid].key, m->groups[g].name) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        m->order[rows++] = m->n + g;
        if (m->groups[g].folded)
            continue;
        for (size_t k = 0; k < m->groups[g].count && lo + k < nv; k++)
            m->order[rows++] = it[lo + k].idx;
    }
    free(it);
    return rows;
}

bool
model_group_toggle(struct model *m)
{
    const struct model_group_row *g = model_header(m, m->sel);

    if (g == NULL)
        return false;
    if (g->folded) {
        for (size_t i = 0; i < m->nfolded; i++) {
            if (strcmp(m->folded[i], g->name) == 0) {
                memmove(m->folded[i], m->folded[i + 1],
                    (m->nfolded - i - 1) * sizeof(m->folded[0]));
                m->nfolded--;
                break;
            }
        }
    } else if (m->nfolded < MODEL_FOLDED) {
        snprintf(m->folded[m->nfolded++], sizeof(m->folded[0]), "%s",
            g->name);
    } else {
        return false;
    }
    m->dirty = true;
    return true;
}
