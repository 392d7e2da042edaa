"""SIGTERM and Ctrl-C are always honoured: nothing babysit looks at can hold its loop. Before,
each of these kept a real `babysit run` deaf to SIGTERM and to a double Ctrl-C for minutes or
for good: a --metrics-file that is a FIFO (open() blocked), a `**` checkpoint glob over a
symlink loop (a walk at 100% CPU), a --validate-checkpoint that hangs (up to its timeout, and
its setsid children outlived babysit). Also: a checkpoint's name is never run by a shell."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import (
    file_text,
    fixture,
    pid_alive,
    run_babysit,
    start_babysit,
    wait_for,
)

pytestmark = pytest.mark.e2e

STOPPED = 5  # ExitCode.STOPPED


@pytest.fixture(autouse=True)
def _no_sleepers(workdir: Path) -> Iterator[None]:
    """A babysit that failed to stop its validator leaves `sleep 1000`s whose command lines do
    not name the test's directory: kill what runs in it (the workdir fixture misses those)."""
    yield
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/{name}/cwd").startswith(str(workdir)):
                os.kill(int(name), signal.SIGKILL)


def start(workdir: Path, *flags: str) -> tuple[subprocess.Popen[bytes], Path]:
    err = workdir / "babysit.err"
    stop_file = workdir / "stop"
    proc = start_babysit(
        "run", "--home", str(workdir / "h"), "--name", "sig", "-q", *flags, "--",
        sys.executable, fixture("steady.py"), str(stop_file),
        cwd=workdir, stderr_path=err,
    )  # fmt: skip
    return proc, err


def stop_and_wait(proc: subprocess.Popen[bytes], signals: list[int], err: Path) -> int:
    for sig in signals:
        proc.send_signal(sig)
    try:
        return proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail(f"babysit ignored {signals}; its stderr:\n{file_text(err)[-3000:]}")


def saved_checkpoint(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("archive/data.pkl", b"weights")
    old = path.stat().st_mtime - 3600  # long settled
    os.utime(path, (old, old))


def test_a_fifo_metrics_file_does_not_block_and_is_reported(workdir: Path) -> None:
    os.mkfifo(workdir / "metrics.fifo")
    proc, err = start(workdir, "--metrics-file", "metrics.fifo")
    wait_for(lambda: "FIFO" in file_text(err), 60, "babysit to say the metrics file is a FIFO")
    assert "Have the run write to a plain file" in file_text(err)
    assert stop_and_wait(proc, [signal.SIGTERM], err) == STOPPED


def test_a_double_star_glob_over_a_symlink_loop_is_walked_at_once(workdir: Path) -> None:
    ck = workdir / "ck"
    saved_checkpoint(ck / "run" / "ckpt_10.pt")
    (ck / "run" / "X11").symlink_to(".")
    (ck / "run" / "up").symlink_to("..")
    proc, err = start(workdir, "--checkpoint", "ck/**/ckpt_*.pt")
    wait_for(lambda: "attempt 1 started" in file_text(err), 60, "the attempt to start")
    assert "resuming from" in file_text(err) and "ckpt_10.pt" in file_text(err)
    assert stop_and_wait(proc, [signal.SIGTERM], err) == STOPPED


@pytest.mark.parametrize(
    "signals",
    [[signal.SIGTERM], [signal.SIGINT, signal.SIGINT]],
    ids=["sigterm", "double-ctrl-c"],
)
def test_a_hanging_validator_is_killed_with_its_setsid_child(
    workdir: Path, signals: list[int]
) -> None:
    saved_checkpoint(workdir / "out" / "ckpt_10.pt")
    pidfile = workdir / "child.pid"
    child = f"echo $$ > {pidfile}.tmp; mv {pidfile}.tmp {pidfile}; exec sleep 1000"
    validator = f"sh -c 'setsid sh -c \"{child}\" & sleep 1000' {{checkpoint}}"
    proc, err = start(workdir, "--checkpoint", "out/ckpt_*.pt", "--validate-checkpoint", validator)
    pid = int(wait_for(lambda: pidfile.exists() and pidfile.read_text().strip(), 60, "pid"))
    try:
        assert stop_and_wait(proc, signals, err) == STOPPED
        assert "stopped by" in file_text(err)
        wait_for(lambda: not pid_alive(pid), 30, f"the validator's setsid child {pid} to die")
    finally:
        if pid_alive(pid):
            os.kill(pid, signal.SIGKILL)
    assert not (workdir / "stop.pid").exists(), "an attempt was launched while stopping"


def test_a_checkpoint_name_is_never_run_by_a_shell(workdir: Path) -> None:
    name = "ckpt_10;touch PWNED;.pt"
    saved_checkpoint(workdir / "out" / name)
    path = str(workdir / "out" / name)
    script = 'printf "%s|" "$@" {checkpoint} > got.txt'
    res = run_babysit(
        "run", "--home", str(workdir / "h"), "--name", "inj", "-q",
        "--checkpoint", "out/ckpt_*.pt",
        "--validate-checkpoint", "sh -c 'test -f {checkpoint}'",
        "--resume-args", "--resume {checkpoint}",
        "--", "sh", "-c", script, "argv0",
        cwd=workdir, timeout=120,
    )  # fmt: skip
    assert not (workdir / "PWNED").exists(), res.stderr[-3000:]
    assert res.returncode == 0, res.stderr[-3000:]
    assert (workdir / "got.txt").read_text() == f"--resume|{path}|{path}|"
