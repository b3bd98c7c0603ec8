/*
 * Decodes packets with protobuf-c against our schema subset and keeps the
 * per-sequence state Perfetto's importer keeps: the interning tables
 * (cleared when a packet says so) and the default track. For a visitor
 * that takes slices, slice begins wait on a per-track stack until their end
 * arrives, so it sees whole slices; every string it sees is interned and
 * outlives the decode. One that copies the file (the perfetto export)
 * takes each packet's bytes once the packet has been decoded. What one
 * packet may cost is bounded, not only its size on the wire (64 MiB,
 * trace_input.c): protobuf-c decodes it through an allocator that stops at
 * PACKET_DECODE_MIB (256 MiB), and a packet that would take more, such as
 * millions of empty fields that a compressed file holds in a few bytes, is
 * refused as a malformed one is. The collector's packets take a few KiB.
 * A trace of another trace format (trace_names.h) is refused at the event
 * that states it, which no visitor sees: every command reads through here,
 * so none can take such a trace for one of ours. Typed GPU records
 * (GpuRenderStageEvent) reach the visitor as the slices of the default GPU
 * tracks would (gpu_records.c).
 */
#include "viewer-export/read/trace_decode.h"

#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/string_table.h"
#include "common/u64_map.h"
#include "cudatrace/trace_names.h"
#include "perfetto_trace.pb-c.h"
#include "viewer-export/read/gpu_records.h"
#include "viewer-export/read/trace_input.h"

#define SEQ_CLEARED 1
/* What decoding one packet may allocate. A 64 KiB packet, the largest the
 * collector writes, cannot take more than about 8 MiB however its fields
 * fall (protobuf-c spends up to ~124 bytes on a field of 2), and its real
 * ones take under 4 KiB; a packet of large strings takes about its own
 * size, so one of those fits up to the reader's 64 MiB (trace_input.c). */
#define PACKET_DECODE_MIB 256
/* Counted with each allocation, about what malloc keeps beside it. */
#define MALLOC_OVERHEAD 32

struct sequence {
    struct ct_u64_map event_names, annotation_names, string_values; /* iid -> string id */
    /* Callstack samples' interning: strings (iid -> string id), a mapping
     * (iid -> its path's string iid), a frame (iid -> its name's, its
     * mapping's iid and its rel_pc), a callstack (iid -> where its frame
     * iids, outermost first, start in stack_frames << 16 | how many). */
    struct ct_u64_map function_names, mapping_paths, mappings;
    struct ct_u64_map frame_names, frame_mappings, frame_pcs, callstacks;
    uint64_t *stack_frames;
    size_t stack_frames_used, stack_frames_room;
    struct ct_gpu_interned gpu;
    uint64_t default_track;
};

struct slice_stack {
    struct ct_event *events;
    size_t depth, capacity;
};

struct decoder {
    const struct ct_trace_visitor *visitor;
    struct ct_u64_map sequences; /* sequence id -> index + 1 */
    struct sequence *seqs;
    size_t seq_count;
    struct ct_u64_map stacks; /* track uuid -> index + 1 */
    struct slice_stack *stack_list;
    size_t stack_count;
    int64_t foreign_format; /* a trace format stated that is not ours, or 0 */
    struct ct_gpu_queues queues;
    const char **sample_frames; /* the sample handed over: its frames' names */
    size_t sample_frames_room;
};

/* protobuf-c's allocator for one packet: it fails, and so the unpack does,
 * once the packet has cost PACKET_DECODE_MIB. */
struct packet_budget {
    ProtobufCAllocator allocator;
    size_t left;
    int spent; /* an allocation was refused for the budget */
};

static void *budget_alloc(void *data, size_t size)
{
    struct packet_budget *b = data;
    size_t cost = size + MALLOC_OVERHEAD;
    if (cost < size || cost > b->left) {
        b->spent = 1;
        return NULL;
    }
    b->left -= cost;
    return malloc(size);
}

static void budget_free(void *data, void *pointer)
{
    (void)data;
    free(pointer);
}

/* Packet `index` decoded within its budget, or NULL with the reason in
 * `error`; freed with b->allocator. */
