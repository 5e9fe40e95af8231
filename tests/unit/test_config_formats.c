/*
 * Tests for the config files of other MCP clients, one realistic sample
 * per client in tests/data/config/clients/ (no real secrets), and for
 * what they need: key aliases and containers, "type" spellings,
 * "disabled"/"enabled", another client's "timeout", envFile, ${input:ID},
 * the predefined variables, notes for keys read but not applied, YAML,
 * Codex's TOML, redacted URLs, ad-hoc commands and merging fleets.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/config.h"
#include "util/str.h"

#include "config_check.h"

#define CLIENTS MCPTOP_TEST_DATA "/config/clients/"
#define SECRET "s3cr3t-Value-9f2"

/* Load a sample that must parse (with opt, may be NULL). */
static struct config *
load_with(const char *name, const struct config_options *opt)
{
    struct config *cfg = NULL;
    char          *cause = NULL;
    char          *path = str_printf(CLIENTS "%s", name);

    if (config_load_file_with(path, opt, &cfg, &cause) != 0) {
        print_error("%s: %s\n", path, cause);
        fail();
    }
    assert_null(cause);
    assert_non_null(cfg);
    free(path);
    return cfg;
}

static struct config *
load(const char *name)
{
    return load_with(name, NULL);
}

/* Assert that server name is valid. */
static const struct config_server *
ok(const struct config *cfg, const char *name)
{
    const struct config_server *s = server(cfg, name);

    if (s->invalid != NULL) {
        print_error("server \"%s\" is invalid: %s\n", name, s->invalid);
        fail();
    }
    return s;
}

/* Nothing meant to be shown holds needle. */
static void
assert_not_shown(const struct config *cfg, const char *needle)
{
    size_t i;

    assert_int_equal(count_in(cfg->warnings, cfg->nwarnings, needle), 0);
    assert_int_equal(count_in(cfg->notes, cfg->nnotes, needle), 0);
    for (i = 0; i < cfg->nservers; i++) {
        const struct config_server *s = &cfg->servers[i];

        assert_null(strstr(s->name, needle));
        if (s->invalid != NULL)
            assert_null(strstr(s->invalid, needle));
        if (s->url_shown != NULL)
            assert_null(strstr(s->url_shown, needle));
        for (size_t k = 0; s->args_shown != NULL && k < s->nargs; k++)
            assert_null(strstr(s->args_shown[k], needle));
    }
}

/* Claude Desktop: stdio servers under "mcpServers". */
static void
test_claude_desktop(void **state)
{
    struct config              *cfg = load("claude_desktop_config.json");
    const struct config_server *s;

    (void)state;
    assert_int_equal(cfg->nservers, 3);
    assert_int_equal(cfg->nwarnings, 0);
    assert_int_equal(cfg->nnotes, 0);
    s = ok(cfg, "filesystem");
    assert_int_equal(s->transport, CONFIG_STDIO);
    assert_string_equal(s->command, "npx");
    assert_int_equal(s->nargs, 4);
    s = ok(cfg, "github");
    assert_string_equal(s->command, "docker");
    assert_non_null(kv_get(s->env, s->nenv, "GITHUB_PERSONAL_ACCESS_TOKEN"));
    assert_false(s->disabled);
    assert_string_equal(s->origin, CLIENTS "claude_desktop_config.json");
    ok(cfg, "sqlite");
    config_free(cfg);
}

/* Claude Code's ~/.claude.json: user servers; another directory's
 * project servers are not read. */
static void
test_claude_code_user(void **state)
{
    struct config              *cfg;
    const struct config_server *s;

    (void)state;
    unsetenv("LINEAR_API_KEY");
    cfg = load("claude.json");
    assert_int_equal(cfg->nservers, 3);
    assert_int_equal(cfg->nwarnings, 0);
    s = ok(cfg, "playwright");
    assert_int_equal(s->transport, CONFIG_STDIO);
    assert_int_equal(s->nenv, 0);
    s = ok(cfg, "notion");
    assert_int_equal(s->transport, CONFIG_HTTP);
    assert_string_equal(s->url_shown, "https://mcp.notion.com/mcp");
    s = ok(cfg, "linear");
    assert_string_equal(kv_get(s->headers, s->nheaders, "Authorization"),
        "Bearer none");
    config_free(cfg);
}

/* Claude Code's per-project servers: projects[<this directory>]. */
static void
test_claude_code_local(void **state)
{
    char           cwd[PATH_MAX];
    char          *text;
    struct config *cfg;

    (void)state;
    assert_non_null(getcwd(cwd, sizeof cwd));
    text = str_printf("{\"mcpServers\": {\"user\": {\"command\": \"u\"}},"
        "\"projects\": {\"/elsewhere\": {\"mcpServers\": {\"no\": "
        "{\"command\": \"n\"}}}, \"%s\": {\"mcpServers\": {\"here\": "
        "{\"type\": \"stdio\", \"command\": \"h\"}}}}}", cwd);
    cfg = parse_as("/home/u/.claude.json", text, NULL);
    assert_int_equal(cfg->nservers, 2);
    ok(cfg, "user");
    assert_string_equal(ok(cfg, "here")->command, "h");
    config_free(cfg);
    free(text);

    /* Only project servers for this directory is still a fleet. */
    text = str_printf("{\"numStartups\": 1, \"projects\": {\"%s\": "
        "{\"mcpServers\": {\"only\": {\"command\": \"o\"}}}}}", cwd);
    cfg = parse_as("/home/u/.claude.json", text, NULL);
    assert_int_equal(cfg->nservers, 1);
    config_free(cfg);
    free(text);
}

