/*
 * The event log (issue 34): every health and liveness change and every
 * ending across the fleet, kept in a bounded ring (EVENTLOG_CAP entries,
 * the oldest dropped), read newest first, filtered with the table's
 * language. Entries copy what they show (the server may leave on a
 * reload). No terminal here.
 */
#ifndef MCPTOP_UI_EVENTLOG_H
#define MCPTOP_UI_EVENTLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/event.h"
#include "ui/model.h"

#define EVENTLOG_CAP 1000

enum eventlog_what {
    EVENTLOG_HEALTH,
    EVENTLOG_LIVENESS,
    EVENTLOG_ENDING,
};

struct eventlog_entry {
    int64_t            ts;              /* epoch ms */
    enum eventlog_what what;
    char               server[64];      /* sanitized */
    char               transport[8];
    char               tags[96];        /* sanitized, space separated */
    char               from[24];        /* "" for an ending */
    char               to[24];          /* the new state, or the outcome */
    char               kind[32];        /* the failure kind, or "" */
    char               reason[48];      /* the reason, status or exit */
    long               http_status;     /* 0: none */
};

struct eventlog {
    struct eventlog_entry *ring;        /* EVENTLOG_CAP of them */
    size_t                 head;        /* the next slot written */
    size_t                 n;           /* entries kept */
    unsigned long          total;       /* entries ever logged */
    char                   filter[128];
    struct model_term      terms[MODEL_FILTER_TERMS];
    size_t                 nterms;
    char                   filter_error[96];
};

void eventlog_init(struct eventlog *g);
void eventlog_done(struct eventlog *g);
/* An engine event: a health change (not the first verdict), a liveness
 * change (from the state the model last saw, *was, updated here; -1 for
 * absent) or an ending's outcome is logged; other events are not. true
 * when an entry was added. */
bool eventlog_event(struct eventlog *g, const struct event *e, int *was);
/* The i-th entry, newest first (0 the newest), or NULL past the end. */
const struct eventlog_entry *eventlog_get(const struct eventlog *g,
    size_t i);
/* The filter (the table's language: name:, tag:, kind:, reason:, health:,
 * live:, trans:, http:, a bare word anywhere in the entry; health: and
 * live: match a change of that sort from or to the state). */
void eventlog_set_filter(struct eventlog *g, const char *filter);
bool eventlog_matches(const struct eventlog *g,
    const struct eventlog_entry *en);

#endif
