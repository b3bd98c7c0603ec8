#!/bin/sh
# The GPU check, for a machine with an NVIDIA GPU (run it as one script: the
# lent machine's time is short). Uses build/ as carried over, or builds it.
#  1. vector_loop (CUDA C, <<<>>> launches): untraced and traced; the output
#     must be identical, and the traced call counts must equal what the
#     program does (steps x launches, ...); both wall times are printed.
#  2. torch_loop.py (if torch imports): traced with torch.profiler active in
#     the same process; cudatrace's counts beside the profiler's.
# Prints the figures; exits non-zero if a check fails.
set -u
cd "$(dirname "$0")/../.."
build=build
out="${OUT:-/tmp}/cudatrace-gpu"
mkdir -p "$out"
fail=0
say() { printf '%s\n' "$*"; }
check() { if [ "$2" = "$3" ]; then say "ok    $1: $2"; else say "FAIL  $1: got $2, expected $3"; fail=1; fi; }

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | sed 's/^/gpu   /'
[ -x "$build/libcudatrace.so" ] || [ -f "$build/libcudatrace.so" ] || make all >/dev/null || exit 1
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
CUDATRACE_OUTPUT="$out/vector_loop.pftrace.zst" LD_PRELOAD="$PWD/$build/libcudatrace.so" \
    "$out/vector_loop" $steps $launches > "$out/traced.txt" 2> "$out/traced.err"; s2=$?; t2=$(date +%s%N)
check "vector_loop exit status traced vs untraced" "$s2" "$s1"
check "vector_loop output traced vs untraced" "$(cat "$out/traced.txt")" "$(cat "$out/plain.txt")"
say "time  vector_loop untraced $(( (t1 - t0) / 1000000 )) ms, traced $(( (t2 - t1) / 1000000 )) ms"
cat "$out/traced.err"
"$build/cudatrace" report --json "$out/vector_loop.pftrace.zst" > "$out/vector_loop.json" || fail=1
"$build/cudatrace" report "$out/vector_loop.pftrace.zst"
count() { python3 -c "import json,sys; p=json.load(open(sys.argv[1]))['processes'][0]; print(p['api'].get(sys.argv[2], {}).get('calls', 0))" "$1" "$2"; }
check "__cudaLaunchKernel calls" "$(count "$out/vector_loop.json" __cudaLaunchKernel)" $((steps * launches))
check "cudaMemcpy calls" "$(count "$out/vector_loop.json" cudaMemcpy)" $((2 * steps + 1))
check "cudaDeviceSynchronize calls" "$(count "$out/vector_loop.json" cudaDeviceSynchronize)" $steps
check "cudaMalloc calls" "$(count "$out/vector_loop.json" cudaMalloc)" 2

if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
    CUDATRACE_OUTPUT="$out/torch.pftrace.zst" LD_PRELOAD="$PWD/$build/libcudatrace.so" \
        python3 tests/gpu/torch_loop.py 20 "$out/profiler.json" || fail=1
    "$build/cudatrace" report --json "$out/torch.pftrace.zst" > "$out/torch.json" || fail=1
    "$build/cudatrace" report "$out/torch.pftrace.zst"
    python3 - "$out/torch.json" "$out/profiler.json" <<'PY'
import json, sys
ours = {}
for p in json.load(open(sys.argv[1]))["processes"]:
    for name, s in p["api"].items():
        ours[name] = ours.get(name, 0) + s["calls"]
theirs = json.load(open(sys.argv[2]))
print("torch.profiler vs cudatrace, calls inside the profiled steps vs whole process:")
for name in sorted(set(ours) | set(theirs)):
    print(f"  {name:36} profiler {theirs.get(name, '-'):>8}  cudatrace {ours.get(name, '-'):>8}")
PY
else
    say "skip  torch_loop: torch with CUDA is not importable here"
fi
exit $fail
