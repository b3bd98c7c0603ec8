# Build rules for the Python-frames probe (tests/test_preload_python_frames.py).
# preload/sites/python_frames.c is compiled in with the preload's own flags, so the
# probe runs exactly what the preload runs; the embedding program exports its
# probe (-rdynamic) for the Python it loads to find through ctypes.

CT_PYFRAMES_SRC := tests/probe/python_frames_probe.c preload/sites/python_frames.c preload/loader/dl_real.c \
	common/python_layout.c
CT_PYFRAMES_DEPS := $(CT_PYFRAMES_SRC) preload/sites/python_frames.h preload/loader/dl_real.h \
	common/python_layout.h

test-programs: $(BUILD)/tests/libpython_frames_probe.so $(BUILD)/tests/python_frames_embed

$(BUILD)/tests/libpython_frames_probe.so: $(CT_PYFRAMES_DEPS)
	@mkdir -p $(@D)
	$(CC) $(PRELOAD_CFLAGS) -shared -o $@ $(CT_PYFRAMES_SRC)

$(BUILD)/tests/python_frames_embed: $(CT_PYFRAMES_DEPS)
	@mkdir -p $(@D)
	$(CC) $(PRELOAD_CFLAGS) -DCT_PROBE_MAIN -rdynamic -o $@ $(CT_PYFRAMES_SRC) -ldl
