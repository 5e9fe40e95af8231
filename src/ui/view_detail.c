/*
 * The detail pane of the selected server: target, server name and
 * version, capabilities, tools, the last exchanges, stderr lines and this
 * server's endings. Scrolls with J/K. Only the lines in view are drawn.
 */
#include <stdio.h>
#include <string.h>

#include "engine/server.h"
#include "ui/screen.h"
#include "ui/ui.h"
#include "util/clock.h"
#include "util/str.h"

/* "label      value" */
static void
detail_kv(struct ui_out *o, struct ui_line *l, const char *label,
    enum ui_role role, const char *value)
{
    ui_line_reset(l, UI_ROLE_NORMAL);
    ui_line_cell(l, UI_ROLE_HEADER, label, 11, false, o->ui->utf8);
    ui_line_add(l, role, value);
    ui_out_line(o, l);
}

static void
detail_title(struct ui_out *o, struct ui_line *l, const char *title)
{
    ui_line_reset(l, UI_ROLE_NORMAL);
    ui_line_add(l, UI_ROLE_HEADER, title);
    ui_out_line(o, l);
}

static void
detail_session(struct ui_out *o, struct ui_line *l, const struct server *s)
{
    struct mcp_session_info si;
    const struct liveness     *live = server_liveness(s);
    const struct failure      *f;
    const char                *op = NULL;
    char                       buf[512], age[32], tbuf[32];
    double                     rtt;
    struct health              h;
    int64_t                    since = 0;
    bool                       watched;

    server_session(s, &si);
    snprintf(buf, sizeof(buf), "%s %s %s", si.server_name != NULL ?
        si.server_name : "-", si.server_version != NULL ?
        si.server_version : "", si.tools_list_changed ?
        "(tools list_changed)" : "");
    detail_kv(o, l, "server", UI_ROLE_NORMAL, buf);
    snprintf(buf, sizeof(buf), "%s  protocol %s  session %s%s",
        server_state_name(server_state(s)),
        si.protocol_version != NULL ? si.protocol_version : "-",
        si.open ? (si.id_prefix[0] != '\0' ? si.id_prefix :
        "open (no session id)") : "none", si.open &&
        model_current_failure(s) != NULL ? " (held; the last exchange "
        "failed)" : "");
    if (server_pid(s) > 0)
        snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "  pid %ld",
            server_pid(s));
    if (mcp_era_name(server_era(s)) != NULL)
        snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "  era %s",
            mcp_era_name(server_era(s)));
    detail_kv(o, l, "state", UI_ROLE_NORMAL, buf);
    if (server_decl(s)->tls_insecure)
        detail_kv(o, l, "warning", UI_ROLE_WARNING, "tls_insecure: the server's "
            "certificate is not verified");
    {
        const char *w[8];
        size_t      nw = server_warnings(s, w, 8);

        for (size_t i = 0; i < nw; i++) {
            str_sanitize(buf, sizeof(buf), w[i], strlen(w[i]));
            detail_kv(o, l, "warning", UI_ROLE_WARNING, buf);
        }
    }
    if (si.cache_scope != NULL && strcmp(si.cache_scope, "public") == 0)
        detail_kv(o, l, "note", UI_ROLE_WARNING, "server/discover is cacheable "
            "by shared caches: an answer proves the endpoint, not the "
            "backend");
    snprintf(buf, sizeof(buf), "dials %lu  session expiries %lu  pings %lu",
        server_dials(s), server_session_expiries(s), server_pings_done(s));
    detail_kv(o, l, "counters", UI_ROLE_DIM, buf);
    h = server_health(s, &since);
    watched = health_monitored(h.state);
    fmt_health(o->ui, buf, sizeof(buf), h.state);
    if (h.reason != NULL && h.reason[0] != '\0')
        snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), ": %s",
            h.reason);
    if (since > 0) {
        fmt_age(age, sizeof(age), o->ui->model.now_ms - since);
        fmt_clock(tbuf, sizeof(tbuf), since, false);
        snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf),
            "  since %s (%s)", tbuf, age);
    }
    detail_kv(o, l, "health", fmt_health_role(h.state), buf);
    if (live->present) {
        fmt_age(age, sizeof(age), o->ui->model.now_ms - live->observed_at);
        fmt_clock(tbuf, sizeof(tbuf), live->observed_at, false);
        snprintf(buf, sizeof(buf), "%s %s  observed %s (%s ago)  streak %lu"
            "  via %s%s", o->ui->g.live[live->state],
            liveness_state_name(live->state), tbuf, age, server_streak(s),
            server_liveness_method(s), watched ? "" : "  (the last "
            "observation, before monitoring stopped: history)");
    } else {
        snprintf(buf, sizeof(buf), "%s absent: no observation",
            o->ui->g.absent);
    }
    detail_kv(o, l, "liveness", watched ? fmt_live_role(live) : UI_ROLE_DIM,
        buf);
    f = server_last_failure(s, &op);
    if (f != NULL) {
        char http[48], detail[300], streak[32];
        bool current = model_current_failure(s) != NULL;

        fmt_http(http, sizeof(http), f->http_status, f->reason);
        str_sanitize(detail, sizeof(detail), f->detail, strlen(f->detail));
        fmt_failing(o->ui, streak, sizeof(streak), s);
        snprintf(buf, sizeof(buf), "%s%s%s%s  delivered %s%s  %s %s  "
            "site %s  %s", current ? "failing " : "", current ? streak : "",
            current ? ": " : "", failure_kind_name(f->kind),
            delivered_name(f->delivered),
            f->evidence_no ? " (by evidence)" : "", op != NULL ? op : "",
            http, failure_site_name(f->site), detail);
        detail_kv(o, l, "last fail", current ? UI_ROLE_WARNING : UI_ROLE_DIM, buf);
    }
    rtt = server_rtt_ms(s);
    if (rtt >= 0) {
        bool stale = model_current_failure(s) != NULL;

        snprintf(buf, sizeof(buf), "%.1f ms, the last completed exchange%s",
            rtt, stale ? " (stale: a later one failed)" : !watched ?
            " (history: not monitored now)" : "");
        detail_kv(o, l, "round trip", stale || !watched ? UI_ROLE_DIM :
            UI_ROLE_NORMAL, buf);
    }
    if (server_decl(s)->probe != NULL) {
        const struct config_probe *p = server_decl(s)->probe;
        double pm = server_probe_ms(s);
        char   name[128];

        str_sanitize(name, sizeof(name), p->name, strlen(p->name));
        if (pm >= 0)
            snprintf(buf, sizeof(buf), "tools/call %s every %lds: %.1f ms "
                "the last completed call  notices %lu", name,
                p->interval_ms / 1000, pm, server_probe_notices(s));
        else
            snprintf(buf, sizeof(buf), "tools/call %s every %lds: no "
                "completed call yet", name, p->interval_ms / 1000);
        detail_kv(o, l, "deep check", UI_ROLE_NORMAL, buf);
    }
    {
        /* The server's own requests, answered at once. */
        size_t n = 0;

        buf[0] = '\0';
        for (int k = 0; k < MCP_ASKED__COUNT; k++) {
            unsigned long c = server_asked(s, (enum mcp_asked)k);

            if (c > 0 && n < sizeof(buf))
                n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s %lu",
                    n > 0 ? "  " : "", mcp_asked_name((enum mcp_asked)k), c);
        }
        if (n > 0)
            detail_kv(o, l, "server asked", UI_ROLE_NORMAL, buf);
    }
}

