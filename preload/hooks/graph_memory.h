/*
 * Following what the CUDA graphs' allocator holds (graph_memory.c).
 */
#ifndef CT_PRELOAD_GRAPH_MEMORY_H
#define CT_PRELOAD_GRAPH_MEMORY_H

/* An executable graph with memory-allocation nodes was made: from now on
 * the calls that may change the graphs' memory are followed by a reading. */
void ct_graph_memory_follow(void);
/* After a call of `func`: a reading, if `func` may have changed it. */
void ct_graph_memory_after(unsigned func);

#endif
