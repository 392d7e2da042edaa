"""`srun torchrun ...` inside an allocation: the Slurm step engine and torchrun's rewrite
compose (engines/srun.py srun_torchrun, SlurmStepEngine.prepare and host_of_rank)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from babysit.engines.base import LaunchSpec
from babysit.engines.process import Handle
from babysit.engines.slurm import SlurmStepEngine
from babysit.engines.slurmctl import Completed, SlurmCtl
from babysit.engines.srun import (
    TORCHRUN_PREFIX,
    TORCHRUN_PREFIX_VAR,
    program_start,
    rank_tasks,
    srun_torchrun,
)

TORCHRUN = ["torchrun", "--nnodes", "2", "--nproc-per-node", "2", "--rdzv-backend", "c10d",
            "--rdzv-endpoint", "node1:29500", "--max-restarts", "3", "train.py", "--max-restarts",
            "9"]  # fmt: skip


def _no_slurm(argv: Sequence[str], timeout_s: float, env: Mapping[str, str] | None = None
              ) -> Completed:
    raise AssertionError(f"no Slurm command expected: {argv}")


def _engine() -> SlurmStepEngine:
    return SlurmStepEngine("7", ["node1", "node2", "node3"], SlurmCtl(_no_slurm))


def _spec(tmp_path: Path, argv: list[str], env: dict[str, str] | None = None) -> LaunchSpec:
    return LaunchSpec(argv, env or {}, tmp_path, tmp_path / "attempt-0001", 5.0, "tok")


def test_program_start_skips_sruns_options_and_their_values() -> None:
    assert program_start(["srun", "-N", "2", "--label", "--exclude=n3", "torchrun", "x"]) == 5
    assert program_start(["srun", "torchrun"]) == 1


def test_the_torchrun_part_is_rewritten_inside_srun(tmp_path: Path) -> None:
    argv = ["srun", "--exclude=node2", "--label", "-N", "2", *TORCHRUN]
    found = srun_torchrun(argv, {"A": "1"}, tmp_path / "torchrun")
    assert found is not None
    out, env, plan = found
    assert out[:5] == argv[:5]  # srun's own options as they were
    opts = out[5 : out.index("train.py")]
    assert opts[opts.index("--max-restarts") + 1] == "0" and plan.user_max_restarts == 3
    assert out[-2:] == ["--max-restarts", "9"]  # the script's own, untouched
    assert "--log-dir" in opts and "--tee" in opts and not plan.single_node
    assert env == {"A": "1", TORCHRUN_PREFIX_VAR: TORCHRUN_PREFIX}
    again = srun_torchrun(out, env, tmp_path / "torchrun")
    assert again is not None and again[:2] == (out, env)  # idempotent


def test_not_srun_torchrun_is_left_alone(tmp_path: Path) -> None:
    assert srun_torchrun(["srun", "python", "t.py"], {}, tmp_path) is None
    assert srun_torchrun(TORCHRUN, {}, tmp_path) is None  # the torchrun engine's, not srun's
    assert srun_torchrun(["srun", "-n", "torchrun"], {}, tmp_path) is None  # no script


def test_ranks_map_to_tasks_by_their_lines() -> None:
    text = "0: [rank2]:step 1\n1: [rank0]: hello\n 1: [rank1]:NVRM: Xid 79\n2: loss 3\n"
    assert rank_tasks(text) == {2: 0, 0: 1, 1: 1}


def test_prepare_and_a_blamed_rank_finds_its_node(tmp_path: Path) -> None:
    engine = _engine()
    spec = engine.apply_bans(_spec(tmp_path, ["srun", "-N2", *TORCHRUN]), ["node2"])
    spec, notes = engine.prepare(spec)
    assert spec.argv[:3] == ["srun", "--exclude=node2", "--label"]
    assert spec.env[TORCHRUN_PREFIX_VAR] == TORCHRUN_PREFIX
    assert len(notes) == 2 and engine.prepare(spec)[1] == []  # said once
    spec.attempt_dir.mkdir()
    # The rendezvous put task 1 (node3) first: its workers are ranks 0 and 1.
    (spec.attempt_dir / "stdout.log").write_text(
        "1: [rank0]:rank 0 up\n1: [rank1]:rank 1 up\n0: [rank2]:rank 2 up\n0: [rank3]:up\n")
    (spec.attempt_dir / "stderr.log").write_text(
        "1: [rank1]:NVRM: Xid 79\nsrun: error: node3: task 1: Exited with exit code 1\n")
    handle = Handle(1, 0.0, spec.attempt_dir, "tok")
    assert engine.host_of_rank(handle, 1) == "node3"
    assert engine.host_of_rank(handle, 3) == "node1"  # task 0: the step's first node
    assert engine.host_of_rank(handle, 7) is None  # no line of rank 7: no node, not a guess
    # Many at once, from one read (the straggler detector's map): the ones it knows.
    assert engine.rank_hosts(handle, [0, 1, 2, 3, 7]) == {
        0: "node3", 1: "node3", 2: "node1", 3: "node1"
    }


def test_a_users_own_prefix_is_kept_and_ranks_are_not_guessed(tmp_path: Path) -> None:
    engine = _engine()
    spec = engine.apply_bans(_spec(tmp_path, ["srun", *TORCHRUN], {TORCHRUN_PREFIX_VAR: "<$rank>"}),
                             [])
    spec, _ = engine.prepare(spec)
    assert spec.env[TORCHRUN_PREFIX_VAR] == "<$rank>"
    spec.attempt_dir.mkdir()
    (spec.attempt_dir / "stderr.log").write_text("srun: error: node2: task 1: Exited\n")
    assert engine.host_of_rank(Handle(1, 0.0, spec.attempt_dir, "tok"), 1) == "node2"  # a task


def test_plain_srun_is_not_prepared(tmp_path: Path) -> None:
    engine = _engine()
    spec = engine.apply_bans(_spec(tmp_path, ["srun", "python", "t.py"]), [])
    assert engine.prepare(spec) == (spec, [])


def test_the_workers_error_files_are_triage_evidence(tmp_path: Path) -> None:
    # Last session's gap: under `srun torchrun` the workers' error.json files (torchrun's
    # TORCHELASTIC_ERROR_FILE, under the --log-dir babysit chose) were not read.
    engine = _engine()
    spec, _ = engine.prepare(_spec(tmp_path, ["srun", "-N2", *TORCHRUN]))
    handle = Handle(1, 0.0, spec.attempt_dir, "tok")
    assert engine.evidence_files(handle) == []  # no worker wrote one (yet)
    for node, local, message in (("a", 1, "ValueError: bad shard"), ("b", 0, "peer died")):
        err = spec.attempt_dir / "torchrun" / f"run_{node}" / "attempt_0" / str(local)
        err.mkdir(parents=True)
        doc = {"message": {"message": message, "extraInfo": {"timestamp": "5"}}}
        (err / "error.json").write_text(json.dumps(doc))
    [path] = engine.evidence_files(handle)
    text = path.read_text()
    assert "ValueError: bad shard" in text and "peer died" in text
    assert "torchrun error file of local rank 1" in text  # no global rank: the local one
