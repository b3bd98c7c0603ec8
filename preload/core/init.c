/*
 * Initialisation that every other part relies on: the CUDATRACE_* settings,
 * the choice of clock, the process start time, whether tracing is allowed at
 * all (never in secure-execution processes, such as setuid ones, where an
 * environment variable must not steer a privileged process into writing
 * files) and the fork handler. It runs once, from our constructor or from
 * the first hook to run, whichever comes first.
 */
#include "preload/core/init.h"

#include <pthread.h>
#include <sys/auxv.h>

#include "preload/sites/call_site.h"
#include "preload/core/clock.h"
#include "preload/core/config.h"
#include "preload/hooks/nvtx_lookup.h"
#include "preload/loader/loader_view.h"
#include "preload/core/run_watch.h"
#include "preload/core/session.h"

int ct_tracing_allowed;
uint64_t ct_start_ticks, ct_start_boot_ns;

static pthread_once_t once = PTHREAD_ONCE_INIT;

void ct_init_mark_start(void)
{
    ct_start_boot_ns = ct_clock_boottime_ns();
    ct_start_ticks = __rdtsc();
}

static void initialise(void)
{
    ct_init_mark_start();
    ct_config_load();
    ct_clock_choose();
    ct_call_sites_configure();
    if (ct_config.disabled || getauxval(AT_SECURE))
        return;
    ct_session_find_collector();
    ct_nvtx_lookup_init();
    pthread_atfork(ct_session_lock_for_fork, ct_session_unlock_after_fork,
                   ct_session_forget_in_child);
    ct_tracing_allowed = 1;
}

void ct_init_once(void)
{
    pthread_once(&once, initialise);
}

/* CUDA libraries mapped at start-up (DT_NEEDED of the program) are the
 * process touching CUDA: the session starts here for them. */
__attribute__((constructor)) static void ct_preload_init(void)
{
    ct_init_once();
    if (ct_tracing_allowed)
        ct_run_watch_start();
    ct_loader_view_start();
}
