"""The trace vocabulary (include/cudatrace/trace_names.h) held against a trace.

cudatrace declares every track name, event name, annotation key (with its value
types) and enumerated value it writes into a Perfetto trace in one X-macro list,
which build/unit/trace_names_dump prints. ``check(trace, vocabulary)`` raises
``VocabularyError`` for anything a trace carries that the list does not declare:

* a track that is no process's or thread's, named otherwise than a declared track
  (or declared a counter and not one, or the other way round);
* an event named otherwise than a declared event (a finding's name only on the
  findings track), except the names that are data:
  call slices on thread tracks (named by functions.h), NVTX ranges and marks
  (``source: nvtx``) and kernels on GPU tracks (``gpu_kind: kernel``);
* an annotation key that is not declared, or written with a type its entry does
  not name; on the findings track the finding's own numbers (DOUBLE) are data;
* a string value of a key whose values are all declared that is none of them;
* a callstack sample's frame named otherwise than a declared frame.

conftest.py runs this on every trace the ``trace_run`` fixture loads.
"""

import os
import re
import subprocess

import perfetto_check

VALUE_TYPES = {"uint_value": "UINT", "int_value": "INT", "pointer_value": "POINTER",
               "string_value": "STRING", "string_value_iid": "STRING",
               "double_value": "DOUBLE", "bool_value": "BOOL"}
KEY_TYPES = {"UINT", "INT", "POINTER", "STRING", "DOUBLE"}


class VocabularyError(Exception):
    """A trace carries a name, type or value the vocabulary does not declare."""


def pattern(text):
    """A declared text as a regex: %u and %d stand for a number, %s for any text."""
    out = re.escape(text)
    out = out.replace("%u", r"\d+").replace("%d", r"\d+").replace("%s", r".+")
    return re.compile(out + r"\Z")


class Vocabulary:
    """The entries of the list, by kind: {id: (text, type)}."""

    def __init__(self, lines):
        self.entries = {"track": {}, "event": {}, "key": {}, "value": {}, "frame": {},
                        "function": {}}
        for line in lines:
            kind, ident, text, kind_type = line.split("\t")
            self.entries[kind][ident] = (text, kind_type)
        self.functions = {text for text, _ in self.entries["function"].values()}
        self.tracks = [(pattern(t), ty) for t, ty in self.entries["track"].values()]
        self.finding = pattern(self.text("event", "finding"))  # on the findings track only
        self.events = [pattern(t) for ident, (t, _) in self.entries["event"].items()
                       if ident != "finding"]
        self.keys = [(pattern(t), {s.strip() for s in ty.split("|")})
                     for t, ty in self.entries["key"].values()]
        key_text = {ident: text for ident, (text, _) in self.entries["key"].items()}
        self.values = {}  # key text -> declared values
        for text, keys in self.entries["value"].values():
            for key in (k.strip() for k in keys.split("|")):
                self.values.setdefault(key_text[key], set()).add(text)
        self.frames = [pattern(t) for t, _ in self.entries["frame"].values()]
        self.findings_track = self.text("track", "findings")
        self.gpu_stream = pattern(self.text("track", "gpu_stream"))
        self.nvtx = (self.text("key", "source"), self.text("value", "source_nvtx"))
        self.kernel = (self.text("key", "gpu_kind"), self.text("value", "gpu_kind_kernel"))

    @classmethod
    def load(cls, build_dir):
        dump = os.path.join(build_dir, "unit", "trace_names_dump")
        out = subprocess.run([dump], capture_output=True, text=True, check=True).stdout
        return cls(out.splitlines())

    def text(self, kind, ident):
        return self.entries[kind][ident][0]

    def key_types(self, name):
        for regex, types in self.keys:
            if regex.match(name):
                return types
        return None


def _event_names_free(vocab, track, thread, args):
    """Whether an event on this track with these args is named by data, not the list."""
    if thread:
        return True  # function names are checked apart; NVTX names are data
    key, kernel = vocab.kernel
    return bool(track and vocab.gpu_stream.match(track.get("name") or "") and
                args.get(key) == kernel)


