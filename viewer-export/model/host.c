/*
 * Builds the host view from the host sampler's events. The host.thread and
 * host.worker instants name each one's tracks, and come before any value
 * on them. A Python stack is a callstack sample, a thread's by its tid, a
 * worker's by its pid, whose innermost frame is the site (its name
 * ct_frame_python, its mapping's path the file, its rel_pc the line); its
 * other frames, read from their names, say which is the program's own
 * innermost line and whether it was inside PyTorch's DataLoader. A counter value is the share,
 * in percent, of the interval that ended at it: the interval since the track's value before (the
 * first value only starts the count), whose CPU time goes into the timeline from the interval's
 * start. A state span goes whole into the timeline of what it was: inside a CUDA call (in_cuda), or
 * outside on a CPU or sleeping, and a sleep outside CUDA calls adds to what the thread slept in.
 */
#include "viewer-export/model/host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/python_files.h"
#include "common/string_table.h"
#include "cudatrace/trace_names.h"

#define SPANS 32
#define FIRST_SPAN_NS 1000000ull

enum { STATE_TRACK, CPU_TRACK, RUNNABLE_TRACK, WORKER_CPU_TRACK, WORKER_RUNNABLE_TRACK };

static void init_timeline(struct ct_timeline *t)
{
    t->capacity = SPANS;
    t->first_span_ns = FIRST_SPAN_NS;
}

static void note_track(struct ct_host *h, uint64_t uuid, size_t place, int which)
{
    ct_u64_map_put(&h->tracks, uuid, ((uint64_t)place << 3 | (uint64_t)which) + 1);
}

/* Thread `tid`'s place, made when new: its calls may come before the
 * sampler saw it. */
static size_t thread_place(struct ct_host *h, int64_t tid)
{
    const uint64_t *place = ct_u64_map_find(&h->by_tid, (uint64_t)tid + 1);
    if (place)
        return (size_t)*place - 1;
    h->threads = ct_array_grow(h->threads, h->thread_count, sizeof *h->threads);
    struct ct_host_thread *t = &h->threads[h->thread_count++];
    memset(t, 0, sizeof *t);
    t->tid = tid;
    t->name = "";
    for (int m = 0; m < CT_HOST_MEASURES; m++)
        init_timeline(&t->measure[m]);
    ct_u64_map_put(&h->by_tid, (uint64_t)tid + 1, h->thread_count);
    return h->thread_count - 1;
}

static void thread_seen(struct ct_host *h, const struct ct_event *e)
{
    size_t place = thread_place(h, ct_event_int(e, ct_key_tid, 0));
    h->threads[place].name = ct_event_text(e, ct_key_name);
    note_track(h, (uint64_t)ct_event_int(e, ct_key_state_track, 0), place, STATE_TRACK);
    note_track(h, (uint64_t)ct_event_int(e, ct_key_cpu_track, 0), place, CPU_TRACK);
    note_track(h, (uint64_t)ct_event_int(e, ct_key_runnable_track, 0), place, RUNNABLE_TRACK);
}

/* Worker `pid`'s place, made when new: its samples may come before the
 * instant that names it. */
static size_t worker_place(struct ct_host *h, int64_t pid)
{
    const uint64_t *place = ct_u64_map_find(&h->by_pid, (uint64_t)pid + 1);
    if (place)
        return (size_t)*place - 1;
    h->workers = ct_array_grow(h->workers, h->worker_count, sizeof *h->workers);
    struct ct_host_worker *w = &h->workers[h->worker_count++];
    memset(w, 0, sizeof *w);
    w->pid = pid;
    w->name = "";
    init_timeline(&w->cpu);
    init_timeline(&w->runnable);
    init_timeline(&w->counted);
    ct_u64_map_put(&h->by_pid, (uint64_t)pid + 1, h->worker_count);
    return h->worker_count - 1;
}

