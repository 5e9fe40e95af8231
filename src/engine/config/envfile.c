/*
 * The dotenv format of a server's "envFile": one pass over the text, one
 * line (or one quoted value spanning lines) at a time, building the
 * name=value pairs in order. Values are wiped when freed and never quoted
 * in a message.
 */
#include "config/envfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/file.h"
#include "util/str.h"
#include "util/xmalloc.h"

/* The parser's place in the text. */
struct envfile_in {
    const char *p;
    const char *end;
    size_t      line;       /* 1-based line of p */
};

/* True for the bytes of a variable name after the first. */
static bool
envfile_name_byte(char c)
{
    return c == '_' || c == '.' || c == '-' || (c >= 'a' && c <= 'z')
        || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Skip spaces and tabs. */
static void
envfile_blank(struct envfile_in *in)
{
    while (in->p < in->end && (*in->p == ' ' || *in->p == '\t'))
        in->p++;
}

/* Skip to just past the end of the current line. */
static void
envfile_next_line(struct envfile_in *in)
{
    while (in->p < in->end && *in->p != '\n')
        in->p++;
    if (in->p < in->end) {
        in->p++;
        in->line++;
    }
}

/*
 * Read a quoted value starting at the opening quote q. Double quotes
 * take escapes and may span lines; single quotes are literal. The value
 * goes to *out (caller frees). 0, or -1 with *cause.
 */
static int
envfile_quoted(struct envfile_in *in, char q, char **out, char **cause)
{
    const char *s = in->p + 1;
    const char *e = s;
    size_t      lines = 0;
    char       *v;
    size_t      n = 0;

    /* Find the closing quote first, so the value is allocated once at its
     * own size. */
    while (e < in->end && *e != q) {
        if (*e == '\n')
            lines++;
        if (q == '"' && *e == '\\' && e + 1 < in->end) {
            if (e[1] == '\n')
                lines++;
            e++;
        }
        e++;
    }
    if (e >= in->end) {
        *cause = str_printf("line %zu: unterminated %s-quoted value",
            in->line, q == '"' ? "double" : "single");
        return -1;
    }
    v = xmalloc((size_t)(e - s) + 1);
    while (s < e) {
        char c = *s++;

        if (q == '"' && c == '\\' && s < e) {
            c = *s++;
            if (c == 'n')
                c = '\n';
            else if (c == 'r')
                c = '\r';
            else if (c == 't')
                c = '\t';
            else if (c != '"' && c != '\\')
                v[n++] = '\\';
        }
        v[n++] = c;
    }
    v[n] = '\0';
    in->p = e + 1;
    in->line += lines;
    /* After the closing quote: only blanks or a comment. */
    envfile_blank(in);
    if (in->p < in->end && *in->p != '\n' && *in->p != '\r'
        && *in->p != '#') {
        explicit_bzero(v, n);
        free(v);
        *cause = str_printf("line %zu: text after the closing quote",
            in->line);
        return -1;
    }
    *out = v;
    return 0;
}

/* Read a bare value: to the end of the line or a " #" comment, trimmed. */
static char *
envfile_bare(struct envfile_in *in)
{
    const char *s = in->p;
    const char *e;

    while (in->p < in->end && *in->p != '\n') {
        if (*in->p == '#' && (in->p == s || in->p[-1] == ' '
            || in->p[-1] == '\t'))
            break;
        in->p++;
    }
    e = in->p;
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
        e--;
    return str_ndup(s, (size_t)(e - s));
}

/* Append name=value to kv[0..*n). Takes ownership of both. */
static void
envfile_add(struct str_kv **kv, size_t *n, size_t *cap, char *name,
    char *value)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 16;
        *kv = xrealloc(*kv, *cap * sizeof **kv);
    }
    (*kv)[*n].name = name;
    (*kv)[*n].value = value;
    (*n)++;
}

/* A pair and its position in the file, for sorting. */
struct envfile_ent {
    struct str_kv kv;
    size_t           pos;
};

