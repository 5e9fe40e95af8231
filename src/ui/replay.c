/*
 * The replay's event source (replay.h): the recording's fleet lines
 * become a config of replayed servers (targets as recorded: already
 * redacted), and each recorded event becomes the server_fact a live
 * server's exchange, health, state or ending would have produced. The
 * clock is recorded time; playing is linear in the events played, and a
 * seek back plays again from the start (a recording of a day is a few
 * hundred thousand events: milliseconds).
 */
#include "ui/replay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/server.h"
#include "export/recording.h"
#include "util/str.h"
#include "util/xmalloc.h"

#define REPLAY_SPEED_MIN (1.0 / 16)
#define REPLAY_SPEED_MAX 1024.0

/* The config of the recording's servers. */
static struct config *
replay_config(const struct recording_log *log, const char *path)
{
    struct config *cfg = xcalloc(1, sizeof(*cfg));

    cfg->origin = str_printf("recording %s", path);
    cfg->servers = xcalloc(log->nservers + 1, sizeof(*cfg->servers));
    cfg->nservers = log->nservers;
    for (size_t i = 0; i < log->nservers; i++) {
        const struct recording_server *rs = &log->servers[i];
        struct config_server          *d = &cfg->servers[i];

        d->name = xstrdup(rs->name);
        if (strcmp(rs->transport, "stdio") == 0) {
            d->transport = CONFIG_STDIO;
            d->command = xstrdup(rs->target);
        } else {
            d->transport = CONFIG_HTTP;
            d->http_sse = strcmp(rs->transport, "sse") == 0;
            d->url = xstrdup(rs->target);
            d->url_shown = xstrdup(rs->target);
        }
        d->ping_interval_ms = CONFIG_DEFAULT_PING_INTERVAL_MS;
        d->timeout_ms = CONFIG_DEFAULT_TIMEOUT_MS;
        d->open_deadline_ms = CONFIG_DEFAULT_OPEN_DEADLINE_MS;
        d->teardown_ms = CONFIG_DEFAULT_TEARDOWN_MS;
        d->max_message_bytes = CONFIG_DEFAULT_MAX_MESSAGE_BYTES;
        d->disabled = rs->disabled;
        d->origin = xstrdup(path);
        if (rs->ntags > 0) {
            d->tags = xcalloc(rs->ntags, sizeof(char *));
            for (size_t k = 0; k < rs->ntags; k++)
                d->tags[k] = xstrdup(rs->tags[k]);
            d->ntags = rs->ntags;
        }
    }
    return cfg;
}

struct replay *
replay_open(const char *path, struct ev_loop *loop, int64_t from,
    int64_t to, char **cause)
{
    struct replay        *r = xcalloc(1, sizeof(*r));
    struct fleet_options  opt = { .no_streams = true, .no_pings = true,
        .no_redial = true };

    if (recording_read(path, &r->log, cause) != 0) {
        free(r);
        return NULL;
    }
    r->cfg = replay_config(r->log, path);
    r->fleet = fleet_new(loop, r->cfg, &opt, cause);
    if (r->fleet == NULL) {
        config_free(r->cfg);
        recording_log_free(r->log);
        free(r);
        return NULL;
    }
    for (size_t i = 0; i < fleet_size(r->fleet); i++)
        server_replay_begin(fleet_server(r->fleet, i));
    r->start = r->end = r->log->started_at;
    for (size_t k = 0; k < r->log->nevents; k++) {
        const struct recording_event *ev = &r->log->events[k];

        if (ev->at < r->start)
            r->start = ev->at;
        if (ev->at > r->end)
            r->end = ev->at;
        if (ev->type == RECORDING_HEALTH && ev->was != HEALTH__COUNT) {
            r->changes = xrealloc(r->changes, (r->nchanges + 1) *
                sizeof(*r->changes));
            r->changes[r->nchanges++] = ev->at;
        }
    }
    r->from = from >= 0 && from <= r->end ? from : r->start;
    r->to = to >= 0 && to >= r->from ? to : r->end;
    r->speed = 1;
    r->now = -1;
    return r;
}

