/*
 * What GPU code a library carries (fatbin.c).
 */
#ifndef CT_COLLECTOR_ELF_FATBIN_H
#define CT_COLLECTOR_ELF_FATBIN_H

#include <stddef.h>

/* The architectures of the fat binaries in the file at `path`: a
 * ','-separated list such as "sm_80,sm_90,compute_90" ("" when none). */
void ct_elf_fatbin_archs(const char *path, char *out, size_t size);

#endif
