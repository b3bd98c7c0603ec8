"""A job, not a process: eight ranks of one job on two (stand-in) hosts, traced under the bare
preload with the variables torchrun sets, one rank with another LD_LIBRARY_PATH and one
that copies from pinned memory where the others copy from pageable memory. The report
orders them by host and rank, gives pageable-memcpy once, "on 7 of 8 ranks", with its worst
rank, its spread and the rank it missed, names the odd rank in inconsistent-environment,
and `--merge` of one summary per host equals the direct report byte for byte, in text and
JSON. Beside it: %r/%h in CUDATRACE_OUTPUT, a shared output name numbered before its
extension, secrets never recorded, two jobs in one directory, and bad summaries refused."""
import json
import os
import subprocess

import pytest

import cudatrace_cmd
import perfetto_check

RANKS = 8
ODD_ENVIRONMENT = 6  # runs with another LD_LIBRARY_PATH
PINNED = 5  # copies from pinned memory: the healthy twin of pageable-memcpy
SECRETS = {"HF_TOKEN": "hf_s3cr3tvalue", "NCCL_SOCKET_PASSWORD": "pw-d0ntrecord",
           "TORCH_HUB_URL": "https://user:t0psecret@hub.example/x"}


def host_of(rank):
    return "node-a" if rank < RANKS // 2 else "node-b"


def clean_env():
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("CUDATRACE_", "CT_DOUBLE_", "RANK", "LOCAL_RANK", "WORLD_SIZE",
                                 "SLURM_", "OMPI_", "PMI", "TORCHELASTIC_", "MASTER_"))
            and k not in ("LD_PRELOAD", "LD_LIBRARY_PATH")}


