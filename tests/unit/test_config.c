/*
 * Tests for the config loader: both file shapes, the default <- fleet <-
 * server layering of mcptop's keys, ${VAR} expansion and that expanded
 * secrets never reach a message, per-server invalid entries, whole-file
 * errors with their positions, ad-hoc URLs and config discovery. Fixtures
 * live in tests/data/config/.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/config.h"
#include "util/str.h"

#include "config_check.h"

#define DATA MCPTOP_TEST_DATA "/config/"
#define SECRET "s3cr3t-Value-9f2"

/* Load a fixture that must parse; fails the test otherwise. */
static struct config *
load_ok(const char *name)
{
    struct config *cfg = NULL;
    char          *cause = NULL;
    char          *path = str_printf(DATA "%s", name);

    if (config_load_file(path, &cfg, &cause) != 0) {
        print_error("%s: %s\n", path, cause);
        fail();
    }
    assert_null(cause);
    assert_non_null(cfg);
    assert_string_equal(cfg->origin, path);
    free(path);
    return cfg;
}

/* Load a fixture that must fail whole; returns the cause (caller frees). */
static char *
load_fail(const char *name)
{
    struct config *cfg = NULL;
    char          *cause = NULL;
    char          *path = str_printf(DATA "%s", name);

    assert_int_equal(config_load_file(path, &cfg, &cause), -1);
    assert_null(cfg);
    assert_non_null(cause);
    assert_non_null(strstr(cause, path));
    free(path);
    return cause;
}

/* Parse text that must parse. */
static struct config *
parse_ok(const char *text)
{
    return parse_as("inline", text, NULL);
}

/* Parse text that must fail; returns the cause (caller frees). */
static char *
parse_fail(const char *text)
{
    return parse_fail_as("inline", text);
}

/* Claude Desktop / Cursor shape: stdio and HTTP entries, every field. */
static void
test_mcpservers_shape(void **state)
{
    struct config              *cfg = load_ok("mcpservers.json");
    const struct config_server *s;

    (void)state;
    assert_int_equal(cfg->nservers, 6);
    assert_int_equal(cfg->nwarnings, 0);
    assert_string_equal(cfg->servers[0].name, "files");
    assert_string_equal(cfg->servers[5].name, "quiet");

    s = server(cfg, "files");
    assert_null(s->invalid);
    assert_int_equal(s->transport, CONFIG_STDIO);
    assert_string_equal(s->command, "npx");
    assert_int_equal(s->nargs, 3);
    assert_string_equal(s->args[0], "-y");
    assert_string_equal(s->args[1], "@modelcontextprotocol/server-filesystem");
    assert_string_equal(s->args[2], "/tmp");
    assert_int_equal(s->nenv, 2);
    assert_string_equal(s->env[0].name, "LOG_LEVEL");
    assert_string_equal(s->env[0].value, "debug");
    assert_string_equal(kv_get(s->env, s->nenv, "EMPTY"), "");
    assert_string_equal(s->cwd, "/srv/files");
    assert_null(s->url);
    assert_int_equal(s->nheaders, 0);

    s = server(cfg, "remote");
    assert_null(s->invalid);
    assert_int_equal(s->transport, CONFIG_HTTP);
    assert_string_equal(s->url, "https://mcp.example.com/mcp");
    assert_int_equal(s->nheaders, 2);
    assert_string_equal(kv_get(s->headers, s->nheaders, "X-Team"), "blue");
    assert_string_equal(kv_get(s->headers, s->nheaders, "Accept-Language"),
        "en");
    assert_null(s->command);
    assert_null(s->ca_file);
    assert_false(s->tls_insecure);

    s = server(cfg, "typed");
    assert_null(s->invalid);
    assert_int_equal(s->transport, CONFIG_HTTP);
    assert_string_equal(s->url, "http://127.0.0.1:3000/mcp");

    s = server(cfg, "legacy");
    assert_null(s->invalid);
    assert_int_equal(s->transport, CONFIG_HTTP);

    s = server(cfg, "typed-stdio");
    assert_null(s->invalid);
    assert_int_equal(s->transport, CONFIG_STDIO);
    assert_string_equal(s->command, "python3");
    assert_int_equal(s->nargs, 0);

    s = server(cfg, "quiet");
    assert_null(s->invalid);
    assert_string_equal(s->command, "uvx");
    config_free(cfg);
}

