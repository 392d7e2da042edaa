"""The Slurm engines: attempts as jobs (from a login node) or as steps (inside an allocation).

    # inside an allocation (an sbatch script that runs `babysit run -- srun python train.py`):
    engine = SlurmStepEngine.from_env(os.environ)
    # from a login node, one sbatch job per attempt (engines/slurmjob.py):
    engine = SlurmJobEngine(SlurmRequest(nodes=2, partition="gpu", time="4:00:00"))
    # from a login node with spares: one allocation of N+K nodes, an srun step per attempt
    # (engines/slurmalloc.py):
    engine = SlurmAllocEngine(SlurmRequest(nodes=2, spares=1), run_dir)

All three start their attempt under babysit's launcher, like the local engine (re-attach, exit
records and output files work the same way):
- SlurmStepEngine runs the user's `srun ...` on the batch host with `--exclude=<banned nodes>`
  (Slurm's hostlist spelling) and `--label` (ranks on every line) added (engines/srun.py); a
  task that ends badly ends the step a few seconds later (slurmfollow.BadExit: srun's own
  --kill-on-bad-exit loses the dying task's last lines). Stacks and checks reach every node
  through `srun --overlap --jobid $SLURM_JOB_ID -w NODE`. A ban that leaves fewer nodes than
  the step needs raises NodesExhausted (exit 4), and `finish` requeues the job (requeuehold,
  the banned nodes added to its ExcNodeList, release) when babysit gives up with exit 4 or was
  warned of the time limit (`--signal=B:USR1@90`), if the job is requeueable.
  `srun torchrun ...` composes with the torchrun engine (`prepare`): torchrun's --max-restarts
  becomes 0 and its per-rank files go under the attempt (torchrun_args.rewrite on what follows
  srun's options), and its workers' lines carry their global rank inside srun's label
  (`1: [rank3]: ...`, TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE), so a blamed rank finds its node.
- SlurmJobEngine (engines/slurmjob.py) submits each attempt with `sbatch --parsable` (the
  command wrapped in a batch script that runs `srun`, or the user's own sbatch script), its
  output into the attempt's stdout.log and stderr.log, banned nodes in `--exclude`;
  engines/slurmfollow.py follows the job under the launcher. Slurm's verdict is
  ExitStatus.scheduler_state.
- SlurmAllocEngine (engines/slurmalloc.py) asks once for N+K nodes (`sbatch --no-kill`, a job
  that only holds the allocation) and runs each attempt as an `srun --jobid` step on N of them:
  a bad node is left out of the next step without queueing again. A new allocation is asked
  for only when the held one ended (its time limit) or has too few good nodes left.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from babysit.engines import process
from babysit.engines.base import LaunchSpec, NodeResult
from babysit.engines.hostlist import compress, expand
from babysit.engines.local import LocalEngine
from babysit.engines.process import Handle
from babysit.engines.slurmctl import SlurmCtl, run_command, shielded_from_term
from babysit.engines.slurmfollow import (
    BadExit,
)
from babysit.engines.srun import (
    NODES_FLAGS,
    TASK_FLAGS,
    TORCHRUN_PREFIX,
    TORCHRUN_PREFIX_VAR,
    flag_value,
    has_flag,
    is_srun,
    min_nodes,
    rank_tasks,
    srun_argv,
    srun_options,
    srun_torchrun,
    task_hosts,
)
from babysit.engines.torchrun import LOG_SUBDIR, errors_as_log, notes_once
from babysit.engines.torchrun_errors import found_error_files, read_error_file
from babysit.errors import LaunchError, NodesExhausted
from babysit.records import ExitCode, ExitStatus

NODE_TIMEOUT_S = 30.0  # srun --overlap on one node, at most
HOLDER_LOG = "slurm-allocation-%j.log"
ALLOCATION_DIR = "slurm-allocation"  # in the run's directory: slurm.json of the held allocation
SRUN_LOGS_NOTE = (
    "torchrun's per-rank output and error files go to <attempt directory>/{sub} (babysit "
    "added --log-dir and --tee 3; console lines carry srun's task label and torchrun's "
    "global rank: `1: [rank3]:`)"
)
# srun's own report of a task's end names the node: `srun: error: node2: task 1: Exited ...`


@dataclass(frozen=True)
class SlurmRequest:
    """What `babysit run --launcher slurm` asks of Slurm (flags of cli/run.py)."""

    nodes: int | None = None
    partition: str | None = None
    time: str | None = None
    spares: int = 0
    sbatch_args: tuple[str, ...] = ()
    drain: bool = False
    poll_s: float = 0.5


def partition_bans(
    ctl: SlurmCtl, request: SlurmRequest, banned: Sequence[str]
) -> tuple[list[str], int]:
    """The banned nodes of the request's partition, and how many of its nodes are left;
    NodesExhausted when too few are left, a LaunchError for a partition that does not exist."""
    pool = ctl.partition_nodes(request.partition)
    if pool is None:
        what = f"partition {request.partition!r}" if request.partition else "a default partition"
        raise LaunchError(
            f"Slurm has no {what} (sinfo lists none such): pass --partition with one that "
            "`sinfo` shows"
        )
    out = [h for h in pool if h in set(banned)]
    usable = len(pool) - len(out)
    need = request.nodes or 1
    if usable < need:
        raise NodesExhausted(
            f"the bans leave {usable} of the partition's {len(pool)} nodes "
            f"({compress(pool)}), the job needs {need}: banned {compress(out)}"
        )
    return out, usable


def _tail(path: Path, limit: int = 1 << 20) -> str:
    try:
        with path.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - limit))
            return fh.read().decode(errors="replace")
    except OSError:
        return ""


def on_nodes(
    job_id: str, nodes: Sequence[str], argv: Sequence[str], timeout_s: float
) -> list[NodeResult]:
    """argv on every node of the job at once (`srun --overlap --jobid J -w NODE -N1 -n1`), each
    killed at timeout_s."""
    def one(node: str) -> NodeResult:
        cmd = ["srun", "--overlap", f"--jobid={job_id}", "-w", node, "-N1", "-n1", "--quiet",
               *argv]
        try:
            res = run_command(cmd, timeout_s)
        except LaunchError as exc:
            return NodeResult(node, None, "", str(exc))
        if res.returncode is None:
            why = f"did not finish on {node} within {timeout_s:g}s and was killed"
            return NodeResult(node, None, res.stdout, why)
        return NodeResult(node, res.returncode, res.stdout, res.stderr)

    if not nodes:
        return []
    with ThreadPoolExecutor(max_workers=min(64, len(nodes))) as pool:
        return list(pool.map(one, nodes))


class SlurmBase(LocalEngine):
    """What the three share: bans into --exclude, ranks to nodes, per-node commands."""

    name = "slurm"
    remote = True  # forensics: stacks come from every node (on_each_node), not local pids

    def __init__(self, ctl: SlurmCtl | None = None, host: str | None = None) -> None:
        super().__init__(host)
        self.ctl = ctl or SlurmCtl()
        self.attempt_nodes: dict[Path, list[str]] = {}  # attempt_dir -> the nodes it may use
        self.warned = False  # Slurm's warning signal before the time limit came
        self.drains = False  # --drain: a node babysit bans is drained in Slurm too
        self.bad_exits: dict[Path, BadExit] = {}
        self.torchrun_attempts: set[Path] = set()  # attempts that run `srun ... torchrun ...`
        self._told: set[str] = set()

    def job_of(self, handle: Handle) -> str | None:
        raise NotImplementedError

    def evidence_files(self, handle: Handle) -> list[Path]:
        """`srun torchrun`: the workers' error files under the attempt's torchrun directory
        (every node's, where the nodes share the attempt's directory; the batch host's
        otherwise), as log text for triage. Their global rank is unknown (torchrun numbers the
        nodes in its own order): each is told by its local rank. The directory is babysit's by
        its place (a re-attached attempt's too); a --log-dir of the user's is not read."""
        logs = handle.attempt_dir / LOG_SUBDIR
        found = [read_error_file(p) for p in found_error_files(logs)]
        return errors_as_log(handle.attempt_dir, [e for e in found if e is not None])

    def prepare(self, spec: LaunchSpec) -> tuple[LaunchSpec, list[str]]:
        """`srun ... torchrun ...` as babysit runs it (srun.srun_torchrun), and what to tell the
        operator once; other commands as given."""
        found = srun_torchrun(spec.argv, spec.env, spec.attempt_dir / LOG_SUBDIR)
        if found is None:
            return spec, []
        argv, env, plan = found
        if env[TORCHRUN_PREFIX_VAR] == TORCHRUN_PREFIX:  # a prefix of the user's: no ranks
            self.torchrun_attempts.add(spec.attempt_dir)
        return replace(spec, argv=argv, env=env), notes_once(plan, SRUN_LOGS_NOTE, self._told)

    def nodes_of(self, handle: Handle) -> list[str]:
        return self.attempt_nodes.get(handle.attempt_dir, [])

    def host_of_rank(self, handle: Handle, rank: int) -> str | None:
        """The node rank `rank` ran on: srun's own report of its tasks; else block
        distribution of one task per node (srun's default) over the attempt's nodes."""
        return self.rank_hosts(handle, [rank]).get(rank)

    def rank_hosts(self, handle: Handle, ranks: Collection[int]) -> dict[int, str]:
        """host_of_rank for many ranks, from one read of the attempt's output (the straggler
        detector's map, refreshed while the attempt runs)."""
        text = "".join(_tail(handle.attempt_dir / n) for n in ("stderr.log", "stdout.log"))
        # `srun torchrun`: a rank is a worker of one task (one torchrun agent per node); a rank
        # without a line of its own gets no node: better none than the wrong one.
        tasks = rank_tasks(text) if handle.attempt_dir in self.torchrun_attempts else None
        reported = task_hosts(text)
        nodes = self.nodes_of(handle)
        out: dict[int, str] = {}
        for rank in ranks:
            task = rank if tasks is None else tasks.get(rank)
            if task is None:
                continue
            found = reported.get(task)
            if found is None and 0 <= task < len(nodes) and self._one_task_per_node:
                found = nodes[task]
            if found is not None:
                out[rank] = found
        return out

    _one_task_per_node = True

    def on_each_node(
        self, handle: Handle | None, argv: Sequence[str], timeout_s: float
    ) -> list[NodeResult]:
        if handle is None:
            return super().on_each_node(handle, argv, timeout_s)
        job = self.job_of(handle)
        if job is None:
            return []
        return on_nodes(job, self.nodes_of(handle), argv, min(timeout_s, NODE_TIMEOUT_S))

    def drain(self, node: str, reason: str) -> str:
        """`scontrol update State=DRAIN` with the triage as the reason; the words to say."""
        try:
            self.ctl.drain(node, f"babysit: {reason}")
        except LaunchError as exc:
            return f"could not drain {node}: {exc}"
        return f"drained {node} in Slurm (reason: babysit: {reason[:120]})"

    def finish(self, code: ExitCode) -> str | None:
        """At the end of the run: what the engine did about it (requeue, release), in words."""
        return None

    def on_stop_signal(self) -> None:
        """A SIGTERM reached babysit (called in a thread of its own)."""


class SlurmStepEngine(SlurmBase):
    """Inside an allocation: the attempt is the user's srun, a step of $SLURM_JOB_ID."""

    def __init__(
        self,
        job_id: str,
        alloc: Sequence[str],
        ctl: SlurmCtl | None = None,
        host: str | None = None,
        requeue: bool | None = None,
    ) -> None:
        super().__init__(ctl, host)
        self.job_id = job_id
        self.alloc = list(alloc)
        self.requeue = requeue  # None: ask Slurm (scontrol show job: Requeue=1)
        self.banned: list[str] = []
        self.launched = False  # an attempt started in this allocation (finish: no requeue loop)
        self.timed_out = False  # Slurm ended the job at its time limit (no warning signal)
        self.requeued: str | None = None  # what the requeue did, once done (in words)
        self.finished = False  # finish() ran: the run is over, its outcome decided
        self._requeue_lock = threading.Lock()

    @classmethod
    def from_env(cls, env: Mapping[str, str], ctl: SlurmCtl | None = None) -> SlurmStepEngine:
        job = env.get("SLURM_JOB_ID") or env.get("SLURM_JOBID")
        if not job:
            raise LaunchError("not inside a Slurm allocation: SLURM_JOB_ID is not set")
        nodelist = env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST") or ""
        try:
            alloc = expand(nodelist)
        except ValueError as exc:
            raise LaunchError(f"SLURM_JOB_NODELIST: {exc}") from exc
        host = env.get("SLURMD_NODENAME") or None
        return cls(job, alloc, ctl, host)

    def job_of(self, handle: Handle) -> str | None:
        return self.job_id

    def poll(self, handle: Handle) -> ExitStatus | None:
        status = handle.poll()
        if status is None:
            watch = self.bad_exits.setdefault(
                handle.attempt_dir, BadExit(handle.attempt_dir / process.STDERR_NAME)
            )
            pid = handle.training_pid()
            if watch.due(time.monotonic()) and pid is not None:
                # srun, not the launcher's group: the launcher must not note a stop.
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGTERM)
        return status

    def apply_bans(self, spec: LaunchSpec, banned: Sequence[str]) -> LaunchSpec:
        out = [h for h in self.alloc if h in set(banned)]
        usable = [h for h in self.alloc if h not in set(out)]
        wanted = flag_value(srun_options(spec.argv[1:]), NODES_FLAGS)
        need = min_nodes(wanted) if wanted else len(self.alloc)
        self.banned = out  # the requeue leaves them out too (finish)
        if len(usable) < need:
            raise NodesExhausted(
                f"the bans leave {len(usable)} of the allocation's {len(self.alloc)} nodes "
                f"({compress(self.alloc)}), the step needs {need}: banned {compress(out)}"
            )
        self.launched = True
        self._one_task_per_node = not has_flag(srun_options(spec.argv[1:]), TASK_FLAGS)
        self.attempt_nodes[spec.attempt_dir] = usable
        argv = srun_argv(spec.argv, out)
        return replace(spec, argv=argv, exclude=tuple(out))

    def preflight_nodes(self, argv: Sequence[str], timeout_s: float) -> list[NodeResult]:
        """argv on every node of the allocation not banned yet (preflight, supervise/nodes.py)."""
        nodes = [h for h in self.alloc if h not in set(self.banned)]
        return on_nodes(self.job_id, nodes, argv, timeout_s)

    def finish(self, code: ExitCode) -> str | None:
        """Requeue the job when babysit gave up on transient failures (exit 4), Slurm warned
        of the time limit, or the stop was Slurm's own at the time limit (see on_stop_signal),
        if the job may be requeued; the banned nodes join its ExcNodeList."""
        with self._requeue_lock:
            self.finished = True  # a SIGTERM from now on is not the run's to act on
            if self.requeued is not None:
                return self.requeued
            if code == ExitCode.STOPPED and not self.warned and self._at_time_limit():
                self.warned = self.timed_out = True
            if code != ExitCode.BUDGET_EXHAUSTED and not self.warned:
                return None
            self.requeued = self._requeue()
            return self.requeued

    def on_stop_signal(self) -> None:
        """A SIGTERM reached babysit (in a thread of its own): when it is Slurm ending the job
        at its time limit without the warning signal (scontrol: Reason=TimeLimit while the job
        completes), requeue the job now. Slurm allows that while the job completes, and kills
        what is left after KillWait, which may be seconds: too soon to wait for the trainer."""
        with self._requeue_lock:
            if self.finished or self.requeued is not None or self.warned:
                return
            if not self._at_time_limit():
                return
            self.warned = self.timed_out = True
            self.requeued = self._requeue()

    def _requeue(self) -> str:
        try:
            info = self.ctl.job(self.job_id)
            requeueable = self.requeue if self.requeue is not None else bool(
                info is not None and info.requeue
            )
            if not requeueable:
                return (
                    f"Slurm job {self.job_id} is not requeueable (sbatch --requeue): not "
                    "requeued; submit it again"
                )
            excluded = set(info.exclude) if info is not None else set()
            if not self.launched and not self.warned and set(self.banned) <= excluded:
                # Nothing ran here, and a requeue would ask for what it asked before: a loop.
                return (
                    f"not requeueing Slurm job {self.job_id}: it already leaves out "
                    f"{compress(self.banned)} and still got too few good nodes"
                )
            self.banned = sorted(set(self.banned) | excluded)
            if self.banned:
                # A running job's ExcNodeList cannot change: requeue it held, set it while it
                # is pending, release it. Slurm is killing this batch shell (babysit) by then,
                # with KillWait to spare (30 s by default; the two calls take milliseconds):
                # its SIGTERM must not end them half done (a job held for good).
                with shielded_from_term():
                    self.ctl.requeue(self.job_id, hold=True)
                    self._exclude_when_pending(compress(self.banned))
                    self.ctl.release(self.job_id)
            else:
                self.ctl.requeue(self.job_id)
        except LaunchError as exc:
            return f"could not requeue Slurm job {self.job_id}: {exc}"
        left = f" without {compress(self.banned)}" if self.banned else ""
        why = " at its time limit" if self.timed_out else ""
        return f"requeued Slurm job {self.job_id}{why}{left} (scontrol requeue)"


    def _at_time_limit(self) -> bool:
        """The job is ending at its time limit (scontrol: TIMEOUT, or Reason=TimeLimit while it
        completes)."""
        try:
            info = self.ctl.job(self.job_id)
        except LaunchError:
            return False
        return info is not None and (info.state == "TIMEOUT" or info.reason == "TimeLimit")

    def _exclude_when_pending(self, hostlist: str, timeout_s: float = 5.0) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                self.ctl.update_job(self.job_id, f"ExcNodeList={hostlist}")
                return
            except LaunchError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.05)  # still completing: pending in a moment


