/*
 * A diff as text (diff_output.h): the headline first, then what was
 * compared, then per pair that changed (a single pair always) its step
 * time, environment, GPU work and host calls per step, memory and
 * findings, each section only where something in it moved; pairs with no
 * change in one line at the end. The headline is made here for the JSON
 * too.
 */
#include "viewer-export/output/diff_output.h"

#include <math.h>
#include <string.h>

#include "viewer-export/output/human_units.h"

#define HEADLINE_CAUSES 3
#define HEADLINE_PAIRS 2
#define SECTION_ITEMS 8    /* kernels, calls, lines listed per pair */
#define ENV_BRIEF_VALUE 40 /* a longer value is only said to have changed, in a headline */

static const char *const part_labels[CT_DIFF_PARTS] = {
    "GPU busy",
    "synchronising",
    "in other CUDA calls",
    "outside CUDA calls (host work or an input wait)",
    "outside CUDA calls on a CPU (host work)",
    "outside CUDA calls asleep (an input wait)"};

static const char *time_text(double ns, char *buf, size_t size)
{
    if (isnan(ns))
        return "unknown";
    return ct_human_time(ns < 0 ? 0 : (uint64_t)(ns + 0.5), buf, size);
}

static const char *delta_time(double delta, char *buf, size_t size)
{
    char t[32];
    snprintf(buf, size, "%s%s", delta < 0 ? "-" : "+", time_text(fabs(delta), t, sizeof t));
    return buf;
}

static const char *count_text(double v, char *buf, size_t size)
{
    snprintf(buf, size, v >= 100 ? "%.0f" : "%.3g", isnan(v) ? 0 : v);
    return buf;
}

static const char *bytes_text(double v, char *buf, size_t size)
{
    return ct_human_bytes(isnan(v) ? 0 : v, buf, size);
}

static const char *percent(const struct ct_diff_number *n, char *buf, size_t size)
{
    double change = n->before > 0 ? 100 * (n->after - n->before) / n->before : 0;
    if (n->before > 0)
        snprintf(buf, size, fabs(change) < 10 ? "%+.1f%%" : "%+.0f%%", change);
    else
        snprintf(buf, size, "new");
    return buf;
}

static const char *unit_of(const struct ct_diff_pair *p)
{
    return p->basis == CT_DIFF_PER_STEP ? "step" : "second";
}

static double each(double time, double count)
{
    return count > 0 ? time / count : 0;
}

/* Appends to a line being made, after `separator` where it holds some;
 * nothing for "". */
static void add_to(char *out, size_t size, const char *separator, const char *text)
{
    size_t len = strlen(out);
    if (*text && len < size)
        snprintf(out + len, size - len, "%s%s", len ? separator : "", text);
}

/* "NAME 100.000 us -> 1.000 ms each (+2.700 ms a step)": what moved, short. */
static void item_brief(const struct ct_diff_item *it, const char *unit, char *out, size_t size)
{
    char a[32], b[32], d[32];
    if (it->only)
        snprintf(out, size, "%s %s (%s a %s)", it->name, it->only > 0 ? "new" : "gone",
                 count_text(it->only > 0 ? it->count.after : it->count.before, a, sizeof a), unit);
    else if (it->time.moved)
        snprintf(out, size, "%s %s a %s (%s \u2192 %s each)", it->name,
                 delta_time(it->time.after - it->time.before, d, sizeof d), unit,
                 time_text(each(it->time.before, it->count.before), a, sizeof a),
                 time_text(each(it->time.after, it->count.after), b, sizeof b));
    else
        snprintf(out, size, "%s %s \u2192 %s a %s", it->name,
                 count_text(it->count.before, a, sizeof a),
                 count_text(it->count.after, b, sizeof b), unit);
}