/* VS Code shape, with JSONC comments and trailing commas. */
static void
test_vscode_shape(void **state)
{
    struct config              *cfg = load_ok("vscode.json");
    const struct config_server *s;

    (void)state;
    assert_int_equal(cfg->nservers, 3);
    assert_int_equal(cfg->nwarnings, 0);
    s = server(cfg, "memory");
    assert_null(s->invalid);
    assert_int_equal(s->transport, CONFIG_STDIO);
    assert_string_equal(s->command, "npx");
    assert_int_equal(s->nargs, 2);
    assert_string_equal(s->args[1], "@modelcontextprotocol/server-memory");
    s = server(cfg, "github");
    assert_null(s->invalid);
    assert_int_equal(s->transport, CONFIG_HTTP);
    assert_string_equal(s->url, "https://api.githubcopilot.com/mcp/");
    s = server(cfg, "old");
    assert_null(s->invalid);
    assert_int_equal(s->transport, CONFIG_HTTP);
    config_free(cfg);
}

/* Comment markers and commas inside strings are left alone. */
static void
test_jsonc_strings_untouched(void **state)
{
    struct config *cfg;
    char          *cause;

    (void)state;
    cfg = parse_ok("{\"servers\": {\"a\": {\"command\": \"x\", "
        "\"args\": [\"http://h/*x*/\", \"a,]\", \"q\\\"//\"]}}}");
    assert_int_equal(cfg->servers[0].nargs, 3);
    assert_string_equal(cfg->servers[0].args[0], "http://h/*x*/");
    assert_string_equal(cfg->servers[0].args[1], "a,]");
    assert_string_equal(cfg->servers[0].args[2], "q\"//");
    config_free(cfg);

    /* A comma with no value before it is still an error. */
    cause = parse_fail("{\"servers\": {,}}");
    assert_non_null(strstr(cause, "not valid JSON"));
    free(cause);
}

/* Both maps load; a name declared twice makes the later one invalid. */
static void
test_both_maps_and_duplicate(void **state)
{
    struct config              *cfg = load_ok("both.json");
    const struct config_server *s;

    (void)state;
    assert_int_equal(cfg->nservers, 4);
    assert_string_equal(cfg->servers[0].name, "alpha");
    assert_null(cfg->servers[0].invalid);
    assert_string_equal(cfg->servers[0].command, "alpha-server");
    assert_null(server(cfg, "beta")->invalid);
    s = server(cfg, "gamma");
    assert_null(s->invalid);
    assert_string_equal(s->url, "http://localhost:2000/mcp");

    s = &cfg->servers[3];
    assert_string_equal(s->name, "alpha");
    assert_int_equal(s->transport, CONFIG_HTTP);
    assert_non_null(s->invalid);
    assert_non_null(strstr(s->invalid, "duplicate server name \"alpha\""));
    assert_null(s->command);
    config_free(cfg);
}

/* No mcptop keys anywhere: the CONFIG_DEFAULT_* values. */
static void
test_defaults(void **state)
{
    struct config              *cfg = load_ok("defaults.json");
    const struct config_server *s = server(cfg, "plain");

    (void)state;
    assert_null(s->invalid);
    assert_int_equal(s->ping_interval_ms, CONFIG_DEFAULT_PING_INTERVAL_MS);
    assert_int_equal(s->timeout_ms, CONFIG_DEFAULT_TIMEOUT_MS);
    assert_int_equal(s->open_deadline_ms, CONFIG_DEFAULT_OPEN_DEADLINE_MS);
    assert_int_equal(s->teardown_ms, CONFIG_DEFAULT_TEARDOWN_MS);
    assert_int_equal(s->max_message_bytes, CONFIG_DEFAULT_MAX_MESSAGE_BYTES);
    assert_int_equal(s->era, CONFIG_ERA_AUTO);
    assert_int_equal(s->ntags, 0);
    assert_null(s->ca_file);
    assert_false(s->tls_insecure);
    config_free(cfg);
}

/* A broken entry keeps its tags (a filter, check --json and the
 * exporter's labels see it under its team): a bad URL, an unset variable
 * in a header, a bad key after the tags, and a duplicate name. */
