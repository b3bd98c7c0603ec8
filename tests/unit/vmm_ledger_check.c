/*
 * Checks of the virtual-memory ledger (common/vmm_ledger.c) on its own: a
 * handle's memory goes when it is released and unmapped, in either order;
 * a handle mapped at two addresses is its memory once; an unmap of a range
 * lets go of every mapping laid end to end in it and stops at a gap; and
 * calls about handles or addresses never seen change nothing.
 */
#include <stddef.h>

#include "common/vmm_ledger.h"
#include "tests/unit/check.h"

#define MIB (1ull << 20)
#define BASE 0x600000000000ull

static uint64_t freed_bytes, freed_count;

static void count_freed(uint64_t handle, uint64_t bytes, void *ctx)
{
    (void)handle;
    (void)ctx;
    freed_bytes += bytes;
    freed_count++;
}

static void apply(struct ct_vmm_ledger *l, enum ct_vmm_op op, uint64_t ptr, uint64_t bytes,
                  uint64_t handle)
{
    ct_vmm_apply(l, op, ptr, bytes, handle, count_freed, NULL);
}

static void release_then_unmap_and_the_other_way(void)
{
    struct ct_vmm_ledger l = {0};
    apply(&l, CT_VMM_CREATE, 0, 2 * MIB, 11);
    apply(&l, CT_VMM_CREATE, 0, 4 * MIB, 12);
    apply(&l, CT_VMM_MAP, BASE, 2 * MIB, 11);
    apply(&l, CT_VMM_MAP, BASE + 2 * MIB, 4 * MIB, 12);
    ct_check_u64(l.bytes, 6 * MIB, "two handles made and mapped");
    apply(&l, CT_VMM_RELEASE, 0, 0, 11);
    ct_check_u64(l.bytes, 6 * MIB, "released while mapped: the memory stays");
    apply(&l, CT_VMM_UNMAP, BASE, 2 * MIB, 0);
    ct_check_u64(l.bytes, 4 * MIB, "then unmapped: it goes");
    apply(&l, CT_VMM_UNMAP, BASE + 2 * MIB, 4 * MIB, 0);
    ct_check_u64(l.bytes, 4 * MIB, "unmapped first, not released: it stays");
    apply(&l, CT_VMM_RELEASE, 0, 0, 12);
    ct_check_u64(l.bytes, 0, "then released: it goes");
    ct_check_u64(freed_count, 2, "each handle told once");
    ct_vmm_ledger_free(&l);
}

static void mapped_twice_counts_once(void)
{
    struct ct_vmm_ledger l = {0};
    freed_count = freed_bytes = 0;
    apply(&l, CT_VMM_CREATE, 0, 8 * MIB, 21);
    apply(&l, CT_VMM_MAP, BASE, 8 * MIB, 21);
    apply(&l, CT_VMM_MAP, BASE + 64 * MIB, 8 * MIB, 21);
    apply(&l, CT_VMM_RELEASE, 0, 0, 21);
    ct_check_u64(l.bytes, 8 * MIB, "one handle at two addresses is its memory once");
    apply(&l, CT_VMM_UNMAP, BASE, 8 * MIB, 0);
    ct_check_u64(l.bytes, 8 * MIB, "one of its mappings left: it stays");
    apply(&l, CT_VMM_UNMAP, BASE + 64 * MIB, 8 * MIB, 0);
    ct_check_u64(l.bytes, 0, "the last mapping gone: it goes");
    ct_check_u64(freed_bytes, 8 * MIB, "and is told with its size");
    ct_vmm_ledger_free(&l);
}

static void an_unmap_spans_mappings_end_to_end(void)
{
    struct ct_vmm_ledger l = {0};
    for (uint64_t k = 0; k < 10; k++) {
        apply(&l, CT_VMM_CREATE, 0, 2 * MIB, 100 + k);
        apply(&l, CT_VMM_MAP, BASE + k * 2 * MIB, 2 * MIB, 100 + k);
        apply(&l, CT_VMM_RELEASE, 0, 0, 100 + k);
    }
    apply(&l, CT_VMM_CREATE, 0, 2 * MIB, 200);
    apply(&l, CT_VMM_MAP, BASE + 22 * MIB, 2 * MIB, 200); /* past a gap of one granule */
    apply(&l, CT_VMM_RELEASE, 0, 0, 200);
    ct_check_u64(l.bytes, 22 * MIB, "eleven granules held");
    apply(&l, CT_VMM_UNMAP, BASE, 24 * MIB, 0);
    ct_check_u64(l.bytes, 2 * MIB, "one unmap let go of the ten laid end to end, up to the gap");
    ct_vmm_ledger_free(&l);
}

static void what_was_never_seen_changes_nothing(void)
{
    struct ct_vmm_ledger l = {0};
    apply(&l, CT_VMM_CREATE, 0, 2 * MIB, 31);
    apply(&l, CT_VMM_RELEASE, 0, 0, 99);
    apply(&l, CT_VMM_MAP, BASE, 2 * MIB, 99);
    apply(&l, CT_VMM_UNMAP, BASE + 2 * MIB, 2 * MIB, 0);
    apply(&l, CT_VMM_CREATE, 0, 2 * MIB, 31); /* the same handle again */
    ct_check_u64(l.bytes, 2 * MIB, "unknown handles and addresses, and a handle twice");
    ct_check_u64(ct_vmm_op_of(CT_FN_cuMemSetAccess), CT_VMM_NONE, "access holds no memory");
    ct_check_u64(ct_vmm_op_of(CT_FN_cuMemCreate), CT_VMM_CREATE, "a create makes it");
    ct_vmm_ledger_free(&l);
}

int main(void)
{
    release_then_unmap_and_the_other_way();
    mapped_twice_counts_once();
    an_unmap_spans_mappings_end_to_end();
    what_was_never_seen_changes_nothing();
    return ct_check_finish();
}
