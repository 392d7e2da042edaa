"""torchrun's command line: recognise it, and rewrite it the way babysit runs it. Pure.

    split = torchrun_split(["torchrun", "--nproc-per-node", "4", "train.py", "--lr", "3e-4"])
    split.options                 # ["--nproc-per-node", "4"]: torchrun's own, before the script
    plan = rewrite(argv, Path("attempt-0001/torchrun"), env)
    plan.argv                     # --max-restarts 0, --log-dir .../torchrun --tee 3 added
    plan.user_max_restarts        # the N the user asked torchrun for (None: not asked)

Recognised: `torchrun ...` (by the executable's name, any path) and `python [opts] -m
torch.distributed.run ...` (also the deprecated `torch.distributed.launch`, which takes the same
options). A wrapper in front (`srun torchrun`, `env X=1 torchrun`, `uv run torchrun`) is not
torchrun itself: that command runs under its own engine.

torchrun's options end at the training script, the first word that is not an option or an
option's value; what follows is the script's own (it may well have a `--log-dir` of its own)
and is never touched. torchrun also reads every option from `PET_<NAME>` in its environment
(torch/distributed/argparse_util.py `env`): `PET_MAX_RESTARTS=3` is a --max-restarts 3.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

MODULES = ("torch.distributed.run", "torch.distributed.launch")
# torchrun's options that take no value (argparse's check_env and store_true actions, torch
# 2.13 run.py, plus launch.py's --use-env); every other option takes one.
FLAGS = frozenset(
    {
        "-h",
        "--help",
        "--standalone",
        "-m",
        "--module",
        "--no-python",
        "--no_python",
        "--run-path",
        "--run_path",
        "--virtual-local-rank",
        "--virtual_local_rank",
        "--use-env",
        "--use_env",
    }
)
MAX_RESTARTS = ("--max-restarts", "--max_restarts")
LOG_DIR = ("--log-dir", "--log_dir")
REDIRECTS = ("-r", "--redirects")
TEE = ("-t", "--tee")
LOGS_SPECS = ("--logs-specs", "--logs_specs")
NNODES = ("--nnodes",)
STANDALONE = ("--standalone",)
SINGLE = (None, "1", "1:1")  # --nnodes values that mean one node
# The per-rank files babysit asks for when the user chose none: both streams of every local
# rank teed (the console keeps every line, now prefixed `[default3]:`), under the attempt.
TEE_ALL = "3"


@dataclass(frozen=True)
class Split:
    """A torchrun command cut in three: how torchrun is started (`torchrun`, `python -m
    torch.distributed.run`), torchrun's options, and the training script with its arguments."""

    launcher: list[str]
    options: list[str]
    script: list[str]

    def value(self, names: Sequence[str]) -> str | None:
        """The last value given to any of `names` (`--opt V`, `--opt=V`, `-rV`), else None."""
        found = None
        for i, (name, value) in enumerate(_options(self.options)):
            if name in names:
                found = value if value is not None else _next(self.options, i)
        return found

    def has(self, names: Sequence[str]) -> bool:
        return any(name in names for name, _ in _options(self.options))


def _options(options: Sequence[str]) -> list[tuple[str, str | None]]:
    """Each option word as (name, attached value): `--a=1` -> ("--a", "1"), `-r3` -> ("-r",
    "3"), `--a` -> ("--a", None); value words as ("", None)."""
    out: list[tuple[str, str | None]] = []
    expect_value = False
    for word in options:
        if expect_value:
            out.append(("", None))
            expect_value = False
            continue
        name, value = _parse(word)
        out.append((name, value))
        expect_value = value is None and name not in FLAGS
    return out


def _next(options: Sequence[str], i: int) -> str | None:
    return options[i + 1] if i + 1 < len(options) else None


def _parse(word: str) -> tuple[str, str | None]:
    if word.startswith("--"):
        name, eq, value = word.partition("=")
        return name, value if eq else None
    if len(word) > 2 and word[1] != "-":  # -r3, -t3 (argparse's attached short values)
        return word[:2], word[2:]
    return word, None


