/*
 * What the commands share beyond src/front (which loads the config and opens
 * the log): argument parsing helpers, the loop of a one-shot command and
 * the JSON form of a server's record (the `check --json` contract, reused
 * by `watch` and later by `end`).
 */
#include "cli/cli.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/ending.h"
#include "engine/failure.h"
#include "engine/liveness.h"
#include "engine/server.h"
#include "util/clock.h"
#include "util/str.h"

long
cli_parse_ms(const char *s)
{
    char *end = NULL;
    long  v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v <= 0 || v > 86400000L)
        return -1;
    return v;
}

static void
cli_json_liveness(cJSON *o, const struct liveness *l)
{
    cJSON *lv;

    if (!l->present) {
        cJSON_AddNullToObject(o, "liveness");
        return;
    }
    lv = cJSON_AddObjectToObject(o, "liveness");
    cJSON_AddStringToObject(lv, "state", liveness_state_name(l->state));
    cJSON_AddNumberToObject(lv, "observed_at", (double)l->observed_at);
    if (l->has_error_code)
        cJSON_AddStringToObject(lv, "error_code",
            failure_kind_name(l->error_code));
}

cJSON *
cli_json_server(const struct server *s)
{
    cJSON                     *o = cJSON_CreateObject();
    struct server_session_info si;
    const struct failure      *f;
    const char                *op = NULL;
    long                       tools = server_tools(s);
    double                     rtt = server_rtt_ms(s);
    char                      *name = str_sanitized(server_name(s));

    cJSON_AddStringToObject(o, "name", name);
    free(name);
    cJSON_AddStringToObject(o, "transport", server_transport_name(s));
    {
        /* The URL redacted (server_target gives the decl's url_shown), and
         * sanitized all the same: args may hold any bytes. */
        char *target = str_sanitized(server_target(s));

        cJSON_AddStringToObject(o, "target", target);
        free(target);
    }
    if (server_decl(s)->source != NULL)
        cJSON_AddStringToObject(o, "source", server_decl(s)->source);
    if (server_state(s) == SERVER_DISABLED)
        cJSON_AddNullToObject(o, "ok");     /* neither ok nor a failure */
    else
        cJSON_AddBoolToObject(o, "ok", server_ok(s));
    cJSON_AddStringToObject(o, "state", server_state_name(server_state(s)));
    if (server_era_name(server_era(s)) != NULL)
        cJSON_AddStringToObject(o, "era", server_era_name(server_era(s)));
    else
        cJSON_AddNullToObject(o, "era");
    cli_json_liveness(o, server_liveness(s));
    {
        const char *ws[4];
        size_t      nw = server_warnings(s, ws, 4);
        cJSON      *w = NULL;

        if (server_decl(s)->tls_insecure || nw > 0)
            w = cJSON_AddArrayToObject(o, "warnings");
        if (server_decl(s)->tls_insecure)
            cJSON_AddItemToArray(w, cJSON_CreateString("tls_insecure: the "
                "server's certificate is not verified"));
        for (size_t i = 0; i < nw; i++)
            cJSON_AddItemToArray(w, cJSON_CreateString(ws[i]));
    }
    if (server_next_attempt_ms(s) >= 0)
        cJSON_AddNumberToObject(o, "next_attempt_at",
            (double)server_next_attempt_ms(s));
    server_session(s, &si);
    if (si.open) {
        cJSON *so = cJSON_AddObjectToObject(o, "session");

        if (si.id_prefix[0] != '\0')
            cJSON_AddStringToObject(so, "id_prefix", si.id_prefix);
        else
            cJSON_AddNullToObject(so, "id_prefix");
        cJSON_AddStringToObject(so, "protocol_version",
            si.protocol_version != NULL ? si.protocol_version : "");
        if (si.server_name != NULL)
            cJSON_AddStringToObject(so, "server_name", si.server_name);
        else
            cJSON_AddNullToObject(so, "server_name");
        if (si.server_version != NULL)
            cJSON_AddStringToObject(so, "server_version", si.server_version);
        else
            cJSON_AddNullToObject(so, "server_version");
        if (si.cache_scope != NULL) {
            cJSON_AddStringToObject(so, "cache_scope", si.cache_scope);
            if (strcmp(si.cache_scope, "public") == 0)
                cJSON_AddStringToObject(so, "note", "server/discover is "
                    "cacheable by shared caches (cacheScope public): an "
                    "answer proves the endpoint answers, not the backend");
        }
    } else {
        cJSON_AddNullToObject(o, "session");
    }
    if (server_decl(s)->transport == CONFIG_STDIO) {
        int code, sig;

        if (server_pid(s) > 0)
            cJSON_AddNumberToObject(o, "pid", (double)server_pid(s));
        if (server_exit_status(s, &code, &sig)) {
            cJSON *eo = cJSON_AddObjectToObject(o, "exit");

            if (sig > 0)
                cJSON_AddNumberToObject(eo, "signal", sig);
            else
                cJSON_AddNumberToObject(eo, "code", code);
        }
        cJSON_AddNumberToObject(o, "stray_stdout_lines",
            (double)server_stray_lines(s));
    }
    if (tools >= 0)
        cJSON_AddNumberToObject(o, "tools", (double)tools);
    else
        cJSON_AddNullToObject(o, "tools");
    f = server_last_failure(s, &op);
    if (f != NULL) {
        cJSON *fo = cJSON_AddObjectToObject(o, "last_failure");

        cJSON_AddStringToObject(fo, "kind", failure_kind_name(f->kind));
        cJSON_AddStringToObject(fo, "delivered", delivered_name(f->delivered));
        if (f->http_status != 0)
            cJSON_AddNumberToObject(fo, "http_status", (double)f->http_status);
        if (f->reason != FAILURE_REASON_NONE)
            cJSON_AddStringToObject(fo, "reason",
                failure_reason_name(f->reason));
        cJSON_AddStringToObject(fo, "site", failure_site_name(f->site));
        cJSON_AddStringToObject(fo, "op", op != NULL ? op : "");
        cJSON_AddStringToObject(fo, "detail", f->detail);
    } else {
        cJSON_AddNullToObject(o, "last_failure");
    }
    if (rtt >= 0)
        cJSON_AddNumberToObject(o, "rtt_ms", (double)((long)(rtt * 10)) / 10);
    else
        cJSON_AddNullToObject(o, "rtt_ms");
    if (server_decl(s)->probe != NULL) {
        /* The deep check's own round trip, apart from the ping's. */
        if (server_probe_ms(s) >= 0)
            cJSON_AddNumberToObject(o, "probe_ms",
                (double)((long)(server_probe_ms(s) * 10)) / 10);
        else
            cJSON_AddNullToObject(o, "probe_ms");
        if (server_probe_notices(s) > 0)
            cJSON_AddNumberToObject(o, "probe_notices",
                (double)server_probe_notices(s));
    }
    return o;
}

