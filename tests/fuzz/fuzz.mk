# Build and run rules for the trace-reader fuzzer, included by the top-level Makefile (which
# defines BUILD and BASE_CFLAGS and knows how to generate $(BUILD)/gen/perfetto_trace.pb-c.[ch]).
# It owns everything under $(BUILD)/fuzz: the reader's sources (viewer-export's read/, model/,
# findings/, job/ but its parallel reader, and output/, common/, the generated protobuf-c code)
# compiled again with clang and
# libFuzzer's coverage plus ASan and UBSan, kept apart from the gcc objects in $(BUILD)/obj so
# neither build ever picks up the other's; the harness binary; and the working corpus. The seeds
# in tests/fuzz/corpus are only ever copied from, never written to, so a run cannot dirty the
# tree. `make fuzz-short` is the bounded CI run; `make fuzz-long` is the same for an hour.

CT_FUZZ_CC ?= clang
FUZZ_SECONDS ?= 30
# Extra libFuzzer flags, e.g. FUZZ_ARGS=-fork=4 on a bigger machine or -seed=N to replay a run.
FUZZ_ARGS ?=

CT_FUZZ_DIR := $(BUILD)/fuzz
CT_FUZZ_BIN := $(CT_FUZZ_DIR)/fuzz_trace_reader
CT_FUZZ_SEEDS := $(wildcard tests/fuzz/corpus/*)

# UBSan must not recover: a report that lets the run go on is a finding libFuzzer never sees.
CT_FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
CT_FUZZ_CFLAGS := $(BASE_CFLAGS) $(CT_FUZZ_SAN) -fsanitize=fuzzer-no-link

# The reader and all it feeds (the report's outputs, the diff's and the summary's facts, the
# html frame they share); not the job's readers of many files, which fork one reader per trace.
CT_FUZZ_SRC := $(filter-out viewer-export/job/parallel_read.c viewer-export/job/inputs.c,\
	$(wildcard viewer-export/read/*.c viewer-export/model/*.c viewer-export/findings/*.c \
	viewer-export/output/*.c viewer-export/job/*.c viewer-export/diff/*.c)) \
	viewer-export/export/html_frame.c viewer-export/export/output.c $(wildcard common/*.c)
CT_FUZZ_OBJ := $(CT_FUZZ_SRC:%.c=$(CT_FUZZ_DIR)/obj/%.o) $(CT_FUZZ_DIR)/obj/gen/perfetto_trace.pb-c.o
CT_FUZZ_HDR := $(wildcard viewer-export/*/*.h common/*.h include/cudatrace/*.h) \
	$(BUILD)/gen/perfetto_trace.pb-c.h

# Recursive (=) so fuzz-long's FUZZ_SECONDS applies.
# -timeout: one input that takes seconds is a hang (the reader is linear in its input).
# -rss_limit_mb: also caps any one allocation, so a length that makes the reader ask for
# gigabytes is reported rather than swapped through.
CT_FUZZ_RUN_ARGS = -timeout=10 -rss_limit_mb=2048 -max_total_time=$(FUZZ_SECONDS) \
	-print_final_stats=1 -dict=tests/fuzz/trace_reader.dict \
	-artifact_prefix=$(CT_FUZZ_DIR)/artifacts/ $(CT_FUZZ_MODE) $(FUZZ_ARGS)
CT_FUZZ_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1

.PHONY: fuzz-build fuzz-short fuzz-long

fuzz-build: $(CT_FUZZ_BIN)

# libFuzzer's runtime ships apart from clang on Debian (libclang-rt-dev), so a trial link is
# the only check that says whether the harness can be built at all.
$(CT_FUZZ_DIR)/.toolchain:
	@mkdir -p $(@D)
	@probe='int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; return (int)n * 0; }'; \
	if ! echo "$$probe" | $(CT_FUZZ_CC) -x c -fsanitize=fuzzer,address,undefined -o $(@D)/.probe - 2>/dev/null; then \
	    if [ "$$(id -u)" != 0 ]; then \
	        echo "cudatrace: $(CT_FUZZ_CC) cannot link a libFuzzer harness (apt-get install clang libclang-rt-dev)" >&2; \
	        exit 1; \
	    fi; \
	    echo "installing clang libclang-rt-dev"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang libclang-rt-dev >/dev/null; \
	    echo "$$probe" | $(CT_FUZZ_CC) -x c -fsanitize=fuzzer,address,undefined -o $(@D)/.probe -; \
	fi
	@rm -f $(@D)/.probe && touch $@

$(CT_FUZZ_DIR)/obj/%.o: %.c $(CT_FUZZ_HDR) | $(CT_FUZZ_DIR)/.toolchain
	@mkdir -p $(@D)
	$(CT_FUZZ_CC) $(CT_FUZZ_CFLAGS) -c $< -o $@

# Generated code is not ours to keep warning-free, as in the top-level rule.
$(CT_FUZZ_DIR)/obj/gen/perfetto_trace.pb-c.o: $(BUILD)/gen/perfetto_trace.pb-c.c \
		$(BUILD)/gen/perfetto_trace.pb-c.h | $(CT_FUZZ_DIR)/.toolchain
	@mkdir -p $(@D)
	$(CT_FUZZ_CC) $(filter-out -Werror,$(CT_FUZZ_CFLAGS)) -c $< -o $@

$(CT_FUZZ_BIN): tests/fuzz/fuzz_trace_reader.c $(CT_FUZZ_OBJ) $(CT_FUZZ_HDR) | $(CT_FUZZ_DIR)/.toolchain
	$(CT_FUZZ_CC) $(CT_FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ tests/fuzz/fuzz_trace_reader.c \
		$(CT_FUZZ_OBJ) -l:libzstd.a -l:libprotobuf-c.a -lz

# The working corpus keeps what earlier runs found (a long run resumes from it); the seeds are
# copied in each time so an edited seed always takes part. libFuzzer exits non-zero on a crash,
# a leak, a timeout or the RSS limit, which fails the make; the input that did it is left in
# $(CT_FUZZ_DIR)/artifacts and `$(CT_FUZZ_BIN) FILE` replays it.
fuzz-short: $(CT_FUZZ_BIN) $(CT_FUZZ_SEEDS)
	@mkdir -p $(CT_FUZZ_DIR)/corpus $(CT_FUZZ_DIR)/artifacts
	cp $(CT_FUZZ_SEEDS) $(CT_FUZZ_DIR)/corpus/
	@$(CT_FUZZ_ENV) $(CT_FUZZ_BIN) $(CT_FUZZ_RUN_ARGS) $(CT_FUZZ_DIR)/corpus || { \
	    echo "cudatrace: the trace-reader fuzzer failed; inputs in $(CT_FUZZ_DIR)/artifacts:" >&2; \
	    ls -t $(CT_FUZZ_DIR)/artifacts >&2; \
	    exit 1; \
	}

# The documented long run: an hour (FUZZ_SECONDS=... on the command line still wins). One
# fuzzing process grows by tens of bytes per input (most likely the string table in
# common/string_table.c, which keeps every distinct string for the life of the process, as suits a
# one-shot `cudatrace report`) and would come near the RSS limit within the hour. -fork=1 runs
# the inputs in a child restarted every few minutes instead; fork mode ignores OOMs and timeouts
# by default, so they are turned back on.
fuzz-long: FUZZ_SECONDS = 3600
fuzz-long: CT_FUZZ_MODE = -fork=1 -ignore_crashes=0 -ignore_ooms=0 -ignore_timeouts=0
fuzz-long: fuzz-short
