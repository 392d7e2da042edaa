"""srun's command line: babysit's flags added to the user's, srun's own reports read back. Pure.

    srun_argv(["srun", "-N2", "python", "t.py"], exclude=["node3"])
    # -> ["srun", "--exclude=node3", "--label", "-N2", "python", "t.py"]
    task_hosts("srun: error: node2: task 1: Exited with exit code 1")   # -> {1: "node2"}
    rank_tasks("1: [rank3]: step 4")                  # -> {3: 1}: torchrun's rank 3 is task 1
    job_script(["srun", "--label", "torchrun", "--rdzv-endpoint", "{head}:29500", "t.py"])
    # -> the batch script of a job per attempt, `{head}` filled in by its shell

Only srun's own options count (those before the program it runs): a trainer's `-l` is not
srun's `--label`. The user's flags win over babysit's.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

from babysit.engines.hostlist import compress
from babysit.engines.torchrun_args import Plan, rewrite, torchrun_split

_SRUN_TASK = re.compile(r"srun: error: (\S+): tasks? ([\d,\-]+): ")
# `srun torchrun ...`: srun's --label (the task, one torchrun agent per node) in front of
# torchrun's per-worker prefix, when its template gives the global rank (TORCHRUN_PREFIX).
_TASK_RANK = re.compile(r"^ *(\d+): \[rank(\d+)\]:", re.MULTILINE)
TORCHRUN_PREFIX_VAR = "TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE"
TORCHRUN_PREFIX = "[rank${rank}]:"  # torchrun substitutes the worker's global rank
NODES_FLAGS = ("-N", "--nodes")
TASK_FLAGS = ("-n", "--ntasks", "--ntasks-per-node", "--ntasks-per-gpu")


def is_srun(argv: Sequence[str]) -> bool:
    return bool(argv) and os.path.basename(argv[0]) == "srun"


# srun options that take their value as the next word (`-N 2`): what scanning srun's own
# options must skip to find where the program starts.
_TAKES_VALUE = frozenset(
    {
        "-N", "--nodes", "-n", "--ntasks", "-c", "--cpus-per-task", "-p", "--partition", "-t",
        "--time", "-w", "--nodelist", "-x", "--exclude", "-J", "--job-name", "-o", "--output", "-e",
        "--error", "-i", "--input", "-A", "--account", "--mem", "--gres", "-G", "--gpus",
        "--ntasks-per-node", "--ntasks-per-gpu", "--gpus-per-node", "--gpus-per-task",
        "--mem-per-cpu", "--mem-per-gpu", "--jobid", "--mpi", "-m", "--distribution", "--cpu-bind",
        "--export", "-D", "--chdir", "-q", "--qos", "--signal", "--reservation", "-C",
        "--constraint", "-W", "--wait", "-r", "--relative", "-d", "--dependency", "--het-group",
        "--network", "-B", "--extra-node-info",
    }
)


def program_start(argv: Sequence[str]) -> int:
    """Where the program srun runs starts in an `srun ...` argv (srun itself at 0)."""
    return 1 + len(srun_options(argv[1:]))


def srun_options(argv: Sequence[str]) -> list[str]:
    """srun's own options in argv (srun itself excluded): up to the program it runs."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if not a.startswith("-") or a == "--":
            break
        out.append(a)
        if a in _TAKES_VALUE and i + 1 < len(argv):
            out.append(argv[i + 1])
            i += 1
        i += 1
    return out


def has_flag(options: Sequence[str], names: Sequence[str]) -> bool:
    """Whether one of `names` is among srun's options (`--nodes=2`, `-N2`, `-N 2`)."""
    for a in options:
        for n in names:
            if a == n or (n.startswith("--") and a.startswith(n + "=")):
                return True
            if not n.startswith("--") and a.startswith(n) and not a.startswith("--"):
                return True
    return False


def flag_value(options: Sequence[str], names: Sequence[str]) -> str | None:
    for i, a in enumerate(options):
        if a in names and i + 1 < len(options):
            return options[i + 1]
        for n in names:
            if n.startswith("--") and a.startswith(n + "="):
                return a[len(n) + 1 :]
            if not n.startswith("--") and a.startswith(n) and len(a) > len(n):
                return a[len(n) :]
    return None


