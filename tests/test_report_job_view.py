"""The text report of a job a person can read at a thousand ranks: the job's findings and its
figures first (per figure the median and range over the ranks, and the ranks that stand out,
by rank and host), then the table grouped by host, then the full section of each rank that
stands out, and nothing else; `--per-process` gives the table of every process and every
process's section; the JSON keeps every process and finding and adds the figures.

A rank stands out on a number when, among at least three, it lies from the median at least half
the median, at least 50 ms (of a time) and beyond 3.5 robust standard deviations, and on its exit
when it ended otherwise than most (docs/report-schema.md, `job.figures`); identical ranks never do
(the healthy twins), and each side of each bound is held here.

Sixteen ranks on two hosts are traced (train_loop on the CPU double, 10 ms of synchronisation a
step; rank 11 on node-b waits 100 ms a step, so its median step, found in its calls, stands out
too), with a healthy rank 11 beside them for the twin.
Jobs of 512 and 1024 ranks are merged from summaries: the sixteen traces' summaries, each given
a new pid, rank and host (the summary is the interface `report --merge` reads, made anywhere),
so the healthy ranks keep their real jitter."""
import copy
import json
import os
import re

import pytest

import cudatrace_cmd
from test_report_job import launch

STEPS = 20
SYNC_NS, SLOW_SYNC_NS = 10_000_000, 100_000_000
RANKS, SLOW = 16, 11
SHOWN = 5  # CT_JOB_SHOWN_PROCESSES: the standing-out ranks the text names and gives sections of
TABLE_ROWS = 32  # CT_JOB_TABLE_ROWS
PER_HOST = 8  # in the merged jobs


def host_of(rank):
    return "node-a" if rank < RANKS // 2 else "node-b"


def merged_host(rank):
    return f"host-{rank // PER_HOST:03d}"


def run_rank(build_dir, folder, rank, sync_ns):
    launch(build_dir, folder / f"trace-{host_of(rank)}-{rank}.pftrace.zst",
           [os.path.join(build_dir, "examples", "train_loop"), STEPS], RANK=rank,
           LOCAL_RANK=rank % 8, WORLD_SIZE=RANKS, SLURM_JOB_ID="77",
           CUDATRACE_HOST=host_of(rank), CT_DOUBLE_SYNC_NS=sync_ns)


@pytest.fixture(scope="module")
def jobs(build_dir, tmp_path_factory):
    """{"slow": folder, "healthy": folder}: the sixteen ranks, rank 11 slow in one, not in the
    other (the fifteen others are the same traces)."""
    slow, healthy = tmp_path_factory.mktemp("slow"), tmp_path_factory.mktemp("healthy")
    for rank in range(RANKS):
        if rank != SLOW:
            run_rank(build_dir, slow, rank, SYNC_NS)
            name = f"trace-{host_of(rank)}-{rank}.pftrace.zst"
            (healthy / name).write_bytes((slow / name).read_bytes())
    run_rank(build_dir, slow, SLOW, SLOW_SYNC_NS)
    run_rank(build_dir, healthy, SLOW, SYNC_NS)
    return {"slow": slow, "healthy": healthy}


def pid_of(report, rank):
    return next(p["pid"] for p in report["processes"] if p["identity"]["rank"] == rank)


def part(lines, start, stop=None):
    """The lines from the first that starts with `start` up to the first after it that starts
    with `stop`, or is empty."""
    first = next(i for i, line in enumerate(lines) if line.startswith(start))
    return lines[first:next(i for i in range(first + 1, len(lines) + 1)
                            if i == len(lines) or lines[i] == ""
                            or (stop and lines[i].startswith(stop)))]


def figure_lines(lines):
    """{label: line} of the figures."""
    return {line.split("  ")[2]: line for line in part(lines, "  figures", "  stand out")[1:]}


def sections(lines):
    return [int(line.split()[1]) for line in lines if line.startswith("process ")]


