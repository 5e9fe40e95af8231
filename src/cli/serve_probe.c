/*
 * /probe?target=NAME: one check of one server now, answered in
 * blackbox_exporter's names so that its alerts and dashboards work
 * (probe_success, probe_duration_seconds), with the MCP detail beside them
 * (issue 29). Prometheus drives it with the multi-target pattern: a target
 * list (from /sd) relabelled into the target parameter.
 *
 * A probe is what `mcptop check` does to one server, on the daemon's own
 * loop: a fleet of one over a copy of the declaration (so a reload may
 * free the original meanwhile), with no pings, no redial and no GET
 * stream; the dial, the deep check when one is configured, one ping; then
 * its session is ended by the ending procedure, as every session mcptop is
 * issued, and the answer goes once that ending has settled. The HTTP
 * connection waits suspended (libmicrohttpd's suspend/resume): the loop
 * never blocks, and scrapes of /metrics go on meanwhile.
 *
 * The whole probe is bounded by the scrape's own timeout, which Prometheus
 * sends as X-Prometheus-Scrape-Timeout-Seconds, less a margin (0.5 s, as
 * blackbox_exporter's --timeout-offset); a quarter of it at most goes to
 * the ending. Past the check's share the probe is a timeout; past the
 * whole, the answer goes with what is known and the ending settles after
 * it (bounded again; it is never skipped). At most SERVE_PROBES_MAX
 * probes hold a fleet at once.
 */
#include "cli/serve.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/config.h"
#include "engine/ending.h"
#include "engine/failure.h"
#include "engine/health.h"
#include "engine/server.h"
#include "engine/url.h"
#include "export/metrics.h"
#include "util/str.h"
#include "util/xmalloc.h"

#define SERVE_PROBE_MARGIN_S   0.5     /* blackbox_exporter's offset */
#define SERVE_PROBE_DEFAULT_S  10.0    /* no header: Prometheus's default
                                          scrape_timeout */
#define SERVE_PROBE_MAX_S      120.0   /* the most a header may ask */
#define SERVE_PROBE_GRACE_S    0.25    /* after the check's share: the
                                          engine's own timers come first */
#define SERVE_PROBE_DRAIN_S    1.0     /* after the answer, past the ending's
                                          deadline: then the fleet goes */
#define SERVE_PROBE_TARGET_MAX 512     /* longest target echoed or dialed */

enum serve_probe_step {
    SERVE_PROBE_DIAL,       /* waiting for the dial's one outcome */
    SERVE_PROBE_DEEP,       /* the deep check (probe_tool) */
    SERVE_PROBE_PING,       /* the liveness exchange */
    SERVE_PROBE_ENDING,     /* the verdict is in; the session is ending */
    SERVE_PROBE_DRAINING,   /* answered; the ending still settles */
};

struct serve_probe {
    struct serve_probes   *owner;
    struct serve_probe    *prev, *next;
    struct MHD_Connection *conn;        /* suspended; NULL once answered */
    struct config         *cfg;         /* one server, owned */
    struct fleet          *fleet;
    ev_prepare             step;        /* moves on outside engine calls */
    ev_timer               check_by;    /* the check's share of the budget */
    ev_timer               answer_by;   /* the whole budget */
    ev_timer               drain_by;    /* the fleet goes, settled or not */
    enum serve_probe_step  at;
    ev_tstamp              started;
    /* What the engine said (set by the event callback). */
    bool                   dialed, dial_ok, deep_done, ping_done;
    /* The verdict, taken before the ending changes anything. */
    bool                   verdict;
    bool                   timed_out;   /* the probe's own deadline */
    bool                   stopping;    /* serve shutting down: 503 */
    bool                   was_dialing; /* at the deadline */
    double                 duration_s;
    char                  *body;        /* the answer, once made */
    size_t                 len;
    bool                   answered;
};

struct serve_probes {
    struct serve_probes_options opt;
    struct serve_probe         *head;   /* holding a fleet, or an answer
                                           not taken yet */
    bool                        stopping;
};

static void serve_probe_step_cb(struct ev_loop *loop, ev_prepare *w,
    int revents);
static void serve_probe_check_by_cb(struct ev_loop *loop, ev_timer *w,
    int revents);
