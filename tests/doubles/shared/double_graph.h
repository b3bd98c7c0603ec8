/*
 * CUDA graphs and stream capture, as the CPU doubles of the driver and the runtime keep them:
 * graphs of nodes, their executable clones, the capture sequences streams are in, and the graphs'
 * own memory (cudaGraphMemAttr*). Header-only like double_util.h: the driver double holds the one
 * instance that counts when it is loaded (the runtime reaches it through ct_gpu_table.graphs) and
 * the runtime double standing alone holds its own. An includer sets ctg.hooks to hear of graph
 * resources (CUPTI's resource callbacks) and to play an executable graph's nodes on its GPU.
 *
 * Nodes run in the order they were added: on one simulated stream no dependency edge changes what
 * happens, so none are kept. Replays move no bytes: a graph's copies and sets are timed work only.
 */
#ifndef CT_DOUBLE_GRAPH_H
#define CT_DOUBLE_GRAPH_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/doubles/shared/double_gpu.h"
#include "tests/doubles/shared/double_util.h"

/* The results, numbered as cudaError_t and CUresult both number them. */
enum ctg_status {
    CTG_OK = 0,
    CTG_INVALID_VALUE = 1,
    CTG_OUT_OF_MEMORY = 2,
    CTG_CAPTURE_UNSUPPORTED = 900,
    CTG_CAPTURE_INVALIDATED = 901,
    CTG_CAPTURE_UNMATCHED = 903,
    CTG_CAPTURE_IMPLICIT = 906,
    CTG_CAPTURE_WRONG_THREAD = 908,
    CTG_UPDATE_FAILURE = 910,
};

/* cudaStreamCaptureMode and CUstreamCaptureMode, and the capture statuses, share these values. */
enum ctg_mode { CTG_MODE_GLOBAL, CTG_MODE_THREAD_LOCAL, CTG_MODE_RELAXED };
enum ctg_capture_status { CTG_STATUS_NONE, CTG_STATUS_ACTIVE, CTG_STATUS_INVALIDATED };

/* cudaGraphNodeType and CUgraphNodeType share these values. */
enum ctg_node_kind {
    CTG_KERNEL = 0,
    CTG_MEMCPY = 1,
    CTG_MEMSET = 2,
    CTG_EMPTY = 5,
    CTG_ALLOC = 10,
    CTG_FREE = 11,
};

struct CUgraphNode_st {
    enum ctg_node_kind kind;
    uint64_t id;          /* cuptiGetGraphNodeId's */
    uint64_t original_id; /* a clone's: the node it was cloned from; else its own id */
    struct CUgraphNode_st *next;
    union {
        struct {
            const char *name;
            uint32_t grid[3], block[3];
            uint32_t dynamic_shared;
        } kernel;
        struct {
            void *dst;
            const void *src;
            CUpti_ActivityMemcpyKind kind;
        } copy;
        struct {
            void *dst;
            uint32_t value;
        } set;
        uint64_t address; /* an allocation's or a free's */
    };
    uint64_t bytes;
};

struct CUgraph_st {
    uint32_t id; /* cuptiGetGraphId's */
    struct CUgraphNode_st *first, *last;
    size_t count;
};

struct CUgraphExec_st {
    uint32_t id;             /* cuptiGetGraphExecId's */
    uint32_t graph_id;       /* the graph it was instantiated from */
    struct CUgraph_st clone; /* its own copy of that graph's nodes */
    bool auto_free;          /* instantiated with AutoFreeOnLaunch */
    bool backed;             /* its allocations have physical memory (uploaded or launched) */
    uint64_t alloc_bytes;    /* what its allocation nodes ask for */
    uint64_t freed_bytes;    /* what its free nodes give back of those */
    uint64_t unfreed;        /* of its allocations, what its launches left alive */
};

#define CTG_MAX_JOINED 16

/* A capture sequence: its graph, the stream it began on and the streams an event wait joined. */
struct ct_capture {
    uint64_t id;
    enum ctg_mode mode;
    pthread_t thread;
    bool invalidated;
    struct CUgraph_st *graph;
    struct ct_gpu_stream *joined[CTG_MAX_JOINED]; /* the first is the origin */
    size_t joined_count;
    struct ct_capture *next;
};

/* What an includer hears: a graph resource made or going (CUPTI_CBID_RESOURCE_*), and an
 * executable graph to play on `stream`. Either may be NULL. */
