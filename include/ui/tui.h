/*
 * What the TUI starts with, from the command that runs it (mcptop tui,
 * src/cli/cli_tui.c): its own options. tui_run (ui.h) applies them over
 * tui.json's default view.
 */
#ifndef MCPTOP_UI_TUI_H
#define MCPTOP_UI_TUI_H

#include <stdbool.h>

#include "ui/model.h"

/* What the TUI's own options ask for (strings borrowed from argv). */
struct tui_opts {
    const char      *theme;
    bool             no_mouse;
    const char      *filter;    /* --filter, or NULL */
    bool             sorted;    /* --sort given */
    enum model_sort  sort;
    bool             invert;
    bool             grouped;   /* --group given */
    enum model_group group;
    const char      *view;      /* --view NAME, or NULL */
};

#endif
