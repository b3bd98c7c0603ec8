/*
 * The findings about which CUDA libraries a process loaded, and how:
 * duplicate-library (two files of one library family mapped at once),
 * library-load-failed (an object asked for a CUDA library and got it by no
 * name it tried), shadowed-library (LD_LIBRARY_PATH or ld.so.conf beat the
 * asking library's own RUNPATH copy), fallback-resolution (a library its
 * requester's own RPATH/RUNPATH meant to provide was found somewhere else,
 * as when a pip wheel is missing), version-mismatch (libraries of one stack
 * from different releases), toolkit-mismatch (a runtime or cuDNN found in
 * another toolkit than the one CUDA_HOME names) and no-kernel-image (a
 * launch found no code for this GPU in its library's fat binary). Each
 * message names the files, the versions and the fix. A healthy process gets
 * none.
 */
#include "viewer-export/findings/findings.h"
#include "viewer-export/output/report_output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudatrace/trace_names.h"
#include "common/entry_list.h"
#include "common/library_family.h"

static const char *version_or_unknown(const struct ct_library_entry *lib)
{
    return *lib->version ? lib->version : "unknown version";
}

/* Whether `b` is another file of `a`'s family that was mapped while `a` was
 * (a load time of 0 is unknown: from the start; no unload: to the end). */
static int copy_beside(const struct ct_library_entry *a, const struct ct_library_entry *b)
{
    if (strcmp(b->family, a->family) != 0 || strcmp(b->realpath, a->realpath) == 0)
        return 0;
    return (!a->unloaded_ns || b->loaded_ns < a->unloaded_ns) &&
           (!b->unloaded_ns || a->loaded_ns < b->unloaded_ns);
}

static void duplicates(const struct ct_process_report *p, struct ct_findings *out)
{
    const struct ct_library_entry *libs = p->libraries.mapped;
    size_t count = p->libraries.mapped_count;
    for (size_t i = 0; i < count; i++) {
        const struct ct_library_entry *a = &libs[i];
        int reported = 0, copies = 1;
        for (size_t k = 0; k < i; k++)
            reported |= copy_beside(&libs[k], a);
        for (size_t k = i + 1; k < count; k++)
            copies += copy_beside(a, &libs[k]);
        if (reported || copies < 2)
            continue;
        struct ct_finding *f =
            ct_finding_add(out, CT_FINDING_DUPLICATE_LIBRARY, p->pid,
                           "%d copies of lib%s are loaded in one process: %s (%s)", copies,
                           a->family, a->realpath, version_or_unknown(a));
        ct_finding_add_library(f, a);
        for (size_t k = i + 1; k < count; k++) {
            if (!copy_beside(a, &libs[k]))
                continue;
            ct_finding_append(f, " and %s (%s)", libs[k].realpath, version_or_unknown(&libs[k]));
            ct_finding_add_library(f, &libs[k]);
        }
        ct_finding_append(
            f, "; calls may reach either copy (invalid handles, crashes). Keep the one the "
               "framework was built for: remove the other from LD_LIBRARY_PATH, the "
               "environment or the install.");
    }
}

/* The leading number of a version string ("12" of "12.4.1"), or -1. */
static long major_of(const char *version)
{
    char *end;
    long major = strtol(version, &end, 10);
    return end == version ? -1 : major;
}

/* The libraries whose majors follow the CUDA release's (CUDA 13 ships
 * libcublas.so.13; cuFFT, cuDNN and the rest number their own). */
static int follows_cuda(const char *family)
{
    static const char *const families[] = {"cublas", "cublasLt", "nvrtc", "nvJitLink", "cupti"};
    for (size_t i = 0; i < sizeof families / sizeof *families; i++)
        if (strcmp(family, families[i]) == 0)
            return 1;
    return 0;
}

/* The highest CUDA major a name or path among the ':'-separated `list`
 * stands for (libcudart.so.12: 12), or -1 when none follows CUDA's. */
