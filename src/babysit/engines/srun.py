"""srun's command line: babysit's flags added to the user's, srun's own reports read back. Pure.

    srun_argv(["srun", "-N2", "python", "t.py"], exclude=["node3"])
    # -> ["srun", "--exclude=node3", "--label", "-N2", "python", "t.py"]
    task_hosts("srun: error: node2: task 1: Exited with exit code 1")   # -> {1: "node2"}

Only srun's own options count (those before the program it runs): a trainer's `-l` is not
srun's `--label`. The user's flags win over babysit's.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Sequence

from babysit.engines.hostlist import compress

_SRUN_TASK = re.compile(r"srun: error: (\S+): tasks? ([\d,\-]+): ")
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
