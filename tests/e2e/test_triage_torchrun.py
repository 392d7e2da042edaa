"""`babysit triage` on what a real torchrun job prints when one rank dies of a bug: three CPU
ranks on gloo, rank 2 raises KeyError('attention_mask'), ranks 0 and 1 fail in the next
all_reduce, torchrun tears the job down. Needs torch."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import fixture, run_babysit
from tests.e2e.test_triage_cli import check_schema

pytest.importorskip("torch")
pytestmark = [pytest.mark.e2e, pytest.mark.torch]

JOB_DEADLINE_S = 90.0  # the job takes ~10 s; the deadline only bounds a broken run
KEY_ERROR = "KeyError: 'attention_mask'"


@dataclass(frozen=True)
class Job:
    console: Path  # torchrun's combined output (--tee 3: `[default2]:` prefixes)
    log_dir: Path  # --log-dir: <run id>/attempt_0/<local rank>/{stdout,stderr}.log
    returncode: int


def _free_ports(n: int) -> list[int]:
    with contextlib.ExitStack() as stack:
        socks = [stack.enter_context(socket.socket()) for _ in range(n)]
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]


def _start(root: Path, port: int, exit_note: bool) -> tuple[subprocess.Popen[bytes], Path, Path]:
    root.mkdir(parents=True)
    console, log_dir = root / "console.log", root / "torchrun-logs"
    argv = [
        sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "3",
        "--master-port", str(port), "--tee", "3", "--log-dir", str(log_dir),
        fixture("torchrun_crash.py"), *(["--exit-note"] if exit_note else ["--lag-rank", "1"]),
    ]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("BABYSIT_")}
    env["OMP_NUM_THREADS"] = "1"
    with console.open("wb") as out:
        proc = subprocess.Popen(
            argv, cwd=root, stdout=out, stderr=subprocess.STDOUT, env=env,
            start_new_session=True,
        )  # fmt: skip
    return proc, console, log_dir


def _wait(proc: subprocess.Popen[bytes], deadline: float) -> int:
    try:
        return proc.wait(timeout=max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        pytest.fail(f"torchrun did not exit within {JOB_DEADLINE_S:.0f}s")


@pytest.fixture(scope="module")
def jobs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Job]]:
    """Two runs of the job side by side: "plain", where rank 1 lags before each step line (as a
    descheduled rank on a loaded machine does), and "exit_note" where every rank logs a line at
    exit after its traceback. Each torchrun runs in its own session, killed afterwards."""
    root = tmp_path_factory.mktemp("torchrun")
    t0 = time.monotonic()
    ports = _free_ports(2)
    started = {
        name: _start(root / name, port, note)
        for (name, note), port in zip((("plain", False), ("exit_note", True)), ports, strict=True)
    }
    try:
        deadline = t0 + JOB_DEADLINE_S
        done: dict[str, Job] = {}
        for name, (proc, console, log_dir) in started.items():
            rc = _wait(proc, deadline)
            done[name] = Job(console, log_dir, rc)
        yield done
    finally:
        for proc, _, _ in started.values():
            if proc.poll() is None:
                with contextlib.suppress(OSError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def triage(*paths: Path) -> dict[str, Any]:
    res = run_babysit("triage", "--json", *map(str, paths), cwd=paths[0].parent)
    assert res.returncode == 0, res.stderr
    doc: dict[str, Any] = json.loads(res.stdout)
    check_schema(doc)
    return doc


def _rank_stderr(job: Job, local_rank: int) -> Path:
    found = sorted(job.log_dir.glob(f"*/attempt_0/{local_rank}/stderr.log"))
    assert len(found) == 1, list(job.log_dir.rglob("*"))
    return found[0]


def _assert_blames_rank_2(doc: dict[str, Any]) -> None:
    assert doc["category"] == "user_code", doc["summary"]
    assert doc["transient"] is False
    assert doc["suspect"]["kind"] == "code" and doc["suspect"]["rank"] == 2
    assert doc["rule"] == "python.bug"
    assert KEY_ERROR in doc["summary"]
    assert any(KEY_ERROR in e["text"] for e in doc["evidence"])
    assert any("in collate" in e["text"] for e in doc["evidence"])  # the innermost frame


def test_the_job_fails_the_way_real_jobs_do(jobs: dict[str, Job]) -> None:
    for job in jobs.values():
        text = job.console.read_text(errors="replace")
        assert job.returncode == 1, text[-3000:]
        for r in range(3):
            assert f"[default{r}]:step 2 rank {r} loss" in text
        assert f"[default2]:[rank2]: {KEY_ERROR}" in text
        assert "ChildFailedError" in text and "Root Cause (first observed failure)" in text
        assert "local_rank: 2" in text
        assert f"[rank2]: {KEY_ERROR}" in _rank_stderr(job, 2).read_text()


def test_combined_console_output(jobs: dict[str, Job]) -> None:
    job = jobs["plain"]
    doc = triage(job.console)
    _assert_blames_rank_2(doc)
    assert all(e["file"] == str(job.console) for e in doc["evidence"])
    assert doc["confidence"] >= 0.6
    # torchrun's teardown (SIGTERM to the survivors, ChildFailedError): follow-on noise.
    teardown = ("Sending process", "ChildFailedError", "failed (exitcode")
    assert any(
        any(t in c["first"]["text"] for t in teardown) and c["count"] >= 2
        for c in doc["consequences"]
    ), doc["consequences"]
    if job.console.read_text(errors="replace").count("Connection closed by peer") >= 2:
        _assert_peer_errors_are_consequences(doc)


def _assert_peer_errors_are_consequences(doc: dict[str, Any]) -> None:
    """Ranks 0 and 1 print gloo's "Connection closed by peer" (unless torchrun's SIGTERM beat
    gloo to it): a consequence of rank 2's death, never the cause."""
    assert any(
        {0, 1} <= set(c["ranks"]) and "Connection closed by peer" in c["first"]["text"]
        for c in doc["consequences"]
    ), doc["consequences"]


