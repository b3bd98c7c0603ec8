/*
 * Owns the symboliser's caches (struct ct_symbolizer): each traced process's executable mappings
 * (from /proc/PID/maps, read on first use and again when a pc falls outside
 * all of them, kept after the process is gone) and, once per mapped file,
 * its PT_LOAD segments, its function symbols (.symtab, else .dynsym) sorted
 * by address, and its DWARF line table (dwarf_lines.c). Files are read with
 * pread, never mapped, and every size is checked against the file, so a
 * truncated or corrupt file yields "unknown". Bounds, to keep one huge
 * library from costing gigabytes: a .debug_line over 64 MiB is not decoded
 * (the file then gets functions only), nor a .debug_line_str or .debug_str
 * over 64 MiB (rows then have lines but no file names); a symbol table whose
 * entries and strings together pass 256 MiB is passed over for the next
 * one. Compressed (SHF_COMPRESSED) sections are treated as absent, and so
 * are separate debug files (/usr/lib/debug): only the mapped file is read.
 * Files are opened by the path the maps give, as the collector sees it (it
 * shares the traced process's file system), so a file replaced on disk after
 * it was mapped gives that new file's answers.
 */
#include "collector/elf/symbolize.h"

#include "collector/elf/dwarf_lines.h"
#include "collector/elf/elf_file.h"
#include "common/array.h"
#include "common/string_table.h"
#include "common/u64_map.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_LINE_SECTION ((uint64_t)64 << 20)
#define MAX_STRING_SECTION ((uint64_t)64 << 20)
#define MAX_SYMBOL_TABLE ((uint64_t)256 << 20)
/* How far back a lookup walks for a sized symbol that encloses the address
 * when the nearest one below it does not (nested or overlapping symbols). */
#define ENCLOSING_SEARCH 16

struct function {
    uint64_t address, size;
    uint32_t name; /* offset in module.names */
    uint32_t id;   /* ct_strings id, interned on first use */
    uint8_t rank;  /* which of several symbols at one address names it */
};

struct ct_symbol_module {
    uint32_t path;     /* ct_strings id */
    uint64_t inode;    /* as the maps reported it: a rebuilt file is another module */
    uint32_t next;     /* index + 1 of the next module with the same path, or 0 */
    int loaded;        /* tables read, or tried */
    Elf64_Phdr *loads; /* PT_LOAD segments */
    int load_count;
    struct function *functions;
    size_t function_count;
    char *names;
    struct ct_line_table lines;
};

struct mapping {
    uint64_t start, end, offset;
    uint32_t module; /* index + 1, or 0 for no file */
    uint32_t name;   /* ct_strings id of the path or [pseudo] name, 0 for none */
};

struct ct_symbol_process {
    int32_t pid;
    int gone; /* its maps could not be read: keep what was cached, and never read them again,
               * so that a reused pid cannot mix another program into them */
    struct mapping *maps;
    size_t map_count;
};

static void *allocate(size_t size)
{
    void *memory = malloc(size ? size : 1);
    if (!memory)
        abort();
    return memory;
}

static uint32_t module_for(struct ct_symbolizer *s, uint32_t path, uint64_t inode)
{
    uint64_t *first = ct_u64_map_find(&s->module_by_path, path);
    for (uint32_t at = first ? (uint32_t)*first : 0; at; at = s->modules[at - 1].next)
        if (s->modules[at - 1].inode == inode)
            return at;
    s->modules =
        ct_array_reserve(s->modules, &s->module_capacity, s->module_count + 1, sizeof *s->modules);
    s->modules[s->module_count] = (struct ct_symbol_module){.path = path, .inode = inode};
    s->modules[s->module_count].next = first ? (uint32_t)*first : 0;
    s->module_count++;
    ct_u64_map_put(&s->module_by_path, path, s->module_count);
    return (uint32_t)s->module_count;
}

/* ---- functions ---- */

/* Among symbols at one address: a sized one over a bare label, then global
 * over weak over local (the exported name of an aliased function). */