static long cuda_major(const char *list)
{
    long highest = -1;
    char family[64], name[4096];
    for (const char *at = list; ct_list_next(&at, ':', name, sizeof name);)
        if (ct_library_family(name, family, sizeof family) &&
            (strcmp(family, "cudart") == 0 || follows_cuda(family)) &&
            ct_soname_major(name) > highest)
            highest = ct_soname_major(name);
    return highest;
}

/* `list` (':'-separated) as "a, b, c", and how many entries it has. */
static const char *comma_list(const char *list, int *count)
{
    static char text[4096];
    char entry[4096];
    size_t used = 0;
    text[0] = '\0';
    *count = 0;
    for (const char *at = list; ct_list_next(&at, ':', entry, sizeof entry) && used < sizeof text;
         (*count)++)
        used += (size_t)snprintf(text + used, sizeof text - used, "%s%s", used ? ", " : "", entry);
    return text;
}

/* The fix: with other majors of the missing libraries installed, the
 * releases on each side when the names tell them. */
static void fix_failed_load(const struct ct_failed_load *load, struct ct_finding *f, int many)
{
    int count;
    long built_for = cuda_major(load->missing), installed = cuda_major(load->other_majors);
    const char *others = comma_list(load->other_majors, &count);
    if (!count)
        ct_finding_append(f,
                          " Install %s, or put %s directory on the asking library's RUNPATH or on "
                          "LD_LIBRARY_PATH.",
                          many ? "them" : "it", many ? "their" : "its");
    else if (built_for > 0 && installed > 0 && built_for != installed)
        ct_finding_append(
            f,
            " It was built for CUDA %ld; this machine has CUDA %ld's (%s): install the CUDA "
            "%ld runtime wheels or a build for CUDA %ld.",
            built_for, installed, others, built_for, installed);
    else
        ct_finding_append(
            f,
            " Other majors of %s are installed (%s): install the ones it was built for, or "
            "a build made for these.",
            many ? "them" : "it", others);
}

/* The rest of the story of a dependency that failed: the others missing
 * with it, what the failed load had mapped and undid, and the fix. */
static void explain_failed_load(const struct ct_process_report *p,
                                const struct ct_failed_load *load, struct ct_finding *f)
{
    int count;
    const char *missing = comma_list(load->missing, &count);
    if (count > 1)
        ct_finding_append(
            f, " %s needs %d libraries that cannot be found (the loader stops at the first): %s.",
            load->requested_by, count, missing);
    const char *rolled_back = comma_list(load->rolled_back, &count);
    if (count)
        ct_finding_append(f, " The failed load had mapped %s and unmapped %s again.", rolled_back,
                          count > 1 ? "them" : "it");
    for (size_t i = 0; i < p->libraries.mapped_count; i++)
        if (p->libraries.mapped[i].rolled_back_by &&
            strcmp(p->libraries.mapped[i].rolled_back_by, load->requested_as) == 0)
            ct_finding_add_library(f, &p->libraries.mapped[i]);
    fix_failed_load(load, f, strchr(load->missing, ':') != NULL);
}

/* library-load-failed's own evidence: the load that failed. */
struct failed_load_evidence {
    const struct ct_failed_load *load;
};

static void failed_load_json(struct ct_json *j, const void *own)
{
    const struct failed_load_evidence *e = own;
    ct_failed_loads_json(j, e->load);
}

static void failed_loads(const struct ct_process_report *p, struct ct_findings *out)
{
    /* Probes (another name of the library got it) are not among the failed
     * loads (model/libraries.c); the driver is driver-missing's. */
    for (size_t i = 0; i < p->libraries.failed_count; i++) {
        const struct ct_failed_load *load = &p->libraries.failed[i];
        if (ct_is_driver_name(load->requested_as))
            continue;
        struct ct_finding *f =
            ct_finding_add(out, CT_FINDING_LIBRARY_LOAD_FAILED, p->pid,
                           "%s could not be loaded (asked for by %s): %s; %s.", load->requested_as,
                           ct_requester_text(load->requested_by, load->requested_from), load->error,
                           ct_failed_load_searched(load));
        explain_failed_load(p, load, f);
        struct failed_load_evidence *own = ct_finding_own(f, sizeof *own, failed_load_json);
        own->load = load;
    }
}

