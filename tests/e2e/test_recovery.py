"""Recovery end to end with the real `babysit run`: a failing node banned and left out of the
hostfile, budgets that survive babysit being killed, a corrupt newest checkpoint passed over."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import (
    file_text,
    fixture,
    run_babysit,
    start_babysit,
    status_json,
    wait_for,
)

pytestmark = pytest.mark.e2e
PY = sys.executable
# No kernel log (the test host's dmesg is not the run's), no storm rule in the way.
CONFIG = "[restart]\nstorm_attempts = 50\n[triage]\nkernel_log = false\n"


def _setup_cluster(workdir: Path) -> Path:
    (workdir / "babysit.toml").write_text(CONFIG)
    (workdir / "hosts.txt").write_text(
        "# the job's nodes\nnode-a slots=8\nnode-b slots=8  # the flaky one\nnode-c slots=8\n"
    )
    return workdir / "h"


def _node_run(workdir: Path, home: Path, *flags: str) -> Any:
    trainer = [f for f in flags if f == "--at-start"]
    ours = [f for f in flags if f != "--at-start"]
    return run_babysit(
        "run", "--home", str(home), "--backoff", "0", "--name", "dist", "--hostfile",
        "hosts.txt", *ours, "--", PY, fixture("node_failer.py"), "--bad", "node-b", *trainer,
        cwd=workdir, timeout=60,
    )


def _nodes(home: Path, workdir: Path) -> dict[str, dict[str, Any]]:
    res = run_babysit("nodes", "list", "--json", "--home", str(home), cwd=workdir)
    assert res.returncode == 0, res.stderr
    return {n["host"]: n for n in json.loads(res.stdout)["nodes"]}


def test_failing_node_is_banned_and_left_out(workdir: Path) -> None:
    home = _setup_cluster(workdir)
    res = _node_run(workdir, home, "--min-nodes", "2")
    assert res.returncode == 0, res.stderr
    doc = status_json(home, "dist", workdir)
    attempts = doc["attempts"]
    assert [a["outcome"] for a in attempts] == ["failed", "failed", "failed", "succeeded"]
    assert [a["suspect_host"] for a in attempts[:3]] == ["node-b"] * 3
    assert [a["hosts"] for a in attempts] == [["node-a", "node-b", "node-c"]] * 3 + [
        ["node-a", "node-c"]
    ]
    run_dir = home / "runs" / "dist"
    assert (run_dir / "attempt-0004" / "hostfile").read_text() == (
        "node-a slots=8\nnode-c slots=8\n"
    )
    assert "node-b" in (run_dir / "attempt-0003" / "hostfile").read_text()
    out4 = file_text(run_dir / "attempt-0004" / "stdout.log")
    assert f"hosts=node-a,node-c hostfile={run_dir / 'attempt-0004' / 'hostfile'}" in out4

    nodes = _nodes(home, workdir)
    assert nodes["node-b"]["state"] == "banned"
    assert nodes["node-b"]["failures"] == 3
    ban = nodes["node-b"]["ban"]
    assert ban["by"] == "policy" and ban["run"] == "dist"
    assert "3 failures blamed on it" in ban["reason"]
    assert set(nodes) == {"node-b"}  # nobody else was blamed

    assert "banned node node-b" in res.stderr
    assert "leaving banned host(s) out of this attempt: node-b" in res.stderr
    banned = [e for e in doc["events"] if e["kind"] == "banned"]
    assert len(banned) == 1 and banned[0]["attempt"] == 3
    assert banned[0]["data"]["host"] == "node-b"


def test_node_that_fails_before_any_step_is_banned_not_called_a_loop(workdir: Path) -> None:
    # Regression (chaos suite, bad node): the same error without progress on attempts 1 and 2
    # gave up (exit 3) before nodes.ban_after = 3 could leave node-b out, and with a checkpoint
    # glob "no checkpoint progress" gave up on attempt 3 as the ban was made (exit 4).
    home = _setup_cluster(workdir)
    res = _node_run(workdir, home, "--min-nodes", "2", "--checkpoint", "ckpt_*.pt", "--at-start")
    assert res.returncode == 0, res.stderr
    doc = status_json(home, "dist", workdir)
    assert [a["outcome"] for a in doc["attempts"]] == ["failed"] * 3 + ["succeeded"]
    assert [a["first_step"] for a in doc["attempts"][:3]] == [None] * 3
    assert "banned node node-b" in res.stderr
    assert "Restarting again would loop" not in res.stderr


def test_too_few_hosts_left_gives_up(workdir: Path) -> None:
    home = _setup_cluster(workdir)
    res = _node_run(workdir, home, "--min-nodes", "3")
    assert res.returncode == 4, res.stderr
    assert "giving up" in res.stderr
    assert "2 of the hostfile's 3 hosts are usable, the run needs 3: banned node-b" in res.stderr
    doc = status_json(home, "dist", workdir)
    assert len(doc["attempts"]) == 3 and doc["state"] == "failed"
    assert not (home / "runs" / "dist" / "attempt-0004").exists()
    assert _nodes(home, workdir)["node-b"]["state"] == "banned"


BUDGET_TRAINER = """\
import os, sys, time
attempt = int(os.environ["BABYSIT_ATTEMPT"])
for step in range(10 * attempt, 10 * attempt + 3):
    print(f"iter {step}: loss 2.5, time 1.00ms", flush=True)
if attempt == 2:
    print("holding", flush=True)
    deadline = time.monotonic() + 300  # a broken test only: it writes "release"
    while not os.path.exists("release") and time.monotonic() < deadline:
        time.sleep(0.02)
