/*
 * A snapshot now: Y writes the fleet as the screen shows it (the header's
 * counts and incident line, every row, the selected server's detail) as
 * Markdown to a new file in mcptop's state directory (app_state_dir: where
 * the token cache lives), and says where; y puts the selected row, or the
 * detail when its pane is open, on the terminal's clipboard by OSC 52.
 * Everything comes from the same redacted, sanitized getters as the
 * screen: no secret is ever written. No curses here (screen.c writes the
 * OSC 52 sequence).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/server.h"
#include "front/app.h"
#include "ui/replay.h"
#include "ui/screen.h"
#include "ui/ui.h"
#include "util/clock.h"
#include "util/str.h"

/* A Markdown cell: pipes escaped. */
static void
snapshot_cell(FILE *out, const char *s)
{
    fputc(' ', out);
    for (; s != NULL && *s != '\0'; s++) {
        if (*s == '|')
            fputs("\\|", out);
        else if (*s == '\n')
            fputc(' ', out);
        else
            fputc(*s, out);
    }
    fputs(" |", out);
}

/* Server i's row: the table's columns, as text cells. */
static void
snapshot_row(struct ui *ui, FILE *out, size_t i, bool markdown)
{
    const struct server   *s = fleet_server(ui->fleet, i);
    const struct liveness *live = server_liveness(s);
    const struct failure  *f = model_current_failure(s);
    struct health          h = server_health(s, NULL);
    char                   name[128], target[256], buf[64], fail[96];
    const char            *cells[10];
    char                   age[32] = "", streak[32] = "", tools[32] = "";
    char                   rtt[32] = "";

    fmt_name(name, sizeof(name), s);
    str_sanitize(target, sizeof(target), server_target(s),
        strlen(server_target(s)));
    snprintf(buf, sizeof(buf), "%s", health_state_name(h.state));
    if (live->present && model_monitored(s))
        fmt_age(age, sizeof(age), ui->model.now_ms - live->observed_at);
    if (model_fail_streak(s, NULL) > 0)
        snprintf(streak, sizeof(streak), "x%lu", model_fail_streak(s, NULL));
    if (server_tools(s) >= 0)
        snprintf(tools, sizeof(tools), "%ld", server_tools(s));
    if (model_rtt(s) >= 0)
        snprintf(rtt, sizeof(rtt), "%.1f", model_rtt(s));
    fail[0] = '\0';
    if (f != NULL) {
        char http[48];

        fmt_http(http, sizeof(http), f->http_status, f->reason);
        snprintf(fail, sizeof(fail), "%s%s%s delivered %s",
            failure_kind_name(f->kind), http[0] != '\0' ? " " : "", http,
            delivered_name(f->delivered));
    }
    cells[0] = name;
    cells[1] = server_transport_name(s);
    cells[2] = buf;
    cells[3] = live->present ? liveness_state_name(live->state) : "-";
    cells[4] = age;
    cells[5] = streak;
    cells[6] = tools;
    cells[7] = rtt;
    cells[8] = fail;
    cells[9] = target;
    if (markdown) {
        fputc('|', out);
        for (int k = 0; k < 10; k++)
            snapshot_cell(out, cells[k]);
        fputc('\n', out);
        return;
    }
    for (int k = 0; k < 10; k++) {
        if (cells[k][0] != '\0')
            fprintf(out, "%s%s", k > 0 ? "  " : "", cells[k]);
    }
    fputc('\n', out);
}

static void
snapshot_markdown(struct ui *ui, FILE *out)
{
    const struct model *m = &ui->model;
    char                iso[40];

    clock_format_iso(ui_now_ms(ui), iso, sizeof(iso));
    fprintf(out, "# mcptop snapshot, %s%s\n\n", iso,
        ui->replay != NULL ? " (a replay: the recorded time)" : "");
    fprintf(out, "```\n");
    view_header_text(ui, out);
    fprintf(out, "```\n\n");
    if (m->filter[0] != '\0')
        fprintf(out, "Filter \"%s\": %zu of %zu servers shown.\n\n",
            m->filter, m->nvis, m->n);
    fprintf(out, "| name | transport | health | liveness | age | failing | "
        "tools | rtt ms | current failure | target |\n"
        "|---|---|---|---|---|---|---|---|---|---|\n");
    for (size_t k = 0; k < m->nvis; k++)
        if (m->order[k] < m->n)         /* a group's header is no row */
            snapshot_row(ui, out, m->order[k], true);
    if (model_sel_server(m) != MODEL_NONE) {
        char name[128];

        fmt_name(name, sizeof(name), fleet_server(ui->fleet, m->sel));
        fprintf(out, "\n## %s\n\n```\n", name);
        view_detail_text(ui, m->sel, out);
        fprintf(out, "```\n");
    }
}

/* A new file in dir, named for now (snapshot-20260102T030405Z.md, then
 * -2, -3... when taken). NULL with errno when none can be made. */
static FILE *
snapshot_create(const char *dir, char **path)
{
    char    iso[40], stamp[32];
    int64_t now = clock_wall_ms();

    clock_format_iso(now, iso, sizeof(iso));
    /* 2026-01-02T03:04:05.678Z -> 20260102T030405Z */
    snprintf(stamp, sizeof(stamp), "%.4s%.2s%.2sT%.2s%.2s%.2sZ", iso,
        iso + 5, iso + 8, iso + 11, iso + 14, iso + 17);
    for (int n = 1; n < 100; n++) {
        int fd;

        *path = n == 1 ? str_printf("%s/snapshot-%s.md", dir, stamp) :
            str_printf("%s/snapshot-%s-%d.md", dir, stamp, n);
        fd = open(*path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd >= 0)
            return fdopen(fd, "w");
        free(*path);
        *path = NULL;
        if (errno != EEXIST)
            return NULL;
    }
    return NULL;
}

void
snapshot_write(struct ui *ui)
{
    char *cause = NULL, *dir = app_state_dir(&cause), *path = NULL;
    FILE *out;
    int   bad;

    if (dir == NULL) {
        ui_message(ui, UI_ROLE_WARNING, "snapshot: %s", cause);
        free(cause);
        return;
    }
    out = snapshot_create(dir, &path);
    if (out == NULL) {
        ui_message(ui, UI_ROLE_WARNING, "snapshot: cannot write in %s: %s",
            dir, strerror(errno));
        free(dir);
        return;
    }
    snapshot_markdown(ui, out);
    bad = ferror(out);
    if (fclose(out) != 0 || bad)
        ui_message(ui, UI_ROLE_WARNING, "snapshot: %s could not be written "
            "completely", path);
    else
        ui_message(ui, UI_ROLE_NORMAL, "snapshot written to %s", path);
    free(path);
    free(dir);
}

void
snapshot_copy(struct ui *ui)
{
    const struct model *m = &ui->model;
    char               *text = NULL;
    size_t              len = 0;
    FILE               *out;

    if (model_sel_server(m) == MODEL_NONE) {
        ui_message(ui, UI_ROLE_WARNING, "nothing selected to copy");
        return;
    }
    out = open_memstream(&text, &len);
    if (out == NULL)
        return;
    if (ui->detail)
        view_detail_text(ui, m->sel, out);
    else
        snapshot_row(ui, out, m->sel, false);
    fclose(out);
    screen_clipboard(text, len);
    ui_message(ui, UI_ROLE_NORMAL, "copied the selected %s (%zu bytes) to "
        "the clipboard by OSC 52 (where the terminal allows it; tmux: "
        "set-clipboard on)", ui->detail ? "detail" : "row", len);
    free(text);
}
