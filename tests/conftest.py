"""Shared pytest setup for tests/.

Each part of the test suite keeps its fixtures in its own marked section below.
"""

import gzip
import json
import os
import re
import subprocess
import sys

import pytest

# tests/ holds helper modules (perfetto_check) that the tests import.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


# ==========================================================================
# perfetto_check fixtures (tests/perfetto_check.py): writing small traces
# ==========================================================================


def encode_trace(packets, compress=None):
    """Serialize TracePackets (or raw Trace bytes) as a file's bytes.

    compress: None (plain protobuf), "gzip", or "zstd" (two frames, to cover
    readers that would stop after the first).
    """
    from perfetto_check import pb

    data = packets if isinstance(packets, bytes) else pb.Trace(packet=packets).SerializeToString()
    if compress == "gzip":
        return gzip.compress(data)
    if compress == "zstd":
        import zstandard

        c = zstandard.ZstdCompressor()
        half = len(data) // 2
        return c.compress(data[:half]) + c.compress(data[half:])
    assert compress is None, compress
    return data


@pytest.fixture
def write_trace(tmp_path):
    """write_trace(packets_or_bytes, compress=None) -> path of a new trace file."""
    count = [0]

    def write(packets, compress=None):
        count[0] += 1
        path = tmp_path / f"trace{count[0]}.pftrace"
        path.write_bytes(encode_trace(packets, compress))
        return path

    return write


# ==========================================================================
# (end of perfetto_check fixtures)
# ==========================================================================


# ==========================================================================
# build fixtures: running the built tracer on the built test programs
#
# Nothing here builds anything: the tests run what `make all test-programs`
# produced, and fail (never skip) when it is missing.
# ==========================================================================

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN_TIMEOUT_S = 60
# The variables that steer the tracer or the double; a run starts with none of
# them from the developer's shell, so only what a test sets is in effect.
_STEERING_PREFIXES = ("CUDATRACE_", "CT_DOUBLE_")
_STEERING_VARS = ("LD_PRELOAD", "LD_LIBRARY_PATH")
# The collector's host sampler (CUDATRACE_SAMPLE_HZ, default 100) adds tracks, slices
# and, on a busy thread, host findings to every trace. The tests of other parts hold
# their traces and reports to exact contents, so they run with it off; the host tests
# (test_report_host.py) and the bench turn it on. CUDATRACE_TEST_SAMPLE_HZ=100 runs
# the whole suite with it on, to see what it touches.
SAMPLE_HZ = os.environ.get("CUDATRACE_TEST_SAMPLE_HZ", "0")
os.environ.setdefault("CUDATRACE_SAMPLE_HZ", SAMPLE_HZ)  # for tests that start programs directly


@pytest.fixture(scope="session")
def repo_root():
    return REPO_ROOT


@pytest.fixture(scope="session")
def build_dir(repo_root):
    """build/, checked to hold the preload, the collector, the double and the programs."""
    # `make test BUILD=dir` (e.g. a sanitizer build) tests that build instead.
    build = os.path.join(repo_root, os.environ.get("CUDATRACE_TEST_BUILD", "build"))
    needed = ["libcudatrace.so", "cudatrace-collector", "double/libcudart.so.13",
              "tests/api_mix", "tests/driverless", "tests/launch_loop", "tests/leak_loop",
              "tests/threads", "examples/train_loop"]
    missing = [n for n in needed if not os.path.exists(os.path.join(build, n))]
    if missing:
        pytest.fail(f"missing in {build}: {', '.join(missing)}; "
                    f"run `make all test-programs` first", pytrace=False)
    return build


@pytest.fixture(scope="session")
def hooked_functions(repo_root):
    """{name: family} of every function the tracer interposes, from the X(...) lines of
    include/cudatrace/functions.h, in their order there: the runtime's (the driver's cu*
    functions at the end of the list are recorded through CUPTI, not hooked)."""
    path = os.path.join(repo_root, "include", "cudatrace", "functions.h")
    with open(path) as f:
        text = f.read()
    found = re.findall(r"^\s*X\((\w+),\s*(CT_FAMILY_\w+),\s*[01]\)", text, re.M)
    assert found, f"no X(name, family, stream) lines in {path}"
    return {name: family for name, family in found if not re.match(r"cu[A-Z]", name)}


def program_path(build, program):
    """An absolute path, or the name of a program in build/tests or build/examples."""
    if os.path.isabs(program):
        return program
    for folder in ("tests", "examples"):
        path = os.path.join(build, folder, program)
        if os.path.exists(path):
            return path
    raise FileNotFoundError(f"no program {program!r} in {build}/tests or {build}/examples")


@pytest.fixture(scope="session")
def trace_vocabulary(build_dir):
    """The trace vocabulary (tests/trace_vocabulary.py), checked against its own rules."""
    import trace_vocabulary as tv

    vocab = tv.Vocabulary.load(build_dir)
    tv.validate_list(vocab)
    return vocab


