/*
 * A CUDA injection library for tests/test_doubles_graphs.py: it subscribes to CUPTI, enables the
 * activity kinds CT_TEST_KINDS names ("kernel", "memset", "graph": GRAPH_TRACE) and, with
 * CT_TEST_RESOURCE=1, the resource domain, and writes to CT_TEST_OUT one line per record
 * ("kernel GRAPHID NODEID CORRELATION", "memset GRAPHID NODEID CORRELATION", "graph CORRELATION
 * GRAPHID STREAM START END") and per graph resource callback ("resource CBID NODEID ORIGINALID",
 * the node ids cuptiGetGraphNodeId gives, 0 where there is no node).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#define BUFFER_BYTES (1 << 20)

static FILE *out;

static uint64_t node_id(CUgraphNode node)
{
    uint64_t id = 0;
    if (node)
        cuptiGetGraphNodeId(node, &id);
    return id;
}

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *data)
{
    (void)userdata;
    if (domain != CUPTI_CB_DOMAIN_RESOURCE)
        return;
    const CUpti_GraphData *g = ((const CUpti_ResourceData *)data)->resourceDescriptor;
    fprintf(out, "resource %u %llu %llu\n", cbid, (unsigned long long)node_id(g->node),
            (unsigned long long)node_id(g->originalNode));
}

static void CUPTIAPI lend_buffer(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = aligned_alloc(8, BUFFER_BYTES);
    *size = BUFFER_BYTES;
    *max_records = 0;
}

static void write_record(const CUpti_Activity *r)
{
    const CUpti_ActivityKernel10 *k = (const void *)r;
    const CUpti_ActivityMemset4 *s = (const void *)r;
    const CUpti_ActivityGraphTrace2 *g = (const void *)r;
    if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
        fprintf(out, "kernel %u %llu %u\n", k->graphId, (unsigned long long)k->graphNodeId,
                k->correlationId);
    else if (r->kind == CUPTI_ACTIVITY_KIND_MEMSET)
        fprintf(out, "memset %u %llu %u\n", s->graphId, (unsigned long long)s->graphNodeId,
                s->correlationId);
    else if (r->kind == CUPTI_ACTIVITY_KIND_GRAPH_TRACE)
        fprintf(out, "graph %u %u %u %llu %llu\n", g->correlationId, g->graphId, g->streamId,
                (unsigned long long)g->start, (unsigned long long)g->end);
}

static void CUPTIAPI take_buffer(CUcontext context, uint32_t stream, uint8_t *buffer, size_t size,
                                 size_t valid)
{
    (void)context, (void)stream, (void)size;
    CUpti_Activity *r = NULL;
    while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS)
        write_record(r);
    free(buffer);
}

static void flush_at_exit(void)
{
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    fclose(out);
}

static void enable_kinds(const char *kinds)
{
    if (strstr(kinds, "kernel"))
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (strstr(kinds, "memset"))
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET);
    if (strstr(kinds, "graph"))
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
}

int InitializeInjection(void)
{
    const char *path = getenv("CT_TEST_OUT"), *kinds = getenv("CT_TEST_KINDS");
    const char *resource = getenv("CT_TEST_RESOURCE");
    CUpti_SubscriberHandle subscriber;
    if (!path || !(out = fopen(path, "w")) ||
        cuptiSubscribe(&subscriber, on_callback, NULL) != CUPTI_SUCCESS)
        return 1;
    if (resource && strcmp(resource, "1") == 0)
        cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE);
    cuptiActivityRegisterCallbacks(lend_buffer, take_buffer);
    enable_kinds(kinds ? kinds : "");
    atexit(flush_at_exit);
    return 1;
}
