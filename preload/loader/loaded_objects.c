/*
 * Reads the link map for the loader view (loaded_objects.h). The main
 * program's entry has an empty name, so it is named by /proc/self/exe
 * (main_program.h); a string table ld.so did not relocate in place (a value
 * below the load address) is made absolute here.
 */
#include "preload/loader/loaded_objects.h"

#include <pthread.h>
#include <string.h>

#include "common/library_family.h"
#include "preload/cupti/api.h"
#include "preload/loader/main_program.h"

static uintptr_t own_begin, own_end;
static pthread_once_t own_range_once = PTHREAD_ONCE_INIT;

void ct_copy_truncated(char *out, size_t size, const char *text)
{
    size_t n = text ? strnlen(text, size - 1) : 0;
    memcpy(out, text ? text : "", n);
    out[n] = '\0';
}

const char *ct_base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

int ct_is_cuda_stack(const char *path)
{
    char family[64];
    return ct_library_family(path, family, sizeof family);
}

const char *ct_object_path(const struct dl_phdr_info *info)
{
    if (info->dlpi_name && *info->dlpi_name)
        return info->dlpi_name;
    return ct_main_program();
}

static int contains(const struct dl_phdr_info *info, uintptr_t address)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t start = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && address >= start && address < start + ph->p_memsz)
            return 1;
    }
    return 0;
}

struct address_search {
    uintptr_t address;
    char *path;
    size_t size;
    uintptr_t begin, end;
};

static int find_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct address_search *search = data;
    if (!contains(info, search->address))
        return 0;
    ct_copy_truncated(search->path, search->size, ct_object_path(info));
    search->begin = search->end = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t start = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type != PT_LOAD)
            continue;
        if (!search->begin || start < search->begin)
            search->begin = start;
        if (start + ph->p_memsz > search->end)
            search->end = start + ph->p_memsz;
    }
    return 1;
}

void ct_object_containing(uintptr_t address, char *path, size_t size)
{
    struct address_search search = {address, path, size, 0, 0};
    path[0] = '\0';
    dl_iterate_phdr(find_object, &search);
}

static void find_own_range(void)
{
    char path[CT_LOADER_PATH_LEN];
    struct address_search search = {(uintptr_t)find_own_range, path, sizeof path, 0, 0};
    dl_iterate_phdr(find_object, &search);
    own_begin = search.begin;
    own_end = search.end;
}

int ct_is_own_address(uintptr_t address)
{
    pthread_once(&own_range_once, find_own_range);
    return (address >= own_begin && address < own_end) || ct_cupti_made_call((void *)address);
}

uintptr_t ct_own_base(void)
{
    pthread_once(&own_range_once, find_own_range);
    return own_begin;
}

const ElfW(Dyn) * ct_object_dynamic(const struct dl_phdr_info *info, const char **strings)
{
    *strings = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type != PT_DYNAMIC)
            continue;
        const ElfW(Dyn) *dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
        for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++)
            if (d->d_tag == DT_STRTAB)
                *strings =
                    (const char *)(d->d_un.d_ptr < info->dlpi_addr ? d->d_un.d_ptr + info->dlpi_addr
                                                                   : d->d_un.d_ptr);
        return *strings ? dyn : NULL;
    }
    return NULL;
}

void ct_object_soname(const struct dl_phdr_info *info, char *out, size_t size)
{
    const char *strings;
    out[0] = '\0';
    for (const ElfW(Dyn) *d = ct_object_dynamic(info, &strings); d && d->d_tag != DT_NULL; d++)
        if (d->d_tag == DT_SONAME)
            ct_copy_truncated(out, size, strings + d->d_un.d_val);
}

int ct_answers_to(const char *name, const char *path, const char *soname)
{
    if (strchr(name, '/'))
        return strcmp(name, path) == 0;
    return strcmp(ct_base_name(path), name) == 0 || strcmp(soname, name) == 0;
}

struct presence {
    const char *name;
    char *path;
    size_t size;
    int found;
};

static int find_by_name(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct presence *p = data;
    char soname[256];
    ct_object_soname(info, soname, sizeof soname);
    p->found = ct_answers_to(p->name, ct_object_path(info), soname);
    if (p->found && p->path)
        ct_copy_truncated(p->path, p->size, ct_object_path(info));
    return p->found;
}

int ct_loaded_path_of(const char *name, char *path, size_t size)
{
    struct presence p = {name, path, size, 0};
    dl_iterate_phdr(find_by_name, &p);
    return p.found;
}

int ct_name_is_loaded(const char *name)
{
    return ct_loaded_path_of(name, NULL, 0);
}
