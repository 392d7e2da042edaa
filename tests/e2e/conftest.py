"""Fixtures of the end-to-end tests: the local Slurm cluster (tests/slurmlab.py).

`slurm_lab` starts it once per session; `slurm` hands it to a test on a clean cluster (no job,
every node idle) and cleans up after it. Without Slurm's binaries the tests that use them are
skipped with the reason, unless BABYSIT_REQUIRE_SLURM=1 (CI: .ci/run installs Slurm), where
they fail. A cluster that is installed but does not come up is a failure, with its logs.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.slurmlab import SlurmLab, missing

# Read at import: tests/conftest.py's autouse fixture clears BABYSIT_* before each test.
REQUIRE_SLURM = os.environ.get("BABYSIT_REQUIRE_SLURM") == "1"


@pytest.fixture(scope="session")
def slurm_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlurmLab]:
    gone = missing()
    if gone:
        why = f"Slurm is not installed (missing {', '.join(gone)}; Debian: apt-get install " \
            "slurmctld slurmd slurm-client)"
        if REQUIRE_SLURM:
            pytest.fail(f"{why} and BABYSIT_REQUIRE_SLURM=1")
        pytest.skip(why)
    root = Path(tmp_path_factory.mktemp("slurmlab"))
    lab = SlurmLab.start(root)
    try:
        yield lab
    finally:
        lab.stop()
        print(f"the Slurm lab's logs: {root}")  # pytest keeps the last runs' temp dirs


@pytest.fixture
def slurm(slurm_lab: SlurmLab, monkeypatch: pytest.MonkeyPatch) -> Iterator[SlurmLab]:
    """The lab, clean, with SLURM_CONF set for the test and the processes it starts."""
    slurm_lab.idle()
    for key in list(os.environ):
        if key.startswith("SLURM_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("SLURM_CONF", str(slurm_lab.conf))
    yield slurm_lab
    slurm_lab.idle()
