/*
 * The stdio transport (MCP basic/transports, stdio): a child process per
 * dial (child.c starts it in its own process group), newline-delimited
 * JSON-RPC on its stdin and stdout, stderr kept in a bounded ring, its exit
 * watched. The child is the session: ending it is the MCP shutdown
 * sequence (close stdin; SIGTERM; SIGKILL), and a child that exits has
 * failed every request still waiting.
 *
 * Process control goes through child.c only. What must never happen here:
 * a finished exchange reported from inside the caller that sent it (a
 * message to a dead child, or a notification, finishes on the next loop
 * turn).
 */
#include "transport/transport.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "transport/ending_run.h"
#include "engine/child.h"
#include "engine/proc.h"
#include "core/jsonrpc.h"
#include "util/str.h"
#include "util/xmalloc.h"

#define STDIO_STDERR_LINES 200
#define STDIO_EOF_GRACE_S  0.25    /* after stdout EOF, wait this long for
                                       the exit status */
#define STDIO_GROUP_POLL_S 0.05    /* an ending's group, after its leader
                                       was reaped, is looked at this often */
#define STDIO_GROUP_MAX    16      /* members of it kept by name */

struct stdio_transport;

/* A member of the child's process group that outlived it in an ending. */
struct stdio_member {
    struct proc_id id;
    char           comm[32];
    bool           gone;
};

struct stdio_req {
    struct stdio_transport *t;
    struct stdio_req      *next;
    void                  *owner;
    int64_t                id;
    unsigned               flags;
    const char            *method;
    bool                   dead;        /* sent to a child already gone */
    bool                   doomed;      /* to be failed by fail_all */
    ev_timer               later;       /* finish on the next turn */
};

/* The interface's opaque request is this transport's own. */
static struct stdio_req *
stdio_req_of(struct transport_req *tr)
{
    return (struct stdio_req *)tr;
}

struct stdio_transport {
    struct transport       base;
    struct child          *child;
    bool                   gone;        /* exited, or stdout shut */
    bool                   abandoned;   /* killed by mcptop: a failed dial's
                                           cleanup, not a session */
    bool                   has_exit;
    int                    exit_status; /* waitpid status */
    ev_timer               eof_timer;
    ev_timer               reap_kick;
    char                 **stderr_ring; /* on the first line */
    size_t                 err_start, err_len;
    unsigned long          stray_lines;
    struct stdio_req      *reqs;
    /* the ending of the current child */
    struct ending_run     *run;
    int                    stage;       /* 0 stdin closed, 1 TERM, 2 KILL */
    ev_timer               stage_timer;
    /* ...and, once the child (a wrapper) was reaped, what of its process
     * group lives on: the ending judges every member */
    bool                   group_wait;
    int                    lead_step;   /* the step the child needed */
    struct stdio_member    members[STDIO_GROUP_MAX];
    size_t                 nmembers;    /* kept by name */
    unsigned               ngroup;      /* found, all */
    int                    last_step;   /* the strongest a member needed */
    double                 last_ms;     /* ...when it was seen gone */
    size_t                 last;        /* ...which (members[]) */
    ev_timer               group_timer;
};

/* The interface's transport is this one (base is its first member). Takes
 * a const transport too, for the const ops, which keep the result const. */
static inline struct stdio_transport *
stdio_of(const struct transport *t)
{
    return (struct stdio_transport *)t;
}

static void
stdio_stderr_push(struct stdio_transport *t, const char *prefix,
    const char *line, size_t len)
{
    char   clean[1100];
    char **slot;

    str_sanitize(clean, sizeof(clean), line, len);
    if (t->err_len < STDIO_STDERR_LINES) {
        if (t->stderr_ring == NULL)
            t->stderr_ring = xcalloc(STDIO_STDERR_LINES,
                sizeof(*t->stderr_ring));
        slot = &t->stderr_ring[(t->err_start + t->err_len) %
            STDIO_STDERR_LINES];
        t->err_len++;
    } else {
        slot = &t->stderr_ring[t->err_start];
        t->err_start = (t->err_start + 1) % STDIO_STDERR_LINES;
    }
    free(*slot);
    *slot = str_printf("%s%s", prefix, clean);
}

