"""One typed config tree, validated when built; errors name the key and the unit.

Its sections are the rules the policies and detectors take, not copies of them: [restart] is
policy.restart.RestartPolicy, [budget] policy.restart.BudgetRule, [rollback]
policy.rollback.RollbackRule, [nodes] extends policy.nodes.BanRule, [hang] extends
detect.hang.HangRule and policy.hang.HangAction. A default lives in one place: the rule.

    cfg = load_config(Path("babysit.toml"), {"restart.max_restarts": 5})
    cfg.restart.backoff_s   # -> 10.0

Precedence: flags (the overrides mapping) > babysit.toml > defaults. babysit.toml looks like:

    [run]
    name = "gpt-small"
    home = ".babysit"
    resume_args = "--init_from=resume"
    [restart]
    max_restarts = 10
    backoff_s = 10
    [stop]
    grace_s = 30
    [checkpoint]
    glob = "out/ckpt_*.pt"
    [hang]
    action = "restart"
    [triage]
    rules = "team-rules.toml"
    [budget]             # restarts per failure category within window_s
    gpu_hardware = 3
    [rollback]
    skip_after = 300
    [nodes]
    hostfile = "hosts.txt"
    [health]
    preflight = true
    [straggler]          # detect.straggler.StragglerRule: per-rank step lines
    window_steps = 50
    [alerts]             # babysit.alerts.settings: destinations, cooldown, dead-man, on_event
    notify = ["ntfy://ntfy.sh/my-run", { url = "pagerduty://KEY@TOKEN", min_severity = "page" }]
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re
import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from babysit.alerts.sender import mask_url
from babysit.alerts.settings import AlertRule, destinations
from babysit.detect.hang import HangRule
from babysit.detect.straggler import StragglerRule
from babysit.durations import parse_duration
from babysit.errors import ConfigError
from babysit.policy.compose import Rules
from babysit.policy.hang import HangAction
from babysit.policy.nodes import BanRule
from babysit.policy.restart import BudgetRule, RestartPolicy
from babysit.policy.rollback import RollbackRule
from babysit.redact import redact_tree

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

DEFAULT_CONFIG_FILE = "babysit.toml"


@dataclass(frozen=True)
class RunSection:
    name: str | None = None  # None: derived from the command
    home: str = ".babysit"
    resume_args: str = ""  # appended (shell-split) only to attempts that start from a checkpoint
    echo: bool = True  # copy the run's output to babysit's terminal
    poll_s: float = 0.2  # how often the log files and the child are looked at
    metrics_file: str | None = None  # a JSONL metrics file the run writes, followed as a source
    tensorboard: str | None = None  # a TensorBoard log directory, followed as a source
    total_steps: int = 0  # the steps the run trains for, for `status`'s ETA (0: unknown)


@dataclass(frozen=True)
class StopSection:
    grace_s: float = 30.0  # SIGTERM to the process group, then SIGKILL after this long


@dataclass(frozen=True)
class CheckpointSection:
    glob: str | None = None  # e.g. "out/ckpt_*.pt"; relative to the working directory
    settle_s: float = 2.0  # a file modified more recently than this is still being written
    validate: str = ""  # a command that checks one checkpoint ({checkpoint} = its path); exit 0
    validate_timeout_s: float = 300.0


@dataclass(frozen=True)
class HangSection(HangRule, HangAction):
    """[hang]: when the detector flags a hang (HangRule: mult x p99(step interval) + floor_s, the
    start-up and pause allowances) and when babysit acts on it (HangAction: action,
    kill_after_s)."""


@dataclass(frozen=True)
class TriageSection:
    rules: str | None = None  # the team's own rules file, tried before the shipped knowledge
    kernel_log: bool = True  # read the kernel log (dmesg) after a failed attempt, if allowed


@dataclass(frozen=True)
class NodesSection(BanRule):
    """[nodes]: the ban rule's fields (ban_after, window_s, ban_s, probation_s) and the hosts."""

    hostfile: str | None = None  # the run's hosts, one per line; each attempt gets it minus bans
    min_nodes: int = 0  # hosts the run needs (0: every host of the hostfile)


@dataclass(frozen=True)
class ForensicsSection:
    stacks: bool = True  # dump every process's Python stack before killing a hung attempt
    stacks_budget_s: float = 10.0
    faulthandler: bool = True  # enable faulthandler in the child (a sitecustomize on its path)
    flight_recorder: bool = True  # PyTorch's NCCL flight recorder on, dumps under the attempt


