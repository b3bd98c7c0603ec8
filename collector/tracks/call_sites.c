/*
 * Decodes call-site strings (include/cudatrace/call_site.h) and symbolises
 * their native frames (symbolize.c) once per distinct string: a loop's sync
 * sends the same bytes every time, so after the first the cost is one map
 * lookup and the trace pays one interned id. The `site` frame is the first
 * that belongs to the program rather than to Python's or CUDA's own
 * libraries; Python frames, when there are any, come first, since in a
 * Python program the interpreter's native frames say nothing to its author.
 */
#include "collector/tracks/call_sites.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "cudatrace/call_site.h"
#include "common/library_family.h"
#include "common/python_files.h"
#include "common/string_table.h"
#include "collector/elf/symbolize.h"
#include "common/u64_map.h"

#define STACK_TEXT_MAX 8192

struct ct_call_sites_pending {
    uint64_t key;
    uint32_t blob;
};

void ct_call_sites_start(struct ct_call_sites *s, int32_t pid, uint32_t rings)
{
    *s = (struct ct_call_sites){.pid = pid};
    s->pending = calloc(rings, sizeof *s->pending);
    if (!s->pending)
        abort();
}

void ct_call_sites_arrived(struct ct_call_sites *s, uint32_t index, uint64_t begin_ticks,
                           uint32_t blob)
{
    s->pending[index] = (struct ct_call_sites_pending){begin_ticks, blob};
}

void ct_call_sites_reset(struct ct_call_sites *s, uint32_t index)
{
    s->pending[index] = (struct ct_call_sites_pending){0, 0};
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The CUDA stack (library_family.c knows its files), the tracer, the
 * frameworks over it and the C runtime: frames there are never the line
 * the user wrote. */
static int library_module(const char *module)
{
    static const char *const prefixes[] = {
        "libcudatrace", "libtorch",  "libc10",   "libpython", "libc.so",
        "ld-linux",     "libstdc++", "libgcc_s", "libffi",    "_ctypes",
    };
    char family[64];
    if (ct_library_family(module, family, sizeof family))
        return 1;
    const char *name = base_name(module);
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
            return 1;
    return 0;
}

/* nvcc programs call cudaMalloc<T> and the like, C++ templates of the
 * toolkit's headers over the runtime's functions: a frame in one of those
 * (a C++ function called cuda...) is the toolkit's, not the user's. */
static int toolkit_wrapper(const char *function)
{
    if (!function || strncmp(function, "_Z", 2) != 0)
        return 0;
    const char *name = function + 2 + strspn(function + 2, "0123456789");
    return name > function + 2 && strncmp(name, "cuda", 4) == 0;
}

/* Inlined into the caller, such a template leaves the caller's frame with a
 * header's line: the function is right, the line is not the user's. */
static int toolkit_header(const char *file)
{
    static const char *const headers[] = {"cuda_runtime.h", "cuda_runtime_api.h",
                                          "cuda_device_runtime_api.h", "driver_functions.h"};
    const char *name = base_name(file);
    for (size_t i = 0; i < sizeof headers / sizeof headers[0]; i++)
        if (strcmp(name, headers[i]) == 0)
            return 1;
    return strstr(file, "crt/") != NULL;
}

struct frame_text {
    char text[640];       /* for the stack: with the module      */
    char short_text[512]; /* for the site: file:line in function */
    int user;             /* the program's own code              */
};

/* GCC's clones (f.constprop.0, f.isra.0, f.part.0, f.cold) are f to the
 * person who wrote f. */
static void source_name(const char *function, char *out, size_t size)
{
    static const char *const suffixes[] = {".constprop.", ".isra.", ".part.", ".cold"};
    size_t len = strlen(function);
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        const char *at = strstr(function, suffixes[i]);
        if (at && (size_t)(at - function) < len)
            len = (size_t)(at - function);
    }
    snprintf(out, size, "%.*s", (int)len, function);
}

static void native_frame(struct ct_call_sites *s, uint64_t pc, struct frame_text *out)
{
    struct ct_symbol sym;
    /* A return address points after the call; the call is the byte before. */
    if (ct_symbolize(&s->symbols, s->pid, pc - 1, &sym) != 0 || !sym.module) {
        snprintf(out->short_text, sizeof out->short_text, "0x%llx", (unsigned long long)pc);
        snprintf(out->text, sizeof out->text, "%s", out->short_text);
        out->user = 0;
        return;
    }
    const char *module = base_name(sym.module);
    char function[256] = "?";
    if (sym.function)
        source_name(sym.function, function, sizeof function);
    if (sym.file && sym.line && !toolkit_header(sym.file))
        snprintf(out->short_text, sizeof out->short_text, "%s:%u in %s", sym.file, sym.line,
                 function);
    else if (sym.function)
        snprintf(out->short_text, sizeof out->short_text, "%s", function);
    else
        snprintf(out->short_text, sizeof out->short_text, "%s+0x%llx", module,
                 (unsigned long long)sym.module_offset);
    if (sym.function || sym.file)
        snprintf(out->text, sizeof out->text, "%s (%s)", out->short_text, module);
    else
        snprintf(out->text, sizeof out->text, "%s", out->short_text);
    out->user = !library_module(sym.module) && !toolkit_wrapper(sym.function);
}

