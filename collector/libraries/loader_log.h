/*
 * The loader's view of CUDA library loads, from the rtld-audit module's log:
 * loads, failed loads, and the unloads by which ld.so undid a failed one;
 * the event it gives is the preload's account's too (loader_events.c), which
 * also tells RTLD_NOLOAD queries apart.
 */
#ifndef CT_COLLECTOR_LOADER_LOG_H
#define CT_COLLECTOR_LOADER_LOG_H

#include <stdint.h>

struct ct_loader_event {
    int failed;
    int queried;                /* preload: an RTLD_NOLOAD dlopen of a name not loaded */
    const char *requested_as;   /* the name passed to dlopen or in DT_NEEDED */
    const char *requested_by;   /* the object that asked */
    const char *requested_from; /* preload: the Python line that asked, or "" / NULL */
    const char *found_via;      /* loads: which search list held the file */
    const char *path;           /* loads: the file opened */
    const char *error;          /* failures: why, as far as can be told */
    const char *searched;       /* failures: the directories tried, ':'-separated */
    uint64_t loaded_ns;         /* loads: when the file was opened (CLOCK_BOOTTIME) */
    const char *seen_by;        /* "audit" (the rtld-audit module) or "preload" */
    const char *how;            /* preload: "dlopen", "needed", "start", ... or NULL */
    uint64_t requested_ns;      /* preload: when the dlopen was called, or 0 */
    uint64_t attempts;          /* failures: identical failed attempts, 0 for one */
    /* An unload (the audit log's): `path` was unmapped again at loaded_ns
     * when the load that mapped it failed on `rolled_back_by`. */
    int unloaded;
    const char *rolled_back_by;
};

/* Reads what the audit module (libcudatrace-audit.so, under LD_AUDIT) of
 * process `pid` logged since the last call, and reports each load and each
 * failed load. Does nothing when the process runs without the module. */
void ct_loader_log_read(int32_t pid, void (*report)(const struct ct_loader_event *e, void *ctx),
                        void *ctx);
/* At the end: a search still open when the process ended has failed. */
void ct_loader_log_finish(void (*report)(const struct ct_loader_event *e, void *ctx), void *ctx);

#endif
