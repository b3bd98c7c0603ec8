/*
 * Encodes Perfetto TracePackets with protobuf-c from our own subset of the
 * schema (include/cudatrace/perfetto_trace.proto) and frames them as the
 * repeated `packet` field of Trace. Each sequence follows the import rules:
 * its first packet clears incremental state, every interned id is defined on
 * that sequence before (or in) the packet that first uses it, and packets
 * that use interned data say so. Messages are built on the stack and packed
 * straight into a batch buffer: nothing is allocated per event. A writer
 * (struct ct_writer) owns its batch, the buffers written aside, the cache of
 * packed bodies, the numbering of its sequences, and the plan of a bounded
 * file (chunks.c) with what each chunk says again (chunk_replay.c).
 */
#include "collector/perfetto/writer.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "perfetto_trace.pb-c.h"
#include "common/string_table.h"
#include "common/varint.h"
#include "collector/perfetto/chunk_replay.h"
#include "collector/perfetto/chunks.h"
#include "collector/perfetto/trace_file.h"

#define SEQ_CLEARED 1
#define SEQ_NEEDS_STATE 2
#define MAX_ARGS 16           /* annotations per event; more are dropped */
#define BATCH_SIZE (4u << 20) /* one zstd frame */
#define MAX_PACKET (64 * 1024)
#define GAP_BATCH_SIZE (64 * 1024)  /* the gap marker's packets */
#define CUT_NOTE_ROOM 1024          /* of those, kept back to say what did not fit */
#define ASIDE_BATCH_SIZE (1u << 20) /* a snapshot's own packets: every thread's state */
#define MIN_BOUNDED_BATCH (64 * 1024)

/* Where packets go: the batch that becomes the next frame, or, while the
 * gap marker is written, a buffer of its own. Each packs its packets in
 * its own scratch: the gap marker is written from inside a flush, which
 * may come between the packing of a packet and its copy into the batch.
 * A buffer of its own cannot flush: what does not fit is counted, past
 * `kept_back` bytes left for saying so (ct_writer_aside_cut). */
struct output {
    uint8_t *buf;
    size_t used, size;
    uint8_t *scratch;
    size_t kept_back;
    struct ct_writer_cut cut;
};

/* Most events repeat an earlier one on their sequence but for the timestamp
 * (every SLICE_END; every launch of the same kernel with the same shape), so
 * the bodies protobuf-c packed are kept in a direct-mapped cache keyed by the
 * event's full content. Only bodies that define no interned data are kept:
 * those are valid on their sequence for as long as it lives. */
#define CACHE_SLOTS 4096
#define CACHED_BODY_MAX 160

struct event_key {
    uint64_t header[3]; /* as struct key_view's */
    struct ct_arg args[MAX_ARGS];
};

struct cached_body {
    struct event_key key;
    uint32_t len;
    uint8_t body[CACHED_BODY_MAX];
};

struct ct_writer {
    struct ct_trace_file *file;
    struct output frame, gap, aside;
    struct output *out; /* the one being written */
    uint32_t next_sequence_id;
    uint64_t latest_ts; /* of any event written: where a new chunk begins */
    void (*gap_writer)(struct ct_sequence *seq, const struct ct_gap *gap, void *ctx);
    void *gap_ctx;
    uint64_t gap_track;
    struct ct_chunks chunks;
    struct ct_replay replay;
    struct cached_body cache[CACHE_SLOTS];
    uint8_t batch[BATCH_SIZE], gap_batch[GAP_BATCH_SIZE], aside_batch[ASIDE_BATCH_SIZE];
    uint8_t frame_scratch[MAX_PACKET], gap_scratch[MAX_PACKET], aside_scratch[MAX_PACKET];
};

struct ct_writer *ct_writer_create(struct ct_trace_file *file, uint64_t max_bytes)
{
    struct ct_writer *w = calloc(1, sizeof *w);
    if (!w)
        abort();
    w->file = file;
    w->frame = (struct output){.buf = w->batch, .size = BATCH_SIZE, .scratch = w->frame_scratch};
    w->gap =
        (struct output){.buf = w->gap_batch, .size = GAP_BATCH_SIZE, .scratch = w->gap_scratch};
    w->aside = (struct output){
        .buf = w->aside_batch, .size = ASIDE_BATCH_SIZE, .scratch = w->aside_scratch};
    w->out = &w->frame;
    w->next_sequence_id = 1;
    ct_chunks_init(&w->chunks, file, w, max_bytes);
    if (max_bytes && max_bytes / 8 < w->frame.size)
        w->frame.size = max_bytes / 8 > MIN_BOUNDED_BATCH ? max_bytes / 8 : MIN_BOUNDED_BATCH;
    return w;
}

