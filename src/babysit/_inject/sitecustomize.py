"""Put on the training command's PYTHONPATH by babysit (act/stackdump.py); never imported by it.

    BABYSIT_STACKS_DIR=/run/home/stacks PYTHONPATH=<this dir>:$PYTHONPATH python train.py

Python imports `sitecustomize` at start-up, so every Python process of the attempt (every rank,
every DataLoader worker, torchrun's agent) does this with zero code changes:
- faulthandler.enable(): a segfault or abort prints the Python stacks to stderr;
- faulthandler.register(SIG, <stacks dir>/<pid>.txt, all_threads=True): on SIG the
  interpreter appends the stacks of all its threads to that file, from a C signal handler, so
  it works while the main thread is stuck in C code (an all_reduce, a read) holding the GIL;
- then writes <stacks dir>/<pid>.ready ("<signal> <start time>"): babysit only signals a pid
  whose marker names that very process, because SIG's default action kills it.
A forked child (a DataLoader worker) inherits the handler but would append to its parent's
file: os.register_at_fork re-registers it under its own pid. Where Yama's ptrace_scope is 1,
it also names babysit (BABYSIT_PTRACER_PID) as allowed to ptrace it, so that py-spy, started
by babysit but no ancestor of the trainer, can attach.

SIG (BABYSIT_STACK_SIGNAL, default SIGRTMIN+5) is a real-time signal because the two user
signals are taken: Slurm's `--signal` and Lightning's requeue use SIGUSR1, submitit's
preemption handling uses SIGUSR2; a training script that installs its own handler on the
signal would run it when babysit asks for stacks (a requeue in the middle of a hang). No
launcher, scheduler or training library we know of uses the real-time signals; glibc keeps
the first ones (below Python's signal.SIGRTMIN) for itself.

It must never raise or print, and stays cheap (a few file operations). Then it runs the user's
own `sitecustomize`, if there is one further on sys.path, as Python would have.
"""

from __future__ import annotations

import contextlib
import os
import sys


def _signal_number() -> int:
    import signal

    text = os.environ.get("BABYSIT_STACK_SIGNAL", "").strip().upper()
    if text.isdigit():
        return int(text)
    base = getattr(signal, "SIGRTMIN", None)
    if text.startswith("SIGRTMIN") and base is not None:
        return int(base) + int(text[len("SIGRTMIN") :] or 0)
    if text and hasattr(signal, text):
        return int(getattr(signal, text))
    return int(base) + 5 if base is not None else int(signal.SIGUSR2)


def _start_time(pid: int) -> str:
    """The process's start time in clock ticks since boot (/proc/<pid>/stat field 22): with
    the pid it names one process, even after the pid is reused."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
        return stat[stat.rfind(b")") + 2 :].split()[19].decode()
    except (OSError, IndexError):
        return "-"


def _allow_ptrace() -> None:
    """Yama's ptrace_scope 1 lets a process ptrace its descendants only; py-spy is babysit's
    child, not the trainer's ancestor. PR_SET_PTRACER names babysit (and so its children)."""
    tracer = os.environ.get("BABYSIT_PTRACER_PID", "")
    if not tracer.isdigit():
        return
    try:
        with open("/proc/sys/kernel/yama/ptrace_scope", "rb") as fh:
            if fh.read().strip() != b"1":
                return
    except OSError:
        return
    import ctypes

    pr_set_ptracer = 0x59616D61
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_ptracer, int(tracer), 0, 0, 0)


_files: list[object] = []  # the open dump file, kept alive for faulthandler


def _register() -> None:
    import faulthandler

    where = os.environ.get("BABYSIT_STACKS_DIR")
    if not where:
        return
    pid = os.getpid()
    sig = _signal_number()
    dump = open(os.path.join(where, f"{pid}.txt"), "a")  # noqa: SIM115 (lives as long as we do)
    faulthandler.register(sig, file=dump, all_threads=True, chain=False)
    _files[:] = [dump]  # after a fork, the parent's file object goes (the child has its own)
    with contextlib.suppress(Exception):
        _allow_ptrace()
    marker = os.path.join(where, f"{pid}.ready")
    tmp = f"{marker}.tmp"
    with open(tmp, "w") as fh:
        fh.write(f"{sig} {_start_time(pid)}\n")
    os.replace(tmp, marker)  # babysit never reads half a marker


def _register_quietly() -> None:
    # On failure: no stacks on demand for this process; babysit will not signal it (no marker).
    with contextlib.suppress(Exception):
        _register()


def _setup() -> None:
    try:
        import faulthandler

        if not faulthandler.is_enabled():
            faulthandler.enable()
        if os.environ.get("BABYSIT_STACKS_DIR") and hasattr(faulthandler, "register"):
            _register_quietly()
            if hasattr(os, "register_at_fork"):
                os.register_at_fork(after_in_child=_register_quietly)
    except Exception:
        pass


def _chain() -> None:
    """Run the user's own sitecustomize (the next one on sys.path), as module `sitecustomize`.
    Its errors propagate to site.py, which reports them exactly as it would without babysit."""
    import importlib.machinery
    import importlib.util

    try:
        here = os.path.dirname(os.path.abspath(__file__))
        rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    except Exception:
        return
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


_setup()
_chain()