struct ctg_hooks {
    void (*resource)(CUpti_CallbackId cbid, const CUpti_GraphData *data);
    void (*replay)(const struct CUgraphExec_st *exec, CUstream stream);
};

/* Addresses no host allocation uses, handed to allocation nodes and never touched. */
#define CTG_VA_BASE 0x7f0000000000ull

static struct {
    pthread_mutex_t lock;
    uint64_t next_node_id, next_capture_id;
    uint32_t next_graph_id, next_exec_id;
    uint64_t next_address;
    struct ct_capture *captures; /* the active ones */
    atomic_int active;           /* how many, read without the lock */
    struct {
        uint64_t used, used_high, reserved, reserved_high;
    } memory;
    const struct ctg_hooks *hooks;
} ctg = {.lock = PTHREAD_MUTEX_INITIALIZER,
         .next_node_id = 1,
         .next_capture_id = 1,
         .next_graph_id = 1,
         .next_exec_id = 1,
         .next_address = CTG_VA_BASE};

/* The thread's capture interaction mode: "cudaStreamCaptureModeGlobal: This is the default
 * mode" (cudaThreadExchangeStreamCaptureMode). */
static _Thread_local enum ctg_mode ctg_thread_mode = CTG_MODE_GLOBAL;

static void ctg_announce(CUpti_CallbackId cbid, CUpti_GraphData data)
{
    if (ctg.hooks && ctg.hooks->resource)
        ctg.hooks->resource(cbid, &data);
}

/* ---- graphs and nodes ------------------------------------------------------------------ */

static uint32_t ctg_graph_id(void)
{
    pthread_mutex_lock(&ctg.lock);
    uint32_t id = ctg.next_graph_id++;
    pthread_mutex_unlock(&ctg.lock);
    return id;
}

/* cupti_callbacks.h: "CUPTI_CBID_RESOURCE_GRAPH_CREATED: CUDA graph has been created." */
static enum ctg_status ctg_create(struct CUgraph_st **out)
{
    if (!out || !(*out = calloc(1, sizeof **out)))
        return out ? CTG_OUT_OF_MEMORY : CTG_INVALID_VALUE;
    (*out)->id = ctg_graph_id();
    ctg_announce(CUPTI_CBID_RESOURCE_GRAPH_CREATED, (CUpti_GraphData){.graph = *out});
    return CTG_OK;
}

/* Appends a copy of `like`, with an id of its own, to the graph; NULL when out of memory. */
static struct CUgraphNode_st *ctg_append(struct CUgraph_st *graph,
                                         const struct CUgraphNode_st *like)
{
    struct CUgraphNode_st *node = malloc(sizeof *node);
    if (!node)
        return NULL;
    *node = *like;
    node->next = NULL;
    pthread_mutex_lock(&ctg.lock);
    node->id = ctg.next_node_id++;
    pthread_mutex_unlock(&ctg.lock);
    if (!like->original_id)
        node->original_id = node->id;
    if (graph->last)
        graph->last->next = node;
    else
        graph->first = node;
    graph->last = node;
    graph->count++;
    return node;
}

/* The allocation node in `graph` at `address`, or NULL. */
static const struct CUgraphNode_st *ctg_node_at(const struct CUgraph_st *graph,
                                                enum ctg_node_kind kind, uint64_t address)
{
    for (const struct CUgraphNode_st *n = graph->first; n; n = n->next)
        if (n->kind == kind && n->address == address)
            return n;
    return NULL;
}

/* Programming Guide, Graph Memory Nodes: "CUDA assigns virtual addresses for the graph
 * allocation at node creation time." A free node names what it frees; cudaGraphAddMemFreeNode
 * "will return cudaErrorInvalidValue if the user attempts to free: an allocation twice in the
 * same graph. an address that was not returned by an allocation node. an invalid address." */
static enum ctg_status ctg_prepare_memory(struct CUgraph_st *graph, struct CUgraphNode_st *like)
{
    if (like->kind == CTG_ALLOC) {
        if (!like->bytes)
            return CTG_INVALID_VALUE;
        pthread_mutex_lock(&ctg.lock);
        like->address = ctg.next_address;
        ctg.next_address += (like->bytes + 255) & ~(uint64_t)255;
        pthread_mutex_unlock(&ctg.lock);
    }
    if (like->kind == CTG_FREE) {
        const struct CUgraphNode_st *alloc = ctg_node_at(graph, CTG_ALLOC, like->address);
        if (like->address < CTG_VA_BASE || like->address >= ctg.next_address ||
            ctg_node_at(graph, CTG_FREE, like->address))
            return CTG_INVALID_VALUE;
        like->bytes = alloc ? alloc->bytes : 0; /* only its own graph's count as freed in it */
    }
    return CTG_OK;
}

