/*
 * The event log's ring and its filter: what a health change, a liveness
 * change and an ending become as one line of the log pane (view_log.c
 * draws it). Each entry copies its text, sanitized, when it is logged.
 */
#include "ui/eventlog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/ending.h"
#include "engine/server.h"
#include "util/str.h"
#include "util/xmalloc.h"

void
eventlog_init(struct eventlog *g)
{
    memset(g, 0, sizeof(*g));
    g->ring = xcalloc(EVENTLOG_CAP, sizeof(*g->ring));
}

void
eventlog_done(struct eventlog *g)
{
    free(g->ring);
    memset(g, 0, sizeof(*g));
}

/* The server's name, transport and tags into a new entry. */
static struct eventlog_entry *
eventlog_add(struct eventlog *g, const struct event *e,
    enum eventlog_what what)
{
    struct eventlog_entry      *en = &g->ring[g->head];
    const struct config_server *d = server_decl(e->server);
    const char                 *name = server_name(e->server);

    memset(en, 0, sizeof(*en));
    en->ts = e->ts;
    en->what = what;
    str_sanitize(en->server, sizeof(en->server), name, strlen(name));
    snprintf(en->transport, sizeof(en->transport), "%s",
        server_transport_name(e->server));
    for (size_t i = 0; d != NULL && i < d->ntags; i++) {
        size_t len = strlen(en->tags);

        if (len + 2 >= sizeof(en->tags))
            break;
        if (len > 0)
            en->tags[len++] = ' ';
        str_sanitize(en->tags + len, sizeof(en->tags) - len, d->tags[i],
            strlen(d->tags[i]));
    }
    g->head = (g->head + 1) % EVENTLOG_CAP;
    if (g->n < EVENTLOG_CAP)
        g->n++;
    g->total++;
    return en;
}

/* The current failure's kind and reason (or HTTP status) into en. */
static void
eventlog_failure(struct eventlog_entry *en, const struct failure *f)
{
    if (f == NULL)
        return;
    snprintf(en->kind, sizeof(en->kind), "%s", failure_kind_name(f->kind));
    en->http_status = f->http_status > 0 ? f->http_status : 0;
    if (f->reason != FAILURE_REASON_NONE)
        snprintf(en->reason, sizeof(en->reason), "%s",
            failure_reason_name(f->reason));
    else if (f->http_status > 0)
        snprintf(en->reason, sizeof(en->reason), "%ld", f->http_status);
}

bool
eventlog_event(struct eventlog *g, const struct event *e, int *was)
{
    struct eventlog_entry *en;

    if (e->server == NULL || g->ring == NULL)
        return false;
    switch (e->type) {
    case EVENT_HEALTH:
        if (e->health == NULL || e->health_was >= HEALTH__COUNT ||
            e->health_was == e->health->state)
            return false;       /* the first verdict is not a change */
        en = eventlog_add(g, e, EVENTLOG_HEALTH);
        snprintf(en->from, sizeof(en->from), "%s",
            health_state_name(e->health_was));
        snprintf(en->to, sizeof(en->to), "%s",
            health_state_name(e->health->state));
        eventlog_failure(en, model_current_failure(e->server));
        if (en->kind[0] == '\0' && e->health->reason != NULL)
            str_sanitize(en->reason, sizeof(en->reason), e->health->reason,
                strlen(e->health->reason));
        return true;
    case EVENT_LIVENESS: {
        int now;

        if (e->liveness == NULL)
            return false;
        now = e->liveness->present ? (int)e->liveness->state + 1 : 0;
        if (was != NULL && *was == now)
            return false;
        en = eventlog_add(g, e, EVENTLOG_LIVENESS);
        snprintf(en->from, sizeof(en->from), "%s", was == NULL || *was == 0 ?
            "absent" : liveness_state_name((enum liveness_state)(*was - 1)));
        snprintf(en->to, sizeof(en->to), "%s", now == 0 ? "absent" :
            liveness_state_name(e->liveness->state));
        if (was != NULL)
            *was = now;
        if (e->liveness->present && e->liveness->has_error_code)
            snprintf(en->kind, sizeof(en->kind), "%s",
                failure_kind_name(e->liveness->error_code));
        eventlog_failure(en, model_current_failure(e->server));
        return true;
    }
    case EVENT_ENDING:
        if (e->ending == NULL)
            return false;
        en = eventlog_add(g, e, EVENTLOG_ENDING);
        snprintf(en->to, sizeof(en->to), "%s",
            ending_outcome_name(e->ending->outcome));
        if (e->ending->has_failure)
            snprintf(en->kind, sizeof(en->kind), "%s",
                failure_kind_name(e->ending->kind));
        en->http_status = e->ending->http_status > 0 ?
            e->ending->http_status : 0;
        if (e->ending->http_status > 0)
            snprintf(en->reason, sizeof(en->reason), "HTTP %ld",
                e->ending->http_status);
        else if (e->ending->exit_code >= 0)
            snprintf(en->reason, sizeof(en->reason), "exit %d",
                e->ending->exit_code);
        else if (e->ending->signal > 0)
            snprintf(en->reason, sizeof(en->reason), "signal %d",
                e->ending->signal);
        return true;
    default:
        return false;
    }
}