def test_the_job_comes_first_and_names_the_slow_rank(jobs, build_dir):
    lines = cudatrace_cmd.run(build_dir, "report", jobs["slow"], quiet=True).stdout.splitlines()
    slow = pid_of(cudatrace_cmd.report(build_dir, jobs["slow"], quiet=True), SLOW)
    name = f"rank {SLOW} (pid {slow} on node-b)"
    assert lines[0] == "job: 16 ranks on 2 hosts (job 77)"
    assert lines[1].startswith("  findings       warning sync-stall on 16 of 16 ranks, worst "
                               f"{name}: ")
    figures = figure_lines(lines)
    assert list(figures) == ["wall", "calls", "launches", "sync", "peak memory", "median step",
                             "exit"]
    for label, line in figures.items():
        assert line.endswith("none") != (label in ("wall", "sync", "median step")), line
    assert re.search(rf"  {re.escape(name)} \S+ s \(\d+\.\dx\)$", figures["sync"])
    (stand_out,) = part(lines, "  stand out", "  step times")
    assert re.fullmatch(rf"  stand out      {re.escape(name)}: wall \S+ (s|ms) \(\d+\.\dx\), "
                        r"sync \S+ s \(\d+\.\dx\), median step \S+ ms \(\d+\.\dx\)", stand_out)
    assert sections(lines) == [slow]
    # its own findings under its section, the last lines of the report
    assert lines[-1].startswith("                 warning straggler: " + name)


def test_the_table_is_grouped_by_host(jobs, build_dir):
    lines = cudatrace_cmd.run(build_dir, "report", jobs["slow"], quiet=True).stdout.splitlines()
    r = cudatrace_cmd.report(build_dir, jobs["slow"], quiet=True)
    table = part(lines, "pid ")
    assert table[1] == "host node-a: ranks 0-7" and table[10] == "host node-b: ranks 8-15"
    rows = table[2:10] + table[11:19]
    assert [(int(row.split()[0]), int(row.split()[1]), row.split()[2]) for row in rows] == [
        (pid_of(r, k), k, host_of(k)) for k in range(RANKS)]
    assert len(table) == 19


def test_healthy_twin_no_rank_stands_out(jobs, build_dir):
    lines = cudatrace_cmd.run(build_dir, "report", jobs["healthy"], quiet=True).stdout.splitlines()
    assert all(line.endswith("none") for line in figure_lines(lines).values())
    assert part(lines, "  stand out", "  step times") == ["  stand out      none"]
    assert sections(lines) == [] and "  figures" in "\n".join(lines)
    r = cudatrace_cmd.report(build_dir, jobs["healthy"], quiet=True)
    assert r["job"]["stand_out"] == []
    assert all(f["stand_out"] == [] for f in r["job"]["figures"])


def test_the_json_keeps_everything_and_adds_the_figures(jobs, build_dir):
    r = cudatrace_cmd.report(build_dir, jobs["slow"], quiet=True)
    slow = pid_of(r, SLOW)
    assert len(r["processes"]) == RANKS
    assert sorted(f["pid"] for f in r["findings"] if f["id"] == "sync-stall") == sorted(
        p["pid"] for p in r["processes"])
    assert [f["pid"] for f in r["findings"] if f["id"] == "straggler"] == [slow]
    assert r["job"]["stand_out"] == [{"pid": slow, "rank": SLOW, "host": "node-b",
                                      "figures": ["wall_ns", "sync_ns", "step_ns"]}]
    figures = {f["name"]: f for f in r["job"]["figures"]}
    assert list(figures) == ["wall_ns", "calls", "launches", "sync_ns", "peak_bytes", "step_ns",
                             "exit"]
    sync = [p["sync"]["total_ns"] for p in r["processes"]]
    assert (figures["sync_ns"]["min"], figures["sync_ns"]["max"]) == (min(sync), max(sync))
    assert figures["sync_ns"]["median"] == (sorted(sync)[7] + sorted(sync)[8]) / 2
    assert figures["sync_ns"]["stand_out"] == [{"pid": slow, "rank": SLOW, "host": "node-b",
                                                "value": max(sync)}]
    assert figures["calls"]["mad"] == 0 and figures["calls"]["processes"] == RANKS
    assert figures["exit"] == {"job": "77", "name": "exit", "processes": RANKS,
                               "usual": "normal", "stand_out": []}


def test_per_process_gives_every_section(jobs, build_dir):
    lines = cudatrace_cmd.run(build_dir, "report", "--per-process", jobs["slow"],
                              quiet=True).stdout.splitlines()
    r = cudatrace_cmd.report(build_dir, jobs["slow"], quiet=True)
    assert lines[0].split()[:3] == ["pid", "rank", "host"] and lines[1] == "host node-a: ranks 0-7"
    assert sections(lines) == [p["pid"] for p in r["processes"]]
    text = "\n".join(lines)
    assert text.count("warning sync-stall: ") == RANKS and "  figures" not in text


# --------------------------------------------------------------------------
# Hundreds of ranks, merged from summaries


def summaries_of(build_dir, folder, out):
    """{rank: a process's summary entry (with its trace's fields)} of each trace in `folder`."""
    cudatrace_cmd.run(build_dir, "report", "--summary", "-o", out, folder)
    return {t["processes"][0]["report"]["identity"]["rank"]: t
            for t in json.loads(out.read_text())["traces"]}


