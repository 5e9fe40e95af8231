/*
 * Opening a named file without waiting (file.h). O_NONBLOCK makes open(2)
 * of a FIFO with no writer return at once (and a read of one fail with
 * EAGAIN instead of waiting); fstat then says what the path is, and
 * anything but a regular file is closed again before a byte is read.
 * For a regular file O_NONBLOCK changes nothing.
 */
#include "util/file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

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
