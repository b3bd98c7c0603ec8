#!/bin/sh
# The GPU check, for a machine with an NVIDIA GPU (run it as one script: the
# lent machine's time is short). Uses build/ as carried over, or builds it.
#  1. vector_loop (CUDA C, <<<>>> launches): untraced and traced; the output
#     must be identical; the traced call counts, the GPU kernels and copies
#     CUPTI recorded must equal what the program does (steps x launches, ...),
#     and every GPU slice must end the flow its host call began.
#  2. torch_loop.py (if torch with CUDA imports): wall time per step untraced
#     and traced; GPU kernels per step from cudatrace (two traced runs of
#     different lengths) against torch.profiler's (an untraced run); flows.
#  3. the same loop through torch.compile: Triton's driver-API launches are
#     recorded (cuLaunchKernel, seen by CUPTI) and its kernels are on the GPU
#     tracks.
#  4. NVML (with 1): the collector sampled the real device (state sampling,
#     a gpu_health block for device 0, printed), and what each NVML call
#     costs here (build/bench/nvml_cost, when built: `make build/bench/nvml_cost`).
# Prints the figures; exits non-zero if a check fails. BUILD names the build
# folder (default build); OUT where the traces go (default /tmp).
set -u
cd "$(dirname "$0")/../.."
build="${BUILD:-build}"
out="${OUT:-/tmp}/cudatrace-gpu"
mkdir -p "$out"
fail=0
say() { printf '%s\n' "$*"; }
check() { if [ "$2" = "$3" ]; then say "ok    $1: $2"; else say "FAIL  $1: got $2, expected $3"; fail=1; fi; }
# value REPORT.json EXPR: EXPR evaluated on the first process `p` of a report.
value() { python3 -c "import json,sys; p=json.load(open(sys.argv[1]))['processes'][0]; print($2)" "$1"; }
traced() { trace="$1"; shift; CUDATRACE_OUTPUT="$out/$trace.pftrace.zst" LD_PRELOAD="$preload" "$@"; }
report() { "$build/cudatrace" report --json "$out/$1.pftrace.zst" > "$out/$1.json" || fail=1; "$build/cudatrace" report "$out/$1.pftrace.zst"; }
flows() {
    check "$1: GPU work that ends a flow from its host call" \
        "$(value "$out/$1.json" "p['gpu']['flows']['from_host_call']")" \
        "$(value "$out/$1.json" "p['gpu']['flows']['gpu_work']")"
    check "$1: CUPTI state" "$(value "$out/$1.json" "p['cupti']['state']")" active
    say "clock $1: $(value "$out/$1.json" "p['cupti']['clock_samples'], 'readings, error', p['cupti']['clock_reading_error_ns'], 'ns reading +', p['cupti']['clock_drift_ns'], 'ns drift'")"
}

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | sed 's/^/gpu   /'
[ -f "$build/libcudatrace.so" ] || make all BUILD="$build" >/dev/null || exit 1
preload="$(cd "$build" && pwd)/libcudatrace.so"
nvcc="${CUDA_HOME:-/usr/local/cuda}/bin/nvcc"
steps=50 launches=200
if [ -x "$nvcc" ]; then
    "$nvcc" -O2 -cudart shared -o "$out/vector_loop" tests/gpu/vector_loop.cu || exit 1
elif [ -x "$build/gpu/vector_loop" ]; then
    cp "$build/gpu/vector_loop" "$out/vector_loop"
else
    say "no nvcc and no prebuilt build/gpu/vector_loop"; exit 1
fi

t0=$(date +%s%N); "$out/vector_loop" $steps $launches > "$out/plain.txt"; s1=$?; t1=$(date +%s%N)
traced vector_loop "$out/vector_loop" $steps $launches > "$out/traced.txt" 2> "$out/traced.err"; s2=$?; t2=$(date +%s%N)
check "vector_loop exit status traced vs untraced" "$s2" "$s1"
check "vector_loop output traced vs untraced" "$(cat "$out/traced.txt")" "$(cat "$out/plain.txt")"
say "time  vector_loop untraced $(( (t1 - t0) / 1000000 )) ms, traced $(( (t2 - t1) / 1000000 )) ms"
cat "$out/traced.err"
report vector_loop
vl="$out/vector_loop.json"
calls() { value "$vl" "p['api'].get('$1', {}).get('calls', 0)"; }
check "__cudaLaunchKernel calls" "$(calls __cudaLaunchKernel)" $((steps * launches))
check "cudaMemcpy calls" "$(calls cudaMemcpy)" $((2 * steps + 1))
check "cudaDeviceSynchronize calls" "$(calls cudaDeviceSynchronize)" $steps
check "cudaMalloc calls" "$(calls cudaMalloc)" 2
check "GPU kernels (CUPTI)" "$(value "$vl" "p['gpu']['kernels']")" $((steps * launches))
check "GPU copies (CUPTI)" "$(value "$vl" "p['gpu']['copies']")" $((2 * steps + 1))
flows vector_loop
check "NVML state" "$(value "$vl" "p['nvml']['state']")" sampling
check "NVML device 0 sampled" "$(value "$vl" "[d['device'] for d in p['gpu_health']][:1]")" "[0]"
say "nvml  $(value "$vl" "p['nvml'], p['gpu_health']")"
[ -x "$build/bench/nvml_cost" ] && "$build/bench/nvml_cost"

if ! python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
    say "skip  torch_loop: torch with CUDA is not importable here"
    exit $fail
fi
loop=tests/gpu/torch_loop.py
python3 $loop plain 5 100 || fail=1
traced torch_100 python3 $loop plain 5 100 || fail=1
traced torch_50 python3 $loop plain 5 50 || fail=1
python3 $loop profile 5 50 "$out/profiler.json" || fail=1
report torch_100
report torch_50
flows torch_100
per_step=$(python3 -c "
import json, sys
k = [json.load(open(f))['processes'][0]['gpu']['kernels'] for f in sys.argv[1:3]]
print((k[0] - k[1]) / 50)" "$out/torch_100.json" "$out/torch_50.json")
profiler=$(python3 -c "import json, sys; print(sum(json.load(open(sys.argv[1])).values()) / 50)" "$out/profiler.json")
check "GPU kernels per step, cudatrace vs torch.profiler" "$per_step" "$profiler"

if python3 $loop compile 3 20 > "$out/compile-plain.txt" 2>&1; then
    cat "$out/compile-plain.txt"
    traced compile python3 $loop compile 3 20 || fail=1
    report compile
    cc=$(value "$out/compile.json" "p['api'].get('cuLaunchKernel', {}).get('calls', 0)")
    if [ "$cc" -gt 0 ]; then say "ok    compile: $cc cuLaunchKernel (Triton, seen by CUPTI)"; else say "FAIL  compile: no cuLaunchKernel recorded"; fail=1; fi
    triton=$(value "$out/compile.json" "sum(k['count'] for k in p['gpu']['top_kernels'] if 'triton' in k['name'])")
    if [ "$triton" -gt 0 ]; then say "ok    compile: Triton kernels on the GPU tracks ($triton in the top five)"; else say "FAIL  compile: no Triton kernel among the top GPU kernels"; fail=1; fi
    flows compile
else
    say "skip  torch.compile: it does not run here untraced"; tail -3 "$out/compile-plain.txt"
fi
exit $fail
