/*
 * The text of a config file, up to a cJSON tree: reading it whole within
 * CONFIG_MAX_FILE_BYTES, telling its format (JSON with comments, YAML
 * or TOML), blanking
 * JSONC comments and trailing commas, and naming the line and column of
 * a JSON error.
 *
 * The text may hold secrets: every copy made here is wiped before it is
 * freed, and no message quotes the text, only the origin and a position.
 * What the tree means is none of this file's business (config.c).
 */
#include "config/config_int.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "config/config_toml.h"
#include "config/config_yaml.h"
#include "util/str.h"
#include "util/xmalloc.h"

/*
 * Blank comments and trailing commas outside strings with spaces (JSONC,
 * as VS Code writes it). Offsets and newlines are kept, so error
 * positions still match the file.
 */
static void
config_jsonc_blank(char *t, size_t len)
{
    size_t i = 0;
    size_t j;
    bool   in_str = false;
    char   last = '\0';

    while (i < len) {
        if (in_str) {
            if (t[i] == '\\')
                i++;
            else if (t[i] == '"')
                in_str = false;
            i++;
        } else if (t[i] == '/' && i + 1 < len && t[i + 1] == '/') {
            while (i < len && t[i] != '\n')
                t[i++] = ' ';
        } else if (t[i] == '/' && i + 1 < len && t[i + 1] == '*') {
            t[i++] = ' ';
            t[i++] = ' ';
            while (i < len && !(t[i] == '*' && i + 1 < len
                && t[i + 1] == '/')) {
                if (t[i] != '\n')
                    t[i] = ' ';
                i++;
            }
            if (i < len) {
                t[i++] = ' ';
                t[i++] = ' ';
            }
        } else {
            if (t[i] == '"')
                in_str = true;
            i++;
        }
    }

    in_str = false;
    for (i = 0; i < len; i++) {
        if (in_str) {
            if (t[i] == '\\')
                i++;
            else if (t[i] == '"')
                in_str = false;
            continue;
        }
        if (t[i] == '"')
            in_str = true;
        if (t[i] == ',' && last != ',' && last != '[' && last != '{') {
            j = i + 1;
            while (j < len && strchr(" \t\r\n", t[j]) != NULL)
                j++;
            if (j < len && (t[j] == '}' || t[j] == ']')) {
                t[i] = ' ';
                continue;
            }
        }
        if (strchr(" \t\r\n", t[i]) == NULL)
            last = t[i];
    }
}

/*
 * The "<origin>:LINE:COL: not valid JSON" message for byte offset off (as
 * cJSON reports it: for a missing object key it is one byte past).
 */
