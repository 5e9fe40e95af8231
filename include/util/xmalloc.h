/*
 * Allocation that never returns NULL. On exhaustion the hook set by main
 * (it restores the terminal) runs, then the process exits: running out of
 * memory is not bad input but a dead end, and the screen must be restored.
 */
#ifndef MCPTOP_UTIL_XMALLOC_H
#define MCPTOP_UTIL_XMALLOC_H

#include <stdbool.h>
#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/* True when something will look for leaks at exit (built with
 * AddressSanitizer, or MCPTOP_FREE_AT_EXIT set, e.g. under valgrind): then
 * everything is freed before exit; otherwise the process leaves its
 * memory to the kernel in one go. */
bool xmalloc_leak_checked(void);
/* Called once before exit(70) on allocation failure; may be NULL. */
void xmalloc_set_oom_hook(void (*hook)(void));

#endif
