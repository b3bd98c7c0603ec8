/*
 * Physical device memory made through the driver's virtual-memory API, as
 * both the collector's counter and the report's usage model follow it. A
 * handle's memory is made by cuMemCreate and goes only when the handle is
 * released and every mapping of it unmapped, in either order (an allocator
 * may release the handle as soon as it is mapped): each handle holds one
 * reference for itself and one per mapping. A handle mapped at two
 * addresses is its memory once. The calls are applied in time order.
 */
#ifndef CT_COMMON_VMM_LEDGER_H
#define CT_COMMON_VMM_LEDGER_H

#include <stdint.h>

#include "common/u64_map.h"
#include "cudatrace/functions.h"

enum ct_vmm_op { CT_VMM_NONE, CT_VMM_CREATE, CT_VMM_RELEASE, CT_VMM_MAP, CT_VMM_UNMAP };

struct ct_vmm_ledger {
    struct ct_u64_map sizes, refs;              /* handle -> bytes, references */
    struct ct_u64_map mapped_handle, mapped_at; /* mapping's address -> handle, its size */
    uint64_t bytes;                             /* physical memory held */
};

/* What a call of `fn` does to physical memory (reserving, freeing and
 * granting access to addresses does nothing to it). */
enum ct_vmm_op ct_vmm_op_of(enum ct_function fn);

/* Applies one successful call: `ptr` and `bytes` the address range (a map,
 * an unmap) or the size (a create), `handle` the handle. `freed` is told of
 * each handle whose memory went. */
void ct_vmm_apply(struct ct_vmm_ledger *l, enum ct_vmm_op op, uint64_t ptr, uint64_t bytes,
                  uint64_t handle, void (*freed)(uint64_t handle, uint64_t bytes, void *ctx),
                  void *ctx);

void ct_vmm_ledger_free(struct ct_vmm_ledger *l);

#endif
