/*
 * Test helpers shared by the config tests (test_config.c,
 * test_config_formats.c, test_envfile.c): parse text that must parse or
 * must fail, find a server, a header or env entry, a warning or a note,
 * and assert a server's verdict. Include after <cmocka.h>. Each helper
 * fails the test (cmocka's fail()) rather than return an error.
 */
#ifndef MCPTOP_TEST_CONFIG_CHECK_H
#define MCPTOP_TEST_CONFIG_CHECK_H

#include <stdbool.h>
#include <string.h>

#include "engine/config.h"

/* Parse text as origin with opt (may be NULL); it must parse. */
static inline struct config *
parse_as(const char *origin, const char *text,
    const struct config_options *opt)
{
    struct config *cfg = NULL;
    char          *cause = NULL;

    if (config_parse_with(text, strlen(text), origin, opt, &cfg,
        &cause) != 0) {
        print_error("%s\n", cause);
        fail();
    }
    return cfg;
}

/* Parse text as origin, which must fail; the cause (caller frees). */
static inline char *
parse_fail_as(const char *origin, const char *text)
{
    struct config *cfg = NULL;
    char          *cause = NULL;

    assert_int_equal(config_parse(text, strlen(text), origin, &cfg,
        &cause), -1);
    assert_null(cfg);
    assert_non_null(cause);
    return cause;
}

/* The server called name; fails the test when there is none. */
static inline const struct config_server *
server(const struct config *cfg, const char *name)
{
    size_t i;

    for (i = 0; i < cfg->nservers; i++) {
        if (strcmp(cfg->servers[i].name, name) == 0)
            return &cfg->servers[i];
    }
    print_error("no server \"%s\"\n", name);
    fail();
    return NULL;
}

/* The value of header or env entry name in kv[0..n), or NULL. */
static inline const char *
kv_get(const struct str_kv *kv, size_t n, const char *name)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (strcmp(kv[i].name, name) == 0)
            return kv[i].value;
    }
    return NULL;
}

/* How many of lines[0..n) (warnings or notes) contain needle. */
static inline size_t
count_in(char *const *lines, size_t n, const char *needle)
{
    size_t i, k = 0;

    for (i = 0; i < n; i++) {
        if (strstr(lines[i], needle) != NULL)
            k++;
    }
    return k;
}

static inline bool
has_warning(const struct config *cfg, const char *needle)
{
    return count_in(cfg->warnings, cfg->nwarnings, needle) > 0;
}

static inline bool
has_note(const struct config *cfg, const char *needle)
{
    return count_in(cfg->notes, cfg->nnotes, needle) > 0;
}

/* Assert that server name is invalid with a message containing needle. */
static inline void
assert_invalid(const struct config *cfg, const char *name,
    const char *needle)
{
    const struct config_server *s = server(cfg, name);

    if (s->invalid == NULL || strstr(s->invalid, needle) == NULL) {
        print_error("server \"%s\": invalid is \"%s\", expected \"%s\"\n",
            name, s->invalid ? s->invalid : "(null)", needle);
        fail();
    }
}

#endif
