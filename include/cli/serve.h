/*
 * What the files of `mcptop serve` share: serve.c (the daemon, /metrics,
 * /fleet, the probes of its own health), serve_probe.c (/probe: one check
 * of one server now, blackbox_exporter's multi-target pattern) and
 * serve_sd.c (/sd: Prometheus HTTP service discovery). All of it runs on
 * the loop's thread, between two events (issue 29).
 */
#ifndef MCPTOP_CLI_SERVE_H
#define MCPTOP_CLI_SERVE_H

#include <ev.h>
#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "engine/fleet.h"

/* Content-Type of the Prometheus text format 0.0.4. */
#define SERVE_TEXT_0_0_4 "text/plain; version=0.0.4; charset=utf-8"

/* Queue a response of status with len bytes at body (malloc'd, taken:
 * MHD frees it) as type, no-store. MHD_NO when MHD cannot. */
enum MHD_Result serve_reply(struct MHD_Connection *conn, unsigned status,
    char *body, size_t len, const char *type);

/* A 200 of body (malloc'd, taken) as type, gzipped (zlib level 1) when
 * the request's Accept-Encoding takes gzip; either way with Vary:
 * Accept-Encoding. */
enum MHD_Result serve_reply_coded(struct MHD_Connection *conn, char *body,
    size_t len, const char *type);

/* ------------------------------------------------------------ /probe */

/* Probes in flight at once (their endings included); one more is a 503. */
#define SERVE_PROBES_MAX 16

struct serve_probes;

struct serve_probes_options {
    struct ev_loop *loop;
    bool            urls;       /* --probe-urls: target may be an http(s)
                                   URL that is not in the config */
    FILE           *log;        /* the debug log, or NULL; borrowed */
    /* Have the daemon run soon: libmicrohttpd takes a resumed connection
     * back only in MHD_run (the loop has no event for it). */
    void          (*kick)(void *arg);
    void           *kick_arg;
};

/* The probes of a daemon on o->loop (o is copied). Never NULL. */
struct serve_probes *serve_probes_new(const struct serve_probes_options *o);
/* Free every probe (a fleet still ending is freed: its transfers are
 * aborted; call serve_probes_stop and let the loop run first). A
 * connection still suspended is answered 503 and resumed. NULL does
 * nothing. */
void serve_probes_free(struct serve_probes *p);

/*
 * GET /probe on conn (credentials already checked): with target=NAME a
 * server of f by its config name, or with --probe-urls an http(s) URL.
 * Starts the probe and suspends conn (the answer comes when the probe's
 * session has ended, or at the scrape's deadline); called again for conn
 * once resumed, it queues that answer. An unknown target is a 400 with a
 * one-line reason. f is read now only: the probe dials a copy of the
 * declaration, so a reload may free f's config meanwhile.
 */
enum MHD_Result serve_probe_request(struct serve_probes *p,
    const struct fleet *f, struct MHD_Connection *conn);

/* MHD_OPTION_NOTIFY_COMPLETED for conn: a probe's connection that went
 * away before its answer was taken forgets it (the answer is dropped). */
void serve_probes_completed(struct serve_probes *p,
    struct MHD_Connection *conn);

/* Shutting down: every probe not answered yet is ended now (its session
 * ended as any probe's) and answered 503; no probe starts any more. */
void serve_probes_stop(struct serve_probes *p);
/* Probes that still hold a fleet (checking, ending or settling). */
size_t serve_probes_busy(const struct serve_probes *p);

/* ------------------------------------------------------------ /sd */

/*
 * GET /sd (credentials already checked): Prometheus HTTP service
 * discovery, a JSON array with one target group per server of f that is
 * not disabled: {"targets": [NAME], "labels": {"server": NAME, tag
 * labels, "__meta_mcptop_tags", "__meta_mcptop_transport",
 * "__meta_mcptop_address" (the request's Host)}}.
 */
enum MHD_Result serve_sd(const struct fleet *f, struct MHD_Connection *conn);

#endif
