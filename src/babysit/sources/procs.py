"""What the kernel shows of a stalled attempt's processes: state, CPU time, I/O, files written.

    procs = look_at(pids)                       # -> (ProcessLook, ...), gone ones left out
    files = files_written(pids, skip=attempt_dir)   # path -> size, files they hold open to write
    files.update(files_in(Path("out"), limit=2000))  # what a checkpoint directory holds

Cheap and never blocking: /proc reads only (psutil), and a bounded directory walk that does not
follow symbolic links. A process that is gone or unreadable is left out or read as None.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import psutil

from babysit.looks import ProcessLook

WRITE_MODES = frozenset({"w", "a", "r+", "a+", "w+"})
RANK_VARS = ("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK")


def look_at(pids: Iterable[int]) -> tuple[ProcessLook, ...]:
    out = []
    for pid in pids:
        try:
            proc = psutil.Process(pid)
            with proc.oneshot():
                state = proc.status()
                cpu = _cpu(proc)
                io = _io(proc)
                rank = _rank(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied, OSError):
            continue
        if state in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD):
            continue
        out.append(ProcessLook(pid, state, cpu, io, rank))
    return tuple(out)


def _cpu(proc: psutil.Process) -> float | None:
    try:
        t = proc.cpu_times()
    except (psutil.AccessDenied, OSError):
        return None
    return float(t.user + t.system)


def _io(proc: psutil.Process) -> int | None:
    try:
        c = proc.io_counters()
    except (psutil.AccessDenied, OSError, AttributeError):
        return None
    # The system-call counts (rchar, wchar) move with every read and write, cached or not; the
    # storage counts (read_bytes, write_bytes) with what reaches a disk.
    chars = getattr(c, "read_chars", 0) + getattr(c, "write_chars", 0)
    return int(chars + c.read_bytes + c.write_bytes)


def _rank(proc: psutil.Process) -> int | None:
    try:
        env = proc.environ()
    except (psutil.AccessDenied, OSError):
        return None
    for name in RANK_VARS:
        value = env.get(name, "").strip()
        if value.isdigit():
            return int(value)
    return None


def files_written(pids: Sequence[int], skip: Path | None = None) -> dict[str, int]:
    """Regular files the processes hold open for writing, with their size (not those under
    `skip`: babysit's own captures of the output)."""
    out: dict[str, int] = {}
    prefix = f"{skip}{os.sep}" if skip is not None else None
    for pid in pids:
        try:
            opened = psutil.Process(pid).open_files()
        except (psutil.NoSuchProcess, psutil.AccessDenied, OSError):
            continue
        for f in opened:
            mode = getattr(f, "mode", None)
            if mode not in WRITE_MODES or (prefix and f.path.startswith(prefix)):
                continue
            try:
                out[f.path] = os.stat(f.path).st_size
            except OSError:  # deleted since, or unreadable: where it writes is as good
                out[f.path] = int(getattr(f, "position", 0))
    return out


def files_in(
    directory: Path, limit: int = 2000, depth: int = 2, skip: Path | None = None
) -> dict[str, int]:
    """Sizes of the files in `directory` and its subdirectories down to `depth` (an HF
    checkpoint is a directory of files), at most `limit` entries looked at, `skip` (babysit's
    home, when it sits there) left out; links are not followed."""
    skipped = os.path.abspath(skip) if skip is not None else None
    out: dict[str, int] = {}
    todo = [(directory, 0)]
    seen = 0
    while todo and seen < limit:
        here, level = todo.pop()
        try:
            entries = os.scandir(here)
        except OSError:
            continue
        with entries:
            for e in entries:
                seen += 1
                if seen > limit:
                    break
                if skipped is not None and os.path.abspath(e.path) == skipped:
                    continue
                try:
                    if e.is_file(follow_symlinks=False):
                        out[e.path] = e.stat(follow_symlinks=False).st_size
                    elif e.is_dir(follow_symlinks=False) and level < depth:
                        todo.append((Path(e.path), level + 1))
                except OSError:
                    continue
    return out


def glob_root(pattern: str) -> Path:
    """The directory a checkpoint glob looks in: its longest prefix without a wildcard."""
    parts = Path(pattern).parts
    root: list[str] = []
    for part in parts[:-1]:
        if any(c in part for c in "*?["):
            break
        root.append(part)
    return Path(*root) if root else Path(".")
