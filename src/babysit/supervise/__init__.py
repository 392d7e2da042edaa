"""The composition root: the only package that wires the stages together."""
