/*
 * What every fuzz target shares: the libFuzzer entry point's prototype, a
 * check that stops the run with a message (libFuzzer then saves the input
 * as crash-*), and a small deterministic generator seeded from the input,
 * so that chunk sizes and limits vary with the input yet a saved input
 * replays exactly.
 */
#ifndef MCPTOP_FUZZ_H
#define MCPTOP_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* A property the target asserts: on failure, say which and abort. */
#define FUZZ_CHECK(cond, ...)                                             \
    do {                                                                  \
        if (!(cond)) {                                                    \
            fprintf(stderr, "%s:%d: property failed: %s: ", __FILE__,     \
                __LINE__, #cond);                                         \
            fprintf(stderr, __VA_ARGS__);                                 \
            fputc('\n', stderr);                                          \
            abort();                                                      \
        }                                                                 \
    } while (0)

/* FNV-1a over n bytes, continuing from h (start with FUZZ_HASH_INIT). */
#define FUZZ_HASH_INIT 0xcbf29ce484222325ULL

static inline uint64_t
fuzz_hash(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = p;
    size_t               i;

    for (i = 0; i < n; i++) {
        h ^= s[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* Hash a length, then the bytes: field boundaries count. */
static inline uint64_t
fuzz_hash_field(uint64_t h, const void *p, size_t n)
{
    uint64_t len = n;

    h = fuzz_hash(h, &len, sizeof len);
    return fuzz_hash(h, p, n);
}

/* splitmix64: the next value of the generator state *s. */
static inline uint64_t
fuzz_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A value in [lo, hi]. */
static inline size_t
fuzz_range(uint64_t *s, size_t lo, size_t hi)
{
    return lo + (size_t)(fuzz_next(s) % (uint64_t)(hi - lo + 1));
}

#endif
