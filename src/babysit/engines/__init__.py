"""Engines: how an attempt is launched and observed (see base.py for the interface)."""

from babysit.engines.base import Engine, LaunchSpec, NodeResult, RankProcess
from babysit.engines.extras import engine_for
from babysit.engines.local import LocalEngine
from babysit.engines.torchrun import TorchrunEngine
from babysit.engines.torchrun_args import is_torchrun

__all__ = [
    "Engine",
    "LaunchSpec",
    "LocalEngine",
    "NodeResult",
    "RankProcess",
    "TorchrunEngine",
    "engine_for",
    "is_torchrun",
]
