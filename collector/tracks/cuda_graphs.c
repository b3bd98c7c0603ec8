/*
 * The CUDA graphs of a process, from the preload's CT_REC_GRAPH records
 * (CUPTI's resource callbacks): every node a call made, with that call's
 * site, and every clone instantiation made of a node or a graph, so that
 * work a graph launch ran, which carries the clone's ids (or, where CUPTI
 * gives them, the original's), is traced back to the node it was captured
 * or added as. A node record comes on the ring of the call that made it,
 * ahead of that call's own record, so the call is known to have captured
 * its work (not run it) when its record arrives; so do the records of a
 * graph made (a capture begun) and of an executable graph made, whose
 * handle names the graph every later launch and upload of it runs, and
 * the nodes a launch of it starts a flow to. The tables grow with the
 * graphs a run builds, which is bounded by NODES_MAX: a program that
 * rebuilds graphs for ever stops being named there, and its work is then
 * counted as from an unknown node.
 */
#include "collector/tracks/cuda_graphs.h"

#include <stdlib.h>

#include "common/array.h"
#include "common/u64_map.h"

#define NODES_MAX (1u << 20)
#define CLONE_DEPTH_MAX 8 /* a clone of a clone: a cloned graph, instantiated */
#define WORK_NODE_TYPES 3 /* cuda.h's CUgraphNodeType: KERNEL 0, MEMCPY 1, MEMSET 2 */

struct node {
    uint64_t id, original; /* original: the node this one is a clone of, 0 for a made one */
    uint32_t graph, type;
    struct ct_call_site site;
};

/* What the call that began at `begin` on a ring did, until its record. */
struct made {
    uint64_t begin;
    struct ct_graph_call call;
};

/* Node ids: an executable graph's, or a ring's clones not yet closed by
 * the EXEC_MADE of the instantiation that made them. */
struct node_list {
    uint64_t *ids;
    uint32_t count;
};

struct exec {
    uint32_t graph;
    struct node_list work; /* the nodes its kernels, copies and sets were made as */
};

static struct {
    struct node *nodes;
    size_t count;
    struct ct_u64_map by_id;        /* node id -> index + 1 */
    struct ct_u64_map graph_clones; /* clone graph id -> original graph id */
    struct ct_u64_map exec_index;   /* executable graph handle -> index + 1 in execs */
    struct exec *execs;
    size_t exec_count;
    size_t *free_execs; /* slots of destroyed executable graphs, for the next ones */
    size_t free_count;
    struct made *made;        /* per ring */
    struct node_list *clones; /* per ring */
} g;

void ct_cuda_graphs_start(uint32_t rings)
{
    g.made = calloc(rings, sizeof *g.made);
    g.clones = calloc(rings, sizeof *g.clones);
    if (!g.made || !g.clones)
        abort();
}

static void add_node(struct node n)
{
    if (g.count >= NODES_MAX)
        return;
    g.nodes = ct_array_grow(g.nodes, g.count, sizeof *g.nodes);
    g.nodes[g.count++] = n;
    ct_u64_map_put(&g.by_id, n.id, g.count);
}

static const struct node *find_node(uint64_t id)
{
    const uint64_t *at = id ? ct_u64_map_find(&g.by_id, id) : NULL;
    return at ? &g.nodes[*at - 1] : NULL;
}

/* Notes what the call that began at `begin` did; its first node is the one
 * its annotations name. */
static void call_made(uint32_t index, uint64_t begin, struct ct_graph_call call)
{
    struct made *m = &g.made[index];
    if (m->begin == begin && m->call.node)
        return;
    *m = (struct made){begin, call};
}

static void add_id(struct node_list *l, uint64_t id)
{
    l->ids = ct_array_grow(l->ids, l->count, sizeof *l->ids);
    l->ids[l->count++] = id;
}

/* An executable graph made: the clones its instantiation made on this ring
 * are its nodes, each kept as the node it was made as. */
static void exec_made(uint32_t index, uint64_t handle, uint32_t graph)
{
    struct node_list *clones = &g.clones[index];
    struct exec e = {graph, {NULL, 0}};
    for (uint32_t i = 0; i < clones->count; i++)
        add_id(&e.work, ct_cuda_graphs_origin(clones->ids[i], 0).node);
    clones->count = 0;
    uint64_t *at = ct_u64_map_find(&g.exec_index, handle);
    if (at) { /* a handle used again after its graph's end went unseen */
        free(g.execs[*at - 1].work.ids);
        g.execs[*at - 1] = e;
        return;
    }
    size_t slot;
    if (g.free_count) {
        slot = g.free_execs[--g.free_count];
    } else {
        g.execs = ct_array_grow(g.execs, g.exec_count, sizeof *g.execs);
        slot = g.exec_count++;
    }
    g.execs[slot] = e;
    ct_u64_map_put(&g.exec_index, handle, slot + 1);
}

