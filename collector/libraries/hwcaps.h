/*
 * The CPU as the dynamic linker sees it (hwcaps.c): the capability
 * subdirectories it tries in every directory it searches, and what it
 * matches ld.so.cache's entries against.
 */
#ifndef CT_COLLECTOR_LIBRARIES_HWCAPS_H
#define CT_COLLECTOR_LIBRARIES_HWCAPS_H

#include <stdint.h>

/* The legacy hwcap bits of x86-64 (HWCAP_X86_64, HWCAP_X86_AVX512_1). */
#define CT_HWCAP_X86_64 (1ull << 1)
#define CT_HWCAP_AVX512_1 (1ull << 2)
/* Legacy ld.so.cache entries carry their platform in bits 48-51 and "tls"
 * in bit 63; haswell is platform 2, xeon_phi 3. */
#define CT_HWCAP_PLATFORMS (0xfull << 48)
#define CT_HWCAP_TLS (1ull << 63)

#define CT_LD_MAX_SUBDIRS 20

struct ct_ld_cpu {
    int ready;
    unsigned int isa_levels; /* bit 0 baseline, 1 x86-64-v2, 2 v3, 3 v4 */
    uint64_t hwcap;          /* legacy hwcap bits */
    char platform[32];       /* $PLATFORM: AT_PLATFORM, or haswell/xeon_phi */
    int platform_bit;        /* its bit in a cache entry's hwcap, or -1 */
    int count;
    /* Tried in this order in every directory, the last one ""; the first
     * ones are the glibc-hwcaps subdirectories, in priority order. */
    char subdirs[CT_LD_MAX_SUBDIRS][64];
};

const struct ct_ld_cpu *ct_ld_cpu(void);

#endif
