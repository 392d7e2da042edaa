"""Before an attempt starts: check the command and the checkpoint glob, build argv and env.

check_command(["python", "train.py"], cwd)           # raises CommandNotFound
check_checkpoint_glob("out/ckpt_*.pt", command, "", cwd)   # raises ConfigError
build_argv(command, "--init_from=resume", ckpt)      # {checkpoint} substituted
attempt_env(os.environ, run="train", attempt=2, home=home, ckpt=ckpt)
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

from babysit.errors import CommandNotFound, ConfigError
from babysit.records import Checkpoint
from babysit.sources.checkpoints import glob_fixed_parts

PLACEHOLDER = "{checkpoint}"


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


def build_argv(command: Sequence[str], resume_args: str, ckpt: Checkpoint | None) -> list[str]:
    """{checkpoint} substituted; an argument holding it is dropped when there is no checkpoint;
    resume_args appended only when there is one."""
    argv = []
    for arg in command:
        if PLACEHOLDER in arg:
            if ckpt is None:
                continue  # `--resume={checkpoint}` is dropped when there is nothing to resume
            arg = arg.replace(PLACEHOLDER, ckpt.path)
        argv.append(arg)
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
    return env