/* The node a kernel launch makes. */
static inline struct CUgraphNode_st ctg_kernel_node(const char *name, const uint32_t grid[3],
                                                    const uint32_t block[3],
                                                    uint32_t dynamic_shared)
{
    struct CUgraphNode_st node = {.kind = CTG_KERNEL};
    node.kernel.name = name;
    memcpy(node.kernel.grid, grid, sizeof node.kernel.grid);
    memcpy(node.kernel.block, block, sizeof node.kernel.block);
    node.kernel.dynamic_shared = dynamic_shared;
    return node;
}

/* cupti_callbacks.h: "CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED: CUDA graph node is created",
 * announced on the creating thread inside the call that created it. */
static enum ctg_status ctg_add(struct CUgraphNode_st **out, struct CUgraph_st *graph,
                               struct CUgraphNode_st like)
{
    if (!graph)
        return CTG_INVALID_VALUE;
    like.original_id = 0;
    enum ctg_status rc = ctg_prepare_memory(graph, &like);
    if (rc != CTG_OK)
        return rc;
    struct CUgraphNode_st *node = ctg_append(graph, &like);
    if (!node)
        return CTG_OUT_OF_MEMORY;
    if (out)
        *out = node;
    ctg_announce(
        CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED,
        (CUpti_GraphData){.graph = graph, .node = node, .nodeType = (CUgraphNodeType)node->kind});
    return CTG_OK;
}

/* cudaGraphGetNodes: "nodes may be NULL, in which case this function will return the number of
 * nodes in numNodes. Otherwise, numNodes entries will be filled in. If numNodes is higher than
 * the actual number of nodes, the remaining entries in nodes will be set to NULL, and the number
 * of nodes actually obtained will be returned in numNodes." */
static enum ctg_status ctg_nodes(struct CUgraph_st *graph, struct CUgraphNode_st **nodes,
                                 size_t *count)
{
    if (!graph || !count)
        return CTG_INVALID_VALUE;
    if (!nodes) {
        *count = graph->count;
        return CTG_OK;
    }
    size_t i = 0;
    for (struct CUgraphNode_st *n = graph->first; n && i < *count; n = n->next)
        nodes[i++] = n;
    for (size_t j = i; j < *count; j++)
        nodes[j] = NULL;
    *count = i;
    return CTG_OK;
}

static void ctg_free_nodes(struct CUgraph_st *graph, bool announce)
{
    for (struct CUgraphNode_st *n = graph->first, *next; n; n = next) {
        next = n->next;
        if (announce)
            ctg_announce(CUPTI_CBID_RESOURCE_GRAPHNODE_DESTROY_STARTING,
                         (CUpti_GraphData){.graph = graph, .node = n});
        free(n);
    }
}

/* cupti_callbacks.h: "CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING: CUDA graph is about to be
 * destroyed", then "GRAPHNODE_DESTROY_STARTING: CUDA graph node is about to be destroyed" for
 * each of its nodes. */
static enum ctg_status ctg_destroy(struct CUgraph_st *graph)
{
    if (!graph)
        return CTG_INVALID_VALUE;
    ctg_announce(CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING, (CUpti_GraphData){.graph = graph});
    ctg_free_nodes(graph, true);
    free(graph);
    return CTG_OK;
}

/* ---- executable graphs ----------------------------------------------------------------- */

/* "CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED: CUDA graph node is cloned", with originalNode. */
static bool ctg_clone_nodes(struct CUgraphExec_st *exec, const struct CUgraph_st *graph)
{
    for (const struct CUgraphNode_st *n = graph->first; n; n = n->next) {
        struct CUgraphNode_st *copy = ctg_append(&exec->clone, n);
        if (!copy)
            return false;
        exec->alloc_bytes += n->kind == CTG_ALLOC ? n->bytes : 0;
        exec->freed_bytes += n->kind == CTG_FREE ? n->bytes : 0;
        ctg_announce(CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED,
                     (CUpti_GraphData){.graph = &exec->clone,
                                       .originalGraph = (CUgraph)graph,
                                       .node = copy,
                                       .originalNode = (CUgraphNode)n,
                                       .nodeType = (CUgraphNodeType)copy->kind});
    }
    return true;
}