def srun_argv(
    argv: Sequence[str],
    exclude: Sequence[str],
    jobid: str | None = None,
    nodes: int | None = None,
) -> list[str]:
    """The user's srun command (or a command to run under srun) with babysit's flags added after
    `srun`: --exclude (a hostlist), --label, --jobid and --nodes; the user's own flags win.
    Not --kill-on-bad-exit: it loses the dying task's last lines (BadExit does its work)."""
    if is_srun(argv):
        head, user = [argv[0]], list(argv[1:])
    else:
        head, user = ["srun"], list(argv)
    opts = srun_options(user) if is_srun(argv) else []
    flags: list[str] = []
    if jobid is not None and not has_flag(opts, ("--jobid",)):
        flags.append(f"--jobid={jobid}")
    if nodes is not None and not has_flag(opts, NODES_FLAGS):
        flags.append(f"--nodes={nodes}")
    if exclude:
        flags.append(f"--exclude={compress(exclude)}")
    if not has_flag(opts, ("-l", "--label")):
        flags.append("--label")
    return [*head, *flags, *user]


def task_hosts(text: str) -> dict[int, str]:
    """rank -> node from srun's own lines (`srun: error: node2: task 1: Exited with exit code 1`,
    `tasks 0-2`)."""
    out: dict[int, str] = {}
    for m in _SRUN_TASK.finditer(text):
        for part in m.group(2).split(","):
            lo, _, hi = part.partition("-")
            with contextlib.suppress(ValueError):
                for rank in range(int(lo), int(hi or lo) + 1):
                    out.setdefault(rank, m.group(1))
    return out


def min_nodes(text: str) -> int:
    """srun's --nodes=MIN[-MAX] -> MIN."""
    try:
        return int(text.split("-")[0])
    except ValueError:
        return 1


def rank_tasks(text: str) -> dict[int, int]:
    """global rank -> srun task, from `srun --label` lines with torchrun's `[rankN]:` prefix
    inside (`srun torchrun`: a node's agent is one task, its workers' lines carry their rank).
    Torchrun's c10d rendezvous numbers the nodes in its own order, not Slurm's, so a rank's
    node is learnt from its lines, not computed as node_rank * nproc + local_rank."""
    out: dict[int, int] = {}
    for m in _TASK_RANK.finditer(text):
        out.setdefault(int(m.group(2)), int(m.group(1)))
    return out


def srun_torchrun(
    argv: Sequence[str], env: Mapping[str, str], log_dir: Path
) -> tuple[list[str], dict[str, str], Plan] | None:
    """`srun [opts] torchrun ...` as babysit runs it: the torchrun part rewritten as the torchrun
    engine does (torchrun_args.rewrite: --max-restarts 0, per-rank files in log_dir), and
    torchrun's line prefix set to the global rank (TORCHRUN_PREFIX) unless the environment
    already chose one (srun passes it to every task). None when argv is not srun running
    torchrun."""
    if not is_srun(argv):
        return None
    start = program_start(argv)
    if torchrun_split(argv[start:]) is None:
        return None
    plan = rewrite(argv[start:], log_dir, env)
    out_env = dict(env)
    out_env.setdefault(TORCHRUN_PREFIX_VAR, TORCHRUN_PREFIX)
    return [*argv[:start], *plan.argv], out_env, plan


HEAD_PLACEHOLDER = "{head}"  # the job's first node, known only once the job runs


def job_script(step: Sequence[str], prologue: str = "") -> str:
    """The batch script of a job per attempt: the step, each word quoted, with `{head}` (the
    job's first node, for torchrun's --rdzv-endpoint) filled in by the shell from Slurm's own
    node list; nothing else of the words reaches the shell as code. `prologue`: babysit's own
    lines to run first (engines/jobcheck.py: the preflight of the job's nodes)."""
    words = []
    for word in step:
        parts = word.split(HEAD_PLACEHOLDER)
        if len(parts) == 1:
            words.append(shlex.quote(word))
        else:
            words.append('"$BABYSIT_HEAD"'.join(shlex.quote(p) if p else "" for p in parts))
    head = ""
    if any(HEAD_PLACEHOLDER in w for w in step):
        head = 'BABYSIT_HEAD=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)\n'
    return f"#!/bin/bash\n{prologue}{head}exec {' '.join(words)}\n"
