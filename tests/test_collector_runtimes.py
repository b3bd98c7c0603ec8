"""Real CUDA runtimes of other versions, from NVIDIA's PyPI wheels (installed
under build/wheels by `make test`): two minors of CUDA 12 and a CUDA 11 one
beside the toolkit's CUDA 13 runtime. The inventory tells the two 12.x
copies apart by what their own cudaRuntimeGetVersion reports (their file
names are the same), and duplicate-library names every copy."""
import glob
import os

import pytest

import cudatrace_cmd
import toolkit


def wheel_runtime(build_dir, pattern):
    found = glob.glob(os.path.join(build_dir, "wheels", pattern, "nvidia", "cuda_runtime", "lib",
                                   "libcudart.so.*"))
    assert len(found) == 1, f"run `make test` (it installs the runtime wheels): {pattern}"
    return found[0]


@pytest.fixture
def runtimes(build_dir):
    return {"12.4": wheel_runtime(build_dir, "nvidia_cuda_runtime_cu12-12.4.*"),
            "12.9": wheel_runtime(build_dir, "nvidia_cuda_runtime_cu12-12.9.*"),
            "11": wheel_runtime(build_dir, "nvidia_cuda_runtime_cu11-11.8.*")}


def test_two_minors_and_the_toolkit_runtime(trace_run, build_dir, runtimes):
    toolkit.no_driver()
    toolkit.cached("libcudart.so.13")  # load_libs is linked against that soname
    completed, _, _ = trace_run("load_libs", runtimes["12.4"], runtimes["12.9"], double=False)
    report = cudatrace_cmd.report(build_dir, completed.run_dir / "trace.pftrace.zst")
    versions = {os.path.realpath(lib["realpath"]): lib["version"]
                for lib in report["processes"][0]["libraries"] if lib["family"] == "cudart"}
    assert versions == {os.path.realpath(runtimes["12.4"]): "12.4",
                        os.path.realpath(runtimes["12.9"]): "12.9",
                        os.path.realpath(toolkit.path("cudart")): toolkit.VERSION}
    (dup,) = [f for f in report["findings"] if f["id"] == "duplicate-library"]
    assert {lib["realpath"] for lib in dup["evidence"]["libraries"]} == set(versions)
    assert "3 copies of libcudart" in dup["message"]
    # No driver here: that is named too, and nothing else.
    assert sorted(f["id"] for f in report["findings"]) == ["driver-missing", "duplicate-library"]


def test_cuda11_runtime_without_driver_keeps_its_file_version(trace_run, build_dir, runtimes):
    toolkit.no_driver()
    toolkit.cached("libcudart.so.13")
    # Before CUDA 12, cudaRuntimeGetVersion fails without a driver: the
    # version then comes from the file name.
    completed, _, _ = trace_run("load_libs", runtimes["11"], double=False)
    report = cudatrace_cmd.report(build_dir, completed.run_dir / "trace.pftrace.zst")
    (old,) = [lib for lib in report["processes"][0]["libraries"]
              if lib["realpath"] == os.path.realpath(runtimes["11"])]
    assert old["version"] == "11.0" and old["soname"] == "libcudart.so.11.0"


def test_wheel_runtime_beside_a_working_runtime(trace_run, build_dir, runtimes):
    # The program's own runtime works (the double); a framework's wheel brings
    # a second one: the classic two-runtimes setup, with nothing else wrong.
    # (test_collector_libraries.py has the healthy twin: the double alone.)
    completed, _, _ = trace_run("load_libs", runtimes["12.9"])
    report = cudatrace_cmd.report(build_dir, completed.run_dir / "trace.pftrace.zst")
    assert [f["id"] for f in report["findings"]] == ["duplicate-library"]
