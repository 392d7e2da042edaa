"""Checks and set-up before an attempt starts (supervise.prepare); no process is started."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from babysit.errors import CommandNotFound, ConfigError
from babysit.records import Checkpoint
from babysit.supervise.prepare import attempt_env, build_argv, check_checkpoint_glob, check_command


def test_unreadable_checkpoint_directory_is_a_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ckpts").mkdir()
    real_access = os.access
    monkeypatch.setattr(
        os, "access", lambda p, mode: False if str(p).endswith("ckpts") else real_access(p, mode)
    )
    with pytest.raises(ConfigError, match=r"cannot read directory .*ckpts"):
        check_checkpoint_glob("ckpts/*.pt", ["true"], "", tmp_path)


def test_checkpoint_directory_not_there_yet_is_fine(tmp_path: Path) -> None:
    check_checkpoint_glob("later/ckpt_*.pt", ["true"], "", tmp_path)


def test_placeholder_without_glob_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no checkpoint glob"):
        check_checkpoint_glob(None, ["true"], "--resume {checkpoint}", tmp_path)
    with pytest.raises(ConfigError, match="no checkpoint glob"):
        check_checkpoint_glob(None, ["python", "t.py", "--resume={checkpoint}"], "", tmp_path)


def test_command_checks(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\n")
    with pytest.raises(CommandNotFound, match="not executable"):
        check_command(["./run.sh"], tmp_path)
    script.chmod(0o755)
    check_command(["./run.sh"], tmp_path)
    with pytest.raises(CommandNotFound, match="no such file"):
        check_command(["./missing.sh"], tmp_path)
    with pytest.raises(CommandNotFound, match="not on PATH"):
        check_command(["no-such-program-xyz"], tmp_path)


def test_argv_substitution() -> None:
    command = ["python", "t.py", "--resume={checkpoint}"]
    assert build_argv(command, "--init_from=resume", None) == ["python", "t.py"]
    ck = Checkpoint("c/ckpt_5.pt", 5, 1.0, 10, True)
    assert build_argv(command, "--init_from=resume", ck) == [
        "python", "t.py", "--resume=c/ckpt_5.pt", "--init_from=resume"]
    assert build_argv(["t"], "--resume {checkpoint}", ck) == ["t", "--resume", "c/ckpt_5.pt"]


def test_attempt_env(tmp_path: Path) -> None:
    ck = Checkpoint("c/ckpt_5.pt", 5, 1.0, 10, True)
    env = attempt_env({"PATH": "/bin", "BABYSIT_RESUME_FROM": "stale"}, "r", 3, tmp_path, None)
    assert env["BABYSIT_ATTEMPT"] == "3" and env["BABYSIT_RUN"] == "r"
    assert "BABYSIT_RESUME_FROM" not in env and env["PYTHONUNBUFFERED"] == "1"
    assert attempt_env({}, "r", 4, tmp_path, ck)["BABYSIT_RESUME_FROM"] == "c/ckpt_5.pt"
    assert attempt_env({"PYTHONUNBUFFERED": "0"}, "r", 1, tmp_path, None)[
        "PYTHONUNBUFFERED"] == "0"