static void worker_seen(struct ct_host *h, const struct ct_event *e)
{
    size_t place = worker_place(h, ct_event_int(e, ct_key_pid, 0));
    h->workers[place].name = ct_event_text(e, ct_key_name);
    note_track(h, (uint64_t)ct_event_int(e, ct_key_cpu_track, 0), place, WORKER_CPU_TRACK);
    note_track(h, (uint64_t)ct_event_int(e, ct_key_runnable_track, 0), place,
               WORKER_RUNNABLE_TRACK);
}

int ct_host_instant(struct ct_host *h, const struct ct_event *e)
{
    if (strcmp(e->name, ct_event_host_thread) == 0) {
        thread_seen(h, e);
    } else if (strcmp(e->name, ct_event_host_worker) == 0) {
        worker_seen(h, e);
    } else if (strcmp(e->name, ct_event_host) == 0) {
        h->state = ct_event_text(e, ct_key_state);
        h->reason = ct_event_text(e, ct_key_reason);
        h->sample_hz = (uint64_t)ct_event_int(e, ct_key_sample_hz, 0);
        h->thread_samples = (uint64_t)ct_event_int(e, ct_key_thread_samples, 0);
        h->sampler_cpu_ns = (uint64_t)ct_event_int(e, ct_key_sampler_cpu_ns, 0);
        h->python_stacks = ct_event_text(e, ct_key_python_stacks);
    } else {
        return 0;
    }
    return 1;
}

/* A share of the interval [*last, ts) into `share`, its whole into `whole`
 * (NULL: none); the interval's end becomes *last. */
static void add_share(uint64_t *last, uint64_t ts, double percent, struct ct_timeline *share,
                      struct ct_timeline *whole)
{
    if (*last && ts > *last) {
        double part = percent < 0 ? 0 : percent > 100 ? 1 : percent / 100;
        ct_timeline_add_interval(share, *last, *last + (uint64_t)(part * (double)(ts - *last)));
        if (whole)
            ct_timeline_add_interval(whole, *last, ts);
    }
    if (ts > *last)
        *last = ts;
}

int ct_host_counter(struct ct_host *h, const struct ct_event *e)
{
    const uint64_t *found = ct_u64_map_find(&h->tracks, e->track);
    if (!found)
        return 0;
    size_t place = (size_t)((*found - 1) >> 3);
    int which = (int)((*found - 1) & 7);
    if (which == WORKER_CPU_TRACK || which == WORKER_RUNNABLE_TRACK) {
        struct ct_host_worker *w = &h->workers[place];
        int cpu = which == WORKER_CPU_TRACK;
        add_share(&w->last_ts[!cpu], e->ts, e->counter, cpu ? &w->cpu : &w->runnable,
                  cpu ? &w->counted : NULL);
    } else if (which != STATE_TRACK) {
        struct ct_host_thread *t = &h->threads[place];
        int cpu = which == CPU_TRACK;
        add_share(&t->last_counter_ts[!cpu], e->ts, e->counter,
                  &t->measure[cpu ? CT_HOST_CPU : CT_HOST_RUNNABLE],
                  cpu ? &t->measure[CT_HOST_COUNTED] : NULL);
    }
    return 1;
}

static void add_wchan(struct ct_host_thread *t, const char *wchan, uint64_t ns)
{
    if (!*wchan)
        return;
    for (int i = 0; i < t->wchan_count; i++)
        if (strcmp(t->wchans[i].name, wchan) == 0) {
            t->wchans[i].ns += ns;
            return;
        }
    if (t->wchan_count < CT_HOST_WCHANS)
        t->wchans[t->wchan_count++] = (struct ct_host_wchan){wchan, ns};
}

/* The site's entry, made (with no samples) when new; NULL when the list
 * is full. */
static struct ct_host_site *site_of(struct ct_host_python *py, const char *file,
                                    const char *function, int64_t line)
{
    for (int i = 0; i < py->count; i++)
        if (py->sites[i].line == line && strcmp(py->sites[i].file, file) == 0 &&
            strcmp(py->sites[i].function, function) == 0)
            return &py->sites[i];
    if (py->count == CT_HOST_SITES)
        return NULL;
    if (!py->sites && !(py->sites = calloc(CT_HOST_SITES, sizeof *py->sites)))
        abort();
    py->sites[py->count] = (struct ct_host_site){file, function, line, 0};
    return &py->sites[py->count++];
}

