/*
 * Classifies Python source files by their paths (python_files.h): the
 * layouts Python and pip install to, and PyTorch's package for data
 * loading, which a stack holds while its thread loads input.
 */
#include "common/python_files.h"

#include <string.h>

int ct_python_library_file(const char *file)
{
    return file[0] == '<' || strstr(file, "/site-packages/") || strstr(file, "/dist-packages/") ||
           strstr(file, "/lib/python3");
}

int ct_python_data_loader_file(const char *file)
{
    return strstr(file, "/torch/utils/data/") != NULL;
}
