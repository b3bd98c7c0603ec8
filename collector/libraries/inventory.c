/*
 * Finds the CUDA-stack libraries a process has mapped by reading
 * /proc/PID/maps from the collector, and describes each from the file itself:
 * SONAME and GNU build-id from the ELF program headers (no section headers
 * needed), version from the file name, size. All of it happens outside the
 * traced process, so it costs the program nothing and cannot change what it
 * loads. A library is reported once per (device, inode).
 */
#include "collector/libraries/inventory.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector/elf/elf_file.h"
#include "common/library_family.h"
#include "common/u64_map.h"

static struct ct_u64_map seen; /* dev ^ inode -> 1 */

static void version_from_name(const char *path, char *out, size_t size)
{
    const char *base = strrchr(path, '/');
    const char *so = strstr(base ? base : path, ".so.");
    snprintf(out, size, "%s", so ? so + 4 : "");
}

static void read_build_id(int fd, const Elf64_Phdr *ph, int count, char *out)
{
    for (int i = 0; i < count; i++) {
        if (ph[i].p_type != PT_NOTE)
            continue;
        for (uint64_t at = 0; at + sizeof(Elf64_Nhdr) <= ph[i].p_filesz;) {
            Elf64_Nhdr n;
            if (ct_elf_read_at(fd, &n, sizeof n, ph[i].p_offset + at))
                break;
            uint64_t name_len = (n.n_namesz + 3) & ~3u, desc_len = (n.n_descsz + 3) & ~3u;
            unsigned char desc[32];
            char name[4];
            if (n.n_type == NT_GNU_BUILD_ID && n.n_namesz == 4 && n.n_descsz <= sizeof desc &&
                !ct_elf_read_at(fd, name, 4, ph[i].p_offset + at + sizeof n) &&
                memcmp(name, "GNU", 4) == 0 &&
                !ct_elf_read_at(fd, desc, n.n_descsz, ph[i].p_offset + at + sizeof n + name_len)) {
                for (uint32_t k = 0; k < n.n_descsz; k++)
                    sprintf(out + 2 * k, "%02x", desc[k]);
                return;
            }
            at += sizeof n + name_len + desc_len;
        }
    }
}

/* DT_RUNPATH, else DT_RPATH (the loader ignores RPATH when RUNPATH is set). */
static void read_runpath(const struct ct_elf *elf, char *out, size_t size)
{
    ct_elf_dynamic_string(elf, DT_RUNPATH, out, size);
    if (!*out)
        ct_elf_dynamic_string(elf, DT_RPATH, out, size);
}

/* The CUDA major a RUNPATH names: NVIDIA's cuDNN builds look for the CUDA
 * libraries they need in $ORIGIN/../../cu13/lib. 0 when it names none. */
static long cuda_major_in(const char *runpath)
{
    for (const char *at = runpath; (at = strstr(at, "/cu")) != NULL; at += 3) {
        char *end;
        long major = strtol(at + 3, &end, 10);
        if (end != at + 3 && *end == '/')
            return major;
    }
    return 0;
}

/* A `#define NAME value` of a header, or -1. */
static long header_define(const char *header, const char *name)
{
    FILE *f = fopen(header, "re");
    char line[512], want[64];
    long value = -1;
    snprintf(want, sizeof want, "#define %s ", name);
    while (f && value < 0 && fgets(line, sizeof line, f))
        if (strncmp(line, want, strlen(want)) == 0)
            value = strtol(line + strlen(want), NULL, 10);
    if (f)
        fclose(f);
    return value;
}

/* cuDNN's file names carry only its major (libcudnn.so.9). The header that
 * is installed with it (include/ beside lib/, in a toolkit as in NVIDIA's
 * wheel) says the rest; it is believed only when its major is the file's. */
static void cudnn_version_from_header(const char *realpath, char *version, size_t size)
{
    char header[4096 + 64];
    snprintf(header, sizeof header, "%s", realpath);
    for (int up = 0; up < 2; up++) {
        char *slash = strrchr(header, '/');
        if (!slash)
            return;
        *slash = '\0';
    }
    strcat(header, "/include/cudnn_version.h");
    long major = header_define(header, "CUDNN_MAJOR"), minor = header_define(header, "CUDNN_MINOR");
    long patch = header_define(header, "CUDNN_PATCHLEVEL");
    if (major >= 0 && minor >= 0 && patch >= 0 && major == strtol(version, NULL, 10))
        snprintf(version, size, "%ld.%ld.%ld", major, minor, patch);
}

void ct_library_describe(struct ct_library *lib)
{
    if (!realpath(lib->path, lib->realpath))
        snprintf(lib->realpath, sizeof lib->realpath, "%s", lib->path);
    version_from_name(lib->realpath, lib->version, sizeof lib->version);
    if (strncmp(lib->family, "cudnn", 5) == 0 && !strchr(lib->version, '.'))
        cudnn_version_from_header(lib->realpath, lib->version, sizeof lib->version);
    struct ct_elf elf;
    if (ct_elf_open(lib->realpath, &elf, &lib->size))
        return;
    ct_elf_dynamic_string(&elf, DT_SONAME, lib->soname, sizeof lib->soname);
    read_build_id(elf.fd, elf.ph, elf.count, lib->build_id);
    if (strncmp(lib->family, "cudnn", 5) == 0) {
        char runpath[4096];
        read_runpath(&elf, runpath, sizeof runpath);
        lib->built_for_cuda = cuda_major_in(runpath);
    }
    ct_elf_close(&elf);
}