static uint8_t symbol_rank(const Elf64_Sym *sym)
{
    int binding = ELF64_ST_BIND(sym->st_info);
    return (uint8_t)((sym->st_size ? 4 : 0) + (binding == STB_GLOBAL ? 2
                                               : binding == STB_WEAK ? 1
                                                                     : 0));
}

static int is_function(const Elf64_Sym *sym, uint64_t names_size)
{
    int type = ELF64_ST_TYPE(sym->st_info);
    return (type == STT_FUNC || type == STT_GNU_IFUNC) && sym->st_shndx != SHN_UNDEF &&
           sym->st_shndx < SHN_LORESERVE && sym->st_value != 0 && sym->st_name != 0 &&
           sym->st_name < names_size;
}

static int by_address(const void *a, const void *b)
{
    const struct function *x = a, *y = b;
    if (x->address != y->address)
        return x->address < y->address ? -1 : 1;
    if (x->rank != y->rank)
        return (int)y->rank - (int)x->rank;
    return x->name < y->name ? -1 : x->name > y->name; /* the table's order */
}

/* Keeps the functions in address order, one per address. */
static void sort_functions(struct ct_symbol_module *m)
{
    if (m->function_count == 0)
        return;
    qsort(m->functions, m->function_count, sizeof *m->functions, by_address);
    size_t kept = 1;
    for (size_t i = 1; i < m->function_count; i++)
        if (m->functions[i].address != m->functions[kept - 1].address)
            m->functions[kept++] = m->functions[i];
    m->function_count = kept;
}

static void add_function(struct ct_symbol_module *m, const Elf64_Sym *sym, const char *name,
                         size_t *capacity, size_t *names_used, size_t *names_capacity)
{
    size_t len = strlen(name) + 1;
    m->names = ct_array_reserve(m->names, names_capacity, *names_used + len, 1);
    memcpy(m->names + *names_used, name, len);
    m->functions =
        ct_array_reserve(m->functions, capacity, m->function_count + 1, sizeof *m->functions);
    m->functions[m->function_count++] =
        (struct function){sym->st_value, sym->st_size, (uint32_t)*names_used, 0, symbol_rank(sym)};
    *names_used += len;
}

/* Collects the function symbols of one symbol table; -1 when it cannot be
 * read or has none. Only function names are copied, so the (often much
 * larger) string table is not kept. */
static int read_functions(struct ct_symbol_module *m, const struct ct_elf *elf,
                          const struct ct_elf_sections *s, const Elf64_Shdr *table)
{
    if (!table || table->sh_entsize != sizeof(Elf64_Sym) || table->sh_link >= s->count)
        return -1;
    const Elf64_Shdr *strings = &s->headers[table->sh_link];
    if (table->sh_size > MAX_SYMBOL_TABLE || strings->sh_size > MAX_SYMBOL_TABLE - table->sh_size)
        return -1;
    Elf64_Sym *symbols = (Elf64_Sym *)ct_elf_read_section(elf, table, MAX_SYMBOL_TABLE);
    char *names = (char *)ct_elf_read_section(elf, strings, MAX_SYMBOL_TABLE);
    size_t capacity = 0, names_used = 0, names_capacity = 0;
    for (size_t i = 0; symbols && names && i < table->sh_size / sizeof *symbols; i++)
        if (is_function(&symbols[i], strings->sh_size))
            add_function(m, &symbols[i], names + symbols[i].st_name, &capacity, &names_used,
                         &names_capacity);
    free(symbols);
    free(names);
    sort_functions(m);
    return m->function_count ? 0 : -1;
}

static struct function *find_function(struct ct_symbol_module *m, uint64_t address)
{
    size_t low = 0, high = m->function_count;
    while (low < high) {
        size_t mid = low + (high - low) / 2;
        if (m->functions[mid].address <= address)
            low = mid + 1;
        else
            high = mid;
    }
    for (size_t at = low; at > 0 && low - at < ENCLOSING_SEARCH; at--) {
        struct function *f = &m->functions[at - 1];
        if (f->size ? address - f->address < f->size : at == low)
            return f;
    }
    return NULL;
}

