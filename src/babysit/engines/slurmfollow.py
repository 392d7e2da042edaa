"""The follower of one Slurm job: the process that stands for the job under babysit's launcher.

    python -m babysit.engines.slurmfollow --job 12 --dir ATTEMPT_DIR --grace 30 --poll 0.5

The Slurm engine (engines/slurm.py) submits an attempt with sbatch, then starts this under
the launcher (engines/launcher.py) in place of a local command: it polls `scontrol show job`,
keeps ATTEMPT_DIR/slurm.json up to date (state, reason, nodes) and exits when the job ends,
with the job's exit code (128 + the signal when a signal ended it). babysit then treats the job
like any local attempt: re-attach after babysit dies, exit.json, output files (sbatch writes
the job's output into the attempt's stdout.log and stderr.log, where this script's own lines go
too). It writes Slurm's verdict in Slurm's words to stderr ("DUE TO TIME LIMIT", "NODE_FAIL"),
so that triage reads it like a real job's log.

- SIGTERM / SIGINT (babysit's stop, the launcher passing one on): the job gets the same signal
  (`scancel --signal --full`), and is cancelled outright after the grace period.
- A pending job that can never start (PartitionNodeLimit, ...) is cancelled, and said why;
  one that waits for a drained or down node is said once, and waited for.
- A job that Slurm forgot (gone from scontrol and squeue): said, and the end is unknown.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import sys
import time
from dataclasses import asdict
from pathlib import Path

from babysit.engines.slurmctl import JobInfo, SlurmCtl, base_state, pending_problem
from babysit.errors import LaunchError

STATE_FILE = "slurm.json"
# Slurm's words for its verdicts, as slurmstepd writes them into a job's log: triage reads them.
WORDS = {
    "TIMEOUT": "DUE TO TIME LIMIT",
    "DEADLINE": "DUE TO TIME LIMIT (deadline)",
    "PREEMPTED": "DUE TO PREEMPTION",
    "NODE_FAIL": "DUE TO NODE FAILURE (NODE_FAIL)",
    "BOOT_FAIL": "DUE TO NODE FAILURE (BOOT_FAIL)",
    "OUT_OF_MEMORY": "Exceeded job memory limit (OUT_OF_MEMORY)",
}
CANNOT_START = "CANNOT_START"
VANISHED = "VANISHED"
EXIT_CANNOT_START = 3  # the follower's exit code when the job could not start
EXIT_VANISHED = 4


BAD_EXIT_GRACE_S = 3.0
# srun's report of a task that ended badly (not "Terminated": that is the step being ended).
_BAD_EXIT = re.compile(
    r"srun: error: \S+: tasks? [\d,\-]+: (?:Exited with exit code [1-9]|Killed|Segmentation"
    r"|Aborted|Bus error|Floating point)"
)


class BadExit:
    """One task of the step ended badly (srun says so on stderr): the others are ended
    BAD_EXIT_GRACE_S later, as `srun --kill-on-bad-exit=1` would do at once. At once loses the
    dying task's last lines (its traceback, the Xid: 2 and 3 runs in 10 on Slurm 22.05, the
    local cluster of the tests), which triage needs more than the seconds.

        watch = BadExit(attempt_dir / "stderr.log")
        if watch.due(time.monotonic()): end the step"""

    def __init__(self, path: Path, grace_s: float = BAD_EXIT_GRACE_S) -> None:
        self.path = path
        self.grace_s = grace_s
        self.offset = 0
        self.tail = b""
        self.seen: float | None = None
        self.done = False

    def due(self, now: float) -> bool:
        """True once, grace_s after srun first reported a bad exit."""
        if self.done:
            return False
        if self.seen is None:
            self._read(now)
        if self.seen is not None and now - self.seen >= self.grace_s:
            self.done = True
            return True
        return False

    def _read(self, now: float) -> None:
        try:
            with self.path.open("rb") as fh:
                fh.seek(self.offset)
                data = fh.read(1 << 20)
        except OSError:
            return
        self.offset += len(data)
        text = self.tail + data
        lines = text.split(b"\n")
        self.tail = lines.pop()[-4096:]
        if _BAD_EXIT.search(b"\n".join(lines).decode(errors="replace")):
            self.seen = now


def write_state(attempt_dir: Path, doc: dict[str, object]) -> None:
    path = attempt_dir / STATE_FILE
    tmp = path.with_suffix(".tmp")
    with contextlib.suppress(OSError):
        tmp.write_text(json.dumps(doc), encoding="utf-8")
        os.replace(tmp, path)


def read_state(attempt_dir: Path) -> dict[str, object]:
    try:
        doc = json.loads((attempt_dir / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def say(msg: str) -> None:
    with contextlib.suppress(OSError):
        print(f"babysit: {msg}", file=sys.stderr, flush=True)


class Follower:
    def __init__(self, ctl: SlurmCtl, job: str, attempt_dir: Path, grace_s: float) -> None:
        self.ctl, self.job, self.dir, self.grace_s = ctl, job, attempt_dir, grace_s
        self.signals: list[int] = []
        self.cancel_at: float | None = None
        self.told_pending: str | None = None
        self.seen: JobInfo | None = None
        self.started = False
        self.bad_exit = BadExit(attempt_dir / "stderr.log")

    def on_signal(self, sig: int, _frame: object) -> None:
        self.signals.append(sig)

    def _pass_signals(self) -> None:
        while self.signals:
            sig = self.signals.pop(0)
            name = signal.Signals(sig).name.removeprefix("SIG")
            with contextlib.suppress(LaunchError):
                self.ctl.cancel(self.job, signal=name, full=True)
            if sig in (signal.SIGTERM, signal.SIGINT) and self.cancel_at is None:
                self.cancel_at = time.monotonic() + max(0.0, self.grace_s - 1.0)
            self._record(self.seen, stopping=True)

    def _record(self, info: JobInfo | None, **extra: object) -> None:
        doc: dict[str, object] = dict(read_state(self.dir))
        doc["job_id"] = self.job
        if info is not None:
            doc.update(asdict(info))
            doc["nodes"] = list(info.nodes)
        doc.update(extra)
        write_state(self.dir, doc)

    def run(self, poll_s: float) -> int:
        while True:
            self._pass_signals()
            if self.cancel_at is not None and time.monotonic() >= self.cancel_at:
                with contextlib.suppress(LaunchError):
                    self.ctl.cancel(self.job)
                self.cancel_at = float("inf")
            try:
                info = self.ctl.job(self.job)
            except LaunchError as exc:
                say(f"cannot follow Slurm job {self.job} for now: {exc}")
                time.sleep(max(poll_s, 2.0))
                continue
            if info is None:
                say(
                    f"Slurm job {self.job} vanished: neither scontrol nor squeue knows it any "
                    "more; how it ended is unknown"
                )
                self._record(self.seen, state=VANISHED)
                return EXIT_VANISHED
            if info != self.seen:
                self._record(info)
                if info.state == "RUNNING" and not self.started:
                    self.started = True
                    say(f"Slurm job {self.job} running on {','.join(info.nodes)}")
            self.seen = info
            if info.pending:
                problem = pending_problem(info.reason)
                if problem is not None and problem[0]:
                    say(
                        f"Slurm job {self.job} cannot start: {info.reason} ({problem[1]}); "
                        "cancelled it"
                    )
                    with contextlib.suppress(LaunchError):
                        self.ctl.cancel(self.job)
                    self._record(info, state=CANNOT_START, why=f"{info.reason}: {problem[1]}")
                    return EXIT_CANNOT_START
                if problem is not None and self.told_pending != info.reason:
                    self.told_pending = info.reason
                    say(f"Slurm job {self.job} is pending: {info.reason} ({problem[1]})")
            if not info.active:
                return self._ended(info)
            if info.state == "RUNNING" and self.bad_exit.due(time.monotonic()):
                # A task ended badly: end the steps (not the batch shell, which is the job).
                with contextlib.suppress(LaunchError):
                    self.ctl.cancel(self.job, signal="TERM", full=False)
            time.sleep(poll_s)

    def _ended(self, info: JobInfo) -> int:
        state, _ = base_state(info.state)
        words = WORDS.get(state)
        where = f" on {','.join(info.nodes)}" if info.nodes else ""
        if words:
            say(f"Slurm job {self.job}{where} ended {state}: {words}")
        elif state == "CANCELLED":
            by = f" by UID {info.cancelled_by}" if info.cancelled_by is not None else ""
            say(f"Slurm job {self.job}{where} CANCELLED{by}")
        if info.signal:
            return 128 + info.signal
        return info.exit_code if info.exit_code is not None else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="babysit.engines.slurmfollow")
    p.add_argument("--job", required=True)
    p.add_argument("--dir", required=True, type=Path)
    p.add_argument("--grace", type=float, default=30.0)
    p.add_argument("--poll", type=float, default=0.5)
    args = p.parse_args(argv)
    follower = Follower(SlurmCtl(), args.job, args.dir, args.grace)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(sig, follower.on_signal)
    return follower.run(args.poll)


if __name__ == "__main__":
    sys.exit(main())