static char *
config_json_error(const char *text, size_t off, const char *origin)
{
    size_t line = 1;
    size_t col = 1;
    size_t i;

    for (i = 0; i < off; i++) {
        if (text[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    return str_printf("%s:%zu:%zu: not valid JSON", origin, line, col);
}

/* The formats a config may be in. */
enum config_format {
    CONFIG_FORMAT_JSON,
    CONFIG_FORMAT_YAML,
    CONFIG_FORMAT_TOML,
};

/* True when line[0..n) is a TOML table header ("[a.b]" or "[[a]]"). */
static bool
config_toml_header(const char *line, size_t n)
{
    size_t i = 0;

    while (n > 0 && strchr(" \t\r", line[n - 1]) != NULL)
        n--;
    if (n < 3 || line[0] != '[' || line[n - 1] != ']')
        return false;
    for (i = 1; i + 1 < n; i++) {
        char c = line[i];

        if (!(isalnum((unsigned char)c) || strchr("_-.\"' []", c) != NULL))
            return false;
    }
    return true;
}

/* True when line[0..n) is a TOML "key = value" line. */
static bool
config_toml_pair(const char *line, size_t n)
{
    size_t i = 0;

    while (i < n && (isalnum((unsigned char)line[i])
        || strchr("_-.\"", line[i]) != NULL))
        i++;
    if (i == 0)
        return false;
    while (i < n && (line[i] == ' ' || line[i] == '\t'))
        i++;
    return i < n && line[i] == '=' && (i + 1 >= n || line[i + 1] != '=');
}

/*
 * The format of a config: by origin's extension (.json/.jsonc/.json5,
 * .yaml/.yml, .toml), else by its first significant line: '{' or '[' or
 * a comment in the JSONC style is JSON, a TOML table header or
 * "key = value" is TOML, anything else YAML.
 */
static enum config_format
config_format(const char *text, size_t len, const char *origin)
{
    const char *base = strrchr(origin, '/');
    const char *dot;
    const char *p = text;
    const char *end = text + len;
    size_t      n;

    base = base != NULL ? base + 1 : origin;
    dot = strrchr(base, '.');
    if (dot != NULL && dot != base) {
        if (strcasecmp(dot, ".toml") == 0)
            return CONFIG_FORMAT_TOML;
        if (strcasecmp(dot, ".yaml") == 0 || strcasecmp(dot, ".yml") == 0)
            return CONFIG_FORMAT_YAML;
        if (strcasecmp(dot, ".json") == 0 || strcasecmp(dot, ".jsonc") == 0
            || strcasecmp(dot, ".json5") == 0)
            return CONFIG_FORMAT_JSON;
    }
    while (p < end) {
        while (p < end && strchr(" \t\r\n", *p) != NULL)
            p++;
        if (p >= end)
            break;
        n = (size_t)((const char *)memchr(p, '\n', (size_t)(end - p)) != NULL
            ? (const char *)memchr(p, '\n', (size_t)(end - p)) - p
            : end - p);
        if (*p == '#') {            /* a YAML or TOML comment */
            p += n;
            continue;
        }
        if (*p == '[' && config_toml_header(p, n))
            return CONFIG_FORMAT_TOML;
        if (*p == '{' || *p == '[' || *p == '/')
            return CONFIG_FORMAT_JSON;
        if (config_toml_pair(p, n))
            return CONFIG_FORMAT_TOML;
        return CONFIG_FORMAT_YAML;
    }
    return CONFIG_FORMAT_JSON;
}

/* Parse JSON text into *root. 0, or -1 with *cause naming the position. */
static int
config_parse_json(const char *text, size_t len, const char *origin,
    cJSON **root, char **cause)
{
    const char *nul;
    const char *end = NULL;
    char       *copy;
    size_t      off;

    *root = NULL;
    nul = memchr(text, '\0', len);
    if (nul != NULL) {
        *cause = config_json_error(text, (size_t)(nul - text), origin);
        return -1;
    }
    copy = xmalloc(len + 1);
    memcpy(copy, text, len);
    copy[len] = '\0';
    config_jsonc_blank(copy, len);
    *root = cJSON_ParseWithLengthOpts(copy, len, &end, 0);
    off = end != NULL ? (size_t)(end - copy) : 0;
    if (*root != NULL) {
        while (off < len && strchr(" \t\r\n", copy[off]) != NULL)
            off++;
    }
    explicit_bzero(copy, len);
    free(copy);
    if (*root == NULL || off < len) {
        *cause = config_json_error(text, off < len ? off : len, origin);
        cJSON_Delete(*root);
        *root = NULL;
        return -1;
    }
    return 0;
}

/* Parse a config's text into a tree: whitespace only is an empty file,
 * TOML goes to toml++ (config_toml.cpp), YAML to libyaml, anything else
 * is JSON with comments. See config_int.h. */
cJSON *
config_parse_tree(const char *text, size_t len, const char *origin,
    char **cause)
{
    cJSON  *root = NULL;
    size_t  off;

    *cause = NULL;
    for (off = 0; off < len; off++) {
        if (strchr(" \t\r\n", text[off]) == NULL || text[off] == '\0')
            break;
    }
    if (off == len) {
        *cause = str_printf("%s: empty file", origin);
        return NULL;
    }
    switch (config_format(text, len, origin)) {
    case CONFIG_FORMAT_TOML:
        return config_toml_parse(text, len, origin, cause);
    case CONFIG_FORMAT_YAML:
        return config_yaml_parse(text, len, origin, cause);
    default:
        if (config_parse_json(text, len, origin, &root, cause) != 0)
            return NULL;
        return root;
    }
}

/*
 * Read fd to its end into *buf (caller wipes and frees) and *len; size is
 * the file's size when known (0 otherwise). 0, or -1 with *cause naming
 * name.
 */
int
config_read_fd(int fd, const char *name, size_t size, char **buf,
    size_t *len, char **cause)
{
    size_t  cap = size > 0 ? size + 1 : 64 * 1024;
    ssize_t n;
    char   *p;

    *len = 0;
    *buf = xmalloc(cap);
    for (;;) {
        if (*len == cap) {
            if (cap > CONFIG_MAX_FILE_BYTES) {
                *cause = str_printf("%s: larger than 16 MiB", name);
                return -1;
            }
            cap = cap * 2 > CONFIG_MAX_FILE_BYTES + 1
                ? CONFIG_MAX_FILE_BYTES + 1 : cap * 2;
            /* Grow by copying, so no secret is left in freed memory. */
            p = xmalloc(cap);
            memcpy(p, *buf, *len);
            explicit_bzero(*buf, *len);
            free(*buf);
            *buf = p;
        }
        n = read(fd, *buf + *len, cap - *len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            *cause = str_printf("%s: %s", name, strerror(errno));
            return -1;
        }
        if (n == 0)
            return 0;
        *len += (size_t)n;
    }
}
