/*
 * Tests for the monitor's side of a tap (src/engine/fleet/tap_source.c):
 * the test is the tap, on a real Unix socket; what the source reports up
 * through its host is counted.
 *
 * The case it was written for: an agent's exchanges come fast, many in
 * one millisecond, and a monitor that joins after them gets them in the
 * snapshot's history. Each is taken exactly once, by its sequence number,
 * never by its timestamp (a monitor that took one exchange per
 * millisecond saw an erroring tap as ok); a snapshot after a gap takes
 * only what is new; another tap at the same path numbers from 1 again.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <ev.h>

#include "fleet/tap_source.h"

struct seen {
    int  exchanges, failed, links;
    char ops[16][32];
};

static void
seen_exchange(void *arg, const char *op, const struct failure *f, double ms,
    int64_t at)
{
    struct seen *s = arg;

    (void)ms;
    (void)at;
    if (s->exchanges < 16)
        snprintf(s->ops[s->exchanges], sizeof(s->ops[0]), "%s", op);
    s->exchanges++;
    if (f != NULL)
        s->failed++;
}

static void
seen_link(void *arg, bool up, const struct failure *f)
{
    struct seen *s = arg;

    (void)f;
    if (up)
        s->links++;
}

static const struct tap_source_host seen_host = {
    .exchange = seen_exchange,
    .link = seen_link,
};

struct fixture {
    char               dir[64], path[96];
    int                lfd, cfd;
    struct ev_loop    *loop;
    struct tap_source *ts;
    struct seen        seen;
};

static int
setup(void **state)
{
    struct fixture    *fx = calloc(1, sizeof(*fx));
    struct sockaddr_un sa = { .sun_family = AF_UNIX };

    snprintf(fx->dir, sizeof(fx->dir), "/tmp/mcptop-ts-XXXXXX");
    assert_non_null(mkdtemp(fx->dir));
    snprintf(fx->path, sizeof(fx->path), "%s/tap.sock", fx->dir);
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", fx->path);
    fx->lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(fx->lfd >= 0);
    assert_int_equal(bind(fx->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(fx->lfd, 4), 0);
    fx->cfd = -1;
    fx->loop = ev_loop_new(EVFLAG_AUTO);
    fx->ts = tap_source_new(fx->loop, fx->path, &seen_host, &fx->seen);
    *state = fx;
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *fx = *state;

    tap_source_free(fx->ts);
    ev_loop_destroy(fx->loop);
    if (fx->cfd >= 0)
        close(fx->cfd);
    close(fx->lfd);
    unlink(fx->path);
    rmdir(fx->dir);
    free(fx);
    return 0;
}

/* Run the loop until the source has reported want exchanges, or a bounded
 * number of turns (each at most 10 ms) has passed. */
static void
run_until(struct fixture *fx, int want)
{
    for (int i = 0; i < 200 && fx->seen.exchanges < want; i++) {
        ev_run(fx->loop, EVRUN_NOWAIT);
        usleep(10000);
    }
    /* A few more turns: anything past want would be counted too. */
    for (int i = 0; i < 5; i++) {
        ev_run(fx->loop, EVRUN_NOWAIT);
        usleep(2000);
    }
}

static void
tap_says(struct fixture *fx, const char *line)
{
    size_t n = strlen(line);

    assert_int_equal(write(fx->cfd, line, n), (ssize_t)n);
    assert_int_equal(write(fx->cfd, "\n", 1), 1);
}

static void
connect_tap(struct fixture *fx)
{
    tap_source_start(fx->ts);
    for (int i = 0; i < 50; i++)
        ev_run(fx->loop, EVRUN_NOWAIT);
    fx->cfd = accept(fx->lfd, NULL, NULL);
    assert_true(fx->cfd >= 0);
}

#define SNAP_HEAD(pid) "{\"event\":\"snapshot\",\"tap\":{\"pid\":" pid "}," \
    "\"last_failure\":null,\"in_flight\":[],\"history\":["
#define ENTRY(seq, op, outcome) "{\"ts\":1700000000123,\"seq\":" seq \
    ",\"op\":\"" op "\",\"outcome\":\"" outcome "\",\"delivered\":\"yes\"," \
    "\"ms\":0.2}"

/* Four exchanges in one millisecond: all four are taken. */
static void
test_history_in_one_millisecond(void **state)
{
    struct fixture *fx = *state;

    connect_tap(fx);
    tap_says(fx, SNAP_HEAD("100") ENTRY("1", "initialize", "completed") ","
        ENTRY("2", "tools/call", "protocol") ","
        ENTRY("3", "tools/call", "protocol") ","
        ENTRY("4", "tools/call", "protocol") "]}");
    run_until(fx, 4);
    assert_int_equal(fx->seen.links, 1);
    assert_int_equal(fx->seen.exchanges, 4);
    assert_int_equal(fx->seen.failed, 3);
    assert_string_equal(fx->seen.ops[0], "initialize");
    assert_string_equal(fx->seen.ops[3], "tools/call");
}

/* A live exchange, then a snapshot after a gap holding it and one more:
 * only the one more is new. Another tap (pid) at the path starts from 1. */
static void
test_snapshot_after_gap_and_restart(void **state)
{
    struct fixture *fx = *state;

    connect_tap(fx);
    tap_says(fx, SNAP_HEAD("100") ENTRY("1", "initialize", "completed")
        "]}");
    run_until(fx, 1);
    tap_says(fx, "{\"event\":\"exchange\",\"server\":\"t\",\"op\":\"ping\","
        "\"outcome\":\"completed\",\"ms\":0.1,"
        "\"observed_at\":1700000000123,\"seq\":2}");
    run_until(fx, 2);
    assert_int_equal(fx->seen.exchanges, 2);
    tap_says(fx, SNAP_HEAD("100") ENTRY("1", "initialize", "completed") ","
        ENTRY("2", "ping", "completed") ","
        ENTRY("3", "tools/call", "protocol") "]}");
    run_until(fx, 3);
    assert_int_equal(fx->seen.exchanges, 3);
    assert_int_equal(fx->seen.failed, 1);
    tap_says(fx, SNAP_HEAD("200") ENTRY("1", "initialize", "completed") ","
        ENTRY("2", "tools/call", "completed") "]}");
    run_until(fx, 5);
    assert_int_equal(fx->seen.exchanges, 5);
    assert_string_equal(fx->seen.ops[4], "tools/call");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_history_in_one_millisecond,
            setup, teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_after_gap_and_restart,
            setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
