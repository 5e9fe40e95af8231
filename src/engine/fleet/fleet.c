/*
 * The fleet owns the servers, the libcurl multi glue and the subscriber
 * list. Servers emit into fleet_emit, which fans out; nothing here knows
 * how events are shown.
 */
#include "engine/fleet.h"
#include "fleet/fleet_int.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "engine/child.h"
#include "engine/oauth.h"
#include "engine/curlev.h"
#include "engine/http.h"
#include "engine/ending.h"
#include "engine/server.h"
#include "util/clock.h"
#include "util/str.h"
#include "util/xmalloc.h"

struct fleet_sub {
    event_cb cb;
    void    *arg;
};

struct fleet {
    struct ev_loop      *loop;
    const struct config *cfg;
    struct curlev       *curl;
    struct server_env    env;
    struct server      **servers;
    size_t               nservers;
    struct fleet_sub    *subs;
    size_t               nsubs;
    /* first dials, at most FLEET_MAX_DIALS at once */
    bool                *to_start;
    size_t               next_start;
    size_t               dialing;
    bool                 starting;
    unsigned long        busy;      /* unsettled endings, abandoned dials */
    char                *warning;   /* the fleet may not fit, or NULL */
    /* reloads: configs taken (their declarations outlive them in kept
     * servers), and servers removed, kept until the fleet goes */
    struct config      **owned;
    size_t               nowned;
    struct server      **retired;
    size_t               nretired;
    size_t               next_index;    /* the next server's number */
    int64_t              end_all_at;    /* epoch ms of fleet_end_all, 0 */
    ev_timer             sweep;         /* frees what reloads retired */
    bool                 sweeping;
    bool                 nested;        /* fleet_options.nested */
};

/* How often what reloads retired is looked at, seconds. */
#define FLEET_SWEEP_S 2.0

/* Dials in flight at once on start-up: kinder to the servers, and glibc
 * keeps far less of the burst (PERF-NOTES: 5 vs 17 KiB per session). */
#define FLEET_MAX_DIALS 50

static void fleet_start_more(struct fleet *f);
static void fleet_sweep_cb(struct ev_loop *loop, ev_timer *w, int revents);
static void fleet_sweep_stop(struct fleet *f);

static void
fleet_emit(void *arg, const struct event *e)
{
    struct fleet *f = arg;

    for (size_t i = 0; i < f->nsubs; i++)
        f->subs[i].cb(f->subs[i].arg, e);
    if (e->type == EVENT_EXCHANGE && f->dialing > 0 && e->op != NULL &&
        strcmp(e->op, "dial") == 0 && server_dials(e->server) <= 1) {
        /* A first dial settled: let the next one go. */
        f->dialing--;
        fleet_start_more(f);
    }
}

static void
fleet_start_more(struct fleet *f)
{
    /* server_start may settle at once (and re-enter through fleet_emit). */
    if (f->starting)
        return;
    f->starting = true;
    while (f->dialing < FLEET_MAX_DIALS && f->next_start < f->nservers) {
        size_t i = f->next_start++;

        if (f->to_start != NULL && !f->to_start[i])
            continue;
        f->dialing++;
        server_start(f->servers[i]);
        if (server_state(f->servers[i]) == SERVER_DISABLED)
            f->dialing--;       /* nothing to wait for */
    }
    f->starting = false;
}

/* Will the fleet fit in the descriptors this process may open? Each HTTP
 * server needs a connection (two with its stream), each stdio server three
 * pipes; the rest is the loop's own. Said once, before anything starts,
 * so a local limit is never read as servers refusing. */
static char *
fleet_fd_warning(const struct config *cfg)
{
    struct rlimit lim;
    unsigned long need = 32;

    for (size_t i = 0; i < cfg->nservers; i++)
        need += cfg->servers[i].transport == CONFIG_STDIO ? 3 : 2;
    if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY ||
        need <= lim.rlim_cur)
        return NULL;
    return str_printf("%zu servers need about %lu file descriptors and this "
        "process may open %lu (ulimit -n, hard limit %lu): HTTP requests "
        "will wait for a free connection, and what cannot start fails with "
        "\"local limit: too many open files\"; raise the limit or split the "
        "fleet (--shard)", cfg->nservers, need,
        (unsigned long)lim.rlim_cur, lim.rlim_max == RLIM_INFINITY ?
        0UL : (unsigned long)lim.rlim_max);
}

/* How many sockets HTTP may hold open at once: what the descriptor limit
 * leaves after the stdio servers' pipes and the loop's own. 0: no bound. */
