"""The Slurm engine end to end, on a real Slurm cluster on localhost (tests/slurmlab.py):
node1..node3, no accounting. From a login node (`--launcher slurm`: a job per attempt, or one
allocation with spares) and inside an allocation (`babysit run -- srun ...` in an sbatch
script). Every wait has a deadline; nothing sleeps for a fixed time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from babysit.store import Store
from tests.conftest import babysit_argv, file_text, fixture, run_babysit, start_babysit, wait_for
from tests.slurmlab import SlurmLab

pytestmark = pytest.mark.e2e
PY = sys.executable
TRAINER = fixture("slurm_trainer.py")
CONFIG = """
[nodes]
ban_after = 1
[restart]
backoff_s = 0
[stop]
grace_s = 5
"""


def _config(workdir: Path, extra: str = "") -> str:
    path = workdir / "b.toml"
    path.write_text(CONFIG + extra)
    return str(path)


def _babysit(workdir: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return run_babysit("run", "--home", str(workdir / "h"), "-q", *args, cwd=workdir,
                       timeout=timeout)


def _state(home: Path, run: str, number: int) -> dict[str, Any]:
    path = home / "runs" / run / f"attempt-{number:04d}" / "slurm.json"
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def _attempts(home: Path, run: str) -> list[dict[str, Any]]:
    with Store.open(home, create=False) as store:
        return store.attempts(run)


def _events(home: Path, run: str) -> list[dict[str, Any]]:
    with Store.open(home, create=False) as store:
        return store.events(run)


def _job(slurm: SlurmLab, job: str) -> str:
    return slurm.run("scontrol", "show", "job", "-o", job).stdout


def test_xid_on_node2_bans_it_and_the_next_job_excludes_it(
    slurm: SlurmLab, workdir: Path
) -> None:
    res = _babysit(
        workdir, "--config", _config(workdir), "--name", "xid", "--launcher", "slurm",
        "--nodes", "2", "--", PY, TRAINER, "--fail-node", "node2",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    assert "banned node node2" in res.stderr
    home = workdir / "h"
    first, second = _state(home, "xid", 1), _state(home, "xid", 2)
    assert "node2" in first["nodes"]
    assert second["exclude"] == ["node2"] and "node2" not in second["nodes"]
    assert "ExcNodeList=node2 " in _job(slurm, second["job_id"])
    attempts = _attempts(home, "xid")
    assert [a["outcome"] for a in attempts] == ["failed", "succeeded"]
    assert attempts[0]["category"] == "gpu_hardware"
    assert attempts[0]["suspect_host"] is None or attempts[0]["suspect_host"] == "node2"


def test_drain_drains_the_banned_node_with_the_triage(slurm: SlurmLab, workdir: Path) -> None:
    res = _babysit(
        workdir, "--config", _config(workdir), "--name", "dr", "--launcher", "slurm",
        "--nodes", "2", "--drain", "--", PY, TRAINER, "--fail-node", "node2",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    assert "drained node2 in Slurm" in res.stderr
    assert slurm.node_states()["node2"].startswith("drain")
    reason = slurm.run("sinfo", "-h", "-R", "-o", "%N|%E").stdout
    assert "node2|babysit: Xid 79" in reason, reason


def test_a_node_named_by_a_network_error_is_banned_only_when_corroborated(
    slurm: SlurmLab, workdir: Path
) -> None:
    """Attempt 1: rank 0's node is named by an NCCL-over-IB error: a suspect, not banned (even
    with ban_after = 1). Attempt 2: the same node again: banned. Attempt 3 runs without it."""
    res = _babysit(
        workdir, "--config", _config(workdir), "--name", "peer", "--launcher", "slurm",
        "--nodes", "2", "--", PY, TRAINER, "--peer-error", "node9", "--until", "2",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    home = workdir / "h"
    first = _state(home, "peer", 1)
    named = first["nodes"][0]  # rank 0's node: its NCCL line carries its name
    assert res.stderr.count(f"node {named} is a suspect, not a culprit") == 1, res.stderr
    assert _state(home, "peer", 2)["exclude"] == []  # not banned after one word from a peer
    assert f"banned node {named}" in res.stderr
    assert _state(home, "peer", 3)["exclude"] == [named]
    assert [a["outcome"] for a in _attempts(home, "peer")] == ["failed", "failed", "succeeded"]


def test_bans_reach_exclude_as_a_hostlist(slurm: SlurmLab, workdir: Path) -> None:
    home = str(workdir / "h")
    for node in ("node1", "node3"):
        ban = run_babysit("nodes", "ban", node, "--reason", "test", "--home", home, cwd=workdir)
        assert ban.returncode == 0, ban.stderr
    res = _babysit(
        workdir, "--config", _config(workdir), "--name", "hl", "--launcher", "slurm",
        "--nodes", "1", "--", PY, TRAINER,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    st = _state(workdir / "h", "hl", 1)
    assert st["nodes"] == ["node2"]
    assert "ExcNodeList=node[1,3] " in _job(slurm, st["job_id"])


def test_a_ban_that_leaves_too_few_nodes_stops_with_exit_4(
    slurm: SlurmLab, workdir: Path
) -> None:
    home = str(workdir / "h")
    run_babysit("nodes", "ban", "node2", "--reason", "test", "--home", home, cwd=workdir)
    res = _babysit(
        workdir, "--config", _config(workdir), "--name", "few", "--launcher", "slurm",
        "--nodes", "3", "--", PY, TRAINER,
    )  # fmt: skip
    assert res.returncode == 4, res.stderr[-3000:]
    assert "the bans leave 2 of the partition's 3 nodes" in res.stderr
    assert "banned node2" in res.stderr
    assert slurm.run("squeue", "-h").stdout.strip() == ""  # nothing was submitted


def test_a_partition_that_does_not_exist_is_said_once(slurm: SlurmLab, workdir: Path) -> None:
    res = _babysit(
        workdir, "--config", _config(workdir), "--name", "np", "--launcher", "slurm",
        "--partition", "nosuch", "--", PY, TRAINER,
    )  # fmt: skip
    assert res.returncode == 3, res.stderr[-3000:]
    assert "Slurm has no partition 'nosuch'" in res.stderr
    assert res.stderr.count("nosuch") <= 2  # one message, no loop


def test_a_job_that_can_never_start_is_noticed(slurm: SlurmLab, workdir: Path) -> None:
    # The partition has 3 nodes; sbatch accepts a job for 5 and leaves it pending for good.
    res = _babysit(
        workdir, "--config", _config(workdir), "--name", "big", "--launcher", "slurm",
        "--sbatch-arg=--nodes=5", "--", PY, TRAINER, timeout=60,
    )  # fmt: skip
    assert res.returncode == 3, res.stderr[-3000:]
    assert "cannot start" in res.stderr and "PartitionNodeLimit" in res.stderr
    assert len(_attempts(workdir / "h", "big")) == 1  # no loop
    assert slurm.run("squeue", "-h").stdout.strip() == ""  # and it was cancelled


def test_an_sbatch_script_not_executable_or_not_a_script(slurm: SlurmLab, workdir: Path) -> None:
    script = workdir / "job.sbatch"
    script.write_text(f"#!/bin/bash\nsrun {PY} {TRAINER}\n")
    script.chmod(0o644)
    res = _babysit(workdir, "--name", "ne", "--launcher", "slurm", "--", "./job.sbatch")
    assert res.returncode == 2, res.stderr[-3000:]
    assert "not executable" in res.stderr and "chmod +x" in res.stderr
    script.write_text(f"srun {PY} {TRAINER}\n")
    script.chmod(0o755)
    res = _babysit(workdir, "--name", "ns", "--launcher", "slurm", "--", "./job.sbatch")
    assert res.returncode == 3, res.stderr[-3000:]
    assert "first line must start with #!" in res.stderr


def test_the_users_sbatch_script_runs_as_the_job(slurm: SlurmLab, workdir: Path) -> None:
    script = workdir / "job.sbatch"
    script.write_text(f"#!/bin/bash\n#SBATCH --nodes=2\nsrun --label {PY} {TRAINER}\n")
    script.chmod(0o755)
    res = _babysit(workdir, "--name", "own", "--launcher", "slurm", "--", "job.sbatch")
    assert res.returncode == 0, res.stderr[-3000:]
    st = _state(workdir / "h", "own", 1)
    assert st["state"] == "COMPLETED" and len(st["nodes"]) == 2
    out = (workdir / "h" / "runs" / "own" / "attempt-0001" / "stdout.log").read_text()
    assert "0: rank 0 on node" in out and "1: rank 1 done" in out


def test_sbatch_missing_is_a_clear_message(slurm: SlurmLab, workdir: Path) -> None:
    env = {**os.environ, "PATH": str(Path(PY).parent)}  # python, but no Slurm
    res = subprocess.run(
        babysit_argv("run", "--home", str(workdir / "h"), "--launcher", "slurm", "--", PY,
                     TRAINER),
        cwd=workdir, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert res.returncode == 3, res.stderr[-3000:]
    assert "is not installed or not on PATH" in res.stderr
    assert "Traceback" not in res.stderr


def test_a_job_id_slurm_no_longer_knows_is_said_and_recorded(
    slurm: SlurmLab, workdir: Path
) -> None:
    """The follower of a job that Slurm forgot (purged after MinJobAge while babysit was away,
    a controller started with a clean state): real scontrol and squeue answers for an id that
    neither knows. It says so, records VANISHED, and ends with its own code: no wait forever."""
    d = workdir / "attempt-0001"
    d.mkdir()
    res = subprocess.run(
        [PY, "-m", "babysit.engines.slurmfollow", "--job", "987654", "--dir", str(d),
         "--poll", "0.1"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert res.returncode == 4, res.stderr
    assert "Slurm job 987654 vanished: neither scontrol nor squeue knows it" in res.stderr
    assert json.loads((d / "slurm.json").read_text())["state"] == "VANISHED"


def test_a_human_scancel_is_an_operator_stop(slurm: SlurmLab, workdir: Path) -> None:
    home = workdir / "h"
    err = workdir / "babysit.err"
    with err.open("wb") as fh:
        proc = subprocess.Popen(
            babysit_argv("run", "--home", str(home), "-q", "--config", _config(workdir),
                         "--name", "sc", "--launcher", "slurm", "--", PY, TRAINER,
                         "--sleep", "300"),
            cwd=workdir, stdout=subprocess.DEVNULL, stderr=fh,
        )  # fmt: skip
    try:
        st = wait_for(
            lambda: _state(home, "sc", 1).get("state") == "RUNNING" and _state(home, "sc", 1),
            60, "the job to run",
        )
        assert slurm.run("scancel", st["job_id"]).returncode == 0
        code = proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
    text = err.read_text()
    assert code == 5, text[-3000:]
    assert "stopped by the operator: Slurm job CANCELLED" in text
    (attempt,) = _attempts(home, "sc")
    assert attempt["outcome"] == "stopped"


def test_babysit_killed_re_attaches_to_its_job(slurm: SlurmLab, workdir: Path) -> None:
    """The job and its follower outlive a SIGKILLed babysit; the next babysit follows them to
    the end: one attempt, succeeded."""
    home = workdir / "h"
    args = ("run", "--home", str(home), "-q", "--config", _config(workdir), "--name", "ra",
            "--launcher", "slurm", "--", PY, TRAINER, "--sleep", "6")  # fmt: skip
    with (workdir / "first.err").open("wb") as fh:
        first = subprocess.Popen(babysit_argv(*args), cwd=workdir, stderr=fh)
    try:
        wait_for(lambda: _state(home, "ra", 1).get("state") == "RUNNING", 60, "the job to run")
    finally:
        first.kill()
        first.wait(10)
    res = run_babysit(*args, cwd=workdir, timeout=120)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "re-attached to attempt 1" in res.stderr
    attempts = _attempts(home, "ra")
    assert [a["outcome"] for a in attempts] == ["succeeded"]
    assert _state(home, "ra", 1)["state"] == "COMPLETED"


def test_a_timeout_resumes_without_spending_the_failure_budget(
    slurm: SlurmLab, workdir: Path
) -> None:
    # max_restarts = 0: any charged failure would end the run; a time limit must not.
    cfg = str(workdir / "b.toml")
    (workdir / "b.toml").write_text(CONFIG.replace("[restart]\n", "[restart]\nmax_restarts = 0\n"))
    res = _babysit(
        workdir, "--config", cfg, "--name", "to", "--launcher", "slurm", "--time", "1",
        "--", PY, TRAINER, "--sleep", "300", "--fault-attempt", "1", timeout=240,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    home = workdir / "h"
    assert _state(home, "to", 1)["state"] == "TIMEOUT"
    attempts = _attempts(home, "to")
    assert [a["outcome"] for a in attempts] == ["failed", "succeeded"]
    assert attempts[0]["category"] == "preemption"
    assert "not counted against any restart budget" in res.stderr


def test_spares_continue_inside_the_allocation(slurm: SlurmLab, workdir: Path) -> None:
    res = _babysit(
        workdir, "--config", _config(workdir), "--name", "sp", "--launcher", "slurm",
        "--nodes", "2", "--spares", "1", "--", PY, TRAINER, "--fail-node", "node2",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    assert "banned node node2" in res.stderr
    attempts = _attempts(workdir / "h", "sp")
    assert [a["outcome"] for a in attempts] == ["failed", "succeeded"]
    jobs = [next(x for x in a["argv"] if x.startswith("--jobid=")) for a in attempts]
    assert jobs[0] == jobs[1]  # the same allocation: no second wait in the queue
    assert "--exclude=node2" in attempts[1]["argv"]
    out = (Path(attempts[1]["log_dir"]) / "stdout.log").read_text()
    assert "on node2" not in out and "rank 1 done" in out
    assert "released the allocation" in res.stderr
    # cancelled: it may still be completing (CG) for a moment, then it is gone
    wait_for(lambda: slurm.run("squeue", "-h").stdout.strip() == "", 60, "the allocation gone")


def test_spares_a_node_that_dies_is_left_out_inside_the_allocation(
    slurm: SlurmLab, workdir: Path
) -> None:
    """node2 goes DOWN under a running step: the allocation (--no-kill) keeps its other nodes,
    and the next attempt runs on node1 and the spare, in the same job."""
    home = workdir / "h"
    err = workdir / "babysit.err"
    with err.open("wb") as fh:
        proc = subprocess.Popen(
            babysit_argv("run", "--home", str(home), "-q", "--config", _config(workdir),
                         "--name", "nd", "--launcher", "slurm", "--nodes", "2", "--spares",
                         "1", "--", PY, TRAINER, "--sleep", "120", "--fault-attempt", "1"),
            cwd=workdir, stdout=subprocess.DEVNULL, stderr=fh,
        )  # fmt: skip
    try:
        log = home / "runs" / "nd" / "attempt-0001" / "stdout.log"
        wait_for(lambda: log.exists() and log.read_text().count(" on node") == 2, 60,
                 "attempt 1 on its two nodes")
        used = sorted(line.split(" on ")[1].split()[0] for line in log.read_text().splitlines()
                      if " on node" in line)
        dead = used[-1]
        down = slurm.run("scontrol", "update", f"NodeName={dead}", "State=DOWN", "Reason=test")
        assert down.returncode == 0, down.stderr
        code = proc.wait(120)
    finally:
        if proc.poll() is None:
            proc.kill()
    text = err.read_text()
    assert code == 0, text[-3000:]
    attempts = _attempts(home, "nd")
    assert [a["outcome"] for a in attempts][-1] == "succeeded", text[-3000:]
    jobs = {next(x for x in a["argv"] if x.startswith("--jobid=")) for a in attempts}
    assert len(jobs) == 1, jobs  # never queued again
    last = (Path(attempts[-1]["log_dir"]) / "stdout.log").read_text()
    assert f"on {dead}" not in last and "rank 1 done" in last, last
    assert attempts[0]["category"] == "preemption"  # NODE_FAIL: not charged to a budget


def test_preflight_checks_every_node_of_the_allocation(slurm: SlurmLab, workdir: Path) -> None:
    res = _babysit(
        workdir, "--config", _config(workdir), "--name", "pf", "--launcher", "slurm",
        "--nodes", "2", "--spares", "1", "--preflight", "--", PY, TRAINER, timeout=180,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    assert "preflight passed on 3 node(s): node1, node2, node3" in res.stderr, res.stderr


def test_nodes_that_fail_preflight_are_banned_before_use(slurm: SlurmLab, workdir: Path) -> None:
    """Every node's matmul self-test is wrong (simulated): each is banned, and with none left
    the run stops with exit 4 before any attempt runs on them."""
    env = {**os.environ, "BABYSIT_TEST_CORRUPT_MATMUL": "1"}
    res = subprocess.run(
        babysit_argv("run", "--home", str(workdir / "h"), "-q", "--config", _config(workdir),
                     "--name", "bad", "--launcher", "slurm", "--nodes", "2", "--spares", "1",
                     "--preflight", "--", PY, TRAINER),
        cwd=workdir, env=env, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert res.returncode == 4, res.stderr[-3000:]
    for node in ("node1", "node2", "node3"):
        assert f"preflight of {node} FAILED: matmul" in res.stderr, res.stderr[-3000:]
        assert f"banned node {node}" in res.stderr
    assert "the job needs 2" in res.stderr


def test_a_job_per_attempt_checks_its_nodes_before_the_training(
    slurm: SlurmLab, workdir: Path
) -> None:
    """From a login node no node is known before the job runs: the job's script runs the
    doctor on each of its nodes first. node2's matmul is wrong (simulated): that job ends
    before the training, node2 is banned, and the next job, without node2, passes its
    preflight and finishes; the stopped job is charged to no budget."""
    home = workdir / "h"
    env = {**os.environ, "BABYSIT_TEST_CORRUPT_MATMUL": "node2"}
    # node2 in the first job for sure: node3 is taken by a job of its own until then.
    hold = slurm.run("sbatch", "--parsable", "-w", "node3", "--wrap", "sleep 300").stdout.strip()
    err = workdir / "babysit.err"
    with err.open("wb") as fh:
        proc = subprocess.Popen(
            babysit_argv("run", "--home", str(home), "-q", "--config", _config(workdir),
                         "--name", "pj", "--launcher", "slurm", "--nodes", "2", "--preflight",
                         "--", PY, TRAINER),
            cwd=workdir, env=env, stdout=subprocess.DEVNULL, stderr=fh,
        )  # fmt: skip
    try:
        wait_for(lambda: _state(home, "pj", 2).get("job_id"), 120, "the second job")
        slurm.run("scancel", hold)
        code = proc.wait(120)
    finally:
        if proc.poll() is None:
            proc.kill()
        slurm.run("scancel", hold)
    text = err.read_text()
    assert code == 0, text[-3000:]
    assert "preflight of node2 FAILED: matmul" in text and "banned node node2" in text, text
    assert "preflight passed on 1 node(s): node1" in text, text
    assert "preflight passed on 2 node(s): node1, node3" in text, text
    first, second = _attempts(home, "pj")
    assert first["outcome"] == "stopped" and "preflight failed on node2" in first["summary"]
    assert second["outcome"] == "succeeded"
    first_out = file_text(Path(first["log_dir"]) / "stdout.log")
    assert "step 1" not in first_out, first_out  # the training never started there
    assert _state(home, "pj", 2)["exclude"] == ["node2"]
    restarts = [e for e in _events(home, "pj") if e["kind"] == "restart_scheduled"]
    assert "not counted against any restart budget" in restarts[0]["message"]


def test_a_hung_jobs_stacks_come_from_every_node(slurm: SlurmLab, workdir: Path) -> None:
    cfg = _config(workdir, "[hang]\nfloor_s = 2\nstartup_s = 4\nkill_after_s = 0\n")
    res = _babysit(
        workdir, "--config", cfg, "--name", "hg", "--launcher", "slurm", "--nodes", "3",
        "--", PY, TRAINER, "--hang-node", "node2", "--steps", "8", "--step-s", "0.3",
        "--fault-attempt", "1", timeout=180,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    home = workdir / "h"
    with Store.open(home, create=False) as store:
        (report,) = store.stacks("hg")
    doc = report["report"]
    assert sorted(p["host"] for p in doc["processes"]) == ["node1", "node2", "node3"], doc
    assert doc["suspect"]["rank"] == 1 and doc["suspect"]["host"] == "node2", doc["suspect"]
    text = (Path(_attempts(home, "hg")[0]["log_dir"]) / "stacks.txt").read_text()
    assert "read_shard" in text and "all_reduce" in text, text
    assert "rank 1" in report["summary"], report["summary"]


INSIDE = """#!/bin/bash
#SBATCH --requeue
#SBATCH --nodes=2
#SBATCH --output={out}
#SBATCH --open-mode=append
cd {work}
echo "batch run on $SLURM_JOB_NODELIST"
exec {py} -m babysit run --home {home} -q --config {cfg} --name in -- \\
    srun {py} {trainer} --fail-node node2
