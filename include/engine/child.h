/*
 * The stdio transport's process half (MCP basic/transports, stdio): a
 * server started as a child with argv (no shell), in its own process
 * group, stdin/stdout as non-blocking pipes carrying newline-delimited
 * JSON-RPC, stderr read line by line, its exit watched with ev_child.
 * Also the one command that runs detached (child_detached).
 *
 * A face of the engine for the tap (tap_relay.c), which runs its
 * server as every stdio server runs, in raw mode (on_data: the bytes as
 * they came, to be passed on unchanged). Process control lives in
 * child.c and stdio.c only (scripts/lint.sh); everyone else asks here.
 */
#ifndef MCPTOP_ENGINE_CHILD_H
#define MCPTOP_ENGINE_CHILD_H

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "util/str.h"

struct child;

struct child_callbacks {
    /* One complete stdout line (without its newline or a trailing CR). */
    void (*on_line)(void *arg, const char *line, size_t len);
    /* A stdout line passed max_bytes; the reader skips to the next one. */
    void (*on_too_long)(void *arg, size_t len);
    /* One stderr line (cut at 1 KiB). */
    void (*on_stderr)(void *arg, const char *line, size_t len);
    /* stdout reached EOF. */
    void (*on_closed)(void *arg);
    /* The child was reaped; status as from waitpid. */
    void (*on_exit)(void *arg, int status);
    /* Raw mode (the tap): when set, every byte read from stdout goes here
     * as it was read, and on_line / on_too_long are not called. */
    void (*on_data)(void *arg, const char *buf, size_t len);
    /* Raw mode for stderr: bytes as read; on_stderr is not called. */
    void (*on_stderr_data)(void *arg, const char *buf, size_t len);
};

/* What to start: values only, borrowed for the call. */
struct child_spec {
    const char          *command;   /* found on mcptop's PATH */
    const char          *shown;     /* as written, for messages: what a
                                       variable expanded to is never shown
                                       (NULL: command) */
    char *const         *args;      /* nargs arguments after the command */
    size_t               nargs;
    const struct str_kv *env;       /* added to mcptop's, winning */
    size_t               nenv;
    const char          *cwd;       /* NULL: mcptop's */
    long                 teardown_ms;   /* the shutdown sequence's wait
                                           between steps, ms (> 0) */
};

/*
 * Start spec's command. NULL when it cannot start: *err is the errno
 * (ENOENT, EACCES, ...) and *cause a message (caller frees). The command is
 * found on mcptop's PATH; its environment is mcptop's plus spec->env.
 * Callbacks run from the loop (never from inside child_send). The loop must
 * be the default loop (ev_child).
 */
struct child *child_spawn(struct ev_loop *loop,
    const struct child_spec *spec, size_t max_bytes,
    const struct child_callbacks *cb, void *arg, int *err, char **cause);

/* Queue msg plus a newline for stdin. -1 (errno EPIPE) when stdin is
 * closed or the child is gone; nothing is queued then. */
int child_send(struct child *c, const char *msg, size_t len);
/* Queue len bytes for stdin as they are (no newline added: the tap
 * forwards another process's bytes unchanged). -1 (errno EPIPE) as
 * child_send. */
int child_write(struct child *c, const char *buf, size_t len);
/* Stop (true) or start again (false) reading the child's stdout: flow
 * control when what it wrote cannot be passed on yet. */
void child_read_pause(struct child *c, bool paused);
/* Close stdin (after flushing what is queued): the first step of the MCP
 * shutdown sequence. */
void child_close_stdin(struct child *c);
/* Send sig to the child's process group. */
void child_signal(struct child *c, int sig);
/*
 * Process groups of a wrapper (`sh -c`, npx, uvx, docker run): the child
 * is its group's leader, and the server may be another member.
 * child_group_keep: after the leader's exit its group is the caller's to
 * end (an ending that judges every member), not the lingering rule's
 * below. child_signal_group: sig to the group, even after the leader
 * exited (its id stays the leader's pid while a member lives).
 * child_group_left: true while a member of the group (a zombie not yet
 * reaped included) is there.
 */
void child_group_keep(struct child *c);
void child_signal_group(struct child *c, int sig);
bool child_group_left(const struct child *c);
pid_t child_pid(const struct child *c);
/*
 * A process that is not mcptop's child (an orphan the operator ends, see
 * engine/proc.h): a pidfd for pid (pidfd_open(2)), -1 where the kernel has
 * none (errno set). The caller closes it.
 */
int child_pidfd_open(pid_t pid);
/* Send sig to that process: through pidfd when it is >= 0 (the signal
 * reaches that process and no later one with the same pid), else by pid.
 * 0, or -1 with errno (ESRCH: gone). The caller checked who it is. */
int child_signal_other(int pidfd, pid_t pid, int sig);
bool child_exited(const struct child *c);
bool child_stdout_closed(const struct child *c);
/* Bytes waiting to be written to stdin. */
size_t child_pending_bytes(const struct child *c);
/*
 * Process groups whose leader exited while members live on (a server that
 * forked workers): each got SIGTERM when its leader exited and gets
 * SIGKILL at that child's teardown deadline. kill_all sends SIGKILL to
 * every one still here now (at exit: nothing of a group outlives mcptop)
 * and returns how many; lingering counts them.
 */
size_t child_groups_kill_all(void);
size_t child_groups_lingering(void);

/*
 * At exit: end every process still re-parented to mcptop (it became a
 * child subreaper when it spawned its first server, so what a server left
 * behind, a setsid() daemon included, is its child now): SIGTERM, SIGKILL
 * after grace_s seconds, reaped; a few rounds, for what those leave in
 * turn. Blocks at most about grace_s + 1 s a round. Returns how many were
 * found; 0 (and nothing done) when no server was ever spawned.
 */
size_t child_orphans_end(double grace_s);

/*
 * Free. A child still running is killed (SIGKILL to its group) and reaped
 * here, so none is left behind. NULL does nothing. Never call from inside
 * one of c's own callbacks.
 */
void child_free(struct child *c);

/*
 * Run argv (argv[0] looked up on PATH) detached: in its own session, with
 * /dev/null for fds 0-2, never waited for nor killed by mcptop. True when
 * it was handed to the new process; an exec that fails there is not seen
 * (the process exits 127). Blocks only for the intermediate fork's exit.
 */
bool child_detached(char *const argv[]);

#endif
