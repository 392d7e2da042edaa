"""The chaos suite's pure half (benchmarks/_chaos_schedule.py): the seeded schedules and the
figures measured from hand-made records. The suite itself runs in tests/benchmarks."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def _load() -> ModuleType:
    bench_dir = str(ROOT / "benchmarks")
    if bench_dir not in sys.path:
        sys.path.insert(0, bench_dir)
    spec = importlib.util.spec_from_file_location(
        "_chaos_schedule", ROOT / "benchmarks" / "_chaos_schedule.py"
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["_chaos_schedule"] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


CS = _load()
T0 = 1_000.0


def step(t: float, s: int, loss: float = 2.0) -> dict[str, Any]:
    return {"t": T0 + t, "kind": "step", "rank": 0, "step": s, "loss": loss}


def start(t: float, s: int = 0) -> dict[str, Any]:
    return {"t": T0 + t, "kind": "start", "rank": 0, "step": s}


def fault(t: float, name: str, s: int) -> dict[str, Any]:
    return {"t": T0 + t, "kind": "fault", "rank": 1, "fault": name, "step": s}


def marks(end: float, **kw: Any) -> Any:
    return CS.Marks(t0=T0, t_end=T0 + end, exit_code=0, capped=False, **kw)


def test_schedules_are_fixed_by_the_seed_and_cover_every_fault() -> None:
    a = CS.schedules(1000, 15, 50)
    assert a == CS.schedules(1000, 15, 50)
    assert a != CS.schedules(1000, 16, 50)
    names = {f.name for s in a.values() for f in s.faults}
    assert names == set(CS.FAULTS)
    mixed = a["mixed"].faults
    assert all(f.step % 50 for f in mixed), "no fault on a checkpoint step"
    assert [f.name for f in mixed][-2:] == ["spike_data", "nan"], "data faults come last"
    events = [f.step for f in mixed[:-2]]
    assert events == sorted(events) and all(100 <= s <= 600 for s in events)
    assert not a["bug"].finish and a["bad_node"].bad_host in a["bad_node"].hosts


def test_quick_schedule_is_shorter_and_keeps_the_nan_last() -> None:
    q = CS.schedules(120, 15, 20, quick=True)["mixed"]
    assert {f.name for f in q.faults} == set(CS.QUICK_MIXED)
    assert q.faults[-1].name == "nan"


def test_sparse_schedule_spaces_its_faults_and_keeps_a_spacing_after_the_last() -> None:
    s = CS.sparse(7200, CS.SPARSE, 15, 50)
    assert s == CS.sparse(7200, CS.SPARSE, 15, 50) and s.steps == 4 * 7200
    assert sorted(f.name for f in s.faults) == sorted(CS.SPARSE)
    at = [f.step for f in s.faults]
    assert at == sorted(at) and all(f.step % 50 for f in s.faults)
    gaps = [b - a for a, b in zip([0, *at], [*at, s.steps], strict=True)]
    assert min(gaps) >= 0.8 * 7200


def test_trainer_flags_inject_the_schedule_but_not_the_drivers_faults() -> None:
    sched = CS.Schedule("mixed", 100, (CS.Fault("crash", 30), CS.Fault("hang_data", 50),
                                       CS.Fault("babysit_kill", 20)))  # fmt: skip
    flags = CS.trainer_flags(sched, 1, 8.0)
    assert flags == ["--crash-at", "30", "--hang-in-data-at", "50", "--fault-rank", "1",
                     "--hang-rank", "1"]  # fmt: skip
    node = CS.schedules(100, 1, 10)["bad_node"]
    assert CS.trainer_flags(node, 1, 8.0)[-2:] == ["--bad-host", "node-b"]


def test_productive_time_counts_new_steps_only_and_not_restart_gaps() -> None:
    steps = [(T0 + 0.1 * i, i, 2.0) for i in range(10)]  # steps 0-9, 0.1 s each
    steps += [(T0 + 20 + 0.1 * i, 5 + i, 2.0) for i in range(10)]  # restart at 5: 5-14
    prod, redone = CS.productive_s(steps, 0.1)
    assert redone == 5  # steps 5-9 again
    assert abs(prod - 15 * 0.1) < 1e-6  # 15 distinct steps; the 20 s gap is not work


def test_a_crash_seen_by_babysit_and_by_a_baseline() -> None:
    sched = CS.Schedule("mixed", 20, (CS.Fault("crash", 10),))
    events = [start(0)] + [step(1 + 0.1 * i, i) for i in range(11)]
    events += [fault(2.05, "crash", 10), start(10.0, 10)]
    events += [step(11 + 0.1 * i, 10 + i) for i in range(10)]
    events += [{"t": T0 + 13, "kind": "done", "rank": 0, "step": 20},
               {"t": T0 + 13, "kind": "eval", "rank": 0, "step": 20, "val_loss": 1.5}]  # fmt: skip
    bevents = [
        {"ts": T0 + 3.0, "kind": "attempt_ended",
         "data": {"outcome": "failed", "verdict": {"category": "nccl_error"}}},
        {"ts": T0 + 3.5, "kind": "restart_scheduled", "data": {}},
    ]  # fmt: skip
    b = CS.measure(events, marks(14), sched, 0.1, "babysit", bevents)
    f = b["faults"]["crash"]
    assert f["detected_after_s"] == 0.95 and f["category"] == "nccl_error"
    assert f["recovered_after_s"] == 8.0  # 3.0 -> the first step at 11.0
    assert b["reached_final_step"] and b["right_outcome"] and b["false_alarms"] == 0
    assert b["final_loss"] == 1.5 and b["steps_recomputed"] == 1 and b["attempts"] == 2
    loop = CS.measure(events, marks(14), sched, 0.1, "loop")
    assert loop["faults"]["crash"]["detected_after_s"] == 7.95  # its relaunch at 10.0
    assert loop["faults"]["crash"]["recovered_after_s"] == 1.0


def test_a_hang_the_baseline_never_noticed_is_null() -> None:
    sched = CS.Schedule("mixed", 100, (CS.Fault("hang_data", 10),))
    events = [start(0)] + [step(0.1 * i, i) for i in range(10)] + [fault(1.0, "hang_data", 10)]
    m = CS.measure(events, CS.Marks(T0, T0 + 60, None, True), sched, 0.1, "loop")
    assert m["faults"]["hang_data"] == {
        "injected": True, "detected_after_s": None, "recovered_after_s": None,
        "category": None,
    }  # fmt: skip
    assert not m["reached_final_step"] and not m["right_outcome"] and m["capped"]


def test_incidents_no_fault_called_for_are_false_alarms() -> None:
    sched = CS.Schedule("mixed", 100, (CS.Fault("slow_ckpt", 40), CS.Fault("crash", 60)))
    events = [start(0)] + [step(0.1 * i, i) for i in range(70)]
    events += [fault(4.0, "slow_ckpt", 40), fault(6.5, "crash", 60)]
    bevents = [
        {"ts": T0 + 1.0, "kind": "incident", "data": {"kind": "loss_spike"}},  # before any
        {"ts": T0 + 5.0, "kind": "incident", "data": {"kind": "hang"}},  # in the slow save
        {"ts": T0 + 6.6, "kind": "attempt_ended",
         "data": {"outcome": "failed", "verdict": {"category": "nccl_error"}}},  # the crash
        {"ts": T0 + 9.0, "kind": "attempt_ended", "data": {"outcome": "succeeded"}},
    ]  # fmt: skip
    m = CS.measure(events, marks(10), sched, 0.1, "babysit", bevents)
    assert m["false_alarms"] == 2
    assert m["faults"]["crash"]["category"] == "nccl_error"
    assert m["faults"]["slow_ckpt"]["detected_after_s"] == 1.0  # what babysit (wrongly) saw


def test_babysit_killed_and_started_again() -> None:
    sched = CS.Schedule("mixed", 100, (CS.Fault("babysit_kill", 20),))
    events = [start(0)] + [step(0.1 * i, i) for i in range(40)]
    mk = marks(5, babysit_killed_at=[T0 + 2.05], babysit_restarted_at=[T0 + 2.5])
    m = CS.measure(events, mk, sched, 0.1, "babysit", [])
    f = m["faults"]["babysit_kill"]
    assert f["detected_after_s"] is None and f["recovered_after_s"] == 0.45  # step 25, at 2.5
    assert m["steps_recomputed"] == 0


def test_the_bug_schedule_wants_a_stop_not_the_final_step() -> None:
    sched = CS.Schedule("bug", 100, (CS.Fault("bug", 30),), finish=False)
    events = [start(0)] + [step(0.1 * i, i) for i in range(30)] + [fault(3.0, "bug", 30)]
    stopped = CS.Marks(T0, T0 + 5, 3, False)
    assert CS.measure(events, stopped, sched, 0.1, "babysit", [])["right_outcome"]
    looped = CS.Marks(T0, T0 + 90, None, True)
    assert not CS.measure(events, looped, sched, 0.1, "loop")["right_outcome"]


def test_median_over_repeats() -> None:
    assert CS.median_of([1.0, None, 3.0, 2.0]) == 2.0
    assert CS.median_of([None, None]) is None
    assert CS.median_of([True, False]) is False
    assert CS.median_of([float("nan"), 4]) == 4.0


def test_the_sparse_page_renders_the_measured_figures_and_says_what_is_projected() -> None:
    import chaos  # benchmarks/ is on sys.path (see _load)

    fault = {"detected_after_s": 1.4, "recovered_after_s": 14.1, "category": "nccl_error"}
    doc = {
        "spacing_s": 300.0, "steps": 24000, "faults": [["crash", 17723]], "target": 0.95,
        "fault_free": {"time_to_final_step_s": 1214.0, "step_s": 0.05, "final_loss": 1.314},
        "babysit": {"reached_final_step": True, "exit_code": 0, "wall_s": 1279.0,
                    "progress_rate_vs_fault_free": 0.9492, "lost_per_fault_s": 21.7,
                    "goodput": 0.95, "false_alarms": 0, "attempts": 4, "steps_recomputed": 64,
                    "final_loss": 1.314, "faults": {"crash": fault}},
        "machine": {"cpu": "cpu", "cores": 2, "python": "3.11", "torch": "2.13",
                    "os": "Linux", "load_avg_at_start": [0.1]},
    }  # fmt: skip
    md = chaos.sparse_markdown(doc)
    assert "94.9%" in md and "**not met**" in md and "21.7 s" in md
    assert "| crash | 17723 | 1.4 | 14.1 | nccl_error |" in md
    assert "6.9 minutes" in md and "a projection from the measured" in md
    assert "fault per 1200 s of training" in md  # 24000 steps of 0.05 s, one fault
    doc["babysit"]["time_to_final_step_s"] = 1270.0
    assert "| time to the final step | 1270 s | 1214 s |" in chaos.sparse_markdown(doc)
