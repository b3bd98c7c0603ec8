/*
 * The meaning of records. Each thread that called CUDA gets a sequence and a
 * thread track, and each call becomes a slice on it named exactly as the
 * function called, annotated with the arguments its family carries. The
 * process has its own sequence for what belongs to no thread: the process
 * track, the counter tracks (live device and pinned bytes, launches per
 * second, dropped records), the versions of the CUDA stack, and a closing
 * instant with the session's totals. Kernel names arrive as string records
 * ahead of the launches that use them and are kept by key.
 */
#include "trace_builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "clock_map.h"
#include "cuda_error_names.h"
#include "cudatrace/functions.h"
#include "cudatrace/trace_format.h"
#include "library_inventory.h"
#include "loader_log.h"
#include "perfetto_writer.h"
#include "strings.h"
#include "u64_map.h"

#define CUDA_ERROR_NO_KERNEL_IMAGE 209 /* cudaErrorNoKernelImageForDevice */
#define LAUNCH_BUCKET_NS 100000000ull  /* launch rate resolution: 100 ms */
#define LAUNCH_BUCKETS 64

enum process_track {
    TRACK_DEVICE_BYTES = 1,
    TRACK_PINNED_BYTES,
    TRACK_LAUNCH_RATE,
    TRACK_DROPPED,
    TRACK_LIBRARIES,
};

struct function_info {
    uint32_t name;
    uint8_t family;
    uint8_t takes_stream;
};

struct thread_view {
    struct ct_sequence seq;
    int32_t tid;
    int live;
};

struct pending_string {
    uint64_t key;
    uint16_t kind;
    uint32_t len;
    char text[CT_STRING_MAX];
};

static struct function_info functions[CT_FN_COUNT];
static struct thread_view *threads;
static uint32_t thread_count;
static struct pending_string *pending_strings; /* one per ring */
static struct ct_sequence process_seq;
static int32_t pid;
static uint64_t process_uuid, process_start_ns;
static uint64_t calls;
static uint64_t device_live, pinned_live, last_dropped;
static struct ct_u64_map device_allocs, pinned_allocs; /* pointer -> bytes */
static uint64_t launch_counts[LAUNCH_BUCKETS];
static uint64_t first_open_bucket; /* buckets before it are written */
static uint64_t last_bucket;
static int launch_seen;

static struct ct_u64_map kernel_names;      /* key -> string id */
static struct ct_u64_map kernel_libraries;  /* key -> string id of the file holding it */
static struct ct_u64_map no_image_reported; /* keys already written as no-kernel-image */

static struct {
    uint32_t ptr, bytes, stream, kind, src, value, kernel, grid, block, shared_mem, graph, event,
        flags, result, error;
} arg_names;