@pytest.fixture
def trace_run(build_dir, tmp_path, trace_vocabulary):
    """trace_run(program, *args, env=None, double=True, preload=True)
    -> (completed process, Trace or None, truth dict or None).

    Each call runs in a fresh folder R = tmp_path/run<N>, with the working
    directory R/cwd (empty at start), CUDATRACE_OUTPUT=R/trace.pftrace.zst and,
    with double=True, CT_DOUBLE_STATS=R/truth.json and LD_LIBRARY_PATH selecting
    the CPU double (double=False leaves the real runtime to ld.so.cache).
    env entries are added last; a value of None removes the variable.

    The completed process has .pid and .run_dir besides the usual fields.
    The Trace is loaded (and checked, as perfetto_check.load does, and against the
    trace vocabulary, as trace_vocabulary.check does) from
    R/trace.pftrace.zst only when the test left CUDATRACE_OUTPUT to the fixture
    and preload=True; then a missing trace fails the test. The truth is the
    double's statistics, and must exist when double=True.
    """
    import perfetto_check
    from trace_vocabulary import check as check_vocabulary

    count = [0]

    def run(program, *args, env=None, double=True, preload=True):
        count[0] += 1
        run_dir = tmp_path / f"run{count[0]}"
        cwd = run_dir / "cwd"
        cwd.mkdir(parents=True)
        trace_path = run_dir / "trace.pftrace.zst"
        truth_path = run_dir / "truth.json"

        full_env = {k: v for k, v in os.environ.items()
                    if not k.startswith(_STEERING_PREFIXES) and k not in _STEERING_VARS}
        full_env["CUDATRACE_OUTPUT"] = str(trace_path)
        full_env["CUDATRACE_SAMPLE_HZ"] = SAMPLE_HZ
        if double:
            full_env["LD_LIBRARY_PATH"] = os.path.join(build_dir, "double")
            full_env["CT_DOUBLE_STATS"] = str(truth_path)
        if preload:
            full_env["LD_PRELOAD"] = os.path.join(build_dir, "libcudatrace.so")
        for name, value in (env or {}).items():
            if value is None:
                full_env.pop(name, None)
            else:
                full_env[name] = str(value)

        argv = [program_path(build_dir, program), *map(str, args)]
        proc = subprocess.Popen(argv, cwd=cwd, env=full_env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            stdout, stderr = proc.communicate(timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, stderr = proc.communicate()
            pytest.fail(f"{' '.join(argv)} ran over {RUN_TIMEOUT_S} s; stderr:\n{stderr}")
        completed = subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)
        completed.pid = proc.pid
        completed.run_dir = run_dir

        trace = None
        output_is_ours = "CUDATRACE_OUTPUT" not in (env or {})
        if preload and output_is_ours:
            assert trace_path.exists(), (
                f"{' '.join(argv)} (status {proc.returncode}) wrote no trace; stderr:\n{stderr}")
            trace = perfetto_check.load(trace_path)
            check_vocabulary(trace, trace_vocabulary)
        truth = None
        if double:
            assert truth_path.exists(), (
                f"{' '.join(argv)} (status {proc.returncode}) left no CT_DOUBLE_STATS file; "
                f"stderr:\n{stderr}")
            with open(truth_path) as f:
                truth = json.load(f)
        return completed, trace, truth

    return run


@pytest.fixture
def program_truth(trace_run):
    """program_truth(program, *args, env=None) -> the double's statistics of an untraced run.

    A traced run's statistics also count the queries the preload makes on its own account
    (versions, device count and names, the last error), which it does not trace; an untraced
    run of the same deterministic program counts only the program's own calls.
    """

    def run(program, *args, env=None):
        return trace_run(program, *args, env=env, preload=False)[2]

    return run


@pytest.fixture
def program_calls(program_truth, hooked_functions):
    """program_calls(program, *args, env=None) -> {hooked function: calls} of an untraced
    run, for every hooked function it called: what a trace of it must hold, exactly."""

    def run(program, *args, env=None):
        truth = program_truth(program, *args, env=env)["calls"]
        return {name: truth[name] for name in hooked_functions if truth.get(name)}

    return run


@pytest.fixture
def runpath_layout(build_dir, tmp_path):
    """(own, other): a library with RUNPATH $ORIGIN (librunpath_user.so, which
    dlopens libcudnn.so.9 by bare name) and its own libcudnn.so.9 beside it in
    tmp_path/lib, and a second copy of that libcudnn in tmp_path/other (real
    toolkit cuDNN files)."""
    import shutil

    import toolkit

    if toolkit.soname("cudnn") != "libcudnn.so.9":
        pytest.skip("librunpath_user.so asks for libcudnn.so.9, which this toolkit lacks")
    own, other = tmp_path / "lib", tmp_path / "other"
    own.mkdir()
    other.mkdir()
    for d in (own, other):
        shutil.copy(toolkit.path("cudnn"), d)
    shutil.copy(os.path.join(build_dir, "tests", "librunpath_user.so"), own)
    return own, other


# ==========================================================================
# (end of build fixtures)
# ==========================================================================


# ==========================================================================
# finding coverage: which tests make which findings fire, and which are their
# healthy twins (tests/test_findings_declared.py holds every finding of
# viewer-export/findings/finding_list.h to having both)
# ==========================================================================


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "finding(*ids): the test makes these findings fire and checks what they say")
    config.addinivalue_line(
        "markers", "twin(*ids): the test is a healthy twin of these findings: it differs in the "
        "fact their rule turns on, and checks that they do not fire")


# ==========================================================================
# (end of finding coverage)
# ==========================================================================
