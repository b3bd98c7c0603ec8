"""The report's view of the GPU's own state: the gpu_health block and the NVML findings.

Each case traces tests/programs/gpu_steps with the NVML double scripted for one fact (a power
cap, heat, a low clock, a narrow link, another process, a compute mode, ECC errors), then
reads `cudatrace report --json`: the finding must come with its exact numbers, and its healthy
twin, which differs in that one fact or in what makes it harmless (GpuIdle, a link trained
down while no copy ran, the process's own pid), must get no NVML finding at all.
"""
import os
import subprocess
import pytest

import cudatrace_cmd
from test_collector_nvml import node_of

NVML_FINDINGS = {"power-capped", "thermal-throttle", "clocks-low", "pcie-downgraded",
                 "gpu-shared", "compute-mode", "ecc-errors"}
MS = 1_000_000


@pytest.fixture
def reported(trace_run, build_dir, tmp_path):
    """reported(script, ms=500, copies=0, report_args=(), program="gpu_steps", env={},
    status=0) -> (report JSON, pid); the program's stdout is in run.stdout."""
    def run(script, ms=500, copies=0, report_args=(), program="gpu_steps", env=None, status=0):
        path = tmp_path / f"script{len(list(tmp_path.glob('script*')))}"
        path.write_text("".join(line + "\n" for line in script))
        env = {"LD_LIBRARY_PATH": os.path.join(build_dir, "double") + ":" +
               os.path.join(build_dir, "nvml"), "CT_DOUBLE_NVML_SCRIPT": path, **node_of(script),
               **(env or {})}
        args = (ms, copies) if program == "gpu_steps" else (ms,)
        completed, _, _ = trace_run(program, *args, env=env)
        assert completed.returncode == status, completed.stderr
        run.stdout = completed.stdout
        trace = completed.run_dir / "trace.pftrace.zst"
        run.trace = trace
        return cudatrace_cmd.report(build_dir, *report_args, trace), completed.pid
    return run


def nvml_findings(report):
    return {f["id"]: f for f in report["findings"] if f["id"] in NVML_FINDINGS}


def health(report, device=0):
    found = [d for d in report["processes"][0]["gpu_health"] if d["device"] == device]
    assert len(found) == 1, report["processes"][0]["gpu_health"]
    return found[0]


def test_a_healthy_gpu_has_a_block_and_no_finding(reported):
    report, _ = reported([])
    assert nvml_findings(report) == {}
    d = health(report)
    assert d["busy_samples"] == d["samples"] >= 4
    assert d["sm_clock_mhz"] == {"median": 1980, "min": 1980, "max": 1980}
    assert d["power_mw"]["median"] == 300000 and d["default_power_limit_mw"] == 700000
    assert (d["pcie_generation_max"], d["pcie_width_max"]) == (5, 16)
    assert d["busy_ns"] == d["busy_samples"] * 100 * MS
    assert report["processes"][0]["nvml"] == {
        "state": "sampling", "reason": "", "driver_version": "580.65.06", "failed_calls": 0,
        "unreadable": [], "denied": []}


def test_medians_and_extremes_are_over_busy_samples_only(reported):
    # Phases of several sampling intervals each, so a loaded machine's late samples still
    # land in every one of them.
    report, _ = reported(["0 0 util_gpu 0", "0 0 sm_clock 300", "400 0 util_gpu 80",
                          "400 0 sm_clock 1700", "1000 0 sm_clock 1900"], ms=1500)
    d = health(report)
    assert 1 <= d["samples"] - d["busy_samples"] <= 5
    assert d["sm_clock_mhz"]["min"] == 1700 and d["sm_clock_mhz"]["max"] == 1900
    assert d["utilization_percent"]["min"] == 80


