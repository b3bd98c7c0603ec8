"""Step time across the ranks of a job: four ranks of tests/programs/step_loop.c, each marking
its steps as NVTX ranges, rank 2 waiting 30 ms a step for its input where the others wait
10 ms. The job report gives each rank's median step time (within 5% of the median of the
program's own step times, step 1 apart as the report keeps it), names rank 2 the slowest, with
its median against the median of the ranks', and the median step time is a job figure that
rank 2 alone stands out on. In the healthy twin every rank waits 10 ms: no rank stands out on
it. Where only some ranks mark steps, the figure and the per-rank list are over those only
(docs/report-schema.md, `job.figures` and `job.steps`)."""
import re
import statistics

import pytest

import cudatrace_cmd
from test_report_job import launch

RANKS, SLOW, UNMARKED = 4, 2, 3
STEPS = 12
WAIT_MS, SLOW_WAIT_MS = 10, 30


def run_rank(build_dir, folder, rank, wait_ms, nvtx=True, steps=STEPS):
    """The program's own median step time over steps 2 to `steps`, as the report takes it."""
    done = launch(build_dir, folder / f"trace-{rank}.pftrace.zst",
                  ["step_loop", *(["--nvtx"] if nvtx else []), "--steps", steps,
                   "--wait-ms", wait_ms],
                  RANK=rank, LOCAL_RANK=rank, WORLD_SIZE=RANKS, SLURM_JOB_ID="31",
                  CUDATRACE_HOST="node-a")
    own = [int(w[2]) for w in (line.split() for line in done.stdout.splitlines())
           if w and w[0] == "step"]
    assert len(own) == steps, done.stdout
    return statistics.median_low(own[1:])


@pytest.fixture(scope="module")
def jobs(build_dir, tmp_path_factory):
    """{name: (folder, {rank: the program's own median step})} for the job with a slow rank,
    its healthy twin (the same traces but rank 2's, run at the others' pace) and a job whose
    rank 3 has no steps (the twin's traces but rank 3's, two unmarked steps)."""
    folders = {name: tmp_path_factory.mktemp(name) for name in ("slow", "healthy", "mixed")}
    own = {name: {} for name in folders}
    for rank in range(RANKS):
        if rank != SLOW:
            own["slow"][rank] = run_rank(build_dir, folders["slow"], rank, WAIT_MS)
            name = f"trace-{rank}.pftrace.zst"
            (folders["healthy"] / name).write_bytes((folders["slow"] / name).read_bytes())
            own["healthy"][rank] = own["slow"][rank]
    own["slow"][SLOW] = run_rank(build_dir, folders["slow"], SLOW, SLOW_WAIT_MS)
    own["healthy"][SLOW] = run_rank(build_dir, folders["healthy"], SLOW, WAIT_MS)
    for rank in range(RANKS):
        name = f"trace-{rank}.pftrace.zst"
        if rank != UNMARKED:
            (folders["mixed"] / name).write_bytes((folders["healthy"] / name).read_bytes())
            own["mixed"][rank] = own["healthy"][rank]
    # unmarked and too short for steps to be found in its calls
    run_rank(build_dir, folders["mixed"], UNMARKED, WAIT_MS, nvtx=False, steps=2)
    return {name: (folders[name], own[name]) for name in folders}


def step_figure(report):
    (figure,) = [f for f in report["job"]["figures"] if f["name"] == "step_ns"]
    return figure


def text_line(text, start):
    (line,) = [line for line in text.splitlines() if line.startswith(start)]
    return line