/* Claude Code's project .mcp.json; ${...} in a URL is refused clearly. */
static void
test_claude_code_project(void **state)
{
    struct config *cfg;

    (void)state;
    unsetenv("API_KEY");
    unsetenv("API_BASE_URL");
    cfg = load("claude_code_project.mcp.json");
    assert_int_equal(cfg->nservers, 3);
    /* ${VAR:-default} in "url", as Claude Code expands it. */
    assert_string_equal(ok(cfg, "api-server")->url,
        "https://api.example.com/mcp");
    assert_string_equal(kv_get(ok(cfg, "api-server")->headers,
        ok(cfg, "api-server")->nheaders, "Authorization"), "Bearer unset");
    ok(cfg, "sentry");
    assert_string_equal(kv_get(ok(cfg, "context7")->env,
        ok(cfg, "context7")->nenv, "DEFAULT_MINIMUM_TOKENS"), "10000");
    config_free(cfg);
}

/* Cursor: envFile merged under env, ${workspaceFolder}, a missing envFile,
 * a remote URL with secrets shown redacted. */
static void
test_cursor(void **state)
{
    char                        old[PATH_MAX];
    char                        here[PATH_MAX];
    char                       *want;
    struct config              *cfg;
    const struct config_server *s;

    (void)state;
    assert_non_null(getcwd(old, sizeof old));
    assert_int_equal(chdir(CLIENTS), 0);
    assert_non_null(getcwd(here, sizeof here));
    setenv("MCPTOP_TEST_CURSOR_KEY", SECRET, 1);
    cfg = load("cursor_mcp.json");
    assert_int_equal(cfg->nservers, 4);
    assert_int_equal(cfg->nwarnings, 0);
    ok(cfg, "server-name");

    s = ok(cfg, "with-envfile");
    want = str_printf("%s/server.py", here);
    assert_string_equal(s->args[0], want);
    free(want);
    assert_string_equal(s->args_shown[0], "${workspaceFolder}/server.py");
    assert_string_equal(kv_get(s->env, s->nenv, "LOG_LEVEL"), "info");
    assert_string_equal(kv_get(s->env, s->nenv, "DB_URL"),
        "postgres://example@localhost/db");
    assert_string_equal(kv_get(s->env, s->nenv, "API_TOKEN"),
        "tok-EXAMPLE-not-real");
    assert_string_equal(kv_get(s->env, s->nenv, "MULTI"),
        "line one\nline two");
    assert_string_equal(kv_get(s->env, s->nenv, "EMPTY"), "");
    assert_int_equal(s->nenv, 5);

    assert_invalid(cfg, "missing-envfile", "envFile "
        "\"${workspaceFolder}/no-such.env\": No such file or directory");

    s = ok(cfg, "remote");
    assert_string_equal(s->url, "https://user:ExamplePassw0rd@mcp.example."
        "com/mcp?api_key=EXAMPLEKEY123&region=eu");
    assert_string_equal(s->url_shown,
        "https://***@mcp.example.com/mcp?api_key=***&region=eu");
    assert_string_equal(kv_get(s->headers, s->nheaders, "API_KEY"), SECRET);
    assert_not_shown(cfg, SECRET);
    assert_not_shown(cfg, "ExamplePassw0rd");
    assert_not_shown(cfg, "EXAMPLEKEY123");
    assert_not_shown(cfg, "tok-EXAMPLE-not-real");
    config_free(cfg);
    assert_int_equal(chdir(old), 0);
}

/* An input function that answers SECRET and counts its calls. */
struct asked {
    int   calls;
    char  id[64];
    char  description[64];
    bool  password;
};

static const char *
answer_cb(void *arg, const char *id, const char *description, bool password)
{
    struct asked *a = arg;

    a->calls++;
    snprintf(a->id, sizeof a->id, "%s", id);
    snprintf(a->description, sizeof a->description, "%s",
        description != NULL ? description : "(none)");
    a->password = password;
    return strcmp(id, "perplexity-key") == 0 ? SECRET : NULL;
}

/* VS Code's mcp.json: inputs from MCPTOP_INPUT_<ID>, asked once through
 * the input function, or their default; never shown. */
static void
test_vscode_inputs(void **state)
{
    char                        old[PATH_MAX];
    struct config_options       opt = { 0 };
    struct asked                a = { 0 };
    struct config              *cfg;
    const struct config_server *s;

    (void)state;
    assert_non_null(getcwd(old, sizeof old));
    assert_int_equal(chdir(CLIENTS), 0);
    unsetenv("MCPTOP_INPUT_REGION");

    setenv("MCPTOP_INPUT_PERPLEXITY_KEY", SECRET, 1);
    cfg = load("vscode_mcp.json");
    assert_int_equal(cfg->nservers, 4);
    s = ok(cfg, "Perplexity");
    assert_string_equal(kv_get(s->env, s->nenv, "PERPLEXITY_API_KEY"),
        SECRET);
    assert_string_equal(kv_get(s->env, s->nenv, "REGION"), "eu-west-1");
    assert_non_null(kv_get(s->env, s->nenv, "DB_URL"));
    s = ok(cfg, "github");
    assert_string_equal(kv_get(s->headers, s->nheaders, "Authorization"),
        "Bearer " SECRET);
    ok(cfg, "fetch");
    assert_int_equal(ok(cfg, "legacy")->transport, CONFIG_HTTP);
    assert_true(has_note(cfg, "\"dev\" is ignored: VS Code's development "
        "mode (watch, debug) (server fetch)"));
    assert_not_shown(cfg, SECRET);
    config_free(cfg);

    /* Not in the environment and nobody to ask: invalid, naming the
     * variable to set. */
    unsetenv("MCPTOP_INPUT_PERPLEXITY_KEY");
    cfg = load("vscode_mcp.json");
    assert_invalid(cfg, "Perplexity", "input \"perplexity-key\" is not "
        "given (set MCPTOP_INPUT_PERPLEXITY_KEY)");
    assert_invalid(cfg, "github", "input \"perplexity-key\" is not given");
    ok(cfg, "fetch");
    config_free(cfg);

    /* Asked once, with its description and password flag, though two
     * servers use it. */
    opt.input = answer_cb;
    opt.input_arg = &a;
    cfg = load_with("vscode_mcp.json", &opt);
    s = ok(cfg, "github");
    assert_string_equal(kv_get(s->headers, s->nheaders, "Authorization"),
        "Bearer " SECRET);
    /* perplexity-key once, region once (then its default). */
    assert_int_equal(a.calls, 2);
    assert_string_equal(a.id, "region");
    assert_false(a.password);
    assert_string_equal(kv_get(ok(cfg, "Perplexity")->env,
        ok(cfg, "Perplexity")->nenv, "REGION"), "eu-west-1");
    config_free(cfg);

    a.calls = 0;
    cfg = parse_as("inline", "{\"inputs\": [{\"type\": \"promptString\", "
        "\"id\": \"tok\", \"description\": \"Token\", \"password\": true}],"
        "\"servers\": {\"x\": {\"command\": \"x\", \"args\": "
        "[\"${input:tok}\"]}}}", &opt);
    assert_int_equal(a.calls, 1);
    assert_string_equal(a.description, "Token");
    assert_true(a.password);
    assert_invalid(cfg, "x", "input \"tok\" is not given (set "
        "MCPTOP_INPUT_TOK)");
    config_free(cfg);
    assert_int_equal(chdir(old), 0);
}

