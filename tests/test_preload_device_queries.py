"""The calls that decide whether CUDA works at all: device discovery and selection, versions,
free memory, streams and events, host registration, memory pools, graph instantiation and the
last error, each traced as one slice named exactly as the function, with its result and the
annotations its family gives (include/cudatrace/functions.h).

This file owns those calls end to end: on the CPU double (tests/programs/device_queries.c,
which prints every call it makes, checked slice for slice against the trace, the double's own
count and the report's api table), on the double playing a driver too old (every refused call
leaves its outputs alone), and on the real driverless toolkit runtime under a bare LD_PRELOAD
(tests/programs/version_and_count.c: what torch.cuda.is_available() does), with its healthy
twin on the double.

Fixtures (trace_run, program_truth, build_dir, hooked_functions) are in conftest.py.
"""

import collections
import os
import re

import pytest

import cudatrace_cmd
import toolkit

DOUBLE_VERSION = 13000  # the double's runtime and driver versions unless told otherwise
DOUBLE_DEVICE_BYTES = 80 << 30  # what the double advertises without CT_DOUBLE_MEM_LIMIT
CUDA_ERROR_INSUFFICIENT_DRIVER = 35
CUDA_ERROR_NO_DEVICE = 100
CUDA_DEV_ATTR_COMPUTE_CAPABILITY_MAJOR = 75
CUDA_MEM_POOL_ATTR_RELEASE_THRESHOLD = 4
CUDA_DEVICE_SCHEDULE_BLOCKING_SYNC = 4

# device_queries.c's calls per rep, as its header comment documents.
PER_REP = {
    "cudaRuntimeGetVersion": 1, "cudaDriverGetVersion": 1, "cudaGetDeviceCount": 1,
    "cudaSetDevice": 2, "cudaGetDevice": 1, "cudaGetDeviceProperties": 1,
    "cudaDeviceGetAttribute": 1, "cudaSetDeviceFlags": 1, "cudaGetDeviceFlags": 1,
    "cudaInitDevice": 1, "cudaDeviceReset": 1, "cudaMemGetInfo": 1,
    "cudaStreamCreate": 1, "cudaStreamCreateWithFlags": 1, "cudaStreamCreateWithPriority": 1,
    "cudaStreamDestroy": 3, "cudaEventCreate": 1, "cudaEventCreateWithFlags": 1,
    "cudaEventRecord": 1, "cudaEventRecord_ptsz": 1, "cudaEventRecordWithFlags": 1,
    "cudaEventRecordWithFlags_ptsz": 1, "cudaEventDestroy": 2, "cudaEventElapsedTime": 1,
    "cudaHostRegister": 1, "cudaHostUnregister": 2,
    "cudaDeviceGetDefaultMemPool": 1, "cudaDeviceGetMemPool": 1, "cudaDeviceSetMemPool": 2,
    "cudaMemPoolCreate": 1, "cudaMemPoolDestroy": 1, "cudaMemPoolTrimTo": 1,
    "cudaMemPoolSetAttribute": 1, "cudaMemPoolGetAttribute": 1,
    "cudaMallocFromPoolAsync": 1, "cudaMallocFromPoolAsync_ptsz": 1,
    "cudaGraphInstantiate": 1, "cudaGraphInstantiateWithFlags": 1,
    "cudaGraphInstantiateWithParams": 1, "cudaGraphInstantiateWithParams_ptsz": 1,
    "cudaGraphExecDestroy": 4, "cudaGraphDestroy": 1,
    "cudaGetLastError": 3, "cudaPeekAtLastError": 2,
}


def printed_calls(stdout):
    """[(name, result)] of the "name -> result ..." lines a program printed, in order."""
    calls = []
    for line in stdout.splitlines():
        if " -> " in line:
            name, rest = line.split(" -> ")
            calls.append((name, int(rest.split()[0])))
    return calls


def printed_tally(stdout):
    """{name: calls} from device_queries' closing "calls name N" lines."""
    return {name: int(n) for _, name, n in
            (line.split() for line in stdout.splitlines() if line.startswith("calls "))}


def printed_values(stdout):
    """{name: value} from device_queries' "values name N name N ..." line (one rep)."""
    (line,) = [line.split()[1:] for line in stdout.splitlines() if line.startswith("values ")]
    return {name: int(value) for name, value in zip(line[::2], line[1::2])}


def traced_calls(trace):
    return [(s["name"], s["args"]["result"]) for s in trace.slices]


