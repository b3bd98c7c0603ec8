"""The GPU's own state, sampled by the collector through NVML (collector/gpu_state/).

Each run traces tests/programs/gpu_steps on the CPU runtime double with the NVML double
(tests/doubles/nvml/) on the library path, scripted through CT_DOUBLE_NVML_SCRIPT: what the
devices report over time, a call that fails or blocks, a device that is lost. The trace must
hold exactly what the script said, on the tracks trace_names.h declares; and NVML missing,
failing or blocking must change nothing of the program's run nor hang the collector.
"""
import os
import time

import pytest

MS = 1_000_000
UUID1 = "GPU-c0ffee01-0000-4000-8000-000000000001"


def node_of(script):
    """The runtime double's node as the script's device count makes it: the same GPUs, in the
    same order (CT_DOUBLE_GPUS; a test sets CT_DOUBLE_FASTEST_FIRST to order them otherwise)."""
    counts = [line.split()[3] for line in script if line.split()[1:3] == ["-", "devices"]]
    return {"CT_DOUBLE_GPUS": counts[-1]} if counts else {}


@pytest.fixture
def vocab(trace_vocabulary):
    return trace_vocabulary


@pytest.fixture
def traced(trace_run, build_dir, tmp_path):
    """traced(script_lines, *args, env=None, nvml=True) -> (completed, trace)."""
    def run(script, *args, env=None, nvml=True):
        path = tmp_path / f"script{len(list(tmp_path.glob('script*')))}"
        path.write_text("".join(line + "\n" for line in script))
        library_path = os.path.join(build_dir, "double")
        if nvml:
            library_path += ":" + os.path.join(build_dir, "nvml")
        full_env = {"LD_LIBRARY_PATH": library_path, "CT_DOUBLE_NVML_SCRIPT": path,
                    **node_of(script)}
        full_env.update(env or {})
        completed, trace, _ = trace_run("gpu_steps", *(args or (400,)), env=full_env)
        assert completed.returncode == 0, completed.stderr
        assert completed.stdout == f"gpu_steps: {(args or (400,))[0] // 10} steps\n"
        return completed, trace
    return run


def text(vocab, kind, ident):
    return vocab.text(kind, ident)


def instants(trace, vocab, ident):
    return [e for e in trace.instants if e["name"] == text(vocab, "event", ident)]


def nvml_state(trace, vocab):
    """The closing cudatrace.nvml instant (the one without a device)."""
    found = [e for e in instants(trace, vocab, "nvml") if "device" not in e["args"]]
    assert len(found) == 1, found
    return found[0]["args"]


def counter(trace, vocab, ident, device=0):
    return trace.counters.get(text(vocab, "track", ident).replace("%u", str(device)), [])


def test_scripted_values_reach_their_tracks_exactly(traced, vocab):
    completed, trace = traced([
        "0 - driver 575.57.08",
        "0 0 sm_clock 1500",
        "0 0 power_mw 123456",
        "0 0 reasons 4",
        "0 0 process parent 4096",
    ])
    state = nvml_state(trace, vocab)
    assert (state["state"], state["nvml_driver"], state["failed_calls"]) == (
        "sampling", "575.57.08", 0)
    device, = instants(trace, vocab, "nvml_device")
    assert device["args"]["sm_clock_max_mhz"] == 1980
    assert device["args"]["pcie_width_max"] == 16
    sm = counter(trace, vocab, "gpu_sm_clock")
    assert len(sm) >= 3 and {v for _, v in sm} == {1500}
    assert {v for _, v in counter(trace, vocab, "gpu_power")} == {123456}
    assert {v for _, v in counter(trace, vocab, "gpu_pcie_width")} == {16}
    spans = [s for s in trace.slices if s["name"] == "clocks SwPowerCap"]
    assert len(spans) == 1 and spans[0]["args"]["reasons"] == 4
    started, = instants(trace, vocab, "gpu_process_start")
    assert (started["args"]["pid"], started["args"]["bytes"]) == (completed.pid, 4096)
    assert started["args"]["name"] == "gpu_steps"


@pytest.mark.parametrize("visible", ["1", UUID1, UUID1[4:12]])
def test_cuda_visible_devices_chooses_the_device(traced, vocab, visible):
    _, trace = traced(["0 - devices 3", "0 1 sm_clock 1111", "0 0 sm_clock 999"],
                      env={"CUDA_VISIBLE_DEVICES": visible})
    device, = instants(trace, vocab, "nvml_device")
    assert (device["args"]["device"], device["args"]["nvml_index"]) == (0, 1)
    assert device["args"]["uuid"] == UUID1
    assert {v for _, v in counter(trace, vocab, "gpu_sm_clock")} == {1111}


@pytest.mark.parametrize("visible", ["", "c0ffee0", "7", "1,x,0"])
def test_devices_cuda_would_not_see_are_not_followed(traced, vocab, visible):
    """An empty list, a UUID prefix that names more than one device, an index past the
    last, and everything from the first entry CUDA cannot match on."""
    _, trace = traced(["0 - devices 3"], env={"CUDA_VISIBLE_DEVICES": visible})
    chosen = [e["args"]["nvml_index"] for e in instants(trace, vocab, "nvml_device")]
    assert chosen == ([1] if visible == "1,x,0" else [])


def test_without_cuda_visible_devices_every_device_is_followed(traced, vocab):
    _, trace = traced(["0 - devices 2"])
    assert [e["args"]["nvml_index"] for e in instants(trace, vocab, "nvml_device")] == [0, 1]


