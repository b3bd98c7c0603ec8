"""The GPU's side of the trace through CUPTI, on the CPU doubles of the runtime, the
driver and CUPTI (tests/doubles/runtime, tests/doubles/driver, tests/doubles/cupti), and on the real
toolkit's libcupti and NVIDIA's CUDA 13 wheel, which load but cannot work without a driver.

With the driver double on the library path and CT_DOUBLE_DRIVER=1 the runtime double loads it
as the real runtime loads libcuda, and every simulated launch, copy and memset then produces
CUPTI's callbacks and an activity record laid out with the toolkit's structures. The CUPTI
double's own statistics (CT_DOUBLE_CUPTI_STATS) are the ground truth for what CUPTI handed over.

Checked here: GPU slices with their names, streams, durations and a flow from their host call;
no call recorded twice; launches made through the driver API only (as Triton does) and those of
a library with its own static runtime (as cuBLAS has) are recorded; CUPTI's dropped records are
reported; and the no-GPU, no-CUPTI, real-libcupti-without-driver and slot-taken cases degrade
as documented, the program's output unchanged. Fixtures (trace_run, program_calls, build_dir)
are in conftest.py; the toolkit is tests/toolkit.py's.
"""

import collections
import glob
import json
import os
import re
import shutil
import subprocess

import pytest

import cudatrace_cmd
import perfetto_check
import toolkit

KERNEL_NS = 10000  # the driver double's CT_DOUBLE_KERNEL_NS default
STEPS = 10  # train_loop steps: 201 launches, 2 copies each, one memset


def with_gpu(build_dir, tmp_path, **extra):
    """The environment that gives a traced program the driver double, and CUPTI's truth. The GPU
    work goes on GPU tracks (CUDATRACE_GPU_RECORDS=tracks), whose slices these tests read;
    tests/test_gpu_records.py holds the typed records, the default, to the same work."""
    env = {"LD_LIBRARY_PATH": f"{build_dir}/double:{build_dir}/driver", "CT_DOUBLE_DRIVER": "1",
           "CT_DOUBLE_CUPTI_STATS": str(tmp_path / "cupti-truth.txt"),
           "CUDATRACE_GPU_RECORDS": "tracks"}
    env.update({k: str(v) for k, v in extra.items()})
    return env


def cupti_truth(tmp_path):
    """The CUPTI double's statistics: {key: count}, and {kernel name: count}."""
    counts, kernels = {}, collections.Counter()
    with open(tmp_path / "cupti-truth.txt") as f:
        for line in f:
            words = line.split()
            if words[0] == "kernel_name":
                kernels[words[1]] = int(words[2])
            else:
                counts[words[0]] = int(words[1])
    return counts, kernels


def trace_file(completed):
    return completed.run_dir / "trace.pftrace.zst"


def track_name(trace, s):
    return trace.tracks.get(s["track_uuid"], {}).get("name") or ""


def gpu_slices(trace, kind):
    return [s for s in trace.slices
            if track_name(trace, s).startswith("GPU ") and s["args"].get("gpu_kind") == kind]


def host_slices(trace, name=None):
    return [s for s in trace.slices if s["tid"] is not None and (name is None or s["name"] == name)]


def findings_with(report, finding_id):
    return [f for f in report["findings"] if f["id"] == finding_id]


# --------------------------------------------------------------------------
# 1. GPU work on GPU tracks, each with the flow from its host call


def test_every_launch_copy_and_memset_runs_on_a_gpu_track(trace_run, build_dir, tmp_path):
    completed, trace, truth = trace_run("train_loop", STEPS, env=with_gpu(build_dir, tmp_path))
    assert completed.returncode == 0, completed.stderr
    counts, kernels = cupti_truth(tmp_path)
    launches = truth["calls"]["cudaLaunchKernel"]
    assert launches == 201 * STEPS and counts["kernel"] == launches
    gpu_kernels = gpu_slices(trace, "kernel")
    assert collections.Counter(s["name"] for s in gpu_kernels) == kernels
    assert {s["dur"] for s in gpu_kernels} == {KERNEL_NS}
    assert {track_name(trace, s) for s in gpu_kernels} == {"GPU 0 stream 7"}
    k = gpu_kernels[0]["args"]
    assert (k["grid"], k["block"], k["registers"], k["static_smem"]) == (
        "128x1x1", "256x1x1", 32, 0)
    copies = gpu_slices(trace, "memcpy")
    assert len(copies) == counts["memcpy"] == truth["calls"]["cudaMemcpy"] == 2 * STEPS
    assert collections.Counter(s["name"] for s in copies) == {"memcpy HtoD": STEPS,
                                                              "memcpy DtoH": STEPS}
    for c in copies:
        assert c["args"]["bandwidth_mb_per_s"] == c["args"]["bytes"] * 1000 // c["dur"]
        assert c["args"]["src_kind"] == ("pageable" if c["name"] == "memcpy HtoD" else "device")
    assert len(gpu_slices(trace, "memset")) == counts["memset"] == 1