/* The variable name of an input. */
static void
test_input_env_name(void **state)
{
    char *n;

    (void)state;
    n = config_input_env("perplexity-key");
    assert_string_equal(n, "MCPTOP_INPUT_PERPLEXITY_KEY");
    free(n);
    n = config_input_env("a.b c\xc3\xa9");
    assert_string_equal(n, "MCPTOP_INPUT_A_B_C__");
    free(n);
}

/* VS Code's user settings.json: "mcp": {"servers"}. */
static void
test_vscode_settings(void **state)
{
    struct config *cfg = load("vscode_settings.json");

    (void)state;
    assert_int_equal(cfg->nservers, 2);
    assert_int_equal(cfg->nwarnings, 0);
    assert_int_equal(ok(cfg, "memory")->transport, CONFIG_STDIO);
    assert_string_equal(ok(cfg, "remote")->url, "https://mcp.example.com/mcp");
    config_free(cfg);
}

/* Windsurf: serverUrl, disabled, disabledTools noted. */
static void
test_windsurf(void **state)
{
    struct config              *cfg = load("windsurf_mcp_config.json");
    const struct config_server *s;

    (void)state;
    assert_int_equal(cfg->nservers, 3);
    assert_int_equal(cfg->nwarnings, 0);
    s = ok(cfg, "figma");
    assert_int_equal(s->transport, CONFIG_HTTP);
    assert_string_equal(s->url, "https://mcp.figma.example/mcp");
    assert_true(ok(cfg, "puppeteer")->disabled);
    assert_false(ok(cfg, "github")->disabled);
    assert_int_equal(cfg->nnotes, 1);
    assert_string_equal(cfg->notes[0], "\"disabledTools\" is ignored: it "
        "sets which tools the client may call, and mcptop calls none "
        "(server github)");
    config_free(cfg);
}

/* Zed: both shapes, a remote one, "enabled": false, an extension's server
 * skipped with a note. */
static void
test_zed(void **state)
{
    struct config              *cfg = load("zed_settings.json");
    const struct config_server *s;

    (void)state;
    assert_int_equal(cfg->nservers, 4);
    assert_int_equal(cfg->nwarnings, 0);
    s = ok(cfg, "local-mcp-server");
    assert_string_equal(s->command, "some-command");
    assert_int_equal(s->nargs, 2);
    assert_false(s->disabled);
    s = ok(cfg, "older-shape");
    assert_int_equal(s->transport, CONFIG_STDIO);
    assert_string_equal(s->command, "/usr/local/bin/mcp-server");
    assert_int_equal(s->nargs, 1);
    assert_string_equal(s->args_shown[0], "--stdio");
    assert_string_equal(kv_get(s->env, s->nenv, "MODE"), "zed");
    s = ok(cfg, "remote-mcp-server");
    assert_int_equal(s->transport, CONFIG_HTTP);
    assert_true(ok(cfg, "turned-off")->disabled);
    assert_true(has_note(cfg, "skipped: a server a Zed extension starts "
        "(its command is not in the settings) (server "
        "mcp-server-github)"));
    config_free(cfg);
}

/* Cline: "timeout" in seconds, "disabled", "autoApprove" noted only where
 * it holds something, "transportType". */
static void
test_cline(void **state)
{
    struct config *cfg = load("cline_mcp_settings.json");

    (void)state;
    assert_int_equal(cfg->nservers, 3);
    assert_int_equal(cfg->nwarnings, 0);
    assert_int_equal(ok(cfg, "weather")->transport, CONFIG_STDIO);
    assert_int_equal(ok(cfg, "weather")->timeout_ms, 60000);
    assert_true(ok(cfg, "remote-sse")->disabled);
    assert_int_equal(ok(cfg, "remote-sse")->timeout_ms,
        CONFIG_DEFAULT_TIMEOUT_MS);
    assert_int_equal(ok(cfg, "streaming")->transport, CONFIG_HTTP);
    assert_int_equal(ok(cfg, "streaming")->timeout_ms, 30000);
    assert_true(has_note(cfg, "\"autoApprove\" is ignored: it sets which "
        "tools the client may call, and mcptop calls none (server "
        "weather)"));
    /* One line for the timeout rule, naming both servers. */
    assert_int_equal(count_in(cfg->notes, cfg->nnotes, "\"timeout\""), 1);
    assert_true(has_note(cfg, "in seconds (as Cline and Goose write it) "
        "(servers weather, streaming)"));
    config_free(cfg);
}

