/*
 * What the loader view reads of the objects the dynamic linker has mapped,
 * straight from the link map (dl_iterate_phdr): which object holds an
 * address, an object's file, SONAME and dynamic section, and whether a name
 * asked for is one of them. Nothing here writes or calls into the loader
 * beyond dl_iterate_phdr, so any of it may run inside a dlopen's caller.
 */
#ifndef CT_PRELOAD_LOADER_LOADED_OBJECTS_H
#define CT_PRELOAD_LOADER_LOADED_OBJECTS_H

#include <link.h>
#include <stddef.h>
#include <stdint.h>

#define CT_LOADER_PATH_LEN 1024

/* Copies `text` (NULL: "") cut to fit, on purpose: a path longer than the
 * field keeps its start. */
void ct_copy_truncated(char *out, size_t size, const char *text);
const char *ct_base_name(const char *path);
int ct_is_cuda_stack(const char *path);

/* The object's file: the main program's link-map name is empty, and the
 * audit module and the report name it by its file. */
const char *ct_object_path(const struct dl_phdr_info *info);
/* The path of the object that holds `address`, or "". */
void ct_object_containing(uintptr_t address, char *path, size_t size);
/* Whether a call from `address` is our own (the preload's version getters,
 * CUPTI's dlopen of the driver), not the program's. */
int ct_is_own_address(uintptr_t address);
/* Where the preload itself is loaded, to stand as the caller of its own
 * dlopens. */
uintptr_t ct_own_base(void);

/* The dynamic section of a loaded object, with its string table in
 * `strings`; NULL when it has none. */
const ElfW(Dyn) * ct_object_dynamic(const struct dl_phdr_info *info, const char **strings);
void ct_object_soname(const struct dl_phdr_info *info, char *out, size_t size);
/* Whether an object loaded as `path` with `soname` is what a request by
 * `name` gets: glibc matches a bare name against the names an object was
 * loaded by and its SONAME, and a path against the path. */
int ct_answers_to(const char *name, const char *path, const char *soname);
/* Whether an object that answers to `name` is loaded now; the path of the
 * first that does goes to `path` (truncated to `size`) when given. */
int ct_loaded_path_of(const char *name, char *path, size_t size);
int ct_name_is_loaded(const char *name);

#endif
