/*
 * The stdio transport's line framing (src/engine/child.c) over arbitrary
 * bytes. The bounded line reader is static inside child.c and reads only
 * from a child's stdout, so this target reaches it the way mcptop does:
 * through child_spawn. The child is `cat /dev/fd/N`, N the read end of a
 * pipe this target writes the input into, in chunks drawn from the input's
 * hash (at most 16 per input; each chunk is let through the loop before the
 * next is written, so the reader sees the chunk boundaries). Three such
 * children run for the whole session, with max_bytes 4, 64 and 1024, and
 * a fourth, `sh -c 'cat /dev/fd/N >&2'`, for the stderr reader (the shell
 * keeps stdout open while cat writes to stderr).
 *
 * After the input comes "\n" (the last partial line ends there) and a
 * sentinel line; the loop runs until the sentinel arrives (bounded by a
 * 10 s timer). What the reader handed up is compared, in order, with a
 * model written from child.h's contract: each LF-ended line longer than
 * max_bytes (counting a CR before the LF) is one on_too_long with its
 * length; otherwise one trailing CR is dropped and a non-empty line is one
 * on_line with exactly those bytes (it holds no LF, is at most max_bytes).
 * Each line also goes through jsonrpc_parse, as server.c does. On the
 * stderr side each non-empty line is one on_stderr with its first 1 KiB.
 */
#define _GNU_SOURCE     /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "engine/child.h"
#include "core/jsonrpc.h"
#include "fuzz.h"

#define FUZZ_STDIO_MAX_INPUT (32 * 1024)
#define FUZZ_STDIO_SENTINEL  "\x01" "end" "\x01"

/* One expected report: a line (too_long false) or a too-long length. */
struct expect {
    bool        too_long;
    const char *p;
    size_t      len;
};

/* One cat child and the pipe into it. */
struct kid {
    struct child  *child;
    int            in_w;            /* write end of the pipe cat reads */
    size_t         max_bytes;
    bool           on_stderr;       /* cat writes to stderr, not stdout */
    struct expect *want;            /* this input's expected reports */
    size_t         nwant;
    size_t         got;
    bool           dead;
};

#define FUZZ_STDIO_KIDS      4
#define FUZZ_STDIO_ERR_LINE  1024   /* child.c CHILD_STDERR_LINE */

static struct ev_loop *fuzz_loop;
static struct kid      fuzz_kids[FUZZ_STDIO_KIDS];
/* max_bytes of each; the last one's cat writes to stderr. */
static const size_t    fuzz_limits[FUZZ_STDIO_KIDS] = { 4, 64, 1024, 64 };

/* child_callbacks.on_line: compare with the next expected report. */
static void
fuzz_stdio_line(void *arg, const char *line, size_t len)
{
    struct kid          *k = arg;
    const struct expect *e;
    struct jsonrpc_msg  *m;

    FUZZ_CHECK(!k->on_stderr, "a stdout line from the stderr cat");
    FUZZ_CHECK(k->got < k->nwant, "an extra line of %zu bytes", len);
    e = &k->want[k->got++];
    FUZZ_CHECK(!e->too_long, "a line of %zu bytes where a too-long of %zu "
        "was due (max %zu)", len, e->len, k->max_bytes);
    FUZZ_CHECK(len > 0 && len <= k->max_bytes, "a line of %zu bytes, max %zu",
        len, k->max_bytes);
    FUZZ_CHECK(memchr(line, '\n', len) == NULL, "an LF inside a line");
    FUZZ_CHECK(len == e->len && memcmp(line, e->p, len) == 0,
        "line %zu differs: %zu bytes, %zu expected", k->got, len, e->len);
    m = jsonrpc_parse(line, len, NULL);
    jsonrpc_free(m);
}

