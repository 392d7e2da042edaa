"""Before an attempt starts: check the command and the checkpoint glob, build argv and env.

check_command(["python", "train.py"], cwd)           # raises CommandNotFound
check_checkpoint_glob("out/ckpt_*.pt", command, "", cwd)   # raises ConfigError
build_argv(command, "--init_from=resume", ckpt)      # {checkpoint} substituted
attempt_env(os.environ, run="train", attempt=2, home=home, ckpt=ckpt)
recovery_env(env, skip_steps=((150, 350),), lr_scale=0.5, hostfile=path, hosts=[...], banned=[...])
read_hostfile(Path("hosts.txt"))                   # -> [HostLine("gpu-1", "gpu-1 slots=8"), ...]
write_hostfile(path, lines, banned={"gpu-17"})     # the attempt's copy, banned hosts left out
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from babysit.errors import CommandNotFound, ConfigError
from babysit.policy.rollback import format_windows
from babysit.records import Checkpoint
from babysit.sources.checkpoints import CKPT_PLACEHOLDER, glob_fixed_parts
from babysit.sources.placeholder import fill
from babysit.store.home import user_umask

PLACEHOLDER = CKPT_PLACEHOLDER  # "{checkpoint}"
CHILD_UMASK_VAR = "BABYSIT_CHILD_UMASK"  # read (and removed) by engines/launcher.py
HOSTFILE = "{hostfile}"


def resolve_path(path: str, cwd: Path) -> Path:
    """A path from the config or the flags: `~` expanded, relative to the run's cwd."""
    p = Path(os.path.expanduser(path))
    return p if p.is_absolute() else cwd / p


def check_command(command: Sequence[str], cwd: Path) -> None:
    prog = command[0]
    if os.sep in prog:
        path = prog if os.path.isabs(prog) else str(cwd / prog)
        if not os.path.exists(path):
            raise CommandNotFound(f"command not found: {prog} (no such file)")
        if not os.access(path, os.X_OK) or os.path.isdir(path):
            raise CommandNotFound(f"command not executable: {prog} (check its mode: chmod +x)")
    elif shutil.which(prog) is None:
        raise CommandNotFound(
            f"command not found: {prog!r} is not on PATH (activate the environment that "
            "has it, or give its full path)"
        )


def check_checkpoint_glob(
    pattern: str | None, command: Sequence[str], resume_args: str, cwd: Path
) -> None:
    uses_placeholder = any(PLACEHOLDER in a for a in command) or PLACEHOLDER in resume_args
    if uses_placeholder and not pattern:
        raise ConfigError(
            "the command uses {checkpoint} but no checkpoint glob is set: pass "
            "--checkpoint 'out/ckpt_*.pt' (or [checkpoint] glob in babysit.toml)"
        )
    if not pattern:
        return
    fixed = glob_fixed_parts(pattern)
    base = cwd / Path(*fixed) if fixed else cwd
    while not base.exists() and base != base.parent:
        base = base.parent
    if base.is_dir() and not os.access(base, os.R_OK | os.X_OK):
        raise ConfigError(
            f"checkpoint.glob {pattern!r}: cannot read directory {base} (permission denied)"
        )


def build_argv(
    command: Sequence[str],
    resume_args: str,
    ckpt: Checkpoint | None,
    hostfile: Path | None = None,
) -> list[str]:
    """{checkpoint} substituted; an argument holding it is dropped when there is no checkpoint;
    resume_args appended only when there is one. {hostfile}: the attempt's hostfile."""
    if hostfile is not None:
        command = [arg.replace(HOSTFILE, str(hostfile)) for arg in command]
    # Quoted where a word is a shell script (`sh -c '... {checkpoint}'`): a checkpoint's name
    # is never run as a command. Raises LaunchError where it cannot be put there safely.
    filled = fill(command, PLACEHOLDER, ckpt.path) if ckpt is not None else list(command)
    argv = []
    for arg, done in zip(command, filled, strict=True):
        if PLACEHOLDER in arg and ckpt is None:
            continue  # `--resume={checkpoint}` is dropped when there is nothing to resume
        argv.append(done)
    if ckpt is not None and resume_args:
        argv += [a.replace(PLACEHOLDER, ckpt.path) for a in shlex.split(resume_args)]
    return argv


