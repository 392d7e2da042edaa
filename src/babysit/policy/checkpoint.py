"""Which checkpoint to resume from: the newest complete one. Pure.

chosen, passed_over = choose_checkpoint(scan_results)
"""

from __future__ import annotations

from collections.abc import Sequence

from babysit.records import Checkpoint


def choose_checkpoint(
    candidates: Sequence[Checkpoint],
) -> tuple[Checkpoint | None, list[Checkpoint]]:
    """`candidates` newest first. Returns the newest complete one and the newer ones passed over
    (each with its `problem`), so the logbook can say why."""
    passed_over: list[Checkpoint] = []
    for ckpt in candidates:
        if ckpt.complete:
            return ckpt, passed_over
        passed_over.append(ckpt)
    return None, passed_over
