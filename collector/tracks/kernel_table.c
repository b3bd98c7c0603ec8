/*
 * Kernel names arrive as string records ahead of the launches that use them
 * and are kept by key; a launch whose name record was lost is named by its
 * address. For a launch that failed with cudaErrorNoKernelImageForDevice the
 * file holding the kernel is read for the GPU code it carries, once per
 * kernel, and written as an instant on the libraries track.
 */
#include "collector/tracks/kernel_table.h"

#include <stdio.h>

#include "collector/elf/fatbin.h"
#include "cudatrace/trace_names.h"
#include "collector/perfetto/process_tracks.h"
#include "common/u64_map.h"

static struct ct_u64_map names;            /* key -> string id */
static struct ct_u64_map libraries;        /* key -> string id of the file holding it */
static struct ct_u64_map no_image_written; /* keys already written */

void ct_kernel_table_name_is(uint64_t key, uint32_t name)
{
    ct_u64_map_put(&names, key, name);
}

void ct_kernel_table_library_is(uint64_t key, uint32_t path)
{
    ct_u64_map_put(&libraries, key, path);
}

uint32_t ct_kernel_table_name(uint64_t key)
{
    const uint64_t *name = ct_u64_map_find(&names, key);
    if (name)
        return (uint32_t)*name;
    char unnamed[40];
    snprintf(unnamed, sizeof unnamed, "kernel@0x%llx", (unsigned long long)key);
    uint32_t id = ct_strings_intern_cstr(unnamed);
    ct_u64_map_put(&names, key, id);
    return id;
}

void ct_kernel_table_no_image(uint64_t key, uint64_t ts)
{
    if (ct_u64_map_find(&no_image_written, key))
        return;
    ct_u64_map_put(&no_image_written, key, 1);
    const uint64_t *library = ct_u64_map_find(&libraries, key);
    char archs[1024] = "";
    if (library)
        ct_elf_fatbin_archs(ct_strings_get((uint32_t)*library), archs, sizeof archs);
    struct ct_arg args[] = {
        {ct_strings_intern_cstr(ct_key_kernel), CT_ARG_STRING, ct_kernel_table_name(key)},
        {ct_strings_intern_cstr(ct_key_library), CT_ARG_STRING,
         library ? (uint32_t)*library : ct_strings_intern_cstr("")},
        CT_TEXT_ARG(ct_key_archs, archs),
    };
    ct_process_instant(CT_TRACK_LIBRARIES, ts, ct_event_no_kernel_image, args, 3);
}
