/*
 * What the engine publishes. The TUI, the JSON Lines writer of `watch` and
 * the report of `check` are interchangeable subscribers: each gets every
 * event, reads engine state through const getters, and never changes it.
 */
#ifndef MCPTOP_ENGINE_EVENT_H
#define MCPTOP_ENGINE_EVENT_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/failure.h"
#include "engine/health.h"
#include "engine/liveness.h"

struct server;
struct ending;
struct server_request;

enum event_type {
    EVENT_EXCHANGE,         /* an exchange ended with one outcome */
    EVENT_LIVENESS,         /* a server's liveness state changed */
    EVENT_TOOLS_CHANGED,    /* a listing found a different tool set */
    EVENT_STATE,            /* a server's lifecycle state changed */
    EVENT_ENDING,           /* an ending's outcome is known */
    EVENT_SETTLED,          /* an ending's work has settled */
    EVENT_HEALTH,           /* a server's health changed (and its first) */
    EVENT_REQUEST,          /* a tap's ledger: a request started,
                               progressed, ended; a cancel's answer */
    EVENT_ASKED,            /* the server sent its client a request, which
                               mcptop answered */
};

struct event {
    enum event_type      type;
    const struct server *server;
    int64_t              ts;            /* epoch ms */
    /* EVENT_EXCHANGE */
    const char          *op;            /* "dial", "ping", "tools/list"... */
    bool                 completed;
    const struct failure *failure;      /* when !completed; borrowed */
    double               ms;            /* elapsed, monotonic */
    /* EVENT_LIVENESS */
    const struct liveness *liveness;    /* borrowed */
    /* EVENT_TOOLS_CHANGED */
    long                 tools;
    /* EVENT_ENDING, EVENT_SETTLED */
    const struct ending *ending;        /* borrowed */
    /* EVENT_HEALTH: the new verdict, what it was (HEALTH__COUNT: the
     * first), and since when the server had the old one (epoch ms) */
    const struct health *health;        /* borrowed */
    enum health_state    health_was;
    /* EVENT_REQUEST (server.h: enum server_request_phase) */
    int                  request_phase;
    const struct server_request *request;   /* borrowed */
    /* EVENT_ASKED: which (enum mcp_asked), its method (sanitized) and id
     * (described), and what was answered ("result", "-32601") */
    int                  asked_kind;
    const char          *asked_method;
    const char          *asked_id;
    const char          *asked_answer;
};

/* A subscriber. The event and what it points to are valid during the call
 * only. It must not free the server or the fleet. */
typedef void (*event_cb)(void *arg, const struct event *e);

#endif