const struct eventlog_entry *
eventlog_get(const struct eventlog *g, size_t i)
{
    if (i >= g->n)
        return NULL;
    return &g->ring[(g->head + EVENTLOG_CAP - 1 - i) % EVENTLOG_CAP];
}

void
eventlog_set_filter(struct eventlog *g, const char *filter)
{
    static struct model scratch;    /* only its filter fields are used */

    memset(&scratch, 0, sizeof(scratch));
    model_set_filter(&scratch, filter);
    snprintf(g->filter, sizeof(g->filter), "%s", scratch.filter);
    memcpy(g->terms, scratch.terms, sizeof(g->terms));
    g->nterms = scratch.nterms;
    snprintf(g->filter_error, sizeof(g->filter_error), "%s",
        scratch.filter_error);
}

static bool
eventlog_contains(const char *hay, const char *needle)
{
    size_t n = strlen(needle);

    for (; *hay != '\0'; hay++) {
        if (strncasecmp(hay, needle, n) == 0)
            return true;
    }
    return n == 0;
}

static bool
eventlog_prefix(const char *s, const char *prefix)
{
    return strncasecmp(s, prefix, strlen(prefix)) == 0;
}

/* Whole-word match of value among the space separated tags. */
static bool
eventlog_tag(const char *tags, const char *value)
{
    size_t n = strlen(value);

    for (const char *p = tags; *p != '\0';) {
        size_t w = strcspn(p, " ");

        if (w == n && strncasecmp(p, value, n) == 0)
            return true;
        p += w;
        while (*p == ' ')
            p++;
    }
    return false;
}

static bool
eventlog_term(const struct model_term *t, const struct eventlog_entry *en)
{
    char http[24];

    switch (t->field) {
    case MODEL_FIELD_NAME:
        return eventlog_contains(en->server, t->value);
    case MODEL_FIELD_TAG:
        return eventlog_tag(en->tags, t->value);
    case MODEL_FIELD_KIND:
        return en->kind[0] != '\0' && eventlog_prefix(en->kind, t->value);
    case MODEL_FIELD_REASON:
        return en->reason[0] != '\0' && eventlog_prefix(en->reason,
            t->value);
    case MODEL_FIELD_HEALTH:
        return en->what == EVENTLOG_HEALTH &&
            (eventlog_prefix(en->from, t->value) ||
            eventlog_prefix(en->to, t->value));
    case MODEL_FIELD_LIVE:
        return en->what == EVENTLOG_LIVENESS &&
            (eventlog_prefix(en->from, t->value) ||
            eventlog_prefix(en->to, t->value));
    case MODEL_FIELD_TRANS:
        return eventlog_prefix(en->transport, t->value);
    case MODEL_FIELD_HTTP:
        if (en->http_status <= 0)
            return false;
        snprintf(http, sizeof(http), "%ld", en->http_status);
        return eventlog_prefix(http, t->value);
    default:
        break;
    }
    return eventlog_contains(en->server, t->value) ||
        eventlog_contains(en->transport, t->value) ||
        eventlog_contains(en->tags, t->value) ||
        eventlog_contains(en->from, t->value) ||
        eventlog_contains(en->to, t->value) ||
        eventlog_contains(en->kind, t->value) ||
        eventlog_contains(en->reason, t->value) ||
        (en->what == EVENTLOG_ENDING && eventlog_contains("ending",
        t->value));
}

bool
eventlog_matches(const struct eventlog *g, const struct eventlog_entry *en)
{
    for (size_t i = 0; i < g->nterms; i++) {
        if (eventlog_term(&g->terms[i], en) == g->terms[i].neg)
            return false;
    }
    return true;
}
