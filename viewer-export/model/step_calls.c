/*
 * Training steps found from a launching thread's own repetition. Each CUDA
 * call is a symbol: its function with the kernel it launches, or for other
 * calls with the line that made it. A training loop makes the same symbols
 * every iteration, so the symbols it makes once a step recur at a near
 * constant distance, counted in the thread's calls: a symbol is periodic
 * when its distances, all but the first (warm-up), stray from their median
 * by at most a tenth of their sum, and its calls span at least half the
 * thread's. An inner loop's symbols (a layer's kernel, every launch's
 * error check) are periodic too, at a shorter distance, but the stretch
 * between two of their calls holds few of the loop's symbols; a symbol made
 * every hundredth step (a checkpoint, a log line) has stretches that hold
 * all of them and a few more. So the step's period is the shortest whose
 * stretches hold at least nine tenths of the most distinct symbols any
 * period's stretches hold, and of the symbols with that period a step ends
 * with the one the thread leaves for longest before its next call (the
 * loss read-back before the wait for the next batch): where the loop
 * turns. Step 1 begins where the thread's call before the loop's first one
 * ended, each later step where the one before ended; of several launching
 * threads, the one whose steps hold the most calls is taken. The choice is
 * made over the first CT_STEP_WINDOW calls; past them only the chosen
 * boundary's calls are kept, so the steps are the whole run's in bounded
 * memory. It finds nothing where steps differ by more than a tenth of
 * their calls, and takes the inner loop's turn for the step where a step
 * is that loop and little else (gradient accumulation with a light
 * optimizer: each micro-batch is a step). CUDATRACE_STEP names the
 * boundary instead (kernel:NAME, call:FUNCTION, site:TEXT).
 */
#include "viewer-export/model/step_calls.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/entry_list.h"
#include "cudatrace/functions.h"
#include "cudatrace/trace_names.h"

#define MIN_STEPS 3
#define STRETCHES 64 /* stretches whose symbols are counted, per period */

_Static_assert(CT_FN_COUNT < 1024, "a symbol's key holds its function in 10 bits");

static const char *named; /* cudatrace report --step, or CUDATRACE_STEP where it runs */

/* 1 for a kernel:, call: or site: boundary, 2 for nvtx:, else 0. */
static int spec_kind(const char *spec)
{
    static const char *const kinds[] = {"kernel:", "call:", "site:", "nvtx:"};
    for (size_t i = 0; spec && i < sizeof kinds / sizeof kinds[0]; i++)
        if (strncmp(spec, kinds[i], strlen(kinds[i])) == 0 && spec[strlen(kinds[i])])
            return i < 3 ? 1 : 2;
    return 0;
}

int ct_step_calls_name(const char *spec)
{
    if (!spec_kind(spec))
        return -1;
    named = spec;
    return 0;
}

void ct_step_calls_environment(struct ct_step_calls *c, const char *environment)
{
    static const char variable[] = "CUDATRACE_STEP=";
    char line[sizeof variable - 1 + sizeof c->spec]; /* the value, cut as c->spec would */
    for (const char *item = environment; ct_list_next(&item, '\n', line, sizeof line);)
        if (strncmp(line, variable, sizeof variable - 1) == 0) {
            snprintf(c->spec, sizeof c->spec, "%s", line + sizeof variable - 1);
            return;
        }
}

const char *ct_step_calls_spec(const struct ct_step_calls *c)
{
    return named ? named : spec_kind(c->spec) ? c->spec : NULL;
}

static int matches_spec(const char *spec, int fn, const char *name)
{
    int launch = ct_function_family((unsigned)fn) == CT_FAMILY_LAUNCH;
    if (strncmp(spec, "kernel:", 7) == 0)
        return launch && strcmp(name, spec + 7) == 0;
    if (strncmp(spec, "call:", 5) == 0)
        return strcmp(ct_function_name((enum ct_function)fn), spec + 5) == 0;
    return !launch && strstr(name, spec + 5) != NULL; /* site: */
}

