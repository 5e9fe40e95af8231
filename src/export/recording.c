/*
 * The recording's writer (recording.h): a subscriber of the event stream
 * that appends watch's lines, stamped with the monotonic time too, to a
 * buffered file, flushed by a 1 s timer and rotated at a size. Every line
 * comes from jsonl.c's sanitized, redacted records; this file adds only
 * stamps, the fleet line and the state lines. It never blocks the loop on
 * the disk: stdio buffers, the timer flushes, nothing calls fsync.
 */
#include "export/recording.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/fleet.h"
#include "engine/server.h"
#include "export/jsonl.h"
#include "util/clock.h"
#include "util/str.h"
#include "util/xmalloc.h"

#define RECORDING_BUFFER (64 * 1024)
#define RECORDING_FLUSH_S 1.0

struct recording {
    char               *path;
    char               *path_prev;      /* path.1 */
    FILE               *fp;
    char               *buf;            /* fp's stdio buffer */
    long long           max_bytes;
    long long           bytes;          /* in the current file */
    long long           base;           /* ...of which its fleet line and
                                           snapshots */
    bool                rotating;       /* writing a new file's start */
    bool                pending;        /* written since the last flush */
    char               *error;          /* the first failure */
    struct ev_loop     *loop;
    ev_timer            flush_w;
    bool                started;
    bool                ended;          /* the exit line is written */
    const struct fleet *fleet;
};

static void
recording_fail(struct recording *r, const char *what)
{
    if (r->error == NULL)
        r->error = str_printf("%s: %s: %s", r->path, what, strerror(errno));
}

/* Start a file at r->path: truncated, or appended to (mode "a"). */
static int
recording_file_open(struct recording *r, const char *mode)
{
    r->fp = fopen(r->path, mode);
    if (r->fp == NULL)
        return -1;
    setvbuf(r->fp, r->buf, _IOFBF, RECORDING_BUFFER);
    r->bytes = 0;
    r->base = 0;
    return 0;
}

/* Where the file rotates: at max_bytes, or, for a fleet whose snapshots
 * alone pass half of it, at twice what the snapshots took (a file always
 * holds at least as many events as snapshots). */
static long long
recording_limit(const struct recording *r)
{
    return r->base > r->max_bytes / 2 ? r->base * 2 : r->max_bytes;
}

struct recording *
recording_open(const char *path, long long max_bytes, char **cause)
{
    struct recording *r = xcalloc(1, sizeof(*r));

    r->path = xstrdup(path);
    r->path_prev = str_printf("%s.1", path);
    r->max_bytes = max_bytes > 0 ? max_bytes :
        (long long)RECORDING_MAX_MB_DEFAULT * 1024 * 1024;
    r->buf = xmalloc(RECORDING_BUFFER);
    if (recording_file_open(r, "w") != 0) {
        *cause = str_printf("cannot write the recording %s: %s", path,
            strerror(errno));
        free(r->buf);
        free(r->path_prev);
        free(r->path);
        free(r);
        return NULL;
    }
    return r;
}

/* "{"ts":T,"mono_ms":M,"event":...": the stamps first, then body (a JSON
 * object's text, from its first member on). */
static char *
recording_stamped(int64_t ts, const char *body)
{
    char iso[40];

    clock_format_iso(ts, iso, sizeof(iso));
    return str_printf("{\"ts\":\"%s\",\"mono_ms\":%lld%s%s", iso,
        (long long)clock_mono_ms(), body[0] != '}' ? "," : "", body);
}

static void recording_rotate(struct recording *r);

/* Append one line (text without its newline). */
static void
recording_put(struct recording *r, const char *text)
{
    size_t len = strlen(text);

    if (r->fp == NULL)
        return;
    if (!r->rotating && r->bytes > r->base &&
        r->bytes + (long long)len + 1 > recording_limit(r))
        recording_rotate(r);
    if (r->fp == NULL)
        return;
    if (fwrite(text, 1, len, r->fp) != len || fputc('\n', r->fp) == EOF) {
        recording_fail(r, "write failed");
        return;
    }
    r->bytes += (long long)len + 1;
    if (r->rotating)
        r->base = r->bytes;
    r->pending = true;
}