static void serve_probe_answer_by_cb(struct ev_loop *loop, ev_timer *w,
    int revents);
static void serve_probe_drain_by_cb(struct ev_loop *loop, ev_timer *w,
    int revents);

/* ------------------------------------------------------------ the answer */

/* Append fmt to *buf (of *len bytes). */
static void
serve_probe_add(char **buf, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
serve_probe_add(char **buf, size_t *len, const char *fmt, ...)
{
    va_list ap;
    char   *s;
    size_t  n;

    va_start(ap, fmt);
    s = str_vprintf(fmt, ap);
    va_end(ap);
    n = strlen(s);
    *buf = xrealloc(*buf, *len + n + 1);
    memcpy(*buf + *len, s, n + 1);
    *len += n;
    free(s);
}

/* The families of the answer, in the text format 0.0.4. */
static void
serve_probe_make_body(struct serve_probe *pr)
{
    const struct server       *s = fleet_server(pr->fleet, 0);
    const struct failure      *f = metrics_current_failure(s);
    struct mcp_session_info si;
    bool                       ok = !pr->timed_out &&
        server_health(s, NULL).state == HEALTH_OK;
    const char                *era = mcp_era_name(server_era(s));
    char                       esc[2 * METRICS_LABEL_MAX + 1];
    char                      *b = NULL;
    size_t                     len = 0;

    memset(&si, 0, sizeof(si));
    server_session(s, &si);
    serve_probe_add(&b, &len,
        "# HELP probe_success 1 when the server's health is ok after one "
        "dial, its deep check and a ping, else 0.\n"
        "# TYPE probe_success gauge\nprobe_success %d\n"
        "# HELP probe_duration_seconds How long the check took (the dial, "
        "the deep check, the ping), seconds; the ending after it is not "
        "counted.\n"
        "# TYPE probe_duration_seconds gauge\nprobe_duration_seconds %.6f\n",
        ok ? 1 : 0, pr->duration_s);
    serve_probe_add(&b, &len,
        "# HELP mcp_probe_failure_info The failure the probe ended in: "
        "kind, delivery verdict and (http_status only) reason; absent when "
        "it succeeded.\n# TYPE mcp_probe_failure_info gauge\n");
    if (f != NULL && (unsigned)f->kind < FAILURE__COUNT &&
        (unsigned)f->delivered < DELIVERED__COUNT &&
        (unsigned)f->reason < FAILURE_REASON__COUNT)
        serve_probe_add(&b, &len, "mcp_probe_failure_info{kind=\"%s\","
            "delivered=\"%s\",reason=\"%s\"} 1\n", failure_kind_name(f->kind),
            delivered_name(f->delivered), failure_reason_name(f->reason));
    else if (pr->timed_out)
        /* The probe's own deadline: at the dial nothing was mounted
         * (DESIGN.md section 3), later the request may have run. */
        serve_probe_add(&b, &len, "mcp_probe_failure_info{kind=\"timeout\","
            "delivered=\"%s\",reason=\"\"} 1\n",
            pr->was_dialing ? "no" : "unknown");
    serve_probe_add(&b, &len, "# HELP mcp_probe_tools Tools in the probe's "
        "listing.\n# TYPE mcp_probe_tools gauge\n");
    if (server_tools(s) >= 0)
        serve_probe_add(&b, &len, "mcp_probe_tools %ld\n", server_tools(s));
    serve_probe_add(&b, &len, "# HELP mcp_probe_protocol_info The MCP "
        "revision and era the server spoke to the probe.\n"
        "# TYPE mcp_probe_protocol_info gauge\n");
    if (pr->dial_ok && (si.protocol_version != NULL || era != NULL)) {
        metrics_label_value(esc, sizeof(esc), si.protocol_version);
        serve_probe_add(&b, &len, "mcp_probe_protocol_info{version=\"%s\","
            "era=\"%s\"} 1\n", esc, era != NULL ? era : "");
    }
    pr->body = b;
    pr->len = len;
}

/* The outcome of the probe's ending, once known, as one more family. */
static void
serve_probe_add_ending(struct serve_probe *pr)
{
    const struct server *s = fleet_server(pr->fleet, 0);
    size_t               n = server_ending_count(s);
    const struct ending *e = n > 0 ? server_ending(s, n - 1) : NULL;

    serve_probe_add(&pr->body, &pr->len, "# HELP mcp_probe_ending_info How "
        "the probe's session was ended before this answer (pending: not "
        "by the scrape's deadline; it is ended after it).\n"
        "# TYPE mcp_probe_ending_info gauge\n");
    if (e != NULL)
        serve_probe_add(&pr->body, &pr->len, "mcp_probe_ending_info{"
            "outcome=\"%s\"} 1\n", ending_outcome_name(e->outcome));
}

/* ------------------------------------------------------------ the probe */

/* Take the verdict now (before the ending changes the record) and end
 * the session. */
static void
serve_probe_verdict(struct serve_probe *pr, ev_tstamp now)
{
    if (pr->verdict)
        return;
    pr->verdict = true;
    pr->was_dialing = !pr->dialed;
    pr->duration_s = now - pr->started;
    serve_probe_make_body(pr);
    ev_timer_stop(pr->owner->opt.loop, &pr->check_by);
    pr->at = SERVE_PROBE_ENDING;
    fleet_end_all(pr->fleet);
}

/* Unlink pr from its set and free it: its fleet is gone and its answer
 * was taken (or will never be). */
static void
serve_probe_unlink(struct serve_probe *pr)
{
    struct serve_probes *p = pr->owner;

    if (pr->prev != NULL)
        pr->prev->next = pr->next;
    else
        p->head = pr->next;
    if (pr->next != NULL)
        pr->next->prev = pr->prev;
    free(pr->body);
    free(pr);
}

/* The fleet goes (its ending settled, or drained too long). pr itself
 * stays while its connection has not taken the answer. */
static void
serve_probe_release(struct serve_probe *pr)
{
    struct ev_loop *loop = pr->owner->opt.loop;

    ev_prepare_stop(loop, &pr->step);
    ev_timer_stop(loop, &pr->check_by);
    ev_timer_stop(loop, &pr->answer_by);
    ev_timer_stop(loop, &pr->drain_by);
    fleet_free(pr->fleet);
    config_free(pr->cfg);
    pr->fleet = NULL;
    pr->cfg = NULL;
    if (pr->conn == NULL)
        serve_probe_unlink(pr);
}

/* Resume the connection with the answer (503 when shutting down); the
 * ending, if it has not settled, settles after it. */
static void
serve_probe_answer(struct serve_probe *pr)
{
    struct ev_loop *loop = pr->owner->opt.loop;

    if (pr->answered)
        return;
    pr->answered = true;
    ev_timer_stop(loop, &pr->answer_by);
    if (!pr->verdict) {
        ev_now_update(loop);
        pr->timed_out = true;
        serve_probe_verdict(pr, ev_now(loop));
    }
    if (pr->stopping) {
        free(pr->body);
        pr->body = xstrdup("shutting down\n");
        pr->len = strlen(pr->body);
    } else {
        serve_probe_add_ending(pr);
    }
    MHD_resume_connection(pr->conn);
    pr->owner->opt.kick(pr->owner->opt.kick_arg);
    pr->at = SERVE_PROBE_DRAINING;
    ev_timer_set(&pr->drain_by, (double)fleet_teardown_ms(pr->fleet) /
        1000.0 + SERVE_PROBE_DRAIN_S, 0.);
    ev_timer_start(loop, &pr->drain_by);
}

/* event_cb of the probe's fleet: note what the check waits for. */
static void
serve_probe_event_cb(void *arg, const struct event *e)
{
    struct serve_probe *pr = arg;

    if (e->type != EVENT_EXCHANGE || e->op == NULL)
        return;
    if (!pr->dialed && strcmp(e->op, "dial") == 0) {
        pr->dialed = true;
        pr->dial_ok = e->completed;
    } else if (pr->at == SERVE_PROBE_DEEP &&
        strcmp(e->op, "tools/call") == 0) {
        pr->deep_done = true;
    } else if (pr->at == SERVE_PROBE_PING && (strcmp(e->op, "ping") == 0 ||
        strcmp(e->op, "discover") == 0 || strcmp(e->op, "tools/list") ==
        0)) {
        pr->ping_done = true;
    }
}

/* Ping, or go to the verdict when none can be sent. */
static void
serve_probe_ping(struct serve_probe *pr, ev_tstamp now)
{
    pr->at = SERVE_PROBE_PING;
    if (!server_ping_now(fleet_server(pr->fleet, 0)))
        serve_probe_verdict(pr, now);
}

/* ev_prepare: move the probe on, once per loop turn. */
static void
serve_probe_step_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
    struct serve_probe *pr = w->data;
    struct server      *s;

    (void)revents;
    if (pr->fleet == NULL)
        return;
    s = fleet_server(pr->fleet, 0);
    ev_now_update(loop);
    switch (pr->at) {
    case SERVE_PROBE_DIAL:
        if (!pr->dialed)
            return;
        if (!pr->dial_ok) {
            serve_probe_verdict(pr, ev_now(loop));
            return;
        }
        pr->at = SERVE_PROBE_DEEP;
        if (!server_probe_now(s))
            serve_probe_ping(pr, ev_now(loop));
        return;
    case SERVE_PROBE_DEEP:
        if (pr->deep_done)
            serve_probe_ping(pr, ev_now(loop));
        return;
    case SERVE_PROBE_PING:
        if (pr->ping_done)
            serve_probe_verdict(pr, ev_now(loop));
        return;
    case SERVE_PROBE_ENDING:
        if (!fleet_endings_busy(pr->fleet))
            serve_probe_answer(pr);
        return;
    case SERVE_PROBE_DRAINING:
        if (!fleet_settling(pr->fleet))
            serve_probe_release(pr);
        return;
    }
}

