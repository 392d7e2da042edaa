"""The engine seam: how an attempt is launched, observed, signalled and ended.

    engine = LocalEngine()
    handle = engine.launch(LaunchSpec(argv, env, cwd, attempt_dir, grace_s=30, token=tok))
    engine.poll(handle)                  # -> ExitStatus | None (with the scheduler's verdict)
    engine.ranks(handle)                 # -> [RankProcess(rank, pid, host), ...]
    engine.signal(handle, signal.SIGTERM)
    engine.on_each_node(handle, ["nvidia-smi"], timeout_s=10)   # -> [NodeResult, ...]

An engine knows one way of running a training job: `local` (a process tree on this box, what
`babysit run` has always done), `torchrun` (engines/torchrun.py: ranks as the processes of one
elastic agent on this node) and `slurm` (engines/slurmjob.py: an sbatch job per attempt;
engines/slurm.py: a step of the allocation babysit runs in; engines/slurmalloc.py: of one it
holds with spares; nodes from the allocation, signals through `scancel`, per-node work through
`srun --overlap --jobid`, the verdict from `scontrol`/`squeue`'s job state, since `sacct`
needs accounting: NODE_FAIL, TIMEOUT, PREEMPTED, OUT_OF_MEMORY, ...). The interface:
- the handle is the babysit launcher's (engines/process.py): every engine starts its attempt
  under it (torchrun itself, or `srun`/`sbatch --wait` on the batch host), so re-attach, exit
  records and output files work the same way; an engine may subclass it to carry a job id;
- `ranks` maps ranks to processes to hosts, for stack dumps and for blaming a node (torchrun:
  the elastic agent's workers, whose failures it reports per rank as local rank, pid, exit
  code and error file; Slurm: the job's steps on the nodes of its allocation);
- `on_each_node` runs a command on every node of the attempt (stacks, health checks);
- `apply_bans` turns the ban list into the engine's own spelling (a hostfile without the banned
  hosts, `--exclude=...`);
- `poll` reports how the attempt ended, with `ExitStatus.scheduler_state` set when a scheduler
  gave its own verdict;
- what only some engines do has a no-op in LocalEngine, so supervise asks any engine:
  `prepare` (torchrun rewrites its command), `evidence_files` (its error files),
  `host_of_rank` and `drain` (Slurm), `preflight_nodes` (None: check this node) and
  `preflight_results` (a job per attempt checks its own nodes), `remote`.
Engines are a stage: they import records and errors only, never another stage.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NamedTuple, Protocol

from babysit.engines.process import Handle
from babysit.records import ExitStatus


@dataclass(frozen=True)
class LaunchSpec:
    """One attempt to start: the command, its environment and where its output goes."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path
    attempt_dir: Path
    grace_s: float  # the launcher's own SIGTERM -> SIGKILL grace
    token: str  # BABYSIT_ATTEMPT_TOKEN: finds every process of the attempt
    hosts: tuple[str, ...] = ()  # the usable hosts (empty: this node only)
    exclude: tuple[str, ...] = ()  # banned hosts, for engines that take an exclude list


@dataclass(frozen=True)
class RankProcess:
    """One process of the attempt: its rank when it has one (an agent or a launcher has none)."""

    pid: int
    host: str
    rank: int | None = None


@dataclass(frozen=True)
class NodeResult:
    """What a command run on one node of the attempt gave."""

    host: str
    returncode: int | None  # None: it did not finish within its time
    stdout: str
    stderr: str


class InJobCheck(NamedTuple):
    """What an attempt's own preflight found (a job per attempt checks its nodes before the
    training, engines/jobcheck.py): each node's answer, and whether it ended the job for a
    sick node."""

    answers: list[NodeResult]
    stopped: bool


