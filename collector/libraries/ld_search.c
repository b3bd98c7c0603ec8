/*
 * Reconstructs, from the files alone, how glibc 2.36's dynamic linker on
 * x86-64 Debian 12 searches for a library asked for by name: the lists in
 * ld.so's order (DT_RPATH, LD_LIBRARY_PATH, DT_RUNPATH, /etc/ld.so.cache,
 * the default directories), $ORIGIN/$LIB/$PLATFORM expansion, the
 * glibc-hwcaps and legacy capability subdirectories it tries first in each
 * directory (chosen from glibc's own view of this CPU), its test of which
 * files it can load, and the reading of ld.so.cache (kept mapped, mapped
 * again when the file changes). Approximations: ld.so walks DT_RPATH up the
 * whole chain of loaders, this uses the requester's and then the main
 * program's; the process's GLIBC_TUNABLES/LD_HWCAP_MASK, secure-execution
 * rules, --inhibit-cache and --inhibit-rpath are not modelled; directories
 * ld.so already found missing are skipped by it in later searches, here
 * every directory is listed; names ld.so finds already loaded (by SONAME)
 * are never searched, which is the caller's to know; $LIB is Debian's
 * "lib/x86_64-linux-gnu"; the ELF ABI version of ELFOSABI_GNU objects and
 * the pre-glibc-2.2 ld.so.cache format are not checked or read.
 */
#include "collector/libraries/ld_search.h"

#include <cpuid.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/platform/x86.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collector/elf/elf_file.h"

/* glibc's SYSTEM_DIRS on Debian 12 (`ld.so --help` lists them). */
static const char *const default_dirs[] = {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
                                           "/lib", "/usr/lib"};
/* What Debian's ld.so substitutes for $LIB (checked with LD_DEBUG=libs). */
static const char dst_lib[] = "lib/x86_64-linux-gnu";

#define CACHE_PATH "/etc/ld.so.cache"
#define CACHE_MAGIC "glibc-ld.so.cache1.1"
#define CACHE_OLD_MAGIC "ld.so-1.7.0"
/* The new-format header: magic, then u32 entry count (at 20), u32 string
 * table size, u8 flags (at 28), u32 extension directory offset (at 32),
 * padding to 48. An entry: i32 flags, u32 name and path offsets (from the
 * header), u32 unused, u64 hwcap (at 16). */
#define CACHE_HEADER_SIZE 48
#define CACHE_COUNT_AT 20
#define CACHE_FLAGS_AT 28
#define CACHE_EXTENSION_AT 32
#define CACHE_ENTRY_SIZE 24
#define CACHE_FLAGS_X86_64 0x0303 /* FLAG_ELF_LIBC6 | FLAG_X8664_LIB64: all ld.so accepts */
#define CACHE_EXTENSION_MAGIC 0xeaa42174u
#define CACHE_SECTION_HWCAPS 1

/* The legacy hwcap bits of x86-64 (HWCAP_X86_64, HWCAP_X86_AVX512_1). */
#define HWCAP_X86_64 (1ull << 1)
#define HWCAP_AVX512_1 (1ull << 2)
/* Legacy ld.so.cache entries carry their platform in bits 48-51 and "tls"
 * in bit 63; haswell is platform 2, xeon_phi 3. */
#define HWCAP_PLATFORMS (0xfull << 48)
#define HWCAP_TLS (1ull << 63)

#define MAX_SUBDIRS 20

enum verdict { ABSENT, LOADABLE, SKIPPED, REFUSED };

/* What ld.so derives from the CPU at start-up, computed once. */
static struct {
    int ready;
    unsigned int isa_levels; /* bit 0 baseline, 1 x86-64-v2, 2 v3, 3 v4 */
    uint64_t hwcap;          /* legacy hwcap bits */
    char platform[32];       /* $PLATFORM: AT_PLATFORM, or haswell/xeon_phi */
    int platform_bit;        /* its bit in a cache entry's hwcap, or -1 */
    int count;
    /* Tried in this order in every directory, the last one ""; the first
     * ones are the glibc-hwcaps subdirectories, in priority order. */
    char subdirs[MAX_SUBDIRS][64];
} cpu;

