/*
 * Opening a named file without waiting (file.h). O_NONBLOCK makes open(2)
 * of a FIFO with no writer return at once (and a read of one fail with
 * EAGAIN instead of waiting); fstat then says what the path is, and
 * anything but a regular file is closed again before a byte is read.
 * For a regular file O_NONBLOCK changes nothing.
 */
#define _GNU_SOURCE     /* struct ucred, SO_PEERCRED */
#include "util/file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/str.h"

int
file_open_regular(const char *path, struct stat *out, const char **why)
{
    /* The words for each type, said with the refusal. */
    static const struct {
        mode_t      type;
        const char *words;
    } refused[] = {
        { S_IFDIR, "a directory, not a regular file" },
        { S_IFIFO, "a FIFO, not a regular file" },
        { S_IFCHR, "a character device, not a regular file" },
        { S_IFBLK, "a block device, not a regular file" },
        { S_IFSOCK, "a socket, not a regular file" },
    };
    struct stat st;
    int         fd;

    *why = NULL;
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        *why = strerror(errno);
        return -1;
    }
    if (fstat(fd, &st) != 0) {
        *why = strerror(errno);
        close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        *why = "not a regular file";
        for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
            if ((st.st_mode & S_IFMT) == refused[i].type)
                *why = refused[i].words;
        }
        close(fd);
        return -1;
    }
    if (out != NULL)
        *out = st;
    return fd;
}

FILE *
file_fopen_regular(const char *path, const char **why)
{
    int   fd = file_open_regular(path, NULL, why);
    FILE *f;

    if (fd < 0)
        return NULL;
    f = fdopen(fd, "r");
    if (f == NULL) {
        *why = strerror(errno);
        close(fd);
    }
    return f;
}

int
file_socket_dir_private(const char *path, char **cause)
{
    const char *slash = strrchr(path, '/');
    char       *dir, *real;
    struct stat st;
    size_t      end;

    if (slash == NULL)
        dir = str_printf(".");
    else if (slash == path)
        dir = str_printf("/");
    else
        dir = str_ndup(path, (size_t)(slash - path));
    real = realpath(dir, NULL);
    if (real == NULL) {
        *cause = str_printf("%s: %s", dir, strerror(errno));
        free(dir);
        return -1;
    }
    free(dir);
    /* From the directory itself up to /, each judged as it is now. */
    for (end = strlen(real);;) {
        char save = real[end];

        real[end] = '\0';
        if (stat(end == 0 ? "/" : real, &st) != 0) {
            *cause = str_printf("%s: %s", end == 0 ? "/" : real,
                strerror(errno));
            free(real);
            return -1;
        }
        if (st.st_uid != getuid() && st.st_uid != 0) {
            *cause = str_printf("%s belongs to another user (uid %lu): "
                "they could put their own socket at %s; use a directory "
                "of yours", end == 0 ? "/" : real, (unsigned long)st.st_uid,
                path);
            free(real);
            return -1;
        }
        if ((st.st_mode & 0022) != 0 && (st.st_mode & S_ISVTX) == 0) {
            *cause = str_printf("%s is writable by %s and not sticky: "
                "another user could put their own socket at %s; use a "
                "directory only you may write (chmod go-w %s), such as "
                "the default one", end == 0 ? "/" : real,
                (st.st_mode & 0002) != 0 ? "others" : "its group", path,
                end == 0 ? "/" : real);
            free(real);
            return -1;
        }
        real[end] = save;
        if (end == 0)
            break;
        while (end > 0 && real[end - 1] != '/')
            end--;
        if (end > 0)
            end--;      /* the slash before the last component */
    }
    free(real);
    return 0;
}

int
file_socket_peer_ours(int fd, const char **why)
{
    struct ucred cred;
    socklen_t    len = sizeof(cred);

    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
        *why = strerror(errno);
        return -1;
    }
    if (cred.uid != getuid() && cred.uid != 0) {
        *why = "the socket is another user's (its peer is not this user "
            "or root): not used";
        return -1;
    }
    return 0;
}
