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
#include "fleet/tap_source.h"
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
    if (s->tap != NULL)
        return "tap";
    return transport_name(client_transport(s->client));
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
    if (s->replay != NULL)
        return server_replay_era(s);
    return client_era(s->client);
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
    memset(out, 0, sizeof(*out));
    /* A tap's server has no session of mcptop's own. */
    out->open = s->state == SERVER_READY && s->tap == NULL;
    if (s->replay != NULL)
        server_replay_session(s, out);
    else
        client_session(s->client, out);
}

long
server_tools(const struct server *s)
{
    if (s->replay != NULL)
        return server_replay_tools(s);
    return client_tools(s->client);
}

const char *
server_tool_name(const struct server *s, long i)
{
    return client_tool_name(s->client, i);
}

double
server_rtt_ms(const struct server *s)
{
    if (s->replay != NULL)
        return server_replay_rtt_ms(s);
    return client_rtt_ms(s->client);
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
    if (s->tap != NULL)
        return "traffic";
    return client_liveness_method(s->client);
}

struct health
server_health(const struct server *s, int64_t *since)
{
    if (s->replay != NULL)
        return server_replay_health(s, since);
    if (since != NULL)
        *since = s->health.set ? s->health.since : 0;
    return server_health_now(s);
}

bool
server_probe_now(struct server *s)
{
    return s->state == SERVER_READY && s->tap == NULL &&
        client_probe_now(s->client);
}

double
server_probe_ms(const struct server *s)
{
    return client_probe_ms(s->client);
}

unsigned long
server_probe_notices(const struct server *s)
{
    return client_probe_notices(s->client);
}

bool
server_dial_settled(const struct server *s)
{
    if (s->tap != NULL)
        return s->tap_settled || s->state == SERVER_INVALID ||
            s->state == SERVER_DISABLED;
    return client_dialed_once(s->client) || s->state == SERVER_INVALID ||
        s->state == SERVER_UNSUPPORTED || s->state == SERVER_DISABLED;
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

/* --- stdio facts, through the transport --------------------------------- */

long
server_pid(const struct server *s)
{
    const struct transport *t = client_transport(s->client);
    long                    pid = 0;

    if (s->tap != NULL) {
        tap_source_pid(s->tap, &pid);
        return pid;
    }
    return transport_pid(t);
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