static void sequence_fresh(struct ct_sequence *seq, struct ct_writer *w, uint64_t default_track)
{
    memset(seq, 0, sizeof *seq);
    seq->writer = w;
    seq->id = w->next_sequence_id++;
    seq->default_track = default_track;
}

void ct_sequence_init(struct ct_sequence *seq, struct ct_writer *w, uint64_t default_track)
{
    if (seq->live)
        ct_replay_forget(&seq->writer->replay, seq);
    sequence_fresh(seq, w, default_track);
    ct_replay_register(&w->replay, seq);
}

static void free_interning(struct ct_sequence *seq)
{
    free(seq->event_names.words);
    free(seq->annotation_names.words);
    free(seq->string_values.words);
}

void ct_sequence_release(struct ct_sequence *seq)
{
    ct_replay_forget(&seq->writer->replay, seq);
    free_interning(seq);
    memset(seq, 0, sizeof *seq);
}

/* A sequence as a new chunk begins: a fresh id, so that nothing cached or
 * interned for the old one is taken as defined. */
static void forget_interned(struct ct_sequence *seq)
{
    struct ct_bitset *sets[] = {&seq->event_names, &seq->annotation_names, &seq->string_values};
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++)
        if (sets[i]->words)
            memset(sets[i]->words, 0, sets[i]->count * sizeof *sets[i]->words);
}

static void sequence_restart(struct ct_sequence *seq)
{
    seq->id = seq->writer->next_sequence_id++;
    seq->started = 0;
    seq->end_len = 0;
    forget_interned(seq);
}

/* Sets bit `id`; returns 1 if it was already set. */
static int bitset_test_and_set(struct ct_bitset *set, uint32_t id)
{
    uint32_t word = id / 64;
    if (word >= set->count) {
        uint32_t count = set->count ? set->count : 4;
        while (count <= word)
            count *= 2;
        set->words = realloc(set->words, count * sizeof *set->words);
        if (!set->words)
            abort();
        memset(set->words + set->count, 0, (count - set->count) * sizeof *set->words);
        set->count = count;
    }
    uint64_t bit = 1ull << (id % 64);
    int was = (set->words[word] & bit) != 0;
    set->words[word] |= bit;
    return was;
}

void ct_writer_flush(struct ct_writer *w)
{
    size_t size = ct_trace_file_compress(w->file, w->frame.buf, w->frame.used);
    w->frame.used = 0;
    if (size) {
        ct_chunks_make_room(&w->chunks, size);
        ct_trace_file_append(w->file);
    }
}

static void note_time(struct ct_sequence *seq, uint64_t ts)
{
    if (ts > seq->last_ts)
        seq->last_ts = ts;
    if (ts > seq->writer->latest_ts)
        seq->writer->latest_ts = ts;
}

/* Frames one packet into the batch: the timestamp field (8), when there is
 * one, then the rest of the packet as protobuf-c packed it. Fields may come
 * in any order, which is what lets a packed body be reused. */
static int append_packet(struct ct_writer *w, int has_timestamp, uint64_t timestamp,
                         const uint8_t *body, size_t len)
{
    struct output *out = w->out;
    size_t ts_len = has_timestamp ? 1 + ct_varint_size(timestamp) : 0;
    if (out->used + ts_len + len + 11 + out->kept_back > out->size) {
        if (out != &w->frame) {
            out->cut.packets++;
            out->cut.bytes += ts_len + len;
            return 0;
        }
        ct_writer_flush(w);
    }
    uint8_t *at = out->buf + out->used;
    at += ct_put_packet_header(at, ts_len + len);
    if (has_timestamp) {
        *at++ = 0x40; /* TracePacket.timestamp, field 8, varint */
        at += ct_put_varint(at, timestamp);
    }
    memcpy(at, body, len);
    out->used = (size_t)(at + len - out->buf);
    return 1;
}

