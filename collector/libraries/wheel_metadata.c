/*
 * Reads a framework's own wheel metadata on disk to learn which version of
 * a CUDA library it was built against, without running any of its code:
 * the distribution whose *.dist-info/RECORD lists the requesting library
 * (torch/lib/libtorch_cuda.so) declares its NVIDIA wheels in METADATA, as
 * "Requires-Dist: nvidia-cudnn-cu13==9.26.0.51" (optionally with a space,
 * parentheses or an environment marker). The library family names the
 * wheel: cudnn_graph is NVIDIA's nvidia-cudnn-cuXX, cudart its
 * nvidia-cuda-runtime-cuXX.
 */
#include "collector/libraries/wheel_metadata.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#define MAX_DEPTH 6 /* site-packages/torch/lib/libtorch_cuda.so is 2 below */

/* NVIDIA's wheel stem for a library family: what follows "nvidia-". */
static const char *wheel_stem(const char *family, char *out, size_t size)
{
    static const struct {
        const char *family, *stem;
    } renamed[] = {{"cudart", "cuda-runtime"}, {"nvrtc", "cuda-nvrtc"}, {"cupti", "cuda-cupti"},
                   {"nvJitLink", "nvjitlink"}, {"cublasLt", "cublas"},  {"nvToolsExt", "nvtx"}};
    for (size_t i = 0; i < sizeof renamed / sizeof renamed[0]; i++)
        if (strcmp(family, renamed[i].family) == 0)
            return renamed[i].stem;
    snprintf(out, size, "%.*s", (int)strcspn(family, "_"), family); /* cudnn_graph: cudnn */
    return out;
}

/* Whether `record` (a RECORD file) lists `relative` as one of its files. */
static int record_lists(const char *record, const char *relative)
{
    FILE *f = fopen(record, "re");
    char line[8192];
    size_t len = strlen(relative);
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f))
        found = strncmp(line, relative, len) == 0 && line[len] == ',';
    if (f)
        fclose(f);
    return found;
}

/* The pin "PACKAGE==VERSION" on a Requires-Dist line, for a package
 * "nvidia-STEM-cuNN"; 0 when the line is one. */
static int read_pin(const char *line, const char *stem, struct ct_wheel_requirement *out)
{
    char prefix[160];
    snprintf(prefix, sizeof prefix, "Requires-Dist: nvidia-%s-cu", stem);
    size_t len = strlen(prefix);
    if (strncmp(line, prefix, len) != 0 || !isdigit((unsigned char)line[len]))
        return -1;
    size_t name_len = len - strlen("Requires-Dist: ");
    name_len += strspn(line + len, "0123456789");
    const char *pin = strstr(line, "==");
    if (!pin)
        return -1;
    pin += 2;
    snprintf(out->package, sizeof out->package, "%.*s", (int)name_len,
             line + strlen("Requires-Dist: "));
    snprintf(out->version, sizeof out->version, "%.*s", (int)strcspn(pin, " ;)\r\n"), pin);
    return *out->version ? 0 : -1;
}

/* Reads the distribution's name and version and the pin for `stem` from
 * METADATA in `dist_info`. */
static int read_metadata(const char *dist_info, const char *stem, struct ct_wheel_requirement *out)
{
    char path[8192 + 16], line[4096], name[128] = "", version[64] = "";
    snprintf(path, sizeof path, "%s/METADATA", dist_info);
    FILE *f = fopen(path, "re");
    int pinned = -1;
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "Name: ", 6) == 0)
            snprintf(name, sizeof name, "%.*s", (int)strcspn(line + 6, "\r\n"), line + 6);
        else if (strncmp(line, "Version: ", 9) == 0)
            snprintf(version, sizeof version, "%.*s", (int)strcspn(line + 9, "\r\n"), line + 9);
        else if (pinned != 0)
            pinned = read_pin(line, stem, out);
    }
    if (f)
        fclose(f);
    snprintf(out->distribution, sizeof out->distribution, "%s %s", name, version);
    return pinned;
}

/* The *.dist-info directory in `root` whose RECORD lists `relative`, in
 * `out`; 0 when there is one. */
static int find_owner(const char *root, const char *relative, char *out, size_t size)
{
    DIR *dir = opendir(root);
    struct dirent *entry;
    int found = -1;
    while (dir && found && (entry = readdir(dir))) {
        size_t len = strlen(entry->d_name);
        if (len < 10 || strcmp(entry->d_name + len - 10, ".dist-info") != 0)
            continue;
        char record[8192 + 16];
        snprintf(out, size, "%s/%s", root, entry->d_name);
        snprintf(record, sizeof record, "%s/RECORD", out);
        if (record_lists(record, relative))
            found = 0;
    }
    if (dir)
        closedir(dir);
    return found;
}

int ct_wheel_requirement(const char *requester, const char *family,
                         struct ct_wheel_requirement *out)
{
    char root[4096], dist_info[8192], stem_buffer[64];
    const char *stem = wheel_stem(family, stem_buffer, sizeof stem_buffer);
    snprintf(root, sizeof root, "%s", requester);
    for (int depth = 0; depth < MAX_DEPTH; depth++) {
        char *slash = strrchr(root, '/');
        if (!slash || slash == root)
            return -1;
        *slash = '\0';
        const char *relative = requester + (slash - root) + 1;
        if (find_owner(root, relative, dist_info, sizeof dist_info) == 0)
            return read_metadata(dist_info, stem, out);
    }
    return -1;
}
