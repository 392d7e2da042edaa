"""Preflight inside a job per attempt: the doctor on every node of the job before the training
starts, and the job ended there when a node's own hardware fails.

    prologue(["/venv/bin/python", "-m", "babysit", "doctor", "--json"], 60.0, attempt_dir)
    # -> the lines the batch script runs before the training (engines/srun.job_script)
    results(attempt_dir, ["node1", "node2"])   # -> InJobCheck([NodeResult("node2", 6, ...)], ...)
    python -m babysit.engines.jobcheck ATTEMPT_DIR/preflight node1 node2   # the gate, in the job

From a login node the nodes of a job are known only once it runs (engines/slurmjob.SlurmJobEngine),
so babysit cannot check them before the attempt as it does inside an allocation (srun
--overlap). The job's script does it: one task a node (`srun --ntasks-per-node=1`) runs the
doctor, each writing DIR/<node>.json, .err and .rc (the node's name from SLURMD_NODENAME), the
doctor killed at its time by `timeout` and the whole step too (a hung mount must not hold the
job); srun's own complaints go to DIR/srun.err, out of the job's stderr (babysit reads srun's
task reports there to map ranks and to end a step). DIR starts empty (a job Slurm requeued
runs its script again in the same place). Then the gate, on the batch host, reads each of the
job's nodes' answers by name (a name looked up on NFS is fresh; a listing may be cached) and
ends the job with EXIT_SICK, leaving DIR/stopped, when a node failed a check of its own
(records.NODE_CHECKS: its GPUs, its arithmetic; not a check that broke). babysit reads the same
files when the job ends (supervise/nodes.py: the passes and failures recorded, the sick node
banned) and submits again without the node, charged to no budget. A node that could not be
checked (no answer, no babysit there) does not stop the job: it is said, not blamed; a failing
disk or mount is the node's surroundings, which a ban would not fix: said, and the training
starts.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from babysit.engines.base import InJobCheck, NodeResult
from babysit.records import CHECK_ERROR, NODE_CHECKS

PREFLIGHT_DIR = "preflight"  # under the attempt's directory
STOPPED = "stopped"  # the gate's mark in PREFLIGHT_DIR: it ended the job (the sick nodes inside)
EXIT_SICK = 86  # the job's exit code when its preflight found a sick node (no trainer ran)
KILL_AFTER_S = 5  # `timeout -k`: a doctor that ignores SIGTERM at its time
STEP_SLACK_S = 45  # the whole srun step's time over the doctor's: start-up, a slow mount


def prologue(argv: Sequence[str], timeout_s: float, attempt_dir: Path) -> str:
    """The batch script's lines that check every node of the job with argv (the doctor, JSON
    on stdout) and end the job with EXIT_SICK when one is sick; argv[0] is the Python that runs
    this module's gate too."""
    d = shlex.quote(str(attempt_dir / PREFLIGHT_DIR))
    limit = max(1, round(timeout_s))
    node = (
        f"timeout -k {KILL_AFTER_S} {limit} {shlex.join(argv)} "
        '>"$1/$SLURMD_NODENAME.json" 2>"$1/$SLURMD_NODENAME.err"; '
        'echo $? >"$1/$SLURMD_NODENAME.rc"'
    )
    return (
        f"rm -rf {d} && mkdir -p {d}\n"
        f"timeout -k 10 {limit + STEP_SLACK_S} "
        'srun --nodes="$SLURM_JOB_NUM_NODES" --ntasks="$SLURM_JOB_NUM_NODES" '
        f"--ntasks-per-node=1 sh -c {shlex.quote(node)} sh {d} 2>>{d}/srun.err\n"
        f"{shlex.quote(argv[0])} -m babysit.engines.jobcheck {d} "
        '$(scontrol show hostnames "$SLURM_JOB_NODELIST" 2>/dev/null)\n'
        f"if [ $? -eq {EXIT_SICK} ]; then exit {EXIT_SICK}; fi\n"
    )


def results(attempt_dir: Path, nodes: Sequence[str] = ()) -> InJobCheck | None:
    """The attempt's preflight: each node's answer (those of `nodes` read by name, a missing
    one said so, then any other found), None when the attempt ran none."""
    d = attempt_dir / PREFLIGHT_DIR
    if not d.is_dir():
        return None
    return InJobCheck(_answers(d, nodes), (d / STOPPED).exists())