cJSON *
cli_json_fleet(const struct fleet *f)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *arr = cJSON_AddArrayToObject(root, "servers");
    cJSON *sum;
    long   counts[LIVENESS__COUNT] = { 0 }, absent = 0, disabled = 0;

    for (size_t i = 0; i < fleet_size(f); i++) {
        const struct server   *s = fleet_server(f, i);
        const struct liveness *l = server_liveness(s);

        cJSON_AddItemToArray(arr, cli_json_server(s));
        if (server_state(s) == SERVER_DISABLED)
            disabled++;
        else if (l->present)
            counts[l->state]++;
        else
            absent++;
    }
    sum = cJSON_AddObjectToObject(root, "summary");
    cJSON_AddNumberToObject(sum, "reachable",
        (double)counts[LIVENESS_REACHABLE]);
    cJSON_AddNumberToObject(sum, "unreachable",
        (double)counts[LIVENESS_UNREACHABLE]);
    cJSON_AddNumberToObject(sum, "unknown", (double)counts[LIVENESS_UNKNOWN]);
    cJSON_AddNumberToObject(sum, "absent", (double)absent);
    cJSON_AddNumberToObject(sum, "disabled", (double)disabled);
    return root;
}

struct cli_wait {
    struct fleet *fleet;
    bool          settled;
};

/* ev_prepare: before the loop blocks, see whether everything settled. */
static void
cli_wait_prepare_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
    struct cli_wait *cw = w->data;

    (void)revents;
    if (!fleet_settling(cw->fleet)) {
        cw->settled = true;
        ev_break(loop, EVBREAK_ONE);
    }
}

static void
cli_wait_stop_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)w;
    (void)revents;
    ev_break(loop, EVBREAK_ONE);
}

static void
cli_wait_signal_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
    (void)w;
    (void)revents;
    ev_break(loop, EVBREAK_ONE);
}