/* "NAME: 3 -> 3 a step, 100.000 us -> 1.000 ms each (+2.700 ms a step)" */
static void item_line(const struct ct_diff_item *it, const char *unit, char *out, size_t size)
{
    char c0[16], c1[16], t0[32], t1[32], d[32], was[512] = "";
    if (it->was)
        snprintf(was, sizeof was, " (was %.480s)", it->was);
    snprintf(out, size, "%s%s: %s \u2192 %s a %s, %s \u2192 %s each (%s a %s)%s", it->name, was,
             count_text(it->count.before, c0, sizeof c0),
             count_text(it->count.after, c1, sizeof c1), unit,
             time_text(each(it->time.before, it->count.before), t0, sizeof t0),
             time_text(each(it->time.after, it->count.after), t1, sizeof t1),
             delta_time(it->time.after - it->time.before, d, sizeof d), unit,
             it->only > 0   ? ", new"
             : it->only < 0 ? ", gone"
                            : "");
}

/* A side's value of a difference of the environment, as said: a variable
 * not set is "unset", anything else not known "none". */
static const char *env_value(const struct ct_diff_env *e, const char *value)
{
    return *value ? value : e->kind == CT_DIFF_ENV_VARIABLE ? "unset" : "none";
}

static void env_brief(const struct ct_diff_env *e, char *out, size_t size)
{
    const char *b = env_value(e, e->before), *a = env_value(e, e->after);
    if (e->kind == CT_DIFF_ENV_LIBRARY && strcmp(e->versions[0], e->versions[1]) != 0 &&
        *e->versions[0] && *e->versions[1])
        snprintf(out, size, "%s %s \u2192 %s%s", e->name, e->versions[0], e->versions[1],
                 strstr(e->how, "from another file") ? " from another file" : "");
    else if (e->kind == CT_DIFF_ENV_LIBRARY)
        snprintf(out, size, "%s %s", e->name, e->how);
    else if (e->kind == CT_DIFF_ENV_PROGRAM)
        snprintf(out, size, "different programs (%.200s \u2192 %.200s)", e->before, e->after);
    else if (strlen(b) > ENV_BRIEF_VALUE || strlen(a) > ENV_BRIEF_VALUE)
        snprintf(out, size, "%s changed", e->name);
    else
        snprintf(out, size, "%s %s \u2192 %s", e->name, b, a);
}

static void memory_brief(const char *what, const struct ct_diff_number *n, char *out, size_t size)
{
    char a[32], b[32], d[32];
    snprintf(out, size, "%s %s%s (%s \u2192 %s)", what, n->after < n->before ? "-" : "+",
             bytes_text(fabs(n->after - n->before), d, sizeof d),
             bytes_text(n->before, a, sizeof a), bytes_text(n->after, b, sizeof b));
}

/* Whether a host call's or line's time moved as the GPU's busy time in a
 * step did, and no more: the host waiting for the GPU's work, which the
 * headline says through the GPU's side. */
static int waits_for_gpu(const struct ct_diff_pair *p, const struct ct_diff_item *it)
{
    const struct ct_diff_number *busy = &p->steps.parts[CT_DIFF_GPU_BUSY];
    double host = it->time.after - it->time.before, gpu = busy->after - busy->before;
    return busy->moved && !it->only && !it->count.moved && host * gpu > 0 &&
           fabs(host) <= fabs(gpu) + busy->noise;
}

/* The first of a list the headline says: of host calls and lines, the
 * first that is not a wait for the GPU. */
static const struct ct_diff_item *first_cause(const struct ct_diff_pair *p,
                                              const struct ct_diff_items *items, int host)
{
    for (size_t i = 0; i < items->count; i++)
        if (!host || !waits_for_gpu(p, &items->items[i]))
            return &items->items[i];
    return NULL;
}

/* Whether a new call and a new line holding the host up are made as often:
 * most likely the one call at that line, said as one. */
static int new_at(const struct ct_diff_item *call, const struct ct_diff_item *line)
{
    return call->only > 0 && line->only > 0 &&
           fabs(call->count.after - line->count.after) <= 0.01 * call->count.after;
}