def test_absent_nvml_is_said_once_and_nothing_else_changes(traced, vocab):
    _, trace = traced([], nvml=False)
    state = nvml_state(trace, vocab)
    assert state["state"] == "absent" and "libnvidia-ml.so.1" in state["reason"]
    assert not instants(trace, vocab, "nvml_device")
    assert not counter(trace, vocab, "gpu_sm_clock")


def test_sampling_off(traced, vocab):
    _, trace = traced([], env={"CUDATRACE_NVML_MS": "0"})
    assert nvml_state(trace, vocab)["state"] == "off"
    assert not instants(trace, vocab, "nvml_device")


def test_a_bad_interval_is_refused_with_one_warning(traced, vocab):
    completed, trace = traced([], env={"CUDATRACE_NVML_MS": "fast"})
    assert completed.stderr.count("CUDATRACE_NVML_MS=fast") == 1
    assert nvml_state(trace, vocab)["interval_ms"] == 100


def test_the_interval_is_the_one_set(traced, vocab):
    _, trace = traced([], 600, env={"CUDATRACE_NVML_MS": "20"})
    times = [ts for ts, _ in counter(trace, vocab, "gpu_sm_clock")]
    gaps = sorted(b - a for a, b in zip(times, times[1:]))
    assert len(times) >= 10 and 15 * MS <= gaps[len(gaps) // 2] <= 60 * MS


def test_a_failing_call_leaves_out_its_measure_only(traced, vocab):
    _, trace = traced(["0 - fail nvmlDeviceGetPowerUsage"])
    assert not counter(trace, vocab, "gpu_power")
    assert len(counter(trace, vocab, "gpu_sm_clock")) >= 3
    state = nvml_state(trace, vocab)
    assert state["state"] == "sampling" and state["failed_calls"] >= 3


def test_nvml_that_will_not_start(traced, vocab):
    _, trace = traced(["0 - fail nvmlInit_v2"])
    state = nvml_state(trace, vocab)
    assert state["state"] == "failed" and "nvmlInit_v2" in state["reason"]


def test_a_lost_device_stops_its_samples(traced, vocab):
    _, trace = traced(["0 - devices 2", "150 1 lost 1"], 500)
    lost, = [e for e in instants(trace, vocab, "nvml") if "device" in e["args"]]
    assert (lost["args"]["state"], lost["args"]["device"]) == ("lost", 1)
    after = [ts for ts, _ in counter(trace, vocab, "gpu_sm_clock", 1) if ts >= lost["ts"]]
    assert not after
    assert [ts for ts, _ in counter(trace, vocab, "gpu_sm_clock", 0) if ts > lost["ts"]]


def test_a_blocking_call_delays_neither_the_program_nor_the_end(traced, vocab):
    start = time.monotonic()
    completed, trace = traced(["0 - block nvmlDeviceGetPowerUsage 8000"], 300)
    assert time.monotonic() - start < 3
    state = nvml_state(trace, vocab)
    assert state["state"] == "stuck", state
    assert len(trace.slices) > 0  # the calls' slices all came


def test_another_process_comes_and_goes(traced, vocab, tmp_path):
    import subprocess
    other = subprocess.Popen(["sleep", "30"])
    try:
        _, trace = traced([f"100 0 process {other.pid} 2048", f"250 0 process_end {other.pid}"],
                          500)
    finally:
        other.kill()
        other.wait()
    started, = instants(trace, vocab, "gpu_process_start")
    ended, = instants(trace, vocab, "gpu_process_end")
    assert (started["args"]["pid"], started["args"]["bytes"], started["args"]["name"]) == (
        other.pid, 2048, "sleep")
    assert ended["args"]["pid"] == other.pid
    assert 100 * MS <= ended["ts"] - started["ts"] <= 260 * MS


def test_more_processes_than_the_first_array_holds_are_read_again_not_misread(traced, vocab):
    """40 compute processes: the first call's 32 places are too few, NVML answers
    INSUFFICIENT_SIZE with the count it needs and fills nothing; the sampler asks again with
    room for them all and keeps the first 32 it was given, exactly."""
    pids = [4_000_000 + i for i in range(40)]
    _, trace = traced([f"0 0 process {pid} {pid - 3_999_000}" for pid in pids])
    started = {e["args"]["pid"]: e["args"]["bytes"]
               for e in instants(trace, vocab, "gpu_process_start")}
    assert started == {pid: pid - 3_999_000 for pid in pids[:32]}
    assert nvml_state(trace, vocab)["failed_calls"] == 0


REFUSALS = {4: "NVML_ERROR_NO_PERMISSION", 8: "NVML_ERROR_INSUFFICIENT_POWER",
            11: "NVML_ERROR_IRQ_ISSUE"}


@pytest.mark.parametrize("code", sorted(REFUSALS))
def test_a_device_nvml_counts_but_will_not_open_is_unreadable_not_lost(traced, vocab, code):
    """nvmlDeviceGetCount_v2 counts a device whose handle NVML refuses: it is said once to be
    unreadable, with NVML's reason, never lost; the other device is sampled as ever."""
    _, trace = traced(["0 - devices 2", f"0 1 handle_error {code}"])
    said, = [e["args"] for e in instants(trace, vocab, "nvml") if "device" in e["args"]]
    assert (said["state"], said["device"]) == ("unreadable", 1)
    assert said["reason"].startswith(REFUSALS[code] + " ")
    assert not counter(trace, vocab, "gpu_sm_clock", 1)
    assert len(counter(trace, vocab, "gpu_sm_clock", 0)) >= 3


def test_unreadable_twin_both_devices_open(traced, vocab):
    _, trace = traced(["0 - devices 2"])
    assert not [e for e in instants(trace, vocab, "nvml") if "device" in e["args"]]
    assert len(counter(trace, vocab, "gpu_sm_clock", 1)) >= 3