/* ---- line table ---- */

static void read_lines(struct ct_symbol_module *m, const struct ct_elf *elf,
                       const struct ct_elf_sections *s)
{
    const Elf64_Shdr *line = ct_elf_section_named(s, ".debug_line");
    const Elf64_Shdr *line_str = ct_elf_section_named(s, ".debug_line_str");
    const Elf64_Shdr *str = ct_elf_section_named(s, ".debug_str");
    struct ct_dwarf_sections dwarf = {0};
    uint8_t *line_data = line ? ct_elf_read_section(elf, line, MAX_LINE_SECTION) : NULL;
    if (!line_data)
        return;
    uint8_t *line_str_data =
        line_str ? ct_elf_read_section(elf, line_str, MAX_STRING_SECTION) : NULL;
    uint8_t *str_data = str ? ct_elf_read_section(elf, str, MAX_STRING_SECTION) : NULL;
    dwarf.line = line_data;
    dwarf.line_size = line->sh_size;
    dwarf.line_str = line_str_data;
    dwarf.line_str_size = line_str_data ? line_str->sh_size : 0;
    dwarf.str = str_data;
    dwarf.str_size = str_data ? str->sh_size : 0;
    ct_dwarf_lines_parse(&dwarf, &m->lines);
    free(line_data);
    free(line_str_data);
    free(str_data);
}

/* ---- modules ---- */

static void read_tables(struct ct_symbol_module *m, const struct ct_elf *elf)
{
    struct ct_elf_sections s;
    if (ct_elf_read_sections(elf, &s))
        return;
    if (read_functions(m, elf, &s, ct_elf_section_typed(&s, SHT_SYMTAB)))
        read_functions(m, elf, &s, ct_elf_section_typed(&s, SHT_DYNSYM));
    read_lines(m, elf, &s);
    ct_elf_free_sections(&s);
}

static struct ct_symbol_module *loaded_module(struct ct_symbolizer *s, uint32_t index)
{
    struct ct_symbol_module *m = &s->modules[index - 1];
    if (m->loaded)
        return m;
    m->loaded = 1;
    struct ct_elf elf;
    if (ct_elf_open(ct_strings_get(m->path), &elf))
        return m;
    m->loads = allocate((size_t)elf.count * sizeof *m->loads);
    for (int i = 0; i < elf.count; i++)
        if (elf.ph[i].p_type == PT_LOAD)
            m->loads[m->load_count++] = elf.ph[i];
    read_tables(m, &elf);
    ct_elf_close(&elf);
    return m;
}

/* The ELF virtual address of a file offset, through the PT_LOAD segment
 * that holds it; executable segments first, since the page that starts one
 * can be mapped twice. */
static int file_address(const struct ct_symbol_module *m, uint64_t offset, uint64_t *address)
{
    for (int executable = 1; executable >= 0; executable--) {
        for (int i = 0; i < m->load_count; i++) {
            const Elf64_Phdr *ph = &m->loads[i];
            if (!!(ph->p_flags & PF_X) == executable && offset >= ph->p_offset &&
                offset - ph->p_offset < ph->p_filesz) {
                *address = offset - ph->p_offset + ph->p_vaddr;
                return 0;
            }
        }
    }
    return -1;
}

static void describe(struct ct_symbol_module *m, uint64_t address, struct ct_symbol *out)
{
    struct function *f = find_function(m, address);
    if (f) {
        if (!f->id)
            f->id = ct_strings_intern_cstr(m->names + f->name);
        out->function = ct_strings_get(f->id);
    }
    const struct ct_line_row *row = ct_dwarf_lines_find(&m->lines, address);
    if (row) {
        out->file = row->file ? ct_strings_get(row->file) : NULL;
        out->line = row->line;
    }
}

/* ---- processes ---- */

