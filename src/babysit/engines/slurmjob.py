"""The Slurm engine of a job per attempt: from a login node, each attempt is one sbatch job.

    engine = SlurmJobEngine(SlurmRequest(nodes=2, partition="gpu", time="4:00:00"))

It submits each attempt with `sbatch --parsable` (the command wrapped in a batch script that
runs `srun`, or the user's own sbatch script), its output into the attempt's stdout.log and
stderr.log, banned nodes in `--exclude`; engines/slurmfollow.py follows the job under the
launcher (the job's state in the attempt's slurm.json), and Slurm's verdict is
ExitStatus.scheduler_state. `torchrun ...` runs as `srun torchrun ...` (one agent a node), with
`{head}` in its arguments filled in by the job's shell (engines/srun.job_script). With
`--preflight` the job checks its own nodes before the training (engines/jobcheck.py). What it
shares with the other two Slurm engines is engines/slurm.py's SlurmBase.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from babysit.engines import jobcheck, process
from babysit.engines.base import InJobCheck, LaunchSpec, NodeResult, RankProcess
from babysit.engines.hostlist import compress
from babysit.engines.process import Handle
from babysit.engines.slurm import SlurmBase, SlurmRequest, partition_bans
from babysit.engines.slurmctl import SlurmCtl
from babysit.engines.slurmfollow import CANNOT_START, read_state, write_state
from babysit.engines.srun import (
    TASK_FLAGS,
    has_flag,
    is_srun,
    job_script,
    srun_argv,
    srun_options,
)
from babysit.engines.torchrun_args import is_torchrun
from babysit.errors import LaunchError
from babysit.records import ExitStatus


class SlurmJobEngine(SlurmBase):
    """From a login node: each attempt is one sbatch job, followed by engines/slurmfollow.py."""

    def preflight_nodes(self, argv: Sequence[str], timeout_s: float) -> list[NodeResult] | None:
        """A job per attempt: no node is known before the job runs (not this login node). The
        next job checks its own nodes before the training (engines/jobcheck.py); what they
        said comes back through preflight_results."""
        self.check = (list(argv), timeout_s)
        return []

    check: tuple[list[str], float] | None = None  # the in-job preflight: the doctor, its time

    def preflight_results(self, handle: Handle) -> InJobCheck | None:
        return jobcheck.results(handle.attempt_dir, self.nodes_of(handle))

    def prepare(self, spec: LaunchSpec) -> tuple[LaunchSpec, list[str]]:
        """`torchrun ...` (or `srun ... torchrun ...`) from a login node: the job runs it
        under srun, one torchrun agent per node (srun's default of one task a node), rewritten
        as inside an allocation (SlurmBase.prepare). Other commands as given."""
        argv = spec.argv
        notes: list[str] = []
        if self.check is not None:
            note = (
                "preflight: your own sbatch script runs as it is, so babysit cannot check its "
                "nodes before the training: check them in the script (babysit doctor exits 6 "
                "when a check fails; keep its srun task from failing, or srun's report of it "
                "reads as the training's)"
                if self._user_script(spec) is not None
                else "preflight: each job checks its own nodes before the training starts "
                "(they are known once it runs); a node that fails is banned and the job "
                "submitted again without it"
            )
            if note not in self._told:
                self._told.add(note)
                notes.append(note)
        if not is_srun(argv) and is_torchrun(argv):
            spec = replace(spec, argv=["srun", *argv])
        spec, more = super().prepare(spec)
        return spec, notes + more

    def __init__(
        self, request: SlurmRequest, ctl: SlurmCtl | None = None, host: str | None = None
    ) -> None:
        super().__init__(ctl, host)
        self.request = request
        self.exclude: list[str] = []

    def job_of(self, handle: Handle) -> str | None:
        job = read_state(handle.attempt_dir).get("job_id")
        return str(job) if job else None

    def nodes_of(self, handle: Handle) -> list[str]:
        nodes = read_state(handle.attempt_dir).get("nodes")
        return [str(n) for n in nodes] if isinstance(nodes, list) else []

    def apply_bans(self, spec: LaunchSpec, banned: Sequence[str]) -> LaunchSpec:
        self.exclude = partition_bans(self.ctl, self.request, banned)[0]
        return replace(spec, exclude=tuple(self.exclude))

    def _sbatch_args(self, attempt_dir: Path, nodes: int | None, name: str) -> list[str]:
        r = self.request
        args = [f"--job-name={name}"]
        if nodes is not None:
            args.append(f"--nodes={nodes}")
        if r.partition:
            args.append(f"--partition={r.partition}")
        if r.time:
            args.append(f"--time={r.time}")
        if self.exclude:
            args.append(f"--exclude={compress(self.exclude)}")
        return [*args, *r.sbatch_args]

    def launch(self, spec: LaunchSpec) -> Handle:
        d = spec.attempt_dir
        try:
            d.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise LaunchError(f"cannot create {d}: {exc}") from exc
        script = self._script(spec)
        args = [
            *self._sbatch_args(d, self.request.nodes, f"babysit-{d.parent.name}"),
            f"--output={d / process.STDOUT_NAME}",
            f"--error={d / process.STDERR_NAME}",
            "--open-mode=append",
            f"--chdir={spec.cwd}",
            str(script),
        ]
        env = {**spec.env, process.TOKEN_VAR: spec.token}
        job = self.ctl.submit(args, env)
        write_state(d, {"job_id": job, "state": "PENDING", "exclude": self.exclude})
        follower = [
            sys.executable, "-m", "babysit.engines.slurmfollow", "--job", job, "--dir", str(d),
            "--grace", str(spec.grace_s), "--poll", str(self.request.poll_s),
        ]
        return process.launch(follower, spec.env, spec.cwd, d, spec.grace_s, spec.token)

    def _script(self, spec: LaunchSpec) -> Path:
        """The user's sbatch script, or a batch script that runs the command under srun."""
        path = self._user_script(spec)
        if path is not None:
            try:
                first = path.read_text(errors="replace").split("\n", 1)[0]
            except OSError as exc:
                raise LaunchError(f"cannot read the sbatch script {path}: {exc}") from exc
            if not first.startswith("#!"):
                raise LaunchError(
                    f"{spec.argv[0]} does not look like a batch script: its first line must start "
                    "with #! (e.g. #!/bin/bash), as sbatch requires"
                )
            self._one_task_per_node = False  # its own srun lines: trust srun's reports only
            return path
        step = srun_argv(spec.argv, ())
        self._one_task_per_node = not has_flag(srun_options(step[1:]), TASK_FLAGS)
        check = "" if self.check is None else jobcheck.prologue(*self.check, spec.attempt_dir)
        path = spec.attempt_dir / "job.sbatch"
        path.write_text(job_script(step, check), encoding="utf-8")
        path.chmod(0o755)
        return path

    @staticmethod
    def _user_script(spec: LaunchSpec) -> Path | None:
        """The user's own sbatch script, when the command is one (a single existing file)."""
        argv = spec.argv
        if len(argv) == 1 and Path(spec.cwd, argv[0]).is_file() and not is_srun(argv):
            return Path(spec.cwd, argv[0])
        return None

    def poll(self, handle: Handle) -> ExitStatus | None:
        status = handle.poll()
        if status is None:
            return None
        state = read_state(handle.attempt_dir)
        job_state = state.get("state")
        if isinstance(job_state, str):
            uid = state.get("cancelled_by")
            if job_state == "CANCELLED" and isinstance(uid, int):
                job_state = f"CANCELLED by {uid}"
            if job_state == CANNOT_START:
                job_state = f"{CANNOT_START}: {state.get('why') or 'no reason given'}"
            return replace(status, scheduler_state=job_state)
        return status

    def ranks(self, handle: Handle) -> list[RankProcess]:
        return []  # the follower is not the training: its processes are on the job's nodes

    def _cancel(self, handle: Handle) -> None:
        job = self.job_of(handle)
        if job is None:
            return
        with contextlib.suppress(LaunchError):
            info = self.ctl.job(job)
            if info is not None and info.active:
                self.ctl.cancel(job)

    def kill(self, handle: Handle, spare_launcher: bool = False) -> None:
        self._cancel(handle)
        process.kill_all(handle, spare_launcher)

    def sweep(self, handle: Handle) -> list[int]:
        self._cancel(handle)
        return process.sweep(handle)
