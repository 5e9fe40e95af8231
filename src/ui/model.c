/*
 * Filtering, sorting and counting the fleet for the table. Runs only when
 * the model is dirty: an engine event, a new filter, a new sort. Sort keys
 * are computed once per rebuild into scratch arrays, so a sort of 10,000
 * servers does not call getters inside the comparison.
 */
#include "ui/model.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/str.h"
#include "util/xmalloc.h"

static const char *const model_sort_names[MODEL_SORT__COUNT] = {
#define X(id, name) [MODEL_SORT_##id] = name,
    MODEL_SORTS(X)
#undef X
};

/* qsort has no context argument: the model being sorted. */
static const struct model *model_sorting;

const char *
model_sort_name(enum model_sort s)
{
    if ((unsigned)s >= MODEL_SORT__COUNT)
        return "?";
    return model_sort_names[s];
}

void
model_init(struct model *m, struct fleet *f)
{
    memset(m, 0, sizeof(*m));
    m->fleet = f;
    m->n = fleet_size(f);
    m->order = xcalloc(m->n + 1, sizeof(*m->order));
    m->marked = xcalloc(m->n + 1, sizeof(*m->marked));
    m->key = xcalloc(m->n + 1, sizeof(*m->key));
    m->rank = xcalloc(m->n + 1, sizeof(*m->rank));
    m->sel = MODEL_NONE;     /* the first row, once sorted */
    m->dirty = true;
}

void
model_done(struct model *m)
{
    free(m->order);
    free(m->marked);
    free(m->key);
    free(m->rank);
    memset(m, 0, sizeof(*m));
}

bool
model_current_failure(const struct server *s, enum failure_kind *kind,
    long *http_status)
{
    const struct liveness *l = server_liveness(s);
    const struct failure  *f = server_last_failure(s, NULL);

    if (f == NULL)
        return false;
    if (l->present && l->state == LIVENESS_REACHABLE)
        return false;
    if (!l->present && f->kind != FAILURE_INVALID_CONFIG)
        return false;
    *kind = f->kind;
    *http_status = f->http_status;
    return true;
}

/* Case-insensitive substring search (needle already lower case). */
static bool
model_contains(const char *hay, const char *needle)
{
    size_t n = strlen(needle);

    if (hay == NULL)
        return false;
    for (; *hay != '\0'; hay++) {
        size_t i;

        for (i = 0; i < n; i++) {
            if (hay[i] == '\0' ||
                tolower((unsigned char)hay[i]) != (unsigned char)needle[i])
                break;
        }
        if (i == n)
            return true;
    }
    return n == 0;
}

static bool
model_matches(const struct model *m, const struct server *s)
{
    const struct config_server *d = server_decl(s);
    const struct liveness      *l = server_liveness(s);
    enum failure_kind           k;
    long                        st;

    if (m->filter[0] == '\0')
        return true;
    if (model_contains(server_name(s), m->filter) ||
        model_contains(server_transport_name(s), m->filter))
        return true;
    for (size_t i = 0; d != NULL && i < d->ntags; i++) {
        if (model_contains(d->tags[i], m->filter))
            return true;
    }
    if (model_current_failure(s, &k, &st) &&
        model_contains(failure_kind_name(k), m->filter))
        return true;
    if (l->present && model_contains(liveness_state_name(l->state),
        m->filter))
        return true;
    return false;
}

/* Liveness rank for sorting: the worst first. */
static int
model_live_rank(const struct liveness *l)
{
    if (!l->present)
        return 2;
    switch (l->state) {
    case LIVENESS_UNREACHABLE:
        return 0;
    case LIVENESS_UNKNOWN:
        return 1;
    default:
        return 3;
    }
}

/* Sort keys of server i: rank (coarse) then key (fine), then name. */
static void
model_keys(struct model *m, size_t i)
{
    const struct server   *s = fleet_server(m->fleet, i);
    const struct liveness *l = server_liveness(s);
    const struct failure  *f;
    double                 rtt;

    m->rank[i] = 0;
    m->key[i] = 0;
    switch (m->sort) {
    case MODEL_SORT_NAME:
        break;
    case MODEL_SORT_LIVENESS:
        m->rank[i] = model_live_rank(l);
        break;
    case MODEL_SORT_FAILURE:
        f = server_last_failure(s, NULL);
        m->rank[i] = f != NULL ? (int)f->kind : FAILURE__COUNT;
        m->key[i] = f != NULL ? (double)f->http_status : 0;
        break;
    case MODEL_SORT_RTT:
        rtt = server_rtt_ms(s);
        m->rank[i] = rtt < 0;
        m->key[i] = -rtt;           /* slowest first */
        break;
    case MODEL_SORT_AGE:
        m->rank[i] = !l->present;
        m->key[i] = l->present ? (double)l->observed_at : 0;
        break;
    default:
        break;
    }
}

