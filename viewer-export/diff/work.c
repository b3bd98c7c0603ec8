/*
 * The work of a pair per step (compare.h): the kernels' GPU time and
 * launches (from the facts, which keep more kernels than the report), the
 * GPU's copies and sets, each CUDA function's calls and host time (the
 * report's `api`, whole), and the lines whose calls held the host up (the
 * facts). These are run totals divided by the steps (start-up included),
 * or by the seconds of the CUDA part of the run where a side has no steps;
 * they have no spread of their own, so they move by a share of their own
 * and of the step: ITEM_LEAST_SHARE of the before side's figure, a count
 * also by ITEM_LEAST_COUNT, a time by the least of struct scale. What is
 * made less often than ITEM_LEAST_COUNT times a step on both sides is
 * start-up or shutdown (the first allocation's driver start, say), not the
 * step's work, and is left out.
 */
#include "viewer-export/diff/compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"

#define ITEM_LEAST_SHARE 0.1
#define ITEM_STEP_SHARE 0.01
#define ITEM_LEAST_COUNT 0.5
#define ITEM_LEAST_NS 1000.0

/* How a list of counted things is written: `list` in the report or the
 * facts, named by `name_key` (NULL: the members of an object are named
 * by their keys), and whether the list left some out (`left_out`, a facts
 * member; NULL: it is whole). */
struct list_shape {
    const char *list;
    int in_facts;
    const char *name_key, *count_key, *time_key, *left_out;
    int lines; /* named "FILE:LINE in FUNCTION" */
    int host;  /* times of the host's, not the GPU's */
};

static const struct list_shape kernels = {.list = "kernels",
                                          .in_facts = 1,
                                          .name_key = "name",
                                          .count_key = "count",
                                          .time_key = "total_ns",
                                          .left_out = "kernels_left_out"};
static const struct list_shape functions = {
    .list = "api", .count_key = "calls", .time_key = "total_ns", .host = 1};
static const struct list_shape sites = {.list = "blocking_sites",
                                        .in_facts = 1,
                                        .name_key = "site",
                                        .count_key = "calls",
                                        .time_key = "ns",
                                        .left_out = "blocking_sites_left_out",
                                        .lines = 1,
                                        .host = 1};

/* What a pair's figures are divided by on each side, and the least change
 * of a time per step that counts: for the GPU's work, ITEM_STEP_SHARE of
 * the step; for the host's calls, whose time a busy machine stretches,
 * least_host_ns. Per second: ITEM_STEP_SHARE of a second for both. */
struct scale {
    double per[2];
    double least_gpu_ns, least_host_ns;
};

/* The side's list; where its summary was made before the facts kept the
 * kernels, the report's top kernels, which is never whole (is_whole: the
 * facts do not say what was left out). */
static const struct ct_json_value *list_of(const struct ct_job_process *p,
                                           const struct list_shape *shape)
{
    const struct ct_json_value *list =
        ct_json_member(shape->in_facts ? p->facts : p->report, shape->list);
    if (!list && shape == &kernels)
        list = ct_json_member(ct_json_member(p->report, "gpu"), "top_kernels");
    return list;
}

static const char *name_of(const struct ct_json_value *entry, const struct list_shape *shape)
{
    return shape->name_key ? ct_json_text(ct_json_member(entry, shape->name_key)) : entry->key;
}

static const struct ct_json_value *find(const struct ct_json_value *list, const char *name,
                                        const struct list_shape *shape)
{
    for (size_t i = 0; list && name && i < list->count; i++) {
        const char *other = name_of(&list->items[i], shape);
        if (other && strcmp(other, name) == 0)
            return &list->items[i];
    }
    return NULL;
}

/* Whether two lines, "FILE:LINE in FUNCTION", are in one file and function. */
static int same_function(const char *a, const char *b)
{
    const char *in_a = strstr(a, " in "), *in_b = strstr(b, " in ");
    size_t file = strcspn(a, ":");
    return in_a && in_b && strcmp(in_a, in_b) == 0 && file == strcspn(b, ":") &&
           strncmp(a, b, file) == 0;
}

static long line_of(const char *site)
{
    const char *colon = strchr(site, ':');
    return colon ? strtol(colon + 1, NULL, 10) : 0;
}

/* Whether `here` is a line in `site`'s function that `other` lacks. */
static int unshared_in_function(const char *here, const char *site,
                                const struct ct_json_value *other, const struct list_shape *shape)
{
    return here && same_function(here, site) && !find(other, here, shape);
}

