"""Durations as people type them (90s, 1h30m), in flags and babysit.toml; one ISO format."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from babysit.cli import cli
from babysit.config import build_config, load_config
from babysit.durations import format_duration, iso_utc, parse_duration
from babysit.errors import ConfigError


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90s", 90.0),
        ("5m", 300.0),
        ("2h", 7200.0),
        ("1h30m", 5400.0),
        ("1h 30m", 5400.0),
        ("1d12h", 129600.0),
        ("500ms", 0.5),
        ("2.5", 2.5),
        (" 10 ", 10.0),
        (30, 30.0),
        ("1.5h", 5400.0),
    ],
)
def test_parse_duration(text: str | float, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "5x", "m5", "-3", "1h-30m", "nan", "inf", "h", "5 minutes"])
def test_a_bad_duration_says_what_is_accepted(text: str) -> None:
    with pytest.raises(ValueError, match="90s, 5m, 2h, 1h30m"):
        parse_duration(text)


def test_format_duration() -> None:
    assert [format_duration(s) for s in (2.25, 45, 725, 5400, 183600)] == [
        "2.2s",
        "45s",
        "12m05s",
        "1h30m",
        "2d03h",
    ]


def test_iso_utc_is_one_format_with_milliseconds_and_offset() -> None:
    text = iso_utc(1796099821.7432497)
    assert text == "2026-12-01T04:37:01.743+00:00"
    assert datetime.fromisoformat(text).timestamp() == pytest.approx(1796099821.743)
    assert iso_utc(None) is None


def test_config_takes_durations_and_names_the_key_of_a_bad_one(tmp_path: Path) -> None:
    cfg = build_config({"stop.grace_s": "1m30s", "hang.kill_after_s": "2h", "restart.backoff_s": 5})
    assert (cfg.stop.grace_s, cfg.hang.kill_after_s, cfg.restart.backoff_s) == (90, 7200, 5)
    toml = tmp_path / "babysit.toml"
    toml.write_text('[stop]\ngrace_s = "5m"\n[budget]\nwindow_s = "1d"\n')
    loaded = load_config(toml, {})
    assert (loaded.stop.grace_s, loaded.budget.window_s) == (300, 86400)
    with pytest.raises(ConfigError, match=r"stop\.grace_s: expected a duration"):
        build_config({"stop.grace_s": "soon"})
    assert build_config({"run.name": "1h"}).run.name == "1h"  # a string key stays a string


def test_a_duration_flag_names_the_option_when_bad() -> None:
    res = CliRunner().invoke(cli, ["run", "--grace", "5x", "--", "true"])
    assert res.exit_code == 2
    assert "'--grace'" in res.output and "90s, 5m" in res.output
