/*
 * Child processes: those of stdio servers, and the one detached command
 * mcptop starts and never watches (the browser of mcptop login).
 * posix_spawnp starts a server's command in its own process group with
 * pipes on fds 0-2; a spawn that cannot exec fails in posix_spawnp itself
 * (glibc reports the exec errno), so spawn_failed is decided by the
 * errno, never by timing. Reading is bounded: a stdout line past
 * max_bytes is dropped up to its newline, stderr lines are cut at 1 KiB,
 * and nothing is kept beyond one partial line of each.
 *
 * It must never block: pipes are non-blocking, writes are queued and
 * flushed on EV_WRITE, and the exit is learned from ev_child. The one
 * wait is child_detached's, for a fork that exits at once.
 */
#define _GNU_SOURCE     /* pipe2, posix_spawn_file_actions_addchdir_np */
#include "engine/child.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <ctype.h>
#include <dirent.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/str.h"
#include "util/xmalloc.h"

#define CHILD_STDERR_LINE 1024
#define CHILD_READ_CHUNK  65536

extern char **environ;

struct child {
    struct ev_loop               *loop;
    const struct child_callbacks *cb;
    void                         *arg;
    pid_t                         pid;
    int                           in_fd, out_fd, err_fd;
    ev_io                         in_w, out_w, err_w;
    ev_child                      exit_w;
    size_t                        max_bytes;
    /* stdin queue */
    char                         *wbuf;
    size_t                        woff, wlen, wcap;   /* queued:
                                                       wbuf[woff..wlen) */
    bool                          close_after_flush;
    bool                          in_closed;
    /* stdout line */
    char                         *line;
    size_t                        line_len, line_cap;
    bool                          skipping;
    size_t                        skipped;
    bool                          out_closed;
    /* stderr line */
    char                          eline[CHILD_STDERR_LINE];
    size_t                        eline_len;
    bool                          etrunc;
    bool                          exited;
    double                        teardown_s;   /* for its group */
    bool                          group_kept;   /* the caller ends the group
                                                   after the leader's exit */
};

static void
child_set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);

    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static void
child_close_fd(struct child *c, ev_io *w, int *fd)
{
    ev_io_stop(c->loop, w);
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* Build mcptop's environment plus the spec's, the spec winning. */
static char **
child_envp(const struct child_spec *spec)
{
    size_t n = 0, k = 0;
    char **envp;

    while (environ[n] != NULL)
        n++;
    envp = xcalloc(n + spec->nenv + 1, sizeof(*envp));
    for (size_t i = 0; i < n; i++) {
        bool overridden = false;

        for (size_t j = 0; j < spec->nenv; j++) {
            size_t l = strlen(spec->env[j].name);

            if (strncmp(environ[i], spec->env[j].name, l) == 0 &&
                environ[i][l] == '=')
                overridden = true;
        }
        if (!overridden)
            envp[k++] = xstrdup(environ[i]);
    }
    for (size_t j = 0; j < spec->nenv; j++)
        envp[k++] = str_printf("%s=%s", spec->env[j].name,
            spec->env[j].value);
    envp[k] = NULL;
    return envp;
}

static void
child_free_strv(char **v)
{
    if (v == NULL)
        return;
    for (size_t i = 0; v[i] != NULL; i++) {
        /* Entry values may be secrets. */
        memset(v[i], 0, strlen(v[i]));
        free(v[i]);
    }
    free(v);
}

/* Write what is queued for stdin, as much as the pipe takes. The queue
 * is consumed from its front (woff): a large queue written in pipe-sized
 * pieces is never moved for each piece. */
static void
child_flush(struct child *c)
{
    ssize_t n;

    while (c->woff < c->wlen) {
        n = write(c->in_fd, c->wbuf + c->woff, c->wlen - c->woff);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (n <= 0) {
            /* EPIPE: the child closed its stdin. */
            c->woff = c->wlen = 0;
            child_close_fd(c, &c->in_w, &c->in_fd);
            c->in_closed = true;
            return;
        }
        c->woff += (size_t)n;
    }
    if (c->woff < c->wlen)
        return;
    c->woff = c->wlen = 0;
    ev_io_stop(c->loop, &c->in_w);
    if (c->close_after_flush) {
        child_close_fd(c, &c->in_w, &c->in_fd);
        c->in_closed = true;
    }
}

/* ev_io: stdin writable. */
static void
child_in_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    (void)revents;
    child_flush(w->data);
}