static CtPb__TracePacket *unpack(struct packet_budget *b, const uint8_t *bytes, size_t size,
                                 uint64_t index, char *error, size_t error_size)
{
    *b = (struct packet_budget){{budget_alloc, budget_free, b}, (size_t)PACKET_DECODE_MIB << 20, 0};
    CtPb__TracePacket *p = ct_pb__trace_packet__unpack(&b->allocator, size, bytes);
    if (!p && b->spent)
        snprintf(error, error_size,
                 "packet %llu takes more than %d MiB to decode, beyond any trace cudatrace writes",
                 (unsigned long long)index, PACKET_DECODE_MIB);
    else if (!p)
        snprintf(error, error_size, "packet %llu is not a valid TracePacket",
                 (unsigned long long)index);
    return p;
}

static struct sequence *sequence_of(struct decoder *d, uint32_t id)
{
    uint64_t *index = ct_u64_map_find(&d->sequences, (uint64_t)id + 1);
    if (index)
        return &d->seqs[*index - 1];
    d->seqs = ct_array_grow(d->seqs, d->seq_count++, sizeof *d->seqs);
    ct_u64_map_put(&d->sequences, (uint64_t)id + 1, d->seq_count);
    return &d->seqs[d->seq_count - 1];
}

static void clear_sequence(struct sequence *s)
{
    struct ct_u64_map *tables[] = {&s->event_names,    &s->annotation_names, &s->string_values,
                                   &s->function_names, &s->mapping_paths,    &s->mappings,
                                   &s->frame_names,    &s->frame_mappings,   &s->frame_pcs,
                                   &s->callstacks};
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
        ct_u64_map_free(tables[i]);
        memset(tables[i], 0, sizeof *tables[i]);
    }
    free(s->stack_frames);
    s->stack_frames = NULL;
    s->stack_frames_used = s->stack_frames_room = 0;
    ct_gpu_interned_clear(&s->gpu);
    s->default_track = 0;
}

static uint32_t intern_bytes(const void *data, size_t len)
{
    return ct_strings_intern(data ? data : "", data ? len : 0);
}

uint32_t ct_intern_text(const char *text)
{
    return intern_bytes(text, text ? strlen(text) : 0);
}

const char *ct_interned_text(const struct ct_u64_map *table, uint64_t iid)
{
    const uint64_t *id = ct_u64_map_find(table, iid);
    return id ? ct_strings_get((uint32_t)*id) : "";
}

static void learn_strings(struct ct_u64_map *table, CtPb__InternedString *const *strings,
                          size_t count)
{
    for (size_t i = 0; i < count; i++)
        ct_u64_map_put(table, strings[i]->iid,
                       intern_bytes(strings[i]->str.data, strings[i]->str.len));
}

/* A callstack's frame iids, kept for the samples that name it (at most
 * 65535 of them: the outermost). */
static void learn_callstack(struct sequence *s, const CtPb__Callstack *c)
{
    size_t count = c->n_frame_ids < 0xffff ? c->n_frame_ids : 0xffff;
    size_t first = s->stack_frames_used;
    s->stack_frames = ct_array_reserve(s->stack_frames, &s->stack_frames_room, first + count,
                                       sizeof *s->stack_frames);
    memcpy(s->stack_frames + first, c->frame_ids, count * sizeof *c->frame_ids);
    s->stack_frames_used += count;
    ct_u64_map_put(&s->callstacks, c->iid, (uint64_t)first << 16 | count);
}

/* What callstack samples name: of a mapping only its first path
 * component is kept, which is all the report reads. */
static void learn_profile(struct sequence *s, const CtPb__InternedData *data)
{
    learn_strings(&s->function_names, data->function_names, data->n_function_names);
    learn_strings(&s->mapping_paths, data->mapping_paths, data->n_mapping_paths);
    for (size_t i = 0; i < data->n_mappings; i++)
        if (data->mappings[i]->n_path_string_ids)
            ct_u64_map_put(&s->mappings, data->mappings[i]->iid,
                           data->mappings[i]->path_string_ids[0]);
    for (size_t i = 0; i < data->n_frames; i++) {
        const CtPb__Frame *f = data->frames[i];
        ct_u64_map_put(&s->frame_names, f->iid, f->function_name_id);
        ct_u64_map_put(&s->frame_mappings, f->iid, f->mapping_id);
        ct_u64_map_put(&s->frame_pcs, f->iid, f->rel_pc);
    }
    for (size_t i = 0; i < data->n_callstacks; i++)
        if (data->callstacks[i]->n_frame_ids)
            learn_callstack(s, data->callstacks[i]);
}

