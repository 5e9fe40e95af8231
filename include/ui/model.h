/*
 * The table's model: which servers are visible (filtered) and in what
 * order (sorted), the selection, the marks, the header's counts, and what
 * the UI remembers of each server that the engine does not keep (the tool
 * list before its last change). It reads the fleet through const getters
 * only and is rebuilt only when marked dirty (an engine event, a new
 * filter or sort), so drawing stays proportional to the visible rows. No
 * terminal here.
 */
#ifndef MCPTOP_UI_MODEL_H
#define MCPTOP_UI_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/event.h"
#include "engine/failure.h"
#include "engine/fleet.h"
#include "engine/health.h"
#include "engine/liveness.h"

/* One sort per table column, in the columns' order; the name is shown in
 * the header. */
#define MODEL_SORTS(X)                  \
    X(NAME,      "name")                \
    X(TRANSPORT, "transport")           \
    X(HEALTH,    "health")              \
    X(LIVENESS,  "liveness")            \
    X(AGE,       "age")                 \
    X(STREAK,    "streak")              \
    X(SESSION,   "session")             \
    X(PROTOCOL,  "protocol")            \
    X(TOOLS,     "tools")               \
    X(RTT,       "round trip")          \
    X(FAILURE,   "last failure")        \
    X(DELIVERED, "delivered")           \
    X(HTTP,      "http status")         \
    X(HISTORY,   "history")

enum model_sort {
#define X(id, name) MODEL_SORT_##id,
    MODEL_SORTS(X)
#undef X
    MODEL_SORT__COUNT
};

#define MODEL_NONE ((size_t)-1)
#define MODEL_HTTP_SLOTS 8
#define MODEL_FILTER_TERMS 16

/* One http_status group of the incident line: "502 bad_gateway x20". */
struct model_http {
    long                status;
    enum failure_reason reason;
    size_t              n;
};

struct model_counts {
    size_t health[HEALTH__COUNT];   /* what the header counts */
    size_t live[LIVENESS__COUNT];
    size_t absent;
    size_t ending;                  /* servers whose ending is under way */
    size_t failing;                 /* servers whose last exchange failed */
    size_t kind[FAILURE__COUNT];    /* servers per current failure kind */
    struct model_http http[MODEL_HTTP_SLOTS];   /* http_status split */
    size_t nhttp;
    size_t tools_changed;           /* servers whose tools changed */
    size_t taps;                    /* servers read from a tap */
    size_t in_flight;               /* their requests in flight */
    int64_t oldest_at;              /* when the oldest began (epoch ms),
                                       0 none */
};

/* A filter term: [!][field:]value. */
enum model_field {
    MODEL_FIELD_ANY,
    MODEL_FIELD_NAME,
    MODEL_FIELD_TAG,
    MODEL_FIELD_KIND,
    MODEL_FIELD_LIVE,
    MODEL_FIELD_HEALTH,
    MODEL_FIELD_TRANS,
    MODEL_FIELD_REASON,
    MODEL_FIELD_HTTP,
};

struct model_term {
    bool             neg;
    enum model_field field;
    char             value[64];     /* lower case */
};

/* What the UI keeps per server (server_data points here). */
struct model_server {
    char         **tools;           /* the last listing seen, or NULL */
    long           ntools;          /* -1 until one was seen */
    char         **added;           /* the last change: new names... */
    size_t         nadded;
    char         **removed;         /* ...and names gone */
    size_t         nremoved;
    unsigned long  tool_changes;    /* listings with a different set */
    int64_t        tools_changed_at;    /* epoch ms of the last change */
};

struct model {
    struct fleet        *fleet;     /* borrowed */
    size_t               n;         /* servers in the fleet */
    size_t              *order;     /* visible server indexes, sorted */
    size_t               nvis;
    bool                *marked;    /* per server index */
    size_t               nmarked;
    size_t               sel;       /* selected server index, or NONE */
    size_t               sel_pos;   /* its position in order */
    size_t               top;       /* first visible position */
    enum model_sort      sort;
    bool                 invert;    /* the sort's order reversed */
    char                 filter[128];   /* as typed */
    struct model_term    terms[MODEL_FILTER_TERMS];
    size_t               nterms;
    char                 filter_error[96];  /* "" when the filter parses */
    bool                 dirty;
    struct model_counts  counts;
    int64_t              now_ms;    /* wall clock of the last rebuild */
    struct model_server *srv;       /* per server index */
    int                 *name_w;    /* display width of each name */
    int                  longest_name;  /* the widest visible name */
    /* scratch for sorting */
    double              *key;
    int                 *rank;
    bool                *missing;
};

/* Attach to fleet f: one model_server per server, set as its server_data. */
void model_init(struct model *m, struct fleet *f);
void model_done(struct model *m);
/*
 * After fleet_reload: the rows become the fleet's servers now. A server
 * that stayed keeps what the model knew of it (its tool list and changes,
 * its mark, the selection); one that left is detached, so its last events
 * find no row. old (nold entries, borrowed) are the servers before the
 * reload. The sort and the filter stay.
 */
void model_refleet(struct model *m, struct server *const *old, size_t nold);
/* Refilter, resort and recount when dirty; keeps the selected server. */
void model_rebuild(struct model *m, int64_t now_ms);
/* After engine events: recount, and refilter and resort only when the sort
 * or the filter reads state (a sort by name over a filter by name, tag or
 * transport keeps its order: only the counts move). */
void model_refresh(struct model *m, int64_t now_ms);
/* An engine event: remembers the tool list and its changes. */
void model_event(struct model *m, const struct event *e);

/* Move the selection by delta positions (clamped). */
void model_move(struct model *m, long delta);
/* Select the row at position pos (clamped). */
void model_goto(struct model *m, size_t pos);
/* Adjust top so the selection is inside a window of `rows` rows. */
void model_scroll(struct model *m, size_t rows);
/* Toggle the mark on server i. */
void model_toggle_mark(struct model *m, size_t i);
/*
 * Set the filter (copied; "" clears) and mark the model dirty. Terms are
 * separated by spaces and must all match: a bare word matches the name,
 * transport, tags, current failure kind, reason, health or liveness word;
 * name:, tag: (whole tag), kind:, health: (or state:), live:, trans:,
 * reason: and http: (a status prefix, "5" is every 5xx) match one field;
 * ! before a term negates it.
 * An unknown field leaves filter_error set and the term matching nothing.
 */
void model_set_filter(struct model *m, const char *filter);
/* Sort by s; the same sort again reverses it (k9s). */
void model_set_sort(struct model *m, enum model_sort s);

const char *model_sort_name(enum model_sort s);

/*
 * The server's current failure: the failure of its last exchange (the
 * server answered with an error, or the exchange was lost or unclear), or
 * an invalid declaration. NULL when the last exchange completed, nothing
 * failed, or the server is not monitored now (its last failure is
 * history). Borrowed, like server_last_failure.
 */
const struct failure *model_current_failure(const struct server *s);
/*
 * How many exchanges in a row failed, up to the last one (0 when it
 * completed), counted in the history ring; *more (may be NULL) is set when
 * the whole ring failed, so the streak is at least that.
 */
unsigned long model_fail_streak(const struct server *s, bool *more);
/* The round trip worth showing: the last completed one, or -1 when the
 * last exchange failed (an old value is stale), none completed, or the
 * server is not monitored now (paused, stopped, disabled). ms. */
double model_rtt(const struct server *s);
/* True when the server is monitored now: its health is not one of the
 * operator's states (paused, stopped, disabled). A row that is not shows
 * no observation as current. */
bool model_monitored(const struct server *s);

#endif
