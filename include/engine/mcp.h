/*
 * The MCP words every floor of the engine shares, below the server: the
 * protocol revisions mcptop speaks, the era a server turned out to speak
 * (DESIGN.md section 6), the facts of a session, and one exchange as a
 * server's record keeps it. Plain values: nothing here knows a server,
 * a fleet or a transport.
 */
#ifndef MCPTOP_ENGINE_MCP_H
#define MCPTOP_ENGINE_MCP_H

#include <stdbool.h>
#include <stdint.h>

/* The newest legacy-era revision mcptop offers in initialize. */
#define MCP_PROTOCOL_LATEST "2025-11-25"
/* The modern, sessionless revision (DESIGN.md section 6). */
#define MCP_PROTOCOL_MODERN "2026-07-28"

/* What a server turned out to speak. */
enum mcp_era {
    MCP_ERA_NONE,           /* not known yet (no verdict) */
    MCP_ERA_MODERN,         /* 2026-07-28: server/discover, no session */
    MCP_ERA_LEGACY,         /* 2025-03-26 .. 2025-11-25: initialize,
                               sessions */
    MCP_ERA_LEGACY_SSE,     /* 2024-11-05 HTTP+SSE transport */
};

/* "modern" / "legacy" / "legacy_sse"; NULL for MCP_ERA_NONE. */
const char *mcp_era_name(enum mcp_era e);

/* A request the server sent its client, by method: a bounded set, for
 * counts and metric labels (basic/utilities/ping, client/roots,
 * client/sampling, client/elicitation). */
enum mcp_asked {
    MCP_ASKED_PING,
    MCP_ASKED_ROOTS,            /* roots/list */
    MCP_ASKED_SAMPLING,         /* sampling/createMessage */
    MCP_ASKED_ELICITATION,      /* elicitation/create */
    MCP_ASKED_OTHER,            /* any other method */
    MCP_ASKED__COUNT
};

/* Which of them method is (NULL: other). */
enum mcp_asked mcp_asked_of(const char *method);
/* "ping", "roots/list", "sampling/createMessage", "elicitation/create",
 * "other". Static string. */
const char *mcp_asked_name(enum mcp_asked k);

/* Session facts; NULL pointers when unknown. id_prefix is at most 8
 * characters of the id (the id is a credential: never shown whole). */
struct mcp_session_info {
    bool        open;
    char        id_prefix[12];
    const char *protocol_version;
    const char *server_name;        /* sanitized */
    const char *server_version;     /* sanitized */
    bool        tools_list_changed;
    const char *cache_scope;        /* 2026-07-28 discover's, or NULL */
};

/* One exchange in a server's history ring: 32 bytes, MCP_HISTORY of them
 * a server at most. */
struct mcp_exchange {
    int64_t     ts;             /* epoch ms */
    const char *op;             /* static string */
    float       ms;
    uint16_t    http_status;    /* 0: none */
    uint8_t     kind;           /* enum failure_kind (when !completed) */
    uint8_t     delivered;      /* enum delivered */
    bool        completed;
    bool        ending;         /* an ending's exchange (the DELETE) */
};

#define MCP_HISTORY 100

#endif
