#!/bin/sh
# `make demo`: trace the bundled training loop and print the report. No GPU
# exists here, so the loop runs on the CPU double of the CUDA runtime: the
# calls, their arguments and the memory growth are real; kernel times are not.
set -eu
build="${1:-build}"
out="${DEMO_OUT:-$build/demo}"
mkdir -p "$out"
rm -f "$out/train_loop.pftrace.zst"
echo "== SIMULATED: the CUDA runtime here is cudatrace's CPU double (no GPU on this machine) =="
LD_LIBRARY_PATH="$build/double" CT_DOUBLE_SYNC_NS=2000000 \
    "$build/cudatrace" run -o "$out/train_loop.pftrace.zst" -- "$build/examples/train_loop" 100
echo
# --annotate also appends the findings to the trace, on a "cudatrace findings" track.
"$build/cudatrace" report --annotate "$out/train_loop.pftrace.zst"
echo
echo "trace: $out/train_loop.pftrace.zst (open it at https://ui.perfetto.dev; the findings are"
echo "on its \"cudatrace findings\" track)"
