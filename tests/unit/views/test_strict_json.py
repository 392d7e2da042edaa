"""JSON is strict everywhere babysit prints it: no bare NaN or Infinity (jq and JavaScript refuse
the whole document); a non-finite number is the string "nan", "inf" or "-inf", as in
`babysit watch --json`."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from babysit.cli import cli
from babysit.records import Event, EventKind, Incident, IncidentKind
from babysit.store import Store
from babysit.strictjson import dumps, finite
from babysit.views.document import run_document


def strict(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise AssertionError(f"bare {name} in JSON: {text[:200]}")

    return json.loads(text, parse_constant=refuse)


def test_finite_and_dumps() -> None:
    value = {"a": math.inf, "b": [-math.inf, math.nan, 1.5], "c": (1, "x"), 2: None}
    assert finite(value) == {"a": "inf", "b": ["-inf", "nan", 1.5], "c": [1, "x"], "2": None}
    assert strict(dumps(value)) == finite(value)
    with pytest.raises(ValueError):
        json.dumps({"a": math.inf}, allow_nan=False)  # what a regression runs into


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    with Store.open(home) as store:
        store.start_run("gpt", ["python", "train.py"], "/w", {})
        store.add_attempt("gpt", 1, {"started": 1.0})
        store.add_incident("gpt", 1, Incident(
            IncidentKind.LOSS_SPIKE, "loss spiked", 2.0, 5, "loss", math.inf, -math.inf))
        store.add_event_row(Event("gpt", EventKind.NOTE, "n", 3.0, 1, {"x": 1.0}))
    return home


def test_run_document_is_strict(tmp_path: Path) -> None:
    with Store.open(_home(tmp_path), create=False) as store:
        doc = run_document(store.run("gpt"), store.attempts("gpt"), store.events("gpt"), False,
                           store.incidents("gpt"))
    (inc,) = strict(json.dumps(doc, allow_nan=False))["incidents"]
    assert (inc["value"], inc["baseline"]) == ("inf", "-inf")


@pytest.mark.parametrize(
    "args",
    [["status", "gpt", "--json"], ["status", "--json"], ["logbook", "gpt", "--format", "json"]],
)
def test_status_and_logbook_json_are_strict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            args: list[str]) -> None:
    home = _home(tmp_path)
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(cli, [*args, "--home", str(home)])
    assert res.exit_code == 0, res.output
    doc = strict(res.stdout)
    run = doc["runs"][0] if "runs" in doc else doc
    (inc,) = run["incidents"]
    assert (inc["value"], inc["baseline"]) == ("inf", "-inf")


@pytest.mark.parametrize(
    ("value", "shown"),
    [(1e308, "1e+308"), (-1e20, "-1e+20"), (91234.0, "91,234"), (2.31, "2.31"), ("inf", "inf")],
)
def test_live_figures_are_compact(value: Any, shown: str) -> None:
    from babysit.views.live import live_lines

    live = {"step": None, "total_steps": None, "loss": value, "throughput": {},
            "since_last_step_s": None, "since_last_output_s": None, "last_incident": None}
    assert live_lines(live) == [f"loss {shown}"]
