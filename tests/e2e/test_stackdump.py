"""Stack dumps of real processes: py-spy, the faulthandler fallback, and what must never happen
(signalling a process that did not register, losing the user's sitecustomize)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from babysit.act.stackdump import dump_stacks, find_pyspy, forensics_env
from babysit.detect.stacks import group_stacks
from babysit.looks import ProcessStack
from babysit.parse.stacks import parse_stacks
from tests.conftest import fixture, pid_alive, wait_for

pytestmark = pytest.mark.e2e


def dump(pids: list[int], stacks: Path, **kw: object) -> list[ProcessStack]:
    kw.setdefault("budget_s", 10.0)
    return parse_stacks(dump_stacks(pids, stacks, **kw))  # type: ignore[arg-type]


class Children:
    def __init__(self, stacks: Path) -> None:
        self.stacks = stacks
        self.procs: list[subprocess.Popen[str]] = []

    def start(self, function: str, env: dict[str, str], *extra: str) -> tuple[int, list[str]]:
        proc = subprocess.Popen(
            [sys.executable, fixture("stuck_rank.py"), function, *extra],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.procs.append(proc)
        assert proc.stdout is not None
        lines: list[str] = []
        while not lines or not lines[-1].startswith("ready"):
            line = proc.stdout.readline()
            assert line, f"stuck_rank.py exited ({proc.wait()}) before saying 'ready': {lines}"
            lines.append(line.strip())
        return proc.pid, lines

    def close(self) -> None:
        for p in self.procs:
            with contextlib.suppress(OSError):
                p.kill()
            p.wait()
            if p.stdout:
                p.stdout.close()


@pytest.fixture
def children(tmp_path: Path) -> Iterator[Children]:
    c = Children(tmp_path / "stacks")
    yield c
    c.close()


def _env(stacks: Path, rank: int, **more: str) -> dict[str, str]:
    env = forensics_env({**os.environ, "RANK": str(rank), **more}, stacks)
    return env


def _four(children: Children) -> list[int]:
    pids = [children.start("wait_for_peers", _env(children.stacks, r))[0] for r in (0, 1, 3)]
    odd = children.start("load_batch", _env(children.stacks, 2))[0]
    for pid in [*pids, odd]:
        wait_for(lambda p=pid: (children.stacks / f"{p}.ready").exists(), 10, "the marker")
    return [*pids, odd]


@pytest.mark.skipif(find_pyspy() is None, reason="py-spy not used")
def test_pyspy_names_the_odd_rank(children: Children) -> None:
    pids = _four(children)
    stacks = dump(pids, children.stacks)
    assert [s.tool for s in stacks] == ["py-spy"] * 4, [s.error for s in stacks]
    report = group_stacks(stacks, ts=1.0)
    assert [g.pids for g in report.odd] == [(pids[3],)]
    assert report.suspect.rank == 2
    assert f"rank 2 (pid {pids[3]}) is in load_batch (stuck_rank.py:" in report.summary
    assert "3 ranks (0, 1, 3) are in wait_for_peers" in report.summary
    # py-spy does not touch the faulthandler files
    assert all((children.stacks / f"{p}.txt").stat().st_size == 0 for p in pids)


def test_faulthandler_fallback_names_the_odd_rank(children: Children) -> None:
    pids = _four(children)
    stacks = dump(pids, children.stacks, pyspy=None)  # its time: benchmarks/stack_dump.py
    assert [s.tool for s in stacks] == ["faulthandler"] * 4, [s.error for s in stacks]
    report = group_stacks(stacks, ts=1.0)
    assert [g.pids for g in report.odd] == [(pids[3],)]
    assert report.suspect.rank == 2
    assert all(pid_alive(p) for p in pids)  # the signal dumped, it did not kill
    # a second dump reads only the new text
    again = group_stacks(dump(pids, children.stacks, pyspy=None), ts=2.0)
    assert [len(g.pids) for g in again.groups] == [3, 1]


def test_a_process_that_did_not_register_is_never_signalled(children: Children) -> None:
    env = {**os.environ, "RANK": "0"}  # no forensics_env: no sitecustomize, no marker
    children.stacks.mkdir(parents=True)
    pid = children.start("wait_for_peers", env)[0]
    [stack] = dump([pid], children.stacks, pyspy=None)
    assert stack.tool == "none"
    assert stack.error is not None and "py-spy not used" in stack.error
    assert "not signalled" in stack.error
    assert pid_alive(pid)


def test_a_stale_marker_of_a_reused_pid_is_not_trusted(children: Children) -> None:
    pid = children.start("wait_for_peers", {**os.environ})[0]
    children.stacks.mkdir(parents=True)
    # a marker as a dead process with this pid would have left it: another start time
    (children.stacks / f"{pid}.ready").write_text(f"{int(signal.SIGUSR2)} 1\n")
    [stack] = dump([pid], children.stacks, pyspy=None)
    assert stack.error is not None and "not signalled" in stack.error
    assert pid_alive(pid)


def test_the_users_sitecustomize_still_runs(children: Children, tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    witness = tmp_path / "witness"
    (mine / "sitecustomize.py").write_text(
        f"import os\nopen({str(witness)!r}, 'w').write(str(os.getpid()))\n"
    )
    env = _env(children.stacks, 0, PYTHONPATH=str(mine))
    pid = children.start("wait_for_peers", env)[0]
    assert witness.read_text() == str(pid)
    assert (children.stacks / f"{pid}.ready").exists()


def test_a_forked_child_registers_under_its_own_pid(children: Children) -> None:
    pid, lines = children.start("wait_for_peers", _env(children.stacks, 0), "--fork")
    child = int(lines[0].split()[1])
    wait_for(lambda: (children.stacks / f"{child}.ready").exists(), 10, "the child's marker")
    stacks = {s.pid: s for s in dump([pid, child], children.stacks, pyspy=None)}
    assert stacks[child].tool == "faulthandler", stacks[child].error
    assert stacks[child].threads[0].frames[0].function == "forked_worker"
    assert stacks[pid].threads[0].frames[0].function == "wait_for_peers"
    assert stacks[child].parent == pid
    os.kill(child, signal.SIGKILL)
    # the rank's own child is listed, not grouped: one rank, one group
    report = group_stacks(list(stacks.values()), ts=1.0)
    assert [g.pids for g in report.groups] == [(pid,)]


def test_a_process_gone_meanwhile_is_an_error_not_an_exception(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    [stack] = dump([proc.pid], tmp_path, pyspy=None)
    assert stack.error is not None and "exited" in stack.error


def test_non_python_processes_are_skipped(tmp_path: Path) -> None:
    proc = subprocess.Popen(["sleep", "30"])
    try:
        assert dump([proc.pid], tmp_path, pyspy=None) == []
    finally:
        proc.kill()
        proc.wait()