static void
test_broken_entries_keep_tags(void **state)
{
    struct config              *cfg;
    const struct config_server *s;

    (void)state;
    unsetenv("MCPTOP_TEST_UNSET_TOKEN");
    cfg = parse_as("t.json", "{\"mcpServers\": {"
        "\"badurl\": {\"url\": \"notaurl\", \"tags\": [\"team:db\"]},"
        "\"unset\": {\"url\": \"http://h/mcp\", \"headers\": "
        "{\"Authorization\": \"Bearer ${MCPTOP_TEST_UNSET_TOKEN}\"}, "
        "\"tags\": [\"team:web\", \"prod\"]},"
        "\"badkey\": {\"tags\": [\"team:ops\"], \"url\": \"http://h/\", "
        "\"timeout_ms\": \"soon\"},"
        "\"dup\": {\"url\": \"http://h/a\"},"
        "\"dup\": {\"url\": \"http://h/b\", \"tags\": [\"team:dup\"]}}}",
        NULL);
    assert_non_null(cfg);
    s = server(cfg, "badurl");
    assert_non_null(s->invalid);
    assert_int_equal(s->ntags, 1);
    assert_string_equal(s->tags[0], "team:db");
    s = server(cfg, "unset");
    assert_non_null(s->invalid);
    assert_non_null(strstr(s->invalid, "MCPTOP_TEST_UNSET_TOKEN"));
    assert_int_equal(s->ntags, 2);
    assert_string_equal(s->tags[0], "team:web");
    assert_string_equal(s->tags[1], "prod");
    s = server(cfg, "badkey");
    assert_non_null(s->invalid);
    assert_int_equal(s->ntags, 1);
    assert_string_equal(s->tags[0], "team:ops");
    assert_int_equal(cfg->nservers, 5);
    assert_non_null(cfg->servers[4].invalid);
    assert_int_equal(cfg->servers[4].ntags, 1);
    assert_string_equal(cfg->servers[4].tags[0], "team:dup");
    config_free(cfg);
}

/* "type": "sse" asks for the 2024-11-05 HTTP+SSE transport itself (an
 * HTTP server still); "http" and "streamable-http" do not. */
static void
test_type_sse(void **state)
{
    struct config *cfg;

    (void)state;
    cfg = parse_as("t.json", "{\"mcpServers\": {"
        "\"a\": {\"type\": \"sse\", \"url\": \"http://h/sse\"},"
        "\"b\": {\"type\": \"http\", \"url\": \"http://h/mcp\"},"
        "\"c\": {\"type\": \"streamable-http\", \"url\": \"http://h/mcp\"},"
        "\"d\": {\"url\": \"http://h/mcp\"}}}", NULL);
    assert_int_equal(server(cfg, "a")->transport, CONFIG_HTTP);
    assert_true(server(cfg, "a")->http_sse);
    assert_false(server(cfg, "b")->http_sse);
    assert_false(server(cfg, "c")->http_sse);
    assert_false(server(cfg, "d")->http_sse);
    config_free(cfg);
}

/* Fleet values override defaults; server values override the fleet. */
static void
test_fleet_and_server_overrides(void **state)
{
    struct config              *cfg = load_ok("fleet.json");
    const struct config_server *s;

    (void)state;
    assert_int_equal(cfg->nwarnings, 0);
    s = server(cfg, "inherits");
    assert_null(s->invalid);
    assert_int_equal(s->ping_interval_ms, 2500);
    assert_int_equal(s->timeout_ms, 4000);
    assert_int_equal(s->open_deadline_ms, 6000);
    assert_int_equal(s->teardown_ms, 1500);
    assert_int_equal(s->crash_window_ms, 20000);
    assert_int_equal(s->stream_idle_ms, 90000);
    assert_int_equal(s->max_message_bytes, 1048576);
    assert_int_equal(s->era, CONFIG_ERA_MODERN);
    assert_string_equal(s->ca_file, "/etc/mcptop/ca.pem");
    assert_false(s->tls_insecure);
    assert_int_equal(s->ntags, 2);
    assert_string_equal(s->tags[0], "prod");
    assert_string_equal(s->tags[1], "eu");

    s = server(cfg, "overrides");
    assert_null(s->invalid);
    assert_int_equal(s->ping_interval_ms, 250);
    assert_int_equal(s->timeout_ms, 500);
    assert_int_equal(s->open_deadline_ms, 700);
    assert_int_equal(s->teardown_ms, 900);
    assert_int_equal(s->crash_window_ms, 5000);
    assert_int_equal(s->stream_idle_ms, 2000);
    assert_int_equal(s->max_message_bytes, 4096);
    assert_int_equal(s->era, CONFIG_ERA_LEGACY);
    assert_string_equal(s->ca_file, "/tmp/other.pem");
    assert_true(s->tls_insecure);
    assert_int_equal(s->ntags, 1);
    assert_string_equal(s->tags[0], "staging");

    s = server(cfg, "local");
    assert_null(s->invalid);
    assert_int_equal(s->era, CONFIG_ERA_AUTO);
    assert_int_equal(s->ntags, 0);
    assert_int_equal(s->timeout_ms, 4000);
    config_free(cfg);
}

