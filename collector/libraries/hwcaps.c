/*
 * What glibc 2.36's ld.so on x86-64 derives from the CPU at start-up, worked
 * out the same way from glibc's own view of this CPU (<sys/platform/x86.h>):
 * the ISA levels it reaches, which give the glibc-hwcaps subdirectories;
 * the legacy capabilities and $PLATFORM (Intel CPUs get "haswell" or
 * "xeon_phi" in place of AT_PLATFORM), which give the legacy ones, every
 * combination tried, most specific first. Computed once.
 */
#include "collector/libraries/hwcaps.h"

#include <cpuid.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/platform/x86.h>

static struct ct_ld_cpu cpu;

/* A CPU feature as glibc sees it, active (usable) or only present. Read
 * here rather than through CPU_FEATURE_ACTIVE, whose inline helper shifts a
 * signed 1 into bit 31, which the sanitizers reject. */
static int cpu_bit(unsigned int feature, int active)
{
    const struct cpuid_feature *leaf = __x86_get_cpuid_feature_leaf(feature / 128);
    const unsigned int *words = active ? leaf->active_array : leaf->cpuid_array;
    unsigned int bit = feature % 128;
    return (words[bit / 32] >> (bit % 32)) & 1u;
}

/* The ISA levels this CPU reaches, tested as glibc 2.36 does (each level
 * needs the ones below it); the glibc-hwcaps subdirectories follow. */
static unsigned int isa_levels(void)
{
    static const struct {
        unsigned char level;
        unsigned short feature;
    } needs[] = {
        {0, x86_cpu_CMOV},       {0, x86_cpu_CX8},           {0, x86_cpu_FXSR},
        {0, x86_cpu_MMX},        {0, x86_cpu_SSE},           {0, x86_cpu_SSE2},
        {1, x86_cpu_CMPXCHG16B}, {1, x86_cpu_LAHF64_SAHF64}, {1, x86_cpu_POPCNT},
        {1, x86_cpu_SSE3},       {1, x86_cpu_SSSE3},         {1, x86_cpu_SSE4_1},
        {1, x86_cpu_SSE4_2},     {2, x86_cpu_AVX},           {2, x86_cpu_AVX2},
        {2, x86_cpu_F16C},       {2, x86_cpu_FMA},           {2, x86_cpu_LZCNT},
        {2, x86_cpu_MOVBE},      {3, x86_cpu_AVX512F},       {3, x86_cpu_AVX512BW},
        {3, x86_cpu_AVX512CD},   {3, x86_cpu_AVX512DQ},      {3, x86_cpu_AVX512VL},
    };
    unsigned int levels = cpu_bit(x86_cpu_FPU, 0) ? 0xfu : 0;
    for (size_t i = 0; i < sizeof needs / sizeof needs[0]; i++)
        if (!cpu_bit(needs[i].feature, 1))
            levels &= (1u << needs[i].level) - 1;
    return levels;
}

static int is_intel(void)
{
    unsigned int eax, ebx, ecx, edx;
    return __get_cpuid(0, &eax, &ebx, &ecx, &edx) && ebx == signature_INTEL_ebx &&
           ecx == signature_INTEL_ecx && edx == signature_INTEL_edx;
}

/* On Intel CPUs ld.so replaces AT_PLATFORM with "xeon_phi" or "haswell" and
 * may add the avx512_1 capability. */
static void intel_platform(void)
{
    int avx512 = cpu_bit(x86_cpu_AVX512CD, 1), er = cpu_bit(x86_cpu_AVX512ER, 1);
    if (avx512 && er && cpu_bit(x86_cpu_AVX512PF, 1)) {
        snprintf(cpu.platform, sizeof cpu.platform, "xeon_phi");
        cpu.platform_bit = 48 + 3;
        return;
    }
    if (avx512 && !er && cpu_bit(x86_cpu_AVX512BW, 1) && cpu_bit(x86_cpu_AVX512DQ, 1) &&
        cpu_bit(x86_cpu_AVX512VL, 1))
        cpu.hwcap |= CT_HWCAP_AVX512_1;
    if (cpu_bit(x86_cpu_AVX2, 1) && cpu_bit(x86_cpu_FMA, 1) && cpu_bit(x86_cpu_BMI1, 1) &&
        cpu_bit(x86_cpu_BMI2, 1) && cpu_bit(x86_cpu_LZCNT, 1) && cpu_bit(x86_cpu_MOVBE, 1) &&
        cpu_bit(x86_cpu_POPCNT, 1)) {
        snprintf(cpu.platform, sizeof cpu.platform, "haswell");
        cpu.platform_bit = 48 + 2;
    }
}

/* glibc 2.36 still tries every combination of the legacy capabilities
 * (x86_64, avx512_1, the platform, tls), most specific first, each path
 * naming them in reverse order: tls/x86_64/x86_64, tls/x86_64, ... */
static void add_legacy_subdirs(void)
{
    const char *parts[4];
    int n = 0;
    parts[n++] = "x86_64";
    if (cpu.hwcap & CT_HWCAP_AVX512_1)
        parts[n++] = "avx512_1";
    if (cpu.platform[0])
        parts[n++] = cpu.platform;
    parts[n++] = "tls";
    for (unsigned int mask = (1u << n) - 1; mask > 0; mask--) {
        char *subdir = cpu.subdirs[cpu.count++];
        size_t used = 0;
        for (int i = n - 1; i >= 0; i--)
            if (mask & (1u << i))
                used +=
                    (size_t)snprintf(subdir + used, sizeof cpu.subdirs[0] - used, "%s/", parts[i]);
    }
}

const struct ct_ld_cpu *ct_ld_cpu(void)
{
    static const char *const hwcaps[] = {"x86-64-v2", "x86-64-v3", "x86-64-v4"};
    if (cpu.ready)
        return &cpu;
    cpu.ready = 1;
    cpu.isa_levels = isa_levels();
    const char *platform = (const char *)getauxval(AT_PLATFORM);
    snprintf(cpu.platform, sizeof cpu.platform, "%s", platform ? platform : "");
    cpu.platform_bit = -1;
    cpu.hwcap = CT_HWCAP_X86_64;
    if (is_intel())
        intel_platform();
    for (int level = 3; level >= 1; level--)
        if (cpu.isa_levels & (1u << level))
            snprintf(cpu.subdirs[cpu.count++], sizeof cpu.subdirs[0], "glibc-hwcaps/%s/",
                     hwcaps[level - 1]);
    add_legacy_subdirs();
    cpu.subdirs[cpu.count++][0] = '\0';
    return &cpu;
}
