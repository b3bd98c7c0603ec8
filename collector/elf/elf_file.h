/*
 * Reading an ELF file's program headers and dynamic section from the file
 * alone, without section headers and without mapping it: what the collector
 * needs to describe a library (SONAME, build-id) and to follow the loader's
 * search (DT_RPATH, DT_RUNPATH, DT_FLAGS_1, DT_NEEDED).
 */
#ifndef CT_COLLECTOR_ELF_FILE_H
#define CT_COLLECTOR_ELF_FILE_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>

/* A 64-bit ELF file open for reading, with its program headers. */
struct ct_elf {
    int fd;
    int count; /* program headers in ph */
    Elf64_Phdr ph[64];
};

/* Reads exactly `len` bytes at `offset`; 0, or -1 on a short read. */
int ct_elf_read_at(int fd, void *buf, size_t len, uint64_t offset);

/* Opens `path` as a 64-bit ELF file and reads its program headers (at most
 * 64); stores the file size in `size` unless it is NULL. 0, or -1 when the
 * file cannot be opened or is not such a file. */
int ct_elf_open(const char *path, struct ct_elf *elf, uint64_t *size);

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

#endif
