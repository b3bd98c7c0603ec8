/*
 * Checks of the DWARF line-program decoder (collector/elf/dwarf_lines.c) on
 * its own, on .debug_line units assembled here by hand: a DWARF 4 unit of
 * two sequences (file table and DW_LNE_define_file names, special opcodes,
 * advance_pc, const_add_pc, fixed_advance_pc, an opcode skipped by its
 * declared length, end_sequence), the same in 64-bit DWARF, and two DWARF 5
 * units (names by DW_FORM_line_strp, DW_FORM_string and DW_FORM_strp, file
 * 0, a MD5 column, rows at one address, a row repeating the last) give
 * exactly the rows worked out by hand, and lookups in them the row that
 * covers an address. Then truncated and corrupt inputs, each copied to a
 * buffer of exactly its size so that the sanitizers see any read past it:
 * every truncation and every cut of a unit yields no rows or exactly the
 * sequences before the cut, a malformed header yields none, a name its
 * section lacks is unknown while its rows stay, the sequences the decoder
 * documents dropping are dropped, and any single corrupt byte leaves a
 * sorted table.
 */
#include <stdlib.h>
#include <string.h>

#include "collector/elf/dwarf_lines.h"
#include "common/string_table.h"
#include "tests/unit/check.h"

#define BYTES_MAX 1024
#define COUNT(array) (sizeof(array) / sizeof *(array))
/* An 8-byte little-endian address operand. */
#define ADDRESS(a) (a) & 0xff, (a) >> 8 & 0xff, (a) >> 16 & 0xff, (a) >> 24 & 0xff, 0, 0, 0, 0
/* A 4-byte little-endian section offset (32-bit DWARF). */
#define OFFSET(o) (o), 0, 0, 0
#define SET_ADDRESS(a) 0x00, 9, 0x02, ADDRESS(a) /* DW_LNE_set_address */
#define END_SEQUENCE 0x00, 1, 0x01               /* DW_LNE_end_sequence */
#define STANDARD_OPCODE_LENGTHS 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1

/* The hand-assembled units, laid out an operation or a table entry a line. */
// clang-format off

/* The header from minimum_instruction_length to standard_opcode_lengths:
 * one operation an instruction, default_is_stmt, the 12 standard opcodes. */
#define HEADER_FIELDS(min_inst_len, line_base, line_range) \
    min_inst_len, 1, 1, (uint8_t)(line_base), line_range, 13, STANDARD_OPCODE_LENGTHS
/* Offsets in it. */
enum { HEADER_MAX_OPS = 1, HEADER_LINE_RANGE = 4, HEADER_OPCODE_BASE = 5, HEADER_BYTES = 18 };

/* The DWARF 4 header from minimum_instruction_length on. DW_LNS_set_column
 * (5) takes one operand. */
static const uint8_t v4_tables[] = {
    HEADER_FIELDS(1, -5, 14),
    '/', 's', 'r', 'c', 0,   /* include_directories: "/src" */
    0,
    'm', 'a', 'i', 'n', '.', 'c', 0, 1, 0, 0, /* file_names: 1, in directory 1 */
    'u', 't', 'i', 'l', '.', 'h', 0, 1, 0, 0, /* 2 */
    0,
};

/* Special opcodes here: adjusted = opcode - 13; the address advances by
 * adjusted / 14, the line by -5 + adjusted % 14. */
#define V4_FIRST_SEQUENCE \
    SET_ADDRESS(0x401000), \
    0x03, 9,       /* DW_LNS_advance_line 9: line 10 */ \
    0x01,          /* DW_LNS_copy: row 0x401000 main.c:10 */ \
    61,            /* special, adjusted 48: address += 3, line += 1: 0x401003 main.c:11 */ \
    0x02, 16,      /* DW_LNS_advance_pc 16: 0x401013 */ \
    0x04, 2,       /* DW_LNS_set_file 2: util.h */ \
    0x03, 0x7a,    /* DW_LNS_advance_line -6: line 5 */ \
    0x01,          /* row 0x401013 util.h:5 */ \
    0x08,          /* DW_LNS_const_add_pc: address += (255 - 13) / 14 = 17: 0x401024 */ \
    20,            /* special, adjusted 7: address += 0, line += 2: 0x401024 util.h:7 */ \
    0x04, 1,       /* file 1: main.c */ \
    30,            /* special, adjusted 17: address += 1, line -= 2: 0x401025 main.c:5 */ \
    0x09, 0x00, 1, /* DW_LNS_fixed_advance_pc 0x100: 0x401125 */ \
    0x05, 4,       /* DW_LNS_set_column 4: skipped, one operand as declared */ \
    0x06,          /* DW_LNS_negate_stmt */ \
    0x03, 1,       /* line 6 */ \
    0x01,          /* row 0x401125 main.c:6 */ \
    0x02, 2,       /* 0x401127 */ \
    END_SEQUENCE   /* row 0x401127, no line */
