"""engines.torchrun_args: torchrun commands as users write them, recognised and rewritten."""

from __future__ import annotations

from pathlib import Path

import pytest

from babysit.engines.torchrun_args import is_torchrun, rewrite, torchrun_split

LOGS = Path("/runs/x/attempt-0001/torchrun")
ADDED = ["--log-dir", str(LOGS), "--tee", "3"]


@pytest.mark.parametrize(
    "argv",
    [
        ["torchrun", "--nproc-per-node", "8", "train.py"],
        ["torchrun", "--nproc_per_node=8", "train.py", "--lr", "3e-4"],
        ["/opt/venv/bin/torchrun", "--standalone", "--nproc-per-node", "gpu", "train.py"],
        ["torchrun", "--nnodes", "2", "--rdzv-backend", "c10d", "--rdzv-endpoint", "h:29400",
         "--rdzv-id", "job7", "--nproc-per-node", "8", "train.py"],
        ["torchrun", "--nnodes=1:4", "--rdzv_backend=c10d", "--rdzv_endpoint=h:29400",
         "--rdzv_conf", "timeout=900", "-m", "pkg.train"],
        ["python", "-m", "torch.distributed.run", "--nproc-per-node", "2", "train.py"],
        ["python3.11", "-u", "-m", "torch.distributed.run", "--nproc_per_node", "2", "t.py"],
        ["/usr/bin/python3", "-X", "dev", "-mtorch.distributed.run", "--standalone", "t.py"],
        ["python", "-m", "torch.distributed.launch", "--use-env", "--nproc_per_node", "2", "t.py"],
        ["torchrun", "--no-python", "--nproc-per-node", "2", "bash", "run.sh"],
    ],
)  # fmt: skip
def test_torchrun_commands_are_recognised(argv: list[str]) -> None:
    assert is_torchrun(argv)


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["python", "train.py", "--nproc-per-node", "8"],
        ["python", "-m", "torch.distributed.elastic", "x.py"],
        ["python", "-c", "import torch.distributed.run"],
        ["srun", "torchrun", "--nproc-per-node", "8", "train.py"],  # Slurm's engine
        ["env", "A=1", "torchrun", "train.py"],
        ["torchrun-wrapper", "train.py"],
        ["torchrun", "--nproc-per-node", "8"],  # no training script: torchrun says so itself
    ],
)
def test_other_commands_are_not_torchrun(argv: list[str]) -> None:
    assert not is_torchrun(argv)


def test_the_split_stops_at_the_training_script() -> None:
    argv = ["torchrun", "--standalone", "--nproc-per-node=4", "-r3", "train.py", "--log-dir", "x"]
    split = torchrun_split(argv)
    assert split is not None
    assert split.launcher == ["torchrun"]
    assert split.options == ["--standalone", "--nproc-per-node=4", "-r3"]
    assert split.script == ["train.py", "--log-dir", "x"]
    assert split.value(("-r", "--redirects")) == "3"
    assert split.value(("--log-dir", "--log_dir")) is None  # the script's own, not torchrun's


def test_max_restarts_is_set_to_zero_in_the_users_spelling() -> None:
    for given, expected in [
        (["--max-restarts", "3"], ["--max-restarts", "0"]),
        (["--max_restarts", "3"], ["--max_restarts", "0"]),
        (["--max-restarts=3"], ["--max-restarts=0"]),
        (["--max_restarts=5"], ["--max_restarts=0"]),
    ]:
        argv = ["torchrun", "--nproc-per-node", "2", *given, "train.py", "--max-restarts", "9"]
        plan = rewrite(argv, LOGS, {})
        assert plan.argv == [
            "torchrun", "--nproc-per-node", "2", *expected, *ADDED,
            "train.py", "--max-restarts", "9",  # the script's own flag is left alone
        ]  # fmt: skip
        assert plan.user_max_restarts == int(given[-1].split("=")[-1])


def test_no_max_restarts_and_zero_are_not_worth_a_word() -> None:
    assert rewrite(["torchrun", "t.py"], LOGS, {}).user_max_restarts is None
    plan = rewrite(["torchrun", "--max-restarts", "0", "t.py"], LOGS, {})
    assert plan.user_max_restarts is None
    assert plan.argv == ["torchrun", "--max-restarts", "0", *ADDED, "t.py"]


def test_max_restarts_from_torchruns_environment_is_overridden_on_the_command_line() -> None:
    plan = rewrite(["torchrun", "t.py"], LOGS, {"PET_MAX_RESTARTS": "2"})
    assert plan.user_max_restarts == 2
    assert plan.argv == ["torchrun", "--max-restarts", "0", *ADDED, "t.py"]


@pytest.mark.parametrize(
    ("options", "env", "where"),
    [
        (["--log-dir", "/mine"], {}, Path("/mine")),
        (["--log_dir=/mine", "--tee", "3"], {}, Path("/mine")),
        (["-r", "3"], {}, None),
        (["--redirects=1"], {}, None),
        (["-t3"], {}, None),
        (["--logs-specs", "my_specs"], {}, None),
        ([], {"PET_LOG_DIR": "/env"}, Path("/env")),
        ([], {"PET_TEE": "3"}, None),
    ],
)
def test_the_users_own_log_choice_is_kept(
    options: list[str], env: dict[str, str], where: Path | None
) -> None:
    argv = ["torchrun", "--nproc-per-node", "2", *options, "t.py"]
    plan = rewrite(argv, LOGS, env)
    assert plan.argv == argv
    assert not plan.added_logs and plan.log_dir == where


def test_rewrite_is_idempotent_and_leaves_other_commands_alone() -> None:
    argv = ["python", "-m", "torch.distributed.run", "--max-restarts", "3", "t.py", "a"]
    once = rewrite(argv, LOGS, {})
    twice = rewrite(once.argv, LOGS, {})
    assert twice.argv == once.argv and once.added_logs and not twice.added_logs
    assert twice.log_dir == LOGS and twice.user_max_restarts is None
    plain = ["python", "train.py", "--max-restarts", "3"]
    assert rewrite(plain, LOGS, {}).argv == plain


@pytest.mark.parametrize(
    ("options", "single"),
    [
        ([], True),
        (["--standalone"], True),
        (["--nnodes", "1"], True),
        (["--nnodes=1:1"], True),
        (["--nnodes", "2"], False),
        (["--nnodes=1:4", "--rdzv-backend", "c10d"], False),
    ],
)
def test_single_node(options: list[str], single: bool) -> None:
    assert rewrite(["torchrun", *options, "t.py"], LOGS, {}).single_node is single
