"""The CLI at 4am, with real processes: `babysit stop`, `babysit logs -f`, the summary at the
end of a run, a closed pipe, a FIFO in a triaged directory or named (with or without a writer),
`watch --follow` on a log that is not there yet."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import (
    babysit_argv,
    file_text,
    fixture,
    pid_alive,
    run_babysit,
    start_babysit,
    status_json,
    wait_for,
)

pytestmark = pytest.mark.e2e

# Attempt 1 prints, waits for the file `go`, then dies as a transient failure; attempt 2 prints
# and finishes.
TWO_ATTEMPTS = """\
import os, sys, time
n = int(os.environ["BABYSIT_ATTEMPT"])
print(f"attempt {n} says hello", flush=True)
if n == 1:
    while not os.path.exists("go"):
        time.sleep(0.05)
    print("ConnectionError: Connection reset by peer", file=sys.stderr, flush=True)
    sys.exit(1)
print(f"attempt {n} done", flush=True)
"""


def _run_live(workdir: Path, name: str, *command: str) -> subprocess.Popen[bytes]:
    home = workdir / "h"
    proc = start_babysit(
        "run",
        "--name",
        name,
        "--home",
        str(home),
        "-q",
        "--backoff",
        "0",
        "--",
        *command,
        cwd=workdir,
        stderr_path=workdir / f"{name}.err",
    )
    wait_for(
        lambda: "attempt 1 started" in file_text(workdir / f"{name}.err"),
        60,
        "the first attempt to start",
    )
    return proc


def test_stop_stops_the_run_as_an_operator_stop_and_records_who(workdir: Path) -> None:
    proc = _run_live(workdir, "train", sys.executable, fixture("steady.py"), str(workdir / "s"))
    res = run_babysit(
        "stop", "train", "--home", str(workdir / "h"), "--reason", "bad LR", cwd=workdir
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert "run 'train' stopped" in res.stdout and "babysit exit code 5" in res.stdout
    assert proc.wait(timeout=60) == 5
    doc = status_json(workdir / "h", "train", workdir)
    assert doc["state"] == "stopped" and doc["attempts"][0]["outcome"] == "stopped"
    asked = [e for e in doc["events"] if e["kind"] == "stop_requested"]
    assert (
        asked and "`babysit stop` from" in asked[0]["message"] and "(bad LR)" in asked[0]["message"]
    )
    again = run_babysit("stop", "train", "--home", str(workdir / "h"), cwd=workdir)
    assert again.returncode == 0 and "already over" in again.stdout


def test_stop_without_a_babysit_says_how_to_end_the_training_left(workdir: Path) -> None:
    proc = _run_live(workdir, "orphan", sys.executable, fixture("steady.py"), str(workdir / "s"))
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    res = run_babysit("stop", "orphan", "--home", str(workdir / "h"), cwd=workdir)
    assert res.returncode == 3, res.stdout + res.stderr
    assert "no babysit supervises run 'orphan'" in res.stdout
    launcher = status_json(workdir / "h", "orphan", workdir)["attempts"][0]
    row = json.loads(
        subprocess.run(
            [
                sys.executable,
                "-c",
                "import json,sys; from babysit.store import Store; "
                "from pathlib import Path; s=Store.open(Path(sys.argv[1]), create=False); "
                "print(json.dumps(s.attempts('orphan')[0]['launcher_pid']))",
                str(workdir / "h"),
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    assert f"kill -TERM -- -{row}" in res.stdout and launcher["outcome"] == "running"
    os.killpg(row, signal.SIGKILL)
    wait_for(lambda: not pid_alive(row), 30, "the leftover training to go")


def test_logs_follows_into_the_next_attempt_until_the_run_ends(workdir: Path) -> None:
    (workdir / "two.py").write_text(TWO_ATTEMPTS)
    proc = _run_live(workdir, "two", sys.executable, "two.py")
    home = str(workdir / "h")
    out = workdir / "logs.out"
    with out.open("wb") as fh:
        follower = subprocess.Popen(
            babysit_argv("logs", "two", "--home", home, "-f"),
            cwd=workdir,
            stdout=fh,
            stderr=subprocess.STDOUT,
        )
    wait_for(lambda: "attempt 1 says hello" in file_text(out), 60, "attempt 1's output")
    (workdir / "go").write_text("")
    assert follower.wait(timeout=90) == 0  # the run ended: so does -f
    text = file_text(out)
    assert text.index("attempt 1 says hello") < text.index("==> babysit: attempt 2 <==")
    assert "ConnectionError" in text and text.rstrip().endswith("attempt 2 done")
    assert proc.wait(timeout=60) == 0
    err = file_text(workdir / "two.err")
    assert "summary" in err and "after 2 attempts" in err and "causes: 1× network" in err
    one = run_babysit(
        "logs", "two", "--home", home, "--attempt", "1", "--stream", "stdout", cwd=workdir
    )
    assert one.returncode == 0 and one.stdout == "attempt 1 says hello\n"
    last = run_babysit("logs", "two", "--home", home, "-n", "1", "--stream", "stdout", cwd=workdir)
    assert last.stdout == "attempt 2 done\n"
    bad = run_babysit("logs", "two", "--home", home, "--attempt", "9", cwd=workdir)
    assert bad.returncode == 2 and "no attempt 9" in bad.stderr


def _closed_pipe(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Run babysit with a stdout whose reader is already gone (`| head -1` after its line)."""
    r, w = os.pipe()
    os.close(r)
    try:
        return subprocess.run(
            babysit_argv(*args), cwd=cwd, stdout=w, stderr=subprocess.PIPE, timeout=120,
            env=env,
        )  # fmt: skip
    finally:
        os.close(w)