class Engine(Protocol):
    """What supervise needs from an engine (see the module docstring)."""

    name: str
    host: str  # the node babysit runs on and launches from
    remote: bool  # its ranks run on other nodes: stacks come through on_each_node
    drains: bool  # --drain: a node babysit bans is drained in the scheduler too

    def prepare(self, spec: LaunchSpec) -> tuple[LaunchSpec, list[str]]:
        """The command as the engine runs it, and notes to say once (torchrun: its
        --max-restarts is babysit's now)."""
        ...

    def evidence_files(self, handle: Handle) -> list[Path]:
        """Files for triage beside stdout and stderr (torchrun: its workers' error files)."""
        ...

    def host_of_rank(self, handle: Handle, rank: int) -> str | None:
        """The node a rank ran on, where the engine knows it."""
        ...

    def rank_hosts(self, handle: Handle, ranks: Collection[int]) -> dict[int, str]:
        """host_of_rank for many ranks at once (the ones it knows)."""
        ...

    def drain(self, node: str, reason: str) -> str:
        """Drain a banned node in the scheduler (--drain); what was done, in words."""
        ...

    def preflight_nodes(self, argv: Sequence[str], timeout_s: float) -> list[NodeResult] | None:
        """argv on every node the next attempt may use (preflight); None: the engine has no
        nodes of its own, check this one; []: none to check now (a job per attempt checks
        its nodes itself, and preflight_results tells)."""
        ...

    def preflight_results(self, handle: Handle) -> InJobCheck | None:
        """What the attempt's own preflight found on its nodes (a job per attempt checks them
        before the training, engines/jobcheck.py); None: it ran none."""
        ...

    def apply_bans(self, spec: LaunchSpec, banned: Sequence[str]) -> LaunchSpec: ...

    def launch(self, spec: LaunchSpec) -> Handle: ...

    def reattach(
        self,
        launcher_pid: int | None,
        launcher_started: float | None,
        attempt_dir: Path,
        token: str,
    ) -> Handle | None: ...

    def adopt(self, attempt_dir: Path, token: str | None = None) -> Handle | None: ...

    def poll(self, handle: Handle) -> ExitStatus | None: ...

    def wait(self, handle: Handle, timeout_s: float, sleep: Callable[[float], None]) -> None: ...

    def close(self, handle: Handle) -> None: ...

    def main_pid(self, handle: Handle) -> int | None: ...

    def ranks(self, handle: Handle) -> list[RankProcess]: ...

    def signal(self, handle: Handle, sig: int) -> None: ...

    def survivors(self, handle: Handle) -> list[int]: ...

    def kill(self, handle: Handle, spare_launcher: bool = False) -> None: ...

    def sweep(self, handle: Handle) -> list[int]: ...

    def on_each_node(
        self, handle: Handle | None, argv: Sequence[str], timeout_s: float
    ) -> list[NodeResult]: ...


class NoExtras:
    """What only some engines do, done by none: the local engine's answers (and a base for
    engines and fakes that add none of it)."""

    remote = False
    drains = False

    def prepare(self, spec: LaunchSpec) -> tuple[LaunchSpec, list[str]]:
        return spec, []

    def evidence_files(self, handle: Handle) -> list[Path]:
        return []

    def host_of_rank(self, handle: Handle, rank: int) -> str | None:
        return None

    def rank_hosts(self, handle: Handle, ranks: Collection[int]) -> dict[int, str]:
        return {}

    def drain(self, node: str, reason: str) -> str:
        return f"not draining {node}: no scheduler to drain it in"

    def preflight_nodes(self, argv: Sequence[str], timeout_s: float) -> list[NodeResult] | None:
        return None  # no nodes of its own: the doctor checks this one

    def preflight_results(self, handle: Handle) -> InJobCheck | None:
        return None


def with_exclude(spec: LaunchSpec, banned: Sequence[str]) -> LaunchSpec:
    """The spec with `banned` as its exclude list (kept in the engine's order, no repeats)."""
    return replace(spec, exclude=tuple(dict.fromkeys(banned)))
