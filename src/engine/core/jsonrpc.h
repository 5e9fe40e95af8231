/*
 * JSON-RPC 2.0 messages as MCP uses them (MCP basic/index): building the
 * requests and notifications mcptop sends, and reading what comes back.
 * The only engine module besides config (config*.c) that sees cJSON; a
 * parsed message is opaque and read through path accessors
 * ("result.tools").
 */
#ifndef MCPTOP_ENGINE_JSONRPC_H
#define MCPTOP_ENGINE_JSONRPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum jsonrpc_kind {
    JSONRPC_REQUEST,        /* method and id */
    JSONRPC_NOTIFICATION,   /* method, no id */
    JSONRPC_RESULT,         /* id and result */
    JSONRPC_ERROR,          /* error (id may be null or missing) */
};

struct jsonrpc_msg;

/*
 * Parse one message from len bytes. NULL when the text is not JSON, not an
 * object, or not a JSON-RPC 2.0 message; *cause (may be NULL) then says
 * which (caller frees). Free with jsonrpc_free.
 */
struct jsonrpc_msg *jsonrpc_parse(const char *text, size_t len, char **cause);
/* jsonrpc_free(NULL) does nothing. */
void jsonrpc_free(struct jsonrpc_msg *m);

enum jsonrpc_kind jsonrpc_kind(const struct jsonrpc_msg *m);
/* True when the message's id is the integer id. */
bool jsonrpc_id_is(const struct jsonrpc_msg *m, int64_t id);
/* True, with *out set, when the message's id is an integral number. */
bool jsonrpc_id_int(const struct jsonrpc_msg *m, int64_t *out);
/* The id as it came, with its JSON type, safe to show: `"3" (string)`,
 * `1003 (number)`, `null`, `(none)`. Into buf (size n, always
 * NUL-terminated); returns the length. */
size_t jsonrpc_id_describe(const struct jsonrpc_msg *m, char *buf, size_t n);
/* The words for an answer that is not ours (DESIGN.md section 2,
 * not_mcp_response): `answer id "3" (string) matches no request; ours was
 * 3 (number)`, from the id as jsonrpc_id_describe gave it and our
 * request's id. Into buf (size n); returns the length. */
size_t jsonrpc_stray_words(const char *described, int64_t ours, char *buf,
    size_t n);
/* True when the id is null or absent (only errors may have that). */
bool jsonrpc_id_is_null(const struct jsonrpc_msg *m);
/* The method of a request or notification, else NULL. Borrowed from m. */
const char *jsonrpc_method(const struct jsonrpc_msg *m);
/* For JSONRPC_ERROR: the code (0 if absent) and message (NULL if absent;
 * untrusted text, sanitize before display). Borrowed from m. */
long jsonrpc_error_code(const struct jsonrpc_msg *m);
const char *jsonrpc_error_message(const struct jsonrpc_msg *m);

/*
 * Path accessors: `path` is dotted member names from the message root,
 * e.g. "result.serverInfo.name". Strings are borrowed from m.
 */
const char *jsonrpc_get_string(const struct jsonrpc_msg *m, const char *path);
bool jsonrpc_get_bool(const struct jsonrpc_msg *m, const char *path,
    bool *out);
bool jsonrpc_has(const struct jsonrpc_msg *m, const char *path);
/* Array length at path, -1 when not an array. */
long jsonrpc_array_len(const struct jsonrpc_msg *m, const char *path);
/* Element i of the array at path: itself when it is a string (member NULL),
 * or its string member `member`. NULL when absent. Borrowed from m. */
const char *jsonrpc_array_string(const struct jsonrpc_msg *m,
    const char *path, long i, const char *member);
/* Visit the array at path once, in order, at most max elements: fn gets
 * each element when it is a string (member NULL), or its string member
 * `member`; NULL when that is absent or not a string (borrowed from m).
 * Returns how many were visited, -1 when path is not an array. Linear in
 * the array's length, whatever its size. */
long jsonrpc_array_each(const struct jsonrpc_msg *m, const char *path,
    const char *member, long max, void (*fn)(void *arg, const char *s),
    void *arg);