/* Put o (taken) as a stamped line at ts. */
static void
recording_put_object(struct recording *r, int64_t ts, cJSON *o)
{
    char *text = cJSON_PrintUnformatted(o);
    char *line;

    cJSON_Delete(o);
    if (text == NULL)
        return;
    /* text is "{...}": its members follow the stamps. */
    line = recording_stamped(ts, text + 1);
    recording_put(r, line);
    free(line);
    free(text);
}

/* The fleet line: what was loaded, as every output shows it. */
static void
recording_put_fleet(struct recording *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *arr;

    cJSON_AddStringToObject(o, "event", "recording");
    cJSON_AddStringToObject(o, "mcptop", MCPTOP_VERSION);
    arr = cJSON_AddArrayToObject(o, "servers");
    for (size_t i = 0; r->fleet != NULL && i < fleet_size(r->fleet); i++) {
        const struct server        *s = fleet_server(r->fleet, i);
        const struct config_server *d = server_decl(s);
        cJSON                      *so = cJSON_CreateObject();
        cJSON                      *tags;
        char                       *name = str_sanitized(server_name(s));
        char                       *target = str_sanitized(server_target(s));

        cJSON_AddStringToObject(so, "name", name);
        cJSON_AddStringToObject(so, "transport", server_transport_name(s));
        cJSON_AddStringToObject(so, "target", target);
        tags = cJSON_AddArrayToObject(so, "tags");
        for (size_t k = 0; k < d->ntags; k++) {
            char *t = str_sanitized(d->tags[k]);

            cJSON_AddItemToArray(tags, cJSON_CreateString(t));
            free(t);
        }
        if (d->disabled)
            cJSON_AddBoolToObject(so, "disabled", true);
        cJSON_AddItemToArray(arr, so);
        free(name);
        free(target);
    }
    recording_put_object(r, clock_wall_ms(), o);
}

/* A "state" line: the lifecycle state and the session's facts now. */
static cJSON *
recording_state(const struct server *s)
{
    cJSON                     *o = cJSON_CreateObject();
    struct mcp_session_info si;
    char                      *name = str_sanitized(server_name(s));
    const char                *era = mcp_era_name(server_era(s));

    server_session(s, &si);
    cJSON_AddStringToObject(o, "event", "state");
    cJSON_AddStringToObject(o, "server", name);
    cJSON_AddStringToObject(o, "state", server_state_name(server_state(s)));
    if (era != NULL)
        cJSON_AddStringToObject(o, "era", era);
    if (si.open && si.protocol_version != NULL)
        cJSON_AddStringToObject(o, "protocol_version", si.protocol_version);
    if (server_tools(s) >= 0)
        cJSON_AddNumberToObject(o, "tools", (double)server_tools(s));
    if (server_rtt_ms(s) >= 0 && server_fail_streak(s) == 0)
        cJSON_AddNumberToObject(o, "rtt_ms",
            (double)((long)(server_rtt_ms(s) * 10)) / 10);
    free(name);
    return o;
}

/* After a rotation: the fleet line, then each server as it is now. */
static void
recording_put_snapshots(struct recording *r)
{
    recording_put_fleet(r);
    for (size_t i = 0; r->fleet != NULL && i < fleet_size(r->fleet); i++) {
        cJSON *o = jsonl_server(fleet_server(r->fleet, i));

        /* The record's members after "event": "server". */
        cJSON_AddItemToObject(o, "event", cJSON_CreateString("server"));
        {
            cJSON *ev = cJSON_DetachItemFromObject(o, "event");

            cJSON_InsertItemInArray(o, 0, ev);
        }
        recording_put_object(r, clock_wall_ms(), o);
    }
}