/* Gemini CLI: httpUrl, "timeout" in ms, trust and OAuth noted. */
static void
test_gemini(void **state)
{
    struct config              *cfg;
    const struct config_server *s;

    (void)state;
    unsetenv("MCPTOP_TEST_GEMINI_DB");
    cfg = load("gemini_settings.json");
    assert_int_equal(cfg->nservers, 3);
    assert_int_equal(cfg->nwarnings, 0);
    s = ok(cfg, "pythonTools");
    assert_int_equal(s->timeout_ms, 15000);
    assert_string_equal(s->cwd, "./mcp-servers/python");
    assert_string_equal(kv_get(s->env, s->nenv, "DATABASE_URL"),
        "sqlite:///tmp/x.db");
    s = ok(cfg, "httpServer");
    assert_string_equal(s->url, "http://localhost:3000/mcp");
    assert_int_equal(s->timeout_ms, 5000);
    ok(cfg, "sseServer");
    assert_true(has_note(cfg, "\"trust\" is ignored"));
    assert_true(has_note(cfg, "(server httpServer)"));
    assert_true(has_note(cfg, "\"includeTools\" is ignored"));
    assert_true(has_note(cfg, "\"oauth\" is ignored: another client's"));
    assert_true(has_note(cfg, "\"authProviderType\" is ignored"));
    assert_true(has_note(cfg, "in milliseconds (as Gemini CLI, Amazon Q and "
        "opencode write it) (servers pythonTools, httpServer)"));
    config_free(cfg);
}

/* Amazon Q: "timeout" in ms, "disabled". */
static void
test_amazonq(void **state)
{
    struct config *cfg = load("amazonq_mcp.json");

    (void)state;
    assert_int_equal(cfg->nservers, 2);
    assert_int_equal(ok(cfg, "aws-docs")->timeout_ms, 120000);
    assert_true(ok(cfg, "git")->disabled);
    config_free(cfg);
}

/* opencode: "mcp" with local/remote, the command array, environment. */
static void
test_opencode(void **state)
{
    struct config              *cfg = load("opencode.json");
    const struct config_server *s;

    (void)state;
    assert_int_equal(cfg->nservers, 3);
    assert_int_equal(cfg->nwarnings, 0);
    s = ok(cfg, "everything");
    assert_int_equal(s->transport, CONFIG_STDIO);
    assert_string_equal(s->command, "npx");
    assert_int_equal(s->nargs, 2);
    assert_string_equal(s->args[1], "@modelcontextprotocol/server-everything");
    assert_string_equal(s->args_shown[0], "-y");
    assert_string_equal(kv_get(s->env, s->nenv, "MY_ENV_VAR"),
        "my_env_var_value");
    /* opencode writes ms, even for small values. */
    assert_int_equal(s->timeout_ms, 10000);
    s = ok(cfg, "jira");
    assert_int_equal(s->transport, CONFIG_HTTP);
    assert_non_null(kv_get(s->headers, s->nheaders, "Authorization"));
    assert_true(has_note(cfg, "\"oauth\" is ignored: another client's"));
    assert_true(has_note(cfg, "(server jira)"));
    assert_true(ok(cfg, "sleepy")->disabled);
    config_free(cfg);
}

/* Goose: extensions, cmd/envs/uri, env_keys, "timeout" in seconds,
 * built-ins skipped. */
static void
test_goose(void **state)
{
    struct config              *cfg;
    const struct config_server *s;

    (void)state;
    unsetenv("MCPTOP_TEST_GOOSE_TOKEN");
    cfg = load("goose_config.yaml");
    assert_int_equal(cfg->nservers, 3);
    s = ok(cfg, "github");
    assert_int_equal(s->transport, CONFIG_STDIO);
    assert_string_equal(s->command, "npx");
    assert_int_equal(s->nargs, 2);
    assert_string_equal(s->args[1], "@modelcontextprotocol/server-github");
    assert_int_equal(s->timeout_ms, 300000);
    s = ok(cfg, "remote");
    assert_int_equal(s->transport, CONFIG_HTTP);
    assert_string_equal(s->url, "https://mcp.example.com/mcp");
    assert_string_equal(kv_get(s->headers, s->nheaders, "X-Api-Version"),
        "2");
    assert_int_equal(s->timeout_ms, 60000);
    s = ok(cfg, "old-sse");
    assert_true(s->disabled);
    assert_int_equal(s->transport, CONFIG_HTTP);
    assert_true(has_note(cfg, "skipped: a Goose extension that runs inside "
        "Goose, not a server (server developer)"));
    assert_int_equal(cfg->nwarnings, 1);
    assert_true(has_warning(cfg, "server \"github\": env_keys "
        "\"MCPTOP_TEST_GOOSE_TOKEN\" is not set in mcptop's environment"));
    config_free(cfg);

    setenv("MCPTOP_TEST_GOOSE_TOKEN", SECRET, 1);
    cfg = load("goose_config.yaml");
    assert_int_equal(cfg->nwarnings, 0);
    assert_true(has_note(cfg, "\"env_keys\" (Goose's keyring) is read from "
        "mcptop's environment (server github)"));
    assert_not_shown(cfg, SECRET);
    config_free(cfg);
    unsetenv("MCPTOP_TEST_GOOSE_TOKEN");
}

/* Continue: "mcpServers" as a list with names, requestOptions.headers. */
static void
test_continue(void **state)
{
    struct config              *cfg = load("continue_config.yaml");
    const struct config_server *s;

    (void)state;
    assert_int_equal(cfg->nservers, 3);
    s = ok(cfg, "SQLite MCP");
    assert_string_equal(s->command, "npx");
    assert_int_equal(s->nargs, 3);
    s = ok(cfg, "Remote Tools");
    assert_int_equal(s->transport, CONFIG_HTTP);
    assert_string_equal(kv_get(s->headers, s->nheaders, "Authorization"),
        "Bearer EXAMPLE");
    assert_true(has_note(cfg, "\"requestOptions.timeout\" is ignored "
        "(server Remote Tools)"));
    s = ok(cfg, "Legacy Events");
    assert_int_equal(s->transport, CONFIG_HTTP);
    assert_int_equal(cfg->nwarnings, 1);
    assert_string_equal(cfg->warnings[0], "server \"Legacy Events\": key "
        "\"env\" is ignored for an http server");
    config_free(cfg);

    /* A list entry without a name is invalid, the others load. */
    cfg = parse_as("c.yaml", "mcpServers:\n  - command: x\n  - name: b\n"
        "    command: y\n", NULL);
    assert_int_equal(cfg->nservers, 2);
    assert_invalid(cfg, "mcpServers[0]", "a list entry needs a \"name\"");
    ok(cfg, "b");
    config_free(cfg);
}

