/* FNV-1a: nvtxcorr's one string hash, for tables and identities, not for checksums. The
 * 64-bit form hashes everything new; the 32-bit form stays for the two places whose values
 * are 32 bits wide: a graph's signature, which users copy into label tables
 * (`graph:sig=9f2c01ab`, docs/labels.md) and so must not change between versions, and the
 * program-context elements, whose slots store 32-bit hashes. Both take the running hash, so a
 * value hashed in pieces (a file read in blocks) hashes as if whole. Inline: program context
 * hashes each NVTX message as it reads it. */
#ifndef NVTXCORR_HASH_H
#define NVTXCORR_HASH_H

#include <stddef.h>
#include <stdint.h>

#define NVTXCORR_FNV64_START 0xcbf29ce484222325ull
#define NVTXCORR_FNV32_START 2166136261u

static inline uint64_t nvtxcorr_fnv64_byte(uint64_t h, unsigned char c)
{
    return (h ^ c) * 0x100000001b3ull;
}

/* The running hash h continued over the n bytes at p. */
static inline uint64_t nvtxcorr_fnv64(uint64_t h, const void *p, size_t n)
{
    for (const unsigned char *c = p; n--; c++)
        h = nvtxcorr_fnv64_byte(h, *c);
    return h;
}

static inline uint32_t nvtxcorr_fnv32_byte(uint32_t h, unsigned char c)
{
    return (h ^ c) * 16777619u;
}

static inline uint32_t nvtxcorr_fnv32(uint32_t h, const void *p, size_t n)
{
    for (const unsigned char *c = p; n--; c++)
        h = nvtxcorr_fnv32_byte(h, *c);
    return h;
}

/* A NUL-terminated string from the start (the label table's exact rules, the core's label
 * intern, profile mode's sites, labels and CUPTI's kernel names). */
static inline uint64_t nvtxcorr_hash_str(const char *s)
{
    uint64_t h = NVTXCORR_FNV64_START;
    for (; *s; s++)
        h = nvtxcorr_fnv64_byte(h, (unsigned char)*s);
    return h;
}

#endif
