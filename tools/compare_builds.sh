#!/bin/sh
# tools/compare_builds.sh BASE: shows that this tree writes the same traces and
# reads them the same way as commit BASE, for a change that must not change
# behaviour (a restructuring). Builds BASE in a worktree beside this build,
# then over the suite's workloads on the CPU doubles:
#   - the collector: each workload runs once with tests/replay's capture
#     collector, and both builds replay that capture into a trace; the two
#     traces must be the same bytes. What a replay cannot make the same from
#     run to run is kept out of them: the NVML sampler, a thread racing the
#     replay's clock, is off in the captured run (CUDATRACE_NVML_MS=0), and
#     the collector's own peak memory reads zero (tests/replay/quiet_status.c);
#   - the command: each workload also runs under the ordinary tracer, and both
#     builds' `cudatrace report`, `report --json` and `export` in every format
#     read that trace and the replayed one; their outputs must be the same
#     bytes. So must the report over all the traces at once.
# Prints one line per comparison that differs and a count; exits 1 on any.
# Builds this tree too (BUILD, default build), so it never compares a stale build.
set -eu
base="${1:?usage: tools/compare_builds.sh BASE_COMMIT}"
build="${BUILD:-build}"
root="$(cd "$(dirname "$0")/.." && pwd)"
work="${COMPARE_DIR:-$root/$build/compare}"
cd "$root"
head_build="$root/$build"

rm -rf "$work/runs" && mkdir -p "$work/runs"
if [ ! -d "$work/base/.git" ] && [ ! -f "$work/base/.git" ]; then
    git worktree add --detach "$work/base" "$base" >/dev/null
fi
git -C "$work/base" checkout -q --detach "$base"
make -s -C "$work/base" BUILD=build all build/tests/replay >/dev/null
make -s BUILD="$build" all test-programs >/dev/null
base_build="$work/base/build"

double="$head_build/double"
gpu="$head_build/double:$head_build/driver"
differ=0
compared=0

same() { # same WHAT FILE_A FILE_B
    compared=$((compared + 1))
    if ! cmp -s "$2" "$3"; then
        echo "differs: $1"
        differ=$((differ + 1))
    fi
}

read_both() { # read_both NAME TRACE: every reading of TRACE, by both builds
    for b in base head; do
        eval "cli=\$${b}_build/cudatrace"
        "$cli" report "$2" > "$2.$b.report.txt" 2>&1 || true
        "$cli" report --json "$2" > "$2.$b.report.json" 2>&1 || true
        for format in perfetto chrome-json html; do
            rm -f "$2.$b.$format"
            "$cli" export "$2" --format "$format" -o "$2.$b.$format" >/dev/null 2>&1 || true
        done
    done
    for what in report.txt report.json perfetto chrome-json html; do
        same "$1: $what" "$2.base.$what" "$2.head.$what"
    done
}

workload() { # workload NAME LIBRARY_PATH [VAR=VALUE...] -- PROGRAM ARGS...
    name="$1" libs="$2"
    shift 2
    vars=""
    while [ "$1" != "--" ]; do vars="$vars $1"; shift; done
    shift
    dir="$work/runs/$name"
    mkdir -p "$dir/cwd"
    (cd "$dir/cwd" && env $vars LD_LIBRARY_PATH="$libs" CUDATRACE_CLOCK=boottime CUDATRACE_QUIET=1 \
        CUDATRACE_NVML_MS=0 CUDATRACE_COLLECTOR="$head_build/tests/replay_capture" \
        CUDATRACE_OUTPUT="$dir/capture" \
        LD_PRELOAD="$head_build/libcudatrace.so" "$@" >/dev/null 2>&1) || true
    (cd "$dir/cwd" && env $vars LD_LIBRARY_PATH="$libs" CUDATRACE_QUIET=1 \
        CUDATRACE_OUTPUT="$dir/real.pftrace.zst" LD_PRELOAD="$head_build/libcudatrace.so" \
        "$@" >/dev/null 2>&1) || true
    if [ ! -f "$dir/capture" ] || [ ! -f "$dir/real.pftrace.zst" ]; then
        echo "workload $name left no capture or no trace"
        differ=$((differ + 1))
        return
    fi
    quiet="$head_build/tests/libreplay_quiet.so"
    LD_PRELOAD="$quiet" "$base_build/tests/replay" "$dir/capture" "$dir/base.pftrace.zst"
    LD_PRELOAD="$quiet" "$head_build/tests/replay" "$dir/capture" "$dir/head.pftrace.zst"
    same "$name: replayed trace" "$dir/base.pftrace.zst" "$dir/head.pftrace.zst"
    read_both "$name (replayed)" "$dir/head.pftrace.zst"
    read_both "$name" "$dir/real.pftrace.zst"
}

t="$head_build/tests"
preload="$head_build/libcudatrace.so"
workload api_mix "$double" -- "$t/api_mix"
workload threads "$double" -- "$t/threads"
workload thread_churn "$double" -- "$t/thread_churn"
workload burst_mix "$double" CUDATRACE_RING_RECORDS=1024 CUDATRACE_SPILL_MB=0 -- "$t/burst_mix"
workload device_queries "$double" -- "$t/device_queries"
workload leak_loop "$double" -- "$t/leak_loop"
for mode in launch-bound sync-storm sync-threads pageable small-copies growth steady oom allocations; do
    workload "usage-$mode" "$double" -- "$t/usage_patterns" "$mode"
done
workload crash-inflight "$double" CT_DOUBLE_SYNC_NS=200000000 -- "$t/crash" inflight 5
workload forker "$double" -- "$t/forker" fork 4 10
workload train_loop_gpu "$gpu" CT_DOUBLE_DRIVER=1 -- "$head_build/examples/train_loop" 10
workload driver_launch "$gpu" CT_DOUBLE_DRIVER=1 -- "$t/driver_launch" 20
workload nvtx_steps "$gpu" CT_DOUBLE_DRIVER=1 NVTX_INJECTION64_PATH="$preload" -- "$t/nvtx_steps" 5
workload load_libs "$double" -- "$t/load_libs" libcublas.so.13 libcudnn.so.9 libnot-there.so.1
workload driverless "" -- "$t/driverless"
workload python_frames "$double" -- python3 "$root/tests/python/usage_script.py" ctypes 20

all="$work/runs/all"
mkdir -p "$all"
for b in base head; do
    eval "cli=\$${b}_build/cudatrace"
    "$cli" report --json "$work"/runs/*/real.pftrace.zst > "$all/$b.json" 2>&1 || true
    "$cli" report "$work"/runs/*/real.pftrace.zst > "$all/$b.txt" 2>&1 || true
done
same "all traces: report --json" "$all/base.json" "$all/head.json"
same "all traces: report" "$all/base.txt" "$all/head.txt"

echo "compare_builds: $compared comparisons against $base, $differ differ"
[ "$differ" -eq 0 ]