SITE_KEYS = {"site", "stack"}


def without_site(args):
    return {k: v for k, v in args.items() if k not in SITE_KEYS}


def args_of(trace, name):
    """The annotations of each slice called `name`, in order, less its call site."""
    return [without_site(s["args"]) for s in trace.slices if s["name"] == name]


# --------------------------------------------------------------------------
# 1. On the double: every call, its result, the counts, the report


def test_every_call_is_one_slice_with_its_result(trace_run, program_truth, build_dir,
                                                 hooked_functions):
    reps = 2
    proc, trace, _ = trace_run("device_queries", reps)
    assert proc.returncode == 0, proc.stderr
    assert set(PER_REP) <= set(hooked_functions)

    # Slice for slice what the program printed, in order: nothing missing, and nothing the
    # program did not call itself (the preload's own version and device queries).
    hooked = [(name, rc) for name, rc in printed_calls(proc.stdout) if name in hooked_functions]
    assert traced_calls(trace) == hooked
    tally = printed_tally(proc.stdout)
    assert {name: tally[name] for name in PER_REP} == {n: reps * k for n, k in PER_REP.items()}
    truth = program_truth("device_queries", reps)
    assert {name: truth["calls"][name] for name in PER_REP} == {n: tally[n] for n in PER_REP}

    # The report's api table: the same calls, and the non-zero results as errors.
    errors = collections.Counter(name for name, rc in hooked if rc != 0)
    api = cudatrace_cmd.report(build_dir, proc.run_dir / "trace.pftrace.zst")["processes"][0]["api"]
    assert {n: (s["calls"], s["errors"]) for n, s in api.items()} == {
        n: (tally[n], errors[n]) for n in tally if n in hooked_functions}
    assert {n: truth["errors"][n] for n in PER_REP} == {n: errors[n] for n in PER_REP}
    text = cudatrace_cmd.run(build_dir, "report",
                             proc.run_dir / "trace.pftrace.zst").stdout.splitlines()
    for name in PER_REP:
        (row,) = [line.split() for line in text if line.split()[:1] == [name]]
        assert row[1:3] == [str(tally[name]), str(errors[name])], row


def test_values_the_calls_wrote_and_were_given(trace_run):
    proc, trace, _ = trace_run("device_queries", 1)
    assert proc.returncode == 0, proc.stderr
    one = {name: args_of(trace, name) for name in PER_REP}
    assert one["cudaRuntimeGetVersion"] == one["cudaDriverGetVersion"] == [
        {"version": DOUBLE_VERSION, "result": 0}]
    assert one["cudaGetDeviceCount"] == [{"count": 1, "result": 0}]
    assert one["cudaSetDevice"] == [
        {"device": 0, "result": 0},
        {"device": 1, "result": 101, "error": "cudaErrorInvalidDevice"}]
    assert one["cudaGetDevice"] == one["cudaGetDeviceProperties"] == [{"device": 0, "result": 0}]
    assert one["cudaDeviceGetAttribute"] == [{
        "device": 0, "attribute": CUDA_DEV_ATTR_COMPUTE_CAPABILITY_MAJOR, "value": 9,
        "result": 0}]
    assert one["cudaSetDeviceFlags"] == one["cudaGetDeviceFlags"] == [
        {"flags": CUDA_DEVICE_SCHEDULE_BLOCKING_SYNC, "result": 0}]
    assert one["cudaInitDevice"] == [
        {"device": 0, "flags": CUDA_DEVICE_SCHEDULE_BLOCKING_SYNC, "result": 0}]
    assert one["cudaMemGetInfo"] == [
        {"free": DOUBLE_DEVICE_BYTES, "total": DOUBLE_DEVICE_BYTES, "result": 0}]
    # What the program itself got back, against what the slices say.
    assert printed_values(proc.stdout) == {
        "version": DOUBLE_VERSION, "driver": DOUBLE_VERSION, "count": 1, "device": 0, "major": 9,
        "flags": CUDA_DEVICE_SCHEDULE_BLOCKING_SYNC, "free": DOUBLE_DEVICE_BYTES,
        "total": DOUBLE_DEVICE_BYTES}
    assert one["cudaDeviceReset"] == [{"result": 0}]
    # The last error each deliberate failure latched, then none.
    assert [a["result"] for a in one["cudaGetLastError"]] == [101, 713, 0]
    assert one["cudaGetLastError"][1]["error"] == "cudaErrorHostMemoryNotRegistered"
    assert [a["result"] for a in one["cudaPeekAtLastError"]] == [0, 0]
    (registered,) = one["cudaHostRegister"]
    assert registered["bytes"] == 4096 and registered["ptr"] != 0
    assert [(a["ptr"], a["result"]) for a in one["cudaHostUnregister"]] == [
        (registered["ptr"], 0), (registered["ptr"], 713)]