static void
stdio_req_free(struct stdio_transport *t, struct stdio_req *r)
{
    for (struct stdio_req **pp = &t->reqs; *pp != NULL;
        pp = &(*pp)->next) {
        if (*pp == r) {
            *pp = r->next;
            break;
        }
    }
    ev_timer_stop(t->base.env->loop, &r->later);
    free(r);
}

/* Why the child is gone, for a failure's detail. */
static void
stdio_child_detail(const struct stdio_transport *t, char *buf, size_t n)
{
    if (t->has_exit && WIFEXITED(t->exit_status))
        snprintf(buf, n, "the child exited with status %d",
            WEXITSTATUS(t->exit_status));
    else if (t->has_exit && WIFSIGNALED(t->exit_status))
        snprintf(buf, n, "the child was killed by signal %d",
            WTERMSIG(t->exit_status));
    else if (t->child != NULL && child_stdout_closed(t->child))
        snprintf(buf, n, "the child closed its stdout");
    else
        snprintf(buf, n, "the child is gone");
}

/* Hand up a request's end; r is freed first. */
static void
stdio_done(struct stdio_transport *t, struct stdio_req *r,
    struct transport_result *out)
{
    struct transport_event e = { .type = TRANSPORT_DONE, .owner = r->owner,
                                 .result = out };

    stdio_req_free(t, r);
    transport_emit(&t->base, &e);
    jsonrpc_free(out->answer);
}

/* Fail one request with the evidence of a closed transport. */
static void
stdio_fail_closed(struct stdio_transport *t, struct stdio_req *r,
    bool known_dead)
{
    struct transport_result out = { .retry_after_s = -1, .failed = true };

    stdio_child_detail(t, out.f.detail, sizeof(out.f.detail));
    out.f.evd.child_closed = true;
    out.f.evd.peer_known_dead = known_dead;
    stdio_done(t, r, &out);
}

/* Fail every request in flight now: the child went away under them. */
static void
stdio_fail_all(struct stdio_transport *t)
{
    struct stdio_req *r;

    /* Only those in flight now: handling one may start others (a dial to
     * a fresh child), which are not lost. */
    for (r = t->reqs; r != NULL; r = r->next)
        r->doomed = r->id >= 0;
    for (;;) {
        for (r = t->reqs; r != NULL; r = r->next) {
            if (r->doomed)
                break;
        }
        if (r == NULL)
            break;
        r->doomed = false;
        stdio_fail_closed(t, r, false);
    }
}

/* ev_timer (0 s): a notification was written, or a message could not be:
 * finish it outside the caller. */
static void
stdio_later_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct stdio_req       *r = w->data;
    struct stdio_transport *t = r->t;
    struct transport_result out = { .retry_after_s = -1, .accepted = true };

    (void)loop;
    (void)revents;
    if (r->dead) {
        /* A message to a child already known dead: nothing was sent. */
        stdio_fail_closed(t, r, true);
        return;
    }
    out.f.evd.http_status = 202;
    stdio_done(t, r, &out);
}

static struct transport_req *
stdio_send(struct transport *base, const struct transport_msg *m,
    void *owner, char **cause)
{
    struct stdio_transport *t = stdio_of(base);
    struct stdio_req       *r = xcalloc(1, sizeof(*r));

    (void)cause;
    r->t = t;
    r->owner = owner;
    r->id = m->id;
    r->flags = m->flags;
    r->method = m->method;
    ev_timer_init(&r->later, stdio_later_cb, 0., 0.);
    r->later.data = r;
    r->next = t->reqs;
    t->reqs = r;
    r->dead = t->child == NULL || t->gone ||
        child_send(t->child, m->body, m->len) != 0;
    if (r->dead || r->id < 0) {
        ev_timer_start(base->env->loop, &r->later);
        return (struct transport_req *)r;
    }
    transport_log(base, "stdin %s id=%lld", m->method, (long long)m->id);
    return (struct transport_req *)r;
}

static void
stdio_cancel(struct transport *base, struct transport_req *tr,
    struct failure_evidence *evd_out)
{
    struct stdio_req *r = stdio_req_of(tr);
    (void)evd_out;
    stdio_req_free(stdio_of(base), r);
}

