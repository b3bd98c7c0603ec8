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
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector/elf/elf_file.h"
#include "cudatrace/shm_layout.h"
#include "cudatrace/trace_names.h"
#include "common/library_family.h"
#include "common/u64_map.h"

static struct ct_u64_map seen; /* dev ^ inode -> 1 */

static void version_from_name(const char *path, char *out, size_t size)
{
    const char *base = strrchr(path, '/');
    const char *so = strstr(base ? base : path, ".so.");
    snprintf(out, size, "%s", so ? so + 4 : "");
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

static void read_version(struct ct_library *lib)
{
    version_from_name(lib->realpath, lib->version, sizeof lib->version);
    lib->version_from = ct_value_version_from_file_name;
    if (strncmp(lib->family, "cudnn", 5) != 0 || strchr(lib->version, '.'))
        return;
    cudnn_version_from_header(lib->realpath, lib->version, sizeof lib->version);
    if (strchr(lib->version, '.'))
        lib->version_from = ct_value_version_from_header;
}

void ct_library_describe(struct ct_library *lib)
{
    if (!realpath(lib->path, lib->realpath))
        snprintf(lib->realpath, sizeof lib->realpath, "%s", lib->path);
    read_version(lib);
    struct ct_elf elf;
    if (ct_elf_open(lib->realpath, &elf))
        return;
    lib->size = elf.size;
    ct_elf_dynamic_string(&elf, DT_SONAME, lib->soname, sizeof lib->soname);
    ct_elf_build_id(&elf, lib->build_id);
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
    int rings_mapped = 0;
    while (fgets(line, sizeof line, maps)) {
        unsigned int major, minor;
        unsigned long long inode;
        int path_at = 0;
        if (sscanf(line, "%*s %*s %*s %x:%x %llu %n", &major, &minor, &inode, &path_at) < 3 ||
            inode == 0 || line[path_at] != '/')
            continue;
        line[strcspn(line, "\n")] = '\0';
        const char *path = line + path_at;
        rings_mapped |= strncmp(path, "/memfd:" CT_SHM_NAME " ", 8 + strlen(CT_SHM_NAME)) == 0;
        uint64_t key = (inode * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)major << 32 | minor);
        if (ct_u64_map_find(&seen, key))
            continue;
        ct_u64_map_put(&seen, key, 1);
        ct_library_describe_new(path, found, ctx);
    }
    fclose(maps);
    return rings_mapped;
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
