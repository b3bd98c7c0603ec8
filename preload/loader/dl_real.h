/*
 * The real dlopen, dlclose, dlerror and dlsym, for the preload's own use. The
 * preload exports its own definitions of these names (dl_trampoline.S,
 * dl_entry.c), and a call from inside the preload to the plain name
 * would reach those and be taken for the program's.
 */
#ifndef CT_PRELOAD_DL_REAL_H
#define CT_PRELOAD_DL_REAL_H

void *ct_dl_real_open(const char *file, int mode);
int ct_dl_real_close(void *handle);
char *ct_dl_real_error(void);
/* glibc's dlopen itself, for the trampoline to jump to. */
void *ct_dl_real_open_address(void);
/* A lookup in a library's handle that no hook of ours answers. */
void *ct_dl_real_sym(void *handle, const char *name);
/* glibc's dlsym itself, for the trampoline to jump to. */
void *ct_dl_real_sym_address(void);

#endif
