"""`cudatrace diff BEFORE AFTER`: pairs of runs of tests/programs/step_loop.c on the CUDA doubles
that differ in one known thing each (a slower kernel, an extra synchronising call per step at a
known line, the runtime from another directory at another version, more memory held, an
environment variable) name that thing first and nothing that did not change; two runs of the same
program, one of them on a loaded machine, show no significant change. Beside them: two job
directories with one rank changed, a summary as a side, --fail-on-regression, runs without steps
(per-second figures, said so), different programs (said so), and bad input in one line."""
import json
import os
import re
import subprocess
import sys

import pytest

import cudatrace_cmd

KERNEL_NS = 100000
STEPS = 20
WAIT_MS = 20  # each step's input wait: a busy machine's late wake-ups are a small share of it
LOOP = ("--steps", STEPS, "--wait-ms", WAIT_MS)


def clean_env():
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("CUDATRACE_", "CT_DOUBLE_", "RANK", "LOCAL_RANK", "WORLD_SIZE",
                                 "CUDA_", "SLURM_", "TORCHELASTIC_", "MASTER_"))
            and k not in ("LD_PRELOAD", "LD_LIBRARY_PATH")}


class Runs:
    """Traced runs on the runtime and driver doubles with GPU timings, made once per module and
    named: run(name, *args, env=...) -> the trace's path."""

    def __init__(self, build_dir, folder):
        self.build_dir, self.folder, self.made = build_dir, folder, {}

    def run(self, name, *args, program="step_loop", library_path=None, **env):
        if name in self.made:
            return self.made[name]
        trace = self.folder / f"{name}.pftrace.zst"
        double = os.path.join(self.build_dir, "double")
        full = clean_env()
        full.update(LD_PRELOAD=os.path.join(self.build_dir, "libcudatrace.so"),
                    LD_LIBRARY_PATH=(library_path or double) + ":" +
                    os.path.join(self.build_dir, "driver"),
                    CT_DOUBLE_DRIVER="1", CUDATRACE_GPU_RECORDS="tracks",
                    CT_DOUBLE_KERNEL_NS=str(KERNEL_NS), CT_DOUBLE_DRIVER_VERSION="13010",
                    CUDATRACE_OUTPUT=str(trace), CUDATRACE_QUIET="1", CUDATRACE_SAMPLE_HZ="100")
        full.update({k: str(v) for k, v in env.items()})
        done = subprocess.run([os.path.join(self.build_dir, "tests", program), *map(str, args)],
                              env=full, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        self.made[name] = trace
        return trace


@pytest.fixture(scope="module")
def runs(build_dir, tmp_path_factory):
    return Runs(build_dir, tmp_path_factory.mktemp("diff"))


def baseline(runs):
    return runs.run("baseline", *LOOP)


def changes(pair):
    """What moved in a pair, as {section: [names]}: empty lists where nothing did."""
    moved = {"environment": [e["name"] for e in pair["environment"]],
             "kernels": [k["name"] for k in pair["kernels"]],
             "calls": [c["name"] for c in pair["calls"]],
             "blocking_sites": [s["name"] for s in pair["blocking_sites"]],
             "memory": [k for k, v in pair["memory"].items() if v["moved"]],
             "findings": [f["finding"]["id"] for f in pair["findings"]["appeared"] +
                          pair["findings"]["went_away"] if f["counted"]]}
    moved["steps"] = [k for k, v in [("median_ns", pair["steps"]["median_ns"]),
                                     *pair["steps"]["parts"].items()] if v["moved"]]
    return moved


def only(moved, **expected):
    """Every section of `moved` is empty but those given, which hold exactly what is given."""
    return {k: v for k, v in moved.items() if v} == expected


def source_line(text):
    path = os.path.join(os.path.dirname(__file__), "programs", "step_loop.c")
    with open(path) as source:
        (line,) = [n for n, code in enumerate(source, 1) if text in code]
    return f"step_loop.c:{line}"


def test_same_program_twice_is_no_significant_change(runs, build_dir):
    before, after = baseline(runs), runs.run("again", *LOOP)
    text = cudatrace_cmd.run(build_dir, "diff", before, after).stdout
    assert text.startswith("no significant change (step time "), text
    d = cudatrace_cmd.json_of(build_dir, "diff", "--json", before, after)
    assert (d["schema"], d["changed"], d["step_time_rise"]) == ("cudatrace.diff/1", 0, 0)
    (pair,) = d["pairs"]
    assert pair["basis"] == "step" and only(changes(pair))


def test_same_program_on_a_loaded_machine(runs, build_dir):
    """Two spinning processes on the machine's cores while the second run steps: its steps and
    its host calls stretch, within what the steps' own spread allows."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        loaded = runs.run("loaded", *LOOP)
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
    d = cudatrace_cmd.json_of(build_dir, "diff", "--json", baseline(runs), loaded)
    assert d["changed"] == 0, d["headline"]
    assert d["headline"].startswith("no significant change")


def slower_kernel(runs):
    """Each launch of step_kernel takes 2 ms instead of 100 us."""
    return runs.run("slower_kernel", *LOOP, CT_DOUBLE_KERNEL_NS=20 * KERNEL_NS)


def test_a_slower_kernel(runs, build_dir):
    """Three launches a step of a kernel 1.9 ms slower make the step 5.7 ms longer, and the GPU's
    busy time and the synchronisation that waits for it grow."""
    slower = slower_kernel(runs)
    d = cudatrace_cmd.json_of(build_dir, "diff", "--json", baseline(runs), slower)
    (pair,) = d["pairs"]
    assert re.match(r"step time \+\d+% \([\d.]+ ms → [\d.]+ ms\): step_kernel \+5\.700 ms a "
                    r"step \(100\.000 us → 2\.000 ms each\)", d["headline"]), d["headline"]
    (kernel,) = pair["kernels"]
    assert (kernel["count"]["before"], kernel["count"]["after"]) == (3, 3)
    assert (kernel["ns"]["before"], kernel["ns"]["after"]) == (3 * KERNEL_NS, 60 * KERNEL_NS)
    # The synchronisation waits for the kernels: its time grows with them, which a loaded machine
    # may hide in its own stretch of the host's calls; nothing else moves.
    moved = changes(pair)
    sync_line = source_line("cudaDeviceSynchronize()")
    assert moved["steps"][:2] == ["median_ns", "gpu_busy_ns"]
    assert set(moved["steps"]) <= {"median_ns", "gpu_busy_ns", "sync_ns"}, json.dumps(
        pair["steps"]["parts"])
    assert set(moved["calls"]) <= {"cudaDeviceSynchronize"}
    assert set(moved["blocking_sites"]) <= {f"{sync_line} in main"}
    assert moved["environment"] == moved["memory"] == []
    assert 0.22 < d["step_time_rise"] < 0.33


def test_fail_on_regression(runs, build_dir):
    before = baseline(runs)
    slower, again = slower_kernel(runs), runs.run("again", *LOOP)
    gate = [cudatrace_cmd.run(build_dir, "diff", before, after, "--fail-on-regression", pct,
                              status=None).returncode
            for after, pct in [(slower, 15), (slower, 40), (again, 0)]]
    assert gate == [3, 0, 0]


def test_an_extra_synchronising_call_at_a_known_line(runs, build_dir):
    """The step also synchronises its stream after its launches: the wait moves into the new
    call, so the step time holds; the headline names the call and its line."""
    extra = runs.run("extra_sync", *LOOP, "--extra-sync")
    line = source_line("cudaStreamSynchronize(stream)")
    d = cudatrace_cmd.json_of(build_dir, "diff", "--json", baseline(runs), extra)
    (pair,) = d["pairs"]
    assert d["headline"].startswith("step time "), d["headline"]
    assert d["headline"].endswith(f": cudaStreamSynchronize new at {line} in main (1 a step)"), \
        d["headline"]
    # The wait for the kernels moves into the new call: the device synchronisation after it may
    # be said to take less time, nothing else.
    moved = changes(pair)
    device_sync = f"{source_line('cudaDeviceSynchronize()')} in main"
    assert moved["calls"][0] == "cudaStreamSynchronize" and pair["calls"][0]["only"] == "after"
    assert pair["calls"][0]["count"]["after"] == 1
    assert set(moved["calls"]) <= {"cudaStreamSynchronize", "cudaDeviceSynchronize"}
    assert moved["blocking_sites"][0] == f"{line} in main"
    assert set(moved["blocking_sites"]) <= {f"{line} in main", device_sync}
    assert only(moved, calls=moved["calls"], blocking_sites=moved["blocking_sites"]), moved


def test_the_runtime_from_another_directory_at_another_version(runs, build_dir, tmp_path):
    """A copy of the runtime in another directory, first on LD_LIBRARY_PATH, that says it is
    13.1 (CUPTI beside it is the same file, linked)."""
    other = tmp_path / "other"
    other.mkdir()
    (other / "libcudart.so.13").write_bytes(
        open(os.path.join(build_dir, "double", "libcudart.so.13"), "rb").read())
    os.symlink(os.path.join(build_dir, "double", "libcupti.so.13"), other / "libcupti.so.13")
    moved_runtime = runs.run("other_runtime", *LOOP,
                             library_path=f"{other}:{build_dir}/double",
                             CT_DOUBLE_RUNTIME_VERSION=13010)
    d = cudatrace_cmd.json_of(build_dir, "diff", "--json", baseline(runs), moved_runtime)
    (pair,) = d["pairs"]
    assert d["headline"].endswith(": cudart 13.0 → 13.1 from another file; LD_LIBRARY_PATH "
                                  "changed"), d["headline"]
    library, variable = pair["environment"]
    assert (library["kind"], library["how"]) == ("library", "another version, from another file")
    assert library["after"] == f"13.1 ({other}/libcudart.so.13)"
    assert (variable["kind"], variable["name"]) == ("variable", "LD_LIBRARY_PATH")
    assert only(changes(pair), environment=["cudart", "LD_LIBRARY_PATH"]), changes(pair)


def test_more_memory_held(runs, build_dir):
    bigger = runs.run("bigger_model", *LOOP, "--model-mb", 65)
    d = cudatrace_cmd.json_of(build_dir, "diff", "--json", baseline(runs), bigger)
    (pair,) = d["pairs"]
    assert d["headline"].endswith(": peak memory +64.00 MiB (1.00 MiB → 65.00 MiB)"), \
        d["headline"]
    assert pair["memory"]["step_end_bytes"]["after"] == 65 << 20
    assert only(changes(pair), memory=["peak_bytes", "step_end_bytes"]), changes(pair)


def test_an_environment_variable(runs, build_dir):
    lazy = runs.run("lazy_loading", *LOOP, CUDA_MODULE_LOADING="LAZY")
    d = cudatrace_cmd.json_of(build_dir, "diff", "--json", baseline(runs), lazy)
    (pair,) = d["pairs"]
    assert d["headline"].endswith(": CUDA_MODULE_LOADING unset → LAZY"), d["headline"]
    (variable,) = pair["environment"]
    assert (variable["before"], variable["after"], variable["how"]) == (None, "LAZY", "set")
    assert only(changes(pair), environment=["CUDA_MODULE_LOADING"]), changes(pair)
    text = cudatrace_cmd.run(build_dir, "diff", baseline(runs), lazy).stdout
    assert "\nenvironment\n  CUDA_MODULE_LOADING: unset → LAZY (set)\n" in text


def test_a_gpu_power_limit(runs, build_dir, tmp_path):
    """The NVML double says the GPU's enforced power limit is 300 W instead of 700 W."""
    library_path = f"{build_dir}/double:{build_dir}/nvml"
    scripts = {name: tmp_path / f"{name}.nvml" for name in ("default", "capped")}
    scripts["default"].write_text("")
    scripts["capped"].write_text("0 0 power_limit_mw 300000\n")
    before, after = (runs.run(f"gpu_{name}", 300, 0, program="gpu_steps",
                              library_path=library_path, CT_DOUBLE_NVML_SCRIPT=script)
                     for name, script in scripts.items())
    d = cudatrace_cmd.json_of(build_dir, "diff", "--json", before, after)
    (pair,) = d["pairs"]
    assert d["headline"].endswith(": GPU 0 power limit 700 W → 300 W"), d["headline"]
    assert pair["environment"] == [{"kind": "device", "name": "GPU 0 power limit",
                                    "before": "700 W", "after": "300 W", "how": "changed"}]
    assert only(changes(pair), environment=["GPU 0 power limit"]), changes(pair)


def test_a_variable_that_looks_like_a_secret_is_never_printed(runs, build_dir, tmp_path):
    """A trace never records one; a summary edited to hold one does not make the diff print it."""
    summary = tmp_path / "edited.json"
    cudatrace_cmd.run(build_dir, "report", "--summary", "-o", summary, baseline(runs))
    document = json.loads(summary.read_text())
    environment = document["traces"][0]["processes"][0]["report"]["identity"]["environment"]
    environment.update(NCCL_SOCKET_PASSWORD="pw-s3cr3t", CUDA_CACHE_DISABLE="1")
    summary.write_text(json.dumps(document))
    d = cudatrace_cmd.json_of(build_dir, "diff", "--json", baseline(runs), summary)
    assert [e["name"] for e in d["pairs"][0]["environment"]] == ["CUDA_CACHE_DISABLE"]
    text = cudatrace_cmd.run(build_dir, "diff", baseline(runs), summary).stdout
    for output in (json.dumps(d), text):
        assert "s3cr3t" not in output and "PASSWORD" not in output


def job(runs, folder, name, slow_rank=None, ranks=3):
    """Ranks of a torchrun job of three in one folder; `slow_rank` waits 15 ms longer for its
    input. The host sampler reads each thread every millisecond, 20 times a step and more: often
    enough to split a step's time outside CUDA calls into host work and an input wait."""
    folder.mkdir()
    for rank in range(ranks):
        wait = WAIT_MS + (15 if rank == slow_rank else 0)
        trace = runs.run(f"{name}-{rank}", "--steps", STEPS, "--wait-ms", wait, RANK=rank,
                         LOCAL_RANK=rank, WORLD_SIZE=3, CUDATRACE_SAMPLE_HZ=1000)
        os.link(trace, folder / f"rank{rank}.pftrace.zst")
    return folder


def test_job_directories_with_one_rank_changed(runs, build_dir, tmp_path):
    before = job(runs, tmp_path / "before", "job-a")
    after = job(runs, tmp_path / "after", "job-b", slow_rank=1)
    d = cudatrace_cmd.json_of(build_dir, "diff", "--json", before, after)
    assert [(p["before"]["rank"], p["after"]["rank"], p["changed"]) for p in d["pairs"]] == [
        (0, 0, 0), (1, 1, 1), (2, 2, 0)], json.dumps([changes(p) for p in d["pairs"]])
    # Rank 1 sleeps 15 ms longer outside CUDA calls (its input wait): the part that moved, unless a
    # loaded machine stretched the host's parts of the steps as much.
    assert re.match(r"rank 1: step time \+\d+% \([\d.]+ ms → [\d.]+ ms\)(: outside CUDA calls "
                    r"asleep \(an input wait\) \+1[2-6]\.\d+ ms a step)?; no significant change "
                    r"on the other 2$", d["headline"]), d["headline"]
    assert 0.65 < d["step_time_rise"] < 0.8
    parts = d["pairs"][1]["steps"]["parts"]
    assert 12e6 < parts["outside_waiting_ns"]["after"] - parts["outside_waiting_ns"]["before"] < 17e6
    assert parts["outside_running_ns"]["after"] < 1e6
    moved = changes(d["pairs"][1])
    assert moved["steps"][0] == "median_ns"
    assert set(moved["steps"]) <= {"median_ns", "outside_cuda_ns", "outside_waiting_ns"}
    assert only(moved, steps=moved["steps"]), moved
    text = cudatrace_cmd.run(build_dir, "diff", before, after).stdout
    assert "\nrank 1\nstep time (20 → 20 steps" in text
    assert text.endswith("\nno significant change: rank 0, rank 2\n"), text


def test_a_rank_on_one_side_only(runs, build_dir, tmp_path):
    before = job(runs, tmp_path / "before", "job-a")
    after = job(runs, tmp_path / "after", "job-a", ranks=2)
    d = cudatrace_cmd.json_of(build_dir, "diff", "--json", before, after)
    assert [p["before"]["rank"] for p in d["pairs"]] == [0, 1]
    assert [p["rank"] for p in d["only_before"]] == [2] and d["only_after"] == []
    assert d["changed"] == 1
    assert d["headline"] == "no significant change in the 2 pairs; only before: rank 2"


def test_a_summary_stands_for_its_trace(runs, build_dir, tmp_path):
    before = baseline(runs)
    slower = slower_kernel(runs)
    summary = tmp_path / "before.json"
    cudatrace_cmd.run(build_dir, "report", "--summary", "-o", summary, before)
    from_trace, from_summary = (cudatrace_cmd.json_of(build_dir, "diff", "--json", side, slower)
                                for side in (before, summary))
    from_summary["before"]["input"] = from_trace["before"]["input"]
    assert from_summary == from_trace


def test_a_summary_made_before_the_facts(runs, build_dir, tmp_path):
    """A summary without its processes' diff facts: the figures they hold are unknown on that
    side, never moved; the report's own figures are compared, its top kernels among them."""
    summary = tmp_path / "old.json"
    cudatrace_cmd.run(build_dir, "report", "--summary", "-o", summary, baseline(runs))
    document = json.loads(summary.read_text())
    for process in document["traces"][0]["processes"]:
        del process["diff"]
    summary.write_text(json.dumps(document))
    d = cudatrace_cmd.json_of(build_dir, "diff", "--json", summary, slower_kernel(runs))
    (pair,) = d["pairs"]
    assert [k["name"] for k in pair["kernels"]] == ["step_kernel"]
    assert pair["steps"]["median_ns"]["moved"] == 1 and pair["steps"]["rank_z"] is None
    assert all(part["before"] is None and not part["moved"]
               for part in pair["steps"]["parts"].values())
    step_end = pair["memory"]["step_end_bytes"]
    assert (step_end["before"], step_end["after"], step_end["moved"]) == (None, 1 << 20, 0)


def test_without_steps_per_second_figures_stand_in(runs, build_dir):
    """A loop of one kernel's launches has no steps: the diff says so and works per second."""
    before = runs.run("launches", "2000", program="launch_loop")
    after = runs.run("more_launches", "4000", program="launch_loop")
    d = cudatrace_cmd.json_of(build_dir, "diff", "--json", before, after)
    (pair,) = d["pairs"]
    assert (pair["basis"], pair["steps"]) == ("second", None)
    assert d["headline"].startswith("no steps on either side, figures per second of the CUDA "
                                    "part of the run stand in"), d["headline"]
    text = cudatrace_cmd.run(build_dir, "diff", before, after).stdout
    assert "\nstep time: no steps on either side; the figures below are per second" in text


def test_different_programs_are_said_and_compared(runs, build_dir):
    before = baseline(runs)
    after = runs.run("launches", "2000", program="launch_loop")
    d = cudatrace_cmd.json_of(build_dir, "diff", "--json", before, after)
    (pair,) = d["pairs"]
    assert pair["environment"][0] == {"kind": "program", "name": "program",
                                      "before": "step_loop", "after": "launch_loop",
                                      "how": "different programs"}
    assert d["headline"].startswith("no steps on the after side, figures per second of the "
                                    "CUDA part of the run stand in: different programs "
                                    "(step_loop → launch_loop)"), d["headline"]


def test_options_after_the_runs(runs, build_dir):
    before, after = baseline(runs), runs.run("again", *LOOP)
    d = cudatrace_cmd.json_of(build_dir, "diff", before, after, "--json")
    assert d["schema"] == "cudatrace.diff/1"


@pytest.mark.parametrize("args, status, says", [
    (["only-one"], 2, "diff: takes two runs, BEFORE and AFTER (1 given)"),
    (["a", "b", "c"], 2, "diff: takes two runs, BEFORE and AFTER (3 given)"),
    (["--fail-on-regression", "lots", "a", "b"], 2, "takes a percentage, not lots"),
    (["--bogus", "a", "b"], 2, "unknown option --bogus"),
])
def test_usage_errors(build_dir, args, status, says):
    done = cudatrace_cmd.run(build_dir, "diff", *args, status=status)
    assert done.returncode == status and says in done.stderr.splitlines()[0], done.stderr
    assert done.stdout == ""


def test_an_unreadable_side_is_one_line(runs, build_dir, tmp_path):
    missing = tmp_path / "missing.pftrace.zst"
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{not json")
    for bad in (missing, garbage):
        done = cudatrace_cmd.run(build_dir, "diff", baseline(runs), bad, status=1)
        assert done.returncode == 1 and done.stdout == "", done.stderr
        (line,) = done.stderr.splitlines()
        assert line.startswith(f"cudatrace: {bad}: "), line
