/*
 * The tap's relay (tap_int.h): the agent's stdin to the server's stdin,
 * the server's stdout to the agent's stdout, its stderr to the tap's
 * stderr, byte for byte, as they arrive. A copy of each line goes to the
 * ledger (tap_ledger.c). The server runs as every stdio server does
 * (child.c: its own process group, the subreaper, the MCP shutdown
 * sequence).
 *
 * What it must never do: add, drop, reorder or hold back the peers'
 * bytes, with two exceptions the operator asked for: while an
 * operator-cancelled request's late answer is watched for, the server's
 * lines are passed on whole (so that answer can be dropped; a line the
 * server's EOF cuts goes as it is), and the tap's own messages (a cancel)
 * wait for a line boundary. Nor may it
 * block: writes are queued, and a queue past TAP_HIGH_WATER pauses the
 * reading of its source (the peer then waits, as it would on a pipe).
 */
#include "tap_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/child.h"
#include "util/clock.h"
#include "util/str.h"
#include "util/xmalloc.h"

#define TAP_READ_CHUNK  65536
#define TAP_EOF_GRACE_S 0.25    /* after stdout EOF, for the exit status */

/* --- the tap's own descriptors ------------------------------------------ */

static void tap_out_cb(struct ev_loop *loop, ev_io *w, int revents);

static void
tap_out_init(struct tap *t, struct tap_out *o, int fd, bool make_nonblock)
{
    int fl = fcntl(fd, F_GETFL);

    o->fd = fd;
    o->saved_flags = -1;
    /* A pipe or socket of the agent's own is made non-blocking; a
     * terminal (shared with others) is not, and gets small writes. */
    if (fl >= 0 && make_nonblock && !isatty(fd)) {
        if (fcntl(fd, F_SETFL, fl | O_NONBLOCK) == 0)
            o->saved_flags = fl;
    }
    o->small_writes = o->saved_flags < 0;
    ev_io_init(&o->w, tap_out_cb, fd, EV_WRITE);
    o->w.data = t;
}

static void
tap_out_done(struct tap *t, struct tap_out *o)
{
    ev_io_stop(t->loop, &o->w);
    if (o->saved_flags >= 0)
        fcntl(o->fd, F_SETFL, o->saved_flags);
    free(o->buf);
    o->buf = NULL;
    o->off = o->len = o->cap = 0;
}

/* Write what is queued on o, as much as the descriptor takes now; the
 * queue is consumed from its front, never moved for each piece. */
static void
tap_out_write(struct tap *t, struct tap_out *o)
{
    ssize_t n;

    while (o->off < o->len && !o->failed) {
        size_t want = o->len - o->off;

        if (o->small_writes && want > PIPE_BUF)
            want = PIPE_BUF;
        n = write(o->fd, o->buf + o->off, want);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (n <= 0) {
            /* The agent stopped reading for good (EPIPE). */
            o->failed = true;
            o->off = o->len;
            break;
        }
        o->off += (size_t)n;
        if (o->small_writes)
            break;              /* poll again before the next piece */
    }
    if (o->off == o->len)
        o->off = o->len = 0;
    if (o->len > 0 && !ev_is_active(&o->w))
        ev_io_start(t->loop, &o->w);
    else if (o->len == 0)
        ev_io_stop(t->loop, &o->w);
}

static void
tap_out_queue(struct tap *t, struct tap_out *o, const char *p, size_t n)
{
    if (o->failed || n == 0)
        return;
    if (o->off > 0 && o->len + n > o->cap) {
        memmove(o->buf, o->buf + o->off, o->len - o->off);
        o->len -= o->off;
        o->off = 0;
    }
    if (o->len + n > o->cap) {
        size_t want = o->cap ? o->cap : 65536;

        while (want < o->len + n)
            want *= 2;
        o->buf = xrealloc(o->buf, want);
        o->cap = want;
    }
    memcpy(o->buf + o->len, p, n);
    o->len += n;
    if (!ev_is_active(&o->w))
        tap_out_write(t, o);
}

/* ev_io: fd 1 or 2 writable. */
static void
tap_out_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    struct tap     *t = w->data;
    struct tap_out *o = w == &t->out.w ? &t->out : &t->err;

    (void)loop;
    (void)revents;
    tap_out_write(t, o);
}

/* --- the copy of each line ---------------------------------------------- */

