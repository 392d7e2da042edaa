"""The torchrun engine: `babysit run -- torchrun ...` as users write it, on one node.

    engine = TorchrunEngine()
    spec, notes = engine.prepare(spec)   # the command as babysit runs it, and what to say once
    handle = engine.launch(spec)         # under babysit's launcher, like the local engine
    engine.ranks(handle)                 # the agent (no rank) and its workers, by RANK
    engine.evidence_files(handle)        # the workers' error files, as text for triage

The attempt is the local engine's process tree (torchrun's elastic agent and its workers, under
babysit's launcher); this engine adds what it knows of torchrun:
- babysit owns the restarts: the user's `--max-restarts N` becomes 0, and babysit relaunches
  the whole command instead (torchrun's own relaunch re-enters the rendezvous with the same
  arguments; on a loaded box it hung in gloo's rendezvous 3 times out of 3, and it knows no
  checkpoint, triage or budget). The user is told once; babysit's own restart budget
  (`babysit run --max-restarts`, [restart] max_restarts) counts the failures instead;
- per-rank files: without a --log-dir, --redirects, --tee or --logs-specs of the user's,
  `--log-dir <attempt>/torchrun --tee 3` is added: every rank's stdout, stderr and error file
  lands under the attempt, and the console keeps every line (prefixed `[default3]:`);
- ranks: each worker's RANK and LOCAL_RANK from its environment (/proc/<pid>/environ), so that
  stacks and blame name ranks, and error files get their global rank;
- evidence: the workers' error files (TORCHELASTIC_ERROR_FILE, written by `@record`) are put
  in words (`torchrun-errors.log` in the attempt's directory) for triage, beside the console
  logs that hold the agent's "Root Cause (first observed failure)" block.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import psutil

from babysit.engines.base import LaunchSpec, RankProcess
from babysit.engines.local import LocalEngine
from babysit.engines.process import Handle
from babysit.engines.torchrun_args import Plan, rewrite
from babysit.engines.torchrun_errors import (
    RankError,
    found_error_files,
    read_error_file,
    render,
)
from babysit.records import ExitStatus

LOG_SUBDIR = "torchrun"  # <attempt>/torchrun: torchrun's --log-dir when babysit chooses it
ERRORS_FILE = "torchrun-errors.log"  # <attempt>/torchrun-errors.log: the error files, as text
ERROR_FILE_VAR = "TORCHELASTIC_ERROR_FILE"
WORKERS_EVERY_S = 5.0  # how often a running attempt's workers are looked up (rank, error file)
MAX_RESTARTS_NOTE = (
    "babysit restarts the whole command; your --max-restarts {n} is used as torchrun's "
    "--max-restarts 0 (torchrun's own relaunch re-enters the rendezvous with nothing learned: "
    "no checkpoint choice, no triage, and it can hang there), and babysit's restart budget "
    "counts the failures instead (babysit run --max-restarts, [restart] max_restarts)"
)
LOGS_NOTE = (
    "torchrun's per-rank output and error files go to <attempt directory>/{sub} (babysit "
    "added --log-dir and --tee 3; console lines carry torchrun's [defaultN]: prefix)"
)


@dataclass(frozen=True)
class Worker:
    """One of torchrun's worker processes, from its environment."""

    pid: int
    rank: int | None
    local_rank: int | None
    error_file: str | None


def worker_of(environ: dict[str, str], pid: int) -> Worker | None:
    """The worker that `environ` belongs to; None for a process torchrun did not start as a
    worker (the agent itself, a wrapper). A worker's own children (DataLoader workers) inherit
    its environment, and its rank with it."""
    if "TORCHELASTIC_RUN_ID" not in environ or "LOCAL_RANK" not in environ:
        return None
    return Worker(
        pid,
        _int(environ.get("RANK")),
        _int(environ.get("LOCAL_RANK")),
        environ.get(ERROR_FILE_VAR) or None,
    )


def _int(value: str | None) -> int | None:
    value = (value or "").strip()
    return int(value) if value.isdigit() else None


@dataclass
class _Attempt:
    """What the engine keeps about one attempt (by its directory)."""

    plan: Plan | None
    started: float
    log_dir: Path | None  # torchrun's --log-dir, absolute (None: torchrun's temporary one)
    workers: dict[int, Worker] = field(default_factory=dict)  # by pid, every one ever seen
    looked: float = 0.0  # monotonic time of the last look at the workers


def notes_once(plan: Plan, logs_note: str, told: set[str]) -> list[str]:
    """What to tell the operator about a torchrun rewrite (the --max-restarts replaced, where
    the per-rank files go: `logs_note`), each note once per babysit (`told` keeps them)."""
    notes = []
    if plan.user_max_restarts:
        notes.append(MAX_RESTARTS_NOTE.format(n=plan.user_max_restarts))
    if plan.added_logs:
        notes.append(logs_note.format(sub=LOG_SUBDIR))
    fresh = [n for n in notes if n not in told]
    told.update(fresh)
    return fresh