raise ConnectionError(f"Connection reset by peer (attempt {attempt})")
"""


def test_budget_survives_babysit_being_killed(workdir: Path) -> None:
    (workdir / "babysit.toml").write_text(CONFIG)
    (workdir / "trainer.py").write_text(BUDGET_TRAINER)
    home = workdir / "h"
    args = ("run", "--home", str(home), "--backoff", "0", "--name", "b", "--budget",
            "network=2", "--", PY, "trainer.py")
    first = start_babysit(*args, cwd=workdir, stderr_path=workdir / "b1.err")
    attempt2 = home / "runs" / "b" / "attempt-0002"
    wait_for(lambda: "holding" in file_text(attempt2 / "stdout.log"), what="attempt 2 to start")
    os.kill(first.pid, signal.SIGKILL)
    assert first.wait(timeout=10) == -signal.SIGKILL

    second = start_babysit(*args, cwd=workdir, stderr_path=workdir / "b2.err")
    wait_for(lambda: "re-attached to attempt 2" in file_text(workdir / "b2.err"),
             what="the new babysit to re-attach to attempt 2")
    (workdir / "release").write_text("")
    assert second.wait(timeout=30) == 4, file_text(workdir / "b2.err")
    err = file_text(workdir / "b2.err")
    assert "3 attempts ended with network within 24h (budget.network = 2 restarts)" in err
    doc = status_json(home, "b", workdir)
    # Attempt 1 came from the store: a babysit that counted from scratch would have made 4.
    assert [a["number"] for a in doc["attempts"]] == [1, 2, 3]
    assert [a["cause"] for a in doc["attempts"]] == ["network"] * 3
    assert not (home / "runs" / "b" / "attempt-0004").exists()


def _ckpt_run(workdir: Path, *flags: str, truncate: bool) -> tuple[Any, dict[str, Any]]:
    (workdir / "babysit.toml").write_text(CONFIG)
    home = workdir / "h"
    res = run_babysit(
        "run", "--home", str(home), "--backoff", "0", "--name", "c", "--checkpoint",
        "out/ckpt_*.pt", *flags, "--", PY, fixture("ckpt_trainer.py"), "--dir", "out",
        *(["--truncate-newest"] if truncate else []), cwd=workdir, timeout=60,
    )
    assert res.returncode == 0, res.stderr
    doc = status_json(home, "c", workdir)
    assert [a["outcome"] for a in doc["attempts"]] == ["failed", "succeeded"]
    assert doc["attempts"][1]["resume_from"] == str(workdir / "out" / "ckpt_000010.pt")
    out2 = file_text(home / "runs" / "c" / "attempt-0002" / "stdout.log")
    assert f"resume_from={workdir / 'out' / 'ckpt_000010.pt'} resume_step=10" in out2
    return res, doc


def _checkpoint_event(doc: dict[str, Any]) -> dict[str, Any]:
    (event,) = [e for e in doc["events"] if e["kind"] == "checkpoint"]
    assert event["attempt"] is None  # written before the attempt exists
    return event  # type: ignore[no-any-return]


def test_truncated_newest_checkpoint_is_passed_over(workdir: Path) -> None:
    res, doc = _ckpt_run(workdir, truncate=True)
    event = _checkpoint_event(doc)
    assert event["message"].startswith(f"resuming from {workdir / 'out' / 'ckpt_000010.pt'}")
    assert "newer ones passed over: ckpt_000020.pt: truncated or corrupt torch/zip archive" in (
        event["message"]
    )
    (passed,) = event["data"]["passed_over"]
    assert passed["path"] == str(workdir / "out" / "ckpt_000020.pt")
    assert "the newest checkpoint (ckpt_000020.pt) is not usable; falling back to " \
           "ckpt_000010.pt (step 10)" in res.stderr


def test_checkpoint_rejected_by_validation_is_passed_over(workdir: Path) -> None:
    (workdir / "check.py").write_text(
        "import sys\n"
        "if sys.argv[1].endswith('ckpt_000020.pt'):\n"
        "    sys.exit('optimizer state has 0 tensors, expected 48')\n"
    )
    res, doc = _ckpt_run(
        workdir, "--validate-checkpoint", f"{PY} check.py {{checkpoint}}", truncate=False
    )
    event = _checkpoint_event(doc)
    assert (
        "ckpt_000020.pt: --validate-checkpoint exited with 1: optimizer state has 0 tensors, "
        "expected 48" in event["message"]
    )
    assert "skipping checkpoint" in res.stderr and "--validate-checkpoint exited with 1" in (
        res.stderr
    )
    book = run_babysit("logbook", "c", "--home", str(workdir / "h"), "--format", "md",
                       cwd=workdir)
    assert book.returncode == 0, book.stderr
    assert "--validate-checkpoint exited with 1: optimizer state has 0 tensors" in book.stdout


def test_banned_local_node_without_hostfile_gives_up_at_once(workdir: Path) -> None:
    home = workdir / "h"
    host = os.uname().nodename
    ban = run_babysit("nodes", "ban", host, "--home", str(home), "--reason", "Xid 79 twice",
                      cwd=workdir)
    assert ban.returncode == 0, ban.stderr
    res = run_babysit("run", "--home", str(home), "--name", "local", "--", PY, "-c", "pass",
                      cwd=workdir)
    assert res.returncode == 4, res.stderr
    assert f"this node ({host}) is banned (Xid 79 twice)" in res.stderr
    assert f"babysit nodes unban {host}" in res.stderr
    assert not (home / "runs" / "local" / "attempt-0001").exists()
    missing = run_babysit("run", "--home", str(home), "--name", "other", "--hostfile", "nope",
                          "--", PY, "-c", "pass", cwd=workdir)
    assert missing.returncode == 2
    assert "nodes.hostfile" in missing.stderr and "cannot read it" in missing.stderr