@pytest.mark.finding("power-capped")
def test_power_capped(reported):
    report, _ = reported(["0 0 reasons 4", "0 0 power_limit_mw 300000", "0 0 power_mw 299000"])
    f = nvml_findings(report)
    assert set(f) == {"power-capped"}
    e = f["power-capped"]["evidence"]
    assert f["power-capped"]["severity"] == "warning"
    assert (e["share"], e["enforced_limit_mw"], e["default_limit_mw"], e["power_median_mw"]) == (
        1, 300000, 700000, 299000)
    assert e["covered_ns"] == e["busy_ns"] == health(report)["busy_ns"]
    assert "300 W against the default 700 W" in f["power-capped"]["message"]


@pytest.mark.twin("power-capped")
def test_power_capped_twin_idle_is_not_throttling(reported):
    report, _ = reported(["0 0 reasons 1", "0 0 power_limit_mw 300000"])
    assert nvml_findings(report) == {}


@pytest.mark.twin("power-capped")
def test_power_capped_below_its_threshold(reported):
    report, _ = reported(["0 0 reasons 4"], report_args=("--threshold", "power_cap_share=1.01"))
    assert nvml_findings(report) == {}


@pytest.mark.finding("thermal-throttle")
def test_thermal_throttle(reported):
    report, _ = reported(["0 0 reasons 0x40", "0 0 temp_c 91", "0 0 sm_clock 1000"])
    f = nvml_findings(report)
    assert set(f) == {"thermal-throttle"}  # the low clock is explained: no clocks-low
    e = f["thermal-throttle"]["evidence"]
    assert (e["share"], e["temperature_median_c"], e["temperature_max_c"]) == (1, 91, 91)


@pytest.mark.twin("thermal-throttle")
def test_thermal_twin_hot_but_not_slowed(reported):
    report, _ = reported(["0 0 temp_c 83"])
    assert nvml_findings(report) == {}


@pytest.mark.finding("clocks-low")
def test_clocks_low_names_the_other_reason(reported):
    report, _ = reported(["0 0 sm_clock 990", "0 0 reasons 0x8"])
    f = nvml_findings(report)
    assert set(f) == {"clocks-low"}
    e = f["clocks-low"]["evidence"]
    assert (e["sm_clock_median_mhz"], e["sm_clock_max_mhz"]) == (990, 1980)
    assert "50% of its 1980 MHz maximum (reason: hardware slowdown)" in f["clocks-low"]["message"]


@pytest.mark.twin("clocks-low")
def test_clocks_low_twin_at_four_fifths(reported):
    report, _ = reported(["0 0 sm_clock 1584"])
    assert nvml_findings(report) == {}


@pytest.mark.finding("pcie-downgraded")
def test_pcie_downgraded_while_copies_run(reported):
    report, _ = reported(["0 0 pcie_gen 3", "0 0 pcie_width 8"], copies=1)
    f = nvml_findings(report)
    assert set(f) == {"pcie-downgraded"}
    e = f["pcie-downgraded"]["evidence"]
    assert (e["generation"], e["width"], e["generation_max"], e["width_max"], e["share"]) == (
        3, 8, 5, 16, 1)
    assert "copy_bandwidth_gbps" not in e  # no CUPTI: the copies were not timed on the GPU
    assert health(report)["copy_samples_link_below_max"] == health(report)["copy_samples"] >= 3


