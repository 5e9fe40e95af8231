/*
 * The commands a tap reads on its socket (DESIGN.md section 8), one JSON
 * object a line: written by the monitor's reader of a tap
 * (fleet/tap_source.c) and by `mcptop cancel` and `mcptop end --session`
 * through a tap; read by the tap itself (src/tap/).
 */
#ifndef MCPTOP_ENGINE_TAP_COMMAND_H
#define MCPTOP_ENGINE_TAP_COMMAND_H

/* {"cmd":"cancel","id":ID,"reason":TEXT} without its newline: id is the
 * request id's JSON text (7, "x") or a bare word (a string id); reason
 * may be NULL. Caller frees. */
char *tap_command_cancel(const char *id, const char *reason);
/* {"cmd":"end","session":PREFIX}: end the agent's session whose id
 * starts with prefix (an HTTP tap's). Caller frees. */
char *tap_command_end(const char *prefix);

#endif
