# Build rules for the symboliser checks (tests/test_collector_symbolize.py).

# The symboliser (collector/elf/symbolize.c, collector/elf/dwarf_lines.c) behind a command
# line, which tests/test_collector_symbolize.py compares with addr2line.
CT_SYMBOLIZE_SRC := tests/unit/symbolize_check.c $(wildcard collector/elf/*.c) common/string_table.c \
	common/u64_map.c
test-programs: $(BUILD)/unit/symbolize_check
$(BUILD)/unit/symbolize_check: $(CT_SYMBOLIZE_SRC) $(wildcard collector/elf/*.h common/*.h)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(SAN_CFLAGS) -o $@ $(CT_SYMBOLIZE_SRC)
