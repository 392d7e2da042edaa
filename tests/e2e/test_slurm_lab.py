"""The local Slurm cluster itself (tests/slurmlab.py): up, three nodes, a job on each."""

from __future__ import annotations

import pytest

from tests.slurmlab import NODES, SlurmLab

pytestmark = pytest.mark.e2e


def test_three_nodes_run_a_step_each(slurm: SlurmLab) -> None:
    res = slurm.run(
        "srun", "-N3", "--label", "bash", "-c", "echo $SLURMD_NODENAME", timeout_s=30
    )
    assert res.returncode == 0, res.stderr + slurm.logs()
    seen = sorted(line.split(": ")[1] for line in res.stdout.splitlines())
    assert seen == list(NODES)