def _check_tracks(trace, vocab):
    for uuid, t in trace.tracks.items():
        if t["pid"] is not None or t["tid"] is not None:
            continue
        name = t["name"] or ""
        kinds = [ty for regex, ty in vocab.tracks if regex.match(name)]
        if not kinds:
            raise VocabularyError(f"track {name!r} is not in trace_names.h")
        if ("COUNTER" in kinds) != t["is_counter"]:
            raise VocabularyError(f"track {name!r}: declared {kinds[0]}, "
                                  f"written {'a counter' if t['is_counter'] else 'named'}")


def _check_event(trace, vocab, event, typed):
    track = trace.tracks.get(event["track_uuid"])
    thread = event["track_uuid"] in trace.threads
    args = event["args"]
    source_key, nvtx = vocab.nvtx
    name = event["name"]
    if event["type"] in (perfetto_check.BEGIN, perfetto_check.INSTANT) and name is not None:
        if thread and args.get(source_key) != nvtx and name not in vocab.functions and \
                not any(r.match(name) for r in vocab.events):
            raise VocabularyError(f"event {name!r} on a thread track is neither a traced "
                                  "function nor in trace_names.h")
        on_findings = bool(track and track.get("name") == vocab.findings_track)
        declared = vocab.events if not on_findings else [vocab.finding]
        if not _event_names_free(vocab, track, thread, args) and \
                not any(r.match(name) for r in declared):
            raise VocabularyError(f"event {name!r} is not in trace_names.h")
    on_findings = bool(track and track.get("name") == vocab.findings_track)
    for key, value_type, value in typed:
        types = vocab.key_types(key)
        if types is None and on_findings and value_type == "DOUBLE":
            continue
        if types is None:
            raise VocabularyError(f"annotation {key!r} (on {name!r}) is not in trace_names.h")
        if value_type not in types:
            raise VocabularyError(f"annotation {key!r} (on {name!r}) is written as "
                                  f"{value_type}; trace_names.h declares {' | '.join(sorted(types))}")
        if key in vocab.values and value_type == "STRING" and value not in vocab.values[key]:
            raise VocabularyError(f"annotation {key!r} (on {name!r}) has the value {value!r}, "
                                  "which trace_names.h does not declare")


def _check_frames(trace, vocab):
    for sample in trace.callstack_samples:
        for frame in sample["frames"]:
            if not any(r.match(frame or "") for r in vocab.frames):
                raise VocabularyError(f"frame {frame!r} is not in trace_names.h")


def check(trace, vocab):
    """Raises VocabularyError at the first name, type or value not declared."""
    _check_tracks(trace, vocab)
    _check_frames(trace, vocab)
    typed = perfetto_check.typed_annotations(trace)
    for event, annotations in zip(trace.events, typed):
        _check_event(trace, vocab, event, [(k, VALUE_TYPES.get(t, t), v)
                                           for k, t, v in annotations])


def validate_list(vocab):
    """The list's own rules: types from the known set, values of declared keys."""
    for ident, (text, types) in vocab.entries["key"].items():
        unknown = {s.strip() for s in types.split("|")} - KEY_TYPES
        if unknown:
            raise VocabularyError(f"key {ident}: unknown type {unknown}")
    for ident, (text, keys) in vocab.entries["value"].items():
        missing = {k.strip() for k in keys.split("|")} - set(vocab.entries["key"])
        if missing:
            raise VocabularyError(f"value {ident}: no key {missing}")
    for ident, (text, kind_type) in vocab.entries["track"].items():
        if kind_type not in ("NAMED", "COUNTER"):
            raise VocabularyError(f"track {ident}: unknown type {kind_type}")
    for ident, (text, kind_type) in vocab.entries["event"].items():
        if kind_type not in ("INSTANT", "SLICE"):
            raise VocabularyError(f"event {ident}: unknown type {kind_type}")
