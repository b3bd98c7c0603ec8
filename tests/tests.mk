# Build rules for the test fixtures, included by the top-level Makefile (which defines BUILD,
# CUDA_HOME and CC): the CPU double of libcudart.so.13, the test programs in tests/programs and
# the bundled example. Programs link against the double by soname only (no rpath), so each run
# picks the double or the real runtime with LD_LIBRARY_PATH. They link with -rdynamic because
# kernel names are resolved from host function addresses, which only exported symbols allow.

CT_DOUBLE_DIR := $(BUILD)/double
CT_DOUBLE_LIB := $(CT_DOUBLE_DIR)/libcudart.so.13
CT_DOUBLE_SRC := tests/doubles/runtime/cudart_double.c
CT_DOUBLE_MAP := tests/doubles/runtime/libcudart.map
CT_DOUBLE_HDR := tests/doubles/runtime/cudart_extra.h
# What the runtime, driver and CUPTI doubles share: their private driver interface and helpers,
# and the runtime's API list (CUPTI names its callbacks from it).
CT_GPU_HDRS := tests/doubles/shared/double_gpu.h tests/doubles/shared/double_util.h \
	tests/doubles/shared/cudart_apis.h tests/doubles/shared/double_node.h \
	tests/doubles/shared/double_graph.h

CT_DOUBLE_CFLAGS := -std=c11 -O2 -fPIC -shared -Wall -Wextra -Werror -pthread \
	-I. -I$(CUDA_HOME)/include
CT_DOUBLE_LDFLAGS := -Wl,--version-script=$(CT_DOUBLE_MAP) -Wl,-soname,libcudart.so.13 -ldl

CT_PROGRAM_CFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror -pthread -I. -I$(CUDA_HOME)/include
CT_PROGRAM_LDFLAGS := -rdynamic -L$(CT_DOUBLE_DIR) -l:libcudart.so.13

