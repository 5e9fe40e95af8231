/*
 * The exporter's connection guard (see src/cli/serve_guard.c): a request
 * head within a few seconds, at most a few connections per address
 * waiting for one, so slow clients cannot shut scrapes out.
 */
#ifndef MCPTOP_CLI_SERVE_GUARD_H
#define MCPTOP_CLI_SERVE_GUARD_H

#include <ev.h>
#include <microhttpd.h>
#include <stdbool.h>

struct serve_guard;

/* A guard sweeping on loop once a second (it does not keep the loop
 * running by itself). Free with serve_guard_free. */
struct serve_guard *serve_guard_new(struct ev_loop *loop);
/* NULL does nothing. */
void serve_guard_free(struct serve_guard *g);

/* MHD_OPTION_NOTIFY_CONNECTION's callback; cls is the guard. */
void serve_guard_notify(void *cls, struct MHD_Connection *conn,
    void **socket_context, enum MHD_ConnectionNotificationCode toe);
/* MHD_OPTION_NOTIFY_COMPLETED's callback; cls is the guard. */
void serve_guard_completed(void *cls, struct MHD_Connection *conn,
    void **req_cls, enum MHD_RequestTerminationCode toe);
/* The access handler saw conn's complete request head. */
void serve_guard_head_done(struct MHD_Connection *conn);

/* How many connections the guard has shut down. */
unsigned long serve_guard_shut_count(const struct serve_guard *g);

#endif