/* Codex's TOML (toml++): [mcp_servers.NAME] as the same tree, its keys
 * that name variables, "enabled" = false, startup_timeout_sec; a syntax
 * error names the line and column, never the text. */
static void
test_codex_toml(void **state)
{
    const struct config_server *s;
    struct config              *cfg;
    char                       *cause;

    (void)state;
    setenv("MCPTOP_TEST_CODEX_TOKEN", SECRET, 1);
    setenv("MCPTOP_TEST_CODEX_ORG", "org-1", 1);
    setenv("MCPTOP_TEST_CODEX_PASS", "x", 1);
    cfg = load("codex_config.toml");
    assert_int_equal(cfg->nservers, 3);
    s = ok(cfg, "docs");
    assert_int_equal(s->transport, CONFIG_STDIO);
    assert_string_equal(s->command, "docs-server");
    assert_int_equal(s->nargs, 2);
    assert_string_equal(kv_get(s->env, s->nenv, "API_KEY"), "value");
    assert_string_equal(s->cwd, "/tmp");
    assert_int_equal(s->open_deadline_ms, 20000);
    assert_true(has_note(cfg, "\"tool_timeout_sec\" is ignored"));
    assert_true(has_note(cfg, "\"enabled_tools\" is ignored"));
    s = ok(cfg, "figma");
    assert_int_equal(s->transport, CONFIG_HTTP);
    assert_string_equal(kv_get(s->headers, s->nheaders, "Authorization"),
        "Bearer " SECRET);
    assert_string_equal(kv_get(s->headers, s->nheaders, "X-Org"), "org-1");
    assert_string_equal(kv_get(s->headers, s->nheaders, "X-Figma-Region"),
        "us-east-1");
    assert_int_equal(s->nvars, 2);
    s = server(cfg, "off");
    assert_true(s->disabled);
    assert_string_equal(s->disabled_why,
        "disabled in the config (\"enabled\": false)");
    assert_string_equal(kv_get(s->env, s->nenv, "DEBUG"), "1");
    assert_int_equal(cfg->nwarnings, 0);
    config_free(cfg);

    /* An unset variable named for a header: invalid, naming it and the
     * file, never a request without the credential. */
    unsetenv("MCPTOP_TEST_CODEX_TOKEN");
    cfg = load("codex_config.toml");
    assert_invalid(cfg, "figma", "\"bearer_token_env_var\": variable "
        "\"MCPTOP_TEST_CODEX_TOKEN\" is not set (" CLIENTS
        "codex_config.toml names it");
    config_free(cfg);

    /* Sniffed when the name says nothing (standard input). */
    cfg = parse_as("stdin", "# codex\n[mcp_servers.docs]\n"
        "command = \"x\"\n", NULL);
    ok(cfg, "docs");
    config_free(cfg);
    cause = parse_fail_as("stdin", "[mcp_servers.docs]\ncommand = = \""
        SECRET "\"\n");
    assert_string_equal(cause, "stdin:2:11: not valid TOML");
    free(cause);
    cause = parse_fail_as("x.toml", "model = \"o4-mini\"\n");
    assert_non_null(strstr(cause, "\"mcp_servers\" (Codex)"));
    free(cause);
}

/* A file with no server map names every key it looked for; with
 * allow_none it is an empty fleet and a note. */
static void
test_no_server_map(void **state)
{
    struct config_options opt = { .allow_none = true };
    struct config        *cfg;
    char                 *cause;

    (void)state;
    cause = parse_fail_as("s.json", "{\"editor.fontSize\": 14, \"mcp\": {}}");
    assert_non_null(strstr(cause, "s.json: no \"mcpServers\" or \"servers\" "
        "object"));
    assert_non_null(strstr(cause, "\"mcp\": {\"servers\"}"));
    assert_non_null(strstr(cause, "\"context_servers\" (Zed)"));
    assert_non_null(strstr(cause, "\"extensions\" (Goose)"));
    assert_non_null(strstr(cause, "opencode"));
    assert_non_null(strstr(cause, "Continue"));
    free(cause);

    cfg = parse_as("s.json", "{\"editor.fontSize\": 14}", &opt);
    assert_int_equal(cfg->nservers, 0);
    assert_int_equal(cfg->nnotes, 1);
    assert_string_equal(cfg->notes[0], "s.json: no server map in it");
    config_free(cfg);
}

/* "type" spellings, without case, '-' or '_'. */
static void
test_type_spellings(void **state)
{
    struct config *cfg;

    (void)state;
    cfg = parse_as("t", "{\"mcpServers\": {"
        "\"a\": {\"type\": \"Streamable_HTTP\", \"url\": \"http://h/\"},"
        "\"b\": {\"type\": \"streamable-http\", \"url\": \"http://h/\"},"
        "\"c\": {\"type\": \"SSE\", \"url\": \"http://h/\"},"
        "\"d\": {\"type\": \"STDIO\", \"command\": \"x\"},"
        "\"e\": {\"type\": \"Local\", \"command\": [\"x\"]},"
        "\"f\": {\"type\": \"remote\", \"url\": \"http://h/\"},"
        "\"g\": {\"type\": \"HTTP\", \"url\": \"http://h/\"},"
        "\"h\": {\"type\": \"websocket\", \"url\": \"ws://h/\"},"
        "\"i\": {\"transportType\": \"sse\", \"url\": \"http://h/\"},"
        "\"j\": {\"type\": \"local\", \"url\": \"http://h/\"}}}", NULL);
    assert_int_equal(ok(cfg, "a")->transport, CONFIG_HTTP);
    assert_int_equal(ok(cfg, "b")->transport, CONFIG_HTTP);
    assert_int_equal(ok(cfg, "c")->transport, CONFIG_HTTP);
    assert_int_equal(ok(cfg, "d")->transport, CONFIG_STDIO);
    assert_int_equal(ok(cfg, "e")->transport, CONFIG_STDIO);
    assert_int_equal(ok(cfg, "f")->transport, CONFIG_HTTP);
    assert_int_equal(ok(cfg, "g")->transport, CONFIG_HTTP);
    assert_invalid(cfg, "h", "unsupported \"type\" \"websocket\"");
    assert_int_equal(ok(cfg, "i")->transport, CONFIG_HTTP);
    assert_invalid(cfg, "j", "\"type\" \"local\" needs a \"command\"");
    config_free(cfg);
}