def _launcher_end(argv: Sequence[str]) -> int | None:
    """The index where torchrun's options start, or None when argv is not torchrun."""
    if not argv:
        return None
    exe = os.path.basename(argv[0])
    if exe == "torchrun":
        return 1
    if not exe.startswith("python"):
        return None
    i = 1
    while i < len(argv):  # the interpreter's own options, up to -m
        word = argv[i]
        if word == "-m":
            return i + 2 if i + 1 < len(argv) and argv[i + 1] in MODULES else None
        if word.startswith("-m"):
            return i + 1 if word[2:] in MODULES else None
        if not word.startswith("-") or word in ("-c", "-"):
            return None  # a script, or code: not torchrun
        i += 2 if word in ("-W", "-X", "-Q") else 1
    return None


def torchrun_split(argv: Sequence[str]) -> Split | None:
    """`argv` cut into launcher, torchrun's options and the script; None when it is not a
    torchrun command (or names no training script)."""
    start = _launcher_end(argv)
    if start is None:
        return None
    i = start
    expect_value = False
    while i < len(argv):
        word = argv[i]
        if expect_value:
            expect_value = False
        elif word == "--":
            return Split(list(argv[:start]), list(argv[start:i]), list(argv[i + 1 :]))
        elif word.startswith("-") and word != "-":
            name, value = _parse(word)
            expect_value = value is None and name not in FLAGS
        else:
            return Split(list(argv[:start]), list(argv[start:i]), list(argv[i:]))
        i += 1
    return None


def is_torchrun(argv: Sequence[str]) -> bool:
    """Whether `argv` runs torchrun itself (see the module docstring)."""
    return torchrun_split(argv) is not None


@dataclass(frozen=True)
class Plan:
    """How babysit runs a torchrun command."""

    argv: list[str]
    user_max_restarts: int | None  # > 0: what the user asked torchrun for (set to 0 here)
    log_dir: Path | None  # where torchrun writes its per-rank files (None: a temporary dir)
    added_logs: bool  # babysit added --log-dir and --tee
    single_node: bool  # every rank on this node: --standalone, or --nnodes 1, 1:1 or absent


def rewrite(argv: Sequence[str], log_dir: Path, env: Mapping[str, str]) -> Plan:
    """`argv` as babysit runs it: torchrun's --max-restarts set to 0 (babysit restarts the whole
    command); `--log-dir log_dir --tee 3` added when the user chose no per-rank logs of their
    own (--log-dir, --redirects, --tee, --logs-specs, or their PET_ variables). Idempotent.
    A command that is not torchrun comes back as it was."""
    split = torchrun_split(argv)
    if split is None:
        return Plan(list(argv), None, None, False, True)
    options = list(split.options)
    user = _max_restarts(split.value(MAX_RESTARTS) or env.get("PET_MAX_RESTARTS"))
    if split.has(MAX_RESTARTS):
        options = _set_value(options, MAX_RESTARTS, "0")
    elif user:
        options += [MAX_RESTARTS[0], "0"]  # only the environment asked for it
    chosen = split.has(LOG_DIR + REDIRECTS + TEE + LOGS_SPECS) or any(
        env.get(f"PET_{n}") for n in ("LOG_DIR", "REDIRECTS", "TEE", "LOGS_SPECS")
    )
    added = not chosen
    if added:
        options += [LOG_DIR[0], str(log_dir), TEE[1], TEE_ALL]
        where: Path | None = log_dir
    else:
        given = split.value(LOG_DIR) or env.get("PET_LOG_DIR")
        where = Path(given) if given else None
    return Plan(
        [*split.launcher, *options, *split.script],
        user if user else None,
        where,
        added,
        split.has(STANDALONE) or (split.value(NNODES) or env.get("PET_NNODES")) in SINGLE,
    )


def _max_restarts(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None  # torchrun itself refuses it: its own message says why


def _set_value(options: list[str], names: Sequence[str], value: str) -> list[str]:
    """Every occurrence of `names` given `value`, in the spelling the user wrote."""
    out = list(options)
    for i, (name, attached) in enumerate(_options(options)):
        if name not in names:
            continue
        if attached is not None:
            out[i] = f"{name}={value}" if name.startswith("--") else f"{name}{value}"
        elif i + 1 < len(out):
            out[i + 1] = value
    return out

