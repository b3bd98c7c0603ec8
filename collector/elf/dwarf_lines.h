/*
 * The DWARF line-number program (.debug_line, versions 2 to 5) decoded into
 * one address-sorted table per file, for the symboliser (symbolize.c): which
 * source file and line an instruction address came from. Parsing works on
 * section contents already in memory, so it can be given a corrupt file: every
 * read is bounds-checked and a unit that does not parse is skipped.
 */
#ifndef CT_COLLECTOR_DWARF_LINES_H
#define CT_COLLECTOR_DWARF_LINES_H

#include <stddef.h>
#include <stdint.h>

/* Section contents; a missing section has data NULL and size 0. */
struct ct_dwarf_sections {
    const uint8_t *line; /* .debug_line */
    size_t line_size;
    const uint8_t *line_str; /* .debug_line_str (DW_FORM_line_strp) */
    size_t line_str_size;
    const uint8_t *str; /* .debug_str (DW_FORM_strp) */
    size_t str_size;
};

/* One row: from `address` up to the next row's address, the code came from
 * `line` of `file`. Line 0 marks an address range with no line (the end of a
 * sequence, or code the compiler attributes to no line). */
struct ct_line_row {
    uint64_t address;
    uint32_t file; /* ct_strings id of the name as recorded, 0 when unknown */
    uint32_t line;
};

/* The rows of every sequence of a file, ordered by address, with no two
 * sequences overlapping. */
struct ct_line_table {
    struct ct_line_row *rows;
    size_t count;
};

/* Decodes every line-number program in `sections` into `table` (which it
 * overwrites). Units that are malformed, or sequences that overlap ones
 * already kept, are left out; the table may end up empty. */
void ct_dwarf_lines_parse(const struct ct_dwarf_sections *sections, struct ct_line_table *table);

/* The row that covers `address`, or NULL when no row has a line for it. */
const struct ct_line_row *ct_dwarf_lines_find(const struct ct_line_table *table, uint64_t address);

void ct_dwarf_lines_free(struct ct_line_table *table);

#endif
