"""no-kernel-image: a launch that fails with cudaErrorNoKernelImageForDevice
names the kernel (from nvcc's own registration), the library that holds it,
the GPU's compute capability and the GPU code the library does carry, read
from its fat binary. The library is a real nvcc build with sm_80 code only;
the CPU double plays a GPU that cannot run it (CT_DOUBLE_NO_KERNEL_IMAGE) and
reports compute capability 9.0; its healthy twin launches the same kernel
without that failure."""
import os
import subprocess

import pytest

import cudatrace_cmd


@pytest.fixture(scope="module")
def sm80_library(tmp_path_factory):
    nvcc = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "nvcc")
    out = tmp_path_factory.mktemp("sm80") / "libsm80_kernel.so"
    subprocess.run([nvcc, "-shared", "-Xcompiler", "-fPIC", "-cudart", "shared",
                    "-gencode", "arch=compute_80,code=sm_80", "-o", str(out),
                    os.path.join(os.path.dirname(__file__), "nvcc", "sm80_kernel.cu")],
                   check=True, capture_output=True, timeout=300)
    return out


def run(trace_run, build_dir, library, no_image):
    completed, trace, _ = trace_run("call_library", library, "launch_scale",
                                    env={"CT_DOUBLE_NO_KERNEL_IMAGE": int(no_image)})
    assert completed.returncode == 0, completed.stderr
    return completed, trace, cudatrace_cmd.report(build_dir,
                                                  completed.run_dir / "trace.pftrace.zst")


def test_no_kernel_image_names_kernel_library_and_archs(trace_run, build_dir, sm80_library):
    completed, _, report = run(trace_run, build_dir, sm80_library, True)
    assert completed.stdout == "call_library: launch_scale -> 209\n"
    (finding,) = report["findings"]
    assert finding["id"] == "no-kernel-image"
    evidence = finding["evidence"]
    assert evidence["kernel"] == "scale_sm80"
    assert evidence["library"] == str(sm80_library)
    assert evidence["library_archs"] == ["sm_80"]
    assert evidence["compute_capability"] == "9.0"
    assert "compute capability 9.0" in finding["message"] and "sm_80" in finding["message"]


def test_healthy_twin(trace_run, build_dir, sm80_library):
    completed, trace, report = run(trace_run, build_dir, sm80_library, False)
    assert completed.stdout == "call_library: launch_scale -> 0\n"
    assert report["findings"] == []
    # The <<<>>> launch is named by nvcc's registration, though the stub is
    # not an exported symbol.
    (launch,) = [s for s in trace.slices if s["name"] == "__cudaLaunchKernel"]
    assert launch["args"]["kernel"] == "scale_sm80" and launch["args"]["result"] == 0
