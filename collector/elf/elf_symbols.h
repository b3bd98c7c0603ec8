/*
 * Looking up named symbols of any kind (data as well as functions) in an
 * ELF file's dynamic symbol table, then its full one: what the outside
 * Python reader needs to find _PyRuntime and CPython's type objects in the
 * python executable or libpython a process has mapped.
 */
#ifndef CT_COLLECTOR_ELF_SYMBOLS_H
#define CT_COLLECTOR_ELF_SYMBOLS_H

#include <stdint.h>

#include "collector/elf/elf_file.h"

/* Finds each of the `count` names, setting values[i] to its st_value in the
 * file's address space (0 where it is not defined). The number found. */
int ct_elf_find_symbols(const struct ct_elf *elf, const char *const *names, int count,
                        uint64_t *values);

#endif
