"""Find checkpoints on disk and tell finished ones from ones still (or never fully) written.

    scan_checkpoints("out/ckpt_*.pt", now=time.time(), settle_s=2.0)  # -> [Checkpoint, ...]

The step is read from the name (`ckpt_000150.pt`, `checkpoint-500/`, `global_step1000`), the
number after "step"/"iter"/"ckpt"/"checkpoint" when there is one, else the last number. A
checkpoint is not complete when its name is temporary (`*.tmp`, `*.partial`, dot-files), when it
was modified less than `settle_s` ago, or when its format says it is cut short: torch.save's zip
archives without their central directory, safetensors files shorter than their header says.
"""

from __future__ import annotations

import glob
import json
import os
import re
import struct
import zipfile
from pathlib import Path
from typing import BinaryIO

from babysit.records import Checkpoint

_TEMP_SUFFIXES = (".tmp", ".temp", ".partial", ".incomplete", ".lock", ".swp", "~")
_KEYED_STEP = re.compile(r"(?:step|iter|ckpt|checkpoint)[_\-=]?(\d+)", re.IGNORECASE)
_ANY_NUMBER = re.compile(r"\d+")
_ZIP_MAGIC = b"PK\x03\x04"


def step_from_name(name: str) -> int | None:
    keyed = _KEYED_STEP.findall(name)
    if keyed:
        return int(keyed[-1])
    numbers = _ANY_NUMBER.findall(name)
    return int(numbers[-1]) if numbers else None


def scan_checkpoints(pattern: str, now: float, settle_s: float) -> list[Checkpoint]:
    """Every path matching `pattern` (files or directories), newest-first by step then mtime."""
    found = []
    for path in glob.glob(os.path.expanduser(pattern), recursive=True):
        found.append(inspect_checkpoint(Path(path), now, settle_s))
    return sorted(found, key=checkpoint_order, reverse=True)


def checkpoint_order(ckpt: Checkpoint) -> tuple[int, float]:
    return (ckpt.step if ckpt.step is not None else -1, ckpt.mtime)


def inspect_checkpoint(path: Path, now: float, settle_s: float) -> Checkpoint:
    name = path.name
    step = step_from_name(name)
    try:
        st = path.stat()
    except OSError as exc:
        return Checkpoint(str(path), step, 0.0, 0, False, f"cannot stat: {exc.strerror}")
    if path.is_dir():
        files = [p for p in path.rglob("*") if p.is_file()]
        size = sum(_size(p) for p in files)
        mtime = max([st.st_mtime, *(_mtime(p) for p in files)])
        problem = None if files else "empty directory"
        for member in files:
            problem = problem or _file_problem(member, now, settle_s, member=True)
            if problem:
                problem = f"{member.name}: {problem}"
                break
    else:
        size, mtime = st.st_size, st.st_mtime
        problem = _file_problem(path, now, settle_s)
    return Checkpoint(str(path), step, mtime, size, problem is None, problem)


def _file_problem(path: Path, now: float, settle_s: float, member: bool = False) -> str | None:
    """Why this file is not a finished checkpoint (None: it is). Inside a checkpoint directory
    (`member`) dot-files are normal: torch.distributed.checkpoint writes `.metadata` last."""
    name = path.name
    if (name.startswith(".") and not member) or name.endswith(_TEMP_SUFFIXES):
        return "temporary name (still being written?)"
    try:
        st = path.stat()
    except OSError as exc:
        return f"cannot stat: {exc.strerror}"
    age = now - st.st_mtime
    if age < settle_s:
        return f"modified {max(age, 0):.1f}s ago, may still be being written"
    if st.st_size == 0:
        return "empty file"
    try:
        with path.open("rb") as fh:
            head = fh.read(8)
            if head.startswith(_ZIP_MAGIC):
                return _zip_problem(path)
            if name.endswith(".safetensors"):
                return _safetensors_problem(fh, head, st.st_size)
    except OSError as exc:
        return f"cannot read: {exc.strerror}"
    return None


def _zip_problem(path: Path) -> str | None:
    try:
        with zipfile.ZipFile(path) as zf:
            zf.infolist()
    except (zipfile.BadZipFile, EOFError, ValueError) as exc:
        return f"truncated or corrupt torch/zip archive ({exc})"
    return None


def _safetensors_problem(fh: BinaryIO, head: bytes, size: int) -> str | None:
    if len(head) < 8:
        return "truncated safetensors file (no header)"
    (header_len,) = struct.unpack("<Q", head)
    if header_len > size - 8:
        return f"truncated safetensors file (header says {header_len} bytes, file has {size})"
    try:
        header = json.loads(fh.read(header_len))
        end = max(
            (int(v["data_offsets"][1]) for k, v in header.items() if k != "__metadata__"),
            default=0,
        )
    except (ValueError, UnicodeDecodeError, AttributeError, KeyError, TypeError, IndexError):
        return "corrupt safetensors header"
    if 8 + header_len + end > size:
        return f"truncated safetensors file (needs {8 + header_len + end} bytes, has {size})"
    return None


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