/* A list of names after a label, wrapped to the width, each with a
 * prefix ("+" added, "-" removed). */
static void
detail_names(struct ui_out *o, struct ui_line *l, const char *label,
    enum ui_role role, const char *prefix, char **names, size_t n)
{
    char buf[160];

    if (n == 0)
        return;
    ui_line_reset(l, UI_ROLE_NORMAL);
    ui_line_cell(l, UI_ROLE_HEADER, label, 11, false, o->ui->utf8);
    for (size_t i = 0; i < n; i++) {
        int w;

        str_sanitize(buf, sizeof(buf), names[i], strlen(names[i]));
        w = ui_text_cols(buf, strlen(buf)) + 3;
        if (l->cols > 11 && l->cols + w > o->ui->cols) {
            ui_out_line(o, l);
            ui_line_reset(l, UI_ROLE_NORMAL);
            ui_line_pad(l, UI_ROLE_NORMAL, 11);
        }
        ui_line_addf(l, role, "%s%s%s", prefix, buf, i + 1 < n ? ", " : "");
    }
    ui_out_line(o, l);
}

/* What the last change of the tool list did, as the UI saw it. */
static void
detail_tools_diff(struct ui_out *o, struct ui_line *l, const struct server *s)
{
    const struct model_server *ms = server_data(s);
    char                       when[32], buf[160];

    if (ms == NULL || ms->tool_changes == 0)
        return;
    fmt_clock(when, sizeof(when), ms->tools_changed_at, false);
    snprintf(buf, sizeof(buf), "%s the tool list changed %lu time%s, last "
        "at %s: %zu added, %zu removed", o->ui->g.changed, ms->tool_changes,
        ms->tool_changes == 1 ? "" : "s", when, ms->nadded, ms->nremoved);
    detail_kv(o, l, "changed", UI_ROLE_WARNING, buf);
    detail_names(o, l, "  added", UI_ROLE_REACHABLE, "+", ms->added, ms->nadded);
    detail_names(o, l, "  removed", UI_ROLE_UNREACHABLE, "-", ms->removed,
        ms->nremoved);
}