@pytest.mark.parametrize("name", ["plain", "exit_note"])
def test_per_rank_log_directory(jobs: dict[str, Job], name: str) -> None:
    job = jobs[name]
    doc = triage(job.log_dir)
    _assert_blames_rank_2(doc)
    assert any(e["file"] == str(_rank_stderr(job, 2)) for e in doc["evidence"])
    survivors = [_rank_stderr(job, r).read_text(errors="replace") for r in (0, 1)]
    if all("Connection closed by peer" in s for s in survivors):
        _assert_peer_errors_are_consequences(doc)


def test_console_and_log_directory_agree_on_the_fingerprint(jobs: dict[str, Job]) -> None:
    job = jobs["plain"]
    assert triage(job.console)["fingerprint"] == triage(job.log_dir)["fingerprint"]


def test_evidence_points_at_the_key_error_line(jobs: dict[str, Job]) -> None:
    """Regression: the space of torch's `[rank2]: ` prefix once made the KeyError line read as
    one more indented frame line, only recovered at end of input and quoted as line 0."""
    job = jobs["plain"]
    stderr = _rank_stderr(job, 2)
    lines = stderr.read_text().splitlines()
    lineno = next(i for i, ln in enumerate(lines, 1) if KEY_ERROR in ln)
    doc = triage(job.log_dir)
    assert {"file": str(stderr), "line": lineno, "text": lines[lineno - 1]} in doc["evidence"]
    assert all(e["line"] >= 1 for e in doc["evidence"]), doc["evidence"]


def test_combined_console_output_with_a_line_after_the_traceback(jobs: dict[str, Job]) -> None:
    """Regression: rank 2's exit line (`[default2]:run summary: ...`, no `[rank2]:`) once closed
    its traceback, whose KeyError had been taken for a frame line: the KeyError was lost and
    the exit line became an unclassified exception."""
    job = jobs["exit_note"]
    assert "[default2]:run summary: rank 2" in job.console.read_text()
    doc = triage(job.console)
    _assert_blames_rank_2(doc)
    assert not any("run summary" in e["text"] for e in doc["evidence"]), doc["evidence"]