static void
child_line_append(struct child *c, const char *p, size_t n)
{
    if (c->skipping) {
        c->skipped += n;
        return;
    }
    if (c->line_len + n > c->max_bytes) {
        c->skipping = true;
        c->skipped = c->line_len + n;
        c->line_len = 0;
        return;
    }
    if (c->line_len + n + 1 > c->line_cap) {
        size_t want = c->line_cap ? c->line_cap : 4096;

        while (want < c->line_len + n + 1)
            want *= 2;
        c->line = xrealloc(c->line, want);
        c->line_cap = want;
    }
    memcpy(c->line + c->line_len, p, n);
    c->line_len += n;
    c->line[c->line_len] = '\0';
}

/* A newline ended the current stdout line. */
static void
child_line_end(struct child *c)
{
    if (c->skipping) {
        size_t len = c->skipped;

        c->skipping = false;
        c->skipped = 0;
        if (c->cb->on_too_long != NULL)
            c->cb->on_too_long(c->arg, len);
        return;
    }
    if (c->line_len > 0 && c->line[c->line_len - 1] == '\r')
        c->line[--c->line_len] = '\0';
    if (c->line_len > 0 && c->cb->on_line != NULL)
        c->cb->on_line(c->arg, c->line, c->line_len);
    c->line_len = 0;
    /* Do not keep a huge buffer after one big message. */
    if (c->line_cap > 1024 * 1024) {
        free(c->line);
        c->line = NULL;
        c->line_cap = 0;
    }
}

/* ev_io: stdout readable. */
static void
child_out_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    struct child *c = w->data;
    char          buf[CHILD_READ_CHUNK];
    ssize_t       n;

    (void)loop;
    (void)revents;
    n = read(c->out_fd, buf, sizeof(buf));
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        child_close_fd(c, &c->out_w, &c->out_fd);
        c->out_closed = true;
        if (c->cb->on_closed != NULL)
            c->cb->on_closed(c->arg);
        return;
    }
    if (c->cb->on_data != NULL) {
        c->cb->on_data(c->arg, buf, (size_t)n);
        return;
    }
    for (ssize_t i = 0, start = 0; i <= n; i++) {
        if (i == n) {
            child_line_append(c, buf + start, (size_t)(i - start));
            break;
        }
        if (buf[i] == '\n') {
            child_line_append(c, buf + start, (size_t)(i - start));
            child_line_end(c);
            start = i + 1;
        }
    }
}

static void
child_stderr_flush(struct child *c)
{
    if (c->eline_len > 0 && c->cb->on_stderr != NULL)
        c->cb->on_stderr(c->arg, c->eline, c->eline_len);
    c->eline_len = 0;
}

/* ev_io: stderr readable. Lines are cut, never accumulated without bound. */
/* One read of the child's stderr into its lines: > 0 bytes read, 0 at the
 * end (the pipe closed), -1 when nothing is there now. */
static ssize_t
child_err_read(struct child *c)
{
    char    buf[CHILD_READ_CHUNK];
    ssize_t n;

    n = read(c->err_fd, buf, sizeof(buf));
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return -1;
    if (n <= 0) {
        child_stderr_flush(c);
        child_close_fd(c, &c->err_w, &c->err_fd);
        return 0;
    }
    if (c->cb->on_stderr_data != NULL) {
        c->cb->on_stderr_data(c->arg, buf, (size_t)n);
        return n;
    }
    for (ssize_t i = 0; i < n; i++) {
        if (buf[i] == '\n') {
            if (!c->etrunc)
                child_stderr_flush(c);
            c->eline_len = 0;
            c->etrunc = false;
        } else if (c->etrunc) {
            continue;
        } else if (c->eline_len < sizeof(c->eline)) {
            c->eline[c->eline_len++] = buf[i];
        } else {
            child_stderr_flush(c);
            c->etrunc = true;
        }
    }
    return n;
}

