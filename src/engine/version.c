/*
 * Ask each library the engine links for its own version at run time
 * (curl_version_info, ev_version_major/minor, cJSON_Version): `mcptop
 * --version` reports what is loaded, which is what a bug report needs.
 * Only reads: never initialises or changes any library.
 */
#include "engine/version.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <ev.h>

void
engine_versions(struct engine_versions *v)
{
    const curl_version_info_data *ci = curl_version_info(CURLVERSION_NOW);

    v->curl = ci != NULL && ci->version != NULL ? ci->version : "unknown";
    v->curl_tls = ci != NULL ? ci->ssl_version : NULL;
    v->ev_major = ev_version_major();
    v->ev_minor = ev_version_minor();
    v->cjson = cJSON_Version();
}