static int
model_cmp(const void *a, const void *b)
{
    const struct model *m = model_sorting;
    size_t              i = *(const size_t *)a, j = *(const size_t *)b;
    int                 c;

    if (m->rank[i] != m->rank[j])
        return m->rank[i] < m->rank[j] ? -1 : 1;
    if (m->key[i] != m->key[j])
        return m->key[i] < m->key[j] ? -1 : 1;
    c = strcasecmp(server_name(fleet_server(m->fleet, i)),
        server_name(fleet_server(m->fleet, j)));
    if (c != 0)
        return c;
    return i < j ? -1 : i > j;
}

static void
model_count(struct model *m, const struct server *s)
{
    struct model_counts   *c = &m->counts;
    const struct liveness *l = server_liveness(s);
    enum failure_kind      k;
    long                   st;

    if (l->present)
        c->live[l->state]++;
    else
        c->absent++;
    if (server_ending_busy(s) || server_state(s) == SERVER_ENDING)
        c->ending++;
    if (!model_current_failure(s, &k, &st))
        return;
    c->kind[k]++;
    if (k == FAILURE_HTTP_STATUS && st != 0) {
        size_t h;

        for (h = 0; h < c->nhttp; h++) {
            if (c->http_status[h] == st)
                break;
        }
        if (h == c->nhttp && c->nhttp < MODEL_HTTP_SLOTS) {
            c->http_status[h] = st;
            c->http_n[h] = 0;
            c->nhttp++;
        }
        if (h < c->nhttp)
            c->http_n[h]++;
    }
}

void
model_rebuild(struct model *m, int64_t now_ms)
{
    size_t old_pos = m->sel_pos;

    m->now_ms = now_ms;
    if (!m->dirty)
        return;
    memset(&m->counts, 0, sizeof(m->counts));
    m->nvis = 0;
    for (size_t i = 0; i < m->n; i++) {
        const struct server *s = fleet_server(m->fleet, i);

        model_count(m, s);
        if (!model_matches(m, s))
            continue;
        model_keys(m, i);
        m->order[m->nvis++] = i;
    }
    model_sorting = m;
    qsort(m->order, m->nvis, sizeof(*m->order), model_cmp);
    model_sorting = NULL;
    m->dirty = false;
    if (m->nvis == 0) {
        m->sel_pos = 0;
        m->top = 0;
        return;
    }
    for (size_t p = 0; p < m->nvis; p++) {
        if (m->order[p] == m->sel) {
            m->sel_pos = p;
            return;
        }
    }
    /* The selected server is filtered out: keep the place instead. */
    m->sel_pos = old_pos < m->nvis ? old_pos : m->nvis - 1;
    m->sel = m->order[m->sel_pos];
}

void
model_goto(struct model *m, size_t pos)
{
    if (m->nvis == 0)
        return;
    if (pos >= m->nvis)
        pos = m->nvis - 1;
    m->sel_pos = pos;
    m->sel = m->order[pos];
}

void
model_move(struct model *m, long delta)
{
    long pos = (long)m->sel_pos + delta;

    if (m->nvis == 0)
        return;
    if (pos < 0)
        pos = 0;
    model_goto(m, (size_t)pos);
}

void
model_scroll(struct model *m, size_t rows)
{
    if (rows == 0 || m->nvis == 0) {
        m->top = 0;
        return;
    }
    if (m->sel_pos < m->top)
        m->top = m->sel_pos;
    if (m->sel_pos >= m->top + rows)
        m->top = m->sel_pos - rows + 1;
    if (m->top + rows > m->nvis)
        m->top = m->nvis > rows ? m->nvis - rows : 0;
}

void
model_toggle_mark(struct model *m, size_t i)
{
    if (i >= m->n)
        return;
    m->marked[i] = !m->marked[i];
    if (m->marked[i])
        m->nmarked++;
    else
        m->nmarked--;
}

void
model_set_filter(struct model *m, const char *filter)
{
    size_t i;

    for (i = 0; filter[i] != '\0' && i + 1 < sizeof(m->filter); i++)
        m->filter[i] = (char)tolower((unsigned char)filter[i]);
    m->filter[i] = '\0';
    m->dirty = true;
}