/* ev_timer: the check's share of the budget passed: a timeout. */
static void
serve_probe_check_by_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct serve_probe *pr = w->data;

    (void)revents;
    if (pr->verdict)
        return;
    ev_now_update(loop);
    pr->timed_out = true;
    serve_probe_verdict(pr, ev_now(loop));
}

/* ev_timer: the whole budget passed: answer with what is known. */
static void
serve_probe_answer_by_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    serve_probe_answer(w->data);
}

/* ev_timer: answered long ago and still not settled: the fleet goes. */
static void
serve_probe_drain_by_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    serve_probe_release(w->data);
}

/*
 * The budget of a probe, seconds: the scrape's timeout (the header, when
 * it is a positive number) less the margin, or half of it when it is
 * shorter than twice the margin; SERVE_PROBE_DEFAULT_S less the margin
 * without one.
 */
static double
serve_probe_budget(const char *header)
{
    double t = SERVE_PROBE_DEFAULT_S;
    char  *end = NULL;

    if (header != NULL) {
        double v = strtod(header, &end);

        if (end != header && isfinite(v) && v > 0)
            t = v > SERVE_PROBE_MAX_S ? SERVE_PROBE_MAX_S : v;
    }
    return t > 2 * SERVE_PROBE_MARGIN_S ? t - SERVE_PROBE_MARGIN_S : t / 2;
}

