/*
 * The process track with the traced program's command line, the counter
 * tracks (declared before any value, as Perfetto requires), the CUDA
 * libraries track, and the instants that describe the process as a whole:
 * the trace format, who the process is in its job (identity/), the CUDA
 * versions and the devices.
 */
#include "collector/perfetto/process_tracks.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "collector/identity/job_identity.h"
#include "cudatrace/trace_names.h"

struct ct_process ct_process;

/* The environment the process started with: what ld.so read
 * LD_LIBRARY_PATH from, whatever the program set later. */
static char environment[65536];
static size_t environment_len;

static void read_environment(void)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/environ", (int)ct_process.pid);
    FILE *f = fopen(path, "re");
    environment_len = f ? fread(environment, 1, sizeof environment - 1, f) : 0;
    if (f)
        fclose(f);
    environment[environment_len] = '\0';
}

const char *ct_process_env(const char *name)
{
    size_t len = strlen(name);
    for (size_t i = 0; i < environment_len; i += strlen(environment + i) + 1)
        if (strncmp(environment + i, name, len) == 0 && environment[i + len] == '=')
            return environment + i + len + 1;
    return NULL;
}

const char *ct_process_environment(size_t *len)
{
    *len = environment_len;
    return environment;
}

const char *ct_process_toolkit_home(void)
{
    const char *home = ct_process_env("CUDA_HOME");
    return home && *home ? home : "/usr/local/cuda";
}

uint64_t ct_process_track(enum ct_process_track which)
{
    return ct_process_track_of(&ct_process, which);
}

uint64_t ct_process_thread_track(int32_t tid)
{
    return ct_process.uuid | 0x80000000ull | (uint32_t)tid;
}

/* argv of the traced process as the kernel holds it. */
static int read_cmdline(char *buf, size_t size, const char **argv, int max_args)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)ct_process.pid);
    FILE *f = fopen(path, "re");
    size_t n = f ? fread(buf, 1, size - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    int argc = 0;
    for (size_t i = 0; i < n && argc < max_args; i += strlen(buf + i) + 1)
        argv[argc++] = buf + i;
    return argc;
}

/* An empty LD_LIBRARY_PATH entry means the working directory the process
 * has now. */
struct ct_ld_process ct_process_loader_view(void)
{
    static char cwd[4096];
    char link[64];
    snprintf(link, sizeof link, "/proc/%d/cwd", (int)ct_process.pid);
    ssize_t n = readlink(link, cwd, sizeof cwd - 1);
    cwd[n > 0 ? n : 0] = '\0';
    return (struct ct_ld_process){ct_process.exe, ct_process_env("LD_LIBRARY_PATH"),
                                  *cwd ? cwd : NULL};
}

void ct_process_tracks_start(const struct ct_shm_header *shm, struct ct_writer *w)
{
    ct_process.pid = shm->pid;
    ct_process.uuid = (uint64_t)(uint32_t)shm->pid << 32;
    ct_process.start_ns = shm->start_boot_ns;
    ct_sequence_init(&ct_process.seq, w, ct_process.uuid);
    read_environment();
    char exe_link[64];
    snprintf(exe_link, sizeof exe_link, "/proc/%d/exe", (int)ct_process.pid);
    ssize_t n = readlink(exe_link, ct_process.exe, sizeof ct_process.exe - 1);
    ct_process.exe[n > 0 ? n : 0] = '\0';
    static char cmdline[8192];
    const char *argv[256];
    int argc = read_cmdline(cmdline, sizeof cmdline, argv, 256);
    const char *name = argc > 0 ? argv[0] : "unknown";
    const char *slash = strrchr(name, '/');
    ct_write_process_track(&ct_process.seq, ct_process.uuid, ct_process.pid,
                           slash ? slash + 1 : name, argv, argc);
    struct ct_arg format[] = {
        CT_UINT_ARG(ct_key_format, CT_TRACE_FORMAT),
        CT_TEXT_ARG(ct_key_clock,
                    shm->clock == CT_CLOCK_TSC ? ct_value_clock_tsc : ct_value_clock_boottime),
    };
    ct_process_instant(CT_TRACK_PROCESS, ct_process.start_ns, ct_event_trace_format, format, 2);
    ct_job_identity_write();
    ct_write_counter_track(&ct_process.seq, ct_process_track(CT_TRACK_DEVICE_BYTES),
                           ct_process.uuid, ct_track_device_memory, CT_UNIT_BYTES);
    ct_write_counter_track(&ct_process.seq, ct_process_track(CT_TRACK_PINNED_BYTES),
                           ct_process.uuid, ct_track_pinned_memory, CT_UNIT_BYTES);
    ct_write_counter_track(&ct_process.seq, ct_process_track(CT_TRACK_VMM_BYTES), ct_process.uuid,
                           ct_track_vmm_memory, CT_UNIT_BYTES);
    ct_write_counter_track(&ct_process.seq, ct_process_track(CT_TRACK_POOL_RESERVED),
                           ct_process.uuid, ct_track_pool_reserved, CT_UNIT_BYTES);
    ct_write_counter_track(&ct_process.seq, ct_process_track(CT_TRACK_GRAPH_RESERVED),
                           ct_process.uuid, ct_track_graph_reserved, CT_UNIT_BYTES);
    ct_write_counter_track(&ct_process.seq, ct_process_track(CT_TRACK_LAUNCH_RATE), ct_process.uuid,
                           ct_track_launch_rate, CT_UNIT_COUNT);
    ct_write_counter_track(&ct_process.seq, ct_process_track(CT_TRACK_DROPPED), ct_process.uuid,
                           ct_track_dropped, CT_UNIT_COUNT);
    ct_write_named_track(&ct_process.seq, ct_process_track(CT_TRACK_LIBRARIES), ct_process.uuid,
                         ct_track_libraries);
}

void ct_process_instant(enum ct_process_track track, uint64_t ts, const char *name,
                        const struct ct_arg *args, int nargs)
{
    ct_write_instant(&ct_process.seq, ct_process_track(track), ts, ct_strings_intern_cstr(name),
                     args, nargs);
}

void ct_process_versions(const struct ct_record *r)
{
    struct ct_arg args[] = {
        CT_INT_ARG(ct_key_runtime_version, r->arg[0]),
        CT_INT_ARG(ct_key_driver_version, r->arg[1]),
        CT_INT_ARG(ct_key_device_count, r->arg[2]),
    };
    ct_process_instant(CT_TRACK_PROCESS, ct_process.start_ns, ct_event_versions, args, 3);
}

void ct_process_device(uint64_t key, uint32_t name)
{
    struct ct_halves device = ct_unpack_halves(key);
    uint32_t cc = device.high;
    char capability[16];
    snprintf(capability, sizeof capability, "%u.%u", cc / 10, cc % 10);
    struct ct_arg args[] = {
        CT_UINT_ARG(ct_key_device, device.low),
        {ct_strings_intern_cstr(ct_key_name), CT_ARG_STRING, name},
        CT_TEXT_ARG(ct_key_compute_capability, capability),
    };
    ct_process_instant(CT_TRACK_PROCESS, ct_process.start_ns, ct_event_device, args, cc ? 3 : 2);
}
