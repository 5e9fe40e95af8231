/*
 * Filtering, sorting and counting the fleet for the table, and what the
 * UI remembers per server. Rebuilds run only when the model is dirty: an
 * engine event, a new filter, a new sort. Sort keys are computed once per
 * rebuild into scratch arrays, so a sort of 10,000 servers does not call
 * getters inside the comparison. A server's tool lists are compared by
 * sorting copies (n log n: a server controls how many tools it lists).
 */
#include "ui/model.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ui/line.h"
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
    /* Rows: every server and, grouped, at most one header each. */
    m->order = xcalloc(2 * m->n + 1, sizeof(*m->order));
    m->groups = xcalloc(m->n + 1, sizeof(*m->groups));
    m->marked = xcalloc(m->n + 1, sizeof(*m->marked));
    m->key = xcalloc(m->n + 1, sizeof(*m->key));
    m->rank = xcalloc(m->n + 1, sizeof(*m->rank));
    m->missing = xcalloc(m->n + 1, sizeof(*m->missing));
    m->srv = xcalloc(m->n + 1, sizeof(*m->srv));
    m->name_w = xcalloc(m->n + 1, sizeof(*m->name_w));
    for (size_t i = 0; i < m->n; i++) {
        const char *name = server_name(fleet_server(f, i));
        char        buf[256];

        /* As drawn: sanitized, in display columns. */
        str_sanitize(buf, sizeof(buf), name, strlen(name));
        m->name_w[i] = ui_text_cols(buf, strlen(buf));
        m->srv[i].ntools = -1;
        server_set_data(fleet_server(f, i), &m->srv[i]);
    }
    m->sel = MODEL_NONE;     /* the first row, once sorted */
    m->dirty = true;
}

void
model_refleet(struct model *m, struct server *const *old, size_t nold)
{
    struct model          next;
    struct model_server  *lo = m->srv;
    size_t                n = fleet_size(m->fleet);
    size_t               *from = xcalloc(n + 1, sizeof(*from));
    bool                 *moved = xcalloc(m->n + 1, sizeof(*moved));
    struct server        *sel = m->sel != MODEL_NONE && m->sel < nold ?
        old[m->sel] : NULL;
    char                  filter[sizeof(m->filter)];

    /* A server that stayed still points at its old row. */
    for (size_t i = 0; i < n; i++) {
        struct model_server *d = server_data(fleet_server(m->fleet, i));

        from[i] = d != NULL && d >= lo && d < lo + m->n ?
            (size_t)(d - lo) : MODEL_NONE;
    }
    /* The servers that left: detached (their last events find no row). */
    for (size_t k = 0; k < nold; k++) {
        struct model_server *d = server_data(old[k]);

        if (d >= lo && d < lo + m->n)
            server_set_data(old[k], NULL);
    }
    model_init(&next, m->fleet);
    for (size_t i = 0; i < n; i++) {
        size_t k = from[i];

        if (k == MODEL_NONE)
            continue;
        next.srv[i] = lo[k];
        moved[k] = true;
        if (m->marked[k]) {
            next.marked[i] = true;
            next.nmarked++;
        }
        if (fleet_server(m->fleet, i) == sel)
            next.sel = i;
    }
    for (size_t k = 0; k < m->n; k++) {
        if (moved[k])
            memset(&lo[k], 0, sizeof(lo[k]));
    }
    free(from);
    free(moved);
    next.sort = m->sort;
    next.invert = m->invert;
    next.group = m->group;
    memcpy(next.folded, m->folded, sizeof(next.folded));
    next.nfolded = m->nfolded;
    snprintf(filter, sizeof(filter), "%s", m->filter);
    model_done(m);
    *m = next;
    model_set_filter(m, filter);
}

static void
model_names_free(char **v, size_t n)
{
    for (size_t i = 0; v != NULL && i < n; i++)
        free(v[i]);
    free(v);
}

