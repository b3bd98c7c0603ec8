/*
 * The symboliser (collector/elf/symbolize.c) behind a command line, for
 * tests/test_collector_symbolize.py, which compares what it says with addr2line.
 * Resolves hex addresses given as arguments, or one a line on stdin when
 * there are none, in process PID or, with --file, in the ELF address space
 * of the file PATH. Prints one line per address:
 * "MODULE FUNCTION FILE:LINE MODULE_OFFSET", with ?? for what is unknown
 * (and ??:0 when the line is), and flushes each line.
 * Usage: symbolize_check PID [ADDRESS...]
 *        symbolize_check --file PATH [ADDRESS...]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector/elf/symbolize.h"

static const char *known(const char *text)
{
    return text ? text : "??";
}

static void resolve(struct ct_symbolizer *symbols, const char *file, int32_t pid, const char *text)
{
    char *end;
    uint64_t address = strtoull(text, &end, 16);
    if (end == text) {
        fprintf(stderr, "symbolize_check: not an address: %s\n", text);
        exit(2);
    }
    struct ct_symbol symbol;
    if (file)
        ct_symbolize_file(symbols, file, address, &symbol);
    else
        ct_symbolize(symbols, pid, address, &symbol);
    printf("%s %s %s:%u 0x%llx\n", known(symbol.module), known(symbol.function), known(symbol.file),
           (unsigned)symbol.line, (unsigned long long)symbol.module_offset);
    fflush(stdout); /* a test waits for each answer before it asks the next */
}

int main(int argc, char **argv)
{
    const char *file = NULL;
    int32_t pid = 0;
    int at = 2;
    if (argc >= 3 && strcmp(argv[1], "--file") == 0) {
        file = argv[2];
        at = 3;
    } else if (argc >= 2 && argv[1][0] != '-') {
        pid = (int32_t)atoi(argv[1]);
    } else {
        fprintf(stderr, "usage: symbolize_check PID [ADDRESS...]\n"
                        "       symbolize_check --file PATH [ADDRESS...]\n");
        return 2;
    }
    static struct ct_symbolizer symbols; /* what it reads, kept for the addresses after */
    for (int i = at; i < argc; i++)
        resolve(&symbols, file, pid, argv[i]);
    char line[256];
    while (at == argc && fgets(line, sizeof line, stdin))
        if (line[strspn(line, " \t\n")])
            resolve(&symbols, file, pid, line);
    return 0;
}
