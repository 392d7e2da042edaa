"""The supervisor's checks before the first launch (no process is started here)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from babysit.config import build_config
from babysit.errors import CommandNotFound, ConfigError
from babysit.supervisor import Supervisor


def make(tmp_path: Path, command: list[str], **values: object) -> Supervisor:
    cfg = build_config({"run.home": str(tmp_path / "h"), **values})
    return Supervisor(cfg, command, "t", tmp_path / "h", tmp_path, lambda level, text: None)


def test_unreadable_checkpoint_directory_is_a_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ckpts").mkdir()
    real_access = os.access
    monkeypatch.setattr(
        os, "access", lambda p, mode: False if str(p).endswith("ckpts") else real_access(p, mode)
    )
    sup = make(tmp_path, ["true"], **{"checkpoint.glob": "ckpts/*.pt"})
    with pytest.raises(ConfigError, match=r"cannot read directory .*ckpts"):
        sup._check_checkpoint_glob()


def test_checkpoint_directory_not_there_yet_is_fine(tmp_path: Path) -> None:
    make(tmp_path, ["true"], **{"checkpoint.glob": "later/ckpt_*.pt"})._check_checkpoint_glob()


def test_placeholder_without_glob_is_a_config_error(tmp_path: Path) -> None:
    sup = make(tmp_path, ["true"], **{"run.resume_args": "--resume {checkpoint}"})
    with pytest.raises(ConfigError, match="no checkpoint glob"):
        sup._check_checkpoint_glob()


def test_command_checks(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\n")
    with pytest.raises(CommandNotFound, match="not executable"):
        make(tmp_path, ["./run.sh"])._check_command()
    script.chmod(0o755)
    make(tmp_path, ["./run.sh"])._check_command()
    with pytest.raises(CommandNotFound, match="no such file"):
        make(tmp_path, ["./missing.sh"])._check_command()


def test_argv_substitution(tmp_path: Path) -> None:
    from babysit.records import Checkpoint

    sup = make(tmp_path, ["python", "t.py", "--resume={checkpoint}"],
               **{"checkpoint.glob": "c/*", "run.resume_args": "--init_from=resume"})
    assert sup._argv(None) == ["python", "t.py"]
    ck = Checkpoint("c/ckpt_5.pt", 5, 1.0, 10, True)
    assert sup._argv(ck) == ["python", "t.py", "--resume=c/ckpt_5.pt", "--init_from=resume"]