CRASH = (
    "Traceback (most recent call last):\n"
    '  File "/w/train.py", line 88, in train_step\n'
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
)


def test_a_closed_pipe_ends_any_command_quietly_with_141(workdir: Path) -> None:
    log = workdir / "crash.log"
    log.write_text(CRASH)
    for args in (
        ["triage", str(log)],
        ["triage", str(log), "--json"],
        ["--help"],
        ["watch", str(log)],
    ):
        res = _closed_pipe(*args, cwd=workdir)
        assert res.returncode == 141, (args, res.stderr)
        assert res.stderr == b"", (args, res.stderr)


def test_triage_skips_a_fifo_in_a_directory_instead_of_blocking(workdir: Path) -> None:
    logs = workdir / "logs"
    logs.mkdir()
    (logs / "rank0.log").write_text(CRASH)
    os.mkfifo(logs / "rank1.fifo")
    res = run_babysit("triage", str(logs), "--json", cwd=workdir, timeout=60)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["category"] == "cuda_oom"
    text = run_babysit("triage", str(logs), cwd=workdir, timeout=60).stdout
    assert "rank1.fifo (not a regular file" in text


def test_triage_of_a_named_fifo_nobody_writes_to_says_so_instead_of_blocking(
    workdir: Path,
) -> None:
    os.mkfifo(workdir / "rank0.fifo")  # a plain open() waits for a writer that never comes
    res = run_babysit("triage", "rank0.fifo", cwd=workdir, timeout=60)
    assert res.returncode == 0, res.stderr
    assert "rank0.fifo (cannot read: a named pipe that no process wrote to within" in res.stdout


