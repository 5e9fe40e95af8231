/*
 * Tests for io/proc.c (issue 34, the process view): the stat line (a comm
 * with spaces and parentheses, bad lines refused), the matching rule
 * (plain commands exactly, package runners by the package's name), and a
 * walk of a /proc made in a temporary directory (the tree's links, a
 * descendant, the command line sanitized, the uid).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine/proc.h"

/* fields 4..24 after the state: ppid pgid sid tty tpgid flags minflt
 * cminflt majflt cmajflt utime stime cutime cstime prio nice threads
 * itreal starttime vsize rss */
#define TAIL " 1 1234 1234 0 -1 4194304 100 0 0 0 250 50 0 0 20 0 1 0 " \
    "98765 1000000 321 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 " \
    "0 0 0 0 0 0"

static void
test_stat_line(void **state)
{
    struct proc_stat st;

    (void)state;
    assert_int_equal(proc_parse_stat("1234 (a) b) S" TAIL "\n", &st), 0);
    assert_int_equal(st.pid, 1234);
    assert_string_equal(st.comm, "a) b");
    assert_int_equal(st.state, 'S');
    assert_int_equal(st.ppid, 1);
    assert_int_equal(st.pgid, 1234);
    assert_true(st.ticks == 300);
    assert_true(st.start == 98765);
    assert_int_equal(st.rss_pages, 321);
    /* spaces and a ( in the name, another state */
    assert_int_equal(proc_parse_stat("7 (my (x) server) Z" TAIL, &st), 0);
    assert_string_equal(st.comm, "my (x) server");
    assert_int_equal(st.state, 'Z');
    /* an empty name */
    assert_int_equal(proc_parse_stat("8 () R" TAIL, &st), 0);
    assert_string_equal(st.comm, "");
    /* a control character in the name is not kept */
    assert_int_equal(proc_parse_stat("9 (a\x1b[31mb) S" TAIL, &st), 0);
    assert_null(strchr(st.comm, '\x1b'));
}

static void
test_stat_bad(void **state)
{
    struct proc_stat st;

    (void)state;
    assert_int_equal(proc_parse_stat("", &st), -1);
    assert_int_equal(proc_parse_stat("x (a) S" TAIL, &st), -1);
    assert_int_equal(proc_parse_stat("0 (a) S" TAIL, &st), -1);
    assert_int_equal(proc_parse_stat("12 a) S" TAIL, &st), -1);
    assert_int_equal(proc_parse_stat("12 (a S 1 2 3", &st), -1);
    /* cut before the rss */
    assert_int_equal(proc_parse_stat("12 (a) S 1 2 3 4 5 6", &st), -1);
    assert_int_equal(proc_parse_stat("12 (a) 5" TAIL, &st), -1);
    assert_int_equal(proc_parse_stat("99999999999 (a) S" TAIL, &st), -1);
}

#define V(...) ((char *[]){ __VA_ARGS__ })
#define N(...) (sizeof((char *[]){ __VA_ARGS__ }) / sizeof(char *))
#define MATCH(cmd, args, nargs, ...) \
    proc_argv_matches(cmd, args, nargs, V(__VA_ARGS__), N(__VA_ARGS__))

static void
test_match_plain(void **state)
{
    char *args[] = { "/srv/fake.mjs", "--mode=healthy" };

    (void)state;
    assert_true(MATCH("node", args, 2, "node", "/srv/fake.mjs",
        "--mode=healthy"));
    /* argv[0] by its last component: another agent gave the full path */
    assert_true(MATCH("node", args, 2, "/usr/bin/node", "/srv/fake.mjs",
        "--mode=healthy"));
    assert_true(MATCH("/usr/local/bin/node", args, 2, "node",
        "/srv/fake.mjs", "--mode=healthy"));
    /* one word more, one less, another, another order: not it */
    assert_false(MATCH("node", args, 2, "node", "/srv/fake.mjs",
        "--mode=healthy", "--tag=x"));
    assert_false(MATCH("node", args, 2, "node", "/srv/fake.mjs"));
    assert_false(MATCH("node", args, 2, "node", "/srv/fake.mjs",
        "--mode=slow"));
    assert_false(MATCH("node", args, 2, "node", "--mode=healthy",
        "/srv/fake.mjs"));
    assert_false(MATCH("nodejs", args, 2, "node", "/srv/fake.mjs",
        "--mode=healthy"));
    assert_false(proc_argv_matches("node", args, 2, NULL, 0));
    /* no args */
    assert_true(MATCH("mcp-server-git", NULL, 0, "mcp-server-git"));
    assert_false(MATCH("mcp-server-git", NULL, 0, "mcp-server-git", "-v"));
}