/* Packs everything but the timestamp; returns the body's length, 0 if the
 * packet is too large to keep. The body stays valid until the next call. */
static size_t pack_body(struct ct_sequence *seq, CtPb__TracePacket *packet, const uint8_t **body)
{
    packet->has_trusted_packet_sequence_id = 1;
    packet->trusted_packet_sequence_id = seq->id;
    packet->has_sequence_flags = 1;
    if (!seq->started) {
        packet->sequence_flags = SEQ_CLEARED | SEQ_NEEDS_STATE;
        packet->has_first_packet_on_sequence = 1;
        packet->first_packet_on_sequence = 1;
        seq->started = 1;
    } else {
        packet->sequence_flags = SEQ_NEEDS_STATE;
    }
    if (ct_pb__trace_packet__get_packed_size(packet) > MAX_PACKET)
        return 0;
    *body = seq->writer->out->scratch;
    return ct_pb__trace_packet__pack(packet, seq->writer->out->scratch);
}

/* A packet cut may have defined interned data the next ones use: they
 * define it again. */
static void append_on(struct ct_sequence *seq, int has_timestamp, uint64_t timestamp,
                      const uint8_t *body, size_t len)
{
    if (!append_packet(seq->writer, has_timestamp, timestamp, body, len))
        forget_interned(seq);
}

static void emit_packet(struct ct_sequence *seq, CtPb__TracePacket *packet, int has_timestamp,
                        uint64_t timestamp)
{
    const uint8_t *body;
    size_t len = pack_body(seq, packet, &body);
    if (len)
        append_on(seq, has_timestamp, timestamp, body, len);
}

void ct_write_packet(struct ct_sequence *seq, CtPb__TracePacket *packet, uint64_t ts_ns)
{
    note_time(seq, ts_ns);
    emit_packet(seq, packet, 1, ts_ns);
}

/* An event's key: its header, then its args as they are (16-byte ct_args,
 * two words each), found and compared where they lie, without a copy. */
struct key_view {
    uint64_t header[3]; /* sequence | type << 32, name | nargs << 32, track */
    const struct ct_arg *args;
    int nargs;
};

static struct key_view key_of(const struct ct_sequence *seq, uint64_t track, uint32_t type,
                              uint32_t name, const struct ct_arg *args, int nargs)
{
    return (struct key_view){
        {seq->id | (uint64_t)type << 32, name | (uint64_t)nargs << 32, track}, args, nargs};
}

static void store_key(struct event_key *key, const struct key_view *k)
{
    memcpy(key->header, k->header, sizeof k->header);
    if (k->nargs > 0) /* slice ends have no args, and pass NULL */
        memcpy(key->args, k->args, (size_t)k->nargs * sizeof *k->args);
}

static int same_key(const struct event_key *key, const struct key_view *k)
{
    return memcmp(key->header, k->header, sizeof k->header) == 0 &&
           (k->nargs == 0 || memcmp(key->args, k->args, (size_t)k->nargs * sizeof *k->args) == 0);
}

static struct cached_body *cache_slot(struct ct_writer *w, const struct key_view *k)
{
    /* Two independent multiply chains, one per word of each pair: a key is
     * up to 27 words, and one chain's latency was a visible share of the
     * collector's time. */
    uint64_t a = (14695981039346656037ull ^ k->header[0]) * 0x100000001B3ull;
    uint64_t b = (0x9E3779B97F4A7C15ull ^ k->header[1]) * 0xFF51AFD7ED558CCDull;
    a = (a ^ k->header[2]) * 0x100000001B3ull;
    for (int i = 0; i < k->nargs; i++) {
        a = (a ^ (k->args[i].name | (uint64_t)k->args[i].type << 32)) * 0x100000001B3ull;
        b = (b ^ k->args[i].value) * 0xFF51AFD7ED558CCDull;
    }
    uint64_t h = a ^ (b >> 31) ^ b;
    return &w->cache[(h ^ (h >> 29)) & (CACHE_SLOTS - 1)];
}

