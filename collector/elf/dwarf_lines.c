/*
 * Owns the decoding of DWARF line-number programs (.debug_line, versions 2
 * to 5, 32- and 64-bit DWARF) into an address-sorted row table. Written from
 * the DWARF 5 standard (section 6.2), not from another implementation. The
 * file name a row carries is the file entry's name as recorded (DW_LNCT_path,
 * or the v2-4 file_names string), not joined with its directory: a report
 * wants `train_loop.c`, and the name is usually the one given to the compiler.
 * Every read goes through a bounded cursor, every loop consumes input, and a
 * unit that does not parse is skipped whole, so a corrupt section yields
 * fewer rows, never a crash or an endless loop.
 */
#include "collector/elf/dwarf_lines.h"

#include "common/array.h"
#include "common/string_table.h"

#include <stdlib.h>
#include <string.h>

enum {
    LNS_COPY = 1,
    LNS_ADVANCE_PC,
    LNS_ADVANCE_LINE,
    LNS_SET_FILE,
    LNS_SET_COLUMN,
    LNS_NEGATE_STMT,
    LNS_SET_BASIC_BLOCK,
    LNS_CONST_ADD_PC,
    LNS_FIXED_ADVANCE_PC,
    LNS_SET_PROLOGUE_END,
    LNS_SET_EPILOGUE_BEGIN,
    LNS_SET_ISA,
};
enum { LNE_END_SEQUENCE = 1, LNE_SET_ADDRESS, LNE_DEFINE_FILE, LNE_SET_DISCRIMINATOR };
enum { LNCT_PATH = 1 };
enum {
    FORM_BLOCK2 = 0x03,
    FORM_BLOCK4 = 0x04,
    FORM_DATA2 = 0x05,
    FORM_DATA4 = 0x06,
    FORM_DATA8 = 0x07,
    FORM_STRING = 0x08,
    FORM_BLOCK = 0x09,
    FORM_BLOCK1 = 0x0a,
    FORM_DATA1 = 0x0b,
    FORM_FLAG = 0x0c,
    FORM_SDATA = 0x0d,
    FORM_STRP = 0x0e,
    FORM_UDATA = 0x0f,
    FORM_SEC_OFFSET = 0x17,
    FORM_STRX = 0x1a,
    FORM_DATA16 = 0x1e,
    FORM_LINE_STRP = 0x1f,
    FORM_STRX1 = 0x25,
    FORM_STRX2 = 0x26,
    FORM_STRX3 = 0x27,
    FORM_STRX4 = 0x28,
};
/* More entry formats than any producer writes means a corrupt header. */
#define MAX_ENTRY_FORMATS 32

/* A bounded reader: past the end it sets `bad`, and from then on every
 * read returns 0 and nothing advances. */
struct cursor {
    const uint8_t *at, *end;
    int bad;
};

struct file_entry {
    const char *name; /* NULL when the entry has no usable name */
    size_t len;
    uint32_t id; /* interned on first use: most entries never get a row */
};

struct header {
    int version, offset_size;
    uint8_t min_inst_len, max_ops, line_range, opcode_base;
    int8_t line_base;
    const uint8_t *opcode_lengths; /* opcode_base - 1 of them */
};

struct registers {
    uint64_t address, op_index, file, line;
};

struct sequence {
    uint64_t start, end;
    size_t begin, count; /* rows, in parse.rows */
};

struct parse {
    const struct ct_dwarf_sections *sections;
    struct file_entry *files;
    size_t file_count, file_capacity;
    struct ct_line_row *rows;
    size_t row_count, row_capacity;
    struct sequence *sequences;
    size_t sequence_count, sequence_capacity;
    size_t sequence_begin; /* first row of the sequence being decoded */
    int sequence_broken;   /* its addresses went backwards (or wrapped) */
};

static int need(struct cursor *c, uint64_t n)
{
    if (c->bad || (uint64_t)(c->end - c->at) < n) {
        c->bad = 1;
        return 0;
    }
    return 1;
}

