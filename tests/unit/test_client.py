"""babysit.client: a no-op outside babysit, never raises, writes JSONL that the parser reads."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from babysit import client
from babysit.parse.metrics import parse_metrics
from babysit.records import OutputLine


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    path = tmp_path / "metrics.jsonl"
    monkeypatch.setattr(client, "_client", client._Client())
    client._client.path = str(path)
    return path


def test_noop_outside_babysit(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(client.ENV_VAR, raising=False)
    monkeypatch.setattr(client, "_client", client._Client())
    client.log(1, loss=2.0)
    client.flush()
    assert client._client.thread is None and not client._client.queue


def test_logged_values_reach_the_file_and_parse(fresh: Path) -> None:
    client.log(10, loss=2.5, grad_norm=float("nan"), tokens=1024)
    client.flush()
    line = fresh.read_text().splitlines()[0]
    m = parse_metrics(OutputLine("client", 1, line, 0.0))
    assert m is not None and m.step == 10
    assert m.values["loss"] == 2.5 and math.isnan(m.values["grad_norm"])
    assert json.loads(line)["tokens"] == 1024.0


def test_never_raises_and_counts_what_it_drops(fresh: Path) -> None:
    client.log(1, loss=object(), name="text")  # not numbers
    client.flush()
    assert client.dropped() == 2
    client._client.path = str(fresh.parent / "no" / "such" / "dir.jsonl")
    client.log(2, loss=1.0)
    client.flush()  # the directory does not exist: dropped, not raised
    assert client.dropped() == 3


def test_full_queue_drops_instead_of_blocking(fresh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client, "QUEUE_MAX", 3)
    monkeypatch.setattr(client._client, "_start", lambda: None)  # a writer that never runs
    for i in range(5):
        client.log(i, loss=1.0)
    assert len(client._client.queue) == 3 and client.dropped() == 2