/* "outside CUDA calls +5.000 ms a step": a part of the step that moved. */
static void part_brief(const struct ct_diff_pair *p, int k, char *out, size_t size)
{
    char d[32];
    const struct ct_diff_number *part = &p->steps.parts[k];
    snprintf(out, size, "%s %s a step", part_labels[k],
             delta_time(part->after - part->before, d, sizeof d));
}

/* Adds a thing that moved to the headline's, up to HEADLINE_CAUSES. */
static void take(char *out, size_t size, size_t *n, const char *one)
{
    if ((*n)++ < HEADLINE_CAUSES)
        add_to(out, size, "; ", one);
}

/* The things that moved, in the order a headline says them: the
 * environment, what moved most of the GPU's work, the host's calls and
 * lines, memory, findings; where none did, the parts of the step. */
static void causes(const struct ct_diff_pair *p, char *out, size_t size)
{
    char one[512], count[16];
    size_t n = 0;
    for (size_t i = 0; i < p->env_count; i++) {
        env_brief(&p->env[i], one, sizeof one);
        take(out, size, &n, one);
    }
    const struct ct_diff_item *first[] = {
        first_cause(p, &p->kernels, 0), first_cause(p, &p->calls, 1), first_cause(p, &p->sites, 1)};
    if (first[1] && first[2] && new_at(first[1], first[2])) {
        snprintf(one, sizeof one, "%s new at %s (%s a %s)", first[1]->name, first[2]->name,
                 count_text(first[1]->count.after, count, sizeof count), unit_of(p));
        take(out, size, &n, one);
        first[1] = first[2] = NULL;
    }
    for (size_t l = 0; l < sizeof first / sizeof first[0]; l++) {
        if (!first[l])
            continue;
        item_brief(first[l], unit_of(p), one, sizeof one);
        take(out, size, &n, one);
    }
    if (p->copies.moved)
        take(out, size, &n, "GPU copies and sets moved");
    if (p->peak.moved || p->step_end.moved) {
        memory_brief(p->peak.moved ? "peak memory" : "memory at step end",
                     p->peak.moved ? &p->peak : &p->step_end, one, sizeof one);
        take(out, size, &n, one);
    }
    for (size_t i = 0; i < p->appeared_count; i++) {
        snprintf(one, sizeof one, "%s appeared", ct_finding_name(p->appeared[i]->id));
        if (ct_diff_counts_finding(p->appeared[i]))
            take(out, size, &n, one);
    }
    for (size_t i = 0; i < p->went_away_count; i++) {
        snprintf(one, sizeof one, "%s went away", ct_finding_name(p->went_away[i]->id));
        if (ct_diff_counts_finding(p->went_away[i]))
            take(out, size, &n, one);
    }
    const struct ct_diff_number *parts = p->steps.parts;
    int finer = parts[CT_DIFF_HOST_WORK].moved || parts[CT_DIFF_INPUT_WAIT].moved, none = !n;
    for (int k = 0; k < CT_DIFF_PARTS && none; k++)
        if (parts[k].moved && !(k == CT_DIFF_OUTSIDE_CUDA && finer)) {
            part_brief(p, k, one, sizeof one);
            take(out, size, &n, one);
        }
}

/* Whether the median step moved past its noise only by the time its
 * thread waited for a CPU more (or less): without that wait it did not. */
static int busier_machine(const struct ct_diff_steps *s)
{
    return !isnan(s->cpu_wait.before) &&
           fabs(s->judged.after - s->judged.before) <= s->judged.noise &&
           fabs(s->median.after - s->median.before) > s->judged.noise;
}

static const char *missing_steps(const struct ct_diff_pair *p)
{
    return !p->steps.count[0] && !p->steps.count[1] ? "either side"
           : !p->steps.count[0]                     ? "the before side"
                                                    : "the after side";
}

