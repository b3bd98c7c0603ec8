# Build rules for the unit checks of the pure parts (tests/test_unit_pure_parts.py): each
# tests/unit/NAME_check.c linked with the shared tally (tests/unit/check.c) and only the
# sources it checks, compiled as the collector and the command are (sanitizers included), so
# `make test SANITIZE=...` runs them instrumented.

CT_UNIT_PURE := $(patsubst %,$(BUILD)/unit/%_check,string_table u64_map clock_map timeline dwarf_lines \
	time_order vmm_ledger entry_list json_reader holders drain_order python_lines call_cost \
	writer_cache cpu_list capture_windows memory_counters)
test-programs: $(CT_UNIT_PURE)

$(BUILD)/unit/string_table_check: common/string_table.c
$(BUILD)/unit/u64_map_check: common/u64_map.c
$(BUILD)/unit/time_order_check: common/time_order.c
$(BUILD)/unit/vmm_ledger_check: common/vmm_ledger.c common/u64_map.c
$(BUILD)/unit/call_cost_check: common/call_cost.c common/u64_map.c
$(BUILD)/unit/entry_list_check: common/entry_list.c
$(BUILD)/unit/holders_check: viewer-export/model/holders.c common/library_family.c common/string_table.c
$(BUILD)/unit/json_reader_check: viewer-export/read/json_reader.c viewer-export/output/json_writer.c
$(BUILD)/unit/clock_map_check: collector/perfetto/clock_map.c
$(BUILD)/unit/timeline_check: viewer-export/model/timeline.c
$(BUILD)/unit/dwarf_lines_check: collector/elf/dwarf_lines.c common/string_table.c
$(BUILD)/unit/drain_order_check: collector/ring_drain.c preload/core/ring.c tests/unit/builder_stubs.c
$(BUILD)/unit/python_lines_check: collector/host_sampling/python_lines.c
$(BUILD)/unit/cpu_list_check: collector/cpu_placement.c
# A writer, made as the collector makes one, over a trace file of its own (check_trace.c).
CT_UNIT_WRITER := collector/perfetto/writer.c collector/perfetto/chunks.c \
	collector/perfetto/chunk_replay.c collector/perfetto/trace_file.c common/string_table.c \
	common/u64_map.c tests/unit/check_trace.c $(PROTO_C)
$(BUILD)/unit/writer_cache_check: $(CT_UNIT_WRITER)
$(BUILD)/unit/writer_cache_check: LDLIBS := -l:libzstd.a -l:libprotobuf-c.a
$(BUILD)/unit/capture_windows_check: collector/tracks/capture_windows.c $(CT_UNIT_WRITER)
$(BUILD)/unit/capture_windows_check: LDLIBS := -l:libzstd.a -l:libprotobuf-c.a
$(BUILD)/unit/memory_counters_check: collector/tracks/memory_counters.c collector/tracks/gap_memory.c \
	collector/tracks/chunk_keeper.c common/time_order.c common/vmm_ledger.c $(CT_UNIT_WRITER)
$(BUILD)/unit/memory_counters_check: LDLIBS := -l:libzstd.a -l:libprotobuf-c.a

$(CT_UNIT_PURE): $(BUILD)/unit/%: tests/unit/%.c tests/unit/check.c $(wildcard tests/unit/check.h tests/unit/check_trace.h \
		common/*.h collector/*.h preload/core/*.h collector/perfetto/*.h collector/elf/*.h collector/host_sampling/*.h collector/tracks/*.h viewer-export/model/*.h \
		viewer-export/read/*.h viewer-export/output/*.h include/cudatrace/*.h)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(SAN_CFLAGS) -o $@ $(filter %.c,$^) $(LDLIBS)
