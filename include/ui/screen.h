/*
 * The terminal: the only module (with keys.c) that calls curses. It starts
 * and ends curses, maps theme roles to curses attributes and colour pairs
 * (honouring NO_COLOR and 8/256-colour terminals), draws ui_lines and reads
 * keys. screen_fini is idempotent and safe from the allocation-failure
 * hook, so the terminal is restored on every path.
 */
#ifndef MCPTOP_UI_SCREEN_H
#define MCPTOP_UI_SCREEN_H

#include <stdbool.h>

#include "ui/line.h"
#include "ui/theme.h"

/* Start curses on the terminal. 0, or -1 (nothing to restore). */
int screen_init(void);
/* End curses, restoring the terminal. Idempotent. */
void screen_fini(void);
/* True when colours can be used (a colour terminal and NO_COLOR unset). */
bool screen_colour_ok(void);
/* Build the attributes of every role from t; colour only when colour. */
void screen_theme(const struct theme *t, bool colour);
/* Follow the terminal's new size (SIGWINCH). */
void screen_resize(void);
void screen_size(int *rows, int *cols);
/* Begin a frame (erase), draw lines, end the frame (one update). */
void screen_begin(void);
void screen_line(int y, const struct ui_line *l, int cols, bool selected);
void screen_end(void);
/* Next key, or -1 when none is waiting. For a mouse click *click_y gets
 * the row (else -1). */
int screen_key(int *click_y);

/* Make the next screen_end repaint the whole screen (benchmarks). */
void screen_invalidate(void);

#endif