/* shadowed-library's own evidence: the copy on the RUNPATH, not used. */
struct shadowed_evidence {
    const char *runpath_copy;
};

static void shadowed_json(struct ct_json *j, const void *own)
{
    const struct shadowed_evidence *e = own;
    ct_json_string(j, "runpath_copy", e->runpath_copy);
}

/* The loader took another copy than the one on the asking library's RUNPATH,
 * because LD_LIBRARY_PATH or the system configuration came first. */
static void shadowed(const struct ct_process_report *p, struct ct_findings *out)
{
    for (size_t i = 0; i < p->libraries.mapped_count; i++) {
        const struct ct_library_entry *lib = &p->libraries.mapped[i];
        /* Found through the requester's own RUNPATH, it was not shadowed. */
        if (!lib->runpath_copy || !*lib->runpath_copy ||
            (lib->found_via && strcmp(lib->found_via, ct_value_via_runpath) == 0))
            continue;
        const char *so = strstr(lib->runpath_copy, ".so.");
        struct ct_finding *f = ct_finding_add(
            out, CT_FINDING_SHADOWED_LIBRARY, p->pid,
            "%s was found through %s as %s (%s), although %s ships its own copy on its RUNPATH, "
            "%s (%s), which was not used. Remove the directory from LD_LIBRARY_PATH (or the "
            "ld.so.conf entry) so each library gets the copy it was built with.",
            lib->requested_as, lib->found_via, lib->realpath, version_or_unknown(lib),
            lib->requested_by, lib->runpath_copy, so ? so + 4 : "unknown version");
        ct_finding_add_library(f, lib);
        struct shadowed_evidence *own = ct_finding_own(f, sizeof *own, shadowed_json);
        own->runpath_copy = lib->runpath_copy;
    }
}

/* Whether two dotted versions differ in the parts both give ("9.26.0.51"
 * and "9.26.0" agree; "9.19.0" and "9.26.0.51" do not). */
static int versions_differ(const char *a, const char *b)
{
    while (*a && *b) {
        char *end_a, *end_b;
        long x = strtol(a, &end_a, 10), y = strtol(b, &end_b, 10);
        if (end_a == a || end_b == b)
            return 0;
        if (x != y)
            return 1;
        a = *end_a == '.' ? end_a + 1 : end_a + strlen(end_a);
        b = *end_b == '.' ? end_b + 1 : end_b + strlen(end_b);
    }
    return 0;
}

/* The loader found a library outside the directories its requester's own
 * RPATH/RUNPATH meant for it, none of which held it (a pip wheel removed or
 * never installed, an emptied $ORIGIN directory): the requester now runs
 * with whatever the system had, of whatever version. */
static void fallbacks(const struct ct_process_report *p, struct ct_findings *out)
{
    for (size_t i = 0; i < p->libraries.mapped_count; i++) {
        const struct ct_library_entry *lib = &p->libraries.mapped[i];
        if (!lib->expected_dirs || !*lib->expected_dirs)
            continue;
        int pinned = *lib->expected_version != '\0';
        int wrong_version = pinned && versions_differ(lib->expected_version, lib->version);
        char pin[512] = "", fix[512];
        if (pinned) {
            snprintf(pin, sizeof pin, ", where %s was built against %s==%s", lib->expected_by,
                     lib->expected_package, lib->expected_version);
            snprintf(fix, sizeof fix,
                     "reinstall the wheel that ships it (pip install --force-reinstall %s==%s)",
                     lib->expected_package, lib->expected_version);
        } else {
            snprintf(fix, sizeof fix, "reinstall the package that ships it into %s",
                     lib->expected_dirs);
        }
        struct ct_finding *f = ct_finding_add(
            out, CT_FINDING_FALLBACK_RESOLUTION, p->pid,
            "%s was asked for by %s, whose own search path expects it in %s, but none of those "
            "held it: the loader fell back to %s and took %s (version %s)%s. Fix: %s, or remove "
            "the stale copy it fell back to.",
            lib->requested_as, lib->requested_by, lib->expected_dirs, lib->found_via, lib->realpath,
            version_or_unknown(lib), pin, fix);
        if (wrong_version)
            ct_finding_set_severity(f, CT_SEVERITY_ERROR);
        ct_finding_add_library(f, lib);
    }
}

