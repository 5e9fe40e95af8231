/*
 * A request's header lines for libcurl (engine-private, for io/http.c):
 * the list of a transfer's own, or a session's shared one (the public
 * http_hdrs_* of engine/http.h).
 */
#ifndef MCPTOP_ENGINE_IO_HTTP_HDRS_H
#define MCPTOP_ENGINE_IO_HTTP_HDRS_H

#include <curl/curl.h>

#include "engine/http.h"

/* Every header line rq asks for, as a list of the caller's own (freed
 * with curl_slist_free_all); NULL when there is none. */
struct curl_slist *http_hdrs_own(const struct http_request *rq);
/* A shared list's lines, for CURLOPT_HTTPHEADER (borrowed: alive while
 * the caller holds its reference). */
struct curl_slist *http_hdrs_list(const struct http_hdrs *h);

#endif
