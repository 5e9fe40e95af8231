/*
 * /proc, read (proc(5)): the walk, the stat line, the command line and
 * uid, the links of the process tree, the rule that matches a configured
 * stdio server's command line, and the ending of a process that is not
 * ours (the signals go through child.c). See engine/proc.h.
 */
#include "engine/proc.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/child.h"
#include "util/str.h"
#include "util/xmalloc.h"

#define PROC_NONE SIZE_MAX
/* The most of a command line read (a longer one is cut). */
#define PROC_CMDLINE_MAX 4096
#define PROC_POLL_S 0.02
/* After the KILL: how long it may take to go before we give up. */
#define PROC_KILL_GRACE_S 2.0

/* Read a small file whole into buf (NUL-terminated); bytes read or -1. */
static ssize_t
proc_read(const char *path, char *buf, size_t n)
{
    int     fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t got = 0, r;

    if (fd < 0)
        return -1;
    while ((size_t)got + 1 < n) {
        r = read(fd, buf + got, n - 1 - (size_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += r;
    }
    close(fd);
    buf[got] = '\0';
    return got;
}

int
proc_parse_stat(const char *line, struct proc_stat *out)
{
    const char        *open_p, *close_p, *p;
    char              *end;
    unsigned long long f[24];
    long               pid;
    size_t             len;
    int                field;

    memset(out, 0, sizeof(*out));
    pid = strtol(line, &end, 10);
    if (end == line || pid <= 0 || pid > INT_MAX)
        return -1;
    open_p = strchr(end, '(');
    close_p = strrchr(line, ')');
    if (open_p == NULL || close_p == NULL || close_p < open_p)
        return -1;
    len = (size_t)(close_p - open_p - 1);
    str_sanitize(out->comm, sizeof(out->comm), open_p + 1, len);
    p = close_p + 1;
    while (*p == ' ')
        p++;
    if (*p == '\0' || !isalpha((unsigned char)*p))
        return -1;
    out->state = *p++;
    /* Fields 4 (ppid) to 24 (rss), numbered from 4 in f[field - 4]. */
    for (field = 4; field <= 24; field++) {
        long long v;

        while (*p == ' ')
            p++;
        if (*p == '\0')
            return -1;
        v = strtoll(p, &end, 10);
        if (end == p)
            return -1;
        f[field - 4] = (unsigned long long)v;
        p = end;
    }
    out->pid = (pid_t)pid;
    out->ppid = (pid_t)f[4 - 4];
    out->pgid = (pid_t)f[5 - 4];
    out->ticks = f[14 - 4] + f[15 - 4];
    out->start = f[22 - 4];
    out->rss_pages = (long)f[24 - 4];
    return 0;
}

static int
proc_entry_cmp(const void *a, const void *b)
{
    const struct proc_entry *x = a, *y = b;

    return x->st.pid < y->st.pid ? -1 : x->st.pid > y->st.pid;
}

static void
proc_entry_clear(struct proc_entry *e)
{
    for (size_t i = 0; i < e->argc; i++)
        free(e->argv[i]);
    free(e->argv);
    free(e->cmdline);
}

void
proc_table_done(struct proc_table *t)
{
    for (size_t i = 0; i < t->n; i++)
        proc_entry_clear(&t->v[i]);
    free(t->v);
    memset(t, 0, sizeof(*t));
}

int
proc_table_scan(struct proc_table *t, const char *root)
{
    DIR           *d;
    struct dirent *de;
    size_t         cap = 0;
    char           path[PATH_MAX], buf[1024];

    proc_table_done(t);
    t->clk_tck = sysconf(_SC_CLK_TCK);
    if (t->clk_tck <= 0)
        t->clk_tck = 100;
    t->page_kb = sysconf(_SC_PAGESIZE) / 1024;
    if (t->page_kb <= 0)
        t->page_kb = 4;
    snprintf(path, sizeof(path), "%s/uptime", root);
    if (proc_read(path, buf, sizeof(buf)) > 0)
        t->uptime_s = strtod(buf, NULL);
    d = opendir(root);
    if (d == NULL)
        return -1;
    while ((de = readdir(d)) != NULL) {
        struct proc_entry *e;

        if (!isdigit((unsigned char)de->d_name[0]))
            continue;
        if (t->n == PROC_SCAN_MAX) {
            t->truncated = true;
            break;
        }
        snprintf(path, sizeof(path), "%s/%s/stat", root, de->d_name);
        if (proc_read(path, buf, sizeof(buf)) <= 0)
            continue;       /* gone since readdir */
        if (t->n == cap) {
            cap = cap == 0 ? 512 : cap * 2;
            t->v = xrealloc(t->v, cap * sizeof(*t->v));
        }
        e = &t->v[t->n];
        memset(e, 0, sizeof(*e));
        if (proc_parse_stat(buf, &e->st) != 0)
            continue;
        e->uid = (uid_t)-1;
        t->n++;
    }
    closedir(d);
    if (t->n > 1)
        qsort(t->v, t->n, sizeof(*t->v), proc_entry_cmp);
    for (size_t i = 0; i < t->n; i++)
        t->v[i].parent = t->v[i].child = t->v[i].next = PROC_NONE;
    /* The links: children pushed in reverse pid order end up ascending. */
    for (size_t i = t->n; i-- > 0;) {
        struct proc_entry *e = &t->v[i];
        struct proc_entry *p = e->st.ppid != e->st.pid ?
            proc_table_find(t, e->st.ppid) : NULL;

        if (p == NULL)
            continue;
        e->parent = (size_t)(p - t->v);
        e->next = p->child;
        p->child = i;
    }
    return 0;
}

struct proc_entry *
proc_table_find(const struct proc_table *t, pid_t pid)
{
    size_t lo = 0, hi = t->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (t->v[mid].st.pid == pid)
            return &t->v[mid];
        if (t->v[mid].st.pid < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* The real uid from a status file's text, or -1. */
static uid_t
proc_status_uid(const char *status)
{
    const char *p = strstr(status, "\nUid:");

    if (p == NULL)
        return (uid_t)-1;
    return (uid_t)strtoul(p + 5, NULL, 10);
}

void
proc_table_details(const struct proc_table *t, const char *root,
    struct proc_entry *e)
{
    char    path[PATH_MAX], *buf;
    ssize_t n;
    size_t  k = 0;

    (void)t;
    if (e->detailed)
        return;
    e->detailed = true;
    buf = xmalloc(PROC_CMDLINE_MAX + 1);
    snprintf(path, sizeof(path), "%s/%d/status", root, (int)e->st.pid);
    if (proc_read(path, buf, PROC_CMDLINE_MAX + 1) > 0)
        e->uid = proc_status_uid(buf);
    snprintf(path, sizeof(path), "%s/%d/cmdline", root, (int)e->st.pid);
    n = proc_read(path, buf, PROC_CMDLINE_MAX + 1);
    if (n < 0)
        n = 0;
    /* argv: the NUL-separated strings (the last one may be cut). */
    for (ssize_t i = 0; i < n; i++) {
        if (buf[i] == '\0' || i == n - 1)
            e->argc++;
    }
    e->argv = xcalloc(e->argc + 1, sizeof(*e->argv));
    for (ssize_t i = 0; i < n && k < e->argc;) {
        size_t len = strnlen(buf + i, (size_t)(n - i));

        e->argv[k] = xmalloc(len + 1);
        memcpy(e->argv[k], buf + i, len);
        e->argv[k++][len] = '\0';
        i += (ssize_t)len + 1;
    }
    e->argc = k;
    /* The shown form: the words joined, control characters stripped. */
    for (ssize_t i = 0; i + 1 < n; i++) {
        if (buf[i] == '\0')
            buf[i] = ' ';
    }
    if (n > 0 && buf[n - 1] == '\0')
        n--;
    e->cmdline = xmalloc((size_t)n + 1);
    str_sanitize(e->cmdline, (size_t)n + 1, buf, (size_t)n);
    free(buf);
}

bool
proc_table_descends(const struct proc_table *t, const struct proc_entry *e,
    const struct proc_entry *anc)
{
    size_t steps = 0;

    /* The links are a forest (each entry's parent has a smaller start or
     * is pid 1...); bound the walk anyway. */
    while (e != NULL && steps++ <= t->n) {
        if (e == anc)
            return true;
        e = e->parent == PROC_NONE ? NULL : &t->v[e->parent];
    }
    return false;
}

/* --- the matching rule ---------------------------------------------------- */

static const char *
proc_base(const char *path)
{
    const char *s = strrchr(path, '/');

    return s != NULL ? s + 1 : path;
}

/* The package runners: the command, and a word that must follow it first
 * ("pnpm dlx", "pipx run"), or NULL. */
static const struct {
    const char *cmd, *sub;
} proc_runners[] = {
    { "npx", NULL }, { "bunx", NULL }, { "pnpx", NULL }, { "uvx", NULL },
    { "pipx", "run" }, { "pnpm", "dlx" }, { "bun", "x" }, { "npm", "exec" },
    { "yarn", "dlx" },
};

/* The package a runner command line names: its index in args, or -1. */
static int
proc_runner_package(const char *command, char *const *args, size_t nargs)
{
    const char *b = proc_base(command);
    size_t      i = 0;
    size_t      k;

    for (k = 0; k < sizeof(proc_runners) / sizeof(proc_runners[0]); k++) {
        if (strcmp(b, proc_runners[k].cmd) == 0)
            break;
    }
    if (k == sizeof(proc_runners) / sizeof(proc_runners[0]))
        return -1;
    if (proc_runners[k].sub != NULL) {
        if (nargs == 0 || strcmp(args[0], proc_runners[k].sub) != 0)
            return -1;
        i = 1;
    }
    for (; i < nargs; i++) {
        if (strcmp(args[i], "--") == 0)
            continue;
        if (args[i][0] == '-') {
            /* --package=x names it; -p x / --package x too. */
            if (strncmp(args[i], "--package=", 10) == 0)
                return (int)i;
            if ((strcmp(args[i], "-p") == 0 ||
                strcmp(args[i], "--package") == 0 ||
                strcmp(args[i], "--from") == 0) && i + 1 < nargs)
                return (int)i + 1;
            continue;
        }
        return (int)i;
    }
    return -1;
}

/* "@scope/name@1.2" -> "name", "pkg==1.0" -> "pkg", "--package=x" -> "x"
 * (into buf). */
static void
proc_package_name(const char *arg, char *buf, size_t n)
{
    const char *s = arg;
    size_t      len;

    if (strncmp(s, "--package=", 10) == 0)
        s += 10;
    if (strrchr(s, '/') != NULL)
        s = strrchr(s, '/') + 1;
    else if (s[0] == '@')
        s++;
    len = strcspn(s, "@=<>~![ ");
    if (len >= n)
        len = n - 1;
    memcpy(buf, s, len);
    buf[len] = '\0';
}

static bool
proc_word_char(char c)
{
    return c != '\0' && c != '/' && c != '-' && c != '_' && c != '.' &&
        c != '@' && c != ' ';
}

/* name occurs in s bounded by non-word characters (or the ends). */
static bool
proc_has_word(const char *s, const char *name)
{
    size_t      n = strlen(name);
    const char *p = s;

    if (n == 0)
        return false;
    while ((p = strstr(p, name)) != NULL) {
        bool left = p == s || !proc_word_char(p[-1]);
        bool right = !proc_word_char(p[n]);

        if (left && right)
            return true;
        p++;
    }
    return false;
}

bool
proc_argv_matches(const char *command, char *const *args, size_t nargs,
    char *const *argv, size_t argc)
{
    int    pkg;
    char   name[128];
    size_t at = 0, j;

    if (command == NULL || argc == 0)
        return false;
    pkg = proc_runner_package(command, args, nargs);
    if (pkg < 0) {
        if (strcmp(proc_base(argv[0]), proc_base(command)) != 0 ||
            argc != nargs + 1)
            return false;
        for (size_t i = 0; i < nargs; i++) {
            if (strcmp(args[i], argv[i + 1]) != 0)
                return false;
        }
        return true;
    }
    proc_package_name(args[pkg], name, sizeof(name));
    for (j = 0; j < argc; j++) {
        if (proc_has_word(argv[j], name))
            break;
    }
    if (j == argc)
        return false;
    /* The words after the package, in order, after the one that named it. */
    at = j + 1;
    for (size_t i = (size_t)pkg + 1; i < nargs; i++) {
        while (at < argc && strcmp(argv[at], args[i]) != 0)
            at++;
        if (at == argc)
            return false;
        at++;
    }
    return true;
}

/* --- ending a process that is not ours ------------------------------------ */

/* Start time, state and uid of pid, read now; false when it is gone. */
static bool
proc_read_id(pid_t pid, const char *root, unsigned long long *start,
    char *state, uid_t *uid)
{
    char             path[PATH_MAX], buf[2048];
    struct proc_stat st;

    snprintf(path, sizeof(path), "%s/%d/stat", root, (int)pid);
    if (proc_read(path, buf, sizeof(buf)) <= 0 ||
        proc_parse_stat(buf, &st) != 0)
        return false;
    snprintf(path, sizeof(path), "%s/%d/status", root, (int)pid);
    if (proc_read(path, buf, sizeof(buf)) <= 0)
        return false;
    *start = st.start;
    *state = st.state;
    *uid = proc_status_uid(buf);
    return true;
}

bool
proc_id_alive(const struct proc_id *id, const char *root)
{
    unsigned long long start;
    char               state;
    uid_t              uid;

    if (!proc_read_id(id->pid, root, &start, &state, &uid))
        return false;
    return start == id->start && uid == id->uid && state != 'Z' &&
        state != 'X';
}

struct proc_ending {
    struct ev_loop *loop;
    ev_timer        poll;
    struct proc_id  id;
    int             pidfd;
    ev_tstamp       started, kill_at;
    bool            killed, busy;
    proc_end_cb     cb;
    void           *arg;
};

static void
proc_ending_finish(struct proc_ending *e, enum proc_end_result r, int err)
{
    ev_timer_stop(e->loop, &e->poll);
    e->busy = false;
    e->cb(e->arg, &e->id, r, (ev_now(e->loop) - e->started) * 1000.0, err);
}

/* Signal e's process if it is still the same one: 0 sent, 1 gone, -1
 * refused (errno). */
static int
proc_ending_signal(struct proc_ending *e, int sig)
{
    if (!proc_id_alive(&e->id, "/proc"))
        return 1;
    if (child_signal_other(e->pidfd, e->id.pid, sig) != 0)
        return errno == ESRCH ? 1 : -1;
    return 0;
}

static void
proc_ending_poll_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct proc_ending *e = w->data;
    int                 rc;

    (void)revents;
    if (!proc_id_alive(&e->id, "/proc")) {
        proc_ending_finish(e, e->killed ? PROC_END_KILL : PROC_END_TERM, 0);
        return;
    }
    if (!e->killed && ev_now(loop) >= e->kill_at) {
        e->killed = true;
        rc = proc_ending_signal(e, SIGKILL);
        if (rc == 1) {
            proc_ending_finish(e, PROC_END_TERM, 0);
            return;
        }
        if (rc < 0) {
            proc_ending_finish(e, PROC_END_FAILED, errno);
            return;
        }
        e->kill_at = ev_now(loop) + PROC_KILL_GRACE_S;
        return;
    }
    if (e->killed && ev_now(loop) >= e->kill_at)
        proc_ending_finish(e, PROC_END_FAILED, 0);
}

struct proc_ending *
proc_end(struct ev_loop *loop, const struct proc_id *id, long deadline_ms,
    proc_end_cb cb, void *arg, int *err)
{
    struct proc_ending *e;
    int                 pidfd, rc;

    /* The pidfd first, then the check: a pid reused between the two is
     * seen by the check, and the pidfd keeps naming the one checked. */
    *err = 0;
    pidfd = child_pidfd_open(id->pid);
    if (!proc_id_alive(id, "/proc")) {
        if (pidfd >= 0)
            close(pidfd);
        return NULL;
    }
    e = xcalloc(1, sizeof(*e));
    e->loop = loop;
    e->id = *id;
    e->pidfd = pidfd;
    e->cb = cb;
    e->arg = arg;
    e->busy = true;
    e->started = ev_now(loop);
    e->kill_at = e->started + (deadline_ms > 0 ? deadline_ms : 2000) / 1000.0;
    ev_timer_init(&e->poll, proc_ending_poll_cb, PROC_POLL_S, PROC_POLL_S);
    e->poll.data = e;
    rc = proc_ending_signal(e, SIGTERM);
    if (rc != 0) {
        *err = rc < 0 ? errno : 0;
        proc_ending_free(e);
        return NULL;
    }
    ev_timer_start(loop, &e->poll);
    return e;
}

bool
proc_ending_busy(const struct proc_ending *e)
{
    return e != NULL && e->busy;
}

void
proc_ending_free(struct proc_ending *e)
{
    if (e == NULL)
        return;
    ev_timer_stop(e->loop, &e->poll);
    if (e->pidfd >= 0)
        close(e->pidfd);
    free(e);
}
