/*
 * Shards by a stable hash of the server's name (see shard.h). FNV-1a is
 * the hash the issue names: a few lines, no state, the same value on
 * every platform, and easy to reproduce in any language to find where a
 * server went.
 */
#include "engine/shard.h"

#include <string.h>

#include "util/str.h"

#define SHARD_FNV_OFFSET UINT64_C(0xcbf29ce484222325)
#define SHARD_FNV_PRIME  UINT64_C(0x100000001b3)

uint64_t
shard_hash(const void *p, size_t len)
{
    const unsigned char *b = p;
    uint64_t             h = SHARD_FNV_OFFSET;

    for (size_t i = 0; i < len; i++) {
        h ^= b[i];
        h *= SHARD_FNV_PRIME;
    }
    return h;
}

/* A decimal number from 1 to SHARD_MAX spanning [s, end); 0 when not. */
static unsigned long
shard_number(const char *s, const char *end)
{
    unsigned long v = 0;

    if (s == end || end - s > 6)
        return 0;
    for (const char *c = s; c < end; c++) {
        if (*c < '0' || *c > '9')
            return 0;
        v = v * 10 + (unsigned long)(*c - '0');
    }
    return v <= SHARD_MAX ? v : 0;
}

int
shard_parse(const char *spec, struct shard *out, char **cause)
{
    const char   *slash = strchr(spec, '/');
    unsigned long k, n;

    if (slash == NULL) {
        *cause = str_printf("'%.40s' is not K/N (e.g. 1/3: the first of "
            "three shards)", spec);
        return -1;
    }
    k = shard_number(spec, slash);
    n = shard_number(slash + 1, slash + 1 + strlen(slash + 1));
    if (n == 0) {
        *cause = str_printf("'%.40s': N must be a whole number from 1 to "
            "%u", spec, SHARD_MAX);
        return -1;
    }
    if (k == 0 || k > n) {
        *cause = str_printf("'%.40s': K must be a whole number from 1 to "
            "N (%lu)", spec, n);
        return -1;
    }
    out->k = (unsigned)k;
    out->n = (unsigned)n;
    return 0;
}

bool
shard_keeps(const struct shard *sh, const char *name)
{
    if (sh == NULL || sh->n == 0)
        return true;
    return shard_hash(name, strlen(name)) % sh->n == sh->k - 1;
}
