/*
 * libcurl's multi socket interface driven by a libev loop: one ev_io per
 * socket curl asks for, one ev_timer for curl's timeout (the shape of
 * curl's evhiperfifo example). Finished transfers are handed back through
 * the callback each transfer registered with curlev_add.
 *
 * A face of the engine for the HTTP tap (tap_http.c), which makes
 * its own glue on the loop it is given for its upstream (http_relay.h).
 */
#ifndef MCPTOP_ENGINE_CURLEV_H
#define MCPTOP_ENGINE_CURLEV_H

#include <ev.h>
#include <stddef.h>
#include <stdint.h>

struct curlev;

/* Called when a transfer ends, with its CURLcode (as int). The easy handle
 * is already removed from the multi handle; the callee owns it. */
typedef void (*curlev_done_cb)(void *arg, void *easy, int curl_code);

/* New glue on loop for a fleet of `servers`: one multi handle per group of
 * 256 servers, each caching a connection per server (or pings reconnect).
 * max_sockets (> 0) bounds the connections open at once across the
 * groups: past it, transfers wait for one instead of failing for want of a
 * descriptor; 0 means no bound. NULL on failure. */
struct curlev *curlev_new(struct ev_loop *loop, size_t servers,
    long max_sockets);
/* Removes every transfer still added (without calling done) and frees.
 * Call while the loop still exists. curlev_free(NULL) does nothing. */
void curlev_free(struct curlev *ce);

/* Start a configured easy handle for server number `key` (it picks the
 * multi handle, so a server's connections stay in one pool).
 * done(arg, easy, code) runs exactly once, from the loop, unless
 * curlev_remove is called first. 0 or -1. */
int curlev_add(struct curlev *ce, size_t key, void *easy, curlev_done_cb done,
    void *arg);
/* Abort a transfer now; done is not called. The caller keeps easy. */
void curlev_remove(struct curlev *ce, void *easy);
/* The loop this glue runs on. */
struct ev_loop *curlev_loop(const struct curlev *ce);
/* Transfers currently added. */
size_t curlev_running(const struct curlev *ce);

/* When the certificate of server `key` expires (epoch seconds): its
 * leaf's "Expire date", from the last transfer that made a TLS handshake
 * and asked for CURLOPT_CERTINFO (http_request.cert_info); 0 before one
 * did. */
int64_t curlev_cert_not_after(const struct curlev *ce, size_t key);
/* "Jun 16 12:00:00 2027 GMT" (as libcurl's certinfo writes dates) as epoch
 * seconds, whatever the locale; 0 when s is not such a date. */
int64_t curlev_parse_cert_time(const char *s);

#endif
