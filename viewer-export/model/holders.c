/*
 * A stack annotation is one frame a line, innermost first, each naming its
 * object: "site (object)" where the frame was symbolized, "object+0xOFFSET"
 * where it was not. The frames of the runtime, the driver, CUPTI (whose
 * callbacks see the driver's calls) and the tracer are passed over, so an
 * allocation NCCL made through cuMemAlloc is NCCL's whichever API it used.
 */
#include "viewer-export/model/holders.h"

#include <string.h>

#include "common/library_family.h"
#include "common/string_table.h"

/* The object a frame names, into out. */
static void frame_object(const char *frame, size_t len, char *out, size_t size)
{
    const char *open = len && frame[len - 1] == ')' ? memrchr(frame, '(', len) : NULL;
    const char *start = open ? open + 1 : frame;
    const char *end = open ? frame + len - 1 : frame + len;
    const char *plus = open ? NULL : memmem(frame, len, "+0x", 3);
    if (plus)
        end = plus;
    size_t n = (size_t)(end - start) < size - 1 ? (size_t)(end - start) : size - 1;
    memcpy(out, start, n);
    out[n] = '\0';
}

static int passed_over(const char *object, const char *family, int in_stack)
{
    return strstr(object, "libcudatrace") != NULL ||
           (in_stack && (strcmp(family, "cudart") == 0 || strcmp(family, "cuda") == 0 ||
                         strcmp(family, "cupti") == 0));
}

const char *ct_allocating_library(const char *stack)
{
    for (const char *frame = stack; frame && *frame;) {
        size_t len = strcspn(frame, "\n");
        char object[512], family[128];
        frame_object(frame, len, object, sizeof object);
        int in_stack = ct_library_family(object, family, sizeof family);
        if (!passed_over(object, family, in_stack))
            return in_stack ? ct_strings_get(ct_strings_intern_cstr(family)) : NULL;
        frame += len + (frame[len] == '\n');
    }
    return NULL;
}

static struct ct_holder *holder_of(struct ct_holders *h, const char *library)
{
    for (int i = 0; i < h->count; i++)
        if (h->items[i].library == library)
            return &h->items[i];
    if (h->count == CT_HOLDERS)
        return NULL;
    h->items[h->count] = (struct ct_holder){library, 0, 0};
    return &h->items[h->count++];
}

void ct_holders_add(struct ct_holders *h, const char *library, uint64_t bytes)
{
    struct ct_holder *holder = library ? holder_of(h, library) : NULL;
    if (!holder)
        return;
    holder->live += bytes;
    if (holder->live > holder->peak)
        holder->peak = holder->live;
}

void ct_holders_remove(struct ct_holders *h, const char *library, uint64_t bytes)
{
    struct ct_holder *holder = library ? holder_of(h, library) : NULL;
    if (holder)
        holder->live -= bytes < holder->live ? bytes : holder->live;
}