static uint32_t symbol_of(struct ct_step_calls *c, int fn, const char *name)
{
    uint64_t key = (((uint64_t)(uintptr_t)name << 10) | (uint64_t)fn) + 1;
    uint64_t *index = ct_u64_map_find(&c->symbol_index, key);
    if (index)
        return (uint32_t)(*index - 1);
    c->symbols = ct_array_grow(c->symbols, c->symbol_count, sizeof *c->symbols);
    const char *spec = ct_step_calls_spec(c);
    c->symbols[c->symbol_count] = (struct ct_step_symbol){
        fn, name, c->decided && spec_kind(spec) == 1 && matches_spec(spec, fn, name)};
    ct_u64_map_put(&c->symbol_index, key, ++c->symbol_count);
    return (uint32_t)(c->symbol_count - 1);
}

static uint32_t thread_of(struct ct_step_calls *c, int64_t tid)
{
    uint64_t *index = ct_u64_map_find(&c->thread_index, (uint64_t)tid + 1);
    if (index)
        return (uint32_t)(*index - 1);
    c->tids = ct_array_grow(c->tids, c->thread_count, sizeof *c->tids);
    c->tids[c->thread_count] = tid;
    ct_u64_map_put(&c->thread_index, (uint64_t)tid + 1, ++c->thread_count);
    return (uint32_t)(c->thread_count - 1);
}

static void add_end(struct ct_step_bounds *b, uint64_t end)
{
    if (b->count == CT_STEP_ENDS) {
        b->cut = 1;
        return;
    }
    b->ends = ct_array_reserve(b->ends, &b->capacity, b->count + 1, sizeof *b->ends);
    b->ends[b->count++] = end;
}

/* One thread's calls in time order, as symbols. */
struct sequence {
    const struct ct_step_call **calls;
    size_t n;
};

/* A periodic symbol: the median distance between its calls, and how far
 * they stray from it. */
struct candidate {
    uint32_t symbol;
    size_t period;
    double stray;
};

struct choice {
    uint32_t thread;
    size_t period, first, covered;
    uint32_t boundary;
};

static int by_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

static int by_begin(const void *a, const void *b)
{
    const struct ct_step_call *x = *(const struct ct_step_call *const *)a;
    const struct ct_step_call *y = *(const struct ct_step_call *const *)b;
    return (x->begin > y->begin) - (x->begin < y->begin);
}

static int by_period(const void *a, const void *b)
{
    const struct candidate *x = a, *y = b;
    return (x->period > y->period) - (x->period < y->period);
}

/* Positions of each symbol's calls in `s`, grouped by symbol in order of
 * position: symbol k's are at pos[start[k]] to pos[start[k + 1]]. */
static size_t *positions(const struct sequence *s, size_t symbols, size_t **start_out)
{
    size_t *start = calloc(symbols + 1, sizeof *start), *pos = malloc(s->n * sizeof *pos);
    size_t *next = malloc((symbols + 1) * sizeof *next);
    if (!start || !pos || !next)
        abort();
    for (size_t i = 0; i < s->n; i++)
        start[s->calls[i]->symbol + 1]++;
    for (size_t k = 0; k < symbols; k++)
        start[k + 1] += start[k];
    memcpy(next, start, (symbols + 1) * sizeof *next);
    for (size_t i = 0; i < s->n; i++)
        pos[next[s->calls[i]->symbol]++] = i;
    free(next);
    *start_out = start;
    return pos;
}

/* Whether the calls at p[0..c) are periodic in a thread of n calls; their
 * period and stray in *out. */
static int periodic(const size_t *p, size_t c, size_t n, size_t *scratch, struct candidate *out)
{
    if (c < MIN_STEPS || 2 * (p[c - 1] - p[0]) < n)
        return 0;
    size_t from = c > MIN_STEPS ? 1 : 0, m = 0, sum = 0; /* the first distance: warm-up */
    for (size_t j = from; j + 1 < c; j++)
        sum += scratch[m++] = p[j + 1] - p[j];
    qsort(scratch, m, sizeof *scratch, by_size);
    size_t median = scratch[(m - 1) / 2], off = 0;
    for (size_t j = 0; j < m; j++)
        off += scratch[j] > median ? scratch[j] - median : median - scratch[j];
    out->period = median;
    out->stray = (double)off / (double)sum;
    return out->stray <= 0.1;
}

