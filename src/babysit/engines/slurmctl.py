"""Slurm's own commands, behind one seam: run them with a time limit, parse what they print.

    ctl = SlurmCtl()                                  # SlurmCtl(run=fake) in tests
    job_id = ctl.submit(["--nodes=2", "job.sbatch"])  # sbatch --parsable; LaunchError on refusal
    info = ctl.job(job_id)                            # scontrol show job -o -> JobInfo | None
    ctl.queue()                                       # squeue --json -> [JobInfo, ...]
    ctl.cancel(job_id, signal="TERM")                 # scancel --full --signal=TERM
    ctl.requeue(job_id)                               # scontrol requeue
    scheduler_verdict(info.state)                     # -> ("preemption", "hit its time limit")

Every command runs in a session of its own and is killed when it overruns its time (a wedged
slurmctld must not hold babysit). A missing binary or a refusal is a LaunchError that quotes
Slurm's own words; a job that Slurm no longer knows (gone from squeue after MinJobAge) is None,
never an error: the caller says what that means. No accounting database is needed: sacct is
not used (most small clusters, and the tests' local one, have none).

Slurm's states, as scontrol and squeue print them: PENDING, RUNNING, SUSPENDED, COMPLETING,
CONFIGURING, REQUEUED..., and the ends COMPLETED, FAILED, CANCELLED (sacct: "CANCELLED by
UID"), TIMEOUT, NODE_FAIL, PREEMPTED, OUT_OF_MEMORY, BOOT_FAIL, DEADLINE.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from babysit.engines.hostlist import expand
from babysit.errors import LaunchError

TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Completed:
    """What one command gave (returncode None: killed at its time limit)."""

    returncode: int | None
    stdout: str
    stderr: str


Runner = Callable[[Sequence[str], float, Mapping[str, str] | None], Completed]

ACTIVE = frozenset(
    {
        "PENDING",
        "RUNNING",
        "SUSPENDED",
        "COMPLETING",
        "CONFIGURING",
        "REQUEUED",
        "REQUEUE_FED",
        "REQUEUE_HOLD",
        "RESIZING",
        "SIGNALING",
        "STAGE_OUT",
        "RESV_DEL_HOLD",
        "SPECIAL_EXIT",
        "STOPPED",
    }
)
# A scheduler's verdict on an ended job: the failure category and the words. Time limits and
# preemptions are "preemption": resumed without spending the failure budget
# (policy/restart.py NOT_CHARGED).
VERDICTS: dict[str, tuple[str, str]] = {
    "TIMEOUT": ("preemption", "Slurm ended the job at its time limit (TIMEOUT)"),
    "DEADLINE": ("preemption", "Slurm ended the job at its deadline (DEADLINE)"),
    "PREEMPTED": ("preemption", "Slurm preempted the job (PREEMPTED)"),
    "NODE_FAIL": ("preemption", "Slurm lost a node of the job (NODE_FAIL)"),
    "BOOT_FAIL": ("preemption", "a node of the job failed to boot (BOOT_FAIL)"),
    "OUT_OF_MEMORY": ("host_oom", "the job went over its memory limit (OUT_OF_MEMORY)"),
    "CANCELLED": ("preemption", "the job was cancelled (scancel)"),
}
# Pending reasons that no wait will cure: the job cannot start as asked.
NEVER_STARTS = {
    "PartitionNodeLimit": "it asks for more nodes than the partition has (or allows)",
    "PartitionTimeLimit": "it asks for more time than the partition allows",
    "PartitionDown": "its partition is down",
    "PartitionInactive": "its partition is inactive",
    "InvalidAccount": "its account is invalid",
    "InvalidQOS": "its QOS is invalid",
    "BadConstraints": "its constraints cannot be met by any node",
    "QOSMaxNodePerJobLimit": "it asks for more nodes than its QOS allows",
    "AssocMaxNodesPerJobLimit": "it asks for more nodes than its association allows",
    "AssocMaxWallDurationPerJobLimit": "it asks for more time than its association allows",
    "DependencyNeverSatisfied": "its dependency can never be satisfied",
    # Slurm could not start its batch script on the node it picked (slurmd's log says why) and
    # holds it until someone releases it: nothing babysit's waiting can fix.
    "launch failed requeued held": "its launch failed on a node and Slurm holds it (the node's "
    "slurmd log says why; `scontrol release` it once fixed)",
}
# Pending reasons worth telling (a node it needs is drained or down): it may start later.
STUCK = {
    "ReqNodeNotAvail": "a node it needs is drained, down or reserved",
    "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority "
    "partitions": "a node it needs is drained, down or reserved",
    "NodeDown": "a node it needs is down",
    "JobHeldAdmin": "an administrator holds it",
    "JobHeldUser": "it is held (scontrol release it)",
}


@dataclass(frozen=True)
class JobInfo:
    """One job as Slurm describes it."""

    job_id: str
    state: str  # the base state: RUNNING, TIMEOUT, CANCELLED, ... (no "by UID")
    reason: str | None = None  # squeue's Reason: Priority, Resources, PartitionNodeLimit, ...
    nodes: tuple[str, ...] = ()  # expanded from the NodeList
    exit_code: int | None = None
    signal: int | None = None
    requeue: bool = False  # whether the job may be requeued
    restarts: int = 0
    batch_host: str | None = None
    partition: str | None = None
    cancelled_by: int | None = None  # the UID in "CANCELLED by UID", where Slurm says it
    exclude: tuple[str, ...] = ()  # its ExcNodeList (scontrol show job)
    stdout: str | None = None
    stderr: str | None = None

    @property
    def active(self) -> bool:
        return self.state in ACTIVE

    @property
    def pending(self) -> bool:
        return self.state == "PENDING"


def base_state(state: str) -> tuple[str, int | None]:
    """`CANCELLED by 1000` -> ("CANCELLED", 1000); `CANCELLED+` -> ("CANCELLED", None)."""
    text = state.strip().rstrip("+")
    m = re.match(r"^([A-Z_]+)(?:\s+by\s+(\d+))?", text)
    if m is None:
        return text, None
    return m.group(1), int(m.group(2)) if m.group(2) else None


def scheduler_verdict(state: str | None) -> tuple[str, str] | None:
    """(category, words) for a state that is Slurm's own verdict on how the job ended."""
    if state is None:
        return None
    base, uid = base_state(state)
    found = VERDICTS.get(base)
    if found is None:
        return None
    if base == "CANCELLED" and uid is not None:
        return found[0], f"the job was cancelled by UID {uid} (scancel)"
    return found