def test_pcie_downgraded_gives_the_copies_achieved_bandwidth(reported, build_dir):
    """With the driver double's CUPTI, each 1 MiB copy takes 1000 + 2**20 / 5 ns on the GPU
    (CT_DOUBLE_COPY_BYTES_PER_NS=5): the finding gives that bandwidth beside the Gen3 x8 link's
    (8 x 0.985 GB/s) and the Gen5 x16 one's (16 x 3.938 GB/s)."""
    env = {"LD_LIBRARY_PATH": ":".join(os.path.join(build_dir, d)
                                       for d in ("double", "driver", "nvml")),
           "CT_DOUBLE_DRIVER": 1, "CT_DOUBLE_COPY_BYTES_PER_NS": 5}
    report, _ = reported(["0 0 pcie_gen 3", "0 0 pcie_width 8"], copies=1, env=env)
    f = nvml_findings(report)
    assert set(f) == {"pcie-downgraded"}
    e = f["pcie-downgraded"]["evidence"]
    copies = int(reported.stdout.split()[1])
    assert e["copy_bandwidth_gbps"] == pytest.approx((1 << 20) / (1000 + (1 << 20) // 5), 1e-12)
    assert (e["link_gbps"], e["link_max_gbps"]) == (pytest.approx(7.88), pytest.approx(63.008))
    assert f"CUPTI's {copies} copies across it moved {copies:.1f} MiB at 4.98 GB/s " \
        "(the link as it ran carries 7.88 GB/s, at its best 63.01 GB/s)" in \
        f["pcie-downgraded"]["message"]


@pytest.mark.twin("pcie-downgraded")
def test_pcie_twin_link_down_without_copies(reported):
    report, _ = reported(["0 0 pcie_gen 1", "0 0 pcie_width 1"], copies=0)
    assert nvml_findings(report) == {}
    assert health(report)["copy_samples"] == 0


@pytest.mark.twin("pcie-downgraded")
def test_pcie_twin_full_link_with_copies(reported):
    report, _ = reported([], copies=1)
    assert nvml_findings(report) == {}
    assert health(report)["copy_samples"] >= 3


@pytest.mark.finding("gpu-shared")
def test_gpu_shared(reported):
    other = subprocess.Popen(["sleep", "30"])
    try:
        report, pid = reported(["0 0 process parent 1000", f"0 0 process {other.pid} 3145728"])
    finally:
        other.kill()
        other.wait()
    f = nvml_findings(report)
    assert set(f) == {"gpu-shared"}
    e = f["gpu-shared"]["evidence"]
    assert (e["processes"], e["pid"], e["bytes"]) == (1, other.pid, 3145728)
    assert f"pid {other.pid} (sleep), 3 MiB" in f["gpu-shared"]["message"]
    assert health(report)["other_processes"] == [
        {"pid": other.pid, "name": "sleep", "bytes": 3145728}]


@pytest.mark.twin("gpu-shared")
def test_gpu_shared_twin_only_the_process_itself(reported):
    report, _ = reported(["0 0 process parent 1000"])
    assert nvml_findings(report) == {}
    assert health(report)["other_processes"] == []


@pytest.mark.finding("compute-mode")
@pytest.mark.parametrize("mode", [2, 3])
def test_compute_mode(reported, mode):
    report, _ = reported([f"0 0 compute_mode {mode}"])
    f = nvml_findings(report)
    assert set(f) == {"compute-mode"}
    assert (f["compute-mode"]["severity"], f["compute-mode"]["evidence"]["compute_mode"]) == (
        "info", mode)
    assert f["compute-mode"]["evidence"]["refused_calls"] == 0


UNAVAILABLE = {"CT_DOUBLE_DEVICES_UNAVAILABLE": 1}


@pytest.mark.finding("compute-mode")
def test_compute_mode_that_explains_failed_calls_is_an_error(reported):
    """busy_device's every cudaMalloc fails with cudaErrorDevicesUnavailable (46) on a device in
    the exclusive-process mode: the finding becomes an error and counts them all."""
    report, _ = reported(["0 0 compute_mode 3"], ms=400, program="busy_device", env=UNAVAILABLE,
                         status=1)
    failed = int(reported.stdout.split()[3])
    assert reported.stdout == f"devices 1 failed {failed} error 46\n" and failed == 20
    f = nvml_findings(report)
    assert set(f) == {"compute-mode"}
    e = f["compute-mode"]
    assert (e["severity"], e["evidence"]["compute_mode"], e["evidence"]["refused_calls"]) == (
        "error", 3, failed)
    assert f"it explains the {failed} calls that failed with cudaErrorDevicesUnavailable" in \
        e["message"]


@pytest.mark.twin("compute-mode")
def test_calls_refused_in_the_default_mode_are_not_the_modes(reported):
    """The twin: the same refusals on a device in the default mode give no compute-mode."""
    report, _ = reported([], ms=400, program="busy_device", env=UNAVAILABLE, status=1)
    assert "compute-mode" not in nvml_findings(report)


GPU0 = "GPU-c0ffee00-0000-4000-8000-000000000000"
MIG1 = "MIG-c0ffee00-0002-4000-8000-000000000000"  # the NVML double's second instance of GPU 0


def health_gpu_uuids(report):
    return [d["gpu_uuid"] for d in report["processes"][0]["gpu_health"]]


def test_a_mig_instance_is_sampled_for_its_own_and_its_gpu_for_the_rest(reported):
    """CUDA_VISIBLE_DEVICES names a MIG instance: its UUID, name, memory (an eighth of the
    GPU's in the double) and processes are its own, the clocks and power its GPU's; NVML gives
    no utilization in MIG mode, so the busy samples are those not idle by the clock-event
    reasons, and the GPU's power cap is found."""
    report, _ = reported(["0 0 mig 2", "0 0 reasons 4", "0 0 power_limit_mw 300000",
                          "0 0 power_mw 299000"], env={"CUDA_VISIBLE_DEVICES": MIG1})
    d = health(report)
    assert (d["uuid"], d["gpu_uuid"], d["name"]) == (
        MIG1, GPU0, "NVIDIA H100 80GB HBM3 MIG 1g.10gb (double)")
    assert "utilization_percent" not in d and d["busy_samples"] == d["samples"] >= 4
    assert d["power_mw"]["median"] == 299000 and d["sm_clock_max_mhz"] == 1980
    assert report["processes"][0]["memory"]["nvml"][0]["used_peak_bytes"] == (512 << 20) >> 3
    assert set(nvml_findings(report)) == {"power-capped"}


def test_a_healthy_mig_instance_has_no_finding_and_an_idle_one_no_busy_sample(reported):
    report, _ = reported(["0 0 mig 2"], env={"CUDA_VISIBLE_DEVICES": MIG1})
    assert nvml_findings(report) == {} and health(report)["busy_samples"] >= 4
    report, _ = reported(["0 0 mig 2", "0 0 reasons 1"], env={"CUDA_VISIBLE_DEVICES": MIG1})
    assert health(report)["busy_samples"] == 0 and nvml_findings(report) == {}


def test_a_mig_instance_nvml_does_not_list_is_not_sampled(reported):
    report, _ = reported(["0 0 mig 1"], env={"CUDA_VISIBLE_DEVICES": MIG1})
    assert report["processes"][0]["gpu_health"] == []
    assert health_gpu_uuids(reported(["0 0 mig 2"])[0]) == [""]  # unset: the GPU itself


@pytest.mark.finding("ecc-errors")
def test_ecc_errors(reported):
    report, _ = reported(["0 0 ecc_corrected 10", "200 0 ecc_corrected 14",
                          "0 0 ecc_uncorrected 2"])
    f = nvml_findings(report)
    assert set(f) == {"ecc-errors"}
    e = f["ecc-errors"]["evidence"]
    assert (e["uncorrected"], e["corrected_during_run"]) == (2, 4)


@pytest.mark.twin("ecc-errors")
def test_ecc_twin_old_corrected_errors_only(reported):
    report, _ = reported(["0 0 ecc_corrected 10"])
    assert nvml_findings(report) == {}


def test_the_text_report_shows_the_device(reported, build_dir):
    reported(["0 0 sm_clock 1234", "0 0 temp_c 71"])
    out = cudatrace_cmd.run(build_dir, "report", reported.trace)
    line, = [l for l in out.stdout.splitlines() if l.lstrip().startswith("GPU 0")]
    assert "SM clock median 1234 MHz (max 1980); power median 300 W (limit 700 W, default " \
           "700 W); 71 C (max 71 C)" in line
    assert "warning clocks-low" in out.stdout


def test_a_trace_without_nvml_has_no_block(reported, trace_run, build_dir):
    completed, _, _ = trace_run("gpu_steps", 100, 0)
    p = cudatrace_cmd.report(build_dir, completed.run_dir / "trace.pftrace.zst")["processes"][0]
    assert p["nvml"]["state"] == "absent" and p["gpu_health"] == []


def test_memory_the_tracer_cannot_see_is_named_as_a_difference(reported, build_dir):
    # 1 GiB in use, then 3 GiB: the most NVML saw, against the tracer's own peak
    report, _ = reported(["0 0 mem_used 1073741824", "200 0 mem_used 3221225472"])
    memory = report["processes"][0]["memory"]
    assert memory["nvml"] == [{"device": 0, "used_peak_bytes": 3 << 30,
                               "unseen_bytes": (3 << 30) - memory["peak_bytes"]}]
    text = cudatrace_cmd.run(build_dir, "report", reported.trace).stdout
    assert "NVML: GPU 0 had up to 3.00 GiB in use, " in text
    assert "more than the tracer saw (the CUDA context" in text


def test_healthy_twin_no_memory_unseen(reported):
    report, _ = reported(["0 0 mem_used 4096"])
    memory = report["processes"][0]["memory"]
    assert memory["peak_bytes"] > 4096
    assert memory["nvml"] == [{"device": 0, "used_peak_bytes": 4096, "unseen_bytes": 0}]


def test_a_device_nvml_may_not_open_is_reported_unreadable_not_lost(reported, build_dir):
    report, _ = reported(["0 - devices 2", "0 1 handle_error 4"])
    nvml = report["processes"][0]["nvml"]
    assert nvml["unreadable"] == [{"device": 1, "reason": nvml["unreadable"][0]["reason"]}]
    assert nvml["unreadable"][0]["reason"].startswith("NVML_ERROR_NO_PERMISSION ")
    assert [d["device"] for d in report["processes"][0]["gpu_health"]] == [0]
    assert health(report)["lost_ns"] == 0
    text = cudatrace_cmd.run(build_dir, "report", reported.trace).stdout
    assert "GPU 1          not readable through NVML: NVML_ERROR_NO_PERMISSION" in text
    assert "lost" not in text


def test_unreadable_twin_every_device_readable(reported):
    report, _ = reported(["0 - devices 2"])
    assert report["processes"][0]["nvml"]["unreadable"] == []
    assert [d["device"] for d in report["processes"][0]["gpu_health"]] == [0, 1]


def bursts(clock_mhz, ms=1500, period=300, burst=100):
    """A bursty job as NVML reports it: each burst busy throughout NVML's window (100%) at
    `clock_mhz`; then, idle at 300 MHz, a tail whose utilization still counts the burst
    (40%), as it would for up to a second after."""
    lines = []
    for t in range(0, ms, period):
        lines += [f"{t} 0 util_gpu 100", f"{t} 0 sm_clock {clock_mhz}",
                  f"{t + burst} 0 util_gpu 40", f"{t + burst} 0 sm_clock 300"]
    return lines


def test_a_bursty_job_at_full_clocks_is_not_clocks_low(reported):
    """Its idle tails read above 0% at idle clocks: counted busy throughout, as NVML's
    utilization does not say, they made the median SM clock 300 MHz."""
    report, _ = reported(bursts(1980), ms=1500)
    assert nvml_findings(report) == {}
    d = health(report)
    assert d["busy_samples"] == d["samples"] and d["full_window_samples"] >= 3
    assert d["busy_ns"] < d["busy_samples"] * 100 * MS


def test_a_bursty_job_at_low_clocks_is_still_clocks_low(reported):
    report, _ = reported(bursts(990), ms=1500)
    f = nvml_findings(report)
    assert set(f) == {"clocks-low"}
    e = f["clocks-low"]["evidence"]
    assert (e["sm_clock_median_mhz"], e["sm_clock_max_mhz"]) == (990, 1980)
    assert e["covered_ns"] == health(report)["full_window_samples"] * 100 * MS


GPU1 = "GPU-c0ffee01-0000-4000-8000-000000000001"
# Two GPUs; CUDA puts the one at PCI position 1 first (fastest first), NVML its PCI order.
# The process's GPU (NVML's 0, CUDA's 1) runs at half clock, the other is healthy.
REVERSED = {"CT_DOUBLE_FASTEST_FIRST": "1,0"}
TWO_GPUS = ["0 - devices 2", "0 0 sm_clock 990"]


def test_cuda_visible_devices_index_is_cudas_not_nvmls(reported):
    """CUDA_VISIBLE_DEVICES=1 is CUDA's second device, the one at PCI position 0: its health,
    matched by the UUID the runtime gives, not NVML's device 1."""
    report, _ = reported(TWO_GPUS, env={**REVERSED, "CUDA_VISIBLE_DEVICES": "1"})
    d = health(report)
    assert (d["nvml_index"], d["uuid"]) == (0, GPU0)
    assert set(nvml_findings(report)) == {"clocks-low"}
    assert nvml_findings(report)["clocks-low"]["evidence"]["sm_clock_median_mhz"] == 990


def test_cuda_visible_devices_twin_in_pci_order(reported):
    """Under CUDA_DEVICE_ORDER=PCI_BUS_ID, CUDA's device 1 is NVML's 1: the healthy one."""
    report, _ = reported(TWO_GPUS, env={**REVERSED, "CUDA_VISIBLE_DEVICES": "1",
                                        "CUDA_DEVICE_ORDER": "PCI_BUS_ID"})
    d = health(report)
    assert (d["nvml_index"], d["uuid"]) == (1, GPU1)
    assert nvml_findings(report) == {}


def test_without_cuda_visible_devices_each_ordinal_is_its_own_gpu(reported):
    report, _ = reported(TWO_GPUS, env=REVERSED)
    assert [(d["device"], d["nvml_index"]) for d in report["processes"][0]["gpu_health"]] == [
        (0, 1), (1, 0)]


def test_the_mig_instance_cuda_runs_on_is_followed_and_what_is_denied_said_once(reported):
    """No CUDA_VISIBLE_DEVICES, a GPU in MIG mode: CUDA runs the process on its instance 2
    (the runtime's UUID says so), which is followed for its memory; the GPU's aggregate memory
    and processes, which an unprivileged caller may not read, are never asked for."""
    report, _ = reported(["0 0 mig 2", "0 - unprivileged 1"],
                         env={"CT_DOUBLE_MIG_INSTANCE": 2})
    d = health(report)
    assert (d["uuid"], d["gpu_uuid"]) == (MIG1, GPU0)
    assert report["processes"][0]["memory"]["nvml"][0]["used_peak_bytes"] == (512 << 20) >> 3
    assert report["processes"][0]["nvml"]["failed_calls"] == 0
    assert report["processes"][0]["nvml"]["denied"] == []


def test_aggregate_queries_denied_are_said_once_per_device(reported):
    """CUDA_VISIBLE_DEVICES names the GPU itself (its UUID) while it is in MIG mode, and the
    caller lacks the privileges: its memory and processes are said once to be denied, not
    counted as failed in every sample."""
    report, _ = reported(["0 0 mig 2", "0 - unprivileged 1"],
                         env={"CUDA_VISIBLE_DEVICES": GPU0})
    nvml = report["processes"][0]["nvml"]
    assert nvml["failed_calls"] == 0
    assert nvml["denied"] == [{"device": 0, "reason": "NVML_ERROR_NO_PERMISSION: GPU 0 memory "
                               "used (bytes), compute processes"}]


def test_denied_twin_privileged(reported):
    report, _ = reported(["0 0 mig 2"], env={"CUDA_VISIBLE_DEVICES": GPU0})
    assert report["processes"][0]["nvml"]["denied"] == []
    assert report["processes"][0]["memory"]["nvml"][0]["used_peak_bytes"] == 512 << 20