static void
test_match_runners(void **state)
{
    char *npx[] = { "-y", "@modelcontextprotocol/server-everything@2025.1",
        "stdio" };
    char *uvx[] = { "mcp-server-fetch==1.0", "--ignore-robots-txt" };
    char *dlx[] = { "dlx", "@acme/files" };

    (void)state;
    /* npx as npm shows it, its sh, and the node it became */
    assert_true(MATCH("npx", npx, 3, "npm", "exec",
        "@modelcontextprotocol/server-everything@2025.1", "stdio"));
    assert_true(MATCH("npx", npx, 3, "sh", "-c",
        "mcp-server-everything", "stdio"));
    assert_true(MATCH("npx", npx, 3, "node",
        "/home/u/.npm/_npx/1f/node_modules/.bin/mcp-server-everything",
        "stdio"));
    /* the words after the package must follow */
    assert_false(MATCH("npx", npx, 3, "node",
        "/home/u/.npm/_npx/1f/node_modules/.bin/mcp-server-everything"));
    /* the name inside a longer word does not match */
    assert_false(MATCH("npx", npx, 3, "node", "/x/server-everythingness",
        "stdio"));
    assert_false(MATCH("npx", npx, 3, "node", "/x/other", "stdio"));
    /* uvx: the version is not part of the name */
    assert_true(MATCH("uvx", uvx, 2, "/home/u/.cache/uv/bin/python",
        "/home/u/.cache/uv/archive/x/bin/mcp-server-fetch",
        "--ignore-robots-txt"));
    assert_false(MATCH("uvx", uvx, 2, "python", "mcp-server-fetcher",
        "--ignore-robots-txt"));
    /* pnpm dlx names the package after dlx; plain pnpm is a command */
    assert_true(MATCH("pnpm", dlx, 2, "node", "/p/node_modules/@acme/files/"
        "index.js"));
    assert_false(MATCH("pnpm", (char *[]){ "files" }, 1, "node",
        "/p/node_modules/@acme/files/index.js"));
    /* a runner with no package: the plain rule, exactly */
    assert_true(MATCH("npx", (char *[]){ "-y" }, 1, "npx", "-y"));
    assert_false(MATCH("npx", (char *[]){ "-y" }, 1, "node", "x"));
}

/* A /proc of our own in a temporary directory. */
static char root[64];

static void
put(const char *rel, const char *text, size_t len)
{
    char  path[256];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", root, rel);
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    fclose(f);
}

static void
proc(int pid, int ppid, const char *comm, const char *cmdline, size_t clen,
    int uid)
{
    char dir[256], line[512], rel[64];

    snprintf(dir, sizeof(dir), "%s/%d", root, pid);
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(line, sizeof(line), "%d (%s) S %d %d 0 0 -1 0 0 0 0 0 %d 10 0 "
        "0 20 0 1 0 %d 1000 %d 0\n", pid, comm, ppid, pid, pid, 1000 + pid,
        pid * 10);
    snprintf(rel, sizeof(rel), "%d/stat", pid);
    put(rel, line, strlen(line));
    snprintf(rel, sizeof(rel), "%d/cmdline", pid);
    put(rel, cmdline, clen);
    snprintf(line, sizeof(line), "Name:\t%s\nUid:\t%d\t%d\t%d\t%d\n", comm,
        uid, uid, uid, uid);
    snprintf(rel, sizeof(rel), "%d/status", pid);
    put(rel, line, strlen(line));
}

