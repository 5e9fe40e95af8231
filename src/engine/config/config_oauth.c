/*
 * A server's "oauth" object (MCP authorization; every key optional): the
 * client identity, grant and scope mcptop uses when the server asks for
 * authorization. Strings are expanded like header values; client_secret is
 * a secret, wiped when freed and never quoted in a message.
 */
#include <stdlib.h>
#include <string.h>

#include "config/config_int.h"
#include "util/str.h"
#include "util/xmalloc.h"


void
config_oauth_free(struct config_oauth *o)
{
    if (o == NULL)
        return;
    free(o->client_id);
    str_wipe_free(o->client_secret);
    free(o->token_endpoint_auth_method);
    free(o->issuer);
    free(o->private_key_file);
    free(o->signing_algorithm);
    free(o->scope);
    free(o->client_metadata_url);
    free(o);
}

/* One string key of "oauth", expanded like a header value; the message
 * names the key, never the value. 0 or -1 with *why. */
static int
config_oauth_string(const cJSON *v, char **slot, char **why)
{
    char *x, *c = NULL;

    if (!cJSON_IsString(v) || v->valuestring[0] == '\0') {
        *why = str_printf("\"oauth\": \"%s\" must be a non-empty string",
            v->string);
        return -1;
    }
    x = config_expand(v->valuestring, &c);
    if (x == NULL) {
        *why = str_printf("\"oauth\": \"%s\": %s", v->string, c);
        free(c);
        return -1;
    }
    if (config_header_value_bad(x)) {
        str_wipe_free(x);
        *why = str_printf("\"oauth\": \"%s\": value contains a control "
            "character", v->string);
        return -1;
    }
    str_wipe_free(*slot);
    *slot = x;
    return 0;
}

/* Read a server's "oauth" object (every key optional) into *out. 0, or -1
 * with *why. Unknown keys are warnings. */
int
config_oauth(struct config *cfg, const char *server, const cJSON *v,
    struct config_oauth **out, char **why)
{
    static const char *const methods[] = {
        "client_secret_basic", "client_secret_post", "none",
        "private_key_jwt", NULL
    };
    static const char *const algs[] = { "ES256", "RS256", NULL };
    struct config_oauth *o;
    const cJSON         *e;
    char                 shown[CONFIG_SHOWN_SIZE], key[CONFIG_SHOWN_SIZE];

    if (!cJSON_IsObject(v)) {
        *why = str_printf("\"oauth\" is %s, expected an object",
            config_kind(v));
        return -1;
    }
    o = xcalloc(1, sizeof(*o));
    cJSON_ArrayForEach(e, v) {
        const char *k = e->string;
        char      **slot = NULL;

        if (strcmp(k, "client_id") == 0)
            slot = &o->client_id;
        else if (strcmp(k, "client_secret") == 0)
            slot = &o->client_secret;
        else if (strcmp(k, "token_endpoint_auth_method") == 0)
            slot = &o->token_endpoint_auth_method;
        else if (strcmp(k, "private_key_file") == 0)
            slot = &o->private_key_file;
        else if (strcmp(k, "signing_algorithm") == 0)
            slot = &o->signing_algorithm;
        else if (strcmp(k, "scope") == 0)
            slot = &o->scope;
        else if (strcmp(k, "client_metadata_url") == 0)
            slot = &o->client_metadata_url;
        else if (strcmp(k, "issuer") == 0)
            slot = &o->issuer;
        if (slot != NULL) {
            if (config_oauth_string(e, slot, why) != 0)
                goto fail;
        } else if (strcmp(k, "grant") == 0) {
            if (cJSON_IsString(e) &&
                strcmp(e->valuestring, "authorization_code") == 0) {
                o->grant = CONFIG_OAUTH_AUTHORIZATION_CODE;
            } else if (cJSON_IsString(e) &&
                strcmp(e->valuestring, "client_credentials") == 0) {
                o->grant = CONFIG_OAUTH_CLIENT_CREDENTIALS;
            } else {
                *why = str_printf("\"oauth\": \"grant\" must be "
                    "\"authorization_code\" or \"client_credentials\"");
                goto fail;
            }
        } else {
            config_warn(cfg, "server \"%s\": unknown key \"oauth.%s\" "
                "(ignored)", config_shown(shown, server),
                config_shown(key, k));
        }
    }
    if (o->token_endpoint_auth_method != NULL &&
        !config_in(methods, o->token_endpoint_auth_method)) {
        *why = str_printf("\"oauth\": \"token_endpoint_auth_method\" must "
            "be \"client_secret_basic\", \"client_secret_post\", \"none\" "
            "or \"private_key_jwt\"");
        goto fail;
    }
    if (o->signing_algorithm != NULL &&
        !config_in(algs, o->signing_algorithm)) {
        *why = str_printf("\"oauth\": \"signing_algorithm\" must be "
            "\"ES256\" or \"RS256\"");
        goto fail;
    }
    if (o->token_endpoint_auth_method != NULL &&
        strcmp(o->token_endpoint_auth_method, "private_key_jwt") == 0 &&
        o->private_key_file == NULL) {
        *why = str_printf("\"oauth\": private_key_jwt needs "
            "\"private_key_file\"");
        goto fail;
    }
    if (o->grant == CONFIG_OAUTH_CLIENT_CREDENTIALS && o->client_id == NULL) {
        *why = str_printf("\"oauth\": the client_credentials grant needs "
            "\"client_id\"");
        goto fail;
    }
    if (o->client_metadata_url != NULL &&
        strncmp(o->client_metadata_url, "https://", 8) != 0) {
        *why = str_printf("\"oauth\": \"client_metadata_url\" must be an "
            "https:// URL");
        goto fail;
    }
    if (o->issuer != NULL && strncmp(o->issuer, "https://", 8) != 0 &&
        strncmp(o->issuer, "http://", 7) != 0) {
        *why = str_printf("\"oauth\": \"issuer\" must be an http(s) URL "
            "(the authorization server's issuer)");
        goto fail;
    }
    config_oauth_free(*out);
    *out = o;
    return 0;

fail:
    config_oauth_free(o);
    return -1;
}


bool
config_oauth_is_ours(const cJSON *v)
{
    static const char *const keys[] = {
        "client_id", "client_secret", "token_endpoint_auth_method",
        "private_key_file", "signing_algorithm", "grant", "scope",
        "client_metadata_url", "issuer", NULL
    };
    const cJSON *e;

    if (!cJSON_IsObject(v) || v->child == NULL)
        return true;        /* {} asks for OAuth with every default */
    cJSON_ArrayForEach(e, v) {
        if (e->string != NULL && config_in(keys, e->string))
            return true;
    }
    return false;
}
