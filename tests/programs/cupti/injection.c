/*
 * A minimal CUDA injection library, as a profiler loads itself through CUDA_INJECTION64_PATH:
 * its InitializeInjection says on stderr that it ran (so tests can count the calls), then tries
 * to become CUPTI's subscriber and, when it is, collects kernel records until exit, so the CUPTI
 * double's statistics show what a profiler would see (the static-runtime test). Records are
 * only counted by the double, never read here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cupti.h>

#define BUFFER_BYTES (1 << 16)

static void CUPTIAPI ignore_callback(void *userdata, CUpti_CallbackDomain domain,
                                     CUpti_CallbackId cbid, const void *data)
{
    (void)userdata, (void)domain, (void)cbid, (void)data;
}

static void CUPTIAPI lend_buffer(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = aligned_alloc(8, BUFFER_BYTES);
    *size = BUFFER_BYTES;
    *max_records = 0;
}

static void CUPTIAPI take_buffer(CUcontext context, uint32_t stream, uint8_t *buffer, size_t size,
                                 size_t valid)
{
    (void)context, (void)stream, (void)size, (void)valid;
    free(buffer);
}

static void flush_at_exit(void)
{
    cuptiActivityFlushAll(0);
}

int InitializeInjection(void)
{
    CUpti_SubscriberHandle subscriber;
    CUptiResult rc = cuptiSubscribe(&subscriber, ignore_callback, NULL);
    const char *result = "?";
    cuptiGetResultString(rc, &result);
    fprintf(stderr, "InitializeInjection called in %d: subscribe %s\n", (int)getpid(), result);
    if (rc != CUPTI_SUCCESS)
        return 1;
    cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
    cuptiActivityRegisterCallbacks(lend_buffer, take_buffer);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    atexit(flush_at_exit);
    return 1;
}