/* ${VAR}, ${env:VAR}, ${VAR:-default} and $$ in headers, args and env. */
static void
test_env_expansion(void **state)
{
    struct config              *cfg;
    const struct config_server *s;

    (void)state;
    setenv("MCPTOP_TEST_TOKEN", SECRET, 1);
    setenv("MCPTOP_TEST_DIR", "/opt/d", 1);
    setenv("MCPTOP_TEST_CRLF", "a\r\nX-Evil: 1", 1);
    unsetenv("MCPTOP_TEST_UNSET_VAR");
    cfg = load_ok("expand.json");

    s = server(cfg, "api");
    assert_null(s->invalid);
    assert_string_equal(kv_get(s->headers, s->nheaders, "Authorization"),
        "Bearer " SECRET);
    assert_string_equal(kv_get(s->headers, s->nheaders, "X-Price"),
        "$5 and $ alone");
    assert_string_equal(kv_get(s->headers, s->nheaders, "X-Vs"), SECRET);
    assert_string_equal(kv_get(s->headers, s->nheaders, "X-Default"),
        "fallback");

    s = server(cfg, "tool");
    assert_null(s->invalid);
    assert_int_equal(s->nargs, 3);
    assert_string_equal(s->args[0], "--token=" SECRET);
    assert_string_equal(s->args[2], "/opt/d/x");
    /* The display form keeps the reference, never the value. */
    assert_non_null(s->args_shown);
    assert_null(strstr(s->args_shown[0], SECRET));
    assert_non_null(strstr(s->args_shown[0], "${"));
    assert_string_equal(kv_get(s->env, s->nenv, "API_KEY"), SECRET);
    assert_string_equal(kv_get(s->env, s->nenv, "PLAIN"), "value");

    /* Claude Code expands "url" too; the URL is shown as written. */
    s = server(cfg, "url-expanded");
    assert_null(s->invalid);
    assert_string_equal(s->url, "https://" SECRET ".example.com/mcp");
    assert_null(strstr(s->url_shown, SECRET));
    assert_non_null(strstr(s->url_shown, "${MCPTOP_TEST_TOKEN}"));
    /* The names expanded, never the values. */
    assert_int_equal(s->nvars, 1);
    assert_string_equal(s->vars[0], "MCPTOP_TEST_TOKEN");
    config_free(cfg);
}

/* An unset variable makes the server invalid, naming only the variable. */
static void
test_unset_var_invalid_and_no_leak(void **state)
{
    struct config              *cfg;
    const struct config_server *s;
    size_t                      i;

    (void)state;
    setenv("MCPTOP_TEST_TOKEN", SECRET, 1);
    setenv("MCPTOP_TEST_CRLF", "a\r\nX-Evil: " SECRET, 1);
    unsetenv("MCPTOP_TEST_UNSET_VAR");
    cfg = load_ok("expand.json");

    s = server(cfg, "missing");
    assert_invalid(cfg, "missing",
        "env \"API_KEY\": variable \"MCPTOP_TEST_UNSET_VAR\" is not set");
    assert_int_equal(s->transport, CONFIG_STDIO);
    assert_invalid(cfg, "missing-header", "header \"Authorization\": "
        "variable \"MCPTOP_TEST_UNSET_VAR\" is not set");
    assert_invalid(cfg, "injection",
        "header \"X-Inject\": value contains a control character");

    for (i = 0; i < cfg->nservers; i++) {
        if (cfg->servers[i].invalid != NULL)
            assert_null(strstr(cfg->servers[i].invalid, SECRET));
    }
    for (i = 0; i < cfg->nwarnings; i++)
        assert_null(strstr(cfg->warnings[i], SECRET));
    config_free(cfg);
}

/* config_expand on its own. */
static void
test_expand(void **state)
{
    char *r;
    char *cause = NULL;

    (void)state;
    setenv("MCPTOP_TEST_TOKEN", SECRET, 1);
    setenv("MCPTOP_TEST_EMPTY", "", 1);
    unsetenv("MCPTOP_TEST_UNSET_VAR");

    r = config_expand("a${MCPTOP_TEST_TOKEN}b$$c$d$", &cause);
    assert_non_null(r);
    assert_null(cause);
    assert_string_equal(r, "a" SECRET "b$c$d$");
    free(r);

    r = config_expand("[${MCPTOP_TEST_EMPTY}]", &cause);
    assert_string_equal(r, "[]");
    free(r);
    r = config_expand("${MCPTOP_TEST_EMPTY:-dflt}", &cause);
    assert_string_equal(r, "dflt");
    free(r);
    r = config_expand("$${MCPTOP_TEST_UNSET_VAR}", &cause);
    assert_string_equal(r, "${MCPTOP_TEST_UNSET_VAR}");
    free(r);

    r = config_expand("x ${MCPTOP_TEST_UNSET_VAR} y", &cause);
    assert_null(r);
    assert_string_equal(cause,
        "variable \"MCPTOP_TEST_UNSET_VAR\" is not set");
    free(cause);

    r = config_expand("Bearer ${MCPTOP_TEST_TOKEN", &cause);
    assert_null(r);
    assert_string_equal(cause,
        "unterminated reference \"${MCPTOP_TEST_TOKEN\"");
    assert_null(strstr(cause, SECRET));
    free(cause);

    r = config_expand("${}", &cause);
    assert_null(r);
    assert_non_null(strstr(cause, "empty reference"));
    free(cause);

    r = config_expand("${input:api-key}", &cause);
    assert_null(r);
    assert_string_equal(cause, "unsupported reference \"${input:api-key}\"");
    free(cause);
}