/* The median count of distinct symbols in the stretches between the calls
 * at p[0..c) (up to STRETCHES of them, spread over the run). */
static size_t distinct_per_stretch(const struct sequence *s, const size_t *p, size_t c,
                                   uint32_t *stamp, uint32_t *stamp_now)
{
    size_t counts[STRETCHES], m = 0, from = c > MIN_STEPS ? 1 : 0;
    size_t stretches = c - 1 - from, every = stretches / STRETCHES + 1;
    for (size_t j = from; j + 1 < c && m < STRETCHES; j += every) {
        size_t distinct = 0;
        ++*stamp_now;
        for (size_t i = p[j] + 1; i <= p[j + 1]; i++) {
            uint32_t k = s->calls[i]->symbol;
            if (stamp[k] != *stamp_now) {
                stamp[k] = *stamp_now;
                distinct++;
            }
        }
        counts[m++] = distinct;
    }
    qsort(counts, m, sizeof *counts, by_size);
    return counts[(m - 1) / 2];
}

/* The host time after each call of a symbol before the thread's next. */
static uint64_t gaps_after(const struct sequence *s, const size_t *p, size_t c)
{
    uint64_t total = 0;
    for (size_t j = 0; j < c; j++)
        if (p[j] + 1 < s->n && s->calls[p[j] + 1]->begin > s->calls[p[j]]->end)
            total += s->calls[p[j] + 1]->begin - s->calls[p[j]]->end;
    return total;
}

/* Where step 1 begins: at the first call of any symbol the loop makes in
 * its second step (between the boundary's first two calls), so that the
 * calls a first step makes more (warm-up, autotuning) are step 1's while
 * the set-up before the loop is not. */
static size_t loop_start(const struct sequence *s, const size_t *pos, const size_t *start,
                         size_t symbols, uint32_t boundary)
{
    const size_t *p = pos + start[boundary];
    size_t first = p[0];
    uint8_t *seen = calloc(symbols, 1);
    if (!seen)
        abort();
    for (size_t i = p[0] + 1; i <= p[1]; i++) {
        uint32_t k = s->calls[i]->symbol;
        if (!seen[k] && pos[start[k]] < first)
            first = pos[start[k]];
        seen[k] = 1;
    }
    free(seen);
    return first;
}

/* Of the candidates sorted by period, the period group (those within a
 * tenth of its shortest) chosen for the step: [*from, *to); 0 when every
 * stretch holds one symbol (a loop of one kernel's launches is no training
 * loop, and each of its calls a step would cost memory by the call). */
static int choose_period(const struct sequence *s, const struct candidate *cand, size_t count,
                         const size_t *pos, const size_t *start, size_t symbols, size_t *from,
                         size_t *to)
{
    uint32_t *stamp = calloc(symbols, sizeof *stamp), stamp_now = 0;
    size_t *distinct = malloc(count * sizeof *distinct), best = 0;
    if (!stamp || !distinct)
        abort();
    for (size_t g = 0; g < count;) {
        size_t end = g, rep = g;
        while (end < count && 10 * cand[end].period <= 11 * cand[g].period) {
            if (cand[end].stray < cand[rep].stray)
                rep = end;
            end++;
        }
        uint32_t k = cand[rep].symbol;
        distinct[g] =
            distinct_per_stretch(s, pos + start[k], start[k + 1] - start[k], stamp, &stamp_now);
        if (distinct[g] > best)
            best = distinct[g];
        for (size_t i = g + 1; i < end; i++)
            distinct[i] = 0;
        g = end;
    }
    *from = 0;
    while (10 * distinct[*from] < 9 * best)
        ++*from;
    for (*to = *from; *to < count && 10 * cand[*to].period <= 11 * cand[*from].period;)
        ++*to;
    free(distinct);
    free(stamp);
    return best >= 2;
}