/* The declaration to probe: a copy of f's server named target, or with
 * urls an ad-hoc http(s) URL. NULL with *why (static or caller frees
 * through *why_owned) when there is none. */
static struct config *
serve_probe_config(const struct serve_probes *p, const struct fleet *f,
    const char *target, char **why)
{
    for (size_t i = 0; i < fleet_size(f); i++) {
        const struct server *s = fleet_server(f, i);

        if (strcmp(server_name(s), target) != 0)
            continue;
        if (server_decl(s)->disabled) {
            *why = xstrdup("disabled in the config: not probed");
            return NULL;
        }
        return config_for_server(server_decl(s));
    }
    if (strncasecmp(target, "http://", 7) != 0 &&
        strncasecmp(target, "https://", 8) != 0) {
        *why = xstrdup(p->opt.urls ? "not a configured server, nor an "
            "http:// or https:// URL" : "not a configured server (ad-hoc "
            "URLs need --probe-urls)");
        return NULL;
    }
    if (!p->opt.urls) {
        *why = xstrdup("not a configured server (ad-hoc URLs need "
            "--probe-urls)");
        return NULL;
    }
    return config_for_url(target);
}

/* A 400 naming target (sanitized, a URL redacted) and why. */
static enum MHD_Result
serve_probe_bad(struct MHD_Connection *conn, const char *target,
    const char *why)
{
    char  shown[SERVE_PROBE_TARGET_MAX + 1];
    char *red = NULL;
    char *text;

    if (target != NULL && (strncasecmp(target, "http://", 7) == 0 ||
        strncasecmp(target, "https://", 8) == 0))
        red = url_redact(target);
    str_sanitize(shown, sizeof(shown), red != NULL ? red : target != NULL ?
        target : "", strlen(red != NULL ? red : target != NULL ? target :
        ""));
    free(red);
    text = target != NULL ? str_printf("unknown target \"%s\": %s\n", shown,
        why) : str_printf("%s\n", why);
    return serve_reply(conn, MHD_HTTP_BAD_REQUEST, text, strlen(text),
        "text/plain; charset=utf-8");
}