static void
child_err_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    (void)revents;
    child_err_read(w->data);
}

/* --- process groups that outlive their leader -------------------------- */

/*
 * A server may fork workers into its process group and exit; they must
 * not outlive the server in mcptop's eyes. When a leader exits, its group
 * gets SIGTERM at once and SIGKILL at the teardown deadline, and is
 * watched (kill(-pgid, 0)) until it is gone; at exit every group still
 * here gets SIGKILL (child_groups_kill_all).
 */
struct child_group {
    pid_t     pgid;
    ev_tstamp kill_at;      /* loop time */
    bool      killed;
};

static struct child_group *child_groups;
static size_t              child_ngroups, child_groups_cap;
static ev_timer            child_groups_timer;
static struct ev_loop     *child_groups_loop;

static bool
child_group_alive(pid_t pgid)
{
    return kill(-pgid, 0) == 0 || errno == EPERM;
}

static void child_groups_arm(void);

/* ev_timer: signal what is due, forget what is gone. */
static void
child_groups_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    ev_tstamp now = ev_now(loop);
    size_t    j = 0;

    (void)w;
    (void)revents;
    for (size_t i = 0; i < child_ngroups; i++) {
        struct child_group *g = &child_groups[i];

        if (!child_group_alive(g->pgid))
            continue;
        if (now >= g->kill_at && !g->killed) {
            kill(-g->pgid, SIGKILL);
            g->killed = true;
        }
        child_groups[j++] = *g;
    }
    child_ngroups = j;
    child_groups_arm();
}

static void
child_groups_arm(void)
{
    ev_tstamp next = 0.5;       /* poll killed groups until they are gone */

    if (child_groups_loop == NULL)
        return;
    ev_timer_stop(child_groups_loop, &child_groups_timer);
    if (child_ngroups == 0)
        return;
    for (size_t i = 0; i < child_ngroups; i++) {
        ev_tstamp in = child_groups[i].kill_at - ev_now(child_groups_loop);

        if (!child_groups[i].killed && in < next)
            next = in > 0 ? in : 0;
    }
    ev_timer_set(&child_groups_timer, next, 0.);
    ev_timer_start(child_groups_loop, &child_groups_timer);
}

/* The leader pgid exited: TERM its group now, KILL it at the deadline. */
static void
child_group_linger(struct ev_loop *loop, pid_t pgid, double deadline_s)
{
    if (!child_group_alive(pgid))
        return;
    kill(-pgid, SIGTERM);
    if (child_groups_loop == NULL) {
        child_groups_loop = loop;
        ev_timer_init(&child_groups_timer, child_groups_cb, 0., 0.);
    }
    if (child_ngroups == child_groups_cap) {
        child_groups_cap = child_groups_cap ? child_groups_cap * 2 : 8;
        child_groups = xrealloc(child_groups, child_groups_cap *
            sizeof(*child_groups));
    }
    child_groups[child_ngroups].pgid = pgid;
    child_groups[child_ngroups].kill_at = ev_now(loop) + deadline_s;
    child_groups[child_ngroups].killed = false;
    child_ngroups++;
    child_groups_arm();
}

size_t
child_groups_kill_all(void)
{
    size_t n = 0;

    for (size_t i = 0; i < child_ngroups; i++) {
        if (child_group_alive(child_groups[i].pgid)) {
            kill(-child_groups[i].pgid, SIGKILL);
            n++;
        }
    }
    child_ngroups = 0;
    if (child_groups_loop != NULL)
        ev_timer_stop(child_groups_loop, &child_groups_timer);
    free(child_groups);
    child_groups = NULL;
    child_groups_cap = 0;
    return n;
}

size_t
child_groups_lingering(void)
{
    return child_ngroups;
}

/* --- what a server leaves behind: mcptop as a child subreaper ---------- */

/*
 * A stdio server may start a daemon that leaves its process group and
 * session (setsid) and outlives it: no group signal reaches it, and it
 * used to live on after mcptop (holding pipes that callers wait on).
 * Before the first server is spawned mcptop becomes a child subreaper
 * (PR_SET_CHILD_SUBREAPER, Linux 3.4): whatever its children leave behind
 * is re-parented to mcptop instead of init, however often it forks, and
 * child_orphans_end ends it at exit. Out of reach still: a process started
 * through another service manager (systemd, a container runtime, an
 * already running daemon asked over a socket) is not mcptop's descendant.
 */