/* child_callbacks.on_too_long. */
static void
fuzz_stdio_too_long(void *arg, size_t len)
{
    struct kid          *k = arg;
    const struct expect *e;

    FUZZ_CHECK(!k->on_stderr, "a stdout too-long from the stderr cat");
    FUZZ_CHECK(k->got < k->nwant, "an extra too-long of %zu bytes", len);
    e = &k->want[k->got++];
    FUZZ_CHECK(e->too_long, "a too-long of %zu bytes where a line of %zu "
        "was due (max %zu)", len, e->len, k->max_bytes);
    FUZZ_CHECK(len == e->len && len > k->max_bytes,
        "too-long of %zu bytes, %zu expected (max %zu)", len, e->len,
        k->max_bytes);
}

/* child_callbacks.on_stderr: cat says nothing unless it fails. */
static void
fuzz_stdio_stderr(void *arg, const char *line, size_t len)
{
    struct kid          *k = arg;
    const struct expect *e;

    FUZZ_CHECK(k->on_stderr, "cat wrote to stderr: %.*s", (int)len, line);
    FUZZ_CHECK(k->got < k->nwant, "an extra stderr line of %zu bytes", len);
    e = &k->want[k->got++];
    FUZZ_CHECK(len > 0 && len <= FUZZ_STDIO_ERR_LINE,
        "a stderr line of %zu bytes", len);
    FUZZ_CHECK(len == e->len && memcmp(line, e->p, len) == 0,
        "stderr line %zu differs: %zu bytes, %zu expected", k->got, len,
        e->len);
}

/* child_callbacks.on_closed and on_exit: cat must stay up. */
static void
fuzz_stdio_closed(void *arg)
{
    ((struct kid *)arg)->dead = true;
}

static void
fuzz_stdio_exit(void *arg, int status)
{
    (void)status;
    ((struct kid *)arg)->dead = true;
}

static const struct child_callbacks fuzz_stdio_cb = {
    .on_line = fuzz_stdio_line,
    .on_too_long = fuzz_stdio_too_long,
    .on_stderr = fuzz_stdio_stderr,
    .on_closed = fuzz_stdio_closed,
    .on_exit = fuzz_stdio_exit,
};

/* atexit: end the cat children (their stdin closes, they are reaped). */
static void
fuzz_stdio_cleanup(void)
{
    size_t i;

    for (i = 0; i < FUZZ_STDIO_KIDS; i++) {
        close(fuzz_kids[i].in_w);
        child_free(fuzz_kids[i].child);
        fuzz_kids[i].child = NULL;
    }
}

/* Start the three cat children, once per process. */
int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    struct child_spec    decl;
    char                 path[32];
    char                 script[64];
    char                *args[2];
    char                *cause = NULL;
    int                  p[2];
    int                  err;
    size_t               i;

    (void)argc;
    (void)argv;
    fuzz_loop = ev_default_loop(0);
    for (i = 0; i < FUZZ_STDIO_KIDS; i++) {
        struct kid *k = &fuzz_kids[i];

        if (pipe2(p, O_CLOEXEC) != 0 || fcntl(p[0], F_SETFD, 0) != 0) {
            perror("fuzz_stdio: pipe");
            exit(1);
        }
        snprintf(path, sizeof path, "/dev/fd/%d", p[0]);
        memset(&decl, 0, sizeof decl);
        decl.args = args;
        decl.teardown_ms = 3000;
        k->on_stderr = i == FUZZ_STDIO_KIDS - 1;
        if (k->on_stderr) {
            snprintf(script, sizeof script, "cat %s >&2", path);
            args[0] = "-c";
            args[1] = script;
            decl.command = "sh";
            decl.nargs = 2;
        } else {
            args[0] = path;
            decl.command = "cat";
            decl.nargs = 1;
        }
        k->max_bytes = fuzz_limits[i];
        k->child = child_spawn(fuzz_loop, &decl, k->max_bytes,
            &fuzz_stdio_cb, k, &err, &cause);
        if (k->child == NULL) {
            fprintf(stderr, "fuzz_stdio: %s\n", cause);
            exit(1);
        }
        close(p[0]);
        k->in_w = p[1];
    }
    atexit(fuzz_stdio_cleanup);
    return 0;
}