static void
stdio_peek(struct transport *base, struct transport_req *tr,
    struct failure_evidence *evd_out)
{
    struct stdio_req *r = stdio_req_of(tr);
    (void)base;
    (void)r;
    (void)evd_out;
}

/* --- the child's callbacks --------------------------------------------- */

/* child_callbacks.on_line: one message, or a stray line. */
static void
stdio_line_cb(void *arg, const char *line, size_t len)
{
    struct stdio_transport *t = arg;
    struct jsonrpc_msg     *m = jsonrpc_parse(line, len, NULL);
    struct stdio_req       *r;

    if (m == NULL) {
        /* A server that logs to stdout: counted and shown, not fatal. */
        t->stray_lines++;
        stdio_stderr_push(t, "stdout: ", line, len);
        return;
    }
    if (jsonrpc_kind(m) == JSONRPC_RESULT ||
        jsonrpc_kind(m) == JSONRPC_ERROR) {
        for (r = t->reqs; r != NULL; r = r->next) {
            if (r->id >= 0 && jsonrpc_id_is(m, r->id))
                break;
        }
        if (r != NULL) {
            struct transport_result out = { .retry_after_s = -1 };

            out.answer = m;
            out.f.evd.http_status = 200;
            out.f.evd.content_json = true;
            stdio_done(t, r, &out);
            return;
        }
        transport_log(&t->base, "stdout: a response to no request in "
            "flight");
    }
    {
        struct transport_event e = { .type = TRANSPORT_MESSAGE, .msg = m };

        transport_emit(&t->base, &e);
    }
    jsonrpc_free(m);
}

/* child_callbacks.on_too_long: the oldest request fails; reading goes on
 * at the next line. */
static void
stdio_too_long_cb(void *arg, size_t len)
{
    static const char       note[] = "(a line past the message size limit "
        "was dropped)";
    struct stdio_transport          *t = arg;
    struct stdio_req   *r, *oldest = NULL;
    struct transport_result out = { .retry_after_s = -1, .failed = true };

    (void)len;
    for (r = t->reqs; r != NULL; r = r->next) {
        if (r->id >= 0 && (oldest == NULL || r->id < oldest->id))
            oldest = r;
    }
    stdio_stderr_push(t, "stdout: ", note, sizeof(note) - 1);
    if (oldest == NULL)
        return;
    out.f.evd.too_large = true;
    out.f.evd.http_status = 200;
    out.f.evd.content_json = true;
    snprintf(out.f.detail, sizeof(out.f.detail), "answer exceeds the "
        "message size limit (%zu bytes)",
        t->base.env->decl->max_message_bytes);
    stdio_done(t, oldest, &out);
}

static void
stdio_stderr_cb(void *arg, const char *line, size_t len)
{
    stdio_stderr_push(arg, "", line, len);
}

/* ev_timer: stdout closed a while ago and the child did not exit. */
static void
stdio_eof_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    stdio_fail_all(w->data);
}

/* child_callbacks.on_closed: stdout EOF. Wait briefly for the exit status,
 * so the failure can name it. */
static void
stdio_closed_cb(void *arg)
{
    struct stdio_transport *t = arg;

    t->gone = true;
    if (t->child != NULL && child_exited(t->child)) {
        stdio_fail_all(t);
        return;
    }
    ev_timer_stop(t->base.env->loop, &t->eof_timer);
    ev_timer_set(&t->eof_timer, STDIO_EOF_GRACE_S, 0.);
    ev_timer_start(t->base.env->loop, &t->eof_timer);
}

/* ev_timer (0 s): free a reaped child outside its own callbacks. */
static void
stdio_reap_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct stdio_transport *t = w->data;

    (void)loop;
    (void)revents;
    if (t->child != NULL && child_exited(t->child)) {
        child_free(t->child);
        t->child = NULL;
    }
}

static void stdio_ending_reaped(struct stdio_transport *t);
static void stdio_group_begin(struct stdio_transport *t);

