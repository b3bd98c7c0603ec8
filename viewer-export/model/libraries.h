/*
 * The CUDA-stack libraries of a process as the report knows them
 * (libraries.c): the files it had mapped, the loader's account of each load
 * (the audit module's when the process ran with it, else the preload's),
 * the loads that failed, the names that loaded nothing and are no failure
 * (probes, RTLD_NOLOAD queries), the versions the libraries' own APIs
 * reported, unloads, the toolkit the environment points at, and the kernels
 * a launch found no code for.
 */
#ifndef CT_VIEWER_MODEL_LIBRARIES_H
#define CT_VIEWER_MODEL_LIBRARIES_H

#include <stddef.h>
#include <stdint.h>

#include "viewer-export/read/trace_decode.h"

/* A name asked for that loaded nothing and is no failure: a probe, another
 * name of a library that the same requester got (cuDNN 9 asks for
 * libcudnn_graph.so.9.19.0 and libcudnn_graph.so.9.19 before
 * libcudnn_graph.so.9, the one installed), or an RTLD_NOLOAD query, which
 * loads nothing by design. */
struct ct_probe {
    const char *requested_as, *requested_by, *requested_from, *seen_by;
    uint64_t attempts;    /* identical ones folded into this one */
    const char *found_as; /* a probe: the name its requester got the library by */
    size_t library;       /* a probe: the entry of `mapped` it belongs to */
};

/* A CUDA-stack library the process had mapped (strings outlive the report). */
struct ct_library_entry {
    const char *path, *realpath, *family, *soname, *version, *build_id;
    const char *version_from; /* "api", "file name", "cudnn_version.h"; "" in older traces */
    uint64_t size;
    /* The loader's view: the audit module's account when the process ran
     * with it, else the preload's; NULL when neither saw the load. */
    const char *requested_as, *requested_by, *found_via;
    const char *requested_from;      /* the Python line that asked (ctypes), or "" */
    const char *seen_by;             /* "audit" or "preload" */
    uint64_t loaded_ns, unloaded_ns; /* 0 when not known / not unloaded */
    const char *runpath_copy;        /* a different copy on the requester's RUNPATH, or "" */
    /* Found elsewhere although the requester's own search path names
     * directories meant for it (none held it): those directories, ':'-
     * separated, or ""; and, from the requester's wheel, the version it
     * pins, the NVIDIA package and the wheel ("" when unknown). */
    const char *expected_dirs, *expected_version, *expected_package, *expected_by;
    /* Mapped during a load that failed and unmapped with it: the name that
     * failed (a failed load's requested_as), or "". */
    const char *rolled_back_by;
    uint64_t api_version;          /* what the library's own API reported, or 0 */
    int64_t built_for_cuda;        /* cuDNN: the CUDA major its RUNPATH names, or 0 */
    const struct ct_probe *probes; /* the probes that found this library another way */
    size_t probe_count;
};

/* A CUDA-stack library the loader looked for and did not load, by any name
 * its requester asked for. */
struct ct_failed_load {
    const char *requested_as, *requested_by, *searched; /* searched: ':'-separated */
    const char *error;
    const char *seen_by; /* "audit" or "preload" */
    uint64_t attempts;   /* identical failures folded into this one */
    /* A dependency of requested_by: all of its dependencies that cannot be
     * found and the other majors of them installed; and the realpaths of
     * the libraries the failed load rolled back (each ':'-separated, "" when
     * none). */
    const char *missing, *other_majors, *rolled_back;
    const char *requested_from; /* the Python line that asked (ctypes), or "" */
};

/* A kernel whose launch failed with cudaErrorNoKernelImageForDevice. */
struct ct_missing_image {
    const char *kernel, *library, *archs; /* archs: the GPU code the library carries */
};

struct ct_library_view {
    struct ct_library_entry *mapped;
    size_t mapped_count;
    struct ct_failed_load *failed;
    size_t failed_count;
    struct ct_probe *probes; /* grouped by library; each library's are its `probes` */
    size_t probe_count;
    struct ct_probe *queries; /* RTLD_NOLOAD queries of names not loaded */
    size_t query_count;
    const char *toolkit_root, *toolkit_version; /* what CUDA_HOME or /usr/local/cuda is */
    struct ct_library_entry *loads;             /* the loader's accounts, before attaching */
    size_t load_count;
    struct ct_library_entry *versions; /* versions from the libraries' own APIs */
    size_t version_count;
    struct ct_library_entry *unloads; /* realpath, loaded_ns (the unload's time), rolled_back_by */
    size_t unload_count;
    struct ct_missing_image *missing_images;
    size_t missing_image_count;
};

/* Notes a library instant of the trace; 0 when `e` is none. */
int ct_libraries_instant(struct ct_library_view *l, const struct ct_event *e);
/* Once the whole trace is read: each library gets the loader's account of
 * its load, its API's version, its unload and its probes; failures are kept
 * from the view chosen, less the probes and the queries among them. */
void ct_libraries_attach(struct ct_library_view *l);

/* Where a failed load was looked for, as a person reads it: "searched"
 * and the directories, or why there are none ("absolute path, not
 * searched"). */
const char *ct_failed_load_searched(const struct ct_failed_load *load);

/* Who asked for a library, as a person reads it: the Python line that
 * called dlopen (through ctypes) with the native object beside it, or the
 * object alone. */
const char *ct_requester_text(const char *requested_by, const char *requested_from);
void ct_libraries_free(struct ct_library_view *l);

#endif
