/*
 * Processes as Linux shows them in /proc (proc(5)): one walk of /proc
 * reads every process's stat line (pid, comm, state, ppid, pgid, CPU
 * ticks, start time, RSS), and, for the ones asked about, the command line
 * and the real uid; the table links each process to its children (one
 * pass, a pid -> entry map), so a tree or "is it a descendant of mcptop"
 * costs O(n). Also the rule that says whether a command line is a
 * configured stdio server's, and the ending of a process that is not
 * mcptop's child (TERM, then KILL at a deadline, on a libev timer: the
 * signals themselves are sent by child.c, the one file allowed to).
 * Nothing here includes curses or knows the fleet; a front end walks
 * /proc through the fleet (fleet_procs_walk), never with a root of its own.
 */
#ifndef MCPTOP_ENGINE_PROC_H
#define MCPTOP_ENGINE_PROC_H

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* At most this many processes are read by one walk. */
#define PROC_SCAN_MAX 8192

/* What /proc/PID/stat says (proc(5) fields 1-5, 14, 15, 22, 24). */
struct proc_stat {
    pid_t              pid;
    char               comm[32];    /* as the kernel has it (<= 15 bytes),
                                       sanitized */
    char               state;       /* R S D Z T t I X ... */
    pid_t              ppid;
    pid_t              pgid;
    unsigned long long ticks;       /* utime + stime, clock ticks */
    unsigned long long start;       /* start time, clock ticks after boot */
    long               rss_pages;
};

/*
 * Parse one stat line (a NUL-terminated copy of /proc/PID/stat). comm is
 * the text between the first '(' and the LAST ')': a name may hold spaces
 * and parentheses ("1234 (a) b) S 1 ..."). 0, or -1 when the line is not
 * a stat line (nothing in *out is to be used then).
 */
int proc_parse_stat(const char *line, struct proc_stat *out);

/* One process of a walk. */
struct proc_entry {
    struct proc_stat st;
    /* filled by proc_table_details: */
    bool             detailed;
    uid_t            uid;           /* real uid (status "Uid:"); -1 when
                                       unread */
    char            *cmdline;       /* argv joined by spaces, control
                                       characters stripped; "" for a
                                       kernel thread */
    char           **argv;          /* argv as read (untrusted bytes, for
                                       matching only) */
    size_t           argc;
    /* links (indexes into the table, SIZE_MAX for none) */
    size_t           parent, child, next;
    /* filled by the caller as it likes */
    int              mark;
};

struct proc_table {
    struct proc_entry *v;           /* sorted by pid */
    size_t             n;
    bool               truncated;   /* more than PROC_SCAN_MAX */
    double             uptime_s;    /* /proc/uptime at the walk */
    long               clk_tck;     /* sysconf(_SC_CLK_TCK) */
    long               page_kb;
};

/*
 * Walk root ("/proc"; tests give a directory of their own) into t (t is
 * reset first; proc_table_done frees it). 0, or -1 with errno when root
 * cannot be read. Processes that vanish during the walk are skipped.
 */
int proc_table_scan(struct proc_table *t, const char *root);
void proc_table_done(struct proc_table *t);
/* The entry of pid, or NULL (binary search). */
struct proc_entry *proc_table_find(const struct proc_table *t, pid_t pid);
/* Read the command line and the uid of entry e (once; a process gone since
 * the walk keeps "" and uid -1). */
void proc_table_details(const struct proc_table *t, const char *root,
    struct proc_entry *e);
/* True when e is anc or one of its descendants (the parent links up). */
bool proc_table_descends(const struct proc_table *t,
    const struct proc_entry *e, const struct proc_entry *anc);

/*
 * The matching rule: is argv (argc strings, as read from /proc) the
 * process of a stdio server configured as command + args?
 *  - plain commands: argv[0]'s last path component equals command's, and
 *    argv[1..] equal args exactly (a wrapper's extra words do not match);
 *  - package runners (npx, bunx, pnpx, uvx, pipx run, pnpm dlx, bun x,
 *    npm exec): the package the runner was given ("@scope/name@1.2" ->
 *    "name", "pkg==1.0" -> "pkg") appears as a word of one of argv's
 *    elements ("node /x/.bin/mcp-server-name" or "npm exec @scope/name"
 *    both match "name" inside a longer word bounded by /, -, _, . or @),
 *    and the args after the package follow in argv in the same order
 *    (a subsequence): the runner became another command line.
 * Untrusted argv is only compared, never shown.
 */
bool proc_argv_matches(const char *command, char *const *args, size_t nargs,
    char *const *argv, size_t argc);

/* A process's identity, checked before each signal (a pid reused by
 * another process has another start time, or another uid). */
struct proc_id {
    pid_t              pid;
    unsigned long long start;
    uid_t              uid;
};

/* True when the process pid is alive (not a zombie) with the same start
 * time and real uid as id. */
bool proc_id_alive(const struct proc_id *id, const char *root);

/* How an ending went, for the callback. */
enum proc_end_result {
    PROC_END_TERM,          /* gone after SIGTERM */
    PROC_END_KILL,          /* gone after SIGKILL */
    PROC_END_GONE,          /* gone (or another process) before any signal */
    PROC_END_FAILED,        /* a signal was refused (errno in the
                               callback), or still there after KILL */
};

struct proc_ending;
typedef void (*proc_end_cb)(void *arg, const struct proc_id *id,
    enum proc_end_result r, double ms, int err);

/*
 * End the process id: SIGTERM now, SIGKILL after deadline_ms if it still
 * exists, each sent only when the pid still has id's start time and uid
 * (a pidfd is held where the kernel has them, so the signal reaches this
 * process and no later one). It is watched every 20 ms on the loop (a
 * process not ours cannot be waited for); cb runs once, from the loop,
 * with the result and the milliseconds since the TERM. NULL when nothing
 * was sent (cb not called then): *err 0 when the process was already gone
 * (or is another one now), else the errno of the refused SIGTERM (EPERM).
 * proc_ending_free stops it (cb not called); call it after cb too.
 */
struct proc_ending *proc_end(struct ev_loop *loop, const struct proc_id *id,
    long deadline_ms, proc_end_cb cb, void *arg, int *err);
void proc_ending_free(struct proc_ending *e);
/* True while the ending runs (cb not called yet). */
bool proc_ending_busy(const struct proc_ending *e);

#endif
