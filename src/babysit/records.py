"""The vocabulary every stage speaks: record types, states, categories, exit codes.

    from babysit.records import Progress, RunState, ExitCode

Standard library only, and it imports nothing else of babysit's: sources, parse, detect,
policy, act, store and views all depend on this module and on nothing of each other's.
Records are frozen dataclasses; they carry their time (wall clock, seconds since the epoch)
so that detectors and policies never read a clock themselves. The records of a stalled attempt
(its processes' stacks, babysit's looks at them, what two looks say) are babysit.looks'.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum, IntEnum
from typing import Any, NamedTuple


class ExitCode(IntEnum):
    """How `babysit run` ended; documented in the README, stable for scripts and requeue logic."""

    OK = 0  # the command finished successfully
    INTERNAL = 1  # a bug in babysit (a traceback is printed)
    USAGE = 2  # bad flags, bad config, command not found, home not writable
    NEEDS_HUMAN = 3  # gave up: a human must fix code, config or data; do not requeue
    BUDGET_EXHAUSTED = 4  # gave up after the restart budget on transient failures; requeue may help
    STOPPED = 5  # stopped by the operator (SIGINT/SIGTERM to babysit, e.g. Ctrl-C or scancel)


class Category(str, Enum):
    """Failure categories shared by triage, policy, logbook and reports (see DESIGN.md)."""

    NCCL_TIMEOUT = "nccl_timeout"
    NCCL_ERROR = "nccl_error"
    CUDA_OOM = "cuda_oom"
    GPU_HARDWARE = "gpu_hardware"
    CUDA_ERROR_OTHER = "cuda_error_other"
    HOST_OOM = "host_oom"
    SEGFAULT = "segfault"
    FILESYSTEM_IO = "filesystem_io"
    NETWORK = "network"
    NUMERICAL = "numerical"
    USER_CODE = "user_code"
    PREEMPTION = "preemption"
    HANG = "hang"
    DATA = "data"
    LOSS_SPIKE = "loss_spike"
    THROUGHPUT_DROP = "throughput_drop"
    UNKNOWN = "unknown"


class RunState(str, Enum):
    """Lifecycle of a run (all its attempts), as stored and shown by `babysit status`.

        STARTING -> RUNNING                      first attempt launched (or re-attached)
        RUNNING  -> BACKOFF                      attempt ended, policy said restart
        BACKOFF  -> RUNNING                      next attempt launched
        RUNNING  -> SUCCEEDED                    attempt exited 0
        RUNNING  -> FAILED                       policy gave up (needs a human, or budget spent)
        BACKOFF  -> FAILED                       launch failed while restarting
        STARTING|RUNNING|BACKOFF -> STOPPING     operator asked babysit to stop
        STOPPING -> STOPPED                      every process of the attempt is gone
        STARTING -> FAILED                       the first launch failed
        any      -> STARTING                     a babysit starts (or starts again) on the run
    A run whose babysit was killed stays RUNNING in the store; `status` says the supervisor is
    gone, and the next `babysit run` with the same name re-attaches (-> STARTING -> RUNNING).
    """

    STARTING = "starting"
    RUNNING = "running"
    BACKOFF = "backoff"
    STOPPING = "stopping"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    STOPPED = "stopped"

    @property
    def final(self) -> bool:
        return self in (RunState.SUCCEEDED, RunState.FAILED, RunState.STOPPED)


RUN_TRANSITIONS: Mapping[RunState, frozenset[RunState]] = {
    RunState.STARTING: frozenset(
        {RunState.STARTING, RunState.RUNNING, RunState.STOPPING, RunState.FAILED}
    ),
    RunState.RUNNING: frozenset(
        {
            RunState.STARTING,
            RunState.RUNNING,
            RunState.BACKOFF,
            RunState.SUCCEEDED,
            RunState.FAILED,
            RunState.STOPPING,
        }
    ),
    RunState.BACKOFF: frozenset(
        {RunState.STARTING, RunState.RUNNING, RunState.STOPPING, RunState.FAILED}
    ),
    # A babysit killed mid-stop and started again (a requeue) starts over: -> STARTING.
    RunState.STOPPING: frozenset({RunState.STARTING, RunState.STOPPED}),
    # A finished run may be started again under the same name (a requeue): it starts over.
    RunState.SUCCEEDED: frozenset({RunState.STARTING}),
    RunState.FAILED: frozenset({RunState.STARTING}),
    RunState.STOPPED: frozenset({RunState.STARTING}),
}


def can_transition(old: RunState, new: RunState) -> bool:
    return new in RUN_TRANSITIONS[old]


class Outcome(str, Enum):
    """How one attempt ended."""

    RUNNING = "running"
    SUCCEEDED = "succeeded"  # exit code 0
    FAILED = "failed"  # non-zero exit code
    # died of a signal (the OOM killer, kill -9, ...), or babysit ended it (a hang, a rollback)
    KILLED = "killed"
    STOPPED = "stopped"  # babysit stopped it on the operator's request
    LOST = "lost"  # gone, and nothing says how (its launcher was killed too)


class OutputLine(NamedTuple):
    """One line of the run's output, as babysit read it from the attempt's log file.

    A NamedTuple rather than a frozen dataclass: one is made for every line of every rank, and
    it is four times cheaper to build."""

    stream: str  # "stdout" or "stderr"
    number: int  # 1-based line number within that stream of that attempt
    text: str  # decoded (invalid UTF-8 replaced), without the line ending, maybe truncated
    ts: float
    truncated: bool = False


@dataclass(frozen=True)
class Progress:
    """The step counter, as read from an output line."""

    step: int
    ts: float
    stream: str = "stdout"
    line: int = 0


@dataclass(frozen=True)
class Metric:
    """The metrics one output line (or one client call) reported, at one step."""

    step: int | None  # None when the line carries metrics but no step counter
    values: Mapping[str, float]  # name -> value; NaN and +-inf are kept as such
    ts: float
    source: str  # the format that matched: "nanogpt", "hf", "megatron", "client", ...
    rank: int | None = None  # from a launcher prefix ([rank3]:, srun's `3: `, mpirun's [1,3])
    stream: str = "stdout"
    line: int = 0


@dataclass(frozen=True)
class Activity:
    """A sign of life that is not a step: a checkpoint save or an eval under way, a write in the
    checkpoint directory. While one is recent, a hang needs the longer pause allowance."""

    kind: str  # "checkpoint" | "eval" | "checkpoint_write" | "checkpoint_saved"
    ts: float
    text: str = ""
    line: int = 0


class IncidentKind(str, Enum):
    LOSS_SPIKE = "loss_spike"
    GRAD_NORM_SPIKE = "grad_norm_spike"
    NONFINITE = "nonfinite"
    LOSS_SCALE_COLLAPSE = "loss_scale_collapse"
    THROUGHPUT_DROP = "throughput_drop"
    ENTROPY_COLLAPSE = "entropy_collapse"
    KL_BLOWUP = "kl_blowup"
    NO_LEARNING_SIGNAL = "no_learning_signal"
    HANG = "hang"
    LOSS_DIVERGED = "loss_diverged"  # a loss spike that did not settle back to its baseline
    GPU_THROTTLE = "gpu_throttle"  # thermal or power throttling (telemetry)
    GPU_ECC = "gpu_ecc"  # new ECC errors, remapped rows or retired pages (telemetry)
    SLOW_FILESYSTEM = "slow_filesystem"  # write+fsync latency far above its baseline (telemetry)


INCIDENT_CATEGORY: Mapping[IncidentKind, Category] = {
    IncidentKind.LOSS_SPIKE: Category.LOSS_SPIKE,
    IncidentKind.GRAD_NORM_SPIKE: Category.LOSS_SPIKE,
    IncidentKind.NONFINITE: Category.NUMERICAL,
    IncidentKind.LOSS_SCALE_COLLAPSE: Category.NUMERICAL,
    IncidentKind.THROUGHPUT_DROP: Category.THROUGHPUT_DROP,
    IncidentKind.ENTROPY_COLLAPSE: Category.NUMERICAL,
    IncidentKind.KL_BLOWUP: Category.NUMERICAL,
    IncidentKind.NO_LEARNING_SIGNAL: Category.NUMERICAL,
    IncidentKind.HANG: Category.HANG,
    IncidentKind.LOSS_DIVERGED: Category.LOSS_SPIKE,
    IncidentKind.GPU_THROTTLE: Category.GPU_HARDWARE,
    IncidentKind.GPU_ECC: Category.GPU_HARDWARE,
    IncidentKind.SLOW_FILESYSTEM: Category.FILESYSTEM_IO,
}


@dataclass(frozen=True)
class Incident:
    """Something wrong with the run's vital signs, with the evidence that shows it."""

    kind: IncidentKind
    message: str  # one line in plain words
    ts: float
    step: int | None = None
    metric: str | None = None
    value: float | None = None
    baseline: float | None = None
    line: int | None = None
    window: tuple[tuple[int | None, float], ...] = ()  # (step, value) around the incident

    @property
    def category(self) -> Category:
        return INCIDENT_CATEGORY[self.kind]