@pytest.mark.parametrize("ids, kernel_id", [("outermost", "runtime"), ("per_call", "runtime"),
                                             ("per_call", "driver")])
def test_each_gpu_slice_ends_the_flow_its_host_call_began(trace_run, build_dir, tmp_path, ids,
                                                          kernel_id):
    """Whether CUPTI gives a runtime call and the driver calls inside it one correlation id or
    one each, and whichever of them a kernel's record carries (cupti_activity.h allows the
    driver's or the runtime's; a memset's is the driver's), each piece of GPU work ends the flow
    of the call that made it."""
    env = with_gpu(build_dir, tmp_path, CT_DOUBLE_CUPTI_IDS=ids, CT_DOUBLE_CUPTI_KERNEL_ID=kernel_id)
    _, trace, _ = trace_run("train_loop", STEPS, env=env)
    work = [s for kind in ("kernel", "memcpy", "memset") for s in gpu_slices(trace, kind)]
    starts = {}
    for s in host_slices(trace):
        for flow in s["flow_ids"]:
            assert flow not in starts, "two host calls began one flow"
            starts[flow] = s
    assert len(starts) == len(work)
    for g in work:
        (flow,) = g["terminating_flow_ids"]
        host = starts[flow]
        assert host["name"] == {"kernel": "cudaLaunchKernel", "memcpy": "cudaMemcpy",
                                "memset": "cudaMemset"}[g["args"]["gpu_kind"]]
        if g["args"]["gpu_kind"] == "kernel":
            assert host["args"]["kernel"] == g["name"]
        # On one clock: the work starts after the call began (the double's latency is 2 us),
        # and well within the run.
        assert host["ts"] <= g["ts"] < host["ts"] + 1_000_000_000


def test_a_realtime_step_moves_no_gpu_work_against_its_call(trace_run, build_dir, tmp_path):
    """CUPTI times its records on CLOCK_REALTIME unless a timestamp callback is registered
    (cuptiActivityRegisterTimestampCallback); realtime steps 30 s forward right after the 100th
    kernel's record, before its buffer is read. Every kernel still starts after its launch
    began and within a second of it."""
    env = with_gpu(build_dir, tmp_path, CT_DOUBLE_CUPTI_CLOCK_STEP=f"{30 * 10**9}:100")
    _, trace, _ = trace_run("train_loop", STEPS, env=env)
    starts = {flow: s for s in host_slices(trace, "cudaLaunchKernel") for flow in s["flow_ids"]}
    kernels = gpu_slices(trace, "kernel")
    assert len(kernels) == 201 * STEPS
    late_or_early = [(g["ts"] - starts[g["terminating_flow_ids"][0]]["ts"]) for g in kernels
                     if not 0 <= g["ts"] - starts[g["terminating_flow_ids"][0]]["ts"] < 10**9]
    assert late_or_early == []


@pytest.mark.parametrize("records", ["one", "each"])
def test_a_batch_of_copies_counts_every_copy(trace_run, build_dir, tmp_path, records):
    """cudaMemcpyBatchAsync: CUPTI may record a batch's copies in one record with copyCount
    copies, or in several ("batched together for optimization purposes based on certain
    heuristics", CUpti_ActivityMemcpy6). Either way the trace and the report count each copy,
    and the batch the runtime refused makes none."""
    batches, copies, batch_bytes = 5, 4, (1 + 2 + 3 + 4) * 1024
    env = with_gpu(build_dir, tmp_path, CT_DOUBLE_CUPTI_BATCH=records)
    completed, trace, _ = trace_run("batch_copies", batches, env=env)
    assert completed.stdout == f"batch_copies: {batches} batches\n"
    calls = host_slices(trace, "cudaMemcpyBatchAsync")
    assert [s["args"]["bytes"] for s in calls] == [batch_bytes] * batches + [0]
    assert [bool(s["flow_ids"]) for s in calls] == [True] * batches + [False]
    work = gpu_slices(trace, "memcpy")
    if records == "one":
        assert [(s["args"]["copies"], s["args"]["bytes"]) for s in work] == \
            [(copies, batch_bytes)] * batches
    else:
        assert len(work) == copies * batches and not [s for s in work if "copies" in s["args"]]
    assert sum(s["args"]["bytes"] for s in work) == batch_bytes * batches
    cupti = cudatrace_cmd.report(build_dir, trace_file(completed))["processes"][0]["cupti"]
    assert cupti["memcpys"] == copies * batches


