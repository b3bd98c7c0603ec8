/*
 * Owns the encoding of GPU work as GpuRenderStageEvent packets, the typed
 * records Perfetto's trace processor files in its GPU tables
 * (CUDATRACE_GPU_RECORDS=typed; docs/gpu.md). Each event names interned
 * entries: its hardware queue and its stage (both
 * InternedGpuRenderStageSpecification, one table), its graphics context
 * (the device, API CUDA, the process's pid), its kernel
 * (InternedComputeKernel, mangled and demangled) and its name (EventName);
 * the figures the default GPU track's slice carries as annotations go into
 * ComputeKernelLaunch.args, named by InternedComputeArgName. Every iid is a
 * string id (a context's: its device + 1), defined on the sequence in the
 * packet that first uses it and again after the sequence restarts under a
 * new id (a new chunk of a bounded trace).
 */
#include "collector/perfetto/render_stages.h"

#include <string.h>

#include "common/string_table.h"
#include "common/u64_map.h"
#include "cudatrace/record.h"
#include "perfetto_trace.pb-c.h"

#define MAX_STAGE_ARGS 16

enum table { CONTEXTS = 1, SPECIFICATIONS, KERNELS, ARG_NAMES, EVENT_NAMES, STRING_VALUES };

static struct ct_u64_map defined; /* table << 56 | iid -> the sequence id it was defined on */

/* Whether `iid` of `table` is yet to be defined on `seq`; it counts as
 * defined from here on. */
static int first_use(const struct ct_sequence *seq, enum table table, uint64_t iid)
{
    uint64_t key = (uint64_t)table << 56 | iid;
    uint64_t *on = ct_u64_map_find(&defined, key);
    if (on && *on == seq->id && seq->started)
        return 0;
    ct_u64_map_put(&defined, key, seq->id);
    return 1;
}

/* The interned entries one event adds: at most one of each table but the
 * argument names and string values. */
struct additions {
    CtPb__InternedData data;
    CtPb__InternedGraphicsContext context, *context_ptr;
    CtPb__InternedGpuRenderStageSpecification specs[2], *spec_ptrs[2];
    CtPb__InternedComputeKernel kernel, *kernel_ptr;
    CtPb__EventName name, *name_ptr;
    CtPb__InternedComputeArgName arg_names[MAX_STAGE_ARGS], *arg_name_ptrs[MAX_STAGE_ARGS];
    CtPb__InternedString values[MAX_STAGE_ARGS], *value_ptrs[MAX_STAGE_ARGS];
};

static void add_context(const struct ct_sequence *seq, struct additions *a,
                        const struct ct_render_stage *s)
{
    if (!first_use(seq, CONTEXTS, s->device + 1ull))
        return;
    a->context = (CtPb__InternedGraphicsContext)CT_PB__INTERNED_GRAPHICS_CONTEXT__INIT;
    a->context.has_iid = a->context.has_pid = a->context.has_api = 1;
    a->context.iid = s->device + 1ull;
    a->context.pid = s->pid;
    a->context.api = CT_PB__INTERNED_GRAPHICS_CONTEXT__API__API_CUDA;
    a->context_ptr = &a->context;
    a->data.graphics_contexts = &a->context_ptr;
    a->data.n_graphics_contexts = 1;
}

static void add_specification(const struct ct_sequence *seq, struct additions *a, uint32_t id,
                              CtPb__InternedGpuRenderStageSpecification__RenderStageCategory cat)
{
    if (!first_use(seq, SPECIFICATIONS, id))
        return;
    CtPb__InternedGpuRenderStageSpecification *spec = &a->specs[a->data.n_gpu_specifications];
    *spec = (CtPb__InternedGpuRenderStageSpecification)
        CT_PB__INTERNED_GPU_RENDER_STAGE_SPECIFICATION__INIT;
    spec->has_iid = spec->has_category = 1;
    spec->iid = id;
    spec->name = (char *)ct_strings_get(id);
    spec->category = cat;
    a->spec_ptrs[a->data.n_gpu_specifications++] = spec;
    a->data.gpu_specifications = a->spec_ptrs;
}

static void add_kernel(const struct ct_sequence *seq, struct additions *a,
                       const struct ct_render_stage *s)
{
    if (!s->kernel || !first_use(seq, KERNELS, s->kernel))
        return;
    a->kernel = (CtPb__InternedComputeKernel)CT_PB__INTERNED_COMPUTE_KERNEL__INIT;
    a->kernel.has_iid = 1;
    a->kernel.iid = s->kernel;
    a->kernel.name = (char *)ct_strings_get(s->kernel);
    a->kernel.demangled_name = (char *)ct_strings_get(s->demangled ? s->demangled : s->kernel);
    a->kernel_ptr = &a->kernel;
    a->data.compute_kernels = &a->kernel_ptr;
    a->data.n_compute_kernels = 1;
}

static void add_name(const struct ct_sequence *seq, struct additions *a, uint32_t id)
{
    if (!first_use(seq, EVENT_NAMES, id))
        return;
    a->name = (CtPb__EventName)CT_PB__EVENT_NAME__INIT;
    a->name.has_iid = 1;
    a->name.iid = id;
    a->name.name = (char *)ct_strings_get(id);
    a->name_ptr = &a->name;
    a->data.event_names = &a->name_ptr;
    a->data.n_event_names = 1;
}