@dataclass(frozen=True)
class PythonError:
    """The last line of a Python traceback: `ModuleNotFoundError: No module named 'x'`."""

    exc_type: str  # unqualified class name, e.g. "ModuleNotFoundError"
    message: str
    text: str  # the whole line as printed
    ts: float
    stream: str = "stderr"
    line: int = 0
    from_traceback: bool = False  # the line that ends a traceback (not a look-alike log line)


@dataclass(frozen=True)
class ExitStatus:
    """How the training command's process ended (exactly one of exit_code and signal is set)."""

    exit_code: int | None
    signal: int | None
    ended: float
    signals_received: tuple[int, ...] = ()  # stop signals the launcher saw before the end
    scheduler_state: str | None = None  # a scheduler's own verdict (NODE_FAIL, TIMEOUT, ...)


@dataclass(frozen=True)
class Checkpoint:
    """A checkpoint found on disk, with what babysit could tell about whether it is complete."""

    path: str
    step: int | None  # from the name; None when the name has no number
    mtime: float
    size: int
    complete: bool
    problem: str | None = None  # why it is not complete (or not trusted)


# Whom triage blames: the kind of thing to suspect, then where (any of host, rank, GPU).
SUSPECT_KINDS = (
    "node",
    "network",
    "filesystem",
    "code",
    "data",
    "config",
    "scheduler",
    "numerics",
    "unknown",
)