static bool child_subreaper_on;

static void
child_subreaper(void)
{
    if (!child_subreaper_on && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
        child_subreaper_on = true;
}

/* The pids whose parent is this process, from /proc/PID/stat (at most
 * max). */
static size_t
child_orphans_list(pid_t *out, size_t max)
{
    DIR           *d = opendir("/proc");
    struct dirent *e;
    pid_t          self = getpid();
    size_t         n = 0;

    if (d == NULL)
        return 0;
    while (n < max && (e = readdir(d)) != NULL) {
        char  path[300], buf[512], *rp;
        FILE *f;
        long  ppid = 0;

        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
        if ((f = fopen(path, "re")) == NULL)
            continue;
        if (fgets(buf, sizeof(buf), f) != NULL &&
            (rp = strrchr(buf, ')')) != NULL &&
            sscanf(rp + 1, " %*c %ld", &ppid) == 1 && ppid == (long)self)
            out[n++] = (pid_t)atol(e->d_name);
        fclose(f);
    }
    closedir(d);
    return n;
}

/* Signal pid and, when it leads one, its process group. */
static void
child_orphan_signal(pid_t pid, int sig)
{
    if (getpgid(pid) == pid)
        kill(-pid, sig);
    kill(pid, sig);
}

/* Reap what has exited; true when no child is left. */
static bool
child_orphans_reap(void)
{
    pid_t pid;

    while ((pid = waitpid(-1, NULL, WNOHANG)) > 0)
        ;
    return pid < 0 && errno == ECHILD;
}

size_t
child_orphans_end(double grace_s)
{
    enum { MAX = 256, ROUNDS = 8 };
    pid_t           pids[MAX];
    size_t          n, total = 0;
    struct timespec step = { 0, 10 * 1000000L };

    if (!child_subreaper_on)
        return 0;
    /* Ending one may hand its own children to mcptop: a few rounds. */
    for (int round = 0; round < ROUNDS; round++) {
        long waited_ms = 0;

        child_orphans_reap();
        n = child_orphans_list(pids, MAX);
        if (n == 0)
            break;
        total += n;
        for (size_t i = 0; i < n; i++)
            child_orphan_signal(pids[i], SIGTERM);
        while (!child_orphans_reap() && waited_ms < (long)(grace_s * 1000)) {
            nanosleep(&step, NULL);
            waited_ms += 10;
        }
        for (size_t i = 0; i < n; i++) {
            if (kill(pids[i], 0) == 0)
                child_orphan_signal(pids[i], SIGKILL);
        }
        for (waited_ms = 0; !child_orphans_reap() && waited_ms < 1000;
            waited_ms += 10)
            nanosleep(&step, NULL);
    }
    return total;
}

/* ev_child: the child was reaped. */
static void
child_exit_cb(struct ev_loop *loop, ev_child *w, int revents)
{
    struct child *c = w->data;

    (void)revents;
    ev_child_stop(loop, w);
    c->exited = true;
    /* What it said last is often why it exited (npm's E404): read what is
     * in the pipe now, a bounded amount, before the exit is reported, so
     * the cause is not lost to the order in which the loop saw them. */
    for (int i = 0; i < 16 && c->err_fd >= 0; i++) {
        if (child_err_read(c) <= 0)
            break;
    }
    /* What it left in its group goes too, unless an ending judges it. */
    if (!c->group_kept)
        child_group_linger(loop, c->pid, c->teardown_s);
    if (c->cb->on_exit != NULL)
        c->cb->on_exit(c->arg, w->rstatus);
}

struct child *
child_spawn(struct ev_loop *loop, const struct child_spec *spec,
    size_t max_bytes, const struct child_callbacks *cb, void *arg, int *err,
    char **cause)
{
    int                        in[2] = { -1, -1 }, out[2] = { -1, -1 },
                               errp[2] = { -1, -1 };
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t          attr;
    sigset_t                   def, none;
    char                     **argv, **envp;
    struct child              *c = NULL;
    pid_t                      pid;
    int                        rc;
    const char                *shown = spec->shown != NULL ? spec->shown :
                                   spec->command;

    *err = 0;
    if (spec->cwd != NULL && access(spec->cwd, X_OK) != 0) {
        /* Said apart: posix_spawn would blame the command. */
        *err = errno;
        *cause = str_printf("cannot start %s: working directory %s: %s",
            shown, spec->cwd, strerror(errno));
        return NULL;
    }
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 ||
        pipe2(errp, O_CLOEXEC) != 0) {
        *err = errno;
        *cause = str_printf("cannot make pipes: %s", strerror(errno));
        goto out_pipes;
    }
    argv = xcalloc(spec->nargs + 2, sizeof(*argv));
    argv[0] = (char *)spec->command;
    for (size_t i = 0; i < spec->nargs; i++)
        argv[i + 1] = spec->args[i];
    envp = child_envp(spec);

    child_subreaper();
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
    if (spec->cwd != NULL)
        posix_spawn_file_actions_addchdir_np(&fa, spec->cwd);
    posix_spawnattr_init(&attr);
    /* Its own process group, so the shutdown sequence reaches npx's
     * grandchildren too; signals mcptop ignores are reset. */
    posix_spawnattr_setpgroup(&attr, 0);
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attr, &none);
    sigemptyset(&def);
    sigaddset(&def, SIGPIPE);
    sigaddset(&def, SIGINT);
    sigaddset(&def, SIGTERM);
    sigaddset(&def, SIGCHLD);
    posix_spawnattr_setsigdefault(&attr, &def);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP |
        POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    rc = posix_spawnp(&pid, spec->command, &fa, &attr, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    free(argv);
    child_free_strv(envp);
    if (rc != 0) {
        *err = rc;
        /* As written: what a variable expanded to is never shown. */
        *cause = str_printf("cannot start %s: %s", shown, strerror(rc));
        goto out_pipes;
    }
    close(in[0]);
    close(out[1]);
    close(errp[1]);
    c = xcalloc(1, sizeof(*c));
    c->loop = loop;
    c->cb = cb;
    c->arg = arg;
    c->pid = pid;
    c->max_bytes = max_bytes;
    c->teardown_s = spec->teardown_ms / 1000.0;
    c->in_fd = in[1];
    c->out_fd = out[0];
    c->err_fd = errp[0];
    child_set_nonblock(c->in_fd);
    child_set_nonblock(c->out_fd);
    child_set_nonblock(c->err_fd);
    ev_io_init(&c->in_w, child_in_cb, c->in_fd, EV_WRITE);
    c->in_w.data = c;
    ev_io_init(&c->out_w, child_out_cb, c->out_fd, EV_READ);
    c->out_w.data = c;
    ev_io_start(loop, &c->out_w);
    ev_io_init(&c->err_w, child_err_cb, c->err_fd, EV_READ);
    c->err_w.data = c;
    ev_io_start(loop, &c->err_w);
    ev_child_init(&c->exit_w, child_exit_cb, pid, 0);
    c->exit_w.data = c;
    ev_child_start(loop, &c->exit_w);
    return c;
out_pipes:
    for (int i = 0; i < 2; i++) {
        if (in[i] >= 0)
            close(in[i]);
        if (out[i] >= 0)
            close(out[i]);
        if (errp[i] >= 0)
            close(errp[i]);
    }
    return NULL;
}

