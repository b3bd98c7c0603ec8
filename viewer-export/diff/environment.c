/*
 * What a pair's environment differs in (compare.h), all exact, in the
 * order a diff says them: the program and host; each CUDA-stack library
 * family loaded on one side only, or from another file, at another version
 * or of another build; the CUDA versions the runtime reported (where no
 * library line says it already) and NVML's driver; the devices, and per
 * GPU NVML sampled its clocks, power limit and PCIe link; the recorded
 * variables that changed. A variable whose name or value looks like a
 * secret is never in a trace (common/environment.c); the same
 * rule is applied again here, so a summary written by hand cannot make a
 * diff print one.
 */
#include "viewer-export/diff/compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/environment.h"
#include "common/array.h"

static struct ct_diff_env *add(struct ct_diff_pair *pair, enum ct_diff_env_kind kind,
                               const char *name, const char *how)
{
    pair->env = ct_array_grow(pair->env, pair->env_count, sizeof *pair->env);
    struct ct_diff_env *e = &pair->env[pair->env_count++];
    e->kind = kind;
    e->how = how;
    snprintf(e->name, sizeof e->name, "%s", name);
    return e;
}

static void add_texts(struct ct_diff_pair *pair, enum ct_diff_env_kind kind, const char *name,
                      const char *before, const char *after, const char *how)
{
    struct ct_diff_env *e = add(pair, kind, name, how);
    snprintf(e->before, sizeof e->before, "%s", before);
    snprintf(e->after, sizeof e->after, "%s", after);
}

static const char *base_name(const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    return slash ? slash + 1 : path ? path : "";
}

static void program_and_host(const struct ct_job_process *const side[2], struct ct_diff_pair *pair)
{
    const char *program[2], *host[2];
    for (int s = 0; s < 2; s++) {
        const struct ct_json_value *cmdline = ct_json_member(side[s]->report, "cmdline");
        program[s] = base_name(cmdline && cmdline->count ? ct_json_text(&cmdline->items[0]) : "");
        host[s] = side[s]->identity.host;
    }
    if (strcmp(program[0], program[1]) != 0)
        add_texts(pair, CT_DIFF_ENV_PROGRAM, "program", program[0], program[1],
                  "different programs");
    if (strcmp(host[0], host[1]) != 0)
        add_texts(pair, CT_DIFF_ENV_HOST, "host", host[0], host[1], "another host");
}

/* One side's copies of a library family: "VERSION (REALPATH)" each, and
 * their realpaths, versions and build ids, to compare. */
struct family_copies {
    char text[512], paths[1024], versions[128], builds[512];
    int count;
};

static void append(char *out, size_t size, const char *text)
{
    size_t len = strlen(out);
    snprintf(out + len, size - len, "%s%s", len ? ", " : "", text);
}

static void copies_of(const struct ct_json_value *libraries, const char *family,
                      struct family_copies *c)
{
    memset(c, 0, sizeof *c);
    for (size_t i = 0; libraries && i < libraries->count; i++) {
        const struct ct_json_value *lib = &libraries->items[i];
        const char *f = ct_json_text(ct_json_member(lib, "family"));
        if (!f || strcmp(f, family) != 0)
            continue;
        const char *path = ct_json_text(ct_json_member(lib, "realpath"));
        const char *version = ct_json_text(ct_json_member(lib, "version"));
        const char *build = ct_json_text(ct_json_member(lib, "build_id"));
        char one[512];
        snprintf(one, sizeof one, "%s (%s)", version && *version ? version : "?",
                 path ? path : "?");
        append(c->text, sizeof c->text, one);
        append(c->paths, sizeof c->paths, path ? path : "");
        append(c->versions, sizeof c->versions, version ? version : "");
        append(c->builds, sizeof c->builds, build ? build : "");
        c->count++;
    }
}

static const char *library_change(const struct family_copies *b, const struct family_copies *a)
{
    int paths = strcmp(b->paths, a->paths) != 0, versions = strcmp(b->versions, a->versions) != 0;
    if (!b->count || !a->count)
        return b->count ? "only before" : "only after";
    if (paths && versions)
        return "another version, from another file";
    if (paths)
        return "from another file";
    if (versions)
        return "another version";
    return strcmp(b->builds, a->builds) != 0 ? "another build of the same file" : NULL;
}

