/*
 * Findings that compare the processes of one job (the ranks of a torchrun
 * job, a parent and its workers), each process named by its rank and host
 * where its launcher said: inconsistent-libraries, when processes loaded
 * different files or versions of one library family; straggler, when one
 * process waits in synchronising calls far longer than the others; and
 * inconsistent-environment, when processes ran with different values of a
 * variable that changes CUDA's behaviour (a node with another
 * LD_LIBRARY_PATH or NCCL_* setting); and hang-missing, on each process
 * that was not stuck in a CUDA call at the end while most of its job was
 * (the one a collective waits for). Processes are compared only with
 * those of their own job (the same job id, or none); a job of one process
 * gets none of these.
 */
#include "viewer-export/job/aggregate.h"
#include "viewer-export/job/job.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* straggler: more than this many times the others' median wait, and at
 * least this much longer (a few ms of jitter between healthy ranks is no
 * straggler). */
#define STRAGGLER_RATIO 2.0
#define STRAGGLER_MIN_EXTRA_NS 50000000ull

/* The processes of one job id: the job orders its processes by job id, so
 * they are `count` in a row from `start`. */
struct group {
    struct ct_job *job;
    size_t start, count;
};

static const struct ct_job_process *member(const struct group *g, size_t i)
{
    return &g->job->processes[g->start + i];
}

static struct ct_finding *add(const struct group *g, size_t i, enum ct_finding_id id,
                              const char *message)
{
    struct ct_finding *f = ct_finding_add(&g->job->findings, id, member(g, i)->pid, "%s", message);
    f->process = g->start + i;
    f->across = 1;
    return f;
}

static void __attribute__((format(printf, 3, 4)))
append(char *message, size_t size, const char *fmt, ...)
{
    size_t n = strlen(message);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message + n, size - n, fmt, ap);
    va_end(ap);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorts names and leaves each once; returns how many are left. */
static size_t unique_names(const char **names, size_t count)
{
    size_t n = 0;
    qsort(names, count, sizeof *names, by_name);
    for (size_t i = 0; i < count; i++)
        if (n == 0 || strcmp(names[n - 1], names[i]) != 0)
            names[n++] = names[i];
    return n;
}

static const char **grow_names(const char **names, size_t count, size_t more)
{
    names = realloc(names, (count + more + 1) * sizeof *names);
    if (!names)
        abort();
    return names;
}

static const struct ct_library_entry *library_of(const struct ct_job_process *p, const char *family)
{
    for (size_t i = 0; i < p->library_count; i++)
        if (strcmp(p->libraries[i].family, family) == 0)
            return &p->libraries[i];
    return NULL;
}

static int same_library(const struct ct_library_entry *a, const struct ct_library_entry *b)
{
    return strcmp(a->realpath, b->realpath) == 0 && strcmp(a->version, b->version) == 0;
}

static const char *version_text(const struct ct_library_entry *lib)
{
    return *lib->version ? lib->version : "unknown version";
}

/* The first process that loaded `family` is the reference; every process
 * whose copy differs from it is named, with its file and version. */
static void compare_family(const struct group *g, const char *family)
{
    const struct ct_library_entry *reference = NULL, *odd[8];
    size_t first = 0, odd_members[8], odd_count = 0;
    char message[2048], name[128];
    for (size_t i = 0; i < g->count; i++) {
        const struct ct_library_entry *lib = library_of(member(g, i), family);
        if (lib && !reference)
            reference = lib, first = i;
        else if (lib && !same_library(lib, reference) && odd_count < 8)
            odd[odd_count] = lib, odd_members[odd_count++] = i;
    }
    if (!odd_count)
        return;
    snprintf(message, sizeof message, "processes of one job loaded different lib%s: ", family);
    append(message, sizeof message, "%s %s (%s)",
           ct_job_process_name(g->job, member(g, first), name, sizeof name), reference->realpath,
           version_text(reference));
    for (size_t k = 0; k < odd_count; k++)
        append(message, sizeof message, ", %s %s (%s)",
               ct_job_process_name(g->job, member(g, odd_members[k]), name, sizeof name),
               odd[k]->realpath, version_text(odd[k]));
    append(message, sizeof message,
           ". Ranks that disagree on a library can disagree on results or deadlock in "
           "collectives: give every process the same environment (LD_LIBRARY_PATH, "
           "virtual environment, container image).");
    struct ct_finding *f = add(g, odd_members[0], CT_FINDING_INCONSISTENT_LIBRARIES, message);
    ct_finding_add_library(f, reference);
    for (size_t k = 0; k < odd_count; k++)
        ct_finding_add_library(f, odd[k]);
}

