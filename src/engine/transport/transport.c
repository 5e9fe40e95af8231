/*
 * What every transport shares: choosing one for a declaration, handing
 * events up (and the queue of events that wait for the loop), logging,
 * building a failure.
 */
#include "transport/transport.h"

#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "core/jsonrpc.h"
#include "util/dlog.h"
#include "util/xmalloc.h"

struct transport *
transport_new(const struct transport_env *env)
{
    if (env->decl->transport == CONFIG_STDIO)
        return stdio_new(env);
    if (env->decl->http_sse)
        return http_sse_new(env);       /* "type": "sse": no probe */
    return streamable_http_new(env);
}

void
transport_emit(struct transport *t, struct transport_event *e)
{
    t->env->cb(t->env->cb_arg, e);
}

void
transport_log(const struct transport *t, const char *fmt, ...)
{
    va_list ap;

    if (t->env->log == NULL)
        return;
    va_start(ap, fmt);
    dlogv(t->env->log, t->env->log_name, fmt, ap);
    va_end(ap);
}

void
transport_failure_set(struct transport_failure *f,
    const struct failure_evidence *evd, const char *fmt, ...)
{
    va_list ap;

    if (evd != NULL)
        f->evd = *evd;
    else
        memset(&f->evd, 0, sizeof(f->evd));
    va_start(ap, fmt);
    vsnprintf(f->detail, sizeof(f->detail), fmt, ap);
    va_end(ap);
}

void
transport_queue_init(struct transport_queue *q, struct ev_loop *loop,
    void (*cb)(struct ev_loop *loop, ev_prepare *w, int revents), void *data)
{
    q->head = NULL;
    q->tail = &q->head;
    q->loop = loop;
    ev_prepare_init(&q->defer, cb);
    q->defer.data = data;
}

struct transport_pending *
transport_queue_push(struct transport_queue *q,
    enum transport_event_type type, void *owner, struct jsonrpc_msg *msg)
{
    struct transport_pending *p = xcalloc(1, sizeof(*p));

    p->type = type;
    p->owner = owner;
    p->msg = msg;
    *q->tail = p;
    q->tail = &p->next;
    if (!ev_is_active(&q->defer))
        ev_prepare_start(q->loop, &q->defer);
    return p;
}

struct transport_pending *
transport_queue_pop(struct transport_queue *q)
{
    struct transport_pending *p = q->head;

    if (p == NULL)
        return NULL;
    q->head = p->next;
    if (q->head == NULL)
        q->tail = &q->head;
    p->next = NULL;
    return p;
}

void
transport_queue_drop(struct transport_queue *q,
    bool (*match)(const struct transport_pending *p, const void *arg),
    const void *arg)
{
    struct transport_pending **pp = &q->head;

    q->tail = &q->head;
    while (*pp != NULL) {
        struct transport_pending *p = *pp;

        if (match(p, arg)) {
            *pp = p->next;
            transport_pending_free(p);
        } else {
            pp = &p->next;
            q->tail = pp;
        }
    }
}

void
transport_queue_disown(struct transport_queue *q, const void *owner)
{
    for (struct transport_pending *p = q->head; owner != NULL && p != NULL;
        p = p->next) {
        if (p->owner == owner)
            p->owner = NULL;
    }
}

void
transport_queue_stop(struct transport_queue *q)
{
    ev_prepare_stop(q->loop, &q->defer);
}

void
transport_pending_free(struct transport_pending *p)
{
    if (p == NULL)
        return;
    jsonrpc_free(p->msg);
    free(p);
}
