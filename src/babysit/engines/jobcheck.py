"""Preflight inside a job per attempt: the doctor on every node of the job before the training
starts, and the job ended there when a node's own hardware fails.

    prologue(["/venv/bin/python", "-m", "babysit", "doctor", "--json"], 60.0, attempt_dir)
    # -> the lines the batch script runs before the training (engines/srun.job_script)
    results(attempt_dir)          # -> [NodeResult("node2", 6, '{"checks": ...}', ""), ...], None
    python -m babysit.engines.jobcheck ATTEMPT_DIR/preflight      # in the job, on its batch host

From a login node the nodes of a job are known only once it runs (engines/slurm.SlurmJobEngine),
so babysit cannot check them before the attempt as it does inside an allocation (srun
--overlap). The job's script does it: one task a node (`srun --ntasks-per-node=1`) runs the
doctor, each writing DIR/<node>.json, .err and .rc (the node's name from SLURMD_NODENAME),
killed at its time by `timeout`; srun's own complaints go to DIR/srun.err, out of the job's
stderr (babysit reads srun's task reports there to map ranks and to end a step). Then this
module, on the batch host, reads the answers and ends the job with EXIT_SICK when a node failed
a check of its own (records.NODE_CHECKS: its GPUs, its arithmetic). babysit reads the same files
when the job ends (supervise/nodes.py: the passes and failures recorded, the sick node banned)
and submits again without the node, charged to no budget. A node that could not be checked (no
answer, no babysit there) does not stop the job: it is said, not blamed; a failing disk or mount
is the node's surroundings, which a ban would not fix: said, and the training starts.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from babysit.engines.base import NodeResult
from babysit.records import NODE_CHECKS

PREFLIGHT_DIR = "preflight"  # under the attempt's directory
EXIT_SICK = 86  # the job's exit code when its preflight found a sick node (no trainer ran)
KILL_AFTER_S = 5  # `timeout -k`: a doctor that ignores SIGTERM at its time


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
        f"mkdir -p {d}\n"
        'srun --nodes="$SLURM_JOB_NUM_NODES" --ntasks="$SLURM_JOB_NUM_NODES" '
        f"--ntasks-per-node=1 sh -c {shlex.quote(node)} sh {d} 2>>{d}/srun.err\n"
        f"{shlex.quote(argv[0])} -m babysit.engines.jobcheck {d}\n"
        f"if [ $? -eq {EXIT_SICK} ]; then exit {EXIT_SICK}; fi\n"
    )


def results(attempt_dir: Path) -> list[NodeResult] | None:
    """Each checked node's answer (stdout: the doctor's JSON; returncode None when it ran out
    of time or did not say), by node name; None when the attempt ran no preflight."""
    d = attempt_dir / PREFLIGHT_DIR
    if not d.is_dir():
        return None
    out: list[NodeResult] = []
    for path in sorted(d.glob("*.json")):
        host = path.stem
        stdout = _read(path)
        stderr = _read(d / f"{host}.err")
        try:
            code: int | None = int(_read(d / f"{host}.rc").strip())
        except ValueError:
            code = None
        if code in (124, 137):  # timeout's own codes: killed at its time
            stderr = f"did not finish on {host} within its time and was killed\n{stderr}"
            code = None
        out.append(NodeResult(host, code, stdout, stderr))
    return out


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
    """(every failed check, those that condemn the node itself)."""
    bad = [c for c in checks if c.get("status") == "fail"]
    return bad, [c for c in bad if c.get("name") in NODE_CHECKS]


def words(checks: Sequence[dict[str, Any]]) -> str:
    return "; ".join(f"{c.get('name')}: {c.get('summary')}" for c in checks)


def sick(answers: Sequence[NodeResult]) -> dict[str, str]:
    """node -> what failed, for the nodes whose own hardware failed a check."""
    out: dict[str, str] = {}
    for answer in answers:
        checks = checks_of(answer)
        if checks is not None and failed(checks)[1]:
            out[answer.host] = words(failed(checks)[1])
    return out


def _read(path: Path, limit: int = 1 << 20) -> str:
    try:
        with path.open("rb") as f:
            return f.read(limit).decode("utf-8", errors="replace")
    except OSError:
        return ""


def main(argv: Sequence[str]) -> int:
    """The gate in the job: EXIT_SICK (and why, on stderr) when a node is sick, else 0."""
    if len(argv) != 1:
        print("usage: python -m babysit.engines.jobcheck PREFLIGHT_DIR", file=sys.stderr)
        return 2
    answers = results(Path(argv[0]).parent) or []
    found = sick(answers)
    unchecked = [a.host for a in answers if checks_of(a) is None]
    if unchecked:
        print(
            f"babysit preflight: could not check {', '.join(unchecked)} (no answer from the "
            "doctor there); starting the training anyway",
            file=sys.stderr,
        )
    if not found:
        return 0
    for host, what in found.items():
        print(f"babysit preflight: node {host} FAILED its own health check: {what}",
              file=sys.stderr)
    print(
        f"babysit preflight: ending the job before the training starts; babysit leaves "
        f"{', '.join(found)} out and submits again",
        file=sys.stderr,
    )
    return EXIT_SICK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