/* Unknown keys warn with server and key; other clients' keys do not. */
static void
test_unknown_key_warning(void **state)
{
    struct config *cfg = load_ok("unknown_keys.json");

    (void)state;
    assert_int_equal(cfg->nwarnings, 4);
    assert_string_equal(cfg->warnings[0],
        "\"mcptop\": unknown key \"colour\" (ignored)");
    assert_string_equal(cfg->warnings[1],
        "server \"x\": unknown key \"foo\" (ignored)");
    assert_string_equal(cfg->warnings[2],
        "server \"x\": key \"headers\" is ignored for a stdio server");
    assert_string_equal(cfg->warnings[3],
        "server \"y\": key \"cwd\" is ignored for an http server");
    assert_null(server(cfg, "x")->invalid);
    assert_int_equal(server(cfg, "x")->nheaders, 0);
    assert_null(server(cfg, "y")->invalid);
    assert_null(server(cfg, "y")->cwd);
    assert_int_equal(server(cfg, "y")->ping_interval_ms, 1000);
    config_free(cfg);
}

/* Each broken entry is invalid with a message naming the problem. */
static void
test_bad_entries(void **state)
{
    struct config              *cfg = load_ok("bad_entries.json");
    const struct config_server *s;

    (void)state;
    assert_int_equal(cfg->nservers, 24);
    assert_invalid(cfg, "number", "server entry is a number, expected an "
        "object");
    assert_invalid(cfg, "spaces", "malformed url");
    assert_int_equal(server(cfg, "spaces")->transport, CONFIG_HTTP);
    assert_invalid(cfg, "scheme", "unsupported scheme \"ws\"");
    assert_invalid(cfg, "noscheme", "unsupported scheme");
    assert_invalid(cfg, "nohost", "malformed url (empty host)");
    assert_invalid(cfg, "badport", "malformed url (bad port)");
    assert_invalid(cfg, "emptycmd", "empty command");
    assert_int_equal(server(cfg, "emptycmd")->transport, CONFIG_STDIO);
    assert_invalid(cfg, "args-string",
        "\"args\" is a string, expected an array of strings");
    assert_invalid(cfg, "args-number",
        "\"args\"[1] is a number, expected a string");
    assert_invalid(cfg, "env-number",
        "env \"PORT\" is a number, expected a string");
    assert_invalid(cfg, "env-array",
        "\"env\" is an array, expected an object of strings");
    assert_invalid(cfg, "headers-bool",
        "header \"X-On\" is a boolean, expected a string");
    assert_invalid(cfg, "header-name", "header \"Bad Name\": not a valid "
        "name");
    assert_invalid(cfg, "both", "has both \"url\" and \"command\"");
    assert_invalid(cfg, "neither", "has neither \"url\" nor \"command\"");
    assert_invalid(cfg, "badtype", "unsupported \"type\" \"websocket\"");
    assert_invalid(cfg, "type-no-url", "\"type\" \"http\" needs a \"url\"");
    assert_invalid(cfg, "bad-ping", "\"ping_interval_s\"");
    assert_invalid(cfg, "bad-timeout", "\"timeout_ms\" must be an integer");
    assert_invalid(cfg, "bad-tags", "\"tags\"[1] is a number");
    assert_invalid(cfg, "bad-era", "\"era\" must be");
    assert_invalid(cfg, "bad-tls", "\"tls_insecure\" is a string");
    assert_invalid(cfg, "dup-key", "duplicate key \"url\"");

    s = server(cfg, "fine");
    assert_null(s->invalid);
    assert_string_equal(s->url, "http://h:8080/mcp");
    config_free(cfg);
}

/* A per-server key out of range: that server only. */
static void
test_server_key_range(void **state)
{
    struct config *cfg;

    (void)state;
    cfg = parse_ok("{\"mcpServers\": {"
        "\"a\": {\"url\": \"http://h/\", \"max_message_bytes\": 0},"
        "\"b\": {\"url\": \"http://h/\", \"ping_interval_s\": 1e400},"
        "\"c\": {\"url\": \"http://h/\", \"ping_interval_s\": 0.0001},"
        "\"d\": {\"url\": \"http://h/\", \"open_deadline_ms\": 3e9},"
        "\"e\": {\"url\": \"http://h/\", \"teardown_ms\": \"5\"},"
        "\"f\": {\"url\": \"http://h/\", \"ping_interval_s\": 0.0015}}}");
    assert_invalid(cfg, "a", "\"max_message_bytes\"");
    assert_invalid(cfg, "b", "\"ping_interval_s\"");
    assert_invalid(cfg, "c", "\"ping_interval_s\"");
    assert_invalid(cfg, "d", "\"open_deadline_ms\"");
    assert_invalid(cfg, "e", "\"teardown_ms\"");
    assert_null(server(cfg, "f")->invalid);
    assert_int_equal(server(cfg, "f")->ping_interval_ms, 2);
    config_free(cfg);
}

