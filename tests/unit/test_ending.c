/*
 * Tests for the ending state machine (DESIGN.md section 5) on a real libev
 * loop (EV_DEFAULT) with short teardown deadlines:
 *   - stdio: the MCP shutdown sequence against tests/stdio/fake.mjs children
 *     (healthy -> exited, ignore-stdin-eof -> signalled, ignore-sigterm ->
 *     killed), each by the deadline, settled, one ending/settled event each,
 *     the same ending while busy, nothing to end once stopped;
 *   - HTTP: a loopback server written here that opens a session and never
 *     answers the DELETE -> timed_out within 100 ms of the deadline;
 *   - nothing to end: an invalid url or a server never started -> NULL; a
 *     dial that got no session (refused port, spawn failure) -> no_session.
 * The stdio children need `node` on PATH; fake.mjs is found from
 * MCPTOP_TEST_DATA (tests/data) as ../stdio/fake.mjs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <ev.h>

#include "engine/config.h"
#include "engine/ending.h"
#include "engine/event.h"
#include "engine/fleet.h"
#include "engine/http.h"
#include "engine/server.h"
#include "util/str.h"

#define TEARDOWN_MS 600
#define SLACK_MS    100.0

/* --- running the loop until something holds, bounded ------------------- */

typedef bool (*until_fn)(void *arg);

struct until {
    until_fn fn;
    void    *arg;
    bool     held;
};

static void
until_prepare_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
    struct until *u = w->data;

    (void)revents;
    if (u->fn(u->arg)) {
        u->held = true;
        ev_break(loop, EVBREAK_ONE);
    }
}

static void
until_bound_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)w;
    (void)revents;
    ev_break(loop, EVBREAK_ONE);
}

/* Run the loop until fn(arg) is true or `seconds` pass. True if it held. */
static bool
run_until(struct ev_loop *loop, until_fn fn, void *arg, double seconds)
{
    struct until u = { .fn = fn, .arg = arg };
    ev_prepare   prep;
    ev_timer     bound;

    if (fn(arg))
        return true;
    ev_prepare_init(&prep, until_prepare_cb);
    prep.data = &u;
    ev_prepare_start(loop, &prep);
    ev_timer_init(&bound, until_bound_cb, seconds, 0.);
    ev_timer_start(loop, &bound);
    ev_now_update(loop);
    ev_run(loop, 0);
    ev_prepare_stop(loop, &prep);
    ev_timer_stop(loop, &bound);
    return u.held;
}

static bool
all_dial_settled(void *arg)
{
    struct fleet *f = arg;

    for (size_t i = 0; i < fleet_size(f); i++) {
        if (!server_dial_settled(fleet_server(f, i)))
            return false;
    }
    return true;
}

static bool
endings_idle(void *arg)
{
    return !fleet_endings_busy(arg);
}

/* --- event bookkeeping --------------------------------------------------- */

#define MAX_SERVERS 8

struct seen {
    struct fleet *fleet;
    int           endings[MAX_SERVERS];
    int           settled[MAX_SERVERS];
};

static void
seen_cb(void *arg, const struct event *e)
{
    struct seen *sn = arg;

    if (e->type != EVENT_ENDING && e->type != EVENT_SETTLED)
        return;
    for (size_t i = 0; i < fleet_size(sn->fleet) && i < MAX_SERVERS; i++) {
        if (fleet_server(sn->fleet, i) != e->server)
            continue;
        assert_ptr_equal(e->ending->server, e->server);
        if (e->type == EVENT_ENDING) {
            /* the outcome is known when its event goes out */
            assert_int_not_equal(e->ending->outcome, ENDING_PENDING);
            sn->endings[i]++;
        } else {
            assert_true(e->ending->settled);
            sn->settled[i]++;
        }
    }
}

/* --- fixtures ------------------------------------------------------------ */

static char fake_path[PATH_MAX];