/* How many lines of `list` in `site`'s function `other` lacks; in *above,
 * how many of them stand above `site`'s line (its place among them). */
static size_t unshared_lines(const struct ct_json_value *list, const struct ct_json_value *other,
                             const char *site, const struct list_shape *shape, size_t *above)
{
    size_t n = 0;
    *above = 0;
    for (size_t i = 0; i < list->count; i++) {
        const char *here = name_of(&list->items[i], shape);
        if (!unshared_in_function(here, site, other, shape))
            continue;
        *above += line_of(here) < line_of(site);
        n++;
    }
    return n;
}

/* The line of `list` in `site`'s function that `other` lacks and that has
 * `place` such lines above it; NULL when none has. */
static const struct ct_json_value *unshared_at(const struct ct_json_value *list,
                                               const struct ct_json_value *other, const char *site,
                                               const struct list_shape *shape, size_t place)
{
    for (size_t i = 0; i < list->count; i++) {
        const char *here = name_of(&list->items[i], shape);
        size_t above;
        if (!unshared_in_function(here, site, other, shape))
            continue;
        unshared_lines(list, other, here, shape, &above);
        if (above == place)
            return &list->items[i];
    }
    return NULL;
}

/* The entry of `theirs` that is `entry` of `mine`: of the same name, or,
 * for lines, where both lists have as many lines in its function that the
 * other does not share, the one in the same place among them (the code
 * above the calls moved, not the calls). */
static const struct ct_json_value *partner(const struct ct_json_value *entry,
                                           const struct ct_json_value *mine,
                                           const struct ct_json_value *theirs,
                                           const struct list_shape *shape)
{
    const char *name = name_of(entry, shape);
    const struct ct_json_value *same = find(theirs, name, shape);
    size_t place, unused;
    if (same || !shape->lines || !name ||
        unshared_lines(mine, theirs, name, shape, &place) !=
            unshared_lines(theirs, mine, name, shape, &unused))
        return same;
    return unshared_at(theirs, mine, name, shape, place);
}

static int is_whole(const struct ct_job_process *p, const struct list_shape *shape)
{
    return !shape->left_out || ct_diff_value(p->facts, shape->left_out) == 0;
}

static double per(double value, double divisor)
{
    return divisor > 0 ? value / divisor : NAN;
}

/* One entry compared, from its object on each side (NULL: not in that
 * side's list, which is whole); 0 when it did not move. */
static int compare_entry(const struct ct_json_value *const entry[2], const struct scale *scale,
                         const struct list_shape *shape, struct ct_diff_item *item)
{
    double count[2], time[2];
    for (int s = 0; s < 2; s++) {
        count[s] = entry[s] ? per(ct_diff_value(entry[s], shape->count_key), scale->per[s]) : 0;
        time[s] = entry[s] ? per(ct_diff_value(entry[s], shape->time_key), scale->per[s]) : 0;
    }
    if (count[0] < ITEM_LEAST_COUNT && count[1] < ITEM_LEAST_COUNT)
        return 0; /* once in a while: start-up, shutdown, no step's work */
    item->name = name_of(entry[1] ? entry[1] : entry[0], shape);
    item->was = entry[0] && entry[1] ? name_of(entry[0], shape) : NULL;
    if (item->was && strcmp(item->was, item->name) == 0)
        item->was = NULL;
    item->count = (struct ct_diff_number){count[0], count[1], 0, 0};
    item->count.noise = fmax(ITEM_LEAST_SHARE * count[0], ITEM_LEAST_COUNT);
    item->time = (struct ct_diff_number){time[0], time[1], 0, 0};
    item->time.noise =
        fmax(ITEM_LEAST_SHARE * time[0], shape->host ? scale->least_host_ns : scale->least_gpu_ns);
    ct_diff_judge(&item->count);
    ct_diff_judge(&item->time);
    item->only = count[0] == 0 ? 1 : count[1] == 0 ? -1 : 0;
    return item->count.moved || item->time.moved;
}

static void add_item(struct ct_diff_items *items, const struct ct_diff_item *item)
{
    items->items = ct_array_grow(items->items, items->count, sizeof *items->items);
    items->items[items->count++] = *item;
}

/* Those on one side only first, then by how far their time moved, then
 * their count. */
static int by_change(const void *a, const void *b)
{
    const struct ct_diff_item *x = a, *y = b;
    if ((x->only != 0) != (y->only != 0))
        return x->only ? -1 : 1;
    double dx = fabs(x->time.after - x->time.before), dy = fabs(y->time.after - y->time.before);
    if (dx != dy)
        return dx > dy ? -1 : 1;
    dx = fabs(x->count.after - x->count.before);
    dy = fabs(y->count.after - y->count.before);
    return (dx < dy) - (dx > dy);
}