void ct_diff_pair_headline(const struct ct_diff_pair *p, char *out, size_t size)
{
    char a[32], b[32], c[32], d[32], lead[256], rest[1024] = "";
    const struct ct_diff_number *m = &p->steps.median;
    causes(p, rest, sizeof rest);
    if (p->basis != CT_DIFF_PER_STEP)
        snprintf(lead, sizeof lead,
                 "no steps on %s, figures per second of the CUDA part of the run stand in",
                 missing_steps(p));
    else if (m->moved)
        snprintf(lead, sizeof lead, "step time %s (%s \u2192 %s)", percent(m, c, sizeof c),
                 time_text(m->before, a, sizeof a), time_text(m->after, b, sizeof b));
    else if (busier_machine(&p->steps))
        snprintf(lead, sizeof lead,
                 "step time %s \u2192 %s, its change waiting for a CPU (%s \u2192 %s a step), "
                 "another load on the machine",
                 time_text(m->before, a, sizeof a), time_text(m->after, b, sizeof b),
                 time_text(p->steps.cpu_wait.before, c, sizeof c),
                 time_text(p->steps.cpu_wait.after, d, sizeof d));
    else
        snprintf(lead, sizeof lead, "step time %s \u2192 %s, within noise",
                 time_text(m->before, a, sizeof a), time_text(m->after, b, sizeof b));
    if (p->changed)
        snprintf(out, size, "%s%s%s", lead, *rest ? ": " : "", rest);
    else
        snprintf(out, size, "no significant change (%s)", lead);
}

/* "rank 3" or "pid 100 -> pid 200". */
static const char *pair_name(const struct ct_diff *d, const struct ct_diff_pair *p, char *out,
                             size_t size)
{
    const struct ct_job_process *b = &d->before->processes[p->before],
                                *a = &d->after->processes[p->after];
    if (b->identity.rank >= 0 && a->identity.rank == b->identity.rank)
        snprintf(out, size, "rank %lld", (long long)b->identity.rank);
    else
        snprintf(out, size, "pid %d \u2192 pid %d", (int)b->pid, (int)a->pid);
    return out;
}

/* "only before: rank 3"; "" when every process of the side paired. */
static void unpaired_text(const char *label, const struct ct_job *job, const size_t *which,
                          size_t count, char *out, size_t size)
{
    char names[512];
    *out = '\0';
    if (!count)
        return;
    ct_job_describe_processes(job, which, count, names, sizeof names);
    snprintf(out, size, "only %s: %s", label, names);
}

void ct_diff_headline(const struct ct_diff *d, char *out, size_t size)
{
    size_t changed = 0;
    char name[64], line[1536], named[1700];
    if (d->pair_count == 1 && !d->only_before_count && !d->only_after_count) {
        ct_diff_pair_headline(&d->pairs[0], out, size);
        return;
    }
    *out = '\0';
    for (size_t i = 0; i < d->pair_count; i++) {
        const struct ct_diff_pair *p = &d->pairs[i];
        if (!p->changed || changed++ >= HEADLINE_PAIRS)
            continue;
        ct_diff_pair_headline(p, line, sizeof line);
        snprintf(named, sizeof named, "%s: %s", pair_name(d, p, name, sizeof name), line);
        add_to(out, size, "; ", named);
    }
    snprintf(line, sizeof line, "%zu more changed", changed - HEADLINE_PAIRS);
    if (changed > HEADLINE_PAIRS)
        add_to(out, size, "; ", line);
    snprintf(line, sizeof line,
             changed ? "no significant change on the other %zu"
                     : "no significant change in the %zu pairs",
             d->pair_count - changed);
    if (d->pair_count > changed)
        add_to(out, size, "; ", line);
    unpaired_text("before", d->before, d->only_before, d->only_before_count, line, sizeof line);
    add_to(out, size, "; ", line);
    unpaired_text("after", d->after, d->only_after, d->only_after_count, line, sizeof line);
    add_to(out, size, "; ", line);
}

static void cmdline_text(const struct ct_job_process *p, char *out, size_t size)
{
    const struct ct_json_value *cmdline = ct_json_member(p->report, "cmdline");
    *out = '\0';
    for (size_t i = 0; cmdline && i < cmdline->count; i++) {
        const char *arg = ct_json_text(&cmdline->items[i]);
        add_to(out, size, " ", arg ? arg : "");
    }
}

