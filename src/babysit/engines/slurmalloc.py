"""Slurm from a login node with spares (`babysit run --launcher slurm --nodes N --spares K`):
one allocation of N+K nodes held by a job of babysit's (its holder), each attempt an srun step
on N of them; a banned node is left out of the next step, and the allocation is asked again
(min(N+K, the nodes not banned)) only when too few of its nodes are left. The allocation's job
id is kept in the run's directory, so a babysit started again uses the one it held.

    engine = SlurmAllocEngine(SlurmRequest(nodes=4, spares=1, ...), run_dir)
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from babysit.engines.base import LaunchSpec, NodeResult
from babysit.engines.hostlist import compress
from babysit.engines.slurm import (
    ALLOCATION_DIR,
    HOLDER_LOG,
    SlurmRequest,
    SlurmStepEngine,
    partition_bans,
)
from babysit.engines.slurmctl import JobInfo, SlurmCtl, pending_problem
from babysit.engines.slurmfollow import read_state, write_state
from babysit.engines.srun import TASK_FLAGS, has_flag, srun_argv, srun_options
from babysit.errors import LaunchError
from babysit.records import ExitCode


class SlurmAllocEngine(SlurmStepEngine):
    """From a login node with spares: one allocation of N+K nodes held by a job of babysit's,
    each attempt an srun step on N of them."""

    def on_stop_signal(self) -> None:
        """On a login node a SIGTERM is a human's (or the machine's), never a time limit of
        the allocation: nothing to requeue."""

    def __init__(
        self,
        request: SlurmRequest,
        run_dir: Path,
        ctl: SlurmCtl | None = None,
        host: str | None = None,
        sleep: Callable[[float], None] = time.sleep,
        stopping: Callable[[], bool] = lambda: False,
    ) -> None:
        super().__init__("", [], ctl, host, requeue=False)
        self.request = request
        self.run_dir = run_dir
        self.sleep = sleep
        self.stopping = stopping
        self.holder: JobInfo | None = None
        # The allocation a babysit before this one held (it was killed, or the run resumed):
        # used again while it runs, instead of queueing for another.
        held = read_state(run_dir / ALLOCATION_DIR).get("job_id")
        self.job_id = str(held) if held else ""

    def _holder_alive(self) -> JobInfo | None:
        if not self.job_id:
            return None
        info = self.ctl.job(self.job_id)
        return info if info is not None and info.active else None

    def _allocate(self, banned: Sequence[str]) -> None:
        r = self.request
        pool, usable = partition_bans(self.ctl, r, banned)  # raises for too few, no partition
        # Fewer spares when the bans leave fewer than N+K nodes: asked for N+K, the job would
        # wait for nodes that the exclude list rules out, for ever.
        need = min((r.nodes or 1) + r.spares, usable)
        args = [f"--nodes={need}", "--no-kill", "--job-name=babysit-allocation"]
        if r.partition:
            args.append(f"--partition={r.partition}")
        if r.time:
            args.append(f"--time={r.time}")
        if pool:
            args.append(f"--exclude={compress(pool)}")
        self.run_dir.mkdir(parents=True, exist_ok=True)
        args += [*r.sbatch_args, f"--output={self.run_dir / HOLDER_LOG}"]
        args += ["--wrap", "exec sleep 2147483647"]
        self.job_id = self.ctl.submit(args)
        (self.run_dir / ALLOCATION_DIR).mkdir(parents=True, exist_ok=True)
        write_state(self.run_dir / ALLOCATION_DIR, {"job_id": self.job_id})
        told = None
        while True:
            info = self.ctl.job(self.job_id)
            if info is None:
                raise LaunchError(f"the allocation's job {self.job_id} vanished from Slurm")
            if info.state == "RUNNING":
                self.holder = info
                self.alloc = list(info.nodes)
                return
            if not info.active:
                raise LaunchError(f"the allocation's job {self.job_id} ended {info.state}")
            problem = pending_problem(info.reason)
            if problem is not None and problem[0]:
                self.ctl.cancel(self.job_id)
                raise LaunchError(
                    f"Slurm job {self.job_id} (the allocation) cannot start: {info.reason} "
                    f"({problem[1]}); cancelled it"
                )
            if problem is not None and told != info.reason:
                told = info.reason
                print(f"babysit: allocation {self.job_id} pending: {info.reason} ({problem[1]})",
                      file=sys.stderr, flush=True)
            if self.stopping():
                self.ctl.cancel(self.job_id)
                raise LaunchError("stopped while waiting for the allocation")
            self.sleep(self.request.poll_s / 2)

    def apply_bans(self, spec: LaunchSpec, banned: Sequence[str]) -> LaunchSpec:
        r = self.request
        need = r.nodes or 1
        alive = self._holder_alive()
        good = [h for h in (alive.nodes if alive else ()) if h not in set(banned)]
        if alive is None or len(good) < need:
            if alive is not None:  # too few good nodes left in it: a new allocation
                self.ctl.cancel(self.job_id)
            self._allocate(banned)
        else:
            self.alloc = list(alive.nodes)  # a failed node leaves a --no-kill allocation
        out = [h for h in self.alloc if h in set(banned)]
        usable = [h for h in self.alloc if h not in set(out)]
        self.banned = out
        self.attempt_nodes[spec.attempt_dir] = usable[:need]
        self._one_task_per_node = not has_flag(srun_options(spec.argv[1:]), TASK_FLAGS)
        argv = srun_argv(spec.argv, out, jobid=self.job_id, nodes=need)
        return replace(spec, argv=argv, exclude=tuple(out))

    def preflight_nodes(self, argv: Sequence[str], timeout_s: float) -> list[NodeResult]:
        """argv on every node of the allocation (asked for now if there is none yet)."""
        alive = self._holder_alive()
        if alive is None:
            self._allocate(self.banned)
        else:
            self.alloc = list(alive.nodes)
        return super().preflight_nodes(argv, timeout_s)

    def finish(self, code: ExitCode) -> str | None:
        if not self.job_id:
            return None
        with contextlib.suppress(LaunchError):
            info = self.ctl.job(self.job_id)
            if info is not None and info.active:
                self.ctl.cancel(self.job_id)
                return f"released the allocation (Slurm job {self.job_id})"
        return None
