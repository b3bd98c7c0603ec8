#!/bin/sh
# `make bench`: the performance goals, measured side by side in one run.
#   1. ns added per intercepted call: launch_loop on the no-op CPU double,
#      untraced and traced alternately, RUNS times each; medians compared.
#      Traced with a ring large enough to record every call (no drops), and
#      again with the default ring, where the collector cannot keep up with a
#      no-op runtime and most calls take the drop path. And outside a
#      capture window (CUDATRACE_CAPTURE=profiler, which launch_loop never
#      opens): the call counted in the totals, no record.
#   2. trace bytes per recorded call (zstd), from the no-drop traced runs.
#   3. collector throughput on one core (tests/bench/collector_throughput.c), and zstd alone
#      on the same bytes at the same level: the share of it that is compression.
#   4. collector peak RSS, for runs of SHORT and LONG calls, from the trace, and LONG again
#      with an 8 MiB spill pool (CUDATRACE_SPILL_MB): what bounds it.
#   5. start-up cost on a process that never touches CUDA: STARTS runs of
#      /bin/true, untraced and traced, wall time per run.
#   6. one dlopen of an already-loaded library, untraced and traced (the
#      dlopen trampoline and the look at the link map that follows it).
#   7. the largest burst of back-to-back launches one thread can make at
#      default settings without a dropped record (doubling, then bisecting).
#   8. a call site's cost: cudaDeviceSynchronize called from Python through
#      ctypes (the no-op double), untraced, traced without call sites and
#      traced with them (Python frames plus the native stack under them).
#   9. `cudatrace report` over a job's many traces (below).
#  10. the floor: the least a tracer can add, as the unit of the tracer's cost
#      (below), in nanoseconds and in instructions; on the bound paced loop
#      also the floor with its stamps read by another process.
#  11. the host sampler (CUDATRACE_SAMPLE_HZ): the per-call figure of 1.
#      again with sampling off, to show the hot path does not see it, and
#      the collector's CPU per thread sample and share of one core at the
#      default rate, with 16 threads and 4 busy workers
#      (tests/bench/host_sample_cost.c), and one Python stack read from
#      outside, 20 frames deep (tests/bench/python_stack_cost.c).
#  12. the collector's CPU while the program makes no calls (below).
#  13. how long the GPU's finished work takes to reach the collector (below).
#  14. CUDA graph replays, per node or per launch (CUDATRACE_GPU_GRAPHS, below).
set -eu
build="${1:-build}"
calls="${BENCH_CALLS:-2000000}"
runs="${BENCH_RUNS:-5}"
short="${BENCH_RSS_SHORT:-5000000}"
long="${BENCH_RSS_LONG:-50000000}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export LD_LIBRARY_PATH="$build/double"
unset CT_DOUBLE_STATS CT_DOUBLE_CALL_NS CT_DOUBLE_SYNC_NS CUDATRACE_OUTPUT CUDATRACE_QUIET

median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
per_launch() { sed -n 's/.* launches, \([0-9.]*\) ns per launch/\1/p'; }
# "cudatrace: trace PATH: N calls recorded, D dropped, B bytes" -> "N D B"
summary() { sed -n 's/^cudatrace: trace .*: \([0-9]*\) calls recorded, \([0-9]*\) dropped, \([0-9]*\) bytes$/\1 \2 \3/p'; }

traced() { # ring-records, run index
    env CUDATRACE_RING_RECORDS="$1" CUDATRACE_RINGS=4 CUDATRACE_MAX_MB=0 CUDATRACE_OUTPUT="$work/t$1.$2.pftrace.zst" \
        LD_PRELOAD="$build/libcudatrace.so" "$build/tests/launch_loop" "$calls" 2>"$work/err"
    summary < "$work/err" > "$work/sum.$1.$2"
}

big_ring=4194304
while [ "$big_ring" -lt "$calls" ]; do big_ring=$((big_ring * 2)); done
i=1
while [ "$i" -le "$runs" ]; do
    "$build/tests/launch_loop" "$calls" | per_launch >> "$work/untraced"
    traced "$big_ring" "$i" | per_launch >> "$work/traced"
    traced 32768 "$i" | per_launch >> "$work/traced_drops"
    CUDATRACE_SAMPLE_HZ=0 traced "$big_ring" "off$i" | per_launch >> "$work/traced_unsampled"
    CUDATRACE_CAPTURE=profiler traced "$big_ring" "out$i" | per_launch >> "$work/traced_outside"
    i=$((i + 1))
