"""sources.procs: a real process's state, CPU and files written; a bounded directory walk."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from babysit.sources.procs import files_in, files_written, glob_root, look_at

WRITER = """
import sys, time
fh = open(sys.argv[1], "w")
print("ready", flush=True)
while True:
    fh.write("x" * 4096); fh.flush(); time.sleep(0.01)
"""


def _wait(predicate, timeout: float = 20.0):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)
    return value


def test_a_stopped_writer_is_seen_stopped_and_its_file_stops_growing(tmp_path: Path) -> None:
    out = tmp_path / "ckpt.tmp"
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(out)], stdout=subprocess.PIPE, env={**os.environ}
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
        (me,) = look_at([proc.pid])
        assert me.pid == proc.pid and me.state not in ("stopped", "zombie")
        assert me.cpu_s is not None and me.io_bytes is not None
        first = files_written([proc.pid])[str(out)]
        _wait(lambda: files_written([proc.pid])[str(out)] > first)
        os.kill(proc.pid, signal.SIGSTOP)
        _wait(lambda: look_at([proc.pid])[0].state == "stopped")
        size = files_written([proc.pid])[str(out)]
        assert files_written([proc.pid])[str(out)] == size
        assert files_written([proc.pid], skip=tmp_path) == {}  # babysit's own captures
    finally:
        proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
    assert look_at([proc.pid]) == ()  # gone: left out, no error


def test_files_in_walks_two_levels_without_following_links(tmp_path: Path) -> None:
    (tmp_path / "checkpoint-500").mkdir()
    (tmp_path / "checkpoint-500" / "model.safetensors").write_bytes(b"x" * 10)
    (tmp_path / "ckpt_1.pt").write_bytes(b"y" * 3)
    (tmp_path / "loop").symlink_to(tmp_path)  # a link back up: never followed
    found = files_in(tmp_path)
    assert found == {
        str(tmp_path / "checkpoint-500" / "model.safetensors"): 10,
        str(tmp_path / "ckpt_1.pt"): 3,
    }
    assert len(files_in(tmp_path, limit=1)) <= 1
    assert files_in(tmp_path / "missing") == {}


def test_glob_root_is_the_prefix_without_wildcards() -> None:
    assert glob_root("/runs/out/ckpt_*.pt") == Path("/runs/out")
    assert glob_root("out/*/step_*/model.pt") == Path("out")
    assert glob_root("ckpt_*.pt") == Path(".")


def test_files_in_leaves_babysits_home_out(tmp_path: Path) -> None:
    (tmp_path / ".babysit").mkdir()
    (tmp_path / ".babysit" / "events.jsonl").write_text("{}\n")
    (tmp_path / "ckpt_1.pt").write_bytes(b"y")
    assert files_in(tmp_path, skip=tmp_path / ".babysit") == {str(tmp_path / "ckpt_1.pt"): 1}
