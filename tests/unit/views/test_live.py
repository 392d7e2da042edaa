"""views.live (status's live figures), views.summary (the end-of-run summary), and the status
tables at 80 columns."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from rich.console import Console

from babysit.views.live import live_document, live_lines, total_from_bar, total_from_command
from babysit.views.render import runs_table, status_tables
from babysit.views.summary import print_summary, summary_document

T0 = 1_796_000_000.0


def attempt(number: int, first: int | None, last: int | None, **kw: Any) -> dict[str, Any]:
    row = {
        "number": number,
        "first_step": first,
        "last_step": last,
        "started": T0 + 1000 * (number - 1),
        "ended": T0 + 1000 * (number - 1) + 500,
        "outcome": "failed",
        "exit_code": 1,
        "signal": None,
        "category": "nccl_error",
        "transient": True,
        "summary": "NCCL hit a system or network error " * 6,
        "resume_from": None,
        "anomaly_step": None,
    }
    return row | kw


def test_live_figures_from_the_metrics_samples() -> None:
    metrics = [
        {
            "attempt": 2,
            "ts": T0 + t,
            "step": s,
            "vals": {"loss": 2.5 - s / 1000, "tokens_per_s": 12000.0},
        }
        for t, s in [(0, 100), (2, 100), (10, 110), (20, 120)]
    ]
    metrics.insert(1, {"attempt": 2, "ts": T0 + 1, "step": None, "vals": {"host/cpu_pct": 5.0}})
    metrics.insert(0, {"attempt": 1, "ts": T0 - 100, "step": 90, "vals": {"loss": 9.0}})
    incidents = [
        {"ts": T0 + 5, "attempt": 2, "kind": "loss_spike", "step": 105, "message": "loss 9 \x1b[2J"}
    ]
    live = live_document(
        [attempt(1, 0, 95), attempt(2, 90, 118, ended=None, outcome="running")],
        metrics,
        incidents,
        now=T0 + 23,
        total=1120,
        last_output=T0 + 22.5,
    )
    assert live["step"] == 120 and live["steps_per_s"] == 1.0
    assert live["eta_s"] == 1000.0 and live["eta"].endswith("+00:00")
    assert live["loss"] == 2.38 and live["throughput"] == {"tokens_per_s": 12000.0}
    assert live["since_last_step_s"] == 3.0 and live["since_last_output_s"] == 0.5
    assert live["percent"] == 10.7
    lines = live_lines(live)
    assert lines[0].startswith("step 120 of 1,120 (10.7%) · 1 steps/s · ETA 16m40s")
    assert "loss 2.38 · 12,000 tokens/s · last step 3.0s ago" in lines[1]
    assert "loss_spike at step 105: loss 9 \\x1b[2J" in lines[2]  # the escape shown, not obeyed


def test_no_total_no_eta() -> None:
    metrics = [{"attempt": 1, "ts": T0 + t, "step": t, "vals": {"loss": 1.0}} for t in (0, 10)]
    live = live_document([attempt(1, 0, 10, ended=None)], metrics, [], now=T0 + 11)
    assert live["eta_s"] is None and live["total_steps"] is None
    assert "ETA" not in " ".join(live_lines(live))


def test_the_total_from_the_command_or_a_progress_bar() -> None:
    assert total_from_command(["python", "train.py", "--max-steps", "300"]) == 300
    assert total_from_command(["python", "train.py", "--max_iters=5000"]) == 5000
    assert total_from_command(["torchrun", "t.py", "--training.steps", "1000"]) == 1000
    assert total_from_command(["python", "train.py", "--steps-per-epoch", "3"]) is None
    bar = " 50%|█████     | 500/1000 [01:23<01:23,  6.00it/s]\r 51%|█████     | 510/1000 [01:25<"
    assert total_from_bar("noise\n" + bar) == 1000
    assert total_from_bar("Epoch 3:  22%|██▏  | 4/18 [00:17<01:02,  4.47s/it]") is None
    assert total_from_bar("Map: 100%|██████████| 3/3 [00:00<00:00]") is None


def test_summary_counts_redone_steps_and_time_lost() -> None:
    rows = [
        attempt(1, 0, 99),  # 100 steps in 500 s
        attempt(2, 80, 150, category="cuda_oom"),  # resumed at 80: 20 steps redone
        attempt(3, 151, 200, category=None, outcome="succeeded", exit_code=0),
    ]
    doc = summary_document(rows)
    assert doc["attempts"] == 3 and doc["causes"] == {"nccl_error": 1, "cuda_oom": 1}
    assert doc["steps_redone"] == 20
    assert doc["between_attempts_s"] == 1000.0  # 500 s between each pair
    assert doc["redoing_s"] == 101.0  # 20 steps at 500 s / 99 steps
    out = io.StringIO()
    console = Console(file=out, width=80, highlight=False)
    print_summary(console, "train", Path(".babysit"), rows, [], [], 0, 1500)
    text = out.getvalue()
    words = " ".join(text.split())
    assert "finished after 3 attempts in 25m00s; causes: 1× nccl_error, 1× cuda_oom" in words
    assert "20 steps were redone" in words and "18m21s lost" in words
    assert max(len(line) for line in text.splitlines()) <= 80


def status_doc() -> dict[str, Any]:
    attempts = []
    for a in [attempt(1, 0, 14250), attempt(2, 14000, 15250, category="cuda_error_other")]:
        attempts.append(
            {
                "number": a["number"],
                "started": "2026-12-01T04:36:18.000+00:00",
                "duration_s": 4000.0,
                "outcome": "failed",
                "exit_code": 1,
                "signal": None,
                "first_step": a["first_step"],
                "last_step": a["last_step"],
                "cause": a["category"],
                "summary": a["summary"],
            }
        )
    return {
        "run": "a-rather-long-run-name-for-a-7b-model",
        "state": "failed",
        "reason": "gave up",
        "supervised": False,
        "supervisor_pid": None,
        "command": ["python", "train.py"],
        "updated": "2026-12-01T04:36:18.000+00:00",
        "attempts": attempts,
        "events": [],
        "incidents": [],
        "diagnoses": [],
    }


def test_the_status_tables_stay_readable_at_80_columns() -> None:
    out = io.StringIO()
    console = Console(file=out, width=80, highlight=False)
    status_tables(status_doc(), console, live=["step 5 · loss 2.1"])
    runs_table([status_doc()], console)
    lines = out.getvalue().splitlines()
    assert max(len(line) for line in lines) <= 80
    header = next(line for line in lines if "summary" in line)
    assert header.split() == ["#", "started", "duration", "outcome", "steps", "cause", "summary"]
    row = next(line for line in lines if line.lstrip().startswith("1 "))
    assert "NCCL hit a system" in row and row.rstrip().endswith("…")  # one line, cut
    assert "  step 5 · loss 2.1" in lines
    assert any("2026-12-01 04:36:18Z" in line for line in lines)  # the runs table's time whole
