"""A real nvcc-compiled CUDA C program (tests/gpu/vector_loop.cu: <<<>>>
launches, which CUDA 13 routes through __cudaGetKernel and
__cudaLaunchKernel) on the real toolkit runtime with no driver: it behaves
exactly as without the preload, and the trace holds every call it made, each
failing with cudaErrorInsufficientDriver.
"""
import os
import shutil
import subprocess

import pytest

STEPS, LAUNCHES = 3, 4


@pytest.fixture(scope="module")
def vector_loop(tmp_path_factory):
    nvcc = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "nvcc")
    assert os.path.exists(nvcc) or shutil.which("nvcc"), "nvcc from the CUDA toolkit is needed"
    out = tmp_path_factory.mktemp("nvcc") / "vector_loop"
    source = os.path.join(os.path.dirname(__file__), "gpu", "vector_loop.cu")
    subprocess.run([nvcc if os.path.exists(nvcc) else "nvcc", "-O2", "-cudart", "shared",
                    "-o", str(out), source], check=True, capture_output=True, timeout=300)
    return str(out)


def test_nvcc_program_unchanged_and_fully_traced(trace_run, vector_loop):
    args = (STEPS, LAUNCHES, 1)  # keep going past every failure
    plain, _, _ = trace_run(vector_loop, *args, double=False, preload=False)
    traced, trace, _ = trace_run(vector_loop, *args, double=False)
    assert plain.returncode == traced.returncode == 3
    assert traced.stdout == plain.stdout
    assert "cudaErrorInsufficientDriver" in plain.stdout

    by_name = {}
    for s in trace.slices:
        by_name.setdefault(s["name"], []).append(s)
    assert len(by_name["__cudaLaunchKernel"]) == STEPS * LAUNCHES
    assert len(by_name["cudaMemcpy"]) == 2 * STEPS + 1
    assert len(by_name["cudaDeviceSynchronize"]) == STEPS
    assert len(by_name["cudaMalloc"]) == 2
    for slices in by_name.values():
        for s in slices:
            assert s["args"]["result"] == 35
            assert s["args"]["error"] == "cudaErrorInsufficientDriver"