/* child_callbacks.on_exit: reaped. */
static void
stdio_exit_cb(void *arg, int status)
{
    struct stdio_transport  *t = arg;
    struct transport_event   e = { .type = TRANSPORT_LOST };
    struct transport_failure f = { .evd = { .child_closed = true,
                                            .peer_known_dead = true } };
    /* Nothing in flight, no ending, not mcptop's own cleanup: the exit is
     * itself the observation (an idle timer, a crash), said at once. */
    bool                           idle = t->reqs == NULL &&
        t->run == NULL && !t->abandoned;

    t->exit_status = status;
    t->has_exit = true;
    t->gone = true;
    if (idle) {
        size_t n;

        stdio_child_detail(t, f.detail, sizeof(f.detail));
        n = strlen(f.detail);
        if (t->err_len > 0 && n + 12 < sizeof(f.detail))
            snprintf(f.detail + n, sizeof(f.detail) - n, "; stderr: %s",
                t->stderr_ring[(t->err_start + t->err_len - 1) %
                STDIO_STDERR_LINES]);
        e.failure = &f;
        e.op = "process";
    }
    transport_log(&t->base, "child %ld reaped (status 0x%x)",
        t->child != NULL ? (long)child_pid(t->child) : 0L, status);
    ev_timer_stop(t->base.env->loop, &t->eof_timer);
    stdio_fail_all(t);
    if (t->run != NULL && child_group_left(t->child))
        stdio_group_begin(t);       /* a wrapper: its server lives on */
    else {
        stdio_ending_reaped(t);
        ev_timer_start(t->base.env->loop, &t->reap_kick);
    }
    /* With requests in flight, their failures say it; else the exit. */
    transport_emit(&t->base, &e);
}

static const struct child_callbacks stdio_child_cb = {
    .on_line = stdio_line_cb,
    .on_too_long = stdio_too_long_cb,
    .on_stderr = stdio_stderr_cb,
    .on_closed = stdio_closed_cb,
    .on_exit = stdio_exit_cb,
};

/* Start the declared command (its values, as engine/child.h takes them). */
static struct child *
stdio_spawn(struct stdio_transport *t, int *err, char **cause)
{
    const struct config_server *d = t->base.env->decl;
    struct child_spec           spec = {
        .command = d->command,
        .shown = d->command_shown,
        .args = d->args,
        .nargs = d->nargs,
        .env = d->env,
        .nenv = d->nenv,
        .cwd = d->cwd,
        .teardown_ms = d->teardown_ms > 0 ? d->teardown_ms :
            CONFIG_DEFAULT_TEARDOWN_MS,
    };

    return child_spawn(t->base.env->loop, &spec, d->max_message_bytes,
        &stdio_child_cb, t, err, cause);
}

/* Start the child for a dial; the old one, if any, is killed and reaped
 * first. */
static int
stdio_open(struct transport *base, struct transport_failure *f)
{
    struct stdio_transport *t = stdio_of(base);
    int                     err = 0;
    char                   *cause = NULL;

    if (t->child != NULL) {
        ev_timer_stop(base->env->loop, &t->reap_kick);
        child_free(t->child);
        t->child = NULL;
    }
    t->gone = false;
    t->has_exit = false;
    t->abandoned = false;
    t->child = stdio_spawn(t, &err, &cause);
    if (t->child == NULL) {
        struct failure_evidence evd = { .spawn_error = true, .os_errno = err };

        if (err == EMFILE || err == ENFILE) {
            /* Out of descriptors here: not the command's fault. */
            evd.spawn_error = false;
            evd.local_limit = true;
            transport_failure_set(f, &evd, "local limit: too many open files "
                "(the child could not be started)");
            free(cause);
            return -1;
        }
        transport_failure_set(f, &evd, "%s", cause != NULL ? cause : "");
        free(cause);
        return -1;
    }
    if (base->env->spawns != NULL)
        (*base->env->spawns)++;
    transport_log(base, "spawned pid %ld", (long)child_pid(t->child));
    return 0;
}

/* --- the session: the child --------------------------------------------- */

static void
stdio_adopt(struct transport *base, char *session,
    const char *protocol_version)
{
    (void)base;
    (void)protocol_version;
    free(session);
}

static char *
stdio_release(struct transport *base)
{
    (void)base;
    return NULL;
}

static bool
stdio_has_session(const struct transport *base)
{
    const struct stdio_transport *t = stdio_of(base);

    return t->child != NULL && !child_exited(t->child) && !t->abandoned;
}

