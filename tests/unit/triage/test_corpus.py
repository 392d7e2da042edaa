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

    assert len(CASES) >= 300
    names = {c.value for c in Category}
    suspects = {
        "node", "network", "filesystem", "code", "data", "config", "scheduler", "numerics",
        "unknown",
    }
    for c in CASES:
        assert c["category"] in names, c["file"]
        assert c["transient"] in (True, False, "unknown"), c["file"]
        assert c["suspect"] in suspects, c["file"]
        assert Path(str(c["path"])).is_file(), c["file"]
        assert str(c["source"]).startswith("http"), c["file"]
    assert len({c["category"] for c in CASES}) >= 14
    sources = [str(c["source"]) for c in CASES]
    assert len(sources) == len(set(sources)) or len(set(sources)) > 0.98 * len(sources)


def test_the_split_is_by_project_and_holds_out_about_a_quarter() -> None:
    projects = {str(c["project"]) for c in CASES}
    held = {str(c["project"]) for c in CASES if c["held_out"]}
    assert len(projects) >= 60
    assert 0.15 < len(held) / len(projects) < 0.35
    for p in projects:  # a project is wholly in one part
        assert len({bool(c["held_out"]) for c in CASES if c["project"] == p}) == 1, p
    assert BENCH.project_of({"source": "https://github.com/DeepSpeedAI/DeepSpeed/issues/1"}) == (
        "microsoft/deepspeed"
    )


RULE_WRITING = [c for c in CASES if not c["held_out"]]


def test_the_logs_whose_bug_only_the_thread_knew_are_few_and_in_the_corpus() -> None:
    # benchmarks/quality_triage.py lists them apart from the violations (LOG_CANNOT_TELL): 8 of
    # about 3900 logs, once the mixes kept a set-up's phase (10 of 3500 before: three set-up
    # failures read as a restart's among 64 ranks that had trained); 4 of about 4500 once a
    # collective's timeout stopped promising a restart; 5 of about 5900 with a third terminal that
    # closed under its job (zzt_stackex/001); 6 of about 7000 with a fourth (nohup did not
    # shield torchrun's agent: zzzv_domainllmrepos/001); 8 of about 9400 with two more, from
    # the batch collected on signals (zzzzzi_signalsrepos)
    files = {str(c["file"]) for c in CASES}
    assert files >= BENCH.LOG_CANNOT_TELL and len(BENCH.LOG_CANNOT_TELL) <= 8


def test_a_mix_keeps_the_phase_of_the_log_it_hides(tmp_path: Path) -> None:
    # a set-up failure among 64 ranks that trained would read as a restart's: the mix keeps it
    # in its set-up (the other ranks' set-up lines, their timeouts in the first collective)
    from babysit.triage import load_knowledge, triage_files
    from babysit.triage.blocks import first_progress

    kb = load_knowledge()
    # (a CUDA error no rule calls the code's or the device's: before the first step, the set-up's;
    # after steps, the log cannot tell)
    crash = ["Traceback (most recent call last):", '  File "train.py", line 88, in <module>',
             "RuntimeError: CUDA error: unspecified launch failure"]  # fmt: skip
    for trained in (False, True):
        mix = tmp_path / f"mix-{trained}.log"
        BENCH.make_mix(crash, mix, ranks=8, seed=1, trained=trained)
        text = mix.read_text(encoding="utf-8")
        assert (first_progress(text.lower().encode()) >= 0) is trained
        assert ("SeqNum=1," in text) is not trained
        alone = tmp_path / f"alone-{trained}.log"
        alone.write_text("\n".join(crash if not trained else ["step: 3  loss: 2.5", *crash]))
        d, a = triage_files([mix], kb).diagnosis, triage_files([alone], kb).diagnosis
        assert (d.category, d.transient) == (a.category, a.transient), trained


def test_a_mix_hides_a_log_as_the_rank_its_own_lines_name(tmp_path: Path) -> None:
    # a log whose lines carry torchrun's label of their rank is that rank's: a line never carries
    # two ranks' labels, and that rank is the one that never reports a timeout
    crash = ["[rank5]:Traceback (most recent call last):",
             '[rank5]:  File "train.py", line 88, in <module>',
             "[rank5]:RuntimeError: only Tensors of floating point dtype can require gradients",
             "a line without a label"]  # fmt: skip
    mix = tmp_path / "mix.log"
    BENCH.make_mix(crash, mix, ranks=8, seed=1, trained=False)
    lines = mix.read_text(encoding="utf-8").splitlines()
    assert crash[0] in lines and "[rank5]:a line without a label" in lines
    assert not any(line.startswith("[rank5]:[rank") for line in lines)
    assert not any("[Rank 5] Watchdog" in line for line in lines)
    assert any("rank      : 5 (local_rank: 5)" in line for line in lines)


@pytest.mark.parametrize("rare", [None, False], ids=["as-is", "big-log-needles"])
def test_category_accuracy_and_never_a_fatal_cause_called_transient(rare: bool | None) -> None:
    # Floors below which a change is a regression (the figures, with the issues' targets, are
    # benchmarks/quality_triage.py's): the corpus doubled with logs no rule was written for.
    # The big-log path greps each log as a file (two passes, a process each): every fourth log
    # (every other one until CI neared its 40 minutes; quality_triage.py reads them all).
    r = BENCH.evaluate(RULE_WRITING if rare is None else RULE_WRITING[::4], rare, False)
    assert r["accuracy"] >= (0.77 if rare is None else 0.69), r["wrong"]
    assert r["transient_violations"] == []


def test_the_held_out_quarter_stays_above_its_floor() -> None:
    # Its misses are not printed: they stay out of rule-writing until the next rotation.
    r = BENCH.evaluate([c for c in CASES if c["held_out"]], None, False)
    # 0.80 until three batches of logs collected after the rules (d_, e_, f_: 55-65% before any
    # rule was written against them) joined it; 0.77 until batches n_ to r_ (65-77% on arrival)
    # did; 0.75 until batches t_ to x_ (40-81% on arrival; the platform's and other
    # accelerators' logs at 40-44%) did; 0.72 until batches zd_ and ze_ (41-92% on arrival) did;
    # 0.70 until batches zf_ (47-59% on arrival) did; a floor against regressions, not the target.
    assert r["accuracy"] >= 0.68, f"held-out accuracy {r['accuracy']:.3f}"
    # Restart or not, null counted wrong (issue 12's measure): 91% since a log that ends without
    # an error before its first step is the set-up's.
    said = r["restart_or_not"]["all"]
    right = said.get("right", 0) / sum(said.values())
    assert right >= 0.88, f"held-out restart-or-not {right:.3f}: {said}"
    assert not r["transient_violations"], "a bug called transient in the held-out quarter"


def test_root_causes_hidden_among_64_ranks_of_cascade() -> None:
    r = BENCH.evaluate(RULE_WRITING[::4], None, True)  # 64 ranks each: every fourth log
    # 0.77 until fifteen batches collected blind (za_ to zc_: 39-90% on arrival) joined it
    assert r["accuracy"] >= 0.75, r["wrong"]
    assert r["transient_violations"] == []
