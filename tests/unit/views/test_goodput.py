"""views.goodput: hand-made rows whose truth is known to the second, each category exact."""

from __future__ import annotations

import io
import itertools
import xml.etree.ElementTree as ET
from typing import Any

import pytest
from rich.console import Console

from babysit.views.goodput import CATEGORIES, goodput_document, timeline
from babysit.views.goodput_render import goodput_tables
from babysit.views.goodput_svg import goodput_svg

T = 1_750_000_000.0
RUN = {"name": "gpt", "state": "succeeded"}


def _a(number: int, started: float, ended: float | None, **kw: Any) -> dict[str, Any]:
    return {"number": number, "started": T + started, "ended": None if ended is None else T + ended,
            "outcome": kw.pop("outcome", "failed"), **kw}  # fmt: skip


# A run of three attempts, one step a second; times from T:
# 1: launched 0, step 1 at 10 ... step 50 at 59, crashes (network) at 62; backoff to 70.
# 2: launched 70, resumed from 40: step 41 at 75, redoes up to step 50 (at 84), step 80 at 114,
#    hangs; detected at 124 (10 s after its last step), killed at 130; backoff to 131.
# 3: launched 131, resumed from 70: step 71 at 134, redoes up to 80 (at 143), step 100 at 163,
#    exits 0 at 164.
ATTEMPTS = [
    _a(1, 0, 62, first_step=1, last_step=50, category="network"),
    _a(2, 70, 130, first_step=41, last_step=80, category="hang", outcome="killed"),
    _a(3, 131, 164, first_step=71, last_step=100, outcome="succeeded"),
]
# The store's samples: each inner one the moment its step was printed; each attempt's last one
# late (after the crash, during the hang, at the exit), as babysit's last flush is.
SAMPLES = [
    (1, T + 14, 5), (1, T + 29, 20), (1, T + 44, 35), (1, T + 62.1, 50),
    (2, T + 80, 46), (2, T + 100, 66), (2, T + 119.5, 80),
    (3, T + 140, 77), (3, T + 150, 87), (3, T + 164.2, 100),
]  # fmt: skip
HANG = [{"attempt": 2, "kind": "hang", "ts": T + 124, "value": 10.0}]


def _doc(**kw: Any) -> dict[str, Any]:
    return goodput_document(RUN, ATTEMPTS, SAMPLES, HANG, now=T + 1000, **kw)


def test_every_category_is_exact() -> None:
    doc = _doc()
    cats = doc["categories"]
    assert doc["wall_s"] == 164.0
    assert {c: cats[c]["seconds"] for c in CATEGORIES} == {
        "productive": 99.0,  # 49 + 30 + 20
        "recomputation": 18.0,  # steps 41..50 and 71..80
        "restart_overhead": 18.0,  # 10 + 5 + 3
        "hang": 16.0,  # 114 -> 130
        "tail": 4.0,  # 59 -> 62 (the crash), 163 -> 164 (the exit)
        "backoff": 9.0,  # 62 -> 70, 130 -> 131
    }
    assert sum(cats[c]["seconds"] for c in CATEGORIES) == doc["wall_s"]
    assert doc["goodput"] == round(99 / 164, 5)
    assert cats["hang"]["detect_s"] == 10.0 and cats["hang"]["act_s"] == 6.0


def test_an_attempt_launches_when_its_launcher_process_was_created() -> None:
    # babysit records the launch, writes its journal, then spawns the launcher: on a busy disk
    # the write takes a while, and the attempt's own time starts with its process. Attempt 2's
    # launcher was created 0.6 s after babysit's record: the backoff ends there.
    late = [dict(a) for a in ATTEMPTS]
    late[1]["launcher_started"] = T + 70.6
    late[2]["launcher_started"] = T + 131 - 0.01  # the clock's 10 ms ticks: not before it
    late[0]["launcher_started"] = T + 500  # a clock that jumped: babysit's record stands
    doc = goodput_document(RUN, late, SAMPLES, HANG, now=T + 1000)
    secs = {c: doc["categories"][c]["seconds"] for c in CATEGORIES}
    assert doc["wall_s"] == 164.0
    assert secs["backoff"] == pytest.approx(9.6) and secs["restart_overhead"] == pytest.approx(17.4)
    assert sum(secs.values()) == pytest.approx(doc["wall_s"])


def test_figures_are_charged_to_the_cause_that_made_them_necessary() -> None:
    cats = _doc()["categories"]
    assert cats["restart_overhead"]["by_cause"] == {"start": 10.0, "network": 5.0, "hang": 3.0}
    assert cats["recomputation"]["by_cause"] == {"network": 9.0, "hang": 9.0}
    assert cats["backoff"]["by_cause"] == {"network": 8.0, "hang": 1.0}
    assert cats["hang"]["by_cause"] == {"hang": 16.0}
    assert cats["tail"]["by_cause"] == {"network": 3.0, "succeeded": 1.0}


def test_mtbf_mttr_and_gpu_hours() -> None:
    doc = _doc(gpus=8)
    assert doc["failures"] == 2
    assert doc["uptime_s"] == 155.0  # 62 + 60 + 33
    assert doc["mtbf_s"] == 77.5
    assert doc["mttr_s"] == 18.0  # (75 - 59) and (134 - 114)
    assert doc["causes"]["network"] == {
        "failures": 1, "lost_s": 25.0, "gpu_hours_lost": round(25 * 8 / 3600, 4),
        "mtbf_s": 155.0, "mttr_s": 16.0,
    }  # fmt: skip
    assert doc["causes"]["hang"]["lost_s"] == 29.0 and doc["causes"]["hang"]["mttr_s"] == 20.0
    assert doc["gpu_hours_lost"] == round(65 * 8 / 3600, 4)
    assert doc["categories"]["productive"]["gpu_hours"] == round(99 * 8 / 3600, 4)
    assert doc["step_time_s"] == 1.0
    assert all("GPU-hours" not in n for n in doc["notes"])
    assert any("--gpus" in n for n in _doc()["notes"])


