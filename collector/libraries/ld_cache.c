/*
 * Reads /etc/ld.so.cache as glibc 2.36's ld.so does: the new format (the
 * whole file since glibc 2.32, or after an old-format part older ldconfigs
 * wrote first), its glibc-hwcaps extension, and the choice among entries of
 * one name. The file is kept mapped, and mapped again when ldconfig has
 * replaced it (by renaming a new file over it). Every offset read from the
 * file is checked against its size; the pre-glibc-2.2 format is not read.
 */
#include "collector/libraries/ld_cache.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collector/libraries/hwcaps.h"

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

/* /etc/ld.so.cache as mapped, and what identifies the file mapped. */
static struct {
    unsigned char *map;
    size_t size;
    const unsigned char *table; /* the new-format header, or NULL */
    size_t table_size;
    struct stat st;
} cache;

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
    const struct ct_ld_cpu *cpu = ct_ld_cpu();
    uint32_t level = (hwcap >> 32) & 0x3ff;
    const char *name = hwcaps_name((uint32_t)hwcap);
    if (level > 3 || !(cpu->isa_levels & (1u << level)) || !name)
        return 0;
    for (int i = 0; i < cpu->count && strncmp(cpu->subdirs[i], "glibc-hwcaps/", 13) == 0; i++)
        if (strncmp(cpu->subdirs[i] + 13, name, strlen(name)) == 0 &&
            cpu->subdirs[i][13 + strlen(name)] == '/')
            return (uint32_t)i + 1;
    return 0;
}

/* A legacy entry (capability subdirectory or platform bits) is usable when
 * every bit it needs is one ld.so has. */
static int legacy_entry_usable(uint64_t hwcap)
{
    const struct ct_ld_cpu *cpu = ct_ld_cpu();
    uint64_t platform = hwcap & CT_HWCAP_PLATFORMS;
    if (hwcap & ~(cpu->hwcap | CT_HWCAP_PLATFORMS | CT_HWCAP_TLS))
        return 0;
    return platform == 0 || (cpu->platform_bit >= 0 && platform == 1ull << cpu->platform_bit);
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
const char *ct_ld_cache_lookup(const char *name)
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
