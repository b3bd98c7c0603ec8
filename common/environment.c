/*
 * The environment rule (docs/report-schema.md, "identity"): a variable is
 * recorded when its name is LD_LIBRARY_PATH or LD_PRELOAD or starts with
 * CUDA_, NCCL_, TORCH_, PYTORCH_, CUDNN_, CUBLAS or NVIDIA_ (what changes
 * which libraries load and how CUDA, NCCL and PyTorch behave), or is
 * CUDATRACE_STEP (what the report takes for a training step), and never
 * when its name holds TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL, PRIVATE,
 * AUTH, COOKIE or KEY in any case, nor when its value carries a URL with a
 * user name or password in it (scheme://user:pass@host). Values longer than
 * 4 KiB are left out too: no setting that matters here is that long.
 */
#include "common/environment.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_VALUE 4096
#define MAX_VARIABLES 512

static int has_prefix(const char *name, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);
    return len >= n && strncmp(name, prefix, n) == 0;
}

static int is_exactly(const char *name, size_t len, const char *word)
{
    return strlen(word) == len && strncmp(name, word, len) == 0;
}

static int names_a_secret(const char *name, size_t len)
{
    static const char *const words[] = {"TOKEN",   "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL",
                                        "PRIVATE", "AUTH",   "COOKIE",   "KEY"};
    for (size_t w = 0; w < sizeof words / sizeof words[0]; w++) {
        size_t n = strlen(words[w]);
        for (size_t i = 0; i + n <= len; i++)
            if (strncasecmp(name + i, words[w], n) == 0)
                return 1;
    }
    return 0;
}

/* scheme://user@host or scheme://user:password@host */
static int carries_credentials(const char *value)
{
    for (const char *p = strstr(value, "://"); p; p = strstr(p + 3, "://")) {
        size_t authority = strcspn(p + 3, "/?#");
        if (memchr(p + 3, '@', authority))
            return 1;
    }
    return 0;
}

int ct_environment_recorded(const char *name, size_t name_len, const char *value)
{
    static const char *const prefixes[] = {"CUDA_",  "NCCL_",  "TORCH_", "PYTORCH_",
                                           "CUDNN_", "CUBLAS", "NVIDIA_"};
    int wanted = is_exactly(name, name_len, "LD_LIBRARY_PATH") ||
                 is_exactly(name, name_len, "LD_PRELOAD") ||
                 is_exactly(name, name_len, "CUDATRACE_STEP");
    for (size_t i = 0; !wanted && i < sizeof prefixes / sizeof prefixes[0]; i++)
        wanted = has_prefix(name, name_len, prefixes[i]);
    return wanted && !names_a_secret(name, name_len) && strlen(value) <= MAX_VALUE &&
           !carries_credentials(value);
}

static int by_name(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    size_t nx = strcspn(x, "="), ny = strcspn(y, "=");
    int c = strncmp(x, y, nx < ny ? nx : ny);
    return c ? c : (nx > ny) - (nx < ny);
}

static size_t append_line(char *out, size_t n, size_t size, const char *variable)
{
    size_t len = strlen(variable);
    if (n + len + 2 > size)
        return n;
    for (size_t i = 0; i < len; i++)
        out[n + i] = variable[i] == '\n' ? ' ' : variable[i];
    out[n + len] = '\n';
    out[n + len + 1] = '\0';
    return n + len + 1;
}

size_t ct_environment_lines(const char *block, size_t block_len, char *out, size_t size)
{
    const char *chosen[MAX_VARIABLES];
    size_t count = 0, n = 0;
    for (size_t i = 0; i < block_len && count < MAX_VARIABLES; i += strlen(block + i) + 1) {
        const char *eq = strchr(block + i, '=');
        if (eq && ct_environment_recorded(block + i, (size_t)(eq - (block + i)), eq + 1))
            chosen[count++] = block + i;
    }
    qsort(chosen, count, sizeof *chosen, by_name);
    if (size)
        *out = '\0';
    for (size_t i = 0; i < count; i++)
        n = append_line(out, n, size, chosen[i]);
    return n;
}