static const uint8_t v4_first_sequence[] = {V4_FIRST_SEQUENCE};
static const uint8_t v4_program[] = {
    V4_FIRST_SEQUENCE,
    /* The registers reset for the second sequence. */
    SET_ADDRESS(0x402000),
    0x00, 10, 0x03, 'g', 'e', 'n', '.', 'c', 0, 0, 0, 0, /* DW_LNE_define_file: file 3 */
    0x04, 3,          /* file 3: gen.c */
    0x01,             /* row 0x402000 gen.c:1 */
    76,               /* special, adjusted 63: address += 4, line += 2: 0x402004 gen.c:3 */
    0x00, 2, 0x04, 7, /* DW_LNE_set_discriminator 7 */
    0x02, 4,          /* 0x402008 */
    END_SEQUENCE,     /* row 0x402008, no line */
};
#define V4_FIRST_SEQUENCE_BYTES sizeof v4_first_sequence

/* .debug_line_str: "/src" at 0, "include" at 5, "primary.cu" at 13,
 * "kern.cu" at 24, "vec.h" at 32. */
static const char line_str[] = "/src\0include\0primary.cu\0kern.cu\0vec.h";
/* .debug_str: "zero.c" at 0, "one.c" at 7. */
static const char str[] = "zero.c\0one.c";

/* The DWARF 5 header from minimum_instruction_length on. */
enum { V5_DIRECTORY_FORMATS = HEADER_BYTES, V5_FILE_PATH_FORM = HEADER_BYTES + 14 };
static const uint8_t v5_tables[] = {
    HEADER_FIELDS(4, -3, 12),
    1, 0x01, 0x1f,           /* directory entry: DW_LNCT_path as DW_FORM_line_strp */
    2,                       /* directories: */
    OFFSET(0),               /* "/src" */
    OFFSET(5),               /* "include" */
    3, 0x01, 0x1f,           /* file entry: the path, */
    0x02, 0x0f,              /* DW_LNCT_directory_index as DW_FORM_udata, */
    0x05, 0x1e,              /* DW_LNCT_MD5 as DW_FORM_data16 */
    3,                       /* files: */
    OFFSET(13), 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, /* 0: primary.cu */
    OFFSET(24), 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, /* 1: kern.cu */
    OFFSET(32), 1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, /* 2: vec.h */
};

/* Special opcodes here: adjusted = opcode - 13; the address advances by
 * 4 * (adjusted / 12), the line by -3 + adjusted % 12. */
static const uint8_t v5_program[] = {
    SET_ADDRESS(0x10000),
    0x03, 41,         /* line 42 (the file register starts at 1: kern.cu) */
    0x01,             /* row 0x10000 kern.cu:42 */
    43,               /* special, adjusted 30: address += 8, line += 3: 0x10008 kern.cu:45 */
    0x04, 2,          /* file 2: vec.h */
    25,               /* special, adjusted 12: address += 4, line -= 3: 0x1000c vec.h:42 */
    0x08,             /* const_add_pc: address += 4 * ((255 - 13) / 12) = 80: 0x1005c */
    0x04, 0,          /* file 0: primary.cu */
    0x03, 0x58,       /* DW_LNS_advance_line -40: line 2 */
    0x01,             /* row 0x1005c primary.cu:2 */
    0x02, 3,          /* DW_LNS_advance_pc 3: address += 12: 0x10068 */
    0x00, 2, 0x04, 5, /* DW_LNE_set_discriminator 5 */
    0x01,             /* 0x10068 primary.cu:2 repeats the last row: not kept */
    29,               /* special, adjusted 16: address += 4, line += 1: 0x1006c primary.cu:3 */
    0x03, 5,          /* line 8 */
    0x01,             /* row 0x1006c primary.cu:8, which replaces :3 at that address */
    0x09, 4, 0,       /* DW_LNS_fixed_advance_pc 4, not scaled by the length: 0x10070 */
    END_SEQUENCE,     /* row 0x10070, no line */
};