bool
cli_wait_endings(struct fleet *f, long bound_ms)
{
    struct ev_loop *loop = fleet_loop(f);
    struct cli_wait cw = { .fleet = f };
    ev_prepare      prep;
    ev_timer        bound;
    ev_signal       sigint, sigterm, sighup;

    if (!fleet_settling(f))
        return true;
    ev_prepare_init(&prep, cli_wait_prepare_cb);
    prep.data = &cw;
    ev_prepare_start(loop, &prep);
    ev_timer_init(&bound, cli_wait_stop_cb, bound_ms / 1000.0, 0.);
    ev_timer_start(loop, &bound);
    ev_signal_init(&sigint, cli_wait_signal_cb, SIGINT);
    ev_signal_start(loop, &sigint);
    ev_signal_init(&sigterm, cli_wait_signal_cb, SIGTERM);
    ev_signal_start(loop, &sigterm);
    ev_signal_init(&sighup, cli_wait_signal_cb, SIGHUP);
    ev_signal_start(loop, &sighup);
    ev_run(loop, 0);
    ev_prepare_stop(loop, &prep);
    ev_timer_stop(loop, &bound);
    ev_signal_stop(loop, &sigint);
    ev_signal_stop(loop, &sigterm);
    ev_signal_stop(loop, &sighup);
    return cw.settled;
}

cJSON *
cli_json_ending(const struct ending *e)
{
    cJSON *o = cJSON_CreateObject();
    char  *name = str_sanitized(server_name(e->server));

    cJSON_AddStringToObject(o, "server", name);
    free(name);
    cJSON_AddStringToObject(o, "outcome", ending_outcome_name(e->outcome));
    if (e->http_status != 0)
        cJSON_AddNumberToObject(o, "http_status", (double)e->http_status);
    if (e->has_failure) {
        cJSON_AddStringToObject(o, "kind", failure_kind_name(e->kind));
        cJSON_AddStringToObject(o, "delivered", delivered_name(e->delivered));
    }
    if (e->exit_code >= 0 && e->outcome == ENDING_EXITED)
        cJSON_AddNumberToObject(o, "exit_code", e->exit_code);
    if (e->signal > 0)
        cJSON_AddNumberToObject(o, "signal", e->signal);
    cJSON_AddNumberToObject(o, "duration_ms",
        (double)((long)(e->duration_ms * 10)) / 10);
    if (e->settled)
        cJSON_AddNumberToObject(o, "settled_ms",
            (double)((long)(e->settled_ms * 10)) / 10);
    else
        cJSON_AddNullToObject(o, "settled_ms");
    cJSON_AddBoolToObject(o, "half_open", e->half_open);
    if (e->sessionless)
        cJSON_AddBoolToObject(o, "sessionless", true);
    if (e->detail[0] != '\0')
        cJSON_AddStringToObject(o, "detail", e->detail);
    return o;
}

static void
cli_run_bound_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)w;
    (void)revents;
    ev_break(loop, EVBREAK_ONE);
}

static void
cli_run_signal_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
    struct cli_run *r = w->data;

    (void)revents;
    r->interrupted = true;
    ev_break(loop, EVBREAK_ONE);
}

void
cli_run_init(struct cli_run *r, struct ev_loop *loop, long bound_ms,
    void (*step)(struct ev_loop *, ev_timer *, int), void *data)
{
    r->loop = loop;
    r->interrupted = false;
    /* The bound counts from now, not from the loop's last look at the
     * clock (reading a large config may have taken a while). */
    ev_now_update(loop);
    ev_timer_init(&r->step, step, 0., 0.);
    r->step.data = data;
    ev_timer_init(&r->bound, cli_run_bound_cb, bound_ms / 1000.0, 0.);
    ev_timer_start(loop, &r->bound);
    ev_signal_init(&r->sigint, cli_run_signal_cb, SIGINT);
    r->sigint.data = r;
    ev_signal_start(loop, &r->sigint);
    ev_signal_init(&r->sigterm, cli_run_signal_cb, SIGTERM);
    r->sigterm.data = r;
    ev_signal_start(loop, &r->sigterm);
    /* A closed terminal or ssh session: end sessions as for SIGINT. */
    ev_signal_init(&r->sighup, cli_run_signal_cb, SIGHUP);
    r->sighup.data = r;
    ev_signal_start(loop, &r->sighup);
}

void
cli_run_kick(struct cli_run *r)
{
    if (!ev_is_active(&r->step)) {
        ev_timer_set(&r->step, 0., 0.);
        ev_timer_start(r->loop, &r->step);
    }
}

void
cli_run_done(struct cli_run *r)
{
    ev_timer_stop(r->loop, &r->step);
    ev_timer_stop(r->loop, &r->bound);
    ev_signal_stop(r->loop, &r->sigint);
    ev_signal_stop(r->loop, &r->sigterm);
    ev_signal_stop(r->loop, &r->sighup);
}
