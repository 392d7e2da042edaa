"""triage/launchers.py: what torchrun, srun and mpirun say of the process that failed first."""

from __future__ import annotations

import pytest

from babysit.triage.launchers import FirstFailure, Launchers, srun_stopped_step


def _seen(*lines: str) -> FirstFailure | None:
    seen = Launchers()
    for line in lines:
        seen.feed(0, line.strip(), line)
    return seen.first_failure()


@pytest.mark.parametrize(
    ("line", "rank", "code"),
    [
        ("srun: error: node-006: task 49: Exited with exit code 1", 49, 1),
        ("srun: error: gpu-a17: task 3: Aborted (core dumped)", 3, -6),
        ("srun: error: gpu-a17: task 3: Aborted", 3, -6),
        ("srun: error: nid001: task 640: Segmentation fault", 640, -11),
        ("srun: error: nid001: task 0: Out Of Memory", 0, -9),
        ("srun: error: nid001: task 8: Killed", 8, -9),
        ("srun: error: nid001: task 8: Some signal srun may name one day", 8, None),
        # several at once: none of them is the first
        ("srun: error: node-001: tasks 8-15: Terminated", None, -15),
        ("srun: error: node-001: tasks 9-10,12-15: Killed", None, -9),
    ],
)
def test_srun_s_word_on_a_task_that_ended(line: str, rank: int | None, code: int | None) -> None:
    host = line.split(": ")[2]
    assert _seen(line) == FirstFailure(host, rank, code, "srun")


def test_the_first_task_srun_saw_end_is_the_one_that_counts() -> None:
    first = _seen(
        "srun: error: node-006: task 49: Exited with exit code 1",
        "srun: error: node-000: tasks 0-7: Aborted (core dumped)",
    )
    assert first is not None and (first.rank, first.exit) == (49, 1)


@pytest.mark.parametrize(
    "agent",
    [
        "W1130 23:12:05.118000 139 torch/distributed/elastic/multiprocessing/api.py:897] Sending "
        "process 4001 closing signal SIGTERM",
        "+ srun torchrun --nnodes 8 --nproc-per-node 8 train.py",
        "[rank3]:[W socket.cpp:464] [c10d] The server socket has failed to bind",
        "[default0]:[rank0]: Traceback (most recent call last):",
    ],
)
def test_under_a_launcher_that_starts_the_ranks_an_srun_task_is_a_node(agent: str) -> None:
    # One srun task a node, which starts its ranks itself: task 3 is the fourth node, no rank.
    assert _seen(agent, "srun: error: node-003: task 3: Exited with exit code 1") is None
    assert _seen("srun: error: node-003: task 3: Exited with exit code 1", agent) is None


def test_torchrun_s_summary_wins_over_srun_s_word() -> None:
    first = _seen(
        "srun: error: node-000: task 0: Exited with exit code 1",
        "Root Cause (first observed failure):",
        "[0]:",
        "  time      : 2026-11-30_23:12:05",
        "  host      : node-002",
        "  rank      : 21 (local_rank: 5)",
        "  exitcode  : 1 (pid: 4242)",
        "============================================================",
    )
    assert first == FirstFailure("node-002", 21, 1, "torchrun")


@pytest.mark.parametrize(
    "line",
    [
        "srun: error: Unable to create step for job 1234: Invalid generic resource (gres) "
        "specification",
        "srun: error: node-001: task 3 launch failed: Error configuring interconnect",
        "0: srun: error: node-006: task 49: Exited with exit code 1 (quoted in a rank's line)",
        "",
    ],
)
def test_other_srun_errors_name_no_first_failure(line: str) -> None:
    assert _seen(line) is None


_OMPI_FIRST = [
    "--------------------------------------------------------------------------",
    "mpirun detected that one or more processes exited with non-zero status, thus causing",
    "the job to be terminated. The first process to do so was:",
    "",
    "  Process name: [[50759,1],3]",
    "  Exit code:    2",
    "--------------------------------------------------------------------------",
]


def test_open_mpi_s_first_process_to_exit_badly_is_a_rank() -> None:
    # Open MPI names a process [[JOBFAMILY,JOB],VPID]: the vpid is its rank in the job.
    assert _seen(*_OMPI_FIRST) == FirstFailure(None, 3, 2, "mpirun")
    # as pasted into markdown, and Horovod's gloo runner (named by its rank alone)
    pasted = [*_OMPI_FIRST[:5], "##   Exit code:    2"]
    assert _seen(*pasted) == FirstFailure(None, 3, 2, "mpirun")
    horovod = (
        "RuntimeError: Horovod detected that one or more processes exited with non-zero status, "
        "thus causing the job to be terminated. The first process to do so was:"
    )
    assert _seen(horovod, "Process name: 1", "Exit code: 1") == FirstFailure(None, 1, 1, "mpirun")
    # an exit code far from that sentence, or in another file, is not its
    far = [*_OMPI_FIRST[:3], *["step 10 loss 2.3"] * 8, "Exit code: 2"]
    assert _seen(*far) is None
    other = Launchers()
    other.feed(0, _OMPI_FIRST[2], _OMPI_FIRST[2])
    other.feed(1, "Exit code: 2", "Exit code: 2")
    assert other.first_failure() is None


def test_open_mpi_s_word_on_a_process_killed_by_a_signal() -> None:
    line = (
        "mpirun noticed that process rank 7 with PID 0 on node gpu12 exited on signal 9 (Killed)."
    )
    assert _seen(line) == FirstFailure("gpu12", 7, -9, "mpirun")
    assert _seen(line, *_OMPI_FIRST) == FirstFailure("gpu12", 7, -9, "mpirun")  # the first word
    # srun's, where both show, and none under a launcher that starts the ranks itself
    srun = "srun: error: node-006: task 49: Exited with exit code 1"
    assert _seen(line, srun) == FirstFailure("node-006", 49, 1, "srun")
    assert _seen("+ mpirun -np 16 torchrun train.py", line) is None


@pytest.mark.parametrize(
    ("words", "stopped"),
    [
        ("srun: error: cdr2596: task 1: Exited with exit code 1", True),
        ("srun: Terminating StepId=21941655.1", True),
        ("srun: error: node-0: tasks 0-7: Exited with exit code 2", True),
        ("srun: error: node-0: task 3: Terminated", False),  # a signal: stopped from outside
        ("srun: error: node-0: task 3: Exited with exit code 0", False),
        ("slurmstepd: error: *** STEP 1234.0 ON node-0 CANCELLED AT 2024-01-05T14:27:50 ***",
         False),
    ],
)
def test_srun_s_word_that_a_task_failed_or_that_it_stops_the_step(
    words: str, stopped: bool
) -> None:
    assert srun_stopped_step(words) is stopped