/* version-mismatch's own evidence where cuDNN was built for another CUDA:
 * the runtime's version. */
struct built_for_evidence {
    int64_t runtime_version;
};

static void built_for_json(struct ct_json *j, const void *own)
{
    const struct built_for_evidence *e = own;
    ct_json_int(j, "runtime_version", e->runtime_version);
}

/* Libraries of one stack that disagree: cuDNN sub-libraries of another major
 * than libcudnn; the libraries that follow the CUDA major (cuBLAS, cuBLASLt,
 * NVRTC, nvJitLink, CUPTI) against the runtime's; cuDNN built for another
 * CUDA major than the runtime in use. */
static void version_mismatches(const struct ct_process_report *p, struct ct_findings *out)
{
    const struct ct_library_entry *cudart = NULL, *cudnn = NULL;
    for (size_t i = 0; i < p->libraries.mapped_count; i++) {
        if (strcmp(p->libraries.mapped[i].family, "cudart") == 0 && !cudart)
            cudart = &p->libraries.mapped[i];
        if (strcmp(p->libraries.mapped[i].family, "cudnn") == 0 && !cudnn)
            cudnn = &p->libraries.mapped[i];
    }
    for (size_t i = 0; i < p->libraries.mapped_count; i++) {
        const struct ct_library_entry *lib = &p->libraries.mapped[i], *against = NULL;
        if (cudnn && strncmp(lib->family, "cudnn_", 6) == 0)
            against = cudnn;
        if (cudart && follows_cuda(lib->family))
            against = cudart;
        long mine = major_of(lib->version), theirs = against ? major_of(against->version) : -1;
        if (!against || mine < 0 || theirs < 0 || mine == theirs)
            continue;
        struct ct_finding *f = ct_finding_add(
            out, CT_FINDING_VERSION_MISMATCH, p->pid,
            "lib%s %s (major %ld) is loaded with lib%s %s (major %ld): libraries of one stack "
            "must come from the same release. Install matching versions.",
            lib->family, lib->realpath, mine, against->family, against->realpath, theirs);
        ct_finding_add_library(f, lib);
        ct_finding_add_library(f, against);
    }
    /* cuDNN built for another CUDA major than the runtime the program uses. */
    long runtime_major = p->cuda.runtime_version > 0 ? (long)(p->cuda.runtime_version / 1000) : -1;
    for (size_t i = 0; runtime_major > 0 && i < p->libraries.mapped_count; i++) {
        const struct ct_library_entry *lib = &p->libraries.mapped[i];
        if (lib->built_for_cuda <= 0 || lib->built_for_cuda == runtime_major)
            continue;
        struct ct_finding *f = ct_finding_add(
            out, CT_FINDING_VERSION_MISMATCH, p->pid,
            "lib%s %s was built for CUDA %lld (its RUNPATH names cu%lld) but the runtime in use "
            "is CUDA %lld.%lld: install the cuDNN build for CUDA %ld.",
            lib->family, lib->realpath, (long long)lib->built_for_cuda,
            (long long)lib->built_for_cuda, (long long)p->cuda.runtime_version / 1000,
            (long long)(p->cuda.runtime_version % 1000) / 10, runtime_major);
        ct_finding_add_library(f, lib);
        struct built_for_evidence *own = ct_finding_own(f, sizeof *own, built_for_json);
        own->runtime_version = p->cuda.runtime_version;
    }
}