static void skip(struct cursor *c, uint64_t n)
{
    if (need(c, n))
        c->at += n;
}

/* A little-endian value of `n` (at most 8) bytes. */
static uint64_t read_fixed(struct cursor *c, unsigned n)
{
    uint64_t value = 0;
    if (!need(c, n))
        return 0;
    for (unsigned i = 0; i < n; i++)
        value |= (uint64_t)c->at[i] << (8 * i);
    c->at += n;
    return value;
}

/* LEB128; bits beyond 64 are dropped but still consumed. */
static uint64_t read_leb(struct cursor *c, int is_signed)
{
    uint64_t value = 0;
    unsigned shift = 0;
    uint8_t byte = 0;
    do {
        if (!need(c, 1))
            return 0;
        byte = *c->at++;
        if (shift < 64)
            value |= (uint64_t)(byte & 0x7f) << shift;
        shift += shift < 64 ? 7 : 0;
    } while (byte & 0x80);
    if (is_signed && shift < 64 && (byte & 0x40))
        value |= ~(uint64_t)0 << shift;
    return value;
}

static const char *read_cstr(struct cursor *c, size_t *len)
{
    if (c->bad)
        return NULL;
    const uint8_t *nul = memchr(c->at, 0, (size_t)(c->end - c->at));
    if (!nul) {
        c->bad = 1;
        return NULL;
    }
    const char *text = (const char *)c->at;
    *len = (size_t)(nul - c->at);
    c->at = nul + 1;
    return text;
}

/* The NUL-terminated string at `offset` of a string section, or NULL. */
static const char *section_string(const uint8_t *data, size_t size, uint64_t offset, size_t *len)
{
    if (!data || offset >= size)
        return NULL;
    const uint8_t *nul = memchr(data + offset, 0, size - offset);
    if (!nul)
        return NULL;
    *len = (size_t)(nul - (data + offset));
    return (const char *)data + offset;
}

static void add_file(struct parse *p, const char *name, size_t len)
{
    p->files = ct_array_reserve(p->files, &p->file_capacity, p->file_count + 1, sizeof *p->files);
    p->files[p->file_count++] = (struct file_entry){name, len, 0};
}

/* The size of a fixed-size form's value, or -1. */
static int form_size(uint64_t form, int offset_size)
{
    switch (form) {
    case FORM_DATA1:
    case FORM_FLAG:
    case FORM_STRX1:
        return 1;
    case FORM_DATA2:
    case FORM_STRX2:
        return 2;
    case FORM_STRX3:
        return 3;
    case FORM_DATA4:
    case FORM_STRX4:
        return 4;
    case FORM_DATA8:
        return 8;
    case FORM_DATA16:
        return 16;
    case FORM_SEC_OFFSET:
        return offset_size;
    default:
        return -1;
    }
}

/* Reads one attribute value of `form`; a string form sets *text (NULL when
 * it cannot be resolved; .debug_str_offsets is not read, so DW_FORM_strx*
 * names stay unknown). -1 for a form of unknown size, which makes the rest
 * of the header unreadable. */
static int read_form(struct cursor *c, const struct parse *p, int offset_size, uint64_t form,
                     const char **text, size_t *len)
{
    const struct ct_dwarf_sections *s = p->sections;
    switch (form) {
    case FORM_STRING:
        *text = read_cstr(c, len);
        return 0;
    case FORM_LINE_STRP:
        *text = section_string(s->line_str, s->line_str_size, read_fixed(c, (unsigned)offset_size),
                               len);
        return 0;
    case FORM_STRP:
        *text = section_string(s->str, s->str_size, read_fixed(c, (unsigned)offset_size), len);
        return 0;
    case FORM_UDATA:
    case FORM_SDATA:
    case FORM_STRX:
        read_leb(c, 0);
        return 0;
    case FORM_BLOCK:
        skip(c, read_leb(c, 0));
        return 0;
    case FORM_BLOCK1:
        skip(c, read_fixed(c, 1));
        return 0;
    case FORM_BLOCK2:
        skip(c, read_fixed(c, 2));
        return 0;
    case FORM_BLOCK4:
        skip(c, read_fixed(c, 4));
        return 0;
    }
    int size = form_size(form, offset_size);
    if (size < 0)
        return -1;
    skip(c, (uint64_t)size);
    return 0;
}

