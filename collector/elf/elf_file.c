/*
 * Reads what the collector needs from an ELF file on disk: the ELF header
 * and program headers, and entries of the dynamic section, with strings
 * located through the PT_LOAD segments. Everything goes through pread on the
 * file, so nothing is mapped and stripped files (no section headers) work.
 */
#include "collector/elf/elf_file.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int ct_elf_read_at(int fd, void *buf, size_t len, uint64_t offset)
{
    return pread(fd, buf, len, (off_t)offset) == (ssize_t)len ? 0 : -1;
}

int ct_elf_open(const char *path, struct ct_elf *elf, uint64_t *size)
{
    elf->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (elf->fd < 0)
        return -1;
    struct stat st;
    if (size && fstat(elf->fd, &st) == 0)
        *size = (uint64_t)st.st_size;
    Elf64_Ehdr eh;
    if (ct_elf_read_at(elf->fd, &eh, sizeof eh, 0) == 0 &&
        memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
        eh.e_phentsize == sizeof(Elf64_Phdr) && eh.e_phnum <= 64 &&
        ct_elf_read_at(elf->fd, elf->ph, eh.e_phnum * sizeof(Elf64_Phdr), eh.e_phoff) == 0) {
        elf->count = eh.e_phnum;
        return 0;
    }
    ct_elf_close(elf);
    return -1;
}

void ct_elf_close(struct ct_elf *elf)
{
    close(elf->fd);
    elf->fd = -1;
}

/* File offset of a virtual address, through the PT_LOAD segments. */
static int64_t file_offset(const struct ct_elf *elf, uint64_t vaddr)
{
    for (int i = 0; i < elf->count; i++) {
        const Elf64_Phdr *ph = &elf->ph[i];
        if (ph->p_type == PT_LOAD && vaddr >= ph->p_vaddr && vaddr < ph->p_vaddr + ph->p_filesz)
            return (int64_t)(vaddr - ph->p_vaddr + ph->p_offset);
    }
    return -1;
}

/* Calls `visit` with each entry of the (first) dynamic section in order,
 * up to DT_NULL or until it returns nonzero. */
static void each_dynamic(const struct ct_elf *elf, int (*visit)(const Elf64_Dyn *d, void *ctx),
                         void *ctx)
{
    const Elf64_Phdr *dynamic = NULL;
    for (int i = 0; i < elf->count && !dynamic; i++)
        if (elf->ph[i].p_type == PT_DYNAMIC)
            dynamic = &elf->ph[i];
    for (uint64_t at = 0; dynamic && at + sizeof(Elf64_Dyn) <= dynamic->p_filesz;
         at += sizeof(Elf64_Dyn)) {
        Elf64_Dyn d;
        if (ct_elf_read_at(elf->fd, &d, sizeof d, dynamic->p_offset + at) || d.d_tag == DT_NULL ||
            visit(&d, ctx))
            return;
    }
}

struct wanted_value {
    int64_t tag;
    uint64_t value;
    int found;
};

static int keep_value(const Elf64_Dyn *d, void *ctx)
{
    struct wanted_value *wanted = ctx;
    if (d->d_tag == wanted->tag) {
        wanted->value = d->d_un.d_val;
        wanted->found = 1;
    }
    return 0;
}

int ct_elf_dynamic_value(const struct ct_elf *elf, int64_t tag, uint64_t *value)
{
    struct wanted_value wanted = {.tag = tag};
    each_dynamic(elf, keep_value, &wanted);
    if (wanted.found)
        *value = wanted.value;
    return wanted.found ? 0 : -1;
}

/* The file offset of the dynamic string table, or -1. */
static int64_t string_table(const struct ct_elf *elf)
{
    uint64_t strtab;
    if (ct_elf_dynamic_value(elf, DT_STRTAB, &strtab) || strtab == 0)
        return -1;
    return file_offset(elf, strtab);
}

static void read_string(const struct ct_elf *elf, int64_t table, uint64_t offset, char *out,
                        size_t size)
{
    ssize_t n = pread(elf->fd, out, size - 1, table + (off_t)offset);
    out[n > 0 ? strnlen(out, (size_t)n) : 0] = '\0';
}

void ct_elf_dynamic_string(const struct ct_elf *elf, int64_t tag, char *out, size_t size)
{
    int64_t table = string_table(elf);
    uint64_t value;
    out[0] = '\0';
    if (table >= 0 && ct_elf_dynamic_value(elf, tag, &value) == 0)
        read_string(elf, table, value, out, size);
}

struct string_visit {
    const struct ct_elf *elf;
    int64_t tag, table;
    int (*visit)(const char *value, void *ctx);
    void *ctx;
};

static int visit_string(const Elf64_Dyn *d, void *ctx)
{
    struct string_visit *v = ctx;
    char text[4096];
    if (d->d_tag != v->tag)
        return 0;
    read_string(v->elf, v->table, d->d_un.d_val, text, sizeof text);
    return v->visit(text, v->ctx);
}

void ct_elf_each_dynamic_string(const struct ct_elf *elf, int64_t tag,
                                int (*visit)(const char *value, void *ctx), void *ctx)
{
    struct string_visit v = {elf, tag, string_table(elf), visit, ctx};
    if (v.table >= 0)
        each_dynamic(elf, visit_string, &v);
}
