"""The Slurm engines' own logic (engines/slurm.py, slurmalloc.py, slurmfollow.py) on a fake Slurm:
babysit's srun flags, ranks to nodes, bans that leave too few nodes, the requeue, the follower's
verdicts. The real cluster is in tests/e2e/test_slurm.py."""

from __future__ import annotations

import signal
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from babysit.engines.base import LaunchSpec
from babysit.engines.process import Handle
from babysit.engines.slurm import SlurmRequest, SlurmStepEngine, slurm_engine
from babysit.engines.slurmalloc import SlurmAllocEngine
from babysit.engines.slurmctl import Completed, SlurmCtl
from babysit.engines.slurmfollow import BadExit, Follower, read_state
from babysit.engines.slurmjob import SlurmJobEngine
from babysit.engines.srun import srun_argv, task_hosts
from babysit.errors import LaunchError, NodesExhausted
from babysit.records import ExitCode


class FakeSlurm:
    """Answers by command name; records every call."""

    def __init__(self, **answers: list[Completed]) -> None:
        self.answers = answers
        self.calls: list[list[str]] = []

    def __call__(
        self, argv: Sequence[str], timeout_s: float, env: Mapping[str, str] | None = None
    ) -> Completed:
        self.calls.append(list(argv))
        key = argv[1] if argv[0] == "scontrol" else argv[0]
        queue = self.answers.get(key) or [Completed(0, "", "")]
        return queue.pop(0) if len(queue) > 1 else queue[0]


def _job(state: str, **more: str) -> Completed:
    fields = {"JobId": "7", "JobState": state, "Reason": "None", "ExitCode": "0:0",
              "NodeList": "node[1-2]", "Requeue": "1", **more}
    return Completed(0, " ".join(f"{k}={v}" for k, v in fields.items()) + "\n", "")


def _spec(tmp_path: Path, *argv: str) -> LaunchSpec:
    return LaunchSpec(list(argv), {}, tmp_path, tmp_path / "attempt-0001", 5.0, "tok")


def test_srun_flags_after_srun_and_the_users_win() -> None:
    assert srun_argv(["srun", "-N2", "python", "t.py"], ["node2", "node3"]) == [
        "srun", "--exclude=node[2-3]", "--label", "-N2", "python", "t.py"
    ]
    assert srun_argv(["srun", "-l", "x"], []) == ["srun", "-l", "x"]
    assert srun_argv(["srun", "-N", "2", "python", "t.py", "-l"], [], nodes=3) == [
        "srun", "--label", "-N", "2", "python", "t.py", "-l"
    ]  # the trainer's own -l is not srun's; the user's -N wins over --nodes
    assert srun_argv(["python", "t.py"], [], jobid="9", nodes=2)[:3] == [
        "srun", "--jobid=9", "--nodes=2"
    ]


def test_a_bad_exit_ends_the_step_after_a_grace(tmp_path: Path) -> None:
    log = tmp_path / "stderr.log"
    watch = BadExit(log, grace_s=3.0)
    assert not watch.due(0.0)  # no file yet
    log.write_text("srun: error: node3: task 2: Terminated\n")
    assert not watch.due(1.0)
    with log.open("a") as fh:
        fh.write("srun: error: node2: task 1: Exited with exit code 1\n")
    assert not watch.due(2.0)  # seen now: the step ends at 5.0
    assert not watch.due(4.9)
    assert watch.due(5.0)
    assert not watch.due(9.0)  # once


def test_ranks_to_nodes_from_sruns_reports() -> None:
    text = (
        "srun: error: node2: task 1: Exited with exit code 1\n"
        "srun: error: node3: tasks 2-3,5: Killed\n"
    )
    assert task_hosts(text) == {1: "node2", 2: "node3", 3: "node3", 5: "node3"}


def test_step_engine_excludes_banned_nodes_of_the_allocation(tmp_path: Path) -> None:
    engine = SlurmStepEngine.from_env(
        {"SLURM_JOB_ID": "7", "SLURM_JOB_NODELIST": "node[1-4]", "SLURMD_NODENAME": "node1"},
        SlurmCtl(FakeSlurm()),
    )
    assert engine.host == "node1"
    spec = engine.apply_bans(_spec(tmp_path, "srun", "-N", "2", "python", "t.py"),
                             ["node3", "elsewhere"])
    assert "--exclude=node3" in spec.argv and spec.exclude == ("node3",)
    assert engine.attempt_nodes[spec.attempt_dir] == ["node1", "node2", "node4"]


def test_a_ban_that_leaves_too_few_nodes_is_nodes_exhausted(tmp_path: Path) -> None:
    engine = SlurmStepEngine("7", ["node1", "node2"], SlurmCtl(FakeSlurm()))
    with pytest.raises(NodesExhausted, match="the bans leave 1 of the allocation's 2 nodes"):
        engine.apply_bans(_spec(tmp_path, "srun", "python", "t.py"), ["node2"])