@dataclass(frozen=True)
class HealthSection:
    preflight: bool = False  # run the doctor's checks before each restart; a failure bans
    preflight_budget_s: float = 30.0
    data_dirs: str = ""  # directories the run reads (':'-separated), checked for latency
    telemetry: bool = True  # sample GPU, host and filesystem figures during the run
    telemetry_every_s: float = 5.0
    fs_probe_every_s: float = 30.0


@dataclass(frozen=True)
class Config:
    run: RunSection = field(default_factory=RunSection)
    restart: RestartPolicy = field(default_factory=RestartPolicy)
    stop: StopSection = field(default_factory=StopSection)
    checkpoint: CheckpointSection = field(default_factory=CheckpointSection)
    hang: HangSection = field(default_factory=HangSection)
    triage: TriageSection = field(default_factory=TriageSection)
    budget: BudgetRule = field(default_factory=BudgetRule)
    rollback: RollbackRule = field(default_factory=RollbackRule)
    nodes: NodesSection = field(default_factory=NodesSection)
    forensics: ForensicsSection = field(default_factory=ForensicsSection)
    health: HealthSection = field(default_factory=HealthSection)
    alerts: AlertRule = field(default_factory=AlertRule)
    straggler: StragglerRule = field(default_factory=StragglerRule)  # detect/straggler.py

    @property
    def rules(self) -> Rules:
        """The rules policy/compose.py takes: these sections, as they are."""
        return Rules(self.restart, self.rollback, self.budget, self.hang)


_SECTIONS: dict[str, type[Any]] = {
    "run": RunSection,
    "restart": RestartPolicy,
    "stop": StopSection,
    "checkpoint": CheckpointSection,
    "hang": HangSection,
    "triage": TriageSection,
    "budget": BudgetRule,
    "rollback": RollbackRule,
    "nodes": NodesSection,
    "forensics": ForensicsSection,
    "health": HealthSection,
    "alerts": AlertRule,
    "straggler": StragglerRule,
}

# key -> (minimum, unit) checks; "unit" is how the error message names it.
_MINIMUMS: dict[str, tuple[float, str]] = {
    "run.poll_s": (0.01, "seconds"),
    "run.total_steps": (0, "steps"),
    "restart.max_restarts": (0, "restarts"),
    "restart.backoff_s": (0, "seconds"),
    "restart.backoff_factor": (1, "(a factor)"),
    "restart.backoff_max_s": (0, "seconds"),
    "restart.after_progress_s": (0, "seconds"),
    "restart.jitter": (0, "(a fraction)"),
    "restart.reset_after_s": (0, "seconds"),
    "stop.grace_s": (0, "seconds"),
    "checkpoint.settle_s": (0, "seconds"),
    "hang.mult": (1, "(a factor)"),
    "hang.floor_s": (0, "seconds"),
    "hang.startup_s": (1, "seconds"),
    "hang.pause_s": (1, "seconds"),
    "hang.kill_after_s": (0, "seconds"),
    "hang.look_again_s": (0.1, "seconds"),
    "hang.relook_s": (0.1, "seconds"),
    "hang.busy_limit_s": (0, "seconds"),
    "hang.kill_grace_s": (0, "seconds"),
    "hang.quantile": (0.5, "(a quantile)"),
    "hang.survived": (1, "(a factor)"),
    "hang.window": (1, "step intervals"),
    "hang.min_intervals": (1, "step intervals"),
    "hang.per_read": (1, "step intervals"),
    "restart.storm_attempts": (0, "attempts"),
    "restart.storm_window_s": (0, "seconds"),
    "restart.no_checkpoint_progress": (0, "attempts"),
    "checkpoint.validate_timeout_s": (0.1, "seconds"),
    "budget.window_s": (1, "seconds"),
    "rollback.margin_steps": (0, "steps"),
    "rollback.skip_before": (0, "steps"),
    "rollback.skip_after": (0, "steps"),
    "rollback.lr_scale": (0.0001, "(a factor)"),
    "rollback.max_at_same_place": (1, "anomalies"),
    "nodes.min_nodes": (0, "nodes"),
    "nodes.ban_after": (0, "failures"),
    "nodes.window_s": (1, "seconds"),
    "nodes.ban_s": (0, "seconds"),
    "nodes.probation_s": (0, "seconds"),
    "forensics.stacks_budget_s": (0.5, "seconds"),
    "health.preflight_budget_s": (1, "seconds"),
    "health.telemetry_every_s": (0.5, "seconds"),
    "health.fs_probe_every_s": (1, "seconds"),
    "alerts.cooldown_s": (0, "seconds"),
    "alerts.burst_s": (0, "seconds"),
    "alerts.escalate_after": (0, "occurrences"),
    "alerts.escalate_window_s": (1, "seconds"),
    "alerts.retries": (1, "tries"),
    "alerts.drain_s": (0, "seconds"),
    "alerts.deadman_every_s": (1, "seconds"),
    "alerts.on_event_timeout_s": (0.1, "seconds"),
    "straggler.window_steps": (5, "steps"),
    "straggler.lag": (0.01, "(a fraction of a step)"),
    "straggler.most": (0.01, "(a share)"),
    "straggler.recover": (0, "(a share)"),
    "straggler.ban_window_steps": (5, "steps"),
    "straggler.settle_steps": (1, "steps"),
    "straggler.min_ranks": (2, "ranks"),
    "straggler.min_reports": (2, "reports"),
    "straggler.warmup_steps": (1, "steps"),
}