"""


def test_inside_an_allocation_bans_then_requeues_itself(slurm: SlurmLab, workdir: Path) -> None:
    """node2 fails; banned; the step needs both nodes: babysit gives up (exit 4) and requeues
    its own job without node2; the requeued job runs on node1 and node3 and finishes."""
    cfg = _config(workdir)
    out = workdir / "job.out"
    script = workdir / "inside.sbatch"
    script.write_text(INSIDE.format(out=out, work=workdir, py=PY, home=workdir / "h", cfg=cfg,
                                    trainer=TRAINER))
    # node2 in the first allocation for sure: node3 is taken by a job of its own until then.
    hold = slurm.run("sbatch", "--parsable", "-w", "node3", "--wrap", "sleep 300").stdout.strip()
    job = slurm.run("sbatch", "--parsable", str(script), timeout_s=10).stdout.strip()
    assert job.isdigit()

    def restarted() -> bool:
        text = slurm.run("scontrol", "show", "job", "-o", job).stdout
        if "Restarts=1" in text:
            slurm.run("scancel", hold)
        return "JobState=COMPLETED" in text

    wait_for(restarted, 120, "the job to requeue itself and finish")
    text = out.read_text()
    assert "batch run on node[1-2]" in text and "batch run on node[1,3]" in text, text
    assert "requeued Slurm job" in text and "without node2" in text, text
    assert "ExcNodeList=node2 " in _job(slurm, job)


def test_signal_sent_to_babysit_reaches_the_trainer(slurm: SlurmLab, workdir: Path) -> None:
    """Slurm's warning (`--signal=B:USR1`) reaches babysit as the batch shell: the trainer gets
    it, and babysit requeues the job afterwards."""
    home = workdir / "h"
    script = workdir / "warn.sbatch"
    out = workdir / "warn.out"
    script.write_text(
        f"#!/bin/bash\n#SBATCH --requeue\n#SBATCH --output={out}\n#SBATCH --open-mode=append\n"
        f"cd {workdir}\necho run $SLURM_RESTART_COUNT\n"
        f"if [ \"$SLURM_RESTART_COUNT\" = 1 ]; then exit 0; fi\n"
        f"exec {PY} -m babysit run --home {home} -q --name w --grace 5 -- srun {PY} {TRAINER} "
        "--sleep 300\n"
    )
    job = slurm.run("sbatch", "--parsable", str(script)).stdout.strip()
    log = home / "runs" / "w" / "attempt-0001" / "stdout.log"
    wait_for(lambda: "step 4" in (log.read_text() if log.exists() else ""), 60, "the steps")
    assert slurm.run("scancel", "--batch", "--signal=USR1", job).returncode == 0
    wait_for(lambda: "JobState=COMPLETED" in _job(slurm, job), 90, "the requeued job")
    assert "got SIGUSR1: checkpointing" in log.read_text()
    text = out.read_text()
    assert "requeued Slurm job" in text and "run 1" in text, text


def test_time_limit_without_a_warning_signal_requeues(slurm: SlurmLab, workdir: Path) -> None:
    """Regression: without `--signal=B:USR1@...`, Slurm's SIGTERM at the time limit was taken
    for an operator stop, and the job was not requeued. babysit now asks Slurm (Reason=
    TimeLimit while the job completes) and requeues at once: the lab's KillWait is 2 s."""
    home = workdir / "h"
    script = workdir / "limit.sbatch"
    out = workdir / "limit.out"
    script.write_text(
        f"#!/bin/bash\n#SBATCH --requeue\n#SBATCH --time=1\n#SBATCH --output={out}\n"
        f"#SBATCH --open-mode=append\ncd {workdir}\necho run $SLURM_RESTART_COUNT\n"
        f"if [ \"$SLURM_RESTART_COUNT\" = 1 ]; then exit 0; fi\n"
        f"exec {PY} -m babysit run --home {home} -q --name t --grace 5 -- srun {PY} {TRAINER} "
        "--sleep 300\n"
    )
    job = slurm.run("sbatch", "--parsable", str(script)).stdout.strip()
    assert job.isdigit()
    # The time limit is a minute (Slurm's smallest); the requeued job waits for its BeginTime.
    wait_for(lambda: "JobState=COMPLETED" in _job(slurm, job), 200, "the requeued job")
    text = out.read_text()
    assert "DUE TO TIME LIMIT" in text and "run 1" in text, text
    assert f"requeued Slurm job {job} at its time limit" in text, text


