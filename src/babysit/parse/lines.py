"""Recognise what a line says: the step counter, metrics, a Python error, a pause under way.

    LineParser().feed(OutputLine("stdout", 7, "iter 340: loss 5.4983, time 33.52ms", ts))
    # -> [Progress(step=340, ...), Metric(step=340, values={"loss": 5.4983, ...}, ...)]

Launcher prefixes (`[rank3]:`, `[default0]:`, srun's `3: `) and ANSI colours are removed first.
The metric formats of each trainer live in `parse.metrics`.
"""

from __future__ import annotations

import dataclasses
import re

from babysit.parse.metrics import parse_metrics
from babysit.records import Activity, Metric, OutputLine, Progress, PythonError

Record = Progress | PythonError | Metric | Activity

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_PREFIX = re.compile(r"^(?:\[(?:rank|default)\d+\]:\s?|\d+:\s|\[\d+,\d+\]<std(?:out|err)>:\s?)")
# nanoGPT `iter 340: loss ...`, `step 120 ...`, `step: 14  loss: ...`, Megatron `iteration  122/`,
# llm.c `step   61/74 |`, DeepSpeed `step=35,`. Not `global_step`, not `steps`.
_STEP = re.compile(r"(?<![\w/.-])(?:iter|step|iteration)(?:\s*[:=]\s*|\s+)(\d{1,12})(?![\d.])")
_PY_ERROR = re.compile(
    r"^(?:[A-Za-z_][\w]*\.)*(?P<type>[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt|Fault))"
    r"(?::\s?(?P<msg>.*))?$"
)
_ARGPARSE = re.compile(r"^(?P<prog>\S+): error: (?P<msg>.+)$")
# A checkpoint save or an eval announced in the output (nanoGPT/tinygpt `saving checkpoint to`,
# HF `Saving model checkpoint to`, Lightning `Validation DataLoader 0:`, `Evaluating ...`).
_ACTIVITY = re.compile(
    r"(?i)(?P<ckpt>\bsav(?:e|ing)\b.{0,40}?(?:checkpoint|model|state)|checkpoint\w*\s+(?:sav|writ))"
    r"|(?P<eval>\bevaluat(?:e|ing|ion)\b|\bvalidat(?:e|ing|ion)\b|\brunning eval)"
)


def clean(text: str) -> str:
    """The line without ANSI colour codes and launcher rank prefixes."""
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    return _PREFIX.sub("", text, count=1)


class LineParser:
    """parse_line plus what one line cannot tell: whether an error line ends a traceback.

    A traceback starts at `Traceback (most recent call last):` (or, for a SyntaxError raised
    while compiling the script, at `  File "..."`); indented lines are its frames; the first
    line that is not indented is the exception. Kept per stream, since ranks interleave."""

    def __init__(self) -> None:
        self._in_frames: dict[str, bool] = {}
        self._usage_seen: set[str] = set()  # streams where argparse printed `usage: ...`

    def feed(self, line: OutputLine) -> list[Record]:
        raw = clean(line.text)
        in_frames = self._in_frames.get(line.stream, False)
        if raw.startswith("Traceback (most recent call last)") or raw.startswith('  File "'):
            self._in_frames[line.stream] = True
            return []
        if in_frames and raw[:1] in (" ", "\t"):
            return []
        self._in_frames[line.stream] = False
        if raw.startswith("usage: "):
            self._usage_seen.add(line.stream)
        records: list[Record] = [
            r
            for r in parse_line(line, cleaned=raw)
            # `X: error: ...` is argparse's only after its `usage:` line (not nvcc's, ninja's)
            if not (
                isinstance(r, PythonError)
                and r.exc_type == "ArgumentError"
                and line.stream not in self._usage_seen
            )
        ]
        if in_frames:
            records = [
                dataclasses.replace(r, from_traceback=True) if isinstance(r, PythonError) else r
                for r in records
            ]
        if records and isinstance(records[0], PythonError):
            return records
        metric = parse_metrics(line)
        act = _ACTIVITY.search(raw)
        if act is not None and (metric is None or metric.step is None):
            # An eval's own progress bar is a sign of life, not training throughput.
            kind = "eval" if act.group("eval") else "checkpoint"
            records.append(Activity(kind, line.ts, raw[:200], line.number))
        elif metric is not None:
            records.append(metric)
        return records


def parse_line(line: OutputLine, cleaned: str | None = None) -> list[Progress | PythonError]:
    text = (clean(line.text) if cleaned is None else cleaned).strip()
    out: list[Progress | PythonError] = []
    if not text:
        return out
    # An error line first: `RuntimeError: loss is NaN at step 1200` is an error, not progress.
    if text[0].isalpha() and (err := _PY_ERROR.match(text)):
        msg = (err.group("msg") or "").strip()
        out.append(PythonError(err.group("type"), msg, text, line.ts, line.stream, line.number))
    elif ": error: " in text and (usage := _ARGPARSE.match(text)):
        msg = usage.group("msg")
        out.append(PythonError("ArgumentError", msg, text, line.ts, line.stream, line.number))
    elif ("iter" in text or "step" in text) and (step := _STEP.search(text)):
        out.append(Progress(int(step.group(1)), line.ts, line.stream, line.number))
    return out
