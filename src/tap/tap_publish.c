/*
 * A tap's Unix socket (tap_publish.h): a listening SOCK_STREAM socket on
 * the loop, one queue a reader, bounded. Writes are non-blocking and a
 * reader that lets its queue fill loses lines, counted and said with a
 * gap line; nothing here ever waits for a reader. Commands are read a
 * line at a time, bounded too (a line past 64 KiB closes the reader).
 *
 * What it must never do: block the loop, keep more than
 * TAP_PUBLISH_READER_MAX for a reader, or leave the socket behind.
 */
#define _GNU_SOURCE     /* accept4 */
#include "tap_publish.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "engine/config.h"
#include "util/file.h"
#include "util/clock.h"
#include "util/str.h"
#include "util/xmalloc.h"

#define TAP_PUBLISH_CMD_MAX  (64u * 1024)
#define TAP_PUBLISH_READER_HARD (32u * 1024 * 1024)   /* snapshots and
                                                   answers included */

struct tap_reader {
    struct tap_publish *p;
    struct tap_reader  *next;
    int                 fd;
    ev_io               rw, ww;
    char               *out;
    size_t              olen, ocap;
    unsigned long       dropped;    /* since the last gap line */
    char               *in;
    size_t              ilen;
};

struct tap_publish {
    struct ev_loop                *loop;
    const struct tap_publish_host *host;
    void                          *arg;
    char                          *path;
    int                            fd;
    ev_io                          lw;
    struct tap_reader             *readers;
    size_t                         nreaders;
    unsigned long                  dropped;
};

/* --- the directory ------------------------------------------------------ */

/* dir exists (made 0700 when not), is a directory of ours that no one
 * else may enter. 0, or -1 with *cause. */
static int
tap_publish_dir_ok(const char *dir, char **cause)
{
    struct stat st;

    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        *cause = str_printf("cannot make %s: %s", dir, strerror(errno));
        return -1;
    }
    if (lstat(dir, &st) != 0) {
        *cause = str_printf("%s: %s", dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
        (st.st_mode & 0077) != 0) {
        *cause = str_printf("%s is not a directory of this user's that "
            "only it may enter (mode 0700): not used", dir);
        return -1;
    }
    return 0;
}

char *
tap_publish_default_dir(char **cause)
{
    char *dir = config_tap_dir();

    if (tap_publish_dir_ok(dir, cause) != 0) {
        free(dir);
        return NULL;
    }
    return dir;
}

char *
tap_publish_default_path(const char *name, char **cause)
{
    char *dir = tap_publish_default_dir(cause);

    if (dir == NULL)
        return NULL;
    free(dir);
    return config_tap_path(name);
}

/* --- readers ------------------------------------------------------------ */

static void
tap_reader_close(struct tap_reader *r)
{
    struct tap_publish *p = r->p;

    for (struct tap_reader **pp = &p->readers; *pp != NULL;
        pp = &(*pp)->next) {
        if (*pp == r) {
            *pp = r->next;
            break;
        }
    }
    p->nreaders--;
    ev_io_stop(p->loop, &r->rw);
    ev_io_stop(p->loop, &r->ww);
    close(r->fd);
    free(r->out);
    free(r->in);
    free(r);
}

