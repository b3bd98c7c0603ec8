/*
 * The annotations of a call slice, by the layout its family gives the
 * record's arguments (include/cudatrace/functions.h), `seen_by: cupti` on
 * a call only CUPTI saw, and the flow to the GPU work it caused. Values that repeat
 * (copy kinds, grid and block shapes, error names) are formatted once and
 * kept by value, which keeps a launch loop cheap to encode.
 */
#include "collector/tracks/call_slices.h"

#include <stdio.h>

#include "cudatrace/trace_names.h"
#include "collector/perfetto/clock_map.h"
#include "cuda_error_names.h"
#include "cudatrace/functions.h"
#include "collector/tracks/kernel_table.h"
#include "common/string_table.h"
#include "common/u64_map.h"

struct function_info {
    uint32_t name;
    uint8_t family;
    uint8_t takes_stream;
};

static struct function_info functions[CT_FN_COUNT];
static uint32_t in_flight_name;

static struct {
    uint32_t ptr, bytes, stream, kind, src, value, kernel, grid, block, shared_mem, graph, event,
        flags, result, error, pool, device, count, version, attribute, free, total, handle,
        end_event, elapsed_ns, site, stack, seen_by, offset;
} arg_names;
static uint32_t cupti_name;

#define FUNCTION_INFO(fn, fam, stream)                                                             \
    functions[CT_FN_##fn] =                                                                        \
        (struct function_info){ct_strings_intern_cstr(ct_function_name(CT_FN_##fn)), fam, stream};

void ct_call_slices_start(void)
{
    CT_FOR_EACH_FUNCTION(FUNCTION_INFO)
#define ARG_NAME(field) arg_names.field = ct_strings_intern_cstr(ct_key_##field)
    ARG_NAME(ptr);
    ARG_NAME(bytes);
    ARG_NAME(offset);
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
    ARG_NAME(pool);
    ARG_NAME(device);
    ARG_NAME(count);
    ARG_NAME(version);
    ARG_NAME(attribute);
    ARG_NAME(site);
    ARG_NAME(stack);
    ARG_NAME(free);
    ARG_NAME(total);
    ARG_NAME(handle);
    ARG_NAME(end_event);
    ARG_NAME(elapsed_ns);
    ARG_NAME(seen_by);
#undef ARG_NAME
    in_flight_name = ct_strings_intern_cstr(ct_key_in_flight);
    cupti_name = ct_strings_intern_cstr(ct_value_seen_by_cupti);
}

int ct_call_family(const struct ct_record *r)
{
    return r->func < CT_FN_COUNT ? functions[r->func].family : -1;
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
    static const char *const names[] = {ct_value_copy_host_to_host, ct_value_copy_host_to_device,
                                        ct_value_copy_device_to_host,
                                        ct_value_copy_device_to_device, ct_value_copy_default};
    if (kind < sizeof names / sizeof names[0])
        return ct_strings_intern_cstr(names[kind]);
    return ct_strings_intern_cstr(kind == CT_COPY_KIND_PEER ? ct_value_copy_peer
                                                            : ct_value_copy_unknown);
}

static uint32_t copy_kind_name(uint64_t kind)
{
    static struct ct_u64_map cache;
    return cached_format(&cache, kind, format_copy_kind);
}

static uint32_t format_dim3(uint64_t packed)
{
    char text[48];
    struct ct_dim3 d = ct_unpack_dim3(packed);
    snprintf(text, sizeof text, "%ux%ux%u", d.x, d.y, d.z);
    return ct_strings_intern_cstr(text);
}

uint32_t ct_dim3_string(uint64_t packed)
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

/* Where each family keeps its stream handle in arg[], plus one (0: none). */
static const uint8_t stream_arg[CT_FAMILY_COUNT] = {
    [CT_FAMILY_ALLOC_DEVICE] = 3, [CT_FAMILY_FREE_DEVICE] = 3, [CT_FAMILY_COPY] = 3,
    [CT_FAMILY_SET] = 3,          [CT_FAMILY_LAUNCH] = 2,      [CT_FAMILY_GRAPH] = 2,
    [CT_FAMILY_SYNC_STREAM] = 1,  [CT_FAMILY_WAIT_EVENT] = 1,  [CT_FAMILY_QUERY_STREAM] = 1,
    [CT_FAMILY_EVENT_RECORD] = 2, [CT_FAMILY_GRAPH_BUILD] = 2,
};

#define ADD_ARG(name, t, v) (args[nargs++] = (struct ct_arg){(name), (t), (uint64_t)(v)})
#define ARG(n, t, v) ADD_ARG(arg_names.n, t, v)

/* The annotation a CT_FAMILY_GET_INT call's int goes under. */
static uint32_t wrote_name(uint64_t what)
{
    const uint32_t names[CT_WROTE_KINDS] = {
        [CT_WROTE_COUNT] = arg_names.count,
        [CT_WROTE_DEVICE] = arg_names.device,
        [CT_WROTE_VERSION] = arg_names.version,
        [CT_WROTE_FLAGS] = arg_names.flags,
    };
    return what < CT_WROTE_KINDS ? names[what] : arg_names.value;
}

/* The settings DEVICE and HANDLE calls share: flags, and an attribute with
 * the value it was set to or read as (which only a successful call has). */
static int setting_args(struct ct_arg *args, int nargs, const struct ct_record *r, uint64_t flags,
                        uint64_t attribute, enum ct_arg_type value_type, uint64_t value)
{
    if (flags)
        ARG(flags, CT_ARG_UINT, flags);
    if (attribute)
        ARG(attribute, CT_ARG_UINT, attribute);
    if (attribute && r->result == 0)
        ARG(value, value_type, value);
    return nargs;
}

/* Which devices there are, which one is used and how it is set up. */
static int device_args(const struct function_info *f, const struct ct_record *r,
                       struct ct_arg *args)
{
    int nargs = 0;
    const uint64_t *a = r->arg;
    switch (f->family) {
    case CT_FAMILY_GET_INT:
        if (r->result == 0)
            ADD_ARG(wrote_name(a[1]), CT_ARG_INT, a[0]);
        break;
    case CT_FAMILY_MEM_INFO:
        if (r->result == 0) {
            ARG(free, CT_ARG_UINT, a[0]);
            ARG(total, CT_ARG_UINT, a[1]);
        }
        break;
    default: /* CT_FAMILY_DEVICE */
        if (a[0] != CT_NO_DEVICE)
            ARG(device, CT_ARG_INT, a[0]);
        nargs = setting_args(args, nargs, r, a[3], a[1], CT_ARG_INT, a[2]);
        if (a[4])
            ARG(pool, CT_ARG_POINTER, a[4]);
        break;
    }
    return nargs;
}

/* The objects the program creates and destroys, records or registers. */
static int object_args(const struct function_info *f, const struct ct_record *r,
                       struct ct_arg *args)
{
    int nargs = 0;
    const uint64_t *a = r->arg;
    switch (f->family) {
    case CT_FAMILY_HANDLE:
        ARG(handle, CT_ARG_POINTER, a[0]);
        nargs = setting_args(args, nargs, r, a[1], a[2], CT_ARG_UINT, a[3]);
        if (a[4])
            ARG(bytes, CT_ARG_UINT, a[4]);
        break;
    case CT_FAMILY_EVENT_RECORD:
        ARG(event, CT_ARG_POINTER, a[0]);
        if (a[2])
            ARG(flags, CT_ARG_UINT, a[2]);
        break;
    case CT_FAMILY_ELAPSED:
        ARG(event, CT_ARG_POINTER, a[0]);
        ARG(end_event, CT_ARG_POINTER, a[1]);
        if (r->result == 0)
            ARG(elapsed_ns, CT_ARG_INT, a[2]);
        break;
    default: /* CT_FAMILY_HOST_REGISTER */
        ARG(ptr, CT_ARG_POINTER, a[0]);
        if (a[1])
            ARG(bytes, CT_ARG_UINT, a[1]);
        if (a[2])
            ARG(flags, CT_ARG_UINT, a[2]);
        break;
    }
    return nargs;
}

/* The virtual-memory API's: each call names some of an address range, a
 * handle, where in the handle a mapping starts or which device a handle's
 * memory is on, and how many access descriptors were set. */
static int vmm_args(const struct ct_record *r, struct ct_arg *args)
{
    int nargs = 0;
    const uint64_t *a = r->arg;
    if (a[0])
        ARG(ptr, CT_ARG_POINTER, a[0]);
    if (a[1])
        ARG(bytes, CT_ARG_UINT, a[1]);
    if (a[2])
        ARG(handle, CT_ARG_POINTER, a[2]);
    if (r->func == CT_FN_cuMemMap)
        ARG(offset, CT_ARG_UINT, a[3]);
    if (r->func == CT_FN_cuMemCreate)
        ARG(device, CT_ARG_UINT, a[3]);
    if (a[4])
        ARG(count, CT_ARG_UINT, a[4]);
    return nargs;
}

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
        if (f->family == CT_FAMILY_ALLOC_DEVICE && a[3])
            ARG(pool, CT_ARG_POINTER, a[3]);
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
        ARG(kernel, CT_ARG_STRING, ct_kernel_table_name(a[0]));
        ARG(grid, CT_ARG_STRING, ct_dim3_string(a[2]));
        ARG(block, CT_ARG_STRING, ct_dim3_string(a[3]));
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
    case CT_FAMILY_GET_INT:
    case CT_FAMILY_DEVICE:
    case CT_FAMILY_MEM_INFO:
        nargs = device_args(f, r, args);
        break;
    case CT_FAMILY_HANDLE:
    case CT_FAMILY_EVENT_RECORD:
    case CT_FAMILY_ELAPSED:
    case CT_FAMILY_HOST_REGISTER:
        nargs = object_args(f, r, args);
        break;
    case CT_FAMILY_VMM:
        nargs = vmm_args(r, args);
        break;
    case CT_FAMILY_GRAPH_BUILD: /* what was captured into, made or acted on */
        if (a[0])
            ARG(graph, CT_ARG_POINTER, a[0]);
        if (a[2])
            ARG(handle, CT_ARG_POINTER, a[2]);
        if (a[3])
            ARG(flags, CT_ARG_UINT, a[3]);
        if (a[4])
            ARG(bytes, CT_ARG_UINT, a[4]);
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

void ct_call_slice(struct ct_sequence *seq, const struct ct_record *r, uint64_t begin, uint64_t end,
                   struct ct_call_site site, const struct ct_flow *flow,
                   const struct ct_call_extra *extra)
{
    const struct function_info *f = &functions[r->func];
    struct ct_arg args[13 + CT_CALL_EXTRA_ARGS];
    int nargs = call_args(f, r, args);
    for (int i = 0; extra && i < extra->count; i++)
        args[nargs++] = extra->args[i];
    if (site.site) {
        args[nargs++] = (struct ct_arg){arg_names.site, CT_ARG_STRING, site.site};
        args[nargs++] = (struct ct_arg){arg_names.stack, CT_ARG_STRING, site.stack};
    }
    if (r->type == CT_REC_CUPTI_CALL)
        args[nargs++] = (struct ct_arg){arg_names.seen_by, CT_ARG_STRING, cupti_name};
    ct_write_flow_slice(seq, 0, begin, end, f->name, args, nargs, flow);
}

void ct_call_totals(struct ct_sequence *seq, const struct ct_call_stats *stats, uint64_t ts)
{
    static uint32_t totals_name, function, calls, errors, total_ns;
    if (!totals_name) {
        totals_name = ct_strings_intern_cstr(ct_event_calls);
        function = ct_strings_intern_cstr(ct_key_function);
        calls = ct_strings_intern_cstr(ct_key_calls);
        errors = ct_strings_intern_cstr(ct_key_errors);
        total_ns = ct_strings_intern_cstr(ct_key_total_ns);
    }
    for (uint32_t fn = 0; fn < CT_FN_COUNT; fn++) {
        if (!stats[fn].calls)
            continue;
        struct ct_arg args[] = {
            {function, CT_ARG_STRING, functions[fn].name},
            {calls, CT_ARG_UINT, stats[fn].calls},
            {errors, CT_ARG_UINT, stats[fn].errors},
            {total_ns, CT_ARG_UINT, ct_clock_map_duration_ns(stats[fn].ticks)},
        };
        ct_write_instant(seq, 0, ts, totals_name, args, 4);
    }
}

void ct_call_inflight_slice(struct ct_sequence *seq, uint32_t func, uint64_t begin, uint64_t end,
                            struct ct_call_site site)
{
    struct ct_arg args[] = {{in_flight_name, CT_ARG_UINT, 1},
                            {arg_names.site, CT_ARG_STRING, site.site},
                            {arg_names.stack, CT_ARG_STRING, site.stack}};
    ct_write_slice(seq, 0, begin, end, functions[func].name, args, site.site ? 3 : 1);
}
