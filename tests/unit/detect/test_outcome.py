"""babysit.detect.outcome: judge() and fingerprint()."""

from __future__ import annotations

import signal

import pytest

from babysit.detect.outcome import FATAL_AT_START, AttemptEvidence, fingerprint, judge, signal_name
from babysit.records import (
    Category,
    Diagnosis,
    ExitStatus,
    LogLine,
    PythonError,
    Suspect,
    Verdict,
)

T = 1000.0


def err(exc_type: str, message: str, text: str | None = None) -> PythonError:
    return PythonError(exc_type, message, text or f"{exc_type}: {message}", T)


def exited(code: int) -> ExitStatus:
    return ExitStatus(code, None, T)


def killed(sig: int) -> ExitStatus:
    return ExitStatus(None, sig, T)


def verdict(ev: AttemptEvidence) -> Verdict:
    v = judge(ev)
    assert v is not None
    return v


MNF = err("ModuleNotFoundError", "No module named 'foo'")


def test_clean_exit_is_none() -> None:
    assert judge(AttemptEvidence(exited(0))) is None


def test_clean_exit_with_errors_in_output_is_still_none() -> None:
    assert judge(AttemptEvidence(exited(0), errors=(MNF,), first_step=0, last_step=5)) is None


def test_module_not_found_before_first_step_is_user_code() -> None:
    v = verdict(AttemptEvidence(exited(1), errors=(MNF,)))
    assert v.category == Category.USER_CODE
    assert v.transient is False
    assert "No module named 'foo'" in v.summary
    assert "before the first step" in v.summary
    assert v.fingerprint == fingerprint("ModuleNotFoundError: No module named 'foo'")
    assert v.evidence == (MNF.text,)


@pytest.mark.parametrize("exc_type", sorted(FATAL_AT_START))
def test_every_fatal_type_before_first_step(exc_type: str) -> None:
    v = verdict(AttemptEvidence(exited(1), errors=(err(exc_type, "x"),)))
    assert (v.category, v.transient) == (Category.USER_CODE, False)


def test_same_error_after_progress_is_not_fatal() -> None:
    v = verdict(AttemptEvidence(exited(1), errors=(MNF,), first_step=0, last_step=300))
    assert v.transient is not False
    assert v.category == Category.UNKNOWN
    assert MNF.text in v.summary
    assert v.fingerprint == fingerprint("ModuleNotFoundError: No module named 'foo'")


def test_error_after_first_step_without_progress() -> None:
    v = verdict(AttemptEvidence(exited(1), errors=(MNF,), first_step=100, last_step=100))
    assert v.transient is None  # it started: a late import can be flaky storage
    assert v.category == Category.UNKNOWN
    assert MNF.text in v.summary


def test_non_fatal_error_before_first_step_is_unknown() -> None:
    e = err("RuntimeError", "CUDA error: an illegal memory access was encountered")
    v = verdict(AttemptEvidence(exited(1), errors=(e,)))
    assert (v.category, v.transient) == (Category.UNKNOWN, None)
    assert e.text in v.summary


def test_the_last_error_is_judged() -> None:
    v = verdict(AttemptEvidence(exited(1), errors=(err("RuntimeError", "boom"), MNF)))
    assert v.category == Category.USER_CODE
    assert v.evidence == (MNF.text,)


def test_traceback_error_beats_a_later_look_alike_line() -> None:
    real = PythonError(
        "ModuleNotFoundError",
        "No module named 'foo'",
        "ModuleNotFoundError: No module named 'foo'",
        T,
        from_traceback=True,
    )
    noise = err("RuntimeError", "logged, not raised")
    v = verdict(AttemptEvidence(exited(1), errors=(real, noise)))
    assert v.category == Category.USER_CODE
    assert v.evidence == (real.text,)


def test_without_traceback_errors_the_last_line_is_judged() -> None:
    v = verdict(AttemptEvidence(exited(1), errors=(MNF, err("RuntimeError", "later"))))
    assert v.category == Category.UNKNOWN
    assert "later" in v.summary