static void
tap_copy_add(struct tap_copy *c, const char *p, size_t n, size_t max)
{
    if (c->skipping)
        return;
    if (c->len + n > max) {
        c->skipping = true;
        return;
    }
    if (c->len + n > c->cap) {
        size_t want = c->cap ? c->cap : 4096;

        while (want < c->len + n)
            want *= 2;
        c->buf = xrealloc(c->buf, want);
        c->cap = want;
    }
    memcpy(c->buf + c->len, p, n);
    c->len += n;
}

static void
tap_copy_reset(struct tap_copy *c)
{
    c->len = 0;
    c->skipping = false;
    c->mid = false;
    c->held = false;
    if (c->cap > 1024 * 1024) {
        /* Do not keep a huge buffer after one big message. */
        free(c->buf);
        c->buf = NULL;
        c->cap = 0;
    }
}

/* One line of side's ended (its copy in c): the ledger reads it. false:
 * it must not be passed on. */
static bool
tap_copy_end(struct tap *t, struct tap_copy *c, enum tap_side side)
{
    size_t len = c->len;

    if (c->skipping) {
        tap_ledger_skipped(t->ledger, side);
        return true;
    }
    if (len > 0 && c->buf[len - 1] == '\r')
        len--;
    if (len == 0)
        return true;
    return tap_ledger_line(t->ledger, side, c->buf, len, tap_now(t),
        clock_wall_ms());
}

/* --- the tap's own messages --------------------------------------------- */

static void
tap_inject_push(struct tap_inject *q, const char *msg)
{
    if (q->n == q->cap) {
        q->cap = q->cap ? q->cap * 2 : 4;
        q->msgs = xrealloc(q->msgs, q->cap * sizeof(*q->msgs));
    }
    q->msgs[q->n++] = str_printf("%s\n", msg);
}

static void
tap_inject_free(struct tap_inject *q)
{
    for (size_t i = 0; i < q->n; i++)
        free(q->msgs[i]);
    free(q->msgs);
    q->msgs = NULL;
    q->n = q->cap = 0;
}

/* At a boundary of the stream to the agent: what the tap says goes. */
static void
tap_inject_agent_flush(struct tap *t)
{
    for (size_t i = 0; i < t->to_agent.n; i++) {
        tap_out_queue(t, &t->out, t->to_agent.msgs[i],
            strlen(t->to_agent.msgs[i]));
        free(t->to_agent.msgs[i]);
    }
    t->to_agent.n = 0;
}

static void
tap_inject_server_flush(struct tap *t)
{
    for (size_t i = 0; i < t->to_server.n; i++) {
        if (t->child != NULL)
            child_write(t->child, t->to_server.msgs[i],
                strlen(t->to_server.msgs[i]));
        free(t->to_server.msgs[i]);
    }
    t->to_server.n = 0;
}

void
tap_relay_to_agent(struct tap *t, const char *msg)
{
    tap_inject_push(&t->to_agent, msg);
    if (!t->from_server.mid)
        tap_inject_agent_flush(t);
}

void
tap_relay_to_server(struct tap *t, const char *msg)
{
    tap_inject_push(&t->to_server, msg);
    if (!t->from_agent.mid)
        tap_inject_server_flush(t);
}

/* --- agent to server ----------------------------------------------------- */

/* ev_io: the agent wrote to the tap's stdin. */
static void
tap_in_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    struct tap *t = w->data;
    char        buf[TAP_READ_CHUNK];
    ssize_t     n;
    size_t      max = t->decl.max_message_bytes;

    (void)revents;
    n = read(0, buf, sizeof(buf));
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        /* The agent closed its end: the shutdown sequence. */
        ev_io_stop(loop, w);
        t->in_eof = true;
        tap_relay_shutdown(t);
        return;
    }
    t->bytes[TAP_SIDE_AGENT] += (size_t)n;
    if (t->child != NULL && child_write(t->child, buf, (size_t)n) != 0) {
        /* The server's stdin is gone: the bytes have nowhere to go, as
         * they would not on a direct pipe. */
    }
    for (ssize_t i = 0, start = 0; i < n; i++) {
        char *nl = memchr(buf + i, '\n', (size_t)(n - i));

        if (nl == NULL) {
            tap_copy_add(&t->from_agent, buf + start, (size_t)(n - start),
                max);
            t->from_agent.mid = true;
            break;
        }
        i = nl - buf;
        tap_copy_add(&t->from_agent, buf + start, (size_t)(i - start), max);
        tap_copy_end(t, &t->from_agent, TAP_SIDE_AGENT);
        tap_copy_reset(&t->from_agent);
        start = i + 1;
    }
    /* The whole chunk is already the server's: what the tap says goes
     * only when it ended a line. */
    if (!t->from_agent.mid && t->to_server.n > 0)
        tap_inject_server_flush(t);
}

