/*
 * The table's model: which servers are visible (filtered) and in what
 * order (sorted), the selection, the marks, and the header's counts. It
 * reads the fleet through const getters only and is rebuilt only when
 * marked dirty (an engine event, a new filter or sort), so drawing stays
 * proportional to the visible rows. No terminal here.
 */
#ifndef MCPTOP_UI_MODEL_H
#define MCPTOP_UI_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/failure.h"
#include "engine/fleet.h"
#include "engine/liveness.h"

#define MODEL_SORTS(X)                  \
    X(NAME,     "name")                 \
    X(LIVENESS, "liveness")             \
    X(FAILURE,  "last failure")         \
    X(RTT,      "round trip")           \
    X(AGE,      "age")

enum model_sort {
#define X(id, name) MODEL_SORT_##id,
    MODEL_SORTS(X)
#undef X
    MODEL_SORT__COUNT
};

#define MODEL_NONE ((size_t)-1)
#define MODEL_HTTP_SLOTS 8

struct model_counts {
    size_t live[LIVENESS__COUNT];
    size_t absent;
    size_t ending;                  /* servers whose ending is under way */
    size_t kind[FAILURE__COUNT];    /* servers per current failure kind */
    long   http_status[MODEL_HTTP_SLOTS];   /* http_status split by code */
    size_t http_n[MODEL_HTTP_SLOTS];
    size_t nhttp;
};

struct model {
    struct fleet       *fleet;      /* borrowed */
    size_t              n;          /* servers in the fleet */
    size_t             *order;      /* visible server indexes, sorted */
    size_t              nvis;
    bool               *marked;     /* per server index */
    size_t              nmarked;
    size_t              sel;        /* selected server index, or NONE */
    size_t              sel_pos;    /* its position in order */
    size_t              top;        /* first visible position */
    enum model_sort     sort;
    char                filter[128];
    bool                dirty;
    struct model_counts counts;
    int64_t             now_ms;     /* wall clock of the last rebuild */
    /* scratch for sorting */
    double             *key;
    int                *rank;
};

void model_init(struct model *m, struct fleet *f);
void model_done(struct model *m);
/* Refilter, resort and recount when dirty; keeps the selected server. */
void model_rebuild(struct model *m, int64_t now_ms);

/* Move the selection by delta positions (clamped). */
void model_move(struct model *m, long delta);
/* Select the row at position pos (clamped). */
void model_goto(struct model *m, size_t pos);
/* Adjust top so the selection is inside a window of `rows` rows. */
void model_scroll(struct model *m, size_t rows);
/* Toggle the mark on server i. */
void model_toggle_mark(struct model *m, size_t i);
/* Set the filter (copied; "" clears). Marks the model dirty. */
void model_set_filter(struct model *m, const char *filter);

const char *model_sort_name(enum model_sort s);

/* The server's current failure: its last failure while it is not
 * reachable (or invalid). false when none. */
bool model_current_failure(const struct server *s, enum failure_kind *kind,
    long *http_status);

#endif
