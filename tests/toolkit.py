"""The CUDA toolkit the tests run against, found rather than assumed.

$CUDA_HOME (default /usr/local/cuda) names it; its version comes from its
version.json, else from the CUDART_VERSION its headers define; each library
is whatever libNAME.so.MAJOR file its lib directory holds. A test that needs
a piece the toolkit lacks (cuDNN, NCCL, an ld.so.cache entry for it) skips
with the reason, instead of failing on a machine set up differently.
"""
import functools
import glob
import json
import os
import re
import subprocess

import pytest

HOME = os.environ.get("CUDA_HOME", "/usr/local/cuda")
LIB = os.path.realpath(os.path.join(HOME, "lib64") if os.path.isdir(os.path.join(HOME, "lib64"))
                       else os.path.join(HOME, "lib"))


def _runtime_version_define():
    with open(os.path.join(HOME, "include", "cuda_runtime_api.h")) as f:
        return int(re.search(r"#define CUDART_VERSION\s+(\d+)", f.read()).group(1))


def _version():
    try:
        with open(os.path.join(HOME, "version.json")) as f:
            full = json.load(f)["cuda"]["version"]
        return ".".join(full.split(".")[:2])
    except (OSError, KeyError, ValueError):
        v = _runtime_version_define()
        return f"{v // 1000}.{v % 1000 // 10}"


VERSION = _version()  # "13.0"
RUNTIME_VERSION = _runtime_version_define()  # 13000, what cudaRuntimeGetVersion reports


def soname(family):
    """The toolkit's libFAMILY.so.MAJOR ("libcublas.so.13"); skips the test
    when the toolkit has no such library."""
    found = sorted(os.path.basename(p) for p in glob.glob(os.path.join(LIB, f"lib{family}.so.*"))
                   if re.fullmatch(rf"lib{re.escape(family)}\.so\.\d+", os.path.basename(p)))
    if not found:
        pytest.skip(f"the toolkit in {LIB} has no lib{family}.so.N")
    return found[-1]


def path(family):
    return os.path.join(LIB, soname(family))


def missing(family):
    """A soname of the family that nothing on this machine provides: the
    toolkit's major minus one ("libcudnn.so.8" beside cuDNN 9)."""
    name = soname(family)
    base, major = name.rsplit(".", 1)
    return f"{base}.{int(major) - 1}"


@functools.lru_cache(maxsize=None)
def _cache():
    return subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout


def cached(name):
    """Skips the test unless ld.so.cache maps `name` into the toolkit, as
    its ld.so.conf.d entry does on a machine where the toolkit is installed
    system-wide; returns the name."""
    if not re.search(rf"^\s+{re.escape(name)} \(.*\) => {re.escape(LIB)}/", _cache(), re.M):
        pytest.skip(f"ld.so.cache has no entry for {name} in {LIB}")
    return name


def no_driver():
    """Skips the test on a machine whose NVIDIA driver library loads: it
    checks how the runtime behaves without one."""
    import ctypes

    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return
    pytest.skip("this machine has an NVIDIA driver; the test is about running without one")