/* Keys are case-sensitive: "URL" is an unknown key, not "url". */
static void
test_keys_case_sensitive(void **state)
{
    struct config *cfg;

    (void)state;
    cfg = parse_ok("{\"mcpServers\": {\"a\": {\"URL\": \"http://h/\", "
        "\"command\": \"x\"}}, \"MCPTOP\": {\"timeout_ms\": 1}}");
    assert_null(cfg->servers[0].invalid);
    assert_int_equal(cfg->servers[0].transport, CONFIG_STDIO);
    assert_int_equal(cfg->servers[0].timeout_ms, CONFIG_DEFAULT_TIMEOUT_MS);
    assert_true(has_warning(cfg, "server \"a\": unknown key \"URL\""));
    config_free(cfg);
}

/* Whole-file errors: empty, not JSON (with position), wrong shape. */
static void
test_whole_file_errors(void **state)
{
    char *cause;
    char *expect;

    (void)state;
    cause = load_fail("empty.json");
    expect = str_printf("%s: empty file", DATA "empty.json");
    assert_string_equal(cause, expect);
    free(expect);
    free(cause);

    cause = load_fail("not_json.json");
    expect = str_printf("%s:3:26: not valid JSON", DATA "not_json.json");
    assert_string_equal(cause, expect);
    free(expect);
    free(cause);

    cause = load_fail("top_array.json");
    assert_non_null(strstr(cause, "top level is an array, expected an "
        "object"));
    free(cause);

    cause = load_fail("no_servers.json");
    assert_non_null(strstr(cause, "no \"mcpServers\" or \"servers\" "
        "object"));
    free(cause);

    cause = load_fail("bad_fleet.json");
    assert_non_null(strstr(cause, "\"mcptop\": \"timeout_ms\" must be an "
        "integer"));
    free(cause);

    cause = load_fail("does-not-exist.json");
    assert_non_null(strstr(cause, strerror(ENOENT)));
    free(cause);

    cause = parse_fail("  \n\t ");
    assert_string_equal(cause, "inline: empty file");
    free(cause);

    cause = parse_fail("{\"mcpServers\": {}}\n  x");
    assert_string_equal(cause, "inline:2:3: not valid JSON");
    free(cause);

    cause = parse_fail("{\"mcpServers\": [1]}");
    assert_string_equal(cause,
        "inline: \"mcpServers\" is an array, expected an object");
    free(cause);

    cause = parse_fail("{\"mcpServers\": {}, \"mcpServers\": {}}");
    assert_string_equal(cause, "inline: duplicate key \"mcpServers\"");
    free(cause);

    cause = parse_fail("{\"mcptop\": 3, \"servers\": {}}");
    assert_string_equal(cause,
        "inline: \"mcptop\" is a number, expected an object");
    free(cause);
}

/* Text with a NUL byte is not JSON; the position is the NUL. */
static void
test_nul_byte(void **state)
{
    static const char text[] = "{\"mcpServers\": {}}\0";
    struct config    *cfg = NULL;
    char             *cause = NULL;

    (void)state;
    assert_int_equal(config_parse(text, sizeof text - 1, "t", &cfg, &cause),
        -1);
    assert_string_equal(cause, "t:1:19: not valid JSON");
    free(cause);
}

/* An empty server map is a valid, empty fleet. */
static void
test_empty_map(void **state)
{
    struct config *cfg = parse_ok("{\"servers\": {}}");

    (void)state;
    assert_int_equal(cfg->nservers, 0);
    assert_string_equal(cfg->origin, "inline");
    config_free(cfg);
    config_free(NULL);
}

/* Files over 16 MiB and directories are refused. */
static void
test_file_limits(void **state)
{
    char  dir[] = "/tmp/mcptop-config-XXXXXX";
    char *path;
    char *cause = NULL;
    struct config *cfg = NULL;
    int   fd;

    (void)state;
    assert_non_null(mkdtemp(dir));
    path = str_printf("%s/big.json", dir);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, 16 * 1024 * 1024 + 1), 0);
    close(fd);
    assert_int_equal(config_load_file(path, &cfg, &cause), -1);
    assert_null(cfg);
    assert_non_null(strstr(cause, "larger than 16 MiB"));
    free(cause);
    unlink(path);
    free(path);

    assert_int_equal(config_load_file(dir, &cfg, &cause), -1);
    assert_non_null(strstr(cause, "a directory, not a regular file"));
    free(cause);
    rmdir(dir);
}