def attempt_env(
    base: Mapping[str, str],
    run: str,
    attempt: int,
    home: Path,
    ckpt: Checkpoint | None,
    metrics_file: Path | None = None,
) -> dict[str, str]:
    env = dict(base)
    if metrics_file is not None:
        env["BABYSIT_METRICS_FILE"] = str(metrics_file.resolve())  # babysit.client writes here
    env.setdefault("PYTHONUNBUFFERED", "1")  # progress lines reach the log file as printed
    env.update(
        {"BABYSIT_RUN": run, "BABYSIT_ATTEMPT": str(attempt), "BABYSIT_HOME": str(home.resolve())}
    )
    env.pop("BABYSIT_RESUME_FROM", None)
    if ckpt is not None:
        env["BABYSIT_RESUME_FROM"] = ckpt.path
    env.pop(CHILD_UMASK_VAR, None)
    found = user_umask()
    if found is not None:
        # babysit runs with a private umask (store/home.py); the training gets the user's back.
        env[CHILD_UMASK_VAR] = f"{found:03o}"
    return env


def recovery_env(
    env: dict[str, str],
    skip_steps: Sequence[tuple[int, int]] = (),
    lr_scale: float | None = None,
    resume_step: int | None = None,
    hostfile: Path | None = None,
    hosts: Sequence[str] = (),
    banned: Collection[str] = (),
) -> dict[str, str]:
    """What a rollback and the node registry hand the script (it may read them or not):
    BABYSIT_SKIP_STEPS `150-350,900-1100` (inclusive step windows whose data to skip),
    BABYSIT_LR_SCALE, BABYSIT_RESUME_STEP, BABYSIT_HOSTFILE / BABYSIT_HOSTS (the usable hosts)
    and BABYSIT_EXCLUDE_HOSTS (the banned ones, for `srun --exclude`). Values inherited from
    babysit's own environment are dropped: only this attempt's count."""
    for var in (
        "BABYSIT_SKIP_STEPS",
        "BABYSIT_LR_SCALE",
        "BABYSIT_RESUME_STEP",
        "BABYSIT_HOSTFILE",
        "BABYSIT_HOSTS",
        "BABYSIT_EXCLUDE_HOSTS",
    ):
        env.pop(var, None)
    if skip_steps:
        env["BABYSIT_SKIP_STEPS"] = format_windows(skip_steps)
    if lr_scale is not None:
        env["BABYSIT_LR_SCALE"] = f"{lr_scale:g}"
    if resume_step is not None:
        env["BABYSIT_RESUME_STEP"] = str(resume_step)
    if hostfile is not None:
        env["BABYSIT_HOSTFILE"] = str(hostfile.resolve())
        env["BABYSIT_HOSTS"] = ",".join(hosts)
    if banned:
        env["BABYSIT_EXCLUDE_HOSTS"] = ",".join(sorted(banned))
    return env


class HostLine(NamedTuple):
    host: str
    text: str  # the line as written (`gpu-1 slots=8`, `gpu-1:8`), copied to the attempt's file


def read_hostfile(path: Path) -> list[HostLine]:
    """One host per line, as DeepSpeed (`host slots=8`), MPI (`host:8`) or plain lists write
    them; `#` comments and blank lines skipped. Raises ConfigError when unreadable or empty."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ConfigError(
            f"nodes.hostfile {str(path)!r}: cannot read it ({exc.strerror or exc})"
        ) from exc
    out = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        host = line.split()[0].split(":")[0]
        out.append(HostLine(host, line))
    if not out:
        raise ConfigError(f"nodes.hostfile {str(path)!r} lists no hosts")
    return out


def write_hostfile(path: Path, lines: Sequence[HostLine], banned: Collection[str]) -> list[str]:
    """The attempt's hostfile: the run's hostfile without the banned hosts. Returns its hosts."""
    kept = [line for line in lines if line.host not in banned]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{line.text}\n" for line in kept), encoding="utf-8")
    return [line.host for line in kept]
