/*
 * The incident report of a recording (report.h). One pass over the
 * recording's events in order keeps each server's health and current
 * failure (the failure of its last exchange while monitored, as the TUI's
 * model_current_failure), lists the health changes inside the window,
 * and marks, per server and minute, the kinds it failed with; the minute
 * counts come from those marks. Linear in events plus servers x minutes.
 * Server text in the recording is already sanitized; Markdown cells only
 * have their pipes escaped.
 */
#include "export/report.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "util/clock.h"
#include "util/xmalloc.h"

#define REPORT_MINUTE_MS 60000
/* Beyond this many server-minutes the minute table is left out. */
#define REPORT_MAX_CELLS (64u * 1024 * 1024)

/* What the pass keeps per server. */
struct report_cur {
    enum health_state health;       /* HEALTH__COUNT: none yet */
    int               kind;         /* current failure, -1 none */
    long              http_status;
    const char       *reason;
    const char       *detail;
    int64_t           since;        /* when kind began */
    bool              started;      /* at_start is set */
    size_t            last_ending;  /* in r->endings, +1; 0 none */
};

static bool
report_failing(enum health_state h)
{
    return h == HEALTH_DOWN || h == HEALTH_DEGRADED || h == HEALTH_UNKNOWN ||
        h == HEALTH_INVALID;
}

/* Minute index of t in the window. */
static size_t
report_minute(const struct report *r, int64_t t)
{
    int64_t first = r->from - r->from % REPORT_MINUTE_MS;

    if (t < r->from)
        t = r->from;
    if (t > r->to)
        t = r->to;
    return (size_t)((t - first) / REPORT_MINUTE_MS);
}

/* Server i failed with kind from a to b: mark every minute it touched. */
static void
report_mark(struct report *r, uint16_t *marks, size_t i, int kind, int64_t a,
    int64_t b)
{
    size_t n = r->log->nservers;

    if (marks == NULL || kind < 0 || b < r->from || a > r->to)
        return;
    for (size_t m = report_minute(r, a); m <= report_minute(r, b) &&
        m < r->nbuckets; m++)
        marks[m * n + i] |= (uint16_t)(1u << kind);
}

/* Server i's current failure becomes kind (-1: none) at t. */
static void
report_set_kind(struct report *r, uint16_t *marks, struct report_cur *c,
    size_t i, int kind, int64_t t)
{
    if (c->kind >= 0)
        report_mark(r, marks, i, c->kind, c->since, t);
    if (kind >= 0)
        c->since = t;
    c->kind = kind;
}

static void
report_add_change(struct report_server *rs, const struct report_change *ch)
{
    rs->timeline = xrealloc(rs->timeline, (rs->n + 1) * sizeof(*ch));
    rs->timeline[rs->n++] = *ch;
}

/* A health line: the change, the first failure, the last recovery. */
static void
report_health(struct report *r, uint16_t *marks, struct report_cur *c,
    const struct recording_event *ev)
{
    struct report_server *rs = &r->servers[ev->server];
    struct report_change  ch = { .at = ev->at, .health = ev->health,
        .was = ev->was, .kind = -1, .reason = ev->health_reason,
        .detail = "" };

    if (!health_monitored(ev->health))
        report_set_kind(r, marks, c, ev->server, -1, ev->at);
    if (report_failing(ev->health) && c->kind >= 0) {
        ch.kind = c->kind;
        ch.http_status = c->http_status;
        if (c->reason != NULL && c->reason[0] != '\0')
            ch.reason = c->reason;
        ch.detail = c->detail != NULL ? c->detail : "";
    }
    c->health = ev->health;
    if (ev->at < r->from)
        return;
    report_add_change(rs, &ch);
    /* What mcptop's own leaving did (its endings' exchanges, the stops)
     * is listed, but is neither a failure nor a recovery. */
    if (r->stopping_at >= 0 && ev->at >= r->stopping_at)
        return;
    if (report_failing(ch.health) &&
        (ch.was == HEALTH__COUNT || !report_failing(ch.was)) &&
        r->first_failure == (size_t)-1) {
        r->first_failure = ev->server;
        r->first_failure_at = ev->at;
        r->first_failure_kind = ch.kind;
    }
    if (ch.health == HEALTH_OK && ch.was < HEALTH__COUNT &&
        report_failing(ch.was)) {
        r->last_recovery = ev->server;
        r->last_recovery_at = ev->at;
    }
}