@pytest.mark.finding("cupti-untimed")
def test_records_without_times_are_counted_never_mapped(trace_run, build_dir, tmp_path):
    """Every 7th kernel record has start and end 0 ("timestamp information could not be
    collected"), and the 2000th kernel never completes, so its record holds its buffer back
    until the exit's forced flush hands it over incomplete, where reading that buffer stops
    (cuptiActivityGetNextRecord). No slice lies outside the run, and the report counts both."""
    env = with_gpu(build_dir, tmp_path, CT_DOUBLE_CUPTI_UNTIMED_EVERY=7,
                   CT_DOUBLE_CUPTI_LOSE_KERNEL=2000)
    completed, trace, _ = trace_run("train_loop", STEPS, env=env)
    counts, _ = cupti_truth(tmp_path)
    launches = 201 * STEPS
    # Every 7th kernel CUPTI recorded: those before it started CUPTI have none.
    untimed = counts["untimed"]
    assert launches // 7 - 2 <= untimed <= launches // 7 and counts["incomplete"] == 1
    host = host_slices(trace)
    first, last = min(s["ts"] for s in host), max(s["ts"] + s["dur"] for s in host)
    work = [s for s in trace.slices if track_name(trace, s).startswith("GPU ")]
    assert work and all(first <= s["ts"] and s["ts"] + s["dur"] <= last for s in work)
    assert len(gpu_slices(trace, "kernel")) <= launches - untimed - 1
    report = cudatrace_cmd.report(build_dir, trace_file(completed))
    cupti = report["processes"][0]["cupti"]
    # Those of the last 10 kernels, after the incomplete record in its buffer, are lost with it.
    assert untimed - 10 // 7 - 1 <= cupti["untimed"] <= untimed and cupti["incomplete"] == 1
    (finding,) = findings_with(report, "cupti-untimed")
    assert finding["evidence"] == {"incomplete": 1, "untimed": cupti["untimed"]}


