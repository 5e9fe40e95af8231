/*
 * What every transport shares: choosing one for a declaration, handing
 * events up, logging, building a failure.
 */
#include "transport.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/dlog.h"

struct transport *
transport_new(const struct transport_env *env)
{
    if (env->decl->transport == CONFIG_STDIO)
        return transport_stdio_new(env);
    return transport_http_new(env);
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
    const struct failure_evidence *ev, const char *fmt, ...)
{
    va_list ap;

    if (ev != NULL)
        f->ev = *ev;
    else
        memset(&f->ev, 0, sizeof(f->ev));
    va_start(ap, fmt);
    vsnprintf(f->detail, sizeof(f->detail), fmt, ap);
    va_end(ap);
}
