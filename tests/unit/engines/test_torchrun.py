"""engines.torchrun: the engine around a torchrun-shaped process tree (real processes that carry
the worker variables torchrun sets; torch itself is not needed here)."""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from pathlib import Path

import pytest

from babysit.engines import (
    LaunchSpec,
    LocalEngine,
    TorchrunEngine,
    engine_for,
)
from babysit.engines.process import Handle
from babysit.engines.torchrun import ERRORS_FILE, LOG_SUBDIR, worker_of

# An "agent" that starts two "workers" with torchrun's variables (global ranks 4 and 5 on local
# ranks 0 and 1, as on the second node of a job), each pointed at its own error file; worker 5
# writes one the way `@record` does, then both wait to be killed.
AGENT = """
import os, pathlib, subprocess, sys
root = pathlib.Path(sys.argv[1])
worker = (
    "import json, os, pathlib, time\\n"
    "if os.environ['RANK'] == '5':\\n"
    "    pathlib.Path(os.environ['TORCHELASTIC_ERROR_FILE']).write_text(json.dumps("
    "{'message': {'message': 'ValueError: bad shard', 'extraInfo': {'py_callstack': "
    "'Traceback (most recent call last):\\\\nValueError: bad shard\\\\n', 'timestamp': '7'}}}))\\n"
    "pathlib.Path(os.environ['READY']).write_text('x')\\n"
    "time.sleep(60)\\n"
)
procs = []
for local, rank in ((0, 4), (1, 5)):
    d = root / "job" / "attempt_0" / str(local)
    d.mkdir(parents=True)
    env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(local), TORCHELASTIC_RUN_ID="job",
               TORCHELASTIC_ERROR_FILE=str(d / "error.json"), READY=str(root / f"ready{rank}"))
    procs.append(subprocess.Popen([sys.executable, "-c", worker], env=env))
for p in procs:
    p.wait()
"""


def _spec(tmp_path: Path, argv: list[str]) -> LaunchSpec:
    attempt = tmp_path / "attempt-0001"
    return LaunchSpec(argv, {}, tmp_path, attempt, 5.0, f"t/{uuid.uuid4().hex}")


def test_the_engine_is_chosen_by_the_command() -> None:
    assert isinstance(engine_for(["torchrun", "--nproc-per-node", "2", "t.py"]), TorchrunEngine)
    assert isinstance(engine_for(["python", "-m", "torch.distributed.run", "t.py"]), TorchrunEngine)
    assert type(engine_for(["python", "train.py"])) is LocalEngine


def test_prepare_rewrites_the_command_and_tells_once(tmp_path: Path) -> None:
    engine = TorchrunEngine(host="here")
    spec = _spec(tmp_path, ["torchrun", "--max-restarts", "3", "t.py"])
    prepared, notes = engine.prepare(spec)
    logs = str(spec.attempt_dir / LOG_SUBDIR)
    assert prepared.argv == ["torchrun", "--max-restarts", "0", "--log-dir", logs, "--tee", "3",
                             "t.py"]  # fmt: skip
    assert len(notes) == 2
    assert notes[0].startswith("babysit restarts the whole command; your --max-restarts 3 is")
    other = _spec(tmp_path / "b", ["torchrun", "--max-restarts", "3", "t.py"])
    again, notes = engine.prepare(other)
    assert notes == [] and "--max-restarts" in again.argv  # said once per babysit
    assert engine.prepare(prepared)[0].argv == prepared.argv  # idempotent


def test_engines_without_prepare_run_the_spec_as_it_is(tmp_path: Path) -> None:
    spec = _spec(tmp_path, ["torchrun", "--max-restarts", "3", "t.py"])
    local = LocalEngine(host="here")
    assert local.prepare(spec) == (spec, [])
    handle = Handle(1, 0.0, spec.attempt_dir, "tok")
    assert local.host_of_rank(handle, 0) is None and local.rank_hosts(handle, [0, 1]) == {}
    assert local.evidence_files(handle) == []
    assert local.preflight_nodes(["true"], 1.0) is None  # no nodes of its own: check this one
    assert local.preflight_results(handle) is None  # its attempts check nothing themselves
    assert not local.remote and not local.drains


