/*
 * The GPU code a library carries: the architectures of the entries of the
 * fat binaries in its .nv_fatbin section (SASS for sm_NN, PTX for
 * compute_NN), for a launch that failed with cudaErrorNoKernelImageForDevice.
 * The container and entry headers are read as laid out in the section; a
 * header that does not check out ends the walk, and nothing is read past
 * the section.
 */
#include "collector/elf/fatbin.h"

#include <stdio.h>
#include <string.h>

#include "collector/elf/elf_file.h"

/* Adds `arch` to the ','-separated list `out` unless it is there. */
static void add_arch(char *out, size_t size, const char *arch)
{
    size_t len = strlen(arch), used = strlen(out);
    for (const char *at = out; (at = strstr(at, arch)) != NULL; at += len)
        if ((at == out || at[-1] == ',') && (at[len] == ',' || at[len] == '\0'))
            return;
    snprintf(out + used, size - used, "%s%s", used ? "," : "", arch);
}

/* The fat binary layout in a .nv_fatbin section: containers of a header
 * and entries, each entry a header and its payload. Both headers are laid
 * out without padding, so they are read as they are. */
struct fatbin_header {
    uint32_t magic; /* 0xBA55ED50 */
    uint16_t version;
    uint16_t header_size;
    uint64_t entries_size;
};

struct fatbin_entry {
    uint16_t kind; /* 1: PTX, 2: ELF (SASS) */
    uint16_t unknown;
    uint32_t header_size;
    uint64_t payload_size;
    uint32_t compressed_size;
    uint32_t unknown2;
    uint16_t minor, major;
    uint32_t arch; /* the SM number: 80 for sm_80 */
};
_Static_assert(sizeof(struct fatbin_header) == 16 && sizeof(struct fatbin_entry) == 32,
               "fat binary headers have no padding");

/* Lists the architectures of every entry of the containers in
 * [start, start + size). Containers are 8-byte aligned, with padding
 * between them. */
static void read_fatbin_archs(int fd, uint64_t start, uint64_t size, char *out, size_t out_size)
{
    uint64_t at = start, end = start + size;
    while (at + sizeof(struct fatbin_header) <= end) {
        struct fatbin_header h;
        if (ct_elf_read_at(fd, &h, sizeof h, at))
            return;
        if (h.magic != 0xBA55ED50u || h.header_size < sizeof h) {
            at += 8;
            continue;
        }
        uint64_t entry = at + h.header_size, entries_end = entry + h.entries_size;
        while (entry + sizeof(struct fatbin_entry) <= entries_end && entries_end <= end) {
            struct fatbin_entry e;
            if (ct_elf_read_at(fd, &e, sizeof e, entry))
                return;
            if (e.header_size < sizeof e)
                break;
            char name[32];
            snprintf(name, sizeof name, "%s_%u", e.kind == 1 ? "compute" : "sm", e.arch);
            if (e.kind == 1 || e.kind == 2)
                add_arch(out, out_size, name);
            entry += e.header_size + e.payload_size;
        }
        at = entries_end > at ? entries_end : at + 8;
    }
}

void ct_elf_fatbin_archs(const char *path, char *out, size_t size)
{
    struct ct_elf elf;
    struct ct_elf_sections sections;
    out[0] = '\0';
    if (ct_elf_open(path, &elf))
        return;
    if (ct_elf_read_sections(&elf, &sections) == 0) {
        const Elf64_Shdr *fatbin = ct_elf_section_named(&sections, ".nv_fatbin");
        if (fatbin)
            read_fatbin_archs(elf.fd, fatbin->sh_offset, fatbin->sh_size, out, size);
        ct_elf_free_sections(&sections);
    }
    ct_elf_close(&elf);
}