/* Interned entries a packet adds, gathered while its event is built. */
struct interning {
    CtPb__InternedData data;
    CtPb__EventName event_name, *event_name_ptr;
    CtPb__DebugAnnotationName arg_names[MAX_ARGS], *arg_name_ptrs[MAX_ARGS];
    CtPb__InternedString values[MAX_ARGS], *value_ptrs[MAX_ARGS];
};

static void interning_init(struct interning *in)
{
    in->data = (CtPb__InternedData)CT_PB__INTERNED_DATA__INIT;
    in->data.event_names = &in->event_name_ptr;
    in->data.debug_annotation_names = in->arg_name_ptrs;
    in->data.debug_annotation_string_values = in->value_ptrs;
}

static void intern_event_name(struct ct_sequence *seq, struct interning *in, uint32_t id)
{
    if (bitset_test_and_set(&seq->event_names, id))
        return;
    in->event_name = (CtPb__EventName)CT_PB__EVENT_NAME__INIT;
    in->event_name.has_iid = 1;
    in->event_name.iid = id;
    in->event_name.name = (char *)ct_strings_get(id);
    in->event_name_ptr = &in->event_name;
    in->data.n_event_names = 1;
}

static void intern_arg_name(struct ct_sequence *seq, struct interning *in, uint32_t id)
{
    if (bitset_test_and_set(&seq->annotation_names, id))
        return;
    CtPb__DebugAnnotationName *n = &in->arg_names[in->data.n_debug_annotation_names];
    *n = (CtPb__DebugAnnotationName)CT_PB__DEBUG_ANNOTATION_NAME__INIT;
    n->has_iid = 1;
    n->iid = id;
    n->name = (char *)ct_strings_get(id);
    in->arg_name_ptrs[in->data.n_debug_annotation_names++] = n;
}

static void intern_string_value(struct ct_sequence *seq, struct interning *in, uint32_t id)
{
    if (bitset_test_and_set(&seq->string_values, id))
        return;
    CtPb__InternedString *s = &in->values[in->data.n_debug_annotation_string_values];
    *s = (CtPb__InternedString)CT_PB__INTERNED_STRING__INIT;
    s->has_iid = 1;
    s->iid = id;
    s->has_str = 1;
    s->str.data = (uint8_t *)ct_strings_get(id);
    s->str.len = ct_strings_len(id);
    in->value_ptrs[in->data.n_debug_annotation_string_values++] = s;
}

static int interning_used(const struct interning *in)
{
    return in->data.n_event_names || in->data.n_debug_annotation_names ||
           in->data.n_debug_annotation_string_values;
}

static void fill_annotations(struct ct_sequence *seq, struct interning *in,
                             CtPb__DebugAnnotation *out, CtPb__DebugAnnotation **ptrs,
                             const struct ct_arg *args, int nargs)
{
    for (int i = 0; i < nargs; i++) {
        CtPb__DebugAnnotation *a = &out[i];
        *a = (CtPb__DebugAnnotation)CT_PB__DEBUG_ANNOTATION__INIT;
        intern_arg_name(seq, in, args[i].name);
        a->has_name_iid = 1;
        a->name_iid = args[i].name;
        switch (args[i].type) {
        case CT_ARG_UINT:
            a->has_uint_value = 1;
            a->uint_value = args[i].value;
            break;
        case CT_ARG_INT:
            a->has_int_value = 1;
            a->int_value = (int64_t)args[i].value;
            break;
        case CT_ARG_POINTER:
            a->has_pointer_value = 1;
            a->pointer_value = args[i].value;
            break;
        default:
            intern_string_value(seq, in, (uint32_t)args[i].value);
            a->has_string_value_iid = 1;
            a->string_value_iid = args[i].value;
            break;
        }
        ptrs[i] = a;
    }
}

/* An event with a flow is never the same twice, so it skips the cache.
 * So do the packets written aside (the gap marker, a snapshot's state):
 * the gap marker is written from inside a flush, which may come while a
 * cached body is being copied into the batch, and a body it stored in the
 * same slot would replace that one under its length. */