static int
group_setup(void **state)
{
    (void)state;
    signal(SIGPIPE, SIG_IGN);
    if (realpath(MCPTOP_TEST_DATA "/../stdio/fake.mjs", fake_path) == NULL) {
        fprintf(stderr, "cannot find fake.mjs from %s: %s\n",
            MCPTOP_TEST_DATA, strerror(errno));
        return -1;
    }
    return http_global_init();
}

static int
group_teardown(void **state)
{
    (void)state;
    http_global_cleanup();
    return 0;
}

static struct config *
parse_config(const char *json)
{
    struct config *cfg = NULL;
    char          *cause = NULL;

    if (config_parse(json, strlen(json), "test", &cfg, &cause) != 0) {
        print_error("config_parse: %s\n", cause);
        free(cause);
        fail();
    }
    return cfg;
}

static struct fleet *
new_fleet(struct config *cfg)
{
    struct fleet_options opt = { .no_streams = true, .no_pings = true,
        .no_redial = true };
    char                *cause = NULL;
    struct fleet        *f = fleet_new(EV_DEFAULT, cfg, &opt, &cause);

    if (f == NULL) {
        print_error("fleet_new: %s\n", cause);
        free(cause);
        fail();
    }
    return f;
}

static struct server *
by_name(struct fleet *f, const char *name)
{
    for (size_t i = 0; i < fleet_size(f); i++) {
        if (strcmp(server_name(fleet_server(f, i)), name) == 0)
            return fleet_server(f, i);
    }
    fail_msg("no server %s", name);
    return NULL;
}

static size_t
index_of(struct fleet *f, const struct server *s)
{
    for (size_t i = 0; i < fleet_size(f); i++) {
        if (fleet_server(f, i) == s)
            return i;
    }
    fail();
    return 0;
}

/* --- stdio: exited / signalled / killed ---------------------------------- */

