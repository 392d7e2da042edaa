"""babysit.store.writes: the write records, carried out redacted, in both the database and the
events.jsonl mirror; identifiers kept as they are."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from babysit.records import Ban, Event, EventKind, Incident, IncidentKind, RunState
from babysit.store import Store
from babysit.store.sqlite import JSONL_NAME
from babysit.store.writes import (
    AddAttempt,
    AddBan,
    AddDiagnosis,
    AddEventRow,
    AddIncident,
    AddMetrics,
    AddNodeEvent,
    AddStacks,
    MirrorEvent,
    SetRunState,
    UpdateAttempt,
    redacted,
)

HF = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz123456"
AWS_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
API_KEY = "s3cr3t-api-key-value"
SECRETS = (HF, AWS_ID, AWS_SECRET, API_KEY, "hunter2")
ERROR = (
    f"OSError: 401 Client Error for https://user:hunter2@hub.example/x (HF_TOKEN={HF}); "
    f"aws_secret_access_key={AWS_SECRET} for {AWS_ID}"
)
ARGV = ["python", "train.py", f"--api-key={API_KEY}", "--token", HF, "--lr", "3e-4"]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store.open(tmp_path / "home")
    s.start_run("gpt", ["python", "train.py"], "/work", {})
    yield s
    s.close()


def strict(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise AssertionError(f"bare {name} in JSON")

    return json.loads(text, parse_constant=refuse)


def stored_bytes(home: Path) -> bytes:
    """Everything the store wrote to disk (the database, its WAL, the mirror)."""
    return b"".join(p.read_bytes() for p in sorted(home.iterdir()) if p.is_file())


def apply_all(store: Store) -> None:
    ev = Event("gpt", EventKind.ATTEMPT_STARTED, f"attempt 1 started: {' '.join(ARGV)}", 1.0, 1,
               {"argv": ARGV, "delay_s": float("inf"), "why": ERROR})
    doc = {
        "category": "unknown",
        "summary": ERROR,
        "action": "read it",
        "evidence": [{"file": "stderr.log", "line": 3, "text": ERROR}],
        "consequences": [],
        "suspect": {"kind": "code"},
        "fingerprint": "f00d",
        "transient": None,
        "confidence": 0.5,
    }
    for w in (
        AddAttempt("gpt", 1, {"started": 1.0, "argv": ARGV, "token": "gpt/1/abc",
                              "log_dir": "/h/runs/gpt/attempt-0001"}),
        UpdateAttempt("gpt", 1, {"summary": ERROR, "anomaly_message": ERROR}),
        SetRunState("gpt", RunState.FAILED, ERROR, 3),
        AddEventRow(ev),
        MirrorEvent(ev),
        AddIncident("gpt", 1, Incident(IncidentKind.LOSS_SPIKE, ERROR, 1.0, 3, "loss",
                                       float("inf"), 2.0)),
        AddNodeEvent(1.0, "gpu-1", "failure", ERROR, "gpt", 1),
        AddBan(Ban("gpu-1", ERROR, 1.0, None, 60.0, "policy", "gpt")),
        AddDiagnosis("gpt", 1, 1.0, doc),
        AddStacks("gpt", 1, 1.0, ERROR, {"summary": ERROR, "groups": [{"where": ERROR}]}),
    ):
        store.apply(w)


def test_no_secret_reaches_the_database_or_the_mirror(store: Store) -> None:
    apply_all(store)
    on_disk = stored_bytes(store.home)
    for secret in SECRETS:
        assert secret.encode() not in on_disk, secret
    assert b"HF_TOKEN=***" in on_disk and b"--api-key=***" in on_disk


def test_what_is_read_back_is_redacted_and_identifiers_are_kept(store: Store) -> None:
    apply_all(store)
    (a,) = store.attempts("gpt")
    assert a["argv"] == ["python", "train.py", "--api-key=***", "--token", "***", "--lr", "3e-4"]
    assert a["token"] == "gpt/1/abc" and a["log_dir"] == "/h/runs/gpt/attempt-0001"
    assert "HF_TOKEN=***" in a["summary"] and "https://user:***@hub" in a["anomaly_message"]
    assert "aws_secret_access_key=***" in store.run("gpt")["reason"]
    (d,) = store.diagnoses("gpt")
    assert d["fingerprint"] == "f00d" and d["document"]["fingerprint"] == "f00d"
    assert "HF_TOKEN=***" in d["document"]["evidence"][0]["text"]
    (e,) = store.events("gpt")
    assert e["data"]["argv"][2] == "--api-key=***"


def test_the_mirror_is_strict_json(store: Store) -> None:
    apply_all(store)
    (line,) = (store.home / JSONL_NAME).read_text().splitlines()
    got = strict(line)
    assert got["data"]["delay_s"] == "inf"
    assert got["data"]["argv"][4] == "***"
    (e,) = store.events("gpt")
    assert e["data"]["delay_s"] == "inf"


def test_redacted_is_pure_and_leaves_other_writes_alone() -> None:
    w = UpdateAttempt("gpt", 1, {"summary": ERROR, "last_step": 3})
    r = redacted(w)
    assert w.fields["summary"] == ERROR  # the caller's record is not changed
    assert r.fields == {"summary": redacted(w).fields["summary"], "last_step": 3}
    assert HF not in str(r)
    m = AddMetrics("gpt", 1, 1.0, 3, {"loss": 2.0})
    assert redacted(m) is m