enum MHD_Result
serve_probe_request(struct serve_probes *p, const struct fleet *f,
    struct MHD_Connection *conn)
{
    struct fleet_options opt = { 0 };
    struct serve_probe  *pr;
    const char          *target;
    char                *why = NULL, *cause = NULL;
    struct config       *cfg;
    struct config_server *d;
    double               budget, ending_s, check_s;
    enum MHD_Result      ret;

    /* Called again once resumed: the answer is ready. */
    for (pr = p->head; pr != NULL; pr = pr->next) {
        if (pr->conn == conn && pr->answered) {
            bool  stopping = pr->stopping;
            char *body = pr->body;
            size_t len = pr->len;

            pr->body = NULL;
            pr->conn = NULL;
            if (pr->fleet == NULL)
                serve_probe_unlink(pr);     /* only the answer was left */
            return serve_reply(conn, stopping ?
                MHD_HTTP_SERVICE_UNAVAILABLE : MHD_HTTP_OK, body, len,
                stopping ? "text/plain; charset=utf-8" : SERVE_TEXT_0_0_4);
        }
    }
    if (p->stopping) {
        char *t = xstrdup("shutting down\n");

        return serve_reply(conn, MHD_HTTP_SERVICE_UNAVAILABLE, t, strlen(t),
            "text/plain; charset=utf-8");
    }
    target = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND,
        "target");
    if (target == NULL || target[0] == '\0')
        return serve_probe_bad(conn, NULL, "the target parameter is "
            "missing: /probe?target=NAME");
    if (strlen(target) > SERVE_PROBE_TARGET_MAX)
        return serve_probe_bad(conn, target, "too long");
    cfg = serve_probe_config(p, f, target, &why);
    if (cfg == NULL) {
        ret = serve_probe_bad(conn, target, why);
        free(why);
        return ret;
    }
    if (serve_probes_busy(p) >= SERVE_PROBES_MAX) {
        char *t = str_printf("%d probes in flight already: try again\n",
            SERVE_PROBES_MAX);

        config_free(cfg);
        return serve_reply(conn, MHD_HTTP_SERVICE_UNAVAILABLE, t, strlen(t),
            "text/plain; charset=utf-8");
    }
    /* The budget: the ending gets at most a quarter, the check the rest;
     * the declaration's own deadlines are cut to fit. */
    budget = serve_probe_budget(MHD_lookup_connection_value(conn,
        MHD_HEADER_KIND, "X-Prometheus-Scrape-Timeout-Seconds"));
    d = &cfg->servers[0];
    ending_s = (double)d->teardown_ms / 1000.0;
    if (ending_s > budget / 4)
        ending_s = budget / 4;
    check_s = budget - ending_s;
    if ((double)d->open_deadline_ms > check_s * 1000.0)
        d->open_deadline_ms = (long)(check_s * 1000.0);
    if ((double)d->timeout_ms > check_s * 1000.0)
        d->timeout_ms = (long)(check_s * 1000.0);
    if (d->probe != NULL && (d->probe->timeout_ms <= 0 ||
        (double)d->probe->timeout_ms > check_s * 1000.0))
        d->probe->timeout_ms = (long)(check_s * 1000.0);
    d->teardown_ms = (long)(ending_s * 1000.0);
    if (d->open_deadline_ms < 1)
        d->open_deadline_ms = 1;
    if (d->timeout_ms < 1)
        d->timeout_ms = 1;
    if (d->teardown_ms < 1)
        d->teardown_ms = 1;
    d->disabled = false;
    opt.no_streams = true;
    opt.no_pings = true;
    opt.no_redial = true;
    opt.log = p->opt.log;
    opt.nested = true;
    pr = xcalloc(1, sizeof(*pr));
    pr->owner = p;
    pr->cfg = cfg;
    pr->fleet = fleet_new(p->opt.loop, cfg, &opt, &cause);
    if (pr->fleet == NULL) {
        char *t = str_printf("cannot probe: %s\n", cause != NULL ? cause :
            "no fleet");

        free(cause);
        config_free(cfg);
        free(pr);
        return serve_reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, t,
            strlen(t), "text/plain; charset=utf-8");
    }
    pr->conn = conn;
    pr->next = p->head;
    if (p->head != NULL)
        p->head->prev = pr;
    p->head = pr;
    ev_now_update(p->opt.loop);
    pr->started = ev_now(p->opt.loop);
    ev_prepare_init(&pr->step, serve_probe_step_cb);
    pr->step.data = pr;
    ev_prepare_start(p->opt.loop, &pr->step);
    ev_timer_init(&pr->check_by, serve_probe_check_by_cb,
        check_s + SERVE_PROBE_GRACE_S, 0.);
    pr->check_by.data = pr;
    ev_timer_start(p->opt.loop, &pr->check_by);
    ev_timer_init(&pr->answer_by, serve_probe_answer_by_cb, budget, 0.);
    pr->answer_by.data = pr;
    ev_timer_start(p->opt.loop, &pr->answer_by);
    ev_timer_init(&pr->drain_by, serve_probe_drain_by_cb, 0., 0.);
    pr->drain_by.data = pr;
    MHD_suspend_connection(conn);
    fleet_subscribe(pr->fleet, serve_probe_event_cb, pr);
    fleet_start(pr->fleet);
    return MHD_YES;
}

