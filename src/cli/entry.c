/*
 * The commands' usage, written once in each command's entry (cli.h's
 * struct cli_entry) and printed two ways: whole at the top of the
 * command's --help, and in mcptop --help's list, shortened only in what
 * every command shares (the sources, as [SOURCES], which that help
 * explains) and wrapped to its columns. Never reads a usage but its
 * entry's.
 */
#include "cli/cli.h"

#include <stdlib.h>
#include <string.h>

#include "util/str.h"
#include "util/xmalloc.h"

#define CLI_USAGE_COLS  79
/* Where a further form of a usage begins (under "Usage: "). */
#define CLI_USAGE_FORM  "\n       mcptop "

/* See cli.h. */
void
cli_usage(FILE *out, const struct cli_entry *e)
{
    fprintf(out, "Usage: mcptop %s %s\n", e->name, e->usage);
}

/* See cli.h. */
void
cli_usage_also(FILE *out, const struct cli_entry *e)
{
    fprintf(out, "       mcptop %s %s\n", e->name, e->usage);
}

/* The n bytes at s on one line: each run of blanks one space, none at
 * either end. Caller frees. */
static char *
cli_usage_flat(const char *s, size_t n)
{
    char  *out = xmalloc(n + 1);
    size_t k = 0;

    for (size_t i = 0; i < n; i++) {
        if (s[i] == ' ' || s[i] == '\n') {
            if (k > 0 && out[k - 1] != ' ')
                out[k++] = ' ';
            continue;
        }
        out[k++] = s[i];
    }
    while (k > 0 && out[k - 1] == ' ')
        k--;
    out[k] = '\0';
    return out;
}

/* Each what in line (a flat usage) becomes with, which is no longer. */
static void
cli_usage_replace(char *line, const char *what, const char *with)
{
    size_t wl = strlen(what), nl = strlen(with);
    char  *at;

    while ((at = strstr(line, what)) != NULL) {
        memcpy(at, with, nl);
        memmove(at + nl, at + wl, strlen(at + wl) + 1);
    }
}

/* "  " and line to out, cut at its spaces outside brackets so that no
 * line is wider than CLI_USAGE_COLS (a longer word stays whole), the
 * lines after the first indented indent columns. */
static void
cli_usage_wrap(FILE *out, const char *line, int indent)
{
    int  col = 2, depth = 0;
    bool fresh = true;          /* nothing on this line yet */

    fputs("  ", out);
    while (*line != '\0') {
        size_t n = 0;

        /* One word: up to a space outside [ ] and ( ). */
        while (line[n] != '\0' && (line[n] != ' ' || depth > 0)) {
            if (line[n] == '[' || line[n] == '(')
                depth++;
            else if ((line[n] == ']' || line[n] == ')') && depth > 0)
                depth--;
            n++;
        }
        if (!fresh && col + 1 + (int)n > CLI_USAGE_COLS) {
            fprintf(out, "\n%*s", indent, "");
            col = indent;
            fresh = true;
        }
        if (!fresh) {
            fputc(' ', out);
            col++;
        }
        fprintf(out, "%.*s", (int)n, line);
        col += (int)n;
        fresh = false;
        line += n;
        while (*line == ' ')
            line++;
    }
    fputc('\n', out);
}

/* See cli.h. */
void
cli_usage_brief(FILE *out, const struct cli_entry *e)
{
    char       *sources = cli_usage_flat(APP_USAGE, strlen(APP_USAGE));
    const char *form = e->usage;
    int         indent = 2 + (int)strlen(e->name) + 1;

    for (bool first = true; form != NULL; first = false) {
        const char *next = strstr(form, CLI_USAGE_FORM);
        char       *flat = cli_usage_flat(form, next != NULL ?
            (size_t)(next - form) : strlen(form));

        cli_usage_replace(flat, sources, "[SOURCES]");
        cli_usage_replace(flat, " " APP_USAGE_END, "");
        /* A further form names its command itself. */
        if (first) {
            char *line = str_printf("%s %s", e->name, flat);

            cli_usage_wrap(out, line, indent);
            free(line);
        } else {
            cli_usage_wrap(out, flat, indent);
        }
        free(flat);
        form = next != NULL ? next + strlen(CLI_USAGE_FORM) : NULL;
    }
    fprintf(out, "%22s%s\n", "", e->summary);
    free(sources);
}