@dataclass(frozen=True)
class Suspect:
    """What to suspect for a failure: `kind` is one of SUSPECT_KINDS; `gpu` is a local index
    ("3") or a PCI bus id ("0000:3b:00") as the log names it."""

    kind: str = "unknown"
    host: str | None = None
    rank: int | None = None
    gpu: str | None = None


@dataclass(frozen=True)
class LogLine:
    """One line of a log quoted as evidence: the file, its 1-based line number, the text."""

    file: str
    line: int
    text: str


@dataclass(frozen=True)
class Consequence:
    """Follow-on errors of the root cause, grouped by what they say (e.g. the NCCL watchdog
    timeouts of every other rank after one rank died)."""

    category: Category
    summary: str
    count: int
    ranks: tuple[int, ...]
    hosts: tuple[str, ...]
    first: LogLine


@dataclass(frozen=True)
class Diagnosis:
    """What triage made of a run's logs: the root cause, whom to blame, what to do."""

    category: Category
    transient: bool | None  # True: a restart is a sane response; False: a human must act first
    suspect: Suspect
    summary: str  # one line in plain words
    action: str  # what to do next
    evidence: tuple[LogLine, ...] = ()
    consequences: tuple[Consequence, ...] = ()
    fingerprint: str | None = None  # stable id of the failure's signature
    confidence: float = 0.0  # 0..1
    rule: str | None = None  # the knowledge-base rule that named the root cause


@dataclass(frozen=True)
class Verdict:
    """Why an attempt ended, fused from triage of its logs and its exit status."""

    category: Category
    transient: bool | None  # True: a restart is a sane response; False: a human must act first
    summary: str  # one line in plain words
    fingerprint: str | None = None  # stable id of this failure's signature, None if no error seen
    evidence: tuple[str, ...] = ()
    diagnosis: Diagnosis | None = None  # the triage behind it, when the logs named a cause


@dataclass(frozen=True)
class AttemptRecord:
    """One attempt as the policy sees it in the run's history."""

    number: int
    started: float
    ended: float | None = None
    outcome: Outcome = Outcome.RUNNING
    exit_code: int | None = None
    signal: int | None = None
    first_step: int | None = None
    last_step: int | None = None
    category: Category | None = None
    transient: bool | None = None
    fingerprint: str | None = None
    summary: str | None = None
    resume_step: int | None = None  # the step of the checkpoint it started from (None: scratch)
    suspect_host: str | None = None  # the node triage or the stacks blamed, if any
    anomaly_step: int | None = None  # the NaN or unsettled spike it was rolled back for
    anomaly_kind: str | None = None  # that incident's kind (nonfinite, loss_diverged)

    @property
    def made_progress(self) -> bool:
        return self.last_step is not None and (
            self.first_step is None or self.last_step > self.first_step
        )