/* Two spellings of one thing are refused, naming both keys. */
static void
test_alias_conflicts(void **state)
{
    struct config *cfg;

    (void)state;
    cfg = parse_as("t", "{\"mcpServers\": {"
        "\"a\": {\"url\": \"http://h/\", \"serverUrl\": \"http://i/\"},"
        "\"b\": {\"command\": \"x\", \"cmd\": \"y\"},"
        "\"c\": {\"httpUrl\": \"http://h/\", \"command\": \"x\"},"
        "\"d\": {\"command\": [\"x\", \"1\"], \"args\": [\"2\"]},"
        "\"e\": {\"command\": \"x\", \"env\": {}, \"envs\": {\"A\": \"b\"}},"
        "\"f\": {\"command\": []},"
        "\"g\": {\"command\": {\"args\": []}},"
        "\"h\": {\"uri\": \"http://h/\", \"headers\": {\"A\": \"1\"}, "
        "\"requestOptions\": {\"headers\": {\"B\": \"2\"}}}}}", NULL);
    assert_invalid(cfg, "a", "has both \"url\" and \"serverUrl\"");
    assert_invalid(cfg, "b", "has both \"command\" and \"cmd\"");
    assert_invalid(cfg, "c", "has both \"httpUrl\" and \"command\"");
    assert_invalid(cfg, "d", "arguments given both in \"command\" and in "
        "\"args\"");
    assert_invalid(cfg, "e", "environment given twice (\"envs\")");
    assert_invalid(cfg, "f", "\"command\" is an empty array");
    assert_invalid(cfg, "g", "\"command\" is an object without a \"path\"");
    assert_invalid(cfg, "h", "headers given twice");
    config_free(cfg);
}

/* "disabled" and "enabled": booleans, kept even on a broken entry. */
static void
test_disabled(void **state)
{
    struct config *cfg;

    (void)state;
    cfg = parse_as("t", "{\"mcpServers\": {"
        "\"a\": {\"command\": \"x\", \"disabled\": true},"
        "\"b\": {\"command\": \"x\", \"enabled\": false},"
        "\"c\": {\"command\": \"x\", \"disabled\": false, \"enabled\": true},"
        "\"d\": {\"command\": \"x\", \"disabled\": \"yes\"},"
        "\"e\": {\"url\": \"ftp://h/\", \"disabled\": true}}}", NULL);
    assert_true(ok(cfg, "a")->disabled);
    assert_true(ok(cfg, "b")->disabled);
    assert_false(ok(cfg, "c")->disabled);
    assert_invalid(cfg, "d", "\"disabled\" is a string, expected true or "
        "false");
    assert_invalid(cfg, "e", "unsupported scheme");
    assert_true(server(cfg, "e")->disabled);
    config_free(cfg);
}

/* Another client's "timeout": units, limits, timeout_ms wins. */
static void
test_timeout_rules(void **state)
{
    struct config *cfg;

    (void)state;
    cfg = parse_as("t", "{\"mcpServers\": {"
        "\"s\": {\"command\": \"x\", \"timeout\": 3600},"
        "\"ms\": {\"command\": \"x\", \"timeout\": 3601},"
        "\"both\": {\"command\": \"x\", \"timeout\": 5, \"timeout_ms\": 700},"
        "\"neg\": {\"command\": \"x\", \"timeout\": -1},"
        "\"str\": {\"command\": \"x\", \"timeout\": \"60\"},"
        "\"huge\": {\"command\": \"x\", \"timeout\": 1e300}}}", NULL);
    assert_int_equal(ok(cfg, "s")->timeout_ms, 3600000);
    assert_int_equal(ok(cfg, "ms")->timeout_ms, 3601);
    assert_int_equal(ok(cfg, "both")->timeout_ms, 700);
    assert_true(has_note(cfg, "\"timeout\" is ignored: \"timeout_ms\" is "
        "set (server both)"));
    assert_int_equal(ok(cfg, "neg")->timeout_ms, CONFIG_DEFAULT_TIMEOUT_MS);
    assert_true(has_warning(cfg, "server \"neg\": \"timeout\" is not a "
        "positive number (ignored)"));
    assert_true(has_warning(cfg, "server \"str\": \"timeout\" is not a "
        "positive number"));
    assert_true(has_warning(cfg, "server \"huge\": \"timeout\" is out of "
        "range"));
    config_free(cfg);
}

/* A note names at most a few servers, then counts the rest. */
static void
test_note_once(void **state)
{
    struct config_buf {
        char   text[4096];
        size_t len;
    } b = { "{\"mcpServers\": {", 16 };
    struct config *cfg;
    int            i;

    (void)state;
    for (i = 0; i < 12; i++)
        b.len += (size_t)snprintf(b.text + b.len, sizeof b.text - b.len,
            "%s\"s%d\": {\"command\": \"x\", \"alwaysAllow\": [\"t\"]}",
            i > 0 ? "," : "", i);
    snprintf(b.text + b.len, sizeof b.text - b.len, "}}");
    cfg = parse_as("t", b.text, NULL);
    assert_int_equal(cfg->nnotes, 1);
    assert_non_null(strstr(cfg->notes[0], "(servers s0, s1, s2, s3, s4, s5, "
        "s6, s7 and 4 more)"));
    config_free(cfg);
}