static void
stdio_session_prefix(const struct transport *base, char *buf, size_t n)
{
    (void)base;
    if (n > 0)
        buf[0] = '\0';
}

static bool
stdio_alive(const struct transport *base)
{
    const struct stdio_transport *t = stdio_of(base);

    return t->child != NULL && !t->gone;
}

static void
stdio_abandon(struct transport *base)
{
    struct stdio_transport *t = stdio_of(base);

    /* A child whose dial failed is not kept: the next dial spawns anew.
     * This is the dial's cleanup, never an ending. */
    if (t->child != NULL && !child_exited(t->child)) {
        t->abandoned = true;
        transport_log(base, "dial cleanup: stopping child %ld",
            (long)child_pid(t->child));
        child_signal(t->child, SIGKILL);
    }
}

/* The ending's outcome, from the step the shutdown sequence reached when
 * the child was reaped. */
static void
stdio_ending_reaped(struct stdio_transport *t)
{
    struct ending_run   *run = t->run;
    struct ending_report rep = { .exit_code = -1 };

    if (run == NULL)
        return;
    t->run = NULL;
    ev_timer_stop(t->base.env->loop, &t->stage_timer);
    if (!ending_run_has_outcome(run)) {
        char died[96];

        if (WIFSIGNALED(t->exit_status))
            rep.signal = WTERMSIG(t->exit_status);
        if (WIFEXITED(t->exit_status))
            rep.exit_code = WEXITSTATUS(t->exit_status);
        rep.outcome = t->stage >= 2 ? ENDING_KILLED :
            t->stage == 1 ? ENDING_SIGNALLED : ENDING_EXITED;
        rep.detail = rep.outcome == ENDING_EXITED ?
            "the child exited after stdin closed" :
            rep.outcome == ENDING_SIGNALLED ? "the child needed SIGTERM" :
            "the child needed SIGKILL";
        if (rep.outcome == ENDING_EXITED && rep.signal != 0) {
            /* Exited never carries a signal: one mcptop did not send. */
            snprintf(died, sizeof(died), "the child was killed by signal "
                "%d after stdin closed", rep.signal);
            rep.outcome = ENDING_SIGNALLED;
            rep.detail = died;
        }
        ending_run_report(run, &rep);
    }
    /* The reaping is the settlement. */
    ending_run_settle(run);
}

/* --- an ending's process group (DESIGN.md 5) --------------------------- */

/* The step's words, for a member of the group. */
static const char *
stdio_step_words(int step)
{
    return step >= 2 ? "needed SIGKILL" : step == 1 ? "needed SIGTERM" :
        "exited after stdin closed";
}

/* The child's name as configured ("sh" for "/bin/sh"). */
static const char *
stdio_child_name(const struct stdio_transport *t)
{
    const struct config_server *d = t->base.env->decl;
    const char *cmd = d->command_shown != NULL ? d->command_shown :
        d->command;
    const char *slash = cmd != NULL ? strrchr(cmd, '/') : NULL;

    return slash != NULL ? slash + 1 : cmd != NULL ? cmd : "?";
}

/* What the child needed (its step and wait status), in a few words. */
static void
stdio_lead_words(const struct stdio_transport *t, char *buf, size_t n)
{
    if (t->lead_step >= 2)
        snprintf(buf, n, "needed SIGKILL");
    else if (t->lead_step == 1)
        snprintf(buf, n, "exited on SIGTERM");
    else if (WIFSIGNALED(t->exit_status))
        snprintf(buf, n, "was killed by signal %d after stdin closed",
            WTERMSIG(t->exit_status));
    else
        snprintf(buf, n, "exited after stdin closed");
}

/* "the child (sh) exited on SIGTERM; 1 process of its group (pid N,
 * python3) needed SIGKILL at 2000 ms"; pending: some are still there. */
