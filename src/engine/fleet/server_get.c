/*
 * A server's public getters (server.h): what the front ends read, from
 * the record, the lifecycle and the transport, through their own
 * accessors. Nothing here changes a server.
 */
#include "engine/server.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/curlev.h"
#include "mcp/client.h"
#include "engine/record.h"
#include "fleet/server_int.h"
#include "transport/transport.h"
#include "util/clock.h"

void
server_set_data(struct server *s, void *data)
{
    s->data = data;
}

void *
server_data(const struct server *s)
{
    return s->data;
}

const char *
server_name(const struct server *s)
{
    return s->decl->name;
}

const struct config_server *
server_decl(const struct server *s)
{
    return s->decl;
}

const char *
server_transport_name(const struct server *s)
{
    return s->source->transport_name(s);
}

const char *
server_target(const struct server *s)
{
    return s->target;
}

enum server_state
server_state(const struct server *s)
{
    return s->state;
}

enum mcp_era
server_era(const struct server *s)
{
    return s->source->era(s);
}

bool
server_has_session(const struct server *s)
{
    return client_has_session(s->client);
}

const struct liveness *
server_liveness(const struct server *s)
{
    return &s->rec.liveness;
}

const struct failure *
server_last_failure(const struct server *s, const char **op)
{
    if (op != NULL)
        *op = s->rec.has_failure ? s->rec.last_failure_op : NULL;
    return s->rec.has_failure ? &s->rec.last_failure : NULL;
}

void
server_session(const struct server *s, struct mcp_session_info *out)
{
    s->source->session(s, out);
}

long
server_tools(const struct server *s)
{
    return s->source->tools(s);
}

const char *
server_tool_name(const struct server *s, long i)
{
    return client_tool_name(s->client, i);
}

double
server_rtt_ms(const struct server *s)
{
    return s->source->rtt_ms(s);
}

int64_t
server_tls_not_after(const struct server *s)
{
    return curlev_cert_not_after(s->env->curl, s->index);
}

bool
server_ok(const struct server *s)
{
    return server_health(s, NULL).state == HEALTH_OK;
}

const char *
server_liveness_method(const struct server *s)
{
    return s->source->liveness_method(s);
}

struct health
server_health(const struct server *s, int64_t *since)
{
    return s->source->health(s, since);
}

double
server_probe_ms(const struct server *s)
{
    return client_probe_ms(s->client);
}

unsigned long
server_asked(const struct server *s, enum mcp_asked kind)
{
    return client_asked(s->client, kind);
}

unsigned long
server_probe_notices(const struct server *s)
{
    return client_probe_notices(s->client);
}

bool
server_dial_settled(const struct server *s)
{
    return s->source->dial_settled(s);
}

unsigned long
server_pings_done(const struct server *s)
{
    return client_pings_done(s->client);
}

const struct mcp_exchange *
server_history(const struct server *s, size_t i)
{
    return record_history(&s->rec, i);
}

size_t
server_history_len(const struct server *s)
{
    return s->rec.hist_len;
}

unsigned long
server_streak(const struct server *s)
{
    return s->rec.streak;
}

unsigned long
server_fail_streak(const struct server *s)
{
    return s->rec.fail_streak;
}

unsigned long
server_session_expiries(const struct server *s)
{
    return client_expiries(s->client);
}

unsigned long
server_dials(const struct server *s)
{
    return s->dials;
}

int64_t
server_next_attempt_ms(const struct server *s)
{
    double left = server_wait_left(s);

    if (s->dial_due && ev_is_active(&s->tick))
        left = fmax(left, s->tick_due - ev_now(s->env->loop));
    else if (left <= 0)
        return -1;
    return clock_wall_ms() + (int64_t)(left > 0 ? left * 1000.0 : 0);
}

size_t
server_warnings(const struct server *s, const char **out, size_t max)
{
    const struct transport *t = client_transport(s->client);
    size_t                  n = 0;
    const char             *w;

    if (n < max && (w = transport_warning(t)) != NULL)
        out[n++] = w;
    if (n < max && (w = client_warning(s->client)) != NULL)
        out[n++] = w;
    if (n < max && (w = client_list_note(s->client)) != NULL)
        out[n++] = w;
    return n;
}

size_t
server_capabilities(const struct server *s, const char **names, size_t max)
{
    return client_capabilities(s->client, names, max);
}

size_t
server_ending_count(const struct server *s)
{
    return s->source->ending_count(s);
}

const struct ending *
server_ending(const struct server *s, size_t i)
{
    return s->source->ending(s, i);
}

size_t
server_in_flight(const struct server *s)
{
    return s->source->in_flight(s);
}

const struct server_request *
server_request(const struct server *s, size_t i)
{
    return s->source->request(s, i);
}

long
server_agent_sessions(const struct server *s)
{
    return s->source->agent_sessions(s);
}

const struct server_agent_session *
server_agent_session(const struct server *s, size_t i)
{
    return s->source->agent_session(s, i);
}

/* --- stdio facts, through the transport --------------------------------- */

long
server_pid(const struct server *s)
{
    return s->source->pid(s);
}

unsigned long
server_spawns(const struct server *s)
{
    return client_spawns(s->client);
}

const char *
server_stderr_line(const struct server *s, size_t i)
{
    const struct transport *t = client_transport(s->client);

    return transport_stderr_line(t, i);
}

size_t
server_stderr_count(const struct server *s)
{
    const struct transport *t = client_transport(s->client);

    return transport_stderr_count(t);
}

bool
server_exit_status(const struct server *s, int *code, int *sig)
{
    const struct transport *t = client_transport(s->client);

    return transport_exit_status(t, code, sig);
}

unsigned long
server_stray_lines(const struct server *s)
{
    const struct transport *t = client_transport(s->client);

    return transport_stray_lines(t);
}