/* Queue len bytes of buf, and a newline when nl. */
static int
child_queue(struct child *c, const char *buf, size_t len, bool nl)
{
    size_t need;

    if (c->in_closed || c->close_after_flush || c->exited) {
        errno = EPIPE;
        return -1;
    }
    if (c->woff > 0 && c->wlen + len + 1 > c->wcap) {
        /* Room at the front: move what waits there, once. */
        memmove(c->wbuf, c->wbuf + c->woff, c->wlen - c->woff);
        c->wlen -= c->woff;
        c->woff = 0;
    }
    need = c->wlen + len + (nl ? 1 : 0);
    if (need > c->wcap) {
        size_t want = c->wcap ? c->wcap : 4096;

        while (want < need)
            want *= 2;
        c->wbuf = xrealloc(c->wbuf, want);
        c->wcap = want;
    }
    memcpy(c->wbuf + c->wlen, buf, len);
    if (nl)
        c->wbuf[c->wlen + len] = '\n';
    c->wlen = need;
    if (!ev_is_active(&c->in_w))
        ev_io_start(c->loop, &c->in_w);
    return 0;
}

int
child_send(struct child *c, const char *msg, size_t len)
{
    return child_queue(c, msg, len, true);
}

int
child_write(struct child *c, const char *buf, size_t len)
{
    bool was_empty = c->wlen == c->woff;

    if (child_queue(c, buf, len, false) != 0)
        return -1;
    /* Relayed bytes go at once when nothing waits before them (no loop
     * turn per message); the pipe is non-blocking and no callback runs. */
    if (was_empty)
        child_flush(c);
    return 0;
}

