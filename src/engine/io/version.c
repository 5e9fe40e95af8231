/*
 * Ask each library the engine links for its own version at run time
 * (curl_version_info, ev_version_major/minor, cJSON_Version): `mcptop
 * --version` reports what is loaded, which is what a bug report needs.
 * Only reads: never initialises or changes any library.
 */
#include "engine/version.h"

#include <cjson/cJSON.h>
#include <ev.h>

#include "engine/http.h"

void
engine_versions(struct engine_versions *v)
{
    http_library_versions(&v->curl, &v->curl_tls);
    v->ev_major = ev_version_major();
    v->ev_minor = ev_version_minor();
    v->cjson = cJSON_Version();
}
