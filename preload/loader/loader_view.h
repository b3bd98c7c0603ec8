/*
 * The loader's view of CUDA-stack libraries under a bare LD_PRELOAD: which
 * were asked for, by whom, which loaded and unloaded, and which failed.
 */
#ifndef CT_PRELOAD_LOADER_VIEW_H
#define CT_PRELOAD_LOADER_VIEW_H

#include <stdint.h>

/* Looks at what is loaded now and writes what changed; gives up at once
 * when another thread is looking. */
void ct_loader_observe(void);

/* A dlopen of our own (CUPTI's library), noted as the program's are, so
 * that its load says who asked for it. */
void ct_loader_note_own_dlopen(const char *file, int mode);

/* The libraries mapped at start-up; from our constructor. */
void ct_loader_view_start(void);
/* At exit: every request not yet seen loaded has failed. */
void ct_loader_view_finish(void);
/* Fork child: locks and requests in flight belong to the parent. */
void ct_loader_view_forget_in_child(void);

#endif