/* Object member names at path, for capabilities; fills names (borrowed)
 * and returns how many (at most max). */
size_t jsonrpc_object_keys(const struct jsonrpc_msg *m, const char *path,
    const char **names, size_t max);

/* Like jsonrpc_get_string, with the path given as separate member names
 * (for keys that contain dots, such as "io.modelcontextprotocol/..."),
 * ended by NULL. */
const char *jsonrpc_get_stringv(const struct jsonrpc_msg *m, ...);
/* Does the string array at path hold s? */
bool jsonrpc_array_has(const struct jsonrpc_msg *m, const char *path,
    const char *s);
/* A number at path; false when absent or not a number. */
bool jsonrpc_get_number(const struct jsonrpc_msg *m, const char *path,
    double *out);

/*
 * Builders. Each returns a compact JSON text, caller frees; *len_out
 * (may be NULL) gets its length. Written directly (util/jsonw.h), in the
 * bytes cJSON printed: strings escaped as cJSON escapes them, bytes from
 * 0x80 up sent as they came (a cursor goes back as the server gave it).
 */
char *jsonrpc_build_initialize(int64_t id, const char *protocol_version,
    const char *client_name, const char *client_version, size_t *len_out);
/* A request with optional {"cursor": cursor}. */
char *jsonrpc_build_request(int64_t id, const char *method,
    const char *cursor, size_t *len_out);
/* The liveness request, {"jsonrpc":"2.0","id":id,"method":method} (the
 * id before the method: the bytes it has always had). */
char *jsonrpc_build_ping(int64_t id, const char *method, size_t *len_out);
char *jsonrpc_build_notification(const char *method, size_t *len_out);
char *jsonrpc_build_cancelled(int64_t request_id, const char *reason,
    size_t *len_out);
/*
 * The answer to a request the server sent (req, kind JSONRPC_REQUEST):
 * {"jsonrpc":"2.0","id":<req's id, as it came>,"result":{}} when code is
 * 0, else {"error":{"code":code,"message":message}} (basic/index,
 * responses). NULL when req carries no id a response can name (none, or
 * one that is neither a string nor a number). Caller frees.
 */
char *jsonrpc_build_answer(const struct jsonrpc_msg *req, long code,
    const char *message, size_t *len_out);
/*
 * A request of the 2026-07-28 revision: params carry `_meta` with
 * io.modelcontextprotocol/protocolVersion, clientCapabilities ({}) and
 * clientInfo (MCP 2026-07-28 basic/index, per-request protocol fields),
 * plus an optional cursor and, for subscriptions/listen, the
 * {"notifications": {"toolsListChanged": true}} filter.
 */
char *jsonrpc_build_modern(int64_t id, const char *method,
    const char *protocol_version, const char *client_name,
    const char *client_version, const char *cursor, bool listen_tools,
    size_t *len_out);

/*
 * tools/call of tool `name` with arguments_json (a JSON object's text;
 * "{}" when NULL or not an object), in the 2026-07-28 shape (with _meta)
 * when modern_version is given. Caller frees.
 */
char *jsonrpc_build_tool_call(int64_t id, const char *name,
    const char *arguments_json, const char *modern_version,
    const char *client_name, const char *client_version, size_t *len_out);
/*
 * Read a CallToolResult (MCP server/tools): *is_error its isError; text
 * gets the first text content item (cut to tsz, untrusted: sanitize before
 * showing); *found whether some text item contains expect (true when
 * expect is NULL). false when m holds no result object.
 */
bool jsonrpc_tool_result(const struct jsonrpc_msg *m, const char *expect,
    bool *is_error, char *text, size_t tsz, bool *found);
/*
 * Is m's result an InputRequiredResult (resultType "input_required",
 * 2026-07-28 basic/patterns/mrtr: the server asks its client something
 * before it answers)? asked gets the methods of its inputRequests, ", "
 * between, the first few (cut to n, untrusted: sanitize before showing;
 * "" when it names none, e.g. only requestState).
 */
bool jsonrpc_input_required(const struct jsonrpc_msg *m, char *asked,
    size_t n);

#endif
