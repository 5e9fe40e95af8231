/*
 * The processes the fleet answers for, for a front end's process view
 * (the TUI's o): the one walk of /proc (proc.c does the reading), the
 * details of the entries asked about, and the rule that says which
 * configured stdio server a process's command line is (proc_argv_matches
 * over the fleet's declarations). What must never happen here: a signal
 * (the view ends a process with proc_end, which child.c carries out), or
 * a command line shown (argv is untrusted; it is only compared).
 */
#include "engine/fleet.h"

#include "engine/proc.h"
#include "engine/server.h"

/* Where Linux shows its processes (proc(5)). */
#define FLEET_PROCS_ROOT "/proc"

int
fleet_procs_walk(const struct fleet *f, struct proc_table *t)
{
    (void)f;
    return proc_table_scan(t, FLEET_PROCS_ROOT);
}

void
fleet_procs_details(const struct fleet *f, const struct proc_table *t,
    struct proc_entry *e)
{
    (void)f;
    proc_table_details(t, FLEET_PROCS_ROOT, e);
}

bool
fleet_procs_spawns(const struct server *s)
{
    const struct config_server *d = server_decl(s);

    return d != NULL && d->transport == CONFIG_STDIO && d->tap == NULL &&
        d->command != NULL;
}

long
fleet_procs_match(const struct fleet *f, const struct proc_entry *e)
{
    size_t n = fleet_size(f);

    if (!e->detailed || e->argc == 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const struct server        *s = fleet_server(f, i);
        const struct config_server *d = server_decl(s);

        if (fleet_procs_spawns(s) && proc_argv_matches(d->command, d->args,
            d->nargs, e->argv, e->argc))
            return (long)i;
    }
    return -1;
}
