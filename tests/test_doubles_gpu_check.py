"""tests/gpu/run.sh, the check for a lent GPU machine, run here on the CPU doubles of the runtime,
the driver and CUPTI, so that the script itself is known to work before a GPU session spends
its few minutes on it. Its CUDA C half (vector_loop, built with nvcc) must pass every check:
call counts, GPU kernels and copies from CUPTI, flows, CUPTI's state, NVML's (the NVML double). Its PyTorch half needs
torch with CUDA, which the test venv's python3 lacks, so the script says it skips it.
"""
import os
import subprocess
import sys


def test_the_gpu_check_passes_on_the_doubles(repo_root, build_dir, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUDATRACE_", "CT_DOUBLE"))}
    env.update({
        "LD_LIBRARY_PATH": f"{build_dir}/double:{build_dir}/driver:{build_dir}/nvml",
        "CT_DOUBLE_DRIVER": "1",
        "OUT": str(tmp_path), "BUILD": build_dir,
        # python3 is the test venv's: no torch, so the PyTorch half is skipped.
        "PATH": os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", ""),
    })
    done = subprocess.run(["sh", os.path.join(repo_root, "tests", "gpu", "run.sh")], cwd=repo_root,
                          env=env, capture_output=True, text=True, timeout=600)
    checks = [line for line in done.stdout.splitlines() if line.startswith(("ok ", "FAIL"))]
    assert done.returncode == 0 and not [c for c in checks if c.startswith("FAIL")], done.stdout
    assert "ok    GPU kernels (CUPTI): 10000" in checks
    assert "ok    GPU copies (CUPTI): 101" in checks
    assert "ok    vector_loop: GPU work that ends a flow from its host call: 10101" in checks
    assert "ok    vector_loop: CUPTI state: active" in checks
    assert "ok    NVML state: sampling" in checks
    assert "skip  torch_loop: torch with CUDA is not importable here" in done.stdout