/* An executable graph holds a clone of its graph ("GRAPH_CLONED: CUDA graph is cloned"), then
 * "GRAPHEXEC_CREATED: An executable CUDA graph is created". The flag is
 * cudaGraphInstantiateFlagAutoFreeOnLaunch, "which configures a graph containing memory
 * allocation nodes to automatically free any unfreed memory allocations before the graph is
 * relaunched". */
static enum ctg_status ctg_instantiate(struct CUgraphExec_st **out, struct CUgraph_st *graph,
                                       bool auto_free)
{
    if (!out || !graph)
        return CTG_INVALID_VALUE;
    struct CUgraphExec_st *exec = calloc(1, sizeof *exec);
    if (!exec)
        return CTG_OUT_OF_MEMORY;
    exec->graph_id = graph->id;
    exec->clone.id = ctg_graph_id();
    exec->auto_free = auto_free;
    pthread_mutex_lock(&ctg.lock);
    exec->id = ctg.next_exec_id++;
    pthread_mutex_unlock(&ctg.lock);
    ctg_announce(CUPTI_CBID_RESOURCE_GRAPH_CLONED,
                 (CUpti_GraphData){.graph = &exec->clone, .originalGraph = graph});
    if (!ctg_clone_nodes(exec, graph)) {
        ctg_free_nodes(&exec->clone, false);
        free(exec);
        return CTG_OUT_OF_MEMORY;
    }
    *out = exec;
    ctg_announce(CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED,
                 (CUpti_GraphData){.graph = graph, .graphExec = exec});
    return CTG_OK;
}

/* cudaGraphExecUpdate: the graph must match the executable's topology node for node ("The
 * number of nodes ... must match", each of the same type), else cudaErrorGraphExecUpdateFailure
 * with the result in resultInfo; a match takes the graph's parameters. `result` and `error_node`
 * get the cudaGraphExecUpdateResult (0 success, 2 topology changed, 3 node type changed). */
static enum ctg_status ctg_update(struct CUgraphExec_st *exec, const struct CUgraph_st *graph,
                                  int *result, struct CUgraphNode_st **error_node)
{
    if (!exec || !graph)
        return CTG_INVALID_VALUE;
    *result = graph->count == exec->clone.count ? 0 : 2;
    *error_node = NULL;
    const struct CUgraphNode_st *from = graph->first;
    for (struct CUgraphNode_st *to = exec->clone.first; *result == 0 && to;
         to = to->next, from = from->next)
        if (to->kind != from->kind) {
            *result = 3;
            *error_node = (struct CUgraphNode_st *)from;
        }
    if (*result != 0)
        return CTG_UPDATE_FAILURE;
    from = graph->first;
    for (struct CUgraphNode_st *to = exec->clone.first; to; to = to->next, from = from->next) {
        struct CUgraphNode_st *next = to->next;
        uint64_t id = to->id, original = to->original_id;
        *to = *from;
        to->id = id, to->original_id = original, to->next = next;
    }
    return CTG_OK;
}

/* ---- graph memory ---------------------------------------------------------------------- */

/* Under the lock. */
static void ctg_raise_marks(void)
{
    if (ctg.memory.used > ctg.memory.reserved)
        ctg.memory.reserved = ctg.memory.used;
    if (ctg.memory.used > ctg.memory.used_high)
        ctg.memory.used_high = ctg.memory.used;
    if (ctg.memory.reserved > ctg.memory.reserved_high)
        ctg.memory.reserved_high = ctg.memory.reserved;
}

/* cudaGraphUpload: "Uses memory cached by stream to back the allocations owned by graphExec";
 * a launch of an executable graph never uploaded backs them first. Under the lock. */
static void ctg_back(struct CUgraphExec_st *exec)
{
    if (exec->backed)
        return;
    exec->backed = true;
    uint64_t needed = ctg.memory.used + exec->alloc_bytes;
    if (needed > ctg.memory.reserved)
        ctg.memory.reserved = needed;
    ctg_raise_marks();
}