static long
fleet_socket_budget(const struct config *cfg)
{
    struct rlimit lim;
    long          left;

    if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY)
        return 0;
    left = (long)lim.rlim_cur - 48;
    for (size_t i = 0; i < cfg->nservers; i++) {
        if (cfg->servers[i].transport == CONFIG_STDIO)
            left -= 3;
    }
    return left > 8 ? left : 8;
}

const char *
fleet_warning(const struct fleet *f)
{
    return f->warning;
}

struct fleet *
fleet_new(struct ev_loop *loop, const struct config *cfg,
    const struct fleet_options *opt, char **cause)
{
    struct fleet *f = xcalloc(1, sizeof(*f));

    f->loop = loop;
    ev_timer_init(&f->sweep, fleet_sweep_cb, FLEET_SWEEP_S, FLEET_SWEEP_S);
    f->sweep.data = f;
    f->cfg = cfg;
    f->warning = fleet_fd_warning(cfg);
    /* One cached connection per server (PERF-NOTES: fewer and pings
     * reconnect), plus room for the GET streams. */
    f->curl = curlev_new(loop, cfg->nservers, fleet_socket_budget(cfg));
    if (f->curl == NULL) {
        *cause = xstrdup("cannot start libcurl's multi interface");
        free(f);
        return NULL;
    }
    f->env.loop = loop;
    f->env.curl = f->curl;
    f->env.emit = fleet_emit;
    f->env.emit_arg = f;
    f->env.busy_total = &f->busy;
    if (opt != NULL) {
        f->env.no_streams = opt->no_streams;
        f->env.no_pings = opt->no_pings;
        f->env.no_redial = opt->no_redial;
        f->env.timeout_ms = opt->timeout_ms;
        f->env.open_deadline_ms = opt->open_deadline_ms;
        f->env.log = opt->log;
        f->env.test_keep_id = opt->test_keep_id;
        f->nested = opt->nested;
    }
    f->nservers = cfg->nservers;
    f->servers = xcalloc(f->nservers ? f->nservers : 1, sizeof(*f->servers));
    for (size_t i = 0; i < f->nservers; i++)
        f->servers[i] = server_new(&f->env, &cfg->servers[i], i);
    f->next_index = f->nservers;
    return f;
}

/* How long what a server left behind gets between SIGTERM and SIGKILL at
 * exit: the teardown deadline, at most 2 s. */
static double
fleet_orphan_grace_s(const struct fleet *f)
{
    long ms = fleet_teardown_ms(f);

    return ms > 2000 || ms <= 0 ? 2.0 : (double)ms / 1000.0;
}

void
fleet_free(struct fleet *f)
{
    double grace;

    if (f == NULL)
        return;
    grace = fleet_orphan_grace_s(f);    /* before the configs go */
    fleet_sweep_stop(f);
    for (size_t i = 0; i < f->nservers; i++)
        server_free(f->servers[i]);
    for (size_t i = 0; i < f->nretired; i++)
        server_free(f->retired[i]);
    free(f->retired);
    for (size_t i = 0; i < f->nowned; i++)
        config_free(f->owned[i]);
    free(f->owned);
    /* Nothing of a child's process group outlives the fleet, nor what a
     * server left behind outside its group (re-parented to mcptop). A
     * nested fleet leaves that to the process's own: the groups are all
     * the process's, and the wait would hold up its loop. */
    if (!f->nested) {
        child_groups_kill_all();
        child_orphans_end(grace);
    }
    free(f->servers);
    curlev_free(f->curl);
    free(f->subs);
    free(f->to_start);
    free(f->warning);
    free(f);
}

bool
fleet_exit(struct fleet *f)
{
    if (f == NULL || xmalloc_leak_checked()) {
        fleet_free(f);
        return true;
    }
    child_groups_kill_all();
    child_orphans_end(fleet_orphan_grace_s(f));
    return false;
}

void
fleet_subscribe(struct fleet *f, event_cb cb, void *arg)
{
    f->subs = xrealloc(f->subs, (f->nsubs + 1) * sizeof(*f->subs));
    f->subs[f->nsubs].cb = cb;
    f->subs[f->nsubs].arg = arg;
    f->nsubs++;
}

void
fleet_start(struct fleet *f)
{
    fleet_start_some(f, NULL);
}

