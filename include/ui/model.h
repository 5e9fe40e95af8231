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
#include "ui/trend.h"

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

/* How the rows are grouped (issue 34): by the current failure (kind,
 * HTTP status, reason), the first tag, the host (the URL's, or the stdio
 * command's name), the transport; or not at all. */
#define MODEL_GROUPS(X)                 \
    X(NONE,      "none")                \
    X(CAUSE,     "cause")               \
    X(TAG,       "tag")                 \
    X(HOST,      "host")                \
    X(TRANSPORT, "transport")

enum model_group {
#define X(id, name) MODEL_GROUP_##id,
    MODEL_GROUPS(X)
#undef X
    MODEL_GROUP__COUNT
};

/* One group's header row: its name, how many servers match the filter in
 * it (shown or folded), the worst health among them. */
struct model_group_row {
    char              name[96];
    size_t            count;
    enum health_state worst;
    bool              folded;
};

#define MODEL_NONE ((size_t)-1)
#define MODEL_FOLDED 64
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
    MODEL_FIELD_TOOLS,          /* tools:changed */
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
    int            live_seen;       /* the event log's last liveness: its
                                       state + 1, 0 absent */
};

struct model {
    struct fleet        *fleet;     /* borrowed */
    size_t               n;         /* servers in the fleet */
    size_t              *order;     /* visible rows, sorted: a server index,
                                       or n + g for group g's header */
    size_t               nvis;      /* rows in order (headers too) */
    size_t               nmatch;    /* servers the filter keeps */
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
    enum model_group     group;
    struct model_group_row *groups; /* ngroups of them, in row order */
    size_t               ngroups;
    char                 folded[MODEL_FOLDED][96];  /* names folded */
    size_t               nfolded;
    struct model_counts  counts;
    int64_t              now_ms;    /* wall clock of the last rebuild */
    struct trend_fleet   ok_trend;  /* the header's graph: servers ok */
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
/* The server of the selected row, MODEL_NONE when none is selected or
 * the selection is a group's header. */
size_t model_sel_server(const struct model *m);
/* Group g's header row when order entry idx is one, else NULL. */
const struct model_group_row *model_header(const struct model *m,
    size_t idx);
/* Group the rows by g (and mark the model dirty); folds are forgotten
 * when the grouping changes. */
void model_set_group(struct model *m, enum model_group g);
const char *model_group_name(enum model_group g);
/* --group WORD / :group WORD: false when WORD names no grouping. */
bool model_group_parse(const char *word, enum model_group *g);
/* Enter on a header row: fold or unfold that group. true when the
 * selection was a header (and the fold changed). */
bool model_group_toggle(struct model *m);
/* model_group.c, for model_rebuild: the nv sorted server indexes in
 * m->order become the grouped rows (headers, then each unfolded group's
 * servers in that order); returns the rows. */
size_t model_group_rows(struct model *m, size_t nv);
/* The rank of a health state for sorting: what needs a look first. */
int model_health_rank(enum health_state h);
/* Toggle the mark on server i. */
void model_toggle_mark(struct model *m, size_t i);
/*
 * Set the filter (copied; "" clears) and mark the model dirty. Terms are
 * separated by spaces and must all match: a bare word matches the name,
 * transport, tags, current failure kind, reason, health or liveness word;
 * name:, tag: (whole tag), kind:, health: (or state:), live:, trans:,
 * reason: and http: (a status prefix, "5" is every 5xx) match one field;
 * tools:changed keeps the servers whose tool list changed (the incident
 * line's "tools changed"); an empty value ("reason:", "http:") matches
 * any value, so "!reason:" is "no reason";
 * ! before a term negates it.
 * An unknown field leaves filter_error set and the term matching nothing.
 */
void model_set_filter(struct model *m, const char *filter);
/* Sort by s; the same sort again reverses it (k9s). */
void model_set_sort(struct model *m, enum model_sort s);

const char *model_sort_name(enum model_sort s);
/*
 * --sort COL[,desc]: the column's word (model_sort_columns lists them;
 * the filter's field names and "round-trip", "last-failure" too, any
 * case) into *s, and *invert true after ",desc" (the column's own order
 * reversed, as I does; ",asc" keeps it). false with the reason in err (n
 * bytes) on an unknown column or suffix.
 */
bool model_sort_parse(const char *spec, enum model_sort *s, bool *invert,
    char *err, size_t n);
/* The column words model_sort_parse takes, space separated (static). */
const char *model_sort_columns(void);
/* The word of sort s for the command line ("rtt", "failure"), static. */
const char *model_sort_word(enum model_sort s);
/* true when filter parses (model_set_filter's language); else false with
 * the reason in err (n bytes). */
bool model_filter_check(const char *filter, char *err, size_t n);

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
