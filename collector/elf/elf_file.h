/*
 * The one ELF reader of the collector: a 64-bit file read with pread, never
 * mapped. Its program headers and dynamic section, which work on stripped
 * files, give what describes a library (SONAME, build-id) and what the
 * loader's search follows (DT_RPATH, DT_RUNPATH, DT_FLAGS_1, DT_NEEDED); its
 * section headers, when it has them, give the symboliser its symbol tables
 * and DWARF and the kernel table a library's fat binary (fatbin.c). Every
 * offset and size is checked against the file, so a corrupt file reads as
 * one that lacks what was asked for.
 */
#ifndef CT_COLLECTOR_ELF_FILE_H
#define CT_COLLECTOR_ELF_FILE_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>

/* A 64-bit ELF file open for reading, with its program headers. */
struct ct_elf {
    int fd;
    uint64_t size; /* of the file */
    int count;     /* program headers in ph */
    Elf64_Phdr ph[64];
};

/* Reads exactly `len` bytes at `offset`; 0, or -1 on a short read. */
int ct_elf_read_at(int fd, void *buf, size_t len, uint64_t offset);

/* Opens `path` as a 64-bit ELF file and reads its program headers (at most
 * 64). 0, or -1 when the file cannot be opened or is not such a file. */
int ct_elf_open(const char *path, struct ct_elf *elf);

void ct_elf_close(struct ct_elf *elf);

/* The value of the last dynamic-section entry `tag` (DT_FLAGS_1, ...) before
 * DT_NULL: 0, or -1 when there is none. */
int ct_elf_dynamic_value(const struct ct_elf *elf, int64_t tag, uint64_t *value);

/* The string a dynamic-section entry `tag` (DT_SONAME, DT_RUNPATH, ...)
 * names, or "" when the file has none. */
void ct_elf_dynamic_string(const struct ct_elf *elf, int64_t tag, char *out, size_t size);

/* Calls `visit` with the string each dynamic-section entry `tag` names
 * (DT_NEEDED, ...), in the file's order, until it returns nonzero. */
void ct_elf_each_dynamic_string(const struct ct_elf *elf, int64_t tag,
                                int (*visit)(const char *value, void *ctx), void *ctx);

/* The GNU build-id, in hex, from the PT_NOTE segments; "" when there is
 * none. `out` holds 65 bytes. */
void ct_elf_build_id(const struct ct_elf *elf, char *out);

/* A file's section headers and the names of its sections. */
struct ct_elf_sections {
    Elf64_Shdr *headers;
    size_t count;
    char *names;
    size_t names_size;
};

/* Reads the section headers (a count too large for the ELF header is in
 * section 0) and the section names; 0, or -1 when there are none. */
int ct_elf_read_sections(const struct ct_elf *elf, struct ct_elf_sections *s);
void ct_elf_free_sections(struct ct_elf_sections *s);
/* The first section called `name`, or of type `type`; NULL when none. */
const Elf64_Shdr *ct_elf_section_named(const struct ct_elf_sections *s, const char *name);
const Elf64_Shdr *ct_elf_section_typed(const struct ct_elf_sections *s, uint32_t type);
/* A section's contents plus a NUL (so string tables end), which the caller
 * frees; NULL when it has none in the file, is compressed, or is over
 * `limit` bytes. */
uint8_t *ct_elf_read_section(const struct ct_elf *elf, const Elf64_Shdr *h, uint64_t limit);

#endif