static void inconsistent_libraries(const struct group *g)
{
    const char **families = NULL;
    size_t count = 0;
    for (size_t i = 0; i < g->count; i++) {
        families = grow_names(families, count, member(g, i)->library_count);
        for (size_t k = 0; k < member(g, i)->library_count; k++)
            families[count++] = member(g, i)->libraries[k].family;
    }
    count = unique_names(families, count);
    for (size_t i = 0; i < count; i++)
        compare_family(g, families[i]);
    free(families);
}

static int by_value(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The median of the processes' waits, leaving out member `skip`. */
static uint64_t median_wait_of_others(const struct group *g, size_t skip)
{
    uint64_t *waits = calloc(g->count, sizeof *waits);
    size_t n = 0;
    if (!waits)
        abort();
    for (size_t i = 0; i < g->count; i++)
        if (i != skip && member(g, i)->sync_calls)
            waits[n++] = member(g, i)->sync_ns;
    qsort(waits, n, sizeof *waits, by_value);
    uint64_t median = n % 2 ? waits[n / 2] : (waits[n / 2 - 1] + waits[n / 2]) / 2;
    free(waits);
    return median;
}

static void straggler(const struct group *g)
{
    size_t syncing = 0, longest = 0;
    for (size_t i = 0; i < g->count; i++) {
        syncing += member(g, i)->sync_calls != 0;
        if (member(g, i)->sync_ns > member(g, longest)->sync_ns)
            longest = i;
    }
    if (syncing < 3) /* with two, either could be the odd one out */
        return;
    const struct ct_job_process *p = member(g, longest);
    uint64_t others = median_wait_of_others(g, longest);
    if (p->sync_ns < STRAGGLER_MIN_EXTRA_NS + others ||
        (double)p->sync_ns <= STRAGGLER_RATIO * (double)others)
        return;
    char message[1024], name[128];
    snprintf(message, sizeof message,
             "%s waited %.1f ms in synchronising calls (%llu calls), %.1fx the other "
             "processes' median of %.1f ms: it stalls on work the others do not (its own "
             "GPU is slower or busier, or its input arrives late); look at what it waits "
             "for in its trace",
             ct_job_process_name(g->job, p, name, sizeof name), p->sync_ns / 1e6,
             (unsigned long long)p->sync_calls, others ? (double)p->sync_ns / (double)others : 0.0,
             others / 1e6);
    add(g, longest, CT_FINDING_STRAGGLER, message);
}

static const char *value_of(const struct ct_job_process *p, const char *variable)
{
    return ct_json_text(ct_json_member(p->environment, variable));
}

static int same_value(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* One variable: the processes that recorded an environment, by the value
 * they ran with (unset being one); the rarest value's first process is
 * the one named. */
static void compare_variable(const struct group *g, const char *variable)
{
    size_t *holders = calloc(g->count, sizeof *holders), values = 0, rarest = 0, rarest_count = 0;
    const char *distinct[16];
    char message[2048], who[1024];
    if (!holders)
        abort();
    snprintf(message, sizeof message, "processes of one job ran with different %s:", variable);
    for (size_t v = 0; v < 16; v++) {
        const char *value = NULL;
        size_t n = 0, i;
        for (i = 0; i < g->count; i++) { /* the first value not listed yet */
            int listed = !member(g, i)->environment;
            for (size_t k = 0; k < v && !listed; k++)
                listed = same_value(distinct[k], value_of(member(g, i), variable));
            if (!listed)
                break;
        }
        if (i == g->count)
            break;
        value = distinct[values++] = value_of(member(g, i), variable);
        for (; i < g->count; i++)
            if (member(g, i)->environment && same_value(value_of(member(g, i), variable), value))
                holders[n++] = g->start + i;
        ct_job_describe_processes(g->job, holders, n, who, sizeof who);
        append(message, sizeof message, "%s %s on %s", v ? ";" : "", value ? value : "unset", who);
        if (v == 0 || n < rarest_count)
            rarest = holders[0] - g->start, rarest_count = n;
    }
    free(holders);
    if (values < 2)
        return;
    append(message, sizeof message,
           ". A rank whose environment differs can load other libraries, pick another network "
           "or allocator setting, and so behave differently or hang its collectives: give "
           "every rank the same environment.");
    add(g, rarest, CT_FINDING_INCONSISTENT_ENVIRONMENT, message);
}

/* The devices a rank sees differ between the ranks of a node by design. */
static int compared(const char *variable)
{
    return strcmp(variable, "CUDA_VISIBLE_DEVICES") != 0 &&
           strcmp(variable, "NVIDIA_VISIBLE_DEVICES") != 0;
}

static void inconsistent_environment(const struct group *g)
{
    const char **variables = NULL;
    size_t count = 0;
    for (size_t i = 0; i < g->count; i++) {
        const struct ct_json_value *env = member(g, i)->environment;
        variables = grow_names(variables, count, env ? env->count : 0);
        for (size_t k = 0; env && k < env->count; k++)
            if (compared(env->items[k].key))
                variables[count++] = env->items[k].key;
    }
    count = unique_names(variables, count);
    for (size_t i = 0; i < count; i++)
        compare_variable(g, variables[i]);
    free(variables);
}

/* The hang finding of member `i` that never resolved, or NULL. */
static const struct ct_finding *hang_of(const struct group *g, size_t i)
{
    for (size_t k = 0; k < g->job->findings.count; k++) {
        const struct ct_finding *f = &g->job->findings.items[k];
        if (!f->across && f->process == g->start + i && f->id == CT_FINDING_HANG &&
            f->severity == CT_SEVERITY_ERROR) /* a hang that resolved is a warning */
            return f;
    }
    return NULL;
}

/* Most of the job stuck in a CUDA call at the end and a few not: the few
 * are most often what the rest wait for (a collective they never reached,
 * their part of the work never sent). With half or fewer stuck, or all of
 * them, nothing says which is missing. */
static void hang_missing(const struct group *g)
{
    size_t stuck = 0;
    const struct ct_finding *longest = NULL;
    for (size_t i = 0; i < g->count; i++) {
        const struct ct_finding *f = hang_of(g, i);
        stuck += f != NULL;
        if (f && (!longest || f->cost_ns > longest->cost_ns))
            longest = f;
    }
    if (stuck < 2 || stuck * 2 <= g->count || stuck == g->count)
        return;
    /* Taken now: adding findings moves them. */
    uint64_t longest_ns = longest->cost_ns;
    const char *word = ct_job_members_word(g->job);
    char message[1024], name[128], stuck_name[128];
    ct_job_process_name(g->job, &g->job->processes[longest->process], stuck_name,
                        sizeof stuck_name);
    for (size_t i = 0; i < g->count; i++) {
        if (hang_of(g, i))
            continue;
        snprintf(message, sizeof message,
                 "%s was not inside a CUDA call when its trace ended, while %zu of the %zu %s "
                 "were stuck in one (the longest, %s, for %.1f s): the others most often wait "
                 "for it, in a collective it never reached or for work of its that never came; "
                 "look at what it did last in its trace",
                 ct_job_process_name(g->job, member(g, i), name, sizeof name), stuck, g->count,
                 word, stuck_name, (double)longest_ns / 1e9);
        struct ct_finding *f = add(g, i, CT_FINDING_HANG_MISSING, message);
        ct_finding_add_number(f, "stuck", (double)stuck);
        ct_finding_add_number(f, "processes", (double)g->count);
        ct_finding_add_number(f, "longest_ns", (double)longest_ns);
    }
}

void ct_findings_across(struct ct_job *job)
{
    struct group g = {job, 0, 0};
    for (; g.start < job->process_count; g.start += g.count) {
        g.count = ct_job_group_end(job, g.start) - g.start;
        if (g.count < 2)
            continue;
        inconsistent_libraries(&g);
        straggler(&g);
        inconsistent_environment(&g);
        hang_missing(&g);
    }
}