static void write_event(struct ct_sequence *seq, uint64_t track, uint64_t ts,
                        CtPb__TrackEvent__Type type, uint32_t name, const struct ct_arg *args,
                        int nargs, const struct ct_flow *flow)
{
    if (nargs > MAX_ARGS)
        nargs = MAX_ARGS;
    note_time(seq, ts);
    struct ct_writer *w = seq->writer;
    struct key_view key = key_of(seq, track, type, name, args, nargs);
    struct cached_body *cached = !flow && w->out == &w->frame ? cache_slot(w, &key) : NULL;
    if (cached && cached->len && same_key(&cached->key, &key)) {
        append_packet(w, 1, ts, cached->body, cached->len);
        return;
    }
    struct interning in;
    CtPb__DebugAnnotation annotations[MAX_ARGS], *annotation_ptrs[MAX_ARGS];
    CtPb__TrackEvent event = CT_PB__TRACK_EVENT__INIT;
    CtPb__TracePacket packet = CT_PB__TRACE_PACKET__INIT;
    interning_init(&in);
    int first = !seq->started;
    event.has_type = 1;
    event.type = type;
    if (track && track != seq->default_track) {
        event.has_track_uuid = 1;
        event.track_uuid = track;
    }
    if (name) {
        intern_event_name(seq, &in, name);
        event.has_name_iid = 1;
        event.name_iid = name;
    }
    fill_annotations(seq, &in, annotations, annotation_ptrs, args, nargs);
    event.debug_annotations = annotation_ptrs;
    event.n_debug_annotations = (size_t)nargs;
    uint64_t flow_out, flow_in;
    if (flow && flow->out_count) {
        event.flow_ids = (uint64_t *)flow->outs;
        event.n_flow_ids = flow->out_count;
    } else if (flow && flow->out) {
        flow_out = flow->out;
        event.flow_ids = &flow_out;
        event.n_flow_ids = 1;
    }
    if (flow && flow->in) {
        flow_in = flow->in;
        event.terminating_flow_ids = &flow_in;
        event.n_terminating_flow_ids = 1;
    }
    CtPb__GpuCorrelation correlation = CT_PB__GPU_CORRELATION__INIT;
    uint64_t submits;
    if (flow && flow->submits) {
        submits = flow->submits;
        correlation.render_stage_submission_event_ids = &submits;
        correlation.n_render_stage_submission_event_ids = 1;
        event.gpu_correlation = &correlation;
    }
    packet.track_event = &event;
    if (interning_used(&in))
        packet.interned_data = &in.data;
    const uint8_t *body;
    size_t len = pack_body(seq, &packet, &body);
    if (!len)
        return;
    append_on(seq, 1, ts, body, len);
    if (!first && !packet.interned_data && type == CT_PB__TRACK_EVENT__TYPE__TYPE_SLICE_END &&
        !event.has_track_uuid && len <= sizeof seq->end_body) {
        memcpy(seq->end_body, body, len);
        seq->end_len = (uint32_t)len;
    }
    if (cached && !first && !packet.interned_data && len <= CACHED_BODY_MAX) {
        store_key(&cached->key, &key);
        cached->len = (uint32_t)len;
        memcpy(cached->body, body, len);
    }
}

void ct_write_slice_begin(struct ct_sequence *seq, uint64_t track, uint64_t ts_ns, uint32_t name,
                          const struct ct_arg *args, int nargs)
{
    write_event(seq, track, ts_ns, CT_PB__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN, name, args, nargs,
                NULL);
}

void ct_write_slice_end(struct ct_sequence *seq, uint64_t track, uint64_t ts_ns)
{
    note_time(seq, ts_ns);
    if ((track == 0 || track == seq->default_track) && seq->end_len) {
        append_packet(seq->writer, 1, ts_ns, seq->end_body, seq->end_len);
        return;
    }
    write_event(seq, track, ts_ns, CT_PB__TRACK_EVENT__TYPE__TYPE_SLICE_END, 0, NULL, 0, NULL);
}

void ct_write_slice(struct ct_sequence *seq, uint64_t track, uint64_t begin_ns, uint64_t end_ns,
                    uint32_t name, const struct ct_arg *args, int nargs)
{
    ct_write_flow_slice(seq, track, begin_ns, end_ns, name, args, nargs, NULL);
}

void ct_write_flow_slice(struct ct_sequence *seq, uint64_t track, uint64_t begin_ns,
                         uint64_t end_ns, uint32_t name, const struct ct_arg *args, int nargs,
                         const struct ct_flow *flow)
{
    write_event(seq, track, begin_ns, CT_PB__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN, name, args, nargs,
                flow);
    ct_write_slice_end(seq, track, end_ns);
}

