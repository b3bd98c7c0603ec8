/*
 * NVTX's look-up of its tool, answered under a bare LD_PRELOAD
 * (nvtx_lookup.c).
 */
#ifndef CT_PRELOAD_NVTX_LOOKUP_H
#define CT_PRELOAD_NVTX_LOOKUP_H

/* Called at initialisation once tracing is allowed (dladdr takes the
 * loader's lock, which a getenv made inside a library constructor must not
 * wait for): from then on, with CUDATRACE_NVTX not 0, an unset
 * NVTX_INJECTION64_PATH reads as the preload's own file. */
void ct_nvtx_lookup_init(void);

#endif