def test_finished_gpu_work_reaches_the_trace_while_the_program_waits(build_dir, tmp_path):
    """A program that runs a few steps and then waits 1.5 s before it ends: its kernels fill no
    buffer, and CUPTI's own worker hands back only full ones, so without flushes of the
    tracer's own they would reach the trace only at exit. Each arrives within the flusher's
    period instead, with a wide margin for a loaded machine."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CUDATRACE_", "CT_DOUBLE_")) and k != "LD_PRELOAD"}
    env.update(with_gpu(build_dir, tmp_path), CUDATRACE_OUTPUT=str(tmp_path / "t.pftrace.zst"),
               LD_PRELOAD=os.path.join(build_dir, "libcudatrace.so"), CUDATRACE_QUIET="1")
    done = subprocess.run([os.path.join(build_dir, "tests", "gpu_steps"), "100", "0", "0",
                           "1500"], env=env, capture_output=True, text=True, timeout=60)
    assert done.stdout == "gpu_steps: 10 steps\n", done.stderr
    cupti = cudatrace_cmd.report(build_dir, tmp_path / "t.pftrace.zst")["processes"][0]["cupti"]
    assert cupti["kernels"] == 10
    assert 0 < cupti["delivery_median_ns"] <= cupti["delivery_max_ns"] < 10**9


def test_no_call_is_recorded_twice(trace_run, program_calls, build_dir, tmp_path):
    env = with_gpu(build_dir, tmp_path)
    expected = program_calls("train_loop", STEPS, env=env)
    _, trace, _ = trace_run("train_loop", STEPS, env=env)
    recorded = collections.Counter(s["name"] for s in host_slices(trace))
    assert {name: recorded[name] for name in expected} == expected
    assert not [s for s in host_slices(trace) if s["args"].get("seen_by") == "cupti"]
    assert not [name for name in recorded if name.startswith("cu") and name[2].isupper()]


@pytest.mark.twin("cupti-untimed")
def test_report_gives_gpu_busy_time_kernels_and_cupti(trace_run, build_dir, tmp_path):
    completed, trace, _ = trace_run("train_loop", STEPS, env=with_gpu(build_dir, tmp_path))
    counts, kernels = cupti_truth(tmp_path)
    (process,) = cudatrace_cmd.report(build_dir, trace_file(completed))["processes"]
    gpu, cupti = process["gpu"], process["cupti"]
    assert gpu["kernels"] == counts["kernel"] and gpu["kernel_ns"] == KERNEL_NS * counts["kernel"]
    assert (gpu["copies"], gpu["memsets"]) == (counts["memcpy"], counts["memset"])
    work = counts["kernel"] + counts["memcpy"] + counts["memset"]
    assert gpu["flows"] == {"gpu_work": work, "from_host_call": work}
    assert {k["name"]: k["count"] for k in gpu["top_kernels"]} == dict(kernels.most_common(5))
    assert cupti["state"] == "active"
    assert cupti["library"] == os.path.join(build_dir, "double", "libcupti.so.13")
    assert (cupti["kernels"], cupti["memcpys"], cupti["dropped"]) == (
        counts["kernel"], counts["memcpy"], 0)
    assert cupti["clock_samples"] >= 2 and cupti["clock_reading_error_ns"] < 1_000_000
    # The healthy twin of test_records_without_times_are_counted_never_mapped.
    assert (cupti["incomplete"], cupti["untimed"], counts["incomplete"]) == (0, 0, 0)
    report = cudatrace_cmd.report(build_dir, trace_file(completed))
    assert not findings_with(report, "cupti-untimed")
    text = cudatrace_cmd.run(build_dir, "report", trace_file(completed)).stdout
    assert "GPU clock mapped within" in text and f"{counts['kernel']} kernels" in text


# --------------------------------------------------------------------------
# 2. What the hooks cannot see


@pytest.mark.parametrize("per_thread", [0, 1], ids=["legacy", "per_thread"])
def test_driver_api_launches_are_recorded(trace_run, build_dir, tmp_path, per_thread):
    """With per_thread, the program has cuLaunchKernel_ptsz, cuMemcpyHtoD_v2_ptds and
    cuMemcpyDtoH_v2_ptds from cuGetProcAddress (as code built with --default-stream per-thread
    has): each is recorded as its plain function, with its flow."""
    per_kernel = 50
    completed, trace, _ = trace_run("driver_launch", per_kernel, 0, per_thread,
                                    env=with_gpu(build_dir, tmp_path))
    assert completed.returncode == 0, completed.stderr
    launches = host_slices(trace, "cuLaunchKernel")
    assert len(launches) == 2 * per_kernel
    assert {s["args"]["seen_by"] for s in launches} == {"cupti"}
    names = {"triton_poi_fused_add_0": per_kernel, "triton_red_fused_sum_1": per_kernel}
    assert collections.Counter(s["args"]["kernel"] for s in launches) == names
    assert collections.Counter(s["name"] for s in gpu_slices(trace, "kernel")) == names
    assert all(s["flow_ids"] for s in launches)
    (process,) = cudatrace_cmd.report(build_dir, trace_file(completed))["processes"]
    api = process["api"]
    assert api["cuLaunchKernel"]["calls"] == 2 * per_kernel
    assert (api["cuMemAlloc_v2"]["calls"], api["cuMemFree_v2"]["calls"]) == (1, 1)
    assert api["cuCtxSynchronize"]["calls"] == 1
    assert (api["cuMemcpyHtoD_v2"]["calls"], api["cuMemcpyDtoH_v2"]["calls"]) == (1, 1)
    assert process["gpu"]["flows"] == {"gpu_work": 2 * per_kernel + 2,
                                       "from_host_call": 2 * per_kernel + 2}
    assert process["memory"]["peak_bytes"] == 4096
    assert process["launches"]["count"] == 2 * per_kernel


def test_a_static_runtime_is_seen_through_cupti(trace_run, build_dir, tmp_path):
    app, library = 3, 5
    completed, trace, _ = trace_run("static_runtime", app, library,
                                    env=with_gpu(build_dir, tmp_path))
    assert completed.returncode == 0, completed.stderr
    by_origin = collections.Counter((s["name"], s["args"].get("seen_by", "hook"))
                                    for s in host_slices(trace))
    assert by_origin[("cudaLaunchKernel", "hook")] == app
    assert by_origin[("cudaLaunchKernel", "cupti")] == library
    assert by_origin[("cudaMalloc", "cupti")] == 1 and by_origin[("cudaFree", "cupti")] == 1
    assert by_origin[("cudaDeviceSynchronize", "hook")] == 1
    assert by_origin[("cudaDeviceSynchronize", "cupti")] == 1
    # The runtime double finds the driver's cuInit with dlsym, as a runtime may: CUPTI starts
    # there, inside the first call, so even that first launch's GPU work is recorded.
    # The library's kernel is a C++ template, demangled on the GPU track.
    gemm, mangled = "void gemm_tile<128>(float const*, float*, int)", "_Z9gemm_tileILi128EEvPKfPfi"
    kernels = collections.Counter(s["name"] for s in gpu_slices(trace, "kernel"))
    assert kernels == {"app_kernel": app, gemm: library}
    assert {s["args"].get("mangled") for s in gpu_slices(trace, "kernel")} == {None, mangled}
    library_launches = [s for s in host_slices(trace, "cudaLaunchKernel")
                        if s["args"].get("seen_by") == "cupti"]
    assert {s["args"]["kernel"] for s in library_launches} == {mangled}


# --------------------------------------------------------------------------
# 3. Degrading: dropped records, no GPU, no CUPTI, the slot taken


def test_records_cupti_drops_are_reported(trace_run, build_dir, tmp_path):
    env = with_gpu(build_dir, tmp_path, CT_DOUBLE_CUPTI_DROP_EVERY=7)
    completed, trace, _ = trace_run("train_loop", STEPS, env=env)
    counts, _ = cupti_truth(tmp_path)
    assert counts["dropped"] > 0
    assert len(gpu_slices(trace, "kernel")) == counts["kernel"]
    report = cudatrace_cmd.report(build_dir, trace_file(completed))
    assert report["processes"][0]["cupti"]["dropped"] == counts["dropped"]
    (finding,) = findings_with(report, "cupti-dropped")
    assert finding["severity"] == "warning"
    assert f"dropped {counts['dropped']} GPU activity records" in finding["message"]


def untraced_output(build_dir, program, *args, env):
    full = {k: v for k, v in os.environ.items()
            if not k.startswith(("CUDATRACE_", "CT_DOUBLE_")) and k != "LD_PRELOAD"}
    full.update(env)
    return subprocess.run([os.path.join(build_dir, "examples", program), *map(str, args)],
                          env=full, capture_output=True, text=True, timeout=60)


def test_slot_taken_by_another_profiler(trace_run, build_dir, tmp_path):
    env = with_gpu(build_dir, tmp_path, CT_DOUBLE_CUPTI_TAKEN=1)
    completed, trace, truth = trace_run("train_loop", STEPS, env=env)
    plain = untraced_output(build_dir, "train_loop", STEPS, env=env)
    assert (completed.returncode, completed.stdout) == (plain.returncode, plain.stdout)
    assert len(host_slices(trace, "cudaLaunchKernel")) == truth["calls"]["cudaLaunchKernel"]
    assert not gpu_slices(trace, "kernel")
    report = cudatrace_cmd.report(build_dir, trace_file(completed))
    (finding,) = findings_with(report, "cupti-unavailable")
    assert "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED" in finding["message"]
    assert "another profiler" in finding["message"] and finding["severity"] == "info"
    assert "gpu" not in report["processes"][0]


def test_no_libcupti_found(trace_run, build_dir, tmp_path):
    empty = tmp_path / "no-cupti"
    empty.mkdir()
    env = with_gpu(build_dir, tmp_path, CUDATRACE_CUPTI_PATH=empty)
    completed, trace, _ = trace_run("train_loop", STEPS, env=env)
    plain = untraced_output(build_dir, "train_loop", STEPS, env=env)
    assert completed.stdout == plain.stdout and completed.returncode == 0
    report = cudatrace_cmd.report(build_dir, trace_file(completed))
    (finding,) = findings_with(report, "cupti-unavailable")
    assert f"CUDATRACE_CUPTI_PATH={empty} holds no libcupti.so" in finding["message"]
    assert not gpu_slices(trace, "kernel")


def test_without_a_driver_cupti_is_not_loaded(trace_run, build_dir):
    completed, trace, _ = trace_run("train_loop", STEPS)  # the runtime double alone
    report = cudatrace_cmd.report(build_dir, trace_file(completed))
    cupti = report["processes"][0]["cupti"]
    assert (cupti["state"], cupti["reason"]) == (
        "no_gpu", "no CUDA driver (libcuda.so.1) is loaded in this process")
    assert not findings_with(report, "cupti-unavailable")
    assert "cupti" not in [lib["family"] for lib in report["processes"][0]["libraries"]]
    off, _, _ = trace_run("train_loop", STEPS, env={"CUDATRACE_CUPTI": "0"})
    assert "cupti" not in cudatrace_cmd.report(build_dir, trace_file(off))["processes"][0]


def real_cupti_without_driver(trace_run, build_dir, library_path, cupti_path):
    env = {"CUDATRACE_CUPTI": "1", "CUDATRACE_CUPTI_PATH": cupti_path,
           "LD_LIBRARY_PATH": library_path}
    completed, trace, _ = trace_run("driverless", env=env, double=False)
    plain = subprocess.run([os.path.join(build_dir, "tests", "driverless")],
                           env={**os.environ, "LD_LIBRARY_PATH": library_path},
                           capture_output=True, text=True, timeout=60)
    assert (completed.returncode, completed.stdout) == (plain.returncode, plain.stdout)
    report = cudatrace_cmd.report(build_dir, trace_file(completed))
    process = report["processes"][0]
    assert process["cupti"]["state"] == "unavailable"
    assert "cuptiSubscribe: CUPTI_ERROR_UNKNOWN (no CUDA driver is loaded)" == (
        process["cupti"]["reason"])
    # CUPTI's own search for a driver is not the program's: it adds no failed load.
    assert [f["requested_as"] for f in process["failed_loads"]] == ["libcuda.so.1"]
    assert [f["requested_by"] for f in process["failed_loads"]] != [cupti_path]
    (cupti_lib,) = [lib for lib in process["libraries"] if lib["family"] == "cupti"]
    assert cupti_lib["realpath"] == os.path.realpath(cupti_path)
    return report


def test_the_toolkit_libcupti_without_a_driver(trace_run, build_dir):
    toolkit.no_driver()
    cupti = os.path.join(toolkit.LIB, "libcupti.so.13")
    if not os.path.exists(cupti):
        pytest.skip(f"the toolkit has no {cupti}")
    report = real_cupti_without_driver(trace_run, build_dir, toolkit.LIB, cupti)
    # The driver's absence is the finding; CUPTI's is explained by it.
    assert [f["id"] for f in report["findings"]] == ["driver-missing"]


def test_the_cu13_wheel_libcupti_found_beside_its_runtime(trace_run, build_dir, tmp_path):
    toolkit.no_driver()
    found = {name: glob.glob(os.path.join(build_dir, "wheels", "nvidia_cuda_*", "nvidia", "cu13",
                                          "lib", name)) for name in ("libcudart.so.13",
                                                                     "libcupti.so.13")}
    assert all(found.values()), f"make test unpacks the CUDA 13 wheels: {found}"
    lib = tmp_path / "site-packages" / "nvidia" / "cu13" / "lib"
    lib.mkdir(parents=True)
    for paths in found.values():
        shutil.copy(paths[0], lib)
    # No CUDATRACE_CUPTI_PATH: the libcupti beside the loaded libcudart is the one taken.
    env = {"CUDATRACE_CUPTI": "1", "LD_LIBRARY_PATH": str(lib)}
    completed, _, _ = trace_run("driverless", env=env, double=False)
    process = cudatrace_cmd.report(build_dir, trace_file(completed))["processes"][0]
    assert process["cupti"]["state"] == "unavailable"
    (cupti_lib,) = [x for x in process["libraries"] if x["family"] == "cupti"]
    assert cupti_lib["realpath"] == str(lib / "libcupti.so.13")
    assert "CUPTI_ERROR_UNKNOWN" in process["cupti"]["reason"]


# How the program's profiler finds CUPTI's subscription: as linked, the _v2 that new tools call,
# or through dlsym on a handle of libcupti, as frameworks that load CUPTI at run time do.
HOW_SUBSCRIBED = {"linked": 0, "v2": 1, "dlsym": 2}


def own_profiler_untraced(build_dir, env, *args):
    plain = subprocess.run([os.path.join(build_dir, "tests", "own_profiler"), *map(str, args)],
                           env={**os.environ, **env}, capture_output=True, text=True, timeout=60)
    assert plain.returncode == 0, plain.stderr
    return plain.stdout


@pytest.mark.parametrize("how, lent", [(how, "keep") for how in HOW_SUBSCRIBED] +
                         [("linked", "return")])
def test_the_programs_own_profiler_gets_cupti(trace_run, build_dir, tmp_path, how, lent):
    """torch.profiler subscribes to CUPTI when it starts: where CUPTI allows one subscriber,
    cudatrace hands CUPTI over, so the program's profiler sees every launch and kernel it would
    see untraced, however it found cuptiSubscribe. Whether CUPTI keeps a buffer cudatrace lent
    and hands it to the profiler, which frees it as its own (own_profiler does, as Kineto
    does), or gives it back first, the program runs as it does untraced."""
    before, profiled = 20, 30
    env = with_gpu(build_dir, tmp_path, CT_DOUBLE_CUPTI_LENT=lent)
    args = (before, profiled, HOW_SUBSCRIBED[how], 1)
    plain = own_profiler_untraced(build_dir, env, *args)
    assert plain == "own_profiler: subscribe CUPTI_SUCCESS, 30 launch callbacks, 30 kernel records\n"
    completed, trace, _ = trace_run("own_profiler", *args, env=env)
    assert (completed.returncode, completed.stdout) == (0, plain)
    launches = host_slices(trace, "cudaLaunchKernel")
    assert collections.Counter(s["args"]["kernel"] for s in launches) == {
        "kernel_before": before, "kernel_profiled": profiled}
    assert collections.Counter(s["name"] for s in gpu_slices(trace, "kernel")) == {
        "kernel_before": before}
    report = cudatrace_cmd.report(build_dir, trace_file(completed))
    cupti = report["processes"][0]["cupti"]
    assert (cupti["state"], cupti["library"]) == (
        "yielded", os.path.join(build_dir, "double", "libcupti.so.13"))
    assert "handed it over" in cupti["reason"]
    (finding,) = findings_with(report, "cupti-yielded")
    assert finding["severity"] == "info"


@pytest.mark.parametrize("how", HOW_SUBSCRIBED)
def test_with_several_subscribers_allowed_both_keep_cupti(trace_run, build_dir, tmp_path, how):
    """Where CUPTI allows several subscribers (CUDA 13.3 and driver r610 on), the program's tool
    subscribes beside cudatrace: it gets its callbacks, and cudatrace keeps its GPU timing."""
    before, profiled = 20, 30
    env = with_gpu(build_dir, tmp_path, CT_DOUBLE_CUPTI_MULTIPLE_SUBSCRIBERS=1)
    args = (before, profiled, HOW_SUBSCRIBED[how], 0)
    plain = own_profiler_untraced(build_dir, env, *args)
    assert plain == "own_profiler: subscribe CUPTI_SUCCESS, 30 launch callbacks, 0 kernel records\n"
    completed, trace, _ = trace_run("own_profiler", *args, env=env)
    assert (completed.returncode, completed.stdout) == (0, plain)
    kernels = {"kernel_before": before, "kernel_profiled": profiled}
    launches = host_slices(trace, "cudaLaunchKernel")
    assert collections.Counter(s["args"]["kernel"] for s in launches) == kernels
    assert all(s["flow_ids"] for s in launches)
    assert collections.Counter(s["name"] for s in gpu_slices(trace, "kernel")) == kernels
    (process,) = cudatrace_cmd.report(build_dir, trace_file(completed))["processes"]
    assert process["cupti"]["state"] == "active"
    assert process["gpu"]["flows"] == {"gpu_work": before + profiled,
                                       "from_host_call": before + profiled}


def test_with_several_subscribers_the_activity_callbacks_are_still_handed_over(
        trace_run, build_dir, tmp_path):
    """cuptiActivityRegisterCallbacks is one per process whatever the subscribers: a tool that
    registers its own buffers there still gets CUPTI's activity, and cudatrace yields."""
    before, profiled = 20, 30
    env = with_gpu(build_dir, tmp_path, CT_DOUBLE_CUPTI_MULTIPLE_SUBSCRIBERS=1)
    args = (before, profiled, HOW_SUBSCRIBED["v2"], 1)
    plain = own_profiler_untraced(build_dir, env, *args)
    completed, trace, _ = trace_run("own_profiler", *args, env=env)
    assert (completed.returncode, completed.stdout) == (0, plain)
    assert plain == "own_profiler: subscribe CUPTI_SUCCESS, 30 launch callbacks, 30 kernel records\n"
    assert collections.Counter(s["name"] for s in gpu_slices(trace, "kernel")) == {
        "kernel_before": before}
    (process,) = cudatrace_cmd.report(build_dir, trace_file(completed))["processes"]
    assert process["cupti"]["state"] == "yielded"


