"""Triage against the labelled corpus of real failure logs (tests/corpus): the quality floor.

The full report, with the confusion matrix, is `python benchmarks/quality_triage.py --mixes`.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[3]


def _bench() -> ModuleType:
    bench_dir = str(ROOT / "benchmarks")
    if bench_dir not in sys.path:  # the benchmark imports its _common helper
        sys.path.insert(0, bench_dir)
    spec = importlib.util.spec_from_file_location("quality_triage", ROOT / "benchmarks" /
                                                  "quality_triage.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


BENCH = _bench()
CASES = BENCH.load_cases(ROOT / "tests" / "corpus")


def test_the_corpus_is_big_enough_and_labelled_with_the_shared_categories() -> None:
    from babysit.records import Category

    assert len(CASES) >= 80
    names = {c.value for c in Category}
    for c in CASES:
        assert c["category"] in names, c["file"]
        assert c["transient"] in (True, False, "unknown"), c["file"]
        assert Path(str(c["path"])).is_file(), c["file"]
        assert str(c["source"]).startswith("http"), c["file"]
    assert len({c["category"] for c in CASES}) >= 14


@pytest.mark.parametrize("rare", [None, False], ids=["as-is", "big-log-needles"])
def test_category_accuracy_and_never_a_fatal_cause_called_transient(rare: bool | None) -> None:
    r = BENCH.evaluate(CASES, rare, False)
    assert r["accuracy"] >= (0.95 if rare is None else 0.9), r["wrong"]
    assert r["transient_violations"] == []


def test_the_held_out_set_alone() -> None:
    held = [c for c in CASES if c["set"] == "holdout"]
    r = BENCH.evaluate(held, None, False)
    assert len(held) >= 40 and r["accuracy"] >= 0.9, r["wrong"]


def test_root_causes_hidden_among_64_ranks_of_cascade() -> None:
    r = BENCH.evaluate(CASES[::3], None, True)
    assert r["accuracy"] >= 0.95, r["wrong"]
    assert r["transient_violations"] == []