/* The fleet may be gone already: nothing here reads it. */
void
model_done(struct model *m)
{
    for (size_t i = 0; m->srv != NULL && i < m->n; i++) {
        struct model_server *ms = &m->srv[i];

        model_names_free(ms->tools, ms->ntools > 0 ? (size_t)ms->ntools : 0);
        model_names_free(ms->added, ms->nadded);
        model_names_free(ms->removed, ms->nremoved);
    }
    free(m->srv);
    free(m->name_w);
    free(m->order);
    free(m->groups);
    free(m->marked);
    free(m->key);
    free(m->rank);
    free(m->missing);
    memset(m, 0, sizeof(*m));
}

/* ------------------------------------------------------------------ */
/* What a row shows: the current failure, its streak, the round trip. */

const struct failure *
model_current_failure(const struct server *s)
{
    const struct liveness        *l = server_liveness(s);
    const struct failure         *f = server_last_failure(s, NULL);
    size_t                        len = server_history_len(s);
    const struct mcp_exchange *x;

    /* Not monitored now: its last failure is history, not current. */
    if (f == NULL || !model_monitored(s))
        return NULL;
    if (len > 0) {
        x = server_history(s, len - 1);
        return x != NULL && !x->completed ? f : NULL;
    }
    if (f->kind == FAILURE_INVALID_CONFIG)
        return f;
    if (l->present && l->state != LIVENESS_REACHABLE)
        return f;
    return NULL;
}

unsigned long
model_fail_streak(const struct server *s, bool *more)
{
    /* The engine counts them all, not only the history's last 100. */
    if (more != NULL)
        *more = false;
    return server_fail_streak(s);
}

bool
model_monitored(const struct server *s)
{
    return health_monitored(server_health(s, NULL).state);
}

double
model_rtt(const struct server *s)
{
    if (model_current_failure(s) != NULL || !model_monitored(s))
        return -1;
    return server_rtt_ms(s);
}

/* ------------------------------------------------------------------ */
/* Tools: the UI keeps the last list it saw, to show what changed. */

static char **
model_names_copy(const struct server *s, long n)
{
    char **v = xcalloc((size_t)n + 1, sizeof(*v));

    for (long i = 0; i < n; i++) {
        const char *name = server_tool_name(s, i);

        v[i] = xstrdup(name != NULL ? name : "");
    }
    return v;
}

static int
model_strcmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in a and not in b, and the names in b and not in a, by a
 * merge of sorted copies. */
static void
model_tools_diff(struct model_server *ms, char **was, size_t nwas,
    char **now, size_t nnow)
{
    char  **a = xcalloc(nwas + 1, sizeof(*a));
    char  **b = xcalloc(nnow + 1, sizeof(*b));
    size_t  i = 0, j = 0;

    memcpy(a, was, nwas * sizeof(*a));
    memcpy(b, now, nnow * sizeof(*b));
    qsort(a, nwas, sizeof(*a), model_strcmp);
    qsort(b, nnow, sizeof(*b), model_strcmp);
    model_names_free(ms->added, ms->nadded);
    model_names_free(ms->removed, ms->nremoved);
    ms->added = xcalloc(nnow + 1, sizeof(*ms->added));
    ms->removed = xcalloc(nwas + 1, sizeof(*ms->removed));
    ms->nadded = ms->nremoved = 0;
    while (i < nwas || j < nnow) {
        int c = i == nwas ? 1 : j == nnow ? -1 : strcmp(a[i], b[j]);

        if (c == 0) {
            i++;
            j++;
        } else if (c < 0) {
            ms->removed[ms->nremoved++] = xstrdup(a[i++]);
        } else {
            ms->added[ms->nadded++] = xstrdup(b[j++]);
        }
    }
    free(a);
    free(b);
}

void
model_event(struct model *m, const struct event *e)
{
    struct model_server *ms;
    long                 n;

    if (e->server == NULL)
        return;
    ms = server_data(e->server);
    if (ms == NULL || ms < m->srv || ms >= m->srv + m->n)
        return;
    n = server_tools(e->server);
    if (e->type == EVENT_TOOLS_CHANGED && ms->ntools >= 0 && n >= 0) {
        char **now = model_names_copy(e->server, n);

        model_tools_diff(ms, ms->tools, (size_t)ms->ntools, now, (size_t)n);
        model_names_free(ms->tools, (size_t)ms->ntools);
        ms->tools = now;
        ms->ntools = n;
        ms->tool_changes++;
        ms->tools_changed_at = e->ts;
        return;
    }
    /* The first listing seen: remembered, so a change can be shown. */
    if (ms->ntools < 0 && n >= 0) {
        ms->tools = model_names_copy(e->server, n);
        ms->ntools = n;
    }
}

