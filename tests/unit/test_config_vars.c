/*
 * Tests for each client's variable syntax (issue 28): the default
 * ${VAR}/${VAR:-default}/${env:VAR} in every field Claude Code expands
 * (url included), Gemini CLI's $VAR and ${VAR}, opencode's {env:VAR} and
 * {file:PATH}, Continue's ${{ secrets.NAME }}, the clients that expand
 * none, VS Code's command variables, and the syntax chosen by a file's
 * name or shape. An unset variable makes the entry invalid, naming the
 * variable and the file; the value never appears in a message, the names
 * expanded are kept on the entry.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/clients.h"
#include "engine/config.h"
#include "util/str.h"

#include "config_check.h"

#define SECRET "gh-T0ken-s3cr3t"

/* Parse text as origin in syntax vars (CONFIG_VARS_AUTO: by name). */
static struct config *
parse_vars(const char *origin, const char *text, enum config_vars vars)
{
    struct config_options opt = { .vars = vars };

    return parse_as(origin, text, &opt);
}

/* True when s expanded a variable called name. */
static bool
has_var(const struct config_server *s, const char *name)
{
    for (size_t i = 0; i < s->nvars; i++) {
        if (strcmp(s->vars[i], name) == 0)
            return true;
    }
    return false;
}

/* No message of cfg holds the secret. */
static void
no_leak(const struct config *cfg)
{
    for (size_t i = 0; i < cfg->nservers; i++) {
        if (cfg->servers[i].invalid != NULL)
            assert_null(strstr(cfg->servers[i].invalid, SECRET));
        if (cfg->servers[i].url_shown != NULL)
            assert_null(strstr(cfg->servers[i].url_shown, SECRET));
    }
    for (size_t i = 0; i < cfg->nwarnings; i++)
        assert_null(strstr(cfg->warnings[i], SECRET));
    for (size_t i = 0; i < cfg->nnotes; i++)
        assert_null(strstr(cfg->notes[i], SECRET));
}

static int
setup(void **state)
{
    (void)state;
    setenv("GITHUB_TOKEN", SECRET, 1);
    setenv("MCPTOP_TEST_HOST", "mcp.example.com", 1);
    unsetenv("MCPTOP_TEST_UNSET");
    return 0;
}

/* Gemini CLI: $VAR and ${VAR} in url, headers, command, args, env, cwd;
 * a '$' not before a name is kept; ${VAR:-x} is not Gemini's. */
static void
test_gemini(void **state)
{
    const char *text = "{\"mcpServers\": {"
        "\"gh\": {\"httpUrl\": \"https://${MCPTOP_TEST_HOST}/mcp\","
        "  \"headers\": {\"Authorization\": \"Bearer $GITHUB_TOKEN\","
        "  \"X-Price\": \"5$ and $5 and $\"}},"
        "\"local\": {\"command\": \"$MCPTOP_TEST_HOST-bin\","
        "  \"args\": [\"--t=${GITHUB_TOKEN}\"], \"cwd\": \"/tmp/$USERX\"},"
        "\"unset\": {\"url\": \"https://h/mcp\","
        "  \"headers\": {\"Authorization\": \"Bearer $MCPTOP_TEST_UNSET\"}},"
        "\"dflt\": {\"url\": \"https://h/${MCPTOP_TEST_UNSET:-x}\"}}}";
    const struct config_server *s;
    struct config              *cfg;

    (void)state;
    unsetenv("USERX");
    cfg = parse_vars("/home/u/.gemini/settings.json", text,
        CONFIG_VARS_AUTO);
    s = server(cfg, "gh");
    assert_null(s->invalid);
    assert_string_equal(s->url, "https://mcp.example.com/mcp");
    assert_string_equal(s->url_shown, "https://${MCPTOP_TEST_HOST}/mcp");
    assert_string_equal(kv_get(s->headers, s->nheaders, "Authorization"),
        "Bearer " SECRET);
    assert_string_equal(kv_get(s->headers, s->nheaders, "X-Price"),
        "5$ and $5 and $");
    assert_true(has_var(s, "GITHUB_TOKEN"));
    assert_true(has_var(s, "MCPTOP_TEST_HOST"));

    s = server(cfg, "local");
    /* $USERX is unset: the cwd cannot be what Gemini CLI would use. */
    assert_non_null(strstr(s->invalid, "\"cwd\": variable \"USERX\" is "
        "not set"));
    assert_non_null(strstr(s->invalid, ".gemini/settings.json"));

    assert_invalid(cfg, "unset", "header \"Authorization\": variable "
        "\"MCPTOP_TEST_UNSET\" is not set (/home/u/.gemini/settings.json "
        "writes \"$MCPTOP_TEST_UNSET\"");
    assert_invalid(cfg, "dflt", "unsupported reference");
    no_leak(cfg);
    config_free(cfg);

    setenv("USERX", "me", 1);
    cfg = parse_vars("settings.json", text, CONFIG_VARS_GEMINI);
    s = server(cfg, "local");
    assert_null(s->invalid);
    assert_string_equal(s->command, "mcp.example.com-bin");
    assert_string_equal(s->args[0], "--t=" SECRET);
    assert_string_equal(s->args_shown[0], "--t=${GITHUB_TOKEN}");
    assert_string_equal(s->cwd, "/tmp/me");
    config_free(cfg);
    unsetenv("USERX");
}

