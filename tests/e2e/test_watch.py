"""`babysit watch`: replay and follow a log babysit did not launch."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from tests.conftest import file_text, run_babysit, start_babysit, status_json, wait_for

pytestmark = pytest.mark.e2e


def test_follow_records_incidents_as_the_log_grows(workdir: Path) -> None:
    log = workdir / "slurm-1234.out"
    log.write_text("".join(f"iter {s}: loss {2.0 + 0.01 * (s % 3):.4f}, time 5ms\n"
                           for s in range(50)))
    home = workdir / "h"
    err = workdir / "w.err"
    proc = start_babysit("watch", "--follow", str(log), "--home", str(home), cwd=workdir,
                         stderr_path=err)
    wait_for(lambda: "watching" in file_text(err), what="the watcher to start")
    with log.open("a") as fh:
        fh.write("iter 50: loss nan, time 5ms\n")
    wait_for(lambda: "nonfinite" in file_text(err), what="the NaN to be reported")
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=30) == 0
    doc = status_json(home, "slurm-1234", workdir)
    assert [(i["kind"], i["step"]) for i in doc["incidents"]] == [("nonfinite", 50)]
    assert doc["state"] == "stopped"


def test_watch_bad_input(workdir: Path) -> None:
    missing = run_babysit("watch", str(workdir / "nope.log"), cwd=workdir)
    assert missing.returncode == 2 and "no such log file" in missing.stderr
    both = run_babysit("watch", "--follow", "--json", str(workdir), cwd=workdir)
    assert both.returncode == 2 and "--json" in both.stderr
    empty = workdir / "empty.log"
    empty.write_bytes(b"")
    res = run_babysit("watch", str(empty), "--json", cwd=workdir)
    assert res.returncode == 0 and json.loads(res.stdout)["incidents"] == []
    binary = workdir / "blob.log"
    binary.write_bytes(bytes(range(256)) * 4000)
    res = run_babysit("watch", str(binary), "--json", cwd=workdir)
    assert res.returncode == 0, res.stderr