static void
report_ending(struct report *r, struct report_cur *c,
    const struct recording_event *ev)
{
    if (ev->type == RECORDING_SETTLED) {
        if (c->last_ending > 0 &&
            r->endings[c->last_ending - 1].settled == NULL)
            r->endings[c->last_ending - 1].settled = ev;
        return;
    }
    if (ev->at < r->from)
        return;
    r->endings = xrealloc(r->endings, (r->nendings + 1) *
        sizeof(*r->endings));
    r->endings[r->nendings].ending = ev;
    r->endings[r->nendings].settled = NULL;
    r->nendings++;
    c->last_ending = r->nendings;
    if ((unsigned)ev->ending->outcome < ENDING__COUNT)
        r->outcomes[ev->ending->outcome]++;
}

/* The window's bounds: given, or the recording's own. */
static void
report_window(struct report *r, int64_t from, int64_t to)
{
    const struct recording_log *log = r->log;
    int64_t                     lo = log->started_at, hi = log->started_at;

    for (size_t k = 0; k < log->nevents; k++) {
        if (log->events[k].at < lo)
            lo = log->events[k].at;
        if (log->events[k].at > hi)
            hi = log->events[k].at;
    }
    r->from = from >= 0 ? from : lo;
    r->to = to >= 0 ? to : hi;
    if (r->to < r->from)
        r->to = r->from;
}

/* A server changed when more happened than its first verdict, before
 * mcptop began to leave (and than a stop at the very end, for a recording
 * with no stopping line). */
static void
report_changed(const struct report *r, struct report_server *rs)
{
    for (size_t k = 0; k < rs->n; k++) {
        const struct report_change *ch = &rs->timeline[k];

        if (r->stopping_at >= 0 && ch->at >= r->stopping_at)
            continue;
        if (ch->was == HEALTH__COUNT || ch->health == HEALTH_PENDING)
            continue;
        if (ch->was == HEALTH_PENDING && ch->health == HEALTH_OK)
            continue;
        if (k + 1 == rs->n && ch->health == HEALTH_STOPPED)
            continue;
        rs->changed = true;
        return;
    }
}