class DecisionKind(str, Enum):
    RESTART = "restart"  # start the command again (from the newest valid checkpoint)
    ROLLBACK = "rollback"  # restart from a checkpoint before an anomaly, skipping its data
    SUCCEED = "succeed"
    GIVE_UP_NEEDS_HUMAN = "give_up_needs_human"
    GIVE_UP_BUDGET = "give_up_budget"
    KEEP_WATCHING = "keep_watching"  # an incident worth the logbook, not an action


@dataclass(frozen=True)
class Decision:
    kind: DecisionKind
    reason: str  # plain words, written to the logbook
    delay_s: float = 0.0
    ban: tuple[str, ...] = ()  # hosts to ban before the next attempt
    before_step: int | None = None  # ROLLBACK: resume from the newest checkpoint at or before
    skip_steps: tuple[tuple[int, int], ...] = ()  # ROLLBACK: step windows whose data to skip
    lr_scale: float | None = None  # ROLLBACK: the learning-rate scale handed to the script
    counts: bool = True  # False: preemption or time limit, not charged to any budget


# The health checks whose failure condemns the node itself (its GPUs, its arithmetic), not its
# surroundings (a full disk, a slow mount): a preflight that fails one of them bans the node.
NODE_CHECKS = frozenset({"gpu", "matmul"})
CHECK_ERROR = "check_error"  # in a CheckResult's details: the check itself broke, not the node


class CheckStatus(str, Enum):
    PASS = "pass"
    WARN = "warn"  # works, but worth a look (a GPU at 86 C, 5 GiB free for checkpoints)
    FAIL = "fail"  # do not trust this node with the run
    SKIP = "skip"  # could not be checked here (no GPU, no nvidia-ml-py, no torch or numpy)


@dataclass(frozen=True)
class CheckResult:
    """One health check of `babysit doctor` or of a preflight."""

    name: str  # "gpu", "disk", "shm", "fs_latency", "memory", "matmul"
    status: CheckStatus
    summary: str  # one line in plain words
    target: str = ""  # what was checked: "GPU 3", "/data/ckpt", ...
    elapsed_s: float = 0.0
    details: Mapping[str, Any] = field(default_factory=dict)  # JSON-able figures


@dataclass(frozen=True)
class Ban:
    """A node babysit (or the operator) stopped trusting."""

    host: str
    reason: str
    since: float
    expires: float | None  # None: until unbanned by hand
    probation_s: float  # after it expires: one more failure in this long bans it again
    by: str  # "policy" | "operator" | "preflight"
    run: str | None = None


def node_key(host: str) -> str:
    """The name the node registry keeps for a host: lower case, no trailing dot, the short
    name (`GPU-17.cluster.local.` and `gpu-17` are both `gpu-17`); an IP address stays whole
    (`10.0.0.2` is not `10`). Two hosts whose names differ only after the first dot are one
    node to babysit: a home serves one cluster. Engines get their own spelling back from
    whoever knows it (the hostfile, the engine's host name), never this key."""
    name = host.strip().rstrip(".").lower()
    try:
        return str(ipaddress.ip_address(name))
    except ValueError:
        return name.split(".", 1)[0]


class EventKind(str, Enum):
    RUN_STARTED = "run_started"
    ATTEMPT_STARTED = "attempt_started"
    ATTEMPT_ENDED = "attempt_ended"
    REATTACHED = "reattached"
    CHECKPOINT = "checkpoint"
    RESTART_SCHEDULED = "restart_scheduled"
    GAVE_UP = "gave_up"
    SUCCEEDED = "succeeded"
    STOP_REQUESTED = "stop_requested"
    STOPPED = "stopped"
    FORCE_KILLED = "force_killed"
    WARNING = "warning"
    INCIDENT = "incident"
    NOTE = "note"
    ROLLBACK = "rollback"
    STACKS = "stacks"
    HANG_EVIDENCE = "hang_evidence"  # what two looks at a stalled attempt said
    BANNED = "banned"
    UNBANNED = "unbanned"
    PREFLIGHT = "preflight"


@dataclass(frozen=True)
class Event:
    """One logbook entry. `data` holds JSON-able details."""

    run: str
    kind: EventKind
    message: str
    ts: float
    attempt: int | None = None
    data: Mapping[str, Any] = field(default_factory=dict)


class Level(str, Enum):
    """How loud one of babysit's own messages to the operator is."""

    INFO = "info"
    OK = "ok"
    WARN = "warn"
    ERROR = "error"

    def __str__(self) -> str:
        return self.value  # `warn`, as a plain string would print, for say() callbacks


# babysit's own messages to the operator: say(Level.WARN, "...") (views/console.py renders them).
Say = Callable[[Level, str], None]
