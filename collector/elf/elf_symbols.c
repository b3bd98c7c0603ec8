/*
 * Named symbol look-up over .dynsym, then .symtab for what the first lacks:
 * both tables and their strings are read once per call and freed, since the
 * reader looks up a handful of names once per process.
 */
#include "collector/elf/elf_symbols.h"

#include <stdlib.h>
#include <string.h>

#define MAX_SYMBOL_TABLE (64ull << 20)

/* Fills the names still 0 from one symbol table; how many it found. */
static int find_in(const struct ct_elf *elf, const struct ct_elf_sections *s,
                   const Elf64_Shdr *table, const char *const *names, int count, uint64_t *values)
{
    if (!table || table->sh_entsize != sizeof(Elf64_Sym) || table->sh_link >= s->count)
        return 0;
    const Elf64_Shdr *strings = &s->headers[table->sh_link];
    Elf64_Sym *symbols = (Elf64_Sym *)ct_elf_read_section(elf, table, MAX_SYMBOL_TABLE);
    char *text = (char *)ct_elf_read_section(elf, strings, MAX_SYMBOL_TABLE);
    int found = 0;
    for (size_t i = 0; symbols && text && i < table->sh_size / sizeof *symbols; i++) {
        const Elf64_Sym *sym = &symbols[i];
        if (sym->st_shndx == SHN_UNDEF || sym->st_name >= strings->sh_size)
            continue;
        for (int k = 0; k < count; k++)
            if (!values[k] && strcmp(text + sym->st_name, names[k]) == 0) {
                values[k] = sym->st_value;
                found++;
            }
    }
    free(symbols);
    free(text);
    return found;
}

int ct_elf_find_symbols(const struct ct_elf *elf, const char *const *names, int count,
                        uint64_t *values)
{
    struct ct_elf_sections s;
    memset(values, 0, (size_t)count * sizeof *values);
    if (ct_elf_read_sections(elf, &s))
        return 0;
    int found = find_in(elf, &s, ct_elf_section_typed(&s, SHT_DYNSYM), names, count, values);
    if (found < count)
        found += find_in(elf, &s, ct_elf_section_typed(&s, SHT_SYMTAB), names, count, values);
    ct_elf_free_sections(&s);
    return found;
}