/* An ad-hoc URL becomes one HTTP server named host:port. */
static void
test_for_url(void **state)
{
    static const struct {
        const char *url;
        const char *name;
    } ok[] = {
        { "http://localhost:8080/mcp", "localhost:8080" },
        { "https://mcp.example.com/mcp", "mcp.example.com:443" },
        { "HTTP://Example.com", "Example.com:80" },
        { "http://[::1]/mcp", "[::1]:80" },
        { "http://[::1]:9000/mcp", "[::1]:9000" },
        { "https://user:pw@host:8443/x?y#z", "host:8443" },
        { "http://h:/mcp", "h:80" },
    };
    struct config *cfg;
    size_t         i;

    (void)state;
    for (i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        cfg = config_for_url(ok[i].url);
        assert_non_null(cfg);
        assert_string_equal(cfg->origin, "command line");
        assert_int_equal(cfg->nservers, 1);
        assert_null(cfg->servers[0].invalid);
        assert_string_equal(cfg->servers[0].name, ok[i].name);
        assert_string_equal(cfg->servers[0].url, ok[i].url);
        assert_int_equal(cfg->servers[0].transport, CONFIG_HTTP);
        assert_int_equal(cfg->servers[0].timeout_ms,
            CONFIG_DEFAULT_TIMEOUT_MS);
        assert_int_equal(cfg->servers[0].ping_interval_ms,
            CONFIG_DEFAULT_PING_INTERVAL_MS);
        config_free(cfg);
    }

    cfg = config_for_url("http://exa mple.com/");
    assert_string_equal(cfg->servers[0].name, "http://exa mple.com/");
    assert_non_null(strstr(cfg->servers[0].invalid, "malformed url"));
    config_free(cfg);

    cfg = config_for_url("ftp://example.com/");
    assert_non_null(strstr(cfg->servers[0].invalid, "unsupported scheme"));
    config_free(cfg);

    cfg = config_for_url("http://");
    assert_non_null(strstr(cfg->servers[0].invalid, "empty host"));
    config_free(cfg);
}

/* Write a tiny file at path. */
static void
touch(const char *path)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fputs("{\"mcpServers\": {}}\n", f);
    fclose(f);
}

/* Discovery order: $MCPTOP_CONFIG, ./mcptop.json, XDG, ~/.config. */
static void
test_discover(void **state)
{
    char  dir[] = "/tmp/mcptop-discover-XXXXXX";
    char  oldcwd[PATH_MAX];
    char *explicit_path;
    char *xdg;
    char *xdg_file;
    char *home_file;
    char *found;

    (void)state;
    assert_non_null(getcwd(oldcwd, sizeof oldcwd));
    assert_non_null(mkdtemp(dir));
    assert_int_equal(chdir(dir), 0);
    explicit_path = str_printf("%s/explicit.json", dir);
    xdg = str_printf("%s/xdg", dir);
    xdg_file = str_printf("%s/xdg/mcptop/config.json", dir);
    home_file = str_printf("%s/.config/mcptop/config.json", dir);

    unsetenv("MCPTOP_CONFIG");
    setenv("XDG_CONFIG_HOME", xdg, 1);
    setenv("HOME", dir, 1);
    assert_null(config_discover());

    assert_int_equal(mkdir(xdg, 0700), 0);
    assert_int_equal(mkdir("xdg/mcptop", 0700), 0);
    touch(xdg_file);
    found = config_discover();
    assert_non_null(found);
    assert_string_equal(found, xdg_file);
    free(found);

    /* Without XDG_CONFIG_HOME (or with a relative one): ~/.config. */
    assert_int_equal(mkdir(".config", 0700), 0);
    assert_int_equal(mkdir(".config/mcptop", 0700), 0);
    touch(home_file);
    setenv("XDG_CONFIG_HOME", "relative", 1);
    found = config_discover();
    assert_string_equal(found, home_file);
    free(found);
    unsetenv("XDG_CONFIG_HOME");
    found = config_discover();
    assert_string_equal(found, home_file);
    free(found);
    setenv("XDG_CONFIG_HOME", xdg, 1);

    touch("mcptop.json");
    found = config_discover();
    assert_string_equal(found, "./mcptop.json");
    free(found);

    /* Named explicitly, it is the answer even before it exists: loading
     * it then says so, rather than quietly checking another fleet. */
    setenv("MCPTOP_CONFIG", explicit_path, 1);
    found = config_discover();
    assert_string_equal(found, explicit_path);
    free(found);
    touch(explicit_path);
    found = config_discover();
    assert_string_equal(found, explicit_path);
    free(found);

    assert_non_null(strstr(config_discover_help(), "$MCPTOP_CONFIG"));
    assert_non_null(strstr(config_discover_help(), "XDG_CONFIG_HOME"));

    unsetenv("MCPTOP_CONFIG");
    unlink(explicit_path);
    unlink("mcptop.json");
    unlink(xdg_file);
    unlink(home_file);
    rmdir("xdg/mcptop");
    rmdir("xdg");
    rmdir(".config/mcptop");
    rmdir(".config");
    assert_int_equal(chdir(oldcwd), 0);
    assert_int_equal(rmdir(dir), 0);
    free(explicit_path);
    free(xdg);
    free(xdg_file);
    free(home_file);
}