/* A DWARF 5 directory or file table; file entries are added in order, so
 * that the file register indexes them directly. */
static int read_v5_entries(struct cursor *c, struct parse *p, int offset_size, int files)
{
    uint64_t content[MAX_ENTRY_FORMATS], form[MAX_ENTRY_FORMATS];
    unsigned formats = (unsigned)read_fixed(c, 1);
    if (formats > MAX_ENTRY_FORMATS)
        return -1;
    for (unsigned f = 0; f < formats; f++) {
        content[f] = read_leb(c, 0);
        form[f] = read_leb(c, 0);
    }
    uint64_t count = read_leb(c, 0);
    /* Every supported form takes at least a byte, so no format means no entry. */
    if (c->bad || (formats == 0 && count > 0))
        return -1;
    for (uint64_t i = 0; i < count && !c->bad; i++) {
        const char *name = NULL;
        size_t len = 0;
        for (unsigned f = 0; f < formats; f++) {
            const char *text = NULL;
            size_t text_len = 0;
            if (read_form(c, p, offset_size, form[f], &text, &text_len))
                return -1;
            if (content[f] == LNCT_PATH) {
                name = text;
                len = text_len;
            }
        }
        if (files)
            add_file(p, name, len);
    }
    return c->bad ? -1 : 0;
}

/* DWARF 2-4: include_directories then file_names, each ended by an empty
 * name. File numbers start at 1, so entry 0 stays nameless. */
static int read_v4_entries(struct cursor *c, struct parse *p)
{
    size_t len = 0;
    add_file(p, NULL, 0);
    while (read_cstr(c, &len) && len > 0)
        ;
    for (;;) {
        const char *name = read_cstr(c, &len);
        if (!name || len == 0)
            break;
        read_leb(c, 0); /* directory index */
        read_leb(c, 0); /* modification time */
        read_leb(c, 0); /* length */
        add_file(p, name, len);
    }
    return c->bad ? -1 : 0;
}

/* Reads a unit's header from `c` (the unit's bytes after unit_length) and
 * leaves `program` on its line-number program. */
static int read_header(struct cursor *c, struct parse *p, struct header *h, struct cursor *program)
{
    h->version = (int)read_fixed(c, 2);
    if (h->version < 2 || h->version > 5)
        return -1;
    if (h->version >= 5)
        skip(c, 2); /* address_size, segment_selector_size */
    uint64_t header_length = read_fixed(c, (unsigned)h->offset_size);
    if (!need(c, header_length))
        return -1;
    *program = (struct cursor){c->at + header_length, c->end, 0};
    struct cursor tables = {c->at, c->at + header_length, 0};
    h->min_inst_len = (uint8_t)read_fixed(&tables, 1);
    h->max_ops = h->version >= 4 ? (uint8_t)read_fixed(&tables, 1) : 1;
    read_fixed(&tables, 1); /* default_is_stmt: every row counts, as for addr2line */
    h->line_base = (int8_t)read_fixed(&tables, 1);
    h->line_range = (uint8_t)read_fixed(&tables, 1);
    h->opcode_base = (uint8_t)read_fixed(&tables, 1);
    h->opcode_lengths = tables.at;
    skip(&tables, h->opcode_base ? h->opcode_base - 1u : 0);
    if (tables.bad || h->line_range == 0 || h->opcode_base == 0 || h->max_ops == 0)
        return -1;
    p->file_count = 0;
    if (h->version >= 5)
        return read_v5_entries(&tables, p, h->offset_size, 0) ||
                       read_v5_entries(&tables, p, h->offset_size, 1)
                   ? -1
                   : 0;
    return read_v4_entries(&tables, p);
}

