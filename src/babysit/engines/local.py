"""The local engine: the attempt is a process tree on this box, under babysit's launcher.

    engine = LocalEngine()
    handle = engine.launch(spec)        # the launcher in a session of its own
    engine.ranks(handle)                # every process of the attempt but the launcher

A command like `torchrun --standalone ...` or `srun ...` typed by the user runs here too: the
local engine does not know what the command is, it only owns its processes (by process group,
descendants and the attempt's token). Bans reach such a command through the hostfile and the
BABYSIT_EXCLUDE_HOSTS variable that supervise prepares.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

from babysit.engines import process
from babysit.engines.base import LaunchSpec, NodeResult, NoExtras, RankProcess, with_exclude
from babysit.engines.process import Handle
from babysit.records import ExitStatus
from babysit.subproc import kill_session


class LocalEngine(NoExtras):
    name = "local"

    def __init__(self, host: str | None = None) -> None:
        self.host = host or os.uname().nodename

    def apply_bans(self, spec: LaunchSpec, banned: Sequence[str]) -> LaunchSpec:
        return with_exclude(spec, banned)  # the hostfile and the environment carry them

    def launch(self, spec: LaunchSpec) -> Handle:
        return process.launch(
            spec.argv, spec.env, spec.cwd, spec.attempt_dir, spec.grace_s, spec.token
        )

    def reattach(
        self,
        launcher_pid: int | None,
        launcher_started: float | None,
        attempt_dir: Path,
        token: str,
    ) -> Handle | None:
        return process.reattach(launcher_pid, launcher_started, attempt_dir, token)

    def adopt(self, attempt_dir: Path, token: str | None = None) -> Handle | None:
        return process.adopt(attempt_dir, token)

    def poll(self, handle: Handle) -> ExitStatus | None:
        return handle.poll()  # no scheduler: the exit status is the whole verdict

    def wait(self, handle: Handle, timeout_s: float, sleep: Callable[[float], None]) -> None:
        handle.wait(timeout_s, sleep)

    def close(self, handle: Handle) -> None:
        handle.close()

    def main_pid(self, handle: Handle) -> int | None:
        return handle.training_pid()

    def ranks(self, handle: Handle) -> list[RankProcess]:
        """Every live process of the attempt but the launcher (ranks are read from their
        environment by whoever needs them: the stack dump does)."""
        pids = [p for p in process.survivors(handle) if p != handle.launcher_pid]
        return [RankProcess(pid, self.host) for pid in pids]

    def signal(self, handle: Handle, sig: int) -> None:
        process.signal_group(handle, sig)

    def survivors(self, handle: Handle) -> list[int]:
        return process.survivors(handle)

    def kill(self, handle: Handle, spare_launcher: bool = False) -> None:
        process.kill_all(handle, spare_launcher)

    def sweep(self, handle: Handle) -> list[int]:
        return process.sweep(handle)

    def on_each_node(
        self, handle: Handle | None, argv: Sequence[str], timeout_s: float
    ) -> list[NodeResult]:
        """One node: this one. The command runs in a session of its own and is killed, with
        everything it started, when it overruns (a check stuck on a hung mount must not hold
        babysit)."""
        try:
            proc = subprocess.Popen(
                list(argv),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            return [NodeResult(self.host, None, "", f"cannot run {argv[0]!r}: {exc}")]
        try:
            out, err = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            kill_session(proc)
            why = (
                f"{argv[0]!r} did not finish within {timeout_s:g}s and was killed, with its session"
            )
            return [NodeResult(self.host, None, "", why)]
        return [NodeResult(self.host, proc.returncode, _text(out), _text(err))]


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")