/* qsort order: by name, then by position in the file. */
static int
envfile_cmp(const void *a, const void *b)
{
    const struct envfile_ent *x = a, *y = b;
    int                       c = strcmp(x->kv.name, y->kv.name);

    if (c != 0)
        return c;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* Keep the last value of each repeated name (O(n log n)); the order of
 * the pairs becomes the order of their names. */
static void
envfile_dedup(struct str_kv *kv, size_t *n)
{
    struct envfile_ent *e;
    size_t              i, j;

    if (*n < 2)
        return;
    e = xcalloc(*n, sizeof *e);
    for (i = 0; i < *n; i++) {
        e[i].kv = kv[i];
        e[i].pos = i;
    }
    qsort(e, *n, sizeof *e, envfile_cmp);
    for (i = 0, j = 0; i < *n; i++) {
        if (i + 1 < *n && strcmp(e[i].kv.name, e[i + 1].kv.name) == 0) {
            free(e[i].kv.name);
            explicit_bzero(e[i].kv.value, strlen(e[i].kv.value));
            free(e[i].kv.value);
            continue;
        }
        kv[j++] = e[i].kv;
    }
    free(e);
    *n = j;
}

/* See envfile.h. */
int
envfile_parse(const char *text, size_t len, struct str_kv **out,
    size_t *n, char **cause)
{
    struct envfile_in in = { text, text + len, 1 };
    struct str_kv *kv = NULL;
    size_t            nkv = 0, cap = 0;
    const char       *name;
    char             *value;

    *out = NULL;
    *n = 0;
    *cause = NULL;
    if (memchr(text, '\0', len) != NULL) {
        *cause = str_printf("a NUL byte (not a text file)");
        return -1;
    }
    while (in.p < in.end) {
        envfile_blank(&in);
        if (in.p >= in.end)
            break;
        if (*in.p == '\n' || *in.p == '\r' || *in.p == '#') {
            envfile_next_line(&in);
            continue;
        }
        if (in.end - in.p > 7 && strncmp(in.p, "export", 6) == 0
            && (in.p[6] == ' ' || in.p[6] == '\t')) {
            in.p += 6;
            envfile_blank(&in);
        }
        name = in.p;
        if (in.p < in.end && ((*in.p >= '0' && *in.p <= '9') || *in.p == '.'
            || *in.p == '-'))
            goto bad_line;
        while (in.p < in.end && envfile_name_byte(*in.p))
            in.p++;
        if (in.p == name)
            goto bad_line;
        {
            const char *name_end = in.p;

            envfile_blank(&in);
            if (in.p >= in.end || *in.p != '=')
                goto bad_line;
            in.p++;
            envfile_blank(&in);
            if (in.p < in.end && (*in.p == '"' || *in.p == '\'')) {
                if (envfile_quoted(&in, *in.p, &value, cause) != 0)
                    goto fail;
            } else {
                value = envfile_bare(&in);
            }
            envfile_add(&kv, &nkv, &cap,
                str_ndup(name, (size_t)(name_end - name)), value);
        }
        envfile_next_line(&in);
    }
    envfile_dedup(kv, &nkv);
    *out = kv;
    *n = nkv;
    return 0;

bad_line:
    *cause = str_printf("line %zu: expected KEY=VALUE", in.line);
fail:
    envfile_free(kv, nkv);
    return -1;
}

/* See envfile.h. The file text is wiped after parsing. */
int
envfile_read(const char *path, const char *shown, struct str_kv **out,
    size_t *n, char **cause)
{
    struct stat st;
    const char *what;
    char       *buf = NULL;
    char       *why = NULL;
    size_t      len = 0;
    ssize_t     r;
    int         fd;
    int         rc = -1;

    *out = NULL;
    *n = 0;
    *cause = NULL;
    /* Opened so that a FIFO or a device cannot make it wait. */
    fd = file_open_regular(path, &st, &what);
    if (fd < 0) {
        *cause = str_printf("envFile \"%s\": %s", shown, what);
        return -1;
    }
    if ((uintmax_t)st.st_size > ENVFILE_MAX_BYTES) {
        *cause = str_printf("envFile \"%s\": larger than %u bytes", shown,
            ENVFILE_MAX_BYTES);
        goto out;
    }
    buf = xmalloc(ENVFILE_MAX_BYTES + 1);
    for (;;) {
        r = read(fd, buf + len, ENVFILE_MAX_BYTES + 1 - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            *cause = str_printf("envFile \"%s\": %s", shown,
                strerror(errno));
            goto out;
        }
        if (r == 0)
            break;
        len += (size_t)r;
        if (len > ENVFILE_MAX_BYTES) {
            *cause = str_printf("envFile \"%s\": larger than %u bytes",
                shown, ENVFILE_MAX_BYTES);
            goto out;
        }
    }
    if (envfile_parse(buf, len, out, n, &why) != 0) {
        *cause = str_printf("envFile \"%s\": %s", shown, why);
        free(why);
        goto out;
    }
    rc = 0;

out:
    if (buf != NULL) {
        explicit_bzero(buf, len);
        free(buf);
    }
    close(fd);
    return rc;
}

/* See envfile.h. */
void
envfile_free(struct str_kv *kv, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        free(kv[i].name);
        explicit_bzero(kv[i].value, strlen(kv[i].value));
        free(kv[i].value);
    }
    free(kv);
}