static void learn_interned(struct sequence *s, const CtPb__InternedData *data)
{
    learn_profile(s, data);
    for (size_t i = 0; i < data->n_event_names; i++)
        ct_u64_map_put(&s->event_names, data->event_names[i]->iid,
                       ct_intern_text(data->event_names[i]->name));
    for (size_t i = 0; i < data->n_debug_annotation_names; i++)
        ct_u64_map_put(&s->annotation_names, data->debug_annotation_names[i]->iid,
                       ct_intern_text(data->debug_annotation_names[i]->name));
    for (size_t i = 0; i < data->n_debug_annotation_string_values; i++) {
        const CtPb__InternedString *v = data->debug_annotation_string_values[i];
        ct_u64_map_put(&s->string_values, v->iid, intern_bytes(v->str.data, v->str.len));
    }
    ct_gpu_interned_learn(&s->gpu, data);
}

static void resolve_annotation(const struct sequence *s, const CtPb__DebugAnnotation *a,
                               struct ct_annotation *out)
{
    memset(out, 0, sizeof *out);
    out->name = a->name ? ct_strings_get(ct_intern_text(a->name))
                        : ct_interned_text(&s->annotation_names, a->name_iid);
    if (a->has_uint_value || a->has_pointer_value) {
        out->type = CT_VALUE_UINT;
        out->u = a->has_uint_value ? a->uint_value : a->pointer_value;
    } else if (a->has_int_value) {
        out->type = CT_VALUE_INT;
        out->i = a->int_value;
    } else if (a->has_double_value) {
        out->type = CT_VALUE_DOUBLE;
        out->d = a->double_value;
    } else if (a->has_bool_value) {
        out->type = CT_VALUE_BOOL;
        out->u = a->bool_value;
    } else {
        out->type = CT_VALUE_STRING;
        out->s = a->string_value ? ct_strings_get(ct_intern_text(a->string_value))
                                 : ct_interned_text(&s->string_values, a->string_value_iid);
    }
}

static void report_track(struct decoder *d, const CtPb__TrackDescriptor *t)
{
    struct ct_track_info info = {.uuid = t->uuid, .parent = t->parent_uuid};
    info.name = t->name ? ct_strings_get(ct_intern_text(t->name)) : NULL;
    info.is_counter = t->counter != NULL;
    if (t->process) {
        info.is_process = 1;
        info.pid = t->process->pid;
        if (t->process->process_name)
            info.name = ct_strings_get(ct_intern_text(t->process->process_name));
        info.cmdline = (const char *const *)t->process->cmdline;
        info.cmdline_len = t->process->n_cmdline;
        ct_gpu_queues_note_process(&d->queues, info.pid, info.uuid);
    }
    if (t->thread) {
        info.pid = t->thread->pid;
        info.tid = t->thread->tid;
        if (t->thread->thread_name)
            info.name = ct_strings_get(ct_intern_text(t->thread->thread_name));
    }
    if (d->visitor->track)
        d->visitor->track(d->visitor->ctx, &info);
}

static struct slice_stack *stack_of(struct decoder *d, uint64_t track)
{
    uint64_t *index = ct_u64_map_find(&d->stacks, track);
    if (index)
        return &d->stack_list[*index - 1];
    d->stack_list = ct_array_grow(d->stack_list, d->stack_count++, sizeof *d->stack_list);
    ct_u64_map_put(&d->stacks, track, d->stack_count);
    return &d->stack_list[d->stack_count - 1];
}

static void begin_slice(struct decoder *d, const struct ct_event *e)
{
    struct slice_stack *st = stack_of(d, e->track);
    if (st->depth == st->capacity) {
        st->capacity = st->capacity ? st->capacity * 2 : 4;
        st->events = realloc(st->events, st->capacity * sizeof *st->events);
        if (!st->events)
            abort();
    }
    st->events[st->depth++] = *e;
}

static void end_slice(struct decoder *d, const struct ct_event *e)
{
    struct slice_stack *st = stack_of(d, e->track);
    if (st->depth == 0)
        return; /* an end without a begin: Perfetto ignores it too */
    struct ct_event *slice = &st->events[--st->depth];
    slice->end = e->ts;
    for (int i = 0; i < e->nargs && slice->nargs < CT_MAX_EVENT_ARGS; i++)
        slice->args[slice->nargs++] = e->args[i];
    d->visitor->slice(d->visitor->ctx, slice);
}

/* The trace format `e` states when it is not ours (-1: none given); 0 for
 * ours, and for any event but the one that states it. */
static int64_t foreign_format(const struct ct_event *e)
{
    if (strcmp(e->name, ct_event_trace_format) != 0)
        return 0;
    int64_t format = ct_event_int(e, ct_key_format, 0);
    return format == CT_TRACE_FORMAT ? 0 : format ? format : -1;
}

