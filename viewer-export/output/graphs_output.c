/*
 * The report's graphs section, as JSON and as text: each CUDA graph the
 * process captured or built, most replayed GPU time first, with the line
 * that captured it, its nodes by kind, its instantiations and launches,
 * the GPU time a launch took (median and worst), the time spent capturing
 * and instantiating it, and the kernels its replays ran, each with the
 * line that captured it; and what share of the GPU's time ran from graphs.
 * Nothing when the process made no graph. The text lists the first
 * TEXT_GRAPHS graphs, the JSON the first JSON_GRAPHS.
 */
#include <stdlib.h>

#include "viewer-export/output/human_units.h"
#include "viewer-export/output/report_output.h"

#define JSON_GRAPHS 32
#define TEXT_GRAPHS 5
#define TOP_KERNELS 5

static const char *const node_kinds[CT_NODE_KINDS] = {"kernel", "memcpy", "memset",
                                                      "alloc",  "free",   "other"};

static int by_replayed_time(const void *a, const void *b)
{
    const struct ct_graph_entry *x = *(const struct ct_graph_entry *const *)a;
    const struct ct_graph_entry *y = *(const struct ct_graph_entry *const *)b;
    if (x->replayed_ns != y->replayed_ns)
        return (x->replayed_ns < y->replayed_ns) - (x->replayed_ns > y->replayed_ns);
    return (x->id > y->id) - (x->id < y->id);
}

/* The graphs, most replayed GPU time first (a made array the caller frees). */
static const struct ct_graph_entry **sorted_graphs(const struct ct_graph_view *v)
{
    const struct ct_graph_entry **sorted = malloc((v->count ? v->count : 1) * sizeof *sorted);
    if (!sorted)
        abort();
    for (size_t i = 0; i < v->count; i++)
        sorted[i] = &v->graphs[i];
    qsort(sorted, v->count, sizeof *sorted, by_replayed_time);
    return sorted;
}

static double replayed_share(const struct ct_graph_view *v)
{
    return v->work_ns ? (double)v->replayed_ns / (double)v->work_ns : 0;
}

static void json_graph(struct ct_json *j, const struct ct_graph_view *v,
                       const struct ct_graph_entry *g)
{
    ct_json_begin_object(j, NULL);
    ct_json_uint(j, "graph_id", g->id);
    ct_json_string(j, "made_by", g->captured ? "capture" : "graph API");
    ct_json_text_or_null(j, "site", g->site);
    ct_json_begin_object(j, "nodes");
    for (int k = 0; k < CT_NODE_KINDS; k++)
        ct_json_uint(j, node_kinds[k], g->nodes[k]);
    ct_json_end_object(j);
    ct_json_uint(j, "instantiations", g->instantiations);
    ct_json_uint(j, "launches", g->launches);
    ct_json_uint(j, "building_ns", g->building_ns);
    ct_json_uint(j, "replayed_work", g->replayed_work);
    ct_json_uint(j, "replayed_gpu_ns", g->replayed_ns);
    ct_json_begin_object(j, "launch_gpu_ns");
    ct_json_uint(j, "launches", g->launches_timed);
    ct_json_uint(j, "median", g->launch_median_ns);
    ct_json_uint(j, "max", g->launch_max_ns);
    ct_json_end_object(j);
    struct ct_graph_node_cost top[TOP_KERNELS];
    size_t n = ct_graphs_top_kernels(v, g, NULL, top, TOP_KERNELS);
    ct_json_begin_array(j, "top_kernels");
    for (size_t i = 0; i < n; i++) {
        ct_json_begin_object(j, NULL);
        ct_json_string(j, "name", top[i].name);
        ct_json_text_or_null(j, "capture_site", top[i].site);
        ct_json_uint(j, "nodes", top[i].nodes);
        ct_json_uint(j, "runs", top[i].runs);
        ct_json_uint(j, "total_ns", top[i].ns);
        ct_json_end_object(j);
    }
    ct_json_end_array(j);
    ct_json_end_object(j);
}

void ct_graphs_json(struct ct_json *j, const struct ct_process_report *p)
{
    const struct ct_graph_view *v = &p->graphs;
    if (!v->count)
        return;
    const struct ct_graph_entry **sorted = sorted_graphs(v);
    ct_json_begin_object(j, "graphs");
    ct_json_uint(j, "count", v->count);
    ct_json_uint(j, "captured_calls", v->captured_calls);
    ct_json_uint(j, "replayed_gpu_ns", v->replayed_ns);
    ct_json_double(j, "replayed_share", replayed_share(v));
    ct_json_uint(j, "unknown_node_work", v->unknown_node_work);
    ct_json_begin_array(j, "graphs");
    for (size_t i = 0; i < v->count && i < JSON_GRAPHS; i++)
        json_graph(j, v, sorted[i]);
    ct_json_end_array(j);
    ct_json_end_object(j);
    free(sorted);
}

static void text_graph(FILE *out, const struct ct_graph_view *v, const struct ct_graph_entry *g)
{
    char a[32], b[32], c[32];
    fprintf(out, "                 graph %u, %s at %s:", g->id, g->captured ? "captured" : "built",
            g->site ? g->site : "an unknown line");
    for (int k = 0; k < CT_NODE_KINDS; k++)
        if (g->nodes[k])
            fprintf(out, " %llu %s", (unsigned long long)g->nodes[k], node_kinds[k]);
    fprintf(out, "; instantiated %llu x (building %s), launched %llu x",
            (unsigned long long)g->instantiations, ct_human_time(g->building_ns, a, sizeof a),
            (unsigned long long)g->launches);
    if (g->launches_timed)
        fprintf(out, ", GPU %s a launch (worst %s), %s in all",
                ct_human_time(g->launch_median_ns, b, sizeof b),
                ct_human_time(g->launch_max_ns, c, sizeof c),
                ct_human_time(g->replayed_ns, a, sizeof a));
    fprintf(out, "\n");
    struct ct_graph_node_cost top[TOP_KERNELS];
    size_t n = ct_graphs_top_kernels(v, g, NULL, top, 3);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "                   %s x%llu nodes, %s, captured at %s\n", top[i].name,
                (unsigned long long)top[i].nodes, ct_human_time(top[i].ns, a, sizeof a),
                top[i].site ? top[i].site : "an unknown line");
}

void ct_graphs_text(FILE *out, const struct ct_process_report *p)
{
    const struct ct_graph_view *v = &p->graphs;
    if (!v->count)
        return;
    const struct ct_graph_entry **sorted = sorted_graphs(v);
    char a[32];
    fprintf(out,
            "  CUDA graphs    %zu, %s of GPU time ran from them (%.0f%%), %llu calls captured\n",
            v->count, ct_human_time(v->replayed_ns, a, sizeof a), 100 * replayed_share(v),
            (unsigned long long)v->captured_calls);
    for (size_t i = 0; i < v->count && i < TEXT_GRAPHS; i++)
        text_graph(out, v, sorted[i]);
    if (v->count > TEXT_GRAPHS)
        fprintf(out, "                 and %zu more (the JSON lists %d)\n", v->count - TEXT_GRAPHS,
                JSON_GRAPHS);
    free(sorted);
}
