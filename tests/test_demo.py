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