struct report *
report_new(const struct recording_log *log, int64_t from, int64_t to)
{
    struct report     *r = xcalloc(1, sizeof(*r));
    struct report_cur *cur;
    uint16_t          *marks = NULL;
    size_t             n = log->nservers;

    r->log = log;
    r->first_failure = r->last_recovery = (size_t)-1;
    r->first_failure_kind = -1;
    r->stopping_at = -1;
    report_window(r, from, to);
    r->servers = xcalloc(n + 1, sizeof(*r->servers));
    cur = xcalloc(n + 1, sizeof(*cur));
    for (size_t i = 0; i < n; i++) {
        r->servers[i].index = i;
        r->servers[i].at_start = r->servers[i].at_end = HEALTH__COUNT;
        cur[i].health = HEALTH__COUNT;
        cur[i].kind = -1;
    }
    r->nbuckets = report_minute(r, r->to) + 1;
    if (n > 0 && r->nbuckets <= REPORT_MAX_CELLS / n)
        marks = xcalloc(r->nbuckets * n, sizeof(*marks));
    else
        r->nbuckets = 0;
    for (size_t k = 0; k < log->nevents; k++) {
        const struct recording_event *ev = &log->events[k];
        struct report_cur            *c;

        if (ev->at > r->to)
            continue;
        if (ev->type == RECORDING_EXIT) {
            if (ev->at >= r->from)
                r->exit = ev;
            continue;
        }
        if (ev->type == RECORDING_STOPPING) {
            if (ev->at >= r->from && r->stopping_at < 0)
                r->stopping_at = ev->at;
            continue;
        }
        if (ev->server >= n)
            continue;
        c = &cur[ev->server];
        if (ev->at >= r->from && !c->started) {
            r->servers[ev->server].at_start = c->health;
            c->started = true;
        }
        switch (ev->type) {
        case RECORDING_EXCHANGE:
            if (!ev->completed && (c->health == HEALTH__COUNT ||
                health_monitored(c->health))) {
                report_set_kind(r, marks, c, ev->server, (int)ev->kind,
                    ev->at);
                c->http_status = ev->http_status;
                c->reason = failure_reason_name(ev->reason);
                c->detail = ev->detail;
            } else if (ev->completed) {
                report_set_kind(r, marks, c, ev->server, -1, ev->at);
            }
            break;
        case RECORDING_HEALTH:
            report_health(r, marks, c, ev);
            break;
        case RECORDING_SERVER:
            c->health = ev->health;
            report_set_kind(r, marks, c, ev->server,
                report_failing(ev->health) && ev->op != NULL ?
                (int)ev->kind : -1, ev->at);
            c->http_status = ev->http_status;
            c->reason = failure_reason_name(ev->reason);
            c->detail = ev->detail;
            break;
        case RECORDING_ENDING:
        case RECORDING_SETTLED:
            report_ending(r, c, ev);
            break;
        default:
            break;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (cur[i].kind >= 0)
            report_mark(r, marks, i, cur[i].kind, cur[i].since, r->to);
        if (!cur[i].started)
            r->servers[i].at_start = cur[i].health;
        r->servers[i].at_end = cur[i].health;
        report_changed(r, &r->servers[i]);
    }
    if (r->nbuckets > 0) {
        r->buckets = xcalloc(r->nbuckets, sizeof(*r->buckets));
        for (size_t m = 0; m < r->nbuckets; m++) {
            struct report_bucket *b = &r->buckets[m];

            b->minute = r->from - r->from % REPORT_MINUTE_MS +
                (int64_t)m * REPORT_MINUTE_MS;
            for (size_t i = 0; i < n; i++) {
                uint16_t bits = marks[m * n + i];

                if (bits == 0)
                    continue;
                b->total++;
                for (int kk = 0; kk < FAILURE__COUNT; kk++) {
                    if (bits & (1u << kk))
                        b->kinds[kk]++;
                }
            }
        }
    }
    free(marks);
    free(cur);
    return r;
}

void
report_free(struct report *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->log->nservers; i++)
        free(r->servers[i].timeline);
    free(r->servers);
    free(r->buckets);
    free(r->endings);
    free(r);
}

/* --- Markdown ------------------------------------------------------------ */

/* "22:17:32.231" (UTC): the day is in the span line. */
static void
report_clock(char *buf, size_t n, int64_t ms)
{
    char iso[40];

    clock_format_iso(ms, iso, sizeof(iso));
    /* 2026-12-01T22:17:32.231Z */
    snprintf(buf, n, "%.12s", strlen(iso) > 11 ? iso + 11 : iso);
}

static void
report_duration(char *buf, size_t n, int64_t ms)
{
    int64_t s = ms / 1000;

    if (s < 60)
        snprintf(buf, n, "%lld s", (long long)s);
    else if (s < 3600)
        snprintf(buf, n, "%lld min %lld s", (long long)(s / 60),
            (long long)(s % 60));
    else
        snprintf(buf, n, "%lld h %lld min", (long long)(s / 3600),
            (long long)(s / 60 % 60));
}