def slurm_engine(
    launcher: str | None,
    command: Sequence[str],
    env: Mapping[str, str],
    request: SlurmRequest,
    run_dir: Path,
    stopping: Callable[[], bool] = lambda: False,
) -> SlurmBase | None:
    """The Slurm engine for `babysit run`, or None for another engine:
    - `--launcher slurm` inside an allocation (SLURM_JOB_ID set), or a command that starts with
      srun there: the attempt is a step of that job (SlurmStepEngine);
    - `--launcher slurm` elsewhere: a job per attempt (SlurmJobEngine), or with --spares one
      allocation of N+K nodes and a step per attempt (SlurmAllocEngine)."""
    # they build on this module's SlurmBase and SlurmStepEngine
    from babysit.engines.slurmalloc import SlurmAllocEngine
    from babysit.engines.slurmjob import SlurmJobEngine

    inside = bool(env.get("SLURM_JOB_ID") or env.get("SLURM_JOBID"))
    if launcher not in (None, "slurm"):
        return None
    engine: SlurmBase
    if launcher is None:
        if not (inside and is_srun(command)):
            return None
        engine = SlurmStepEngine.from_env(env)
    elif inside and request.nodes is None and request.spares == 0:
        engine = SlurmStepEngine.from_env(env)
    elif request.spares > 0:
        if len(command) == 1 and not is_srun(command) and Path(command[0]).is_file():
            raise LaunchError(
                "--spares runs the command as srun steps in one allocation: give the command "
                "(e.g. -- python train.py), not an sbatch script"
            )
        engine = SlurmAllocEngine(request, run_dir, stopping=stopping)
    else:
        engine = SlurmJobEngine(request)
    engine.drains = request.drain
    return engine
