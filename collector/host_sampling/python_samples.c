/*
 * Owns the interning of Python callstack samples. Perfetto has two packets
 * for stack samples: StreamingProfilePacket (imported into
 * cpu_profile_stack_sample) takes its thread from the sequence's
 * ThreadDescriptor, so it needs one sequence per thread; PerfSample
 * (imported into perf_sample, shown by the UI as the thread's and the
 * process's "perf samples" track with a flame graph) names pid and tid in
 * each sample, so every thread's and worker's samples share the sampler's
 * one sequence. PerfSample it is. A frame is named "function (file:line)"
 * (ct_frame_python), so the flame graph parts lines of one function; its
 * mapping is its source file (a synthetic one, path = the file, rel_pc =
 * the line), as Perfetto requires a mapping of every frame; the report
 * reads the innermost frame's back from these three. Ids: a function name's and a mapping
 * path's are their string-table ids, a frame's its name's, a mapping's its
 * file's; a callstack's its place in the list of distinct ones. Each is
 * defined on the sequence in the packet that first uses it, and again
 * after the sequence restarts under a new id (a new chunk). What was made
 * and defined is a struct ct_python_samples, the host tracks'.
 */
#include "collector/host_sampling/python_samples.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/string_table.h"
#include "common/u64_map.h"
#include "cudatrace/trace_names.h"
#include "perfetto_trace.pb-c.h"

#define MAPPING_SPAN (1ull << 32) /* a mapping's size: more than any line number */

struct ct_python_callstack {
    uint32_t depth;
    uint32_t frames[CT_PY_STACK_MAX]; /* bottom (outermost) first */
};

/* Interned data one sample adds, at most one of each per frame. */
struct additions {
    CtPb__InternedData data;
    CtPb__InternedString names[CT_PY_STACK_MAX * 2], *name_ptrs[CT_PY_STACK_MAX],
        *path_ptrs[CT_PY_STACK_MAX];
    CtPb__Frame frames[CT_PY_STACK_MAX], *frame_ptrs[CT_PY_STACK_MAX];
    CtPb__Mapping mappings[CT_PY_STACK_MAX], *mapping_ptrs[CT_PY_STACK_MAX];
    uint64_t mapping_paths[CT_PY_STACK_MAX];
    CtPb__Callstack callstack, *callstack_ptr;
    uint64_t frame_ids[CT_PY_STACK_MAX];
    size_t strings;
};

static void forget_defined(struct ct_python_samples *p)
{
    struct ct_u64_map *maps[] = {&p->defined_names, &p->defined_frames, &p->defined_mappings,
                                 &p->defined_stacks};
    for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++) {
        ct_u64_map_free(maps[i]);
        memset(maps[i], 0, sizeof *maps[i]);
    }
}

/* Whether `iid` is new to the sequence; it is defined from now on. */
static int first_use(struct ct_u64_map *defined, uint64_t iid)
{
    if (ct_u64_map_find(defined, iid))
        return 0;
    ct_u64_map_put(defined, iid, 1);
    return 1;
}

static CtPb__InternedString *interned_string(struct additions *a, uint32_t id)
{
    CtPb__InternedString *s = &a->names[a->strings++];
    *s = (CtPb__InternedString)CT_PB__INTERNED_STRING__INIT;
    s->has_iid = s->has_str = 1;
    s->iid = id;
    s->str.data = (uint8_t *)ct_strings_get(id);
    s->str.len = ct_strings_len(id);
    return s;
}

static void add_mapping(struct ct_python_samples *p, struct additions *a, uint32_t file)
{
    if (!first_use(&p->defined_mappings, file))
        return;
    a->data.mapping_paths[a->data.n_mapping_paths++] = interned_string(a, file);
    size_t n = a->data.n_mappings++;
    CtPb__Mapping *m = &a->mappings[n];
    *m = (CtPb__Mapping)CT_PB__MAPPING__INIT;
    m->has_iid = m->has_start = m->has_end = 1;
    m->iid = file;
    m->start = (uint64_t)file * MAPPING_SPAN;
    m->end = m->start + MAPPING_SPAN;
    a->mapping_paths[n] = file;
    m->path_string_ids = &a->mapping_paths[n];
    m->n_path_string_ids = 1;
    a->mapping_ptrs[n] = m;
}