/* The family of entry `i` of `list`, unless an entry before it had it. */
static const char *new_family(const struct ct_json_value *list, size_t i)
{
    const char *family = ct_json_text(ct_json_member(&list->items[i], "family"));
    for (size_t k = 0; family && k < i; k++) {
        const char *earlier = ct_json_text(ct_json_member(&list->items[k], "family"));
        if (earlier && strcmp(earlier, family) == 0)
            return NULL;
    }
    return family;
}

static void libraries(const struct ct_job_process *const side[2], struct ct_diff_pair *pair)
{
    const struct ct_json_value *list[2] = {ct_json_member(side[0]->report, "libraries"),
                                           ct_json_member(side[1]->report, "libraries")};
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; list[s] && i < list[s]->count; i++) {
            const char *family = new_family(list[s], i);
            struct family_copies c[2];
            copies_of(list[0], family ? family : "", &c[0]);
            copies_of(list[1], family ? family : "", &c[1]);
            const char *how = family && !(s && c[0].count) ? library_change(&c[0], &c[1]) : NULL;
            if (!how)
                continue;
            add_texts(pair, CT_DIFF_ENV_LIBRARY, family, c[0].text, c[1].text, how);
            struct ct_diff_env *e = &pair->env[pair->env_count - 1];
            for (int k = 0; k < 2; k++)
                memcpy(e->versions[k], c[k].versions, sizeof e->versions[k]);
        }
}

static int has_library_line(const struct ct_diff_pair *pair, const char *family)
{
    for (size_t i = 0; i < pair->env_count; i++)
        if (pair->env[i].kind == CT_DIFF_ENV_LIBRARY && strcmp(pair->env[i].name, family) == 0)
            return 1;
    return 0;
}

/* 13000 as "13.0"; "" when unknown. */
static void cuda_version(double v, char *out, size_t size)
{
    if (isnan(v) || v <= 0)
        snprintf(out, size, "%s", "");
    else
        snprintf(out, size, "%d.%d", (int)v / 1000, (int)v % 1000 / 10);
}

static void versions(const struct ct_job_process *const side[2], struct ct_diff_pair *pair)
{
    static const char *const keys[][3] = {{"versions.runtime", "CUDA runtime", "cudart"},
                                          {"versions.driver", "CUDA driver", "cuda"}};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        char v[2][16];
        for (int s = 0; s < 2; s++)
            cuda_version(ct_diff_value(side[s]->report, keys[k][0]), v[s], sizeof v[s]);
        if (strcmp(v[0], v[1]) != 0 && !has_library_line(pair, keys[k][2]))
            add_texts(pair, CT_DIFF_ENV_VERSION, keys[k][1], v[0], v[1], "another version");
    }
    const char *nvml[2];
    for (int s = 0; s < 2; s++) {
        nvml[s] =
            ct_json_text(ct_json_member(ct_json_member(side[s]->report, "nvml"), "driver_version"));
        nvml[s] = nvml[s] ? nvml[s] : "";
    }
    if (strcmp(nvml[0], nvml[1]) != 0)
        add_texts(pair, CT_DIFF_ENV_VERSION, "NVIDIA driver", nvml[0], nvml[1], "another version");
}

static void joined(const struct ct_json_value *list, char *out, size_t size)
{
    *out = '\0';
    for (size_t i = 0; list && i < list->count; i++) {
        const char *text = ct_json_text(&list->items[i]);
        append(out, size, text ? text : "?");
    }
}

/* A figure of a GPU NVML sampled: its path in the gpu_health entry, how it
 * is said, the unit it is written in (divided by `scale`), and the share
 * it may move by unchanged (a clock while busy wanders; a limit does not). */
struct gpu_figure {
    const char *path, *label, *format;
    double scale, tolerance;
};