def pending_problem(reason: str | None) -> tuple[bool, str] | None:
    """(never starts?, why) for a pending job's Reason that is not a plain wait."""
    if not reason:
        return None
    head = reason.split(",")[0].strip().replace("_", " ")
    for key in (head, head.replace(" ", "_")):
        if key in NEVER_STARTS:
            return True, NEVER_STARTS[key]
    for key, why in STUCK.items():
        if reason.startswith(key):
            return False, why
    return None


def _exit(text: str | None) -> tuple[int | None, int | None]:
    """scontrol's `ExitCode=3:0` -> (3, None); `0:9` -> (None, 9)."""
    if not text:
        return None, None
    code, _, sig = text.partition(":")
    try:
        c, s = int(code), int(sig or 0)
    except ValueError:
        return None, None
    return (None, s) if s else (c, None)


_KEY = re.compile(r"(?:^|\s)([A-Za-z][\w/:.\-]*)=")


def parse_scontrol_job(text: str) -> JobInfo | None:
    """One job from `scontrol show job -o ID` (its first line); None when there is none."""
    line = next((ln for ln in text.splitlines() if "JobId=" in ln), None)
    if line is None:
        return None
    keys = list(_KEY.finditer(line))
    fields: dict[str, str] = {}
    for i, m in enumerate(keys):
        end = keys[i + 1].start() if i + 1 < len(keys) else len(line)
        fields.setdefault(m.group(1), line[m.end() : end].strip())
    state, uid = base_state(fields.get("JobState", "UNKNOWN"))
    code, sig = _exit(fields.get("ExitCode"))
    try:
        nodes = tuple(expand(fields.get("NodeList", "")))
    except ValueError:
        nodes = ()
    reason = fields.get("Reason")
    try:
        exclude = tuple(expand(fields.get("ExcNodeList", "")))
    except ValueError:
        exclude = ()
    return JobInfo(
        job_id=fields.get("JobId", ""),
        state=state,
        reason=None if reason in (None, "None", "(null)") else reason,
        nodes=nodes,
        exit_code=code,
        signal=sig,
        requeue=fields.get("Requeue") == "1",
        restarts=int(fields.get("Restarts", "0") or 0),
        batch_host=_value(fields.get("BatchHost")),
        partition=_value(fields.get("Partition")),
        cancelled_by=uid,
        exclude=exclude,
        stdout=_value(fields.get("StdOut")),
        stderr=_value(fields.get("StdErr")),
    )


