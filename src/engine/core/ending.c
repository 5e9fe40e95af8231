/*
 * Endings' words (DESIGN.md section 5): the outcome names and which of
 * them `mcptop end` counts as success. The procedure that runs an ending
 * is transport/ending_run.c.
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
    case ENDING_STREAM_CLOSED:
        return true;
    default:
        return false;
    }
}
