/*
 * A screen line before curses sees it: UTF-8 text plus a role per span
 * (after htop's RichString). Views format rows into lines; screen.c is the
 * only place that turns a line into curses calls. Widths are display
 * columns, not bytes. Text handed to a line must already be safe to show:
 * server-provided text goes through str_sanitize first.
 */
#ifndef MCPTOP_UI_LINE_H
#define MCPTOP_UI_LINE_H

#include <stdbool.h>
#include <stddef.h>

#include "ui/theme.h"

#define UI_LINE_BYTES 2048
#define UI_LINE_SPANS 96

struct ui_span {
    enum ui_role role;
    unsigned     off;
    unsigned     len;
};

struct ui_line {
    char           text[UI_LINE_BYTES];
    size_t         len;
    int            cols;            /* display columns so far */
    struct ui_span span[UI_LINE_SPANS];
    size_t         nspan;
    enum ui_role   base;            /* the role of the padding */
};

/* Empty the line; padding will be drawn in role base. */
void ui_line_reset(struct ui_line *l, enum ui_role base);
/* Append s in role. Stops quietly when the buffer is full. */
void ui_line_add(struct ui_line *l, enum ui_role role, const char *s);
/* printf flavour of ui_line_add. */
void ui_line_addf(struct ui_line *l, enum ui_role role, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Append s as a cell exactly `width` columns wide: truncated (with "…"
 * when utf8, else "~") or padded, left or right aligned. */
void ui_line_cell(struct ui_line *l, enum ui_role role, const char *s,
    int width, bool right, bool utf8);
/* Pad with spaces in role up to column `col`. */
void ui_line_pad(struct ui_line *l, enum ui_role role, int col);

/* Display columns of the first len bytes of s (invalid bytes count 1). */
int ui_text_cols(const char *s, size_t len);
/* How many bytes of s fit in cols columns; *used gets their width. */
size_t ui_text_fit(const char *s, size_t len, int cols, int *used);

#endif
