"""`babysit run` triages every failed attempt: the verdict decides restart or stop, and is kept."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import fixture, run_babysit, status_json

pytestmark = pytest.mark.e2e
PY = sys.executable


def test_a_cuda_oom_stops_after_one_attempt_with_what_to_do(workdir: Path) -> None:
    home = workdir / "h"
    res = run_babysit("run", "--home", str(home), "--backoff", "0", "--name", "oom", "--",
                      PY, fixture("crash_with.py"), "oom", cwd=workdir)
    assert res.returncode == 3, res.stderr
    assert "A GPU ran out of memory (rank 1)" in res.stderr
    assert "what to do: Lower the micro-batch size" in res.stderr
    doc = status_json(home, "oom", workdir)
    assert len(doc["attempts"]) == 1
    a = doc["attempts"][0]
    assert a["cause"] == "cuda_oom" and a["transient"] is False
    (d,) = doc["diagnoses"]
    assert d["attempt"] == 1 and d["category"] == "cuda_oom" and d["suspect"]["rank"] == 1
    assert d["evidence"][-1]["file"].endswith("stderr.log")
    log = run_babysit("logbook", "oom", "--home", str(home), cwd=workdir)
    assert "## Triage" in log.stdout and "**cuda_oom**" in log.stdout


def test_a_transient_nccl_error_restarts_and_is_seen_before_the_second_time(
    workdir: Path,
) -> None:
    home = workdir / "h"
    res = run_babysit("run", "--home", str(home), "--backoff", "0", "--max-restarts", "1",
                      "--name", "nccl", "--", PY, fixture("crash_with.py"), "nccl",
                      "--no-advance", cwd=workdir)
    assert res.returncode == 4, res.stderr  # transient: restarted until the budget ran out
    assert "NCCL hit a system or network error" in res.stderr
    assert "seen before: seen 1 time(s) before in 1 run(s)" in res.stderr
    doc = status_json(home, "nccl", workdir)
    assert [a["cause"] for a in doc["attempts"]] == ["nccl_error", "nccl_error"]
    assert [d["attempt"] for d in doc["diagnoses"]] == [1, 2]
    fp = {d["fingerprint"] for d in doc["diagnoses"]}
    assert len(fp) == 1
    # The standalone command sees the same fingerprint in the same home.
    log = home / "runs" / "nccl" / "attempt-0001"
    out = run_babysit("triage", "--home", str(home), "--json", str(log), cwd=workdir)
    got = json.loads(out.stdout)
    # Attempt 1's own stored verdict is not "seen before" (issue 12): only attempt 2's is.
    assert got["fingerprint"] in fp
    assert [s["attempt"] for s in got["seen_before"]] == [2], got["seen_before"]


def test_a_bad_team_rules_file_is_refused_before_anything_starts(workdir: Path) -> None:
    (workdir / "babysit.toml").write_text('[triage]\nrules = "team.toml"\n')
    (workdir / "team.toml").write_text('[[rule]]\nid = "x"\ncategory = "nope"\n')
    res = run_babysit("run", "--home", str(workdir / "h"), "--", PY, fixture("crash_with.py"),
                      "oom", cwd=workdir)
    assert res.returncode == 2
    assert "team.toml" in res.stderr and "category must be one of" in res.stderr
    assert not (workdir / "h" / "runs").exists()
