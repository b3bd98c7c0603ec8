"""`cudatrace doctor`: loads the CUDA stack as a framework would, under the
tracer, and explains it. Without a driver (the development and CI machines:
toolkit, no GPU) it must name the missing driver, and with one it must not;
with the CPU double as the runtime it must find nothing wrong; with the
toolkit's stub reached as libcuda.so.1 it must say stub-driver. The exit
status follows error findings."""
import ctypes
import json
import os

import pytest

import cudatrace_cmd
import toolkit

STUB = os.path.join(toolkit.LIB, "stubs", "libcuda.so")
DEVICE_NODES = ("/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia-uvm")


def machine_has_libcuda():
    """Whether the driver's library loads here, asked without the tracer."""
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


def doctor(build_dir, *args, library_path=None, extra_env=None, **options):
    """cudatrace_cmd.run of `doctor ARGS` with LD_LIBRARY_PATH=library_path (none if None)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CUDATRACE_", "CT_DOUBLE")) and k not in ("LD_PRELOAD",
                                                                          "LD_LIBRARY_PATH")}
    if library_path:
        env["LD_LIBRARY_PATH"] = library_path
    env.update(extra_env or {})
    return cudatrace_cmd.run(build_dir, "doctor", *args, env=env, timeout=120, **options)


def test_the_driver_verdict_matches_the_machine(build_dir):
    done = doctor(build_dir, "--json", status=None)
    report = json.loads(done.stdout)
    loads = {l["name"]: l for l in report["doctor"]["loads"]}
    (runtime,) = [l for l in report["doctor"]["loads"]
                  if l["name"].startswith("libcudart.so.") and l["path"]]
    assert os.path.realpath(runtime["path"]).startswith(toolkit.LIB)
    assert (report["doctor"]["kernel_driver"] is None) == (
        not os.path.exists("/proc/driver/nvidia/version"))
    assert report["doctor"]["device_nodes"] == {n: int(os.path.exists(n)) for n in DEVICE_NODES}
    families = {lib["family"] for lib in report["processes"][0]["libraries"]}
    ids = [f["id"] for f in report["findings"]]
    if machine_has_libcuda():
        assert "driver-missing" not in ids and loads["libcuda.so.1"]["path"]
        assert {"cudart", "cuda"} <= families
        return
    assert done.returncode == 1, done.stderr
    assert ids == ["driver-missing"]
    assert loads["libcuda.so.1"]["path"] is None
    assert "cannot open shared object file" in loads["libcuda.so.1"]["error"]
    assert report["doctor"]["driver"].startswith("no NVIDIA driver")
    assert "cudart" in families and "cuda" not in families
    text = doctor(build_dir, status=1)
    assert "error driver-missing" in text.stdout and "no NVIDIA driver" in text.stdout


def test_healthy_runtime_finds_nothing(build_dir):
    done = doctor(build_dir, "--json", library_path=os.path.join(build_dir, "double"))
    report = json.loads(done.stdout)
    assert report["findings"] == []
    loads = {l["name"]: l for l in report["doctor"]["loads"]}
    assert loads["libcudart.so.13"]["path"].endswith("double/libcudart.so.13")


def test_stub_reached_as_libcuda_so_1(build_dir, tmp_path):
    if not os.path.exists(STUB):
        pytest.skip(f"the toolkit has no link-time stub {STUB}")
    (tmp_path / "libcuda.so.1").symlink_to(STUB)
    done = doctor(build_dir, "--json", library_path=str(tmp_path), status=1)
    report = json.loads(done.stdout)
    assert [f["id"] for f in report["findings"]] == ["stub-driver"]
    (lib,) = report["findings"][0]["evidence"]["libraries"]
    assert lib["realpath"] == os.path.realpath(STUB)
    assert "link-time stub" in report["doctor"]["driver"]


def test_bad_usage(build_dir):
    done = doctor(build_dir, "--bogus", status=2)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == ["cudatrace: doctor: unknown option --bogus",
                                        "usage: cudatrace doctor [--json]"]


def test_the_device_view_from_nvml(build_dir, tmp_path):
    """With NVML there (the double, scripted), the doctor's probe is sampled like any traced
    program: the device's modes, link, limits and other processes are shown, and what is
    wrong with them is a finding; without NVML, the report says it is absent."""
    script = tmp_path / "nvml"
    script.write_text("0 - driver 575.57.08\n0 0 compute_mode 3\n0 0 pcie_gen 4\n"
                      "0 0 persistence 0\n0 0 process 1 5242880\n")
    library_path = os.path.join(build_dir, "double") + ":" + os.path.join(build_dir, "nvml")
    scripted = {"CT_DOUBLE_NVML_SCRIPT": str(script)}
    text = doctor(build_dir, library_path=library_path, extra_env=scripted, status=None)
    done = doctor(build_dir, "--json", library_path=library_path, extra_env=scripted,
                  status=None)
    assert "NVML driver 575.57.08; compute mode exclusive process, persistence off; " \
           "PCIe Gen4 x16 (max Gen5 x16); other processes: pid 1" in text.stdout
    assert "/dev/nvidia-uvm" in text.stdout
    report = json.loads(done.stdout)
    ids = {f["id"] for f in report["findings"]}
    assert {"compute-mode", "gpu-shared"} <= ids
    device, = report["processes"][0]["gpu_health"]
    assert (device["compute_mode"], device["persistence"], device["default_power_limit_mw"]) == (
        3, 0, 700000)
    absent = json.loads(doctor(build_dir, "--json", library_path=os.path.join(build_dir, "double"),
                               status=None).stdout)
    assert absent["processes"][0]["nvml"]["state"] == "absent"
