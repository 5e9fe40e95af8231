/*
 * Small formatters the views share: ages, clock times, health and liveness
 * words with their glyphs, HTTP status cells, and the role each state is drawn in. A
 * state is always shown by a word or glyph as well as by its colour.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "engine/server.h"
#include "ui/screen.h"
#include "ui/ui.h"
#include "util/str.h"

void
fmt_age(char *buf, size_t n, int64_t ms)
{
    int64_t s = ms < 0 ? 0 : ms / 1000;

    if (s < 60)
        snprintf(buf, n, "%llds", (long long)s);
    else if (s < 3600)
        snprintf(buf, n, "%lldm", (long long)(s / 60));
    else if (s < 86400)
        snprintf(buf, n, "%lldh", (long long)(s / 3600));
    else
        snprintf(buf, n, "%lldd", (long long)(s / 86400));
}

void
fmt_clock(char *buf, size_t n, int64_t epoch_ms, bool millis)
{
    time_t    t = (time_t)(epoch_ms / 1000);
    struct tm tm;

    if (localtime_r(&t, &tm) == NULL) {
        snprintf(buf, n, "?");
        return;
    }
    if (millis)
        snprintf(buf, n, "%02d:%02d:%02d.%03d", tm.tm_hour, tm.tm_min,
            tm.tm_sec, (int)(epoch_ms % 1000));
    else
        snprintf(buf, n, "%02d:%02d:%02d", tm.tm_hour, tm.tm_min, tm.tm_sec);
}

enum ui_role
fmt_live_role(const struct liveness *l)
{
    if (!l->present)
        return UI_ROLE_ABSENT;
    switch (l->state) {
    case LIVENESS_REACHABLE:
        return UI_ROLE_REACHABLE;
    case LIVENESS_UNREACHABLE:
        return UI_ROLE_UNREACHABLE;
    default:
        return UI_ROLE_UNKNOWN;
    }
}

enum ui_role
fmt_health_role(enum health_state h)
{
    switch (h) {
    case HEALTH_OK:
        return UI_ROLE_REACHABLE;
    case HEALTH_DEGRADED:
    case HEALTH_INVALID:
        return UI_ROLE_WARNING;
    case HEALTH_DOWN:
        return UI_ROLE_UNREACHABLE;
    case HEALTH_UNKNOWN:
        return UI_ROLE_UNKNOWN;
    case HEALTH_PENDING:
        return UI_ROLE_ABSENT;
    default:
        /* Not monitored now: paused, stopped, disabled. */
        return UI_ROLE_DIM;
    }
}

void
fmt_health(const struct ui *ui, char *buf, size_t n, enum health_state h)
{
    if ((unsigned)h >= HEALTH__COUNT)
        snprintf(buf, n, "%s", "");
    else
        snprintf(buf, n, "%s %s", ui->g.health[h], health_state_name(h));
}

enum ui_role
fmt_delivered_role(enum delivered d)
{
    switch (d) {
    case DELIVERED_YES:
        return UI_ROLE_DELIVERED_YES;
    case DELIVERED_NO:
        return UI_ROLE_DELIVERED_NO;
    default:
        return UI_ROLE_DELIVERED_UNKNOWN;
    }
}

void
fmt_liveness(const struct ui *ui, char *buf, size_t n,
    const struct liveness *l)
{
    if (!l->present)
        snprintf(buf, n, "%s", ui->g.absent);
    else
        snprintf(buf, n, "%s %s", ui->g.live[l->state],
            liveness_state_name(l->state));
}

void
fmt_http(char *buf, size_t n, long status, enum failure_reason reason)
{
    if (status <= 0)
        snprintf(buf, n, "%s", "");
    else if (reason != FAILURE_REASON_NONE) {
        /* Words, as an operator says them: "502 bad gateway". */
        int off = snprintf(buf, n, "%ld %s", status,
            failure_reason_name(reason));

        for (int i = 0; i < off && (size_t)i < n; i++) {
            if (buf[i] == '_')
                buf[i] = ' ';
        }
    }
    else
        snprintf(buf, n, "%ld", status);
}

enum ui_role
fmt_reason_role(enum failure_reason reason, bool current)
{
    switch (reason) {
    case FAILURE_REASON_AUTH:
    case FAILURE_REASON_FORBIDDEN:
    case FAILURE_REASON_CHALLENGE:
        /* The operator can act on these: credentials, a WAF rule. */
        return UI_ROLE_WARNING;
    default:
        return current ? UI_ROLE_NORMAL : UI_ROLE_DIM;
    }
}

