/*
 * `mcptop cancel`'s half (tap.h: tap_cancel): one connection to a tap's
 * socket, one command, its one answer, every wait bounded by poll() on a
 * monotonic deadline. A command run from the shell, not the monitor's
 * loop: it blocks, for at most timeout_ms.
 */
#include "tap/tap.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "engine/tap_command.h"
#include "util/clock.h"
#include "util/file.h"
#include "util/str.h"
#include "util/xmalloc.h"

#define TAP_CANCEL_LINE_MAX (16u * 1024 * 1024)

/* Wait for fd to be ready for events until deadline (monotonic ms). */
static bool
tap_cancel_wait(int fd, short events, int64_t deadline)
{
    struct pollfd p = { .fd = fd, .events = events };
    int64_t       left;
    int           n;

    for (;;) {
        left = deadline - clock_mono_ms();
        if (left <= 0)
            return false;
        n = poll(&p, 1, (int)left);
        if (n > 0)
            return true;
        if (n < 0 && errno != EINTR)
            return false;
    }
}

/* What was read from the tap and not yet taken. */
struct tap_cancel_buf {
    char  *buf;
    size_t len, cap;
};

/* Is the event of line one of names (NULL-ended)? */
static bool
tap_cancel_is(const cJSON *o, const char *const *names)
{
    const cJSON *ev = cJSON_GetObjectItemCaseSensitive(o, "event");

    for (size_t i = 0; cJSON_IsString(ev) && names[i] != NULL; i++) {
        if (strcmp(ev->valuestring, names[i]) == 0)
            return true;
    }
    return false;
}

/* Read lines until one is an event of names; it is returned (caller
 * frees), or NULL with *cause. */
static char *
tap_cancel_answer(int fd, int64_t deadline, struct tap_cancel_buf *b,
    const char *const *names, char **cause)
{
    char  *buf = b->buf;
    size_t len = b->len, cap = b->cap;
    char  *got = NULL;

    for (;;) {
        char   *nl;
        ssize_t n;

        while ((nl = len > 0 ? memchr(buf, '\n', len) : NULL) != NULL) {
            size_t       l = (size_t)(nl - buf);
            cJSON       *o = cJSON_ParseWithLength(buf, l);
            bool         ours = tap_cancel_is(o, names);
            char        *line = ours ? str_ndup(buf, l) : NULL;

            cJSON_Delete(o);
            memmove(buf, nl + 1, len - l - 1);
            len -= l + 1;
            if (ours) {
                got = line;
                goto out;
            }
        }
        if (!tap_cancel_wait(fd, POLLIN, deadline)) {
            *cause = str_printf("the tap did not answer in time");
            break;
        }
        if (len + 65536 > cap) {
            cap = len + 65536 * 2;
            if (cap > TAP_CANCEL_LINE_MAX) {
                *cause = str_printf("the tap sent a line past 16 MiB");
                break;
            }
            buf = xrealloc(buf, cap);
        }
        n = recv(fd, buf + len, cap - len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            *cause = str_printf("the tap closed the connection");
            break;
        }
        len += (size_t)n;
    }
out:
    b->buf = buf;
    b->len = len;
    b->cap = cap;
    return got;
}

/* Connect to the tap at path and send line (freed). The descriptor,
 * or -1 with *cause. */
static int
tap_cancel_send(const char *path, char *line, int64_t deadline, char **cause)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    const char        *why;
    size_t             len, off = 0;
    int                fd;

    if (strlen(path) >= sizeof(sa.sun_path)) {
        *cause = str_printf("%s: path too long", path);
        free(line);
        return -1;
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        *cause = str_printf("no tap at %s: %s", path, errno == ENOENT ?
            "no socket there (the tap is not running)" : strerror(errno));
        if (fd >= 0)
            close(fd);
        free(line);
        return -1;
    }
    if (file_socket_peer_ours(fd, &why) != 0) {
        *cause = str_printf("%s: %s", path, why);
        close(fd);
        free(line);
        return -1;
    }
    len = strlen(line);
    line[len++] = '\n';     /* the buffer has the terminator's room */
    while (off < len) {
        ssize_t n;

        if (!tap_cancel_wait(fd, POLLOUT, deadline)) {
            *cause = str_printf("the tap did not take the command in time");
            goto fail;
        }
        n = send(fd, line + off, len - off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            *cause = str_printf("the tap closed the connection");
            goto fail;
        }
        off += (size_t)n;
    }
    free(line);
    return fd;
fail:
    free(line);
    close(fd);
    return -1;
}

int
tap_cancel(const char *path, const char *id, const char *reason,
    long timeout_ms, char **answer, char **cause)
{
    static const char *const names[] = { "cancel_result", "error", NULL };
    int64_t                  deadline = clock_mono_ms() + timeout_ms;
    struct tap_cancel_buf    b = { 0 };
    cJSON                   *o;
    char                    *got;
    int                      fd, rc = -1;

    if (answer != NULL)
        *answer = NULL;
    fd = tap_cancel_send(path, tap_command_cancel(id, reason), deadline,
        cause);
    if (fd < 0)
        return -1;
    got = tap_cancel_answer(fd, deadline, &b, names, cause);
    if (got == NULL)
        goto out;
    o = cJSON_Parse(got);
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "ok"))) {
        rc = 0;
    } else {
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(o, "detail");

        *cause = str_sanitized(cJSON_IsString(d) ? d->valuestring :
            "the tap refused");
    }
    cJSON_Delete(o);
    if (answer != NULL)
        *answer = got;
    else
        free(got);
out:
    free(b.buf);
    close(fd);
    return rc;
}

int
tap_end(const char *path, const char *prefix, long timeout_ms,
    char **answer, char **cause)
{
    static const char *const first[] = { "end_result", "error", NULL };
    static const char *const then[] = { "session_end", NULL };
    int64_t                  deadline = clock_mono_ms() + timeout_ms;
    struct tap_cancel_buf    b = { 0 };
    cJSON                   *o;
    const cJSON             *d;
    char                    *got = NULL;
    int                      fd, rc = -1;

    *answer = NULL;
    fd = tap_cancel_send(path, tap_command_end(prefix), deadline, cause);
    if (fd < 0)
        return -1;
    got = tap_cancel_answer(fd, deadline, &b, first, cause);
    o = cJSON_Parse(got);
    if (got != NULL && !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o,
        "ok"))) {
        d = cJSON_GetObjectItemCaseSensitive(o, "detail");
        *cause = str_sanitized(cJSON_IsString(d) ? d->valuestring :
            "the tap refused");
    } else if (got != NULL) {
        /* The DELETE runs under the tap's deadline: its outcome. */
        free(got);
        got = tap_cancel_answer(fd, deadline, &b, then, cause);
        rc = got != NULL ? 0 : -1;
    }
    cJSON_Delete(o);
    if (rc == 0)
        *answer = got;
    else
        free(got);
    free(b.buf);
    close(fd);
    return rc;
}
