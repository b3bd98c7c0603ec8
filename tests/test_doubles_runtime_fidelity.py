"""The CPU double of libcudart (tests/doubles/runtime/) against the real toolkit runtime it stands
in for, so that a test passing on the double says something about the real one.

This file owns the double's fidelity: its export list against `nm -D` of the toolkit's
libcudart.so.13 (no name the real one lacks, so the preload never takes a path only the double
offers, and every _ptsz/_ptds twin of what it implements); cudaGetErrorName and
cudaGetErrorString for every code the double names; and a driver too old, where every call
must be refused before it has any effect (tests/programs/too_old_effects.c), checked against
the double's own counts and against the real runtime on a machine without a usable driver.

Fixtures (trace_run, build_dir) are in conftest.py; the toolkit is tests/toolkit.py's.
"""

import ctypes
import os
import re
import subprocess

import pytest

import toolkit

REAL_RUNTIME = os.path.join(toolkit.LIB, "libcudart.so.13")
DOUBLE_SOURCE = os.path.join(os.path.dirname(__file__), "doubles", "runtime", "cudart_double.c")
VARIANT = re.compile(r"(\w+)_(ptsz|ptds)")
TOO_OLD = {"CT_DOUBLE_DRIVER_VERSION": 12040}  # the double's runtime is 13000
CUDA_ERROR_INSUFFICIENT_DRIVER = 35
CUDA_ERROR_STUB_LIBRARY = 34
CUDA_ERROR_NO_KERNEL_IMAGE = 209


def exports(path):
    """The names a library's dynamic symbol table defines, without their version."""
    out = subprocess.run(["nm", "-D", "--defined-only", path], check=True, capture_output=True,
                         text=True).stdout
    return {line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()}


def runtime(path):
    lib = ctypes.CDLL(path)
    for getter in (lib.cudaGetErrorName, lib.cudaGetErrorString):
        getter.restype = ctypes.c_char_p
        getter.argtypes = [ctypes.c_int]
    return lib


# --------------------------------------------------------------------------
# 1. The export list


def test_the_double_exports_only_what_the_real_runtime_does(build_dir):
    assert os.path.exists(REAL_RUNTIME), f"the toolkit has no {REAL_RUNTIME}"
    real = exports(REAL_RUNTIME)
    double = exports(os.path.join(build_dir, "double", "libcudart.so.13"))
    assert sorted(double - real) == []
    # Every per-thread-stream twin the real runtime has of a function the double implements.
    twins = {name for name in real if (m := VARIANT.fullmatch(name)) and m.group(1) in double}
    assert sorted(twins - double) == []
    assert {"cudaLaunchKernel_ptsz", "cudaMemcpy_ptds", "__cudaLaunchKernel_ptsz"} <= twins


# --------------------------------------------------------------------------
# 2. Error names and descriptions


def codes_the_double_names():
    """{value: name} of every cudaError_t enumerator the double's source mentions: the codes
    it returns and the ones its table describes."""
    with open(os.path.join(toolkit.HOME, "include", "driver_types.h")) as f:
        values = dict(re.findall(r"^\s*(cuda(?:Success|Error\w+))\s*=\s*(\d+)", f.read(), re.M))
    with open(DOUBLE_SOURCE) as f:
        named = set(re.findall(r"\bcuda(?:Success|Error[A-Z]\w*)\b", f.read()))
    return {int(values[name]): name for name in named}


def test_error_names_and_strings_match_the_real_runtime(build_dir):
    codes = codes_the_double_names()
    assert {CUDA_ERROR_STUB_LIBRARY, CUDA_ERROR_INSUFFICIENT_DRIVER,
            CUDA_ERROR_NO_KERNEL_IMAGE} <= set(codes)
    real = runtime(REAL_RUNTIME)
    double = runtime(os.path.join(build_dir, "double", "libcudart.so.13"))
    answers = {lib: {code: (lib.cudaGetErrorName(code).decode(),
                            lib.cudaGetErrorString(code).decode()) for code in codes}
               for lib in (real, double)}
    assert answers[double] == answers[real]
    assert {code: name for code, (name, _) in answers[double].items()} == codes