done
u=$(median < "$work/untraced")
t=$(median < "$work/traced")
d=$(median < "$work/traced_drops")
n=$(median < "$work/traced_unsampled")
o=$(median < "$work/traced_outside")
cat "$work"/sum."$big_ring".[0-9]* | awk '{r += $1; x += $2; b += $3} END {printf "%d %d %d\n", r, x, b}' > "$work/totals"
read -r recorded dropped bytes < "$work/totals"
dropped_share=$(cat "$work"/sum.32768.* | awk '{r += $1; x += $2} END {printf "%.1f", 100 * x / (r + x)}')

echo "cudatrace bench: $calls cudaLaunchKernel calls on the no-op double, $runs runs each, medians"
echo "  untraced                          $u ns per call"
calc() { awk "BEGIN {printf \"%.2f\", $1}"; }
echo "  traced, every call recorded       $t ns per call  (+$(calc "$t - $u") ns)"
echo "  traced, default ring ($dropped_share% dropped)  $d ns per call  (+$(calc "$d - $u") ns)"
echo "  traced, host sampling off         $n ns per call  (sampling at 100 Hz: $(calc "$t - $n") ns)"
echo "  traced, outside a capture window  $o ns per call  (+$(calc "$o - $u") ns)"
echo "  trace size                        $(calc "$bytes / $recorded") bytes per recorded call ($recorded recorded, $dropped dropped)"
"$build/bench/collector_throughput" 5000000 | sed -e 's/^collector_throughput: /  collector throughput              /' \
    -e 's/^collector_zstd: /  collector against zstd alone      /'
