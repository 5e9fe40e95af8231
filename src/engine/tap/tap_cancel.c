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

#include "tap/tap_source.h"
#include "util/clock.h"
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

/* Read lines until one is the cancel's answer; it is returned (caller
 * frees), or NULL with *cause. */
static char *
tap_cancel_answer(int fd, int64_t deadline, char **cause)
{
    char  *buf = NULL;
    size_t len = 0, cap = 0;

    for (;;) {
        char   *nl;
        ssize_t n;

        while ((nl = len > 0 ? memchr(buf, '\n', len) : NULL) != NULL) {
            size_t       l = (size_t)(nl - buf);
            cJSON       *o = cJSON_ParseWithLength(buf, l);
            const cJSON *ev = cJSON_GetObjectItemCaseSensitive(o, "event");
            bool         ours = cJSON_IsString(ev) &&
                (strcmp(ev->valuestring, "cancel_result") == 0 ||
                strcmp(ev->valuestring, "error") == 0);
            char        *line = ours ? str_ndup(buf, l) : NULL;

            cJSON_Delete(o);
            memmove(buf, nl + 1, len - l - 1);
            len -= l + 1;
            if (ours) {
                free(buf);
                return line;
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
    free(buf);
    return NULL;
}

/* See tap_source.h. */
char *
tap_cancel_command(const char *id, const char *reason)
{
    cJSON *cmd = cJSON_CreateObject();
    cJSON *v = cJSON_Parse(id);
    char  *line;

    cJSON_AddStringToObject(cmd, "cmd", "cancel");
    if (v == NULL || !(cJSON_IsNumber(v) || cJSON_IsString(v))) {
        cJSON_Delete(v);
        v = cJSON_CreateString(id);
    }
    cJSON_AddItemToObject(cmd, "id", v);
    if (reason != NULL)
        cJSON_AddStringToObject(cmd, "reason", reason);
    line = cJSON_PrintUnformatted(cmd);
    cJSON_Delete(cmd);
    return line;
}

int
tap_cancel(const char *path, const char *id, const char *reason,
    long timeout_ms, char **answer, char **cause)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    int64_t            deadline = clock_mono_ms() + timeout_ms;
    cJSON             *o;
    char              *line, *got;
    size_t             len, off = 0;
    int                fd, rc = -1;

    if (answer != NULL)
        *answer = NULL;
    if (strlen(path) >= sizeof(sa.sun_path)) {
        *cause = str_printf("%s: path too long", path);
        return -1;
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        *cause = str_printf("no tap at %s: %s", path, errno == ENOENT ?
            "no socket there (the tap is not running)" : strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    line = tap_cancel_command(id, reason);
    len = strlen(line);
    line[len++] = '\n';     /* the buffer has the terminator's room */
    while (off < len) {
        ssize_t n;

        if (!tap_cancel_wait(fd, POLLOUT, deadline)) {
            *cause = str_printf("the tap did not take the command in time");
            goto out;
        }
        n = send(fd, line + off, len - off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            *cause = str_printf("the tap closed the connection");
            goto out;
        }
        off += (size_t)n;
    }
    got = tap_cancel_answer(fd, deadline, cause);
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
    free(line);
    close(fd);
    return rc;
}