/* A table cell: pipes escaped, at most max bytes (then "..."). */
static void
report_cell(FILE *out, const char *s, size_t max)
{
    size_t len = s != NULL ? strlen(s) : 0;

    for (size_t i = 0; i < len && i < max; i++) {
        if (s[i] == '|')
            fputs("\\|", out);
        else if (s[i] == '\n' || s[i] == '\r')
            fputc(' ', out);
        else
            fputc(s[i], out);
    }
    if (len > max)
        fputs("...", out);
}

static const char *
report_health_word(enum health_state h)
{
    return h < HEALTH__COUNT ? health_state_name(h) : "(none)";
}

static void
report_md_head(FILE *out, const struct report *r, const char *file)
{
    const struct recording_log *log = r->log;
    char                        a[40], b[40], d[40], t[16];
    size_t                      changed = 0;

    for (size_t i = 0; i < log->nservers; i++)
        changed += r->servers[i].changed;
    clock_format_iso(r->from, a, sizeof(a));
    clock_format_iso(r->to, b, sizeof(b));
    report_duration(d, sizeof(d), r->to - r->from);
    fprintf(out, "# Incident report: ");
    report_cell(out, file, 200);
    fprintf(out, "\n\n- Recorded by mcptop %s; %zu server%s, %zu changed\n",
        log->mcptop, log->nservers, log->nservers == 1 ? "" : "s", changed);
    fprintf(out, "- Span: %s to %s (%s)\n", a, b, d);
    if (r->first_failure != (size_t)-1) {
        report_clock(t, sizeof(t), r->first_failure_at);
        fprintf(out, "- First failure: %s UTC, ", t);
        report_cell(out, log->servers[r->first_failure].name, 120);
        if (r->first_failure_kind >= 0)
            fprintf(out, " (%s)", failure_kind_name(
                (enum failure_kind)r->first_failure_kind));
        fputc('\n', out);
    } else {
        fprintf(out, "- First failure: none in the span\n");
    }
    if (r->last_recovery != (size_t)-1) {
        report_clock(t, sizeof(t), r->last_recovery_at);
        fprintf(out, "- Last recovery: %s UTC, ", t);
        report_cell(out, log->servers[r->last_recovery].name, 120);
        fputc('\n', out);
    } else {
        fprintf(out, "- Last recovery: none in the span\n");
    }
    if (r->stopping_at >= 0) {
        report_clock(t, sizeof(t), r->stopping_at);
        fprintf(out, "- mcptop began to leave at %s UTC: what follows is "
            "its own endings and stops, neither failure nor recovery\n", t);
    }
    if (log->cut)
        fprintf(out, "- The recording ends in a cut line (mcptop did not "
            "close it: a crash or a kill); read up to its last whole "
            "line\n");
    if (log->skipped > 0)
        fprintf(out, "- %zu line%s not understood, skipped\n", log->skipped,
            log->skipped == 1 ? "" : "s");
}

static void
report_md_timelines(FILE *out, const struct report *r)
{
    const struct recording_log *log = r->log;
    bool                        any = false;

    fprintf(out, "\n## Health changes\n");
    for (size_t i = 0; i < log->nservers; i++) {
        const struct report_server *rs = &r->servers[i];

        if (!rs->changed)
            continue;
        any = true;
        fprintf(out, "\n### ");
        report_cell(out, log->servers[i].name, 200);
        fprintf(out, " (%s, ", log->servers[i].transport);
        report_cell(out, log->servers[i].target, 120);
        fprintf(out, ")\n\n| time (UTC) | from | to | kind | reason | "
            "detail |\n|---|---|---|---|---|---|\n");
        for (size_t k = 0; k < rs->n; k++) {
            const struct report_change *ch = &rs->timeline[k];
            char                        t[16];

            report_clock(t, sizeof(t), ch->at);
            fprintf(out, "| %s | %s | %s | %s | ", t,
                report_health_word(ch->was), health_state_name(ch->health),
                ch->kind >= 0 ? failure_kind_name(
                (enum failure_kind)ch->kind) : "");
            if (ch->http_status != 0)
                fprintf(out, "%ld ", ch->http_status);
            report_cell(out, ch->reason, 80);
            fprintf(out, " | ");
            report_cell(out, ch->detail, 100);
            fprintf(out, " |\n");
        }
    }
    if (!any)
        fprintf(out, "\nNo server changed health in the span.\n");
}