def _value(text: str | None) -> str | None:
    return None if text in (None, "", "(null)", "None") else text


def _json_number(value: object) -> int | None:
    """squeue --json numbers: plain, or {"set": true, "number": 3} in newer Slurm."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, dict) and value.get("set", True) and isinstance(value.get("number"), int):
        return int(value["number"])
    return None


def _json_exit(value: object) -> tuple[int | None, int | None]:
    """squeue --json's exit_code: a wait status in 22.05 (768 is exit 3, 9 is SIGKILL); a
    {"return_code", "signal"} object in newer Slurm."""
    if isinstance(value, dict):
        sig = value.get("signal")
        signo = _json_number(sig.get("id") if isinstance(sig, dict) else sig)
        if signo:
            return None, signo
        return _json_number(value.get("return_code")), None
    raw = _json_number(value)
    if raw is None:
        return None, None
    return (None, raw & 0x7F) if raw & 0x7F else (raw >> 8, None)


def parse_squeue_json(text: str) -> list[JobInfo]:
    """Every job in `squeue --json` (Slurm 22.05's v0.0.38, and the newer shapes)."""
    try:
        doc = json.loads(text)
    except ValueError as exc:
        head = " ".join(text.split())[:120]
        raise LaunchError(
            f"squeue --json printed something that is not JSON ({exc}; it began: {head!r}). "
            "Is squeue built with JSON support (Slurm 20.11+ with its data_parser/openapi "
            "plugins)? Run `squeue --json --me` by hand to see what it says."
        ) from exc
    jobs = doc.get("jobs") if isinstance(doc, dict) else None
    out: list[JobInfo] = []
    for j in jobs if isinstance(jobs, list) else []:
        if not isinstance(j, dict):
            continue
        raw_state = j.get("job_state", "UNKNOWN")
        if isinstance(raw_state, list):  # Slurm >= 23.02: a list of flags
            raw_state = raw_state[0] if raw_state else "UNKNOWN"
        state, uid = base_state(str(raw_state))
        code, sig = _json_exit(j.get("exit_code"))
        try:
            nodes = tuple(expand(str(j.get("nodes") or "")))
        except ValueError:
            nodes = ()
        reason = j.get("state_reason")
        out.append(
            JobInfo(
                job_id=str(j.get("job_id", "")),
                state=state,
                reason=None if reason in (None, "None", "") else str(reason),
                nodes=nodes,
                exit_code=code,
                signal=sig,
                requeue=bool(j.get("requeue")),
                restarts=_json_number(j.get("restart_cnt")) or 0,
                batch_host=_value(str(j.get("batch_host") or "")),
                partition=_value(str(j.get("partition") or "")),
                cancelled_by=uid,
                stdout=_value(str(j.get("standard_output") or "")),
                stderr=_value(str(j.get("standard_error") or "")),
            )
        )
    return out


@contextlib.contextmanager
def shielded_from_term() -> Iterator[None]:
    """SIGTERM blocked in this thread, and so in the commands it starts, while the block runs.

    Slurm's requeue signals every process of the job (SIGTERM, then SIGKILL after KillWait),
    the scontrol calls that finish the requeue (set the excluded nodes, release the job)
    included: killed, they leave the job held for good. A blocked SIGTERM stays pending in
    them until they exit (milliseconds) and in babysit until the block ends, when its own
    handler runs as ever."""
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - not on Linux
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def run_command(
    argv: Sequence[str], timeout_s: float, env: Mapping[str, str] | None = None
) -> Completed:
    """The default runner: in a session of its own, killed with it at timeout_s."""
    try:
        proc = subprocess.Popen(
            list(argv),
            env=None if env is None else dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except FileNotFoundError as exc:
        raise LaunchError(
            f"{argv[0]} is not installed or not on PATH: this needs Slurm's client commands "
            "(sbatch, srun, squeue, scontrol, scancel) where babysit runs"
        ) from exc
    except OSError as exc:
        raise LaunchError(f"cannot run {argv[0]}: {exc.strerror or exc}") from exc
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, 9)
        out, err = proc.communicate()
        return Completed(None, out.decode(errors="replace"), err.decode(errors="replace"))
    return Completed(proc.returncode, out.decode(errors="replace"), err.decode(errors="replace"))


class SlurmCtl:
    """Slurm's client commands with time limits (`run` is the seam: a fake in unit tests)."""

    def __init__(self, run: Runner = run_command, timeout_s: float = TIMEOUT_S) -> None:
        self._run = run
        self.timeout_s = timeout_s

    def _call(
        self, argv: list[str], what: str, env: Mapping[str, str] | None = None
    ) -> Completed:
        res = self._run(argv, self.timeout_s, env)
        if res.returncode is None:
            raise LaunchError(
                f"{what}: `{' '.join(argv[:3])} ...` did not answer within "
                f"{self.timeout_s:g}s (is slurmctld up? `scontrol ping`)"
            )
        return res

    def submit(self, args: Sequence[str], env: Mapping[str, str] | None = None) -> str:
        """sbatch --parsable ARGS (in `env`: what the job's processes inherit); the job id.
        LaunchError with sbatch's own words."""
        res = self._call(["sbatch", "--parsable", *args], "sbatch", env)
        if res.returncode != 0:
            raise LaunchError(f"sbatch refused the job: {_words(res)}")
        job_id = res.stdout.strip().split(";")[0]
        if not job_id.isdigit():
            raise LaunchError(f"sbatch printed no job id: {_words(res)}")
        return job_id

    def job(self, job_id: str) -> JobInfo | None:
        """The job, or None when Slurm no longer knows it (it ended MinJobAge ago)."""
        res = self._call(["scontrol", "show", "job", "-o", job_id], "scontrol show job")
        if res.returncode != 0:
            if "Invalid job id" in res.stderr or "Invalid job id" in res.stdout:
                return None
            raise LaunchError(f"scontrol show job {job_id} failed: {_words(res)}")
        return parse_scontrol_job(res.stdout)

    def queue(self) -> list[JobInfo]:
        """Every job squeue knows (squeue --json; Slurm 22.05 ignores its filters with it)."""
        res = self._call(["squeue", "--json"], "squeue")
        if res.returncode != 0:
            raise LaunchError(f"squeue --json failed: {_words(res)}")
        return parse_squeue_json(res.stdout)

    def cancel(self, job_id: str, signal: str | None = None, full: bool = True) -> bool:
        """scancel the job, or send it `signal` (to the batch shell and every step with `full`,
        to the steps only without). False when it failed (the job is gone)."""
        argv = ["scancel"]
        if signal:
            argv.append(f"--signal={signal}")
        if full:
            argv.append("--full")
        argv.append(job_id)
        return self._call(argv, "scancel").returncode == 0

    def requeue(self, job_id: str, hold: bool = False) -> None:
        """scontrol requeue (requeuehold with `hold`: it waits for `release`)."""
        verb = "requeuehold" if hold else "requeue"
        res = self._call(["scontrol", verb, job_id], f"scontrol {verb}")
        if res.returncode != 0:
            raise LaunchError(f"scontrol {verb} {job_id} failed: {_words(res)}")

    def release(self, job_id: str) -> None:
        res = self._call(["scontrol", "release", job_id], "scontrol release")
        if res.returncode != 0:
            raise LaunchError(f"scontrol release {job_id} failed: {_words(res)}")

    def update_job(self, job_id: str, setting: str) -> None:
        """scontrol update JobId=ID KEY=VALUE (e.g. ExcNodeList=node[2-3])."""
        res = self._call(["scontrol", "update", f"JobId={job_id}", setting], "scontrol update")
        if res.returncode != 0:
            raise LaunchError(f"scontrol update JobId={job_id} {setting} failed: {_words(res)}")

    def drain(self, node: str, reason: str) -> None:
        res = self._call(
            ["scontrol", "update", f"NodeName={node}", "State=DRAIN", f"Reason={reason[:200]}"],
            "scontrol update",
        )
        if res.returncode != 0:
            raise LaunchError(f"cannot drain {node}: {_words(res)}")

    def partition_nodes(self, partition: str | None) -> list[str] | None:
        """The nodes of `partition` (the default one for None); None when there is no such
        partition."""
        argv = ["sinfo", "-h", "-o", "%P %N"]
        res = self._call(argv, "sinfo")
        if res.returncode != 0:
            raise LaunchError(f"sinfo failed: {_words(res)}")
        for line in res.stdout.splitlines():
            name, _, nodes = line.strip().partition(" ")
            default = name.endswith("*")
            name = name.rstrip("*")
            if (partition is None and default) or name == partition:
                try:
                    return expand(nodes)
                except ValueError:
                    return None
        return None


def _words(res: Completed) -> str:
    text = (res.stderr.strip() or res.stdout.strip()).replace("\n", "; ")
    return text or f"exit code {res.returncode}"


def have(binary: str) -> bool:
    return shutil.which(binary) is not None
