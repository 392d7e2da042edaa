"""Recognise what a line says: the step counter, metrics, a Python error, a pause under way.

    LineParser().feed(OutputLine("stdout", 7, "iter 340: loss 5.4983, time 33.52ms", ts))
    # -> [Progress(step=340, ...), Metric(step=340, values={"loss": 5.4983, ...}, ...)]

Launcher prefixes (`[rank3]:`, `[default0]:`, srun's `3: `) and ANSI colours are removed first.
The metric formats of each trainer live in `parse.metrics`.

    LineParser(rank_steps=True)   # also keeps each rank's step lines, for the straggler detector:
    parser.rank_steps             # -> [(rank, step, ts, line number), ...]; the caller drains it
"""

from __future__ import annotations

import dataclasses
import re

from babysit.parse.metrics import ANSI, parse_body, split_prefix
from babysit.parse.progress import ProgressBars
from babysit.records import Activity, Metric, OutputLine, Progress, PythonError

Record = Progress | PythonError | Metric | Activity

# nanoGPT `iter 340: loss ...`, `step 120 ...`, `step: 14  loss: ...`, Megatron `iteration  122/`,
# llm.c `step   61/74 |`, DeepSpeed `step=35,`. Not `global_step`, not `steps`.
_STEP = re.compile(r"(?<![\w/.-])(?:iter|step|iteration)(?:\s*[:=]\s*|\s+)(\d{1,12})(?![\d.])")
# The same without its look-behind, on another rank's line as printed (colours kept: torchtitan
# prints `\x1b[31mstep: 14`): the look-behind is checked by hand, on the few lines that match.
_RANK_STEP = re.compile(r"(?:iter|step|iteration)(?:\s*[:=]\s*|\s+)(\d{1,12})(?![\d.])")
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
    return split_prefix(text)[1]


def clean_ansi(text: str) -> str:
    """The line without ANSI colour codes (its prefix, if any, kept)."""
    return ANSI.sub("", text) if "\x1b" in text else text


_NOTHING: list[Record] = []  # returned (never mutated) for the lines with nothing to read