static void
detail_lists(struct ui_out *o, struct ui_line *l, const struct server *s)
{
    const char *caps[32];
    size_t      ncaps = server_capabilities(s, caps, 32);
    long        tools = server_tools(s);
    char        buf[160];

    ui_line_reset(l, UI_ROLE_NORMAL);
    ui_line_cell(l, UI_ROLE_HEADER, "capability", 11, false, o->ui->utf8);
    if (ncaps == 0)
        ui_line_add(l, UI_ROLE_DIM, "-");
    for (size_t i = 0; i < ncaps; i++) {
        str_sanitize(buf, sizeof(buf), caps[i], strlen(caps[i]));
        ui_line_addf(l, UI_ROLE_NORMAL, "%s%s", i > 0 ? ", " : "", buf);
    }
    ui_out_line(o, l);
    snprintf(buf, sizeof(buf), "tools (%ld)", tools < 0 ? 0 : tools);
    ui_line_reset(l, UI_ROLE_NORMAL);
    ui_line_cell(l, UI_ROLE_HEADER, tools >= 0 ? buf : "tools", 11, false,
        o->ui->utf8);
    if (tools < 0)
        ui_line_add(l, UI_ROLE_DIM, "no complete listing yet");
    /* Tool names wrap onto as many lines as they need. */
    for (long i = 0; i < tools; i++) {
        const char *name = server_tool_name(s, i);
        int         w;

        if (name == NULL)
            break;
        str_sanitize(buf, sizeof(buf), name, strlen(name));
        w = ui_text_cols(buf, strlen(buf)) + 2;
        if (l->cols > 11 && l->cols + w > o->ui->cols) {
            ui_out_line(o, l);
            ui_line_reset(l, UI_ROLE_NORMAL);
            ui_line_pad(l, UI_ROLE_NORMAL, 11);
        }
        ui_line_addf(l, UI_ROLE_NORMAL, "%s%s", buf, i + 1 < tools ? ", " : "");
    }
    ui_out_line(o, l);
    detail_tools_diff(o, l, s);
}

