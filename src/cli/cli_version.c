/*
 * `mcptop --version`: mcptop's version (CMake's PROJECT_VERSION) and the
 * git commit it was configured at, then every library the binary runs
 * on, each as it reports itself at run time. Its entry is the top-level
 * option's (--version, -V): not a command mcptop --help lists.
 */
#include "cli/cli.h"

#include "engine/version.h"
#include "ui/screen.h"

#ifndef MCPTOP_GIT_COMMIT
#define MCPTOP_GIT_COMMIT "unknown"
#endif

void
cli_print_version(FILE *out)
{
    struct engine_versions v;

    engine_versions(&v);
    fprintf(out, "mcptop %s (commit %s)\n", MCPTOP_VERSION,
        MCPTOP_GIT_COMMIT);
    fprintf(out, "libcurl %s (TLS: %s)\n", v.curl,
        v.curl_tls != NULL ? v.curl_tls : "none");
    fprintf(out, "%s\n", screen_curses_version());
    fprintf(out, "libev %d.%d\n", v.ev_major, v.ev_minor);
    fprintf(out, "cJSON %s\n", v.cjson);
}

/* `mcptop --version`. */
static int
cli_version(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    cli_print_version(stdout);
    return 0;
}

const struct cli_entry cli_version_entry = {
    .name = "--version",
    .alias = "-V",
    .exec = cli_version,
};