/* opencode: {env:VAR} and {file:PATH} (relative to the file's directory,
 * trimmed); "$" and "${" are its text. */
static void
test_opencode(void **state)
{
    char          dir[] = "/tmp/mcptop-vars-XXXXXX";
    char         *tok, *origin, *text;
    FILE         *f;
    struct config *cfg;
    const struct config_server *s;

    (void)state;
    assert_non_null(mkdtemp(dir));
    tok = str_printf("%s/token.txt", dir);
    f = fopen(tok, "w");
    assert_non_null(f);
    fprintf(f, "  file-" SECRET "\n");
    fclose(f);
    origin = str_printf("%s/opencode.json", dir);
    text = str_printf("{\"mcp\": {"
        "\"gh\": {\"type\": \"remote\", \"url\": \"https://h/mcp\","
        "  \"headers\": {\"Authorization\": \"Bearer {env:GITHUB_TOKEN}\","
        "  \"X-File\": \"{file:token.txt}\", \"X-Lit\": \"${GITHUB_TOKEN} $X\"}},"
        "\"local\": {\"type\": \"local\", \"command\": [\"x\", \"{env:GITHUB_TOKEN}\"],"
        "  \"environment\": {\"K\": \"{file:%s}\"}},"
        "\"unset\": {\"type\": \"remote\", \"url\": \"https://h/{env:MCPTOP_TEST_UNSET}\"},"
        "\"nofile\": {\"type\": \"local\", \"command\": [\"x\"],"
        "  \"environment\": {\"K\": \"{file:missing.txt}\"}}}}", tok);
    cfg = parse_vars(origin, text, CONFIG_VARS_AUTO);
    s = server(cfg, "gh");
    assert_null(s->invalid);
    assert_string_equal(kv_get(s->headers, s->nheaders, "Authorization"),
        "Bearer " SECRET);
    assert_string_equal(kv_get(s->headers, s->nheaders, "X-File"),
        "file-" SECRET);
    assert_string_equal(kv_get(s->headers, s->nheaders, "X-Lit"),
        "${GITHUB_TOKEN} $X");
    assert_true(has_var(s, "file:token.txt"));
    s = server(cfg, "local");
    assert_null(s->invalid);
    assert_string_equal(s->args[0], SECRET);
    assert_string_equal(kv_get(s->env, s->nenv, "K"), "file-" SECRET);
    assert_invalid(cfg, "unset", "variable \"MCPTOP_TEST_UNSET\" is not set");
    assert_invalid(cfg, "nofile", "\"{file:missing.txt}\": No such file");
    no_leak(cfg);
    config_free(cfg);

    /* The shape alone says opencode, whatever the file is called. */
    free(origin);
    origin = str_printf("%s/fleet.json", dir);
    cfg = parse_vars(origin, text, CONFIG_VARS_AUTO);
    assert_null(server(cfg, "gh")->invalid);
    config_free(cfg);

    unlink(tok);
    rmdir(dir);
    free(tok);
    free(origin);
    free(text);
}

