/*
 * The text+role line buffer and display-width arithmetic. Pure: no
 * terminal, no engine. Width comes from the C library's wcwidth under the
 * locale tui_main set (UTF-8 or not).
 */
#include "ui/line.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>

#include "util/str.h"

void
ui_line_reset(struct ui_line *l, enum ui_role base)
{
    l->len = 0;
    l->cols = 0;
    l->nspan = 0;
    l->base = base;
    l->text[0] = '\0';
}

/* Append n bytes (already measured: cols columns) in role. */
static void
ui_line_append(struct ui_line *l, enum ui_role role, const char *s,
    size_t n, int cols)
{
    struct ui_span *sp;

    if (n == 0)
        return;
    if (l->len + n >= UI_LINE_BYTES)
        return;
    if (l->nspan > 0 && l->span[l->nspan - 1].role == role &&
        l->span[l->nspan - 1].off + l->span[l->nspan - 1].len == l->len) {
        sp = &l->span[l->nspan - 1];
    } else {
        if (l->nspan == UI_LINE_SPANS)
            return;
        sp = &l->span[l->nspan++];
        sp->role = role;
        sp->off = (unsigned)l->len;
        sp->len = 0;
    }
    memcpy(l->text + l->len, s, n);
    l->len += n;
    l->text[l->len] = '\0';
    sp->len += (unsigned)n;
    l->cols += cols;
}

void
ui_line_add(struct ui_line *l, enum ui_role role, const char *s)
{
    size_t n = strlen(s);

    ui_line_append(l, role, s, n, ui_text_cols(s, n));
}

void
ui_line_addf(struct ui_line *l, enum ui_role role, const char *fmt, ...)
{
    char    buf[UI_LINE_BYTES];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    ui_line_add(l, role, buf);
}

void
ui_line_pad(struct ui_line *l, enum ui_role role, int col)
{
    static const char spaces[] = "                                ";

    while (l->cols < col) {
        int n = col - l->cols;

        if (n > (int)sizeof(spaces) - 1)
            n = (int)sizeof(spaces) - 1;
        if (l->len + (size_t)n >= UI_LINE_BYTES)
            return;
        ui_line_append(l, role, spaces, (size_t)n, n);
    }
}

void
ui_line_cell(struct ui_line *l, enum ui_role role, const char *s, int width,
    bool right, bool utf8)
{
    size_t len = strlen(s), fit;
    int    cols = ui_text_cols(s, len), used;
    int    start = l->cols;

    if (width <= 0)
        return;
    if (cols <= width) {
        if (right)
            ui_line_pad(l, role, start + width - cols);
        ui_line_append(l, role, s, len, cols);
        ui_line_pad(l, role, start + width);
        return;
    }
    fit = ui_text_fit(s, len, width - 1, &used);
    ui_line_append(l, role, s, fit, used);
    ui_line_append(l, role, utf8 ? "\xe2\x80\xa6" : "~", utf8 ? 3 : 1, 1);
    ui_line_pad(l, role, start + width);
}

int
ui_text_cols(const char *s, size_t len)
{
    int    cols = 0, w;
    size_t i = 0;

    while (i < len) {
        if ((unsigned char)s[i] < 0x80) {
            cols++;
            i++;
            continue;
        }
        i += str_char_cols(s + i, len - i, &w);
        cols += w;
    }
    return cols;
}

size_t
ui_text_fit(const char *s, size_t len, int cols, int *used)
{
    size_t i = 0, n;
    int    u = 0, w;

    while (i < len) {
        if ((unsigned char)s[i] < 0x80) {
            n = 1;
            w = 1;
        } else {
            n = str_char_cols(s + i, len - i, &w);
        }
        if (u + w > cols)
            break;
        u += w;
        i += n;
    }
    *used = u;
    return i;
}
