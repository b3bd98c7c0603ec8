"""The CUDA library inventory and the library/driver findings, on real
libraries: the toolkit's libcudart, libcublas and stub libcuda, a renamed
copy of a runtime, and the test double. Every broken setup asserts its exact
finding id and the paths in its evidence; every healthy twin asserts none.
The toolkit is the one $CUDA_HOME names (tests/toolkit.py).
"""
import os
import re
import shutil
import subprocess

import pytest

import cudatrace_cmd
import toolkit

STUB_DRIVER = os.path.join(toolkit.LIB, "stubs", "libcuda.so")

# They return an error another call left: not failures of their own.
ERROR_QUERIES = ("cudaGetLastError", "cudaPeekAtLastError")


def build_id(path):
    notes = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
    return re.search(r"Build ID: ([0-9a-f]+)", notes).group(1)


def test_inventory_describes_the_runtime_in_use(trace_run, build_dir):
    # The runtime's version is what its own cudaRuntimeGetVersion says.
    completed, _, _ = trace_run("load_libs")
    report = cudatrace_cmd.report(build_dir, completed.run_dir / "trace.pftrace.zst")
    (process,) = report["processes"]
    double = os.path.join(build_dir, "double", "libcudart.so.13")
    # The program's DT_NEEDED entry loaded it at start-up, as the preload saw.
    (library,) = process["libraries"]
    assert library.pop("loaded_ns") > 0
    assert library == {
        "path": double, "realpath": double, "family": "cudart", "soname": "libcudart.so.13",
        "version": "13.0", "version_from": "api", "requested_as": "libcudart.so.13",
        "requested_by": os.path.join(build_dir, "tests", "load_libs"),
        "found_via": "LD_LIBRARY_PATH", "seen_by": "preload", "unloaded_ns": None,
        "rolled_back_by": None,
        "build_id": build_id(double), "size": os.path.getsize(double)}
    assert report["findings"] == []


def test_toolkit_libraries_are_recognised(trace_run, build_dir):
    completed, _, _ = trace_run("load_libs", toolkit.path("cublas"))
    report = cudatrace_cmd.report(build_dir, completed.run_dir / "trace.pftrace.zst")
    libraries = report["processes"][0]["libraries"]
    by_family = {lib["family"]: lib for lib in libraries}
    # libcublas pulls in libcublasLt through its DT_NEEDED.
    assert set(by_family) == {"cudart", "cublas", "cublasLt"}
    cublas = by_family["cublas"]
    assert cublas["realpath"] == os.path.realpath(toolkit.path("cublas"))
    # cublasGetProperty's and cublasLtGetVersion's answers, one release; cuBLASLt's file
    # name carries only its major.
    major = toolkit.soname("cublas").rsplit(".", 1)[1]
    assert re.fullmatch(rf"{major}\.\d+\.\d+", cublas["version"]), cublas["version"]
    lt = by_family["cublasLt"]
    assert (lt["version"], lt["version_from"]) == (cublas["version"], "api")
    assert by_family["cudart"]["version_from"] == cublas["version_from"] == "api"
    assert cublas["soname"] == toolkit.soname("cublas")
    assert cublas["build_id"] == build_id(cublas["realpath"])


def test_two_runtimes_are_a_duplicate_library(trace_run, build_dir):
    completed, _, _ = trace_run("load_libs", toolkit.path("cudart"))
    report = cudatrace_cmd.report(build_dir, completed.run_dir / "trace.pftrace.zst")
    (finding,) = report["findings"]
    assert finding["id"] == "duplicate-library" and finding["severity"] == "error"
    paths = {lib["realpath"] for lib in finding["evidence"]["libraries"]}
    assert paths == {os.path.realpath(toolkit.path("cudart")),
                     os.path.join(build_dir, "double", "libcudart.so.13")}
    assert all(p in finding["message"] for p in paths)


def test_renamed_runtime_copy_is_recognised(trace_run, build_dir, tmp_path):
    renamed = tmp_path / "libcudart-d0da41ae.so.11.0"
    shutil.copy(toolkit.path("cudart"), renamed)
    completed, _, _ = trace_run("load_libs", renamed)
    report = cudatrace_cmd.report(build_dir, completed.run_dir / "trace.pftrace.zst")
    (copy,) = [lib for lib in report["processes"][0]["libraries"]
               if lib["realpath"] == str(renamed)]
    # Family from the renamed file's name; version from the copy's own API.
    assert copy["family"] == "cudart" and copy["version"] == toolkit.VERSION
    assert [f["id"] for f in report["findings"]] == ["duplicate-library"]


def test_stub_driver(trace_run, build_dir):
    if not os.path.exists(STUB_DRIVER):
        pytest.skip(f"the toolkit has no link-time stub {STUB_DRIVER}")
    completed, _, _ = trace_run("load_libs", STUB_DRIVER)
    report = cudatrace_cmd.report(build_dir, completed.run_dir / "trace.pftrace.zst")
    (finding,) = report["findings"]
    assert finding["id"] == "stub-driver"
    (lib,) = finding["evidence"]["libraries"]
    assert lib["realpath"] == os.path.realpath(STUB_DRIVER) and lib["family"] == "cuda"
    assert lib["soname"] == "libcuda.so.1"