/* /etc/ld.so.cache as mapped, and what identifies the file mapped. */
static struct {
    unsigned char *map;
    size_t size;
    const unsigned char *table; /* the new-format header, or NULL */
    size_t table_size;
    struct stat st;
} cache;

/* The paths one object brings to a search. */
struct object {
    char rpath[4096]; /* "" when it has a DT_RUNPATH: ld.so ignores DT_RPATH then */
    char runpath[4096];
    int has_runpath;
    uint64_t flags_1;
    char origin[4096]; /* what $ORIGIN stands for; "" when unknown */
};

/* One search in progress: ct_ld_search and ct_ld_found_via walk the same
 * candidates in the same order, and differ in what a candidate means. */
struct walk {
    const struct ct_ld_process *process;
    const char *name;
    int (*visit)(struct walk *w, const char *candidate, enum ct_ld_list list); /* 1: stop */
    struct ct_ld_result *result; /* ct_ld_search's answer, or NULL */
    struct stat loaded;          /* ct_ld_found_via's file */
    enum ct_ld_list via;
};

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
        cpu.hwcap |= HWCAP_AVX512_1;
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
    if (cpu.hwcap & HWCAP_AVX512_1)
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

static void init_cpu(void)
{
    static const char *const hwcaps[] = {"x86-64-v2", "x86-64-v3", "x86-64-v4"};
    if (cpu.ready)
        return;
    cpu.ready = 1;
    cpu.isa_levels = isa_levels();
    const char *platform = (const char *)getauxval(AT_PLATFORM);
    snprintf(cpu.platform, sizeof cpu.platform, "%s", platform ? platform : "");
    cpu.platform_bit = -1;
    cpu.hwcap = HWCAP_X86_64;
    if (is_intel())
        intel_platform();
    for (int level = 3; level >= 1; level--)
        if (cpu.isa_levels & (1u << level))
            snprintf(cpu.subdirs[cpu.count++], sizeof cpu.subdirs[0], "glibc-hwcaps/%s/",
                     hwcaps[level - 1]);
    add_legacy_subdirs();
    cpu.subdirs[cpu.count++][0] = '\0';
}

/* ---- ld.so.cache ---- */

static int read_u32(const unsigned char *base, size_t size, uint64_t offset, uint32_t *out)
{
    if (offset + sizeof *out > size)
        return -1;
    memcpy(out, base + offset, sizeof *out);
    return 0;
}

/* A NUL-terminated string at `offset` in [base, base + size), or NULL. */
static const char *string_at(const unsigned char *base, size_t size, uint64_t offset)
{
    if (offset >= size || !memchr(base + offset, '\0', size - offset))
        return NULL;
    return (const char *)base + offset;
}

/* Finds the new-format table: the whole file since glibc 2.32, or after the
 * old-format part older ldconfigs wrote first (11-byte magic, u32 count at
 * 12, 12-byte entries from 16), aligned to 8. */
static void cache_locate_table(void)
{
    size_t at = 0;
    uint32_t old_count, count = 0, flags = 0;
    if (cache.size > 16 && memcmp(cache.map, CACHE_OLD_MAGIC, 11) == 0 &&
        !read_u32(cache.map, cache.size, 12, &old_count))
        at = (16 + (size_t)old_count * 12 + 7) & ~(size_t)7;
    if (at + CACHE_HEADER_SIZE > cache.size ||
        memcmp(cache.map + at, CACHE_MAGIC, strlen(CACHE_MAGIC)) != 0)
        return;
    cache.table = cache.map + at;
    cache.table_size = cache.size - at;
    read_u32(cache.table, cache.table_size, CACHE_COUNT_AT, &count);
    read_u32(cache.table, cache.table_size, CACHE_FLAGS_AT, &flags);
    /* The low two flag bits give the byte order; 0 is "unknown", 2 "little". */
    if ((uint64_t)count * CACHE_ENTRY_SIZE > cache.table_size - CACHE_HEADER_SIZE ||
        ((flags & 3) != 0 && (flags & 3) != 2))
        cache.table = NULL;
}

static void cache_unmap(void)
{
    if (cache.map)
        munmap(cache.map, cache.size);
    cache.map = NULL;
    cache.table = NULL;
}