def test_handles_connect_creation_use_and_destruction(trace_run):
    proc, trace, _ = trace_run("device_queries", 1)
    assert proc.returncode == 0, proc.stderr
    one = {name: args_of(trace, name) for name in PER_REP}
    streams = [one[n][0]["handle"] for n in ("cudaStreamCreate", "cudaStreamCreateWithFlags",
                                             "cudaStreamCreateWithPriority")]
    assert one["cudaStreamCreateWithFlags"][0]["flags"] == 1  # cudaStreamNonBlocking
    assert [a["handle"] for a in one["cudaStreamDestroy"]] == streams
    events = [one[n][0]["handle"] for n in ("cudaEventCreate", "cudaEventCreateWithFlags")]
    assert one["cudaEventCreateWithFlags"][0]["flags"] == 1  # cudaEventBlockingSync
    assert [a["handle"] for a in one["cudaEventDestroy"]] == events
    assert len(set(streams + events)) == 5 and 0 not in streams + events

    records = [one[n][0] for n in ("cudaEventRecord", "cudaEventRecord_ptsz",
                                   "cudaEventRecordWithFlags", "cudaEventRecordWithFlags_ptsz")]
    assert [(r["event"], r["stream"]) for r in records] == [
        (events[0], streams[0]), (events[0], streams[1]), (events[1], streams[1]),
        (events[1], streams[2])]
    assert [r.get("flags") for r in records] == [None, None, 1, None]  # cudaEventRecordExternal
    (elapsed,) = one["cudaEventElapsedTime"]
    assert (elapsed["event"], elapsed["end_event"]) == tuple(events)
    assert elapsed["elapsed_ns"] >= 0

    (created,) = one["cudaMemPoolCreate"]
    pool = created["handle"]
    (default,) = one["cudaDeviceGetDefaultMemPool"]
    assert [a["pool"] for a in one["cudaDeviceSetMemPool"]] == [pool, default["pool"]]
    assert one["cudaDeviceGetMemPool"] == [{"device": 0, "pool": pool, "result": 0}]
    threshold = {"handle": pool, "attribute": CUDA_MEM_POOL_ATTR_RELEASE_THRESHOLD,
                 "value": 1 << 20, "result": 0}
    assert one["cudaMemPoolSetAttribute"] == one["cudaMemPoolGetAttribute"] == [threshold]
    assert one["cudaMemPoolTrimTo"] == [{"handle": pool, "bytes": 1024, "result": 0}]
    assert one["cudaMemPoolDestroy"] == [{"handle": pool, "result": 0}]
    allocs = [one[n][0] for n in ("cudaMallocFromPoolAsync", "cudaMallocFromPoolAsync_ptsz")]
    assert [(a["pool"], a["stream"], a["bytes"]) for a in allocs] == [
        (pool, streams[0], 4096), (pool, streams[1], 4096)]
    # Pool allocations are device allocations: the live-bytes counter follows them.
    assert [a["ptr"] for a in args_of(trace, "cudaFreeAsync")] == [a["ptr"] for a in allocs]
    device = [v for _, v in trace.counters["CUDA device memory (live bytes)"]]
    assert device == [4096, 8192, 4096, 0]

    execs = [one[n][0] for n in ("cudaGraphInstantiate", "cudaGraphInstantiateWithFlags",
                                 "cudaGraphInstantiateWithParams",
                                 "cudaGraphInstantiateWithParams_ptsz")]
    assert len({e["handle"] for e in execs} - {0}) == 4
    assert [e.get("flags") for e in execs] == [None, 1, None, None]  # AutoFreeOnLaunch


