/*
 * YAML configs through libyaml's document loader: yaml_parser_load builds
 * the node graph of the first document (aliases are references to the
 * anchored node), and one bounded walk copies it into cJSON. The walk
 * counts every node it emits, so an alias bomb or a self-referencing
 * anchor stops at a limit instead of exhausting memory or the stack.
 *
 * The loader itself has no depth limit and slows down with depth (about
 * seven seconds for 40,000 nested flow sequences, on the machine that
 * found it): before it runs, one pass over libyaml's events counts the
 * nesting as it is read and stops at the limit, so a deep document costs
 * what its first CONFIG_YAML_MAX_DEPTH levels cost.
 */
#include "config/config_yaml.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "util/str.h"
#include "util/xmalloc.h"

/* The walk's state: the document, the budget left and the first error. */
struct config_yaml_walk {
    yaml_document_t *doc;
    const char      *origin;
    long             budget;
    char            *cause;
};

/* True when the plain scalar s (n bytes) is YAML's null. */
static bool
config_yaml_is_null(const char *s, size_t n)
{
    return n == 0 || (n == 1 && s[0] == '~') || (n == 4
        && (strcmp(s, "null") == 0 || strcmp(s, "Null") == 0
        || strcmp(s, "NULL") == 0));
}

/* -1 when s is not a boolean, else 0 or 1. */
static int
config_yaml_bool(const char *s)
{
    if (strcmp(s, "true") == 0 || strcmp(s, "True") == 0
        || strcmp(s, "TRUE") == 0)
        return 1;
    if (strcmp(s, "false") == 0 || strcmp(s, "False") == 0
        || strcmp(s, "FALSE") == 0)
        return 0;
    return -1;
}

/*
 * True when the plain scalar s reads as a decimal number (YAML 1.2 core:
 * optional sign, digits, an optional fraction and exponent), with the
 * value in *d.
 */
static bool
config_yaml_number(const char *s, double *d)
{
    const char *p = s;
    char       *end = NULL;
    bool        digits = false;

    if (*p == '-' || *p == '+')
        p++;
    while (*p >= '0' && *p <= '9') {
        p++;
        digits = true;
    }
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9') {
            p++;
            digits = true;
        }
    }
    if (!digits)
        return false;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '-' || *p == '+')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            return false;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p != '\0')
        return false;
    errno = 0;
    *d = strtod(s, &end);
    return end != NULL && *end == '\0' && isfinite(*d);
}

/* Record the walk's first error, at node n's position. */
static void config_yaml_fail(struct config_yaml_walk *w, const yaml_node_t *n,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
config_yaml_fail(struct config_yaml_walk *w, const yaml_node_t *n,
    const char *fmt, ...)
{
    va_list ap;
    char   *what;

    if (w->cause != NULL)
        return;
    va_start(ap, fmt);
    what = str_vprintf(fmt, ap);
    va_end(ap);
    w->cause = str_printf("%s:%zu:%zu: %s", w->origin,
        n->start_mark.line + 1, n->start_mark.column + 1, what);
    free(what);
}

/* A scalar node as cJSON. NULL with w->cause on error. */
static cJSON *
config_yaml_scalar(struct config_yaml_walk *w, const yaml_node_t *n)
{
    const char *s = (const char *)n->data.scalar.value;
    size_t      len = n->data.scalar.length;
    double      d;
    int         b;

    if (memchr(s, '\0', len) != NULL) {
        config_yaml_fail(w, n, "a NUL character in a string");
        return NULL;
    }
    if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
        if (config_yaml_is_null(s, len))
            return cJSON_CreateNull();
        b = config_yaml_bool(s);
        if (b >= 0)
            return cJSON_CreateBool(b);
        if (config_yaml_number(s, &d))
            return cJSON_CreateNumber(d);
    }
    return cJSON_CreateString(s);
}

