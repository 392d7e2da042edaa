"""A straggler under `babysit run`: a real process prints 4 ranks' interleaved `[rankN]:` step
lines, one rank persistently late; the incident names that rank (and not rank 0, whose one
checkpoint-like late step is no straggler). The output is read as babysit always reads it: each
read stamped at once, spread over the time since the previous read."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tests.conftest import fixture, run_babysit, status_json

pytestmark = pytest.mark.e2e

STRAGGLER = re.compile(
    r"^rank (\d+)(?: on \S+)? is (\d+)% slower than the median rank over the last (\d+) steps"
)


def _run(workdir: Path, *args: str) -> tuple[list[dict[str, object]], str]:
    home = workdir / "h"
    # Reads every 50 ms: a step is 150 ms; the late rank's lines come 120 ms after the others'.
    (workdir / "babysit.toml").write_text("[run]\npoll_s = 0.05\n")
    res = run_babysit(
        "run", "--home", str(home), "--name", "t", "--",
        sys.executable, fixture("straggler_ranks.py"), *args,
        cwd=workdir, timeout=120,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    incidents = status_json(home, "t", workdir)["incidents"]
    return [i for i in incidents if i.get("metric") == "rank_lag"], res.stderr


def test_a_persistently_late_rank_is_named(workdir: Path) -> None:
    found, stderr = _run(
        workdir, "--ranks", "4", "--slow-rank", "2", "--lag", "0.8", "--steps", "90"
    )
    assert found, stderr[-3000:]
    first = found[0]
    assert first["kind"] == "throughput_drop" and first["category"] == "throughput_drop"
    m = STRAGGLER.match(str(first["message"]))
    assert m is not None, first["message"]
    assert m.group(1) == "2" and m.group(3) == "50", first["message"]
    assert 30 <= int(m.group(2)) <= 120, first["message"]  # the rank is 60% of a step late
    assert all(str(i["message"]).startswith("rank 2") for i in found), found
    assert str(first["message"]) in stderr  # told to the operator as it happened


def test_no_late_rank_no_straggler(workdir: Path) -> None:
    found, _ = _run(workdir, "--ranks", "4", "--slow-rank", "-1", "--steps", "90")
    assert found == [], found