static uint32_t file_id(struct parse *p, uint64_t index)
{
    if (index >= p->file_count || !p->files[index].name)
        return 0;
    struct file_entry *file = &p->files[index];
    if (!file->id)
        file->id = ct_strings_intern(file->name, file->len);
    return file->id;
}

/* Ends the sequence being decoded: kept when it is sound, else its rows go.
 * One starting at address 0 is code the linker discarded (its addresses
 * were never relocated). */
static void close_sequence(struct parse *p)
{
    size_t begin = p->sequence_begin, count = p->row_count - begin;
    if (p->sequence_broken || count < 2 || p->rows[begin].address == 0) {
        p->row_count = begin;
    } else {
        p->sequences = ct_array_reserve(p->sequences, &p->sequence_capacity, p->sequence_count + 1,
                                        sizeof *p->sequences);
        p->sequences[p->sequence_count++] = (struct sequence){
            p->rows[begin].address, p->rows[p->row_count - 1].address, begin, count};
    }
    p->sequence_begin = p->row_count;
    p->sequence_broken = 0;
}

static void append(struct parse *p, struct ct_line_row row)
{
    p->rows = ct_array_reserve(p->rows, &p->row_capacity, p->row_count + 1, sizeof *p->rows);
    p->rows[p->row_count++] = row;
}

/* Adds a row to the sequence being decoded. Of several rows at one address
 * only the last counts (as for addr2line), and a row repeating the previous
 * file and line changes no lookup, so neither is kept. */
static void emit(struct parse *p, const struct registers *r, int end_sequence)
{
    struct ct_line_row row = {r->address, 0, 0};
    if (!end_sequence && r->line <= UINT32_MAX) {
        row.file = file_id(p, r->file);
        row.line = (uint32_t)r->line;
    }
    struct ct_line_row *last = p->row_count > p->sequence_begin ? &p->rows[p->row_count - 1] : NULL;
    if (last && row.address < last->address)
        p->sequence_broken = 1;
    if (last && row.address == last->address)
        *last = row;
    else if (end_sequence || !last || last->file != row.file || last->line != row.line)
        append(p, row);
    if (end_sequence)
        close_sequence(p);
}

static void advance(const struct header *h, struct registers *r, uint64_t operations)
{
    if (h->max_ops == 1) {
        r->address += h->min_inst_len * operations;
        return;
    }
    uint64_t total = r->op_index + operations;
    r->address += h->min_inst_len * (total / h->max_ops);
    r->op_index = total % h->max_ops;
}

static void reset(struct registers *r)
{
    *r = (struct registers){.file = 1, .line = 1};
}

static void run_special(struct parse *p, const struct header *h, struct registers *r, uint8_t op)
{
    unsigned adjusted = (unsigned)(op - h->opcode_base);
    advance(h, r, adjusted / h->line_range);
    r->line += (uint64_t)(int64_t)(h->line_base + (int)(adjusted % h->line_range));
    emit(p, r, 0);
}

static void run_extended(struct parse *p, struct registers *r, struct cursor *c)
{
    uint64_t len = read_leb(c, 0);
    if (!need(c, len) || len == 0)
        return;
    struct cursor operands = {c->at, c->at + len, 0};
    c->at += len;
    size_t name_len = 0;
    const char *name;
    switch (read_fixed(&operands, 1)) {
    case LNE_END_SEQUENCE:
        emit(p, r, 1);
        reset(r);
        break;
    case LNE_SET_ADDRESS:
        if (len - 1 <= 8) {
            r->address = read_fixed(&operands, (unsigned)(len - 1));
            r->op_index = 0;
        }
        break;
    case LNE_DEFINE_FILE:
        name = read_cstr(&operands, &name_len);
        if (name)
            add_file(p, name, name_len);
        break;
    default: /* DW_LNE_set_discriminator and vendor opcodes: no effect on rows */
        break;
    }
}

