/*
 * The replay source (server_int.h; server.h, `mcptop replay`): a server
 * that is never dialed, whose state comes from a recording's facts. An exchange goes
 * through the same record as live (record_exchange: history, streaks,
 * liveness_of); health, state, tools and the session's facts are the ones
 * recorded (health is not minted again: the recording says what the
 * operator saw); endings are kept as recorded. Each fact is published as
 * the event a live server would publish, stamped with its recorded time.
 * What this file must never do: dial, spawn, or read a clock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/record.h"
#include "fleet/server_int.h"
#include "util/xmalloc.h"

struct server_replay {
    enum health_state health;
    char              health_reason[96];
    bool              health_set;
    int64_t           health_since;
    long              tools;
    double            rtt_ms;
    enum mcp_era      era;
    char              protocol_version[32];
    struct ending     endings[SERVER_ENDINGS];  /* a ring, oldest first */
    size_t            ending_start, nendings;
};

static void
server_replay_clear(struct server_replay *r)
{
    memset(r, 0, sizeof(*r));
    r->tools = -1;
    r->rtt_ms = -1;
}

static struct health server_replay_health(const struct server *s,
    int64_t *since);

/* The source's own, on a replayed server only. */
static struct server_replay *
server_replay_of(const struct server *s)
{
    return s->source == &server_source_replay ? s->source_data : NULL;
}

void
server_replay_begin(struct server *s)
{
    struct server_replay *r;

    if (server_replay_of(s) != NULL)
        return;
    r = xcalloc(1, sizeof(*r));
    server_replay_clear(r);
    s->source = &server_source_replay;
    s->source_data = r;
}

/* server_source_ops.free */
static void
server_replay_free(struct server *s)
{
    free(s->source_data);
    s->source_data = NULL;
}

void
server_replay_reset(struct server *s)
{
    if (server_replay_of(s) == NULL)
        return;
    server_replay_clear(server_replay_of(s));
    record_done(&s->rec);
    record_init(&s->rec);
    s->state = SERVER_IDLE;
}

/* The ending i of the ring. */
static struct ending *
server_replay_ring(struct server_replay *r, size_t i)
{
    return &r->endings[(r->ending_start + i) % SERVER_ENDINGS];
}

/* An ending's outcome: a new entry; its settlement: the last entry. */
static const struct ending *
server_replay_put_ending(struct server *s, const struct server_fact *f)
{
    struct server_replay *r = server_replay_of(s);
    struct ending        *e;

    if (f->type == SERVER_FACT_SETTLED && r->nendings > 0) {
        e = server_replay_ring(r, r->nendings - 1);
        e->settled = true;
        e->settled_ms = f->ending->settled_ms;
        return e;
    }
    if (r->nendings == SERVER_ENDINGS) {
        r->ending_start = (r->ending_start + 1) % SERVER_ENDINGS;
        r->nendings--;
    }
    e = server_replay_ring(r, r->nendings++);
    *e = *f->ending;
    e->server = s;
    return e;
}