def launch(build_dir, output, program_args, **env):
    full = clean_env()
    full.update(LD_PRELOAD=os.path.join(build_dir, "libcudatrace.so"),
                LD_LIBRARY_PATH=os.path.join(build_dir, "double"), CUDATRACE_OUTPUT=str(output),
                CUDATRACE_QUIET="1")
    full.update({k: str(v) for k, v in env.items()})
    done = subprocess.run([os.path.join(build_dir, "tests", program_args[0]),
                           *map(str, program_args[1:])], env=full, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done


def rank_env(build_dir, rank, job="4242"):
    env = dict(RANK=rank, LOCAL_RANK=rank % (RANKS // 2), WORLD_SIZE=RANKS, SLURM_JOB_ID=job,
               CUDATRACE_HOST=host_of(rank), NCCL_DEBUG="WARN", **SECRETS)
    if rank == ODD_ENVIRONMENT:
        env["LD_LIBRARY_PATH"] = os.path.join(build_dir, "double") + ":/opt/other/lib"
    return env


@pytest.fixture(scope="module")
def job_dir(build_dir, tmp_path_factory):
    """trace-HOST-RANK.pftrace.zst for each rank, in one folder; rank r makes 20 + 5r steps."""
    folder = tmp_path_factory.mktemp("job")
    for rank in range(RANKS):
        mode = "pinned" if rank == PINNED else "pageable"
        launch(build_dir, folder / "trace-%h-%r.pftrace.zst", ["usage_patterns", mode, 20 + 5 * rank],
               **rank_env(build_dir, rank))
    return folder


def test_output_names_carry_host_and_rank(job_dir):
    assert sorted(p.name for p in job_dir.iterdir()) == sorted(
        f"trace-{host_of(r)}-{r}.pftrace.zst" for r in range(RANKS))


def test_every_trace_says_who_it_was(job_dir, build_dir):
    for rank in range(RANKS):
        trace = perfetto_check.load(job_dir / f"trace-{host_of(rank)}-{rank}.pftrace.zst")
        (identity,) = [i["args"] for i in trace.instants if i["name"] == "cudatrace.identity"]
        assert identity == {"host": host_of(rank), "rank": rank, "local_rank": rank % 4,
                            "world_size": RANKS, "job": "4242", "launcher": "torchrun"}
        (env,) = [i["args"]["variables"] for i in trace.instants
                  if i["name"] == "cudatrace.environment"]
        lines = env.splitlines()
        assert "NCCL_DEBUG=WARN" in lines and lines == sorted(lines)
        odd = rank == ODD_ENVIRONMENT
        assert (f"LD_LIBRARY_PATH={build_dir}/double" + (":/opt/other/lib" if odd else "")
                in lines)


def test_secrets_never_reach_a_trace(job_dir):
    for path in job_dir.iterdir():
        data = perfetto_check._decompress(path.read_bytes())
        for name, value in SECRETS.items():
            assert name.encode() not in data and value.encode() not in data, (path, name)


def test_processes_are_ordered_by_host_and_rank(job_dir, build_dir):
    r = cudatrace_cmd.report(build_dir, job_dir)
    assert [(p["identity"]["host"], p["identity"]["rank"]) for p in r["processes"]] == [
        (host_of(k), k) for k in range(RANKS)]
    assert r["job"]["hosts"] == ["node-a", "node-b"] and r["job"]["jobs"] == ["4242"]
    text = cudatrace_cmd.run(build_dir, "report", job_dir).stdout.splitlines()
    first = text.index("host node-a: ranks 0-3")
    assert text[first + 5] == "host node-b: ranks 4-7"
    table = [line.split()[:3] for line in text[first + 1:first + 5] + text[first + 6:first + 10]]
    assert [(row[1], row[2]) for row in table] == [(str(k), host_of(k)) for k in range(RANKS)]


def test_a_finding_on_many_ranks_is_given_once(job_dir, build_dir):
    r = cudatrace_cmd.report(build_dir, job_dir)
    pids = {p["identity"]["rank"]: p["pid"] for p in r["processes"]}
    # each rank's own finding stays in "findings"; "job" has it once
    assert sorted(f["pid"] for f in r["findings"] if f["id"] == "pageable-memcpy") == sorted(
        pids[k] for k in range(RANKS) if k != PINNED)
    (group,) = [g for g in r["job"]["findings"] if g["id"] == "pageable-memcpy"]
    assert (group["processes"], group["of"], group["kind"]) == (RANKS - 1, RANKS, "per process")
    assert group["not_on"] == [{"pid": pids[PINNED], "rank": PINNED, "host": host_of(PINNED)}]
    copies = group["numbers"]["copies"]
    # rank r copies in 20 + 5r times and out half as often: the spread over those that fired
    fired = [n + n // 2 for n in (20 + 5 * k for k in range(RANKS) if k != PINNED)]
    assert (copies["min"], copies["max"]) == (min(fired), max(fired))
    assert copies["median"] == sorted(fired)[len(fired) // 2]
    worst = [f for f in r["findings"] if f["id"] == "pageable-memcpy"][0]
    assert group["worst"]["pid"] == worst["pid"] and group["message"] == worst["message"]

    text = cudatrace_cmd.run(build_dir, "report", job_dir).stdout
    assert text.count("pageable-memcpy") == 1
    line = next(li for li in text.splitlines() if "pageable-memcpy" in li)
    assert f"pageable-memcpy on {RANKS - 1} of {RANKS} ranks, worst rank" in line
    assert f"not on rank {PINNED}\n" in text
    assert f"copies {min(fired)} .. {max(fired)}" in text


def test_per_process_keeps_a_copy_per_process(job_dir, build_dir):
    text = cudatrace_cmd.run(build_dir, "report", "--per-process", job_dir).stdout
    assert text.count("warning pageable-memcpy:") == RANKS - 1
    assert "ranks, worst" not in text


@pytest.mark.finding("inconsistent-environment")
def test_the_odd_environment_is_named(job_dir, build_dir):
    r = cudatrace_cmd.report(build_dir, job_dir)
    odd_pid = next(p["pid"] for p in r["processes"] if p["identity"]["rank"] == ODD_ENVIRONMENT)
    (f,) = [f for f in r["findings"] if f["id"] == "inconsistent-environment"]
    assert (f["severity"], f["pid"]) == ("warning", odd_pid)
    others = ", ".join(["0-5", "7"])
    assert (f"different LD_LIBRARY_PATH: {build_dir}/double on ranks {others}; "
            f"{build_dir}/double:/opt/other/lib on rank {ODD_ENVIRONMENT}") in f["message"]
    (group,) = [g for g in r["job"]["findings"] if g["id"] == "inconsistent-environment"]
    assert group["kind"] == "compares processes" and group["not_on"] == []


@pytest.mark.twin("inconsistent-environment")
def test_healthy_twin_one_environment(job_dir, build_dir, tmp_path):
    folder = tmp_path / "same"
    folder.mkdir()
    for rank in (0, 1, 2):
        launch(build_dir, folder / "t-%r.pftrace.zst", ["usage_patterns", "pinned", 20],
               **{k: v for k, v in rank_env(build_dir, rank).items()})
    r = cudatrace_cmd.report(build_dir, folder)
    assert [f["id"] for f in r["findings"]] == []
    assert r["job"]["findings"] == []


@pytest.mark.parametrize("form", [[], ["--json"], ["--per-process"]])
def test_merged_summaries_equal_the_direct_report(job_dir, build_dir, tmp_path, form):
    direct = cudatrace_cmd.run(build_dir, "report", *form, job_dir)
    summaries = []
    for host in ("node-b", "node-a"):  # merged in another order than read
        out = tmp_path / f"{host}.json"
        made = cudatrace_cmd.run(build_dir, "report", "--summary", "-o", out,
                                 *sorted(job_dir.glob(f"trace-{host}-*")))
        assert made.returncode == 0 and made.stdout == "", made.stderr
        assert json.loads(out.read_text())["schema"] == "cudatrace.summary/1"
        summaries.append(out)
    merged = cudatrace_cmd.run(build_dir, "report", "--merge", *form, *summaries)
    assert merged.stdout == direct.stdout


def test_merge_keeps_fail_on(job_dir, build_dir, tmp_path):
    out = tmp_path / "all.json"
    cudatrace_cmd.run(build_dir, "report", "--summary", "-o", out, job_dir)
    cudatrace_cmd.run(build_dir, "report", "--merge", "--fail-on=warning", out, status=3)
    cudatrace_cmd.run(build_dir, "report", "--fail-on=warning", job_dir, status=3)


def test_summaries_of_other_thresholds_do_not_merge(job_dir, build_dir, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    traces = sorted(job_dir.iterdir())
    cudatrace_cmd.run(build_dir, "report", "--summary", "-o", a, traces[0])
    cudatrace_cmd.run(build_dir, "report", "--summary", "--threshold", "pageable_copies=100",
                      "-o", b, traces[1])
    done = cudatrace_cmd.run(build_dir, "report", "--merge", a, b, status=1)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "other thresholds" in done.stderr
    done = cudatrace_cmd.run(build_dir, "report", "--merge", "--threshold", "sync_share=0.5", a,
                             status=2)
    assert done.returncode == 2 and "when summaries are made" in done.stderr


@pytest.mark.parametrize("content, says", [
    ('{"schema": "cudatrace.report/1"}', "not a cudatrace summary"),
    ('{"schema": "cudatrace.summary/1", "traces": [', "unexpected end"),
    ("not json at all", "unexpected character"),
    # the fuzzer's find: a process without its report/1 object
    ('{"schema": "cudatrace.summary/1", "traces": [{"path": "t", "thresholds": "", '
     '"processes": [{"text": "x"}]}]}', "process 1 has no report"),
    ('[' * 100 + ']' * 100, "nested too deeply"),
])
def test_a_bad_summary_is_one_line(build_dir, tmp_path, content, says):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    done = cudatrace_cmd.run(build_dir, "report", "--merge", bad, status=1)
    assert done.returncode == 1 and done.stdout == "", done.stderr
    assert done.stderr.count("\n") == 1 and says in done.stderr and str(bad) in done.stderr


def test_a_bad_trace_among_many_names_itself(job_dir, build_dir, tmp_path):
    folder = tmp_path / "mixed"
    folder.mkdir()
    for path in sorted(job_dir.iterdir())[:3]:
        (folder / path.name).write_bytes(path.read_bytes())
    (folder / "trace-broken.pftrace.zst").write_bytes(b"\x28\xb5\x2f\xfd garbage")
    done = cudatrace_cmd.run(build_dir, "report", folder, status=1)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "trace-broken.pftrace.zst" in done.stderr


def test_two_jobs_in_one_directory_say_so(build_dir, tmp_path):
    folder = tmp_path / "two"
    folder.mkdir()
    for job, ldpath in (("100", ""), ("100", ""), ("200", ":/elsewhere"), ("200", ":/elsewhere")):
        env = rank_env(build_dir, 0, job=job)
        env["LD_LIBRARY_PATH"] = os.path.join(build_dir, "double") + ldpath
        launch(build_dir, folder / "t.pftrace.zst", ["usage_patterns", "pinned", 20], **env)
    r = cudatrace_cmd.report(build_dir, folder)
    assert r["job"]["jobs"] == ["100", "200"]
    # within each job the environments agree: no inconsistent-environment across jobs
    assert [f["id"] for f in r["findings"]] == []
    text = cudatrace_cmd.run(build_dir, "report", folder).stdout
    assert "these traces come from 2 different jobs" in text


def test_a_shared_output_name_is_numbered_before_its_extension(build_dir, tmp_path):
    for _ in range(3):
        launch(build_dir, tmp_path / "trace.pftrace.zst", ["usage_patterns", "pinned", 10])
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "trace-1.pftrace.zst", "trace-2.pftrace.zst", "trace.pftrace.zst"]
    assert len(cudatrace_cmd.report(build_dir, tmp_path)["processes"]) == 3


def test_no_launcher_no_rank(build_dir, tmp_path):
    launch(build_dir, tmp_path / "t-%r.pftrace.zst", ["usage_patterns", "pinned", 10])
    (path,) = tmp_path.iterdir()
    assert path.name == "t-norank.pftrace.zst"
    (p,) = cudatrace_cmd.report(build_dir, path)["processes"]
    assert p["identity"]["rank"] is None and p["identity"]["job"] is None


@pytest.mark.parametrize("variables, identity", [
    ({"SLURM_PROCID": 9, "SLURM_LOCALID": 1, "SLURM_NTASKS": 16, "SLURM_JOB_ID": 77},
     {"rank": 9, "local_rank": 1, "world_size": 16, "job": "77", "launcher": "slurm"}),
    ({"OMPI_COMM_WORLD_RANK": 5, "OMPI_COMM_WORLD_LOCAL_RANK": 2, "OMPI_COMM_WORLD_SIZE": 8},
     {"rank": 5, "local_rank": 2, "world_size": 8, "launcher": "openmpi"}),
    ({"PMI_RANK": 3, "MPI_LOCALRANKID": 3, "PMI_SIZE": 4, "PBS_JOBID": "12.pbs"},
     {"rank": 3, "local_rank": 3, "world_size": 4, "job": "12.pbs", "launcher": "pmi"}),
    # torchrun under srun: torchrun's rank is the process's, Slurm's the node's task
    ({"RANK": 12, "SLURM_PROCID": 1, "MASTER_ADDR": "n0", "MASTER_PORT": 29500,
      "TORCHELASTIC_RUN_ID": "none"},
     {"rank": 12, "job": "n0:29500", "launcher": "torchrun"}),
    ({"RANK": "not-a-number"}, {}),
])
def test_each_launcher_is_read(build_dir, tmp_path, variables, identity):
    launch(build_dir, tmp_path / "t.pftrace.zst", ["usage_patterns", "pinned", 10],
           CUDATRACE_HOST="h", **variables)
    (p,) = cudatrace_cmd.report(build_dir, tmp_path / "t.pftrace.zst")["processes"]
    want = {"host": "h", "rank": None, "local_rank": None, "world_size": None, "job": None,
            "launcher": None, "visible_devices": None, **identity}
    assert {k: v for k, v in p["identity"].items() if k != "environment"} == want