/* Reads one Python frame at *at; 0, or -1 when the bytes run out. */
static int python_frame(const uint8_t *bytes, size_t len, size_t *at, struct frame_text *out)
{
    struct ct_site_python entry;
    if (len - *at < sizeof entry)
        return -1;
    memcpy(&entry, bytes + *at, sizeof entry);
    *at += sizeof entry;
    if (len - *at < (size_t)entry.file_len + entry.function_len)
        return -1;
    const char *file = (const char *)bytes + *at, *function = file + entry.file_len;
    *at += (size_t)entry.file_len + entry.function_len;
    snprintf(out->short_text, sizeof out->short_text, "%.*s:%u in %.*s", (int)entry.file_len, file,
             entry.line, (int)entry.function_len, function);
    snprintf(out->text, sizeof out->text, "%s", out->short_text);
    char file_z[CT_SITE_MAX_FILE + 1];
    snprintf(file_z, sizeof file_z, "%.*s", (int)entry.file_len, file);
    out->user = !ct_python_library_file(file_z);
    return 0;
}

struct stack_text {
    char text[STACK_TEXT_MAX];
    size_t len;
    char site[512];
    char innermost[512];
};

static void add_frame(struct stack_text *s, const struct frame_text *f)
{
    int n =
        snprintf(s->text + s->len, sizeof s->text - s->len, "%s%s", s->len ? "\n" : "", f->text);
    if (n > 0 && (size_t)n < sizeof s->text - s->len)
        s->len += (size_t)n;
    if (!s->innermost[0])
        snprintf(s->innermost, sizeof s->innermost, "%s", f->short_text);
    if (f->user && !s->site[0])
        snprintf(s->site, sizeof s->site, "%s", f->short_text);
}

static struct ct_call_site resolve(struct ct_call_sites *sites, const uint8_t *bytes, size_t len)
{
    struct ct_site_header header;
    struct ct_call_site none = {0, 0};
    if (len < sizeof header)
        return none;
    memcpy(&header, bytes, sizeof header);
    size_t at = sizeof header;
    if (header.version != CT_SITE_VERSION || len - at < header.native_count * sizeof(uint64_t))
        return none;
    struct stack_text s = {.len = 0};
    struct frame_text f;
    size_t native_at = at;
    at += header.native_count * sizeof(uint64_t);
    for (uint8_t i = 0; i < header.python_count && python_frame(bytes, len, &at, &f) == 0; i++)
        add_frame(&s, &f);
    for (uint8_t i = 0; i < header.native_count; i++) {
        uint64_t pc;
        memcpy(&pc, bytes + native_at + i * sizeof pc, sizeof pc);
        native_frame(sites, pc, &f);
        add_frame(&s, &f);
    }
    if (!s.len)
        return none;
    const char *site = s.site[0] ? s.site : s.innermost;
    return (struct ct_call_site){ct_strings_intern_cstr(site), ct_strings_intern(s.text, s.len)};
}

struct ct_call_site ct_call_sites_of_caller(struct ct_call_sites *s, uint64_t return_address)
{
    struct frame_text f;
    if (!return_address)
        return (struct ct_call_site){0, 0};
    native_frame(s, return_address, &f);
    if (!f.user)
        return (struct ct_call_site){0, 0};
    return (struct ct_call_site){ct_strings_intern_cstr(f.short_text),
                                 ct_strings_intern_cstr(f.text)};
}

struct ct_call_site ct_call_sites_peek(struct ct_call_sites *s, uint32_t index,
                                       uint64_t begin_ticks)
{
    const struct ct_call_sites_pending *p = &s->pending[index];
    if (!p->blob || p->key != begin_ticks)
        return (struct ct_call_site){0, 0};
    uint64_t *known = ct_u64_map_find(&s->resolved, p->blob);
    if (known)
        return s->sites[*known - 1];
    struct ct_call_site site =
        resolve(s, (const uint8_t *)ct_strings_get(p->blob), ct_strings_len(p->blob));
    s->sites = ct_array_grow(s->sites, s->site_count, sizeof *s->sites);
    s->sites[s->site_count++] = site;
    ct_u64_map_put(&s->resolved, p->blob, s->site_count);
    return site;
}

struct ct_call_site ct_call_sites_take(struct ct_call_sites *s, uint32_t index,
                                       uint64_t begin_ticks)
{
    struct ct_call_site site = ct_call_sites_peek(s, index, begin_ticks);
    if (s->pending[index].key == begin_ticks)
        s->pending[index].blob = 0;
    return site;
}