/* A second DWARF 5 unit: names inline (DW_FORM_string) and in .debug_str
 * (DW_FORM_strp). */
static const uint8_t v5_strp_tables[] = {
    HEADER_FIELDS(1, -5, 14),
    1, 0x01, 0x08,            /* directory entry: the path as DW_FORM_string */
    1, '/', 'o', 'b', 'j', 0, /* directories: "/obj" */
    1, 0x01, 0x0e,            /* file entry: the path as DW_FORM_strp */
    2, OFFSET(0), OFFSET(7),  /* files: "zero.c", "one.c" */
};
static const uint8_t v5_strp_program[] = {
    SET_ADDRESS(0x20000),
    0x01,         /* row 0x20000 one.c:1 */
    0x02, 8,      /* 0x20008 */
    END_SEQUENCE, /* row 0x20008, no line */
};

// clang-format on

struct want {
    uint64_t address;
    const char *file; /* NULL: unknown (file id 0) */
    uint32_t line;
};

static const struct want v4_rows[] = {
    {0x401000, "main.c", 10}, {0x401003, "main.c", 11}, {0x401013, "util.h", 5},
    {0x401024, "util.h", 7},  {0x401025, "main.c", 5},  {0x401125, "main.c", 6},
    {0x401127, NULL, 0},      {0x402000, "gen.c", 1},   {0x402004, "gen.c", 3},
    {0x402008, NULL, 0},
};
#define V4_FIRST_SEQUENCE_ROWS 7

static const struct want v5_rows[] = {
    {0x10000, "kern.cu", 42},   {0x10008, "kern.cu", 45},   {0x1000c, "vec.h", 42},
    {0x1005c, "primary.cu", 2}, {0x1006c, "primary.cu", 8}, {0x10070, NULL, 0},
};
static const struct want v5_strp_rows[] = {{0x20000, "one.c", 1}, {0x20008, NULL, 0}};

struct bytes {
    uint8_t data[BYTES_MAX];
    size_t len;
};

static void put(struct bytes *b, const uint8_t *data, size_t n)
{
    if (b->len + n > BYTES_MAX)
        abort();
    memcpy(b->data + b->len, data, n);
    b->len += n;
}

static void put_le(struct bytes *b, uint64_t value, unsigned n)
{
    uint8_t le[8];
    for (unsigned i = 0; i < n; i++)
        le[i] = (uint8_t)(value >> (8 * i));
    put(b, le, n);
}

/* One unit: its length, version, for DWARF 5 the address and segment
 * selector sizes, header_length, then `tables` (the header from
 * minimum_instruction_length on) and the first `program_len` bytes of
 * `program`. */
static void put_unit(struct bytes *b, int version, unsigned offset_size, const uint8_t *tables,
                     size_t tables_len, const uint8_t *program, size_t program_len)
{
    uint64_t length = 2 + (version >= 5 ? 2 : 0) + offset_size + tables_len + program_len;
    if (offset_size == 8)
        put_le(b, 0xffffffff, 4);
    put_le(b, length, offset_size);
    put_le(b, (uint64_t)version, 2);
    if (version >= 5)
        put(b, (const uint8_t[]){8, 0}, 2);
    put_le(b, tables_len, offset_size);
    put(b, tables, tables_len);
    put(b, program, program_len);
}

static void put_v4(struct bytes *b)
{
    put_unit(b, 4, 4, v4_tables, sizeof v4_tables, v4_program, sizeof v4_program);
}

static void put_v5(struct bytes *b)
{
    put_unit(b, 5, 4, v5_tables, sizeof v5_tables, v5_program, sizeof v5_program);
}

/* A copy of `n` bytes in a buffer of exactly that size, so a read past
 * them is a sanitizer's error; none for no bytes, as for a missing section. */
static uint8_t *exact_copy(const void *data, size_t n)
{
    if (n == 0)
        return NULL;
    uint8_t *copy = malloc(n);
    if (!copy)
        abort();
    memcpy(copy, data, n);
    return copy;
}

/* Parses the first `size` bytes of `line` as .debug_line, with the first
 * `line_str_size` bytes of line_str and all of str. */
