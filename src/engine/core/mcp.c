/*
 * The names of the MCP words (include/engine/mcp.h). No state.
 */
#include "engine/mcp.h"

#include <stddef.h>
#include <string.h>

const char *
mcp_era_name(enum mcp_era e)
{
    switch (e) {
    case MCP_ERA_MODERN:
        return "modern";
    case MCP_ERA_LEGACY:
        return "legacy";
    case MCP_ERA_LEGACY_SSE:
        return "legacy_sse";
    default:
        return NULL;
    }
}

static const char *const mcp_asked_names[MCP_ASKED__COUNT] = {
    "ping", "roots/list", "sampling/createMessage", "elicitation/create",
    "other",
};

enum mcp_asked
mcp_asked_of(const char *method)
{
    for (int k = 0; method != NULL && k < MCP_ASKED_OTHER; k++) {
        if (strcmp(method, mcp_asked_names[k]) == 0)
            return (enum mcp_asked)k;
    }
    return MCP_ASKED_OTHER;
}

const char *
mcp_asked_name(enum mcp_asked k)
{
    return (unsigned)k < MCP_ASKED__COUNT ? mcp_asked_names[k] : "other";
}