static void
test_stdio_shutdown_sequence(void **state)
{
    static const struct {
        const char         *name;
        enum ending_outcome outcome;
        int                 signal;
    } rows[] = {
        { "healthy", ENDING_EXITED, 0 },
        { "ignore-stdin-eof", ENDING_SIGNALLED, SIGTERM },
        { "ignore-sigterm", ENDING_KILLED, SIGKILL },
    };
    struct ev_loop      *loop = EV_DEFAULT;
    char                *json;
    struct config       *cfg;
    struct fleet        *f;
    struct seen          sn = { 0 };
    const struct ending *e[3];
    long                 pid[3];

    (void)state;
    json = str_printf("{\"mcpServers\": {"
        "\"healthy\": {\"command\": \"node\", \"args\": [\"%s\", "
        "\"--mode=healthy\"]},"
        "\"ignore-stdin-eof\": {\"command\": \"node\", \"args\": [\"%s\", "
        "\"--mode=ignore-stdin-eof\"]},"
        "\"ignore-sigterm\": {\"command\": \"node\", \"args\": [\"%s\", "
        "\"--mode=ignore-sigterm\"]}},"
        "\"mcptop\": {\"teardown_ms\": %d, \"timeout_ms\": 10000, "
        "\"open_deadline_ms\": 15000}}", fake_path, fake_path, fake_path,
        TEARDOWN_MS);
    cfg = parse_config(json);
    free(json);
    assert_int_equal(cfg->nservers, 3);
    f = new_fleet(cfg);
    sn.fleet = f;
    fleet_subscribe(f, seen_cb, &sn);
    fleet_start(f);
    assert_true(run_until(loop, all_dial_settled, f, 20.0));
    assert_int_equal(fleet_teardown_ms(f), TEARDOWN_MS);

    for (size_t k = 0; k < 3; k++) {
        struct server *s = by_name(f, rows[k].name);

        assert_int_equal(server_state(s), SERVER_READY);
        pid[k] = server_pid(s);
        assert_true(pid[k] > 0);
        e[k] = server_end(s, false);
        assert_non_null(e[k]);
        assert_ptr_equal(e[k]->server, s);
        assert_false(e[k]->half_open);
        /* Busy: asking again returns the same ending. */
        assert_true(server_ending_busy(s));
        assert_ptr_equal(server_end(s, false), e[k]);
        assert_int_equal(server_state(s), SERVER_ENDING);
    }
    /* The two that ignore stdin EOF cannot have an outcome yet. */
    assert_int_equal(e[1]->outcome, ENDING_PENDING);
    assert_int_equal(e[2]->outcome, ENDING_PENDING);
    assert_false(e[2]->settled);
    assert_true(fleet_endings_busy(f));

    assert_true(run_until(loop, endings_idle, f,
        (TEARDOWN_MS + 2000) / 1000.0));

    for (size_t k = 0; k < 3; k++) {
        struct server *s = by_name(f, rows[k].name);
        size_t         i = index_of(f, s);

        print_message("%-17s %-10s %.1f ms, settled %.1f ms\n", rows[k].name,
            ending_outcome_name(e[k]->outcome), e[k]->duration_ms,
            e[k]->settled_ms);
        assert_string_equal(ending_outcome_name(e[k]->outcome),
            ending_outcome_name(rows[k].outcome));
        assert_true(e[k]->duration_ms >= 0.0);
        assert_true(e[k]->duration_ms <= TEARDOWN_MS + SLACK_MS);
        assert_true(e[k]->settled);
        assert_true(e[k]->settled_ms >= e[k]->duration_ms);
        if (rows[k].outcome == ENDING_EXITED) {
            assert_int_equal(e[k]->exit_code, 0);
        } else {
            assert_int_equal(e[k]->signal, rows[k].signal);
        }
        assert_int_equal(e[k]->started_at > 0, 1);
        /* One ending event and one settled event. */
        assert_int_equal(sn.endings[i], 1);
        assert_int_equal(sn.settled[i], 1);
        /* Settled with redial false: stopped, nothing more to end. */
        assert_int_equal(server_state(s), SERVER_STOPPED);
        assert_false(server_ending_busy(s));
        assert_null(server_end(s, false));
        assert_int_equal(server_ending_count(s), 1);
        assert_ptr_equal(server_ending(s, 0), e[k]);
        /* Reaped: the pid is gone (no zombie either). */
        assert_int_equal(server_pid(s), 0);
        errno = 0;
        assert_int_equal(kill((pid_t)pid[k], 0), -1);
        assert_int_equal(errno, ESRCH);
    }
    /* The healthy child exits at once on EOF; the others needed the
     * signals, so they cannot have been quicker than it. */
    assert_true(e[1]->duration_ms > e[0]->duration_ms);
    assert_true(e[2]->duration_ms > e[1]->duration_ms);

    fleet_free(f);
    config_free(cfg);
}

/* --- HTTP: a DELETE that is never answered ------------------------------- */

#define SID "mcptest-session-0123456789abcdef"
#define MAX_CONNS 16

struct conn {
    int    fd;
    ev_io  w;
    char   buf[65536];
    size_t len;
    struct lab *lab;
};

struct lab {
    int         fd;
    int         port;
    ev_io       accept_w;
    struct conn conns[MAX_CONNS];
    int         posts, deletes, deletes_with_sid, gets;
    int         initializes;
};

static void
lab_write(int fd, const char *s)
{
    size_t len = strlen(s), off = 0;

    while (off < len) {
        ssize_t n = write(fd, s + off, len - off);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        off += (size_t)n;
    }
}

static void
lab_answer(int fd, int status, const char *extra_headers, const char *body)
{
    char *r = str_printf("HTTP/1.1 %d %s\r\n%s"
        "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
        status, status == 200 ? "OK" : status == 202 ? "Accepted" :
        "Method Not Allowed", extra_headers, strlen(body), body);

    lab_write(fd, r);
    free(r);
}

/* The value of header `name` in the head (NUL-terminated), or NULL. */
static const char *
lab_header(const char *head, const char *name, size_t *vlen)
{
    size_t      nl = strlen(name);
    const char *p = strstr(head, "\r\n");

    while (p != NULL && p[2] != '\0') {
        const char *line = p + 2;
        const char *end = strstr(line, "\r\n");

        if (end == NULL)
            break;
        if ((size_t)(end - line) > nl && strncasecmp(line, name, nl) == 0 &&
            line[nl] == ':') {
            const char *v = line + nl + 1;

            while (*v == ' ')
                v++;
            *vlen = (size_t)(end - v);
            return v;
        }
        p = end;
    }
    return NULL;
}