void ct_write_instant(struct ct_sequence *seq, uint64_t track, uint64_t ts_ns, uint32_t name,
                      const struct ct_arg *args, int nargs)
{
    write_event(seq, track, ts_ns, CT_PB__TRACK_EVENT__TYPE__TYPE_INSTANT, name, args, nargs, NULL);
}

void ct_write_counter(struct ct_sequence *seq, uint64_t track, uint64_t ts_ns, int64_t value)
{
    CtPb__TrackEvent event = CT_PB__TRACK_EVENT__INIT;
    CtPb__TracePacket packet = CT_PB__TRACE_PACKET__INIT;
    event.has_type = 1;
    event.type = CT_PB__TRACK_EVENT__TYPE__TYPE_COUNTER;
    event.has_track_uuid = 1;
    event.track_uuid = track;
    event.has_counter_value = 1;
    event.counter_value = value;
    packet.track_event = &event;
    emit_packet(seq, &packet, 1, ts_ns);
    ct_replay_counter(&seq->writer->replay, track, ts_ns, value);
}

static void write_descriptor(struct ct_sequence *seq, CtPb__TrackDescriptor *descriptor);

/* Keeps the descriptor for the chunks to come (chunk_replay.c). */
static void note_descriptor(struct ct_sequence *seq, const CtPb__TrackDescriptor *descriptor)
{
    uint8_t packed[MAX_PACKET];
    size_t size = ct_pb__track_descriptor__get_packed_size(descriptor);
    if (seq->live && size <= sizeof packed)
        ct_replay_descriptor(&seq->writer->replay, seq, descriptor->uuid, packed,
                             ct_pb__track_descriptor__pack(descriptor, packed));
}

/* Writes a kept descriptor again. */
static void describe_again(struct ct_sequence *seq, const uint8_t *packed, size_t len)
{
    CtPb__TrackDescriptor *d = ct_pb__track_descriptor__unpack(NULL, len, packed);
    if (!d)
        return;
    write_descriptor(seq, d);
    ct_pb__track_descriptor__free_unpacked(d, NULL);
}

static void write_descriptor(struct ct_sequence *seq, CtPb__TrackDescriptor *descriptor)
{
    note_descriptor(seq, descriptor);
    CtPb__TracePacket packet = CT_PB__TRACE_PACKET__INIT;
    CtPb__TracePacketDefaults defaults = CT_PB__TRACE_PACKET_DEFAULTS__INIT;
    CtPb__TrackEventDefaults event_defaults = CT_PB__TRACK_EVENT_DEFAULTS__INIT;
    packet.track_descriptor = descriptor;
    /* The sequence's first packet also names its default track, so events on
     * it need not repeat the uuid. */
    if (!seq->started && seq->default_track) {
        event_defaults.has_track_uuid = 1;
        event_defaults.track_uuid = seq->default_track;
        defaults.track_event_defaults = &event_defaults;
        packet.trace_packet_defaults = &defaults;
    }
    emit_packet(seq, &packet, 0, 0);
}

void ct_write_process_track(struct ct_sequence *seq, uint64_t uuid, int32_t pid, const char *name,
                            const char *const *cmdline, int argc)
{
    CtPb__TrackDescriptor d = CT_PB__TRACK_DESCRIPTOR__INIT;
    CtPb__ProcessDescriptor p = CT_PB__PROCESS_DESCRIPTOR__INIT;
    d.has_uuid = 1;
    d.uuid = uuid;
    p.has_pid = 1;
    p.pid = pid;
    p.process_name = (char *)name;
    p.cmdline = (char **)cmdline;
    p.n_cmdline = (size_t)argc;
    d.process = &p;
    write_descriptor(seq, &d);
}

void ct_write_thread_track(struct ct_sequence *seq, uint64_t uuid, int32_t pid, int32_t tid,
                           const char *name)
{
    CtPb__TrackDescriptor d = CT_PB__TRACK_DESCRIPTOR__INIT;
    CtPb__ThreadDescriptor t = CT_PB__THREAD_DESCRIPTOR__INIT;
    d.has_uuid = 1;
    d.uuid = uuid;
    t.has_pid = 1;
    t.pid = pid;
    t.has_tid = 1;
    t.tid = tid;
    t.thread_name = name && *name ? (char *)name : NULL;
    d.thread = &t;
    write_descriptor(seq, &d);
}

