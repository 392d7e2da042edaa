"""`babysit run` end to end, with real processes and signals (no torch)."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import pytest

from tests.conftest import (
    file_text,
    fixture,
    pid_alive,
    run_babysit,
    start_babysit,
    status_json,
    wait_for,
)

pytestmark = pytest.mark.e2e
PY = sys.executable


def test_crash_twice_then_succeed(workdir: Path) -> None:
    home = workdir / "h"
    res = run_babysit(
        "run", "--home", str(home), "--backoff", "0.05", "--name", "flaky", "--",
        PY, fixture("flaky.py"), "--fail-times", "2", cwd=workdir,
    )
    assert res.returncode == 0, res.stderr
    assert "ConnectionError: Connection reset by peer" in res.stderr  # the run's stderr, echoed
    assert res.stdout.count("training done") == 1
    doc = status_json(home, "flaky", workdir)
    assert doc["state"] == "succeeded"
    assert [a["outcome"] for a in doc["attempts"]] == ["failed", "failed", "succeeded"]
    assert [a["exit_code"] for a in doc["attempts"]] == [1, 1, 0]
    assert [a["last_step"] for a in doc["attempts"]] == [2, 5, 8]
    assert all(a["pid"] for a in doc["attempts"])
    first = doc["attempts"][0]
    assert "ConnectionError: Connection reset by peer" in first["summary"]
    # triage's verdict: a peer's reset connection with no error of the peer's own cannot say
    # whether a restart helps (null), and babysit restarts it within the budget
    assert first["cause"] == "network" and first["transient"] is None
    assert doc["diagnoses"][0]["category"] == "network"
    kinds = [e["kind"] for e in doc["events"]]
    assert kinds.count("restart_scheduled") == 2 and kinds[-1] == "succeeded"
    mirror = [json.loads(line) for line in (home / "events.jsonl").read_text().splitlines()]
    assert [m["kind"] for m in mirror] == kinds


def test_syntax_error_stops_after_one_attempt(workdir: Path) -> None:
    home = workdir / "h"
    res = run_babysit("run", "--home", str(home), "--backoff", "0", "--", PY,
                      fixture("syntax_error.py"), cwd=workdir)
    assert res.returncode == 3, res.stderr
    assert "giving up" in res.stderr and "SyntaxError" in res.stderr
    assert "syntax_error.py:2" in res.stderr  # where to fix it
    assert "a human must fix this" in res.stderr
    doc = status_json(home, "syntax_error", workdir)
    assert len(doc["attempts"]) == 1
    assert doc["attempts"][0]["cause"] == "user_code"
    assert doc["attempts"][0]["transient"] is False


def test_import_error_quotes_the_error(workdir: Path) -> None:
    res = run_babysit("run", "--home", str(workdir / "h"), "--", PY, fixture("import_error.py"),
                      cwd=workdir)
    assert res.returncode == 3
    assert "ModuleNotFoundError: No module named 'babysit_no_such_module_xyz'" in res.stderr


def test_same_error_twice_without_progress_stops(workdir: Path) -> None:
    script = workdir / "boom.py"
    script.write_text("print('step 5')\nraise RuntimeError('the widget refused frame 7')\n")
    home = workdir / "h"
    res = run_babysit("run", "--home", str(home), "--backoff", "0", "--", PY, str(script),
                      cwd=workdir)
    assert res.returncode == 3, res.stderr
    assert "same error as attempt 1" in res.stderr
    assert len(status_json(home, "boom", workdir)["attempts"]) == 2


def test_restart_budget_on_transient_failures(workdir: Path) -> None:
    home = workdir / "h"
    res = run_babysit(
        "run", "--home", str(home), "--backoff", "0", "--max-restarts", "2", "--name", "b", "--",
        PY, fixture("flaky.py"), "--fail-times", "99", "--no-advance", cwd=workdir,
    )
    assert res.returncode == 4, res.stderr
    assert "restart budget" in res.stderr and "requeue" in res.stderr
    doc = status_json(home, "b", workdir)
    assert len(doc["attempts"]) == 3
    assert doc["state"] == "failed" and doc["exit_code"] == 4


def test_checkpoint_handed_to_each_restart(workdir: Path) -> None:
    ckpts = workdir / "ckpts"
    ckpts.mkdir()
    home = workdir / "h"
    res = run_babysit(
        "run", "--home", str(home), "--backoff", "0", "--checkpoint", "ckpts/ckpt_*.pt",
        "--resume-args", "--resume {checkpoint}", "--name", "ck", "--",
        PY, fixture("flaky.py"), "--fail-times", "2", "--ckpt-dir", str(ckpts), cwd=workdir,
    )
    assert res.returncode == 0, res.stderr
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith("attempt=")]
    assert lines[0].startswith("attempt=1 resume_env= resume_arg=None")
    assert f"attempt=2 resume_env={ckpts}/ckpt_000003.pt resume_arg={ckpts}/ckpt_000003.pt" in (
        lines[1]
    )
    assert f"attempt=3 resume_env={ckpts}/ckpt_000006.pt" in lines[2]
    doc = status_json(home, "ck", workdir)
    assert [a["resume_from"] for a in doc["attempts"]] == [
        None, f"{ckpts}/ckpt_000003.pt", f"{ckpts}/ckpt_000006.pt"]


def test_corrupt_newest_checkpoint_is_passed_over(workdir: Path) -> None:
    import zipfile

    ckpts = workdir / "out"
    ckpts.mkdir()
    with zipfile.ZipFile(ckpts / "ckpt_000100.pt", "w") as zf:
        zf.writestr("data.pkl", b"x" * 1000)
    good = (ckpts / "ckpt_000100.pt").read_bytes()
    (ckpts / "ckpt_000200.pt").write_bytes(good[: len(good) // 2])  # cut short mid-write
    os.utime(ckpts / "ckpt_000100.pt", (1, 1))
    os.utime(ckpts / "ckpt_000200.pt", (1, 1))
    res = run_babysit("run", "--home", str(workdir / "h"), "--checkpoint", "out/ckpt_*.pt",
                      "--", PY, fixture("flaky.py"), cwd=workdir)
    assert res.returncode == 0, res.stderr
    assert "skipping checkpoint" in res.stderr and "ckpt_000200.pt" in res.stderr
    assert f"resume_env={ckpts}/ckpt_000100.pt" in res.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "missing command"),
        (["--", "no-such-program-xyz"], "command not found: 'no-such-program-xyz' is not on PATH"),
        (["--", "./nope.sh"], "command not found: ./nope.sh"),
        (["--max-restarts", "-1", "--", "true"], "restart.max_restarts must be >= 0"),
        (["--grace", "-5", "--", "true"], "Invalid value for '--grace': expected a duration"),
        (["--", "echo", "--resume={checkpoint}"], "uses {checkpoint} but no checkpoint glob"),
    ],
)
def test_usage_errors_exit_2(workdir: Path, args: list[str], message: str) -> None:
    res = run_babysit("run", "--home", str(workdir / "h"), *args, cwd=workdir)
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert message in res.stderr
    assert "Traceback" not in res.stderr


def test_bad_config_key_names_key_and_suggests(workdir: Path) -> None:
    (workdir / "babysit.toml").write_text("[restart]\nmax_restart = 3\n")
    res = run_babysit("run", "--", "true", cwd=workdir)
    assert res.returncode == 2
    assert "unknown key 'restart.max_restart'" in res.stderr
    assert "did you mean 'max_restarts'" in res.stderr


def test_config_file_settings_apply(workdir: Path) -> None:
    (workdir / "babysit.toml").write_text(
        '[run]\nname = "fromtoml"\nhome = "hh"\n[restart]\nbackoff_s = 0\nmax_restarts = 0\n'
    )
    res = run_babysit("run", "--", PY, fixture("flaky.py"), "--fail-times", "1", cwd=workdir)
    assert res.returncode == 4, res.stderr  # max_restarts = 0: the first failure ends the run
    assert status_json(workdir / "hh", "fromtoml", workdir)["state"] == "failed"


def test_home_not_writable(workdir: Path) -> None:
    (workdir / "afile").write_text("")
    res = run_babysit("run", "--home", str(workdir / "afile" / "home"), "--", "true",
                      cwd=workdir)
    assert res.returncode == 2
    assert "cannot use babysit home" in res.stderr and "--home" in res.stderr


def test_hostile_output_is_survived(workdir: Path) -> None:
    home = workdir / "h"
    res = run_babysit("run", "--home", str(home), "--name", "spew", "--", PY,
                      fixture("spew.py"), cwd=workdir)
    assert res.returncode == 0, res.stderr[-2000:]
    assert len(res.stdout) > 20 * 1024 * 1024  # echoed as written, 20 MB line included
    doc = status_json(home, "spew", workdir)
    assert doc["attempts"][0]["last_step"] == 2


def test_stop_kills_child_that_ignores_sigterm(workdir: Path) -> None:
    home = workdir / "h"
    err = workdir / "babysit.err"
    proc = start_babysit("run", "--home", str(home), "--grace", "1", "--name", "stub", "--", PY,
                         fixture("stubborn.py"), cwd=workdir, stderr_path=err)
    log = home / "runs" / "stub" / "attempt-0001" / "stdout.log"
    wait_for(lambda: "step 3" in file_text(log), what="the child to print steps")
    launcher = json.loads((log.parent / "launcher.json").read_text())
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 5
    assert "ignoring SIGTERM" in file_text(log)
    assert "stopped by the operator (SIGTERM) after SIGKILL" in file_text(err)
    wait_for(lambda: not pid_alive(launcher["pid"]), timeout=10, what="the child to be dead")
    doc = status_json(home, "stub", workdir)
    assert doc["state"] == "stopped"
    assert doc["attempts"][0]["outcome"] == "stopped"
    assert doc["attempts"][0]["signal"] == signal.SIGKILL


def test_second_ctrl_c_stops_at_once(workdir: Path) -> None:
    home = workdir / "h"
    err = workdir / "babysit.err"
    proc = start_babysit("run", "--home", str(home), "--grace", "600", "--name", "stub", "--",
                         PY, fixture("stubborn.py"), cwd=workdir, stderr_path=err)
    log = home / "runs" / "stub" / "attempt-0001" / "stdout.log"
    wait_for(lambda: "step 3" in file_text(log), what="the child to print steps")
    proc.send_signal(signal.SIGINT)
    wait_for(lambda: "SIGINT received" in file_text(err), what="babysit to pass SIGINT on")
    wait_for(lambda: "ignoring SIGINT" in file_text(log), what="the child to get SIGINT")
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=20) == 5  # far less than the 600 s grace
    assert "second signal" in file_text(err)


def test_no_grandchild_survives_a_stop(workdir: Path) -> None:
    home = workdir / "h"
    pidfile = workdir / "pids"
    proc = start_babysit("run", "--home", str(home), "--grace", "5", "--name", "fork", "--", PY,
                         fixture("forker.py"), str(pidfile), cwd=workdir,
                         stderr_path=workdir / "babysit.err")
    wait_for(pidfile.exists, what="the forker to write its pids")
    pids = [int(p) for p in pidfile.read_text().split()]
    assert all(pid_alive(p) for p in pids)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=30) == 5
    # The daemon left the process group and the session; it must be gone all the same.
    wait_for(lambda: not any(pid_alive(p) for p in pids), timeout=10,
             what=f"all of {pids} to be dead")


def test_babysit_sigkilled_then_reattached(workdir: Path) -> None:
    home = workdir / "h"
    stop = workdir / "stop-training"
    args = ("run", "--home", str(home), "--name", "steady", "--", PY, fixture("steady.py"),
            str(stop))
    first = start_babysit(*args, cwd=workdir, stderr_path=workdir / "b1.err")
    log = home / "runs" / "steady" / "attempt-0001" / "stdout.log"
    wait_for(lambda: "step 5" in file_text(log), what="training to make progress")
    first.kill()  # SIGKILL: no chance to clean up
    first.wait(timeout=10)
    size = len(file_text(log))
    wait_for(lambda: len(file_text(log)) > size + 50, what="training to go on without babysit")
    second = start_babysit(*args, cwd=workdir, stderr_path=workdir / "b2.err")
    wait_for(lambda: "re-attached to attempt 1" in file_text(workdir / "b2.err"),
             what="the second babysit to re-attach")
    doc = wait_for(lambda: (d := status_json(home, "steady", workdir))["supervised"] and d,
                   what="status to show the run supervised again")
    assert doc["state"] == "running"
    stop.write_text("")
    assert second.wait(timeout=30) == 0, file_text(workdir / "b2.err")
    assert len((workdir / "stop-training.pid").read_text().split()) == 1  # never a second copy
    doc = status_json(home, "steady", workdir)
    assert doc["state"] == "succeeded"
    assert len(doc["attempts"]) == 1 and doc["attempts"][0]["exit_code"] == 0
    assert any(e["kind"] == "reattached" for e in doc["events"])


def test_attempt_that_ended_while_babysit_was_away(workdir: Path) -> None:
    home = workdir / "h"
    stop = workdir / "stop-training"
    args = ("run", "--home", str(home), "--name", "steady", "--", PY, fixture("steady.py"),
            str(stop))
    first = start_babysit(*args, cwd=workdir, stderr_path=workdir / "b1.err")
    attempt_dir = home / "runs" / "steady" / "attempt-0001"
    wait_for(lambda: "step 2" in file_text(attempt_dir / "stdout.log"), what="progress")
    first.kill()
    first.wait(timeout=10)
    stop.write_text("")
    wait_for((attempt_dir / "exit.json").exists, what="the launcher to record the exit")
    res = run_babysit(*args, cwd=workdir)
    assert res.returncode == 0, res.stderr
    assert "ended while babysit was away" in res.stderr
    doc = status_json(home, "steady", workdir)
    assert len(doc["attempts"]) == 1 and doc["attempts"][0]["outcome"] == "succeeded"


def test_second_babysit_on_a_supervised_run_is_refused(workdir: Path) -> None:
    home = workdir / "h"
    stop = workdir / "stop-training"
    args = ("run", "--home", str(home), "--name", "steady", "--", PY, fixture("steady.py"),
            str(stop))
    first = start_babysit(*args, cwd=workdir, stderr_path=workdir / "b1.err")
    wait_for(lambda: "step 2" in file_text(home / "runs/steady/attempt-0001/stdout.log"),
             what="progress")
    res = run_babysit(*args, cwd=workdir)
    assert res.returncode == 2
    assert "already supervised by babysit" in res.stderr
    stop.write_text("")
    assert first.wait(timeout=30) == 0


def test_status_and_logbook_outputs(workdir: Path) -> None:
    home = workdir / "h"
    run_babysit("run", "--home", str(home), "--backoff", "0", "--name", "fl", "--", PY,
                fixture("flaky.py"), "--fail-times", "1", cwd=workdir)
    table = run_babysit("status", "--home", str(home), cwd=workdir)
    assert table.returncode == 0 and "fl" in table.stdout and "succeeded" in table.stdout
    md = run_babysit("logbook", "fl", "--home", str(home), cwd=workdir)
    assert md.returncode == 0
    assert md.stdout.startswith("# Logbook: fl") and "| 2 |" in md.stdout
    js = run_babysit("logbook", "fl", "--home", str(home), "--format", "json", cwd=workdir)
    assert json.loads(js.stdout)["attempts"][1]["outcome"] == "succeeded"
    missing = run_babysit("status", "nope", "--home", str(home), cwd=workdir)
    assert missing.returncode == 2 and "no run named 'nope'" in missing.stderr
    nohome = run_babysit("status", "--home", str(workdir / "none"), cwd=workdir)
    assert nohome.returncode == 2 and "no babysit home" in nohome.stderr


@pytest.mark.parametrize("via", ["client", "metrics-file"])
def test_metrics_from_the_client_or_a_metrics_file(workdir: Path, via: str) -> None:
    home = workdir / "h"
    target = "client" if via == "client" else str(workdir / "m.jsonl")
    extra = [] if via == "client" else ["--metrics-file", "m.jsonl"]
    res = run_babysit("run", "--home", str(home), "--name", "c", *extra, "--", PY,
                      fixture("client_trainer.py"), target, cwd=workdir)
    assert res.returncode == 0, res.stderr
    doc = status_json(home, "c", workdir)
    nan = [i for i in doc["incidents"] if i["kind"] == "nonfinite"]
    assert [(i["metric"], i["step"]) for i in nan] == [("loss", 40)]
    assert doc["attempts"][0]["last_step"] == 59


def test_backoff_flag_keeps_the_configured_cap(workdir: Path) -> None:
    from babysit.store import Store

    (workdir / "babysit.toml").write_text("[restart]\nbackoff_max_s = 60\n")
    assert run_babysit("run", "--home", "h", "--backoff", "5", "--name", "a", "--", "true",
                       cwd=workdir).returncode == 0
    assert run_babysit("run", "--home", "h", "--backoff", "90", "--name", "b", "--", "true",
                       cwd=workdir).returncode == 0
    with Store.open(workdir / "h") as store:
        assert store.run("a")["config"]["restart"]["backoff_max_s"] == 60  # kept
        assert store.run("b")["config"]["restart"]["backoff_max_s"] == 90  # lifted
