"""Find checkpoints on disk and tell finished ones from ones still (or never fully) written.

    scan_checkpoints("out/ckpt_*.pt", now=time.time(), settle_s=2.0)  # -> [Checkpoint, ...]
    scan_checkpoints("out/step{step}/model.pt", ...)   # a template: the step is where {step} is
    validate_checkpoint("python check.py {checkpoint}", path, cwd, timeout_s=300)  # -> problem

The step is read from the name (`ckpt_000150.pt`, `checkpoint-500/`, `global_step1000`,
Lightning's `epoch=0-step=450.ckpt`), the number after "step"/"iter"/"ckpt"/"checkpoint" when
there is one, else the last number; a directory whose name has no number (`checkpoint-best/`)
takes `global_step` from the HF Trainer `trainer_state.json` in it. `**` in a glob never follows a
link to a directory, and the walk is bounded (globwalk.py). A
checkpoint is not complete when its name is temporary (`*.tmp`, `*.partial`, dot-files), when it
was modified less than `settle_s` ago, or when its format says it is cut short: torch.save's zip
archives without their central directory, safetensors files shorter than their header says,
torch.distributed checkpoint directories without `.metadata`, HF `checkpoint-N/` directories
without `trainer_state.json`.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shlex
import struct
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from babysit.errors import LaunchError
from babysit.records import Checkpoint
from babysit.sources.globwalk import walk_glob
from babysit.sources.placeholder import fill
from babysit.subproc import run_check

_TEMP_SUFFIXES = (".tmp", ".temp", ".partial", ".incomplete", ".lock", ".swp", "~")
_KEYED_STEP = re.compile(r"(?:step|iter|ckpt|checkpoint)[_\-=]?(\d+)", re.IGNORECASE)
_ANY_NUMBER = re.compile(r"\d+")
_ZIP_MAGIC = b"PK\x03\x04"
TRAINER_STATE = "trainer_state.json"
TRAINER_STATE_MAX = 1 << 20  # parsed whole up to this; beyond, its head and tail are read
_GLOBAL_STEP = re.compile(rb'"global_step"\s*:\s*(\d+)\s*[,}\n]')
MAX_MEMBERS = 100_000  # files of one checkpoint directory looked at


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


def scan_checkpoints(
    pattern: str,
    now: float,
    settle_s: float,
    on_problem: Callable[[str], None] | None = None,
) -> list[Checkpoint]:
    """Every path matching `pattern` (files or directories), newest-first by step then mtime.
    A pattern with `{step}` is a template: its step is the number in that place. A walk cut
    short (a `**` over too many entries) is told to `on_problem`, with what it found."""
    found = []
    expanded = os.path.expanduser(pattern)
    template = _template_regex(expanded) if STEP in expanded else None
    walk = walk_glob(template_glob(expanded))
    if walk.problem is not None and on_problem is not None:
        on_problem(walk.problem)
    for path in walk.paths:
        ckpt = inspect_checkpoint(Path(path), now, settle_s)
        if template is not None:
            m = template.search(path)
            ckpt = dataclasses.replace(ckpt, step=int(m.group(1)) if m else None)
        found.append(ckpt)
    return sorted(found, key=checkpoint_order, reverse=True)


def validate_checkpoint(
    command: str,
    path: str,
    cwd: Path,
    timeout_s: float,
    stopping: Callable[[], bool] = lambda: False,
) -> str | None:
    """Run the user's check on one checkpoint (`{checkpoint}` replaced by its path, quoted where
    the command is a shell script; else the path appended; also in BABYSIT_CHECKPOINT). None
    when it exits 0; otherwise the problem, with the command's last words. It runs at most
    `timeout_s`, and is killed (with whatever it started, setsid or not) as soon as
    `stopping()` says babysit is told to stop: then the problem says so, and the caller, which
    knows it is stopping, does not hold it against the checkpoint."""
    words = shlex.split(command)
    try:
        if any(CKPT_PLACEHOLDER in w for w in words):
            argv = fill(words, CKPT_PLACEHOLDER, path)
        else:
            argv = [*words, path]
    except LaunchError as exc:
        return f"--validate-checkpoint: {exc}"
    env = {**os.environ, "BABYSIT_CHECKPOINT": path}
    try:
        res = run_check(argv, cwd, timeout_s, stopping, env)
    except OSError as exc:
        return f"--validate-checkpoint could not run {argv[0]!r}: {exc.strerror or exc}"
    if res.stopped:
        return "--validate-checkpoint was stopped: babysit was told to stop"
    if res.timed_out:
        return f"--validate-checkpoint did not finish within {timeout_s:g}s"
    if res.returncode == 0:
        return None
    said = (res.stderr or res.stdout).decode("utf-8", "replace").strip().splitlines()
    tail = f": {said[-1][:200]}" if said else ""
    return f"--validate-checkpoint exited with {res.returncode}{tail}"


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
        files, too_many = _members(path)
        size = sum(_size(p) for p in files)
        mtime = max([st.st_mtime, *(_mtime(p) for p in files)])
        if step is None and any(p.name == TRAINER_STATE for p in files):
            step = trainer_state_step(path / TRAINER_STATE)
        problem = None if files else "empty directory"
        if too_many:
            problem = f"more than {MAX_MEMBERS:,} files: not a checkpoint babysit can inspect"
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


def _members(directory: Path) -> tuple[list[Path], bool]:
    """The files below a checkpoint directory (links to directories not followed), at most
    MAX_MEMBERS; True when there were more."""
    files: list[Path] = []
    stack = [directory]
    while stack:
        try:
            with os.scandir(stack.pop()) as it:
                entries = list(it)
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))
                elif entry.is_file():
                    files.append(Path(entry.path))
            except OSError:
                continue
            if len(files) > MAX_MEMBERS:
                return files[:MAX_MEMBERS], True
    return files, False


def trainer_state_step(path: Path) -> int | None:
    """`global_step` of an HF Trainer `trainer_state.json`; None when it is missing, half
    written or not JSON. Read whole up to TRAINER_STATE_MAX; a bigger one (a long log_history)
    is believed only when it ends like a JSON object, and its step is taken from its head (the
    Trainer writes its keys sorted: global_step comes before log_history)."""
    try:
        with path.open("rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size <= TRAINER_STATE_MAX:
                data = json.loads(fh.read(TRAINER_STATE_MAX))
                step = data.get("global_step") if isinstance(data, dict) else None
                return step if type(step) is int and step >= 0 else None
            head = fh.read(64 * 1024)
            fh.seek(size - 16)
            tail = fh.read(16)
    except (OSError, ValueError, RecursionError):
        return None
    m = _GLOBAL_STEP.search(head)
    return int(m.group(1)) if m and tail.rstrip().endswith(b"}") else None


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
