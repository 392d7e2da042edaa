"""`srun torchrun` inside an allocation, on the local Slurm cluster (tests/slurmlab.py): the
Slurm and torchrun engines compose. An sbatch script of three nodes runs
`babysit run -- srun -N2 torchrun --nnodes 2 --nproc-per-node 2 ...` (gloo, the c10d rendezvous
on localhost: every lab node is this machine); on the first attempt local rank 1 on node2
reports an Xid and dies. The verdict names that global rank and node2, node2 is banned, and the
second attempt runs with --exclude=node2 and finishes. Every wait has a deadline."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from babysit.store import Store
from tests.conftest import fixture, free_port, run_babysit, wait_for
from tests.slurmlab import SlurmLab

pytestmark = pytest.mark.e2e
PY = sys.executable
TORCHRUN = str(Path(PY).parent / "torchrun")
WORKER = fixture("srun_torchrun_ranks.py")
CONFIG = """
[nodes]
ban_after = 1
[restart]
backoff_s = 0
[stop]
grace_s = 5
"""
SCRIPT = """#!/bin/bash
#SBATCH --nodes=3
#SBATCH --output={out}
cd {work}
exec {py} -m babysit run --home {home} -q --config {cfg} --name st -- \\
    srun -N2 {torchrun} --nnodes 2 --nproc-per-node 2 --rdzv-backend c10d \\
    --rdzv-endpoint localhost:{port} --max-restarts 3 {worker} --fail-node node2 --out {ranks}
"""


def _attempts(home: Path) -> list[dict[str, Any]]:
    with Store.open(home, create=False) as store:
        return store.attempts("st")


def test_a_rank_on_node2_dies_node2_is_banned_and_left_out(
    slurm: SlurmLab, workdir: Path
) -> None:
    home, out, ranks = workdir / "h", workdir / "job.out", workdir / "ranks"
    ranks.mkdir()
    cfg = workdir / "b.toml"
    cfg.write_text(CONFIG)
    script = workdir / "st.sbatch"
    script.write_text(SCRIPT.format(
        out=out, work=workdir, py=PY, home=home, cfg=cfg, torchrun=TORCHRUN, port=free_port(),
        worker=WORKER, ranks=ranks,
    ))  # fmt: skip
    job = slurm.run("sbatch", "--parsable", str(script), timeout_s=10).stdout.strip()
    assert job.isdigit()

    def ended() -> bool:
        text = slurm.run("scontrol", "show", "job", "-o", job).stdout
        return any(f"JobState={s}" in text for s in ("COMPLETED", "FAILED", "CANCELLED"))

    wait_for(ended, 90, "the job to finish")
    text = out.read_text() if out.exists() else ""
    assert "JobState=COMPLETED" in slurm.run("scontrol", "show", "job", "-o", job).stdout, text
    # The rank that died: local rank 1 of node2's torchrun, numbered by the rendezvous.
    (dead,) = [
        int(p.name.split("-")[1])
        for p in ranks.glob("rank-*-attempt-1.txt")
        if "local 1 on node2" in p.read_text()
    ]
    first, second = _attempts(home)[:2]
    assert "--max-restarts" in first["argv"]
    assert first["argv"][first["argv"].index("--max-restarts") + 1] == "0"
    assert "--label" in first["argv"]
    assert f"rank {dead}" in (first["summary"] or ""), (first["summary"], text)
    assert "banned node node2" in text, text
    assert "--exclude=node2" in second["argv"], second["argv"]
    assert not list(ranks.glob("rank-*-attempt-2.txt")) or all(
        "node2" not in p.read_text() for p in ranks.glob("rank-*-attempt-2.txt")
    )
    assert len(list(ranks.glob("rank-*-attempt-2.txt"))) == 4


def test_from_a_login_node_torchrun_runs_as_a_job_per_attempt_and_bans_reach_exclude(
    slurm: SlurmLab, workdir: Path
) -> None:
    """`babysit run --launcher slurm --nodes 2 -- torchrun ...` from a login node (last
    session's gap): the job runs `srun torchrun` (one agent a node), rewritten as inside an
    allocation; the rank on node2 dies, node2 is banned, and the next job leaves it out."""
    home, ranks = workdir / "h", workdir / "ranks"
    ranks.mkdir()
    cfg = workdir / "b.toml"
    cfg.write_text(CONFIG)
    res = run_babysit(
        "run", "--home", str(home), "-q", "--config", str(cfg), "--name", "st", "--launcher",
        "slurm", "--nodes", "2", "--", TORCHRUN, "--nnodes", "2", "--nproc-per-node", "2",
        "--rdzv-backend", "c10d", "--rdzv-endpoint", f"localhost:{free_port()}",
        "--max-restarts", "3", WORKER, "--fail-node", "node2", "--out", str(ranks),
        cwd=workdir, timeout=240,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    first = _attempts(home)[0]
    script = (home / "runs" / "st" / "attempt-0001" / "job.sbatch").read_text()
    assert script.split("\n")[1].startswith("exec srun --label ") and "--max-restarts 0" in script
    (dead,) = [
        int(p.name.split("-")[1])
        for p in ranks.glob("rank-*-attempt-1.txt")
        if "local 1 on node2" in p.read_text()
    ]
    assert f"rank {dead}" in (first["summary"] or ""), first["summary"]
    assert "banned node node2" in res.stderr, res.stderr[-3000:]
    job2 = (home / "runs" / "st" / "attempt-0002" / "slurm.json").read_text()
    assert '"node2"' in job2.split('"exclude"')[1].split("]")[0], job2
    assert all("node2" not in p.read_text() for p in ranks.glob("rank-*-attempt-2.txt"))
    assert len(list(ranks.glob("rank-*-attempt-2.txt"))) == 4