/* Continue: ${{ secrets.NAME }}. */
static void
test_continue(void **state)
{
    struct config *cfg;

    (void)state;
    cfg = parse_vars("/h/.continue/config.yaml", "mcpServers:\n"
        "  - name: gh\n    type: streamable-http\n    url: https://h/mcp\n"
        "    requestOptions:\n      headers:\n"
        "        Authorization: Bearer ${{ secrets.GITHUB_TOKEN }}\n"
        "  - name: unset\n    command: x\n    env:\n"
        "      K: ${{ secrets.MCPTOP_TEST_UNSET }}\n", CONFIG_VARS_AUTO);
    assert_string_equal(kv_get(server(cfg, "gh")->headers,
        server(cfg, "gh")->nheaders, "Authorization"), "Bearer " SECRET);
    assert_invalid(cfg, "unset", "variable \"MCPTOP_TEST_UNSET\" is not set");
    no_leak(cfg);
    config_free(cfg);
}

/* Clients that expand nothing: the text as written. */
static void
test_none(void **state)
{
    struct config *cfg;

    (void)state;
    cfg = parse_vars("/h/.config/Claude/claude_desktop_config.json",
        "{\"mcpServers\": {\"a\": {\"command\": \"x\", \"env\": "
        "{\"K\": \"${MCPTOP_TEST_UNSET}\"}}}}", CONFIG_VARS_AUTO);
    assert_null(server(cfg, "a")->invalid);
    assert_string_equal(kv_get(server(cfg, "a")->env, server(cfg, "a")->nenv,
        "K"), "${MCPTOP_TEST_UNSET}");
    assert_int_equal(server(cfg, "a")->nvars, 0);
    config_free(cfg);
}

/* The default syntax: ${VAR:-default} in url (Claude Code), ${env:VAR}
 * (Cursor, VS Code); a VS Code command variable cannot be run. */
static void
test_default(void **state)
{
    struct config *cfg;

    (void)state;
    cfg = parse_vars("/p/.mcp.json", "{\"mcpServers\": {"
        "\"a\": {\"type\": \"http\", \"url\": "
        "\"${MCPTOP_TEST_UNSET:-https://h}/mcp?k=${GITHUB_TOKEN}\"},"
        "\"b\": {\"url\": \"https://h/mcp\", \"headers\": {\"X\": "
        "\"${command:extension.getToken}\"}},"
        "\"c\": {\"url\": \"https://${MCPTOP_TEST_UNSET}/mcp\"}}}",
        CONFIG_VARS_AUTO);
    assert_string_equal(server(cfg, "a")->url, "https://h/mcp?k=" SECRET);
    assert_true(has_var(server(cfg, "a"), "GITHUB_TOKEN"));
    assert_invalid(cfg, "b", "\"${command:extension.getToken}\" is a VS "
        "Code command variable");
    assert_invalid(cfg, "c", "\"url\": variable \"MCPTOP_TEST_UNSET\" is "
        "not set (/p/.mcp.json writes \"${MCPTOP_TEST_UNSET}\"");
    no_leak(cfg);
    config_free(cfg);
}

/* The syntax of each client's file, by its name. */
static void
test_vars_of_path(void **state)
{
    (void)state;
    assert_int_equal(clients_vars_of_path("/h/.gemini/settings.json"),
        CONFIG_VARS_GEMINI);
    assert_int_equal(clients_vars_of_path(".gemini/settings.json"),
        CONFIG_VARS_GEMINI);
    assert_int_equal(clients_vars_of_path("/h/.config/opencode/opencode.jsonc"),
        CONFIG_VARS_OPENCODE);
    assert_int_equal(clients_vars_of_path("opencode.json"),
        CONFIG_VARS_OPENCODE);
    assert_int_equal(clients_vars_of_path("/p/.continue/mcpServers/a.yaml"),
        CONFIG_VARS_CONTINUE);
    assert_int_equal(clients_vars_of_path("/h/.codex/config.toml"),
        CONFIG_VARS_NONE);
    assert_int_equal(clients_vars_of_path("/h/.config/goose/config.yaml"),
        CONFIG_VARS_NONE);
    assert_int_equal(clients_vars_of_path("/p/x.mcp.json"),
        CONFIG_VARS_DEFAULT);
    assert_int_equal(clients_vars_of_path("/p/settings.json"),
        CONFIG_VARS_DEFAULT);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_gemini, setup),
        cmocka_unit_test_setup(test_opencode, setup),
        cmocka_unit_test_setup(test_continue, setup),
        cmocka_unit_test_setup(test_none, setup),
        cmocka_unit_test_setup(test_default, setup),
        cmocka_unit_test(test_vars_of_path),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
