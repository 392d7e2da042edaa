"""The store: the run's memory. Everything is committed here before it is acted on."""

from babysit.store.sqlite import Store

__all__ = ["Store"]
