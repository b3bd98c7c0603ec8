"""`make demo`'s script: it says the run is simulated, prints a report whose
counts are the example's, and leaves a trace that passes Perfetto's official
schema and the import rules."""
import os
import re
import subprocess

import perfetto_check


def test_demo_prints_report_and_leaves_valid_trace(repo_root, build_dir, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUDATRACE_", "CT_DOUBLE"))}
    env["DEMO_OUT"] = str(tmp_path)
    done = subprocess.run(["sh", os.path.join(repo_root, "examples", "demo.sh"), build_dir],
                          cwd=repo_root, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "SIMULATED" in done.stdout
    # train_loop: 100 steps of 201 launches (examples/train_loop.c).
    assert re.search(r"^  cudaLaunchKernel\s+20100\s+0\s", done.stdout, re.M), done.stdout
    assert re.search(r"^  launches\s+20100$", done.stdout, re.M)
    trace = perfetto_check.load(tmp_path / "train_loop.pftrace.zst")
    assert sum(s["name"] == "cudaLaunchKernel" for s in trace.slices) == 20100
    # The doubles of the driver and CUPTI give the GPU's side, as Perfetto's typed GPU records
    # (the default): a kernel per launch, each named by its launch's gpu_correlation
    # (`cudatrace run` started CUPTI at cuInit: nothing is missed).
    gpu = [s for s in trace.gpu_stages if s["stage"] == "kernel"]
    named = {i for s in trace.slices if s["name"] == "cudaLaunchKernel"
             for i in s["gpu_submissions"]}
    assert len(gpu) == 20100 and all(s["event_id"] in named for s in gpu)
    assert re.search(r"^  GPU\s+busy .* 20100 kernels, 200 copies, 1 memsets", done.stdout, re.M)
    # The findings name what is wrong with the loop and the lines of examples/train_loop.c.
    source = open(os.path.join(repo_root, "examples", "train_loop.c")).read().splitlines()

    def line_of(text):
        (n,) = [n for n, line in enumerate(source, 1) if text in line]
        return n

    sync = line_of("CHECK(cudaDeviceSynchronize());")
    kept = line_of("CHECK(cudaMalloc(&kept, KEPT_BYTES_PER_STEP));")
    # sync-stall and gpu-idle cost the loop about the same (the host waits while the GPU
    # idles), so either may come first.
    assert re.search(rf"^  (findings)?\s+warning sync-stall: .* top: train_loop\.c:{sync} in main ",
                     done.stdout, re.M), done.stdout
    assert re.search(rf"warning memory-growth: .* still live at the end: train_loop\.c:{kept} in "
                     rf"main ", done.stdout), done.stdout
    # ... and are in the trace, for the Perfetto UI.
    (track,) = [t for t in trace.tracks.values() if t["name"] == "cudatrace findings"]
    marks = {i["name"] for i in trace.instants if i["track_uuid"] == track["uuid"]}
    assert {"warning sync-stall", "warning memory-growth"} <= marks