def test_a_preempted_job_restarts_without_spending_the_failure_budget(
    slurm: SlurmLab, workdir: Path
) -> None:
    # A job of the `urgent` partition preempts babysit's (PreemptMode=CANCEL: PREEMPTED).
    # max_restarts = 0: any charged failure would end the run; a preemption must not.
    cfg = str(workdir / "b.toml")
    (workdir / "b.toml").write_text(CONFIG.replace("[restart]\n", "[restart]\nmax_restarts = 0\n"))
    home = workdir / "h"
    err = workdir / "pre.err"
    proc = start_babysit(
        "run", "--home", str(home), "-q", "--config", cfg, "--name", "pre", "--launcher",
        "slurm", "--nodes", "3", "--", PY, TRAINER, "--sleep", "300", "--fault-attempt", "1",
        cwd=workdir, stderr_path=err,
    )  # fmt: skip
    try:
        log = home / "runs" / "pre" / "attempt-0001" / "stdout.log"
        wait_for(lambda: "step 2" in (log.read_text() if log.exists() else ""), 60, "steps")
        urgent = slurm.run(
            "sbatch", "--parsable", "-p", "urgent", "-N", "3", "--exclusive", "--wrap", "sleep 2"
        )
        assert urgent.returncode == 0, urgent.stderr
        assert proc.wait(timeout=180) == 0, file_text(err)[-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()
    assert _state(home, "pre", 1)["state"] == "PREEMPTED"
    attempts = _attempts(home, "pre")
    assert [a["outcome"] for a in attempts] == ["failed", "succeeded"]
    assert attempts[0]["category"] == "preemption"
    assert "not counted against any restart budget" in file_text(err)