static void run_standard(struct parse *p, const struct header *h, struct registers *r, uint8_t op,
                         struct cursor *c)
{
    switch (op) {
    case LNS_COPY:
        emit(p, r, 0);
        break;
    case LNS_ADVANCE_PC:
        advance(h, r, read_leb(c, 0));
        break;
    case LNS_ADVANCE_LINE:
        r->line += read_leb(c, 1);
        break;
    case LNS_SET_FILE:
        r->file = read_leb(c, 0);
        break;
    case LNS_CONST_ADD_PC:
        advance(h, r, (255u - h->opcode_base) / h->line_range);
        break;
    case LNS_FIXED_ADVANCE_PC:
        r->address += read_fixed(c, 2);
        r->op_index = 0;
        break;
    case LNS_NEGATE_STMT:
    case LNS_SET_BASIC_BLOCK:
    case LNS_SET_PROLOGUE_END:
    case LNS_SET_EPILOGUE_BEGIN:
        break;
    default: /* set_column, set_isa, and opcodes this reader does not know */
        for (unsigned i = 0; i < h->opcode_lengths[op - 1] && !c->bad; i++)
            read_leb(c, 0);
        break;
    }
}

static void run_program(struct parse *p, const struct header *h, struct cursor *c)
{
    struct registers r;
    reset(&r);
    p->sequence_begin = p->row_count;
    p->sequence_broken = 0;
    while (c->at < c->end && !c->bad) {
        uint8_t op = (uint8_t)read_fixed(c, 1);
        if (op >= h->opcode_base)
            run_special(p, h, &r, op);
        else if (op == 0)
            run_extended(p, &r, c);
        else
            run_standard(p, h, &r, op, c);
    }
    p->row_count = p->sequence_begin; /* a sequence left without its end */
}

static int by_start(const void *a, const void *b)
{
    const struct sequence *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* Lays the kept sequences out in address order; an overlapping one (two
 * copies of the same code) would make the table unsearchable, so it goes. */
static void finish(struct parse *p, struct ct_line_table *table)
{
    if (p->sequence_count)
        qsort(p->sequences, p->sequence_count, sizeof *p->sequences, by_start);
    table->rows = malloc((p->row_count ? p->row_count : 1) * sizeof *table->rows);
    if (!table->rows)
        abort();
    table->count = 0;
    uint64_t end = 0;
    for (size_t i = 0; i < p->sequence_count; i++) {
        const struct sequence *s = &p->sequences[i];
        if (s->start < end)
            continue;
        memcpy(table->rows + table->count, p->rows + s->begin, s->count * sizeof *table->rows);
        table->count += s->count;
        end = s->end;
    }
}

void ct_dwarf_lines_parse(const struct ct_dwarf_sections *sections, struct ct_line_table *table)
{
    struct parse p = {.sections = sections};
    struct cursor section = {sections->line, sections->line + sections->line_size, 0};
    while (sections->line && section.at < section.end && !section.bad) {
        struct header h = {.offset_size = 4};
        uint64_t length = read_fixed(&section, 4);
        if (length == 0xffffffff) {
            h.offset_size = 8;
            length = read_fixed(&section, 8);
        } else if (length >= 0xfffffff0) {
            break; /* reserved values */
        }
        if (!need(&section, length))
            break;
        struct cursor unit = {section.at, section.at + length, 0}, program;
        section.at += length;
        if (read_header(&unit, &p, &h, &program) == 0)
            run_program(&p, &h, &program);
    }
    finish(&p, table);
    free(p.files);
    free(p.rows);
    free(p.sequences);
}

const struct ct_line_row *ct_dwarf_lines_find(const struct ct_line_table *table, uint64_t address)
{
    size_t low = 0, high = table->count; /* first row past `address` lies in [low, high] */
    while (low < high) {
        size_t mid = low + (high - low) / 2;
        if (table->rows[mid].address <= address)
            low = mid + 1;
        else
            high = mid;
    }
    if (low == 0 || table->rows[low - 1].line == 0)
        return NULL;
    return &table->rows[low - 1];
}

void ct_dwarf_lines_free(struct ct_line_table *table)
{
    free(table->rows);
    table->rows = NULL;
    table->count = 0;
}
