/*
 * Reads the identity from the environment the process started with (what
 * its launcher gave it; /proc/PID/environ, read by process_tracks.c) and the
 * host from CUDATRACE_HOST there, else the kernel's host name, which the
 * collector shares with the process.
 */
#include "collector/identity/job_identity.h"

#include "common/environment.h"
#include "collector/perfetto/process_tracks.h"
#include "common/launcher.h"
#include "cudatrace/trace_names.h"

void ct_job_identity_write(void)
{
    char host[256], job[512];
    struct ct_arg args[7];
    int n = 0;
    args[n++] = CT_TEXT_ARG(ct_key_host, ct_host_name(ct_process_env, host, sizeof host));
    static const struct {
        const char *key;
        enum ct_launcher_field field;
    } numbers[] = {{ct_key_rank, CT_LAUNCHER_RANK},
                   {ct_key_local_rank, CT_LAUNCHER_LOCAL_RANK},
                   {ct_key_world_size, CT_LAUNCHER_WORLD_SIZE}};
    for (int i = 0; i < 3; i++) {
        long value = ct_launcher_number(ct_process_env, numbers[i].field);
        if (value >= 0)
            args[n++] = CT_INT_ARG(numbers[i].key, value);
    }
    if (*ct_launcher_job(ct_process_env, job, sizeof job))
        args[n++] = CT_TEXT_ARG(ct_key_job, job);
    if (*ct_launcher_name(ct_process_env))
        args[n++] = CT_TEXT_ARG(ct_key_launcher, ct_launcher_name(ct_process_env));
    const char *visible = ct_process_env("CUDA_VISIBLE_DEVICES");
    if (visible)
        args[n++] = CT_TEXT_ARG(ct_key_visible_devices, visible);
    ct_process_instant(CT_TRACK_PROCESS, ct_process.start_ns, ct_event_identity, args, n);

    static char lines[65536];
    size_t len;
    const char *block = ct_process_environment(&len);
    ct_environment_lines(block, len, lines, sizeof lines);
    struct ct_arg variables = CT_TEXT_ARG(ct_key_variables, lines);
    ct_process_instant(CT_TRACK_PROCESS, ct_process.start_ns, ct_event_environment, &variables, 1);
}