static const struct gpu_figure gpu_figures[] = {
    {"name", "name", NULL, 1, 0},
    {"sm_clock_max_mhz", "SM clock max", "%.0f MHz", 1, 0},
    {"memory_clock_max_mhz", "memory clock max", "%.0f MHz", 1, 0},
    {"sm_clock_mhz.median", "SM clock while busy", "%.0f MHz", 1, 0.05},
    {"default_power_limit_mw", "default power limit", "%.0f W", 1000, 0},
    {"enforced_power_limit_mw.median", "power limit", "%.0f W", 1000, 0},
    {"pcie_generation_max", "PCIe generation max", "gen %.0f", 1, 0},
    {"pcie_width_max", "PCIe width max", "x%.0f", 1, 0},
    {"pcie_generation.median", "PCIe generation while busy", "gen %.0f", 1, 0},
    {"pcie_width.median", "PCIe width while busy", "x%.0f", 1, 0},
};

static const struct ct_json_value *gpu_of(const struct ct_json_value *health, double device)
{
    for (size_t i = 0; health && i < health->count; i++)
        if (ct_diff_value(&health->items[i], "device") == device)
            return &health->items[i];
    return NULL;
}

static void gpu_figure_text(const struct ct_json_value *gpu, const struct gpu_figure *f, char *out,
                            size_t size, double *value)
{
    *value = f->format ? ct_diff_value(gpu, f->path) : NAN;
    const char *text = f->format ? NULL : ct_json_text(ct_json_member(gpu, f->path));
    if (f->format && !isnan(*value))
        snprintf(out, size, f->format, *value / f->scale);
    else
        snprintf(out, size, "%s", text ? text : "");
}

static void gpu(const struct ct_job_process *const side[2], struct ct_diff_pair *pair)
{
    const struct ct_json_value *health[2] = {ct_json_member(side[0]->report, "gpu_health"),
                                             ct_json_member(side[1]->report, "gpu_health")};
    for (size_t i = 0; health[0] && health[1] && i < health[0]->count; i++) {
        double device = ct_diff_value(&health[0]->items[i], "device");
        const struct ct_json_value *gpu[2] = {&health[0]->items[i], gpu_of(health[1], device)};
        for (size_t k = 0; gpu[1] && k < sizeof gpu_figures / sizeof gpu_figures[0]; k++) {
            const struct gpu_figure *f = &gpu_figures[k];
            char text[2][128], name[96];
            double v[2];
            for (int s = 0; s < 2; s++)
                gpu_figure_text(gpu[s], f, text[s], sizeof text[s], &v[s]);
            int same = strcmp(text[0], text[1]) == 0 ||
                       (f->tolerance && fabs(v[1] - v[0]) <= f->tolerance * v[0]);
            snprintf(name, sizeof name, "GPU %.0f %s", device, f->label);
            if (!same)
                add_texts(pair, CT_DIFF_ENV_DEVICE, name, text[0], text[1], "changed");
        }
    }
}

static void devices(const struct ct_job_process *const side[2], struct ct_diff_pair *pair)
{
    char names[2][512];
    for (int s = 0; s < 2; s++)
        joined(ct_json_member(side[s]->report, "devices"), names[s], sizeof names[s]);
    if (strcmp(names[0], names[1]) != 0)
        add_texts(pair, CT_DIFF_ENV_DEVICE, "devices", names[0], names[1], "other devices");
    gpu(side, pair);
}

static const char *variable(const struct ct_json_value *environment, const char *name)
{
    const char *value = ct_json_text(ct_json_member(environment, name));
    return value && ct_environment_recorded(name, strlen(name), value) ? value : NULL;
}

static void variables(const struct ct_job_process *const side[2], struct ct_diff_pair *pair)
{
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; side[s]->environment && i < side[s]->environment->count; i++) {
            const char *name = side[s]->environment->items[i].key;
            const char *v[2] = {variable(side[0]->environment, name),
                                variable(side[1]->environment, name)};
            if ((s && v[0]) || !v[s] || (v[0] && v[1] && strcmp(v[0], v[1]) == 0))
                continue; /* said already, not recorded, or the same */
            add_texts(pair, CT_DIFF_ENV_VARIABLE, name, v[0] ? v[0] : "", v[1] ? v[1] : "",
                      !v[0]   ? "set"
                      : !v[1] ? "unset"
                              : "changed");
        }
}

void ct_diff_environment(const struct ct_job_process *before, const struct ct_job_process *after,
                         struct ct_diff_pair *pair)
{
    const struct ct_job_process *side[2] = {before, after};
    program_and_host(side, pair);
    libraries(side, pair);
    versions(side, pair);
    devices(side, pair);
    variables(side, pair);
}