#define FUNCTION_INFO(fn, fam, stream)                                                             \
    functions[CT_FN_##fn] =                                                                        \
        (struct function_info){ct_strings_intern_cstr(ct_function_name(CT_FN_##fn)), fam, stream};

static void intern_names(void)
{
    CT_FOR_EACH_FUNCTION(FUNCTION_INFO)
#define ARG_NAME(field) arg_names.field = ct_strings_intern_cstr(#field)
    ARG_NAME(ptr);
    ARG_NAME(bytes);
    ARG_NAME(stream);
    ARG_NAME(kind);
    ARG_NAME(src);
    ARG_NAME(value);
    ARG_NAME(kernel);
    ARG_NAME(grid);
    ARG_NAME(block);
    ARG_NAME(shared_mem);
    ARG_NAME(graph);
    ARG_NAME(event);
    ARG_NAME(flags);
    ARG_NAME(result);
    ARG_NAME(error);
#undef ARG_NAME
}

static uint64_t counter_uuid(enum process_track which)
{
    return process_uuid | which;
}

static uint64_t thread_uuid(int32_t tid)
{
    return process_uuid | 0x80000000ull | (uint32_t)tid;
}

/* argv of the traced process as the kernel holds it. */
static int read_cmdline(char *buf, size_t size, const char **argv, int max_args)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    FILE *f = fopen(path, "re");
    size_t n = f ? fread(buf, 1, size - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    int argc = 0;
    for (size_t i = 0; i < n && argc < max_args; i += strlen(buf + i) + 1)
        argv[argc++] = buf + i;
    return argc;
}

static void write_process_tracks(void)
{
    static char cmdline[8192];
    const char *argv[256];
    int argc = read_cmdline(cmdline, sizeof cmdline, argv, 256);
    const char *name = argc > 0 ? argv[0] : "unknown";
    const char *slash = strrchr(name, '/');
    ct_write_process_track(&process_seq, process_uuid, pid, slash ? slash + 1 : name, argv, argc);
    struct ct_arg format[] = {{ct_strings_intern_cstr("format"), CT_ARG_UINT, CT_TRACE_FORMAT}};
    ct_write_instant(&process_seq, process_uuid, process_start_ns,
                     ct_strings_intern_cstr(CT_TRACE_FORMAT_EVENT), format, 1);
    ct_write_counter_track(&process_seq, counter_uuid(TRACK_DEVICE_BYTES), process_uuid,
                           "CUDA device memory (live bytes)", CT_UNIT_BYTES);
    ct_write_counter_track(&process_seq, counter_uuid(TRACK_PINNED_BYTES), process_uuid,
                           "CUDA pinned host memory (live bytes)", CT_UNIT_BYTES);
    ct_write_counter_track(&process_seq, counter_uuid(TRACK_LAUNCH_RATE), process_uuid,
                           "CUDA kernel launches per second", CT_UNIT_COUNT);
    ct_write_counter_track(&process_seq, counter_uuid(TRACK_DROPPED), process_uuid,
                           "cudatrace dropped records", CT_UNIT_COUNT);
    ct_write_named_track(&process_seq, counter_uuid(TRACK_LIBRARIES), process_uuid,
                         "CUDA libraries");
}

/* Every library's real path, in the order seen, for the closing inventory. */
static char *inventory;
static size_t inventory_len;
static uint64_t inventory_count;

static void note_in_inventory(const char *path)
{
    size_t len = strlen(path);
    char *grown = realloc(inventory, inventory_len + len + 2);
    if (!grown)
        abort();
    inventory = grown;
    memcpy(inventory + inventory_len, path, len);
    inventory_len += len;
    inventory[inventory_len++] = '\n';
    inventory[inventory_len] = '\0';
    inventory_count++;
}

/* The whole inventory once more at the end, on the libraries track. */
static void inventory_instant(uint64_t ts)
{
    struct ct_arg args[] = {
        {ct_strings_intern_cstr("count"), CT_ARG_UINT, inventory_count},
        {ct_strings_intern_cstr("libraries"), CT_ARG_STRING,
         ct_strings_intern(inventory ? inventory : "", inventory_len)},
    };
    ct_write_instant(&process_seq, counter_uuid(TRACK_LIBRARIES), ts,
                     ct_strings_intern_cstr("cuda.library.inventory"), args, 2);
}

static void library_instant(const struct ct_library *lib, void *ctx)
{
    static uint64_t order;
    uint64_t ts = *(const uint64_t *)ctx;
    note_in_inventory(lib->realpath);
#define LIB_STRING(field)                                                                          \
    {                                                                                              \
        ct_strings_intern_cstr(#field), CT_ARG_STRING, ct_strings_intern_cstr(lib->field)          \
    }
    struct ct_arg args[] = {
        LIB_STRING(path),
        LIB_STRING(realpath),
        LIB_STRING(family),
        LIB_STRING(soname),
        LIB_STRING(version),
        LIB_STRING(build_id),
        {ct_strings_intern_cstr("size"), CT_ARG_UINT, lib->size},
        {ct_strings_intern_cstr("order"), CT_ARG_UINT, order++},
        {ct_strings_intern_cstr("built_for_cuda"), CT_ARG_UINT, (uint64_t)lib->built_for_cuda},
    };
#undef LIB_STRING
    size_t nargs = sizeof args / sizeof args[0] - (lib->built_for_cuda == 0);
    ct_write_instant(&process_seq, counter_uuid(TRACK_LIBRARIES), ts,
                     ct_strings_intern_cstr("cuda.library"), args, (int)nargs);
}

static void loader_instant(const struct ct_loader_event *e, void *ctx)
{
    uint64_t ts = *(const uint64_t *)ctx;
    char real[4096], runpath_copy[4096];
    struct ct_arg args[6];
    int n = 0;
#define TEXT(name, value)                                                                          \
    (args[n++] = (struct ct_arg){ct_strings_intern_cstr(name), CT_ARG_STRING,                      \
                                 ct_strings_intern_cstr(value)})
    TEXT("requested_as", e->requested_as);
    TEXT("requested_by", e->requested_by);
    if (e->failed) {
        TEXT("searched", e->searched);
        TEXT("error", e->error);
    } else {
        TEXT("found_via", e->found_via);
        TEXT("path", e->path);
        TEXT("realpath", realpath(e->path, real) ? real : e->path);
        ct_library_runpath_copy(e->requested_by, e->requested_as, e->path, runpath_copy,
                                sizeof runpath_copy);
        if (*runpath_copy)
            TEXT("runpath_copy", runpath_copy);
    }
#undef TEXT
    /* A load is placed when the loader opened the file; a failure when seen. */
    ct_write_instant(
        &process_seq, counter_uuid(TRACK_LIBRARIES), e->loaded_ns ? e->loaded_ns : ts,
        ct_strings_intern_cstr(e->failed ? "cuda.library.failed" : "cuda.library.load"), args, n);
}

void ct_builder_scan_libraries(int process_ended)
{
    uint64_t now = ct_clock_map_now_ns();
    ct_loader_log_read(pid, loader_instant, &now);
    if (process_ended)
        ct_loader_log_finish(loader_instant, &now);
    else
        ct_library_scan(pid, library_instant, &now);
}

/* The toolkit the process's environment points at: $CUDA_HOME, else
 * /usr/local/cuda; its version from the directory name (cuda-13.0). */
static void toolkit_instant(void)
{
    char path[64], env[65536], root[4096] = "", version[64] = "";
    snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
    FILE *f = fopen(path, "re");
    size_t n = f ? fread(env, 1, sizeof env - 1, f) : 0;
    if (f)
        fclose(f);
    env[n] = '\0';
    const char *home = "/usr/local/cuda";
    for (size_t i = 0; i < n; i += strlen(env + i) + 1)
        if (strncmp(env + i, "CUDA_HOME=", 10) == 0 && env[i + 10])
            home = env + i + 10;
    if (!realpath(home, root))
        return;
    const char *dash = strstr(root, "/cuda-");
    if (dash)
        snprintf(version, sizeof version, "%.*s", (int)strcspn(dash + 6, "/"), dash + 6);
    struct ct_arg args[] = {
        {ct_strings_intern_cstr("home"), CT_ARG_STRING, ct_strings_intern_cstr(home)},
        {ct_strings_intern_cstr("root"), CT_ARG_STRING, ct_strings_intern_cstr(root)},
        {ct_strings_intern_cstr("version"), CT_ARG_STRING, ct_strings_intern_cstr(version)},
    };
    ct_write_instant(&process_seq, counter_uuid(TRACK_LIBRARIES), process_start_ns,
                     ct_strings_intern_cstr("cuda.toolkit"), args, 3);
}

void ct_builder_start(const struct ct_shm_header *shm)
{
    intern_names();
    pid = shm->pid;
    process_uuid = (uint64_t)(uint32_t)pid << 32;
    process_start_ns = shm->start_boot_ns;
    thread_count = shm->ring_count;
    threads = calloc(thread_count, sizeof *threads);
    pending_strings = calloc(thread_count, sizeof *pending_strings);
    if (!threads || !pending_strings)
        abort();
    ct_sequence_init(&process_seq, process_uuid);
    write_process_tracks();
    toolkit_instant();
}

void ct_builder_thread(uint32_t index, int32_t tid, const char *name)
{
    struct thread_view *t = &threads[index];
    ct_sequence_init(&t->seq, thread_uuid(tid));
    t->tid = tid;
    t->live = 1;
    ct_write_thread_track(&t->seq, thread_uuid(tid), pid, tid, name);
}

void ct_builder_thread_end(uint32_t index)
{
    struct thread_view *t = &threads[index];
    if (t->live)
        ct_sequence_release(&t->seq);
    t->live = 0;
    pending_strings[index].len = 0;
}

static uint32_t kernel_name_get(uint64_t key)
{
    const uint64_t *name = ct_u64_map_find(&kernel_names, key);
    if (name)
        return (uint32_t)*name;
    /* Its name record was lost: name it by address, once. */
    char unnamed[40];
    snprintf(unnamed, sizeof unnamed, "kernel@0x%llx", (unsigned long long)key);
    uint32_t id = ct_strings_intern_cstr(unnamed);
    ct_u64_map_put(&kernel_names, key, id);
    return id;
}

static void device_name_instant(uint64_t key, uint32_t name)
{
    char capability[16];
    snprintf(capability, sizeof capability, "%llu.%llu", (unsigned long long)(key >> 32) / 10,
             (unsigned long long)(key >> 32) % 10);
    struct ct_arg args[] = {
        {ct_strings_intern_cstr("device"), CT_ARG_UINT, key & 0xffffffffu},
        {ct_strings_intern_cstr("name"), CT_ARG_STRING, name},
        {ct_strings_intern_cstr("compute_capability"), CT_ARG_STRING,
         ct_strings_intern_cstr(capability)},
    };
    ct_write_instant(&process_seq, process_uuid, process_start_ns,
                     ct_strings_intern_cstr("cuda.device"), args, key >> 32 ? 3 : 2);
}

/* A launch failed with cudaErrorNoKernelImageForDevice: say, once per kernel,
 * which file holds it and which GPU code that file carries. */
static void no_kernel_image(uint64_t key, uint64_t ts)
{
    if (ct_u64_map_find(&no_image_reported, key))
        return;
    ct_u64_map_put(&no_image_reported, key, 1);
    const uint64_t *library = ct_u64_map_find(&kernel_libraries, key);
    char archs[1024] = "";
    if (library)
        ct_library_fatbin_archs(ct_strings_get((uint32_t)*library), archs, sizeof archs);
    struct ct_arg args[] = {
        {ct_strings_intern_cstr("kernel"), CT_ARG_STRING, kernel_name_get(key)},
        {ct_strings_intern_cstr("library"), CT_ARG_STRING,
         library ? (uint32_t)*library : ct_strings_intern_cstr("")},
        {ct_strings_intern_cstr("archs"), CT_ARG_STRING, ct_strings_intern_cstr(archs)},
    };
    ct_write_instant(&process_seq, counter_uuid(TRACK_LIBRARIES), ts,
                     ct_strings_intern_cstr("cuda.no_kernel_image"), args, 3);
}

/* The version a loaded runtime or cuDNN reported through its own API. */
static void library_version_instant(uint64_t version, uint32_t path)
{
    char real[4096];
    const char *name = ct_strings_get(path);
    struct ct_arg args[] = {
        {ct_strings_intern_cstr("path"), CT_ARG_STRING, path},
        {ct_strings_intern_cstr("realpath"), CT_ARG_STRING,
         ct_strings_intern_cstr(realpath(name, real) ? real : name)},
        {ct_strings_intern_cstr("api_version"), CT_ARG_UINT, version},
    };
    ct_write_instant(&process_seq, counter_uuid(TRACK_LIBRARIES), process_start_ns,
                     ct_strings_intern_cstr("cuda.library.version"), args, 3);
}

static void string_chunk(uint32_t index, const struct ct_record *r)
{
    struct pending_string *s = &pending_strings[index];
    uint32_t offset = (uint32_t)r->end, total = (uint32_t)(r->end >> 32);
    uint32_t chunk = (uint32_t)r->result;
    if (offset == 0) {
        s->key = r->begin;
        s->kind = r->func;
        s->len = 0;
    }
    if (s->key != r->begin || s->len != offset || total > CT_STRING_MAX ||
        chunk > CT_STRING_CHUNK || offset + chunk > total)
        return; /* a chunk went missing (dropped): this string is lost */
    memcpy(s->text + offset, r->text, chunk);
    s->len = offset + chunk;
    if (s->len != total)
        return;
    uint32_t id = ct_strings_intern(s->text, s->len);
    if (s->kind == CT_STR_KERNEL_NAME)
        ct_u64_map_put(&kernel_names, s->key, id);
    else if (s->kind == CT_STR_DEVICE_NAME)
        device_name_instant(s->key, id);
    else if (s->kind == CT_STR_LIBRARY_VERSION)
        library_version_instant(s->key, id);
    else if (s->kind == CT_STR_KERNEL_LIBRARY)
        ct_u64_map_put(&kernel_libraries, s->key, id);
}

static void process_info(const struct ct_record *r)
{
    struct ct_arg args[] = {
        {ct_strings_intern_cstr("runtime_version"), CT_ARG_INT, r->arg[0]},
        {ct_strings_intern_cstr("driver_version"), CT_ARG_INT, r->arg[1]},
        {ct_strings_intern_cstr("device_count"), CT_ARG_INT, r->arg[2]},
    };
    ct_write_instant(&process_seq, process_uuid, process_start_ns,
                     ct_strings_intern_cstr("cuda.versions"), args, 3);
}

/* Formats once per distinct value; the map keeps the string id. */
static uint32_t cached_format(struct ct_u64_map *cache, uint64_t key, uint32_t (*format)(uint64_t))
{
    uint64_t *id = ct_u64_map_find(cache, key + 1);
    if (id)
        return (uint32_t)*id;
    uint32_t made = format(key);
    ct_u64_map_put(cache, key + 1, made);
    return made;
}

static uint32_t format_copy_kind(uint64_t kind)
{
    static const char *const names[] = {"HostToHost", "HostToDevice", "DeviceToHost",
                                        "DeviceToDevice", "Default"};
    if (kind < sizeof names / sizeof names[0])
        return ct_strings_intern_cstr(names[kind]);
    return ct_strings_intern_cstr(kind == CT_COPY_KIND_PEER ? "Peer" : "Unknown");
}

static uint32_t copy_kind_name(uint64_t kind)
{
    static struct ct_u64_map cache;
    return cached_format(&cache, kind, format_copy_kind);
}

static uint32_t format_dim3(uint64_t packed)
{
    char text[48];
    snprintf(text, sizeof text, "%ux%ux%u", CT_DIM3_X(packed), CT_DIM3_Y(packed),
             CT_DIM3_Z(packed));
    return ct_strings_intern_cstr(text);
}

static uint32_t dim3_string(uint64_t packed)
{
    static struct ct_u64_map cache;
    return cached_format(&cache, packed, format_dim3);
}

static uint32_t format_error(uint64_t code)
{
    int32_t result = (int32_t)code;
    const char *name = ct_cuda_error_name(result);
    if (name)
        return ct_strings_intern_cstr(name);
    char text[32];
    snprintf(text, sizeof text, "cudaError %d", (int)result);
    return ct_strings_intern_cstr(text);
}

static uint32_t error_name(int32_t result)
{
    static struct ct_u64_map cache;
    return cached_format(&cache, (uint32_t)result, format_error);
}

static void count_launch(uint64_t ts)
{
    uint64_t bucket = ts / LAUNCH_BUCKET_NS;
    if (!launch_seen) {
        first_open_bucket = bucket;
        launch_seen = 1;
    }
    if (bucket < first_open_bucket)
        bucket = first_open_bucket; /* arrived after its bucket was written */
    if (bucket >= first_open_bucket + LAUNCH_BUCKETS)
        bucket = first_open_bucket + LAUNCH_BUCKETS - 1;
    launch_counts[bucket % LAUNCH_BUCKETS]++;
    if (bucket > last_bucket)
        last_bucket = bucket;
}

/* Writes the launch rate for every bucket that ended before `now_ns`. */
static void write_launch_rate(uint64_t now_ns)
{
    if (!launch_seen)
        return;
    uint64_t closed = now_ns / LAUNCH_BUCKET_NS;
    while (first_open_bucket < closed) {
        uint64_t *count = &launch_counts[first_open_bucket % LAUNCH_BUCKETS];
        ct_write_counter(&process_seq, counter_uuid(TRACK_LAUNCH_RATE),
                         first_open_bucket * LAUNCH_BUCKET_NS,
                         (int64_t)(*count * (1000000000ull / LAUNCH_BUCKET_NS)));
        *count = 0;
        first_open_bucket++;
    }
}

/* Forgets a live allocation; returns its size (0 if it was not one of ours). */
static uint64_t release(struct ct_u64_map *allocs, uint64_t ptr)
{
    uint64_t size = 0;
    ct_u64_map_remove(allocs, ptr, &size);
    return size;
}

static void track_memory(uint8_t family, const struct ct_record *r, uint64_t ts)
{
    if (r->result != 0)
        return;
    switch (family) {
    case CT_FAMILY_ALLOC_DEVICE:
        ct_u64_map_put(&device_allocs, r->arg[0], r->arg[1]);
        device_live += r->arg[1];
        break;
    case CT_FAMILY_FREE_DEVICE:
        device_live -= release(&device_allocs, r->arg[0]);
        break;
    case CT_FAMILY_ALLOC_HOST:
        ct_u64_map_put(&pinned_allocs, r->arg[0], r->arg[1]);
        pinned_live += r->arg[1];
        ct_write_counter(&process_seq, counter_uuid(TRACK_PINNED_BYTES), ts, (int64_t)pinned_live);
        return;
    case CT_FAMILY_FREE_HOST:
        pinned_live -= release(&pinned_allocs, r->arg[0]);
        ct_write_counter(&process_seq, counter_uuid(TRACK_PINNED_BYTES), ts, (int64_t)pinned_live);
        return;
    default:
        return;
    }
    ct_write_counter(&process_seq, counter_uuid(TRACK_DEVICE_BYTES), ts, (int64_t)device_live);
}

/* Where each family keeps its stream handle in arg[], plus one (0: none). */
static const uint8_t stream_arg[CT_FAMILY_COUNT] = {
    [CT_FAMILY_ALLOC_DEVICE] = 3, [CT_FAMILY_FREE_DEVICE] = 3, [CT_FAMILY_COPY] = 3,
    [CT_FAMILY_SET] = 3,          [CT_FAMILY_LAUNCH] = 2,      [CT_FAMILY_GRAPH] = 2,
    [CT_FAMILY_SYNC_STREAM] = 1,  [CT_FAMILY_WAIT_EVENT] = 1,  [CT_FAMILY_QUERY_STREAM] = 1,
};

#define ARG(n, t, v) (args[nargs++] = (struct ct_arg){arg_names.n, (t), (uint64_t)(v)})

/* The annotations of one call, by the layout its family gives arg[]. */
static int call_args(const struct function_info *f, const struct ct_record *r, struct ct_arg *args)
{
    int nargs = 0;
    const uint64_t *a = r->arg;
    switch (f->family) {
    case CT_FAMILY_ALLOC_DEVICE:
    case CT_FAMILY_ALLOC_HOST:
        ARG(ptr, CT_ARG_POINTER, a[0]);
        ARG(bytes, CT_ARG_UINT, a[1]);
        if (f->family == CT_FAMILY_ALLOC_HOST && a[2])
            ARG(flags, CT_ARG_UINT, a[2]);
        break;
    case CT_FAMILY_FREE_DEVICE:
    case CT_FAMILY_FREE_HOST:
        ARG(ptr, CT_ARG_POINTER, a[0]);
        break;
    case CT_FAMILY_COPY:
        ARG(bytes, CT_ARG_UINT, a[1]);
        ARG(kind, CT_ARG_STRING, copy_kind_name(a[3]));
        ARG(ptr, CT_ARG_POINTER, a[0]);
        ARG(src, CT_ARG_POINTER, a[4]);
        break;
    case CT_FAMILY_SET:
        ARG(bytes, CT_ARG_UINT, a[1]);
        ARG(ptr, CT_ARG_POINTER, a[0]);
        ARG(value, CT_ARG_UINT, a[3]);
        break;
    case CT_FAMILY_LAUNCH:
        ARG(kernel, CT_ARG_STRING, kernel_name_get(a[0]));
        ARG(grid, CT_ARG_STRING, dim3_string(a[2]));
        ARG(block, CT_ARG_STRING, dim3_string(a[3]));
        if (a[4])
            ARG(shared_mem, CT_ARG_UINT, a[4]);
        break;
    case CT_FAMILY_GRAPH:
        ARG(graph, CT_ARG_POINTER, a[0]);
        break;
    case CT_FAMILY_SYNC_EVENT:
    case CT_FAMILY_QUERY_EVENT:
        ARG(event, CT_ARG_POINTER, a[0]);
        break;
    case CT_FAMILY_WAIT_EVENT:
        ARG(event, CT_ARG_POINTER, a[1]);
        if (a[2])
            ARG(flags, CT_ARG_UINT, a[2]);
        break;
    default:
        break;
    }
    if (f->takes_stream && stream_arg[f->family])
        ARG(stream, CT_ARG_POINTER, a[stream_arg[f->family] - 1]);
    ARG(result, CT_ARG_INT, r->result);
    if (r->result != 0)
        ARG(error, CT_ARG_STRING, error_name(r->result));
    return nargs;
}

static void call(uint32_t index, const struct ct_record *r)
{
    struct thread_view *t = &threads[index];
    if (r->func >= CT_FN_COUNT || !t->live)
        return;
    const struct function_info *f = &functions[r->func];
    uint64_t begin = ct_clock_map_ns(r->begin), end = ct_clock_map_ns(r->end);
    if (end < begin)
        end = begin;
    struct ct_arg args[10];
    int nargs = call_args(f, r, args);
    ct_write_slice(&t->seq, 0, begin, end, f->name, args, nargs);
    track_memory(f->family, r, end);
    if (f->family == CT_FAMILY_LAUNCH)
        count_launch(begin);
    if (f->family == CT_FAMILY_LAUNCH && r->result == CUDA_ERROR_NO_KERNEL_IMAGE)
        no_kernel_image(r->arg[0], end);
    calls++;
}

void ct_builder_inflight(uint32_t index, uint32_t func, uint64_t begin_ticks, uint64_t end_ns)
{
    struct thread_view *t = &threads[index];
    if (func >= CT_FN_COUNT || !t->live)
        return;
    uint64_t begin = ct_clock_map_ns(begin_ticks);
    struct ct_arg args[] = {{ct_strings_intern_cstr("in_flight"), CT_ARG_UINT, 1}};
    ct_write_slice(&t->seq, 0, begin, end_ns > begin ? end_ns : begin, functions[func].name, args,
                   1);
}

void ct_builder_record(uint32_t index, const struct ct_record *record)
{
    switch (record->type) {
    case CT_REC_CALL:
        call(index, record);
        break;
    case CT_REC_STRING:
        string_chunk(index, record);
        break;
    case CT_REC_PROCESS_INFO:
        process_info(record);
        break;
    default:
        break;
    }
}

void ct_builder_tick(uint64_t dropped)
{
    /* A record reaches the collector within a drain cycle or two of its end;
     * a second of slack keeps late ones in their own bucket. */
    uint64_t now = ct_clock_map_now_ns();
    if (now > 1000000000ull)
        write_launch_rate(now - 1000000000ull);
    if (dropped != last_dropped) {
        ct_write_counter(&process_seq, counter_uuid(TRACK_DROPPED), now, (int64_t)dropped);
        last_dropped = dropped;
    }
}

void ct_builder_finish(uint64_t end_ns, uint64_t dropped, int exited_normally)
{
    write_launch_rate((last_bucket + 1) * LAUNCH_BUCKET_NS);
    inventory_instant(end_ns);
    if (dropped != last_dropped)
        ct_write_counter(&process_seq, counter_uuid(TRACK_DROPPED), end_ns, (int64_t)dropped);
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    uint64_t cpu_ns =
        ((uint64_t)usage.ru_utime.tv_sec + (uint64_t)usage.ru_stime.tv_sec) * 1000000000ull +
        ((uint64_t)usage.ru_utime.tv_usec + (uint64_t)usage.ru_stime.tv_usec) * 1000u;
    struct ct_arg args[] = {
        {ct_strings_intern_cstr("calls"), CT_ARG_UINT, calls},
        {ct_strings_intern_cstr("collector_cpu_ns"), CT_ARG_UINT, cpu_ns},
        {ct_strings_intern_cstr("collector_max_rss_kb"), CT_ARG_UINT, (uint64_t)usage.ru_maxrss},
        {ct_strings_intern_cstr("dropped"), CT_ARG_UINT, dropped},
        {ct_strings_intern_cstr("process_start_ns"), CT_ARG_UINT, process_start_ns},
        {ct_strings_intern_cstr("exit"), CT_ARG_STRING,
         ct_strings_intern_cstr(exited_normally ? "normal" : "lost")},
    };
    ct_write_instant(&process_seq, process_uuid, end_ns, ct_strings_intern_cstr("cudatrace.end"),
                     args, sizeof args / sizeof args[0]);
}

uint64_t ct_builder_calls(void)
{
    return calls;
}