static void parse(const uint8_t *line, size_t size, size_t line_str_size,
                  struct ct_line_table *table)
{
    struct ct_dwarf_sections s = {
        .line = exact_copy(line, size),
        .line_size = size,
        .line_str = exact_copy(line_str, line_str_size),
        .line_str_size = line_str_size,
        .str = exact_copy(str, sizeof str),
        .str_size = sizeof str,
    };
    ct_dwarf_lines_parse(&s, table);
    free((void *)s.line);
    free((void *)s.line_str);
    free((void *)s.str);
}

/* The first of `table`'s rows that differs from `want` (a missing one
 * included), or n when the first n are as wanted. */
static size_t first_wrong(const struct ct_line_table *table, const struct want *want, size_t n)
{
    for (size_t i = 0; i < n && i < table->count; i++) {
        const struct ct_line_row *r = &table->rows[i];
        int file_ok = want[i].file ? r->file && strcmp(ct_strings_get(r->file), want[i].file) == 0
                                   : r->file == 0;
        if (r->address != want[i].address || r->line != want[i].line || !file_ok)
            return i;
    }
    return table->count < n ? table->count : n;
}

static int rows_are(const struct ct_line_table *table, const struct want *want, size_t n)
{
    return table->count == n && first_wrong(table, want, n) == n;
}

static void check_rows(const struct ct_line_table *table, const struct want *want, size_t n,
                       const char *name)
{
    ct_check(rows_are(table, want, n), "%s: %zu rows as worked out (got %zu, row %zu wrong)", name,
             n, table->count, first_wrong(table, want, n));
}

/* Parses `b` and checks it yields exactly `n` rows of `want`. */
static void check_parse(const struct bytes *b, size_t line_str_size, const struct want *want,
                        size_t n, const char *name)
{
    struct ct_line_table table;
    parse(b->data, b->len, line_str_size, &table);
    check_rows(&table, want, n, name);
    ct_dwarf_lines_free(&table);
}

static void check_lookups(void)
{
    struct bytes b = {.len = 0};
    struct ct_line_table table;
    put_v4(&b);
    parse(b.data, b.len, sizeof line_str, &table);
    const struct {
        uint64_t address;
        uint32_t line; /* 0: no row */
    } lookups[] = {{0x400fff, 0}, {0x401000, 10}, {0x401010, 11}, {0x401126, 6},
                   {0x401127, 0}, {0x401500, 0},  {0x402007, 3},  {0x402008, 0}};
    for (size_t i = 0; i < COUNT(lookups); i++) {
        const struct ct_line_row *row = ct_dwarf_lines_find(&table, lookups[i].address);
        ct_check_u64(row ? row->line : 0, lookups[i].line, "find(%#llx): the covering row's line",
                     (unsigned long long)lookups[i].address);
    }
    ct_dwarf_lines_free(&table);
    ct_check(table.rows == NULL && table.count == 0, "a freed table is empty");
}

static void check_well_formed(void)
{
    struct bytes b = {.len = 0};
    put_v4(&b);
    check_parse(&b, sizeof line_str, v4_rows, COUNT(v4_rows), "DWARF 4");
    b.len = 0;
    put_unit(&b, 4, 8, v4_tables, sizeof v4_tables, v4_program, sizeof v4_program);
    check_parse(&b, sizeof line_str, v4_rows, COUNT(v4_rows), "DWARF 4, 64-bit");
    b.len = 0;
    put_v5(&b);
    check_parse(&b, sizeof line_str, v5_rows, COUNT(v5_rows), "DWARF 5");
    put_unit(&b, 5, 4, v5_strp_tables, sizeof v5_strp_tables, v5_strp_program,
             sizeof v5_strp_program);
    struct ct_line_table table;
    parse(b.data, b.len, sizeof line_str, &table);
    ct_check(table.count == COUNT(v5_rows) + COUNT(v5_strp_rows) &&
                 first_wrong(&table, v5_rows, COUNT(v5_rows)) == COUNT(v5_rows),
             "two DWARF 5 units: the first unit's rows come first");
    struct ct_line_table second = {table.rows + COUNT(v5_rows), table.count - COUNT(v5_rows)};
    check_rows(&second, v5_strp_rows, COUNT(v5_strp_rows), "DWARF 5, strings and strp");
    ct_dwarf_lines_free(&table);
    ct_check(ct_dwarf_lines_find(&(struct ct_line_table){0}, 1) == NULL,
             "an empty table finds nothing");
    parse(NULL, 0, 0, &table);
    ct_check_u64(table.count, 0, "no .debug_line, no rows");
    ct_dwarf_lines_free(&table);
}