/* Write what is queued; -1 when the reader is gone (closed). */
static int
tap_reader_write(struct tap_reader *r)
{
    size_t  off = 0;
    ssize_t n;

    while (off < r->olen) {
        n = send(r->fd, r->out + off, r->olen - off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (n <= 0) {
            tap_reader_close(r);
            return -1;
        }
        off += (size_t)n;
    }
    if (off > 0) {
        memmove(r->out, r->out + off, r->olen - off);
        r->olen -= off;
    }
    if (r->olen > 0 && !ev_is_active(&r->ww))
        ev_io_start(r->p->loop, &r->ww);
    else if (r->olen == 0)
        ev_io_stop(r->p->loop, &r->ww);
    return 0;
}

/* Queue text and a newline when it fits; false when it does not. A
 * snapshot or a command's answer is queued whatever is queued before it
 * (force): it is one line, asked for, and a reader that lost lines asks
 * for a snapshot to catch up, which must not be lost in turn. */
static bool
tap_reader_queue(struct tap_reader *r, const char *text, size_t len,
    bool force)
{
    if (!force && r->olen + len + 1 > TAP_PUBLISH_READER_MAX)
        return false;
    if (r->olen + len + 1 > r->ocap) {
        size_t want = r->ocap ? r->ocap : 4096;

        while (want < r->olen + len + 1)
            want *= 2;
        r->out = xrealloc(r->out, want);
        r->ocap = want;
    }
    memcpy(r->out + r->olen, text, len);
    r->out[r->olen + len] = '\n';
    r->olen += len + 1;
    return true;
}

/* The gap line, when lines were dropped and it fits now. */
static void
tap_reader_gap(struct tap_reader *r)
{
    char ts[40], line[160];
    int  n;

    if (r->dropped == 0)
        return;
    clock_format_iso(clock_wall_ms(), ts, sizeof(ts));
    n = snprintf(line, sizeof(line), "{\"ts\":\"%s\",\"event\":\"gap\","
        "\"dropped\":%lu}", ts, r->dropped);
    if (tap_reader_queue(r, line, (size_t)n, false))
        r->dropped = 0;
}

/* Queue one line for r: said after a gap line when lines were lost.
 * -1 when r was closed. */
static int
tap_reader_line(struct tap_reader *r, const char *line, size_t len,
    bool force)
{
    tap_reader_gap(r);
    if (force) {
        if (r->olen + len + 1 > TAP_PUBLISH_READER_HARD) {
            /* It asks and does not read: it goes. */
            tap_reader_close(r);
            return -1;
        }
        tap_reader_queue(r, line, len, true);
        return tap_reader_write(r);
    }
    if (r->dropped > 0 || !tap_reader_queue(r, line, len, false)) {
        r->dropped++;
        r->p->dropped++;
        return 0;
    }
    return tap_reader_write(r);
}

/* ev_io: the reader can take more. */
static void
tap_reader_ww_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    struct tap_reader *r = w->data;

    (void)loop;
    (void)revents;
    if (tap_reader_write(r) == 0 && r->olen == 0 && r->dropped > 0) {
        tap_reader_gap(r);
        tap_reader_write(r);
    }
}

/* One command line from r. -1 when r was closed. */
static int
tap_reader_command(struct tap_reader *r, const char *line, size_t len)
{
    char *answer;
    int   rc = 0;

    if (len == 0 || r->p->host->command == NULL)
        return 0;
    answer = r->p->host->command(r->p->arg, line, len);
    if (answer != NULL)
        rc = tap_reader_line(r, answer, strlen(answer), true);
    free(answer);
    return rc;
}

/* ev_io: a reader sent something (commands), or closed. */
static void
tap_reader_rw_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    struct tap_reader *r = w->data;
    char               buf[4096];
    ssize_t            n;

    (void)loop;
    (void)revents;
    n = recv(r->fd, buf, sizeof(buf), 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        tap_reader_close(r);
        return;
    }
    for (ssize_t i = 0; i < n; i++) {
        if (buf[i] == '\n') {
            size_t len = r->ilen;

            r->ilen = 0;
            if (tap_reader_command(r, r->in != NULL ? r->in : "", len) != 0)
                return;
            continue;
        }
        if (r->ilen + 1 >= TAP_PUBLISH_CMD_MAX) {
            tap_reader_close(r);
            return;
        }
        if (r->in == NULL)
            r->in = xmalloc(TAP_PUBLISH_CMD_MAX);
        r->in[r->ilen++] = buf[i];
        r->in[r->ilen] = '\0';
    }
}

