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

/* Start curses on the terminal (stdout); keys reach curses only through
 * screen_pump. utf8: the locale's (for the ellipsis); mouse: capture the
 * mouse from the start. 0, or -1 (nothing to restore). */
int screen_init(bool utf8, bool mouse);
/* End curses, restoring the terminal. Idempotent. */
void screen_fini(void);
/* The curses library linked, as it names itself ("ncurses 6.4.20221231").
 * Static string; curses need not be started. */
const char *screen_curses_version(void);
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
/* Capture the mouse (clicks select, the wheel scrolls) or leave it to
 * the terminal, so text can be selected and copied. */
void screen_mouse(bool on);
/* Put text (len bytes) on the terminal's clipboard: OSC 52, written to the
 * terminal after the last frame (terminals that allow it, tmux with
 * set-clipboard on). At most SCREEN_CLIPBOARD_MAX bytes (more is cut). */
#define SCREEN_CLIPBOARD_MAX 65536
void screen_clipboard(const char *text, size_t len);
bool screen_mouse_enabled(void);

/* What a mouse event said: the cell of a button-1 press or click (y -1
 * when none), the wheel (-1 up, 1 down, 0 none). */
struct screen_click {
    int y;
    int x;
    int wheel;
};
/* Next key, or -1 when none is waiting; never blocks. KEY_MOUSE fills
 * *click. */
int screen_key(struct screen_click *click);

/*
 * Keys: the loop watches STDIN_FILENO and calls screen_pump when it is
 * readable; screen_pump reads what the terminal sent and passes the
 * complete key sequences to curses through a pipe, whose read end
 * (screen_keys_fd) the loop watches to call screen_key until -1.
 */
enum screen_pump {
    SCREEN_PUMP_OK,
    SCREEN_PUMP_HELD,   /* a cut escape sequence is held: call
                           screen_pump_release after SCREEN_HOLD_MS */
    SCREEN_PUMP_FULL,   /* curses has SCREEN_INBUF bytes to read first: stop
                           watching stdin until screen_pump_release */
    SCREEN_PUMP_GONE,   /* end of file or an error: the terminal is gone */
};
#define SCREEN_HOLD_MS 25
enum screen_pump screen_pump(void);
/* Give curses whatever is held. true when there is room to read again. */
bool screen_pump_release(void);
int screen_keys_fd(void);

/*
 * The stale marker. screen_watchdog_start arms a SIGALRM handler that,
 * when the loop has not called screen_tick for 2 s, writes "STALE Ns" in
 * the top right corner straight to the terminal. Call screen_tick on every
 * loop turn: it returns 0, or how many seconds the loop was stuck when a
 * marker was drawn (then the next frame repaints everything).
 */
void screen_watchdog_start(void);
int screen_tick(void);

/* Make the next screen_end repaint the whole screen (benchmarks). */
void screen_invalidate(void);

#endif