void
server_replay(struct server *s, const struct server_fact *f)
{
    struct server_replay *r = server_replay_of(s);
    struct event          e = { .ts = f->at };
    struct health         h;

    if (r == NULL)
        return;
    switch (f->type) {
    case SERVER_FACT_EXCHANGE: {
        struct liveness before = s->rec.liveness;

        e.type = EVENT_EXCHANGE;
        e.op = f->op;
        e.completed = f->failure == NULL;
        e.failure = f->failure;
        e.ms = f->ms;
        if (record_exchange(&s->rec, f->op, f->failure, f->ms, f->at) ||
            before.present != s->rec.liveness.present) {
            server_emit(s, &e);
            e = (struct event){ .type = EVENT_LIVENESS, .ts = f->at,
                .liveness = &s->rec.liveness };
        }
        if (f->failure == NULL && f->ms > 0 && strcmp(f->op, "DELETE") != 0)
            r->rtt_ms = f->ms;
        break;
    }
    case SERVER_FACT_HEALTH:
        e.type = EVENT_HEALTH;
        e.health_was = r->health_set ? r->health : HEALTH__COUNT;
        r->health = f->health;
        snprintf(r->health_reason, sizeof(r->health_reason), "%s",
            f->health_reason != NULL ? f->health_reason : "");
        r->health_set = true;
        r->health_since = f->at;
        h = server_replay_health(s, NULL);
        e.health = &h;
        break;
    case SERVER_FACT_STATE:
        e.type = EVENT_STATE;
        s->state = f->state;
        r->era = f->era;
        snprintf(r->protocol_version, sizeof(r->protocol_version), "%s",
            f->protocol_version != NULL ? f->protocol_version : "");
        if (f->tools >= 0)
            r->tools = f->tools;
        if (f->rtt_ms >= 0)
            r->rtt_ms = f->rtt_ms;
        break;
    case SERVER_FACT_TOOLS:
        e.type = EVENT_TOOLS_CHANGED;
        e.tools = f->tools;
        r->tools = f->tools;
        break;
    case SERVER_FACT_ENDING:
    case SERVER_FACT_SETTLED:
        e.type = f->type == SERVER_FACT_ENDING ? EVENT_ENDING :
            EVENT_SETTLED;
        e.ending = server_replay_put_ending(s, f);
        break;
    }
    server_emit(s, &e);
}

/* --- the source's facts: the recorded ones ------------------------------ */

static struct health
server_replay_health(const struct server *s, int64_t *since)
{
    const struct server_replay *r = server_replay_of(s);

    if (since != NULL)
        *since = r->health_set ? r->health_since : 0;
    if (!r->health_set)
        return (struct health){ HEALTH_PENDING, "no observation yet" };
    return (struct health){ r->health, r->health_reason };
}

static long
server_replay_tools(const struct server *s)
{
    return server_replay_of(s)->tools;
}

static double
server_replay_rtt_ms(const struct server *s)
{
    return server_replay_of(s)->rtt_ms;
}

static enum mcp_era
server_replay_era(const struct server *s)
{
    return server_replay_of(s)->era;
}

static void
server_replay_session(const struct server *s, struct mcp_session_info *out)
{
    const struct server_replay *r = server_replay_of(s);

    memset(out, 0, sizeof(*out));
    out->open = s->state == SERVER_READY;
    if (r->protocol_version[0] != '\0')
        out->protocol_version = r->protocol_version;
}

static size_t
server_replay_ending_count(const struct server *s)
{
    return server_replay_of(s)->nendings;
}

static const struct ending *
server_replay_ending(const struct server *s, size_t i)
{
    struct server_replay *r = server_replay_of(s);

    if (i >= r->nendings)
        return NULL;
    return server_replay_ring(r, i);
}

/* No command acts on a replayed server (inert): these are never called. */
static void
server_replay_nothing(struct server *s)
{
    (void)s;
}

const struct server_source_ops server_source_replay = {
    .name = "replay",
    .inert = true,
    .dial = server_replay_nothing,
    .redial = server_replay_nothing,
    .pause = server_replay_nothing,
    .resume = server_replay_nothing,
    .ping = server_no_ping,
    .probe = server_no_probe,
    .end = server_no_end,
    .end_session = server_no_end_session,
    .cancel = server_no_cancel,
    .stop = server_replay_nothing,
    .free = server_replay_free,
    .transport_name = server_dialed_transport_name,
    .liveness_method = server_dialed_liveness_method,
    .era = server_replay_era,
    .session = server_replay_session,
    .tools = server_replay_tools,
    .rtt_ms = server_replay_rtt_ms,
    .health = server_replay_health,
    .dial_settled = server_dialed_dial_settled,
    .pid = server_dialed_pid,
    .ending_count = server_replay_ending_count,
    .ending = server_replay_ending,
    .in_flight = server_no_in_flight,
    .request = server_no_request,
    .agent_sessions = server_no_agent_sessions,
    .agent_session = server_no_agent_session,
};
