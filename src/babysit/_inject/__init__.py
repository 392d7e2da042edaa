"""Run inside the trainer (its directory goes first on the child's PYTHONPATH): standard library
only, never raise. Not imported by babysit itself."""
