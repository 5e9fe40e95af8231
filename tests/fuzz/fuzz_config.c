/*
 * The config parser (src/engine/config.c) over arbitrary text, read as
 * JSON, YAML and TOML (libyaml, toml++): the JSONC blanking, the server
 * map, every key, ${VAR} expansion and the URL check.
 * The environment is fixed at start (cleared, then a few variables: a
 * secret, an empty one, one holding CRLF), so expansion is deterministic.
 *
 * Checked:
 *  - config_parse gives a config or a cause, never both or neither;
 *  - the secret value never appears in a cause, a warning or an invalid
 *    reason unless the text itself holds it (values are never quoted);
 *  - every message is printable ASCII (names are shown with '?' for the
 *    rest), so none can carry an escape to the terminal;
 *  - a valid HTTP server has a url, a stdio server a command, args and
 *    args_shown have the same count, the timings are 1..INT_MAX, header
 *    names are tokens and header values hold no control character;
 *  - config_expand over the text itself: a result or a cause; the cause
 *    never holds the secret; text without '$' comes back unchanged;
 *  - config_for_url over the text: always a one-server fleet.
 */
#define _GNU_SOURCE     /* memmem */
#include <limits.h>
#include <stdbool.h>
#include <string.h>

#include "engine/config.h"
#include "fuzz.h"

#define FUZZ_SECRET "Zq9-SECRET-xK2"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    clearenv();
    setenv("TOKEN", FUZZ_SECRET, 1);
    setenv("API_KEY", "Bearer " FUZZ_SECRET, 1);
    setenv("EMPTY", "", 1);
    setenv("CRLF", "x\r\nInjected: 1", 1);
    setenv("HOME", "/nonexistent", 1);
    return 0;
}

/* A message shown to the user: printable ASCII, without the secret. */
static void
fuzz_config_message(const char *msg, bool secret_in_text, const char *what)
{
    const unsigned char *p;

    FUZZ_CHECK(msg != NULL, "%s is NULL", what);
    for (p = (const unsigned char *)msg; *p != '\0'; p++)
        FUZZ_CHECK(*p >= 0x20 && *p < 0x7f, "%s holds byte 0x%02x: %s",
            what, *p, msg);
    if (!secret_in_text)
        FUZZ_CHECK(strstr(msg, FUZZ_SECRET) == NULL, "%s quotes a secret: %s",
            what, msg);
}

/* True for an RFC 9110 token character. */
static bool
fuzz_tchar(unsigned char c)
{
    return c > 0x20 && c < 0x7f && strchr("\"(),/:;<=>?@[\\]{}", c) == NULL;
}