static void
stdio_group_detail(const struct stdio_transport *t, char *buf, size_t n,
    bool pending)
{
    const struct stdio_member *m = &t->members[t->last];
    char                       lead[64];
    int                        k;
    char                       name[64];

    stdio_lead_words(t, lead, sizeof(lead));
    k = snprintf(buf, n, "the child (%s) %s; ", stdio_child_name(t), lead);
    if (k < 0 || (size_t)k >= n)
        return;
    if (pending) {
        snprintf(buf + k, n - (size_t)k, "%u process%s of its group still "
            "there after SIGKILL (pid %ld, %s)", t->ngroup,
            t->ngroup == 1 ? "" : "es", (long)t->members[0].id.pid,
            t->members[0].comm);
        return;
    }
    snprintf(name, sizeof(name), "pid %ld, %s", (long)m->id.pid, m->comm);
    if (t->ngroup == 1)
        snprintf(buf + k, n - (size_t)k, "1 process of its group (%s) %s "
            "at %.0f ms", name, stdio_step_words(t->last_step), t->last_ms);
    else
        snprintf(buf + k, n - (size_t)k, "%u processes of its group, the "
            "last (%s) %s at %.0f ms", t->ngroup, name,
            stdio_step_words(t->last_step), t->last_ms);
}

/* Who is in the reaped child's group now (its id is the child's pid). */
static void
stdio_group_scan(struct stdio_transport *t)
{
    struct proc_table tab;
    pid_t             pgid = child_pid(t->child);

    t->nmembers = 0;
    t->ngroup = 0;
    memset(&tab, 0, sizeof(tab));
    if (proc_table_scan(&tab, "/proc") != 0)
        return;
    for (size_t i = 0; i < tab.n; i++) {
        struct proc_entry   *e = &tab.v[i];
        struct stdio_member *m;

        if (e->st.pgid != pgid || e->st.state == 'Z' || e->st.state == 'X')
            continue;
        t->ngroup++;
        if (t->nmembers == STDIO_GROUP_MAX)
            continue;
        proc_table_details(&tab, "/proc", e);
        m = &t->members[t->nmembers++];
        m->id = (struct proc_id){ .pid = e->st.pid, .start = e->st.start,
                                  .uid = e->uid };
        snprintf(m->comm, sizeof(m->comm), "%s", e->st.comm);
        m->gone = false;
    }
    proc_table_done(&tab);
}

/* The child was reaped in an ending while its group lives on: the
 * sequence goes on for the group, which is watched until it is gone. */
static void
stdio_group_begin(struct stdio_transport *t)
{
    t->group_wait = true;
    t->lead_step = t->stage;
    t->last_step = t->stage;
    t->last_ms = ending_run_elapsed_ms(t->run);
    t->last = 0;
    stdio_group_scan(t);
    transport_log(&t->base, "the child was reaped; %u process(es) of its "
        "group live on", t->ngroup);
    ev_timer_again(t->base.env->loop, &t->group_timer);
}

/* The group is gone: the outcome is the strongest step any member
 * needed (exited < signalled < killed); the settlement is now. */
static void
stdio_group_done(struct stdio_transport *t)
{
    struct ending_run   *run = t->run;
    struct ending_report rep = { .exit_code = -1 };
    char                 detail[160];
    int                  step = t->last_step > t->lead_step ?
        t->last_step : t->lead_step;

    ev_timer_stop(t->base.env->loop, &t->group_timer);
    ev_timer_stop(t->base.env->loop, &t->stage_timer);
    t->group_wait = false;
    t->run = NULL;
    if (t->ngroup == 0) {
        /* Nothing of it could be named: the child's own ending. */
        t->run = run;
        stdio_ending_reaped(t);
        ev_timer_start(t->base.env->loop, &t->reap_kick);
        return;
    }
    stdio_group_detail(t, detail, sizeof(detail), false);
    rep.outcome = step >= 2 ? ENDING_KILLED : step == 1 ?
        ENDING_SIGNALLED : ENDING_EXITED;
    rep.signal = step >= 2 ? SIGKILL : step == 1 ? SIGTERM : 0;
    if (step == 0 && WIFEXITED(t->exit_status))
        rep.exit_code = WEXITSTATUS(t->exit_status);
    rep.detail = detail;
    rep.group_left = t->ngroup;
    ending_run_report(run, &rep);
    ending_run_settle_note(run, detail);
    ev_timer_start(t->base.env->loop, &t->reap_kick);
}

