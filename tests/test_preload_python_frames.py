"""preload/sites/python_frames.c reads the calling thread's Python stack without the GIL.

The probe library (tests/probe/python_frames_probe.c, built with the preload's
flags around the same source) is called through ctypes by
tests/python/frames_script.py from many kinds of frame, under every
interpreter the machine has; what it reads must be exactly what Python itself
reports: file, line and function of each frame, innermost first. The same
probe built as a program shows that a process without Python reads nothing,
and that Python loaded later by an embedding program is still found.
"""
import glob
import json
import os
import subprocess
import sys

import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(REPO_ROOT, "tests", "python", "frames_script.py")
TIMEOUT_S = 60

PYENV_ROOT = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
INTERPRETERS = [(f"pyenv-3.{minor}",
                 os.path.join(PYENV_ROOT, "versions", f"3.{minor}.*", "bin", "python3"))
                for minor in range(9, 14)]
INTERPRETERS += [("usr-bin", "/usr/bin/python3"), ("sys-executable", sys.executable)]


def interpreter(pattern):
    found = sorted(glob.glob(pattern))
    if not found:
        pytest.skip(f"no interpreter at {pattern}")
    return found[-1]


@pytest.fixture(scope="module")
def built():
    """(probe library, embedding program), which `make test-programs` builds."""
    build = os.path.join(REPO_ROOT, os.environ.get("CUDATRACE_TEST_BUILD", "build"))
    paths = (os.path.join(build, "tests", "libpython_frames_probe.so"),
             os.path.join(build, "tests", "python_frames_embed"))
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        pytest.fail(f"missing {', '.join(missing)}; run `make test-programs` first", pytrace=False)
    return paths


def clean_env():
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("PYTHON", "CUDATRACE_")) and k != "LD_PRELOAD"}


@pytest.mark.parametrize("pattern", [p for _, p in INTERPRETERS],
                         ids=[name for name, _ in INTERPRETERS])
def test_frames_match_what_python_reports(built, pattern):
    python = interpreter(pattern)
    run = subprocess.run([python, SCRIPT, built[0]], capture_output=True, text=True,
                         env=clean_env(), timeout=TIMEOUT_S)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert len(report["results"]) == 20, report["results"]
    for r in report["results"]:
        where = f"{python} ({report['version'].split()[0]}), {r['flavour']}, {r['case']}"
        assert r["innermost"] == r["function"], f"{where}: the case did not run as meant"
        want = [f"{file}:{line}:{function}" for file, line, function in r["want"]]
        assert len(want) >= 3, where
        assert r["got"] == want, where
        assert r["count"] == len(want), where


@pytest.mark.parametrize("pattern", [p for _, p in INTERPRETERS],
                         ids=[name for name, _ in INTERPRETERS])
def test_python_loaded_late_is_found(built, pattern):
    """An embedding program: no Python at first (the probe reads nothing, many
    times over), then libpython dlopen'ed and initialised."""
    python = interpreter(pattern)
    paths = subprocess.run(
        [python, "-c", "import sys, sysconfig; v = sysconfig.get_config_var; "
         "print(v('Py_ENABLE_SHARED'), v('LIBDIR'), v('LDLIBRARY'), sys.base_prefix)"],
        capture_output=True, text=True, check=True, env=clean_env(), timeout=TIMEOUT_S)
    shared, libdir, ldlibrary, prefix = paths.stdout.split()
    libpython = os.path.join(libdir, ldlibrary)
    if shared != "1" or not os.path.exists(libpython):
        pytest.skip(f"{python} has no shared libpython to embed")
    source = "\n".join([
        "import ctypes",
        "probe = ctypes.CDLL(None).ct_probe_python_frames",
        "buf = ctypes.create_string_buffer(4096)",
        "def embedded():",
        "    for _ in range(4096):",
        "        if probe(buf, len(buf)):",
        "            return",
        "embedded()",
        "print(buf.value.decode(), end='')",
    ])
    run = subprocess.run([built[1], libpython, source], capture_output=True, text=True,
                         env={**clean_env(), "PYTHONHOME": prefix}, timeout=TIMEOUT_S)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["frames without Python: 0", "<string>:6:embedded",
                                       "<string>:8:<module>"]


def test_no_python_reads_nothing(built):
    run = subprocess.run([built[1]], capture_output=True, text=True, env=clean_env(),
                         timeout=TIMEOUT_S)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "frames without Python: 0\n"