/* cudaGraphLaunch: "If any allocations created by graphExec remain unfreed (from a previous
 * launch) and graphExec was not instantiated with cudaGraphInstantiateFlagAutoFreeOnLaunch, the
 * launch will fail with cudaErrorInvalidValue." Programming Guide: "Graph allocations are
 * considered recreated every time a graph runs", each living until "GPU execution reaches the
 * freeing graph node". */
static enum ctg_status ctg_run_memory(struct CUgraphExec_st *exec)
{
    pthread_mutex_lock(&ctg.lock);
    bool refused = exec->unfreed && !exec->auto_free;
    if (!refused) {
        ctg_back(exec);
        ctg.memory.used -= exec->unfreed;
        ctg.memory.used += exec->alloc_bytes;
        ctg_raise_marks();
        ctg.memory.used -= exec->freed_bytes;
        exec->unfreed = exec->alloc_bytes - exec->freed_bytes;
    }
    pthread_mutex_unlock(&ctg.lock);
    return refused ? CTG_INVALID_VALUE : CTG_OK;
}

static enum ctg_status ctg_upload(struct CUgraphExec_st *exec)
{
    if (!exec)
        return CTG_INVALID_VALUE;
    pthread_mutex_lock(&ctg.lock);
    ctg_back(exec);
    pthread_mutex_unlock(&ctg.lock);
    return CTG_OK;
}

/* CT_DOUBLE_GRAPH_DESTROY: what becomes of the allocations an executable graph's launches left
 * unfreed when it is destroyed. "free" (the default, which tests/programs/graph_memory.c's
 * figures were taken with): they go with it. "keep": they stay in use, as the Programming
 * Guide's "Graph destruction does not automatically free any live graph-allocated memory"
 * says of graphs. */
static bool ctg_destroy_keeps(void)
{
    const char *how = getenv("CT_DOUBLE_GRAPH_DESTROY");
    return how && strcmp(how, "keep") == 0;
}

/* "GRAPHEXEC_DESTROY_STARTING: An executable CUDA graph is about to be destroyed." */
static enum ctg_status ctg_destroy_exec(struct CUgraphExec_st *exec)
{
    if (!exec)
        return CTG_INVALID_VALUE;
    ctg_announce(CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING,
                 (CUpti_GraphData){.graph = &exec->clone, .graphExec = exec});
    pthread_mutex_lock(&ctg.lock);
    if (!ctg_destroy_keeps())
        ctg.memory.used -= exec->unfreed;
    pthread_mutex_unlock(&ctg.lock);
    ctg_free_nodes(&exec->clone, false);
    free(exec);
    return CTG_OK;
}

/* cudaDeviceGraphMemTrim: "Blocks which are not in use by a graph that is either currently
 * executing or scheduled to execute are freed back to the operating system." */
static void ctg_trim(void)
{
    pthread_mutex_lock(&ctg.lock);
    ctg.memory.reserved = ctg.memory.used;
    pthread_mutex_unlock(&ctg.lock);
}

/* The cudaGraphMemAttributeType figures in its order: used, used high, reserved, reserved high. */
static void ctg_memory(uint64_t figures[4])
{
    pthread_mutex_lock(&ctg.lock);
    figures[0] = ctg.memory.used;
    figures[1] = ctg.memory.used_high;
    figures[2] = ctg.memory.reserved;
    figures[3] = ctg.memory.reserved_high;
    pthread_mutex_unlock(&ctg.lock);
}

/* ---- launches -------------------------------------------------------------------------- */

static enum ctg_status ctg_launch(struct CUgraphExec_st *exec, CUstream stream)
{
    if (!exec)
        return CTG_INVALID_VALUE;
    enum ctg_status rc = ctg_run_memory(exec);
    if (rc == CTG_OK && ctg.hooks && ctg.hooks->replay)
        ctg.hooks->replay(exec, stream);
    return rc;
}

/* ---- capture --------------------------------------------------------------------------- */

/* A stream object's, never the NULL, legacy or per-thread handle's. */
static struct ct_gpu_stream *ctg_stream(CUstream stream)
{
    return (uintptr_t)stream > (uintptr_t)CU_STREAM_PER_THREAD ? (struct ct_gpu_stream *)stream
                                                               : NULL;
}

static bool ctg_is_legacy(CUstream stream)
{
    return stream == NULL || stream == CU_STREAM_LEGACY;
}

