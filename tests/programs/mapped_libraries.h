/*
 * Prints every libcu* and libnccl* file the process has mapped (the tracer's
 * own excepted), one "PROGRAM: mapped PATH" line each, so that a traced and
 * an untraced run can be compared byte for byte.
 */
#ifndef CT_TEST_MAPPED_LIBRARIES_H
#define CT_TEST_MAPPED_LIBRARIES_H

#include <stdio.h>
#include <string.h>

static void print_mapped_libraries(const char *program)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[4096], last[4096] = "";
    while (maps && fgets(line, sizeof line, maps)) {
        const char *path = strchr(line, '/');
        const char *base = path ? strrchr(path, '/') + 1 : NULL;
        if (base && (strncmp(base, "libcu", 5) == 0 || strncmp(base, "libnccl", 7) == 0) &&
            strncmp(base, "libcudatrace", 12) != 0 && strcmp(path, last) != 0) {
            printf("%s: mapped %s", program, path);
            snprintf(last, sizeof last, "%s", path);
        }
    }
    if (maps)
        fclose(maps);
}

#endif
