/*
 * Text table cells for the commands' plain reports: pad or cut a UTF-8
 * string to a number of display columns. Widths come from the C library's
 * wcwidth under a private C.UTF-8 locale object (uselocale), so a wide
 * character counts two columns whatever locale the user runs with, and the
 * process locale is never changed.
 */
#include "cli/cli.h"

#include <locale.h>
#include <string.h>
#include <wchar.h>

#include "util/str.h"

#define CLI_ELLIPSIS      "\xe2\x80\xa6"    /* U+2026, one column */

/* The UTF-8 locale the widths are measured in; (locale_t)0 when none. */
static locale_t
cli_utf8_locale(void)
{
    static locale_t loc;
    static bool     tried;

    if (!tried) {
        tried = true;
        loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
        if (loc == (locale_t)0)
            loc = newlocale(LC_CTYPE_MASK, "C.utf8", (locale_t)0);
    }
    return loc;
}

/* One character at s (len bytes left): its byte length and its columns.
 * Without a UTF-8 locale each character counts one column. */
static size_t
cli_text_char(const char *s, size_t len, bool have_loc, int *w)
{
    size_t n;

    if ((unsigned char)s[0] < 0x80) {
        *w = 1;
        return 1;
    }
    if (!have_loc) {
        n = 1;
        while (n < len && ((unsigned char)s[n] & 0xc0) == 0x80)
            n++;
        *w = 1;
        return n;
    }
    return str_char_cols(s, len, w);
}

/* How many bytes of s fit in cols columns; their columns in *used. */
static size_t
cli_text_fit(const char *s, int cols, int *used)
{
    locale_t loc = cli_utf8_locale();
    locale_t old = (locale_t)0;
    size_t   len = strlen(s), i = 0, n;
    int      u = 0, w;

    if (loc != (locale_t)0)
        old = uselocale(loc);
    while (i < len) {
        n = cli_text_char(s + i, len - i, loc != (locale_t)0, &w);
        if (u + w > cols)
            break;
        u += w;
        i += n;
    }
    if (loc != (locale_t)0)
        uselocale(old);
    *used = u;
    return i;
}

int
cli_text_cols(const char *s)
{
    int used;

    cli_text_fit(s, (int)(strlen(s) * 2 + 1), &used);
    return used;
}

void
cli_cell(FILE *out, const char *s, int width, bool right)
{
    int    cols = cli_text_cols(s), used;
    size_t n;

    if (width <= 0)
        return;
    if (cols <= width) {
        if (right)
            fprintf(out, "%*s", width - cols, "");
        fputs(s, out);
        if (!right)
            fprintf(out, "%*s", width - cols, "");
        return;
    }
    /* Cut: what fits in width - 1 columns, the ellipsis, then pad (a wide
     * character that does not fit leaves a column). */
    n = cli_text_fit(s, width - 1, &used);
    if (right)
        fprintf(out, "%*s", width - 1 - used, "");
    fwrite(s, 1, n, out);
    fputs(CLI_ELLIPSIS, out);
    if (!right)
        fprintf(out, "%*s", width - 1 - used, "");
}