void
replay_free(struct replay *r)
{
    if (r == NULL)
        return;
    fleet_stop(r->fleet);
    fleet_free(r->fleet);
    config_free(r->cfg);
    recording_log_free(r->log);
    free(r->changes);
    free(r);
}

/* One recorded event into its server. */
static void
replay_play(struct replay *r, const struct recording_event *ev)
{
    struct server     *s;
    struct server_fact f = { .at = ev->at, .tools = -1, .rtt_ms = -1 };
    struct failure     fl;

    if (ev->server >= fleet_size(r->fleet))
        return;
    s = fleet_server(r->fleet, ev->server);
    memset(&fl, 0, sizeof(fl));
    fl.kind = ev->kind;
    fl.delivered = ev->delivered;
    fl.site = ev->site;
    fl.http_status = ev->http_status;
    fl.reason = ev->reason;
    snprintf(fl.detail, sizeof(fl.detail), "%s", ev->detail != NULL ?
        ev->detail : "");
    switch (ev->type) {
    case RECORDING_EXCHANGE:
        f.type = SERVER_FACT_EXCHANGE;
        f.op = ev->op;
        f.failure = ev->completed ? NULL : &fl;
        f.ms = ev->ms;
        break;
    case RECORDING_HEALTH:
        f.type = SERVER_FACT_HEALTH;
        f.health = ev->health;
        f.health_reason = ev->health_reason;
        break;
    case RECORDING_STATE:
        f.type = SERVER_FACT_STATE;
        f.state = ev->state;
        f.era = ev->era;
        f.protocol_version = ev->protocol_version;
        f.tools = ev->tools;
        f.rtt_ms = ev->rtt_ms;
        break;
    case RECORDING_TOOLS:
        f.type = SERVER_FACT_TOOLS;
        f.tools = ev->tools;
        break;
    case RECORDING_ENDING:
    case RECORDING_SETTLED:
        f.type = ev->type == RECORDING_ENDING ? SERVER_FACT_ENDING :
            SERVER_FACT_SETTLED;
        f.ending = ev->ending;
        break;
    case RECORDING_SERVER:
        /* A snapshot after a rotation: its state, its last failure while
         * not ok, its health. */
        f.type = SERVER_FACT_STATE;
        f.state = ev->state;
        f.era = ev->era;
        f.tools = ev->tools;
        f.rtt_ms = ev->rtt_ms;
        server_replay(s, &f);
        if (ev->health != HEALTH_OK && ev->op != NULL) {
            f.type = SERVER_FACT_EXCHANGE;
            f.op = ev->op;
            f.failure = &fl;
            server_replay(s, &f);
        }
        f.type = SERVER_FACT_HEALTH;
        f.health = ev->health;
        f.health_reason = ev->health_reason;
        break;
    default:
        return;
    }
    server_replay(s, &f);
}

void
replay_seek(struct replay *r, int64_t t)
{
    const struct recording_log *log = r->log;

    if (t < r->from)
        t = r->from;
    if (t > r->to)
        t = r->to;
    if (r->now >= 0 && t < r->now) {
        for (size_t i = 0; i < fleet_size(r->fleet); i++)
            server_replay_reset(fleet_server(r->fleet, i));
        r->next = 0;
    }
    while (r->next < log->nevents && log->events[r->next].at <= t)
        replay_play(r, &log->events[r->next++]);
    r->now = t;
}

void
replay_tick(struct replay *r, double dt_s)
{
    if (r->paused)
        return;
    replay_seek(r, r->now + (int64_t)(dt_s * r->speed * 1000.0));
    if (r->now >= r->to)
        r->paused = true;
}

void
replay_speed(struct replay *r, bool faster)
{
    r->speed = faster ? r->speed * 2 : r->speed / 2;
    if (r->speed < REPLAY_SPEED_MIN)
        r->speed = REPLAY_SPEED_MIN;
    if (r->speed > REPLAY_SPEED_MAX)
        r->speed = REPLAY_SPEED_MAX;
}
