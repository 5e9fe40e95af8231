/*
 * Allocation that does not return NULL. Out of memory is not an input error
 * mcptop can report per server; it runs the hook main installed (restoring
 * the terminal) and exits with EX_SOFTWARE.
 */
#include "util/xmalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void (*xmalloc_oom_hook)(void);

static void
xmalloc_oom(size_t n)
{
    if (xmalloc_oom_hook != NULL)
        xmalloc_oom_hook();
    fprintf(stderr, "mcptop: out of memory (%zu bytes)\n", n);
    exit(70);
}

void
xmalloc_set_oom_hook(void (*hook)(void))
{
    xmalloc_oom_hook = hook;
}

void *
xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);

    if (p == NULL)
        xmalloc_oom(n);
    return p;
}

void *
xcalloc(size_t nmemb, size_t size)
{
    void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

    if (p == NULL)
        xmalloc_oom(nmemb * size);
    return p;
}

void *
xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);

    if (q == NULL)
        xmalloc_oom(n);
    return q;
}

char *
xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char  *p = xmalloc(n);

    memcpy(p, s, n);
    return p;
}

#if defined(__SANITIZE_ADDRESS__)
#define XMALLOC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define XMALLOC_ASAN 1
#endif
#endif

bool
xmalloc_leak_checked(void)
{
#ifdef XMALLOC_ASAN
    return true;
#else
    const char *v = getenv("MCPTOP_FREE_AT_EXIT");

    return v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
#endif
}