def test_long_error_text_is_shortened() -> None:
    long = err("ValueError", "x" * 1000)
    v = verdict(AttemptEvidence(exited(1), errors=(long,), first_step=0, last_step=9))
    assert v.summary.endswith(long.text[:297] + "...")
    assert long.text[:298] not in v.summary
    assert v.evidence == (long.text,)  # evidence keeps the whole line


def test_error_wins_over_signal() -> None:
    v = verdict(AttemptEvidence(killed(signal.SIGKILL), errors=(MNF,)))
    assert v.category == Category.USER_CODE


def test_sigkill_mentions_oom_killer() -> None:
    v = verdict(AttemptEvidence(killed(signal.SIGKILL)))
    assert v.summary.startswith("killed by SIGKILL")
    assert "OOM killer" in v.summary
    assert (v.category, v.transient) == (Category.UNKNOWN, None)
    assert v.fingerprint == fingerprint("signal SIGKILL")


@pytest.mark.parametrize(
    ("sig", "words"),
    [
        (signal.SIGSEGV, "segmentation fault"),
        (signal.SIGBUS, "/dev/shm"),
        (signal.SIGABRT, "NCCL watchdog"),
        (signal.SIGTERM, "asked it to stop"),
    ],
)
def test_signal_hints(sig: int, words: str) -> None:
    v = verdict(AttemptEvidence(killed(sig)))
    assert signal.Signals(sig).name in v.summary
    assert words in v.summary


def test_signal_without_hint() -> None:
    v = verdict(AttemptEvidence(killed(signal.SIGUSR1)))
    assert v.summary == "killed by SIGUSR1"


def test_unknown_signal_number() -> None:
    v = verdict(AttemptEvidence(killed(200)))
    assert v.summary == "killed by signal 200"


def test_different_signals_differ() -> None:
    a = verdict(AttemptEvidence(killed(signal.SIGKILL))).fingerprint
    b = verdict(AttemptEvidence(killed(signal.SIGSEGV))).fingerprint
    assert a != b


def test_exit_code_137_hint() -> None:
    v = verdict(AttemptEvidence(exited(137)))
    assert "exited with code 137" in v.summary
    assert "128+9" in v.summary
    assert "SIGKILL" in v.summary
    assert "no Python error" in v.summary


def test_exit_code_without_hint() -> None:
    v = verdict(AttemptEvidence(exited(3)))
    assert v.summary == "exited with code 3 and no Python error in its output"
    assert v.fingerprint is not None
    assert v.fingerprint != verdict(AttemptEvidence(exited(4))).fingerprint
    assert (v.category, v.transient) == (Category.UNKNOWN, None)


def test_exit_code_above_128_without_a_hinted_signal() -> None:
    v = verdict(AttemptEvidence(exited(128 + signal.SIGUSR1)))
    assert "128+" not in v.summary


def test_exit_codes_differ_in_fingerprint() -> None:
    one = verdict(AttemptEvidence(exited(1))).fingerprint
    oom = verdict(AttemptEvidence(exited(137))).fingerprint
    assert one != oom


def test_unknown_exit_status() -> None:
    v = verdict(AttemptEvidence(ExitStatus(None, None, T)))
    assert "exit status unknown" in v.summary
    assert v.fingerprint is None
    assert v.transient is None


def test_signal_name() -> None:
    assert signal_name(9) == "SIGKILL"
    assert signal_name(999) == "signal 999"


# -- fingerprint ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            "CUDA out of memory. Tried to allocate 2.00 GiB",
            "CUDA out of memory. Tried to allocate 512.00 GiB",
        ),
        ("bad pointer 0x7f3a2b00c0de", "bad pointer 0xDEADBEEF"),
        (
            "No such file: /data/shards/shard_0001.bin",
            "No such file: /mnt/other/place/shard_9999.bin",
        ),
        ("NCCL error in: ../torch/csrc/x.cpp:219", "NCCL error in: ../torch/csrc/y.cpp:1"),
        ("rank 3 timed out after 600000ms", "rank 12 timed out after 1800000ms"),
        ("a   b\tc", "a b c"),
        ("  padded  ", "padded"),
    ],
)
def test_fingerprint_ignores_variable_parts(a: str, b: str) -> None:
    assert fingerprint(a) == fingerprint(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("ModuleNotFoundError: No module named 'foo'", "ImportError: No module named 'foo'"),
        (
            "ModuleNotFoundError: No module named 'foo'",
            "ModuleNotFoundError: No module named 'bar'",
        ),
        ("CUDA out of memory", "NCCL timeout"),
        ("KeyError: 'lr'", "KeyError: 'momentum'"),
    ],
)
def test_fingerprint_differs_for_different_errors(a: str, b: str) -> None:
    assert fingerprint(a) != fingerprint(b)


