/*
 * Reads an ELF file on disk (elf_file.h): the ELF header and program
 * headers, entries of the dynamic section with strings located through the
 * PT_LOAD segments, the build-id note, and the section headers with their
 * names and contents. Everything goes through pread on the file, so nothing
 * is mapped and stripped files (no section headers) keep what the program
 * headers give.
 */
#include "collector/elf/elf_file.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_SECTION_NAMES ((uint64_t)1 << 20)

int ct_elf_read_at(int fd, void *buf, size_t len, uint64_t offset)
{
    return pread(fd, buf, len, (off_t)offset) == (ssize_t)len ? 0 : -1;
}

int ct_elf_open(const char *path, struct ct_elf *elf)
{
    elf->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (elf->fd < 0)
        return -1;
    struct stat st;
    elf->size = fstat(elf->fd, &st) == 0 ? (uint64_t)st.st_size : 0;
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

void ct_elf_build_id(const struct ct_elf *elf, char *out)
{
    out[0] = '\0';
    for (int i = 0; i < elf->count; i++) {
        const Elf64_Phdr *ph = &elf->ph[i];
        if (ph->p_type != PT_NOTE)
            continue;
        for (uint64_t at = 0; at + sizeof(Elf64_Nhdr) <= ph->p_filesz;) {
            Elf64_Nhdr n;
            if (ct_elf_read_at(elf->fd, &n, sizeof n, ph->p_offset + at))
                break;
            uint64_t name_len = (n.n_namesz + 3) & ~3u, desc_len = (n.n_descsz + 3) & ~3u;
            unsigned char desc[32];
            char name[4];
            uint64_t desc_at = ph->p_offset + at + sizeof n + name_len;
            if (n.n_type == NT_GNU_BUILD_ID && n.n_namesz == 4 && n.n_descsz <= sizeof desc &&
                !ct_elf_read_at(elf->fd, name, 4, ph->p_offset + at + sizeof n) &&
                memcmp(name, "GNU", 4) == 0 &&
                !ct_elf_read_at(elf->fd, desc, n.n_descsz, desc_at)) {
                for (uint32_t k = 0; k < n.n_descsz; k++)
                    sprintf(out + 2 * k, "%02x", desc[k]);
                return;
            }
            at += sizeof n + name_len + desc_len;
        }
    }
}

uint8_t *ct_elf_read_section(const struct ct_elf *elf, const Elf64_Shdr *h, uint64_t limit)
{
    if (h->sh_type == SHT_NOBITS || (h->sh_flags & SHF_COMPRESSED) || h->sh_size > limit ||
        h->sh_offset > elf->size || h->sh_size > elf->size - h->sh_offset)
        return NULL;
    uint8_t *data = malloc(h->sh_size + 1);
    if (!data)
        abort();
    if (ct_elf_read_at(elf->fd, data, h->sh_size, h->sh_offset)) {
        free(data);
        return NULL;
    }
    data[h->sh_size] = 0;
    return data;
}

/* The section count and name-table index, which a file with too many
 * sections keeps in section 0 instead of the ELF header. */
static int section_counts(int fd, const Elf64_Ehdr *eh, uint64_t *count, uint32_t *names)
{
    *count = eh->e_shnum;
    *names = eh->e_shstrndx;
    if (*count != 0 && *names != SHN_XINDEX)
        return 0;
    Elf64_Shdr first;
    if (ct_elf_read_at(fd, &first, sizeof first, eh->e_shoff))
        return -1;
    if (*count == 0)
        *count = first.sh_size;
    if (*names == SHN_XINDEX)
        *names = first.sh_link;
    return 0;
}

int ct_elf_read_sections(const struct ct_elf *elf, struct ct_elf_sections *s)
{
    Elf64_Ehdr eh;
    uint64_t count;
    uint32_t names;
    *s = (struct ct_elf_sections){0};
    if (ct_elf_read_at(elf->fd, &eh, sizeof eh, 0) || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
        eh.e_shoff == 0 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
        section_counts(elf->fd, &eh, &count, &names) || count == 0 ||
        count > elf->size / sizeof(Elf64_Shdr) ||
        eh.e_shoff > elf->size - count * sizeof(Elf64_Shdr))
        return -1;
    s->headers = malloc(count * sizeof(Elf64_Shdr));
    if (!s->headers)
        abort();
    s->count = count;
    if (ct_elf_read_at(elf->fd, s->headers, count * sizeof(Elf64_Shdr), eh.e_shoff)) {
        ct_elf_free_sections(s);
        return -1;
    }
    if (names < count &&
        (s->names = (char *)ct_elf_read_section(elf, &s->headers[names], MAX_SECTION_NAMES)))
        s->names_size = s->headers[names].sh_size;
    return 0;
}

void ct_elf_free_sections(struct ct_elf_sections *s)
{
    free(s->headers);
    free(s->names);
    *s = (struct ct_elf_sections){0};
}

const Elf64_Shdr *ct_elf_section_named(const struct ct_elf_sections *s, const char *name)
{
    for (size_t i = 0; s->names && i < s->count; i++)
        if (s->headers[i].sh_name < s->names_size &&
            strcmp(s->names + s->headers[i].sh_name, name) == 0)
            return &s->headers[i];
    return NULL;
}

const Elf64_Shdr *ct_elf_section_typed(const struct ct_elf_sections *s, uint32_t type)
{
    for (size_t i = 0; i < s->count; i++)
        if (s->headers[i].sh_type == type)
            return &s->headers[i];
    return NULL;
}