static void
lab_handle(struct conn *c, char *head, const char *body, size_t blen)
{
    struct lab *lab = c->lab;
    size_t      vlen = 0;
    const char *sid = lab_header(head, "Mcp-Session-Id", &vlen);
    char       *text = str_ndup(body, blen);
    const char *idp = strstr(text, "\"id\":");
    long        id = idp != NULL ? strtol(idp + 5, NULL, 10) : -1;
    char       *answer = NULL;

    if (strncmp(head, "DELETE ", 7) == 0) {
        lab->deletes++;
        if (sid != NULL && vlen == strlen(SID) && memcmp(sid, SID, vlen) == 0)
            lab->deletes_with_sid++;
        /* never answered */
    } else if (strncmp(head, "GET ", 4) == 0) {
        lab->gets++;
        lab_answer(c->fd, 405, "Allow: POST, DELETE\r\n", "");
    } else if (strncmp(head, "POST ", 5) == 0) {
        lab->posts++;
        if (strstr(text, "\"initialize\"") != NULL) {
            lab->initializes++;
            answer = str_printf("{\"jsonrpc\":\"2.0\",\"id\":%ld,\"result\":"
                "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":"
                "{\"tools\":{}},\"serverInfo\":{\"name\":\"test-lab\","
                "\"version\":\"1\"}}}", id);
            lab_answer(c->fd, 200, "Mcp-Session-Id: " SID "\r\n", answer);
        } else if (idp == NULL || strstr(text, "\"method\"") == NULL) {
            lab_answer(c->fd, 202, "", "");
        } else if (strstr(text, "\"tools/list\"") != NULL) {
            answer = str_printf("{\"jsonrpc\":\"2.0\",\"id\":%ld,\"result\":"
                "{\"tools\":[{\"name\":\"t1\",\"inputSchema\":"
                "{\"type\":\"object\"}}]}}", id);
            lab_answer(c->fd, 200, "", answer);
        } else {
            answer = str_printf("{\"jsonrpc\":\"2.0\",\"id\":%ld,\"result\":"
                "{}}", id);
            lab_answer(c->fd, 200, "", answer);
        }
    }
    free(answer);
    free(text);
}

static void
lab_conn_close(struct ev_loop *loop, struct conn *c)
{
    ev_io_stop(loop, &c->w);
    close(c->fd);
    c->fd = -1;
    c->len = 0;
}

static void
lab_read_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    struct conn *c = w->data;
    ssize_t      n;

    (void)revents;
    n = read(c->fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        lab_conn_close(loop, c);
        return;
    }
    c->len += (size_t)n;
    c->buf[c->len] = '\0';
    for (;;) {
        char       *eoh = strstr(c->buf, "\r\n\r\n");
        size_t      hlen, blen = 0, vlen = 0, total;
        const char *cl;

        if (eoh == NULL)
            return;
        hlen = (size_t)(eoh - c->buf) + 4;
        eoh[2] = '\0';  /* the head ends with its last header's CRLF */
        cl = lab_header(c->buf, "Content-Length", &vlen);
        if (cl != NULL)
            blen = (size_t)strtoul(cl, NULL, 10);
        eoh[2] = '\r';
        total = hlen + blen;
        if (total > sizeof(c->buf) - 1) {
            lab_conn_close(loop, c);
            return;
        }
        if (c->len < total)
            return;
        {
            char *head = str_ndup(c->buf, hlen - 2);

            lab_handle(c, head, c->buf + hlen, blen);
            free(head);
        }
        memmove(c->buf, c->buf + total, c->len - total);
        c->len -= total;
        c->buf[c->len] = '\0';
    }
}