/* Every prefix of a section of a DWARF 4 then a DWARF 5 unit: one that
 * ends inside the first unit yields nothing, one inside the second the
 * first unit's rows. */
static void check_truncations(void)
{
    struct bytes b = {.len = 0};
    put_v4(&b);
    size_t first_unit = b.len;
    put_v5(&b);
    size_t wrong = 0;
    for (size_t n = 0; n < b.len; n++) {
        struct ct_line_table table;
        parse(b.data, n, sizeof line_str, &table);
        wrong += n < first_unit ? table.count != 0 : !rows_are(&table, v4_rows, COUNT(v4_rows));
        ct_dwarf_lines_free(&table);
    }
    ct_check_u64(wrong, 0, "every truncation yields the whole units before it (wrong ones)");
}

/* The DWARF 4 unit ending (by its own length) after each byte of its
 * program: before the first end_sequence there are no rows, from it on
 * exactly the first sequence's. */
static void check_cut_units(void)
{
    size_t wrong = 0;
    for (size_t n = 0; n < sizeof v4_program; n++) {
        struct bytes b = {.len = 0};
        struct ct_line_table table;
        put_unit(&b, 4, 4, v4_tables, sizeof v4_tables, v4_program, n);
        parse(b.data, b.len, sizeof line_str, &table);
        wrong +=
            !rows_are(&table, v4_rows, n < V4_FIRST_SEQUENCE_BYTES ? 0 : V4_FIRST_SEQUENCE_ROWS);
        ct_dwarf_lines_free(&table);
    }
    ct_check_u64(wrong, 0, "a unit cut inside its program keeps the sequences ended (wrong cuts)");
}

/* Builds the DWARF 4 unit with byte `at` of its tables set to `value`
 * (none when `at` is past them) and version `version`, and checks that it
 * yields no rows. */
static void check_no_rows(int version, size_t at, uint8_t value, const char *name)
{
    uint8_t tables[sizeof v4_tables];
    memcpy(tables, v4_tables, sizeof tables);
    if (at < sizeof tables)
        tables[at] = value;
    struct bytes b = {.len = 0};
    put_unit(&b, version, 4, tables, sizeof tables, v4_program, sizeof v4_program);
    check_parse(&b, sizeof line_str, NULL, 0, name);
}

static void check_bad_headers(void)
{
    check_no_rows(1, SIZE_MAX, 0, "version 1");
    check_no_rows(6, SIZE_MAX, 0, "version 6");
    check_no_rows(4, HEADER_LINE_RANGE, 0, "line_range 0");
    check_no_rows(4, HEADER_OPCODE_BASE, 0, "opcode_base 0");
    check_no_rows(4, HEADER_MAX_OPS, 0, "maximum_operations_per_instruction 0");
    check_no_rows(4, sizeof v4_tables - 1, 'x', "file_names without their end");

    struct bytes b = {.len = 0};
    put_v4(&b);
    b.data[6] = 0xff; /* header_length, past the unit */
    check_parse(&b, sizeof line_str, NULL, 0, "header_length past the unit");
    b.len = 0;
    put_le(&b, 0xfffffff0, 4);
    put_v4(&b);
    check_parse(&b, sizeof line_str, NULL, 0, "a reserved unit_length stops the section");

    const struct {
        size_t at;
        uint8_t value;
        const char *name;
    } v5_corruptions[] = {
        {V5_DIRECTORY_FORMATS, 33, "DWARF 5: 33 directory entry formats"},
        {V5_FILE_PATH_FORM, 0x01, "DWARF 5: a file entry form of unknown size"},
        {V5_DIRECTORY_FORMATS, 0, "DWARF 5: no entry formats for two directories"},
    };
    for (size_t i = 0; i < COUNT(v5_corruptions); i++) {
        uint8_t tables[sizeof v5_tables];
        memcpy(tables, v5_tables, sizeof tables);
        tables[v5_corruptions[i].at] = v5_corruptions[i].value;
        b.len = 0;
        put_unit(&b, 5, 4, tables, sizeof tables, v5_program, sizeof v5_program);
        check_parse(&b, sizeof line_str, NULL, 0, v5_corruptions[i].name);
    }
}

