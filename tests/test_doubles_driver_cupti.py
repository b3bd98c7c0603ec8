"""The CPU doubles of the driver and of CUPTI, checked without the tracer.

tests/programs/cupti/harness.c subscribes to the CUPTI double, runs a known workload through the
runtime double and then through the driver double, and prints every callback and activity record
it received; these tests hold those, and the CUPTI double's own statistics, to exact counts.
"""

import collections
import ctypes
import os
import subprocess

import pytest

RUN_TIMEOUT_S = 60

# The harness's runtime workload, call by call, and the driver calls each nests.
RUNTIME_CALLS = collections.Counter({
    "cudaMalloc_v3020": 1, "cudaMallocHost_v3020": 1, "cudaMemcpy_v3020": 2,
    "cudaMemset_v3020": 1, "cudaStreamCreate_v3020": 1, "cudaLaunchKernel_v7000": 5,
    "cudaLaunchKernelExC_v11060": 1, "cudaStreamSynchronize_v3020": 1,
    "cudaDeviceSynchronize_v3020": 1, "cudaFree_v3020": 1, "cudaFreeHost_v3020": 1,
    "cudaStreamDestroy_v5050": 1,
})
NESTED = {"cudaMemcpy_v3020": {"cuMemcpyHtoD_v2", "cuMemcpyDtoH_v2"},
          "cudaMemset_v3020": {"cuMemsetD8_v2"}, "cudaLaunchKernel_v7000": {"cuLaunchKernel"},
          "cudaLaunchKernelExC_v11060": {"cuLaunchKernelEx"}}
# The driver calls: the runtime's start (cuInit, cuGetExportTable), those nested in runtime
# calls, and the harness's own driver workload.
DRIVER_CALLS = collections.Counter({
    "cuInit": 1, "cuGetExportTable": 1, "cuMemcpyHtoD_v2": 2, "cuMemcpyDtoH_v2": 1,
    "cuMemsetD8_v2": 1, "cuLaunchKernel": 7, "cuLaunchKernelEx": 1, "cuModuleLoadData": 1,
    "cuModuleGetFunction": 1, "cuMemAlloc_v2": 1, "cuCtxSynchronize": 1, "cuMemFree_v2": 1,
})
KERNELS = collections.Counter({"kernel_a": 4, "kernel_b": 2, "drv_kernel": 2})
# Kernels, copies and sets in the order the workload submits them: what DROP_EVERY counts.
GPU_RECORDS = 12
KERNEL_NS = 10000
LEGACY_STREAM, FIRST_STREAM = 7, 13
MEMORY_KIND = {"pageable": 1, "pinned": 2, "device": 3}
COPY_KIND = {"htod": 1, "dtoh": 2}


