"""A real nvcc-compiled CUDA C program (tests/gpu/vector_loop.cu: <<<>>>
launches, which CUDA 13 routes through __cudaGetKernel and
__cudaLaunchKernel) under the preload. On the real toolkit runtime with no
driver it behaves exactly as without the preload, and the trace holds every
call it made, each failing with cudaErrorInsufficientDriver; that runtime
hands back the host function as the kernel handle. On the CPU double, whose
handles are its own objects as a working runtime's are, the launches can be
named only through what __cudaGetKernel answered.
"""
import collections
import os
import shutil
import subprocess

import pytest

STEPS, LAUNCHES = 3, 4
# vector_loop alternates its two kernels, named as nvcc registered them.
KERNELS = {"_Z12scale_kernelPffi": STEPS * LAUNCHES // 2,
           "_Z10add_kernelPfPKfi": STEPS * LAUNCHES // 2}


SOURCE = os.path.join(os.path.dirname(__file__), "gpu", "vector_loop.cu")


def build_vector_loop(folder, *flags):
    nvcc = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "nvcc")
    assert os.path.exists(nvcc) or shutil.which("nvcc"), "nvcc from the CUDA toolkit is needed"
    out = folder / "vector_loop"
    subprocess.run([nvcc if os.path.exists(nvcc) else "nvcc", *(flags or ["-O2"]), "-cudart", "shared",
                    "-o", str(out), SOURCE], check=True, capture_output=True, timeout=300)
    return str(out)


@pytest.fixture(scope="module")
def vector_loop(tmp_path_factory):
    return build_vector_loop(tmp_path_factory.mktemp("nvcc"))


def expected_calls(pinned):
    """vector_loop's traced calls: its C++ cudaMallocHost is a template over cudaHostAlloc, and
    only a buffer that was pinned is given back with cudaFreeHost."""
    calls = {"cudaMalloc": 2, "cudaHostAlloc": 1, "cudaMemcpy": 2 * STEPS + 1,
             "__cudaLaunchKernel": STEPS * LAUNCHES, "cudaGetLastError": STEPS,
             "cudaDeviceSynchronize": STEPS, "cudaFree": 2}
    return {**calls, "cudaFreeHost": 1} if pinned else calls


def calls_and_kernels(trace):
    """{function: slices} and {kernel: launches} of a trace."""
    return (collections.Counter(s["name"] for s in trace.slices),
            collections.Counter(s["args"]["kernel"] for s in trace.slices
                                if s["name"] == "__cudaLaunchKernel"))


def test_nvcc_program_unchanged_and_fully_traced(trace_run, vector_loop):
    args = (STEPS, LAUNCHES, 1)  # keep going past every failure
    plain, _, _ = trace_run(vector_loop, *args, double=False, preload=False)
    traced, trace, _ = trace_run(vector_loop, *args, double=False)
    assert plain.returncode == traced.returncode == 3
    assert traced.stdout == plain.stdout
    assert "cudaErrorInsufficientDriver" in plain.stdout

    assert calls_and_kernels(trace) == (expected_calls(pinned=False), KERNELS)
    for s in trace.slices:
        assert s["args"]["result"] == 35
        assert s["args"]["error"] == "cudaErrorInsufficientDriver"


def test_nvcc_program_on_the_double_named_through_its_handles(trace_run, vector_loop):
    plain, _, truth = trace_run(vector_loop, STEPS, LAUNCHES, preload=False)
    traced, trace, _ = trace_run(vector_loop, STEPS, LAUNCHES)
    assert plain.returncode == traced.returncode == 0
    assert traced.stdout == plain.stdout

    calls, kernels = calls_and_kernels(trace)
    assert (calls, kernels) == (expected_calls(pinned=True), KERNELS)
    assert all(s["args"]["result"] == 0 for s in trace.slices)
    # One handle per launch site, asked for untraced; every launch really made.
    assert {name: n for name, n in truth["calls"].items() if n} == {**calls, "__cudaGetKernel": 2}
    assert truth["launches"] == STEPS * LAUNCHES


@pytest.mark.parametrize("flags", [["-O0", "-g"], ["-O2", "-g"], ["-O2"]],
                         ids=["lines", "lines-inlined", "symbols-only"])
def test_failing_calls_name_the_program_line(trace_run, tmp_path, flags):
    """cudaMalloc in a .cu file is cuda_runtime.h's template over the runtime's: the site is
    the program's own call, never the template. Its line where the line table has it; where
    -O2 inlined the template, the table gives the header's line, so only the function."""
    program = build_vector_loop(tmp_path, *flags)
    _, trace, _ = trace_run(program, STEPS, LAUNCHES, 1, double=False)
    with open(SOURCE) as f:
        lines = [n for n, text in enumerate(f, 1) if "check(cudaMalloc(&" in text]
    sites = [s["args"]["site"] for s in trace.slices if s["name"] == "cudaMalloc"]
    if flags == ["-O0", "-g"]:
        # Both calls sit in one `if` condition, to which nvcc's front end gives the if's line
        # (objdump -dl says the same of both call instructions).
        assert sites == [f"vector_loop.cu:{lines[0]} in main"] * 2
    else:
        assert sites == ["main", "main"]
