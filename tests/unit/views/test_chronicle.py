"""views.chronicle and chronicle_html: the logbook as a chronicle, from hand-made store rows."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from typing import Any

import pytest

from babysit.views.chronicle import (
    EVIDENCE_CHARS,
    EVIDENCE_LINES,
    LogbookRows,
    chronicle,
)
from babysit.views.chronicle_html import logbook_html
from babysit.views.chronicle_md import chronicle_markdown, sparkline
from babysit.views.document import run_document
from babysit.views.render import logbook_markdown

T0 = 1_750_000_000.0  # 2025-06-15T15:06:40Z
EVIL = "<script>alert(1)</script> \x1b]0;pwned\x07 | <img src=http://x/y.png>"

RUN: dict[str, Any] = {
    "name": "gpt",
    "state": "succeeded",
    "reason": "attempt 3 finished successfully",
    "exit_code": 0,
    "command": ["python", "train.py", "--lr", "3e-4"],
    "cwd": "/work/gpt",
    "created": T0,
    "updated": T0 + 1000.0,
}


def _attempt(number: int, started: float, ended: float | None, **kw: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "number": number, "started": started, "ended": ended, "host": "node1",
        "outcome": "running", "exit_code": None, "signal": None, "first_step": None,
        "last_step": None, "category": None, "transient": None, "summary": None,
        "resume_from": None, "resume_step": None, "skip_steps": [], "lr_scale": None,
        "anomaly_step": None, "suspect_host": None, "fingerprint": None, "hosts": None,
    }  # fmt: skip
    return row | kw


ATTEMPTS = [
    _attempt(1, T0, T0 + 100.0, outcome="failed", exit_code=1, first_step=0, last_step=40,
             category="network", transient=True, summary=f"NCCL error {EVIL}"),
    _attempt(2, T0 + 112.0, T0 + 300.0, outcome="killed", signal=15, first_step=40,
             last_step=93, category="loss_spike", transient=True, anomaly_step=70,
             summary="babysit stopped it to roll back: loss did not settle"),
    _attempt(3, T0 + 301.0, T0 + 900.0, outcome="succeeded", exit_code=0, first_step=60,
             last_step=200, resume_from="/ck/ckpt_60.pt", resume_step=60, skip_steps=[(68, 73)]),
]  # fmt: skip


def _event(ts: float, kind: str, message: str, attempt: int | None = None, **data: Any) -> dict:
    return {"ts": ts, "attempt": attempt, "kind": kind, "message": message, "data": data}


EVENTS = [
    _event(T0, "run_started", "babysit 1 supervises python train.py"),
    _event(T0, "attempt_started", "attempt 1 started", 1),
    _event(T0 + 100, "attempt_ended", "attempt 1 exited with code 1", 1,
           verdict={"category": "network", "evidence": ["from the verdict"]}),
    _event(T0 + 100, "banned", "banned node7: NCCL error twice", None, host="node7"),
    _event(T0 + 100, "restart_scheduled", f"restarting in 12.0s {EVIL}"),
    _event(T0 + 150, "note", f"spike was the bad shard {EVIL}\nsecond line", 2,
           source="human", author="ana@login1"),
    _event(T0 + 200, "note", "loss spike at step 50 settled: keep watching", 2),
    _event(T0 + 300, "rollback", "loss did not settle: rolling back before step 69"),
    _event(T0 + 900, "succeeded", "attempt 3 finished successfully"),
]  # fmt: skip

WINDOW = [[s, 2.5 - s * 0.001] for s in range(54, 70)] + [[70, 6.9], [71, 6.8]]
INCIDENTS = [
    {"ts": T0 + 180, "attempt": 2, "kind": "loss_spike", "category": "loss_spike", "step": 50,
     "metric": "loss", "value": 4.0, "baseline": 2.5, "message": "loss spiked at 50; settled",
     "window": [[48, 2.5], [49, 2.5], [50, 4.0], [51, 2.5]]},
    {"ts": T0 + 250, "attempt": 2, "kind": "loss_diverged", "category": "loss_spike", "step": 70,
     "metric": "loss", "value": 6.9, "baseline": 2.5, "message": "loss did not settle at 70",
     "window": WINDOW},
    {"ts": T0 + 600, "attempt": 3, "kind": "throughput_drop", "category": "throughput_drop",
     "step": 150, "metric": "tokens_per_s", "value": 500.0, "baseline": 1000.0,
     "message": f"throughput halved {EVIL}", "window": [[148, 1000.0], [149, 990.0], [150, 500.0]]},
]  # fmt: skip
DIAGNOSES = [
    {"ts": T0 + 100, "attempt": 1, "category": "network", "document": {
        "category": "network", "transient": True,
        "suspect": {"kind": "node", "host": "node7", "rank": 3, "gpu": None},
        "summary": "NCCL error on rank 3", "action": "restart without node7",
        "evidence": [{"file": "stderr.log", "line": n, "text": f"line {n} " + "x" * 400}
                     for n in range(1, 20)],
        "consequences": [{"category": "nccl_timeout", "summary": "watchdog", "count": 7}],
        "fingerprint": "abc", "confidence": 0.9, "rule": "nccl.system"}},
]  # fmt: skip
STACKS = [
    {"ts": T0 + 290, "attempt": 2, "summary": "rank 1 is in load_batch", "report": {
        "summary": "rank 1 is in load_batch while 3 ranks wait in all_reduce",
        "groups": [{"where": "all_reduce (c10d.py:2501)", "count": 3, "ranks": [0, 2, 3],
                    "pids": [1, 3, 4], "odd": False, "frames": []},
                   {"where": f"load_batch (train.py:40) {EVIL}", "count": 1, "ranks": [1],
                    "pids": [2], "odd": True, "frames": []}]}},
]  # fmt: skip
METRICS = [
    {"attempt": 2, "ts": T0 + 120 + s, "step": s,
     "vals": {"loss": 2.5, "grad_norm": 0.5 + s / 100, "tokens_per_s": 1000.0, "host/load1": 3.0}}
    for s in range(40, 94, 4)
] + [
    {"attempt": 2, "ts": T0 + 260, "step": 75, "vals": {"grad_norm": "nan"}},
    {"attempt": 3, "ts": T0 + 400, "step": 100, "vals": {"loss": 2.0}},
    {"attempt": None, "ts": T0 + 401, "step": None, "vals": {"gpu/util": 99.0}},
]  # fmt: skip


def rows(**over: Any) -> LogbookRows:
    base: dict[str, Any] = {
        "run": RUN, "attempts": ATTEMPTS, "events": EVENTS, "incidents": INCIDENTS,
        "diagnoses": DIAGNOSES, "stacks": STACKS, "metrics": METRICS,
    }  # fmt: skip
    return LogbookRows(**(base | over))


@pytest.fixture
def chron() -> dict[str, Any]:
    return chronicle(rows())


def test_the_chronicle_is_strict_json_with_its_documented_keys(chron: dict[str, Any]) -> None:
    json.dumps(chron, allow_nan=False)
    assert chron["schema"] == 1
    assert set(chron) >= {"summary", "timeline", "incidents", "decisions", "notes"}
    assert chron["summary"] == {
        "attempts": 3, "started": "2025-06-15T15:06:40.000+00:00",
        "ended": "2025-06-15T15:21:40.000+00:00", "wall_s": 900.0, "state": "succeeded",
        "restarts": 1, "rollbacks": 1, "bans": 1, "incidents": 4, "notes": 1, "last_step": 200,
    }  # fmt: skip


def test_the_timeline_dates_every_attempt_with_the_wait_before_it(chron: dict[str, Any]) -> None:
    t1, t2, t3 = chron["timeline"]
    assert (t1["started"], t1["ended"], t1["duration_s"]) == (
        "2025-06-15T15:06:40.000+00:00",
        "2025-06-15T15:08:20.000+00:00",
        100.0,
    )
    assert (t1["how"], t1["exit_code"], t1["cause"], t1["host"]) == (
        "failed (exit 1)",
        1,
        "network",
        "node1",
    )
    assert t1["gap_before_s"] is None and t2["gap_before_s"] == 12.0
    assert t2["how"] == "killed (SIGTERM)" and (t2["first_step"], t2["last_step"]) == (40, 93)
    assert t3["skip_steps"] == [[68, 73]] and t3["resume_from"] == "/ck/ckpt_60.pt"


def test_a_running_attempt_has_no_end_and_the_run_no_wall_time() -> None:
    c = chronicle(
        rows(attempts=[_attempt(1, T0, None, last_step=5)], run={**RUN, "state": "running"})
    )
    assert c["timeline"][0]["ended"] is None and c["timeline"][0]["how"] == "running"
    assert c["summary"]["ended"] is None and c["summary"]["wall_s"] is None


def test_incidents_in_order_failures_gather_the_signals_that_explain_them(
    chron: dict[str, Any],
) -> None:
    ids = [(i["id"], i["kind"], i["attempt"]) for i in chron["incidents"]]
    assert ids == [
        ("I1", "failed", 1),
        ("I2", "loss_spike", 2),  # the spike that settled at 50 stands alone...
        ("I3", "killed", 2),  # ...the one the attempt was rolled back for is its signal
        ("I4", "throughput_drop", 3),
    ]
    killed = chron["incidents"][2]
    assert [s["kind"] for s in killed["signals"]] == ["loss_diverged"]
    assert killed["step"] == 70 and killed["title"] == "attempt 2 killed (SIGTERM)"


def test_a_failure_carries_its_triage_an_evidence_excerpt_and_follow_on_errors(
    chron: dict[str, Any],
) -> None:
    first = chron["incidents"][0]
    assert first["triage"]["suspect"] == {"kind": "node", "host": "node7", "rank": 3, "gpu": None}
    assert first["triage"]["transient"] is True and first["triage"]["action"] == (
        "restart without node7"
    )
    assert len(first["evidence"]) == EVIDENCE_LINES
    assert all(len(e["text"]) <= EVIDENCE_CHARS for e in first["evidence"])
    assert first["evidence"][0]["file"] == "stderr.log" and first["evidence"][0]["line"] == 1
    assert first["consequences"][0]["count"] == 7


def test_without_a_triage_document_the_attempt_row_and_its_verdict_speak() -> None:
    c = chronicle(rows(diagnoses=[]))
    first = c["incidents"][0]
    assert first["triage"]["category"] == "network" and first["triage"]["confidence"] is None
    assert [e["text"] for e in first["evidence"]] == ["from the verdict"]


def test_the_stacks_of_the_hung_attempt_go_with_its_incident(chron: dict[str, Any]) -> None:
    (stacks,) = chron["incidents"][2]["stacks"]
    assert stacks["summary"].startswith("rank 1 is in load_batch")
    assert [(g["count"], g["ranks"], g["odd"]) for g in stacks["groups"]] == [
        (3, [0, 2, 3], False),
        (1, [1], True),
    ]


def test_the_vital_signs_around_an_incident_with_the_anomaly_marked(
    chron: dict[str, Any],
) -> None:
    killed = chron["incidents"][2]
    by_metric = {v["metric"]: v for v in killed["vitals"]}
    assert list(by_metric) == ["loss", "grad_norm", "tokens_per_s"]  # host/* is no vital sign
    loss = by_metric["loss"]
    assert loss["marks"] == [70.0] and loss["bands"] == [[68.0, 73.0]]  # attempt 3 skipped them
    assert [70, 6.9] in loss["points"] and [54, 2.446] in loss["points"]
    steps = [p[0] for p in loss["points"]]
    assert steps == sorted(steps) and min(steps) >= 54 - 17  # within the window, padded
    assert [75, "nan"] in by_metric["grad_norm"]["points"]  # strict JSON, still there
    assert chron["incidents"][1]["vitals"][0]["marks"] == [50.0]


def test_an_incident_with_one_value_draws_no_chart() -> None:
    lone = {**INCIDENTS[0], "window": [[50, 4.0]], "attempt": 9}
    c = chronicle(rows(incidents=[lone], attempts=[], diagnoses=[], stacks=[]))
    assert c["incidents"][0]["vitals"] == []


def test_a_verdict_on_no_attempt_is_an_incident_of_its_own() -> None:
    watch = {**DIAGNOSES[0], "attempt": None}
    c = chronicle(rows(attempts=[], incidents=[], stacks=[], diagnoses=[watch]))
    (inc,) = c["incidents"]
    assert inc["kind"] == "triage" and inc["triage"]["category"] == "network"


def test_decisions_with_their_reasons_and_human_notes_apart(chron: dict[str, Any]) -> None:
    actions = [(d["action"], d["kind"]) for d in chron["decisions"]]
    assert actions == [
        ("ban node", "banned"),
        ("restart", "restart_scheduled"),
        ("observed", "note"),  # babysit's own note: a decision to keep watching
        ("rollback", "rollback"),
        ("finished", "succeeded"),
    ]
    assert chron["decisions"][0]["details"] == {"host": "node7"}
    (note,) = chron["notes"]
    assert note["author"] == "ana@login1" and note["attempt"] == 2
    assert note["text"].startswith("spike was the bad shard")


def test_sparkline() -> None:
    assert sparkline([[0, 1.0], [1, 2.0], [2, 3.0]]) == "▁▅█"
    assert sparkline([[0, 1.0], [1, "nan"], [2, 1.0]]) == "▄×▄"
    assert len(sparkline([[i, float(i)] for i in range(500)], width=40)) == 40


def test_markdown_sections_before_the_events(chron: dict[str, Any]) -> None:
    doc = run_document(RUN, ATTEMPTS, EVENTS, False, INCIDENTS, DIAGNOSES, STACKS)
    md = logbook_markdown(doc, chronicle_markdown(chron))
    heads = [ln for ln in md.splitlines() if ln.startswith("## ")]
    assert heads[-5:] == ["## Timeline", "## Incident reports", "## Decisions and actions",
                          "## Notes", "## Events"]  # fmt: skip
    assert "### I3. attempt 2 killed (SIGTERM) — loss_spike" in md
    assert "- triage: **network (a restart can help; suspect node: host node7, rank 3; " in md
    assert re.search(
        r"- vital sign: `loss \S+ [▁-█×]+ \S+ \(steps \d+–\d+; anomaly at step 70\)`", md
    )
    assert "(after 12.0s): **attempt 2** on node1" in md
    assert "- 2025-06-15 15:09:10Z ana@login1: spike was the bad shard" in md
    assert "\x1b" not in md and "\\x1b]0;pwned\\x07" in md
    assert "restarting in 12.0s <script>alert(1)</script> \\x1b]0;pwned\\x07 \\|" in md
    assert md == logbook_markdown(doc, chronicle_markdown(chron))  # deterministic


class _Page(HTMLParser):
    """The tags and attributes of a page, and its text."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _page(chron: dict[str, Any]) -> tuple[str, _Page]:
    doc = run_document(RUN, ATTEMPTS, EVENTS, False, INCIDENTS, DIAGNOSES, STACKS)
    html = logbook_html(doc, chron)
    page = _Page()
    page.feed(html)
    return html, page


