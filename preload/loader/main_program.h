/*
 * The main program's file. Its link-map entry has an empty name, so the
 * audit module and the loader view, which name every object by its file,
 * read /proc/self/exe instead; once, since the program does not change.
 * A header because the two are separate objects, each with its own copy.
 */
#ifndef CT_PRELOAD_MAIN_PROGRAM_H
#define CT_PRELOAD_MAIN_PROGRAM_H

#include <unistd.h>

/* "" when /proc cannot tell. */
static inline const char *ct_main_program(void)
{
    static char path[4096];
    if (!*path) {
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
        path[n > 0 ? n : 0] = '\0';
    }
    return path;
}

#endif