/* ------------------------------------------------------------------ */
/* The filter. */

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

/* Case-insensitive prefix test (prefix already lower case). */
static bool
model_prefix(const char *s, const char *prefix)
{
    if (s == NULL)
        return false;
    for (; *prefix != '\0'; s++, prefix++) {
        if (*s == '\0' || tolower((unsigned char)*s) != (unsigned char)*prefix)
            return false;
    }
    return true;
}

static bool
model_term_matches(const struct model_term *t, const struct server *s)
{
    const struct config_server *d = server_decl(s);
    const struct liveness      *l = server_liveness(s);
    const struct failure       *f = model_current_failure(s);
    const char                 *live = l->present ?
        liveness_state_name(l->state) : "absent";
    const char                 *health =
        health_state_name(server_health(s, NULL).state);
    char                        http[24];

    switch (t->field) {
    case MODEL_FIELD_NAME:
        return model_contains(server_name(s), t->value);
    case MODEL_FIELD_TAG:
        for (size_t i = 0; d != NULL && i < d->ntags; i++) {
            if (strcasecmp(d->tags[i], t->value) == 0)
                return true;
        }
        return false;
    case MODEL_FIELD_KIND:
        return f != NULL && model_prefix(failure_kind_name(f->kind),
            t->value);
    case MODEL_FIELD_LIVE:
        return model_prefix(live, t->value);
    case MODEL_FIELD_HEALTH:
        return model_prefix(health, t->value);
    case MODEL_FIELD_TRANS:
        return model_prefix(server_transport_name(s), t->value);
    case MODEL_FIELD_REASON:
        return f != NULL && f->reason != FAILURE_REASON_NONE &&
            model_prefix(failure_reason_name(f->reason), t->value);
    case MODEL_FIELD_HTTP:
        if (f == NULL || f->http_status <= 0)
            return false;
        snprintf(http, sizeof(http), "%ld", f->http_status);
        return model_prefix(http, t->value);
    case MODEL_FIELD_TOOLS: {
        /* tools:changed, the incident line's "tools changed": the
         * servers whose tool list changed since mcptop started. */
        const struct model_server *ms = server_data(s);

        return ms != NULL && ms->tool_changes > 0 &&
            model_prefix("changed", t->value);
    }
    default:
        break;
    }
    if (model_contains(server_name(s), t->value) ||
        model_contains(server_transport_name(s), t->value))
        return true;
    for (size_t i = 0; d != NULL && i < d->ntags; i++) {
        if (model_contains(d->tags[i], t->value))
            return true;
    }
    if (f != NULL && (model_contains(failure_kind_name(f->kind), t->value) ||
        (f->reason != FAILURE_REASON_NONE &&
        model_contains(failure_reason_name(f->reason), t->value))))
        return true;
    if (model_contains(health, t->value))
        return true;
    return l->present && model_contains(live, t->value);
}

static bool
model_matches(const struct model *m, const struct server *s)
{
    for (size_t i = 0; i < m->nterms; i++) {
        const struct model_term *t = &m->terms[i];

        if (model_term_matches(t, s) == t->neg)
            return false;
    }
    return true;
}

static const struct {
    const char      *name;
    enum model_field field;
} model_fields[] = {
    { "name", MODEL_FIELD_NAME },
    { "tag", MODEL_FIELD_TAG },
    { "kind", MODEL_FIELD_KIND },
    { "health", MODEL_FIELD_HEALTH },
    { "state", MODEL_FIELD_HEALTH },
    { "live", MODEL_FIELD_LIVE },
    { "liveness", MODEL_FIELD_LIVE },
    { "trans", MODEL_FIELD_TRANS },
    { "transport", MODEL_FIELD_TRANS },
    { "reason", MODEL_FIELD_REASON },
    { "http", MODEL_FIELD_HTTP },
    { "status", MODEL_FIELD_HTTP },
    { "tools", MODEL_FIELD_TOOLS },
};