/* ------------------------------------------------------------ the set */

struct serve_probes *
serve_probes_new(const struct serve_probes_options *o)
{
    struct serve_probes *p = xcalloc(1, sizeof(*p));

    p->opt = *o;
    return p;
}

void
serve_probes_completed(struct serve_probes *p, struct MHD_Connection *conn)
{
    for (struct serve_probe *pr = p->head; pr != NULL; pr = pr->next) {
        if (pr->conn != conn)
            continue;
        /* Gone before its answer was taken (a client that closed while
         * suspended): the pointer may come back for another connection. */
        pr->conn = NULL;
        if (pr->fleet == NULL)
            serve_probe_unlink(pr);
        return;
    }
}

void
serve_probes_stop(struct serve_probes *p)
{
    p->stopping = true;
    for (struct serve_probe *pr = p->head; pr != NULL; pr = pr->next) {
        if (pr->fleet == NULL || pr->answered)
            continue;
        pr->stopping = true;
        if (!pr->verdict) {
            ev_now_update(p->opt.loop);
            serve_probe_verdict(pr, ev_now(p->opt.loop));
        }
    }
}

size_t
serve_probes_busy(const struct serve_probes *p)
{
    size_t n = 0;

    for (const struct serve_probe *pr = p->head; pr != NULL; pr = pr->next)
        n += pr->fleet != NULL;
    return n;
}

void
serve_probes_free(struct serve_probes *p)
{
    struct serve_probe *pr, *next;

    if (p == NULL)
        return;
    for (pr = p->head; pr != NULL; pr = next) {
        next = pr->next;
        if (pr->fleet != NULL) {
            ev_prepare_stop(p->opt.loop, &pr->step);
            ev_timer_stop(p->opt.loop, &pr->check_by);
            ev_timer_stop(p->opt.loop, &pr->answer_by);
            ev_timer_stop(p->opt.loop, &pr->drain_by);
            fleet_free(pr->fleet);
            config_free(pr->cfg);
        }
        /* libmicrohttpd stops a daemon only with no connection left
         * suspended: one never answered is resumed, to be closed. */
        if (pr->conn != NULL && !pr->answered)
            MHD_resume_connection(pr->conn);
        free(pr->body);
        free(pr);
    }
    free(p);
}