static void print_side(FILE *out, const char *label, const char *operand, const struct ct_job *job)
{
    char cmdline[256];
    if (job->process_count != 1) {
        fprintf(out, "%s %s: %zu processes\n", label, operand, job->process_count);
        return;
    }
    cmdline_text(&job->processes[0], cmdline, sizeof cmdline);
    fprintf(out, "%s %s: pid %d, %s\n", label, operand, (int)job->processes[0].pid, cmdline);
}

static void print_steps(FILE *out, const struct ct_diff_pair *p)
{
    const struct ct_diff_steps *s = &p->steps;
    char a[32], b[32], c[32], d[32], e[32];
    if (p->basis != CT_DIFF_PER_STEP) {
        fprintf(out,
                "step time: no steps on %s; the figures below are per second of the CUDA "
                "part of the run, judged by their share alone\n",
                missing_steps(p));
        return;
    }
    fprintf(out, "step time (%llu \u2192 %llu steps; %s", (unsigned long long)s->count[0],
            (unsigned long long)s->count[1], s->source[0] ? s->source[0] : "?");
    if (s->source[1] && s->source[0] && strcmp(s->source[0], s->source[1]) != 0)
        fprintf(out, " \u2192 %s", s->source[1]);
    fprintf(out, ")\n  median %s \u2192 %s (%s%s); p99 %s \u2192 %s\n",
            time_text(s->median.before, a, sizeof a), time_text(s->median.after, b, sizeof b),
            percent(&s->median, c, sizeof c), s->median.moved ? "" : ", within noise",
            time_text(s->p99.before, d, sizeof d), time_text(s->p99.after, e, sizeof e));
    if (isnan(s->rank_z))
        fprintf(out,
                "  a change counts past %s (3.5 robust standard deviations of the steps: %s "
                "\u2192 %s each, or 5%% of the median)\n",
                time_text(s->median.noise, a, sizeof a), time_text(s->spread.before, b, sizeof b),
                time_text(s->spread.after, c, sizeof c));
    else
        fprintf(out,
                "  a change counts past %s (5%% of the median) where the steps also differ by "
                "rank (the rank-sum test's z past \u00b13.29; here %+.1f; robust standard "
                "deviation %s \u2192 %s)\n",
                time_text(s->median.noise, a, sizeof a), s->rank_z,
                time_text(s->spread.before, b, sizeof b), time_text(s->spread.after, c, sizeof c));
    if (!isnan(s->cpu_wait.before) && (s->cpu_wait.before > 0 || s->cpu_wait.after > 0))
        fprintf(out,
                "  waiting for a CPU %s \u2192 %s a step (runnable while another thread or "
                "process ran); judged without it: %s \u2192 %s\n",
                time_text(s->cpu_wait.before, a, sizeof a),
                time_text(s->cpu_wait.after, b, sizeof b), time_text(s->judged.before, c, sizeof c),
                time_text(s->judged.after, d, sizeof d));
    for (int k = 0; k < CT_DIFF_PARTS; k++)
        if (s->parts[k].moved)
            fprintf(out, "  %s %s \u2192 %s (%s) a step\n", part_labels[k],
                    time_text(s->parts[k].before, a, sizeof a),
                    time_text(s->parts[k].after, b, sizeof b),
                    delta_time(s->parts[k].after - s->parts[k].before, c, sizeof c));
}

static void print_environment(FILE *out, const struct ct_diff_pair *p)
{
    if (p->env_count)
        fprintf(out, "environment\n");
    for (size_t i = 0; i < p->env_count; i++) {
        const struct ct_diff_env *e = &p->env[i];
        fprintf(out, "  %s: %s \u2192 %s (%s)\n", e->name, env_value(e, e->before),
                env_value(e, e->after), e->how);
    }
}

