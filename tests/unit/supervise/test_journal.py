"""Journal: writes retried in order while the store refuses them; what is dropped is told."""

from __future__ import annotations

from typing import Any

import babysit.supervise.journal as journal_module
from babysit.errors import StoreWriteError
from babysit.store.writes import ReleaseRun
from babysit.supervise.journal import Journal


class RefusingStore:
    """Refuses every write while `full`."""

    def __init__(self) -> None:
        self.full = True
        self.rows: list[str] = []

    def apply(self, w: ReleaseRun) -> None:
        if self.full:
            raise StoreWriteError("disk full")
        self.rows.append(w.run)


def test_kept_writes_survive_and_dropped_samples_are_told(monkeypatch: Any) -> None:
    monkeypatch.setattr(journal_module, "MAX_PENDING", 3)
    store = RefusingStore()
    said: list[tuple[str, str]] = []
    j = Journal(store, "r", lambda level, msg: said.append((level, msg)), lambda: 0.0)  # type: ignore[arg-type]
    for i in range(3):
        j.write(ReleaseRun(f"event {i}"))
    for i in range(2):
        j.write(ReleaseRun(f"sample {i}"), droppable=True)
    assert said[0][0] == "warn" and "Supervision goes on" in said[0][1]
    store.full = False
    j.flush()
    assert store.rows == ["event 0", "event 1", "event 2"]
    assert said[-1] == (
        "info",
        "the store accepts writes again; attempts, events and incidents were all kept, but 2 "
        "metrics sample(s) were dropped meanwhile (the run's own logs still hold them)",
    )


def test_an_outage_without_drops_lost_nothing() -> None:
    store = RefusingStore()
    said: list[str] = []
    j = Journal(store, "r", lambda level, msg: said.append(msg), lambda: 0.0)  # type: ignore[arg-type]
    j.write(ReleaseRun("event"))
    store.full = False
    j.flush()
    assert store.rows == ["event"] and said[-1].endswith("nothing was lost")
