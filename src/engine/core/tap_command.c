/*
 * The commands a tap reads (include/engine/tap_command.h), built with
 * cJSON so that an id or a reason is always quoted as JSON.
 */
#include "engine/tap_command.h"

#include <cjson/cJSON.h>
#include <stddef.h>

char *
tap_command_cancel(const char *id, const char *reason)
{
    cJSON *cmd = cJSON_CreateObject();
    cJSON *v = cJSON_Parse(id);
    char  *line;

    cJSON_AddStringToObject(cmd, "cmd", "cancel");
    if (v == NULL || !(cJSON_IsNumber(v) || cJSON_IsString(v))) {
        cJSON_Delete(v);
        v = cJSON_CreateString(id);
    }
    cJSON_AddItemToObject(cmd, "id", v);
    if (reason != NULL)
        cJSON_AddStringToObject(cmd, "reason", reason);
    line = cJSON_PrintUnformatted(cmd);
    cJSON_Delete(cmd);
    return line;
}

char *
tap_command_end(const char *prefix)
{
    cJSON *cmd = cJSON_CreateObject();
    char  *line;

    cJSON_AddStringToObject(cmd, "cmd", "end");
    cJSON_AddStringToObject(cmd, "session", prefix);
    line = cJSON_PrintUnformatted(cmd);
    cJSON_Delete(cmd);
    return line;
}