/* A named track under `parent`; a counter track when `counter` is given. */
static void write_child_track(struct ct_sequence *seq, uint64_t uuid, uint64_t parent,
                              const char *name, CtPb__CounterDescriptor *counter)
{
    CtPb__TrackDescriptor d = CT_PB__TRACK_DESCRIPTOR__INIT;
    d.has_uuid = 1;
    d.uuid = uuid;
    d.has_parent_uuid = 1;
    d.parent_uuid = parent;
    d.name = (char *)name;
    d.counter = counter;
    write_descriptor(seq, &d);
}

void ct_write_counter_track(struct ct_sequence *seq, uint64_t uuid, uint64_t parent,
                            const char *name, enum ct_counter_unit unit)
{
    CtPb__CounterDescriptor c = CT_PB__COUNTER_DESCRIPTOR__INIT;
    c.has_unit = 1;
    c.unit = (CtPb__CounterDescriptor__Unit)unit;
    write_child_track(seq, uuid, parent, name, &c);
}

void ct_write_named_track(struct ct_sequence *seq, uint64_t uuid, uint64_t parent, const char *name)
{
    write_child_track(seq, uuid, parent, name, NULL);
}

int ct_writer_chunk_due(const struct ct_writer *w)
{
    return ct_chunks_due(&w->chunks);
}

void ct_writer_new_chunk(struct ct_writer *w, uint64_t start_ns)
{
    ct_writer_flush(w);
    ct_chunks_begin(&w->chunks, start_ns ? start_ns : w->latest_ts);
    ct_replay_all(&w->replay, sequence_restart, describe_again);
}

uint32_t ct_writer_chunk(const struct ct_writer *w)
{
    return ct_chunks_current(&w->chunks);
}

void ct_writer_on_gap(struct ct_writer *w, uint64_t track,
                      void (*write)(struct ct_sequence *seq, const struct ct_gap *gap, void *ctx),
                      void *ctx)
{
    w->gap_track = track;
    w->gap_writer = write;
    w->gap_ctx = ctx;
}

void ct_writer_refresh_gap(struct ct_writer *w)
{
    ct_chunks_refresh_gap(&w->chunks);
}

/* Packets `write` makes into `o` rather than the batch; their size. */
static size_t write_aside(struct ct_writer *w, struct output *o, void (*write)(void *ctx),
                          void *ctx, const uint8_t **packets)
{
    o->used = 0;
    o->cut = (struct ct_writer_cut){0, 0};
    o->kept_back = o == &w->gap ? CUT_NOTE_ROOM : 0;
    w->out = o;
    write(ctx);
    w->out = &w->frame;
    *packets = o->buf;
    return o->used;
}

struct gap_call {
    struct ct_writer *writer;
    const struct ct_gap *gap;
};

static void write_gap(void *ctx)
{
    const struct gap_call *call = ctx;
    struct ct_sequence seq;
    sequence_fresh(&seq, call->writer, call->writer->gap_track);
    if (call->writer->gap_writer)
        call->writer->gap_writer(&seq, call->gap, call->writer->gap_ctx);
    free_interning(&seq);
}

struct ct_writer_cut ct_writer_aside_cut(const struct ct_writer *w)
{
    return w->out->cut;
}

void ct_writer_aside_release_room(struct ct_writer *w)
{
    w->out->kept_back = 0;
}

size_t ct_writer_gap_packets(struct ct_writer *w, const struct ct_gap *gap, const uint8_t **packets)
{
    struct gap_call call = {w, gap};
    return write_aside(w, &w->gap, write_gap, &call, packets);
}

size_t ct_writer_aside(struct ct_writer *w, void (*write)(void *ctx), void *ctx,
                       const uint8_t **packets)
{
    return write_aside(w, &w->aside, write, ctx, packets);
}

void ct_sequence_aside(struct ct_sequence *seq, struct ct_writer *w, uint64_t default_track)
{
    sequence_fresh(seq, w, default_track);
}

void ct_sequence_aside_done(struct ct_sequence *seq)
{
    free_interning(seq);
}
