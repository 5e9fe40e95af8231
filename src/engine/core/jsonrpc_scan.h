/*
 * The light answer path of jsonrpc.c: a bounded scan of a message's bytes
 * that recognises a plain JSON-RPC success, {"jsonrpc": "2.0", "id": N,
 * "result": ...} with an integer id, without building a tree. It answers
 * only where cJSON's parse (cJSON_ParseWithLength, as jsonrpc_parse uses
 * it) would give the same message: the whole value is checked to the
 * rules cJSON parses by, and anything it is not sure of (an escaped key, a
 * "method" or "error" member, a number that is not a plain integer id, a
 * deep nesting, a byte-order mark) is left to cJSON. Private to jsonrpc.c
 * and its fuzz target.
 */
#ifndef MCPTOP_ENGINE_JSONRPC_SCAN_H
#define MCPTOP_ENGINE_JSONRPC_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Deeper than this, the scan leaves the message to cJSON. */
#define JSONRPC_SCAN_MAX_DEPTH 64
/* Longer than this, too: an answer that size (an initialize's, a
 * listing's, a server/discover's) is read through a tree anyway, and the
 * scan would only add to it (measured: 10 k instructions a dial for the
 * bench fleet's 300-500-byte answers); a ping's answer is some 40 bytes. */
#define JSONRPC_SCAN_MAX_BYTES 160

struct jsonrpc_envelope {
    int64_t id;             /* the id: an integer of at most 15 digits */
    /* result.resultType, when the result is an object whose first
     * "resultType" member is a string: its bytes (no escape, no NUL in
     * them), at text + rt_off; rt_len SIZE_MAX when there is none. */
    size_t  rt_off;
    size_t  rt_len;
};

/*
 * True when the len bytes at text hold a plain JSON-RPC success with an
 * integer id, as cJSON would read them; *env then says what it holds.
 * False when they hold anything else (an error, a request, not JSON) or
 * the scan cannot be sure: parse them with cJSON.
 */
bool jsonrpc_scan_success(const char *text, size_t len,
    struct jsonrpc_envelope *env);

#endif