def test_a_driver_too_old_refuses_and_writes_nothing(trace_run, program_truth):
    # The double then fails every call but the version and error queries, as the real runtime
    # does, before touching what the call would have written.
    env = {"CT_DOUBLE_DRIVER_VERSION": 12040}
    proc, trace, _ = trace_run("device_queries", 1, env=env)
    assert proc.returncode == 0, proc.stderr
    plain, _, _ = trace_run("device_queries", 1, env=env, preload=False)
    assert proc.stdout == plain.stdout
    assert printed_values(proc.stdout) == {
        "version": DOUBLE_VERSION, "driver": 12040, "count": -1, "device": -1, "major": -1,
        "flags": 0, "free": 0, "total": 0}
    assert traced_calls(trace) == [(name, rc) for name, rc in printed_calls(proc.stdout)
                                   if name in PER_REP or name == "cudaFreeAsync"]
    answered = {"cudaRuntimeGetVersion", "cudaDriverGetVersion", "cudaGetLastError",
                "cudaPeekAtLastError"}
    for s in trace.slices:
        if s["name"] not in answered:
            assert s["args"]["result"] == CUDA_ERROR_INSUFFICIENT_DRIVER, s
            # A failed call says where it was made: the program's own line.
            assert re.fullmatch(r"device_queries\.c:\d+ in \w+", s["args"]["site"]), s
        # No value a refused call would have written, and no handle it would have created.
        assert not {"count", "value", "free", "total", "pool", "elapsed_ns"} & set(s["args"]), s
        assert s["args"].get("handle", 0) == 0, s
    assert args_of(trace, "cudaGetDevice") == args_of(trace, "cudaGetDeviceFlags") == [
        {"result": CUDA_ERROR_INSUFFICIENT_DRIVER, "error": "cudaErrorInsufficientDriver"}]
    assert args_of(trace, "cudaDriverGetVersion") == [{"version": 12040, "result": 0}]
    truth = program_truth("device_queries", 1, env=env)
    assert sum(truth["calls"].values()) == len(printed_calls(proc.stdout))


# --------------------------------------------------------------------------
# 2. The real driverless runtime: what torch.cuda.is_available() does


def test_version_and_count_on_the_real_runtime_without_driver(trace_run, build_dir):
    toolkit.no_driver()
    if toolkit.soname("cudart") != "libcudart.so.13":
        pytest.skip("version_and_count is linked against libcudart.so.13, which this toolkit lacks")
    env = {"LD_LIBRARY_PATH": toolkit.LIB}
    plain, _, _ = trace_run("version_and_count", env=env, double=False, preload=False)
    traced, trace, _ = trace_run("version_and_count", env=env, double=False)
    assert (traced.stdout, traced.returncode) == (plain.stdout, plain.returncode)
    assert plain.returncode == 1  # no device could be counted
    assert os.listdir(plain.run_dir) == ["cwd"]  # the untraced run wrote no trace

    (version_line, count_line) = plain.stdout.splitlines()
    version = int(version_line.split()[-1])
    count_rc = int(count_line.split()[2])
    assert count_rc in (CUDA_ERROR_INSUFFICIENT_DRIVER, CUDA_ERROR_NO_DEVICE)
    # Both calls, with the results the program saw, and none of the preload's own queries.
    assert traced_calls(trace) == printed_calls(plain.stdout) == [
        ("cudaRuntimeGetVersion", 0), ("cudaGetDeviceCount", count_rc)]
    assert trace.slices[0]["args"]["version"] == version
    assert "count" not in trace.slices[1]["args"]  # a failed call wrote no count
    assert trace.slices[1]["args"]["error"].startswith("cudaError")

    (library,) = [i["args"] for i in trace.instants if i["name"] == "cuda.library"]
    assert library["realpath"] == os.path.realpath(toolkit.path("cudart"))
    report = cudatrace_cmd.report(build_dir, traced.run_dir / "trace.pftrace.zst")
    assert report["processes"][0]["api"].keys() == {"cudaRuntimeGetVersion", "cudaGetDeviceCount"}
    assert {n: (s["calls"], s["errors"]) for n, s in report["processes"][0]["api"].items()} == {
        "cudaRuntimeGetVersion": (1, 0), "cudaGetDeviceCount": (1, 1)}
    assert "driver-missing" in [f["id"] for f in report["findings"]]


def test_version_and_count_healthy_twin(trace_run, build_dir):
    proc, trace, _ = trace_run("version_and_count")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [f"cudaRuntimeGetVersion -> 0 {DOUBLE_VERSION}",
                                        "cudaGetDeviceCount -> 0 1"]
    assert [without_site(s["args"]) for s in trace.slices] == [{"version": DOUBLE_VERSION, "result": 0},
                                                 {"count": 1, "result": 0}]
    report = cudatrace_cmd.report(build_dir, proc.run_dir / "trace.pftrace.zst")
    assert report["findings"] == []
    assert all(s["errors"] == 0 for s in report["processes"][0]["api"].values())
