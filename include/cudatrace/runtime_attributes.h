/*
 * The runtime's attribute numbers that the collector and the report read
 * from a hooked call's arguments (the hook records the attribute asked for
 * and the answer). Neither side includes the CUDA headers, so the numbers
 * live here once; the preload, which does, checks them against the
 * headers (preload/hooks/pool_graph.c).
 */
#ifndef CUDATRACE_RUNTIME_ATTRIBUTES_H
#define CUDATRACE_RUNTIME_ATTRIBUTES_H

/* enum cudaMemPoolAttr: the device memory a pool holds, used or not. */
#define CT_POOL_ATTR_RESERVED_MEM_CURRENT 5 /* cudaMemPoolAttrReservedMemCurrent */
/* enum cudaGraphMemAttributeType: the device memory the graphs' own
 * allocator holds for memory-allocation nodes, used or not. */
#define CT_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT 2 /* cudaGraphMemAttrReservedMemCurrent */

#endif
