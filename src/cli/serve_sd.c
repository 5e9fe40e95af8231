/*
 * /sd: the fleet as Prometheus HTTP service discovery (http_sd_configs):
 * a JSON array of target groups, one per server, so that one relabel
 * config drives /probe for the whole inventory (issue 29). Each group's
 * target is the server's config name, which the relabelling moves into
 * the target parameter of /probe; its labels are what a probe's series
 * should carry:
 *
 *   server                   the config name (as /metrics labels it)
 *   KEY                      from a tag KEY=VALUE or KEY:VALUE, when KEY
 *                            can be a label (metrics_tag_label_ok)
 *   __meta_mcptop_tags       every tag, comma-separated, with a comma
 *                            before and after (",prod,team=core,"), for
 *                            keep/drop rules
 *   __meta_mcptop_transport  http, stdio or sse
 *   __meta_mcptop_address    the Host the request came to: where /probe
 *                            is (one relabel rule for every shard)
 *
 * A server disabled in the config is not listed (it is not monitored by
 * choice). Label values pass the sanitizer; the document is gzipped when
 * the request takes it.
 */
#include "cli/serve.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "engine/config.h"
#include "engine/server.h"
#include "export/metrics.h"
#include "util/str.h"
#include "util/xmalloc.h"

/* Longest label value written, bytes (as /metrics cuts them). */
#define SERVE_SD_VALUE_MAX 256

/* v sanitized (control characters and escapes dropped) as a label value
 * of o under key. */
static void
serve_sd_label(cJSON *o, const char *key, const char *v)
{
    char clean[SERVE_SD_VALUE_MAX + 1];

    str_sanitize(clean, sizeof(clean), v, strlen(v));
    cJSON_AddStringToObject(o, key, clean);
}

/* A Host header fit to be an address label: host:port characters only. */
static bool
serve_sd_host_ok(const char *h)
{
    if (h == NULL || h[0] == '\0' || strlen(h) > 255)
        return false;
    for (const char *c = h; *c != '\0'; c++) {
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
            (*c >= '0' && *c <= '9') || strchr(".-:[]_", *c) != NULL))
            return false;
    }
    return true;
}

/* The target group of s. */
static cJSON *
serve_sd_group(const struct server *s, const char *host)
{
    const struct config_server *d = server_decl(s);
    cJSON                      *g = cJSON_CreateObject();
    cJSON                      *targets = cJSON_AddArrayToObject(g, "targets");
    cJSON                      *labels = cJSON_AddObjectToObject(g, "labels");
    char                       *tags = xstrdup(",");

    cJSON_AddItemToArray(targets, cJSON_CreateString(server_name(s)));
    serve_sd_label(labels, "server", server_name(s));
    for (size_t i = 0; i < d->ntags; i++) {
        const char *t = d->tags[i];
        size_t      k = strcspn(t, "=:");
        char        key[64];
        char       *more;

        more = str_printf("%s%s,", tags, t);
        free(tags);
        tags = more;
        if (t[k] == '\0' || k == 0 || k >= sizeof(key))
            continue;
        memcpy(key, t, k);
        key[k] = '\0';
        /* The first tag of a key wins, as --label-from-tags reads it. */
        if (metrics_tag_label_ok(key) &&
            cJSON_GetObjectItemCaseSensitive(labels, key) == NULL)
            serve_sd_label(labels, key, t + k + 1);
    }
    serve_sd_label(labels, "__meta_mcptop_tags", d->ntags > 0 ? tags : "");
    serve_sd_label(labels, "__meta_mcptop_transport",
        server_transport_name(s));
    if (host != NULL)
        serve_sd_label(labels, "__meta_mcptop_address", host);
    free(tags);
    return g;
}

enum MHD_Result
serve_sd(const struct fleet *f, struct MHD_Connection *conn)
{
    const char *host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
        MHD_HTTP_HEADER_HOST);
    cJSON      *doc = cJSON_CreateArray();
    char       *text;

    if (!serve_sd_host_ok(host))
        host = NULL;
    for (size_t i = 0; i < fleet_size(f); i++) {
        const struct server *s = fleet_server(f, i);

        if (server_decl(s)->disabled)
            continue;
        cJSON_AddItemToArray(doc, serve_sd_group(s, host));
    }
    text = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    if (text == NULL)
        return MHD_NO;
    /* cJSON allocates with malloc (no hooks set): free() releases it. */
    return serve_reply_coded(conn, text, strlen(text), "application/json");
}
