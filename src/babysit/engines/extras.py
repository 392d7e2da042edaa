"""Which engine runs a command, and what only some engines do, asked of any engine.

    engine = engine_for(["torchrun", "--nproc-per-node", "4", "train.py"])  # TorchrunEngine
    spec, notes = prepare(engine, spec)      # the command as the engine runs it; notes said once
    evidence_files(engine, handle)           # files for triage beside stdout/stderr (or [])

`prepare` and `evidence_files` are optional engine methods (the torchrun engine has both; the
local engine neither): an engine without them runs the spec as it is and adds no files.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import cast

from babysit.engines.base import Engine, LaunchSpec
from babysit.engines.local import LocalEngine
from babysit.engines.process import Handle
from babysit.engines.torchrun import TorchrunEngine
from babysit.engines.torchrun_args import is_torchrun


def engine_for(command: Sequence[str]) -> Engine:
    """The engine for a `babysit run` command: torchrun's for `torchrun ...` and `python -m
    torch.distributed.run ...`, else the local engine."""
    return TorchrunEngine() if is_torchrun(command) else LocalEngine()


def prepare(engine: Engine, spec: LaunchSpec) -> tuple[LaunchSpec, list[str]]:
    method = getattr(engine, "prepare", None)
    if method is None:
        return spec, []
    return cast(Callable[[LaunchSpec], tuple[LaunchSpec, list[str]]], method)(spec)


def evidence_files(engine: Engine, handle: Handle) -> list[Path]:
    method = getattr(engine, "evidence_files", None)
    if method is None:
        return []
    return cast(Callable[[Handle], list[Path]], method)(handle)
