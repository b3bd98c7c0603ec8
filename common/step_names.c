/*
 * A step marker is an NVTX range name holding "step" or "iter" in any case
 * ("train_step", "Iteration", PyTorch's "ProfilerStep#12"), taken up to a
 * '#', after which PyTorch and most loops put the step's number.
 */
#include "common/step_names.h"

#include <ctype.h>
#include <string.h>

size_t ct_step_marker_length(const char *name)
{
    size_t len = strcspn(name, "#");
    for (size_t i = 0; i + 4 <= len; i++) {
        char word[5] = {0};
        for (int k = 0; k < 4; k++)
            word[k] = (char)tolower((unsigned char)name[i + k]);
        if (strcmp(word, "step") == 0 || strcmp(word, "iter") == 0)
            return len;
    }
    return 0;
}
