/*
 * Turning a code address of a traced process into module, function, source
 * file and line, from /proc/PID/maps, the ELF symbol tables and the DWARF
 * line table (dwarf_lines.h) of the files the process has mapped. Everything
 * read is cached in a struct ct_symbolizer for as long as it lives. Not
 * thread-safe: call it from one thread, like the string table it fills.
 */
#ifndef CT_COLLECTOR_SYMBOLIZE_H
#define CT_COLLECTOR_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

#include "common/u64_map.h"

struct ct_symbol_module;
struct ct_symbol_process;

/* What a symboliser has read: the modules (mapped files) and the processes'
 * mappings. All zero is one that has read nothing yet. */
struct ct_symbolizer {
    struct ct_symbol_module *modules;
    size_t module_count, module_capacity;
    struct ct_u64_map module_by_path; /* path id -> index + 1 of the first */
    struct ct_symbol_process *processes;
    size_t process_count, process_capacity;
    struct ct_u64_map process_by_pid; /* pid + 1 -> index + 1 */
};

struct ct_symbol {
    const char *module;     /* path of the mapped file, or NULL when unknown   */
    uint64_t module_offset; /* address relative to the module's load base     */
    const char *function;   /* symbol name (raw, not demangled), or NULL     */
    const char *file;       /* source file from the line table, or NULL      */
    uint32_t line;          /* 0 when unknown                                */
};
/* module_offset is the address in the module's own ELF address space (what
 * its symbols, its DWARF and `addr2line -e MODULE` use): pc minus the load
 * bias, so for a non-PIE executable it is pc itself. When the mapped file
 * cannot be read as ELF it is the file offset instead. A pseudo-mapping
 * such as [vdso] gives its name as module and the offset into the mapping.
 * file is the name as the line table records it (often the path given to
 * the compiler), not joined with its directory. */

/* Resolves a code address `pc` of process `pid`. Pass the address of the
 * instruction itself (callers pass return address - 1). Returns 0 when at
 * least the module is known, else -1.
 * The strings stay valid for the collector's lifetime (use the string table in
 * common/string_table.h: ct_strings_intern / ct_strings_get). */
int ct_symbolize(struct ct_symbolizer *s, int32_t pid, uint64_t pc, struct ct_symbol *out);

/* Resolves `address`, an address in the ELF address space of the file at
 * `path` (as ct_symbol.module_offset), without a process: what the unit
 * checker feeds damaged and hand-made files through. Returns 0 when the
 * file exists (module is then `path`), else -1. */
int ct_symbolize_file(struct ct_symbolizer *s, const char *path, uint64_t address,
                      struct ct_symbol *out);

#endif