/* cudaThreadExchangeStreamCaptureMode: "Sets the calling thread's stream capture interaction
 * mode to the value contained in *mode, and overwrites *mode with the previous mode". */
static enum ctg_status ctg_exchange_mode(int *mode)
{
    if (!mode || *mode < CTG_MODE_GLOBAL || *mode > CTG_MODE_RELAXED)
        return CTG_INVALID_VALUE;
    enum ctg_mode previous = ctg_thread_mode;
    ctg_thread_mode = (enum ctg_mode) * mode;
    *mode = (int)previous;
    return CTG_OK;
}

/* cudaStreamBeginCapture: "Capture may not be initiated if stream is cudaStreamLegacy. ... it may
 * only be initiated if the stream is not already in capture mode." The double captures only
 * streams it created. `graph` is BeginCaptureToGraph's, or NULL for a new one. */
static enum ctg_status ctg_begin(CUstream stream, int mode, struct CUgraph_st *graph)
{
    struct ct_gpu_stream *s = ctg_stream(stream);
    struct ct_capture *c = s ? calloc(1, sizeof *c) : NULL;
    if (!s || s->capture || mode < CTG_MODE_GLOBAL || mode > CTG_MODE_RELAXED || !c ||
        (!graph && ctg_create(&graph) != CTG_OK)) {
        free(c);
        return CTG_INVALID_VALUE;
    }
    *c = (struct ct_capture){.mode = (enum ctg_mode)mode,
                             .thread = pthread_self(),
                             .graph = graph,
                             .joined = {s},
                             .joined_count = 1};
    pthread_mutex_lock(&ctg.lock);
    c->id = ctg.next_capture_id++;
    c->next = ctg.captures;
    ctg.captures = c;
    pthread_mutex_unlock(&ctg.lock);
    atomic_fetch_add(&ctg.active, 1);
    s->capture = c;
    return CTG_OK;
}

static void ctg_unlink(struct ct_capture *c)
{
    pthread_mutex_lock(&ctg.lock);
    struct ct_capture **link = &ctg.captures;
    while (*link != c)
        link = &(*link)->next;
    *link = c->next;
    pthread_mutex_unlock(&ctg.lock);
    atomic_fetch_sub(&ctg.active, 1);
    for (size_t i = 0; i < c->joined_count; i++)
        c->joined[i]->capture = NULL;
}

/* cudaStreamEndCapture: "Capture must have been initiated on stream"; "If the mode argument to
 * cudaStreamBeginCapture was not cudaStreamCaptureModeRelaxed, this call must be from the same
 * thread"; "If capture was invalidated, due to a violation of the rules of stream capture, then
 * a NULL graph will be returned" (with cudaErrorStreamCaptureInvalidated: "The current capture
 * sequence on the stream has been invalidated due to a previous error"). */
static enum ctg_status ctg_end(CUstream stream, struct CUgraph_st **out)
{
    struct ct_gpu_stream *s = ctg_stream(stream);
    struct ct_capture *c = s ? s->capture : NULL;
    if (!out)
        return CTG_INVALID_VALUE;
    if (!c || c->joined[0] != s)
        return CTG_CAPTURE_UNMATCHED;
    if (c->mode != CTG_MODE_RELAXED && !pthread_equal(c->thread, pthread_self()))
        return CTG_CAPTURE_WRONG_THREAD;
    ctg_unlink(c);
    bool invalidated = c->invalidated;
    *out = invalidated ? NULL : c->graph;
    if (invalidated)
        ctg_destroy(c->graph);
    free(c);
    return invalidated ? CTG_CAPTURE_INVALIDATED : CTG_OK;
}

/* Whether a capture prohibits this thread's potentially unsafe calls, as
 * cudaThreadExchangeStreamCaptureMode lists: in global mode "If the local thread has an ongoing
 * capture sequence that was not initiated with cudaStreamCaptureModeRelaxed ..., or if any
 * other thread has a concurrent capture sequence initiated with cudaStreamCaptureModeGlobal";
 * in thread-local mode the first only; relaxed: "not prohibited". */
static bool ctg_prohibits(const struct ct_capture *c)
{
    bool own = pthread_equal(c->thread, pthread_self());
    if (ctg_thread_mode == CTG_MODE_RELAXED)
        return false;
    if (own)
        return c->mode != CTG_MODE_RELAXED;
    return ctg_thread_mode == CTG_MODE_GLOBAL && c->mode == CTG_MODE_GLOBAL;
}

