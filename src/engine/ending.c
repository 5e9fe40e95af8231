/*
 * Names and verdicts of ending outcomes. The procedure itself runs in the
 * server (HTTP DELETE) and the stdio transport (the shutdown sequence),
 * which fill a struct ending.
 */
#include "engine/ending.h"

static const char *const ending_names[ENDING__COUNT] = {
#define X(id, name) [ENDING_##id] = name,
    ENDING_OUTCOMES(X)
#undef X
};

const char *
ending_outcome_name(enum ending_outcome o)
{
    if ((unsigned)o >= ENDING__COUNT)
        return "?";
    return ending_names[o];
}

bool
ending_outcome_ok(enum ending_outcome o)
{
    switch (o) {
    case ENDING_TERMINATED:
    case ENDING_NOT_ALLOWED:
    case ENDING_ALREADY_GONE:
    case ENDING_EXITED:
    case ENDING_NO_SESSION:
        return true;
    default:
        return false;
    }
}