/* ${userHome}, ${workspaceFolder}, ${pathSeparator} and ${/} in a
 * file; config_expand alone still reads only the environment. */
static void
test_predefined(void **state)
{
    char           cwd[PATH_MAX];
    char          *want;
    char          *old_home;
    char          *cause = NULL;
    struct config *cfg;

    (void)state;
    assert_non_null(getcwd(cwd, sizeof cwd));
    old_home = getenv("HOME") != NULL ? strdup(getenv("HOME")) : NULL;
    setenv("HOME", "/home/tester", 1);
    cfg = parse_as("t", "{\"servers\": {\"a\": {\"command\": \"x\", "
        "\"args\": [\"${userHome}/d\", \"${workspaceFolder}\", "
        "\"a${pathSeparator}b${/}c\", \"${workspaceFolderBasename}\"]}}}",
        NULL);
    assert_string_equal(ok(cfg, "a")->args[0], "/home/tester/d");
    assert_string_equal(ok(cfg, "a")->args[1], cwd);
    assert_string_equal(ok(cfg, "a")->args[2], "a/b/c");
    want = strrchr(cwd, '/') + 1;
    assert_string_equal(ok(cfg, "a")->args[3], *want != '\0' ? want : cwd);
    config_free(cfg);
    assert_null(config_expand("${userHome}", &cause));
    assert_string_equal(cause, "variable \"userHome\" is not set");
    free(cause);
    if (old_home != NULL)
        setenv("HOME", old_home, 1);
    else
        unsetenv("HOME");
    free(old_home);
}

/* URLs are shown redacted: url_shown, the name of an ad-hoc URL that is
 * not valid, messages. */
static void
test_url_shown(void **state)
{
    struct config *cfg;

    (void)state;
    cfg = parse_as("t", "{\"mcpServers\": {"
        "\"a\": {\"url\": \"http://u:" SECRET "@h:1/mcp?token=" SECRET "\"},"
        "\"b\": {\"url\": \"https://h/mcp\"},"
        "\"c\": {\"url\": \"http://u:" SECRET "@h:99999/\"},"
        "\"d\": {\"command\": \"x\"},"
        "\"e\": {\"url\": \"u:" SECRET "@h://x\"}}}", NULL);
    assert_string_equal(ok(cfg, "a")->url_shown,
        "http://***@h:1/mcp?token=***");
    assert_string_equal(ok(cfg, "b")->url_shown, "https://h/mcp");
    assert_invalid(cfg, "c", "bad port");
    assert_null(ok(cfg, "d")->url_shown);
    assert_invalid(cfg, "e", "unsupported scheme (expected");
    assert_not_shown(cfg, SECRET);
    config_free(cfg);

    cfg = config_for_url("http://u:" SECRET "@exa mple.com/");
    assert_string_equal(cfg->servers[0].name, "http://***");
    assert_string_equal(cfg->servers[0].url_shown, "http://***");
    assert_non_null(cfg->servers[0].invalid);
    assert_not_shown(cfg, SECRET);
    config_free(cfg);

    cfg = config_for_url("https://u:" SECRET "@h:8443/mcp?api_key=" SECRET);
    assert_string_equal(cfg->servers[0].name, "h:8443");
    assert_string_equal(cfg->servers[0].url_shown,
        "https://***@h:8443/mcp?api_key=***");
    assert_string_equal(cfg->servers[0].origin, "command line");
    config_free(cfg);
}

/* A stdio server from the command line. */
static void
test_for_command(void **state)
{
    char          *argv[] = { "/usr/bin/node", "server.js", "--token=${X}",
        NULL };
    struct config *cfg;

    (void)state;
    cfg = config_for_command(argv, 3);
    assert_int_equal(cfg->nservers, 1);
    assert_null(cfg->servers[0].invalid);
    assert_string_equal(cfg->servers[0].name, "node");
    assert_int_equal(cfg->servers[0].transport, CONFIG_STDIO);
    assert_string_equal(cfg->servers[0].command, "/usr/bin/node");
    assert_int_equal(cfg->servers[0].nargs, 2);
    assert_string_equal(cfg->servers[0].args[1], "--token=${X}");
    assert_string_equal(cfg->servers[0].args_shown[0], "server.js");
    assert_string_equal(cfg->origin, "command line");
    config_free(cfg);

    cfg = config_for_command(argv, 0);
    assert_non_null(strstr(cfg->servers[0].invalid, "empty command"));
    config_free(cfg);
}

/* Merging: a name in both is an error naming both files, unless it can
 * be renamed after its source. */
static void
test_merge(void **state)
{
    struct config *a, *b;
    char          *cause = NULL;

    (void)state;
    a = parse_as("a.json", "{\"mcpServers\": {\"x\": {\"command\": \"1\"},"
        "\"y\": {\"command\": \"2\", \"autoApprove\": [\"t\"]}}}", NULL);
    b = parse_as("b.yaml", "mcpServers:\n  z: {command: \"3\"}\n"
        "  x: {command: \"4\", foo: 1}\n", NULL);
    assert_int_equal(config_merge(a, b, false, &cause), -1);
    assert_string_equal(cause, "server \"x\" is declared in both a.json and "
        "b.yaml");
    free(cause);
    assert_int_equal(a->nservers, 2);
    assert_int_equal(b->nservers, 2);

    /* With a source, the newcomer is renamed. */
    free(b->servers[1].source);
    b->servers[1].source = strdup("cursor");
    assert_int_equal(config_merge(a, b, true, &cause), 0);
    assert_null(cause);
    assert_int_equal(a->nservers, 4);
    assert_string_equal(a->servers[3].name, "x@cursor");
    assert_string_equal(a->servers[3].origin, "b.yaml");
    assert_string_equal(a->servers[2].name, "z");
    assert_string_equal(a->origin, "a.json, b.yaml");
    assert_int_equal(a->nwarnings, 1);
    assert_int_equal(a->nnotes, 1);
    config_free(a);
}