/* Adds `samples` at a site; the site's entry, NULL when the list is full. */
static struct ct_host_site *add_site(struct ct_host_python *py, const char *file,
                                     const char *function, int64_t line, uint64_t samples)
{
    struct ct_host_site *site = site_of(py, file, function, line);
    py->samples += samples;
    if (site)
        site->samples += samples;
    return site;
}

/* Adds one sample taken at `ts` at a site, stamped (for a window's top). */
static void add_stamped(struct ct_host_python *py, const char *file, const char *function,
                        int64_t line, uint64_t ts)
{
    const struct ct_host_site *site = add_site(py, file, function, line, 1);
    if (!site)
        return;
    py->stamps = ct_array_grow(py->stamps, py->stamp_count, sizeof *py->stamps);
    py->stamps[py->stamp_count++] = (struct ct_host_stamp){ts, (int)(site - py->sites)};
}

/* The function of a frame named by ct_frame_python, from its file and
 * line: the name without " (FILE:LINE)"; the whole name when it is not so
 * named. */
static const char *frame_function(const char *frame, const char *file, int64_t line)
{
    char suffix[4096];
    int n = snprintf(suffix, sizeof suffix, ct_frame_python, "", file, (int)line);
    size_t len = strlen(frame);
    if (n <= 0 || (size_t)n >= sizeof suffix || (size_t)n > len ||
        strcmp(frame + len - (size_t)n, suffix) != 0)
        return frame;
    return ct_strings_get(ct_strings_intern(frame, len - (size_t)n));
}

/* A frame's name read as "FUNCTION (FILE:LINE)" (ct_frame_python): where
 * its file begins and ends, and its line; 0 when it is not so named. */
static int frame_parts(const char *name, const char **open, const char **colon, long long *line)
{
    size_t len = strlen(name);
    char *end;
    *open = strstr(name, " (");
    *colon = strrchr(name, ':');
    if (!*open || !*colon || *colon < *open || len < 2 || name[len - 1] != ')')
        return 0;
    *line = strtoll(*colon + 1, &end, 10);
    return end == name + len - 1;
}

/* A frame's file, in `out` (truncated to `size`); 0 when the name is not a
 * frame's. Only the frames a stack is judged by get their strings interned
 * (frame_site), not every frame of every sample. */
static int frame_file(const char *name, char *out, size_t size)
{
    const char *open, *colon;
    long long line;
    if (!frame_parts(name, &open, &colon, &line))
        return 0;
    snprintf(out, size, "%.*s", (int)(colon - open - 2), open + 2);
    return 1;
}

/* A frame's site, its strings interned. */
static struct ct_host_site frame_site(const char *name)
{
    const char *open, *colon;
    long long line;
    frame_parts(name, &open, &colon, &line);
    return (struct ct_host_site){
        ct_strings_get(ct_strings_intern(open + 2, (size_t)(colon - open - 2))),
        ct_strings_get(ct_strings_intern(name, (size_t)(open - name))), line, 0};
}

static struct ct_host_python *tally(struct ct_host_python **t)
{
    if (!*t && !(*t = calloc(1, sizeof **t)))
        abort();
    return *t;
}

/* The stack's innermost line of the program's own code, and the line that
 * asked the DataLoader for a batch when the stack is inside it. */
static void add_program_lines(struct ct_host_python *py, const struct ct_sample *s)
{
    char file[4096];
    const char *program = NULL, *caller = NULL, *outer = NULL;
    int in_loader = 0;
    for (size_t i = 0; i < s->depth; i++) { /* outermost first */
        const char *frame = frame_file(s->frames[i], file, sizeof file) ? s->frames[i] : NULL;
        if (frame && !ct_python_library_file(file))
            program = frame;
        if (frame && !in_loader && ct_python_data_loader_file(file)) {
            in_loader = 1;
            caller = outer;
        }
        outer = frame;
    }
    if (program) {
        struct ct_host_site site = frame_site(program);
        add_stamped(tally(&py->program_lines), site.file, site.function, site.line, s->ts);
    }
    if (!in_loader)
        return;
    py->loader_samples++;
    if (caller) {
        struct ct_host_site site = frame_site(caller);
        add_site(tally(&py->loader_callers), site.file, site.function, site.line, 1);
    }
}