/* One line of /proc/PID/maps, if it is an executable mapping. */
static int parse_mapping(struct ct_symbolizer *s, char *line, struct mapping *out)
{
    unsigned long long start, end, offset, inode;
    char perms[5];
    int name_at = 0;
    if (sscanf(line, "%llx-%llx %4s %llx %*x:%*x %llu %n", &start, &end, perms, &offset, &inode,
               &name_at) < 5 ||
        !strchr(perms, 'x') || start >= end)
        return -1;
    char *name = line + name_at;
    size_t len = strcspn(name, "\n");
    const char *deleted = " (deleted)";
    if (len > strlen(deleted) &&
        strncmp(name + len - strlen(deleted), deleted, strlen(deleted)) == 0)
        len -= strlen(deleted);
    *out = (struct mapping){start, end, offset, 0, 0};
    if (len > 0)
        out->name = ct_strings_intern(name, len);
    if (len > 0 && name[0] == '/')
        out->module = module_for(s, out->name, inode);
    return 0;
}

static int read_maps(struct ct_symbolizer *s, struct ct_symbol_process *p)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)p->pid);
    FILE *file = fopen(path, "re");
    if (!file) {
        p->gone = 1;
        return -1;
    }
    struct mapping *maps = NULL, mapping;
    size_t count = 0, capacity = 0, size = 0;
    char *line = NULL;
    while (getline(&line, &size, file) > 0) {
        if (parse_mapping(s, line, &mapping) == 0) {
            maps = ct_array_reserve(maps, &capacity, count + 1, sizeof *maps);
            maps[count++] = mapping;
        }
    }
    free(line);
    fclose(file);
    free(p->maps);
    p->maps = maps;
    p->map_count = count;
    return 0;
}

static struct ct_symbol_process *process_for(struct ct_symbolizer *s, int32_t pid)
{
    uint64_t key = (uint64_t)(uint32_t)pid + 1;
    uint64_t *found = ct_u64_map_find(&s->process_by_pid, key);
    if (found)
        return &s->processes[*found - 1];
    s->processes = ct_array_reserve(s->processes, &s->process_capacity, s->process_count + 1,
                                    sizeof *s->processes);
    struct ct_symbol_process *p = &s->processes[s->process_count++];
    *p = (struct ct_symbol_process){.pid = pid};
    ct_u64_map_put(&s->process_by_pid, key, s->process_count);
    read_maps(s, p);
    return p;
}

/* The mapping that holds `pc` (the kernel lists them in address order). */
static const struct mapping *find_mapping(const struct ct_symbol_process *p, uint64_t pc)
{
    size_t low = 0, high = p->map_count;
    while (low < high) {
        size_t mid = low + (high - low) / 2;
        if (p->maps[mid].end <= pc)
            low = mid + 1;
        else
            high = mid;
    }
    return low < p->map_count && p->maps[low].start <= pc ? &p->maps[low] : NULL;
}

int ct_symbolize(struct ct_symbolizer *s, int32_t pid, uint64_t pc, struct ct_symbol *out)
{
    *out = (struct ct_symbol){0};
    struct ct_symbol_process *p = process_for(s, pid);
    const struct mapping *map = find_mapping(p, pc);
    if (!map && !p->gone && read_maps(s, p) == 0)
        map = find_mapping(p, pc);
    if (!map || !map->name)
        return -1;
    out->module = ct_strings_get(map->name);
    uint64_t offset = pc - map->start + map->offset;
    out->module_offset = map->module ? offset : pc - map->start;
    if (!map->module)
        return 0;
    struct ct_symbol_module *m = loaded_module(s, map->module);
    if (file_address(m, offset, &out->module_offset) == 0)
        describe(m, out->module_offset, out);
    return 0;
}

int ct_symbolize_file(struct ct_symbolizer *s, const char *path, uint64_t address,
                      struct ct_symbol *out)
{
    struct stat st;
    *out = (struct ct_symbol){0};
    if (stat(path, &st) != 0)
        return -1;
    struct ct_symbol_module *m =
        loaded_module(s, module_for(s, ct_strings_intern_cstr(path), st.st_ino));
    out->module = ct_strings_get(m->path);
    out->module_offset = address;
    describe(m, address, out);
    return 0;
}