def test_per_attempt_rows_and_the_timeline() -> None:
    doc = _doc()
    a2 = doc["per_attempt"][1]
    assert a2 == {
        "number": 2, "cause": "hang", "outcome": "killed", "first_step": 41, "last_step": 80,
        "step_times": "samples", "duration_s": 60.0, "productive_s": 30.0,
        "recomputation_s": 9.0, "restart_overhead_s": 5.0, "hang_s": 16.0, "tail_s": 0.0,
    }  # fmt: skip
    tl = doc["timeline"]
    assert tl[0] == {"attempt": 1, "category": "restart_overhead", "cause": "start",
                     "start_s": 0.0, "end_s": 10.0}  # fmt: skip
    assert all(a["end_s"] == b["start_s"] for a, b in itertools.pairwise(tl))
    assert tl[-1]["end_s"] == 164.0


def test_attempt_without_samples_is_estimated_and_said_so() -> None:
    samples = [s for s in SAMPLES if s[0] != 1]
    doc = goodput_document(RUN, ATTEMPTS, samples, HANG, now=T + 1000)
    assert doc["per_attempt"][0]["step_times"] == "estimated"
    assert any(n.startswith("attempt 1: no step timestamps") for n in doc["notes"])
    # 49 steps x the run's 1 s, ending at the crash: 13 s of overhead, no tail.
    assert doc["per_attempt"][0]["restart_overhead_s"] == 13.0
    assert doc["per_attempt"][0]["tail_s"] == 0.0
    assert sum(doc["categories"][c]["seconds"] for c in CATEGORIES) == doc["wall_s"]


def test_no_samples_at_all_uses_attempt_time_per_step_and_says_so() -> None:
    doc = goodput_document(RUN, ATTEMPTS, [], HANG, now=T + 1000)
    assert any("no step timestamps in the whole run" in n for n in doc["notes"])
    assert sum(doc["categories"][c]["seconds"] for c in CATEGORIES) == pytest.approx(164.0)


def test_an_attempt_that_never_stepped_is_all_restart_overhead() -> None:
    attempts = [
        _a(1, 0, 5, category="filesystem_io"),
        _a(2, 6, 20, first_step=0, last_step=9, outcome="succeeded"),
    ]
    samples = [(2, T + 10, 0), (2, T + 12, 2), (2, T + 14, 4), (2, T + 21, 9)]
    doc = goodput_document(RUN, attempts, samples, [], now=T + 99)
    assert doc["categories"]["restart_overhead"]["by_cause"] == {
        "start": 5.0,
        "filesystem_io": 4.0,
    }
    assert doc["categories"]["productive"]["seconds"] == 9.0  # step 0 at 10, step 9 at 19
    assert doc["causes"]["filesystem_io"]["mttr_s"] == 10.0  # from its launch to step 0


def test_a_rollback_recomputes_down_to_where_it_resumed() -> None:
    attempts = [
        _a(1, 0, 30, first_step=1, last_step=20, category="numerical", outcome="killed"),
        _a(2, 30, 60, first_step=6, last_step=30, outcome="succeeded"),
    ]
    samples = [(1, T + 5, 1), (1, T + 15, 11), (1, T + 30, 20),
               (2, T + 35, 6), (2, T + 45, 16), (2, T + 60, 30)]  # fmt: skip
    doc = goodput_document(RUN, attempts, samples, [], now=T + 99)
    assert doc["categories"]["recomputation"]["by_cause"] == {"numerical": 14.0}  # 6 -> 20
    assert doc["categories"]["productive"]["seconds"] == 19.0 + 10.0


def test_a_running_attempt_counts_up_to_now() -> None:
    attempts = [_a(1, 0, None, first_step=1, last_step=10, outcome="running")]
    samples = [(1, T + 2, 1), (1, T + 6, 5), (1, T + 10, 9), (1, T + 12, 10)]
    doc = goodput_document({"name": "x", "state": "running"}, attempts, samples, [], now=T + 20)
    assert doc["ended"] is None and doc["wall_s"] == 20.0
    assert doc["categories"]["productive"]["seconds"] == 9.0
    assert doc["categories"]["tail"]["seconds"] == 9.0  # since the last step, so far
    assert doc["mtbf_s"] is None and doc["failures"] == 0


def test_no_attempts() -> None:
    doc = goodput_document(RUN, [], [], [], now=T)
    assert doc["attempts"] == 0 and doc["goodput"] is None and doc["wall_s"] == 0.0
    assert any("no attempts" in n for n in doc["notes"])
    assert timeline([], [], [], T).segments == ()


def test_tables_name_every_category_and_the_notes() -> None:
    buf = io.StringIO()
    goodput_tables(_doc(gpus=8), Console(file=buf, width=160, color_system=None))
    out = buf.getvalue()
    assert "goodput 60.4% of 2m44s (3 attempt(s), 2 failure(s))" in out
    for label in ("productive training", "recomputation", "restart overhead", "backoff"):
        assert label in out
    assert "MTBF 1m18s · MTTR 18s" in out and "GPU-hours lost" in out


def test_svg_is_well_formed_with_one_rect_per_stretch_and_escapes_names() -> None:
    doc = _doc() | {"run": "<x>&\x1b[31m"}
    svg = goodput_svg(doc)
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    stretches = [r for r in root.iter(f"{ns}rect") if r.get("class") in CATEGORIES]
    assert len(stretches) == len(doc["timeline"])
    assert "&lt;x&gt;&amp;\\x1b[31m" in svg