/* One stack the sampler read: its innermost frame's site, and the latest. */
static void add_stack(struct ct_host_python *py, const struct ct_sample *s)
{
    add_program_lines(py, s);
    int64_t line = (int64_t)s->rel_pc;
    const char *function = frame_function(s->frame, s->path, line);
    add_stamped(py, s->path, function, line, s->ts);
    if (s->ts >= py->last_ts) {
        py->last_ts = s->ts;
        py->last_file = s->path;
        py->last_function = function;
        py->last_line = line;
    }
}

void ct_host_sample(struct ct_host *h, const struct ct_sample *s, int own_thread)
{
    if (own_thread) {
        size_t place = thread_place(h, s->tid);
        add_stack(&h->threads[place].python, s);
    } else {
        size_t place = worker_place(h, s->pid);
        add_stack(&h->workers[place].python, s);
    }
}

const struct ct_host_python *ct_host_python_since(const struct ct_host *h, int64_t tid,
                                                  uint64_t since_ns)
{
    const uint64_t *place = ct_u64_map_find(&h->by_tid, (uint64_t)tid + 1);
    const struct ct_host_python *py = place ? &h->threads[*place - 1].python : NULL;
    return py && py->last_ts && py->last_ts >= since_ns ? py : NULL;
}

int ct_host_slice(struct ct_host *h, const struct ct_event *e)
{
    const uint64_t *found = ct_u64_map_find(&h->tracks, e->track);
    if (!found)
        return 0;
    int which = (int)((*found - 1) & 7);
    if (which != STATE_TRACK || e->end <= e->ts)
        return 1;
    struct ct_host_thread *t = &h->threads[(*found - 1) >> 3];
    ct_timeline_add_interval(&t->measure[CT_HOST_SPANNED], e->ts, e->end);
    int on_cpu =
        strcmp(e->name, ct_event_host_running) == 0 || strcmp(e->name, ct_event_host_runnable) == 0;
    int asleep = strcmp(e->name, ct_event_host_sleeping) == 0 ||
                 strcmp(e->name, ct_event_host_uninterruptible) == 0;
    enum ct_host_measure m = ct_event_int(e, ct_key_in_cuda, 0) ? CT_HOST_IN_CUDA
                             : on_cpu                           ? CT_HOST_OUTSIDE_RUNNING
                             : asleep                           ? CT_HOST_OUTSIDE_WAITING
                                                                : CT_HOST_MEASURES;
    if (m != CT_HOST_MEASURES)
        ct_timeline_add_interval(&t->measure[m], e->ts, e->end);
    t->spans = ct_array_grow(t->spans, t->span_count, sizeof *t->spans);
    t->spans[t->span_count++] = (struct ct_host_span){e->ts, e->end, m};
    if (m == CT_HOST_OUTSIDE_WAITING)
        add_wchan(t, ct_event_text(e, ct_key_wchan), e->end - e->ts);
    return 1;
}

void ct_host_note_call(struct ct_host *h, int64_t tid, uint64_t ns)
{
    if (!tid)
        return;
    size_t place = thread_place(h, tid); /* before h->threads is read: it may move */
    h->threads[place].calls++;
    h->threads[place].call_ns += ns;
}

static double ratio(double part, double whole)
{
    return whole > 0 ? part / whole : 0;
}

int ct_host_wchan_is_input(const char *wchan)
{
    static const char *const prefixes[] = {
        "futex",        "pipe_read",       "anon_pipe_read", "unix_stream_read",
        "sk_wait_data", "poll_schedule",   "do_select",      "ep_poll",
        "wait_woken",   "inet_csk_accept", "skb_wait_for",   "tcp_recvmsg"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strncmp(wchan, prefixes[i], strlen(prefixes[i])) == 0)
            return 1;
    return 0;
}

