"""documents: an attempt's own verdict is not "seen before" when its logs are triaged."""

from __future__ import annotations

from babysit.documents import attempts_of, other_attempts, seen_before_line


def test_attempts_of_reads_the_run_and_attempt_from_log_paths() -> None:
    paths = [
        "/srv/.babysit/runs/pretrain-7b/attempt-0003/stderr.log",
        ".babysit/runs/pretrain-7b/attempt-0003/rank1.log",
        "runs/rep/attempt-0012",
        "C:\\work\\.babysit\\runs\\rep\\attempt-0002\\stdout.log",
        "/logs/slurm-1234.out",
        "/data/myruns/x/attempt-5/log",  # not a babysit home's `runs/`
    ]
    assert attempts_of(paths) == {("pretrain-7b", 3), ("rep", 12), ("rep", 2)}


def test_other_attempts_drops_only_the_attempt_being_triaged() -> None:
    seen = [
        {"run": "rep", "attempt": 2, "ts": 2.0, "host": None},
        {"run": "rep", "attempt": 1, "ts": 1.0, "host": None},
        {"run": "other", "attempt": 2, "ts": 0.5, "host": None},
    ]
    left = other_attempts(seen, {("rep", 2)})
    assert [(s["run"], s["attempt"]) for s in left] == [("rep", 1), ("other", 2)]
    assert other_attempts(seen, set()) == seen


def test_the_attempts_own_record_alone_is_not_seen_before() -> None:
    seen = [{"run": "rep", "attempt": 1, "ts": 1.0, "host": None}]
    assert seen_before_line(seen, None, 10.0) is not None  # the defect: counted itself
    assert seen_before_line(other_attempts(seen, {("rep", 1)}), None, 10.0) is None