int ct_library_scan(int32_t pid, void (*found)(const struct ct_library *lib, void *ctx), void *ctx)
{
    char maps_path[64], line[4096 + 256];
    snprintf(maps_path, sizeof maps_path, "/proc/%d/maps", (int)pid);
    FILE *maps = fopen(maps_path, "re");
    if (!maps)
        return -1;
    while (fgets(line, sizeof line, maps)) {
        unsigned int major, minor;
        unsigned long long inode;
        int path_at = 0;
        if (sscanf(line, "%*s %*s %*s %x:%x %llu %n", &major, &minor, &inode, &path_at) < 3 ||
            inode == 0 || line[path_at] != '/')
            continue;
        line[strcspn(line, "\n")] = '\0';
        const char *path = line + path_at;
        uint64_t key = (inode * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)major << 32 | minor);
        if (ct_u64_map_find(&seen, key))
            continue;
        ct_u64_map_put(&seen, key, 1);
        ct_library_describe_new(path, found, ctx);
    }
    fclose(maps);
    return 0;
}

/* FNV-1a: a key for a path; never 0, which the map cannot hold. */
static uint64_t path_key(const char *path)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const unsigned char *c = (const unsigned char *)path; *c; c++)
        h = (h ^ *c) * 0x100000001b3ull;
    return h ? h : 1;
}

static struct ct_u64_map described; /* realpath -> 1 */

int ct_library_described(const char *path)
{
    char real[PATH_MAX];
    return realpath(path, real) && ct_u64_map_find(&described, path_key(real)) != NULL;
}

void ct_library_describe_new(const char *path, void (*found)(const struct ct_library *, void *),
                             void *ctx)
{
    static struct ct_library lib;
    memset(&lib, 0, sizeof lib);
    if (!ct_library_family(path, lib.family, sizeof lib.family))
        return;
    snprintf(lib.path, sizeof lib.path, "%s", path);
    ct_library_describe(&lib);
    uint64_t key = path_key(lib.realpath);
    if (ct_u64_map_find(&described, key))
        return;
    ct_u64_map_put(&described, key, 1);
    found(&lib, ctx);
}

/* Adds `arch` to the ','-separated list `out` unless it is there. */
static void add_arch(char *out, size_t size, const char *arch)
{
    size_t len = strlen(arch), used = strlen(out);
    for (const char *at = out; (at = strstr(at, arch)) != NULL; at += len)
        if ((at == out || at[-1] == ',') && (at[len] == ',' || at[len] == '\0'))
            return;
    snprintf(out + used, size - used, "%s%s", used ? "," : "", arch);
}

/* The fat binary layout in a .nv_fatbin section: containers of a header
 * and entries, each entry a header and its payload. Both headers are laid
 * out without padding, so they are read as they are. */
struct fatbin_header {
    uint32_t magic; /* 0xBA55ED50 */
    uint16_t version;
    uint16_t header_size;
    uint64_t entries_size;
};

struct fatbin_entry {
    uint16_t kind; /* 1: PTX, 2: ELF (SASS) */
    uint16_t unknown;
    uint32_t header_size;
    uint64_t payload_size;
    uint32_t compressed_size;
    uint32_t unknown2;
    uint16_t minor, major;
    uint32_t arch; /* the SM number: 80 for sm_80 */
};
_Static_assert(sizeof(struct fatbin_header) == 16 && sizeof(struct fatbin_entry) == 32,
               "fat binary headers have no padding");

/* Lists the architectures of every entry of the containers in
 * [start, start + size). Containers are 8-byte aligned, with padding
 * between them. */
static void read_fatbin_archs(int fd, uint64_t start, uint64_t size, char *out, size_t out_size)
{
    uint64_t at = start, end = start + size;
    while (at + sizeof(struct fatbin_header) <= end) {
        struct fatbin_header h;
        if (ct_elf_read_at(fd, &h, sizeof h, at))
            return;
        if (h.magic != 0xBA55ED50u || h.header_size < sizeof h) {
            at += 8;
            continue;
        }
        uint64_t entry = at + h.header_size, entries_end = entry + h.entries_size;
        while (entry + sizeof(struct fatbin_entry) <= entries_end && entries_end <= end) {
            struct fatbin_entry e;
            if (ct_elf_read_at(fd, &e, sizeof e, entry))
                return;
            if (e.header_size < sizeof e)
                break;
            char name[32];
            snprintf(name, sizeof name, "%s_%u", e.kind == 1 ? "compute" : "sm", e.arch);
            if (e.kind == 1 || e.kind == 2)
                add_arch(out, out_size, name);
            entry += e.header_size + e.payload_size;
        }
        at = entries_end > at ? entries_end : at + 8;
    }
}

void ct_library_fatbin_archs(const char *path, char *out, size_t size)
{
    out[0] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    Elf64_Ehdr eh;
    Elf64_Shdr strings;
    if (ct_elf_read_at(fd, &eh, sizeof eh, 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
        eh.e_shstrndx >= eh.e_shnum ||
        ct_elf_read_at(fd, &strings, sizeof strings,
                       eh.e_shoff + eh.e_shstrndx * sizeof(Elf64_Shdr))) {
        close(fd);
        return;
    }
    for (uint16_t i = 0; i < eh.e_shnum; i++) {
        Elf64_Shdr sh;
        char name[16] = {0};
        if (ct_elf_read_at(fd, &sh, sizeof sh, eh.e_shoff + i * sizeof(Elf64_Shdr)) ||
            pread(fd, name, sizeof name - 1, (off_t)(strings.sh_offset + sh.sh_name)) <= 0)
            break;
        if (strcmp(name, ".nv_fatbin") == 0)
            read_fatbin_archs(fd, sh.sh_offset, sh.sh_size, out, size);
    }
    close(fd);
}