def test_finish_requeues_without_the_banned_nodes(tmp_path: Path) -> None:
    fake = FakeSlurm(show=[_job("RUNNING")])
    engine = SlurmStepEngine("7", ["node1", "node2"], SlurmCtl(fake))
    with pytest.raises(NodesExhausted):
        engine.apply_bans(_spec(tmp_path, "srun", "x"), ["node2"])
    engine.launched = True
    said = engine.finish(ExitCode.BUDGET_EXHAUSTED)
    assert said == "requeued Slurm job 7 without node2 (scontrol requeue)"
    verbs = [c[1] for c in fake.calls if c[0] == "scontrol"]
    assert verbs == ["show", "requeuehold", "update", "release"]
    assert ["scontrol", "update", "JobId=7", "ExcNodeList=node2"] in fake.calls



def test_the_requeues_scontrol_calls_are_shielded_from_slurms_sigterm(tmp_path: Path) -> None:
    # Slurm's requeue signals every process of the job: a `scontrol release` that its SIGTERM
    # ends leaves the job held for good. The calls that finish the requeue run with SIGTERM
    # blocked (their children inherit the mask); babysit's own handling resumes after.
    blocked: dict[str, bool] = {}

    class Recording(FakeSlurm):
        def __call__(
            self, argv: Sequence[str], timeout_s: float, env: Mapping[str, str] | None = None
        ) -> Completed:
            if argv[0] == "scontrol" and argv[1] in ("requeuehold", "update", "release"):
                mask = signal.pthread_sigmask(signal.SIG_BLOCK, set())
                blocked[argv[1]] = signal.SIGTERM in mask
            return super().__call__(argv, timeout_s, env)

    fake = Recording(show=[_job("RUNNING")])
    engine = SlurmStepEngine("7", ["node1", "node2"], SlurmCtl(fake))
    with pytest.raises(NodesExhausted):
        engine.apply_bans(_spec(tmp_path, "srun", "x"), ["node2"])
    engine.launched = True
    assert engine.finish(ExitCode.BUDGET_EXHAUSTED) is not None
    assert blocked == {"requeuehold": True, "update": True, "release": True}
    assert signal.SIGTERM not in signal.pthread_sigmask(signal.SIG_BLOCK, set())  # unblocked


def test_finish_does_not_loop_or_requeue_what_may_not(tmp_path: Path) -> None:
    already = _job("RUNNING", ExcNodeList="node2")
    engine = SlurmStepEngine("7", ["node1"], SlurmCtl(FakeSlurm(show=[already])))
    assert engine.finish(ExitCode.OK) is None
    engine.banned = ["node2"]  # nothing ran, and the job already leaves node2 out
    said = engine.finish(ExitCode.BUDGET_EXHAUSTED)
    assert said is not None and "not requeueing" in said
    engine = SlurmStepEngine(
        "7", ["node1"], SlurmCtl(FakeSlurm(show=[_job("RUNNING", Requeue="0")]))
    )
    said = engine.finish(ExitCode.BUDGET_EXHAUSTED)
    assert said is not None and "not requeueable" in said


def test_job_engine_checks_the_partition(tmp_path: Path) -> None:
    fake = FakeSlurm(sinfo=[Completed(0, "debug* node[1-3]\n", "")])
    engine = SlurmJobEngine(SlurmRequest(nodes=2), SlurmCtl(fake))
    spec = engine.apply_bans(_spec(tmp_path, "python", "t.py"), ["node1", "node9"])
    assert spec.exclude == ("node1",)
    with pytest.raises(NodesExhausted, match="the bans leave 1 of the partition's 3 nodes"):
        engine.apply_bans(spec, ["node1", "node2"])
    engine = SlurmJobEngine(SlurmRequest(partition="gpu"), SlurmCtl(fake))
    with pytest.raises(LaunchError, match="Slurm has no partition 'gpu'"):
        engine.apply_bans(spec, [])


def test_job_engine_arms_the_preflight_in_the_next_job(tmp_path: Path) -> None:
    engine = SlurmJobEngine(SlurmRequest(nodes=2), SlurmCtl(FakeSlurm()))
    assert engine.preflight_nodes(["py", "-m", "babysit", "doctor"], 30.0) == []  # none yet
    spec, notes = engine.prepare(_spec(tmp_path, "python", "t.py"))
    assert len(notes) == 1 and "each job checks its own nodes" in notes[0]
    spec.attempt_dir.mkdir()
    script = engine._script(spec).read_text()
    assert "babysit doctor" in script and "babysit.engines.jobcheck" in script
    assert engine.preflight_results(Handle(1, 0.0, spec.attempt_dir, "tok")) is None
    # The user's own sbatch script runs as it is: said once, not silently skipped.
    (tmp_path / "job.sbatch").write_text("#!/bin/bash\nsrun python t.py\n")
    notes = engine.prepare(_spec(tmp_path, "job.sbatch"))[1]
    assert len(notes) == 1 and "cannot check its nodes" in notes[0]
    assert engine.prepare(_spec(tmp_path, "job.sbatch"))[1] == []


