"""Postmortem: triage wired to the kernel log and the store; it never raises."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

import babysit.supervise.postmortem as pm_module
from babysit.records import Category
from babysit.sources.kernel import parse_iso_dmesg
from babysit.store import Store
from babysit.supervise.postmortem import Postmortem
from babysit.triage import load_knowledge

KB = load_knowledge()


def collect() -> tuple[list[tuple[str, str]], object]:
    said: list[tuple[str, str]] = []
    return said, lambda level, msg: said.append((level, msg))


def test_diagnose_reads_the_logs_and_the_kernel_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "stderr.log"
    log.write_text("[rank0]:RuntimeError: CUDA error: an illegal memory access was encountered\n")
    kernel = ["2026-11-30T01:02:03,000000+00:00 NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has "
              "fallen off the bus."]
    monkeypatch.setattr(pm_module, "kernel_lines", lambda since: kernel)
    said, say = collect()
    d = Postmortem(KB, say, kernel=True).diagnose([log, tmp_path / "missing.log"], 0.0)  # type: ignore[arg-type]
    assert d is not None and d.category == Category.GPU_HARDWARE
    assert any(e.file == "<kernel log>" for e in d.evidence)
    assert said == []


def test_a_triage_that_fails_is_reported_and_yields_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*a: object, **k: object) -> object:
        raise RuntimeError("bug in triage")

    monkeypatch.setattr(pm_module, "triage_files", boom)
    said, say = collect()
    assert Postmortem(KB, say, kernel=False).diagnose([tmp_path / "x.log"], 0.0) is None  # type: ignore[arg-type]
    assert said and said[0][0] == "warn" and "bug in triage" in said[0][1]
    assert "exit status only" in said[0][1]


def test_document_says_where_it_was_seen_before(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_text("gpu-17: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB\n")
    _, say = collect()
    pm = Postmortem(KB, say, kernel=False)
    d = pm.diagnose([log], 0.0)
    assert d is not None and d.suspect.host == "gpu-17"
    with Store.open(tmp_path / "home") as store:
        doc, seen = pm.document(d, store, now=10_000.0)
        assert doc["seen_before"] == [] and seen is None
        for attempt in (1, 2):
            store.add_diagnosis("r", attempt, 9_000.0 + attempt, doc)
        doc, seen = pm.document(d, store, now=10_000.0)
    assert [s["attempt"] for s in doc["seen_before"]] == [2, 1]
    assert seen == "third time on node gpu-17 this week"


def test_kernel_lines_since_the_attempt_started() -> None:
    lines = [
        "2026-11-30T00:00:00,000000+00:00 old message",
        "2026-11-30T01:00:00,000000+00:00 NVRM: Xid (PCI:0000:3b:00): 48, pid=1, DBE",
        "continuation without a stamp",
        "not iso at all",
    ]
    t0 = datetime(2026, 11, 30, 0, 30, tzinfo=timezone.utc).timestamp()
    assert parse_iso_dmesg(lines, t0) == lines[1:]  # the old message is before the attempt
    assert parse_iso_dmesg(lines, t0 - 3600) == lines


def test_another_users_oom_kill_is_not_ours() -> None:
    stamp = "2026-11-30T01:00:00,000000+00:00"
    theirs = [
        f"{stamp} python3 invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE), order=0",
        f"{stamp} Mem-Info:",
        f"{stamp} oom-kill:constraint=CONSTRAINT_NONE,task=python,pid=42,uid=1001",
        f"{stamp} Out of memory: Killed process 42 (python) UID:1001 pgtables:1kB",
    ]
    ours = [
        f"{stamp} python invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE), order=0",
        f"{stamp} Out of memory: Killed process 43 (python) UID:1000 pgtables:1kB",
    ]
    xid = f"{stamp} NVRM: Xid (PCI:0000:3b:00): 79, pid=7, GPU has fallen off the bus."
    t0 = datetime(2026, 11, 30, 0, 30, tzinfo=timezone.utc).timestamp()
    assert parse_iso_dmesg([*theirs, *ours, xid], t0, uid=1000) == [*ours, xid]


def test_a_log_it_could_not_read_whole_is_told(tmp_path: Path) -> None:
    import gzip

    cut = tmp_path / "stderr.log.gz"
    whole = gzip.compress(b"iter 1: loss 2.0\n" * 50_000)
    cut.write_bytes(whole[: len(whole) // 2])
    said, say = collect()
    Postmortem(KB, say, kernel=False).diagnose([cut], 0.0)  # type: ignore[arg-type]
    assert said and said[0][0] == "warn" and "could not read all of it" in said[0][1]
    assert "stderr.log.gz" in said[0][1]