/* ev_io: a reader connects. */
static void
tap_publish_accept_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    struct tap_publish *p = w->data;
    struct tap_reader  *r;
    const char         *why;
    char               *snap;
    int                 fd;

    (void)revents;
    fd = accept4(p->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0)
        return;
    if (file_socket_peer_ours(fd, &why) != 0) {
        close(fd);
        return;
    }
    r = xcalloc(1, sizeof(*r));
    r->p = p;
    r->fd = fd;
    ev_io_init(&r->rw, tap_reader_rw_cb, fd, EV_READ);
    r->rw.data = r;
    ev_io_init(&r->ww, tap_reader_ww_cb, fd, EV_WRITE);
    r->ww.data = r;
    ev_io_start(loop, &r->rw);
    r->next = p->readers;
    p->readers = r;
    p->nreaders++;
    snap = p->host->snapshot != NULL ? p->host->snapshot(p->arg) : NULL;
    if (snap != NULL)
        tap_reader_line(r, snap, strlen(snap), true);
    free(snap);
}

/* --- the socket --------------------------------------------------------- */

struct tap_publish *
tap_publish_new(struct ev_loop *loop, const char *path,
    const struct tap_publish_host *host, void *arg, char **cause)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    struct tap_publish *p;
    mode_t             old;
    int                fd, probe;

    if (strlen(path) >= sizeof(sa.sun_path)) {
        *cause = str_printf("socket path too long (%zu bytes, at most %zu)",
            strlen(path), sizeof(sa.sun_path) - 1);
        return NULL;
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    /* Where another user could swap in their own socket, none. */
    if (file_socket_dir_private(path, cause) != 0)
        return NULL;
    /* A socket already there: live (another tap) or stale (replaced). */
    probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (probe >= 0 && connect(probe, (struct sockaddr *)&sa,
        sizeof(sa)) == 0) {
        close(probe);
        *cause = str_printf("%s: another tap is listening there", path);
        return NULL;
    }
    if (probe >= 0)
        close(probe);
    {
        struct stat st;

        if (lstat(path, &st) == 0) {
            if (!S_ISSOCK(st.st_mode)) {
                *cause = str_printf("%s exists and is not a socket", path);
                return NULL;
            }
            unlink(path);
        }
    }
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        *cause = str_printf("socket: %s", strerror(errno));
        return NULL;
    }
    old = umask(0177);
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        umask(old);
        *cause = str_printf("%s: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    umask(old);
    chmod(path, 0600);
    if (listen(fd, 16) != 0) {
        *cause = str_printf("%s: listen: %s", path, strerror(errno));
        close(fd);
        unlink(path);
        return NULL;
    }
    p = xcalloc(1, sizeof(*p));
    p->loop = loop;
    p->host = host;
    p->arg = arg;
    p->path = xstrdup(path);
    p->fd = fd;
    ev_io_init(&p->lw, tap_publish_accept_cb, fd, EV_READ);
    p->lw.data = p;
    ev_io_start(loop, &p->lw);
    return p;
}

void
tap_publish_line(struct tap_publish *p, const char *line)
{
    size_t             len = strlen(line);
    struct tap_reader *r, *next;

    for (r = p->readers; r != NULL; r = next) {
        next = r->next;
        tap_reader_line(r, line, len, false);
    }
}

bool
tap_publish_flush(struct tap_publish *p)
{
    struct tap_reader *r, *next;
    bool               empty = true;

    for (r = p->readers; r != NULL; r = next) {
        next = r->next;
        if (tap_reader_write(r) == 0 && r->olen > 0)
            empty = false;
    }
    return empty;
}

size_t
tap_publish_readers(const struct tap_publish *p)
{
    return p->nreaders;
}

unsigned long
tap_publish_dropped(const struct tap_publish *p)
{
    return p->dropped;
}

const char *
tap_publish_path(const struct tap_publish *p)
{
    return p->path;
}

void
tap_publish_free(struct tap_publish *p)
{
    if (p == NULL)
        return;
    while (p->readers != NULL)
        tap_reader_close(p->readers);
    ev_io_stop(p->loop, &p->lw);
    close(p->fd);
    unlink(p->path);
    free(p->path);
    free(p);
}