/* Maps the cache, unless the file mapped is still the one there: ldconfig
 * replaces it by renaming a new file over it. */
static void cache_refresh(void)
{
    struct stat st;
    if (stat(CACHE_PATH, &st) != 0 || st.st_size == 0) {
        cache_unmap();
        return;
    }
    if (cache.map && st.st_dev == cache.st.st_dev && st.st_ino == cache.st.st_ino &&
        st.st_size == cache.st.st_size && st.st_mtim.tv_sec == cache.st.st_mtim.tv_sec &&
        st.st_mtim.tv_nsec == cache.st.st_mtim.tv_nsec)
        return;
    cache_unmap();
    int fd = open(CACHE_PATH, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return;
    cache.map = map;
    cache.size = (size_t)st.st_size;
    cache.st = st;
    cache_locate_table();
}

/* ldconfig sorts names comparing runs of digits as numbers, and ld.so looks
 * them up the same way: "libfoo.so.01" is "libfoo.so.1" to it. */
static int same_cache_name(const char *name, const char *key)
{
    while (*name) {
        if (*name >= '0' && *name <= '9' && *key >= '0' && *key <= '9') {
            char *name_end, *key_end;
            if (strtoul(name, &name_end, 10) != strtoul(key, &key_end, 10))
                return 0;
            name = name_end;
            key = key_end;
        } else if (*name++ != *key++) {
            return 0;
        }
    }
    return *key == '\0';
}

/* An entry marked with bit 62 names a glibc-hwcaps subdirectory (through
 * the extension section) in its low 32 bits; bits 32-41 hold its ISA level. */
static int is_hwcaps_entry(uint64_t hwcap)
{
    return ((hwcap >> 32) & ~0x3ffull) == (1ull << 30);
}

/* The glibc-hwcaps subdirectory name number `index` of the cache's
 * extension section, or NULL. Offsets there count from the file start. */
static const char *hwcaps_name(uint32_t index)
{
    uint32_t at = 0, magic, count, tag, offset, size, name;
    read_u32(cache.table, cache.table_size, CACHE_EXTENSION_AT, &at);
    if (at == 0 || read_u32(cache.map, cache.size, at, &magic) || magic != CACHE_EXTENSION_MAGIC ||
        read_u32(cache.map, cache.size, at + 4, &count))
        return NULL;
    for (uint64_t section = at + 8; count-- > 0; section += 16) {
        if (read_u32(cache.map, cache.size, section, &tag) || tag != CACHE_SECTION_HWCAPS ||
            read_u32(cache.map, cache.size, section + 8, &offset) ||
            read_u32(cache.map, cache.size, section + 12, &size))
            continue;
        if ((uint64_t)index * 4 >= size ||
            read_u32(cache.map, cache.size, (uint64_t)offset + index * 4ull, &name))
            return NULL;
        return string_at(cache.map, cache.size, name);
    }
    return NULL;
}

/* ld.so's preference for a glibc-hwcaps entry: 1 for the best subdirectory
 * this CPU supports, 2 for the next, ...; 0 when it cannot use it. */
static uint32_t hwcaps_priority(uint64_t hwcap)
{
    uint32_t level = (hwcap >> 32) & 0x3ff;
    const char *name = hwcaps_name((uint32_t)hwcap);
    if (level > 3 || !(cpu.isa_levels & (1u << level)) || !name)
        return 0;
    for (int i = 0; i < cpu.count && strncmp(cpu.subdirs[i], "glibc-hwcaps/", 13) == 0; i++)
        if (strncmp(cpu.subdirs[i] + 13, name, strlen(name)) == 0 &&
            cpu.subdirs[i][13 + strlen(name)] == '/')
            return (uint32_t)i + 1;
    return 0;
}

/* A legacy entry (capability subdirectory or platform bits) is usable when
 * every bit it needs is one ld.so has. */
static int legacy_entry_usable(uint64_t hwcap)
{
    uint64_t platform = hwcap & HWCAP_PLATFORMS;
    if (hwcap & ~(cpu.hwcap | HWCAP_PLATFORMS | HWCAP_TLS))
        return 0;
    return platform == 0 || (cpu.platform_bit >= 0 && platform == 1ull << cpu.platform_bit);
}

/* Entry `i` of the cache, if it is an x86-64 libc6 entry for `name` with
 * a path: else NULL. */
static const char *entry_path(uint32_t i, const char *name, uint64_t *hwcap)
{
    const unsigned char *entry = cache.table + CACHE_HEADER_SIZE + (size_t)i * CACHE_ENTRY_SIZE;
    int32_t flags;
    uint32_t key, value;
    memcpy(&flags, entry, sizeof flags);
    memcpy(&key, entry + 4, sizeof key);
    memcpy(&value, entry + 8, sizeof value);
    memcpy(hwcap, entry + 16, sizeof *hwcap);
    const char *key_name = string_at(cache.table, cache.table_size, key);
    if (flags != CACHE_FLAGS_X86_64 || !key_name || !same_cache_name(name, key_name))
        return NULL;
    return string_at(cache.table, cache.table_size, value);
}

/* The path ld.so.cache gives for `name`, chosen as ld.so 2.36 chooses among
 * the entries of that name: the glibc-hwcaps ones (sorted first) by
 * priority, else the first plain one this CPU can use. */
static const char *cache_lookup(const char *name)
{
    const char *best = NULL;
    uint32_t best_priority = 0, count = 0;
    cache_refresh();
    if (cache.table)
        read_u32(cache.table, cache.table_size, CACHE_COUNT_AT, &count);
    for (uint32_t i = 0; i < count; i++) {
        uint64_t hwcap;
        const char *path = entry_path(i, name, &hwcap);
        int named = is_hwcaps_entry(hwcap);
        if (!path)
            continue;
        if (!named && best)
            break;
        uint32_t priority = named ? hwcaps_priority(hwcap) : 0;
        if (named ? priority == 0 || (best && priority >= best_priority)
                  : !legacy_entry_usable(hwcap))
            continue;
        best = path;
        best_priority = priority;
        if (!named)
            break;
    }
    return best;
}

/* ---- candidates ---- */

/* Whether e_ident is one ld.so accepts once it knows the class is right. */
static int ident_valid(const unsigned char *id)
{
    for (int i = EI_PAD; i < EI_NIDENT; i++)
        if (id[i])
            return 0;
    return id[EI_DATA] == ELFDATA2LSB && id[EI_VERSION] == EV_CURRENT &&
           (id[EI_OSABI] == ELFOSABI_GNU ||
            (id[EI_OSABI] == ELFOSABI_SYSV && id[EI_ABIVERSION] == 0));
}

/* What ld.so's open_verify makes of a candidate: one it cannot open is
 * passed over, an ELF file of another class or machine is skipped, and any
 * other file it cannot use (not ELF, too short, not a shared object) ends
 * the load with an error: "invalid ELF header", "file too short". */
static enum verdict check_candidate(const char *path)
{
    Elf64_Ehdr eh;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ABSENT;
    int short_read = ct_elf_read_at(fd, &eh, sizeof eh, 0);
    close(fd);
    if (short_read || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
        return REFUSED;
    if (eh.e_ident[EI_CLASS] != ELFCLASS64)
        return SKIPPED;
    if (!ident_valid(eh.e_ident) || eh.e_version != EV_CURRENT)
        return REFUSED;
    if (eh.e_machine != EM_X86_64)
        return SKIPPED;
    if ((eh.e_type != ET_DYN && eh.e_type != ET_EXEC) || eh.e_phentsize != sizeof(Elf64_Phdr))
        return REFUSED;
    return LOADABLE;
}

/* Adds `dir` to the ':'-separated `list` unless it is there (or would not
 * fit whole). */
static void add_distinct(char *list, size_t size, const char *dir)
{
    size_t len = strlen(dir), used = strlen(list);
    for (const char *at = list; *at;) {
        size_t n = strcspn(at, ":");
        if (n == len && strncmp(at, dir, len) == 0)
            return;
        at += n + (at[n] == ':');
    }
    if (used + len + 2 <= size)
        snprintf(list + used, size - used, "%s%s", used ? ":" : "", dir);
}

static void note_searched(struct walk *w, const char *dir)
{
    if (w->result)
        add_distinct(w->result->searched, sizeof w->result->searched, dir);
}

static int visit_search(struct walk *w, const char *candidate, enum ct_ld_list list)
{
    struct ct_ld_result *r = w->result;
    enum verdict verdict = check_candidate(candidate);
    if (verdict == LOADABLE) {
        r->found_in = list;
        snprintf(r->path, sizeof r->path, "%s", candidate);
    } else if (verdict == REFUSED || (verdict == SKIPPED && !r->unloadable[0])) {
        snprintf(r->unloadable, sizeof r->unloadable, "%s", candidate);
    }
    return verdict == LOADABLE || verdict == REFUSED;
}

static int visit_same_file(struct walk *w, const char *candidate, enum ct_ld_list list)
{
    struct stat st;
    if (stat(candidate, &st) != 0 || st.st_dev != w->loaded.st_dev || st.st_ino != w->loaded.st_ino)
        return 0;
    w->via = list;
    return 1;
}

/* ---- search paths ---- */

/* Length of the token `token` at `at` (just after a '$'), as $TOKEN (not
 * followed by an identifier character) or ${TOKEN}; 0 when it is not there. */
static size_t token_length(const char *at, const char *token)
{
    int braced = at[0] == '{';
    size_t len = strlen(token);
    const char *rest = at + braced;
    if (strncmp(rest, token, len) != 0)
        return 0;
    char next = rest[len];
    if (braced)
        return next == '}' ? len + 2 : 0;
    if ((next >= 'A' && next <= 'Z') || (next >= 'a' && next <= 'z') ||
        (next >= '0' && next <= '9') || next == '_')
        return 0;
    return len;
}

/* Expands $ORIGIN, $PLATFORM and $LIB; -1 when ld.so drops the entry (a
 * token it has no value for) or it does not fit. */
static int expand_tokens(const char *in, const char *origin, char *out, size_t size)
{
    size_t used = 0;
    while (*in) {
        const char *value = NULL;
        size_t len = 0;
        if (*in == '$' && (len = token_length(in + 1, "ORIGIN")))
            value = origin;
        else if (*in == '$' && (len = token_length(in + 1, "PLATFORM")))
            value = cpu.platform;
        else if (*in == '$' && (len = token_length(in + 1, "LIB")))
            value = dst_lib;
        if (len && !value[0])
            return -1;
        size_t n = len ? strlen(value) : 1;
        if (used + n >= size)
            return -1;
        memcpy(out + used, len ? value : in, n);
        used += n;
        in += len ? len + 1 : 1;
    }
    out[used] = '\0';
    return 0;
}

/* The directory a search-path entry names, as an absolute path without a
 * trailing '/': ld.so takes an empty entry for the working directory and
 * drops one that expands to nothing. -1 when it is dropped, or relative
 * with no working directory known. */
static int entry_dir(const struct walk *w, const char *entry, const char *origin, char *dir,
                     size_t size)
{
    char expanded[4096] = "";
    if (*entry && (expand_tokens(entry, origin, expanded, sizeof expanded) || !expanded[0]))
        return -1;
    size_t len = strlen(expanded);
    while (len > 1 && expanded[len - 1] == '/')
        expanded[--len] = '\0';
    const char *cwd = w->process->cwd;
    if (expanded[0] != '/' && !cwd)
        return -1;
    int n = expanded[0] == '/' ? snprintf(dir, size, "%s", expanded)
                               : snprintf(dir, size, "%s%s%s", cwd, len ? "/" : "", expanded);
    return n >= 0 && (size_t)n < size ? 0 : -1;
}

/* Tries the name in `dir`: in each capability subdirectory, then in it. */
static int walk_dir(struct walk *w, const char *dir, enum ct_ld_list list)
{
    note_searched(w, dir);
    for (int i = 0; i < cpu.count; i++) {
        char candidate[8192];
        snprintf(candidate, sizeof candidate, "%s%s%s%s", dir, strcmp(dir, "/") ? "/" : "",
                 cpu.subdirs[i], w->name);
        if (w->visit(w, candidate, list))
            return 1;
    }
    return 0;
}

/* Tries each entry of `paths` in turn; 1 when the walk is over. */
static int walk_paths(struct walk *w, const char *paths, const char *separators, const char *origin,
                      enum ct_ld_list list)
{
    if (!paths || !*paths)
        return 0;
    for (const char *at = paths;; at++) {
        size_t len = strcspn(at, separators);
        char entry[4096], dir[4096];
        if (len < sizeof entry) {
            memcpy(entry, at, len);
            entry[len] = '\0';
            if (entry_dir(w, entry, origin, dir, sizeof dir) == 0 && walk_dir(w, dir, list))
                return 1;
        }
        at += len;
        if (!*at)
            return 0;
    }
}

static int in_default_dir(const char *path)
{
    for (size_t i = 0; i < sizeof default_dirs / sizeof default_dirs[0]; i++) {
        size_t len = strlen(default_dirs[i]);
        if (strncmp(path, default_dirs[i], len) == 0 && path[len] == '/')
            return 1;
    }
    return 0;
}

/* The cache entry, unless the requester has DF_1_NODEFLIB and the entry
 * lies in a default directory. */
static int walk_cache(struct walk *w, const struct object *requester)
{
    const char *path = cache_lookup(w->name);
    if (!path || ((requester->flags_1 & DF_1_NODEFLIB) && in_default_dir(path)))
        return 0;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        slash[slash == dir ? 1 : 0] = '\0'; /* a file at the root keeps "/" */
    note_searched(w, dir);
    return w->visit(w, path, CT_LD_CACHE);
}

static void walk_defaults(struct walk *w, const struct object *requester)
{
    if (requester->flags_1 & DF_1_NODEFLIB)
        return;
    for (size_t i = 0; i < sizeof default_dirs / sizeof default_dirs[0]; i++)
        if (walk_dir(w, default_dirs[i], CT_LD_DEFAULT))
            return;
}

/* What $ORIGIN stands for in an object's paths: the directory of the path
 * it was opened as (ld.so keeps the name it opened), or of the main
 * program's real path (ld.so reads /proc/self/exe). "" when unknown. */
static void object_origin(const char *path, const char *cwd, int is_main, char *out, size_t size)
{
    char real[PATH_MAX];
    out[0] = '\0';
    if (!path)
        return;
    if (is_main && realpath(path, real))
        path = real;
    const char *slash = strrchr(path, '/');
    if (slash)
        snprintf(out, size, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    else if (cwd)
        snprintf(out, size, "%s", cwd);
}

static void read_object(const char *path, const char *cwd, int is_main, struct object *o)
{
    struct ct_elf elf;
    uint64_t ignored;
    o->rpath[0] = o->runpath[0] = '\0';
    o->has_runpath = 0;
    o->flags_1 = 0;
    object_origin(path, cwd, is_main, o->origin, sizeof o->origin);
    if (!path || ct_elf_open(path, &elf, NULL))
        return;
    o->has_runpath = ct_elf_dynamic_value(&elf, DT_RUNPATH, &ignored) == 0;
    if (o->has_runpath)
        ct_elf_dynamic_string(&elf, DT_RUNPATH, o->runpath, sizeof o->runpath);
    else
        ct_elf_dynamic_string(&elf, DT_RPATH, o->rpath, sizeof o->rpath);
    if (ct_elf_dynamic_value(&elf, DT_FLAGS_1, &o->flags_1))
        o->flags_1 = 0;
    ct_elf_close(&elf);
}

static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return a && b && stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* The lists in ld.so's order (_dl_map_object). */
static void walk(struct walk *w, const char *requester)
{
    const struct ct_ld_process *p = w->process;
    struct object req, program;
    int requester_is_main = same_file(requester, p->main_program);
    read_object(requester, p->cwd, requester_is_main, &req);
    read_object(p->main_program, p->cwd, 1, &program);
    if (!req.has_runpath &&
        (walk_paths(w, req.rpath, ":", req.origin, CT_LD_RPATH) ||
         (!requester_is_main && walk_paths(w, program.rpath, ":", program.origin, CT_LD_RPATH))))
        return;
    if (walk_paths(w, p->ld_library_path, ":;", program.origin, CT_LD_LIBRARY_PATH) ||
        walk_paths(w, req.runpath, ":", req.origin, CT_LD_RUNPATH) || walk_cache(w, &req))
        return;
    walk_defaults(w, &req);
}

/* A name with a '/' is opened as it is, after token expansion. */
static void search_path_name(struct walk *w, const char *requester)
{
    char origin[4096], expanded[4096];
    const char *cwd = w->process->cwd;
    object_origin(requester, cwd, same_file(requester, w->process->main_program), origin,
                  sizeof origin);
    if (expand_tokens(w->name, origin, expanded, sizeof expanded) || (expanded[0] != '/' && !cwd))
        return;
    char path[8192];
    snprintf(path, sizeof path, "%s%s%s", expanded[0] == '/' ? "" : cwd,
             expanded[0] == '/' ? "" : "/", expanded);
    w->visit(w, path, CT_LD_ABSOLUTE);
}

void ct_ld_search(const struct ct_ld_process *process, const char *name, const char *requester,
                  struct ct_ld_result *out)
{
    struct walk w = {.process = process, .name = name, .visit = visit_search, .result = out};
    out->found_in = CT_LD_NOT_FOUND;
    out->path[0] = out->searched[0] = out->unloadable[0] = '\0';
    init_cpu();
    if (strchr(name, '/'))
        search_path_name(&w, requester);
    else
        walk(&w, requester);
}

enum ct_ld_list ct_ld_found_via(const struct ct_ld_process *process, const char *name,
                                const char *requester, const char *loaded)
{
    struct walk w = {.process = process, .name = name, .visit = visit_same_file};
    if (strchr(name, '/'))
        return CT_LD_ABSOLUTE;
    if (stat(loaded, &w.loaded) != 0)
        return CT_LD_NOT_FOUND;
    w.via = CT_LD_NOT_FOUND;
    init_cpu();
    walk(&w, requester);
    return w.via;
}

const char *ct_ld_list_name(enum ct_ld_list list)
{
    switch (list) {
    case CT_LD_ABSOLUTE:
        return "absolute path";
    case CT_LD_RPATH:
        return "DT_RPATH";
    case CT_LD_LIBRARY_PATH:
        return "LD_LIBRARY_PATH";
    case CT_LD_RUNPATH:
        return "DT_RUNPATH";
    case CT_LD_CACHE:
        return "ld.so.cache";
    case CT_LD_DEFAULT:
        return "default directories";
    default:
        return "unknown";
    }
}

/* Whether a search-path entry (`entry` as written, `dir` expanded) is where
 * the object's packager meant its libraries to come from: relative to the
 * object itself, or inside a pip nvidia/ or a conda tree. A system
 * directory on it is not that. */
static int meant_for_its_libraries(const char *entry, const char *dir)
{
    return strstr(entry, "$ORIGIN") || strstr(entry, "${ORIGIN}") || strstr(dir, "/nvidia/") ||
           strstr(dir, "conda");
}

/* Removes "." and "dir/.." from an absolute path, in place, without asking
 * the file system (the directory may well not exist: that is the point). */
static void normalise(char *path)
{
    char *out = path;
    for (const char *at = path; *at;) {
        while (*at == '/')
            at++;
        size_t len = strcspn(at, "/");
        if (len == 2 && strncmp(at, "..", 2) == 0) {
            while (out > path && *--out != '/')
                ;
        } else if (len && !(len == 1 && *at == '.')) {
            *out++ = '/';
            memmove(out, at, len);
            out += len;
        }
        at += len;
    }
    if (out == path)
        *out++ = '/';
    *out = '\0';
}

void ct_ld_own_dirs(const struct ct_ld_process *process, const char *requester, int meant_only,
                    char *out, size_t size)
{
    struct object o;
    struct walk w = {.process = process};
    out[0] = '\0';
    init_cpu();
    read_object(requester, process->cwd, same_file(requester, process->main_program), &o);
    const char *paths = o.has_runpath ? o.runpath : o.rpath;
    for (const char *at = paths; *at;) {
        size_t len = strcspn(at, ":");
        char entry[4096], dir[4096];
        if (len < sizeof entry) {
            snprintf(entry, sizeof entry, "%.*s", (int)len, at);
            if (entry_dir(&w, entry, o.origin, dir, sizeof dir) == 0 &&
                (!meant_only || meant_for_its_libraries(entry, dir))) {
                normalise(dir);
                add_distinct(out, size, dir);
            }
        }
        at += len + (at[len] == ':');
    }
}