/* One term of the filter (len bytes at w) into t. false when its field
 * is unknown (m->filter_error set). */
static bool
model_parse_term(struct model *m, struct model_term *t, const char *w,
    size_t len)
{
    const char *colon;
    size_t      flen, i;

    memset(t, 0, sizeof(*t));
    if (len > 0 && w[0] == '!') {
        t->neg = true;
        w++;
        len--;
    }
    colon = memchr(w, ':', len);
    t->field = MODEL_FIELD_ANY;
    if (colon != NULL) {
        flen = (size_t)(colon - w);
        for (i = 0; i < sizeof(model_fields) / sizeof(model_fields[0]); i++) {
            if (strlen(model_fields[i].name) == flen &&
                strncasecmp(model_fields[i].name, w, flen) == 0)
                break;
        }
        if (i == sizeof(model_fields) / sizeof(model_fields[0])) {
            char field[32];

            str_sanitize(field, sizeof(field), w, flen);
            snprintf(m->filter_error, sizeof(m->filter_error),
                "no field \"%s\" (name tag kind health live trans "
                "reason http tools)",
                field);
            return false;
        }
        t->field = model_fields[i].field;
        len -= flen + 1;
        w = colon + 1;
    }
    for (i = 0; i < len && i + 1 < sizeof(t->value); i++)
        t->value[i] = (char)tolower((unsigned char)w[i]);
    t->value[i] = '\0';
    return true;
}

void
model_set_filter(struct model *m, const char *filter)
{
    const char *p = filter;

    snprintf(m->filter, sizeof(m->filter), "%s", filter);
    m->nterms = 0;
    m->filter_error[0] = '\0';
    while (*p != '\0') {
        const char *w;

        while (*p == ' ' || *p == '\t')
            p++;
        w = p;
        while (*p != '\0' && *p != ' ' && *p != '\t')
            p++;
        if (p == w || (p - w == 1 && *w == '!'))
            continue;
        if (m->nterms == MODEL_FILTER_TERMS) {
            snprintf(m->filter_error, sizeof(m->filter_error),
                "at most %d terms", MODEL_FILTER_TERMS);
            break;
        }
        if (!model_parse_term(m, &m->terms[m->nterms], w, (size_t)(p - w))) {
            /* An unknown field matches nothing, so the mistake shows. */
            memset(&m->terms[m->nterms], 0, sizeof(m->terms[0]));
            m->terms[m->nterms].field = MODEL_FIELD_NAME;
            snprintf(m->terms[m->nterms].value,
                sizeof(m->terms[0].value), "%s", "\x01");
        }
        m->nterms++;
    }
    m->dirty = true;
}

bool
model_filter_check(const char *filter, char *err, size_t n)
{
    struct model m;

    memset(&m, 0, sizeof(m));
    model_set_filter(&m, filter);
    if (m.filter_error[0] == '\0')
        return true;
    snprintf(err, n, "%s", m.filter_error);
    return false;
}

/* ------------------------------------------------------------------ */
/* Sorting and counting. */

void
model_set_sort(struct model *m, enum model_sort s)
{
    if ((unsigned)s >= MODEL_SORT__COUNT)
        return;
    if (s == m->sort)
        m->invert = !m->invert;
    else
        m->invert = false;
    m->sort = s;
    m->dirty = true;
}

/* The words --sort takes, one per column (and a few aliases). */
static const struct {
    const char      *word;
    enum model_sort  sort;
} model_sort_words[] = {
    { "name", MODEL_SORT_NAME },
    { "transport", MODEL_SORT_TRANSPORT },
    { "health", MODEL_SORT_HEALTH },
    { "liveness", MODEL_SORT_LIVENESS },
    { "age", MODEL_SORT_AGE },
    { "streak", MODEL_SORT_STREAK },
    { "session", MODEL_SORT_SESSION },
    { "protocol", MODEL_SORT_PROTOCOL },
    { "tools", MODEL_SORT_TOOLS },
    { "rtt", MODEL_SORT_RTT },
    { "failure", MODEL_SORT_FAILURE },
    { "delivered", MODEL_SORT_DELIVERED },
    { "http", MODEL_SORT_HTTP },
    { "history", MODEL_SORT_HISTORY },
    /* aliases: the header's words, the filter's field names */
    { "trans", MODEL_SORT_TRANSPORT },
    { "state", MODEL_SORT_HEALTH },
    { "live", MODEL_SORT_LIVENESS },
    { "round-trip", MODEL_SORT_RTT },
    { "last-failure", MODEL_SORT_FAILURE },
    { "status", MODEL_SORT_HTTP },
};