class LineParser:
    """parse_line plus what one line cannot tell.

    - Whether an error line ends a traceback. A traceback starts at `Traceback (most recent
      call last):` (or, for a SyntaxError raised while compiling the script, at `  File
      "..."`); indented lines are its frames; the first line that is not indented is the
      exception. Kept per stream and rank, since ranks interleave.
    - Which rank leads. With rank prefixes (`[rank3]:`), the first rank that prints metrics
      with a step leads (rank 0 as soon as it does); the other ranks' lines are read for errors
      only, since torchtitan and friends print the same step and metrics on every rank (64
      copies of a line are one fact).
    - Whether `12: ...` is srun's `--label` or a line that starts with a number (`100: loss
      2.3`): a label is believed once the same number has started a line before.
    - With `rank_steps`, every rank's step lines (the lead's and the others'), appended to
      `rank_steps` as (rank, step, ts, line number): a straggler shows in when its lines come.
    """

    def __init__(self, rank_steps: bool = False) -> None:
        # (rank, step, ts, line number) of each prefixed line with a step; None: not kept.
        self.rank_steps: list[tuple[int, int, float, int]] | None = [] if rank_steps else None
        self._in_frames: dict[tuple[str, str | None], bool] = {}  # (stream, rank digits)
        self._open_frames = 0  # how many of those are True (0: skip the lookup)
        self._usage_seen: set[str] = set()  # streams where argparse printed `usage: ...`
        self.lead_rank: int | None = None
        self._lead_digits = ""
        self._labels: set[int] = set()  # srun label numbers seen
        self.bars = ProgressBars()  # steps from progress bars, and HF log dicts given theirs

    def flush(self) -> list[Record]:
        """The end of the input: the records held back for a line that did not come (an HF
        log dict waiting for its progress bar's frame)."""
        return list(self.bars.flush())

    def feed(self, line: OutputLine) -> list[Record]:
        text = line.text
        if self.lead_rank is not None and text[:5] == "[rank":
            # The fast path for the lines of the ranks that do not lead (most lines of a big
            # job): unless it may start or end a traceback, there is nothing to read. (From
            # these ranks only errors ending in Error or Exception are read.)
            end = text.find("]:", 5, 16)
            if end > 5:
                digits = text[5:end]
                if (
                    digits != self._lead_digits
                    and digits != "0"  # rank 0 may always take the lead
                    and not (
                        "Error" in text
                        or "Exception" in text
                        or "Traceback" in text
                        or 'File "' in text
                    )
                    and (not self._open_frames or not self._in_frames.get((line.stream, digits)))
                ):
                    if self.rank_steps is not None and ("step" in text or "iter" in text):
                        self._rank_step(digits, text, line, end + 2)
                    return _NOTHING
        rank, raw = split_prefix(text)
        if (
            rank is not None
            and not text.startswith("[")
            and ": [rank" not in text[:16]  # `3: [rank7]:`: srun's label, torchrun's prefix inside
            and rank not in self._labels
        ):
            # srun-style `N: `: a label only when N came before (ranks repeat, steps do not).
            if len(self._labels) < 4096:
                self._labels.add(rank)
            rank, raw = None, clean_ansi(text)
        key = (line.stream, str(rank) if rank is not None else None)
        in_frames = self._in_frames.get(key, False)
        if raw.startswith("Traceback (most recent call last)") or raw.startswith('  File "'):
            if not self._in_frames.get(key):
                self._open_frames += 1
            self._in_frames[key] = True
            return []
        if in_frames:
            if raw[:1] in (" ", "\t"):
                return []
            self._in_frames[key] = False
            self._open_frames -= 1
        if raw.startswith("usage: "):
            self._usage_seen.add(line.stream)
        records: list[Record] = []
        if (
            "Error" in raw
            or "Exception" in raw
            or "Exit" in raw
            or "Interrupt" in raw
            or "Fault" in raw
            or ": error: " in raw
        ):
            err = _error(line, raw.strip())
            if err is not None and not (
                # `X: error: ...` is argparse's only after its `usage:` line (not nvcc's)
                err.exc_type == "ArgumentError" and line.stream not in self._usage_seen
            ):
                if in_frames:
                    err = dataclasses.replace(err, from_traceback=True)
                return [err]
        if rank is not None and self.lead_rank is not None and rank not in (self.lead_rank, 0):
            if self.rank_steps is not None and ("step" in raw or "iter" in raw):
                self._rank_step(str(rank), raw, line)
            return records  # another rank's copy of what the lead rank says
        metric, released = self.bars.feed(raw, line, parse_body(raw, rank, line))
        if released:
            records += released
        # A metric line with a step is progress already; any other line may still say a step.
        if (
            (metric is None or metric.step is None)
            and ("iter" in raw or "step" in raw)
            and (step := _STEP.search(raw)) is not None
        ):
            records.append(Progress(int(step.group(1)), line.ts, line.stream, line.number))
        act = (
            _ACTIVITY.search(raw)
            if "heckpoint" in raw
            or "aving" in raw
            or "AVING" in raw
            or "valuat" in raw
            or "alidat" in raw
            or "EVAL" in raw
            or "eval" in raw
            else None
        )
        if act is not None and (metric is None or metric.step is None):
            # An eval's own progress bar is a sign of life, not training throughput.
            kind = "eval" if act.group("eval") else "checkpoint"
            records.append(Activity(kind, line.ts, raw[:200], line.number))
        elif metric is not None:
            records.append(metric)
        if (
            rank is not None
            and metric is not None
            and metric.step is not None
            and (self.lead_rank is None or (rank == 0 and self.lead_rank != 0))
        ):
            # The lead: the first rank that prints metrics with a step, rank 0 when it does.
            self.lead_rank, self._lead_digits = rank, str(rank)
        if rank is not None and self.rank_steps is not None:
            # The lead's (and rank 0's) own step, as the other ranks' are kept above.
            step_no = next(
                (
                    r.step
                    for r in records
                    if isinstance(r, (Progress, Metric)) and r.step is not None
                ),
                None,
            )
            if step_no is not None:
                self.rank_steps.append((rank, step_no, line.ts, line.number))
        return records

    def _rank_step(self, digits: str, raw: str, line: OutputLine, pos: int = 0) -> None:
        """Keep the step of another rank's line (`raw` from `pos` on, past its prefix)."""
        step = _RANK_STEP.search(raw, pos)
        while step is not None:
            at = step.start()
            before = raw[at - 1 : at] if at > pos else ""
            if (
                not before
                or not (before.isalnum() or before in "_/.-")
                or (before == "m" and "\x1b[" in raw[max(0, at - 8) : at])  # after a colour
            ):
                break
            step = _RANK_STEP.search(raw, step.end())
        if step is not None and self.rank_steps is not None and digits.isdigit():
            self.rank_steps.append((int(digits), int(step.group(1)), line.ts, line.number))


def _error(line: OutputLine, text: str) -> PythonError | None:
    if text[:1].isalpha() and (err := _PY_ERROR.match(text)):
        msg = (err.group("msg") or "").strip()
        return PythonError(err.group("type"), msg, text, line.ts, line.stream, line.number)
    if ": error: " in text and (usage := _ARGPARSE.match(text)):
        msg = usage.group("msg")
        return PythonError("ArgumentError", msg, text, line.ts, line.stream, line.number)
    return None


def parse_line(line: OutputLine, cleaned: str | None = None) -> list[Progress | PythonError]:
    """What one line says on its own: a Python error line, or the step counter."""
    text = (clean(line.text) if cleaned is None else cleaned).strip()
    if not text:
        return []
    # An error line first: `RuntimeError: loss is NaN at step 1200` is an error, not progress.
    err = _error(line, text)
    if err is not None:
        return [err]
    if ("iter" in text or "step" in text) and (step := _STEP.search(text)):
        return [Progress(int(step.group(1)), line.ts, line.stream, line.number)]
    return []