static void
detail_history(struct ui_out *o, struct ui_line *l, const struct server *s)
{
    size_t len = server_history_len(s);
    char   buf[64], http[32];

    snprintf(buf, sizeof(buf), "exchanges (last %zu, newest first)", len);
    detail_title(o, l, buf);
    for (size_t k = len; k > 0; k--) {
        const struct mcp_exchange *x = server_history(s, k - 1);
        enum liveness_state           st;
        enum ui_role                  role = UI_ROLE_REACHABLE;

        if (x == NULL)
            continue;
        ui_line_reset(l, UI_ROLE_NORMAL);
        fmt_clock(buf, sizeof(buf), x->ts, true);
        ui_line_addf(l, UI_ROLE_DIM, "  %s ", buf);
        ui_line_cell(l, UI_ROLE_NORMAL, x->op != NULL ? x->op : "?", 14, false,
            o->ui->utf8);
        ui_line_add(l, UI_ROLE_NORMAL, " ");
        if (!x->completed) {
            if (liveness_state_of_kind(x->kind, &st))
                role = fmt_kind_role(x->kind);
            else
                role = UI_ROLE_ABSENT;
        }
        ui_line_cell(l, role, x->completed ? "completed" :
            liveness_state_of_kind(x->kind, &st) &&
            st == LIVENESS_REACHABLE ? "error" : "failed", 9, false,
            o->ui->utf8);
        ui_line_add(l, UI_ROLE_NORMAL, " ");
        ui_line_cell(l, role, x->completed ? "" : failure_kind_name(x->kind),
            17, false, o->ui->utf8);
        ui_line_add(l, UI_ROLE_NORMAL, " ");
        ui_line_cell(l, fmt_delivered_role(x->delivered), x->completed ? "" :
            delivered_name(x->delivered), 7, false, o->ui->utf8);
        fmt_http(http, sizeof(http), x->http_status, FAILURE_REASON_NONE);
        ui_line_add(l, UI_ROLE_NORMAL, " ");
        ui_line_cell(l, UI_ROLE_NORMAL, http, 8, false, o->ui->utf8);
        ui_line_addf(l, UI_ROLE_NORMAL, " %8.1f ms", x->ms);
        ui_out_line(o, l);
    }
}

/* A tap's ledger (issue 31): the agent's requests in flight (and the
 * server's to the agent), oldest first, with their age and progress. */
static void
detail_ledger(struct ui_out *o, struct ui_line *l, const struct server *s)
{
    size_t  n = server_in_flight(s);
    int64_t now = clock_wall_ms();
    char    buf[320], age[24];

    snprintf(buf, sizeof(buf), "in flight through the tap (%zu, oldest "
        "first%s)", n, n > 0 ? "; C cancels one" : "");
    detail_title(o, l, buf);
    for (size_t i = 0; i < n; i++) {
        const struct server_request *r = server_request(s, i);
        int64_t                      waited;

        if (r == NULL)
            break;
        waited = now - r->started_at;
        ui_line_reset(l, UI_ROLE_NORMAL);
        ui_line_add(l, UI_ROLE_NORMAL, "  ");
        ui_line_cell(l, UI_ROLE_NORMAL, r->id, 10, false, o->ui->utf8);
        ui_line_add(l, UI_ROLE_NORMAL, " ");
        ui_line_cell(l, UI_ROLE_DIM, r->direction, 9, false, o->ui->utf8);
        snprintf(buf, sizeof(buf), " %s%s%s", r->method, r->tool[0] ? " " :
            "", r->tool);
        ui_line_cell(l, UI_ROLE_NORMAL, buf, 40, false, o->ui->utf8);
        fmt_age(age, sizeof(age), waited);
        ui_line_addf(l, waited > 60000 ? UI_ROLE_WARNING : UI_ROLE_NORMAL,
            " %6s", age);
        if (r->has_progress && r->has_total)
            snprintf(buf, sizeof(buf), "  %g/%g", r->progress, r->total);
        else if (r->has_progress)
            snprintf(buf, sizeof(buf), "  %g", r->progress);
        else
            snprintf(buf, sizeof(buf), "  no progress");
        ui_line_add(l, r->has_progress ? UI_ROLE_NORMAL : UI_ROLE_DIM, buf);
        if (r->message[0] != '\0')
            ui_line_addf(l, UI_ROLE_DIM, " %s", r->message);
        ui_line_addf(l, UI_ROLE_DIM, "  %llu B", (unsigned long long)r->bytes);
        ui_out_line(o, l);
    }
}

