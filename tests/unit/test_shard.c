/*
 * Tests for shards (shard.h): the FNV-1a 64 values against the published
 * test vectors (so any other tool can reproduce a server's shard), the
 * K/N parser, that N shards partition a fleet (every server in exactly one
 * shard, none lost, none twice, shares near even), that a server keeps its
 * shard when the fleet grows, and config_retain applying a shard to a
 * parsed config.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/config.h"
#include "engine/shard.h"

/* FNV-1a 64 test vectors (Fowler/Noll/Vo's published table) and two of
 * ours computed independently (a few lines of Python). */
static void
test_hash_vectors(void **state)
{
    (void)state;
    assert_true(shard_hash("", 0) == UINT64_C(0xcbf29ce484222325));
    assert_true(shard_hash("a", 1) == UINT64_C(0xaf63dc4c8601ec8c));
    assert_true(shard_hash("foobar", 6) == UINT64_C(0x85944171f73967e8));
    assert_true(shard_hash("s00042", 6) == UINT64_C(0xd097be97924825cc));
    assert_true(shard_hash("caf\xc3\xa9", 5) ==
        UINT64_C(0x48e8823acfa40d89));
    /* Only the bytes count: the same name hashes the same each time. */
    assert_true(shard_hash("foobar", 6) == shard_hash("foobar", 6));
    assert_true(shard_hash("foobar", 6) != shard_hash("foobaR", 6));
}

static void
test_parse(void **state)
{
    struct shard sh = { 0 };
    char        *cause = NULL;
    static const char *bad[] = {
        "", "1", "/", "1/", "/3", "0/3", "4/3", "1/0", "-1/3", "1/-3",
        "a/3", "1/3x", " 1/3", "1/3 ", "1//3", "1/65537", "1/99999999999",
        "+1/3", "1.0/3",
    };

    (void)state;
    assert_int_equal(shard_parse("1/3", &sh, &cause), 0);
    assert_int_equal(sh.k, 1);
    assert_int_equal(sh.n, 3);
    assert_int_equal(shard_parse("3/3", &sh, &cause), 0);
    assert_int_equal(sh.k, 3);
    assert_int_equal(shard_parse("1/1", &sh, &cause), 0);
    assert_int_equal(shard_parse("65536/65536", &sh, &cause), 0);
    assert_int_equal(sh.n, 65536);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cause = NULL;
        sh.k = 7;
        assert_int_equal(shard_parse(bad[i], &sh, &cause), -1);
        assert_non_null(cause);
        assert_int_equal(sh.k, 7);          /* untouched on error */
        free(cause);
    }
}

#define FLEET 10000

/* N shards partition a fleet: each name in exactly one, shares near even
 * (FNV-1a over names that differ in their last digits spreads well). */
static void
test_partition(void **state)
{
    static const unsigned ns[] = { 1, 2, 3, 7, 16 };
    static unsigned char  owners[FLEET];
    char                  name[32];

    (void)state;
    for (size_t t = 0; t < sizeof(ns) / sizeof(ns[0]); t++) {
        unsigned n = ns[t];
        size_t   share[16] = { 0 };

        memset(owners, 0, sizeof(owners));
        for (unsigned k = 1; k <= n; k++) {
            struct shard sh = { k, n };

            for (size_t i = 0; i < FLEET; i++) {
                snprintf(name, sizeof(name), "server-%zu", i);
                if (shard_keeps(&sh, name)) {
                    owners[i]++;
                    share[k - 1]++;
                }
            }
        }
        for (size_t i = 0; i < FLEET; i++)
            assert_int_equal(owners[i], 1);
        for (unsigned k = 0; k < n; k++) {
            double mean = (double)FLEET / n;

            assert_true((double)share[k] > 0.85 * mean);
            assert_true((double)share[k] < 1.15 * mean);
        }
    }
}

/* No sharding keeps everything. */
static void
test_no_shard(void **state)
{
    struct shard none = { 0, 0 };

    (void)state;
    assert_true(shard_keeps(&none, "anything"));
    assert_true(shard_keeps(NULL, "anything"));
}

static bool
keep_cb(const struct config_server *d, void *arg)
{
    return shard_keeps(arg, d->name);
}

/* Build a config of names[0..n) (http URLs) and parse it. */
static struct config *
parse_fleet(size_t n)
{
    size_t         cap = 64 + n * 64;
    char          *text = malloc(cap);
    size_t         off = 0;
    struct config *cfg = NULL;
    char          *cause = NULL;

    off += (size_t)snprintf(text + off, cap - off, "{\"mcpServers\":{");
    for (size_t i = 0; i < n; i++)
        off += (size_t)snprintf(text + off, cap - off,
            "%s\"srv%zu\":{\"url\":\"http://127.0.0.1:%zu/mcp\"}",
            i > 0 ? "," : "", i, 20000 + i);
    off += (size_t)snprintf(text + off, cap - off, "}}");
    assert_int_equal(config_parse(text, off, "test", &cfg, &cause), 0);
    free(text);
    return cfg;
}

/* config_retain keeps a shard's servers in order; the shards of a grown
 * fleet hold every old server where it was. */
static void
test_retain_and_growth(void **state)
{
    enum { SMALL = 60, BIG = 200, N = 3 };
    unsigned where[SMALL];
    size_t   total = 0;

    (void)state;
    for (unsigned k = 1; k <= N; k++) {
        struct shard   sh = { k, N };
        struct config *cfg = parse_fleet(SMALL);
        size_t         kept = config_retain(cfg, keep_cb, &sh);
        long           last = -1;

        assert_int_equal(kept, cfg->nservers);
        total += kept;
        for (size_t i = 0; i < cfg->nservers; i++) {
            long idx = strtol(cfg->servers[i].name + 3, NULL, 10);

            assert_true(shard_keeps(&sh, cfg->servers[i].name));
            assert_true(idx > last);            /* order kept */
            last = idx;
            where[idx] = k;
        }
        config_free(cfg);
    }
    assert_int_equal(total, SMALL);
    /* Grow the fleet: every old server stays in its shard. */
    for (unsigned k = 1; k <= N; k++) {
        struct shard   sh = { k, N };
        struct config *cfg = parse_fleet(BIG);

        config_retain(cfg, keep_cb, &sh);
        for (size_t i = 0; i < cfg->nservers; i++) {
            long idx = strtol(cfg->servers[i].name + 3, NULL, 10);

            if (idx < SMALL)
                assert_int_equal(where[idx], k);
        }
        config_free(cfg);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hash_vectors),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_partition),
        cmocka_unit_test(test_no_shard),
        cmocka_unit_test(test_retain_and_growth),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
