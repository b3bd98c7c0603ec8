#!/usr/bin/env python3
"""Writes tests/fuzz/corpus/crafted-big-packet-zstd, the one seed no traced program produces.

Real traces never hold a packet over the reader's 64 KiB read chunk, and libFuzzer will not
grow an input past the largest seed, so without this seed the reader's buffer growth
(trace_input.c reserve()) and anything after a packet that spans several chunks stay unreached.
It also carries what the real seeds lack: a double annotation, an interned string value, a
slice end with its own annotations and an incremental-state clear. Hand-encoded protobuf so it
needs nothing but Python and the zstd command. Usage: make_crafted_seed.py [OUTPUT]
"""
import os
import struct
import subprocess
import sys


def varint(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def key(field, wire):
    return varint(field << 3 | wire)


def uint(field, n):
    return key(field, 0) + varint(n)


def sint64(field, n):
    return uint(field, n & 0xFFFFFFFFFFFFFFFF)


def double(field, x):
    return key(field, 1) + struct.pack("<d", x)


def blob(field, data):
    if isinstance(data, str):
        data = data.encode()
    return key(field, 2) + varint(len(data)) + data


def packet(body):
    return blob(1, body)  # Trace.packet


SEQ = uint(10, 1)

big_process = blob(60, uint(1, 1) + blob(3, uint(1, 4242) + blob(2, "crafted") +
                                          blob(6, "p" * 70000)))
thread_track = blob(60, uint(1, 2) + uint(5, 1) + blob(4, uint(1, 4242) + uint(2, 4243) +
                                                       blob(5, "worker")))
defaults = blob(59, blob(11, uint(11, 2)))
interned = blob(12, blob(2, uint(1, 1) + blob(2, "cudaMalloc")) +
                blob(3, uint(1, 1) + blob(2, "result")) +
                blob(29, uint(1, 1) + blob(2, "normal")))
begin = blob(11, uint(9, 1) + uint(10, 1) + blob(4, blob(10, "bytes") + double(5, 4096.0)))
end = blob(11, uint(9, 2) + blob(4, uint(1, 1) + sint64(4, 0)))
closing = blob(11, uint(9, 3) + uint(11, 1) + blob(23, "cudatrace.end") +
               blob(4, blob(10, "exit") + uint(17, 1)))

trace = b"".join([
    packet(SEQ + uint(13, 1) + big_process),
    packet(SEQ + thread_track + defaults + interned),
    packet(uint(8, 100) + SEQ + begin),
    packet(uint(8, 200) + SEQ + end),
    packet(uint(8, 300) + SEQ + closing),
])

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus",
                                                         "crafted-big-packet-zstd")
with open(out, "wb") as f:
    f.write(subprocess.run(["zstd", "-19", "-q", "-c"], input=trace, check=True,
                           stdout=subprocess.PIPE).stdout)
