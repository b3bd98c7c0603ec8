# Build rules for the symboliser checks (tests/test_symbolize.py).

# The symboliser (collector/symbolize.c, collector/dwarf_lines.c) behind a command line, which
# tests/test_symbolize.py compares with addr2line.
test-programs: $(BUILD)/unit/symbolize_check
$(BUILD)/unit/symbolize_check: tests/unit/symbolize_check.c collector/symbolize.c \
		collector/dwarf_lines.c collector/elf_file.c common/strings.c common/u64_map.c \
		collector/symbolize.h collector/dwarf_lines.h collector/elf_file.h common/strings.h \
		common/u64_map.h
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(SAN_CFLAGS) -Icollector -o $@ tests/unit/symbolize_check.c \
		collector/symbolize.c collector/dwarf_lines.c collector/elf_file.c common/strings.c \
		common/u64_map.c
