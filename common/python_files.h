/*
 * What a Python source file's path says about the frames in it, for the
 * collector's call sites and the report's host findings alike.
 */
#ifndef CT_COMMON_PYTHON_FILES_H
#define CT_COMMON_PYTHON_FILES_H

/* Python's own files, installed packages' and frozen modules: a frame in
 * one is never the line the program's author wrote. */
int ct_python_library_file(const char *file);

/* PyTorch's data loading package (torch/utils/data: the DataLoader, its
 * fetchers, its datasets): a thread with its frames in its stack is loading
 * input. */
int ct_python_data_loader_file(const char *file);

#endif