static void
test_walk(void **state)
{
    struct proc_table  t = { 0 };
    struct proc_entry *e, *a, *b;
    char               cmd[] = "node\0/x/fake.mjs\0--tag=\x1b[2Jx\0";

    (void)state;
    snprintf(root, sizeof(root), "/tmp/mcptop-proc-XXXXXX");
    assert_non_null(mkdtemp(root));
    put("uptime", "5000.50 100.00\n", 15);
    put("self", "x", 1);           /* not a number: skipped */
    proc(1, 0, "init", "init\0", 5, 0);
    proc(40, 1, "npm exec x", "npm\0exec\0x\0", 11, 1000);
    proc(41, 40, "sh", "sh\0-c\0x\0", 8, 1000);
    proc(42, 41, "node", cmd, sizeof(cmd) - 1, 1000);
    proc(7, 1, "kthreadd", "", 0, 0);
    assert_int_equal(proc_table_scan(&t, root), 0);
    assert_int_equal(t.n, 5);
    assert_false(t.truncated);
    assert_true(t.uptime_s > 5000.0);
    /* sorted by pid, found by pid */
    assert_int_equal(t.v[0].st.pid, 1);
    assert_int_equal(t.v[4].st.pid, 42);
    assert_null(proc_table_find(&t, 2));
    a = proc_table_find(&t, 40);
    b = proc_table_find(&t, 42);
    assert_non_null(a);
    assert_non_null(b);
    assert_string_equal(a->st.comm, "npm exec x");
    /* the links: 1's children are 7 and 40, in pid order; 42 under 40 */
    e = proc_table_find(&t, 1);
    assert_int_equal(t.v[e->child].st.pid, 7);
    assert_int_equal(t.v[t.v[e->child].next].st.pid, 40);
    assert_true(proc_table_descends(&t, b, a));
    assert_true(proc_table_descends(&t, b, b));
    assert_false(proc_table_descends(&t, a, b));
    assert_false(proc_table_descends(&t, proc_table_find(&t, 7), a));
    /* details: argv as read, the shown line sanitized, the uid */
    proc_table_details(&t, root, b);
    assert_int_equal(b->argc, 3);
    assert_string_equal(b->argv[0], "node");
    assert_string_equal(b->argv[2], "--tag=\x1b[2Jx");
    assert_string_equal(b->cmdline, "node /x/fake.mjs --tag=x");
    assert_int_equal(b->uid, 1000);
    e = proc_table_find(&t, 7);
    proc_table_details(&t, root, e);
    assert_int_equal(e->argc, 0);
    assert_string_equal(e->cmdline, "");
    assert_int_equal(e->uid, 0);
    proc_table_done(&t);
    assert_int_equal(t.n, 0);
    assert_int_equal(proc_table_scan(&t, "/nonexistent-proc"), -1);
    proc_table_done(&t);
    {
        char cmdbuf[512];

        snprintf(cmdbuf, sizeof(cmdbuf), "rm -rf '%s'", root);
        assert_int_equal(system(cmdbuf), 0);
    }
}

/* Our own process by the real /proc: alive with its start time, not with
 * another one. */
static void
test_id_alive(void **state)
{
    struct proc_table  t = { 0 };
    struct proc_entry *me;
    struct proc_id     id;

    (void)state;
    assert_int_equal(proc_table_scan(&t, "/proc"), 0);
    me = proc_table_find(&t, getpid());
    assert_non_null(me);
    proc_table_details(&t, "/proc", me);
    assert_int_equal(me->uid, getuid());
    id.pid = getpid();
    id.start = me->st.start;
    id.uid = getuid();
    assert_true(proc_id_alive(&id, "/proc"));
    id.start++;
    assert_false(proc_id_alive(&id, "/proc"));
    id.start--;
    id.uid++;
    assert_false(proc_id_alive(&id, "/proc"));
    proc_table_done(&t);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stat_line),
        cmocka_unit_test(test_stat_bad),
        cmocka_unit_test(test_match_plain),
        cmocka_unit_test(test_match_runners),
        cmocka_unit_test(test_walk),
        cmocka_unit_test(test_id_alive),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
