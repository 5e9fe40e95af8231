/*
 * The start every command that loads a fleet shares (check, watch, end,
 * serve): its arguments (the shared options of src/front and its own,
 * the URL, "-- CMD ARGS..."), the config from every source with --shard
 * applied, the --log, and the fleet on the default loop. The command says
 * what it is in a struct cli_preamble and runs its own steps in the hooks
 * between; whatever stops the preamble has been said on stderr, and
 * nothing it opened is left open.
 */
#include "cli/cli.h"

#include <getopt.h>
#include <stdlib.h>

/* The command's options: the shared ones through app_option, -h, and the
 * command's own through p->option. 0, or -1 with *rc. */
static int
preamble_options(const struct cli_preamble *p, struct cli_fleet *cf,
    int argc, char **argv, int *rc)
{
    char shortopts[64];
    int  ch;

    snprintf(shortopts, sizeof(shortopts), ":%s%s", APP_SHORTOPTS,
        p->shortopts);
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, shortopts, p->longopts,
        NULL)) != -1) {
        if (app_option(&cf->common, ch, optarg))
            continue;
        if (ch == 'h') {
            p->usage(stdout);
            *rc = 0;
            return -1;
        }
        if (ch == ':' || ch == '?' || p->option == NULL) {
            *rc = app_option_error(p->cmd, ch, argv, p->longopts);
            return -1;
        }
        if (p->option(p->arg, ch, optarg, rc) != 0)
            return -1;
    }
    return 0;
}

/* The fleet over cf->cfg, its warning said. 0, or -1 with *rc. */
static int
preamble_fleet(const struct cli_preamble *p, struct cli_fleet *cf, int *rc)
{
    char *cause = NULL;

    cf->opt.log = cf->common.log;
    cf->fleet = fleet_new(EV_DEFAULT, cf->cfg, &cf->opt, &cause);
    if (cf->fleet == NULL) {
        fprintf(stderr, "mcptop %s: %s\n", p->cmd, cause);
        free(cause);
        *rc = EXIT_USAGE;
        return -1;
    }
    if (fleet_warning(cf->fleet) != NULL)
        fprintf(stderr, "mcptop %s: warning: %s\n", p->cmd,
            fleet_warning(cf->fleet));
    return 0;
}

int
cli_preamble(const struct cli_preamble *p, int argc, char **argv,
    struct cli_fleet *cf, int *rc)
{
    char cmd[32];

    argc = app_split_command(&cf->common, argc, argv);
    if (preamble_options(p, cf, argc, argv, rc) != 0)
        return -1;
    snprintf(cmd, sizeof(cmd), "mcptop %s", p->cmd);
    *rc = app_args(&cf->common, cmd, argc, argv, optind);
    if (*rc != 0)
        return -1;
    if (p->parsed != NULL && p->parsed(p->arg, rc) != 0)
        return -1;
    *rc = app_load_config(&cf->common, &cf->cfg);
    if (*rc != 0)
        return -1;
    if (p->loaded != NULL && p->loaded(p->arg, cf->cfg, rc) != 0)
        goto out_cfg;
    *rc = app_open_log(&cf->common);
    if (*rc != 0)
        goto out_cfg;
    if (preamble_fleet(p, cf, rc) != 0)
        goto out_log;
    return 0;
out_log:
    app_close_log(&cf->common);
out_cfg:
    config_free(cf->cfg);
    cf->cfg = NULL;
    return -1;
}