void
fleet_start_some(struct fleet *f, const bool *chosen)
{
    free(f->to_start);
    f->to_start = NULL;
    if (chosen != NULL) {
        f->to_start = xcalloc(f->nservers ? f->nservers : 1, sizeof(bool));
        for (size_t i = 0; i < f->nservers; i++)
            f->to_start[i] = chosen[i];
    }
    f->next_start = 0;
    fleet_start_more(f);
}

void
fleet_stop(struct fleet *f)
{
    for (size_t i = 0; i < f->nservers; i++)
        server_stop(f->servers[i]);
    for (size_t i = 0; i < f->nretired; i++)
        server_stop(f->retired[i]);
}

/* One name of the old fleet, for finding it again. */
struct fleet_name {
    const char *name;
    size_t      i;
};

static int
fleet_name_cmp(const void *a, const void *b)
{
    return strcmp(((const struct fleet_name *)a)->name,
        ((const struct fleet_name *)b)->name);
}

/* True when a server (current or retired) still has its declaration in
 * config c. */
static bool
fleet_config_used(const struct fleet *f, const struct config *c)
{
    const struct config_server *lo = c->servers, *hi = c->servers +
        c->nservers;

    for (size_t i = 0; i < f->nservers; i++) {
        const struct config_server *d = server_decl(f->servers[i]);

        if (d >= lo && d < hi)
            return true;
    }
    for (size_t i = 0; i < f->nretired; i++) {
        const struct config_server *d = server_decl(f->retired[i]);

        if (d >= lo && d < hi)
            return true;
    }
    return false;
}

/*
 * Free what reloads retired and nothing needs any more: a removed or
 * changed server once its ending has settled (no event of it can come),
 * then a reload's config once no server has its declaration in it (the
 * current config stays). Without this every SIGHUP kept its retired
 * servers and config until exit (about 1 MB a reload of 200 changed
 * servers, for ever).
 */
static void
fleet_sweep(struct fleet *f)
{
    size_t k = 0;

    for (size_t i = 0; i < f->nretired; i++) {
        if (server_ending_busy(f->retired[i])) {
            f->retired[k++] = f->retired[i];
            continue;
        }
        server_free(f->retired[i]);
    }
    f->nretired = k;
    k = 0;
    for (size_t i = 0; i < f->nowned; i++) {
        if (f->owned[i] == f->cfg || fleet_config_used(f, f->owned[i])) {
            f->owned[k++] = f->owned[i];
            continue;
        }
        config_free(f->owned[i]);
    }
    f->nowned = k;
    if (f->nretired == 0)
        fleet_sweep_stop(f);
}

static void
fleet_sweep_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    fleet_sweep(w->data);
}

/* The sweep runs while something is retired; it alone never keeps the
 * loop running. */
static void
fleet_sweep_start(struct fleet *f)
{
    if (f->sweeping || f->nretired == 0)
        return;
    f->sweeping = true;
    ev_timer_again(f->loop, &f->sweep);
    ev_unref(f->loop);
}

static void
fleet_sweep_stop(struct fleet *f)
{
    if (!f->sweeping)
        return;
    f->sweeping = false;
    ev_ref(f->loop);
    ev_timer_stop(f->loop, &f->sweep);
}

size_t
fleet_retired_count(const struct fleet *f, size_t *configs)
{
    if (configs != NULL)
        *configs = f->nowned;
    return f->nretired;
}

