/*
 * The names of the MCP words (include/engine/mcp.h). No state.
 */
#include "engine/mcp.h"

#include <stddef.h>

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