/* --- server to agent ----------------------------------------------------- */

/* child_callbacks.on_data: the server wrote to its stdout. */
static void
tap_data_cb(void *arg, const char *buf, size_t n)
{
    struct tap      *t = arg;
    struct tap_copy *c = &t->from_server;
    size_t           max = t->decl.max_message_bytes;

    t->bytes[TAP_SIDE_SERVER] += n;
    while (n > 0) {
        const char *nl = memchr(buf, '\n', n);
        size_t      seg = nl != NULL ? (size_t)(nl - buf) : n;

        if (!c->mid && !c->held && c->len == 0 && !c->skipping)
            c->held = tap_ledger_hold(t->ledger);
        tap_copy_add(c, buf, seg, max);
        if (c->held && c->skipping) {
            /* Too long to hold: what was held goes, and the rest as it
             * comes (a message that size is no late answer to drop). */
            c->held = false;
            tap_out_queue(t, &t->out, c->buf, c->len);
            c->mid = true;
        }
        if (!c->held) {
            tap_out_queue(t, &t->out, buf, seg + (nl != NULL ? 1 : 0));
            c->mid = nl == NULL;
        }
        if (nl == NULL)
            break;
        {
            bool held = c->held;
            bool pass = tap_copy_end(t, c, TAP_SIDE_SERVER);

            if (held && pass) {
                tap_out_queue(t, &t->out, c->buf, c->len);
                tap_out_queue(t, &t->out, "\n", 1);
            }
        }
        tap_copy_reset(c);
        if (t->to_agent.n > 0)
            tap_inject_agent_flush(t);
        buf += seg + 1;
        n -= seg + 1;
    }
}

/* The server's stdout ended (or the server is gone) inside a line held
 * for a late answer: what it wrote is still the agent's. The ledger
 * reads it as the line it would have been, and it is dropped only when
 * it is the late answer itself; anything else goes as it came, with no
 * newline added. */
static void
tap_held_flush(struct tap *t)
{
    struct tap_copy *c = &t->from_server;

    if (!c->held)
        return;
    c->held = false;
    if (c->len > 0 && tap_copy_end(t, c, TAP_SIDE_SERVER))
        tap_out_queue(t, &t->out, c->buf, c->len);
    tap_copy_reset(c);
}

/* child_callbacks.on_stderr_data: passed on as it came. */
static void
tap_stderr_cb(void *arg, const char *buf, size_t n)
{
    struct tap *t = arg;

    tap_out_queue(t, &t->err, buf, n);
}

/* The server is gone on both counts, or the grace for its exit passed. */
static void
tap_maybe_closed(struct tap *t)
{
    if (t->closed_said)
        return;
    t->closed_said = true;
    tap_held_flush(t);
    ev_timer_stop(t->loop, &t->eof_timer);
    ev_timer_stop(t->loop, &t->stage_timer);
    tap_server_closed(t);
}

/* ev_timer: stdout closed a while ago, or the exit came first and stdout
 * did not close (a grandchild keeps it open). */
static void
tap_eof_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    tap_maybe_closed(w->data);
}

/* child_callbacks.on_closed: stdout EOF. */
static void
tap_closed_cb(void *arg)
{
    struct tap *t = arg;

    t->stdout_closed = true;
    tap_held_flush(t);
    if (t->exited) {
        tap_maybe_closed(t);
        return;
    }
    ev_timer_stop(t->loop, &t->eof_timer);
    ev_timer_set(&t->eof_timer, TAP_EOF_GRACE_S, 0.);
    ev_timer_start(t->loop, &t->eof_timer);
}

/* child_callbacks.on_exit: reaped. What it wrote last may still be in
 * the pipe: read until EOF, for a bounded while. */
static void
tap_exit_cb(void *arg, int status)
{
    struct tap *t = arg;

    t->exited = true;
    t->status = status;
    if (t->stdout_closed) {
        tap_maybe_closed(t);
        return;
    }
    child_read_pause(t->child, false);
    ev_timer_stop(t->loop, &t->eof_timer);
    ev_timer_set(&t->eof_timer, TAP_EOF_GRACE_S, 0.);
    ev_timer_start(t->loop, &t->eof_timer);
}