#define MODEL_SORT_COLUMNS "name transport health liveness age streak " \
    "session protocol tools rtt failure delivered http history"

const char *
model_sort_columns(void)
{
    return MODEL_SORT_COLUMNS;
}

const char *
model_sort_word(enum model_sort s)
{
    for (size_t i = 0; i < sizeof(model_sort_words) /
        sizeof(model_sort_words[0]); i++) {
        if (model_sort_words[i].sort == s)
            return model_sort_words[i].word;
    }
    return "?";
}

bool
model_sort_parse(const char *spec, enum model_sort *s, bool *invert,
    char *err, size_t n)
{
    const char *comma = strchr(spec, ',');
    size_t      len = comma != NULL ? (size_t)(comma - spec) : strlen(spec);
    char        word[32];

    *invert = false;
    if (comma != NULL) {
        if (strcasecmp(comma + 1, "desc") == 0 ||
            strcasecmp(comma + 1, "reverse") == 0) {
            *invert = true;
        } else if (strcasecmp(comma + 1, "asc") != 0) {
            str_sanitize(word, sizeof(word), comma + 1, strlen(comma + 1));
            snprintf(err, n, "\"%s\" after the comma: desc (reversed) or "
                "asc (the column's own order)", word);
            return false;
        }
    }
    for (size_t i = 0; i < sizeof(model_sort_words) /
        sizeof(model_sort_words[0]); i++) {
        if (strlen(model_sort_words[i].word) == len &&
            strncasecmp(model_sort_words[i].word, spec, len) == 0) {
            *s = model_sort_words[i].sort;
            return true;
        }
    }
    str_sanitize(word, sizeof(word), spec, len);
    snprintf(err, n, "no column \"%s\" (%s)", word, MODEL_SORT_COLUMNS);
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

/* Health rank for sorting: what needs a look first (down, degraded,
 * unknown, invalid), then what has no verdict yet, then ok, then what is
 * not monitored now. */
int
model_health_rank(enum health_state h)
{
    static const int rank[HEALTH__COUNT] = {
        [HEALTH_DOWN] = 0, [HEALTH_DEGRADED] = 1, [HEALTH_UNKNOWN] = 2,
        [HEALTH_INVALID] = 3, [HEALTH_PENDING] = 4, [HEALTH_OK] = 5,
        [HEALTH_PAUSED] = 6, [HEALTH_STOPPED] = 7, [HEALTH_DISABLED] = 8,
    };

    return (unsigned)h < HEALTH__COUNT ? rank[h] : HEALTH__COUNT;
}

/* "2025-11-25" as 20251125; 0 when it is not a date. */
static double
model_version_key(const char *v)
{
    double k = 0;

    if (v == NULL)
        return 0;
    for (; *v != '\0'; v++) {
        if (*v >= '0' && *v <= '9')
            k = k * 10 + (*v - '0');
    }
    return k;
}

/*
 * Sort keys of server i: missing (a value this sort cannot use: last in
 * either direction), then rank (coarse) and key (fine), then the name.
 * Each sort's natural order puts what needs a look first.
 */
static void
model_keys(struct model *m, size_t i)
{
    const struct server       *s = fleet_server(m->fleet, i);
    const struct liveness     *l = server_liveness(s);
    const struct failure      *f;
    struct mcp_session_info si;
    const char                *t;
    double                     v;
    size_t                     len, bad;

    m->rank[i] = 0;
    m->key[i] = 0;
    m->missing[i] = false;
    switch (m->sort) {
    case MODEL_SORT_TRANSPORT:
        /* Alphabetical by the transport's first two letters (http,
         * sse, stdio): enough to group them. */
        t = server_transport_name(s);
        m->rank[i] = (unsigned char)t[0] * 256 +
            (t[0] != '\0' ? (unsigned char)t[1] : 0);
        break;
    case MODEL_SORT_HEALTH:
        m->rank[i] = model_health_rank(server_health(s, NULL).state);
        break;
    case MODEL_SORT_LIVENESS:
        m->rank[i] = model_live_rank(l);
        break;
    case MODEL_SORT_AGE:
        /* The oldest observation first. */
        m->missing[i] = !l->present;
        m->key[i] = (double)l->observed_at;
        break;
    case MODEL_SORT_STREAK:
        m->missing[i] = !l->present;
        m->key[i] = -(double)server_streak(s);
        break;
    case MODEL_SORT_SESSION:
        server_session(s, &si);
        m->missing[i] = !si.open;
        m->rank[i] = model_current_failure(s) != NULL;
        break;
    case MODEL_SORT_PROTOCOL:
        server_session(s, &si);
        v = si.open ? model_version_key(si.protocol_version) : 0;
        m->missing[i] = v == 0;
        m->key[i] = -v;
        break;
    case MODEL_SORT_TOOLS:
        m->missing[i] = server_tools(s) < 0;
        m->key[i] = -(double)server_tools(s);
        break;
    case MODEL_SORT_RTT:
        /* The slowest first; a server whose last exchange failed has no
         * round trip worth showing, so it is never "the slowest". */
        v = model_rtt(s);
        m->missing[i] = v < 0;
        m->key[i] = -v;
        break;
    case MODEL_SORT_FAILURE:
        /* Current failures by kind, the longest streak first; then old
         * failures; servers that never failed last. */
        f = model_current_failure(s);
        if (f != NULL) {
            m->rank[i] = (int)f->kind;
            m->key[i] = -(double)model_fail_streak(s, NULL);
        } else {
            f = server_last_failure(s, NULL);
            m->missing[i] = f == NULL;
            m->rank[i] = FAILURE__COUNT + (f != NULL ? (int)f->kind : 0);
        }
        break;
    case MODEL_SORT_DELIVERED:
        f = model_current_failure(s);
        m->missing[i] = f == NULL;
        m->rank[i] = f != NULL ? (int)f->delivered : 0;
        break;
    case MODEL_SORT_HTTP:
        f = model_current_failure(s);
        m->missing[i] = f == NULL || f->http_status <= 0;
        m->key[i] = f != NULL ? (double)f->http_status : 0;
        break;
    case MODEL_SORT_HISTORY:
        /* The largest share of failed exchanges first. */
        len = server_history_len(s);
        bad = 0;
        for (size_t k = 0; k < len; k++) {
            const struct mcp_exchange *x = server_history(s, k);

            if (x != NULL && !x->completed)
                bad++;
        }
        m->missing[i] = len == 0;
        m->key[i] = len > 0 ? -(double)bad / (double)len : 0;
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
    int                 dir = m->invert ? -1 : 1;
    int                 c;

    if (m->missing[i] != m->missing[j])
        return m->missing[i] ? 1 : -1;
    if (m->rank[i] != m->rank[j])
        return (m->rank[i] < m->rank[j] ? -1 : 1) * dir;
    if (m->key[i] != m->key[j])
        return (m->key[i] < m->key[j] ? -1 : 1) * dir;
    c = strcasecmp(server_name(fleet_server(m->fleet, i)),
        server_name(fleet_server(m->fleet, j)));
    if (m->sort == MODEL_SORT_NAME)
        c *= dir;
    if (c != 0)
        return c;
    return (i < j ? -1 : i > j) * (m->sort == MODEL_SORT_NAME ? dir : 1);
}

static void
model_count(struct model *m, size_t i, const struct server *s)
{
    struct model_counts   *c = &m->counts;
    const struct liveness *l = server_liveness(s);
    const struct failure  *f;
    enum health_state      hs = server_health(s, NULL).state;

    if ((unsigned)hs < HEALTH__COUNT)
        c->health[hs]++;
    if (l->present)
        c->live[l->state]++;
    else
        c->absent++;
    if (server_ending_busy(s) || server_state(s) == SERVER_ENDING)
        c->ending++;
    if (m->srv[i].tool_changes > 0)
        c->tools_changed++;
    if (server_is_tap(s)) {
        const struct server_request *r = server_request(s, 0);

        c->taps++;
        c->in_flight += server_in_flight(s);
        if (r != NULL && (c->oldest_at == 0 || r->started_at < c->oldest_at))
            c->oldest_at = r->started_at;
    }
    f = model_current_failure(s);
    if (f == NULL)
        return;
    c->failing++;
    c->kind[f->kind]++;
    if (f->kind == FAILURE_HTTP_STATUS && f->http_status != 0) {
        size_t h;

        for (h = 0; h < c->nhttp; h++) {
            if (c->http[h].status == f->http_status &&
                c->http[h].reason == f->reason)
                break;
        }
        if (h == c->nhttp && c->nhttp < MODEL_HTTP_SLOTS) {
            c->http[h].status = f->http_status;
            c->http[h].reason = f->reason;
            c->http[h].n = 0;
            c->nhttp++;
        }
        if (h < c->nhttp)
            c->http[h].n++;
    }
}

/* The header graph's sample: servers ok now. Not while every server is
 * still pending (the first dials): that is no dip. */
static void
model_ok_sample(struct model *m, int64_t now_ms)
{
    if (m->n > 0 && m->counts.health[HEALTH_PENDING] == m->n)
        return;
    trend_fleet_sample(&m->ok_trend, now_ms, m->counts.health[HEALTH_OK],
        m->n);
}

void
model_rebuild(struct model *m, int64_t now_ms)
{
    size_t old_pos = m->sel_pos;
    char   sel_group[sizeof(m->groups[0].name)] = "";

    m->now_ms = now_ms;
    if (!m->dirty) {
        model_ok_sample(m, now_ms);
        return;
    }
    /* A selected header is found again by its name. */
    if (model_header(m, m->sel) != NULL)
        snprintf(sel_group, sizeof(sel_group), "%s",
            model_header(m, m->sel)->name);
    memset(&m->counts, 0, sizeof(m->counts));
    m->nvis = 0;
    m->longest_name = 0;
    for (size_t i = 0; i < m->n; i++) {
        const struct server *s = fleet_server(m->fleet, i);

        model_count(m, i, s);
        if (!model_matches(m, s))
            continue;
        model_keys(m, i);
        m->order[m->nvis++] = i;
        if (m->name_w[i] > m->longest_name)
            m->longest_name = m->name_w[i];
    }
    model_sorting = m;
    qsort(m->order, m->nvis, sizeof(*m->order), model_cmp);
    model_sorting = NULL;
    m->dirty = false;
    model_ok_sample(m, now_ms);
    m->nmatch = m->nvis;
    m->ngroups = 0;
    if (m->group != MODEL_GROUP_NONE)
        m->nvis = model_group_rows(m, m->nvis);
    for (size_t g = 0; sel_group[0] != '\0' && g < m->ngroups; g++) {
        if (strcmp(m->groups[g].name, sel_group) == 0)
            m->sel = m->n + g;
    }
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

/* True when neither the sort nor the filter reads a server's state. */
static bool
model_order_static(const struct model *m)
{
    if (m->sort != MODEL_SORT_NAME && m->sort != MODEL_SORT_TRANSPORT)
        return false;
    if (m->group != MODEL_GROUP_NONE)
        return false;       /* a header's worst health reads state */
    for (size_t i = 0; i < m->nterms; i++) {
        switch (m->terms[i].field) {
        case MODEL_FIELD_NAME:
        case MODEL_FIELD_TAG:
        case MODEL_FIELD_TRANS:
            break;
        default:
            return false;
        }
    }
    return true;
}

void
model_refresh(struct model *m, int64_t now_ms)
{
    if (m->dirty || !model_order_static(m)) {
        m->dirty = true;
        model_rebuild(m, now_ms);
        return;
    }
    m->now_ms = now_ms;
    memset(&m->counts, 0, sizeof(m->counts));
    for (size_t i = 0; i < m->n; i++)
        model_count(m, i, fleet_server(m->fleet, i));
    model_ok_sample(m, now_ms);
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