@pytest.fixture
def run_doubles(build_dir, tmp_path):
    """run_doubles(program, *args, env=None, driver=True) -> (completed process, stats dict).

    Runs with the runtime and CUPTI doubles on the library path, the driver double too when
    driver=True, CT_DOUBLE_DRIVER=1 and CT_DOUBLE_CUPTI_STATS in tmp_path; stats is the CUPTI
    double's ground truth ({} when it wrote none). The run must exit 0."""
    count = [0]

    def run(program, *args, env=None, driver=True):
        count[0] += 1
        stats_path = tmp_path / f"stats{count[0]}.txt"
        folders = [os.path.join(build_dir, "double")]
        if driver:
            folders.append(os.path.join(build_dir, "driver"))
        full_env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("CUDATRACE_", "CT_DOUBLE_", "CUDA_INJECTION"))
                    and k not in ("LD_PRELOAD", "LD_LIBRARY_PATH")}
        full_env.update(LD_LIBRARY_PATH=":".join(folders), CT_DOUBLE_DRIVER="1",
                        CT_DOUBLE_CUPTI_STATS=str(stats_path))
        full_env.update({k: str(v) for k, v in (env or {}).items()})
        argv = [os.path.join(build_dir, "tests", program), *map(str, args)]
        popen = subprocess.Popen(argv, env=full_env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        stdout, stderr = popen.communicate(timeout=RUN_TIMEOUT_S)
        proc = subprocess.CompletedProcess(argv, popen.returncode, stdout, stderr)
        proc.pid = popen.pid
        assert proc.returncode == 0, f"{argv} exited {proc.returncode}:\n{proc.stderr}"
        stats = {}
        if stats_path.exists():
            for line in stats_path.read_text().splitlines():
                key, _, value = line.rpartition(" ")
                stats[key] = int(value)
        return proc, stats

    return run


def parse(stdout):
    """The harness's output as {"head": {key: value}, "cb": [...], "rec": [...], "buf": [...]}
    ("buf": the number of records in each buffer delivered, in order)."""
    out = {"head": {}, "cb": [], "rec": [], "buf": []}
    for line in stdout.splitlines():
        kind, _, rest = line.partition(" ")
        if kind in ("cb", "rec"):
            out[kind].append(rest.split())
        elif kind == "buf":
            out["buf"].append(int(rest))
        else:
            out["head"][kind] = rest
    return out


def callbacks(out, domain):
    """[(name, function name, site, correlation id, symbol, params, result)] of one domain."""
    return [tuple(c[1:]) for c in out["cb"] if c[0] == domain]


def records(out, kind):
    return [r[1:] for r in out["rec"] if r[0] == kind]


def calls_per_name(cbs):
    """{callback name: calls}, each call an ENTER and an EXIT."""
    enters = collections.Counter(c[0] for c in cbs if c[2] == "enter")
    exits = collections.Counter(c[0] for c in cbs if c[2] == "exit")
    assert enters == exits
    return enters


def test_callbacks_name_every_call_with_real_ids_and_params(run_doubles):
    proc, stats = run_doubles("cupti_harness")
    out = parse(proc.stdout)
    assert out["head"]["subscribe"] == "CUPTI_SUCCESS"
    assert out["head"]["second_subscribe"] == "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"
    runtime, driver = callbacks(out, "runtime"), callbacks(out, "driver")
    assert calls_per_name(runtime) == RUNTIME_CALLS
    assert calls_per_name(driver) == DRIVER_CALLS
    # functionName is the exported name; the callback name adds the runtime's version suffix.
    assert all(c[0].startswith(c[1] + "_v") for c in runtime)
    assert all(c[0] == c[1] for c in driver)
    assert {c[5] for c in runtime if c[0] == "cudaMalloc_v3020"} == {"size=1024"}
    assert {c[5] for c in runtime if c[0] == "cudaMemcpy_v3020"} == {"count=1024"}
    assert {c[5] for c in driver if c[0] == "cuMemAlloc_v2"} == {"size=1024"}
    assert sorted(c[5] for c in runtime if c[0] == "cudaLaunchKernel_v7000") == \
        ["grid=32"] * 4 + ["grid=8"] * 6
    assert all(c[6] == "0" for c in runtime + driver)
    assert out["head"]["correlation_data_mismatches"] == "0"
    assert stats["callbacks_runtime"] == 2 * sum(RUNTIME_CALLS.values())
    assert stats["callbacks_driver"] == 2 * sum(DRIVER_CALLS.values())


def test_correlation_ids_are_per_outermost_call_and_shared_by_nested_calls(run_doubles):
    out = parse(run_doubles("cupti_harness")[0].stdout)
    runtime_ids = {}
    for name, _, site, corr, *_ in callbacks(out, "runtime"):
        if site == "enter":
            assert corr not in runtime_ids, "two runtime calls share a correlation id"
            runtime_ids[corr] = name
    assert len(runtime_ids) == sum(RUNTIME_CALLS.values())
    assert "0" not in runtime_ids
    nested = collections.Counter()
    for name, _, site, corr, *_ in callbacks(out, "driver"):
        if site == "enter" and corr in runtime_ids:
            assert name in NESTED[runtime_ids[corr]]
            nested[name] += 1
    assert nested == {"cuMemcpyHtoD_v2": 1, "cuMemcpyDtoH_v2": 1, "cuMemsetD8_v2": 1,
                      "cuLaunchKernel": 5, "cuLaunchKernelEx": 1}
    # Every callback of a call is delivered in ENTER/EXIT nesting order.
    stack = []
    for domain, name, _, site, corr, *_ in out["cb"]:
        if site == "enter":
            stack.append((domain, name, corr))
        else:
            assert stack.pop() == (domain, name, corr)
    assert stack == []


def test_with_ids_per_call_every_call_has_its_own(run_doubles):
    """CT_DOUBLE_CUPTI_IDS=per_call: no two callbacks' calls share an id, nested or not."""
    out = parse(run_doubles("cupti_harness", env={"CT_DOUBLE_CUPTI_IDS": "per_call"})[0].stdout)
    entered = [corr for _, _, _, site, corr, *_ in out["cb"] if site == "enter"]
    assert len(entered) == len(set(entered)) == \
        sum(RUNTIME_CALLS.values()) + sum(DRIVER_CALLS.values())


def test_kernel_records_match_their_launch_callbacks(run_doubles):
    proc, stats = run_doubles("cupti_harness")
    out = parse(proc.stdout)
    launch_symbol = {c[3]: c[4] for c in callbacks(out, "runtime") + callbacks(out, "driver")
                     if c[0] in ("cudaLaunchKernel_v7000", "cudaLaunchKernelExC_v11060",
                                 "cuLaunchKernel", "cuLaunchKernelEx")}
    kernels = records(out, "kernel")
    assert collections.Counter(k[0] for k in kernels) == KERNELS
    by_stream = collections.defaultdict(list)
    for name, gx, gy, gz, bx, by, bz, dyn, stream, corr, start, end in kernels:
        assert launch_symbol[corr] == name
        assert int(end) - int(start) == KERNEL_NS
        by_stream[int(stream)].append((int(start), int(end), name))
        expected = {"kernel_a": ("8", "32", "0"), "kernel_b": ("32", "8", "0"),
                    "drv_kernel": ("16", "64", "256")}[name]
        if (name, dyn) != ("kernel_a", "128"):  # the one cudaLaunchKernelExC: grid 4
            assert (gx, bx, dyn) == expected
    assert {s: [k[2] for k in ks] for s, ks in by_stream.items()} == {
        LEGACY_STREAM: ["kernel_a"] * 4 + ["drv_kernel"] * 2,
        FIRST_STREAM: ["kernel_b"] * 2}
    for ks in by_stream.values():
        assert all(a[1] <= b[0] for a, b in zip(ks, ks[1:])), "a stream ran two kernels at once"
    assert stats["kernel"] == len(kernels)
    assert {k: stats[f"kernel_name {k}"] for k in KERNELS} == KERNELS


def test_copies_sets_memory_and_syncs(run_doubles):
    proc, stats = run_doubles("cupti_harness")
    out = parse(proc.stdout)
    copies = [(int(c[0]), int(c[1]), int(c[2]), int(c[3])) for c in records(out, "memcpy")]
    assert copies == [
        (COPY_KIND["htod"], MEMORY_KIND["pinned"], MEMORY_KIND["device"], 1024),
        (COPY_KIND["dtoh"], MEMORY_KIND["device"], MEMORY_KIND["pinned"], 1024),
        (COPY_KIND["htod"], MEMORY_KIND["pageable"], MEMORY_KIND["device"], 1024)]
    assert [s[:3] for s in records(out, "memset")] == [["7", "1024", str(LEGACY_STREAM)]]
    assert [m[:3] for m in records(out, "memory")] == [
        ["1", "3", "1024"], ["1", "2", "1024"], ["2", "3", "1024"], ["2", "2", "1024"],
        ["1", "3", "1024"], ["2", "3", "1024"]]
    syncs = records(out, "sync")
    assert [(s[0], s[1]) for s in syncs] == [("3", str(FIRST_STREAM)), ("4", "4294967295"),
                                             ("4", "4294967295")]
    # A synchronisation really waits for the work it waits for.
    last_kernel_end = {int(k[8]): int(k[11]) for k in records(out, "kernel")}
    assert int(syncs[0][4]) >= last_kernel_end[FIRST_STREAM]
    assert int(syncs[2][4]) >= max(last_kernel_end.values())
    overheads = len(records(out, "overhead"))
    buffers = int(out["head"]["buffers"].split()[0])
    assert overheads == buffers >= 1
    assert {k: stats[k] for k in ("memcpy", "memset", "memory", "synchronization", "overhead",
                                  "dropped")} == {
        "memcpy": 3, "memset": 1, "memory": 6, "synchronization": 3, "overhead": overheads,
        "dropped": 0}


def test_small_buffers_go_back_from_cuptis_own_thread(run_doubles):
    proc, stats = run_doubles("cupti_harness", 400)
    out = parse(proc.stdout)
    buffers, on_worker = map(int, out["head"]["buffers"].split())
    assert collections.Counter(k[0] for k in records(out, "kernel")) == KERNELS
    assert len(out["rec"]) == sum(stats[k] for k in ("kernel", "memcpy", "memset", "memory",
                                                     "synchronization", "overhead"))
    assert buffers == stats["overhead"] > 2
    assert on_worker >= 1  # full buffers; flushes give the rest back on the caller's thread
    assert out["head"]["dropped"] == "0"


def test_max_records_per_buffer_is_honoured(run_doubles):
    out = parse(run_doubles("cupti_harness", 65536, 4)[0].stdout)
    assert sum(out["buf"]) == len(out["rec"])
    # A full buffer holds 3 records and the overhead record of its flush.
    assert max(out["buf"]) == 4 and out["buf"].count(4) >= 5


def test_drop_every_drops_gpu_records_and_counts_them(run_doubles):
    proc, stats = run_doubles("cupti_harness", env={"CT_DOUBLE_CUPTI_DROP_EVERY": 3})
    out = parse(proc.stdout)
    gpu = [r for r in out["rec"] if r[0] in ("kernel", "memcpy", "memset")]
    assert len(gpu) == GPU_RECORDS - GPU_RECORDS // 3
    assert out["head"]["dropped"] == str(GPU_RECORDS // 3)
    assert stats["dropped"] == GPU_RECORDS // 3
    assert len(records(out, "memory")) == 6  # only device work is thinned


def test_no_buffer_from_the_client_drops_every_record(run_doubles):
    proc, stats = run_doubles("cupti_harness", 0)
    out = parse(proc.stdout)
    assert out["rec"] == []
    expected = GPU_RECORDS + 6 + 3  # kernels, copies, sets; memory; syncs
    assert out["head"]["dropped"] == str(expected)
    assert stats["dropped"] == expected and stats["kernel"] == 0


def test_taken_slot_refuses_the_subscriber(run_doubles):
    out = parse(run_doubles("cupti_harness", env={"CT_DOUBLE_CUPTI_TAKEN": 1})[0].stdout)
    assert out["head"]["subscribe"] == "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"
    assert out["cb"] == []


def test_no_driver_on_the_path_is_an_unknown_error(run_doubles):
    out = parse(run_doubles("cupti_harness", driver=False)[0].stdout)
    assert out["head"]["subscribe"] == "CUPTI_ERROR_UNKNOWN"


def test_cuinit_calls_the_injection_library_once(run_doubles, build_dir):
    injection = os.path.join(build_dir, "tests", "libct_injection.so")
    proc, _ = run_doubles("cupti_harness", env={"CUDA_INJECTION64_PATH": injection})
    lines = [l for l in proc.stderr.splitlines() if l.startswith("InitializeInjection")]
    # The harness subscribed first, so the injected profiler finds the slot taken.
    assert lines == [f"InitializeInjection called in {proc.pid}: "
                     "subscribe CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"]
    proc, _ = run_doubles("cupti_harness", env={"CUDA_INJECTION64_PATH": "/nonexistent.so"})
    assert "InitializeInjection" not in proc.stderr
    assert parse(proc.stdout)["head"]["subscribe"] == "CUPTI_SUCCESS"


def test_only_cupti_sees_a_statically_linked_runtime(run_doubles, build_dir):
    injection = os.path.join(build_dir, "tests", "libct_injection.so")
    proc, stats = run_doubles("static_runtime", 3, 5, env={"CUDA_INJECTION64_PATH": injection})
    assert proc.stdout == "static_runtime: 3 app launches, 5 library launches\n"
    assert proc.stderr.count("subscribe CUPTI_SUCCESS") == 1
    assert stats["kernel_name app_kernel"] == 3
    assert stats["kernel_name _Z9gemm_tileILi128EEvPKfPfi"] == 5
    # app: 3 launches and a sync; library: malloc, 5 launches, sync, free.
    assert stats["callbacks_runtime"] == 2 * (4 + 8)
    # The library's runtime functions are neither exported nor interposable.
    dynsyms = subprocess.run(["nm", "-D", "--defined-only",
                              os.path.join(build_dir, "tests", "libstatic_cudart_user.so")],
                             capture_output=True, text=True, check=True).stdout
    assert sorted(line.split()[-1] for line in dynsyms.splitlines()) == [
        "_Z9gemm_tileILi128EEvPKfPfi", "run_library_kernels"]


def test_driver_launch_program(run_doubles, build_dir):
    injection = os.path.join(build_dir, "tests", "libct_injection.so")
    proc, stats = run_doubles("driver_launch", 7, env={"CUDA_INJECTION64_PATH": injection})
    assert proc.stdout == "driver_launch: 7 launches of each of 2 kernels, 4096 bytes round-tripped\n"
    assert stats["kernel_name triton_poi_fused_add_0"] == 7
    assert stats["kernel_name triton_red_fused_sum_1"] == 7
    assert stats["callbacks_runtime"] == 2  # cudaGetDeviceCount


# cuda.h: "#define cuLaunchKernel __CUDA_API_PTSZ(cuLaunchKernel)" and so on; cupti_driver_cbid.h
# gives each variant its own id.
PER_THREAD = {"cuLaunchKernel": ("cuLaunchKernel_ptsz", 442),
              "cuLaunchKernelEx": ("cuLaunchKernelEx_ptsz", 653),
              "cuMemcpyHtoD": ("cuMemcpyHtoD_v2_ptds", 397),
              "cuMemcpyDtoH": ("cuMemcpyDtoH_v2_ptds", 398),
              "cuMemcpyDtoD": ("cuMemcpyDtoD_v2_ptds", 399),
              "cuMemcpyHtoDAsync": ("cuMemcpyHtoDAsync_v2_ptsz", 421),
              "cuMemcpyDtoHAsync": ("cuMemcpyDtoHAsync_v2_ptsz", 422),
              "cuMemsetD8": ("cuMemsetD8_v2_ptds", 411),
              "cuMemsetD32": ("cuMemsetD32_v2_ptds", 413),
              "cuStreamSynchronize": ("cuStreamSynchronize_ptsz", 440)}
LEGACY = {"cuLaunchKernel": "cuLaunchKernel", "cuLaunchKernelEx": "cuLaunchKernelEx",
          "cuMemcpyHtoD": "cuMemcpyHtoD_v2", "cuMemcpyDtoH": "cuMemcpyDtoH_v2",
          "cuMemcpyDtoD": "cuMemcpyDtoD_v2", "cuMemcpyHtoDAsync": "cuMemcpyHtoDAsync_v2",
          "cuMemcpyDtoHAsync": "cuMemcpyDtoHAsync_v2", "cuMemsetD8": "cuMemsetD8_v2",
          "cuMemsetD32": "cuMemsetD32_v2", "cuStreamSynchronize": "cuStreamSynchronize"}


def test_get_proc_address_gives_per_thread_variants_only_when_asked(build_dir):
    driver = ctypes.CDLL(os.path.join(build_dir, "driver", "libcuda.so.1"))
    cupti = ctypes.CDLL(os.path.join(build_dir, "double", "libcupti.so.13"))
    get = driver.cuGetProcAddress_v2
    get.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int,
                    ctypes.c_uint64, ctypes.POINTER(ctypes.c_int)]

    def lookup(base, flags, version=13000):
        pfn, status = ctypes.c_void_p(), ctypes.c_int(-1)
        assert get(base.encode(), ctypes.byref(pfn), version, flags, ctypes.byref(status)) == 0
        return pfn.value, status.value

    def address(symbol):
        return ctypes.cast(getattr(driver, symbol), ctypes.c_void_p).value

    DEFAULT, LEGACY_STREAM, PER_THREAD_STREAM = 0, 1, 2
    for base, (variant, cbid) in PER_THREAD.items():
        assert lookup(base, PER_THREAD_STREAM) == (address(variant), 0)
        assert lookup(base, DEFAULT) == lookup(base, LEGACY_STREAM) == (address(LEGACY[base]), 0)
        name = ctypes.c_char_p()
        assert cupti.cuptiGetCallbackName(1, cbid, ctypes.byref(name)) == 0  # driver domain
        assert name.value.decode() == variant
    # No per-thread variant: the legacy function; an unknown name or a too-old version: NULL.
    assert lookup("cuCtxSynchronize", PER_THREAD_STREAM) == (address("cuCtxSynchronize"), 0)
    assert lookup("cuNoSuchThing", PER_THREAD_STREAM) == (None, 1)
    assert lookup("cuLaunchKernel", PER_THREAD_STREAM, version=3020) == (None, 2)
    pfn = ctypes.c_void_p()
    assert get(b"cuLaunchKernel", ctypes.byref(pfn), 99000, PER_THREAD_STREAM, None) == 1


def test_driver_launch_program_per_thread(run_doubles, build_dir):
    injection = os.path.join(build_dir, "tests", "libct_injection.so")
    proc, stats = run_doubles("driver_launch", 7, 0, 1, env={"CUDA_INJECTION64_PATH": injection})
    assert proc.stdout == "driver_launch: 7 launches of each of 2 kernels, 4096 bytes round-tripped\n"
    assert stats["kernel_name triton_poi_fused_add_0"] == 7
    assert stats["kernel_name triton_red_fused_sum_1"] == 7


@pytest.mark.parametrize("multiple", [0, 1], ids=["one_subscriber", "several_subscribers"])
def test_a_second_subscriber_is_refused_only_where_one_is_allowed(build_dir, tmp_path, multiple):
    """The injection library subscribes at cuInit; own_profiler then subscribes (through
    cuptiSubscribe_v2) and enables the launch callback: refused as a second subscriber by default,
    taken beside the first with CT_DOUBLE_CUPTI_MULTIPLE_SUBSCRIBERS=1, and then given only the
    callbacks it enabled."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CUDATRACE_", "CT_DOUBLE_", "CUDA_INJECTION"))
           and k not in ("LD_PRELOAD", "LD_LIBRARY_PATH")}
    env.update(LD_LIBRARY_PATH=f"{build_dir}/double:{build_dir}/driver", CT_DOUBLE_DRIVER="1",
               CUDA_INJECTION64_PATH=os.path.join(build_dir, "tests", "libct_injection.so"),
               CT_DOUBLE_CUPTI_MULTIPLE_SUBSCRIBERS=str(multiple))
    done = subprocess.run([os.path.join(build_dir, "tests", "own_profiler"), "5", "7", "1", "0"],
                          env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    if multiple:
        assert (done.returncode, done.stdout) == (
            0, "own_profiler: subscribe CUPTI_SUCCESS, 7 launch callbacks, 0 kernel records\n")
    else:
        assert (done.returncode, done.stdout) == (
            1, "own_profiler: subscribe CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, "
               "0 launch callbacks, 0 kernel records\n")