static void
report_md_buckets(FILE *out, const struct report *r)
{
    bool used[FAILURE__COUNT] = { false };
    bool any = false;

    for (size_t m = 0; m < r->nbuckets; m++) {
        for (int k = 0; k < FAILURE__COUNT; k++) {
            used[k] = used[k] || r->buckets[m].kinds[k] > 0;
            any = any || r->buckets[m].kinds[k] > 0;
        }
    }
    fprintf(out, "\n## Servers failing, by kind, per minute\n\n");
    if (!any) {
        fprintf(out, "No server was failing in the span.\n");
        return;
    }
    fprintf(out, "| minute (UTC) |");
    for (int k = 0; k < FAILURE__COUNT; k++) {
        if (used[k])
            fprintf(out, " %s |", failure_kind_name((enum failure_kind)k));
    }
    fprintf(out, " servers failing |\n|---|");
    for (int k = 0; k < FAILURE__COUNT; k++) {
        if (used[k])
            fprintf(out, "---|");
    }
    fprintf(out, "---|\n");
    for (size_t m = 0; m < r->nbuckets; m++) {
        const struct report_bucket *b = &r->buckets[m];
        char                        t[16];

        /* Minutes with nothing failing are left out of the table. */
        if (b->total == 0)
            continue;
        report_clock(t, sizeof(t), b->minute);
        fprintf(out, "| %.5s |", t);
        for (int k = 0; k < FAILURE__COUNT; k++) {
            if (used[k])
                fprintf(out, " %zu |", b->kinds[k]);
        }
        fprintf(out, " %zu |\n", b->total);
    }
}

static void
report_md_endings(FILE *out, const struct report *r)
{
    const struct recording_log *log = r->log;
    bool                        first = true;

    fprintf(out, "\n## Endings\n\n");
    if (r->nendings == 0) {
        fprintf(out, "No session was ended in the span.\n");
    } else {
        fprintf(out, "| time (UTC) | server | outcome | status | "
            "duration ms | settled ms | detail |\n"
            "|---|---|---|---|---|---|---|\n");
    }
    for (size_t k = 0; k < r->nendings; k++) {
        const struct recording_event *ev = r->endings[k].ending;
        const struct recording_event *st = r->endings[k].settled;
        char                          t[16];

        report_clock(t, sizeof(t), ev->at);
        fprintf(out, "| %s | ", t);
        report_cell(out, log->servers[ev->server].name, 120);
        fprintf(out, " | %s | ", ending_outcome_name(ev->ending->outcome));
        if (ev->ending->http_status != 0)
            fprintf(out, "%ld", ev->ending->http_status);
        fprintf(out, " | %.1f | ", ev->ending->duration_ms);
        if (st != NULL && st->ending->settled)
            fprintf(out, "%.1f", st->ending->settled_ms);
        fprintf(out, " | ");
        report_cell(out, ev->ending->detail, 100);
        fprintf(out, " |\n");
    }
    if (r->nendings > 0) {
        fprintf(out, "\nOutcomes:");
        for (int o = 0; o < ENDING__COUNT; o++) {
            if (r->outcomes[o] == 0)
                continue;
            fprintf(out, "%s %s %zu", first ? "" : ",",
                ending_outcome_name((enum ending_outcome)o), r->outcomes[o]);
            first = false;
        }
        fputc('\n', out);
    }
    if (r->exit != NULL)
        fprintf(out, "\nmcptop left: %ld session%s ended, %ld not ended.\n",
            r->exit->sessions_ended, r->exit->sessions_ended == 1 ? "" : "s",
            r->exit->sessions_not_ended);
    else
        fprintf(out, "\nThe recording has no exit line: mcptop was still "
            "running, or did not stop cleanly.\n");
}