/* An HTTP tap's agent sessions (issue 31), newest first: 8 characters
 * of each id, its age, requests and last activity; mcptop end --session
 * ends one through the tap. */
static void
detail_agent_sessions(struct ui_out *o, struct ui_line *l,
    const struct server *s)
{
    long    n = server_agent_sessions(s);
    int64_t now = clock_wall_ms();
    char    buf[160], age[24], idle[24];

    if (n < 0)
        return;
    snprintf(buf, sizeof(buf), "the agent's sessions (%ld%s)", n, n > 0 ?
        "; mcptop end --session PREFIX ends one" : "");
    detail_title(o, l, buf);
    for (size_t i = 0; i < (size_t)n; i++) {
        const struct server_agent_session *a = server_agent_session(s, i);

        if (a == NULL)
            break;
        fmt_age(age, sizeof(age), now - a->created_at);
        fmt_age(idle, sizeof(idle), now - a->last_at);
        ui_line_reset(l, UI_ROLE_NORMAL);
        ui_line_add(l, UI_ROLE_NORMAL, "  ");
        ui_line_cell(l, UI_ROLE_NORMAL, a->id_prefix, 10, false, o->ui->utf8);
        ui_line_addf(l, UI_ROLE_NORMAL, " age %6s  %5lu requests  last %6s "
            "ago", age, a->requests, idle);
        if (a->ending)
            ui_line_add(l, UI_ROLE_WARNING, "  ending");
        ui_out_line(o, l);
    }
}

static void
detail_tail(struct ui_out *o, struct ui_line *l, const struct server *s)
{
    size_t n = server_stderr_count(s), ne = server_ending_count(s);
    char   buf[512];

    snprintf(buf, sizeof(buf), "stderr (%zu lines)", n);
    detail_title(o, l, buf);
    for (size_t i = 0; i < n; i++) {
        const char *line = server_stderr_line(s, i);

        if (line == NULL)
            break;
        str_sanitize(buf, sizeof(buf), line, strlen(line));
        ui_line_reset(l, UI_ROLE_NORMAL);
        ui_line_addf(l, UI_ROLE_DIM, "  %s", buf);
        ui_out_line(o, l);
    }
    snprintf(buf, sizeof(buf), "endings (%zu)", ne);
    detail_title(o, l, buf);
    for (size_t i = ne; i > 0; i--) {
        const struct ending *e = server_ending(s, i - 1);

        if (e == NULL)
            continue;
        fmt_ending(o->ui, l, e, false);
        ui_out_line(o, l);
    }
}

/* The pane's text after its title: target, session, lists, history,
 * the stderr tail. */
static void
detail_body(struct ui_out *o, struct ui_line *l, const struct server *s)
{
    struct ui                  *ui = o->ui;
    char                        name[128], target[512];
    const char                 *t;
    const struct config_server *d;

    d = server_decl(s);
    if (d != NULL && d->transport == CONFIG_STDIO && d->tap == NULL) {
        /* server_target joins the args after ${VAR} expansion, and an
         * expanded value is a secret: show the args as written. */
        size_t len;

        t = d->command_shown != NULL ? d->command_shown : d->command != NULL
            ? d->command : "";
        str_sanitize(target, sizeof(target), t, strlen(t));
        for (size_t i = 0; i < d->nargs && d->args_shown != NULL; i++) {
            len = strlen(target);
            if (len + 2 >= sizeof(target))
                break;
            target[len++] = ' ';
            str_sanitize(target + len, sizeof(target) - len,
                d->args_shown[i], strlen(d->args_shown[i]));
        }
    } else {
        t = server_target(s);
        str_sanitize(target, sizeof(target), t, strlen(t));
    }
    snprintf(name, sizeof(name), "%s ", server_transport_name(s));
    ui_line_reset(l, UI_ROLE_NORMAL);
    ui_line_cell(l, UI_ROLE_HEADER, "target", 11, false, ui->utf8);
    ui_line_add(l, UI_ROLE_DIM, name);
    ui_line_add(l, UI_ROLE_NORMAL, target);
    ui_out_line(o, l);
    if (d != NULL && d->nsources > 0) {
        /* One server found in several clients' files (issue 28). */
        char shown[512];

        target[0] = '\0';
        for (size_t i = 0; i < d->nsources; i++) {
            size_t len = strlen(target);

            snprintf(target + len, sizeof(target) - len, "%s%s (%s)",
                i > 0 ? ", " : "", d->sources[i].client != NULL
                ? d->sources[i].client : "-", d->sources[i].origin);
        }
        str_sanitize(shown, sizeof(shown), target, strlen(target));
        detail_kv(o, l, "sources", UI_ROLE_NORMAL, shown);
    }
    detail_session(o, l, s);
    if (server_is_tap(s)) {
        detail_ledger(o, l, s);
        detail_agent_sessions(o, l, s);
    }
    detail_lists(o, l, s);
    detail_history(o, l, s);
    detail_tail(o, l, s);
}