/* A potentially unsafe call (cudaMalloc, a synchronous copy, a synchronisation): refused with
 * cudaErrorStreamCaptureUnsupported ("The operation is not permitted when the stream is
 * capturing") where a capture prohibits it, and every such capture invalidated. */
static enum ctg_status ctg_unsafe_call(void)
{
    if (atomic_load_explicit(&ctg.active, memory_order_relaxed) == 0)
        return CTG_OK;
    bool refused = false;
    pthread_mutex_lock(&ctg.lock);
    for (struct ct_capture *c = ctg.captures; c; c = c->next)
        if (ctg_prohibits(c))
            refused = c->invalidated = true;
    pthread_mutex_unlock(&ctg.lock);
    return refused ? CTG_CAPTURE_UNSUPPORTED : CTG_OK;
}

/* Work or a wait on the legacy stream while a blocking stream captures: "The operation would have
 * resulted in a disallowed implicit dependency on a current capture sequence from
 * cudaStreamLegacy" (cudaErrorStreamCaptureImplicit); those captures are invalidated. */
static enum ctg_status ctg_legacy_use(void)
{
    bool refused = false;
    pthread_mutex_lock(&ctg.lock);
    for (struct ct_capture *c = ctg.captures; c; c = c->next)
        for (size_t i = 0; i < c->joined_count; i++)
            if (!c->joined[i]->non_blocking)
                refused = c->invalidated = true;
    pthread_mutex_unlock(&ctg.lock);
    return refused ? CTG_CAPTURE_IMPLICIT : CTG_OK;
}

/* Where work pushed to `stream` goes: *capture is the capture it joins ("all operations pushed
 * into the stream will not be executed, but will instead be captured into a graph"), NULL when
 * it runs. A stream whose capture was invalidated takes no more work. */
static enum ctg_status ctg_route(CUstream stream, struct ct_capture **capture)
{
    *capture = NULL;
    if (atomic_load_explicit(&ctg.active, memory_order_relaxed) == 0)
        return CTG_OK;
    if (ctg_is_legacy(stream))
        return ctg_legacy_use();
    struct ct_gpu_stream *s = ctg_stream(stream);
    *capture = s ? s->capture : NULL;
    return *capture && (*capture)->invalidated ? CTG_CAPTURE_INVALIDATED : CTG_OK;
}

/* Pushes `like` to the stream: a node of its capture (*captured true, the node in *node when
 * node is not NULL), or nothing when the stream is not capturing. */
static enum ctg_status ctg_capture(CUstream stream, struct CUgraphNode_st like, bool *captured,
                                   struct CUgraphNode_st **node)
{
    struct ct_capture *c;
    enum ctg_status rc = ctg_route(stream, &c);
    *captured = rc != CTG_OK || c;
    return rc == CTG_OK && c ? ctg_add(node, c->graph, like) : rc;
}

/* A synchronisation of `stream` itself while it captures "necessarily conflict[s] with stream
 * capture" (cudaThreadExchangeStreamCaptureMode), whatever the mode: refused, and the capture
 * invalidated. Any other is a potentially unsafe call. */
static enum ctg_status ctg_sync_call(CUstream stream)
{
    struct ct_gpu_stream *s = ctg_stream(stream);
    struct ct_capture *c = s ? s->capture : NULL;
    if (!c)
        return ctg_is_legacy(stream) && atomic_load(&ctg.active) ? ctg_legacy_use()
                                                                 : ctg_unsafe_call();
    pthread_mutex_lock(&ctg.lock);
    c->invalidated = true;
    pthread_mutex_unlock(&ctg.lock);
    return CTG_CAPTURE_UNSUPPORTED;
}

/* An event wait on `stream` for an event last recorded in the active capture `id` forks the
 * stream into that capture (a wait for one recorded in an ended capture waits for nothing). */
static enum ctg_status ctg_join(CUstream stream, uint64_t id)
{
    struct ct_gpu_stream *s = ctg_stream(stream);
    if (!s)
        return CTG_CAPTURE_IMPLICIT;
    enum ctg_status rc = CTG_OK;
    pthread_mutex_lock(&ctg.lock);
    struct ct_capture *c = ctg.captures;
    while (c && c->id != id)
        c = c->next;
    if (c && !s->capture && c->joined_count == CTG_MAX_JOINED)
        rc = CTG_OUT_OF_MEMORY;
    else if (c && !s->capture)
        c->joined[c->joined_count++] = s, s->capture = c;
    pthread_mutex_unlock(&ctg.lock);
    return rc;
}

