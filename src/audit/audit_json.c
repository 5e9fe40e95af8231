/*
 * The JSON of one server's audit (`mcptop audit --json`): each check's
 * verdict, grade, the spec section it is judged against, its detail and
 * evidence, and the sessions the audit opened and ended. Server text in
 * it is already sanitized; no session id is ever in it.
 */
#include "audit_int.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "engine/server.h"
#include "util/str.h"

cJSON *
audit_json(const struct audit *a)
{
    const struct server *s = fleet_server(a->fleet, a->index);
    cJSON               *o = cJSON_CreateObject();
    cJSON               *checks, *ss;
    char                *name = str_sanitized(server_name(s));
    unsigned             opened, ended;

    cJSON_AddStringToObject(o, "name", name);
    free(name);
    cJSON_AddStringToObject(o, "transport", audit_transport(a));
    cJSON_AddStringToObject(o, "target", server_target(s));
    if (a->skipped != NULL) {
        cJSON_AddStringToObject(o, "skipped", a->skipped);
        /* A disabled server counts neither way; one that cannot be
         * dialed is not clean. */
        if (strcmp(a->skipped, "disabled") == 0)
            cJSON_AddNullToObject(o, "clean");
        else
            cJSON_AddFalseToObject(o, "clean");
        return o;
    }
    cJSON_AddBoolToObject(o, "clean", audit_clean(a));
    checks = cJSON_AddObjectToObject(o, "checks");
    for (size_t c = 0; c < AUDIT_CHECK__COUNT; c++) {
        const struct audit_result *r = &a->results[c];
        cJSON                     *k;

        if (!r->done) {
            cJSON_AddNullToObject(checks, audit_check_name(c));
            continue;
        }
        k = cJSON_AddObjectToObject(checks, audit_check_name(c));
        cJSON_AddStringToObject(k, "verdict", audit_verdict_name(r->verdict));
        cJSON_AddStringToObject(k, "grade", audit_grade_name(r->grade));
        cJSON_AddStringToObject(k, "spec", audit_check_spec(c));
        if (r->detail[0] != '\0')
            cJSON_AddStringToObject(k, "detail", r->detail);
        cJSON_AddItemToObject(k, "evidence", r->evidence != NULL ?
            cJSON_Duplicate(r->evidence, true) : cJSON_CreateObject());
    }
    audit_sessions(a, &opened, &ended);
    ss = cJSON_AddObjectToObject(o, "audit_sessions");
    cJSON_AddNumberToObject(ss, "opened", opened);
    cJSON_AddNumberToObject(ss, "ended", ended);
    return o;
}
