/*
 * A server's "probe_tool" (a deep check): {"name", "arguments",
 * "interval_s", "timeout_ms", "expect_text"}. mcptop calls only the tool
 * named here, with these arguments, and never another.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_int.h"
#include "util/str.h"
#include "util/xmalloc.h"

#define CONFIG_PROBE_INTERVAL_MS    60000
#define CONFIG_PROBE_MIN_MS         1000    /* calls at most once a second */
#define CONFIG_PROBE_MAX_ARGS       (64 * 1024)

void
config_probe_free(struct config_probe *p)
{
    if (p == NULL)
        return;
    free(p->name);
    free(p->arguments);
    free(p->expect_text);
    free(p);
}

int
config_probe(struct config *cfg, const char *server, const cJSON *v,
    struct config_probe **out, char **why)
{
    struct config_probe *p;
    const cJSON         *e;
    char                 shown[CONFIG_SHOWN_SIZE], key[CONFIG_SHOWN_SIZE];

    if (!cJSON_IsObject(v)) {
        *why = str_printf("\"probe_tool\" is %s, expected an object",
            config_kind(v));
        return -1;
    }
    p = xcalloc(1, sizeof(*p));
    p->interval_ms = CONFIG_PROBE_INTERVAL_MS;
    cJSON_ArrayForEach(e, v) {
        const char *k = e->string;

        if (strcmp(k, "name") == 0) {
            if (!cJSON_IsString(e) || e->valuestring[0] == '\0') {
                *why = str_printf("\"probe_tool\": \"name\" must be a "
                    "non-empty string");
                goto fail;
            }
            free(p->name);
            p->name = xstrdup(e->valuestring);
        } else if (strcmp(k, "arguments") == 0) {
            char *text;

            if (!cJSON_IsObject(e)) {
                *why = str_printf("\"probe_tool\": \"arguments\" is %s, "
                    "expected an object", config_kind(e));
                goto fail;
            }
            text = cJSON_PrintUnformatted(e);
            if (text == NULL || strlen(text) > CONFIG_PROBE_MAX_ARGS) {
                free(text);
                *why = str_printf("\"probe_tool\": \"arguments\" is over "
                    "%d bytes", CONFIG_PROBE_MAX_ARGS);
                goto fail;
            }
            free(p->arguments);
            p->arguments = xstrdup(text);
            free(text);
        } else if (strcmp(k, "interval_s") == 0) {
            if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble) ||
                e->valuedouble * 1000.0 < CONFIG_PROBE_MIN_MS ||
                e->valuedouble > 86400.0) {
                *why = str_printf("\"probe_tool\": \"interval_s\" must be "
                    "a number of seconds from 1 to 86400");
                goto fail;
            }
            p->interval_ms = (long)(e->valuedouble * 1000.0);
        } else if (strcmp(k, "timeout_ms") == 0) {
            if (!cJSON_IsNumber(e) || e->valuedouble < 1 ||
                e->valuedouble > 3600000.0) {
                *why = str_printf("\"probe_tool\": \"timeout_ms\" must be "
                    "a number of milliseconds from 1 to 3600000");
                goto fail;
            }
            p->timeout_ms = (long)e->valuedouble;
        } else if (strcmp(k, "expect_text") == 0) {
            if (!cJSON_IsString(e)) {
                *why = str_printf("\"probe_tool\": \"expect_text\" must be "
                    "a string");
                goto fail;
            }
            free(p->expect_text);
            p->expect_text = xstrdup(e->valuestring);
        } else {
            config_warn(cfg, "server \"%s\": unknown key \"probe_tool.%s\" "
                "(ignored)", config_shown(shown, server),
                config_shown(key, k));
        }
    }
    if (p->name == NULL) {
        *why = str_printf("\"probe_tool\" needs a \"name\": the tool to "
            "call");
        goto fail;
    }
    if (p->arguments == NULL)
        p->arguments = xstrdup("{}");
    config_probe_free(*out);
    *out = p;
    return 0;
fail:
    config_probe_free(p);
    return -1;
}
