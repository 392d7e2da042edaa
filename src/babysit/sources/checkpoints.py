"""Find checkpoints on disk and tell finished ones from ones still (or never fully) written.

    scan_checkpoints("out/ckpt_*.pt", now=time.time(), settle_s=2.0)  # -> [Checkpoint, ...]
    scan_checkpoints("out/step{step}/model.pt", ...)   # a template: the step is where {step} is
    validate_checkpoint("python check.py {checkpoint}", path, cwd, timeout_s=300)  # -> problem

The step is read from the name (`ckpt_000150.pt`, `checkpoint-500/`, `global_step1000`), the
number after "step"/"iter"/"ckpt"/"checkpoint" when there is one, else the last number. A
checkpoint is not complete when its name is temporary (`*.tmp`, `*.partial`, dot-files), when it
was modified less than `settle_s` ago, or when its format says it is cut short: torch.save's zip
archives without their central directory, safetensors files shorter than their header says,
torch.distributed checkpoint directories without `.metadata`, HF `checkpoint-N/` directories
without `trainer_state.json`.
"""

from __future__ import annotations

import dataclasses
import glob
import json
import os
import re
import shlex
import struct
import subprocess
import zipfile
from pathlib import Path
from typing import BinaryIO

from babysit.records import Checkpoint
from babysit.subproc import kill_session

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


STEP = "{step}"
CKPT_PLACEHOLDER = "{checkpoint}"


def template_glob(pattern: str) -> str:
    """A template's glob: `out/step{step}/model.pt` -> `out/step*/model.pt`."""
    return pattern.replace(STEP, "*")


def _template_regex(pattern: str) -> re.Pattern[str]:
    parts = [re.escape(p).replace(r"\*", "[^/]*") for p in pattern.split(STEP)]
    return re.compile("(?:^|/)" + r"(\d+)".join(parts) + "$")


def scan_checkpoints(pattern: str, now: float, settle_s: float) -> list[Checkpoint]:
    """Every path matching `pattern` (files or directories), newest-first by step then mtime.
    A pattern with `{step}` is a template: its step is the number in that place."""
    found = []
    expanded = os.path.expanduser(pattern)
    template = _template_regex(expanded) if STEP in expanded else None
    for path in glob.glob(template_glob(expanded), recursive=True):
        ckpt = inspect_checkpoint(Path(path), now, settle_s)
        if template is not None:
            m = template.search(path)
            ckpt = dataclasses.replace(ckpt, step=int(m.group(1)) if m else None)
        found.append(ckpt)
    return sorted(found, key=checkpoint_order, reverse=True)


def validate_checkpoint(command: str, path: str, cwd: Path, timeout_s: float) -> str | None:
    """Run the user's check on one checkpoint (`{checkpoint}` replaced by its path, else the
    path appended). None when it exits 0; otherwise the problem, with the command's last words."""
    words = shlex.split(command)
    if any(CKPT_PLACEHOLDER in w for w in words):
        argv = [w.replace(CKPT_PLACEHOLDER, path) for w in words]
    else:
        argv = [*words, path]
    try:
        # Its own session: a timeout kills the whole check (a `sh -c` and what it started).
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        return f"--validate-checkpoint could not run {argv[0]!r}: {exc.strerror or exc}"
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        kill_session(proc)
        return f"--validate-checkpoint did not finish within {timeout_s:g}s"
    if proc.returncode == 0:
        return None
    said = (err or out).decode("utf-8", "replace").strip().splitlines()
    tail = f": {said[-1][:200]}" if said else ""
    return f"--validate-checkpoint exited with {proc.returncode}{tail}"


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
        problem = problem or _directory_problem(path, files)
        for member in files if problem is None else []:
            member_problem = _file_problem(member, now, settle_s, member=True)
            if member_problem:
                problem = f"{member.name}: {member_problem}"
                break
    else:
        size, mtime = st.st_size, st.st_mtime
        problem = _file_problem(path, now, settle_s)
    return Checkpoint(str(path), step, mtime, size, problem is None, problem)


def _directory_problem(path: Path, files: list[Path]) -> str | None:
    """Formats whose last file marks a finished save: torch.distributed.checkpoint writes
    `.metadata` after its `*.distcp` shards; HF Trainer writes `trainer_state.json` last."""
    names = {p.name for p in files}
    if any(n.endswith(".distcp") for n in names) and ".metadata" not in names:
        return "torch.distributed checkpoint without .metadata (the save did not finish)"
    if (
        path.name.startswith("checkpoint-")
        and "trainer_state.json" not in names
        and any(n.endswith((".safetensors", ".bin", ".pt")) for n in names)
    ):
        return "HF Trainer checkpoint without trainer_state.json (the save did not finish)"
    return None


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


def glob_fixed_parts(pattern: str) -> list[str]:
    """The leading path parts of a glob (or template) that hold no wildcard (`out/run1` of
    `out/run1/ckpt_*.pt`), `~` expanded."""
    fixed = []
    for part in Path(os.path.expanduser(pattern)).parts:
        if any(c in part for c in "*?[") or STEP in part:
            break
        fixed.append(part)
    return fixed


def glob_directory(pattern: str) -> Path:
    """The directory a checkpoint glob (or `{step}` template) points into: its fixed part, or
    the parent of a path without wildcards (a single `out/ckpt.pt`)."""
    fixed = glob_fixed_parts(pattern)
    if not fixed:
        return Path(".")
    if len(fixed) == len(Path(pattern).expanduser().parts):
        return Path(*fixed).parent
    return Path(*fixed)


class DirectoryPulse:
    """Notices writes in the directory a checkpoint glob points into (a save under way).

    pulse = DirectoryPulse("/abs/out/ckpt_*.pt")
    pulse.changed()   # True when a file there was added, grew or was touched since last time

    Only the glob's fixed directory and its direct subdirectories are looked at (names, sizes,
    modification times), which keeps a look at a checkpoint directory cheap.
    """

    def __init__(self, pattern: str) -> None:
        self.base = glob_directory(pattern)
        self._last: int | None = None

    def _signature(self) -> int:
        entries = []
        try:
            with os.scandir(self.base) as it:
                for entry in it:
                    st = entry.stat(follow_symlinks=False)
                    entries.append((entry.name, st.st_size, st.st_mtime_ns))
                    if entry.is_dir(follow_symlinks=False):
                        with os.scandir(entry.path) as sub:
                            for e in sub:
                                s2 = e.stat(follow_symlinks=False)
                                entries.append((e.path, s2.st_size, s2.st_mtime_ns))
        except OSError:
            return 0
        return hash(tuple(sorted(entries)))

    def changed(self) -> bool:
        sig = self._signature()
        before, self._last = self._last, sig
        return before is not None and sig != before
