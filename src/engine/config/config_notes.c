/*
 * What a parse tells the operator besides errors: warnings (an unknown
 * key, a key of the other transport; one line each) and notes (another
 * client's key mcptop reads but does not apply; notes with the same text
 * are gathered into one line naming the servers they concern).
 *
 * A warning or a note quotes names only (keys, servers, variables), never
 * a value: values may be secrets. Server names are sanitized before they
 * are shown.
 */
#include "config/config_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/str.h"
#include "util/xmalloc.h"

#define CONFIG_NOTE_NAMES       8       /* servers named per note */

/* Append a warning (printf-style) to cfg->warnings. */
void
config_warn(struct config *cfg, const char *fmt, ...)
{
    va_list ap;

    cfg->warnings = xrealloc(cfg->warnings,
        (cfg->nwarnings + 1) * sizeof *cfg->warnings);
    va_start(ap, fmt);
    cfg->warnings[cfg->nwarnings++] = str_vprintf(fmt, ap);
    va_end(ap);
}

/*
 * Gather a note (printf-style text) about server name (NULL: about the
 * file): notes with the same text become one line naming every server.
 * The text is found by ctx->note_ix, not by comparing with every note.
 */
void
config_note(struct config_ctx *ctx, const char *name, const char *fmt, ...)
{
    struct config_note *n;
    va_list             ap;
    char               *text;
    long                i;

    va_start(ap, fmt);
    text = str_vprintf(fmt, ap);
    va_end(ap);
    i = config_names_find(&ctx->note_ix, text);
    if (i >= 0) {
        n = &ctx->notes[i];
        free(text);
    } else {
        ctx->notes = xrealloc(ctx->notes,
            (ctx->nnotes + 1) * sizeof *ctx->notes);
        n = &ctx->notes[ctx->nnotes];
        n->text = text;
        n->names = NULL;
        n->nnames = 0;
        config_names_add(&ctx->note_ix, n->text, (long)ctx->nnotes++);
    }
    /* Only the first few names are shown; the rest are counted. */
    if (name != NULL && n->nnames < CONFIG_NOTE_NAMES) {
        n->names = xrealloc(n->names, (n->nnames + 1) * sizeof *n->names);
        n->names[n->nnames] = str_sanitized(name);
    }
    if (name != NULL)
        n->nnames++;
}

/* Turn the gathered notes into cfg->notes and free them. */
void
config_notes_done(struct config_ctx *ctx)
{
    struct config *cfg = ctx->cfg;
    size_t         i, k;

    for (i = 0; i < ctx->nnotes; i++) {
        struct config_note *n = &ctx->notes[i];
        struct config_buf   b = { NULL, 0, 0 };

        config_buf_add(&b, n->text, strlen(n->text));
        for (k = 0; k < n->nnames && k < CONFIG_NOTE_NAMES; k++) {
            const char *sep = k > 0 ? ", " : n->nnames == 1 ? " (server "
                : " (servers ";

            config_buf_add(&b, sep, strlen(sep));
            config_buf_add(&b, n->names[k], strlen(n->names[k]));
        }
        if (n->nnames > CONFIG_NOTE_NAMES) {
            char more[40];

            snprintf(more, sizeof more, " and %zu more",
                n->nnames - CONFIG_NOTE_NAMES);
            config_buf_add(&b, more, strlen(more));
        }
        if (n->nnames > 0)
            config_buf_add(&b, ")", 1);
        if (cfg != NULL) {
            cfg->notes = xrealloc(cfg->notes,
                (cfg->nnotes + 1) * sizeof *cfg->notes);
            cfg->notes[cfg->nnotes++] = b.p;
        } else {
            free(b.p);
        }
        for (k = 0; k < n->nnames && k < CONFIG_NOTE_NAMES; k++)
            free(n->names[k]);
        free(n->names);
        free(n->text);
    }
    config_names_done(&ctx->note_ix);
    free(ctx->notes);
    ctx->notes = NULL;
    ctx->nnotes = 0;
}