static void handle_event(struct decoder *d, struct sequence *s, const CtPb__TracePacket *p)
{
    const CtPb__TrackEvent *te = p->track_event;
    struct ct_event e = {0};
    e.track = te->has_track_uuid ? te->track_uuid : s->default_track;
    e.ts = p->timestamp;
    e.name = te->name           ? ct_strings_get(ct_intern_text(te->name))
             : te->has_name_iid ? ct_interned_text(&s->event_names, te->name_iid)
                                : "";
    for (size_t i = 0; i < te->n_debug_annotations && e.nargs < CT_MAX_EVENT_ARGS; i++)
        resolve_annotation(s, te->debug_annotations[i], &e.args[e.nargs++]);
    e.counter = te->has_double_counter_value ? te->double_counter_value : (double)te->counter_value;
    e.flow_out = te->n_flow_ids ? te->flow_ids[0] : ct_gpu_record_submission(te);
    e.flow_in = te->n_terminating_flow_ids ? te->terminating_flow_ids[0] : 0;
    switch (te->type) {
    case CT_PB__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN:
        if (d->visitor->slice) /* nothing is kept for a visitor that takes no slices */
            begin_slice(d, &e);
        break;
    case CT_PB__TRACK_EVENT__TYPE__TYPE_SLICE_END:
        if (d->visitor->slice)
            end_slice(d, &e);
        break;
    case CT_PB__TRACK_EVENT__TYPE__TYPE_INSTANT:
        d->foreign_format = foreign_format(&e);
        if (!d->foreign_format && d->visitor->instant)
            d->visitor->instant(d->visitor->ctx, &e);
        break;
    case CT_PB__TRACK_EVENT__TYPE__TYPE_COUNTER:
        if (d->visitor->counter)
            d->visitor->counter(d->visitor->ctx, &e);
        break;
    default:
        break;
    }
}

/* The names of the `count` frames from `ids`, outermost first, that the
 * sequence defines: how many it did. */
static size_t name_frames(struct decoder *d, const struct sequence *s, const uint64_t *ids,
                          size_t count)
{
    d->sample_frames =
        ct_array_reserve(d->sample_frames, &d->sample_frames_room, count, sizeof *d->sample_frames);
    size_t named = 0;
    for (size_t i = 0; i < count; i++) {
        const uint64_t *name = ct_u64_map_find(&s->frame_names, ids[i]);
        if (name)
            d->sample_frames[named++] = ct_interned_text(&s->function_names, *name);
    }
    return named;
}

/* A callstack sample by its innermost frame, resolved through the
 * sequence's tables; one whose callstack or innermost frame is not defined
 * there is skipped, as Perfetto's importer skips it. */
static void handle_sample(struct decoder *d, struct sequence *s, const CtPb__TracePacket *p)
{
    const CtPb__PerfSample *ps = p->perf_sample;
    const uint64_t *stack = ct_u64_map_find(&s->callstacks, ps->callstack_iid);
    const uint64_t *ids = stack ? s->stack_frames + (*stack >> 16) : NULL;
    size_t count = stack ? (*stack & 0xffff) : 0;
    const uint64_t *leaf = stack ? &ids[count - 1] : NULL;
    const uint64_t *name = leaf ? ct_u64_map_find(&s->frame_names, *leaf) : NULL;
    if (!name)
        return;
    const uint64_t *mapping = ct_u64_map_find(&s->frame_mappings, *leaf);
    const uint64_t *path = mapping ? ct_u64_map_find(&s->mappings, *mapping) : NULL;
    const uint64_t *pc = ct_u64_map_find(&s->frame_pcs, *leaf);
    struct ct_sample sample = {.ts = p->timestamp,
                               .pid = (int32_t)ps->pid,
                               .tid = (int32_t)ps->tid,
                               .frame = ct_interned_text(&s->function_names, *name),
                               .path = path ? ct_interned_text(&s->mapping_paths, *path) : "",
                               .rel_pc = pc ? *pc : 0};
    sample.depth = name_frames(d, s, ids, count);
    sample.frames = d->sample_frames;
    d->visitor->sample(d->visitor->ctx, &sample);
}

static void handle_gpu_record(struct decoder *d, const struct sequence *s,
                              const CtPb__TracePacket *p)
{
    struct ct_gpu_sequence_tables tables = {&s->gpu, &s->event_names, &s->string_values};
    struct ct_event slice;
    ct_gpu_record_slice(&d->queues, &tables, p, &slice, d->visitor->track, d->visitor->ctx);
    if (d->visitor->slice)
        d->visitor->slice(d->visitor->ctx, &slice);
}

