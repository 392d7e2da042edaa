"""Engines: how an attempt is launched and observed (see base.py for the interface)."""

from babysit.engines.base import Engine, LaunchSpec, NodeResult, RankProcess
from babysit.engines.local import LocalEngine

__all__ = ["Engine", "LaunchSpec", "LocalEngine", "NodeResult", "RankProcess"]
