"""`babysit report` end to end: a real run with known faults (a crash after a stall, a hang,
restarts from checkpoints) whose goodput figures match the truth the trainer wrote down; the
JSON schema; the plot; `--nodes`; bad input."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from babysit.store import Store
from tests.conftest import fixture, run_babysit

pytestmark = pytest.mark.e2e
PY = sys.executable
CONFIG = (
    "[hang]\nfloor_s = 2\nkill_after_s = 0\n"  # act at detection, ~2.2 s after the last step
    "[forensics]\nstacks = false\n[health]\ntelemetry = false\n[triage]\nkernel_log = false\n"
)
CATEGORIES = ("productive", "recomputation", "restart_overhead", "hang", "tail", "backoff")
TOLERANCE = 0.02  # of the wall time, for each category and for the goodput itself


def truth(path: Path, hung: int) -> tuple[float, dict[str, float]]:
    """The wall time and each category's seconds, from what the trainer wrote down (never from
    babysit's store): each process's launch, the time of each step, its end."""
    procs: dict[int, dict[str, Any]] = {}
    for line in path.read_text().splitlines():
        d = json.loads(line)
        p = procs.setdefault(d["pid"], {"steps": {}})
        if d["event"] == "start":
            p["start"] = d["launched"]
        elif d["event"] == "step":
            p["steps"][d["step"]] = d["t"]
        else:
            p["end"] = d["t"]
    cats = dict.fromkeys(CATEGORIES, 0.0)
    prior: int | None = None
    prev_end: float | None = None
    runs = list(procs.values())  # in the order they started
    for i, p in enumerate(runs):
        steps = p["steps"]
        first, last = min(steps), max(steps)
        if prev_end is not None:
            cats["backoff"] += p["start"] - prev_end
        cats["restart_overhead"] += steps[first] - p["start"]
        redo = steps[first]
        if prior is not None and first <= prior:
            redo = steps[min(prior, last)]
            cats["recomputation"] += redo - steps[first]
        cats["productive"] += steps[last] - redo
        cats["hang" if i + 1 == hung else "tail"] += p["end"] - steps[last]
        prior, prev_end = max(prior or last, last), p["end"]
    return runs[-1]["end"] - runs[0]["start"], cats


def test_goodput_of_a_run_with_known_faults_matches_the_truth(workdir: Path) -> None:
    (workdir / "babysit.toml").write_text(CONFIG)
    home = workdir / "h"
    res = run_babysit(
        "run", "--home", str(home), "--name", "gp", "--backoff", "1", "-q", "--",
        PY, fixture("goodput_trainer.py"), "--truth", "truth.jsonl", "--ckpt-dir", "ckpt",
        "--crash-at", "35", "--hang-at", "75", cwd=workdir, timeout=120,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    rep = run_babysit(
        "report",
        "gp",
        "--home",
        str(home),
        "--json",
        "--gpus",
        "8",
        "--plot",
        "t.svg",
        cwd=workdir,
    )
    assert rep.returncode == 0, rep.stderr
    doc = json.loads(rep.stdout)
    wall, want = truth(workdir / "truth.jsonl", hung=2)

    assert abs(doc["wall_s"] - wall) <= TOLERANCE * wall, (doc["wall_s"], wall)
    got = {c: doc["categories"][c]["seconds"] for c in CATEGORIES}
    report = "\n".join(f"{c}: babysit {got[c]:.3f}s, truth {want[c]:.3f}s" for c in CATEGORIES)
    for c in CATEGORIES:
        assert abs(got[c] - want[c]) <= TOLERANCE * wall, report
        assert want[c] > 0, f"the scenario has no {c}: {report}"
    assert abs(doc["goodput"] - want["productive"] / wall) <= TOLERANCE, report

    # The causes: the crash's restart costs are the network's, the hang's are the hang's.
    cats = doc["categories"]
    assert set(cats["recomputation"]["by_cause"]) == {"network", "hang"}
    assert set(cats["hang"]["by_cause"]) == {"hang"}
    assert cats["restart_overhead"]["by_cause"].keys() == {"start", "network", "hang"}
    assert doc["failures"] == 2 and doc["attempts"] == 3 and doc["state"] == "succeeded"
    assert doc["causes"]["network"]["failures"] == 1 and doc["causes"]["hang"]["failures"] == 1
    assert doc["mtbf_s"] == pytest.approx(doc["uptime_s"] / 2, abs=0.01)
    assert doc["mttr_s"] is not None and doc["mttr_s"] > 0
    assert doc["gpu_hours_lost"] == pytest.approx((wall - want["productive"]) * 8 / 3600, abs=0.01)
    assert [a["step_times"] for a in doc["per_attempt"]] == ["samples"] * 3
    assert doc["notes"] == []  # everything was measured

    _assert_schema(doc)
    svg = ET.parse(workdir / "t.svg").getroot()
    assert svg.tag == "{http://www.w3.org/2000/svg}svg"

    human = run_babysit("report", "gp", "--home", str(home), cwd=workdir)
    assert human.returncode == 0, human.stderr
    assert "goodput" in human.stdout and "undetected hang" in human.stdout

    nodes = run_babysit("report", "--nodes", "--home", str(home), "--json", cwd=workdir)
    assert nodes.returncode == 0, nodes.stderr
    ndoc = json.loads(nodes.stdout)
    assert ndoc["runs"] == 1 and ndoc["attempts"] == 3 and ndoc["lemons"] == []
    (node,) = ndoc["nodes"]  # every attempt ran on this host; no failure was blamed on it
    assert node["attempts"] == 3 and node["failures"] == 0


def _assert_schema(doc: dict[str, Any]) -> None:
    """The stable keys of `report --json` (README: `babysit report`)."""
    assert set(doc) == {
        "run", "state", "started", "ended", "as_of", "wall_s", "attempts", "failures",
        "goodput", "gpus", "gpu_hours", "gpu_hours_lost", "uptime_s", "mtbf_s", "mttr_s",
        "step_time_s", "categories", "causes", "per_attempt", "timeline", "notes",
    }  # fmt: skip
    assert set(doc["categories"]) == set(CATEGORIES)
    for c in CATEGORIES:
        assert {"seconds", "share", "gpu_hours", "by_cause"} <= set(doc["categories"][c])
    assert {"detect_s", "act_s"} <= set(doc["categories"]["hang"])
    for cause in doc["causes"].values():
        assert set(cause) == {"failures", "lost_s", "gpu_hours_lost", "mtbf_s", "mttr_s"}
    assert set(doc["per_attempt"][0]) == {
        "number", "cause", "outcome", "first_step", "last_step", "step_times", "duration_s",
        *(f"{c}_s" for c in CATEGORIES if c != "backoff"),
    }  # fmt: skip
    assert set(doc["timeline"][0]) == {"attempt", "category", "cause", "start_s", "end_s"}
    assert doc["started"].endswith("+00:00") and doc["ended"].endswith("+00:00")


def test_bad_input_gets_one_clear_line(workdir: Path) -> None:
    home = workdir / "h"
    with Store.open(home) as store:
        store.start_run("alpha", ["python", "train.py"], str(workdir), {})
    missing = run_babysit("report", "nope", "--home", str(home), cwd=workdir)
    assert missing.returncode == 2
    assert "no run named 'nope'" in missing.stderr and "known runs: alpha" in missing.stderr
    empty = run_babysit("report", "alpha", "--home", str(home), cwd=workdir)
    assert empty.returncode == 0, empty.stderr
    assert "run alpha has no attempts yet: nothing to report" in empty.stdout
    empty_json = run_babysit("report", "alpha", "--home", str(home), "--json", cwd=workdir)
    assert json.loads(empty_json.stdout)["attempts"] == 0
    png = run_babysit("report", "alpha", "--home", str(home), "--plot", "t.png", cwd=workdir)
    assert png.returncode == 2 and "writes SVG only" in png.stderr and "t.svg" in png.stderr
    assert not (workdir / "t.png").exists()
    both = run_babysit("report", "alpha", "--nodes", "--home", str(home), cwd=workdir)
    assert both.returncode == 2 and "--nodes covers every run" in both.stderr
    nohome = run_babysit("report", "--home", str(workdir / "none"), cwd=workdir)
    assert nohome.returncode == 2 and "no babysit home" in nohome.stderr
    gpus = run_babysit("report", "alpha", "--home", str(home), "--gpus", "0", cwd=workdir)
    assert gpus.returncode == 2
