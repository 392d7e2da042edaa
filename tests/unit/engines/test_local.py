"""engines.local: the interface around a process tree on this box (commands run for real)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import psutil
import pytest

from babysit.engines import LaunchSpec, LocalEngine


def test_on_each_node_runs_the_command_here_and_returns_its_output() -> None:
    engine = LocalEngine(host="here")
    [result] = engine.on_each_node(None, [sys.executable, "-c", "print('hi')"], timeout_s=30)
    assert result.host == "here" and result.returncode == 0 and result.stdout.strip() == "hi"


@pytest.mark.e2e
def test_a_node_command_that_overruns_is_killed_with_everything_it_started(
    tmp_path: Path,
) -> None:
    engine = LocalEngine(host="here")
    code = (
        "import pathlib, subprocess, sys, time\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"pathlib.Path({str(tmp_path / 'pid')!r}).write_text(str(p.pid))\n"
        "time.sleep(60)\n"
    )
    [result] = engine.on_each_node(None, [sys.executable, "-c", code], timeout_s=5.0)
    assert result.returncode is None and "did not finish within 5s" in result.stderr
    grandchild = int((tmp_path / "pid").read_text())
    deadline = time.monotonic() + 30
    while _running(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running(grandchild)


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def test_a_missing_node_command_is_a_result_not_an_exception() -> None:
    [result] = LocalEngine(host="here").on_each_node(None, ["no-such-command-xyz"], 5)
    assert result.returncode is None and "cannot run" in result.stderr


def test_bans_are_carried_as_an_exclude_list(tmp_path: Path) -> None:
    spec = LaunchSpec(["true"], {}, tmp_path, tmp_path / "a", 1.0, "tok", ("a", "b"))
    applied = LocalEngine().apply_bans(spec, ["c", "c", "d"])
    assert applied.exclude == ("c", "d") and applied.argv == ["true"]


def test_launch_poll_and_ranks_of_a_real_attempt(tmp_path: Path) -> None:
    engine = LocalEngine(host="here")
    spec = LaunchSpec(
        [sys.executable, "-c", "import sys; print('out'); sys.exit(3)"],
        {"PATH": "/usr/bin:/bin"},
        tmp_path,
        tmp_path / "attempt-0001",
        5.0,
        "test-token",
    )
    handle = engine.launch(spec)
    status = None
    for _ in range(600):  # poll with a deadline (60 s), not a fixed sleep
        status = engine.poll(handle)
        if status is not None:
            break
        engine.wait(handle, 0.1, lambda s: None)
    engine.close(handle)
    assert status is not None and status.exit_code == 3
    assert (spec.attempt_dir / "stdout.log").read_text() == "out\n"
    assert engine.ranks(handle) == [] and engine.survivors(handle) == []