def with_new_pid(value, old, new):
    """The pids and tids of a process's summary, `old`, become `new`."""
    if isinstance(value, dict):
        return {k: new if k in ("pid", "tid", "launching_tid") and v == old
                else with_new_pid(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [with_new_pid(v, old, new) for v in value]
    return value


def as_rank(trace, rank, world):
    """The trace's summary as rank `rank` of `world` on host merged_host(rank)."""
    trace = copy.deepcopy(trace)
    (process,) = trace["processes"]
    old, new, host = process["report"]["pid"], 100000 + rank, merged_host(rank)
    identity = dict(process["report"]["identity"], rank=rank, local_rank=rank % PER_HOST,
                    world_size=world, host=host)
    process = with_new_pid(process, old, new)
    process["report"]["identity"] = identity
    text = process["text"].replace(f"process {old} ", f"process {new} ")
    process["text"] = re.sub(r"rank \d+ of \d+ \(local \d+\), host \S+,",
                             f"rank {rank} of {world} (local {rank % PER_HOST}), host {host},",
                             text.replace(f"thread {old} ", f"thread {new} "))
    trace["processes"], trace["path"] = [process], f"/{host}/trace-{rank}.pftrace.zst"
    return trace


def summary_folder(tmp_path, ranks):
    """One summary file per host of the job whose rank r is ranks[r] (a trace's summary)."""
    hosts = {}
    for rank, trace in enumerate(ranks):
        hosts.setdefault(merged_host(rank), []).append(as_rank(trace, rank, len(ranks)))
    folder = tmp_path / f"summaries-{len(list(tmp_path.iterdir()))}"
    folder.mkdir()
    for host, entries in hosts.items():
        (folder / f"{host}.json").write_text(json.dumps({"schema": "cudatrace.summary/1",
                                                         "traces": entries}))
    return sorted(folder.iterdir())


def merged(build_dir, tmp_path, traces, world, slow_ranks, *args):
    """`report --merge` of a job of `world` ranks: the healthy traces in turn, the slow one at
    `slow_ranks`."""
    healthy = [t for rank, t in sorted(traces.items()) if rank != SLOW]
    ranks = [traces[SLOW] if rank in slow_ranks else healthy[rank % len(healthy)]
             for rank in range(world)]
    return cudatrace_cmd.run(build_dir, "report", "--merge", *args,
                             *summary_folder(tmp_path, ranks), quiet=True).stdout.splitlines()


@pytest.fixture(scope="module")
def traces(jobs, build_dir, tmp_path_factory):
    return summaries_of(build_dir, jobs["slow"], tmp_path_factory.mktemp("s") / "slow.json")


def test_512_ranks_one_slow_fit_two_screens(traces, build_dir, tmp_path):
    lines = merged(build_dir, tmp_path, traces, 512, {300})
    name = "rank 300 (pid 100300 on host-037)"
    assert lines[0] == "job: 512 ranks on 64 hosts (job 77)"
    (stand_out,) = part(lines, "  stand out", "  step times")
    assert stand_out.startswith(f"  stand out      {name}: wall ")
    table = part(lines, "host ")
    # 32 hosts: host-037, where rank 300 stands out, and the first 31 others
    assert [row.split()[0] for row in table[1:-1]] == [
        merged_host(h * PER_HOST) for h in range(TABLE_ROWS - 1)] + ["host-037"]
    assert table[-1] == "and 32 more hosts with 256 ranks (--per-process lists every process)"
    assert re.fullmatch(r"host-037 +8 +1 .* ranks 296-303", table[-2])
    assert sections(lines) == [100300]
    assert len(lines) <= 120, len(lines)


def test_the_line_count_does_not_grow_with_the_ranks(traces, build_dir, tmp_path):
    lines = {world: merged(build_dir, tmp_path, traces, world, {300}) for world in (512, 1024)}
    assert len(lines[512]) == len(lines[1024])


def test_512_identical_ranks_none_stands_out(traces, build_dir, tmp_path):
    lines = merged(build_dir, tmp_path, {k: traces[0] for k in traces}, 512, set())
    assert part(lines, "  stand out", "  step times") == ["  stand out      none"]
    assert sections(lines) == []
    assert all(line.endswith("none") for line in figure_lines(lines).values())


def test_a_slow_host_names_its_ranks_and_shows_five(traces, build_dir, tmp_path):
    slow = set(range(40, 48))  # every rank of host-005
    lines = merged(build_dir, tmp_path, traces, 512, slow)
    stand_out = part(lines, "  stand out", "  step times")
    assert len(stand_out) == SHOWN + 1
    assert stand_out[-1] == f"{'':17}and {len(slow) - SHOWN} more (--json names them all)"
    assert all("on host-005): wall " in line for line in stand_out[:-1])
    assert len(sections(lines)) == SHOWN and set(sections(lines)) < {100000 + r for r in slow}
    assert figure_lines(lines)["sync"].endswith(f" and {len(slow) - 3} more")


def test_512_ranks_per_process_lists_them_all(traces, build_dir, tmp_path):
    lines = merged(build_dir, tmp_path, traces, 512, {300}, "--per-process")
    assert sections(lines) == [100000 + r for r in range(512)]


# --------------------------------------------------------------------------
# Where a rank starts to stand out: one healthy trace, its wall time set per rank


def with_wall(trace, ms, exit="normal"):
    trace = copy.deepcopy(trace)
    trace["processes"][0]["report"].update(wall_ns=ms * 1_000_000, exit=exit)
    return trace


@pytest.mark.parametrize("walls_ms, stands_out", [
    ([1000] * 8 + [1499], False),  # less than half the median over it
    ([1000] * 8 + [1500], True),
    ([1000] * 8 + [501], False),
    ([1000] * 8 + [500], True),
    ([60] * 8 + [109], False),  # half the median over it, but less than 50 ms
    ([60] * 8 + [110], True),
    ([1000, 1200, 1400, 1600, 1800, 2000, 2600], False),  # within the others' spread
    ([1000, 1000, 3000], True),
    ([1000, 3000], False),  # two: either could be the odd one
])
def test_where_a_rank_stands_out(traces, build_dir, tmp_path, walls_ms, stands_out):
    files = summary_folder(tmp_path, [with_wall(traces[0], ms) for ms in walls_ms])
    r = cudatrace_cmd.json_of(build_dir, "report", "--merge", "--json", *files, quiet=True)
    last = len(walls_ms) - 1
    assert r["job"]["stand_out"] == ([{"pid": 100000 + last, "rank": last,
                                       "host": merged_host(last), "figures": ["wall_ns"]}]
                                     if stands_out else [])


def test_another_exit_stands_out_first(traces, build_dir, tmp_path):
    ranks = [with_wall(traces[0], 1000, "lost" if rank == 2 else "normal") for rank in range(5)]
    files = summary_folder(tmp_path, ranks + [with_wall(traces[0], 9000)])
    r = cudatrace_cmd.json_of(build_dir, "report", "--merge", "--json", *files, quiet=True)
    assert [(p["rank"], p["figures"]) for p in r["job"]["stand_out"]] == [
        (2, ["exit"]), (5, ["wall_ns"])]
    lines = cudatrace_cmd.run(build_dir, "report", "--merge", *files,
                              quiet=True).stdout.splitlines()
    assert figure_lines(lines)["exit"].endswith("normal" + " " * 33 +
                                                "rank 2 (pid 100002) lost")
    assert sections(lines) == [100002, 100005]


def test_gpu_busy_is_a_figure_where_traces_have_it(traces, build_dir, tmp_path):
    def rank(busy_ms):
        trace = with_wall(traces[0], 1000)
        if busy_ms is not None:
            trace["processes"][0]["report"]["gpu"] = {"busy_ns": busy_ms * 1_000_000}
        return trace

    files = summary_folder(tmp_path, [rank(ms) for ms in (None, 100, 100, 100, 900)])
    r = cudatrace_cmd.json_of(build_dir, "report", "--merge", "--json", *files, quiet=True)
    (busy,) = [f for f in r["job"]["figures"] if f["name"] == "gpu_busy_ns"]
    assert (busy["processes"], busy["median"], busy["max"]) == (4, 100e6, 900e6)
    assert r["job"]["stand_out"] == [{"pid": 100004, "rank": 4, "host": merged_host(4),
                                      "figures": ["gpu_busy_ns"]}]
    lines = cudatrace_cmd.run(build_dir, "report", "--merge", *files,
                              quiet=True).stdout.splitlines()
    assert figure_lines(lines)["GPU busy"].endswith(
        "rank 4 (pid 100004) 900.000 ms (9.0x); over the 4 that have it")
    # without GPU timings on three, none stands out on it
    files = summary_folder(tmp_path, [rank(ms) for ms in (None, None, None, 100, 900)])
    r = cudatrace_cmd.json_of(build_dir, "report", "--merge", "--json", *files, quiet=True)
    assert r["job"]["stand_out"] == []
