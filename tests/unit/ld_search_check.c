/*
 * The library-search reconstruction (collector/libraries/ld_search.c) behind a command
 * line, for tests/test_collector_ld_search.py, which compares what it says with what
 * glibc itself does (LD_DEBUG=libs). The working directory stands for the
 * process's. Prints one "key value" line each: found_in, path, searched,
 * unloadable and, given LOADED, found_via.
 * Usage: ld_search_check [--ld-library-path P] MAIN_PROGRAM REQUESTER NAME [LOADED]
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "collector/libraries/ld_search.h"

int main(int argc, char **argv)
{
    const char *ld_library_path = NULL;
    int at = 1;
    if (argc > 2 && strcmp(argv[1], "--ld-library-path") == 0) {
        ld_library_path = argv[2];
        at = 3;
    }
    char cwd[PATH_MAX];
    if ((argc - at != 3 && argc - at != 4) || !getcwd(cwd, sizeof cwd)) {
        fprintf(stderr, "usage: ld_search_check [--ld-library-path P] MAIN_PROGRAM REQUESTER "
                        "NAME [LOADED]\n");
        return 2;
    }
    struct ct_ld_process process = {argv[at], ld_library_path, cwd};
    const char *requester = argv[at + 1], *name = argv[at + 2];
    static struct ct_ld_result result;
    ct_ld_search(&process, name, requester, &result);
    printf("found_in %s\npath %s\nsearched %s\nunloadable %s\n", ct_ld_list_name(result.found_in),
           result.path, result.searched, result.unloadable);
    if (argc - at == 4)
        printf("found_via %s\n",
               ct_ld_list_name(ct_ld_found_via(&process, name, requester, argv[at + 3])));
    return 0;
}
