/*
 * Where a tap publishes (issue 31): a Unix stream socket, mode 0600 in a
 * 0700 directory, serving JSON Lines to any number of readers. Each
 * reader gets a snapshot line first, then every line published; a reader
 * that cannot keep up has lines dropped, and is told how many with a gap
 * line once it drains (the tap never waits for one). A reader may send
 * command lines; each gets one answer line. Readers of another user are
 * refused (SO_PEERCRED).
 */
#ifndef MCPTOP_TAP_PUBLISH_H
#define MCPTOP_TAP_PUBLISH_H

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>

struct tap_publish;

struct tap_publish_host {
    /* The first line for a new reader (caller frees), or NULL. */
    char *(*snapshot)(void *arg);
    /* One command line from a reader: the answer line (caller frees), or
     * NULL for none. */
    char *(*command)(void *arg, const char *line, size_t len);
};

/* What a reader may have queued before its lines are dropped. */
#define TAP_PUBLISH_READER_MAX (256u * 1024)

/*
 * The default socket path for a tap named name (config_tap_path, which
 * names it): the directory is made 0700 when missing and refused when it
 * is not the user's own or others may enter it. Caller frees; NULL with
 * *cause.
 */
char *tap_publish_default_path(const char *name, char **cause);
/* The directory tap_publish_default_path uses (made as it says). */
char *tap_publish_default_dir(char **cause);

/*
 * Listen at path: a live socket there (another tap answers) is an error,
 * a stale one is replaced. NULL with *cause (caller frees).
 */
struct tap_publish *tap_publish_new(struct ev_loop *loop, const char *path,
    const struct tap_publish_host *host, void *arg, char **cause);
/* Queue line (without its newline) for every reader. */
void tap_publish_line(struct tap_publish *p, const char *line);
/* Try to write what is queued now (at exit). true when nothing is left. */
bool tap_publish_flush(struct tap_publish *p);
size_t tap_publish_readers(const struct tap_publish *p);
/* Lines dropped for slow readers, all readers together. */
unsigned long tap_publish_dropped(const struct tap_publish *p);
const char *tap_publish_path(const struct tap_publish *p);
/* Close every reader, stop listening, remove the socket. NULL does
 * nothing. */
void tap_publish_free(struct tap_publish *p);

#endif