/* ev_timer (repeating): which members are gone, at which step. */
static void
stdio_group_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct stdio_transport *t = w->data;
    double                  ms;

    (void)loop;
    (void)revents;
    if (!t->group_wait || t->run == NULL || t->child == NULL)
        return;
    ms = ending_run_elapsed_ms(t->run);
    for (size_t i = 0; i < t->nmembers; i++) {
        struct stdio_member *m = &t->members[i];

        if (m->gone || proc_id_alive(&m->id, "/proc"))
            continue;
        m->gone = true;
        if (t->stage >= t->last_step) {
            t->last_step = t->stage;
            t->last_ms = ms;
            t->last = i;
        }
    }
    if (!child_group_left(t->child)) {
        stdio_group_done(t);
        return;
    }
    if (ms > 2.0 * ending_run_teardown_ms(t->run)) {
        /* Past twice the deadline (a process in D state): the group is
         * SIGKILLed once more and the ending settles as it stands. */
        child_signal_group(t->child, SIGKILL);
        t->last_step = 2;
        t->last_ms = ms;
        stdio_group_done(t);
    }
}

/* ev_timer: the next step of the MCP stdio shutdown sequence: stdin was
 * closed; then SIGTERM to the group; then SIGKILL. The ending's deadline
 * comes after. */
static void
stdio_stage_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct stdio_transport *t = w->data;

    (void)revents;
    if (t->child == NULL || t->run == NULL ||
        (child_exited(t->child) && !t->group_wait))
        return;
    t->stage++;
    if (t->stage == 1) {
        transport_log(&t->base, "shutdown: SIGTERM");
        child_signal_group(t->child, SIGTERM);
        ev_timer_set(w, ending_run_teardown_ms(t->run) / 3000.0, 0.);
        ev_timer_start(loop, w);
    } else {
        transport_log(&t->base, "shutdown: SIGKILL");
        child_signal_group(t->child, SIGKILL);
    }
}

static void
stdio_end(struct transport *base, struct ending_run *run, char *session,
    const char *protocol_version)
{
    struct stdio_transport *t = stdio_of(base);

    (void)protocol_version;
    free(session);
    if (t->child == NULL || child_exited(t->child) || t->abandoned) {
        /* No live session: nothing to end, whatever the child's end was. */
        char detail[128];

        if (t->abandoned)
            snprintf(detail, sizeof(detail), "no live session: the dial "
                "failed and mcptop stopped its child");
        else if (t->has_exit)
            stdio_child_detail(t, detail, sizeof(detail));
        else
            snprintf(detail, sizeof(detail), "no child is running; "
                "nothing to end");
        ending_run_outcome(run, ENDING_NO_SESSION, detail);
        ending_run_settle(run);
        return;
    }
    /* What is in flight is cancelled before stdin closes (MCP
     * basic/utilities/cancellation; never initialize). */
    for (struct stdio_req *r = t->reqs; r != NULL; r = r->next) {
        size_t len;
        char  *body;

        if (r->id < 0 || (r->flags & TRANSPORT_INITIALIZE))
            continue;
        body = jsonrpc_build_cancelled(r->id, "ending", &len);
        child_send(t->child, body, len);
        free(body);
    }
    transport_log(base, "shutdown: closing stdin");
    /* The ending judges the child's whole group (DESIGN.md 5). */
    child_group_keep(t->child);
    child_close_stdin(t->child);
    t->run = run;
    t->stage = 0;
    ev_timer_stop(base->env->loop, &t->stage_timer);
    ev_timer_set(&t->stage_timer, ending_run_teardown_ms(run) / 3000.0, 0.);
    ev_timer_start(base->env->loop, &t->stage_timer);
}

/* The deadline: the operator is answered; the reaping settles the ending
 * when it comes. */
static void
stdio_end_deadline(struct transport *base, struct ending_run *run)
{
    struct stdio_transport *t = stdio_of(base);

    if (t->group_wait && t->run == run) {
        struct ending_report rep = { .outcome = ENDING_KILLED,
                                     .exit_code = -1, .signal = SIGKILL };
        char                 detail[160];

        stdio_group_detail(t, detail, sizeof(detail), true);
        rep.detail = detail;
        rep.group_left = t->ngroup;
        ending_run_report(run, &rep);
        return;
    }
    ending_run_outcome(run, ENDING_KILLED,
        "the child needed SIGKILL and is not reaped yet");
}

