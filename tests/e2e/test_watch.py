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


def test_watch_reads_babysit_toml_like_run(workdir: Path) -> None:
    # Regression: `watch` ignored babysit.toml's [hang] and [straggler] (only [alerts] was
    # read): a start-up allowance of 2 s here flags the log that never shows a step.
    log = workdir / "job.out"
    log.write_text("loading the model\n")
    (workdir / "babysit.toml").write_text("[hang]\nstartup_s = \"2s\"\n")
    home = workdir / "h"
    err = workdir / "w.err"
    proc = start_babysit("watch", "--follow", str(log), "--home", str(home), cwd=workdir,
                         stderr_path=err)  # fmt: skip
    try:
        wait_for(lambda: "hang" in file_text(err), what="the start-up allowance to run out")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
    assert [i["kind"] for i in status_json(home, "job", workdir)["incidents"]] == ["hang"]
    (workdir / "babysit.toml").write_text("[straggler]\nlag = \"soon\"\n")
    bad = run_babysit("watch", str(log), cwd=workdir)
    assert bad.returncode == 2 and "straggler.lag" in bad.stderr, bad.stderr


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


OOM = (
    "[rank3]:Traceback (most recent call last):\n"
    '[rank3]:  File "/w/train.py", line 88, in train_step\n'
    "[rank3]:torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
)


def test_replay_triages_the_failure_in_the_log(workdir: Path) -> None:
    log = workdir / "slurm-77.out"
    log.write_text("iter 1: loss 2.0, time 5ms\n" + OOM)
    res = run_babysit("watch", str(log), "--json", cwd=workdir)
    assert res.returncode == 0, res.stderr
    t = json.loads(res.stdout)["triage"]
    assert t["category"] == "cuda_oom" and t["suspect"]["rank"] == 3
    text = run_babysit("watch", str(log), cwd=workdir)
    assert "triage of the failure in the log" in text.stdout and "cuda_oom" in text.stdout
    healthy = workdir / "ok.log"
    healthy.write_text("iter 1: loss 2.0, time 5ms\n")
    assert json.loads(run_babysit("watch", str(healthy), "--json", cwd=workdir).stdout)[
        "triage"] is None


def test_follow_triages_a_crash_and_records_it(workdir: Path) -> None:
    log = workdir / "slurm-88.out"
    log.write_text("iter 1: loss 2.0, time 5ms\n")
    home = workdir / "h"
    err = workdir / "w.err"
    proc = start_babysit("watch", "--follow", str(log), "--home", str(home), cwd=workdir,
                         stderr_path=err)
    wait_for(lambda: "watching" in file_text(err), what="the watcher to start")
    with log.open("a") as fh:
        fh.write(OOM)
    proc.send_signal(signal.SIGINT)  # the watch ends: the files grew since the last triage
    assert proc.wait(timeout=30) == 0
    assert "triage: cuda_oom" in file_text(err)
    doc = status_json(home, "slurm-88", workdir)
    assert [d["category"] for d in doc["diagnoses"]] == ["cuda_oom"]


def test_follow_triages_when_the_files_go_quiet(tmp_path: Path) -> None:
    import threading
    import time

    from babysit.store import Store
    from babysit.supervise.watch import follow

    log = tmp_path / "job.log"
    log.write_text("iter 1: loss 2.0, time 5ms\n")
    said: list[str] = []
    done = threading.Event()

    in_loop: list[bool] = []  # for each triage: was the watch still running (not ending)?

    def say(level: str, msg: str) -> None:
        said.append(msg)
        if msg.startswith("triage:"):
            in_loop.append(time.monotonic() <= deadline)
            done.set()

    def grow() -> None:
        with log.open("a") as fh:
            fh.write(OOM)

    deadline = time.monotonic() + 30
    threading.Timer(0.3, grow).start()
    with Store.open(tmp_path / "h") as store:
        follow([log], store, "job", say, stop=lambda: done.is_set() or time.monotonic() > deadline,
               poll_s=0.05, quiet_s=0.3)
        rows = store.diagnoses("job")
    assert in_loop == [True], said  # the quiet spell fired it, not the end of the watch
    assert [r["category"] for r in rows] == ["cuda_oom"]