static void
lab_accept_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    struct lab *lab = w->data;
    int         fd;

    (void)revents;
    fd = accept(lab->fd, NULL, NULL);
    if (fd < 0)
        return;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    for (size_t i = 0; i < MAX_CONNS; i++) {
        struct conn *c = &lab->conns[i];

        if (c->fd >= 0)
            continue;
        c->fd = fd;
        c->len = 0;
        c->lab = lab;
        ev_io_init(&c->w, lab_read_cb, fd, EV_READ);
        c->w.data = c;
        ev_io_start(loop, &c->w);
        return;
    }
    close(fd);
}

static void
lab_open(struct ev_loop *loop, struct lab *lab)
{
    struct sockaddr_in sa = { .sin_family = AF_INET };
    socklen_t          sl = sizeof(sa);
    int                one = 1;

    memset(lab, 0, sizeof(*lab));
    for (size_t i = 0; i < MAX_CONNS; i++)
        lab->conns[i].fd = -1;
    lab->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    assert_true(lab->fd >= 0);
    setsockopt(lab->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = 0;
    assert_int_equal(bind(lab->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(lab->fd, 16), 0);
    assert_int_equal(getsockname(lab->fd, (struct sockaddr *)&sa, &sl), 0);
    lab->port = ntohs(sa.sin_port);
    ev_io_init(&lab->accept_w, lab_accept_cb, lab->fd, EV_READ);
    lab->accept_w.data = lab;
    ev_io_start(loop, &lab->accept_w);
}

static void
lab_close(struct ev_loop *loop, struct lab *lab)
{
    for (size_t i = 0; i < MAX_CONNS; i++) {
        if (lab->conns[i].fd >= 0)
            lab_conn_close(loop, &lab->conns[i]);
    }
    ev_io_stop(loop, &lab->accept_w);
    close(lab->fd);
}

static bool
lab_saw_delete(void *arg)
{
    return ((struct lab *)arg)->deletes > 0;
}

static void
test_http_delete_never_answered_times_out(void **state)
{
    struct ev_loop      *loop = EV_DEFAULT;
    struct lab           lab;
    char                *json;
    struct config       *cfg;
    struct fleet        *f;
    struct server       *s;
    struct seen          sn = { 0 };
    const struct ending *e;

    (void)state;
    lab_open(loop, &lab);
    json = str_printf("{\"mcpServers\": {\"lab\": {\"url\": "
        "\"http://127.0.0.1:%d/mcp\"}}, \"mcptop\": {\"teardown_ms\": %d, "
        "\"timeout_ms\": 5000, \"open_deadline_ms\": 5000}}", lab.port,
        TEARDOWN_MS);
    cfg = parse_config(json);
    free(json);
    f = new_fleet(cfg);
    sn.fleet = f;
    fleet_subscribe(f, seen_cb, &sn);
    fleet_start(f);
    assert_true(run_until(loop, all_dial_settled, f, 10.0));
    s = fleet_server(f, 0);
    assert_int_equal(server_state(s), SERVER_READY);
    assert_int_equal(lab.initializes, 1);
    assert_int_equal(server_tools(s), 1);

    e = server_end(s, false);
    assert_non_null(e);
    assert_int_equal(e->outcome, ENDING_PENDING);
    assert_false(e->settled);
    assert_false(e->half_open);
    assert_int_equal(server_state(s), SERVER_ENDING);
    /* The DELETE reaches the lab, with the session id. */
    assert_true(run_until(loop, lab_saw_delete, &lab, 0.4));
    assert_int_equal(lab.deletes, 1);
    assert_int_equal(lab.deletes_with_sid, 1);
    /* Busy: the same ending, no second DELETE. */
    assert_true(server_ending_busy(s));
    assert_ptr_equal(server_end(s, false), e);

    assert_true(run_until(loop, endings_idle, f,
        (TEARDOWN_MS + 2000) / 1000.0));
    print_message("lab: %s %.1f ms, settled %.1f ms\n",
        ending_outcome_name(e->outcome), e->duration_ms, e->settled_ms);
    assert_int_equal(e->outcome, ENDING_TIMED_OUT);
    assert_true(e->duration_ms >= TEARDOWN_MS);
    assert_true(e->duration_ms <= TEARDOWN_MS + SLACK_MS);
    assert_true(e->settled);
    assert_true(e->settled_ms >= e->duration_ms);
    assert_true(e->has_failure);
    assert_int_equal(e->kind, FAILURE_TIMEOUT);
    assert_int_equal(e->delivered, DELIVERED_UNKNOWN);
    assert_int_equal(e->http_status, 0);
    assert_int_equal(sn.endings[0], 1);
    assert_int_equal(sn.settled[0], 1);
    assert_int_equal(lab.deletes, 1);   /* at most once per session */
    assert_int_equal(server_state(s), SERVER_STOPPED);
    assert_null(server_end(s, false));

    fleet_free(f);
    config_free(cfg);
    lab_close(loop, &lab);
}

/* --- nothing to end ------------------------------------------------------ */

static void
test_never_dialed_returns_null(void **state)
{
    struct ev_loop *loop = EV_DEFAULT;
    struct config  *cfg;
    struct fleet   *f;
    struct server  *bad, *idle;

    (void)state;
    cfg = parse_config("{\"mcpServers\": {"
        "\"bad\": {\"url\": \"ftp://127.0.0.1/mcp\"},"
        "\"idle\": {\"url\": \"http://127.0.0.1:9/mcp\"}},"
        "\"mcptop\": {\"teardown_ms\": 600}}");
    f = new_fleet(cfg);
    bad = by_name(f, "bad");
    idle = by_name(f, "idle");
    assert_non_null(server_decl(bad)->invalid);
    server_start(bad);
    assert_int_equal(server_state(bad), SERVER_INVALID);
    assert_null(server_end(bad, false));
    assert_null(server_end(bad, true));
    assert_int_equal(server_ending_count(bad), 0);
    assert_false(server_ending_busy(bad));
    /* Never started: nothing to end either. */
    assert_int_equal(server_state(idle), SERVER_IDLE);
    assert_null(server_end(idle, false));
    assert_int_equal(server_ending_count(idle), 0);
    assert_false(fleet_endings_busy(f));
    (void)loop;
    fleet_free(f);
    config_free(cfg);
}

static void
test_no_session_when_dial_failed(void **state)
{
    struct ev_loop      *loop = EV_DEFAULT;
    struct config       *cfg;
    struct fleet        *f;
    char                *json;
    int                  fd, port;
    struct sockaddr_in   sa = { .sin_family = AF_INET };
    socklen_t            sl = sizeof(sa);

    (void)state;
    /* A port that refuses: bound, never listening. */
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
    port = ntohs(sa.sin_port);
    json = str_printf("{\"mcpServers\": {"
        "\"refused\": {\"url\": \"http://127.0.0.1:%d/mcp\"},"
        "\"nocmd\": {\"command\": \"/nonexistent/mcptop-test/nope\"}},"
        "\"mcptop\": {\"teardown_ms\": 600, \"timeout_ms\": 2000, "
        "\"open_deadline_ms\": 2000}}", port);
    cfg = parse_config(json);
    free(json);
    f = new_fleet(cfg);
    fleet_start(f);
    assert_true(run_until(loop, all_dial_settled, f, 5.0));
    for (size_t i = 0; i < fleet_size(f); i++) {
        struct server       *s = fleet_server(f, i);
        const struct ending *e;

        assert_int_not_equal(server_state(s), SERVER_READY);
        e = server_end(s, false);
        assert_non_null(e);
        /* Nothing was sent: the outcome and the settlement are at once. */
        assert_int_equal(e->outcome, ENDING_NO_SESSION);
        assert_true(e->settled);
        assert_true(e->duration_ms <= SLACK_MS);
        assert_true(e->settled_ms >= e->duration_ms);
        assert_false(e->has_failure);
        assert_false(server_ending_busy(s));
    }
    assert_false(fleet_endings_busy(f));
    fleet_free(f);
    config_free(cfg);
    close(fd);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_never_dialed_returns_null),
        cmocka_unit_test(test_no_session_when_dial_failed),
        cmocka_unit_test(test_http_delete_never_answered_times_out),
        cmocka_unit_test(test_stdio_shutdown_sequence),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
