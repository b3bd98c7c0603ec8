/*
 * The tool side of NVTX: ranges and marks (torch.cuda.nvtx.range,
 * autograd's emit_nvtx, a framework's own step markers) as records, so the
 * trace shows the program's structure around its CUDA calls. NVTX finds its
 * tool through NVTX_INJECTION64_PATH (`cudatrace run` sets it to this
 * library; under a bare LD_PRELOAD, nvtx_lookup.c answers NVTX's getenv of
 * it) and calls its InitializeInjectionNvtx2 with a table of function
 * slots, which we fill. (NVTX's other way in, its static-injection pointer,
 * is hidden inside each library that carries NVTX's header-only code, so a
 * preload cannot reach it; nor does the preload set the variable itself:
 * that would change the program's environment.) The layouts and ids below are
 * NVTX's (nvtx3/nvToolsExt.h, nvtxDetail/nvtxTypes.h). Range records are
 * kept like syncs: a push whose pop were lost would misnest everything
 * after it.
 */
#include <stdint.h>
#include <string.h>
#include <wchar.h>

#include "preload/core/capture.h"
#include "preload/core/clock.h"
#include "preload/core/export.h"
#include "preload/core/ring.h"

typedef void (*nvtx_function)(void);
typedef const void *(*nvtx_get_export_table)(uint32_t id);

struct nvtx_export_table_callbacks {
    size_t struct_size;
    int (*get_module_function_table)(int module, nvtx_function ***table, unsigned *size);
};

struct nvtx_event_attributes {
    uint16_t version, size;
    uint32_t category;
    int32_t color_type;
    uint32_t color;
    int32_t payload_type, reserved0;
    uint64_t payload;
    int32_t message_type;
    union {
        const char *ascii;
        const wchar_t *unicode;
        const void *registered;
    } message;
};

enum {
    NVTX_ETID_CALLBACKS = 1,
    NVTX_CB_MODULE_CORE = 1,
    NVTX_CB_MODULE_CORE2 = 5,
    NVTX_CBID_CORE_MarkEx = 1,
    NVTX_CBID_CORE_MarkA = 2,
    NVTX_CBID_CORE_RangePushEx = 8,
    NVTX_CBID_CORE_RangePushA = 9,
    NVTX_CBID_CORE_RangePop = 11,
    NVTX_CBID_CORE2_DomainMarkEx = 1,
    NVTX_CBID_CORE2_DomainRangePushEx = 4,
    NVTX_CBID_CORE2_DomainRangePop = 5,
    NVTX_MESSAGE_TYPE_ASCII = 1,
};

static __thread int depth CT_TLS;
/* Bit d: the push to depth d was recorded, so its pop must be too; a push
 * that found no room is popped unrecorded, and nothing misnests. */
static __thread uint64_t recorded_pushes CT_TLS;
/* Bit d: the push to depth d opened the capture range (CUDATRACE_CAPTURE). */
static __thread uint64_t capture_pushes CT_TLS;

/* The record, after its name when it has one; whether it was written. A
 * pop goes wherever its push went, inside a capture window or not. */
static int record(enum ct_nvtx_event event, const char *name, int level)
{
    struct ct_ring *ring = ct_ring_current();
    if (!ring || (event != CT_NVTX_POP && !ct_capture_recording()))
        return 0;
    uint64_t now = ct_clock_now();
    if (name && ct_emit_string(ring, CT_STR_NVTX_NAME, now, name) != 0)
        return 0;
    struct ct_record r = {
        .type = CT_REC_NVTX, .func = (uint16_t)event, .result = level, .begin = now, .end = now};
    return ct_emit_record(ring, &r, event != CT_NVTX_MARK);
}

static const char *message_of(const struct nvtx_event_attributes *attributes)
{
    if (!attributes || attributes->message_type != NVTX_MESSAGE_TYPE_ASCII ||
        !attributes->message.ascii)
        return "(nvtx range)"; /* unicode and registered strings are not read */
    return attributes->message.ascii;
}

static int range_push(const char *message)
{
    uint64_t bit = depth < 64 ? 1ull << depth : 0;
    if (bit && ct_capture_nvtx_push(message ? message : ""))
        capture_pushes |= bit;
    else
        capture_pushes &= ~bit;
    if (bit && record(CT_NVTX_PUSH, message ? message : "", depth))
        recorded_pushes |= bit;
    else
        recorded_pushes &= ~bit;
    return depth++;
}

static int range_push_a(const char *message)
{
    return range_push(message);
}

static int range_push_ex(const struct nvtx_event_attributes *attributes)
{
    return range_push(message_of(attributes));
}

static int range_pop(void)
{
    if (depth == 0)
        return -1; /* a pop with no push: NVTX's own answer, and nothing to close */
    --depth;
    if (depth < 64 && (recorded_pushes & 1ull << depth))
        record(CT_NVTX_POP, NULL, depth);
    if (depth < 64 && (capture_pushes & 1ull << depth))
        ct_capture_nvtx_pop();
    return depth;
}

static void mark_a(const char *message)
{
    record(CT_NVTX_MARK, message ? message : "", depth);
}

static void mark_ex(const struct nvtx_event_attributes *attributes)
{
    record(CT_NVTX_MARK, message_of(attributes), depth);
}

static int domain_range_push_ex(const void *domain, const struct nvtx_event_attributes *a)
{
    (void)domain;
    return range_push_ex(a);
}

static int domain_range_pop(const void *domain)
{
    (void)domain;
    return range_pop();
}

static void domain_mark_ex(const void *domain, const struct nvtx_event_attributes *a)
{
    (void)domain;
    mark_ex(a);
}

static void attach(const struct nvtx_export_table_callbacks *callbacks, int module,
                   const unsigned *ids, const nvtx_function *functions, size_t count)
{
    nvtx_function **table = NULL;
    unsigned size = 0;
    if (!callbacks->get_module_function_table(module, &table, &size) || !table)
        return;
    for (size_t i = 0; i < count; i++)
        if (ids[i] < size && table[ids[i]])
            *table[ids[i]] = functions[i];
}

CT_EXPORT int InitializeInjectionNvtx2(nvtx_get_export_table get_export_table)
{
    const struct nvtx_export_table_callbacks *callbacks =
        get_export_table ? get_export_table(NVTX_ETID_CALLBACKS) : NULL;
    if (!callbacks || callbacks->struct_size < sizeof *callbacks)
        return 0;
    static const unsigned core_ids[] = {NVTX_CBID_CORE_RangePushA, NVTX_CBID_CORE_RangePushEx,
                                        NVTX_CBID_CORE_RangePop, NVTX_CBID_CORE_MarkA,
                                        NVTX_CBID_CORE_MarkEx};
    const nvtx_function core[] = {(nvtx_function)range_push_a, (nvtx_function)range_push_ex,
                                  (nvtx_function)range_pop, (nvtx_function)mark_a,
                                  (nvtx_function)mark_ex};
    static const unsigned core2_ids[] = {NVTX_CBID_CORE2_DomainRangePushEx,
                                         NVTX_CBID_CORE2_DomainRangePop,
                                         NVTX_CBID_CORE2_DomainMarkEx};
    const nvtx_function core2[] = {(nvtx_function)domain_range_push_ex,
                                   (nvtx_function)domain_range_pop, (nvtx_function)domain_mark_ex};
    attach(callbacks, NVTX_CB_MODULE_CORE, core_ids, core, 5);
    attach(callbacks, NVTX_CB_MODULE_CORE2, core2_ids, core2, 3);
    return 1;
}
