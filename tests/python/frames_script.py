"""Calls the Python-frames probe from many kinds of Python frame and prints, as
JSON, what the probe saw and what Python itself says the stack was.

Usage: python frames_script.py LIBPYTHON_FRAMES_PROBE

Runs under every Python 3.9 to 3.13. Each probe call shares its line with the
here() that records Python's view of the stack, so both name the same line.
Every case runs twice: through ctypes.CDLL, which releases the GIL around the
call (as PyTorch does around CUDA calls), and through ctypes.PyDLL, which
keeps it.
"""
import asyncio
import ctypes
import functools
import json
import sys
import threading

SIZE = 1 << 16
BUF = ctypes.create_string_buffer(SIZE)
MAX_FRAMES = 64  # the probe's own limit
PROBE = None  # set per ctypes flavour by main()


def code_name(code):
    # The probe reports co_qualname where the version has one (3.11+).
    return getattr(code, "co_qualname", code.co_name)


def here():
    """[file, line, function] of each frame of the caller's stack, innermost first."""
    stack = []
    frame = sys._getframe(1)
    while frame is not None:
        stack.append([frame.f_code.co_filename, frame.f_lineno, code_name(frame.f_code)])
        frame = frame.f_back
    return stack


def inner():
    return PROBE(), here()


def middle():
    return inner()


def outer():
    return middle()


class Model:
    def forward(self):
        return PROBE(), here()


probe_lambda = lambda: (PROBE(), here())  # noqa: E731


def generator():
    yield PROBE(), here()


def in_thread():
    box = []
    thread = threading.Thread(target=lambda: box.append(outer()), name="probe-thread")
    thread.start()
    thread.join()
    return box[0]


async def coroutine():
    await asyncio.sleep(0)
    return PROBE(), here()


def deep(levels):
    if levels:
        return deep(levels - 1)
    return PROBE(), here()


def вычислить():
    return PROBE(), here()


def 计算():
    return PROBE(), here()


def exec_twice():
    # Two modules of one shape whose call sits on different lines, compiled
    # and run in turn: the second's code object and line table may take the
    # addresses the first's left, and the probe must still read its own line.
    for blank_lines in (0, 3):
        space = {"PROBE": PROBE, "here": here}
        source = "\n" * blank_lines + "result = (PROBE(), here())\n"
        exec(compile(source, "<exec-case>", "exec"), space)
    return space["result"]


def cache_utf8(text):
    # The probe reads a non-ASCII name only through the UTF-8 copy that
    # CPython keeps once something asked for it; ask, as a library would.
    as_utf8 = ctypes.pythonapi.PyUnicode_AsUTF8
    as_utf8.argtypes = [ctypes.py_object]
    as_utf8.restype = ctypes.c_char_p
    as_utf8(text)


CASES = [
    # name, call, the innermost function Python must report (else the case
    # did not run as meant)
    ("nested", outer, "inner"),
    ("method", lambda: Model().forward(), code_name(Model.forward.__code__)),
    ("lambda", probe_lambda, "<lambda>"),
    ("generator", lambda: next(generator()), "generator"),
    ("thread", in_thread, "inner"),
    ("coroutine", lambda: asyncio.run(coroutine()), "coroutine"),
    ("deep", lambda: deep(100), "deep"),
    ("non_ascii_cached", вычислить, "вычислить"),
    ("non_ascii_uncached", 计算, "计算"),
    ("exec_same_shape", exec_twice, "<module>"),
]


def main():
    cache_utf8(code_name(вычислить.__code__))
    results = []
    for flavour in ("CDLL", "PyDLL"):
        global PROBE
        lib = getattr(ctypes, flavour)(sys.argv[1])
        lib.ct_probe_python_frames.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        PROBE = functools.partial(lib.ct_probe_python_frames, BUF, SIZE)
        for name, call, function in CASES:
            count, want = call()
            innermost = want[0][2]
            if name == "non_ascii_uncached":
                # No UTF-8 copy exists and making one would allocate: "?".
                want[0][2] = "?"
            results.append({"case": name, "flavour": flavour, "count": count,
                            "got": BUF.value.decode("utf-8", "replace").splitlines(),
                            "want": want[:MAX_FRAMES], "innermost": innermost,
                            "function": function})
    json.dump({"version": sys.version, "results": results}, sys.stdout)


if __name__ == "__main__":
    main()
