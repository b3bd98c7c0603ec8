"""Where the collector runs. A launcher that binds a rank to one core (taskset, numactl,
SLURM's --cpu-bind) gives the program that mask, and the collector, forked from it,
inherits it: on the program's core, the program pays for every record the collector
encodes. Before it starts a thread, the collector moves to the other CPUs of the NUMA
nodes the program may run on that the kernel lets it have, and leaves the program's mask
alone. The healthy twin: a program that may run anywhere has a collector with its own
mask, unchanged."""
import glob
import os
import subprocess
import time

import pytest

from test_preload_hostile import collector_of

LAUNCHES = 3000000  # at 300 ns each, the program runs over a second
ALLOWED = sorted(os.sched_getaffinity(0))


def cpu_list(text):
    """The CPUs a kernel CPU list names ("0-3,8"), as a set."""
    cpus = set()
    for item in text.strip().split(","):
        first, _, last = item.partition("-")
        if first:
            cpus.update(range(int(first), int(last or first) + 1))
    return cpus


def threads_cpus(pid):
    """{tid: set of CPUs} for every thread of `pid`, from /proc."""
    found = {}
    for status in glob.glob(f"/proc/{pid}/task/*/status"):
        try:
            with open(status) as f:
                line = next(l for l in f if l.startswith("Cpus_allowed_list:"))
        except (OSError, StopIteration):
            continue  # a thread that ended as we looked
        found[int(status.split("/")[4])] = cpu_list(line.split(":", 1)[1])
    return found


def node_of(cpu):
    """The CPUs of the NUMA node `cpu` is on, as sysfs lists them; None without nodes."""
    for path in glob.glob("/sys/devices/system/node/node[0-9]*/cpulist"):
        cpus = cpu_list(open(path).read())
        if cpu in cpus:
            return cpus
    return None


def placed(build_dir, tmp_path, cpus):
    """(program's threads' CPUs, collector's threads' CPUs, completed run) of a paced launch
    loop made to run on `cpus`, read while the collector runs its threads."""
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    env.update({"LD_LIBRARY_PATH": os.path.join(build_dir, "double"), "CUDATRACE_QUIET": "1",
                "LD_PRELOAD": os.path.join(build_dir, "libcudatrace.so"),
                "CUDATRACE_OUTPUT": str(tmp_path / "t.pftrace.zst"), "CT_DOUBLE_CALL_NS": "300",
                # the default: its host sampler is a second thread, which must inherit the mask
                "CUDATRACE_SAMPLE_HZ": "100"})
    proc = subprocess.Popen([os.path.join(build_dir, "tests", "launch_loop"), str(LAUNCHES)],
                            env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=lambda: os.sched_setaffinity(0, cpus))
    try:
        collector = collector_of(proc.pid)
        deadline = time.monotonic() + 10
        # Its second thread (the host sampler) starts after the mask is set.
        while len(threads_cpus(collector)) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        program, theirs = threads_cpus(proc.pid), threads_cpus(collector)
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
        proc.wait()
    return program, theirs, subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.skipif(len(ALLOWED) < 2, reason="one CPU: there is nowhere else to run")
def test_a_collector_of_a_program_bound_to_one_core_runs_beside_it_not_on_it(build_dir, tmp_path):
    cpu = ALLOWED[0]
    program, collector, done = placed(build_dir, tmp_path, {cpu})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"launch_loop: {LAUNCHES} launches"), done.stdout
    assert program and all(cpus == {cpu} for cpus in program.values()), program
    assert len(collector) >= 2, collector
    node = node_of(cpu)
    for cpus in collector.values():
        assert cpus and cpu not in cpus, collector
        if node is not None:
            assert cpus <= node - {cpu}, (cpus, node)
            assert cpus >= (node & set(ALLOWED)) - {cpu}, (cpus, node)


def test_a_collector_of_a_program_that_runs_anywhere_keeps_its_mask(build_dir, tmp_path):
    program, collector, done = placed(build_dir, tmp_path, set(ALLOWED))
    assert done.returncode == 0, done.stderr
    assert all(cpus == set(ALLOWED) for cpus in program.values()), program
    assert len(collector) >= 2 and all(cpus == set(ALLOWED) for cpus in collector.values()), \
        collector
