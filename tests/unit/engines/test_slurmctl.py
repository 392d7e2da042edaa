"""Slurm's commands behind the seam (engines/slurmctl.py): real outputs of Slurm 22.05 parsed,
refusals and silences turned into clear errors, with a fake runner."""

from __future__ import annotations

import signal
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from babysit.engines.slurmctl import (
    Completed,
    SlurmCtl,
    base_state,
    parse_scontrol_job,
    parse_squeue_json,
    pending_problem,
    run_command,
    scheduler_verdict,
    shielded_from_term,
)
from babysit.errors import LaunchError

SAMPLES = Path(__file__).parents[2] / "fixtures" / "slurm"


class FakeRunner:
    def __init__(self, *answers: Completed) -> None:
        self.answers = list(answers)
        self.calls: list[list[str]] = []

    def __call__(
        self, argv: Sequence[str], timeout_s: float, env: Mapping[str, str] | None = None
    ) -> Completed:
        self.calls.append(list(argv))
        return self.answers.pop(0)


def test_squeue_json_of_slurm_22_05() -> None:
    jobs = {j.job_id: j for j in parse_squeue_json((SAMPLES / "squeue-22.05.json").read_text())}
    assert jobs["2"].state == "TIMEOUT" and jobs["2"].signal == 15 and jobs["2"].nodes == ("node1",)
    assert jobs["3"].state == "FAILED" and jobs["3"].exit_code == 3
    assert jobs["4"].signal == 9
    assert jobs["5"].pending and jobs["5"].reason == "PartitionNodeLimit"
    assert jobs["1"].state == "CANCELLED" and not jobs["1"].active


def test_squeue_json_of_newer_slurm() -> None:
    text = (
        '{"jobs": [{"job_id": 7, "job_state": ["RUNNING"], "nodes": "node[1-2]", '
        '"exit_code": {"return_code": {"set": true, "number": 0}, "signal": {"id": '
        '{"set": false, "number": 0}}}, "requeue": true}]}'
    )
    (job,) = parse_squeue_json(text)
    assert job.state == "RUNNING" and job.nodes == ("node1", "node2") and job.requeue
    assert job.exit_code == 0 and job.active


def test_squeue_garbage_is_a_clear_error() -> None:
    with pytest.raises(LaunchError, match="not JSON"):
        parse_squeue_json("squeue: error: slurm_load_jobs")


def test_scontrol_show_job() -> None:
    job = parse_scontrol_job((SAMPLES / "scontrol-timeout.txt").read_text())
    assert job is not None
    assert (job.job_id, job.state, job.reason, job.signal) == ("2", "TIMEOUT", "TimeLimit", 15)
    assert job.nodes == ("node1",) and job.batch_host == "node1" and job.requeue
    failed = parse_scontrol_job((SAMPLES / "scontrol-failed.txt").read_text())
    assert failed is not None and failed.exit_code == 3 and failed.signal is None


def test_scontrol_paths_with_spaces_and_no_job() -> None:
    line = "JobId=9 JobName=a b JobState=RUNNING Reason=None ExitCode=0:0 NodeList=n[1-2] " \
        "StdOut=/tmp/my dir/out.log Requeue=0"
    job = parse_scontrol_job(line)
    assert job is not None and job.stdout == "/tmp/my dir/out.log" and job.nodes == ("n1", "n2")
    assert job.reason is None and not job.requeue
    assert parse_scontrol_job("") is None


@pytest.mark.parametrize(
    ("state", "category"),
    [
        ("TIMEOUT", "preemption"),
        ("PREEMPTED", "preemption"),
        ("NODE_FAIL", "preemption"),
        ("OUT_OF_MEMORY", "host_oom"),
        ("CANCELLED by 1000", "preemption"),
        ("COMPLETED", None),
        (None, None),
    ],
)
def test_scheduler_verdicts(state: str | None, category: str | None) -> None:
    found = scheduler_verdict(state)
    assert (found[0] if found else None) == category
    if state == "CANCELLED by 1000":
        assert found is not None and "UID 1000" in found[1]


def test_base_state() -> None:
    assert base_state("CANCELLED by 0") == ("CANCELLED", 0)
    assert base_state("COMPLETED+") == ("COMPLETED", None)


def test_pending_reasons() -> None:
    assert pending_problem("Priority") is None
    assert pending_problem("PartitionNodeLimit") == (
        True, "it asks for more nodes than the partition has (or allows)"
    )
    stuck = pending_problem("ReqNodeNotAvail, UnavailableNodes:node2")
    assert stuck is not None and stuck[0] is False
    held = pending_problem("launch_failed_requeued_held")  # squeue --json spells it so
    assert held is not None and held[0] is True and "slurmd log" in held[1]
    assert pending_problem("launch failed requeued held") == held  # scontrol spells it so


def test_submit_returns_the_job_id_or_quotes_sbatch() -> None:
    ok = FakeRunner(Completed(0, "42\n", ""))
    assert SlurmCtl(ok).submit(["job.sbatch"]) == "42"
    assert ok.calls == [["sbatch", "--parsable", "job.sbatch"]]
    no = FakeRunner(
        Completed(1, "", "sbatch: error: Batch job submission failed: Invalid partition name "
                  "specified\n")
    )
    with pytest.raises(LaunchError, match="Invalid partition name specified"):
        SlurmCtl(no).submit(["-p", "nosuch", "job.sbatch"])


def test_a_silent_slurmctld_is_an_error_not_a_wait() -> None:
    with pytest.raises(LaunchError, match="did not answer within"):
        SlurmCtl(FakeRunner(Completed(None, "", ""))).job("3")


def test_a_job_slurm_forgot_is_none() -> None:
    gone = FakeRunner(Completed(1, "", "slurm_load_jobs error: Invalid job id specified\n"))
    assert SlurmCtl(gone).job("99") is None


def test_cancel_and_signal_arguments() -> None:
    r = FakeRunner(Completed(0, "", ""), Completed(0, "", ""), Completed(1, "", "gone"))
    ctl = SlurmCtl(r)
    assert ctl.cancel("5")
    assert ctl.cancel("5", signal="USR1", full=False)
    assert not ctl.cancel("5")
    assert r.calls == [
        ["scancel", "--full", "5"], ["scancel", "--signal=USR1", "5"], ["scancel", "--full", "5"]
    ]


def test_partition_nodes() -> None:
    r = FakeRunner(Completed(0, "debug* node[1-3]\ngpu node[7-8]\n", ""))
    assert SlurmCtl(r).partition_nodes(None) == ["node1", "node2", "node3"]
    r = FakeRunner(Completed(0, "debug* node[1-3]\n", ""))
    assert SlurmCtl(r).partition_nodes("nosuch") is None


def test_missing_binary_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(LaunchError, match="sbatch is not installed or not on PATH"):
        run_command(["sbatch", "--version"], 1.0)


def test_run_command_kills_at_its_time() -> None:
    res = run_command(["sleep", "5"], 0.2)
    assert res.returncode is None


def test_a_command_started_shielded_outlives_a_sigterm() -> None:
    # Real processes and signals: the child SIGTERMs itself (as Slurm's requeue would) and
    # still finishes its work; started unshielded, the same child dies of it.
    code = "import os, signal; os.kill(os.getpid(), signal.SIGTERM); print('released')"
    with shielded_from_term():
        res = run_command([sys.executable, "-c", code], 10.0)
    assert (res.returncode, res.stdout.strip()) == (0, "released")
    killed = run_command([sys.executable, "-c", code], 10.0)
    assert killed.returncode == -signal.SIGTERM