/* Names out of reach of .debug_line_str are unknown; the rows stay. */
static void check_missing_names(void)
{
    struct bytes b = {.len = 0};
    put_v5(&b);
    const struct want unnamed[] = {
        {0x10000, NULL, 42}, {0x10008, NULL, 45}, {0x1000c, NULL, 42},
        {0x1005c, NULL, 2},  {0x1006c, NULL, 8},  {0x10070, NULL, 0},
    };
    check_parse(&b, 0, unnamed, COUNT(unnamed), "no .debug_line_str: no names, the same rows");
    struct want cut[COUNT(v5_rows)];
    memcpy(cut, v5_rows, sizeof cut);
    cut[2].file = NULL;
    check_parse(&b, sizeof line_str - 1, cut, COUNT(cut),
                ".debug_line_str without the NUL ending \"vec.h\": that name unknown");
}

/* Sequences the decoder documents leaving out, after a sound one. */
static void check_dropped_sequences(void)
{
    static const uint8_t backwards[] = {
        SET_ADDRESS(0x5000), 0x01, SET_ADDRESS(0x4000), 0x03, 1, 0x01, 0x02, 1, END_SEQUENCE};
    static const uint8_t at_zero[] = {SET_ADDRESS(0), 0x01, 0x02, 4, 0x03, 1, 0x01, END_SEQUENCE};
    static const uint8_t unended[] = {SET_ADDRESS(0x6000), 0x01, 0x02, 4, 0x03, 1, 0x01};
    static const uint8_t too_long[] = {0x00, 0x7f, 0x01}; /* an extended opcode past the end */
    const struct {
        const uint8_t *program;
        size_t len;
        const char *name;
    } cases[] = {
        {backwards, sizeof backwards, "a sequence whose addresses go backwards"},
        {at_zero, sizeof at_zero, "a sequence at address 0 (discarded code)"},
        {unended, sizeof unended, "a sequence the unit ends inside"},
        {too_long, sizeof too_long, "an extended opcode longer than the unit"},
        {v4_first_sequence, V4_FIRST_SEQUENCE_BYTES, "a copy of a sequence kept already"},
    };
    for (size_t i = 0; i < COUNT(cases); i++) {
        uint8_t program[BYTES_MAX];
        memcpy(program, v4_first_sequence, V4_FIRST_SEQUENCE_BYTES);
        memcpy(program + V4_FIRST_SEQUENCE_BYTES, cases[i].program, cases[i].len);
        struct bytes b = {.len = 0};
        put_unit(&b, 4, 4, v4_tables, sizeof v4_tables, program,
                 V4_FIRST_SEQUENCE_BYTES + cases[i].len);
        check_parse(&b, sizeof line_str, v4_rows, V4_FIRST_SEQUENCE_ROWS, cases[i].name);
    }
}

/* Each byte of a DWARF 4 and a DWARF 5 unit set to each of a few values:
 * whatever is left must still be a table sorted by address. */
static void check_corrupt_bytes(void)
{
    struct bytes b = {.len = 0};
    put_v4(&b);
    put_v5(&b);
    size_t unsorted = 0;
    for (size_t at = 0; at < b.len; at++) {
        const uint8_t original = b.data[at];
        const uint8_t values[] = {0x00, 0xff, 0x80, 0x7f, original ^ 0x01, original ^ 0x40};
        for (size_t v = 0; v < COUNT(values); v++) {
            struct ct_line_table table;
            b.data[at] = values[v];
            parse(b.data, b.len, sizeof line_str, &table);
            for (size_t i = 1; i < table.count; i++)
                unsorted += table.rows[i].address < table.rows[i - 1].address;
            ct_dwarf_lines_free(&table);
        }
        b.data[at] = original;
    }
    ct_check_u64(unsorted, 0,
                 "every single corrupt byte leaves a sorted table (rows out of order)");
}

int main(void)
{
    check_well_formed();
    check_lookups();
    check_truncations();
    check_cut_units();
    check_bad_headers();
    check_missing_names();
    check_dropped_sequences();
    check_corrupt_bytes();
    return ct_check_finish();
}