static const struct child_callbacks tap_child_cb = {
    .on_data = tap_data_cb,
    .on_stderr_data = tap_stderr_cb,
    .on_closed = tap_closed_cb,
    .on_exit = tap_exit_cb,
};

/* --- flow control -------------------------------------------------------- */

/* ev_prepare: before the loop waits, pause or resume each source by how
 * much its destination has queued. */
static void
tap_flow_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
    struct tap *t = w->data;

    (void)revents;
    if (t->child != NULL && !t->exited)
        child_read_pause(t->child, t->out.len - t->out.off > TAP_HIGH_WATER);
    if (t->child != NULL && !t->in_eof) {
        bool full = child_pending_bytes(t->child) > TAP_HIGH_WATER;

        if (full && ev_is_active(&t->in_w))
            ev_io_stop(loop, &t->in_w);
        else if (!full && !ev_is_active(&t->in_w))
            ev_io_start(loop, &t->in_w);
    }
}

/* --- the shutdown sequence ----------------------------------------------- */

/* ev_timer: the next step: TERM to the group, then KILL. */
static void
tap_stage_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct tap *t = w->data;

    (void)revents;
    if (t->child == NULL || t->exited)
        return;
    t->stage++;
    if (t->stage == 2) {
        child_signal(t->child, SIGTERM);
        ev_timer_set(w, t->opt.teardown_ms / 3000.0, 0.);
        ev_timer_start(loop, w);
    } else {
        child_signal(t->child, SIGKILL);
    }
}

void
tap_relay_shutdown(struct tap *t)
{
    t->shutdown = true;
    if (t->child == NULL || t->exited || t->stage > 0)
        return;
    t->stage = 1;
    child_close_stdin(t->child);
    ev_timer_set(&t->stage_timer, t->opt.teardown_ms / 3000.0, 0.);
    ev_timer_start(t->loop, &t->stage_timer);
}

/* --- start and stop ------------------------------------------------------ */

int
tap_relay_start(struct tap *t, char **cause)
{
    struct child_spec spec = {
        .command = t->decl.command,
        .args = t->decl.args,
        .nargs = t->decl.nargs,
        .teardown_ms = t->decl.teardown_ms > 0 ? t->decl.teardown_ms :
            CONFIG_DEFAULT_TEARDOWN_MS,
    };
    int               err = 0;
    int               fl;

    t->child = child_spawn(t->loop, &spec, t->decl.max_message_bytes,
        &tap_child_cb, t, &err, cause);
    if (t->child == NULL)
        return -1;
    t->in_saved_flags = -1;
    fl = fcntl(0, F_GETFL);
    if (fl >= 0 && !isatty(0) && fcntl(0, F_SETFL, fl | O_NONBLOCK) == 0)
        t->in_saved_flags = fl;
    ev_io_init(&t->in_w, tap_in_cb, 0, EV_READ);
    t->in_w.data = t;
    ev_io_start(t->loop, &t->in_w);
    tap_out_init(t, &t->out, 1, true);
    tap_out_init(t, &t->err, 2, false);
    ev_prepare_init(&t->flow, tap_flow_cb);
    t->flow.data = t;
    ev_prepare_start(t->loop, &t->flow);
    ev_timer_init(&t->eof_timer, tap_eof_cb, TAP_EOF_GRACE_S, 0.);
    t->eof_timer.data = t;
    ev_timer_init(&t->stage_timer, tap_stage_cb, 0., 0.);
    t->stage_timer.data = t;
    return 0;
}

bool
tap_relay_drained(const struct tap *t)
{
    return (t->out.len == 0 || t->out.failed) &&
        (t->err.len == 0 || t->err.failed);
}

void
tap_relay_flush(struct tap *t)
{
    tap_out_write(t, &t->out);
    tap_out_write(t, &t->err);
}

void
tap_relay_stop(struct tap *t)
{
    ev_io_stop(t->loop, &t->in_w);
    ev_prepare_stop(t->loop, &t->flow);
    ev_timer_stop(t->loop, &t->eof_timer);
    ev_timer_stop(t->loop, &t->stage_timer);
    if (t->in_saved_flags >= 0)
        fcntl(0, F_SETFL, t->in_saved_flags);
    tap_out_done(t, &t->out);
    tap_out_done(t, &t->err);
    child_free(t->child);
    t->child = NULL;
    tap_inject_free(&t->to_agent);
    tap_inject_free(&t->to_server);
    free(t->from_agent.buf);
    free(t->from_server.buf);
}
