/*
 * The Python-frames probe for tests/test_preload_python_frames.py. As a library
 * (libpython_frames_probe.so) it exports ct_probe_python_frames, which
 * Python scripts call through ctypes. Built with -DCT_PROBE_MAIN it is a
 * program (python_frames_embed) that calls the probe with no Python in the
 * process, then, given a libpython, loads and embeds it the way an embedding
 * program would, to show that Python loaded late is still found.
 */
#include <stdio.h>
#include <string.h>

#include "preload/sites/python_frames.h"

#define MAX_FRAMES 64

/* Writes "file:line:function\n" per frame, innermost first; returns the
 * number of frames, or -1 when they do not fit in `size`. */
__attribute__((visibility("default"))) int ct_probe_python_frames(char *buf, size_t size)
{
    struct ct_py_frame frames[MAX_FRAMES];
    size_t n = ct_python_frames(frames, MAX_FRAMES);
    size_t used = 0;
    if (size > 0)
        buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        int len = snprintf(buf + used, size - used, "%.*s:%d:%.*s\n", (int)frames[i].file_len,
                           frames[i].file, frames[i].line, (int)frames[i].function_len,
                           frames[i].function);
        if (len < 0 || (size_t)len >= size - used)
            return -1;
        used += (size_t)len;
    }
    return (int)n;
}

#ifdef CT_PROBE_MAIN
#include <dlfcn.h>

/* With no argument: calls the probe often enough to cross its retries and
 * prints how many frames it ever saw (0). With a libpython: then dlopens it,
 * runs argv[2] (Python source, which calls the probe through ctypes),
 * finalizes it and exits with the status. */
int main(int argc, char **argv)
{
    char buf[4096];
    int seen = 0;
    for (int i = 0; i < 5000; i++)
        seen += ct_probe_python_frames(buf, sizeof buf) != 0;
    printf("frames without Python: %d\n", seen);
    fflush(stdout);
    if (argc < 3)
        return seen != 0;
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
    if (lib == NULL) {
        fprintf(stderr, "%s\n", dlerror());
        return 2;
    }
    void (*initialize)(void) = (void (*)(void))dlsym(lib, "Py_Initialize");
    int (*run)(const char *) = (int (*)(const char *))dlsym(lib, "PyRun_SimpleString");
    int (*finalize)(void) = (int (*)(void))dlsym(lib, "Py_FinalizeEx");
    if (initialize == NULL || run == NULL || finalize == NULL)
        return 2;
    initialize();
    int failed = run(argv[2]) != 0;
    return finalize() != 0 || failed ? 3 : 0; /* finalizing flushes Python's stdout */
}
#endif