/* FILE becomes FILE.1 (the older one goes); a new FILE starts. When the
 * rename fails, nothing is lost: FILE goes on growing, and rotation
 * stops (said once, as the recording's error). */
static void
recording_rotate(struct recording *r)
{
    bool renamed;

    if (fclose(r->fp) != 0)
        recording_fail(r, "write failed");
    r->fp = NULL;
    renamed = rename(r->path, r->path_prev) == 0;
    if (!renamed) {
        recording_fail(r, "cannot rotate (it goes on growing)");
        r->max_bytes = LLONG_MAX / 4;
    }
    if (recording_file_open(r, renamed ? "w" : "a") != 0) {
        recording_fail(r, "cannot reopen after rotation");
        return;
    }
    if (!renamed)
        return;
    r->rotating = true;
    recording_put_snapshots(r);
    r->rotating = false;
}

/* ev_timer, every second: what was written reaches the file. */
static void
recording_flush_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct recording *r = w->data;

    (void)loop;
    (void)revents;
    if (r->fp == NULL || !r->pending)
        return;
    r->pending = false;
    if (fflush(r->fp) != 0)
        recording_fail(r, "write failed");
}

void
recording_start(struct recording *r, struct ev_loop *loop,
    const struct fleet *f)
{
    r->loop = loop;
    r->fleet = f;
    r->rotating = true;
    recording_put_fleet(r);
    r->rotating = false;
    ev_timer_init(&r->flush_w, recording_flush_cb, RECORDING_FLUSH_S,
        RECORDING_FLUSH_S);
    r->flush_w.data = r;
    ev_timer_start(loop, &r->flush_w);
    /* The flush alone never keeps a loop running. */
    ev_unref(loop);
    r->started = true;
}

void
recording_fleet(struct recording *r, const struct fleet *f)
{
    r->fleet = f;
    recording_put_fleet(r);
}

void
recording_event_cb(void *arg, const struct event *e)
{
    struct recording *r = arg;
    char             *text, *line;

    if (r->ended)
        return;
    if (e->type == EVENT_STATE) {
        recording_put_object(r, e->ts, recording_state(e->server));
        return;
    }
    text = jsonl_event_line(e);
    if (text == NULL)
        return;
    /* jsonl's line is {"ts":"...",...}: the stamps replace its ts. */
    {
        const char *rest = strstr(text, "\",");

        line = recording_stamped(e->ts, rest != NULL ? rest + 2 : "}");
    }
    recording_put(r, line);
    free(line);
    free(text);
}

void
recording_stopping(struct recording *r)
{
    cJSON *o = cJSON_CreateObject();

    if (r->ended)
        return;
    cJSON_AddStringToObject(o, "event", "stopping");
    recording_put_object(r, clock_wall_ms(), o);
}

void
recording_exit(struct recording *r, size_t asked, size_t not_ended)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddStringToObject(o, "event", "exit");
    cJSON_AddNumberToObject(o, "sessions_ended", (double)(asked - not_ended));
    cJSON_AddNumberToObject(o, "sessions_not_ended", (double)not_ended);
    recording_put_object(r, clock_wall_ms(), o);
    r->ended = true;
}

const char *
recording_error(const struct recording *r)
{
    return r->error;
}

const char *
recording_path(const struct recording *r)
{
    return r->path;
}

int
recording_close(struct recording *r)
{
    int rc;

    if (r == NULL)
        return 0;
    if (r->started) {
        ev_ref(r->loop);
        ev_timer_stop(r->loop, &r->flush_w);
    }
    if (r->fp != NULL && fclose(r->fp) != 0)
        recording_fail(r, "write failed");
    rc = r->error != NULL ? -1 : 0;
    free(r->error);
    free(r->buf);
    free(r->path_prev);
    free(r->path);
    free(r);
    return rc;
}