/* Its handle no longer names it, and its slot serves the next one made:
 * memory follows the executable graphs alive, not all ever made. */
static void exec_gone(uint64_t handle)
{
    uint64_t at;
    if (!ct_u64_map_remove(&g.exec_index, handle, &at))
        return;
    free(g.execs[at - 1].work.ids);
    g.execs[at - 1] = (struct exec){0, {NULL, 0}};
    g.free_execs = ct_array_grow(g.free_execs, g.free_count, sizeof *g.free_execs);
    g.free_execs[g.free_count++] = (size_t)(at - 1);
}

void ct_cuda_graphs_record(uint32_t index, const struct ct_record *r, struct ct_call_sites *sites)
{
    uint32_t graph = (uint32_t)r->arg[1];
    switch (r->func) {
    case CT_GRAPH_NODE_MADE: {
        struct node n = {r->arg[0], 0, graph, (uint32_t)r->arg[2],
                         ct_call_sites_peek(sites, index, r->begin)};
        add_node(n);
        call_made(index, r->begin, (struct ct_graph_call){n.id, n.graph, n.type});
        break;
    }
    case CT_GRAPH_GRAPH_MADE:
        call_made(index, r->begin, (struct ct_graph_call){0, (uint32_t)r->arg[0], 0});
        break;
    case CT_GRAPH_EXEC_MADE:
        exec_made(index, r->arg[2], graph);
        call_made(index, r->begin, (struct ct_graph_call){0, graph, 0});
        break;
    case CT_GRAPH_EXEC_GONE:
        exec_gone(r->arg[2]);
        break;
    case CT_GRAPH_NODE_CLONED:
        add_node(
            (struct node){r->arg[0], r->arg[1], (uint32_t)r->arg[2], (uint32_t)r->arg[3], {0, 0}});
        if (r->arg[3] < WORK_NODE_TYPES)
            add_id(&g.clones[index], r->arg[0]);
        break;
    case CT_GRAPH_GRAPH_CLONED:
        if (r->arg[0] && r->arg[0] != r->arg[1])
            ct_u64_map_put(&g.graph_clones, r->arg[0], r->arg[1]);
        break;
    default:
        break;
    }
}

static const struct exec *find_exec(uint64_t handle)
{
    const uint64_t *at = handle ? ct_u64_map_find(&g.exec_index, handle) : NULL;
    return at ? &g.execs[*at - 1] : NULL;
}

/* The graph an executable graph handle was made from, 0 when unknown. */
static uint32_t graph_of_exec(uint64_t handle)
{
    const struct exec *e = find_exec(handle);
    return e ? e->graph : 0;
}

const uint64_t *ct_cuda_graphs_exec_nodes(uint64_t handle, uint32_t *count)
{
    const struct exec *e = find_exec(handle);
    *count = e ? e->work.count : 0;
    return e ? e->work.ids : NULL;
}

struct ct_graph_call ct_cuda_graphs_call(uint32_t index, const struct ct_record *r)
{
    struct made *m = &g.made[index];
    if (m->begin == r->begin && (m->call.node || m->call.graph)) {
        struct ct_graph_call call = m->call;
        *m = (struct made){0, {0, 0, 0}};
        return call;
    }
    switch (r->func) {
    case CT_FN_cudaGraphLaunch:
    case CT_FN_cudaGraphLaunch_ptsz:
    case CT_FN_cuGraphLaunch:
        return (struct ct_graph_call){0, graph_of_exec(r->arg[0]), 0};
    case CT_FN_cudaGraphUpload:
    case CT_FN_cudaGraphUpload_ptsz:
    case CT_FN_cuGraphUpload:
        return (struct ct_graph_call){0, graph_of_exec(r->arg[2]), 0};
    default:
        return (struct ct_graph_call){0, 0, 0};
    }
}

/* The graph a clone graph was made from, through any number of clones. */
static uint32_t original_graph(uint32_t graph)
{
    for (int depth = 0; depth < CLONE_DEPTH_MAX; depth++) {
        const uint64_t *from = ct_u64_map_find(&g.graph_clones, graph);
        if (!from)
            break;
        graph = (uint32_t)*from;
    }
    return graph;
}

struct ct_graph_origin ct_cuda_graphs_origin(uint64_t node, uint32_t graph)
{
    const struct node *n = find_node(node);
    for (int depth = 0; n && n->original && depth < CLONE_DEPTH_MAX; depth++) {
        const struct node *from = find_node(n->original);
        if (!from)
            break;
        n = from;
    }
    if (!n)
        return (struct ct_graph_origin){node, original_graph(graph), 0, {0, 0}};
    return (struct ct_graph_origin){n->id, original_graph(n->graph), 1, n->site};
}

void ct_cuda_graphs_reset(uint32_t index)
{
    g.made[index] = (struct made){0, {0, 0, 0}};
    g.clones[index].count = 0;
}