/* See ui.h. */
void
view_detail_text(struct ui *ui, size_t i, FILE *out)
{
    struct ui_out  o = { .ui = ui, .rows = 1 << 30, .sink = out };
    struct ui_line l;

    detail_body(&o, &l, fleet_server(ui->fleet, i));
}

void
view_detail_draw(struct ui *ui, int y, int rows)
{
    struct ui_out        o = { .ui = ui, .y = y + 1, .rows = rows - 1 };
    struct ui_line       l;
    const struct server *s;
    char                 name[128];

    if (rows <= 0)
        return;
    ui_line_reset(&l, UI_ROLE_BORDER);
    if (ui->model.sel == MODEL_NONE || ui->model.nvis == 0) {
        ui_line_addf(&l, UI_ROLE_BORDER, "%s%s no server selected ",
            ui->g.hline, ui->g.hline);
        screen_line(y, &l, ui->cols, false);
        return;
    }
    if (model_header(&ui->model, ui->model.sel) != NULL) {
        const struct model_group_row *g =
            model_header(&ui->model, ui->model.sel);

        ui_line_addf(&l, UI_ROLE_BORDER, "%s%s group %s: %s, %zu server%s "
            "(Enter %s it) ", ui->g.hline, ui->g.hline,
            model_group_name(ui->model.group), g->name, g->count,
            g->count == 1 ? "" : "s", g->folded ? "unfolds" : "folds");
        screen_line(y, &l, ui->cols, false);
        return;
    }
    s = fleet_server(ui->fleet, ui->model.sel);
    fmt_name(name, sizeof(name), s);
    ui_line_addf(&l, UI_ROLE_BORDER, "%s%s ", ui->g.hline, ui->g.hline);
    ui_line_add(&l, UI_ROLE_HEADER, name);
    ui_line_add(&l, UI_ROLE_BORDER, " ");
    while (l.cols < ui->cols && l.len + 4 < sizeof(l.text))
        ui_line_add(&l, UI_ROLE_BORDER, ui->g.hline);
    screen_line(y, &l, ui->cols, false);
    if (ui->detail_scroll < 0)
        ui->detail_scroll = 0;
    o.skip = ui->detail_scroll;
    detail_body(&o, &l, s);
    /* Keep the scroll within the text. */
    if (o.n - ui->detail_scroll < o.rows && ui->detail_scroll > 0) {
        int max = o.n - o.rows;

        ui->detail_scroll = max > 0 ? max : 0;
        ui_dirty(ui);
    }
}

bool
view_detail_key(struct ui *ui, enum ui_action a)
{
    switch (a) {
    case UI_ACT_DETAIL_DOWN:
        ui->detail_scroll += 3;
        return true;
    case UI_ACT_DETAIL_UP:
        ui->detail_scroll = ui->detail_scroll > 3 ? ui->detail_scroll - 3 : 0;
        return true;
    default:
        return false;
    }
}
