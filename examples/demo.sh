#!/bin/sh
# `make demo`: trace the bundled training loop and print the report. No GPU
# exists here, so the loop runs on the CPU doubles of the CUDA runtime, the
# driver and CUPTI: the calls, their arguments and the memory growth are
# real; the GPU's work is simulated (2 us a kernel, copies at 10 GB/s), and
# CUPTI reports it as it would a real GPU's.
set -eu
build="${1:-build}"
out="${DEMO_OUT:-$build/demo}"
mkdir -p "$out"
rm -f "$out/train_loop.pftrace.zst"
echo "== SIMULATED: the CUDA runtime, driver and CUPTI here are cudatrace's CPU doubles (no GPU on this machine) =="
LD_LIBRARY_PATH="$build/double:$build/driver" CT_DOUBLE_DRIVER=1 CT_DOUBLE_KERNEL_NS=2000 \
    CT_DOUBLE_SYNC_NS=2000000 \
    "$build/cudatrace" run -o "$out/train_loop.pftrace.zst" -- "$build/examples/train_loop" 100
echo
# --annotate also appends the findings to the trace, on a "cudatrace findings" track.
"$build/cudatrace" report --annotate "$out/train_loop.pftrace.zst"
echo
echo "trace: $out/train_loop.pftrace.zst (open it at https://ui.perfetto.dev; the GPU's work is"
echo "on the \"GPU 0 stream 7\" track, with an arrow from each launch, and the findings on the"
echo "\"cudatrace findings\" track)"