static void add_arg_name(const struct ct_sequence *seq, struct additions *a, uint32_t id)
{
    if (!first_use(seq, ARG_NAMES, id))
        return;
    CtPb__InternedComputeArgName *n = &a->arg_names[a->data.n_compute_arg_names];
    *n = (CtPb__InternedComputeArgName)CT_PB__INTERNED_COMPUTE_ARG_NAME__INIT;
    n->has_iid = 1;
    n->iid = id;
    n->name = (char *)ct_strings_get(id);
    a->arg_name_ptrs[a->data.n_compute_arg_names++] = n;
    a->data.compute_arg_names = a->arg_name_ptrs;
}

static void add_string_value(const struct ct_sequence *seq, struct additions *a, uint32_t id)
{
    if (!first_use(seq, STRING_VALUES, id))
        return;
    CtPb__InternedString *v = &a->values[a->data.n_debug_annotation_string_values];
    *v = (CtPb__InternedString)CT_PB__INTERNED_STRING__INIT;
    v->has_iid = v->has_str = 1;
    v->iid = id;
    v->str.data = (uint8_t *)ct_strings_get(id);
    v->str.len = ct_strings_len(id);
    a->value_ptrs[a->data.n_debug_annotation_string_values++] = v;
    a->data.debug_annotation_string_values = a->value_ptrs;
}

static void fill_dim3(CtPb__GpuRenderStageEvent__Dim3 *d, uint64_t packed)
{
    struct ct_dim3 v = ct_unpack_dim3(packed);
    *d = (CtPb__GpuRenderStageEvent__Dim3)CT_PB__GPU_RENDER_STAGE_EVENT__DIM3__INIT;
    d->has_x = d->has_y = d->has_z = 1;
    d->x = v.x;
    d->y = v.y;
    d->z = v.z;
}

static void fill_arg(const struct ct_sequence *seq, struct additions *a,
                     CtPb__GpuRenderStageEvent__ExtraComputeArg *out, const struct ct_arg *arg)
{
    *out = (CtPb__GpuRenderStageEvent__ExtraComputeArg)
        CT_PB__GPU_RENDER_STAGE_EVENT__EXTRA_COMPUTE_ARG__INIT;
    add_arg_name(seq, a, arg->name);
    out->has_name_iid = 1;
    out->name_iid = arg->name;
    switch (arg->type) {
    case CT_ARG_INT:
        out->has_int_value = 1;
        out->int_value = (int64_t)arg->value;
        break;
    case CT_ARG_STRING:
        add_string_value(seq, a, (uint32_t)arg->value);
        out->has_string_value_iid = 1;
        out->string_value_iid = arg->value;
        break;
    default:
        out->has_uint_value = 1;
        out->uint_value = arg->value;
        break;
    }
}

static int has_additions(const struct additions *a)
{
    const CtPb__InternedData *d = &a->data;
    return d->n_graphics_contexts || d->n_gpu_specifications || d->n_compute_kernels ||
           d->n_event_names || d->n_compute_arg_names || d->n_debug_annotation_string_values;
}

void ct_render_stage_write(struct ct_sequence *seq, const struct ct_render_stage *s)
{
    static struct additions a;
    memset(&a, 0, sizeof a);
    a.data = (CtPb__InternedData)CT_PB__INTERNED_DATA__INIT;
    add_context(seq, &a, s);
    add_specification(
        seq, &a, s->queue,
        CT_PB__INTERNED_GPU_RENDER_STAGE_SPECIFICATION__RENDER_STAGE_CATEGORY__CATEGORY_OTHER);
    add_specification(
        seq, &a, s->stage,
        CT_PB__INTERNED_GPU_RENDER_STAGE_SPECIFICATION__RENDER_STAGE_CATEGORY__CATEGORY_COMPUTE);
    add_kernel(seq, &a, s);
    add_name(seq, &a, s->name);

    CtPb__GpuRenderStageEvent event = CT_PB__GPU_RENDER_STAGE_EVENT__INIT;
    CtPb__GpuRenderStageEvent__ComputeKernelLaunch launch =
        CT_PB__GPU_RENDER_STAGE_EVENT__COMPUTE_KERNEL_LAUNCH__INIT;
    CtPb__GpuRenderStageEvent__Dim3 grid, block;
    CtPb__GpuRenderStageEvent__ExtraComputeArg args[MAX_STAGE_ARGS], *arg_ptrs[MAX_STAGE_ARGS];
    int nargs = s->nargs < MAX_STAGE_ARGS ? s->nargs : MAX_STAGE_ARGS;
    for (int i = 0; i < nargs; i++) {
        fill_arg(seq, &a, &args[i], &s->args[i]);
        arg_ptrs[i] = &args[i];
    }
    launch.args = arg_ptrs;
    launch.n_args = (size_t)nargs;
    if (s->kernel) {
        fill_dim3(&grid, s->grid);
        fill_dim3(&block, s->block);
        launch.grid_size = &grid;
        launch.workgroup_size = &block;
        event.has_kernel_iid = 1;
        event.kernel_iid = s->kernel;
    }
    event.has_event_id = s->event_id != 0;
    event.event_id = s->event_id;
    event.has_duration = 1;
    event.duration = s->end_ns - s->begin_ns;
    event.has_context = event.has_gpu_id = event.has_hw_queue_iid = event.has_stage_iid = 1;
    event.context = s->device + 1ull;
    event.gpu_id = (int32_t)s->device;
    event.hw_queue_iid = s->queue;
    event.stage_iid = s->stage;
    event.has_name_iid = 1;
    event.name_iid = s->name;
    event.launch = &launch;

    CtPb__TracePacket packet = CT_PB__TRACE_PACKET__INIT;
    packet.gpu_render_stage_event = &event;
    if (has_additions(&a))
        packet.interned_data = &a.data;
    ct_write_packet(seq, &packet, s->begin_ns);
}
