"""What `pip install babysit[extra]` brings: the extras the README and the Makefile rely on."""

from __future__ import annotations

import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def _extra(name: str) -> set[str]:
    extras = tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]
    return {re.split(r"[<>=!~\[; ]", req, maxsplit=1)[0].lower() for req in extras[name]}


def test_the_demo_extra_has_numpy_so_torch_does_not_warn_at_import() -> None:
    # Without numpy, `import torch` prints "Failed to initialize NumPy" into the demo.
    assert {"torch", "numpy"} <= _extra("demo")