/* cudaStreamIsCapturing / cudaStreamGetCaptureInfo: "if this is called on cudaStreamLegacy (the
 * "null stream") while a blocking stream on the same device is capturing, it will return
 * cudaErrorStreamCaptureImplicit ... The blocking stream capture is not invalidated." */
static enum ctg_status ctg_status_of(CUstream stream, int *status, uint64_t *id,
                                     struct CUgraph_st **graph)
{
    if (!status)
        return CTG_INVALID_VALUE;
    if (ctg_is_legacy(stream) && atomic_load(&ctg.active)) {
        bool blocking = false;
        pthread_mutex_lock(&ctg.lock);
        for (struct ct_capture *c = ctg.captures; c; c = c->next)
            blocking |= !c->joined[0]->non_blocking;
        pthread_mutex_unlock(&ctg.lock);
        if (blocking)
            return CTG_CAPTURE_IMPLICIT;
    }
    struct ct_gpu_stream *s = ctg_stream(stream);
    struct ct_capture *c = s ? s->capture : NULL;
    *status = !c ? CTG_STATUS_NONE : c->invalidated ? CTG_STATUS_INVALIDATED : CTG_STATUS_ACTIVE;
    if (id && c)
        *id = c->id;
    if (graph && c)
        *graph = c->graph;
    return CTG_OK;
}

/* What the runtime double reaches through ct_gpu_table.graphs, or holds itself. */
struct ctg_ops {
    enum ctg_status (*create)(struct CUgraph_st **out);
    enum ctg_status (*add)(struct CUgraphNode_st **out, struct CUgraph_st *graph,
                           struct CUgraphNode_st like);
    enum ctg_status (*nodes)(struct CUgraph_st *graph, struct CUgraphNode_st **nodes,
                             size_t *count);
    enum ctg_status (*destroy)(struct CUgraph_st *graph);
    enum ctg_status (*instantiate)(struct CUgraphExec_st **out, struct CUgraph_st *graph,
                                   bool auto_free);
    enum ctg_status (*update)(struct CUgraphExec_st *exec, const struct CUgraph_st *graph,
                              int *result, struct CUgraphNode_st **error_node);
    enum ctg_status (*upload)(struct CUgraphExec_st *exec);
    enum ctg_status (*launch)(struct CUgraphExec_st *exec, CUstream stream);
    enum ctg_status (*destroy_exec)(struct CUgraphExec_st *exec);
    void (*trim)(void);
    void (*memory)(uint64_t figures[4]);
    enum ctg_status (*exchange_mode)(int *mode);
    enum ctg_status (*begin)(CUstream stream, int mode, struct CUgraph_st *graph);
    enum ctg_status (*end)(CUstream stream, struct CUgraph_st **out);
    enum ctg_status (*status_of)(CUstream stream, int *status, uint64_t *id,
                                 struct CUgraph_st **graph);
    enum ctg_status (*unsafe_call)(void);
    enum ctg_status (*sync_call)(CUstream stream);
    enum ctg_status (*route)(CUstream stream, struct ct_capture **capture);
    enum ctg_status (*capture)(CUstream stream, struct CUgraphNode_st like, bool *captured,
                               struct CUgraphNode_st **node);
    enum ctg_status (*join)(CUstream stream, uint64_t capture_id);
};

__attribute__((unused)) static const struct ctg_ops ctg_ops = {
    .create = ctg_create,
    .add = ctg_add,
    .nodes = ctg_nodes,
    .destroy = ctg_destroy,
    .instantiate = ctg_instantiate,
    .update = ctg_update,
    .upload = ctg_upload,
    .launch = ctg_launch,
    .destroy_exec = ctg_destroy_exec,
    .trim = ctg_trim,
    .memory = ctg_memory,
    .exchange_mode = ctg_exchange_mode,
    .begin = ctg_begin,
    .end = ctg_end,
    .status_of = ctg_status_of,
    .unsafe_call = ctg_unsafe_call,
    .sync_call = ctg_sync_call,
    .route = ctg_route,
    .capture = ctg_capture,
    .join = ctg_join,
};

#endif