/* --- lifetime ----------------------------------------------------------- */

static void
stdio_close(struct transport *base)
{
    struct stdio_transport *t = stdio_of(base);

    while (t->reqs != NULL)
        stdio_req_free(t, t->reqs);
    ev_timer_stop(base->env->loop, &t->eof_timer);
    ev_timer_stop(base->env->loop, &t->reap_kick);
    ev_timer_stop(base->env->loop, &t->stage_timer);
    ev_timer_stop(base->env->loop, &t->group_timer);
    t->group_wait = false;
    t->run = NULL;
    /* Never leave a child behind: a running one is killed and reaped. */
    child_free(t->child);
    t->child = NULL;
}

static void
stdio_free(struct transport *base)
{
    struct stdio_transport *t = stdio_of(base);

    if (t == NULL)
        return;
    stdio_close(base);
    for (size_t i = 0; t->stderr_ring != NULL && i < STDIO_STDERR_LINES;
        i++)
        free(t->stderr_ring[i]);
    free(t->stderr_ring);
    free(t);
}

/* transport_ops.query: the child and what it printed. */
static int
stdio_query(const struct transport *base, enum transport_query q, void *out)
{
    const struct stdio_transport *t = stdio_of(base);
    struct transport_q_line      *l;
    struct transport_q_exit      *x;

    switch (q) {
    case TRANSPORT_Q_PID:
        *(long *)out = t->child != NULL && !child_exited(t->child) ?
            (long)child_pid(t->child) : 0;
        return 0;
    case TRANSPORT_Q_STDERR_COUNT:
        *(size_t *)out = t->err_len;
        return 0;
    case TRANSPORT_Q_STDERR_LINE:
        l = out;
        l->line = l->i < t->err_len ?
            t->stderr_ring[(t->err_start + l->i) % STDIO_STDERR_LINES] : NULL;
        return 0;
    case TRANSPORT_Q_EXIT_STATUS:
        if (!t->has_exit)
            return -1;
        x = out;
        x->code = WIFEXITED(t->exit_status) ?
            WEXITSTATUS(t->exit_status) : -1;
        x->sig = WIFSIGNALED(t->exit_status) ? WTERMSIG(t->exit_status) : 0;
        return 0;
    case TRANSPORT_Q_STRAY_LINES:
        *(unsigned long *)out = t->stray_lines;
        return 0;
    case TRANSPORT_Q_WARNING:
    case TRANSPORT_Q_ACTIVITY:
    case TRANSPORT_Q_AUTHORIZATION:
        break;
    }
    return -1;
}

static const struct transport_ops stdio_ops = {
    .name = "stdio",
    .caps = TRANSPORT_CAP_SILENT_PROBE | TRANSPORT_CAP_FRESH_PEER,
    .open = stdio_open,
    .send = stdio_send,
    .cancel = stdio_cancel,
    .peek = stdio_peek,
    .adopt = stdio_adopt,
    .release = stdio_release,
    .has_session = stdio_has_session,
    .session_prefix = stdio_session_prefix,
    .alive = stdio_alive,
    .abandon = stdio_abandon,
    .end = stdio_end,
    .end_deadline = stdio_end_deadline,
    .close = stdio_close,
    .free = stdio_free,
    .query = stdio_query,
};

struct transport *
stdio_new(const struct transport_env *env)
{
    struct stdio_transport *t = xcalloc(1, sizeof(*t));

    t->base.ops = &stdio_ops;
    t->base.env = env;
    ev_timer_init(&t->eof_timer, stdio_eof_cb, STDIO_EOF_GRACE_S, 0.);
    t->eof_timer.data = t;
    ev_timer_init(&t->reap_kick, stdio_reap_cb, 0., 0.);
    t->reap_kick.data = t;
    ev_timer_init(&t->stage_timer, stdio_stage_cb, 0., 0.);
    t->stage_timer.data = t;
    ev_timer_init(&t->group_timer, stdio_group_cb, STDIO_GROUP_POLL_S,
        STDIO_GROUP_POLL_S);
    t->group_timer.data = t;
    return &t->base;
}