/* The step's boundary on one thread; 0 when its calls do not repeat. */
static int choose_on_thread(const struct sequence *s, size_t symbols, struct choice *out)
{
    size_t *start, *pos = positions(s, symbols, &start), count = 0;
    size_t *scratch = malloc(s->n * sizeof *scratch);
    struct candidate *cand = malloc(symbols * sizeof *cand);
    if (!scratch || !cand)
        abort();
    for (uint32_t k = 0; k < symbols; k++)
        if (periodic(pos + start[k], start[k + 1] - start[k], s->n, scratch, &cand[count]))
            cand[count++].symbol = k;
    size_t from, to;
    int found = count > 0;
    if (found) {
        qsort(cand, count, sizeof *cand, by_period);
        found = choose_period(s, cand, count, pos, start, symbols, &from, &to);
    }
    if (found) {
        uint64_t widest = 0;
        out->boundary = cand[from].symbol;
        for (size_t i = from; i < to; i++) {
            uint32_t k = cand[i].symbol;
            uint64_t gaps = gaps_after(s, pos + start[k], start[k + 1] - start[k]);
            if (gaps > widest) {
                widest = gaps;
                out->boundary = k;
            }
        }
        out->first = loop_start(s, pos, start, symbols, out->boundary);
        out->period = cand[from].period;
        out->covered = (start[out->boundary + 1] - start[out->boundary]) * out->period;
    }
    free(cand);
    free(scratch);
    free(pos);
    free(start);
    return found;
}

/* Each thread's calls of the window, in time order. */
static struct sequence *sequences(const struct ct_step_calls *c)
{
    struct sequence *seq = calloc(c->thread_count ? c->thread_count : 1, sizeof *seq);
    const struct ct_step_call **all = malloc((c->window_count + 1) * sizeof *all);
    if (!seq || !all)
        abort();
    for (size_t i = 0; i < c->window_count; i++)
        seq[c->window[i].thread].n++;
    seq[0].calls = all; /* what decide frees, threads or none */
    for (size_t t = 0, at = 0; t < c->thread_count; t++) {
        seq[t].calls = all + at;
        at += seq[t].n;
        seq[t].n = 0;
    }
    for (size_t i = 0; i < c->window_count; i++) {
        struct sequence *t = &seq[c->window[i].thread];
        t->calls[t->n++] = &c->window[i];
    }
    for (size_t t = 0; t < c->thread_count; t++)
        qsort(seq[t].calls, seq[t].n, sizeof *seq[t].calls, by_begin);
    return seq;
}

static void describe(char *out, size_t size, const struct ct_step_symbol *k)
{
    const char *fn = ct_function_name((enum ct_function)k->fn);
    if (ct_function_family((unsigned)k->fn) == CT_FAMILY_LAUNCH)
        snprintf(out, size, "%s of %s", fn, k->name);
    else if (*k->name)
        snprintf(out, size, "%s at %s", fn, k->name);
    else
        snprintf(out, size, "%s", fn);
}

/* The bounds on the thread chosen, from the window: the calls of the
 * symbols marked ends_step end its steps. */
static void window_bounds(struct ct_step_calls *c, const struct sequence *s, uint32_t thread,
                          size_t first)
{
    struct ct_step_bounds *b = &c->bounds;
    b->thread = thread;
    b->tid = c->tids[thread];
    b->first_start = first ? s->calls[first - 1]->end : s->calls[first]->begin;
    for (size_t i = first; i < s->n; i++)
        if (c->symbols[s->calls[i]->symbol].ends_step)
            add_end(b, s->calls[i]->end);
    b->found = b->count >= MIN_STEPS;
}

/* A named boundary: on the thread that made the most of its calls, from
 * that thread's first call. */