/* The share of a thread's sleeps outside CUDA calls spent waiting for data. */
static double input_part(const struct ct_host_thread *t)
{
    double input = 0, all = 0;
    for (int i = 0; i < t->wchan_count; i++) {
        all += (double)t->wchans[i].ns;
        input += ct_host_wchan_is_input(t->wchans[i].name) ? (double)t->wchans[i].ns : 0;
    }
    return ratio(input, all);
}

void ct_host_thread_shares(const struct ct_host_thread *t, uint64_t from, uint64_t to,
                           struct ct_host_shares *out)
{
    double counted = ct_timeline_sum(&t->measure[CT_HOST_COUNTED], from, to);
    double spanned = ct_timeline_sum(&t->measure[CT_HOST_SPANNED], from, to);
    out->sampled_ns = counted;
    out->running = ratio(ct_timeline_sum(&t->measure[CT_HOST_CPU], from, to), counted);
    out->runnable = ratio(ct_timeline_sum(&t->measure[CT_HOST_RUNNABLE], from, to), counted);
    out->waiting =
        counted > 0 && out->running + out->runnable < 1 ? 1 - out->running - out->runnable : 0;
    out->in_cuda = ratio(ct_timeline_sum(&t->measure[CT_HOST_IN_CUDA], from, to), spanned);
    out->outside_running =
        ratio(ct_timeline_sum(&t->measure[CT_HOST_OUTSIDE_RUNNING], from, to), spanned);
    out->outside_waiting =
        ratio(ct_timeline_sum(&t->measure[CT_HOST_OUTSIDE_WAITING], from, to), spanned);
    out->outside_waiting_for_input = out->outside_waiting * input_part(t);
}

void ct_host_worker_shares(const struct ct_host_worker *w, uint64_t from, uint64_t to, double *cpu,
                           double *runnable)
{
    double counted = ct_timeline_sum(&w->counted, from, to);
    *cpu = counted > 0 ? ratio(ct_timeline_sum(&w->cpu, from, to), counted) : -1;
    *runnable = ratio(ct_timeline_sum(&w->runnable, from, to), counted);
}

double ct_host_workers_busy(const struct ct_host *h, uint64_t from, uint64_t to, int *count)
{
    double busy = 0;
    *count = 0;
    for (size_t i = 0; i < h->worker_count; i++) {
        double cpu, runnable;
        ct_host_worker_shares(&h->workers[i], from, to, &cpu, &runnable);
        if (cpu < 0)
            continue;
        busy += cpu + runnable;
        ++*count;
    }
    return *count ? busy / *count : 0;
}

static int by_cpu(const void *a, const void *b)
{
    const struct ct_host_row *x = a, *y = b;
    if (x->shares.running != y->shares.running)
        return x->shares.running > y->shares.running ? -1 : 1;
    return (x->thread->tid > y->thread->tid) - (x->thread->tid < y->thread->tid);
}

size_t ct_host_rows(const struct ct_host *h, uint64_t from, uint64_t to, struct ct_host_row **out)
{
    *out = calloc(h->thread_count + 1, sizeof **out);
    if (!*out)
        abort();
    size_t count = 0;
    for (size_t i = 0; i < h->thread_count; i++) {
        struct ct_host_row *row = &(*out)[count];
        row->thread = &h->threads[i];
        ct_host_thread_shares(row->thread, from, to, &row->shares);
        count += row->shares.sampled_ns > 0;
    }
    qsort(*out, count, sizeof **out, by_cpu);
    return count;
}

static int by_time(const void *a, const void *b)
{
    const struct ct_host_wchan *x = a, *y = b;
    return (x->ns < y->ns) - (x->ns > y->ns);
}

int ct_host_wchans_sorted(const struct ct_host_thread *t, struct ct_host_wchan *out)
{
    memcpy(out, t->wchans, (size_t)t->wchan_count * sizeof *out);
    qsort(out, (size_t)t->wchan_count, sizeof *out, by_time);
    return t->wchan_count;
}

