/*
 * capture-failed: a stream capture that ended in an error made no graph,
 * and the call that broke it is what a user needs: a synchronisation, an
 * allocation or a copy that may not be made while a stream captures
 * ("operation not permitted when stream is capturing", as PyTorch says it),
 * refused with one of the capture errors, which invalidates the capture
 * (cudaStreamEndCapture then "returns cudaErrorStreamCaptureInvalidated"
 * and no graph). The finding names that call, its error and its line, and
 * where the capture began; a capture that ended well is its twin.
 *
 * re-capture: a CUDA graph is worth its capture and instantiation only if
 * it is replayed; captured again and again at the same line and launched
 * a time or two each, it costs more than the launches it saves (this is
 * what torch.compile's CUDA graphs do when the shapes keep changing, and
 * what a capture inside the training loop does). The graphs are grouped by
 * the line their capture began at (else their first node's), and a line
 * fires when at least `recapture_graphs` of its graphs were each launched
 * at most `recapture_launches` times. Its healthy twin is a graph captured
 * once and replayed: its line has one graph, launched many times.
 */
#include <stdlib.h>
#include <string.h>

#include "cuda_error_names.h"
#include "viewer-export/findings/findings.h"
#include "viewer-export/findings/thresholds.h"

struct line_tally {
    const char *site;
    uint64_t graphs, launches, building_ns;
};

static struct line_tally *tally_of(struct line_tally *t, size_t *n, const char *site)
{
    for (size_t i = 0; i < *n; i++)
        if (t[i].site == site)
            return &t[i];
    t[*n] = (struct line_tally){site, 0, 0, 0};
    return &t[(*n)++];
}

static void capture_failed(const struct ct_process_report *p, struct ct_findings *out)
{
    const struct ct_graph_view *v = &p->graphs;
    if (!v->failed_count)
        return;
    const struct ct_failed_capture *c = &v->failed[0];
    const char *error = ct_cuda_error_name((int)c->error);
    struct ct_finding *f = ct_finding_add(
        out, CT_FINDING_CAPTURE_FAILED, p->pid,
        "%llu CUDA graph capture%s ended in an error and made no graph; the first, begun at %s, "
        "ended with %s",
        (unsigned long long)v->failed_count, v->failed_count == 1 ? "" : "s",
        c->site ? c->site : "an unknown line", error ? error : "an error");
    if (c->culprit.fn >= 0) {
        const char *refused = ct_cuda_error_name((int)c->culprit.error);
        ct_finding_append(f,
                          ": %s at %s was refused with %s while the stream was capturing, which "
                          "broke the capture; make that call before the capture begins or after "
                          "it ends",
                          ct_function_name((enum ct_function)c->culprit.fn),
                          c->culprit.site ? c->culprit.site : "an unknown line",
                          refused ? refused : "a capture error");
        f->where = c->culprit.site;
        f->sites[0] = (struct ct_finding_site){c->culprit.site ? c->culprit.site : "", 1, 0, 0, 1};
        f->site_count = 1;
        ct_finding_add_number(f, "refused_error", (double)c->culprit.error);
    }
    ct_finding_add_number(f, "failed_captures", (double)v->failed_count);
    ct_finding_add_number(f, "end_error", (double)c->error);
}

void ct_findings_graphs(const struct ct_process_report *p, struct ct_findings *out)
{
    capture_failed(p, out);
    const struct ct_graph_view *v = &p->graphs;
    struct line_tally *lines = calloc(v->count ? v->count : 1, sizeof *lines);
    if (!lines)
        abort();
    size_t n = 0;
    for (size_t i = 0; i < v->count; i++) {
        const struct ct_graph_entry *g = &v->graphs[i];
        if (!g->site || !g->instantiations ||
            (double)g->launches > ct_thresholds.recapture_launches)
            continue;
        struct line_tally *t = tally_of(lines, &n, g->site);
        t->graphs++;
        t->launches += g->launches;
        t->building_ns += g->building_ns;
    }
    for (size_t i = 0; i < n; i++) {
        const struct line_tally *t = &lines[i];
        if ((double)t->graphs < ct_thresholds.recapture_graphs)
            continue;
        struct ct_finding *f = ct_finding_add(
            out, CT_FINDING_RE_CAPTURE, p->pid,
            "CUDA graphs were captured again and again at %s: %llu graphs, launched %.1f times "
            "each, took %.1f ms to capture and instantiate; capture once and replay (keep the "
            "shapes, or the graph per shape, the same)",
            t->site, (unsigned long long)t->graphs, (double)t->launches / (double)t->graphs,
            (double)t->building_ns / 1e6);
        f->cost_ns = t->building_ns;
        f->where = t->site;
        ct_finding_add_number(f, "graphs", (double)t->graphs);
        ct_finding_add_number(f, "launches", (double)t->launches);
        ct_finding_add_number(f, "building_ns", (double)t->building_ns);
        f->sites[0] = (struct ct_finding_site){t->site, t->graphs, t->building_ns, 0, 1.0};
        f->site_count = 1;
    }
    free(lines);
}
