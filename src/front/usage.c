/*
 * Usage errors: one line naming what was wrong, prefixed "mcptop CMD:",
 * then where the help is, exit status 2. Every command reports bad
 * arguments through here, so they all read alike; getopt's own messages
 * (which name the binary's path) are switched off by the callers.
 */
#include "front/app.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/str.h"

int
app_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    char   *raw, *what;

    va_start(ap, fmt);
    raw = str_vprintf(fmt, ap);
    va_end(ap);
    /* Arguments are echoed: no escape sequence reaches the terminal. */
    what = raw != NULL ? str_sanitized(raw) : NULL;
    free(raw);
    fprintf(stderr, "mcptop%s%s: %s\n"
        "Try 'mcptop%s%s --help' for more information.\n",
        cmd != NULL ? " " : "", cmd != NULL ? cmd : "",
        what != NULL ? what : "usage error",
        cmd != NULL ? " " : "", cmd != NULL ? cmd : "");
    free(what);
    return EXIT_USAGE;
}

/* The long option that the len bytes at name select: the exact match,
 * else the one option they are a prefix of; NULL for none. *n counts
 * the options they are a prefix of. */
static const struct option *
cli_long_lookup(const struct option *longopts, const char *name, size_t len,
    int *n)
{
    const struct option *first = NULL;

    *n = 0;
    for (const struct option *o = longopts; o->name != NULL; o++) {
        if (strncmp(o->name, name, len) != 0)
            continue;
        if (strlen(o->name) == len) {
            *n = 1;
            return o;
        }
        if ((*n)++ == 0)
            first = o;
    }
    return *n == 1 ? first : NULL;
}

/* Did getopt's error come from the long option in word (rather than a
 * short one, which leaves optopt set to its letter)? */
static bool
cli_error_is_long(int ch, const char *word, const struct option *longopts)
{
    const struct option *o;
    size_t               len;
    int                  n;

    if (word == NULL || strncmp(word, "--", 2) != 0 || word[2] == '\0')
        return false;
    if (ch == '?' && optopt == 0)
        return true;            /* unknown or ambiguous long option */
    len = strcspn(word + 2, "=");
    o = cli_long_lookup(longopts, word + 2, len, &n);
    if (o == NULL || o->val != optopt)
        return false;
    if (ch == ':')              /* "--name" last, with no "=value" */
        return word[len + 2] == '\0' && o->has_arg == required_argument;
    return word[len + 2] == '=' && o->has_arg == no_argument;
}

int
app_option_error(const char *cmd, int ch, char *const argv[],
    const struct option *longopts)
{
    /* getopt has stepped past the word that holds a bad long option (a
     * bad short one may sit inside a group it has not left yet). */
    const char          *word = optind > 0 ? argv[optind - 1] : NULL;
    const struct option *o;
    size_t               len;
    char                *safe;
    int                  rc, n;

    if (!cli_error_is_long(ch, word, longopts)) {
        char opt[3] = { '-', (char)optopt, '\0' };

        safe = str_sanitized(opt);
        if (ch == ':')
            rc = app_usage_error(cmd, "option '%s' needs a value", safe);
        else
            rc = app_usage_error(cmd, "unknown option '%s'", safe);
        free(safe);
        return rc;
    }
    /* Name the option as given, never a value after '='. */
    len = strcspn(word + 2, "=");
    safe = str_sanitized(word);
    if (len + 2 < strlen(safe))
        safe[len + 2] = '\0';
    if (strlen(safe) > 60)
        strcpy(safe + 57, "...");
    o = cli_long_lookup(longopts, word + 2, len, &n);
    if (n > 1)
        rc = app_usage_error(cmd, "ambiguous option '%s'", safe);
    else if (o == NULL)
        rc = app_usage_error(cmd, "unknown option '%s'", safe);
    else if (ch == ':')
        rc = app_usage_error(cmd, "option '--%s' needs a value", o->name);
    else
        rc = app_usage_error(cmd, "option '--%s' takes no value", o->name);
    free(safe);
    return rc;
}
