/*
 * NVTX under a bare LD_PRELOAD. NVTX's header-only code (torch.cuda.nvtx,
 * any library built with nvtx3) finds its tool by one getenv of
 * NVTX_INJECTION64_PATH, in whichever library carries it; the preload
 * exports getenv so that this one look-up, while the variable is unset,
 * answers the preload's own file, and NVTX loads the tracer (already
 * loaded) as its tool, as `cudatrace run` arranges by setting the variable.
 * Nothing else changes: the environment is not touched (os.environ, a
 * child's environment and every other name read as they are), a value the
 * user set (nsys's) is returned as it is, and CUDATRACE_NVTX=0 turns the
 * answer off. Any caller of getenv with that exact name gets the answer,
 * NVTX's or not; docs say so.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "preload/core/config.h"
#include "preload/core/export.h"
#include "preload/core/init.h"
#include "preload/hooks/nvtx_lookup.h"
#include "preload/loader/dl_real.h"

#define NVTX_VARIABLE "NVTX_INJECTION64_PATH"

typedef char *(*getenv_function)(const char *);

static getenv_function real_getenv_fn;
static pthread_once_t resolved = PTHREAD_ONCE_INIT;

static void resolve(void)
{
    real_getenv_fn = (getenv_function)ct_dl_real_sym(RTLD_NEXT, "getenv");
}
static char own_file[4096]; /* empty: no answer */

void ct_nvtx_lookup_init(void)
{
    Dl_info self;
    if (ct_config.nvtx_lookup && dladdr((void *)ct_nvtx_lookup_init, &self) && self.dli_fname &&
        self.dli_fname[0] == '/')
        snprintf(own_file, sizeof own_file, "%s", self.dli_fname);
}

CT_EXPORT char *getenv(const char *name)
{
    pthread_once(&resolved, resolve);
    char *value = real_getenv_fn ? real_getenv_fn(name) : NULL;
    if (value || !name || name[0] != 'N' || strcmp(name, NVTX_VARIABLE) != 0)
        return value;
    ct_init_once();
    return own_file[0] ? own_file : NULL;
}