def test_triage_of_a_named_fifo_waits_for_a_writer_that_comes_after_it(workdir: Path) -> None:
    fifo = workdir / "rank0.fifo"
    os.mkfifo(fifo)
    proc = subprocess.Popen(
        [*babysit_argv(), "triage", str(fifo), "--json"],
        cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        with open(fifo, "w") as w:  # blocks until babysit has opened it for reading
            w.write(CRASH)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert json.loads(out)["category"] == "cuda_oom"


def test_triage_reads_a_gzipped_pipe_whose_bytes_come_late(workdir: Path) -> None:
    # `babysit triage <(sleep 1; cat rank3.log.gz)`: the gzip magic is not there when it opens
    (workdir / "x.gz").write_bytes(gzip.compress(CRASH.encode()))
    late = ["sh", "-c", "sleep 1; cat x.gz"]  # the input's own pace, not a wait for an event
    writer = subprocess.Popen(late, cwd=workdir, stdout=subprocess.PIPE)
    assert writer.stdout is not None
    r = writer.stdout.fileno()
    try:
        res = subprocess.run(
            [*babysit_argv(), "triage", f"/dev/fd/{r}", "--json"],
            cwd=workdir, capture_output=True, text=True, timeout=60, pass_fds=(r,),
        )
    finally:
        writer.wait(timeout=60)
        writer.stdout.close()
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["category"] == "cuda_oom"


def test_triage_of_a_closed_stdin_says_so(workdir: Path) -> None:
    res = subprocess.run(
        [*babysit_argv(), "triage", "-"], cwd=workdir, capture_output=True, text=True,
        timeout=60, stdin=subprocess.DEVNULL, preexec_fn=lambda: os.close(0),
    )
    assert res.returncode == 0, res.stderr
    assert "- (cannot read: stdin is closed)" in res.stdout


def test_triage_reads_a_pipe_given_on_purpose_plain_or_gzipped(workdir: Path) -> None:
    # `babysit triage <(zcat x)` and `<(cat x.gz)`: a pipe with a writer, its name says nothing
    for data in (CRASH.encode(), gzip.compress(CRASH.encode())):
        r, w = os.pipe()
        os.write(w, data)  # well under a pipe's buffer
        os.close(w)
        try:
            res = subprocess.run(
                [*babysit_argv(), "triage", f"/dev/fd/{r}", "--json"],
                cwd=workdir, capture_output=True, text=True, timeout=60, pass_fds=(r,),
            )
        finally:
            os.close(r)
        assert res.returncode == 0, res.stderr
        assert json.loads(res.stdout)["category"] == "cuda_oom"


def test_watch_follow_waits_for_the_log_to_appear(workdir: Path) -> None:
    log = workdir / "slurm-99.out"
    err = workdir / "w.err"
    proc = start_babysit(
        "watch", "--follow", str(log), "--home", str(workdir / "h"), cwd=workdir, stderr_path=err
    )
    wait_for(lambda: f"waiting for {log} to appear" in file_text(err), 60, "the wait")
    assert proc.poll() is None
    log.write_text("iter 1: loss 2.0, time 5ms\niter 2: loss nan, time 5ms\n")
    wait_for(lambda: "nonfinite" in file_text(err), 60, "the NaN to be reported")
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=30) == 0
    early = start_babysit(
        "watch",
        "--follow",
        str(workdir / "never.out"),
        "--home",
        str(workdir / "h"),
        cwd=workdir,
        stderr_path=err,
    )
    wait_for(lambda: "never.out to appear" in file_text(err), 60, "the second wait")
    early.send_signal(signal.SIGINT)
    assert early.wait(timeout=30) == 0
    assert "stopped before the log appeared" in file_text(err)


def test_logs_into_a_closed_pipe_exits_141_also_unbuffered(workdir: Path) -> None:
    # With PYTHONUNBUFFERED (common in jobs) stdout's binary layer is raw: a write to a closed
    # pipe used to come back short and silent, and `babysit logs | head` exited 0.
    home = str(workdir / "h")
    made = run_babysit(
        "run", "--home", home, "--name", "big", "-q", "--",
        sys.executable, "-c", "print('line\\n' * 200000)",
        cwd=workdir,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    for env in ({**os.environ, "PYTHONUNBUFFERED": "1"}, None):
        res = _closed_pipe("logs", "big", "--home", home, "--all", cwd=workdir, env=env)
        assert res.returncode == 141, res.stderr