/* Frame `i` of the stack: its iid, with what it needs defined. */
static uint32_t add_frame(struct ct_python_samples *p, struct additions *a,
                          const struct ct_py_code *code, int32_t line)
{
    char text[1024];
    snprintf(text, sizeof text, ct_frame_python, code->function, code->file, (int)line);
    uint32_t name = ct_strings_intern_cstr(text);
    if (!first_use(&p->defined_frames, name))
        return name;
    uint32_t file = ct_strings_intern_cstr(code->file);
    add_mapping(p, a, file);
    if (first_use(&p->defined_names, name))
        a->data.function_names[a->data.n_function_names++] = interned_string(a, name);
    CtPb__Frame *f = &a->frames[a->data.n_frames];
    *f = (CtPb__Frame)CT_PB__FRAME__INIT;
    f->has_iid = f->has_function_name_id = f->has_mapping_id = f->has_rel_pc = 1;
    f->iid = name;
    f->function_name_id = name;
    f->mapping_id = file;
    f->rel_pc = line > 0 ? (uint64_t)line : 0;
    a->frame_ptrs[a->data.n_frames++] = f;
    return name;
}

static uint64_t hash_of(const struct ct_python_callstack *c)
{
    uint64_t h = 1469598103934665603ull;
    for (uint32_t i = 0; i < c->depth; i++)
        h = (h ^ c->frames[i]) * 1099511628211ull;
    return h ? h : 1;
}

/* The iid of callstack `c`, made when it is new. */
static uint64_t callstack_iid(struct ct_python_samples *p, const struct ct_python_callstack *c)
{
    uint64_t hash = hash_of(c);
    uint64_t *iid = ct_u64_map_find(&p->callstack_index, hash);
    if (iid && memcmp(&p->callstacks[*iid - 1], c, sizeof *c) == 0)
        return *iid;
    p->callstacks = ct_array_grow(p->callstacks, p->callstack_count, sizeof *p->callstacks);
    p->callstacks[p->callstack_count++] = *c;
    if (!iid) /* a colliding stack keeps its own iid, found by the one before it */
        ct_u64_map_put(&p->callstack_index, hash, p->callstack_count);
    return p->callstack_count;
}

static void additions_init(struct additions *a)
{
    memset(a, 0, sizeof *a);
    a->data = (CtPb__InternedData)CT_PB__INTERNED_DATA__INIT;
    a->data.function_names = a->name_ptrs;
    a->data.mapping_paths = a->path_ptrs;
    a->data.frames = a->frame_ptrs;
    a->data.mappings = a->mapping_ptrs;
}

void ct_python_sample_write(struct ct_python_samples *p, struct ct_sequence *seq, int32_t pid,
                            int32_t tid, uint64_t ts_ns, const struct ct_py_stack *stack)
{
    if (!stack->depth)
        return;
    if (p->defined_on != seq->id || !seq->started) {
        forget_defined(p);
        p->defined_on = seq->id;
    }
    static struct additions a;
    additions_init(&a);
    struct ct_python_callstack c = {.depth = stack->depth};
    for (uint32_t i = 0; i < stack->depth; i++) {
        uint32_t outer = stack->depth - 1 - i;
        c.frames[i] = add_frame(p, &a, stack->frames[outer].code, stack->frames[outer].line);
    }
    uint64_t iid = callstack_iid(p, &c);
    if (first_use(&p->defined_stacks, iid)) {
        a.callstack = (CtPb__Callstack)CT_PB__CALLSTACK__INIT;
        a.callstack.has_iid = 1;
        a.callstack.iid = iid;
        for (uint32_t i = 0; i < c.depth; i++)
            a.frame_ids[i] = c.frames[i];
        a.callstack.frame_ids = a.frame_ids;
        a.callstack.n_frame_ids = c.depth;
        a.callstack_ptr = &a.callstack;
        a.data.callstacks = &a.callstack_ptr;
        a.data.n_callstacks = 1;
    }
    CtPb__PerfSample sample = CT_PB__PERF_SAMPLE__INIT;
    sample.has_pid = sample.has_tid = sample.has_callstack_iid = 1;
    sample.pid = (uint32_t)pid;
    sample.tid = (uint32_t)tid;
    sample.callstack_iid = iid;
    CtPb__TracePacket packet = CT_PB__TRACE_PACKET__INIT;
    packet.perf_sample = &sample;
    if (a.data.n_callstacks || a.data.n_frames)
        packet.interned_data = &a.data;
    ct_write_packet(seq, &packet, ts_ns);
}

void ct_python_samples_free(struct ct_python_samples *p)
{
    forget_defined(p);
    free(p->callstacks);
    ct_u64_map_free(&p->callstack_index);
    *p = (struct ct_python_samples){.callstacks = NULL};
}