def test_the_html_page_is_one_self_contained_file(chron: dict[str, Any]) -> None:
    html, page = _page(chron)
    assert html.startswith("<!DOCTYPE html>")
    tags = [t for t, _ in page.tags]
    assert "script" not in tags and "img" not in tags and "link" not in tags
    assert "iframe" not in tags and "object" not in tags
    csp = [a for t, a in page.tags if t == "meta" and a.get("http-equiv")]
    assert csp and "default-src 'none'" in (csp[0]["content"] or "")
    for _, attrs in page.tags:  # nothing to fetch: only in-page links and the SVG namespace
        for name, value in attrs.items():
            if name in ("href", "src", "action", "srcset"):
                assert (value or "").startswith("#"), (name, value)
    assert "@media print" in html
    assert tags.count("svg") == 1 + sum(len(i["vitals"]) for i in chron["incidents"])


def test_the_html_page_has_every_part(chron: dict[str, Any]) -> None:
    _, page = _page(chron)
    ids = {a.get("id") for _, a in page.tags}
    assert {"timeline", "incidents", "decisions", "notes", "events", "I1", "I4"} <= ids
    text = "".join(page.text)
    assert "Logbook: gpt" in text and "attempt 2 killed (SIGTERM)" in text
    assert "restart without node7" in text and "(the odd one out)" in text
    assert "ana@login1" in text and "spike was the bad shard" in text
    assert "stderr.log:1: line 1" in text  # the evidence excerpt, the path cut short


def test_log_text_in_the_html_is_escaped_and_shown_not_obeyed(chron: dict[str, Any]) -> None:
    html, page = _page(chron)
    assert "<script>" not in html and "<img" not in html
    assert "\x1b" not in html and "\x07" not in html
    text = "".join(page.text)
    assert "<script>alert(1)</script> \\x1b]0;pwned\\x07" in text  # shown, as text
    note = re.search(r'class="note-text">([^<]*)</div>', html)
    assert note is not None and note.group(1).endswith("\nsecond line")  # a note keeps its lines
