"""Which engine runs a command.

    engine = engine_for(["torchrun", "--nproc-per-node", "4", "train.py"])  # TorchrunEngine
"""

from __future__ import annotations

from collections.abc import Sequence

from babysit.engines.base import Engine
from babysit.engines.local import LocalEngine
from babysit.engines.torchrun import TorchrunEngine
from babysit.engines.torchrun_args import is_torchrun


def engine_for(command: Sequence[str]) -> Engine:
    """The engine for a `babysit run` command: torchrun's for `torchrun ...` and `python -m
    torch.distributed.run ...`, else the local engine."""
    return TorchrunEngine() if is_torchrun(command) else LocalEngine()
