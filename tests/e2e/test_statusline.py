"""`babysit run`'s live status line end to end: under a pseudo terminal it is drawn in the last
row and the run's output passes through byte for byte, in order; into a file nothing is drawn
and no escape code is written (unless --status asks for its plain lines)."""

from __future__ import annotations

import fcntl
import os
import re
import struct
import subprocess
import sys
import termios
import time
import tty
from pathlib import Path

import pytest

from tests.conftest import babysit_argv, run_babysit

pytestmark = pytest.mark.e2e
PY = sys.executable
ROWS, COLS = 24, 100

TRAINER = r'''
import sys, time
print("starting ünïcode ✓ [bold]not markup[/bold]", flush=True)
sys.stdout.write("\x1b[32mgreen from the run\x1b[0m\n")
sys.stdout.write("a partial line, ")
sys.stdout.flush()
time.sleep(0.3)
print("finished later", flush=True)
for i in range(30):
    print(f"iter {i}: loss {3 - i * 0.01:.4f}, time 5.00ms, mfu 1.23%", flush=True)
    time.sleep(0.08)
print("training done", flush=True)
'''


def expected_output() -> bytes:
    lines = [
        "starting ünïcode ✓ [bold]not markup[/bold]\n",
        "\x1b[32mgreen from the run\x1b[0m\n",
        "a partial line, finished later\n",
    ]
    lines += [f"iter {i}: loss {3 - i * 0.01:.4f}, time 5.00ms, mfu 1.23%\n" for i in range(30)]
    return "".join([*lines, "training done\n"]).encode()


# What babysit itself writes to the terminal: IND+RI (room for the line), and each drawing
# between a cursor save and restore.
OURS = re.compile(rb"\x1bD\x1bM|\x1b7.*?\x1b8", re.S)


def write_trainer(workdir: Path) -> str:
    path = workdir / "train.py"
    path.write_text(TRAINER)
    return str(path)


def test_the_status_line_under_a_terminal_and_the_output_unchanged(workdir: Path) -> None:
    trainer = write_trainer(workdir)
    master, slave = os.openpty()
    tty.setraw(slave)  # bytes as written: no \n -> \r\n, so the output compares byte for byte
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"} | {"TERM": "xterm-256color"}
    err = (workdir / "stderr.txt").open("wb")
    proc = subprocess.Popen(
        babysit_argv("run", "--home", str(workdir / "h"), "--", PY, trainer, "--max_iters=30"),
        cwd=workdir, stdin=subprocess.DEVNULL, stdout=slave, stderr=err, env=env,
    )
    os.close(slave)
    err.close()
    out = b""
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every writer of the terminal is gone
                break
            if not chunk:
                break
            out += chunk
        assert proc.wait(timeout=max(deadline - time.monotonic(), 1)) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    stderr = (workdir / "stderr.txt").read_text(errors="replace")
    assert "attempt 1 started" in stderr, stderr

    # The run's output, with babysit's drawings taken out, is exactly what the run printed.
    assert OURS.sub(b"", out) == expected_output()

    # The line: in the last row, under a scroll region of the rows above, with the attempt,
    # the step out of the command's --max_iters, and the loss.
    setup = out.find(b"\x1bD\x1bM\x1b7\x1b[1;%dr\x1b8" % (ROWS - 1))
    assert 0 <= setup < out.find(b"\x1b7\x1b[%d;1H" % ROWS)
    draws = re.findall(rb"\x1b7\x1b\[%d;1H\x1b\[2K(.*?)\x1b8" % ROWS, out, re.S)
    words = [re.sub(rb"\x1b\[[0-9;]*m", b"", d).decode() for d in draws]
    assert any(re.search(r"attempt 1 · step \d+/30 \(.*%\) · loss \d", w) for w in words), words
    assert all(len(w) < COLS for w in words)
    # At the end, the scroll region is the whole screen again and the last row is blank.
    assert out.endswith(b"\x1b7\x1b[r\x1b[%d;1H\x1b[2K\x1b8" % ROWS)


def test_into_a_file_nothing_is_drawn_and_no_escape_is_written(workdir: Path) -> None:
    trainer = workdir / "plain.py"
    trainer.write_text(
        "import time\nfor i in range(20):\n"
        "    print(f'iter {i}: loss 2.5, time 5.00ms', flush=True)\n    time.sleep(0.02)\n"
    )
    res = run_babysit("run", "--home", str(workdir / "h"), "--", PY, str(trainer), cwd=workdir)
    assert res.returncode == 0, res.stderr
    assert res.stdout == "".join(f"iter {i}: loss 2.5, time 5.00ms\n" for i in range(20))
    assert "\x1b" not in res.stderr and "status:" not in res.stderr

    # --status where nothing can be redrawn: plain lines among babysit's messages, no codes.
    res = run_babysit(
        "run", "--home", str(workdir / "h2"), "--status", "--", PY, str(trainer), cwd=workdir
    )
    assert res.returncode == 0, res.stderr
    assert "\x1b" not in res.stdout and "\x1b" not in res.stderr
    assert re.search(r"babysit: status: attempt 1 · step \d+ · loss 2.5", res.stderr), res.stderr
