"""Triage an ended attempt and keep the verdict: the wiring between `triage`, the kernel log,
the store and the operator's terminal. Used by `babysit run` (after each failed attempt) and
`babysit watch`.

    pm = Postmortem(load_knowledge(), say, kernel=True)
    d = pm.diagnose([attempt_dir / "stdout.log", attempt_dir / "stderr.log"], started=t0)
    doc, seen = pm.document(d, store)       # the JSON document, and where it was seen before

Never raises: a triage that fails (a bug, an unreadable file) is reported and yields None, so
the attempt is judged by its exit status alone and supervision goes on.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from babysit.documents import diagnosis_document, seen_before_line
from babysit.errors import BabysitError
from babysit.records import Diagnosis, Level, Say
from babysit.sources.kernel import kernel_lines
from babysit.store import Store
from babysit.triage import LONG_LINES_NOTE, Knowledge, triage_files

# The next attempt waits for the verdict: a 1 GB log takes ~3 s (~8 s without grep); a
# pathological one stops here.
BUDGET_S = 60.0


class Postmortem:
    def __init__(
        self, kb: Knowledge, say: Say, kernel: bool = True, budget_s: float | None = BUDGET_S
    ) -> None:
        self.kb = kb
        self.say = say
        self.kernel = kernel
        self.budget_s = budget_s

    def diagnose(
        self, paths: Sequence[Path], started: float, trained: bool | None = None
    ) -> Diagnosis | None:
        """The verdict on the logs (and the kernel log since `started`); `trained`: see
        triage_files."""
        existing = [p for p in paths if p.exists()]
        try:
            extra = []
            if self.kernel:
                lines = kernel_lines(started)
                if lines:
                    extra.append(("<kernel log>", lines))
            report = triage_files(
                existing, self.kb, extra_lines=extra, budget_s=self.budget_s, trained=trained
            )
            for note in report.skipped:
                if LONG_LINES_NOTE not in note:  # unreadable, cut short, out of time
                    self.say(Level.WARN, f"triage could not read all of it: {note}")
            return report.diagnosis
        except Exception as exc:
            self.say(
                Level.WARN,
                f"triage of {', '.join(map(str, existing)) or 'the attempt'} failed "
                f"({type(exc).__name__}: {exc}); judging the attempt by its exit status only",
            )
            return None

    def tell(self, d: Diagnosis, seen: str | None) -> None:
        """What to do, and whether the failure was seen before, to the operator."""
        self.say(Level.INFO, f"what to do: {d.action}")
        if seen is not None:
            self.say(Level.WARN, f"seen before: {seen}")

    def document(
        self, d: Diagnosis, store: Store | None, now: float | None = None
    ) -> tuple[dict[str, Any], str | None]:
        """The verdict's JSON document (with seen_before from the store) and the line that
        says where it was seen before ('third time on node gpu-17 this week')."""
        seen: list[dict[str, Any]] = []
        if store is not None and d.fingerprint is not None:
            try:
                seen = store.seen_before(d.fingerprint)
            except BabysitError as exc:
                self.say(Level.WARN, f"could not look up earlier failures in the store: {exc}")
        now = time.time() if now is None else now
        return diagnosis_document(d, seen), seen_before_line(seen, d.suspect.host, now)