/* The reports child.h promises for text (every line LF-ended). */
static size_t
fuzz_stdio_model(const char *text, size_t len, size_t max,
    struct expect *want)
{
    size_t n = 0;
    size_t i = 0;

    while (i < len) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t      l = (size_t)(nl - (text + i));

        if (l > max) {
            want[n++] = (struct expect){ true, NULL, l };
        } else {
            size_t k = l;

            if (k > 0 && text[i + k - 1] == '\r')
                k--;
            if (k > 0)
                want[n++] = (struct expect){ false, text + i, k };
        }
        i += l + 1;
    }
    return n;
}

/* The stderr lines child.h promises: each non-empty LF-ended line, cut
 * at 1 KiB, CR and all. */
static size_t
fuzz_stdio_err_model(const char *text, size_t len, struct expect *want)
{
    size_t n = 0;
    size_t i = 0;

    while (i < len) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t      l = (size_t)(nl - (text + i));

        if (l > 0)
            want[n++] = (struct expect){ false, text + i,
                l < FUZZ_STDIO_ERR_LINE ? l : FUZZ_STDIO_ERR_LINE };
        i += l + 1;
    }
    return n;
}

/* ev_timer: the sentinel did not come back in time. */
static void
fuzz_stdio_timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)revents;
    *(bool *)w->data = true;
    ev_break(loop, EVBREAK_ALL);
}

/* Write all of n bytes to fd (a pipe cat drains). */
static void
fuzz_stdio_write(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);

        if (w < 0 && errno == EINTR)
            continue;
        FUZZ_CHECK(w > 0, "write to cat: %s", strerror(errno));
        p += w;
        n -= (size_t)w;
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t    gen = fuzz_hash(FUZZ_HASH_INIT, data, size);
    struct kid *k = &fuzz_kids[fuzz_next(&gen) % FUZZ_STDIO_KIDS];
    const char  tail[] = "\n" FUZZ_STDIO_SENTINEL "\n";
    char       *text;
    size_t      len;
    size_t      off = 0;
    size_t      min_chunk;
    ev_timer    timer;
    bool        timed_out = false;

    if (size > FUZZ_STDIO_MAX_INPUT)
        size = FUZZ_STDIO_MAX_INPUT;
    FUZZ_CHECK(!k->dead, "cat (max %zu) is gone", k->max_bytes);

    /* The stream as cat will pass it on, and what it must give. */
    len = size + sizeof tail - 1;
    text = malloc(len);
    memcpy(text, data, size);
    memcpy(text + size, tail, sizeof tail - 1);
    k->want = calloc(len, sizeof *k->want);
    k->nwant = k->on_stderr ? fuzz_stdio_err_model(text, len, k->want)
        : fuzz_stdio_model(text, len, k->max_bytes, k->want);
    k->got = 0;

    ev_timer_init(&timer, fuzz_stdio_timeout_cb, 10.0, 0.0);
    timer.data = &timed_out;
    ev_timer_start(fuzz_loop, &timer);

    /* The input in chunks, each let through before the next. */
    min_chunk = size / 16 + 1;
    while (off < size) {
        size_t n = fuzz_range(&gen, min_chunk, min_chunk + 64);

        if (n > size - off)
            n = size - off;
        fuzz_stdio_write(k->in_w, text + off, n);
        off += n;
        ev_run(fuzz_loop, EVRUN_ONCE);
        FUZZ_CHECK(!timed_out && !k->dead, "no progress after a chunk");
    }
    fuzz_stdio_write(k->in_w, tail, sizeof tail - 1);
    while (k->got < k->nwant && !timed_out && !k->dead)
        ev_run(fuzz_loop, EVRUN_ONCE);
    ev_timer_stop(fuzz_loop, &timer);
    FUZZ_CHECK(!timed_out, "%zu of %zu reports after 10 s", k->got,
        k->nwant);
    FUZZ_CHECK(!k->dead, "cat ended");
    FUZZ_CHECK(k->got == k->nwant, "%zu reports, %zu expected", k->got,
        k->nwant);
    free(k->want);
    k->want = NULL;
    free(text);
    return 0;
}
