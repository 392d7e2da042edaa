"""Rollbacks.seed: what a babysit started again learns from the store about rollbacks."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from babysit.config import build_config
from babysit.records import AttemptRecord, DecisionKind, Outcome
from babysit.sources import globwalk
from babysit.supervise.rollback import Rollbacks, StopRequested


def recovery(tmp_path: Path) -> Rollbacks:
    cfg = build_config(
        {"rollback.skip_before": 5, "rollback.skip_after": 10, "checkpoint.glob": "c_*.pt"}
    )

    def no_journal() -> Any:
        raise AssertionError("seed must not write")

    return Rollbacks(cfg, tmp_path, lambda level, msg: None, no_journal, lambda: 0.0)


def attempt(n: int, anomaly: int | None = None, ended: float | None = 10.0) -> AttemptRecord:
    return AttemptRecord(n, 1.0, ended, Outcome.KILLED, anomaly_step=anomaly)


def test_windows_come_back_from_the_rows(tmp_path: Path) -> None:
    rec = recovery(tmp_path)
    rows = [
        {"number": 1, "skip_steps": []},
        {"number": 2, "skip_steps": [(10, 20)]},
        {"number": 3, "skip_steps": [(10, 20), (40, 50)]},
    ]
    assert rec.seed(rows, [attempt(1, 15), attempt(2, 45), attempt(3)]) is None
    assert rec.windows == ((10, 20), (40, 50))
    assert rec.anomalies == [15, 45]


def test_a_rollback_decided_but_not_launched_is_made_again(tmp_path: Path) -> None:
    rec = recovery(tmp_path)
    rows = [{"number": 1, "skip_steps": []}, {"number": 2, "skip_steps": []}]
    decision = rec.seed(rows, [attempt(1), attempt(2, anomaly=100)])
    assert decision is not None and decision.kind == DecisionKind.ROLLBACK
    assert decision.before_step == 99 and decision.skip_steps == ((95, 110),)
    assert rec.windows == ((95, 110),) and rec.anomalies == [100]


def test_a_second_anomaly_at_the_same_place_made_again_is_the_wider_one(tmp_path: Path) -> None:
    rec = recovery(tmp_path)
    rows = [{"number": 1, "skip_steps": []}, {"number": 2, "skip_steps": [(95, 110)]}]
    decision = rec.seed(rows, [attempt(1, anomaly=100), attempt(2, anomaly=102)])
    assert decision is not None and decision.skip_steps == ((92, 122),)
    assert rec.anomalies == [100, 102]


def test_an_attempt_still_running_is_not_rolled_back(tmp_path: Path) -> None:
    rec = recovery(tmp_path)
    rows = [{"number": 1, "skip_steps": []}]
    assert rec.seed(rows, [attempt(1, anomaly=100, ended=None)]) is None


def test_a_finished_run_started_again_does_not_inherit_its_windows(tmp_path: Path) -> None:
    rec = recovery(tmp_path)
    rows = [{"number": 1, "skip_steps": [(10, 20)]}, {"number": 2, "skip_steps": [(10, 20)]}]
    assert rec.seed(rows, [], budget_from=3) is None
    assert rec.windows == () and rec.anomalies == []


def test_checkpoints_saved_after_an_anomaly_are_passed_over(tmp_path: Path) -> None:
    import os

    cfg = build_config({"checkpoint.glob": str(tmp_path / "ckpt_*.pt")})
    rec = Rollbacks(cfg, tmp_path, lambda level, msg: None, lambda: None, lambda: 1e9)
    for step, mtime in ((20, 100.0), (30, 200.0), (40, 500.0)):
        path = tmp_path / f"ckpt_{step:06d}.pt"
        path.write_bytes(b"w")
        os.utime(path, (mtime, mtime))
    rec.ended_for_anomaly(25, 300.0, 1)  # ckpt 30 was saved by that attempt after its NaN
    by_step = {c.step: c for c in rec.scan(0.0)}
    assert by_step[20].complete and by_step[40].complete  # 40: a newer save replaced it
    assert not by_step[30].complete and "anomaly at step 25" in (by_step[30].problem or "")


def test_a_validator_that_rejects_every_checkpoint_pages_instead_of_step_0(
    tmp_path: Path,
) -> None:
    import pytest

    from babysit.errors import LaunchError

    for step in (10, 20):
        (tmp_path / f"ckpt_{step:06d}.pt").write_bytes(b"w")
    cfg = build_config(
        {
            "checkpoint.glob": str(tmp_path / "ckpt_*.pt"),
            "checkpoint.validate": "chek-ckpt-typo {checkpoint}",
        }
    )

    class Journal:
        def event(self, *a: object, **k: object) -> None:
            pass

    rec = Rollbacks(cfg, tmp_path, lambda level, msg: None, Journal, lambda: 1e10)
    with pytest.raises(LaunchError, match="will not go back to step 0"):
        rec.pick_checkpoint(0.0)


def test_host_names_match_without_domains_but_ip_addresses_stay_whole() -> None:
    from babysit.supervise.nodes import short

    assert short("GPU-3.cluster.local") == short("gpu-3") == "gpu-3"
    assert short("10.0.0.2") == "10.0.0.2" != short("10.0.0.3")


# -- the validator and babysit's stop -------------------------------------------------------------


def with_validator(tmp_path: Path, validate: str, stopping: Any) -> tuple[Rollbacks, list[str]]:
    cfg = build_config(
        {
            "checkpoint.glob": "out/ckpt_*.pt",
            "checkpoint.settle_s": 0.0,
            "checkpoint.validate": validate,
            "checkpoint.validate_timeout_s": 600.0,
        }
    )
    said: list[str] = []

    def no_journal() -> Any:
        raise AssertionError("nothing is recorded for a launch that does not happen")

    rb = Rollbacks(
        cfg, tmp_path, lambda level, msg: said.append(msg), no_journal, time.time, stopping
    )
    return rb, said


def test_a_stop_while_validating_ends_the_validator_and_launches_nothing(tmp_path: Path) -> None:
    """A validator that hangs kept babysit deaf to SIGTERM for validate_timeout_s (300 s)."""
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "ckpt_10.pt").write_bytes(b"weights")
    started = tmp_path / "started"
    rb, _ = with_validator(
        tmp_path, f"sh -c 'touch {started}; sleep 1000' {{checkpoint}}", started.exists
    )
    t0 = time.monotonic()
    with pytest.raises(StopRequested):
        rb.pick_checkpoint(settle_s=0.0)
    assert time.monotonic() - t0 < 60  # not the 600 s timeout
    assert rb._rejected == {}  # not held against the checkpoint


def test_a_cut_scan_is_said_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(globwalk.walk_glob, "__defaults__", (5, globwalk.MAX_DEPTH))
    for i in range(10):
        (tmp_path / "out" / f"d{i}").mkdir(parents=True)
        (tmp_path / "out" / f"d{i}" / f"ckpt_{i}.pt").write_bytes(b"w")
    cfg = build_config({"checkpoint.glob": "out/**/ckpt_*.pt"})
    said: list[str] = []
    rb = Rollbacks(cfg, tmp_path, lambda level, msg: said.append(msg), lambda: None, time.time)
    rb.scan(0.0)
    rb.scan(0.0)
    assert len(said) == 1 and "more than 5 entries" in said[0]