def test_healthy_twin_with_an_unrelated_library(trace_run, build_dir):
    completed, _, _ = trace_run("load_libs", "libm.so.6")
    report = cudatrace_cmd.report(build_dir, completed.run_dir / "trace.pftrace.zst")
    assert report["findings"] == []
    assert [lib["family"] for lib in report["processes"][0]["libraries"]] == ["cudart"]


def test_no_driver_at_all(trace_run, build_dir):
    toolkit.no_driver()
    completed, trace, _ = trace_run("driverless", double=False)
    report = cudatrace_cmd.report(build_dir, completed.run_dir / "trace.pftrace.zst")
    (finding,) = report["findings"]
    assert finding["id"] == "driver-missing"
    failed = sum(s["args"]["result"] == 35 for s in trace.slices
                 if s["name"] not in ERROR_QUERIES)
    assert failed > 0 and finding["evidence"]["failed_calls"] == failed
    assert finding["evidence"]["driver_version"] == 0
    assert "libcuda.so.1 was never loaded" in finding["message"]
    families = [lib["family"] for lib in report["processes"][0]["libraries"]]
    assert families == ["cudart"]


@pytest.mark.parametrize("driver,expected", [(12040, ["driver-too-old"]), (13020, [])])
def test_driver_too_old_and_its_healthy_twin(trace_run, program_truth, build_dir, driver,
                                             expected):
    env = {"CT_DOUBLE_DRIVER_VERSION": driver}
    completed, _, _ = trace_run("api_mix", 1, env=env)
    truth = program_truth("api_mix", 1, env=env)
    report = cudatrace_cmd.report(build_dir, completed.run_dir / "trace.pftrace.zst")
    # api_mix asks for 2^62 bytes on purpose; that oom is not this test's business.
    assert [f["id"] for f in report["findings"] if f["id"] != "oom"] == expected
    if expected:
        evidence = report["findings"][0]["evidence"]
        assert evidence["runtime_version"] == 13000 and evidence["driver_version"] == 12040
        assert "CUDA 12.4" in report["findings"][0]["message"]
        assert evidence["failed_calls"] == sum(
            n for name, n in truth["errors"].items()
            if name in report["processes"][0]["api"] and name not in ERROR_QUERIES)


def test_cudnn_sub_library_of_another_major(trace_run, build_dir, tmp_path):
    # A real cuDNN file under a sub-library name of major 8, beside cuDNN 9.
    old = tmp_path / toolkit.missing("cudnn_ops")
    shutil.copy(toolkit.path("cudnn"), old)
    completed, _, _ = trace_run("load_libs", toolkit.path("cudnn"), old)
    report = cudatrace_cmd.report(build_dir, completed.run_dir / "trace.pftrace.zst")
    (finding,) = report["findings"]
    assert finding["id"] == "version-mismatch"
    paths = [lib["realpath"] for lib in finding["evidence"]["libraries"]]
    assert paths == [str(old), os.path.realpath(toolkit.path("cudnn"))]


def test_matching_cudnn_and_cublas_are_healthy(trace_run, build_dir):
    completed, _, _ = trace_run("load_libs", toolkit.path("cudnn"),
                                toolkit.path("cudnn_graph"),
                                toolkit.path("cublas"))
    report = cudatrace_cmd.report(build_dir, completed.run_dir / "trace.pftrace.zst")
    assert report["findings"] == []


def test_trace_closes_with_the_whole_inventory(trace_run, build_dir):
    completed, trace, _ = trace_run("load_libs", toolkit.path("cublas"))
    loads = sorted((i for i in trace.instants if i["name"] == "cuda.library"),
                   key=lambda i: i["args"]["order"])
    (inventory,) = [i for i in trace.instants if i["name"] == "cuda.library.inventory"]
    assert inventory["args"]["count"] == len(loads) == 3
    assert inventory["args"]["libraries"].splitlines() == [i["args"]["realpath"] for i in loads]
    (end,) = [i for i in trace.instants if i["name"] == "cudatrace.end"]
    assert inventory["ts"] == end["ts"]


@pytest.mark.parametrize("other_major", [True, False])
def test_cudnn_built_for_another_cuda_major(trace_run, build_dir, other_major):
    # The toolkit's cuDNN names its CUDA major in its RUNPATH ($ORIGIN/../../cu13/lib);
    # the double plays a runtime (and driver) of another CUDA major, or of the toolkit's.
    major = toolkit.RUNTIME_VERSION // 1000
    other = 11080 if major == 12 else 12040
    runtime = other if other_major else toolkit.RUNTIME_VERSION
    expected = ["version-mismatch"] if other_major else []
    completed, _, _ = trace_run("load_libs", toolkit.path("cudnn_ops"),
                                env={"CT_DOUBLE_RUNTIME_VERSION": runtime,
                                     "CT_DOUBLE_DRIVER_VERSION": runtime})
    findings = cudatrace_cmd.report(build_dir, completed.run_dir / "trace.pftrace.zst")["findings"]
    assert sorted({f["id"] for f in findings}) == expected
    if expected:
        # libcudnn_ops and the libcudnn_graph it needs, each built for the toolkit's CUDA.
        assert sorted(f["evidence"]["libraries"][0]["family"] for f in findings) == [
            "cudnn_graph", "cudnn_ops"]
        shown = f"{other // 1000}.{other % 1000 // 10}"
        assert all(f"built for CUDA {major}" in f["message"] and f"CUDA {shown}" in f["message"]
                   for f in findings)
