"""`cudatrace doctor`: loads the CUDA stack as a framework would, under the
tracer, and explains it. On this machine (toolkit, no driver, no GPU) it must
name the missing driver; with the CPU double as the runtime it must find
nothing wrong; with the toolkit's stub reached as libcuda.so.1 it must say
stub-driver. The exit status follows error findings."""
import json
import os
import subprocess

STUB = "/usr/local/cuda/lib64/stubs/libcuda.so"


def doctor(build_dir, *args, library_path=None):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CUDATRACE_", "CT_DOUBLE")) and k not in ("LD_PRELOAD",
                                                                          "LD_LIBRARY_PATH")}
    if library_path:
        env["LD_LIBRARY_PATH"] = library_path
    return subprocess.run([os.path.join(build_dir, "cudatrace"), "doctor", *args], env=env,
                          capture_output=True, text=True, timeout=120)


def test_no_driver_is_named(build_dir):
    done = doctor(build_dir, "--json")
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert [f["id"] for f in report["findings"]] == ["driver-missing"]
    loads = {l["name"]: l for l in report["doctor"]["loads"]}
    assert loads["libcuda.so.1"]["path"] is None
    assert "cannot open shared object file" in loads["libcuda.so.1"]["error"]
    assert os.path.realpath(loads["libcudart.so.13"]["path"]).startswith("/usr/local/cuda")
    assert report["doctor"]["kernel_driver"] is None
    assert report["doctor"]["device_nodes"] == {"/dev/nvidiactl": 0, "/dev/nvidia0": 0,
                                               "/dev/nvidia-uvm": 0}
    assert report["doctor"]["driver"].startswith("no NVIDIA driver")
    families = {lib["family"] for lib in report["processes"][0]["libraries"]}
    assert "cudart" in families and "cuda" not in families
    text = doctor(build_dir)
    assert text.returncode == 1
    assert "error driver-missing" in text.stdout and "no NVIDIA driver" in text.stdout


def test_healthy_runtime_finds_nothing(build_dir):
    done = doctor(build_dir, "--json", library_path=os.path.join(build_dir, "double"))
    assert done.returncode == 0, done.stdout
    report = json.loads(done.stdout)
    assert report["findings"] == []
    loads = {l["name"]: l for l in report["doctor"]["loads"]}
    assert loads["libcudart.so.13"]["path"].endswith("double/libcudart.so.13")


def test_stub_reached_as_libcuda_so_1(build_dir, tmp_path):
    (tmp_path / "libcuda.so.1").symlink_to(STUB)
    done = doctor(build_dir, "--json", library_path=str(tmp_path))
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert [f["id"] for f in report["findings"]] == ["stub-driver"]
    (lib,) = report["findings"][0]["evidence"]["libraries"]
    assert lib["realpath"] == os.path.realpath(STUB)
    assert "link-time stub" in report["doctor"]["driver"]


def test_bad_usage(build_dir):
    done = doctor(build_dir, "--bogus")
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1
