/*
 * Where a tap publishes (include/engine/config.h): the default socket of
 * a tap by its name, which `mcptop tap` listens at and a config entry
 * that names an `mcptop tap` command reads. Names only: nothing here
 * makes, checks or opens a file (the tap does, tap/tap_publish.c).
 */
#include "engine/config.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/str.h"

char *
config_tap_dir(void)
{
    const char    *xdg = getenv("XDG_RUNTIME_DIR");
    struct stat    st;
    struct passwd *pw;
    char           user[64];

    if (xdg != NULL && xdg[0] == '/' && stat(xdg, &st) == 0 &&
        S_ISDIR(st.st_mode) && st.st_uid == getuid())
        return str_printf("%s/mcptop", xdg);
    pw = getpwuid(getuid());
    if (pw != NULL && pw->pw_name != NULL)
        snprintf(user, sizeof(user), "%s", pw->pw_name);
    else
        snprintf(user, sizeof(user), "%lu", (unsigned long)getuid());
    for (char *c = user; *c != '\0'; c++) {
        if (*c == '/')
            *c = '_';
    }
    return str_printf("/tmp/mcptop-%s", user);
}

char *
config_tap_path(const char *name)
{
    char   safe[80];
    char  *dir = config_tap_dir();
    char  *path;
    size_t i;

    for (i = 0; name[i] != '\0' && i + 1 < sizeof(safe); i++) {
        unsigned char c = (unsigned char)name[i];

        safe[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
            (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_' ?
            (char)c : '_';
    }
    safe[i] = '\0';
    path = str_printf("%s/tap-%s.sock", dir, safe[0] != '\0' ? safe : "_");
    free(dir);
    return path;
}