/* Standard input: read to the end; the format is sniffed. */
static void
test_load_fd(void **state)
{
    static const char yaml[] = "mcpServers:\n  a:\n    url: http://h/mcp\n";
    struct config    *cfg = NULL;
    char             *cause = NULL;
    int               fd[2];

    (void)state;
    assert_int_equal(pipe(fd), 0);
    assert_int_equal(write(fd[1], yaml, sizeof yaml - 1),
        (ssize_t)sizeof yaml - 1);
    close(fd[1]);
    assert_int_equal(config_load_fd(fd[0], "stdin", NULL, &cfg, &cause), 0);
    close(fd[0]);
    assert_int_equal(cfg->nservers, 1);
    assert_string_equal(cfg->origin, "stdin");
    assert_string_equal(ok(cfg, "a")->url, "http://h/mcp");
    config_free(cfg);

    assert_int_equal(pipe(fd), 0);
    close(fd[1]);
    assert_int_equal(config_load_fd(fd[0], "stdin", NULL, &cfg, &cause), -1);
    assert_string_equal(cause, "stdin: empty file");
    free(cause);
    close(fd[0]);
}

/* YAML: scalars, errors with positions, aliases bounded. */
static void
test_yaml(void **state)
{
    struct config *cfg;
    char          *cause;

    (void)state;
    cfg = parse_as("c.yml", "mcptop:\n  ping_interval_s: 2.5\n"
        "  tls_insecure: false\nmcpServers:\n  a:\n    url: http://h/\n"
        "    timeout_ms: 700\n    headers: {X-N: \"5\"}\n"
        "  b: &b\n    command: x\n    args: [\"1\", '2', 3]\n", NULL);
    assert_int_equal(ok(cfg, "a")->ping_interval_ms, 2500);
    assert_int_equal(ok(cfg, "a")->timeout_ms, 700);
    /* An unquoted 3 is a number, as in JSON. */
    assert_invalid(cfg, "b", "\"args\"[2] is a number");
    config_free(cfg);

    cause = parse_fail_as("c.yaml", "mcpServers:\n  a: [1\n  b: 2\n");
    assert_non_null(strstr(cause, "c.yaml:"));
    assert_non_null(strstr(cause, ": not valid YAML ("));
    free(cause);

    cause = parse_fail_as("c.yaml", "a: &a [*a]\n");
    assert_non_null(strstr(cause, "nested deeper than 64 levels"));
    free(cause);

    cause = parse_fail_as("c.yaml",
        "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
        "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
        "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
        "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
        "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
        "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n");
    assert_non_null(strstr(cause, "more than 200000 nodes"));
    free(cause);

    cause = parse_fail_as("c.yaml", "? [a]\n: b\n");
    assert_non_null(strstr(cause, "c.yaml:1:3: a mapping key that is not a "
        "string"));
    free(cause);

    cause = parse_fail_as("c.yaml", "- mcpServers: {}\n");
    assert_non_null(strstr(cause, "top level is an array"));
    free(cause);
}

/*
 * Deep YAML: 100,000 nested flow sequences (200 KB) are refused at the
 * 65th level, with its position, without parsing the rest first (libyaml's
 * loader alone did not finish that in a minute). The parse runs in a
 * child bounded by alarm(), so a regression fails here instead of hanging.
 */
static void
test_yaml_deep(void **state)
{
    enum { LEVELS = 100000 };
    char  *text = malloc(2 * LEVELS + 16);
    pid_t  pid;
    int    status = 0;
    size_t n = 0;

    (void)state;
    assert_non_null(text);
    n += (size_t)sprintf(text, "a: ");
    memset(text + n, '[', LEVELS);
    n += LEVELS;
    memset(text + n, ']', LEVELS);
    n += LEVELS;
    text[n++] = '\n';
    text[n] = '\0';
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct config *cfg = NULL;
        char          *cause = NULL;
        int            rc;

        alarm(20);
        rc = config_parse(text, n, "deep.yaml", &cfg, &cause);
        /* Level 65 is the 64th '[' (the mapping is the first level). */
        _exit(rc == -1 && cfg == NULL && cause != NULL &&
            strstr(cause, "deep.yaml:1:67: nested deeper than 64 levels")
            != NULL ? 0 : 1);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    free(text);
    if (WIFSIGNALED(status))
        fail_msg("the deep YAML parse did not finish in 20 s (signal %d)",
            WTERMSIG(status));
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_claude_desktop),
        cmocka_unit_test(test_claude_code_user),
        cmocka_unit_test(test_claude_code_local),
        cmocka_unit_test(test_claude_code_project),
        cmocka_unit_test(test_cursor),
        cmocka_unit_test(test_vscode_inputs),
        cmocka_unit_test(test_input_env_name),
        cmocka_unit_test(test_vscode_settings),
        cmocka_unit_test(test_windsurf),
        cmocka_unit_test(test_zed),
        cmocka_unit_test(test_cline),
        cmocka_unit_test(test_gemini),
        cmocka_unit_test(test_amazonq),
        cmocka_unit_test(test_opencode),
        cmocka_unit_test(test_goose),
        cmocka_unit_test(test_continue),
        cmocka_unit_test(test_codex_toml),
        cmocka_unit_test(test_no_server_map),
        cmocka_unit_test(test_type_spellings),
        cmocka_unit_test(test_alias_conflicts),
        cmocka_unit_test(test_disabled),
        cmocka_unit_test(test_timeout_rules),
        cmocka_unit_test(test_note_once),
        cmocka_unit_test(test_predefined),
        cmocka_unit_test(test_url_shown),
        cmocka_unit_test(test_for_command),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_load_fd),
        cmocka_unit_test(test_yaml),
        cmocka_unit_test(test_yaml_deep),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
