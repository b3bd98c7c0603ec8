# cudatrace: `make` builds build/libcudatrace.so, build/cudatrace-collector and
# build/cudatrace. `make demo` and `make test` each set up a fresh machine
# themselves (Debian packages when run as root, a Python venv for the tests).

CUDA_HOME ?= /usr/local/cuda
BUILD ?= build
CC ?= gcc
PYTHON ?= python3
VENV ?= .venv
# Where NVIDIA's wheels are unpacked, once (see CT_RUNTIME_WHEELS and CT_NVML_WHEEL below).
WHEEL_CACHE ?= .cache/wheels
SANITIZE ?=

WARNINGS := -Wall -Wextra -Werror
# Includes are qualified by folder ("collector/perfetto/writer.h", "cudatrace/record.h"), so
# no project header can stand in for a system one. -MMD -MP: each object's header dependencies
# in a .d file beside it.
BASE_CFLAGS := -std=c11 -O2 -g $(WARNINGS) -D_GNU_SOURCE -I. -Iinclude -I$(BUILD)/gen
DEPFLAGS := -MMD -MP
# Sanitizers instrument the collector and the command; never the preload (see below).
ifneq ($(SANITIZE),)
SAN_CFLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
SAN_LDFLAGS := -fsanitize=$(SANITIZE)
endif

# The preload lives in other people's processes: hidden by default (only the
# hooks are exported), PIC, and linked against nothing beyond glibc.
PRELOAD_CFLAGS := $(BASE_CFLAGS) -fPIC -fvisibility=hidden -I$(CUDA_HOME)/include
PRELOAD_SRC := $(filter-out preload/audit/%,$(wildcard preload/*/*.c))
# The pieces of common/ the preload needs, compiled with the preload's flags.
PRELOAD_OBJ := $(PRELOAD_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/preload/loader/dl_trampoline.o \
	$(BUILD)/obj/preload/common/library_family.o $(BUILD)/obj/preload/common/launcher.o \
	$(BUILD)/obj/preload/common/python_layout.o

PROTO := include/cudatrace/perfetto_trace.proto
PROTO_C := $(BUILD)/gen/perfetto_trace.pb-c.c
PROTO_H := $(BUILD)/gen/perfetto_trace.pb-c.h
ERROR_NAMES := $(BUILD)/gen/cuda_error_names.h

# common/: what more than one of the four programs needs. The collector and the command
# share the string table and the u64 map; the preload and the audit module the library
# families (compiled again with their own flags, above and below).
COMMON_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard common/*.c)) $(BUILD)/obj/gen/perfetto_trace.pb-c.o
COLLECTOR_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard collector/*.c collector/*/*.c)) $(COMMON_OBJ)
CLI_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(filter-out viewer-export/cmd/doctor_probe.c,\
	$(wildcard viewer-export/*.c viewer-export/*/*.c))) $(COMMON_OBJ)

# python3-venv for the test venv, procps (pgrep) and binutils (nm, readelf) for the tests; g++
# for libstdc++, whose demangler the collector uses for kernel names.
DEBIAN_PACKAGES := libzstd-dev libprotobuf-c-dev protobuf-c-compiler libunwind-dev zlib1g-dev zstd \
	strace python3-venv procps binutils g++
# For the tests only (`make demo` does without): chromium loads the html export's page.
TEST_DEBIAN_PACKAGES := chromium

.PHONY: all deps test demo bench clean venv format
.SECONDARY:

all: $(BUILD)/libcudatrace.so $(BUILD)/libcudatrace-audit.so $(BUILD)/cudatrace-collector \
	$(BUILD)/cudatrace $(BUILD)/cudatrace-probe

# Installs those of the Debian packages $(1) that are missing (as root; else says which).
define install_debian_packages
	@missing=""; for p in $(1); do \
	    dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	    if [ "$$(id -u)" != 0 ]; then echo "cudatrace: missing Debian packages:$$missing (run make as root, or apt-get install them)" >&2; exit 1; fi; \
	    echo "installing$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi
endef

deps: $(BUILD)/.deps
$(BUILD)/.deps:
	$(call install_debian_packages,$(DEBIAN_PACKAGES))
	@test -f $(CUDA_HOME)/include/cuda_runtime_api.h || { echo "cudatrace: no CUDA headers in CUDA_HOME=$(CUDA_HOME)" >&2; exit 1; }
	@mkdir -p $(BUILD) && touch $@

$(BUILD)/gen/%.pb-c.c $(BUILD)/gen/%.pb-c.h: include/cudatrace/%.proto | $(BUILD)/.deps
	@mkdir -p $(BUILD)/gen
	protoc-c --c_out=$(BUILD)/gen -Iinclude/cudatrace $<

$(ERROR_NAMES): tools/gen_error_names.sh | $(BUILD)/.deps
	@mkdir -p $(BUILD)/gen
	sh tools/gen_error_names.sh $(CUDA_HOME)/include/driver_types.h > $@

