"""Hang forensics: make the child dumpable, then dump the Python stacks of every process.

    env = forensics_env(os.environ, attempt_dir / "stacks")   # before launching the attempt
    ...
    stacks = dump_stacks(pids, attempt_dir / "stacks", budget_s=10)   # when a hang is found
    # -> [ProcessStack(pid, rank, host, tool="py-spy" | "faulthandler" | "none", raw=<output>)]
    stacks = parse_stacks(stacks)                             # babysit.parse.stacks: -> threads

forensics_env puts babysit's `sitecustomize` (babysit/_inject) first on the child's PYTHONPATH:
every Python process of the attempt then registers a faulthandler dump on a real-time signal
and leaves a `<pid>.ready` marker in the stacks directory (see that file for why that signal).
It also turns PyTorch's flight recorder on, its dump file in the stacks directory, unless the
user set those variables: the user's own values win.

dump_stacks runs `py-spy dump --json` on every Python process at once, within `budget_s`. Where
py-spy is missing or may not attach (ptrace not permitted, as in most containers) it falls back
to faulthandler: it signals the processes that left a marker (and only those: the signal's
default action kills a process), then reads what each appended to its `<pid>.txt`. Nothing
here raises for a process that cannot be dumped: its ProcessStack carries the error.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import psutil

from babysit.looks import KERNEL_WAIT, ProcessStack

INJECT_DIR = Path(__file__).resolve().parents[1] / "_inject"
STACKS_DIR_VAR = "BABYSIT_STACKS_DIR"
PTRACER_VAR = "BABYSIT_PTRACER_PID"
AUTO = "auto"  # dump_stacks(pyspy=AUTO): find py-spy next to this Python or on PATH
FLIGHT_RECORDER_FILE = "nccl_trace_rank_"  # PyTorch appends the rank
_Result = tuple[str, str | None]  # (the tool's output, None) or ("", why not)

# Where a process's rank is, in order. A process whose rank comes from a launcher's variable
# while one of its children has RANK is a launcher itself (torchrun under srun): it has none.
RANK_VARS = ("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "LOCAL_RANK")

# PyTorch's flight recorder (ProcessGroupNCCL; the names as PyTorch 2.x reads them). Each pair is
# (new name, old name): torch >= 2.9 reads TORCH_FR_BUFFER_SIZE and TORCH_FR_DUMP_TEMP_FILE and
# still falls back to TORCH_NCCL_TRACE_BUFFER_SIZE and TORCH_NCCL_DEBUG_INFO_TEMP_FILE (both
# names are in torch 2.13's libtorch_cpu.so; torchtitan picks by version: "TRACE_BUFFER_SIZE =
# 'TORCH_FR_BUFFER_SIZE'; TRACE_FILE = 'TORCH_FR_DUMP_TEMP_FILE'" for >= 2.9, the NCCL names
# before). PyTorch's docs: "TORCH_NCCL_DUMP_ON_TIMEOUT: Control whether dumping debug info on
# watchdog timeout or exception is detected. This variable must be set together with
# TORCH_NCCL_TRACE_BUFFER_SIZE larger than 0." 2000 entries is what PyTorch's flight recorder
# tutorial and torchtitan use. Both names of a pair are set, unless the user set either.
FLIGHT_RECORDER_BUFFER = ("TORCH_FR_BUFFER_SIZE", "TORCH_NCCL_TRACE_BUFFER_SIZE")
FLIGHT_RECORDER_DUMP_FILE = ("TORCH_FR_DUMP_TEMP_FILE", "TORCH_NCCL_DEBUG_INFO_TEMP_FILE")
FLIGHT_RECORDER_ON_TIMEOUT = ("TORCH_NCCL_DUMP_ON_TIMEOUT",)

PTRACE_FIX = (
    "ptrace is not permitted here: in a container start it with --cap-add SYS_PTRACE "
    "(docker; Kubernetes: securityContext.capabilities.add [SYS_PTRACE]), or on the host "
    "`sysctl kernel.yama.ptrace_scope=0`"
)
NO_DUMP = "faulthandler wrote nothing in time (is the machine overloaded? raise stacks_budget_s)"
IN_KERNEL = (
    f"{KERNEL_WAIT}: no tool can read its Python stack; see `cat /proc/{{pid}}/stack` and "
    "`ps -o stat,wchan {pid}` (a hung filesystem or GPU driver, most often)"
)
EXITED = "the process exited before its stack"
STOPPED = (
    "stopped (state T: SIGSTOP or Ctrl-Z): no stack until it is continued (`kill -CONT {pid}`)"
)


def find_pyspy() -> str | None:
    """py-spy next to this Python (the venv's bin), else on PATH; None when there is none."""
    here = Path(sys.executable).parent / "py-spy"
    if here.is_file() and os.access(here, os.X_OK):
        return str(here)
    return shutil.which("py-spy")


def forensics_env(
    base: Mapping[str, str],
    stacks_dir: Path,
    flight_recorder: bool = True,
    faulthandler: bool = True,
) -> dict[str, str]:
    """The child's environment: `base` plus what makes its stacks dumpable (faulthandler) and
    PyTorch's flight recorder dump into `stacks_dir` (created here). The user's values win."""
    env = dict(base)
    stacks_dir.mkdir(parents=True, exist_ok=True)
    if faulthandler:
        old = env.get("PYTHONPATH", "")
        # No trailing ":" when there was none: an empty entry would put the cwd on sys.path.
        env["PYTHONPATH"] = f"{INJECT_DIR}{os.pathsep}{old}" if old else str(INJECT_DIR)
        env[STACKS_DIR_VAR] = str(stacks_dir)
        env[PTRACER_VAR] = str(os.getpid())
        env.setdefault("PYTHONFAULTHANDLER", "1")
    if flight_recorder:
        for names, value in (
            (FLIGHT_RECORDER_BUFFER, "2000"),
            (FLIGHT_RECORDER_ON_TIMEOUT, "1"),
            (FLIGHT_RECORDER_DUMP_FILE, str(stacks_dir / FLIGHT_RECORDER_FILE)),
        ):
            if not any(n in env for n in names):
                env.update(dict.fromkeys(names, value))
    return env


@dataclass
class _Target:
    pid: int
    rank: int | None
    rank_var: str | None
    parent: int | None
    command: str
    error: str | None = None


def dump_stacks(
    pids: Sequence[int],
    stacks_dir: Path,
    budget_s: float,
    pyspy: str | None = AUTO,
) -> list[ProcessStack]:
    """The stacks of every Python process among `pids` (others are skipped), in pid order,
    within about `budget_s`. pyspy=None: faulthandler only."""
    deadline = time.monotonic() + budget_s
    host = os.uname().nodename
    no_pyspy = "py-spy not used"
    if pyspy == AUTO:
        pyspy = find_pyspy()
        no_pyspy = (
            f"py-spy not found next to {sys.executable} or on PATH "
            "(pip install 'babysit[stacks]' for stacks without faulthandler)"
        )
    targets = _resolve_ranks([t for t in (_inspect(pid, stacks_dir) for pid in pids) if t])
    results: dict[int, ProcessStack] = {}
    todo: list[_Target] = []
    for t in targets:
        if t.error:
            results[t.pid] = _stack(t, host, "none", error=t.error)
        else:
            todo.append(t)
    why_not_pyspy: dict[int, str] = {}
    if pyspy and todo:
        # Half the budget at most, so that faulthandler still has time for the ones it missed.
        timeout = max(0.2, (deadline - time.monotonic()) / 2)
        with ThreadPoolExecutor(max_workers=min(32, len(todo))) as pool:
            done = list(pool.map(lambda t: _pyspy(pyspy, t, timeout), todo))
        for t, (raw, error) in zip(todo, done, strict=True):
            if error is None:
                results[t.pid] = _stack(t, host, "py-spy", raw=raw)
            else:
                why_not_pyspy[t.pid] = error
    else:
        why_not_pyspy = {t.pid: no_pyspy for t in todo}
    rest = [t for t in todo if t.pid not in results]
    for t, (raw, error) in zip(rest, _faulthandler(rest, stacks_dir, deadline), strict=True):
        if error is None:
            results[t.pid] = _stack(t, host, "faulthandler", raw=raw)
        else:
            results[t.pid] = _stack(t, host, "none", error=f"{why_not_pyspy[t.pid]}; {error}")
    return [results[pid] for pid in sorted(results)]


def _stack(
    t: _Target,
    host: str,
    tool: str,
    raw: str = "",
    error: str | None = None,
) -> ProcessStack:
    return ProcessStack(
        pid=t.pid,
        rank=t.rank,
        host=host,
        tool=tool,
        command=t.command,
        error=error,
        parent=t.parent,
        raw=raw,
    )


def _inspect(pid: int, stacks_dir: Path) -> _Target | None:
    """What babysit can tell of `pid`; None for a process that is not Python (a bash wrapper)."""
    try:
        proc = psutil.Process(pid)
        with proc.oneshot():
            cmdline = proc.cmdline()
            parent = proc.ppid()
            state = proc.status()
            try:
                exe = proc.exe()
            except (psutil.AccessDenied, OSError):
                exe = cmdline[0] if cmdline else ""
            try:
                env = proc.environ()
            except (psutil.AccessDenied, OSError):
                env = {}
    except psutil.NoSuchProcess:  # zombies too (psutil.ZombieProcess)
        return _Target(pid, None, None, None, "", EXITED)
    except (psutil.AccessDenied, OSError) as e:
        return _Target(pid, None, None, None, "", f"could not inspect the process: {e}")
    command = " ".join(cmdline)
    command = command if len(command) <= 200 else command[:197] + "..."
    python = (stacks_dir / f"{pid}.ready").exists() or "python" in os.path.basename(exe)
    if not python:
        return None
    rank, var = None, None
    for name in RANK_VARS:
        value = env.get(name, "").strip()
        if value.isdigit():
            rank, var = int(value), name
            break
    # A stopped process runs no signal handler and a tool would wait on it for nothing.
    error = STOPPED.format(pid=pid) if state == psutil.STATUS_STOPPED else None
    return _Target(pid, rank, var, parent, command, error)


def _resolve_ranks(targets: list[_Target]) -> list[_Target]:
    parents_of_ranked = {t.parent for t in targets if t.rank_var == "RANK"}
    for t in targets:
        if t.rank_var not in (None, "RANK") and t.pid in parents_of_ranked:
            t.rank = None  # torchrun's agent under srun: SLURM_PROCID is its node's, not a rank
    return targets


_PTRACE_DENIED = re.compile(r"ermission denied|not permitted|os error 1\b|os error 13\b", re.I)
_GONE = re.compile(r"no such process|os error 3\b|failed to find process", re.I)


def _pyspy(pyspy: str, t: _Target, timeout: float) -> _Result:
    """(py-spy's output, None) or ("", why py-spy could not dump). `--json` is as old as
    `dump` itself (py-spy 0.2). The wait is bounded even when py-spy cannot die (blocked on a
    target stuck in the kernel): the hang's restart must not wait on its forensics."""
    try:
        proc = subprocess.Popen(
            [pyspy, "dump", "--json", "--pid", str(t.pid)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as e:
        return "", f"py-spy could not be run ({pyspy}): {e}"
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=1.0)  # stuck in the kernel itself: left behind, not waited on
        return "", f"py-spy did not answer within {timeout:.1f}s"
    if proc.returncode == 0:
        return out.decode(errors="replace"), None
    said = (err or out).decode(errors="replace").strip()
    return "", pyspy_error(said, t.pid)


def pyspy_error(stderr: str, pid: int) -> str:
    """py-spy's complaint, in words that say what to do."""
    if _PTRACE_DENIED.search(stderr):
        return f"py-spy may not attach to pid {pid}: {PTRACE_FIX}"
    if _GONE.search(stderr) and not psutil.pid_exists(pid):
        return EXITED
    last = stderr.splitlines()[-1] if stderr else "no message"
    return f"py-spy failed on pid {pid}: {last[:300]}"


def _marker_signal(pid: int, stacks_dir: Path) -> tuple[int | None, str]:
    """(the signal `pid` registered faulthandler on, "") if the marker names this very process
    (its start time, so a reused pid is never signalled) and the handler is still installed
    (the signal is caught: a script that reset it to the default would be killed); else
    (None, why it is not signalled)."""
    try:
        sig_text, started = (stacks_dir / f"{pid}.ready").read_text().split()[:2]
        sig = int(sig_text)
    except FileNotFoundError:
        return None, (
            "it did not register babysit's faulthandler (started with python -I or -E, or not "
            "under babysit), so it was not signalled"
        )
    except (OSError, ValueError):
        return None, "its faulthandler marker is unreadable, so it was not signalled"
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
        if started != "-" and stat[stat.rfind(b")") + 2 :].split()[19].decode() != started:
            return None, "its pid was reused since it registered, so it was not signalled"
        with open(f"/proc/{pid}/status") as fh:
            caught = next((ln.split()[1] for ln in fh if ln.startswith("SigCgt:")), None)
    except (OSError, ValueError, IndexError):
        return None, EXITED
    if caught is not None and not (int(caught, 16) >> (sig - 1)) & 1:
        return None, (
            f"the script reset babysit's dump signal ({sig}) to its default, which would kill "
            "it, so it was not signalled"
        )
    return sig, ""


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _faulthandler(targets: Sequence[_Target], stacks_dir: Path, deadline: float) -> list[_Result]:
    """Signal every registered target at once, then poll their files until each has new text
    that stopped growing, or the deadline."""
    out: list[_Result] = [("", None)] * len(targets)
    sizes: dict[int, int] = {}
    for i, t in enumerate(targets):
        sig, why = _marker_signal(t.pid, stacks_dir)
        if sig is None:
            out[i] = ("", why)
            continue
        sizes[i] = _size(stacks_dir / f"{t.pid}.txt")
        try:
            os.kill(t.pid, sig)
        except ProcessLookupError:
            out[i] = ("", EXITED)
            del sizes[i]
        except OSError as e:
            out[i] = ("", f"could not signal the process: {e}")
            del sizes[i]
    last: dict[int, int] = {}
    pending = set(sizes)
    while pending:
        for i in list(pending):
            path = stacks_dir / f"{targets[i].pid}.txt"
            size = _size(path)
            if size > sizes[i] and last.get(i) == size:  # new text, and it stopped growing
                pending.discard(i)
                with path.open("rb") as fh:
                    fh.seek(sizes[i])
                    out[i] = (fh.read(size - sizes[i]).decode(errors="replace"), None)
            last[i] = size
        if not pending or time.monotonic() >= deadline:
            break
        time.sleep(0.01)
    for i in pending:
        out[i] = ("", _why_silent(targets[i].pid))
    return out


def _why_silent(pid: int) -> str:
    """Why a signalled process wrote no stack: gone, in the kernel (looked at, not guessed:
    the node gets the blame for that one), or merely slow."""
    try:
        state = psutil.Process(pid).status()
    except psutil.NoSuchProcess:
        return EXITED
    except (psutil.AccessDenied, OSError):
        return NO_DUMP
    return IN_KERNEL.format(pid=pid) if state == psutil.STATUS_DISK_SLEEP else NO_DUMP
