/*
 * Shards: N mcptop processes split one fleet with no overlap and nothing
 * lost. A server belongs to shard K of N (K from 1) when the 64-bit FNV-1a
 * hash of its config name, taken mod N, is K-1. The hash reads only the
 * name's bytes, so a server keeps its shard when others are added or
 * removed, on every machine and in every build.
 */
#ifndef MCPTOP_ENGINE_SHARD_H
#define MCPTOP_ENGINE_SHARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Shard k of n, k in 1..n. n == 0 means "no sharding": every server. */
struct shard {
    unsigned k;
    unsigned n;
};

/* The most shards a fleet may be split into. */
#define SHARD_MAX 65536u

/* 64-bit FNV-1a of len bytes at p (offset basis 0xcbf29ce484222325,
 * prime 0x100000001b3). Pure; len 0 gives the offset basis. */
uint64_t shard_hash(const void *p, size_t len);

/*
 * Parse "K/N" (decimal, 1 <= K <= N <= SHARD_MAX, nothing else around
 * them). 0 and *out set, or -1 with *cause set (caller frees) naming
 * what is wrong with spec.
 */
int shard_parse(const char *spec, struct shard *out, char **cause);

/* True when the server named name (NUL-terminated) belongs to sh; always
 * true when sh->n is 0. */
bool shard_keeps(const struct shard *sh, const char *name);

#endif