def test_engine_choice(tmp_path: Path) -> None:
    inside = {"SLURM_JOB_ID": "7", "SLURM_JOB_NODELIST": "node1"}
    req = SlurmRequest()
    assert slurm_engine(None, ["python", "t.py"], inside, req, tmp_path) is None
    assert slurm_engine(None, ["srun", "python"], {}, req, tmp_path) is None
    assert isinstance(slurm_engine(None, ["srun", "x"], inside, req, tmp_path), SlurmStepEngine)
    assert isinstance(slurm_engine("slurm", ["x"], {}, req, tmp_path), SlurmJobEngine)
    spares = SlurmRequest(nodes=2, spares=1, drain=True)
    engine = slurm_engine("slurm", ["x"], {}, spares, tmp_path)
    assert isinstance(engine, SlurmAllocEngine) and engine.drains
    assert slurm_engine("local", ["srun", "x"], inside, req, tmp_path) is None


def _follow(tmp_path: Path, *answers: Completed) -> tuple[int, dict[str, object], FakeSlurm]:
    fake = FakeSlurm(show=list(answers))
    follower = Follower(SlurmCtl(fake), "7", tmp_path, grace_s=1.0)
    code = follower.run(poll_s=0.0)
    return code, read_state(tmp_path), fake


def test_follower_ends_with_the_jobs_code_and_slurms_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, state, _ = _follow(
        tmp_path, _job("PENDING", Reason="Priority"), _job("RUNNING"),
        _job("TIMEOUT", ExitCode="0:15"),
    )
    assert code == 128 + 15 and state["state"] == "TIMEOUT"
    assert "DUE TO TIME LIMIT" in capsys.readouterr().err


def test_follower_gives_up_on_a_job_that_cannot_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, state, fake = _follow(tmp_path, _job("PENDING", Reason="PartitionNodeLimit"))
    assert state["state"] == "CANNOT_START" and "more nodes" in str(state["why"])
    assert ["scancel", "--full", "7"] in fake.calls
    assert "cannot start: PartitionNodeLimit" in capsys.readouterr().err
    assert code == 3


def test_follower_says_when_the_job_vanished(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gone = Completed(1, "", "slurm_load_jobs error: Invalid job id specified")
    code, state, _ = _follow(tmp_path, _job("RUNNING"), gone)
    assert state["state"] == "VANISHED" and code == 4
    assert "vanished" in capsys.readouterr().err


def test_follower_passes_a_stop_on_and_cancels_after_the_grace(tmp_path: Path) -> None:
    fake = FakeSlurm(show=[_job("RUNNING"), _job("RUNNING"), _job("CANCELLED", ExitCode="0:15")])
    follower = Follower(SlurmCtl(fake), "7", tmp_path, grace_s=0.0)
    follower.on_signal(15, None)
    follower.run(poll_s=0.0)
    cancels = [c for c in fake.calls if c[0] == "scancel"]
    assert cancels[0] == ["scancel", "--signal=TERM", "--full", "7"]
    assert ["scancel", "--full", "7"] in cancels


def test_the_job_script_fills_head_from_slurm_and_quotes_every_word() -> None:
    # A job per attempt: torchrun's rendezvous endpoint is the job's first node, known only
    # once the job runs; `{head}` is filled in by the shell from Slurm's node list.
    from babysit.engines.srun import job_script

    script = job_script(
        ["srun", "--label", "torchrun", "--rdzv-endpoint", "{head}:29500", "a b.py", "$(boom)"]
    )
    lines = script.splitlines()
    assert lines[0] == "#!/bin/bash"
    assert lines[1] == 'BABYSIT_HEAD=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)'
    assert lines[2] == (
        "exec srun --label torchrun --rdzv-endpoint \"$BABYSIT_HEAD\":29500 'a b.py' '$(boom)'"
    )
    assert job_script(["srun", "python", "t.py"]) == "#!/bin/bash\nexec srun python t.py\n"


def test_spares_shrink_when_the_bans_leave_fewer_than_n_plus_k_nodes(tmp_path: Path) -> None:
    # 3 nodes, --nodes 2 --spares 1, node3 banned: asked for 3 with node3 excluded, the
    # allocation would wait for ever; it asks for the 2 that are left.
    fake = FakeSlurm(
        sinfo=[Completed(0, "debug* node[1-3]\n", "")],
        sbatch=[Completed(0, "12\n", "")],
        show=[_job("RUNNING", JobId="12", NodeList="node[1-2]")],
    )
    engine = SlurmAllocEngine(SlurmRequest(nodes=2, spares=1), tmp_path, SlurmCtl(fake))
    engine._allocate(["node3"])
    (sbatch,) = [c for c in fake.calls if c[0] == "sbatch"]
    assert "--nodes=2" in sbatch and "--exclude=node3" in sbatch, sbatch
    assert engine.alloc == ["node1", "node2"]