# --------------------------------------------------------------------------
# 3. A driver too old refuses before any effect


def printed(stdout):
    """[(name, result, what became of its output or None)] of too_old_effects' call lines."""
    calls = []
    for line in filter(lambda line: " -> " in line, stdout.splitlines()):
        name, rest = line.split(" -> ")
        result, _, state = rest.partition(" ")
        calls.append((name, int(result), state or None))
    return calls


def test_a_driver_too_old_refuses_every_call_before_its_effects(trace_run):
    proc, _, truth = trace_run("too_old_effects", env=TOO_OLD, preload=False)
    assert proc.returncode == 0, proc.stderr
    calls = printed(proc.stdout)
    assert len(calls) == 48
    assert {result for _, result, _ in calls} == {CUDA_ERROR_INSUFFICIENT_DRIVER}
    # The handle a refused __cudaGetKernel hands back is the host function, as on the real
    # runtime; every other output and destination buffer is as the program left it.
    states = {name: state for name, _, state in calls if state}
    assert states.pop("__cudaGetKernel") == "host function"
    assert set(states.values()) == {"untouched"} and len(states) == 23
    assert "cudaMallocPitch pitch untouched" in proc.stdout.splitlines()

    assert {name: n for name, n in truth["calls"].items() if n} == {
        name: 1 for name, _, _ in calls}
    assert truth["errors"] == truth["calls"]
    assert (truth["alloc_bytes"], truth["peak_device_bytes"], truth["final_device_bytes"],
            truth["peak_pinned_bytes"], truth["launches"]) == (0, 0, 0, 0, 0)


def real_runtime_has_no_usable_driver():
    """Whether the toolkit's runtime finds no driver, or one older than itself, here."""
    lib = ctypes.CDLL(REAL_RUNTIME)
    driver, own = ctypes.c_int(0), ctypes.c_int(0)
    lib.cudaDriverGetVersion(ctypes.byref(driver))
    lib.cudaRuntimeGetVersion(ctypes.byref(own))
    return driver.value < own.value


def test_a_driver_too_old_leaves_what_the_real_runtime_leaves(trace_run):
    if not real_runtime_has_no_usable_driver():
        pytest.skip("the real runtime has a usable driver here, so it refuses nothing")
    double, _, _ = trace_run("too_old_effects", env=TOO_OLD, preload=False)
    real, _, _ = trace_run("too_old_effects", env={"LD_LIBRARY_PATH": toolkit.LIB},
                           double=False, preload=False)
    assert real.returncode == double.returncode == 0
    assert double.stdout == real.stdout


def test_the_healthy_twin_has_every_effect(trace_run):
    # With a driver, the same program sees every output written (so "untouched" above is the
    # refusal's doing) and a kernel handle that is the double's own, not the host function.
    proc, _, truth = trace_run("too_old_effects", preload=False)
    assert proc.returncode == 0, proc.stderr
    calls = printed(proc.stdout)
    assert {state for _, _, state in calls if state} == {"written"}
    assert "cudaMallocPitch pitch written" in proc.stdout.splitlines()
    # Only the calls given NULL handles fail.
    assert {name for name, result, _ in calls if result} == {
        "cudaGraphLaunch", "cudaGraphLaunch_ptsz", "cudaStreamWaitEvent",
        "cudaStreamWaitEvent_ptsz", "cudaEventQuery", "cudaEventSynchronize"}
    # Four 64-byte device allocations and two pitched rows of 512; two pinned ones.
    assert (truth["alloc_bytes"], truth["peak_pinned_bytes"], truth["launches"]) == (
        4 * 64 + 2 * 512, 2 * 64, 8)