def _check_value(key: str, value: Any, default: Any) -> Any:
    if key == "alerts.notify":  # URLs, or tables {url, min_severity}
        return destinations(key, value)
    want: type[Any] = type(default) if default is not None else str
    if want is float and key.endswith("_s") and isinstance(value, str):
        value = _duration(key, value)  # "5m", "1h30m": durations as people write them
    if isinstance(value, bool) != (want is bool):
        raise ConfigError(f"{key} must be a {want.__name__}, got {value!r}")
    if want is float and isinstance(value, int):
        value = float(value)
    if not isinstance(value, want):
        raise ConfigError(f"{key} must be a {want.__name__}, got {value!r}")
    if want is float and not math.isfinite(value):
        raise ConfigError(f"{key} must be a finite number, got {value!r}")
    if key in _MINIMUMS:
        low, unit = _MINIMUMS[key]
        if value < low:
            raise ConfigError(f"{key} must be >= {low:g} {unit}, got {value!r}".replace("  ", " "))
    if key == "hang.quantile" and value > 1:
        raise ConfigError(f"hang.quantile must be <= 1 (a quantile), got {value!r}")
    if key == "restart.jitter" and value >= 1:
        raise ConfigError(f"restart.jitter must be < 1 (a fraction), got {value!r}")
    if key == "run.name" and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}", value):
        raise ConfigError(
            f"run.name must be letters, digits, '.', '_' or '-' (at most 100), got {value!r}"
        )
    if key == "hang.action" and value not in ("restart", "alert"):
        raise ConfigError(f"hang.action must be 'restart' or 'alert', got {value!r}")
    if key.startswith("budget.") and key != "budget.window_s" and value < 0:
        raise ConfigError(f"{key} must be >= 0 restarts, got {value!r}")
    if key in ("straggler.most", "straggler.recover") and value >= 1:
        raise ConfigError(f"{key} must be < 1 (a share of the window's reports), got {value!r}")
    if key == "rollback.lr_scale" and value > 1:
        raise ConfigError(f"rollback.lr_scale must be <= 1 (a factor), got {value!r}")
    if key == "checkpoint.validate" and value and not value.strip():
        raise ConfigError("checkpoint.validate is blank: give a command, or leave it unset")
    if key == "alerts.deadman_url" and value and not value.startswith(("http://", "https://")):
        raise ConfigError("alerts.deadman_url must be an http:// or https:// URL (it is pinged "
                          "with a GET)")
    if key == "alerts.on_event" and value and not value.strip():
        raise ConfigError("alerts.on_event is blank: give a command, or leave it unset")
    if key in ("run.resume_args", "checkpoint.validate"):
        try:
            shlex.split(value)
        except ValueError as exc:
            raise ConfigError(f"{key} is not valid shell words: {exc}") from exc
    return value


def _duration(key: str, value: str) -> float:
    try:
        return parse_duration(value)
    except ValueError as exc:
        raise ConfigError(f"{key}: {exc}") from exc


_NO_BUDGET = {
    "cuda_oom": "a CUDA OOM never restarts (the same batch runs out of memory again): make "
    "the batch or the model smaller",
    "user_code": "a bug in the code never restarts: fix it first",
    "data": "bad data never restarts: fix or skip it first",
    "preemption": "preemptions and time limits are never charged to a budget",
}