/* config_for_server: a deep copy that outlives the config it came from
 * (serve's /probe dials one while a reload may free the original). */
static void
test_for_server_copies(void **state)
{
    struct config *cfg = parse_ok("{\"mcpServers\": {"
        "\"web\": {\"url\": \"https://u:p@mcp.example.com/mcp?key=s\","
        " \"headers\": {\"Authorization\": \"Bearer t0k\"},"
        " \"tags\": [\"team=core\", \"prod\"], \"timeout_ms\": 1234,"
        " \"oauth\": {\"client_id\": \"cid\", \"scope\": \"a b\"},"
        " \"probe_tool\": {\"name\": \"echo\", \"arguments\": {\"x\": 1},"
        " \"expect_text\": \"ok\"}},"
        "\"cmd\": {\"command\": \"/bin/cat\", \"args\": [\"-u\", \"-\"],"
        " \"env\": {\"K\": \"v\"}, \"cwd\": \"/tmp\"}}}");
    struct config *web = config_for_server(&cfg->servers[0]);
    struct config *cmd = config_for_server(&cfg->servers[1]);
    const struct config_server *w = &web->servers[0], *c = &cmd->servers[0];

    (void)state;
    assert_true(config_server_same(&cfg->servers[0], w));
    assert_true(config_server_same(&cfg->servers[1], c));
    assert_ptr_not_equal(w->url, cfg->servers[0].url);
    assert_ptr_not_equal(w->headers, cfg->servers[0].headers);
    config_free(cfg);               /* the copies stand alone */
    assert_int_equal(web->nservers, 1);
    assert_string_equal(w->name, "web");
    assert_string_equal(w->url, "https://u:p@mcp.example.com/mcp?key=s");
    assert_null(strstr(w->url_shown, "p@"));
    assert_int_equal(w->nheaders, 1);
    assert_string_equal(w->headers[0].value, "Bearer t0k");
    assert_int_equal(w->ntags, 2);
    assert_string_equal(w->tags[1], "prod");
    assert_int_equal(w->timeout_ms, 1234);
    assert_string_equal(w->oauth->client_id, "cid");
    assert_string_equal(w->oauth->scope, "a b");
    assert_string_equal(w->probe->name, "echo");
    assert_string_equal(w->probe->expect_text, "ok");
    assert_int_equal(c->transport, CONFIG_STDIO);
    assert_string_equal(c->command, "/bin/cat");
    assert_int_equal(c->nargs, 2);
    assert_string_equal(c->args[1], "-");
    assert_string_equal(c->args_shown[0], "-u");
    assert_int_equal(c->nenv, 1);
    assert_string_equal(c->env[0].value, "v");
    assert_string_equal(c->cwd, "/tmp");
    config_free(web);
    config_free(cmd);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mcpservers_shape),
        cmocka_unit_test(test_for_server_copies),
        cmocka_unit_test(test_vscode_shape),
        cmocka_unit_test(test_jsonc_strings_untouched),
        cmocka_unit_test(test_both_maps_and_duplicate),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_fleet_and_server_overrides),
        cmocka_unit_test(test_broken_entries_keep_tags),
        cmocka_unit_test(test_type_sse),
        cmocka_unit_test(test_env_expansion),
        cmocka_unit_test(test_unset_var_invalid_and_no_leak),
        cmocka_unit_test(test_expand),
        cmocka_unit_test(test_unknown_key_warning),
        cmocka_unit_test(test_bad_entries),
        cmocka_unit_test(test_server_key_range),
        cmocka_unit_test(test_keys_case_sensitive),
        cmocka_unit_test(test_whole_file_errors),
        cmocka_unit_test(test_nul_byte),
        cmocka_unit_test(test_empty_map),
        cmocka_unit_test(test_file_limits),
        cmocka_unit_test(test_for_url),
        cmocka_unit_test(test_discover),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
