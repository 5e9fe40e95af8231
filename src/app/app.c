/*
 * What the TUI and the commands share: the options naming where the fleet
 * comes from, loading it (the URL, -c FILE or the discovered config) and
 * the debug log.
 */
#include "app/app.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* See app.h. */
bool
app_is_url(const char *arg)
{
    return strncasecmp(arg, "http://", 7) == 0 ||
        strncasecmp(arg, "https://", 8) == 0;
}

/* See app.h. */
int
app_option(struct app_common *c, int ch, const char *arg)
{
    switch (ch) {
    case 'c':
        c->config_path = arg;
        return 1;
    case APP_OPT_LOG:
        c->log_path = arg;
        return 1;
    default:
        return 0;
    }
}

/* See app.h. */
int
app_args(struct app_common *c, const char *cmd, int argc, char **argv,
    int first)
{
    if (first >= argc)
        return 0;
    if (!app_is_url(argv[first]) || first + 1 < argc ||
        c->config_path != NULL) {
        fprintf(stderr, "%s: unexpected argument '%s' (give -c FILE or one "
            "http(s):// URL)\n", cmd, argv[first]);
        return EXIT_USAGE;
    }
    c->url = argv[first];
    return 0;
}

/* See app.h. */
void
app_usage_options(FILE *out)
{
    fprintf(out,
        "  -c, --config FILE  the fleet config (JSON: mcpServers or servers)\n"
        "  URL                an http:// or https:// MCP endpoint: a "
        "one-server fleet\n"
        "      --log FILE     append a debug log of every exchange\n");
}

/* See app.h. */
void
app_usage_sources(FILE *out)
{
    fprintf(out, "Config search without -c or URL: %s\n",
        config_discover_help());
}

/* See app.h. */
int
app_load_config(const struct app_common *c, struct config **out)
{
    char *cause = NULL;
    char *found = NULL;

    if (c->url != NULL) {
        *out = config_for_url(c->url);
        return 0;
    }
    if (c->config_path == NULL) {
        found = config_discover();
        if (found == NULL) {
            fprintf(stderr, "mcptop: no config given and none found "
                "(looked in %s)\n"
                "Try 'mcptop check http://127.0.0.1:PORT/mcp' or "
                "'mcptop check -c FILE'.\n", config_discover_help());
            return EXIT_USAGE;
        }
    }
    if (config_load_file(found != NULL ? found : c->config_path, out,
        &cause) != 0) {
        fprintf(stderr, "mcptop: %s\n", cause);
        free(cause);
        free(found);
        return EXIT_USAGE;
    }
    free(found);
    for (size_t i = 0; i < (*out)->nwarnings; i++)
        fprintf(stderr, "mcptop: warning: %s\n", (*out)->warnings[i]);
    return 0;
}

/* See app.h. */
int
app_open_log(struct app_common *c)
{
    if (c->log_path == NULL)
        return 0;
    c->log = fopen(c->log_path, "a");
    if (c->log == NULL) {
        fprintf(stderr, "mcptop: cannot open log %s: %s\n", c->log_path,
            strerror(errno));
        return EXIT_USAGE;
    }
    return 0;
}

/* See app.h. */
void
app_close_log(struct app_common *c)
{
    if (c->log != NULL)
        fclose(c->log);
    c->log = NULL;
}