static int by_samples(const void *a, const void *b)
{
    const struct ct_host_site *x = a, *y = b;
    if (x->samples != y->samples)
        return x->samples > y->samples ? -1 : 1;
    int files = strcmp(x->file, y->file);
    return files ? files : (x->line > y->line) - (x->line < y->line);
}

int ct_host_sites_sorted(const struct ct_host_python *py, struct ct_host_site *out)
{
    if (py->count)
        memcpy(out, py->sites, (size_t)py->count * sizeof *out);
    qsort(out, (size_t)py->count, sizeof *out, by_samples);
    return py->count;
}

int ct_host_workers_top_site(const struct ct_host *h, struct ct_host_site *out, double *share)
{
    struct ct_host_python all = {0};
    uint64_t samples = 0; /* at sites kept or not */
    for (size_t w = 0; w < h->worker_count; w++) {
        const struct ct_host_python *py = &h->workers[w].python;
        for (int i = 0; i < py->count; i++)
            add_site(&all, py->sites[i].file, py->sites[i].function, py->sites[i].line,
                     py->sites[i].samples);
        samples += py->samples;
    }
    all.samples = samples;
    struct ct_host_site sorted[CT_HOST_SITES];
    int found = ct_host_sites_sorted(&all, sorted) > 0;
    if (found) {
        *out = sorted[0];
        *share = (double)out->samples / (double)all.samples;
    }
    free(all.sites);
    return found;
}

int ct_host_top_site_within(const struct ct_host_python *py, uint64_t from, uint64_t to,
                            struct ct_host_site *out, uint64_t *within)
{
    uint64_t counts[CT_HOST_SITES] = {0};
    *within = 0;
    for (size_t i = 0; i < py->stamp_count; i++)
        if (py->stamps[i].ts >= from && py->stamps[i].ts < to) {
            counts[py->stamps[i].site]++;
            ++*within;
        }
    int best = -1;
    for (int i = 0; i < py->count; i++)
        if (counts[i] && (best < 0 || counts[i] > counts[best]))
            best = i;
    if (best < 0)
        return 0;
    *out = py->sites[best];
    out->samples = counts[best];
    return 1;
}

void ct_host_sites_when(const struct ct_host_python *py, int (*keep)(const void *ctx, uint64_t ts),
                        const void *ctx, struct ct_host_python *out)
{
    *out = (struct ct_host_python){0};
    for (size_t i = 0; i < py->stamp_count; i++)
        if (keep(ctx, py->stamps[i].ts)) {
            const struct ct_host_site *s = &py->sites[py->stamps[i].site];
            add_site(out, s->file, s->function, s->line, 1);
        }
}

const struct ct_host_thread *ct_host_launching_thread(const struct ct_host *h)
{
    const struct ct_host_thread *best = NULL;
    for (size_t i = 0; i < h->thread_count; i++)
        if (h->threads[i].calls && (!best || h->threads[i].calls > best->calls))
            best = &h->threads[i];
    return best;
}

static void free_tally(struct ct_host_python *t)
{
    if (t) {
        free(t->sites);
        free(t->stamps);
    }
    free(t);
}

static void free_python(struct ct_host_python *py)
{
    free_tally(py->program_lines);
    free_tally(py->loader_callers);
    free(py->sites);
    free(py->stamps);
}

void ct_host_free(struct ct_host *h)
{
    for (size_t i = 0; i < h->thread_count; i++) {
        for (int m = 0; m < CT_HOST_MEASURES; m++)
            ct_timeline_free(&h->threads[i].measure[m]);
        free_python(&h->threads[i].python);
        free(h->threads[i].spans);
    }
    for (size_t i = 0; i < h->worker_count; i++) {
        free_python(&h->workers[i].python);
        ct_timeline_free(&h->workers[i].cpu);
        ct_timeline_free(&h->workers[i].runnable);
        ct_timeline_free(&h->workers[i].counted);
    }
    free(h->threads);
    free(h->workers);
    ct_u64_map_free(&h->tracks);
    ct_u64_map_free(&h->by_tid);
    ct_u64_map_free(&h->by_pid);
    memset(h, 0, sizeof *h);
}