/* The invariants of one loaded server. */
static void
fuzz_config_server(const struct config_server *s, bool secret_in_text)
{
    size_t i;

    FUZZ_CHECK(s->name != NULL, "a server without a name");
    if (s->invalid != NULL) {
        fuzz_config_message(s->invalid, secret_in_text, "invalid reason");
        return;
    }
    FUZZ_CHECK(s->ping_interval_ms >= 1 && s->ping_interval_ms <= INT_MAX,
        "ping interval %ld", s->ping_interval_ms);
    FUZZ_CHECK(s->timeout_ms >= 1 && s->timeout_ms <= INT_MAX
        && s->open_deadline_ms >= 1 && s->open_deadline_ms <= INT_MAX
        && s->teardown_ms >= 1 && s->teardown_ms <= INT_MAX,
        "a timing out of range");
    FUZZ_CHECK(s->max_message_bytes >= 1
        && s->max_message_bytes <= INT_MAX, "max_message_bytes %zu",
        s->max_message_bytes);
    for (i = 0; i < s->ntags; i++)
        FUZZ_CHECK(s->tags[i] != NULL, "tag %zu is NULL", i);
    if (s->transport == CONFIG_HTTP) {
        FUZZ_CHECK(s->url != NULL && s->url[0] != '\0',
            "a valid HTTP server without a url");
        FUZZ_CHECK(s->command == NULL && s->nargs == 0 && s->nenv == 0,
            "stdio keys kept for an HTTP server");
        for (i = 0; i < s->nheaders; i++) {
            const unsigned char *p;

            FUZZ_CHECK(s->headers[i].name[0] != '\0', "empty header name");
            for (p = (const unsigned char *)s->headers[i].name; *p; p++)
                FUZZ_CHECK(fuzz_tchar(*p), "header name byte 0x%02x", *p);
            for (p = (const unsigned char *)s->headers[i].value; *p; p++)
                FUZZ_CHECK(*p >= 0x20 || *p == '\t',
                    "header value byte 0x%02x", *p);
        }
    } else {
        FUZZ_CHECK(s->transport == CONFIG_STDIO, "transport %d",
            (int)s->transport);
        FUZZ_CHECK(s->command != NULL
            && s->command[strspn(s->command, " \t\r\n")] != '\0',
            "a valid stdio server without a command");
        FUZZ_CHECK(s->url == NULL && s->nheaders == 0,
            "HTTP keys kept for a stdio server");
        FUZZ_CHECK(s->nargs == 0 || (s->args != NULL
            && s->args_shown != NULL), "args without their shown form");
        for (i = 0; i < s->nargs; i++)
            FUZZ_CHECK(s->args[i] != NULL && s->args_shown[i] != NULL,
                "arg %zu is NULL", i);
        for (i = 0; i < s->nenv; i++)
            FUZZ_CHECK(s->env[i].name[0] != '\0'
                && strchr(s->env[i].name, '=') == NULL
                && s->env[i].value != NULL, "env entry %zu", i);
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct config *cfg = NULL;
    char          *cause = NULL;
    char          *text;
    char          *x;
    bool           secret_in_text;
    size_t         i;
    int            rc;

    text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    secret_in_text = memmem(data, size, FUZZ_SECRET, strlen(FUZZ_SECRET))
        != NULL;

    /* The same text as JSON (with comments), YAML and TOML: each reader
     * gives the same kind of tree, checked alike. */
    for (int f = 0; f < 3; f++) {
        static const char *const origin[] = {
            "fuzz.json", "fuzz.yaml", "fuzz.toml"
        };

        cfg = NULL;
        cause = NULL;
        rc = config_parse((const char *)data, size, origin[f], &cfg,
            &cause);
        FUZZ_CHECK(rc == 0 || rc == -1, "rc %d", rc);
        FUZZ_CHECK((rc == 0) == (cfg != NULL) && (rc == 0) == (cause == NULL),
            "%s: rc %d with config %p and cause %s", origin[f], rc,
            (void *)cfg, cause != NULL ? cause : "(none)");
        if (rc != 0)
            fuzz_config_message(cause, secret_in_text, "cause");
        if (cfg != NULL) {
            for (i = 0; i < cfg->nwarnings; i++)
                fuzz_config_message(cfg->warnings[i], secret_in_text,
                    "warning");
            for (i = 0; i < cfg->nservers; i++)
                fuzz_config_server(&cfg->servers[i], secret_in_text);
        }
        config_free(cfg);
        free(cause);
    }

    /* ${VAR} expansion over the text as one string. */
    cause = NULL;
    x = config_expand(text, &cause);
    FUZZ_CHECK((x == NULL) != (cause == NULL), "expand: result and cause");
    if (x == NULL)
        fuzz_config_message(cause, secret_in_text, "expand cause");
    if (x != NULL && strchr(text, '$') == NULL)
        FUZZ_CHECK(strcmp(x, text) == 0, "text without '$' changed");
    free(x);
    free(cause);

    /* The same text as a command-line URL. */
    cfg = config_for_url(text);
    FUZZ_CHECK(cfg != NULL && cfg->nservers == 1
        && cfg->servers[0].name != NULL && cfg->servers[0].url != NULL
        && strcmp(cfg->servers[0].url, text) == 0,
        "config_for_url did not make one server");
    if (cfg->servers[0].invalid != NULL)
        fuzz_config_message(cfg->servers[0].invalid, secret_in_text,
            "url reason");
    config_free(cfg);
    free(text);
    return 0;
}