CT_TEST_PROGRAMS := $(patsubst tests/programs/%.c,$(BUILD)/tests/%,$(wildcard tests/programs/*.c))
CT_EXAMPLES := $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))

.PHONY: test-programs
test-programs: $(CT_DOUBLE_LIB) $(CT_DOUBLE_DIR)/libcudart.so $(CT_TEST_PROGRAMS) $(CT_EXAMPLES)

$(CT_DOUBLE_LIB): $(CT_DOUBLE_SRC) $(CT_DOUBLE_HDR) $(CT_DOUBLE_MAP) $(CT_GPU_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CT_DOUBLE_CFLAGS) -o $@ $(CT_DOUBLE_SRC) $(CT_DOUBLE_LDFLAGS)

$(CT_DOUBLE_DIR)/libcudart.so: $(CT_DOUBLE_LIB)
	ln -sf libcudart.so.13 $@

$(CT_TEST_PROGRAMS): $(BUILD)/tests/%: tests/programs/%.c tests/programs/program_args.h tests/programs/mapped_libraries.h \
		tests/programs/host_work.h \
		$(CT_DOUBLE_HDR) $(CT_DOUBLE_LIB)
	@mkdir -p $(@D)
	$(CC) $(CT_PROGRAM_CFLAGS) -o $@ $< $(CT_PROGRAM_LDFLAGS)

$(CT_EXAMPLES): $(BUILD)/examples/%: examples/%.c $(CT_DOUBLE_LIB)
	@mkdir -p $(@D)
	$(CC) $(CT_PROGRAM_CFLAGS) -o $@ $< $(CT_PROGRAM_LDFLAGS)

# The allocation/lock counter the hot-path test preloads ahead of the tracer.
CT_PROBE := $(BUILD)/tests/libcall_counter.so
test-programs: $(CT_PROBE)
$(CT_PROBE): tests/probe/call_counter.c
	@mkdir -p $(@D)
	$(CC) -std=c11 -O2 -fPIC -shared -Wall -Wextra -Werror -o $@ $< -ldl -pthread

# A library that calls CUDA from its constructor and destructor, and its user.
CT_EARLY_LIB := $(BUILD)/tests/libearly.so
test-programs: $(CT_EARLY_LIB) $(BUILD)/tests/early_user
$(CT_EARLY_LIB): tests/early/early.c $(CT_DOUBLE_LIB)
	@mkdir -p $(@D)
	$(CC) $(CT_PROGRAM_CFLAGS) -fPIC -shared -o $@ $< -L$(CT_DOUBLE_DIR) -l:libcudart.so.13
$(BUILD)/tests/early_user: tests/early/early_user.c $(CT_EARLY_LIB)
	$(CC) $(CT_PROGRAM_CFLAGS) -o $@ $< -L$(BUILD)/tests -Wl,--no-as-needed -learly -Wl,--as-needed -Wl,-rpath,'$$ORIGIN' \
		$(CT_PROGRAM_LDFLAGS)

# One library that allocates device memory of its own, named as a CUDA library and not.
CT_HOLDER_LIBS := $(BUILD)/tests/holders/libnccl.so.2 $(BUILD)/tests/holders/libbuffers.so
test-programs: $(CT_HOLDER_LIBS)
$(CT_HOLDER_LIBS): tests/holders/library_buffers.c $(CT_DOUBLE_LIB)
	@mkdir -p $(@D)
	$(CC) $(CT_PROGRAM_CFLAGS) -fPIC -shared -o $@ $< -L$(CT_DOUBLE_DIR) -l:libcudart.so.13

# A library with RUNPATH $ORIGIN that dlopens a CUDA library by bare name.
test-programs: $(BUILD)/tests/librunpath_user.so
$(BUILD)/tests/librunpath_user.so: tests/runpath/runpath_user.c
	@mkdir -p $(@D)
	$(CC) $(CT_PROGRAM_CFLAGS) -fPIC -shared -o $@ $< -ldl -Wl,--enable-new-dtags \
		-Wl,-rpath,'$$ORIGIN'

# A program that touches the CUDA stack only by dlopen (linked against no CUDA library).
test-programs: $(BUILD)/tests/dlopen_only
$(BUILD)/tests/dlopen_only: tests/loader/dlopen_only.c tests/programs/mapped_libraries.h
	@mkdir -p $(@D)
	$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror -I. -o $@ $< -ldl

# The library-search reconstruction (collector/libraries/ld_search.c) behind a command line,
# which tests/test_collector_ld_search.py compares with glibc's own LD_DEBUG=libs.
CT_LD_SEARCH_SRC := tests/unit/ld_search_check.c collector/libraries/ld_search.c \
	collector/libraries/ld_cache.c collector/libraries/hwcaps.c collector/elf/elf_file.c \
	common/entry_list.c
test-programs: $(BUILD)/unit/ld_search_check
$(BUILD)/unit/ld_search_check: $(CT_LD_SEARCH_SRC) $(wildcard collector/libraries/*.h collector/elf/*.h)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(SAN_CFLAGS) -o $@ $(CT_LD_SEARCH_SRC)
test-programs: $(BUILD)/tests/dlopen_threads
$(BUILD)/tests/dlopen_threads: tests/loader/dlopen_threads.c
	@mkdir -p $(@D)
	$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror -pthread -o $@ $< -ldl

# NVTX ranges around CUDA calls: the same steps built into a program and
# into a library the second program links.
test-programs: $(BUILD)/tests/nvtx_steps $(BUILD)/tests/nvtx_steps_via_lib
$(BUILD)/tests/nvtx_steps: tests/nvtx/nvtx_steps_main.c tests/nvtx/steps.c $(CT_DOUBLE_LIB)
	@mkdir -p $(@D)
	$(CC) $(CT_PROGRAM_CFLAGS) -o $@ tests/nvtx/nvtx_steps_main.c tests/nvtx/steps.c \
		$(CT_PROGRAM_LDFLAGS) -ldl
$(BUILD)/tests/libnvtx_steps.so: tests/nvtx/steps.c $(CT_DOUBLE_LIB)
	@mkdir -p $(@D)
	$(CC) $(CT_PROGRAM_CFLAGS) -fPIC -shared -o $@ $< -L$(CT_DOUBLE_DIR) -l:libcudart.so.13 -ldl
$(BUILD)/tests/nvtx_steps_via_lib: tests/nvtx/nvtx_steps_main.c $(BUILD)/tests/libnvtx_steps.so
	$(CC) $(CT_PROGRAM_CFLAGS) -o $@ $< -L$(BUILD)/tests -Wl,--no-as-needed -lnvtx_steps \
		-Wl,--as-needed -Wl,-rpath,'$$ORIGIN' $(CT_PROGRAM_LDFLAGS)

# The CPU doubles of the driver and of CUPTI (tests/test_doubles_driver_cupti.py). The driver sits in a
# folder of its own, so only the tests that want a driver put it on the library path; CUPTI sits
# beside the runtime double, where the tracer looks for it.
CT_DRIVER_LIB := $(BUILD)/driver/libcuda.so.1
CT_CUPTI_LIB := $(CT_DOUBLE_DIR)/libcupti.so.13
test-programs: $(CT_DRIVER_LIB) $(CT_CUPTI_LIB)
$(CT_DRIVER_LIB): tests/doubles/driver/cuda_double.c tests/doubles/driver/libcuda.map $(CT_GPU_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CT_DOUBLE_CFLAGS) -o $@ $< -Wl,--version-script=tests/doubles/driver/libcuda.map \
		-Wl,-soname,libcuda.so.1 -ldl
$(CT_CUPTI_LIB): tests/doubles/cupti/cupti_double.c tests/doubles/cupti/libcupti.map $(CT_GPU_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CT_DOUBLE_CFLAGS) -o $@ $< -Wl,--version-script=tests/doubles/cupti/libcupti.map \
		-Wl,-soname,libcupti.so.13 -ldl

# A client of the CUPTI double that checks the three doubles together, and a CUDA injection
# library for the driver's CUDA_INJECTION64_PATH.
test-programs: $(BUILD)/tests/cupti_harness $(BUILD)/tests/libct_injection.so
$(BUILD)/tests/cupti_harness: tests/programs/cupti/harness.c tests/programs/program_args.h \
		$(CT_DOUBLE_LIB) $(CT_CUPTI_LIB)
	@mkdir -p $(@D)
	$(CC) $(CT_PROGRAM_CFLAGS) -o $@ $< $(CT_PROGRAM_LDFLAGS) -l:libcupti.so.13 -ldl
$(BUILD)/tests/libct_injection.so: tests/programs/cupti/injection.c $(CT_CUPTI_LIB)
	@mkdir -p $(@D)
	$(CC) $(CT_PROGRAM_CFLAGS) -fPIC -shared -o $@ $< -L$(CT_DOUBLE_DIR) -l:libcupti.so.13
# The injection library that reports graph records and resource callbacks (test_doubles_graphs.py).
test-programs: $(BUILD)/tests/libct_graph_injection.so
$(BUILD)/tests/libct_graph_injection.so: tests/programs/cupti/graph_injection.c $(CT_CUPTI_LIB)
	@mkdir -p $(@D)
	$(CC) $(CT_PROGRAM_CFLAGS) -fPIC -shared -o $@ $< -L$(CT_DOUBLE_DIR) -l:libcupti.so.13

# A program that subscribes to CUPTI itself, as torch.profiler does.
test-programs: $(BUILD)/tests/own_profiler
$(BUILD)/tests/own_profiler: tests/programs/cupti/own_profiler.c tests/programs/program_args.h \
		$(CT_DOUBLE_LIB) $(CT_CUPTI_LIB)
	@mkdir -p $(@D)
	$(CC) $(CT_PROGRAM_CFLAGS) -o $@ $< $(CT_PROGRAM_LDFLAGS) -l:libcupti.so.13 -ldl

# A library standing for cuBLAS with a statically linked runtime: its own copy of the runtime
# double (with its own statistics variable), bound inside it by -Bsymbolic and hidden by its
# version script, so an LD_PRELOAD cannot see its calls; and a program using it and the shared
# runtime both.
CT_STATIC_USER := $(BUILD)/tests/libstatic_cudart_user.so
test-programs: $(CT_STATIC_USER) $(BUILD)/tests/static_runtime
$(CT_STATIC_USER): tests/programs/cupti/static_cudart_user.c tests/programs/cupti/static_cudart_user.h \
		tests/programs/cupti/static_cudart_user.map $(CT_DOUBLE_SRC) $(CT_DOUBLE_HDR) $(CT_GPU_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CT_DOUBLE_CFLAGS) -DCT_DOUBLE_STATS_ENV='"CT_DOUBLE_STATIC_STATS"' -o $@ \
		tests/programs/cupti/static_cudart_user.c $(CT_DOUBLE_SRC) \
		-Wl,--version-script=tests/programs/cupti/static_cudart_user.map -Wl,-Bsymbolic -ldl
$(BUILD)/tests/static_runtime: tests/programs/cupti/static_runtime.c tests/programs/cupti/static_cudart_user.h \
		tests/programs/program_args.h $(CT_STATIC_USER) $(CT_DOUBLE_LIB)
	$(CC) $(CT_PROGRAM_CFLAGS) -o $@ $< -L$(BUILD)/tests -l:libstatic_cudart_user.so \
		-Wl,-rpath,'$$ORIGIN' $(CT_PROGRAM_LDFLAGS)

# Capture and replay (tests/replay/): the collector's drain loop with a builder that records
# what it is given, and this build's builder driven from such a record, for comparing what
# two builds write of one run (tools/compare_builds.sh).
CT_REPLAY_CFLAGS := $(BASE_CFLAGS) $(SAN_CFLAGS)
test-programs: $(BUILD)/tests/replay_capture $(BUILD)/tests/replay
$(BUILD)/tests/replay_capture: tests/replay/capture_builder.c tests/replay/capture_format.h \
		$(BUILD)/obj/collector/main.o $(BUILD)/obj/collector/ring_drain.o \
		$(BUILD)/obj/collector/cpu_placement.o $(BUILD)/obj/collector/perfetto/clock_map.o
	@mkdir -p $(@D)
	$(CC) $(CT_REPLAY_CFLAGS) -o $@ tests/replay/capture_builder.c $(filter %.o,$^)
$(BUILD)/tests/replay: tests/replay/replay.c tests/replay/capture_format.h $(filter-out %/main.o,$(COLLECTOR_OBJ))
	@mkdir -p $(@D)
	$(CC) $(CT_REPLAY_CFLAGS) -o $@ tests/replay/replay.c $(filter %.o,$^) \
		-l:libzstd.a -l:libprotobuf-c.a -lstdc++
# What compare_builds.sh preloads into both builds' replays (quiet_status.c); never sanitized,
# since it is preloaded.
test-programs: $(BUILD)/tests/libreplay_quiet.so
$(BUILD)/tests/libreplay_quiet.so: tests/replay/quiet_status.c
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) -fPIC -shared -o $@ $< -ldl

# The trace vocabulary and the call slices' names as text, for tests/trace_vocabulary.py.
test-programs: $(BUILD)/unit/trace_names_dump
$(BUILD)/unit/trace_names_dump: tests/unit/trace_names_dump.c include/cudatrace/trace_names.h \
		include/cudatrace/functions.h
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) -o $@ $<

# Programs in the conditions real jobs meet (tests/test_preload_hostile.py): they dlopen the
# runtime, so the session starts where they choose.
# without_pidfd runs them as on a kernel that has no pidfds.
test-programs: $(BUILD)/tests/hostile $(BUILD)/tests/without_pidfd
$(BUILD)/tests/hostile: tests/hostile/hostile.c tests/programs/program_args.h
	@mkdir -p $(@D)
	$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror -I. -o $@ $< -ldl
$(BUILD)/tests/without_pidfd: tests/hostile/without_pidfd.c
	@mkdir -p $(@D)
	$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror -o $@ $<

# The NVML double (tests/doubles/nvml/): a libnvidia-ml.so.1 the collector loads when a test puts
# its folder on the library path, built against NVIDIA's nvml.h (the Makefile's NVML_INCLUDE).
CT_NVML_LIB := $(BUILD)/nvml/libnvidia-ml.so.1
test-programs: $(CT_NVML_LIB)
$(CT_NVML_LIB): tests/doubles/nvml/nvml_double.c tests/doubles/nvml/libnvidia-ml.map \
		tests/doubles/shared/double_node.h | $(BUILD_NVML_INCLUDE)
	@mkdir -p $(@D)
	$(CC) $(CT_DOUBLE_CFLAGS) -isystem $(BUILD_NVML_INCLUDE) -o $@ $< \
		-Wl,--version-script=tests/doubles/nvml/libnvidia-ml.map -Wl,-soname,libnvidia-ml.so.1

# The Python double as CPython 3.9 and 3.10, which a reader tells apart by
# the functions each exports (neither has Py_Version), and as one older
# than both, which exports neither.
CT_OLD_PYTHON_DOUBLES := $(BUILD)/tests/python_double_3_8 $(BUILD)/tests/python_double_3_9 \
	$(BUILD)/tests/python_double_3_10
test-programs: $(CT_OLD_PYTHON_DOUBLES)
$(CT_OLD_PYTHON_DOUBLES): $(BUILD)/tests/python_double_3_%: tests/programs/python_double.c \
		$(CT_DOUBLE_HDR) $(CT_DOUBLE_LIB)
	@mkdir -p $(@D)
	$(CC) $(CT_PROGRAM_CFLAGS) -DCT_PY_DOUBLE_MINOR=$* -o $@ $< $(CT_PROGRAM_LDFLAGS)