def test_fingerprint_shape() -> None:
    fp = fingerprint("anything")
    assert len(fp) == 16
    int(fp, 16)
    assert fingerprint("anything") == fp  # deterministic
    assert len(fingerprint("")) == 16
    assert len(fingerprint("\udcff lone surrogate")) == 16  # never raises on odd text




# -- with the triage of the attempt's logs ---------------------------------------------------


def diagnosis(category: Category, transient: bool | None, rule: str | None = "r") -> Diagnosis:
    return Diagnosis(
        category,
        transient,
        Suspect("node", host="gpu-17"),
        f"{category.value} summary",
        "do this",
        (LogLine("stderr.log", 3, "the line"),),
        fingerprint="f" * 16 if rule else None,
        confidence=0.9,
        rule=rule,
    )


def test_a_triage_rule_decides_the_verdict() -> None:
    d = diagnosis(Category.CUDA_OOM, False)
    v = verdict(AttemptEvidence(exited(1), (MNF,), diagnosis=d))
    assert (v.category, v.transient, v.summary) == (Category.CUDA_OOM, False, "cuda_oom summary")
    assert v.fingerprint == d.fingerprint and v.diagnosis is d
    assert v.evidence == ("the line",)


def test_triage_that_found_nothing_leaves_the_exit_status_to_decide() -> None:
    d = diagnosis(Category.HANG, None, rule=None)  # "no error found": a guess from an absence
    v = verdict(AttemptEvidence(killed(signal.SIGKILL), diagnosis=d))
    assert v.category == Category.UNKNOWN and "SIGKILL" in v.summary and v.diagnosis is None


def test_a_clean_exit_ignores_triage() -> None:
    assert judge(AttemptEvidence(exited(0), diagnosis=diagnosis(Category.NETWORK, True))) is None


def test_a_hang_keeps_the_triage_only_when_it_found_something() -> None:
    found = diagnosis(Category.NCCL_TIMEOUT, True)
    v = verdict(AttemptEvidence(killed(signal.SIGKILL), hang="no progress", diagnosis=found))
    assert v.category == Category.HANG and v.diagnosis is found
    guess = diagnosis(Category.HANG, None, rule=None)
    v = verdict(AttemptEvidence(killed(signal.SIGKILL), hang="no progress", diagnosis=guess))
    assert v.diagnosis is None


def weak_diagnosis(category: Category, transient: bool | None) -> Diagnosis:
    d = diagnosis(category, transient)
    return Diagnosis(d.category, d.transient, d.suspect, d.summary, d.action, d.evidence,
                     fingerprint=d.fingerprint, confidence=0.35, rule="launcher.child_failed")


def test_a_weak_triage_does_not_hide_the_signal_that_killed_it() -> None:
    d = weak_diagnosis(Category.NUMERICAL, None)  # only DeepSpeed OVERFLOW lines in the log
    v = verdict(AttemptEvidence(killed(signal.SIGKILL), diagnosis=d))
    assert v.category == Category.UNKNOWN and v.summary.startswith("killed by SIGKILL")
    assert "its log shows: numerical summary" in v.summary and v.diagnosis is d


def test_a_weak_triage_never_stops_the_restarts() -> None:
    v = verdict(AttemptEvidence(exited(1), diagnosis=weak_diagnosis(Category.USER_CODE, False)))
    assert v.category == Category.USER_CODE and v.transient is None