# --------------------------------------------------------------------------
# 4. As the driver's injection library, without LD_PRELOAD


def test_injection_library_without_preload(trace_run, build_dir, tmp_path):
    per_kernel = 20
    trace_path = tmp_path / "injected.pftrace.zst"
    env = with_gpu(build_dir, tmp_path, CUDATRACE_OUTPUT=trace_path,
                   CUDA_INJECTION64_PATH=os.path.join(build_dir, "libcudatrace.so"))
    completed, _, _ = trace_run("driver_launch", per_kernel, env=env, preload=False)
    assert completed.returncode == 0, completed.stderr
    trace = perfetto_check.load(trace_path)
    by_name = collections.Counter(s["name"] for s in host_slices(trace))
    assert by_name["cuLaunchKernel"] == 2 * per_kernel
    # CUPTI records what makes, waits for or holds GPU work; the runtime's queries (this
    # program's one cudaGetDeviceCount) only the hooks would.
    assert by_name["cudaGetDeviceCount"] == 0
    assert {s["args"]["seen_by"] for s in host_slices(trace)} == {"cupti"}
    assert len(gpu_slices(trace, "kernel")) == 2 * per_kernel


def test_cudatrace_run_makes_the_tracer_the_injection_library(build_dir, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUDA_INJECTION", "NVTX_"))}
    done = cudatrace_cmd.run(build_dir, "run", "-q", "--", "sh", "-c",
                             "echo $CUDA_INJECTION64_PATH", env=env, cwd=tmp_path)
    assert done.stdout.strip() == os.path.join(os.path.realpath(build_dir), "libcudatrace.so")
    env["CUDA_INJECTION64_PATH"] = "/opt/nsys/libToolsInjection64.so"
    done = cudatrace_cmd.run(build_dir, "run", "-q", "--", "sh", "-c",
                             "echo $CUDA_INJECTION64_PATH", env=env, cwd=tmp_path)
    assert done.stdout.strip() == "/opt/nsys/libToolsInjection64.so"


# --------------------------------------------------------------------------
# 5. What GPU timings change in the findings


def test_a_gpu_bound_loop_is_no_sync_stall_and_its_twin_is(trace_run, build_dir, tmp_path):
    """The same loop: kernels that keep the GPU busy while the host waits (GPU-bound, healthy:
    100 us kernels against launches of a few us, so however loaded the machine), and kernels
    that take no time while every sync still blocks for 2 ms (a real stall)."""
    steps = 10
    busy, _, _ = trace_run("train_loop", steps,
                           env=with_gpu(build_dir, tmp_path, CT_DOUBLE_KERNEL_NS=100_000))
    report = cudatrace_cmd.report(build_dir, trace_file(busy))
    gpu = report["processes"][0]["gpu"]
    assert gpu["busy_ns"] >= 0.6 * report["processes"][0]["wall_ns"]
    assert not findings_with(report, "sync-stall")
    # The same run read as if the GPU had to be busier still to count as GPU-bound.
    lenient = cudatrace_cmd.report(build_dir, "--threshold", "gpu_bound_share=1", trace_file(busy))
    assert findings_with(lenient, "sync-stall")
    stalled, _, _ = trace_run("train_loop", steps, env=with_gpu(
        build_dir, tmp_path, CT_DOUBLE_KERNEL_NS=100, CT_DOUBLE_SYNC_NS=2_000_000))
    report = cudatrace_cmd.report(build_dir, trace_file(stalled))
    (finding,) = findings_with(report, "sync-stall")
    assert report["processes"][0]["gpu"]["busy_ns"] < 0.8 * report["processes"][0]["wall_ns"]
    assert "train_loop.c" in finding["message"]


def test_chrome_json_has_gpu_rows_and_kineto_flows(trace_run, build_dir, tmp_path):
    completed, trace, _ = trace_run("train_loop", STEPS, env=with_gpu(build_dir, tmp_path))
    counts, _ = cupti_truth(tmp_path)
    out = tmp_path / "export.json"
    cudatrace_cmd.run(build_dir, "export", trace_file(completed), "--format", "chrome-json",
                      "-o", out)
    events = json.load(open(out))["traceEvents"]
    by_cat = collections.Counter(e.get("cat") for e in events if e["ph"] == "X")
    assert by_cat["kernel"] == counts["kernel"] and by_cat["gpu_memcpy"] == counts["memcpy"]
    kernel = next(e for e in events if e.get("cat") == "kernel")
    assert (kernel["args"]["stream"], kernel["args"]["grid"]) == (7, [128, 1, 1])
    rows = {e["tid"]: e["args"]["name"] for e in events
            if e["ph"] == "M" and e["name"] == "thread_name"}
    assert rows[kernel["tid"]] == "GPU 0 stream 7"
    launch = next(e for e in events if e["ph"] == "X" and e["name"] == "cudaLaunchKernel")
    assert launch["cat"] == "cuda_runtime" and "stream_handle" in launch["args"]
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    ends = [e for e in events if e["ph"] == "f"]
    work = counts["kernel"] + counts["memcpy"] + counts["memset"]
    assert len(starts) == len(ends) == work
    assert all(e["id"] in starts and e["bp"] == "e" and e["cat"] == "ac2g" for e in ends)


def test_a_driver_only_program_under_a_bare_preload(trace_run, build_dir, tmp_path):
    """No runtime call at all (XLA's runtime is its own, static): the preload's cuInit, which
    the program finds with dlsym, starts CUPTI, and every driver call is recorded."""
    per_kernel = 30
    completed, trace, _ = trace_run("driver_launch", per_kernel, 1,
                                    env=with_gpu(build_dir, tmp_path))
    assert completed.returncode == 0, completed.stderr
    names = collections.Counter(s["name"] for s in host_slices(trace))
    assert names["cuLaunchKernel"] == 2 * per_kernel and names["cudaGetDeviceCount"] == 0
    assert len(gpu_slices(trace, "kernel")) == 2 * per_kernel
    process = cudatrace_cmd.report(build_dir, trace_file(completed))["processes"][0]
    assert process["cupti"]["state"] == "active"


def test_a_fork_child_of_a_process_with_cupti_says_why_it_has_none(trace_run, build_dir,
                                                                    tmp_path):
    env = with_gpu(build_dir, tmp_path, CUDATRACE_OUTPUT=tmp_path / "fork-%p.pftrace.zst")
    completed, _, _ = trace_run("forker", "fork", 50, 30, env=env)
    assert completed.returncode == 0, completed.stderr
    pids = dict(re.findall(r"forker: (\w+) pid=(\d+)", completed.stdout))
    parent = cudatrace_cmd.report(build_dir, tmp_path / f"fork-{pids['parent']}.pftrace.zst")
    child = cudatrace_cmd.report(build_dir, tmp_path / f"fork-{pids['child']}.pftrace.zst")
    assert parent["processes"][0]["cupti"]["state"] == "active"
    assert parent["processes"][0]["gpu"]["kernels"] == 100
    cupti = child["processes"][0]["cupti"]
    assert cupti["state"] == "unavailable" and "forked from one with CUPTI" in cupti["reason"]
    assert child["processes"][0]["api"]["cudaLaunchKernel"]["calls"] == 30
    assert [f["id"] for f in child["findings"]] == ["cupti-unavailable"]


def test_threads_launching_at_once(trace_run, build_dir, tmp_path):
    threads, launches = 4, 5000
    completed, trace, truth = trace_run("threads", threads, launches,
                                        env=with_gpu(build_dir, tmp_path))
    assert completed.returncode == 0, completed.stderr
    counts, _ = cupti_truth(tmp_path)
    assert counts["kernel"] == threads * launches == truth["calls"]["cudaLaunchKernel"]
    assert len(host_slices(trace, "cudaLaunchKernel")) == threads * launches
    assert len(gpu_slices(trace, "kernel")) == threads * launches
    flows = cudatrace_cmd.report(build_dir, trace_file(completed))["processes"][0]["gpu"]["flows"]
    assert flows == {"gpu_work": threads * launches, "from_host_call": threads * launches}


def test_nvtx_steps_get_their_gpu_busy_time(trace_run, build_dir, tmp_path):
    """Each "step" range holds 3 launches and the sync that waits for them, so the GPU's busy
    time within the steps is all their kernels'; the report gives it per range name."""
    steps = 20
    env = with_gpu(build_dir, tmp_path,
                   NVTX_INJECTION64_PATH=os.path.join(build_dir, "libcudatrace.so"))
    completed, trace, _ = trace_run("nvtx_steps", steps, env=env)
    assert completed.returncode == 0, completed.stderr
    assert len(gpu_slices(trace, "kernel")) == 3 * steps
    ranges = {r["name"]: r for r in
              cudatrace_cmd.report(build_dir, trace_file(completed))["processes"][0]["nvtx_ranges"]}
    step = ranges["step"]
    assert step["count"] == steps
    # Every kernel ran inside its step; the clock mapping may shave a few ns off the last.
    assert 3 * steps * KERNEL_NS - steps * 1000 <= step["gpu_busy_ns"] <= 3 * steps * KERNEL_NS
    assert step["gpu_busy_ns"] <= step["total_ns"]
    assert "(GPU busy" in cudatrace_cmd.run(build_dir, "report", trace_file(completed)).stdout