$(BUILD)/obj/preload/%.o: preload/%.c | $(BUILD)/.deps
	@mkdir -p $(dir $@)
	$(CC) $(PRELOAD_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/obj/preload/%.o: preload/%.S | $(BUILD)/.deps
	@mkdir -p $(dir $@)
	$(CC) -fPIC -c $< -o $@

$(BUILD)/obj/preload/common/%.o: common/%.c | $(BUILD)/.deps
	@mkdir -p $(dir $@)
	$(CC) $(PRELOAD_CFLAGS) $(DEPFLAGS) -c $< -o $@

# Every object of the collector and the command waits for the generated headers, which
# any of them may include.
$(BUILD)/obj/%.o: %.c | $(PROTO_H) $(ERROR_NAMES)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(SAN_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c $(PROTO_H)
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -Werror,$(BASE_CFLAGS)) $(SAN_CFLAGS) -c $< -o $@

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

# The preload carries no sanitizer: it must stay dependency-free in the
# processes it is preloaded into (the sanitizer runtime would have to be
# preloaded first).
$(BUILD)/libcudatrace.so: $(PRELOAD_OBJ)
	$(CC) -shared -fPIC -Wl,-z,now -Wl,-z,relro -o $@ $^ -pthread -ldl

# The rtld-audit module (LD_AUDIT, set by `cudatrace run`): like the preload,
# glibc only, and it exports nothing but the la_* entry points.
$(BUILD)/libcudatrace-audit.so: preload/audit/audit.c preload/core/export.h \
		preload/loader/main_program.h common/library_family.c common/library_family.h | $(BUILD)/.deps
	$(CC) $(PRELOAD_CFLAGS) -shared -o $@ preload/audit/audit.c common/library_family.c

# The child `cudatrace doctor` runs under the tracer: built like the preload,
# never with sanitizers, since it runs under LD_PRELOAD and LD_AUDIT.
$(BUILD)/cudatrace-probe: viewer-export/cmd/doctor_probe.c | $(BUILD)/.deps
	$(CC) $(BASE_CFLAGS) -o $@ $< -ldl

$(BUILD)/cudatrace-collector: $(COLLECTOR_OBJ)
	$(CC) $(SAN_LDFLAGS) -o $@ $^ -l:libzstd.a -l:libprotobuf-c.a -lstdc++

$(BUILD)/cudatrace: $(CLI_OBJ)
	$(CC) $(SAN_LDFLAGS) -o $@ $^ -l:libzstd.a -l:libprotobuf-c.a -lz -lm

# NVIDIA's nvml.h, which the toolkit here lacks, from its nvidia-nvml-dev wheel: the collector's
# NVML sampler (collector/gpu_state/) takes NVML's types from it, and the NVML double
# (tests/doubles/nvml/) its entry points. Only the header is used: NVML itself is loaded at run
# time, never linked. A cache of its own beside the wheel cache, which its rule empties.
CT_NVML_WHEEL := nvidia-nvml-dev==13.5.37
NVML_CACHE ?= .cache/nvml
NVML_INCLUDE := $(NVML_CACHE)/nvidia/cu13/include
$(NVML_CACHE)/.ok: | $(VENV)/.ok
	rm -rf $(NVML_CACHE) && mkdir -p $(NVML_CACHE)/download
	$(VENV)/bin/pip download -q --no-deps -d $(NVML_CACHE)/download $(CT_NVML_WHEEL)
	$(VENV)/bin/python -c 'import glob, sys, zipfile; zipfile.ZipFile(glob.glob(sys.argv[1])[0]).extractall(sys.argv[2])' \
	    '$(NVML_CACHE)/download/*.whl' $(NVML_CACHE)
	test -f $(NVML_INCLUDE)/nvml.h
	touch $@
# The build's link to the header's folder, which whatever else compiles the collector's code (the
# tests' preprocessing of it) finds there.
BUILD_NVML_INCLUDE := $(BUILD)/nvml-include
$(BUILD_NVML_INCLUDE): | $(NVML_CACHE)/.ok
	mkdir -p $(BUILD) && ln -sfn $(abspath $(NVML_INCLUDE)) $@
NVML_OBJ := $(filter $(BUILD)/obj/collector/gpu_state/%,$(COLLECTOR_OBJ))
$(NVML_OBJ): BASE_CFLAGS += -isystem $(BUILD_NVML_INCLUDE)
$(NVML_OBJ): | $(BUILD_NVML_INCLUDE)

-include tests/tests.mk
-include tests/python_frames.mk
-include tests/symbolize.mk
-include tests/unit/unit.mk
include tests/fuzz/fuzz.mk

venv: $(VENV)/.ok
$(VENV)/.ok: tests/requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q -r tests/requirements.txt
	touch $@

# Real CUDA runtimes of other versions, from NVIDIA's wheels, for the library
# tests (two runtimes in one process, two minors of one major), and CUDA 13's
# runtime and CUPTI wheels (nvidia/cu13/lib) for the search for libcupti beside
# the runtime. Downloaded and unpacked once into WHEEL_CACHE, which every build
# folder links to.
CT_RUNTIME_WHEELS := nvidia-cuda-runtime-cu12==12.4.127 nvidia-cuda-runtime-cu12==12.9.79 \
	nvidia-cuda-runtime-cu11==11.8.89 nvidia-cuda-runtime==13.0.96 nvidia-cuda-cupti==13.0.85
$(WHEEL_CACHE)/.ok: | $(VENV)/.ok
	rm -rf $(WHEEL_CACHE) && mkdir -p $(WHEEL_CACHE)/download
	for wheel in $(CT_RUNTIME_WHEELS); do \
	    $(VENV)/bin/pip download -q --no-deps -d $(WHEEL_CACHE)/download $$wheel || exit 1; \
	done
	for file in $(WHEEL_CACHE)/download/*.whl; do \
	    $(VENV)/bin/python -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' \
	        $$file $(WHEEL_CACHE)/$$(basename $$file .whl) || exit 1; \
	done
	touch $@
$(BUILD)/wheels/.ok: $(WHEEL_CACHE)/.ok
	mkdir -p $(BUILD) && rm -rf $(BUILD)/wheels && ln -s $(abspath $(WHEEL_CACHE)) $(BUILD)/wheels

$(BUILD)/.test-deps: | $(BUILD)/.deps
	$(call install_debian_packages,$(TEST_DEBIAN_PACKAGES))
	@touch $@

test: deps $(BUILD)/.test-deps all test-programs venv $(BUILD)/unit/ring_stress $(BUILD)/wheels/.ok
	CUDATRACE_TEST_BUILD=$(BUILD) $(VENV)/bin/python -m pytest -q tests

demo: deps all test-programs
	@sh examples/demo.sh $(BUILD)

bench: deps all test-programs $(BUILD)/bench/collector_throughput $(BUILD)/bench/dlopen_loop \
		$(BUILD)/bench/nvml_cost $(BUILD)/bench/libfloor.so $(BUILD)/bench/libfloor_read.so $(BUILD)/bench/host_sample_cost \
		$(BUILD)/bench/python_stack_cost
	@sh tests/bench/bench.sh $(BUILD)

format:
	clang-format -i $(shell find preload collector viewer-export common include -name '*.[ch]')

clean:
	rm -rf $(BUILD)

$(BUILD)/bench/collector_throughput: tests/bench/collector_throughput.c $(filter-out %/main.o,$(COLLECTOR_OBJ))
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(SAN_CFLAGS) -o $@ $^ -l:libzstd.a -l:libprotobuf-c.a -lstdc++

# What the host sampler costs the collector per thread sample (collector/host_sampling/).
# The outside Python reader, which the rounds call, and what it needs.
CT_PY_STACK_OBJ := $(addprefix $(BUILD)/obj/,collector/host_sampling/python_stacks.o \
	collector/host_sampling/python_debug_offsets.o \
	collector/host_sampling/python_lines.o collector/elf/elf_symbols.o collector/elf/elf_file.o \
	common/python_layout.o common/u64_map.o)
$(BUILD)/bench/host_sample_cost: tests/bench/host_sample_cost.c $(CT_PY_STACK_OBJ) \
		$(addprefix $(BUILD)/obj/collector/host_sampling/,proc_read.o rounds.o tracked.o)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(SAN_CFLAGS) -o $@ $^ -pthread

# What one Python stack read from outside costs (collector/host_sampling/python_stacks.c).
$(BUILD)/bench/python_stack_cost: tests/bench/python_stack_cost.c $(CT_PY_STACK_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(SAN_CFLAGS) -o $@ $^

# What each NVML call of the sampler costs, through whatever libnvidia-ml.so.1 the library path gives.
$(BUILD)/bench/nvml_cost: tests/bench/nvml_cost.c $(BUILD)/obj/collector/gpu_state/nvml_loader.o | $(BUILD_NVML_INCLUDE)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -isystem $(BUILD_NVML_INCLUDE) -o $@ $^ -ldl

# The floor the bench holds the tracer's cost against (tests/bench/floor_preload.c).
$(BUILD)/bench/libfloor.so: tests/bench/floor_preload.c | $(BUILD)/.deps
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -I$(CUDA_HOME)/include -fPIC -shared -fvisibility=hidden -o $@ $< -ldl

# The same floor with its stamps read by another process (FLOOR_READ in the same source).
$(BUILD)/bench/libfloor_read.so: tests/bench/floor_preload.c | $(BUILD)/.deps
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -DFLOOR_READ -I$(CUDA_HOME)/include -fPIC -shared -fvisibility=hidden -o $@ $< -ldl

$(BUILD)/bench/dlopen_loop: tests/bench/dlopen_loop.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -o $@ $< -ldl

# The rings' producer (preload/core/ring.c) and consumer (collector/ring_drain.c)
# in one process, for the thread sanitizer: `make test SANITIZE=thread`.
$(BUILD)/unit/ring_stress: tests/unit/ring_stress.c tests/unit/builder_stubs.c preload/core/ring.c \
		collector/ring_drain.c \
		$(wildcard preload/*/*.h collector/*.h include/cudatrace/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(SAN_CFLAGS) -I$(CUDA_HOME)/include -o $@ \
		tests/unit/ring_stress.c tests/unit/builder_stubs.c preload/core/ring.c \
		collector/ring_drain.c -pthread