/* Copy node n (at nesting depth) into cJSON. NULL with w->cause. */
static cJSON *
config_yaml_node(struct config_yaml_walk *w, const yaml_node_t *n, int depth)
{
    cJSON *out = NULL;

    if (n == NULL) {
        config_yaml_fail(w, &(yaml_node_t){ 0 }, "a dangling alias");
        return NULL;
    }
    if (depth > CONFIG_YAML_MAX_DEPTH) {
        config_yaml_fail(w, n, "nested deeper than %d levels (or an anchor "
            "that contains itself)", CONFIG_YAML_MAX_DEPTH);
        return NULL;
    }
    if (--w->budget < 0) {
        config_yaml_fail(w, n, "more than %d nodes once aliases are "
            "expanded", CONFIG_YAML_MAX_NODES);
        return NULL;
    }
    switch (n->type) {
    case YAML_SCALAR_NODE:
        out = config_yaml_scalar(w, n);
        break;
    case YAML_SEQUENCE_NODE: {
        yaml_node_item_t *it;

        out = cJSON_CreateArray();
        for (it = n->data.sequence.items.start;
            it < n->data.sequence.items.top; it++) {
            cJSON *c = config_yaml_node(w,
                yaml_document_get_node(w->doc, *it), depth + 1);

            if (c == NULL)
                goto fail;
            cJSON_AddItemToArray(out, c);
        }
        break;
    }
    case YAML_MAPPING_NODE: {
        yaml_node_pair_t *p;

        out = cJSON_CreateObject();
        for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
            p++) {
            yaml_node_t *k = yaml_document_get_node(w->doc, p->key);
            cJSON       *c;

            if (k == NULL || k->type != YAML_SCALAR_NODE) {
                config_yaml_fail(w, k != NULL ? k : n, "a mapping key that "
                    "is not a string");
                goto fail;
            }
            if (memchr(k->data.scalar.value, '\0',
                k->data.scalar.length) != NULL) {
                config_yaml_fail(w, k, "a NUL character in a key");
                goto fail;
            }
            c = config_yaml_node(w, yaml_document_get_node(w->doc,
                p->value), depth + 1);
            if (c == NULL)
                goto fail;
            cJSON_AddItemToObject(out, (const char *)k->data.scalar.value,
                c);
        }
        break;
    }
    default:
        config_yaml_fail(w, n, "an empty node");
        return NULL;
    }
    if (out == NULL)
        return NULL;
    return out;

fail:
    cJSON_Delete(out);
    return NULL;
}

/*
 * The event pass: 0 when text nests at most CONFIG_YAML_MAX_DEPTH deep,
 * else -1 with *cause (caller frees) at the first level too deep. Errors
 * of YAML itself are left to the loader, which reports them alike.
 */
static int
config_yaml_depth(const char *text, size_t len, const char *origin,
    char **cause)
{
    yaml_parser_t parser;
    yaml_event_t  e;
    int           depth = 0, rc = 0;
    bool          end = false;

    if (!yaml_parser_initialize(&parser))
        return 0;
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    while (!end && rc == 0) {
        if (!yaml_parser_parse(&parser, &e))
            break;
        switch (e.type) {
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
            if (++depth > CONFIG_YAML_MAX_DEPTH) {
                *cause = str_printf("%s:%zu:%zu: nested deeper than %d "
                    "levels", origin, e.start_mark.line + 1,
                    e.start_mark.column + 1, CONFIG_YAML_MAX_DEPTH);
                rc = -1;
            }
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            depth--;
            break;
        case YAML_DOCUMENT_END_EVENT:     /* the loader reads the first */
        case YAML_STREAM_END_EVENT:
            end = true;
            break;
        default:
            break;
        }
        yaml_event_delete(&e);
    }
    yaml_parser_delete(&parser);
    return rc;
}

/* See config_yaml.h. */
cJSON *
config_yaml_parse(const char *text, size_t len, const char *origin,
    char **cause)
{
    struct config_yaml_walk w = { .origin = origin,
        .budget = CONFIG_YAML_MAX_NODES };
    yaml_parser_t           parser;
    yaml_document_t         doc;
    yaml_node_t            *root;
    cJSON                  *out = NULL;

    *cause = NULL;
    if (config_yaml_depth(text, len, origin, cause) != 0)
        return NULL;
    if (!yaml_parser_initialize(&parser)) {
        *cause = str_printf("%s: cannot start the YAML parser", origin);
        return NULL;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        *cause = str_printf("%s:%zu:%zu: not valid YAML (%s)", origin,
            parser.problem_mark.line + 1, parser.problem_mark.column + 1,
            parser.problem != NULL ? parser.problem : "unknown problem");
        yaml_parser_delete(&parser);
        return NULL;
    }
    root = yaml_document_get_root_node(&doc);
    if (root == NULL) {
        *cause = str_printf("%s: no YAML document (only comments?)",
            origin);
    } else {
        w.doc = &doc;
        out = config_yaml_node(&w, root, 0);
        if (out == NULL) {
            *cause = w.cause != NULL ? w.cause
                : str_printf("%s: cannot convert the YAML document", origin);
        }
    }
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    return out;
}