def test_each_ranks_median_step_and_the_slowest_rank(jobs, build_dir):
    folder, own = jobs["slow"]
    r = cudatrace_cmd.report(build_dir, folder, quiet=True)
    pids = {p["identity"]["rank"]: p["pid"] for p in r["processes"]}
    (steps,) = r["job"]["steps"]
    assert [(s["rank"], s["pid"], s["host"], s["count"]) for s in steps["ranks"]] == [
        (rank, pids[rank], "node-a", STEPS) for rank in range(RANKS)]
    for s in steps["ranks"]:
        assert abs(s["median_ns"] - own[s["rank"]]) < 0.05 * own[s["rank"]], (s, own)
    assert steps["slowest"] == steps["ranks"][SLOW]
    assert steps["median_ns"] == statistics.median(s["median_ns"] for s in steps["ranks"])
    assert steps["job"] == "31"
    figure = step_figure(r)
    assert figure["processes"] == RANKS and figure["median"] == steps["median_ns"]
    assert figure["stand_out"] == [{"pid": pids[SLOW], "rank": SLOW, "host": "node-a",
                                    "value": steps["slowest"]["median_ns"]}]
    (slow,) = [p for p in r["job"]["stand_out"] if p["rank"] == SLOW]
    assert "step_ns" in slow["figures"]
    assert all(p["rank"] == SLOW for p in r["job"]["stand_out"])


def test_the_text_names_the_slowest_rank_against_the_median(jobs, build_dir):
    folder, _ = jobs["slow"]
    r = cudatrace_cmd.report(build_dir, folder, quiet=True)
    (steps,) = r["job"]["steps"]
    order = sorted(steps["ranks"], key=lambda s: -s["median_ns"])
    time = r"[\d.]+ ms"
    named = ", ".join(rf"rank {s['rank']} \(pid {s['pid']}\) {time}" for s in order)
    slowest = f"rank {SLOW} \\(pid {steps['slowest']['pid']}\\)"
    text = cudatrace_cmd.run(build_dir, "report", folder, quiet=True).stdout
    line = text_line(text, "  step times ")
    assert re.fullmatch(rf"  step times     median step time per rank, slowest first: {named}; "
                        rf"slowest {slowest}: ({time}) against a median of ({time})", line), line
    x, y = re.search(rf"slowest {slowest}: ({time}) against a median of ({time})$", line).groups()
    assert abs(float(x.split()[0]) * 1e6 - steps["slowest"]["median_ns"]) < 1e4
    assert abs(float(y.split()[0]) * 1e6 - steps["median_ns"]) < 1e4
    figure = text_line(text, "    median step ")
    assert re.search(rf"  {slowest} {time} \(\d\.\dx\)$", figure), figure


def test_healthy_twin_no_rank_stands_out_on_its_steps(jobs, build_dir):
    folder, own = jobs["healthy"]
    r = cudatrace_cmd.report(build_dir, folder, quiet=True)
    figure = step_figure(r)
    assert figure["processes"] == RANKS and figure["stand_out"] == []
    assert r["job"]["stand_out"] == []
    (steps,) = r["job"]["steps"]
    for s in steps["ranks"]:
        assert abs(s["median_ns"] - own[s["rank"]]) < 0.05 * own[s["rank"]], (s, own)
    assert steps["slowest"]["median_ns"] == max(s["median_ns"] for s in steps["ranks"])
    assert steps["slowest"]["median_ns"] < 1.05 * steps["median_ns"]
    text = cudatrace_cmd.run(build_dir, "report", folder, quiet=True).stdout
    assert text_line(text, "    median step ").endswith("none")
    assert text_line(text, "  stand out") == "  stand out      none"


def test_only_the_ranks_that_mark_steps_count(jobs, build_dir):
    folder, _ = jobs["mixed"]
    r = cudatrace_cmd.report(build_dir, folder, quiet=True)
    assert [p["identity"]["rank"] for p in r["processes"] if "steps" in p] == [0, 1, 2]
    (steps,) = r["job"]["steps"]
    assert [s["rank"] for s in steps["ranks"]] == [0, 1, 2]
    assert steps["slowest"]["rank"] != UNMARKED
    assert step_figure(r)["processes"] == RANKS - 1
    text = cudatrace_cmd.run(build_dir, "report", folder, quiet=True).stdout
    assert text_line(text, "  step times ").endswith("; over the 3 that mark steps")
    assert text_line(text, "    median step ").endswith("none; over the 3 that have it")
