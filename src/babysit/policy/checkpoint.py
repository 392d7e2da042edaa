"""Which checkpoint to resume from: the newest complete one (before a step, for a rollback). Pure.

chosen, passed_over = choose_checkpoint(scan_results)
chosen, passed_over = choose_checkpoint(scan_results, before_step=1199)  # a rollback
"""

from __future__ import annotations

from collections.abc import Sequence

from babysit.records import Checkpoint


def choose_checkpoint(
    candidates: Sequence[Checkpoint], before_step: int | None = None
) -> tuple[Checkpoint | None, list[Checkpoint]]:
    """`candidates` newest first. Returns the newest complete one (with a step at or before
    `before_step` when given: a checkpoint without a step in its name cannot be placed, so a
    rollback never picks it) and the newer ones passed over for a problem (each with its
    `problem`), so the logbook can say why. Checkpoints too new for the rollback are not
    "passed over": nothing is wrong with them."""
    passed_over: list[Checkpoint] = []
    for ckpt in candidates:
        if before_step is not None and (ckpt.step is None or ckpt.step > before_step):
            continue
        if ckpt.complete:
            return ckpt, passed_over
        passed_over.append(ckpt)
    return None, passed_over
