/*
 * Opening a file that a config or an argument named: never a wait. A
 * FIFO with no writer, a terminal, a device would block open(2) or the
 * reads after it; such a path is opened O_NONBLOCK, looked at with
 * fstat, and refused unless it is a regular file.
 */
#ifndef MCPTOP_UTIL_FILE_H
#define MCPTOP_UTIL_FILE_H

#include <stdio.h>
#include <sys/stat.h>

/*
 * Open path for reading, without blocking, and only if it is a regular
 * file; *st (may be NULL) gets its fstat. The descriptor (O_CLOEXEC), or
 * -1 with *why set to a static string: strerror(errno), or what the path
 * is instead ("a FIFO, not a regular file"). The caller names the path
 * in its message.
 */
int file_open_regular(const char *path, struct stat *st, const char **why);
/* The same as a stdio stream ("r"). NULL with *why. */
FILE *file_fopen_regular(const char *path, const char **why);

#endif