/* A runtime or cuDNN that the search path or the system configuration found
 * in another toolkit than the one CUDA_HOME (or /usr/local/cuda) names: the
 * stale ld.so.conf entry, which gives no error, only wrong behaviour. */
static void toolkit_mismatches(const struct ct_process_report *p, struct ct_findings *out)
{
    if (!p->libraries.toolkit_version || !*p->libraries.toolkit_version)
        return;
    for (size_t i = 0; i < p->libraries.mapped_count; i++) {
        const struct ct_library_entry *lib = &p->libraries.mapped[i];
        const char *toolkit = strstr(lib->realpath, "/cuda-");
        if (!lib->found_via || !toolkit ||
            (strcmp(lib->family, "cudart") != 0 && strncmp(lib->family, "cudnn", 5) != 0) ||
            (strcmp(lib->found_via, ct_value_via_cache) != 0 &&
             strcmp(lib->found_via, ct_value_via_library_path) != 0))
            continue;
        size_t len = strcspn(toolkit + 6, "/");
        if (len == strlen(p->libraries.toolkit_version) &&
            strncmp(toolkit + 6, p->libraries.toolkit_version, len) == 0)
            continue;
        struct ct_finding *f = ct_finding_add(
            out, CT_FINDING_TOOLKIT_MISMATCH, p->pid,
            "%s was found through %s in CUDA %.*s (%s), but the toolkit in use is CUDA %s "
            "(%s). Remove the stale entry (an /etc/ld.so.conf.d file or LD_LIBRARY_PATH "
            "directory) for the other toolkit, then run ldconfig.",
            lib->requested_as, lib->found_via, (int)len, toolkit + 6, lib->realpath,
            p->libraries.toolkit_version, p->libraries.toolkit_root);
        ct_finding_add_library(f, lib);
    }
}

/* no-kernel-image's own evidence: the kernel and its library as the
 * collector saw them, and the GPU's compute capability. */
struct kernel_image_evidence {
    const struct ct_missing_image *image;
    const char *compute_capability;
};

static void kernel_image_json(struct ct_json *j, const void *own)
{
    const struct kernel_image_evidence *e = own;
    ct_json_string(j, "kernel", e->image->kernel);
    ct_json_string(j, "library", e->image->library);
    ct_json_list(j, "library_archs", e->image->archs, ',');
    ct_json_string(j, "compute_capability", e->compute_capability);
}

/* Launches that failed with cudaErrorNoKernelImageForDevice: the library was
 * built without code this GPU can run. */
static void missing_kernel_images(const struct ct_process_report *p, struct ct_findings *out)
{
    const char *gpu = p->cuda.device_names ? p->cuda.devices[0] : "this GPU";
    const char *capability = p->cuda.device_names ? p->cuda.device_capability[0] : "";
    for (size_t i = 0; i < p->libraries.missing_image_count; i++) {
        const struct ct_missing_image *m = &p->libraries.missing_images[i];
        struct ct_finding *f = ct_finding_add(
            out, CT_FINDING_NO_KERNEL_IMAGE, p->pid,
            "kernel %s (in %s) has no code for %s%s%s%s: the library carries %s. Rebuild it "
            "with code for this GPU (-gencode arch=compute_XY,code=sm_XY, or PTX to be "
            "compiled at load time), or install a build made for it.",
            m->kernel, *m->library ? m->library : "an unknown file", gpu,
            *capability ? " (compute capability " : "", capability, *capability ? ")" : "",
            *m->archs ? m->archs : "no GPU code at all");
        struct kernel_image_evidence *own = ct_finding_own(f, sizeof *own, kernel_image_json);
        own->image = m;
        own->compute_capability = capability;
    }
}

void ct_findings_libraries(const struct ct_process_report *p, struct ct_findings *out)
{
    duplicates(p, out);
    failed_loads(p, out);
    shadowed(p, out);
    fallbacks(p, out);
    version_mismatches(p, out);
    toolkit_mismatches(p, out);
    missing_kernel_images(p, out);
}