static void print_items(FILE *out, const char *title, const struct ct_diff_items *items,
                        const char *unit)
{
    char line[1024];
    if (items->count)
        fprintf(out, "%s\n", title);
    for (size_t i = 0; i < items->count && i < SECTION_ITEMS; i++) {
        item_line(&items->items[i], unit, line, sizeof line);
        fprintf(out, "  %s\n", line);
    }
    if (items->count > SECTION_ITEMS)
        fprintf(out, "  and %zu more\n", items->count - SECTION_ITEMS);
}

static void print_work(FILE *out, const struct ct_diff_pair *p)
{
    char title[64], a[16], b[16];
    snprintf(title, sizeof title, "GPU work per %s", unit_of(p));
    print_items(out, title, &p->kernels, unit_of(p));
    if (p->copies.moved)
        fprintf(out, "%s  copies and sets: %s \u2192 %s a %s\n", p->kernels.count ? "" : title,
                count_text(p->copies.before, a, sizeof a), count_text(p->copies.after, b, sizeof b),
                unit_of(p));
    snprintf(title, sizeof title, "host calls per %s", unit_of(p));
    print_items(out, title, &p->calls, unit_of(p));
    snprintf(title, sizeof title, "lines that held the host up, per %s", unit_of(p));
    print_items(out, title, &p->sites, unit_of(p));
}

static void print_memory(FILE *out, const struct ct_diff_pair *p)
{
    char line[256];
    if (p->peak.moved || p->step_end.moved)
        fprintf(out, "memory\n");
    const struct ct_diff_number *figures[] = {&p->peak, &p->step_end};
    const char *const labels[] = {"peak", "at step end"};
    for (size_t i = 0; i < sizeof figures / sizeof figures[0]; i++) {
        if (!figures[i]->moved)
            continue;
        memory_brief(labels[i], figures[i], line, sizeof line);
        fprintf(out, "  %s\n", line);
    }
}

static void print_finding(FILE *out, const char *what, const struct ct_finding *f)
{
    fprintf(out, "  %s: %s (%s%s): %s\n", what, ct_finding_name(f->id),
            ct_severity_name(f->severity),
            ct_diff_counts_finding(f) ? "" : ", of this run's timing: not counted", f->message);
}

static void print_findings(FILE *out, const struct ct_diff_pair *p)
{
    if (p->appeared_count || p->went_away_count)
        fprintf(out, "findings\n");
    for (size_t i = 0; i < p->appeared_count; i++)
        print_finding(out, "appeared", p->appeared[i]);
    for (size_t i = 0; i < p->went_away_count; i++)
        print_finding(out, "went away", p->went_away[i]);
}

static void print_pair(FILE *out, const struct ct_diff *d, const struct ct_diff_pair *p)
{
    char name[64];
    if (d->pair_count > 1)
        fprintf(out, "\n%s\n", pair_name(d, p, name, sizeof name));
    else
        fprintf(out, "\n");
    print_steps(out, p);
    print_environment(out, p);
    print_work(out, p);
    print_memory(out, p);
    print_findings(out, p);
}

void ct_diff_print_text(FILE *out, const struct ct_diff *d, const struct ct_diff_operands *what)
{
    char line[4096], name[64], unchanged[1024] = "";
    ct_diff_headline(d, line, sizeof line);
    fprintf(out, "%s\n", line);
    print_side(out, "before:", what->before, d->before);
    print_side(out, "after: ", what->after, d->after);
    for (size_t i = 0; i < d->pair_count; i++)
        if (d->pairs[i].changed || d->pair_count == 1)
            print_pair(out, d, &d->pairs[i]);
        else
            add_to(unchanged, sizeof unchanged, ", ",
                   pair_name(d, &d->pairs[i], name, sizeof name));
    if (*unchanged)
        fprintf(out, "\nno significant change: %s\n", unchanged);
    unpaired_text("before", d->before, d->only_before, d->only_before_count, line, sizeof line);
    if (*line)
        fprintf(out, "%s\n", line);
    unpaired_text("after", d->after, d->only_after, d->only_after_count, line, sizeof line);
    if (*line)
        fprintf(out, "%s\n", line);
}
