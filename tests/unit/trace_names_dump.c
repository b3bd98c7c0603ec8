/*
 * Prints the trace vocabulary (include/cudatrace/trace_names.h) and the
 * names of the call slices (include/cudatrace/functions.h) for the tests,
 * one tab-separated line each: kind, id, text, type, the type as the list
 * writes it ("INT | UINT"; for a value, the id of its key or keys).
 */
#include <stdio.h>

#include "cudatrace/functions.h"
#include "cudatrace/trace_names.h"

int main(void)
{
#define PRINT(kind, id, text, type) printf("%s\t%s\t%s\t%s\n", #kind, #id, text, #type);
    CT_FOR_EACH_TRACE_NAME(PRINT)
#undef PRINT
#define FUNCTION(fn, family, stream) printf("function\t%s\t%s\t%s\n", #fn, #fn, #family);
    CT_FOR_EACH_FUNCTION(FUNCTION)
#undef FUNCTION
    return 0;
}
