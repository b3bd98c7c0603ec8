/*
 * CUDA graphs as the collector follows them (cuda_graphs.c): the nodes the
 * program's calls made, with the site of each, the clones instantiation
 * made of them, and the executable graphs, so that a call that captured
 * work is told from one that ran it and every replayed kernel, copy and
 * set is named by the node, graph and line that made it.
 */
#ifndef CT_COLLECTOR_CUDA_GRAPHS_H
#define CT_COLLECTOR_CUDA_GRAPHS_H

#include <stdint.h>

#include "collector/tracks/call_sites.h"
#include "cudatrace/record.h"

/* What a call did to graphs: the node it made (0: none, the call ran as it
 * would outside a graph), of which CUgraphNodeType; the graph it made the
 * node in, began capturing into, made, instantiated, launched or uploaded
 * (0: none). */
struct ct_graph_call {
    uint64_t node;
    uint32_t graph, type;
};

/* A replayed piece of work's origin: the node it was made as (not the
 * clone an executable graph ran), that node's graph and the site of the
 * call that made it; node 0 when the work came from no graph. */
struct ct_graph_origin {
    uint64_t node;
    uint32_t graph;
    int known; /* the node was seen made or cloned */
    struct ct_call_site site;
};

void ct_cuda_graphs_start(uint32_t rings);
/* A CT_REC_GRAPH record from ring `index`. */
void ct_cuda_graphs_record(uint32_t index, const struct ct_record *r, struct ct_call_sites *sites);
/* What the call `r` from ring `index` did to graphs. */
struct ct_graph_call ct_cuda_graphs_call(uint32_t index, const struct ct_record *r);
/* The origin of work a graph launch ran as node `node` of graph `graph`
 * (CUPTI's graphNodeId and graphId). */
struct ct_graph_origin ct_cuda_graphs_origin(uint64_t node, uint32_t graph);
/* The nodes the executable graph `handle` runs work as (kernels, copies,
 * sets), each named by the node it was made as; *count 0 when unknown. */
const uint64_t *ct_cuda_graphs_exec_nodes(uint64_t handle, uint32_t *count);
/* Forgets what ring `index` held (its thread ended). */
void ct_cuda_graphs_reset(uint32_t index);

#endif
