"""The store's disk fills up mid-run: babysit says so, keeps supervising, and loses nothing."""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import file_text, fixture, start_babysit, status_json, wait_for

pytestmark = pytest.mark.e2e


def _fill(directory: Path) -> Path:
    filler = directory / "filler"
    with filler.open("wb", buffering=0) as fh:
        try:
            while True:
                fh.write(b"\0" * 4096)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return filler


def test_full_disk_under_the_store(workdir: Path) -> None:
    mnt = workdir / "mnt"
    mnt.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)],
                             capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        home = mnt / "h"
        err = workdir / "babysit.err"
        proc = start_babysit("run", "--home", str(home), "--backoff", "0", "--name", "w", "--",
                             sys.executable, fixture("waiter.py"), str(workdir), cwd=workdir,
                             stderr_path=err)
        wait_for(lambda: "waiting" in file_text(home / "runs/w/attempt-0001/stdout.log"),
                 what="attempt 1 to start")
        filler = _fill(mnt)
        (workdir / "go1").write_text("")  # attempt 1 crashes while the disk is full
        wait_for(lambda: "Supervision goes on" in file_text(err), what="the store warning")
        wait_for(lambda: (home / "runs/w/attempt-0002").exists(), what="attempt 2 to start")
        assert proc.poll() is None
        filler.unlink()
        (workdir / "go2").write_text("")
        assert proc.wait(timeout=60) == 0, file_text(err)
        assert "nothing was lost" in file_text(err)
        doc = status_json(home, "w", workdir)
        assert [a["outcome"] for a in doc["attempts"]] == ["failed", "succeeded"]
        assert doc["attempts"][0]["exit_code"] == 1
        kinds = [e["kind"] for e in doc["events"]]
        assert kinds.count("attempt_started") == 2 and "restart_scheduled" in kinds
    finally:
        with contextlib.suppress(Exception):
            subprocess.run(["umount", "-l", str(mnt)], check=False)
        assert not os.path.ismount(mnt)