int
report_markdown(FILE *out, const struct report *r, const char *file)
{
    report_md_head(out, r, file);
    report_md_timelines(out, r);
    report_md_buckets(out, r);
    report_md_endings(out, r);
    return ferror(out) ? -1 : 0;
}

/* --- JSON ---------------------------------------------------------------- */

static void
report_add_time(cJSON *o, const char *key, int64_t ms)
{
    char iso[40];

    clock_format_iso(ms, iso, sizeof(iso));
    cJSON_AddStringToObject(o, key, iso);
}

static void
report_add_health(cJSON *o, const char *key, enum health_state h)
{
    if (h < HEALTH__COUNT)
        cJSON_AddStringToObject(o, key, health_state_name(h));
    else
        cJSON_AddNullToObject(o, key);
}

static cJSON *
report_json_moment(const struct report *r, size_t server, int64_t at)
{
    cJSON *o;

    if (server == (size_t)-1)
        return cJSON_CreateNull();
    o = cJSON_CreateObject();
    report_add_time(o, "at", at);
    cJSON_AddStringToObject(o, "server", r->log->servers[server].name);
    return o;
}

static cJSON *
report_json_server(const struct report *r, size_t i)
{
    const struct recording_server *s = &r->log->servers[i];
    const struct report_server    *rs = &r->servers[i];
    cJSON                         *o = cJSON_CreateObject();
    cJSON                         *tags, *tl;

    cJSON_AddStringToObject(o, "name", s->name);
    cJSON_AddStringToObject(o, "transport", s->transport);
    cJSON_AddStringToObject(o, "target", s->target);
    tags = cJSON_AddArrayToObject(o, "tags");
    for (size_t k = 0; k < s->ntags; k++)
        cJSON_AddItemToArray(tags, cJSON_CreateString(s->tags[k]));
    cJSON_AddBoolToObject(o, "changed", rs->changed);
    report_add_health(o, "health_at_start", rs->at_start);
    report_add_health(o, "health_at_end", rs->at_end);
    tl = cJSON_AddArrayToObject(o, "timeline");
    for (size_t k = 0; k < rs->n; k++) {
        const struct report_change *ch = &rs->timeline[k];
        cJSON                      *e = cJSON_CreateObject();

        report_add_time(e, "at", ch->at);
        cJSON_AddStringToObject(e, "health", health_state_name(ch->health));
        report_add_health(e, "was", ch->was);
        if (ch->kind >= 0)
            cJSON_AddStringToObject(e, "kind",
                failure_kind_name((enum failure_kind)ch->kind));
        else
            cJSON_AddNullToObject(e, "kind");
        cJSON_AddStringToObject(e, "reason", ch->reason != NULL ?
            ch->reason : "");
        if (ch->http_status != 0)
            cJSON_AddNumberToObject(e, "http_status",
                (double)ch->http_status);
        if (ch->detail != NULL && ch->detail[0] != '\0')
            cJSON_AddStringToObject(e, "detail", ch->detail);
        cJSON_AddItemToArray(tl, e);
    }
    return o;
}

