/*
 * The virtual-memory API's physical memory by handle (vmm_ledger.h). An
 * unmap names an address range, which may span several mappings laid end to
 * end (an allocator that grew a segment granule by granule unmaps it whole):
 * each mapping that starts inside it is let go, in address order, until a
 * gap. A call about a handle or address the trace never saw made is
 * ignored, so the count never goes below what the trace saw.
 */
#include "common/vmm_ledger.h"

enum ct_vmm_op ct_vmm_op_of(enum ct_function fn)
{
    switch (fn) {
    case CT_FN_cuMemCreate:
        return CT_VMM_CREATE;
    case CT_FN_cuMemRelease:
        return CT_VMM_RELEASE;
    case CT_FN_cuMemMap:
        return CT_VMM_MAP;
    case CT_FN_cuMemUnmap:
        return CT_VMM_UNMAP;
    default:
        return CT_VMM_NONE;
    }
}

/* Drops one reference to `handle`; its memory goes with the last. */
static void let_go(struct ct_vmm_ledger *l, uint64_t handle,
                   void (*freed)(uint64_t handle, uint64_t bytes, void *ctx), void *ctx)
{
    uint64_t *refs = ct_u64_map_find(&l->refs, handle);
    if (!refs)
        return;
    if (--*refs > 0)
        return;
    uint64_t bytes = 0, none;
    ct_u64_map_remove(&l->refs, handle, &none);
    ct_u64_map_remove(&l->sizes, handle, &bytes);
    l->bytes -= bytes;
    if (freed)
        freed(handle, bytes, ctx);
}

static void unmap(struct ct_vmm_ledger *l, uint64_t ptr, uint64_t bytes,
                  void (*freed)(uint64_t handle, uint64_t bytes, void *ctx), void *ctx)
{
    for (uint64_t at = ptr; at - ptr < bytes;) {
        uint64_t size = 0, handle = 0;
        if (!ct_u64_map_remove(&l->mapped_at, at, &size) || size == 0)
            return;
        ct_u64_map_remove(&l->mapped_handle, at, &handle);
        let_go(l, handle, freed, ctx);
        at += size;
    }
}

void ct_vmm_apply(struct ct_vmm_ledger *l, enum ct_vmm_op op, uint64_t ptr, uint64_t bytes,
                  uint64_t handle, void (*freed)(uint64_t handle, uint64_t bytes, void *ctx),
                  void *ctx)
{
    uint64_t *refs;
    switch (op) {
    case CT_VMM_CREATE:
        if (ct_u64_map_find(&l->sizes, handle))
            return;
        ct_u64_map_put(&l->sizes, handle, bytes);
        ct_u64_map_put(&l->refs, handle, 1);
        l->bytes += bytes;
        break;
    case CT_VMM_RELEASE:
        let_go(l, handle, freed, ctx);
        break;
    case CT_VMM_MAP:
        if (!(refs = ct_u64_map_find(&l->refs, handle)) || ct_u64_map_find(&l->mapped_at, ptr))
            return;
        ++*refs;
        ct_u64_map_put(&l->mapped_handle, ptr, handle);
        ct_u64_map_put(&l->mapped_at, ptr, bytes);
        break;
    case CT_VMM_UNMAP:
        unmap(l, ptr, bytes, freed, ctx);
        break;
    default:
        break;
    }
}

void ct_vmm_ledger_free(struct ct_vmm_ledger *l)
{
    ct_u64_map_free(&l->sizes);
    ct_u64_map_free(&l->refs);
    ct_u64_map_free(&l->mapped_handle);
    ct_u64_map_free(&l->mapped_at);
    l->bytes = 0;
}