static void handle_packet(struct decoder *d, const CtPb__TracePacket *p)
{
    struct sequence *s = sequence_of(d, p->trusted_packet_sequence_id);
    if (p->has_sequence_flags && (p->sequence_flags & SEQ_CLEARED))
        clear_sequence(s);
    if (p->trace_packet_defaults && p->trace_packet_defaults->track_event_defaults &&
        p->trace_packet_defaults->track_event_defaults->has_track_uuid)
        s->default_track = p->trace_packet_defaults->track_event_defaults->track_uuid;
    if (p->interned_data)
        learn_interned(s, p->interned_data);
    if (p->track_descriptor)
        report_track(d, p->track_descriptor);
    if (p->track_event)
        handle_event(d, s, p);
    if (p->perf_sample && p->perf_sample->has_callstack_iid && d->visitor->sample)
        handle_sample(d, s, p);
    if (p->gpu_render_stage_event)
        handle_gpu_record(d, s, p);
}

static void free_decoder(struct decoder *d, struct ct_decode_result *result)
{
    for (size_t i = 0; i < d->seq_count; i++)
        clear_sequence(&d->seqs[i]);
    for (size_t i = 0; i < d->stack_count; i++) {
        const struct slice_stack *st = &d->stack_list[i];
        for (size_t k = 0; k < st->depth && d->visitor->unclosed; k++)
            d->visitor->unclosed(d->visitor->ctx, &st->events[k]);
        result->unclosed += st->depth;
        free(st->events);
    }
    free(d->seqs);
    free(d->stack_list);
    free(d->sample_frames);
    ct_u64_map_free(&d->sequences);
    ct_u64_map_free(&d->stacks);
    ct_gpu_queues_free(&d->queues);
}

/* Packet `index` into the visitor: 0, or -1 with the reason in `error`. */
static int decode_packet(struct decoder *d, const uint8_t *bytes, size_t size, uint64_t index,
                         char *error, size_t error_size)
{
    struct packet_budget budget;
    CtPb__TracePacket *p = unpack(&budget, bytes, size, index, error, error_size);
    if (!p)
        return -1;
    handle_packet(d, p);
    ct_pb__trace_packet__free_unpacked(p, &budget.allocator);
    if (d->foreign_format) {
        snprintf(error, error_size,
                 "written by another cudatrace (trace format %lld; this one reads %d)",
                 (long long)d->foreign_format, CT_TRACE_FORMAT);
        return -1;
    }
    if (d->visitor->packet)
        d->visitor->packet(d->visitor->ctx, bytes, size);
    return 0;
}

int ct_trace_decode(const char *path, const struct ct_trace_visitor *visitor,
                    struct ct_decode_result *result, char *error, size_t error_size)
{
    memset(result, 0, sizeof *result);
    struct ct_trace_input *in = ct_trace_input_open(path, error, error_size);
    if (!in)
        return -1;
    struct decoder d = {.visitor = visitor};
    const uint8_t *bytes;
    size_t size;
    int r;
    while ((r = ct_trace_input_next(in, &bytes, &size, error, error_size)) > 0) {
        if (decode_packet(&d, bytes, size, result->packets, error, error_size)) {
            r = -1;
            break;
        }
        result->packets++;
        if (visitor->progress)
            visitor->progress(visitor->ctx, ct_trace_input_bytes_read(in));
    }
    result->truncated = ct_trace_input_truncated(in);
    ct_trace_input_close(in);
    free_decoder(&d, result);
    if (r == 0 && result->packets == 0) {
        snprintf(error, error_size, "holds no complete trace packet");
        return -1;
    }
    return r < 0 ? -1 : 0;
}

const struct ct_annotation *ct_event_arg(const struct ct_event *event, const char *name)
{
    for (int i = 0; i < event->nargs; i++)
        if (strcmp(event->args[i].name, name) == 0)
            return &event->args[i];
    return NULL;
}

int64_t ct_event_int(const struct ct_event *event, const char *name, int64_t fallback)
{
    const struct ct_annotation *a = ct_event_arg(event, name);
    if (!a)
        return fallback;
    return a->type == CT_VALUE_INT ? a->i : (int64_t)a->u;
}

const char *ct_event_text(const struct ct_event *event, const char *name)
{
    const struct ct_annotation *a = ct_event_arg(event, name);
    return a && a->type == CT_VALUE_STRING && a->s ? a->s : "";
}
