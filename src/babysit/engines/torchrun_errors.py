"""torchrun's per-rank error files (TORCHELASTIC_ERROR_FILE), read and put in words. Pure but
for the reading of files.

    errs = [e for e in map(read_error_file, found_error_files(log_dir)) if e]
    first_failure(errs)          # the earliest (torchrun's own rule: get_first_failure)
    render(errs)                 # "[rank2]: Traceback ...": lines triage reads like any log

A worker whose entrypoint is wrapped in torchrun's `@record` writes its exception there as JSON
(torch/distributed/elastic/multiprocessing/errors/error_handler.py, record_exception):

    {"message": {"message": "KeyError: 'attention_mask'",
                 "extraInfo": {"py_callstack": "Traceback ...", "timestamp": "1796123147"}}}

The agent may add `"errorCode": -9` to the inner message when it copies a child's file, and a
newer writer puts a plain string there with the timestamp beside it:
`{"message": "...", "timestamp": 1796123147}`. Files live at
`<log_dir>/<run id>_<random>/attempt_<n>/<local rank>/error.json`. A rank killed by a signal
writes none: the agent's Root Cause block (in the console) is then all there is.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ERROR_FILE = "error.json"
MAX_BYTES = 4 << 20  # an error file holds one traceback; anything larger is not one


@dataclass(frozen=True)
class RankError:
    """What one worker's error file says."""

    path: Path
    local_rank: int | None  # from the directory layout
    message: str  # "KeyError: 'attention_mask'"
    traceback: str | None  # the Python traceback, when the worker recorded one
    timestamp: int | None  # seconds since the epoch, as the worker wrote it
    error_code: int | None = None  # the exit code the agent wrote in (negative: a signal)
    rank: int | None = None  # the global rank, when known (from the worker's environment)
    mtime: float | None = None  # when the file was written: orders errors of the same second


def found_error_files(log_dir: Path, since: float = 0.0) -> list[Path]:
    """The error files under torchrun's --log-dir, modified at or after `since` (a log dir the
    user reuses holds the files of earlier runs), oldest attempt directory first."""
    out = []
    try:
        for path in sorted(log_dir.glob(f"*/attempt_*/*/{ERROR_FILE}")):
            try:
                if path.stat().st_mtime >= since:
                    out.append(path)
            except OSError:
                continue
    except OSError:
        return []
    return out


def local_rank_of(path: Path) -> int | None:
    """The local rank from torchrun's layout: `.../attempt_0/<local rank>/error.json`."""
    name = path.parent.name
    return int(name) if name.isdigit() else None


def parse_error(
    text: str, path: Path, rank: int | None = None, mtime: float | None = None
) -> RankError | None:
    """The error in a file's text; None when it is not an error file's JSON (a half-written
    file, another tool's)."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or "message" not in data:
        return None
    inner = data["message"]
    traceback = None
    code = None
    if isinstance(inner, dict):
        message = inner.get("message")
        extra = inner.get("extraInfo")
        extra = extra if isinstance(extra, dict) else {}
        stamp = _int(extra.get("timestamp"))
        tb = extra.get("py_callstack")
        traceback = tb if isinstance(tb, str) and tb.strip() else None
        code = _int(inner.get("errorCode"))
    else:
        message = inner
        stamp = _int(data.get("timestamp"))
    if not isinstance(message, str):
        return None
    return RankError(
        path, local_rank_of(path), message.strip(), traceback, stamp, code, rank, mtime
    )


def read_error_file(path: Path, rank: int | None = None) -> RankError | None:
    """parse_error on the file at `path`; None when it cannot be read or is not one."""
    try:
        with path.open("rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
            mtime = path.stat().st_mtime
    except OSError:
        return None
    if len(raw) > MAX_BYTES:
        return None
    return parse_error(raw.decode("utf-8", "replace"), path, rank, mtime)


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return None


def first_failure(errors: Sequence[RankError]) -> RankError | None:
    """The earliest error, as torchrun picks its root cause (the smallest timestamp; files
    without one last); within the same second, the file written first, then the lowest rank."""
    if not errors:
        return None
    return min(errors, key=_order)


def _order(e: RankError) -> tuple[int, float, int]:
    big = 1 << 62
    rank = e.rank if e.rank is not None else e.local_rank
    stamp = e.timestamp if e.timestamp is not None else big
    # The timestamp is whole seconds; the file's own time splits a second (peers that fail
    # because the first one died write theirs a little later).
    within = e.mtime if e.mtime is not None and int(e.mtime) == stamp else float(big)
    return (stamp, within, rank if rank is not None else big)


def label(e: RankError) -> str:
    """The prefix torch itself puts on a rank's lines (`[rank2]:`), which triage reads as the
    rank; a local rank of a multi-node job whose global rank is unknown gets none."""
    return f"[rank{e.rank}]: " if e.rank is not None else ""


def render(errors: Sequence[RankError]) -> str:
    """The errors as log text, first failure first: each rank's traceback (or message) with
    its rank prefix, as the rank itself would have printed it."""
    out: list[str] = []
    for e in sorted(errors, key=_order):
        prefix = label(e)
        if not prefix and e.local_rank is not None:
            out.append(f"torchrun error file of local rank {e.local_rank}: {e.path}")
        body = e.traceback if e.traceback is not None else e.message
        if e.traceback is not None and e.message and e.message not in e.traceback:
            body = f"{body.rstrip()}\n{e.message}"
        out.extend(f"{prefix}{line}" for line in body.rstrip().splitlines())
    return "\n".join(out) + ("\n" if out else "")
