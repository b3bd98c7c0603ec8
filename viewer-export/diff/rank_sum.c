/*
 * The Wilcoxon rank-sum (Mann-Whitney U) test, as a diff asks whether two
 * runs' steps differ: it assumes nothing of how step times are spread
 * (they are skewed, a few slow steps among many alike), only asks whether
 * one run's steps tend to be longer than the other's. The normal
 * approximation, ties given their mean rank and the variance corrected for
 * them; fine from eight values a side.
 */
#include "viewer-export/diff/compare.h"

#include <math.h>
#include <stdlib.h>

struct ranked {
    double value;
    int first; /* of the first sample */
};

static int by_value(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;
    return (x->value > y->value) - (x->value < y->value);
}

double ct_diff_rank_sum_z(const double *a, size_t na, const double *b, size_t nb)
{
    size_t n = na + nb;
    struct ranked *all = malloc((n + 1) * sizeof *all);
    if (!all)
        abort();
    for (size_t i = 0; i < n; i++)
        all[i] = i < na ? (struct ranked){a[i], 1} : (struct ranked){b[i - na], 0};
    qsort(all, n, sizeof *all, by_value);
    double rank_sum = 0, ties = 0;
    for (size_t i = 0, end; i < n; i = end) {
        for (end = i + 1; end < n && all[end].value == all[i].value; end++)
            ;
        double mean_rank = (double)(i + 1 + end) / 2, t = (double)(end - i);
        for (size_t k = i; k < end; k++)
            rank_sum += all[k].first ? mean_rank : 0;
        ties += t * t * t - t;
    }
    free(all);
    double u = rank_sum - (double)na * (double)(na + 1) / 2, mean = (double)na * (double)nb / 2;
    double variance =
        (double)na * (double)nb / 12 * ((double)(n + 1) - ties / ((double)n * (double)(n - 1)));
    return variance > 0 ? (mean - u) / sqrt(variance) : 0;
}
