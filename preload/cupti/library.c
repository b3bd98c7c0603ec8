/*
 * Finds and loads the libcupti that belongs with the CUDA the process runs.
 * CUPTI is tied to its runtime's major version, so the candidates are, in
 * order: CUDATRACE_CUPTI_PATH alone when it is set (a file, or a folder that
 * holds libcupti.so.MAJOR); else one the program already loaded; else the
 * folder of the loaded libcudart (NVIDIA's
 * CUDA 13 wheels put both in nvidia/cu13/lib), its wheel sibling
 * ../../cuda_cupti/lib (CUDA 12 wheels) and the toolkit's extras/CUPTI/lib64
 * beside a toolkit lib64; then $CUDA_HOME (else /usr/local/cuda) lib64, lib
 * and extras/CUPTI/lib64; last, the bare soname through the loader's own
 * search. MAJOR comes from the loaded libcudart's name. The library is opened
 * RTLD_LOCAL so that none of its symbols can bind the program's references,
 * and what it loads in turn (the driver, which it dlopens) is not taken for
 * the program's doing by the loader view (ct_cupti_made_call).
 */
#include "preload/cupti/api.h"

#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/library_family.h"
#include "preload/core/config.h"
#include "preload/loader/dl_real.h"
#include "preload/loader/loader_view.h"
#include "preload/hooks/resolve.h"

struct ct_cupti_api ct_cupti;

/* The libcupti we opened (its handle is its link map), and whether an open
 * is under way: what CUPTI then loads is our doing, not the program's. */
static _Atomic(void *) own_library;
static _Atomic int opening;

#define PATH_LEN 4096

int ct_cupti_driver_loaded(void)
{
    return ct_loaded_library("cuda", NULL, 0);
}