def _answers(d: Path, nodes: Sequence[str]) -> list[NodeResult]:
    named = dict.fromkeys(nodes)
    others = sorted(p.stem for p in d.glob("*.json") if p.stem not in named)
    return [_answer(d, host) for host in [*named, *others]]


def _answer(d: Path, host: str) -> NodeResult:
    """One node's answer (stdout: the doctor's JSON; returncode None when it ran out of time,
    was killed, or left none)."""
    path = d / f"{host}.json"
    if not path.exists():
        return NodeResult(host, None, "", "no answer: the check did not run there")
    stdout, stderr = _read(path), _read(d / f"{host}.err")
    try:
        code: int | None = int(_read(d / f"{host}.rc").strip())
    except ValueError:
        code = None
    if code == 124:  # timeout's own code: the doctor ran out of its time
        stderr = f"did not finish on {host} within its time and was killed\n{stderr}"
        code = None
    elif code == 137:  # SIGKILL: timeout's -k, or the step's memory limit
        stderr = f"was killed on {host} (SIGKILL: out of time, or of the step's memory)\n{stderr}"
        code = None
    return NodeResult(host, code, stdout, stderr)


def checks_of(answer: NodeResult) -> list[dict[str, Any]] | None:
    """The doctor's checks in a node's answer; None when it gave none (it could not run)."""
    try:
        checks = json.loads(answer.stdout)["checks"]
    except (ValueError, KeyError, TypeError):
        return None
    if not isinstance(checks, list):
        return None
    return [c for c in checks if isinstance(c, dict)]


def failed(checks: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(every failed check, those that condemn the node itself: a gpu or matmul check that
    failed, not one that broke)."""
    bad = [c for c in checks if c.get("status") == "fail"]
    own = [
        c for c in bad
        if c.get("name") in NODE_CHECKS and not (c.get("details") or {}).get(CHECK_ERROR)
    ]  # fmt: skip
    return bad, own


def words(checks: Sequence[dict[str, Any]]) -> str:
    return "; ".join(f"{c.get('name')}: {c.get('summary')}" for c in checks)


def sick(answers: Sequence[NodeResult]) -> dict[str, str]:
    """node -> what failed, for the nodes whose own hardware failed a check."""
    out: dict[str, str] = {}
    for answer in answers:
        checks = checks_of(answer)
        own = failed(checks)[1] if checks is not None else []
        if own:
            out[answer.host] = words(own)
    return out


def _read(path: Path, limit: int = 1 << 20) -> str:
    try:
        with path.open("rb") as f:
            return f.read(limit).decode("utf-8", errors="replace")
    except OSError:
        return ""


def main(argv: Sequence[str]) -> int:
    """The gate in the job: EXIT_SICK (and why, on stderr; DIR/stopped) when a node of the
    job is sick, else 0. argv: the preflight directory, then the job's nodes."""
    if not argv:
        print("usage: python -m babysit.engines.jobcheck PREFLIGHT_DIR [NODE ...]",
              file=sys.stderr)  # fmt: skip
        return 2
    d = Path(argv[0])
    answers = _answers(d, argv[1:])
    found = sick(answers)
    unchecked = [a.host for a in answers if checks_of(a) is None]
    if unchecked:
        print(
            f"babysit preflight: could not check {', '.join(unchecked)} (no answer from the "
            "doctor there); starting the training anyway",
            file=sys.stderr,
        )
    if not answers:
        print("babysit preflight: no node answered; starting the training anyway",
              file=sys.stderr)  # fmt: skip
    if not found:
        return 0
    for host, what in found.items():
        print(f"babysit preflight: node {host} FAILED its own health check: {what}",
              file=sys.stderr)  # fmt: skip
    print(
        f"babysit preflight: ending the job before the training starts; babysit leaves "
        f"{', '.join(found)} out and submits again",
        file=sys.stderr,
    )
    try:
        (d / STOPPED).write_text(" ".join(found) + "\n", encoding="utf-8")
    except OSError as exc:
        print(f"babysit preflight: could not write {d / STOPPED}: {exc}", file=sys.stderr)
    return EXIT_SICK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
