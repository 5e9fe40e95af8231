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

/*
 * Whether a Unix socket at path is out of other users' reach: the
 * directory it lies in and every one above it belong to this user or
 * root and no one else may write into them (no group or other write bit,
 * unless the directory is sticky, as /tmp is: there no one can remove or
 * rename another's entry). Otherwise another user could put their own
 * socket at path for our readers to talk to. A relative path is judged
 * from the working directory. 0, or -1 with *cause (caller frees) naming
 * the directory and the fix.
 */
int file_socket_dir_private(const char *path, char **cause);

/*
 * Whether the peer of the connected Unix socket fd is this user (or
 * root): SO_PEERCRED. 0, or -1 with *why set to a static string.
 */
int file_socket_peer_ours(int fd, const char **why);

#endif