int
fleet_reload(struct fleet *f, struct config *cfg, char **cause)
{
    size_t             n = f->nservers;
    struct fleet_name *names = xcalloc(n ? n : 1, sizeof(*names));
    bool              *kept = xcalloc(n ? n : 1, sizeof(*kept));
    struct server    **next = xcalloc(cfg->nservers ? cfg->nservers : 1,
        sizeof(*next));
    bool              *fresh = xcalloc(cfg->nservers ? cfg->nservers : 1,
        sizeof(*fresh));
    size_t             added = 0, removed = 0, same = 0;

    (void)cause;
    /* Old names sorted once: each new one is found in O(log n). */
    for (size_t i = 0; i < n; i++) {
        names[i].name = server_name(f->servers[i]);
        names[i].i = i;
    }
    qsort(names, n, sizeof(*names), fleet_name_cmp);
    for (size_t j = 0; j < cfg->nservers; j++) {
        const struct config_server *d = &cfg->servers[j];
        struct fleet_name           key = { .name = d->name };
        struct fleet_name          *hit = n > 0 ? bsearch(&key, names, n,
            sizeof(*names), fleet_name_cmp) : NULL;

        if (hit != NULL && !kept[hit->i] &&
            config_server_same(server_decl(f->servers[hit->i]), d)) {
            /* Unchanged: it goes on, with the declaration it has (equal,
             * and kept alive with its config). */
            next[j] = f->servers[hit->i];
            kept[hit->i] = true;
            same++;
            continue;
        }
        next[j] = server_new(&f->env, d, f->next_index++);
        fresh[j] = true;
        added++;
    }
    /* Removed or changed: its session is ended, and it is kept (closed)
     * until the fleet goes, since its events may still arrive. */
    for (size_t i = 0; i < n; i++) {
        if (kept[i])
            continue;
        if (server_end(f->servers[i], false) == NULL)
            server_stop(f->servers[i]);
        f->retired = xrealloc(f->retired, (f->nretired + 1) *
            sizeof(*f->retired));
        f->retired[f->nretired++] = f->servers[i];
        removed++;
    }
    free(f->servers);
    f->servers = next;
    f->nservers = cfg->nservers;
    f->owned = xrealloc(f->owned, (f->nowned + 1) * sizeof(*f->owned));
    f->owned[f->nowned++] = cfg;
    f->cfg = cfg;
    free(f->warning);
    f->warning = fleet_fd_warning(cfg);
    /* The new ones dial like a start: at most FLEET_MAX_DIALS at once. */
    free(f->to_start);
    f->to_start = fresh;
    f->next_start = 0;
    fleet_start_more(f);
    free(names);
    free(kept);
    /* Not freed here: the caller may still read the servers it had
     * before the reload (to carry its rows over); the sweep comes later. */
    fleet_sweep_start(f);
    if (f->env.log != NULL)
        fprintf(f->env.log, "fleet reloaded: %zu kept, %zu added, %zu "
            "removed or changed (their sessions ended); held until their "
            "endings settle: %zu servers, %zu reload configs\n", same, added,
            removed, f->nretired, f->nowned);
    return 0;
}

size_t
fleet_size(const struct fleet *f)
{
    return f->nservers;
}

struct server *
fleet_server(const struct fleet *f, size_t i)
{
    return i < f->nservers ? f->servers[i] : NULL;
}

const struct config *
fleet_config(const struct fleet *f)
{
    return f->cfg;
}

struct ev_loop *
fleet_loop(const struct fleet *f)
{
    return f->loop;
}

const struct server_env *
fleet_env(const struct fleet *f)
{
    return &f->env;
}

size_t
fleet_end_all(struct fleet *f)
{
    size_t n = 0;

    if (f->end_all_at == 0)
        f->end_all_at = clock_wall_ms();

    for (size_t i = 0; i < f->nservers; i++) {
        if (server_end(f->servers[i], false) != NULL)
            n++;
    }
    return n;
}

/* One server's part of fleet_unended: 1 when its ending since end_all_at
 * did not end its session, with *asked counting the endings. */
static size_t
fleet_unended_one(const struct fleet *f, const struct server *s,
    size_t *asked)
{
    size_t               n = server_ending_count(s);
    const struct ending *e = n > 0 ? server_ending(s, n - 1) : NULL;

    if (e == NULL || e->started_at < f->end_all_at)
        return 0;
    (*asked)++;
    switch (e->outcome) {
    case ENDING_REJECTED:
        /* A 400 says the id is not one the server holds (an Express
         * server's "No valid session ID"): nothing is kept there. */
        return e->http_status == 400 ? 0 : 1;
    case ENDING_PENDING:
    case ENDING_FAILED:
    case ENDING_TIMED_OUT:
        return 1;
    default:
        return 0;
    }
}

size_t
fleet_unended(const struct fleet *f, size_t *asked)
{
    size_t n = 0;

    *asked = 0;
    if (f->end_all_at == 0)
        return 0;
    for (size_t i = 0; i < f->nservers; i++)
        n += fleet_unended_one(f, f->servers[i], asked);
    for (size_t i = 0; i < f->nretired; i++)
        n += fleet_unended_one(f, f->retired[i], asked);
    return n;
}

bool
fleet_endings_busy(const struct fleet *f)
{
    return f->busy > 0;
}

bool
fleet_settling(const struct fleet *f)
{
    return f->busy > 0 || oauth_token_requests() > 0;
}

long
fleet_teardown_ms(const struct fleet *f)
{
    long t = 0;

    for (size_t i = 0; i < f->cfg->nservers; i++) {
        if (f->cfg->servers[i].teardown_ms > t)
            t = f->cfg->servers[i].teardown_ms;
    }
    return t > 0 ? t : CONFIG_DEFAULT_TEARDOWN_MS;
}
