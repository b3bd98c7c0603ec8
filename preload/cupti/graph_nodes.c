/*
 * CUDA graphs as CUPTI's resource callbacks tell of them: each node an API
 * call made (a launch, copy, set, allocation or free captured on a stream,
 * or a node the explicit API added), each clone instantiation made of a
 * node or graph, and each executable graph's making and end, sent as
 * CT_REC_GRAPH records keyed by the begin of the call they happened in.
 * A node record is what tells a captured launch from one that ran
 * (cuda_runtime_api.h, cudaStreamBeginCapture: "all operations pushed into
 * the stream will not be executed, but will instead be captured into a
 * graph"), and the call site taken here, once per call whatever launch
 * sampling decided, is what names every replay of the node. CUPTI calls
 * these on the thread of the API call, inside it (cupti_callbacks.h:
 * "CUDA graph node is created."), after that call's API-enter callback.
 * Building graphs is rare (capture at warm-up, again when shapes change),
 * and none of this is on the launch path.
 */
#include "preload/cupti/internal.h"

#include "preload/core/clock.h"
#include "preload/cupti/api.h"
#include "preload/cupti/gpu_trace.h"
#include "preload/hooks/graph_memory.h"
#include "preload/sites/call_site.h"

/* The call whose site was sent last from here, by its begin clock. */
static __thread uint64_t site_sent_for CT_TLS;

void ct_cupti_graph_callbacks_enable(CUpti_SubscriberHandle subscriber)
{
    static const CUpti_CallbackId ids[] = {
        CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED,
        CUPTI_CBID_RESOURCE_GRAPH_CREATED,     CUPTI_CBID_RESOURCE_GRAPH_CLONED,
        CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED, CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING,
    };
    if (!ct_cupti.get_graph_node_id || !ct_cupti.get_graph_id)
        return; /* a CUPTI without graph ids could name no replay */
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        ct_cupti.enable_callback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, ids[i]);
}

static uint64_t node_id(CUgraphNode node)
{
    uint64_t id = 0;
    if (node)
        ct_cupti.get_graph_node_id(node, &id);
    return id;
}

static uint64_t graph_id(CUgraph graph)
{
    uint32_t id = 0;
    if (graph)
        ct_cupti.get_graph_id(graph, &id);
    return id;
}

static uint64_t exec_id(CUgraphExec exec)
{
    uint32_t id = 0;
    if (exec && ct_cupti.get_graph_exec_id)
        ct_cupti.get_graph_exec_id(exec, &id);
    return id;
}

/* The site of the call a node was made in, sent once per call: a
 * captured launch is otherwise sampled like any launch. */
static void send_site(uint64_t begin)
{
    if (!ct_call_sites_on || site_sent_for == begin)
        return;
    site_sent_for = begin;
    ct_call_site_capture(begin, NULL, 1);
}

static void send(uint16_t event, uint64_t begin, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3)
{
    struct ct_ring *ring = ct_ring_current();
    if (!ring)
        return;
    struct ct_record r = {
        .type = CT_REC_GRAPH, .func = event, .begin = begin, .end = begin, .arg = {a0, a1, a2, a3}};
    ct_emit_record(ring, &r, 1);
}

void ct_cupti_graph_event(CUpti_CallbackId cbid, const CUpti_ResourceData *data)
{
    const CUpti_GraphData *g = data ? data->resourceDescriptor : NULL;
    if (!g)
        return;
    uint64_t begin = ct_cupti_call_begin();
    switch (cbid) {
    case CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED:
        send_site(begin);
        send(CT_GRAPH_NODE_MADE, begin, node_id(g->node), graph_id(g->graph), (uint64_t)g->nodeType,
             0);
        break;
    case CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED:
        if (g->nodeType == CU_GRAPH_NODE_TYPE_MEM_ALLOC)
            ct_graph_memory_follow();
        send(CT_GRAPH_NODE_CLONED, begin, node_id(g->node), node_id(g->originalNode),
             graph_id(g->graph), (uint64_t)g->nodeType);
        break;
    case CUPTI_CBID_RESOURCE_GRAPH_CREATED:
        send(CT_GRAPH_GRAPH_MADE, begin, graph_id(g->graph), 0, 0, 0);
        break;
    case CUPTI_CBID_RESOURCE_GRAPH_CLONED:
        send(CT_GRAPH_GRAPH_CLONED, begin, graph_id(g->graph), graph_id(g->originalGraph), 0, 0);
        break;
    case CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED:
        send(CT_GRAPH_EXEC_MADE, begin, exec_id(g->graphExec), graph_id(g->graph),
             (uintptr_t)g->graphExec, 0);
        break;
    case CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING:
        send(CT_GRAPH_EXEC_GONE, begin, exec_id(g->graphExec), 0, (uintptr_t)g->graphExec, 0);
        break;
    default:
        break;
    }
}