void
child_read_pause(struct child *c, bool paused)
{
    if (c->out_fd < 0)
        return;
    if (paused)
        ev_io_stop(c->loop, &c->out_w);
    else if (!ev_is_active(&c->out_w))
        ev_io_start(c->loop, &c->out_w);
}

void
child_close_stdin(struct child *c)
{
    if (c->in_closed)
        return;
    if (c->wlen > 0) {
        c->close_after_flush = true;
        return;
    }
    child_close_fd(c, &c->in_w, &c->in_fd);
    c->in_closed = true;
}

void
child_signal(struct child *c, int sig)
{
    if (c->exited)
        return;
    /* The group first; the pid too, in case it left the group. */
    kill(-c->pid, sig);
    kill(c->pid, sig);
}

void
child_group_keep(struct child *c)
{
    c->group_kept = true;
}

void
child_signal_group(struct child *c, int sig)
{
    /* The group id stays the leader's pid while a member lives. */
    kill(-c->pid, sig);
    if (!c->exited)
        kill(c->pid, sig);
}

bool
child_group_left(const struct child *c)
{
    return child_group_alive(c->pid);
}

int
child_pidfd_open(pid_t pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    errno = ENOSYS;
    return -1;
#endif
}

int
child_signal_other(int pidfd, pid_t pid, int sig)
{
#ifdef SYS_pidfd_send_signal
    if (pidfd >= 0)
        return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
#else
    (void)pidfd;
#endif
    return kill(pid, sig);
}

pid_t
child_pid(const struct child *c)
{
    return c->pid;
}

bool
child_exited(const struct child *c)
{
    return c->exited;
}

bool
child_stdout_closed(const struct child *c)
{
    return c->out_closed;
}

size_t
child_pending_bytes(const struct child *c)
{
    return c->wlen - c->woff;
}

void
child_free(struct child *c)
{
    if (c == NULL)
        return;
    child_close_fd(c, &c->in_w, &c->in_fd);
    child_close_fd(c, &c->out_w, &c->out_fd);
    child_close_fd(c, &c->err_w, &c->err_fd);
    if (!c->exited) {
        int status;

        ev_child_stop(c->loop, &c->exit_w);
        kill(-c->pid, SIGKILL);
        kill(c->pid, SIGKILL);
        /* SIGKILL cannot be ignored: this wait is short. */
        while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
            ;
    } else if (child_group_alive(c->pid)) {
        /* The leader is gone; what it left in its group is not kept. */
        kill(-c->pid, SIGKILL);
    }
    free(c->wbuf);
    free(c->line);
    free(c);
}

/* See child.h. A double fork: the grandchild runs argv in its own session
 * and the child exits at once, so there is nothing left to reap. */
bool
child_detached(char *const argv[])
{
    pid_t pid = fork();
    int   status = 0;

    if (pid < 0)
        return false;
    if (pid == 0) {
        pid_t g = fork();

        if (g == 0) {
            int fd = open("/dev/null", O_RDWR);

            setsid();
            if (fd >= 0) {
                dup2(fd, 0);
                dup2(fd, 1);
                dup2(fd, 2);
                if (fd > 2)
                    close(fd);
            }
            execvp(argv[0], argv);
            _exit(127);
        }
        _exit(g < 0 ? 1 : 0);
    }
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}