static void
report_json_endings(cJSON *root, const struct report *r)
{
    cJSON *arr = cJSON_AddArrayToObject(root, "endings");
    cJSON *oc = cJSON_AddObjectToObject(root, "outcomes");

    for (size_t k = 0; k < r->nendings; k++) {
        const struct recording_event *ev = r->endings[k].ending;
        const struct recording_event *st = r->endings[k].settled;
        cJSON                        *o = cJSON_CreateObject();

        report_add_time(o, "at", ev->at);
        cJSON_AddStringToObject(o, "server",
            r->log->servers[ev->server].name);
        cJSON_AddStringToObject(o, "outcome",
            ending_outcome_name(ev->ending->outcome));
        if (ev->ending->http_status != 0)
            cJSON_AddNumberToObject(o, "http_status",
                (double)ev->ending->http_status);
        if (ev->ending->has_failure)
            cJSON_AddStringToObject(o, "kind",
                failure_kind_name(ev->ending->kind));
        cJSON_AddNumberToObject(o, "duration_ms", ev->ending->duration_ms);
        if (st != NULL && st->ending->settled)
            cJSON_AddNumberToObject(o, "settled_ms", st->ending->settled_ms);
        else
            cJSON_AddNullToObject(o, "settled_ms");
        cJSON_AddBoolToObject(o, "half_open", ev->ending->half_open);
        cJSON_AddStringToObject(o, "detail", ev->ending->detail);
        cJSON_AddItemToArray(arr, o);
    }
    for (int o = 0; o < ENDING__COUNT; o++) {
        if (r->outcomes[o] > 0)
            cJSON_AddNumberToObject(oc,
                ending_outcome_name((enum ending_outcome)o),
                (double)r->outcomes[o]);
    }
}

cJSON *
report_json(const struct report *r, const char *file)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *rec = cJSON_AddObjectToObject(root, "recording");
    cJSON *arr, *ff;

    cJSON_AddStringToObject(rec, "file", file);
    cJSON_AddStringToObject(rec, "mcptop", r->log->mcptop);
    cJSON_AddNumberToObject(rec, "servers", (double)r->log->nservers);
    cJSON_AddBoolToObject(rec, "cut", r->log->cut);
    cJSON_AddNumberToObject(rec, "skipped_lines", (double)r->log->skipped);
    report_add_time(root, "from", r->from);
    report_add_time(root, "to", r->to);
    ff = report_json_moment(r, r->first_failure, r->first_failure_at);
    if (cJSON_IsObject(ff) && r->first_failure_kind >= 0)
        cJSON_AddStringToObject(ff, "kind", failure_kind_name(
            (enum failure_kind)r->first_failure_kind));
    cJSON_AddItemToObject(root, "first_failure", ff);
    cJSON_AddItemToObject(root, "last_recovery",
        report_json_moment(r, r->last_recovery, r->last_recovery_at));
    if (r->stopping_at >= 0)
        report_add_time(root, "stopping_at", r->stopping_at);
    else
        cJSON_AddNullToObject(root, "stopping_at");
    arr = cJSON_AddArrayToObject(root, "servers");
    for (size_t i = 0; i < r->log->nservers; i++) {
        if (r->servers[i].changed)
            cJSON_AddItemToArray(arr, report_json_server(r, i));
    }
    arr = cJSON_AddArrayToObject(root, "buckets");
    for (size_t m = 0; m < r->nbuckets; m++) {
        cJSON *b = cJSON_CreateObject();
        cJSON *k = cJSON_CreateObject();

        report_add_time(b, "minute", r->buckets[m].minute);
        for (int kk = 0; kk < FAILURE__COUNT; kk++) {
            if (r->buckets[m].kinds[kk] > 0)
                cJSON_AddNumberToObject(k, failure_kind_name(
                    (enum failure_kind)kk), (double)r->buckets[m].kinds[kk]);
        }
        cJSON_AddItemToObject(b, "kinds", k);
        cJSON_AddNumberToObject(b, "servers_failing",
            (double)r->buckets[m].total);
        cJSON_AddItemToArray(arr, b);
    }
    report_json_endings(root, r);
    if (r->exit != NULL) {
        cJSON *e = cJSON_AddObjectToObject(root, "exit");

        report_add_time(e, "at", r->exit->at);
        cJSON_AddNumberToObject(e, "sessions_ended",
            (double)r->exit->sessions_ended);
        cJSON_AddNumberToObject(e, "sessions_not_ended",
            (double)r->exit->sessions_not_ended);
    } else {
        cJSON_AddNullToObject(root, "exit");
    }
    return root;
}
