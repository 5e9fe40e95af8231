/*
 * Tests for the schedule of a server's pings (server_int.h,
 * server_ping_delay; issue 30): +-10% jitter kept, the due time on a grid
 * so that pings due together share one wake-up, the mean interval the
 * configured one, short intervals exact.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "fleet/server_int.h"

/* Is x (loop time) on the grid of slot? */
static int
on_grid(double x, double slot)
{
    double k = x / slot;

    return fabs(k - round(k)) < 1e-6;
}

static void
test_due_times_on_the_grid(void **state)
{
    (void)state;
    for (int i = 0; i <= 100; i++) {
        double now = 1000.0 + i * 0.0371;   /* anywhere between slots */
        double u = i / 100.0;
        double d = server_ping_delay(now, 15.0, u, 1.0);

        assert_true(on_grid(now + d, 1.0));
        /* The jitter's window, widened by half a slot each side. */
        assert_true(d >= 13.5 - 0.5 - 1e-9);
        assert_true(d <= 16.5 + 0.5 + 1e-9);
    }
}

static void
test_servers_due_together_share_a_slot(void **state)
{
    double now = 5000.25, first;

    (void)state;
    /* Draws a little apart land on the same grid point: one wake-up. */
    first = now + server_ping_delay(now, 15.0, 0.50, 1.0);
    assert_true(fabs(now + server_ping_delay(now, 15.0, 0.51, 1.0) - first) <
        1e-9);
    assert_true(fabs(now + server_ping_delay(now + 0.1, 15.0, 0.50, 1.0) -
        0.1 - first) < 1.0 + 1e-9);
}

static void
test_jitter_spread_and_mean_kept(void **state)
{
    double sum = 0, lo = 1e9, hi = 0;
    int    n = 1000;

    (void)state;
    for (int i = 0; i < n; i++) {
        double now = 100.0 + i * 0.013;
        double d = server_ping_delay(now, 15.0, (i + 0.5) / n, 1.0);

        sum += d;
        lo = fmin(lo, d);
        hi = fmax(hi, d);
    }
    /* The spread over the interval stays (about 3 s of it)... */
    assert_true(hi - lo >= 2.5);
    /* ...and the mean is the interval: rounded to the nearest point, not
     * up. */
    assert_true(fabs(sum / n - 15.0) < 0.1);
}

static void
test_short_intervals_exact(void **state)
{
    (void)state;
    /* 4 slots or less: no grid (a test's 500 ms interval stays 500). */
    assert_true(fabs(server_ping_delay(7.3, 0.5, 0.5, 1.0) - 0.5) < 1e-9);
    assert_true(fabs(server_ping_delay(7.3, 2.0, 1.0, 1.0) - 2.2) < 1e-9);
    /* No grid at all. */
    assert_true(fabs(server_ping_delay(7.3, 15.0, 0.0, 0) - 13.5) < 1e-9);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_due_times_on_the_grid),
        cmocka_unit_test(test_servers_due_together_share_a_slot),
        cmocka_unit_test(test_jitter_spread_and_mean_kept),
        cmocka_unit_test(test_short_intervals_exact),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