def test_worker_of_reads_torchruns_variables() -> None:
    env = {"TORCHELASTIC_RUN_ID": "j", "LOCAL_RANK": "1", "RANK": "9",
           "TORCHELASTIC_ERROR_FILE": "/x/error.json"}  # fmt: skip
    w = worker_of(env, 42)
    assert w is not None and (w.pid, w.rank, w.local_rank, w.error_file) == (
        42, 9, 1, "/x/error.json",
    )  # fmt: skip
    assert worker_of({"RANK": "0"}, 1) is None  # the agent under srun, a plain process


@pytest.mark.e2e
def test_ranks_and_error_files_of_a_torchrun_shaped_tree(tmp_path: Path) -> None:
    engine = TorchrunEngine(host="here")
    spec = _spec(tmp_path, [sys.executable, "-c", AGENT, str(tmp_path)])
    handle = engine.launch(spec)
    try:
        deadline = time.monotonic() + 30
        while not all((tmp_path / f"ready{r}").exists() for r in (4, 5)):
            assert time.monotonic() < deadline, "the workers did not start"
            time.sleep(0.02)
        engine.poll(handle)  # looks the workers up while they run
        ranks = engine.ranks(handle)
        assert sorted(r.rank for r in ranks if r.rank is not None) == [4, 5]
        assert [r.rank for r in ranks if r.pid == handle.training_pid()] == [None]  # the agent
        assert {r.host for r in ranks} == {"here"}
        [err] = engine.error_files(spec.attempt_dir)
        assert (err.rank, err.local_rank, err.message) == (5, 1, "ValueError: bad shard")
        [path] = engine.evidence_files(handle)
        assert path == spec.attempt_dir / ERRORS_FILE
        assert path.read_text().splitlines() == [
            "[rank5]: Traceback (most recent call last):", "[rank5]: ValueError: bad shard",
        ]  # fmt: skip
    finally:
        engine.kill(handle)
        assert handle.popen is not None
        handle.popen.wait(timeout=30)
        engine.close(handle)


def test_no_error_file_no_evidence(tmp_path: Path) -> None:
    engine = TorchrunEngine(host="here")
    attempt = tmp_path / "attempt-0001"
    assert engine.error_files(attempt) == []
    d = attempt / LOG_SUBDIR / "none_abc" / "attempt_0" / "2"
    d.mkdir(parents=True)
    (d / "error.json").write_text(json.dumps({"message": "boom", "timestamp": 3}))
    # Re-attached (no plan): babysit's own log dir is found by its place; one node assumed.
    [err] = engine.error_files(attempt)
    assert (err.rank, err.message) == (2, "boom")


def test_the_users_own_log_dir_is_read_relative_to_the_cwd_and_only_from_now(
    tmp_path: Path,
) -> None:
    engine = TorchrunEngine(host="here")
    spec = _spec(tmp_path, ["torchrun", "--log-dir", "mylogs", "--tee", "3", "t.py"])
    prepared, notes = engine.prepare(spec)
    assert prepared.argv == spec.argv and notes == []  # the user's choice, as it was
    old = tmp_path / "mylogs" / "run_old" / "attempt_0" / "0" / "error.json"
    new = tmp_path / "mylogs" / "run_new" / "attempt_0" / "1" / "error.json"
    for path, text in ((old, "old"), (new, "new")):
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps({"message": text, "timestamp": 1}))
    os.utime(old, (1000.0, 1000.0))  # an earlier run's, in a log dir the user reuses
    assert [(e.rank, e.message) for e in engine.error_files(spec.attempt_dir)] == [(1, "new")]