/* The entries of both sides' lists that moved: those of the before side,
 * then those only the after side has. An entry one side's list lacks is
 * compared only where that list is whole. */
static void compare_list(const struct ct_job_process *const side[2], const struct scale *scale,
                         const struct list_shape *shape, struct ct_diff_items *out)
{
    const struct ct_json_value *list[2] = {list_of(side[0], shape), list_of(side[1], shape)};
    int whole[2] = {is_whole(side[0], shape), is_whole(side[1], shape)};
    if (!list[0] || !list[1])
        return;
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; i < list[s]->count; i++) {
            const struct ct_json_value *mine = &list[s]->items[i];
            const struct ct_json_value *theirs = partner(mine, list[s], list[1 - s], shape);
            const struct ct_json_value *entry[2] = {s ? theirs : mine, s ? mine : theirs};
            struct ct_diff_item item = {0};
            if ((s && theirs) || (!theirs && !whole[1 - s]))
                continue; /* compared already, or not known on the other side */
            if (compare_entry(entry, scale, shape, &item))
                add_item(out, &item);
        }
    if (out->count)
        qsort(out->items, out->count, sizeof *out->items, by_change);
}

/* The GPU's copies and sets, where both sides have GPU timings. */
static void compare_copies(const struct ct_job_process *const side[2], const struct scale *scale,
                           struct ct_diff_number *n)
{
    double copies[2];
    for (int s = 0; s < 2; s++)
        copies[s] = per(ct_diff_value(side[s]->report, "gpu.copies") +
                            ct_diff_value(side[s]->report, "gpu.memsets"),
                        scale->per[s]);
    *n = (struct ct_diff_number){copies[0], copies[1], 0, 0};
    n->noise = fmax(ITEM_LEAST_SHARE * copies[0], ITEM_LEAST_COUNT);
    if (!isnan(copies[0]) && !isnan(copies[1]))
        ct_diff_judge(n);
}

/* How far a few long steps pull a side's mean step past its median. */
static double tail_of(const struct ct_job_process *p)
{
    double tail = ct_diff_value(p->facts, "steps.step_ns.mean") -
                  ct_diff_value(p->facts, "steps.step_ns.median");
    return tail > 0 ? tail : 0;
}

/* The least change of a host call's time per step: what the step's own
 * figures had to move by, and since that time is a run's total over its
 * steps, a mean, as far as a few long steps pull the mean of either side. */
static double least_host_ns(const struct ct_job_process *const side[2],
                            const struct ct_diff_steps *s)
{
    double noise = fmax(s->median.noise,
                        fmax(s->parts[CT_DIFF_SYNC].noise, s->parts[CT_DIFF_OTHER_CUDA].noise));
    return noise + fmax(tail_of(side[0]), tail_of(side[1]));
}

static struct scale scale_of(const struct ct_job_process *const side[2],
                             const struct ct_diff_pair *pair)
{
    struct scale scale = {{0, 0}, ITEM_STEP_SHARE * 1e9, ITEM_STEP_SHARE * 1e9};
    for (int s = 0; s < 2 && pair->basis == CT_DIFF_PER_STEP; s++)
        scale.per[s] = ct_diff_value(side[s]->report, "steps.count");
    for (int s = 0; s < 2 && pair->basis != CT_DIFF_PER_STEP; s++) {
        double ns = ct_diff_value(side[s]->facts, "cuda_part_ns");
        scale.per[s] =
            (isnan(ns) || ns <= 0 ? ct_diff_value(side[s]->report, "wall_ns") : ns) / 1e9;
    }
    if (pair->basis == CT_DIFF_PER_STEP) {
        scale.least_gpu_ns = fmax(ITEM_STEP_SHARE * pair->steps.median.before, ITEM_LEAST_NS);
        scale.least_host_ns = least_host_ns(side, &pair->steps);
    }
    return scale;
}

void ct_diff_work(const struct ct_job_process *before, const struct ct_job_process *after,
                  struct ct_diff_pair *pair)
{
    const struct ct_job_process *side[2] = {before, after};
    struct scale scale = scale_of(side, pair);
    compare_list(side, &scale, &kernels, &pair->kernels);
    compare_list(side, &scale, &functions, &pair->calls);
    compare_list(side, &scale, &sites, &pair->sites);
    compare_copies(side, &scale, &pair->copies);
}