/* "13" from .../libcudart.so.13 or libcudart-d0da41ae.so.13.0; "" if none. */
static void runtime_major(const char *runtime, char *major, size_t size)
{
    long m = ct_soname_major(runtime);
    major[0] = '\0';
    if (m >= 0)
        snprintf(major, size, "%ld", m);
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_folder(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

#define RESOLVE(field, symbol) ((*(void **)&ct_cupti.field = ct_dl_real_sym(lib, symbol)) != NULL)

/* Every entry point but the flush period, the timestamp callback and the
 * graphs' ids is required. */
static int resolve_all(void *lib)
{
    int ok = RESOLVE(get_version, "cuptiGetVersion") &&
             RESOLVE(get_result_string, "cuptiGetResultString") &&
             RESOLVE(subscribe, "cuptiSubscribe") && RESOLVE(unsubscribe, "cuptiUnsubscribe") &&
             RESOLVE(enable_callback, "cuptiEnableCallback") &&
             RESOLVE(get_callback_name, "cuptiGetCallbackName") &&
             RESOLVE(get_timestamp, "cuptiGetTimestamp") &&
             RESOLVE(activity_enable, "cuptiActivityEnable") &&
             RESOLVE(activity_disable, "cuptiActivityDisable") &&
             RESOLVE(activity_register_callbacks, "cuptiActivityRegisterCallbacks") &&
             RESOLVE(activity_flush_all, "cuptiActivityFlushAll") &&
             RESOLVE(activity_get_next_record, "cuptiActivityGetNextRecord") &&
             RESOLVE(activity_get_num_dropped_records, "cuptiActivityGetNumDroppedRecords");
    (void)RESOLVE(activity_flush_period, "cuptiActivityFlushPeriod");
    (void)RESOLVE(activity_register_timestamp_callback, "cuptiActivityRegisterTimestampCallback");
    (void)RESOLVE(get_graph_node_id, "cuptiGetGraphNodeId");
    (void)RESOLVE(get_graph_id, "cuptiGetGraphId");
    (void)RESOLVE(get_graph_exec_id, "cuptiGetGraphExecId");
    return ok;
}

int ct_cupti_made_call(const void *address)
{
    void *own = atomic_load_explicit(&own_library, memory_order_acquire);
    if (!own && !atomic_load_explicit(&opening, memory_order_acquire))
        return 0;
    struct dl_find_object found;
    char family[32];
    if (_dl_find_object((void *)address, &found) != 0 || !found.dlfo_link_map)
        return 0;
    if (own)
        return (void *)found.dlfo_link_map == own;
    return ct_library_family(found.dlfo_link_map->l_name, family, sizeof family) &&
           strcmp(family, "cupti") == 0;
}

/* Opens `file` if it exists (or, for a bare name, if the loader finds it). */
static void *try_open(const char *file, int bare, char *why, size_t why_size)
{
    if (!bare && !is_file(file))
        return NULL;
    ct_loader_note_own_dlopen(file, RTLD_NOW | RTLD_LOCAL);
    atomic_store(&opening, 1);
    void *lib = ct_dl_real_open(file, RTLD_NOW | RTLD_LOCAL);
    atomic_store(&opening, 0);
    if (!lib && !bare) {
        const char *error = ct_dl_real_error();
        snprintf(why, why_size, "%s", error ? error : file);
    }
    return lib;
}

/* libcupti.so.MAJOR in `folder`, else libcupti.so. */
static void *open_in(const char *folder, const char *major, char *path, size_t size, char *why,
                     size_t why_size)
{
    const char *versions[] = {major, ""};
    for (int i = 0; i < 2; i++) {
        if (i == 0 && !*major)
            continue;
        snprintf(path, size, "%s/libcupti.so%s%s", folder, *versions[i] ? "." : "", versions[i]);
        void *lib = try_open(path, 0, why, why_size);
        if (lib)
            return lib;
    }
    return NULL;
}

static void *open_from_setting(const char *setting, const char *major, char *path, size_t size,
                               char *why, size_t why_size)
{
    if (is_folder(setting)) {
        void *lib = open_in(setting, major, path, size, why, why_size);
        if (!lib && !*why)
            snprintf(why, why_size, "CUDATRACE_CUPTI_PATH=%s holds no libcupti.so", setting);
        return lib;
    }
    snprintf(path, size, "%s", setting);
    void *lib = try_open(setting, 0, why, why_size);
    if (!lib && !*why)
        snprintf(why, why_size, "CUDATRACE_CUPTI_PATH=%s: no such file", setting);
    return lib;
}

static void *open_found(const char *runtime, const char *major, char *path, size_t size, char *why,
                        size_t why_size)
{
    char folder[PATH_LEN];
    /* One the program loaded itself (torch.profiler's): a second copy would
     * be a duplicate library, and only one can subscribe anyway. */
    if (ct_loaded_library("cupti", path, size))
        return ct_dl_real_open(path, RTLD_NOW | RTLD_NOLOAD);
    const char *slash = strrchr(runtime, '/');
    const char *home = getenv("CUDA_HOME");
    if (!home || !*home)
        home = "/usr/local/cuda";
    const char *beside[] = {"", "/../../cuda_cupti/lib", "/../extras/CUPTI/lib64"};
    const char *toolkit[] = {"/lib64", "/lib", "/extras/CUPTI/lib64"};
    for (int i = 0; slash && i < 3; i++) {
        snprintf(folder, sizeof folder, "%.*s%s", (int)(slash - runtime), runtime, beside[i]);
        void *lib = open_in(folder, major, path, size, why, why_size);
        if (lib)
            return lib;
    }
    for (int i = 0; i < 3; i++) {
        snprintf(folder, sizeof folder, "%s%s", home, toolkit[i]);
        void *lib = open_in(folder, major, path, size, why, why_size);
        if (lib)
            return lib;
    }
    snprintf(path, size, "libcupti.so%s%s", *major ? "." : "", major);
    return try_open(path, 1, why, why_size);
}

int ct_cupti_library_load(char *path, size_t path_size, char *why, size_t why_size)
{
    char runtime[PATH_LEN] = "", major[24]; /* any long */
    ct_loaded_library("cudart", runtime, sizeof runtime);
    runtime_major(runtime, major, sizeof major);
    why[0] = '\0';
    const char *setting = ct_config.cupti_path;
    void *lib = setting && *setting
                    ? open_from_setting(setting, major, path, path_size, why, why_size)
                    : open_found(runtime, major, path, path_size, why, why_size);
    if (!lib) {
        if (!*why)
            snprintf(why, why_size,
                     "no libcupti found beside %s, in the toolkit or on the "
                     "library path (set CUDATRACE_CUPTI_PATH)",
                     *runtime ? runtime : "libcudart");
        return -1;
    }
    if (!resolve_all(lib)) {
        snprintf(why, why_size, "%s lacks CUPTI's activity and callback API", path);
        ct_dl_real_close(lib);
        return -1;
    }
    atomic_store_explicit(&own_library, lib, memory_order_release);
    return 0;
}

const char *ct_cupti_result_name(CUptiResult r)
{
    static __thread char unknown[32];
    const char *name = NULL;
    if (ct_cupti.get_result_string && ct_cupti.get_result_string(r, &name) == CUPTI_SUCCESS && name)
        return name;
    snprintf(unknown, sizeof unknown, "CUPTI error %d", (int)r);
    return unknown;
}