enum ui_role
fmt_kind_role(enum failure_kind k)
{
    enum liveness_state st;

    if (!liveness_state_of_kind(k, &st))
        return UI_ROLE_ABSENT;
    switch (st) {
    case LIVENESS_UNREACHABLE:
        return UI_ROLE_UNREACHABLE;
    case LIVENESS_UNKNOWN:
        return UI_ROLE_UNKNOWN;
    default:
        /* The server answered, with an error. */
        return UI_ROLE_WARNING;
    }
}

void
fmt_failing(const struct ui *ui, char *buf, size_t n, const struct server *s)
{
    bool          more;
    unsigned long k = model_fail_streak(s, &more);

    if (k == 0)
        snprintf(buf, n, "%s", "");
    else
        snprintf(buf, n, "%s%lu%s", ui->g.times, k, more ? "+" : "");
}

void
fmt_name(char *buf, size_t n, const struct server *s)
{
    const char *name = server_name(s);

    str_sanitize(buf, n, name, strlen(name));
}

void
fmt_ending(const struct ui *ui, struct ui_line *l, const struct ending *e,
    bool with_server)
{
    char         buf[200];
    enum ui_role role;

    ui_line_reset(l, UI_ROLE_NORMAL);
    fmt_clock(buf, sizeof(buf), e->started_at, false);
    ui_line_addf(l, UI_ROLE_DIM, "%s ", buf);
    if (with_server && e->server != NULL) {
        fmt_name(buf, sizeof(buf), e->server);
        ui_line_cell(l, UI_ROLE_NORMAL, buf, 16, false, ui->utf8);
        ui_line_add(l, UI_ROLE_NORMAL, " ");
    }
    if (e->outcome == ENDING_PENDING)
        role = UI_ROLE_WARNING;
    else if (ending_outcome_ok(e->outcome))
        role = UI_ROLE_REACHABLE;
    else
        role = UI_ROLE_UNREACHABLE;
    ui_line_cell(l, role, ending_outcome_name(e->outcome), 12, false,
        ui->utf8);
    buf[0] = '\0';
    if (e->http_status > 0)
        snprintf(buf, sizeof(buf), "HTTP %ld", e->http_status);
    else if (e->outcome == ENDING_EXITED && e->exit_code >= 0)
        snprintf(buf, sizeof(buf), "exit %d", e->exit_code);
    else if (e->outcome == ENDING_SIGNALLED || e->outcome == ENDING_KILLED)
        snprintf(buf, sizeof(buf), "signal %d", e->signal);
    ui_line_add(l, UI_ROLE_NORMAL, " ");
    ui_line_cell(l, UI_ROLE_NORMAL, buf, 9, false, ui->utf8);
    if (e->outcome == ENDING_PENDING)
        snprintf(buf, sizeof(buf), "%s", ui->utf8 ? "\xe2\x80\xa6" : "...");
    else
        snprintf(buf, sizeof(buf), "%.0f ms", e->duration_ms);
    ui_line_add(l, UI_ROLE_NORMAL, " ");
    ui_line_cell(l, UI_ROLE_NORMAL, buf, 9, true, ui->utf8);
    ui_line_add(l, UI_ROLE_NORMAL, "  ");
    if (e->settled)
        ui_line_addf(l, UI_ROLE_DIM, "settled +%.0f ms",
            e->settled_ms > e->duration_ms ? e->settled_ms - e->duration_ms :
            0.0);
    else
        ui_line_addf(l, UI_ROLE_WARNING, "settling%s",
            ui->utf8 ? "\xe2\x80\xa6" : "...");
    if (e->has_failure)
        ui_line_addf(l, fmt_delivered_role(e->delivered), "  %s (delivered "
            "%s)", failure_kind_name(e->kind), delivered_name(e->delivered));
    if (e->half_open)
        ui_line_add(l, UI_ROLE_WARNING, "  half-open");
    if (e->sessionless)
        ui_line_add(l, UI_ROLE_DIM, "  sessionless");
    if (e->detail[0] != '\0') {
        str_sanitize(buf, sizeof(buf), e->detail, strlen(e->detail));
        ui_line_addf(l, UI_ROLE_DIM, "  %s", buf);
    }
}

void
ui_out_line(struct ui_out *o, const struct ui_line *l)
{
    int i = o->n++ - o->skip;

    if (o->sink != NULL) {
        size_t len = l->len;

        while (len > 0 && l->text[len - 1] == ' ')
            len--;
        fprintf(o->sink, "%.*s\n", (int)len, l->text);
        return;
    }
    if (i >= 0 && i < o->rows)
        screen_line(o->y + i, l, o->ui->cols, false);
}
