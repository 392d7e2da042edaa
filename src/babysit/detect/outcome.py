"""What killed an attempt, in plain words: the verdict on an ended attempt.

    judge(AttemptEvidence(exit=ExitStatus(1, None, t), errors=(err,), ...))
    # -> Verdict(category=Category.USER_CODE, transient=False, summary="...")

The triage of the attempt's logs (the knowledge base, the root cause among every rank's errors)
comes in as a Diagnosis and decides when a rule named the cause. Without one (triage failed, or
found no error), the Python errors the parser saw and the exit status decide: the start-up
errors no restart can fix, then signals and exit codes. Pure: no clock, no I/O.
"""

from __future__ import annotations

import hashlib
import re
import signal
from dataclasses import dataclass

from babysit.records import Category, Diagnosis, ExitStatus, PythonError, Verdict

# Errors that no restart can fix when they happen before the first step: the code or the
# command line is wrong.
FATAL_AT_START = frozenset(
    {
        "SyntaxError",
        "IndentationError",
        "TabError",
        "ImportError",
        "ModuleNotFoundError",
        "NameError",
        "UnboundLocalError",
        "AttributeError",
        "TypeError",
        "ArgumentError",
    }
)
_SIGNAL_HINTS = {
    signal.SIGKILL: "often the host's OOM killer, the scheduler, or a kill -9",
    signal.SIGSEGV: "a segmentation fault in native code (a driver, a C extension, a DataLoader "
    "worker)",
    signal.SIGBUS: "a bus error, often /dev/shm too small for DataLoader workers",
    signal.SIGABRT: "an abort, often the NCCL watchdog or a failed C++ assertion",
    signal.SIGTERM: "someone or something (the scheduler?) asked it to stop",
}


# Below this confidence, triage's verdict is context: the signal that killed the attempt says
# more, and a "no restart can help" from it does not stop the restarts.
TRUSTED = 0.5


@dataclass(frozen=True)
class AttemptEvidence:
    exit: ExitStatus
    errors: tuple[PythonError, ...] = ()  # Python errors seen in the output, in order
    first_step: int | None = None
    last_step: int | None = None
    hang: str | None = None  # the hang incident's message when babysit killed it as hung
    diagnosis: Diagnosis | None = None  # triage of the attempt's logs


def signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


def fingerprint(text: str) -> str:
    """A stable id of an error's signature: numbers, hex addresses and paths are normalised away
    (names in quotes stay), so the same failure hashes the same across attempts and nodes."""
    norm = re.sub(r"0x[0-9a-fA-F]+", "<hex>", text)
    norm = re.sub(r"(?:/[\w.\-]+)+", "<path>", norm)
    norm = re.sub(r"\d+", "<n>", norm)
    norm = re.sub(r"\s+", " ", norm).strip()
    return hashlib.sha1(norm.encode("utf-8", "replace")).hexdigest()[:16]


def _exact(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def judge(ev: AttemptEvidence) -> Verdict | None:
    """None for a clean exit; otherwise the verdict on why the attempt died."""
    d = ev.diagnosis
    if ev.hang is not None:
        # No fingerprint: hangs are counted by the restart budget, not by the repeat rule.
        # The logs' triage rides along when it found something (an NCCL timeout, a stuck rank),
        # but not the launcher's "I was told to stop": that is babysit's own kill.
        told = d is not None and d.rule is not None and d.category != Category.PREEMPTION
        return Verdict(
            Category.HANG,
            True,
            f"hung: {ev.hang}; babysit killed it to restart",
            diagnosis=d if told else None,
        )
    if ev.exit.exit_code == 0:
        return None
    if d is not None and d.rule is not None and (
        d.confidence >= TRUSTED or ev.exit.signal is None
    ):
        # A rule named the cause (or, for an unknown error, quoted it). A weak verdict (only
        # follow-on errors, a warning) may explain, never stop the restarts.
        weak = d.confidence < TRUSTED
        return Verdict(
            d.category,
            None if weak and d.transient is False else d.transient,
            d.summary,
            d.fingerprint,
            tuple(e.text for e in d.evidence[-3:]),
            d,
        )
    started = ev.first_step is not None
    from_tracebacks = [e for e in ev.errors if e.from_traceback]
    candidates = from_tracebacks or list(ev.errors)
    error = candidates[-1] if candidates else None
    if error is not None:
        quoted = error.text if len(error.text) <= 300 else error.text[:297] + "..."
        fp = fingerprint(f"{error.exc_type}: {error.message}")
        if error.exc_type in FATAL_AT_START and not started:
            return Verdict(
                Category.USER_CODE,
                False,
                f"{quoted} (raised before the first step: the code or the command line must be "
                "fixed; a restart cannot help)",
                fp,
                (error.text,),
            )
        return Verdict(Category.UNKNOWN, None, quoted, fp, (error.text,))
    if ev.exit.signal is not None:
        name = signal_name(ev.exit.signal)
        hint = (
            _SIGNAL_HINTS.get(signal.Signals(ev.exit.signal))
            if ev.exit.signal in _SIGNAL_HINTS
            else None
        )
        summary = f"killed by {name}" + (f" ({hint})" if hint else "")
        if d is not None and d.rule is not None:
            summary += f"; its log shows: {d.summary}"
        return Verdict(
            Category.UNKNOWN,
            None,
            summary,
            _exact(f"signal {name}"),
            diagnosis=d if d is not None and d.rule is not None else None,
        )
    if ev.exit.exit_code is None:
        return Verdict(
            Category.UNKNOWN,
            None,
            "ended while babysit was away and its launcher is gone: exit status unknown",
        )
    code = ev.exit.exit_code
    hint = ""
    if code > 128 and code - 128 in _SIGNAL_HINTS:
        hint = f" (128+{code - 128}: a child was killed by {signal_name(code - 128)})"
    return Verdict(
        Category.UNKNOWN,
        None,
        f"exited with code {code}{hint} and no Python error in its output",
        _exact(f"exit {code}"),
    )
