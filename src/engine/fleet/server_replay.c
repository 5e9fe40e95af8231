/*
 * A replayed server (server.h, `mcptop replay`): a server that is never
 * dialed, whose state comes from a recording's facts. An exchange goes
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

void
server_replay_begin(struct server *s)
{
    if (s->replay != NULL)
        return;
    s->replay = xcalloc(1, sizeof(*s->replay));
    server_replay_clear(s->replay);
}

void
server_replay_free(struct server *s)
{
    free(s->replay);
    s->replay = NULL;
}

void
server_replay_reset(struct server *s)
{
    if (s->replay == NULL)
        return;
    server_replay_clear(s->replay);
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
    struct server_replay *r = s->replay;
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
    struct server_replay *r = s->replay;
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

struct health
server_replay_health(const struct server *s, int64_t *since)
{
    const struct server_replay *r = s->replay;

    if (since != NULL)
        *since = r->health_set ? r->health_since : 0;
    if (!r->health_set)
        return (struct health){ HEALTH_PENDING, "no observation yet" };
    return (struct health){ r->health, r->health_reason };
}

long
server_replay_tools(const struct server *s)
{
    return s->replay->tools;
}

double
server_replay_rtt_ms(const struct server *s)
{
    return s->replay->rtt_ms;
}

enum mcp_era
server_replay_era(const struct server *s)
{
    return s->replay->era;
}

void
server_replay_session(const struct server *s,
    struct mcp_session_info *out)
{
    const struct server_replay *r = s->replay;

    if (r->protocol_version[0] != '\0')
        out->protocol_version = r->protocol_version;
}

size_t
server_replay_ending_count(const struct server *s)
{
    return s->replay->nendings;
}

const struct ending *
server_replay_ending(const struct server *s, size_t i)
{
    struct server_replay *r = s->replay;

    if (i >= r->nendings)
        return NULL;
    return server_replay_ring(r, i);
}
