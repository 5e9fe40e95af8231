/*
 * What the fleet's own files share (engine-private): fleet.c owns the
 * fleet; fleet_raw.c makes raw channels on its servers with the same
 * loop, HTTP machinery and log.
 */
#ifndef MCPTOP_ENGINE_FLEET_INT_H
#define MCPTOP_ENGINE_FLEET_INT_H

#include "engine/fleet.h"
#include "engine/server.h"

/* What every server of f shares (loop, curl, log). Borrowed: valid while
 * f lives. */
const struct server_env *fleet_env(const struct fleet *f);

#endif