def errors_as_log(attempt_dir: Path, errors: Sequence[RankError]) -> list[Path]:
    """The workers' errors written out as log text (`torchrun-errors.log` in the attempt's
    directory) for triage to read beside the attempt's own output; [] when there are none (a
    rank killed by a signal writes no error file) or the file cannot be written (triage still
    has the console and its Root Cause block)."""
    if not errors:
        return []
    path = attempt_dir / ERRORS_FILE
    try:
        path.write_text(render(errors), encoding="utf-8")
    except OSError:
        return []
    return [path]


class TorchrunEngine(LocalEngine):
    name = "torchrun"

    def __init__(self, host: str | None = None) -> None:
        super().__init__(host)
        self._told: set[str] = set()
        self._attempts: dict[Path, _Attempt] = {}

    # -- launching -----------------------------------------------------------------------------

    def prepare(self, spec: LaunchSpec) -> tuple[LaunchSpec, list[str]]:
        """The spec as babysit runs it (see the module docstring), and what to tell the
        operator, once per babysit: the --max-restarts that was replaced, where the per-rank
        files go. Idempotent: a prepared spec comes back as it is."""
        plan = rewrite(spec.argv, spec.attempt_dir / LOG_SUBDIR, spec.env)
        if spec.attempt_dir not in self._attempts:  # the first plan knows what the user gave
            log_dir = spec.cwd / plan.log_dir if plan.log_dir is not None else None
            self._attempts[spec.attempt_dir] = _Attempt(plan, time.time(), log_dir)
        return replace(spec, argv=plan.argv), notes_once(plan, LOGS_NOTE, self._told)

    def launch(self, spec: LaunchSpec) -> Handle:
        spec, _ = self.prepare(spec)  # a no-op when the caller prepared it
        return super().launch(spec)

    # -- observing -----------------------------------------------------------------------------

    def poll(self, handle: Handle) -> ExitStatus | None:
        status = handle.poll()
        if status is None:
            self._look_at_workers(handle)  # throttled: rank and error file of each worker
        return status

    def ranks(self, handle: Handle) -> list[RankProcess]:
        """The agent (no rank) and its workers with their RANK, and any process of theirs."""
        state = self._state(handle.attempt_dir)
        out = []
        for p in super().ranks(handle):
            worker = self._worker(p.pid)
            if worker is not None:
                state.workers.setdefault(p.pid, worker)
            out.append(RankProcess(p.pid, self.host, worker.rank if worker else None))
        return out

    def _look_at_workers(self, handle: Handle) -> None:
        state = self._state(handle.attempt_dir)
        now = time.monotonic()
        if now - state.looked < WORKERS_EVERY_S:
            return
        state.looked = now
        agent = handle.training_pid()
        if agent is None:
            return
        with contextlib.suppress(psutil.Error):
            for child in psutil.Process(agent).children():  # the workers: the agent's children
                if child.pid not in state.workers:
                    worker = self._worker(child.pid)
                    if worker is not None:
                        state.workers[child.pid] = worker

    @staticmethod
    def _worker(pid: int) -> Worker | None:
        try:
            environ = psutil.Process(pid).environ()
        except (psutil.Error, OSError):
            return None
        return worker_of(environ, pid)

    def _state(self, attempt_dir: Path) -> _Attempt:
        state = self._attempts.get(attempt_dir)
        if state is None:
            # Re-attached, or adopted: babysit's own log dir is found by its place; a --log-dir
            # of the user's only through the workers' error file variables.
            state = self._attempts[attempt_dir] = _Attempt(None, 0.0, attempt_dir / LOG_SUBDIR)
        return state

    # -- evidence ------------------------------------------------------------------------------

    def error_files(self, attempt_dir: Path) -> list[RankError]:
        """The workers' error files of the attempt, each with its global rank where known."""
        state = self._state(attempt_dir)
        plan = state.plan
        paths: list[Path] = []
        if state.log_dir is not None:
            # A directory babysit made is the attempt's alone; the user's may hold older runs.
            ours = plan is None or plan.added_logs
            paths.extend(found_error_files(state.log_dir, 0.0 if ours else state.started - 1.0))
        rank_of: dict[Path, int | None] = {}
        for w in state.workers.values():
            if w.error_file:
                path = Path(w.error_file)
                rank_of[path] = w.rank
                if path not in paths and path.is_file():
                    paths.append(path)
        single = plan is None or plan.single_node
        out = []
        for path in paths:
            rank = rank_of.get(path)
            err = read_error_file(path, rank)
            if err is None:
                continue
            if rank is None and single:
                err = replace(err, rank=err.local_rank)  # one node: the local rank is the rank
            out.append(err)
        return out

    def evidence_files(self, handle: Handle) -> list[Path]:
        """The workers' error files, written out as log text (`torchrun-errors.log` in the
        attempt's directory) for triage to read beside the attempt's own output; [] when no
        worker wrote one (a rank killed by a signal writes none)."""
        return errors_as_log(handle.attempt_dir, self.error_files(handle.attempt_dir))
