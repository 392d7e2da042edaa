"""A hung rank in a real 2-process torchrun job (gloo, CPU): babysit notices the stall, takes
the Python stack of every rank before the kill, names the stuck rank, stores the grouped
stacks with the attempt, and restarts within the hang timeout plus 10 s. Needs torch."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from babysit.store import Store
from tests.conftest import fixture, free_port, run_babysit

pytest.importorskip("torch")
pytestmark = [pytest.mark.e2e, pytest.mark.torch]

FLOOR_S = 2.0


def test_hung_rank_is_named_from_its_stack_and_the_job_restarts(workdir: Path) -> None:
    (workdir / "babysit.toml").write_text(
        f"[hang]\nfloor_s = {FLOOR_S}\nkill_after_s = 0\n[restart]\nbackoff_s = 0\n"
        "[stop]\ngrace_s = 5\n"
    )
    res = run_babysit(
        "run", "--home", str(workdir / "h"), "--name", "hg", "-q", "--",
        sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2",
        "--master-port", str(free_port()), fixture("torchrun_hang.py"),
        cwd=workdir, timeout=180,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    assert "stacks of hung attempt 1: rank 1" in res.stderr, res.stderr[-3000:]
    with Store.open(workdir / "h", create=False) as store:
        attempts = store.attempts("hg")
        stacks = store.stacks("hg")
        incidents = [i for i in store.incidents("hg") if i["kind"] == "hang"]
        started = [e for e in store.events("hg") if e["kind"] == "attempt_started"]
    assert [a["outcome"] for a in attempts] == ["killed", "succeeded"]
    assert attempts[0]["category"] == "hang"
    (report,) = stacks
    assert report["attempt"] == 1
    summary = report["summary"]
    assert "rank 1" in summary and "read_shard" in summary and "all_reduce" in summary
    doc = report["report"]
    assert doc["suspect"]["rank"] == 1
    ranks = sorted(r for g in doc["groups"] for r in g["ranks"])
    assert ranks == [0, 1]  # every rank's stack was taken
    assert (Path(attempts[0]["log_dir"]) / "stacks.txt").read_text().count("read_shard") >= 1
    # Restart within the hang timeout plus 10 s: from the last step of attempt 1 to the start
    # of attempt 2. The incident's value is how long the run had been stalled when detected.
    (hang,) = incidents
    stalled_since = hang["ts"] - hang["value"]
    limit = hang["value"] + 10.0
    assert started[1]["ts"] - stalled_since <= limit, (started[1]["ts"] - stalled_since, limit)