def _suggest(word: str, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def build_config(values: Mapping[str, Any], source: str = "config") -> Config:
    """Validate dotted `section.key` values over the defaults. Raises ConfigError."""
    sections: dict[str, dict[str, Any]] = {name: {} for name in _SECTIONS}
    for dotted, value in values.items():
        if value is None:
            continue
        section, _, key = dotted.partition(".")
        if section not in _SECTIONS:
            raise ConfigError(
                f"{source}: unknown section [{section}]{_suggest(section, list(_SECTIONS))}"
            )
        defaults = {f.name: f.default for f in dataclasses.fields(_SECTIONS[section])}
        if section == "budget" and key in _NO_BUDGET:
            raise ConfigError(f"{source}: {dotted}: {_NO_BUDGET[key]}")
        if key not in defaults:
            raise ConfigError(
                f"{source}: unknown key {dotted!r}{_suggest(key, list(defaults))}; "
                f"known keys of [{section}]: {', '.join(defaults)}"
            )
        sections[section][key] = _check_value(dotted, value, defaults[key])
    built = {name: cls(**sections[name]) for name, cls in _SECTIONS.items()}
    if built["restart"].backoff_max_s < built["restart"].backoff_s:
        raise ConfigError(
            "restart.backoff_max_s must be >= restart.backoff_s (seconds), got "
            f"{built['restart'].backoff_max_s:g} < {built['restart'].backoff_s:g}"
        )
    st = built["straggler"]
    if st.ban_window_steps < st.window_steps or st.recover > st.most:
        raise ConfigError(
            "straggler.ban_window_steps must be >= straggler.window_steps (steps) and "
            "straggler.recover <= straggler.most (shares), got "
            f"{st.ban_window_steps} < {st.window_steps} or {st.recover:g} > {st.most:g}"
        )
    return Config(**built)


def config_document(cfg: Config) -> dict[str, Any]:
    """The config as the store keeps it: redacted, and the alert URLs masked (scheme://host):
    a webhook's token is in its URL."""
    doc: dict[str, Any] = redact_tree(dataclasses.asdict(cfg))
    alerts = doc["alerts"]
    alerts["notify"] = [
        {"url": mask_url(d.url), "min_severity": d.min_severity.value} for d in cfg.alerts.notify
    ]
    if cfg.alerts.deadman_url:
        alerts["deadman_url"] = mask_url(cfg.alerts.deadman_url)
    return doc


def read_toml(path: Path) -> dict[str, Any]:
    """Flatten babysit.toml into dotted keys. Raises ConfigError on unreadable or bad TOML."""
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError as exc:
        raise ConfigError(f"config file {path} does not exist") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from exc
    flat: dict[str, Any] = {}
    for section, table in data.items():
        if not isinstance(table, dict):
            raise ConfigError(
                f"{path}: {section!r} must be a [section] table{_suggest(section, list(_SECTIONS))}"
            )
        for key, value in table.items():
            flat[f"{section}.{key}"] = value
    return flat


def load_config(path: Path | None, overrides: Mapping[str, Any]) -> Config:
    """babysit.toml (when given or present in the working directory) plus flag overrides."""
    values: dict[str, Any] = {}
    source = "flags"
    if path is None and Path(DEFAULT_CONFIG_FILE).is_file():
        path = Path(DEFAULT_CONFIG_FILE)
    if path is not None:
        values.update(read_toml(path))
        source = str(path)
    build_config(values, source)  # name the file in errors that come from it
    values.update({k: v for k, v in overrides.items() if v is not None})
    return build_config(values, "flags")


_INTERPRETERS = re.compile(
    r"^(python[\d.]*|pypy[\d.]*|torchrun|accelerate|deepspeed|srun|mpirun|mpiexec|uv|"
    r"poetry|bash|sh|env|nohup|time|exec|composer|lightning)$"
)


def derive_run_name(command: Sequence[str]) -> str:
    """A run name from the command: `python train.py` -> `train`, `torchrun ... pretrain.py` ->
    `pretrain`, `./run_llama.sh` -> `run_llama`, else the program's name."""
    for arg in command:
        base = Path(arg).name
        if base.endswith((".py", ".sh")) and not arg.startswith("-"):
            return _slug(Path(base).stem)
    for prev, arg in zip(["", *command], command, strict=False):
        base = Path(arg).name
        if prev == "-c":
            continue  # `python -c CODE`: the code is no name
        if prev == "-m":
            return _slug(arg)  # `python -m pkg.train`
        if arg.startswith("-") or "=" in arg or _INTERPRETERS.match(base):
            continue
        return _slug(base)
    return _slug(Path(command[0]).name) if command else "run"


def _slug(text: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-._")[:100]
    return slug or "run"