static void decide_named(struct ct_step_calls *c, const struct sequence *seq, const char *spec)
{
    size_t best = 0, most = 0;
    for (size_t k = 0; k < c->symbol_count; k++)
        c->symbols[k].ends_step = matches_spec(spec, c->symbols[k].fn, c->symbols[k].name);
    for (size_t t = 0; t < c->thread_count; t++) {
        size_t n = 0;
        for (size_t i = 0; i < seq[t].n; i++)
            n += (size_t)c->symbols[seq[t].calls[i]->symbol].ends_step;
        if (n > most) {
            most = n;
            best = t;
        }
    }
    snprintf(c->bounds.boundary, sizeof c->bounds.boundary, "%s", spec);
    if (most)
        window_bounds(c, &seq[best], (uint32_t)best, 0);
}

static void decide_found(struct ct_step_calls *c, const struct sequence *seq)
{
    struct choice best = {0}, one;
    int found = 0;
    for (uint32_t t = 0; t < c->thread_count; t++)
        if (seq[t].n > MIN_STEPS && choose_on_thread(&seq[t], c->symbol_count, &one) &&
            (!found || one.covered > best.covered)) {
            best = one;
            best.thread = t;
            found = 1;
        }
    if (!found)
        return;
    c->symbols[best.boundary].ends_step = 1;
    describe(c->bounds.boundary, sizeof c->bounds.boundary, &c->symbols[best.boundary]);
    window_bounds(c, &seq[best.thread], best.thread, best.first);
}

static void decide(struct ct_step_calls *c)
{
    c->decided = 1;
    struct sequence *seq = sequences(c);
    const char *spec = ct_step_calls_spec(c);
    if (spec_kind(spec) == 1)
        decide_named(c, seq, spec);
    else if (!spec)
        decide_found(c, seq);
    free(seq[0].calls);
    free(seq);
    free(c->window);
    c->window = NULL;
    c->window_count = c->window_capacity = 0;
}

/* cudaProfilerStart and Stop: the windows they open and close. */
static void profiler_window(struct ct_step_calls *c, int fn, const struct ct_event *e)
{
    if (fn == CT_FN_cudaProfilerStart) {
        c->window_open = e->end;
    } else if (c->window_open && c->window_total < CT_STEP_ENDS) {
        c->windows = ct_array_grow(c->windows, c->window_total, sizeof *c->windows);
        c->windows[c->window_total++] = (struct ct_profiler_window){c->window_open, e->ts};
        c->window_open = 0;
    }
}

void ct_step_calls_note(struct ct_step_calls *c, int64_t tid, int fn, const struct ct_event *e)
{
    if (fn == CT_FN_cudaProfilerStart || fn == CT_FN_cudaProfilerStop)
        profiler_window(c, fn, e);
    /* once decided, only the chosen thread's calls matter, and none where
     * nothing was found: a long trace's later calls cost a comparison */
    if (c->decided && (!c->bounds.found || tid != c->bounds.tid))
        return;
    const char *name = ct_event_text(
        e, ct_function_family((unsigned)fn) == CT_FAMILY_LAUNCH ? ct_key_kernel : ct_key_site);
    uint32_t symbol = symbol_of(c, fn, name);
    if (c->decided) {
        if (c->symbols[symbol].ends_step)
            add_end(&c->bounds, e->end);
        return;
    }
    c->window =
        ct_array_reserve(c->window, &c->window_capacity, c->window_count + 1, sizeof *c->window);
    c->window[c->window_count++] =
        (struct ct_step_call){e->ts, e->end > e->ts ? e->end : e->ts, symbol, thread_of(c, tid)};
    if (c->window_count == CT_STEP_WINDOW)
        decide(c);
}

static int by_value(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

void ct_step_calls_settle(struct ct_step_calls *c)
{
    if (!c->decided)
        decide(c);
    if (c->bounds.count)
        qsort(c->bounds.ends, c->bounds.count, sizeof *c->bounds.ends, by_value);
}

void ct_step_calls_free(struct ct_step_calls *c)
{
    ct_u64_map_free(&c->symbol_index);
    ct_u64_map_free(&c->thread_index);
    free(c->symbols);
    free(c->tids);
    free(c->window);
    free(c->bounds.ends);
    free(c->windows);
    memset(c, 0, sizeof *c);
}
