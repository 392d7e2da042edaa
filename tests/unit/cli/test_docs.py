"""The public surface, pinned: every command has --help and is documented in the README."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from babysit.cli import cli

README = (Path(__file__).resolve().parents[3] / "README.md").read_text()
COMMANDS = cli.list_commands(click.Context(cli))


def test_the_commands_are_the_agreed_ones_so_far() -> None:
    # DESIGN.md's table; `rebuild`, `logs` and `stop` joined it, then `note`, `notify` and
    # `report` (issue 14); `serve` next.
    assert {"logs", "stop"} <= set(COMMANDS)
    assert set(COMMANDS) - {"logs", "stop", "rebuild"} == {
        "demo",
        "doctor",
        "logbook",
        "nodes",
        "note",
        "notify",
        "report",
        "run",
        "status",
        "triage",
        "watch",
    }


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_has_help_and_a_readme_section(name: str) -> None:
    res = CliRunner().invoke(cli, [name, "--help"])
    assert res.exit_code == 0 and "Example" in res.output
    assert f"### `babysit {name}" in README


def test_exit_codes_are_documented() -> None:
    res = CliRunner().invoke(cli, ["--help"])
    for code in range(6):
        assert f"  {code}  " in res.output
        assert f"| {code} |" in README


def test_importing_the_cli_stays_light() -> None:
    """`import babysit.cli` (every command's start-up) stays fast: commands import the heavy
    parts (the supervisor, the doctor, the config made of every rule) when they run."""
    code = "import sys, babysit.cli; print(sorted(sys.modules))"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = res.stdout
    heavy_parts = (
        "babysit.supervise",
        "babysit.cli.doctor",
        "babysit.sources.health",
        "babysit.config",
        "babysit.policy",
    )
    for heavy in heavy_parts:
        assert f"'{heavy}'" not in loaded