"$build/bench/host_sample_cost" 16 4 1000 | sed 's/^host_sample_cost: /  host sampler                      /'
"$build/bench/python_stack_cost" 20 2000 | sed 's/^python_stack_cost: /  Python stack from outside         /'
# 12. what the collector costs while the program makes no call: one call, then IDLE_S seconds
#     asleep; the collector's CPU time over them, from /proc, at the default settings.
idle_s="${BENCH_IDLE_S:-3}"
idle_share=$(env LD_PRELOAD="$(cd "$build" && pwd)/libcudatrace.so" CUDATRACE_QUIET=1 \
    CUDATRACE_OUTPUT="$work/idle.pftrace.zst" python3 -c '
import ctypes, os, subprocess, sys, time
ctypes.CDLL("libcudart.so.13", mode=ctypes.RTLD_GLOBAL).cudaDeviceSynchronize()
time.sleep(0.3)
pid = subprocess.run(["pgrep", "-P", str(os.getpid()), "-f", "cudatrace-collector"],
                     capture_output=True, text=True).stdout.split()[0]
def cpu():
    fields = open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
before = cpu()
time.sleep(float(sys.argv[1]))
print("%.1f" % (100 * (cpu() - before) / float(sys.argv[1])))' "$idle_s")
echo "  collector while the program idles  $idle_share% of one core (${idle_s} s asleep after one call)"

# 13. the delay from a kernel's end to its record reaching the collector (the trace's
#     delivery_median_ns and delivery_max_ns), on the driver and CUPTI doubles, which hand
#     buffers back as cupti_activity.h says: paced_launches at 10 and at 100,000 kernels a
#     second (1 us kernels), DELIVERY_MS each.
delivery_ms="${BENCH_DELIVERY_MS:-2000}"
delivery() { # kernels a second -> "median max" in ms
    env LD_LIBRARY_PATH="$build/double:$build/driver" CT_DOUBLE_DRIVER=1 CT_DOUBLE_KERNEL_NS=1000 \
        CUDATRACE_QUIET=1 CUDATRACE_OUTPUT="$work/delivery.$1.pftrace.zst" \
        LD_PRELOAD="$build/libcudatrace.so" "$build/tests/paced_launches" "$1" "$delivery_ms" > /dev/null
    "$build/cudatrace" report --json "$work/delivery.$1.pftrace.zst" | tr ',' '\n' |
        sed -n 's/.*"delivery_\(median\|max\)_ns": *\([0-9]*\).*/\2/p' |
        awk '{printf "%s%.0f", (NR > 1 ? " " : ""), $1 / 1e6}'
}
for rate in 10 100000; do
    read -r median most <<EOF_DELIVERY
$(delivery "$rate")
EOF_DELIVERY
    echo "  GPU work to the collector at $rate kernels/s  median ${median} ms, largest ${most} ms"
done

rss() { # calls [spill MiB] -> collector max RSS in KiB, from the trace's closing instant
    trace="$work/rss.$1.${2:-default}.pftrace.zst"
    env CT_DOUBLE_CALL_NS=150 CUDATRACE_OUTPUT="$trace" CUDATRACE_QUIET=1 \
        ${2:+CUDATRACE_SPILL_MB=$2} \
        LD_PRELOAD="$build/libcudatrace.so" "$build/tests/launch_loop" "$1" > /dev/null
    "$build/cudatrace" report --json "$trace" | python3 -c '
import json, sys
t = json.load(sys.stdin)["processes"][0]["tracer"]
print(t["collector_max_rss_kb"], "KiB after", t["calls_recorded"], "recorded calls")'
}
echo "  collector peak RSS                $(rss "$short")"
echo "  collector peak RSS                $(rss "$long")"
# The spill pool's pages count in the collector's RSS too (it maps them to read them): with a
# small pool the same run shows what the collector itself holds.
echo "  collector peak RSS, 8 MiB pool    $(rss "$long" 8)"

starts="${BENCH_STARTS:-1000}"
start_loop() { # preload-or-empty -> microseconds per /bin/true
    env ${1:+LD_PRELOAD="$1"} CUDATRACE_OUTPUT="$work/none-%p.pftrace.zst" sh -c '
        start=$(date +%s%N); i=0
        while [ $i -lt "$0" ]; do /bin/true; i=$((i + 1)); done
        echo $(( ($(date +%s%N) - start) / $0 / 1000 ))' "$starts"
}
plain=$(start_loop "")
preloaded=$(start_loop "$build/libcudatrace.so")
echo "  /bin/true, $starts runs            $plain us untraced, $preloaded us under the preload (+$((preloaded - plain)) us); $(ls "$work" | grep -c '^none-' || true) trace files"
dl_plain=$("$build/bench/dlopen_loop" 100000 libm.so.6 | sed 's/.*, \([0-9.]*\) ns per dlopen/\1/')
dl_traced=$(env LD_PRELOAD="$build/libcudatrace.so" CUDATRACE_OUTPUT="$work/none-%p.pftrace.zst" \
    "$build/bench/dlopen_loop" 100000 libm.so.6 | sed 's/.*, \([0-9.]*\) ns per dlopen/\1/')
echo "  dlopen of a loaded library        $dl_plain ns untraced, $dl_traced ns traced (+$(calc "$dl_traced - $dl_plain") ns)"
dropped_in_burst() { # launches -> records dropped at default settings
    env CUDATRACE_OUTPUT="$work/burst.pftrace.zst" LD_PRELOAD="$build/libcudatrace.so" \
        "$build/tests/launch_loop" "$1" 2>"$work/err" > /dev/null
    rm -f "$work/burst.pftrace.zst"
    summary < "$work/err" | awk '{print $2}'
}
low=1000; high=0
while [ "$high" -eq 0 ] && [ "$low" -lt 100000000 ]; do
    if [ "$(dropped_in_burst $((low * 2)))" -eq 0 ]; then low=$((low * 2)); else high=$((low * 2)); fi
done
while [ "$high" -gt 0 ] && [ $((high - low)) -gt $((low / 50)) ]; do
    mid=$(((low + high) / 2))
    if [ "$(dropped_in_burst "$mid")" -eq 0 ]; then low=$mid; else high=$mid; fi
done
echo "  largest burst without a drop      about $low back-to-back launches at default settings"

sync_loop() { # lookup env... -> ns per cudaDeviceSynchronize from a Python loop; lookup:
    # "library" looks it up in libcudart's handle, as ctypes does (a preload
    # that does not see dlsym is bypassed), "global" in the process's scope,
    # where a preload comes first
    lookup="$1"
    shift
    env "$@" python3 -c '
import ctypes, sys, time
cudart = ctypes.CDLL("libcudart.so.13", mode=ctypes.RTLD_GLOBAL)
sync = (cudart if sys.argv[2] == "library" else ctypes.CDLL(None)).cudaDeviceSynchronize
sync()
n = int(sys.argv[1])
start = time.perf_counter_ns()
for _ in range(n):
    sync()
print("%.1f" % ((time.perf_counter_ns() - start) / n))' "${BENCH_SYNCS:-100000}" "$lookup"
}
preload="$(cd "$build" && pwd)/libcudatrace.so"
sy_plain=$(sync_loop library CUDATRACE_QUIET=1)
sy_nosite=$(sync_loop library CUDATRACE_QUIET=1 CUDATRACE_CALL_SITES=0 LD_PRELOAD="$preload" \
    CUDATRACE_OUTPUT="$work/sync0.pftrace.zst")
sy_site=$(sync_loop library CUDATRACE_QUIET=1 LD_PRELOAD="$preload" \
    CUDATRACE_OUTPUT="$work/sync1.pftrace.zst")
echo "  sync from Python (ctypes)         $sy_plain ns untraced, $sy_nosite ns traced, $sy_site ns with call sites (+$(calc "$sy_site - $sy_nosite") ns per site)"

# 10. the floor (tests/bench/floor_preload.c: two TSC reads and a 16-byte
#     store around the forwarded call) in the same run as untraced and
#     traced, FLOOR_RUNS times each, alternately, medians: the tracer's added
#     cost as a ratio to the floor's, on the tight loop (the collector cannot
#     keep up: records spill), on a paced loop it keeps up with (each fake
#     launch spinning PACED_NS; again with the program bound to one CPU), and
#     from Python through ctypes. A process's
#     figure moves by a few ns from one run to the next, more than within a
#     run, so these take more runs than the lines above; a floor that reads
#     no dearer than untraced gets no ratio.
paced_ns="${BENCH_PACED_NS:-300}"
floor_runs="${BENCH_FLOOR_RUNS:-9}"
floor="$(cd "$build" && pwd)/bench/libfloor.so"
floor_read_sizes=""
launches() { # env... -> ns per launch
    env "$@" "$build/tests/launch_loop" "$calls" | per_launch
}
floor_round() { # measure knob-env... -> "untraced floor traced [read floor per size...]"
    measure="$1"
    shift
    u=$("$measure" "$@")
    f=$("$measure" "$@" LD_PRELOAD="$floor")
    t=$("$measure" "$@" LD_PRELOAD="$preload" CUDATRACE_QUIET=1 CUDATRACE_OUTPUT="$work/floor.pftrace.zst")
    rm -f "$work"/floor*.pftrace.zst
    r=""
    for size in $floor_read_sizes; do
        r="$r $("$measure" "$@" LD_PRELOAD="$floor_read" CT_FLOOR_READER="$size")"
    done
    echo "$u $f $t$r"
}
ratio() { # added-ns unit-ns unit-name -> "N.NNx unit-name", or why there is none
    awk "BEGIN { if (($2) <= 0) print \"no ratio, $3 is within noise\"; else printf \"%.2fx $3\", ($1) / ($2) }"
}
floor_line() { # label measure knob-env...
    label="$1"
    shift
    : > "$work/floor_rounds"
    i=1
    while [ "$i" -le "$floor_runs" ]; do floor_round "$@" >> "$work/floor_rounds"; i=$((i + 1)); done
    fu=$(cut -d' ' -f1 < "$work/floor_rounds" | median)
    ff=$(cut -d' ' -f2 < "$work/floor_rounds" | median)
    ft=$(cut -d' ' -f3 < "$work/floor_rounds" | median)
    echo "  $label untraced $fu ns, floor +$(calc "$ff - $fu") ns, traced +$(calc "$ft - $fu") ns: \
$(ratio "$ft - $fu" "$ff - $fu" "the floor")"
    column=4
    for size in $floor_read_sizes; do
        fr=$(cut -d' ' -f"$column" < "$work/floor_rounds" | median)
        echo "    the floor read by another process, $size-byte stamps: +$(calc "$fr - $fu") ns \
($(ratio "$fr - $fu" "$ff - $fu" "the floor")); traced $(ratio "$ft - $fu" "$fr - $fu" "this one")"
        column=$((column + 1))
    done
}
floor_line "floor, tight loop          " launches CT_DOUBLE_CALL_NS=0
floor_line "floor, paced (${paced_ns} ns a launch)" launches CT_DOUBLE_CALL_NS="$paced_ns"
# The same paced loop bound to one CPU, as a launcher binds a rank (taskset, numactl,
# --cpu-bind): the collector it forks inherits that mask, and runs beside the program only
# because it moves to the node's other CPUs (collector/cpu_placement.c).
bound_cpu=$(python3 -c 'import os; print(min(os.sched_getaffinity(0)))')
launches_bound() { # env... -> ns per launch, the program bound to one CPU
    env "$@" taskset -c "$bound_cpu" "$build/tests/launch_loop" "$calls" | per_launch
}
# And two more floors whose stamps another process reads, on another CPU as the collector
# (tests/bench/floor_preload.c, FLOOR_READ), 16 bytes a stamp and a cache line a stamp: what
# being read from outside costs the program on this machine, whatever the tracer's hook.
floor_read="$(cd "$build" && pwd)/bench/libfloor_read.so"
floor_read_sizes="16 64"
floor_line "floor, paced, bound to one CPU" launches_bound CT_DOUBLE_CALL_NS="$paced_ns"
floor_read_sizes=""
sync_global() { # env... -> ns per cudaDeviceSynchronize, looked up where the floor sees it
    sync_loop global "$@"
}
floor_line "floor, Python sync loop    " sync_global
# The same comparison in instructions (callgrind counts them, so the figure is the same on a
# quiet machine and a busy one, where the nanoseconds above move by more than a change to the
# hook saves): what one more launch costs, 200,000 launches less 100,000, so start-up cancels.
# Call sites off: valgrind's slowdown would bring the millisecond's launch site every few
# dozen launches; a ring that holds every record, so none takes the spill or drop path.
launch_instructions() { # launches env... -> instructions counted in the program
    n="$1"
    shift
    env "$@" CT_DOUBLE_CALL_NS=0 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        "$build/tests/launch_loop" "$n" 2>&1 > /dev/null | sed -n 's/.*Collected : //p'
}
per_launch_instructions() { # env... -> instructions one more launch costs
    calc "($(launch_instructions 200000 "$@") - $(launch_instructions 100000 "$@")) / 100000"
}
traced_instructions() { # env... -> the same, traced
    per_launch_instructions LD_PRELOAD="$preload" CUDATRACE_QUIET=1 CUDATRACE_CALL_SITES=0 \
        CUDATRACE_RINGS=2 CUDATRACE_RING_RECORDS=262144 CUDATRACE_OUTPUT="$work/ir.pftrace.zst" "$@"
}
if command -v valgrind > /dev/null; then
    iu=$(per_launch_instructions)
    if_=$(per_launch_instructions LD_PRELOAD="$floor")
    it=$(traced_instructions)
    iw=$(traced_instructions CUDATRACE_CAPTURE=profiler)
    echo "  instructions per launch           untraced $iu, floor +$(calc "$if_ - $iu"), traced +$(calc "$it - $iu") \
($(ratio "$it - $iu" "$if_ - $iu" "the floor")), outside a capture window +$(calc "$iw - $iu") \
($(ratio "$iw - $iu" "$if_ - $iu" "the floor"))"
else
    echo "  instructions per launch           not measured: no valgrind"
fi

# 14. CUDA graph replays on the driver and CUPTI doubles (1 us kernels): graph_steps' graph of
#     41 nodes launched GRAPH_LAUNCHES times, untraced, traced a record per node (the default)
#     and a record per launch (CUDATRACE_GPU_GRAPHS=graphs): wall time, and for the traced runs
#     the collector's CPU and the trace's bytes, each per launch. What CUPTI itself spends per
#     record on a GPU is not the doubles' to show.
graph_launches="${BENCH_GRAPH_LAUNCHES:-5000}"
graph_run() { # label [graphs|nodes|untraced]
    preload="$build/libcudatrace.so"
    [ "$2" = untraced ] && preload=""
    /usr/bin/time -f "%e" -o "$work/graph.time" env LD_LIBRARY_PATH="$build/double:$build/driver" \
        CT_DOUBLE_DRIVER=1 CT_DOUBLE_KERNEL_NS=1000 CUDATRACE_QUIET=1 CUDATRACE_GPU_GRAPHS="$2" \
        CUDATRACE_MAX_MB=0 CUDATRACE_OUTPUT="$work/graph.pftrace.zst" LD_PRELOAD="$preload" \
        "$build/tests/graph_steps" --replays "$graph_launches" > /dev/null
    wall=$(awk -v s="$(cat "$work/graph.time")" -v n="$graph_launches" 'BEGIN {printf "%.1f", s * 1e6 / n}')
    if [ "$2" = untraced ]; then
        echo "  graph replays, $1  ${wall} us a launch"
        return
    fi
    cpu=$("$build/cudatrace" report --json "$work/graph.pftrace.zst" | tr ',' '\n' |
        sed -n 's/.*"collector_cpu_ns": *\([0-9]*\).*/\1/p')
    bytes=$(stat -c %s "$work/graph.pftrace.zst")
    echo "  graph replays, $1  ${wall} us a launch; collector $(awk -v c="$cpu" -v n="$graph_launches" 'BEGIN {printf "%.1f", c / 1e3 / n}') us, trace $(awk -v b="$bytes" -v n="$graph_launches" 'BEGIN {printf "%.0f", b / n}') bytes a launch"
    rm -f "$work/graph.pftrace.zst"
}
graph_run "untraced         " untraced
graph_run "a record per node" nodes
graph_run "a record a launch" graphs

# 9. `cudatrace report` over a job's traces: REPORT_RANKS copies of a rank's
#    trace of about 1 MB, read in parallel (one reader per core) and on one
#    core, and REPORT_BIG copies of one about 16 times larger, in parallel;
#    wall time, and the peak RSS of the largest process (the command, or one
#    of its readers).
report_ranks="${BENCH_REPORT_RANKS:-1024}"
report_big="${BENCH_REPORT_BIG:-64}"
job_of() { # calls copies folder -> a folder of `copies` rank traces of `calls` launches
    mkdir -p "$3"
    env RANK=0 WORLD_SIZE="$2" CUDATRACE_RING_RECORDS="$big_ring" CUDATRACE_RINGS=2 CUDATRACE_MAX_MB=0 CUDATRACE_QUIET=1 \
        CUDATRACE_OUTPUT="$3/rank0.pftrace.zst" LD_PRELOAD="$build/libcudatrace.so" \
        "$build/tests/launch_loop" "$1" > /dev/null
    i=1
    while [ "$i" -lt "$2" ]; do cp "$3/rank0.pftrace.zst" "$3/rank$i.pftrace.zst"; i=$((i + 1)); done
}
report_run() { # label folder taskset-prefix...
    label="$1" folder="$2"
    shift 2
    /usr/bin/time -f "%e %M" -o "$work/time" "$@" "$build/cudatrace" report "$folder" > /dev/null
    read -r seconds kib < "$work/time"
    echo "$label ${seconds} s, ${kib} KiB peak"
}
report_job() { # calls copies name [one-core-too]
    job_of "$1" "$2" "$work/$3"
    size=$(du -k "$work/$3/rank0.pftrace.zst" | cut -f1)
    echo "  report, $2 traces of $size KiB:"
    report_run "    $(nproc) cores   " "$work/$3"
    [ -z "${4:-}" ] || report_run "    one core  " "$work/$3" taskset -c 0
    rm -rf "$work/$3"
}
report_job 250000 "$report_ranks" ranks one-core-too
report_job 4000000 "$report_big" big
