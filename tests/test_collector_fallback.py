"""fallback-resolution: a framework's library asks for cuDNN
through its DT_RPATH $ORIGIN/../../nvidia/cudnn/lib, that pip directory
does not hold it (the nvidia-cudnn wheel is missing), and the loader falls
back to the toolkit's cuDNN through ld.so.cache. Built from real files: a
small library standing in for libtorch_cuda.so in a pip-like tree, its
wheel's METADATA and RECORD, and the toolkit's real libcudnn.so.9, loaded
from Python through ctypes under a bare LD_PRELOAD."""
import os
import shutil
import subprocess
import sys

import pytest

import cudatrace_cmd
import toolkit

PIN = "9.26.0.51"


def toolkit_cudnn_version():
    header = os.path.join(os.path.dirname(toolkit.LIB), "include", "cudnn_version.h")
    parts = {}
    for line in open(header):
        fields = line.split()
        if len(fields) == 3 and fields[0] == "#define" and fields[1] in (
                "CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL"):
            parts[fields[1]] = fields[2]
    return f"{parts['CUDNN_MAJOR']}.{parts['CUDNN_MINOR']}.{parts['CUDNN_PATCHLEVEL']}"


def pip_tree(tmp_path, wheel, pinned=True):
    """site-packages/torch/lib/libtorch_cuda.so (DT_RPATH to the nvidia-cudnn
    wheel's directory, DT_NEEDED libcudnn.so.9) and torch's dist-info; the
    wheel's directory is missing, empty, or holds cuDNN."""
    site = tmp_path / "site-packages"
    lib = site / "torch" / "lib"
    lib.mkdir(parents=True)
    source = tmp_path / "torch_cuda.c"
    source.write_text("int torch_cuda_marker(void) { return 1; }\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(lib / "libtorch_cuda.so"), str(source),
                    "-Wl,--no-as-needed", f"-L{toolkit.LIB}", f"-l:{toolkit.soname('cudnn')}",
                    "-Wl,--disable-new-dtags", "-Wl,-rpath,$ORIGIN/../../nvidia/cudnn/lib"],
                   check=True)
    dist = site / "torch-2.9.0.dist-info"
    dist.mkdir()
    requires = f"Requires-Dist: nvidia-cudnn-cu13=={PIN}; platform_system == \"Linux\"\n"
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.9.0\n" +
                                   (requires if pinned else ""))
    (dist / "RECORD").write_text("torch/__init__.py,sha256=x,1\n"
                                 "torch/lib/libtorch_cuda.so,sha256=y,2\n")
    cudnn = site / "nvidia" / "cudnn" / "lib"
    if wheel != "missing":
        cudnn.mkdir(parents=True)
    if wheel == "present":
        shutil.copy(toolkit.path("cudnn"), cudnn)
    return lib / "libtorch_cuda.so", cudnn


SCRIPT = """import ctypes, sys
ctypes.CDLL(sys.argv[1])
for line in sorted(set(l.split()[-1] for l in open("/proc/self/maps") if "libcudnn" in l)):
    print("mapped", line)
"""


def run(trace_run, build_dir, library):
    completed, _, _ = trace_run(sys.executable, "-c", SCRIPT, library, double=False)
    untraced, _, _ = trace_run(sys.executable, "-c", SCRIPT, library, double=False,
                               preload=False)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == untraced.stdout  # the same files mapped
    return completed, cudatrace_cmd.report(build_dir, completed.run_dir / "trace.pftrace.zst")


@pytest.mark.parametrize("wheel", ["missing", "empty"])
def test_cudnn_from_the_toolkit_instead_of_the_wheel(trace_run, build_dir, tmp_path, wheel):
    library, expected = pip_tree(tmp_path, wheel)
    completed, report = run(trace_run, build_dir, library)
    assert f"mapped {toolkit.path('cudnn')}" in completed.stdout
    (finding,) = report["findings"]
    assert (finding["id"], finding["severity"]) == ("fallback-resolution", "error")
    (lib,) = finding["evidence"]["libraries"]
    assert (lib["requested_as"], lib["requested_by"], lib["found_via"]) == (
        toolkit.cached(toolkit.soname("cudnn")), str(library), "ld.so.cache")
    assert lib["expected_dirs"] == str(expected)
    assert lib["realpath"] == toolkit.path("cudnn")
    version = toolkit_cudnn_version()
    assert lib["version"] == version
    assert (lib["expected_version"], lib["expected_by"]) == (PIN, "torch 2.9.0")
    message = finding["message"]
    for part in (str(library), str(expected), "ld.so.cache", f"version {version}",
                 f"nvidia-cudnn-cu13=={PIN}", "torch 2.9.0", "pip install --force-reinstall"):
        assert part in message


def test_without_a_pin_it_is_a_warning(trace_run, build_dir, tmp_path):
    library, expected = pip_tree(tmp_path, "missing", pinned=False)
    _, report = run(trace_run, build_dir, library)
    (finding,) = report["findings"]
    assert (finding["id"], finding["severity"]) == ("fallback-resolution", "warning")
    assert "built against" not in finding["message"]
    assert str(expected) in finding["message"]


def test_healthy_twin_the_wheel_is_there(trace_run, build_dir, tmp_path):
    library, expected = pip_tree(tmp_path, "present")
    completed, report = run(trace_run, build_dir, library)
    assert f"mapped {expected}/{toolkit.soname('cudnn')}" in completed.stdout
    assert report["findings"] == []
    (cudnn,) = [lib for lib in report["processes"][0]["libraries"] if lib["family"] == "cudnn"]
    assert cudnn["found_via"] == "DT_RPATH" and "expected_dirs" not in cudnn


def test_healthy_twin_a_program_without_rpath(trace_run, build_dir):
    """The toolkit's cuDNN through ld.so.cache, asked for by a program that
    names no directory of its own: nothing was expected elsewhere."""
    completed, _, _ = trace_run("dlopen_only", toolkit.cached(toolkit.soname("cudnn")), double=False)
    report = cudatrace_cmd.report(build_dir, completed.run_dir / "trace.pftrace.zst")
    (cudnn,) = [lib for lib in report["processes"][0]["libraries"] if lib["family"] == "cudnn"]
    assert cudnn["found_via"] == "ld.so.cache"
    assert report["findings"] == []


def test_the_audit_module_sees_the_same(build_dir, tmp_path):
    library, expected = pip_tree(tmp_path, "missing")
    trace = tmp_path / "trace.pftrace.zst"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CUDATRACE_", "CT_DOUBLE")) and k not in ("LD_PRELOAD",
                                                                          "LD_AUDIT")}
    cudatrace_cmd.run(build_dir, "run", "-q", "-o", trace, "--", sys.executable, "-c", SCRIPT,
                      library, env=env)
    (finding,) = cudatrace_cmd.report(build_dir, trace)["findings"]
    assert finding["id"] == "fallback-resolution"
    (lib,) = finding["evidence"]["libraries"]
    assert (lib["seen_by"], lib["expected_dirs"]) == ("audit", str(expected))
