"""supervise/nodes.py: a ban reaches the engine in the engine's own spelling, however the ban
spelled the host (with or without its domain, in any case)."""

from __future__ import annotations

from pathlib import Path

import pytest

import babysit.supervise.nodes
from babysit.records import Ban, CheckResult, CheckStatus, ExitCode
from babysit.store import Store
from babysit.supervise.nodes import spelled
from tests.fakes import Script, steps
from tests.unit.supervise.harness import Run

DAY = 86400.0
HOSTFILE = {"nodes.hostfile": "hosts.txt", "nodes.min_nodes": 1}


def _ban(home: Path, host: str) -> None:
    with Store.open(home) as store:
        store.add_ban(Ban(host, "Xid 79", 0.0, None, DAY, "operator"))


def test_spelled_uses_the_known_spelling_else_the_key() -> None:
    known = ["gpu-1.cluster.local", "GPU-2.cluster.local"]
    assert spelled({"gpu-1", "gpu-2", "gpu-9"}, known) == {
        "gpu-1.cluster.local",
        "GPU-2.cluster.local",
        "gpu-9",
    }


def test_a_short_ban_leaves_out_the_hostfiles_long_name(tmp_path: Path) -> None:
    (tmp_path / "hosts.txt").write_text(
        "gpu-16.cluster.local slots=8\ngpu-17.cluster.local slots=8\n"
    )
    r = Run(tmp_path, [Script(steps(1, 3), ends_at=1.0)], **HOSTFILE)
    _ban(r.home, "GPU-17")
    assert r.run() == ExitCode.OK, r.said.text
    (spec,) = r.engine.launches
    assert spec.env["BABYSIT_EXCLUDE_HOSTS"] == "gpu-17.cluster.local"
    assert spec.exclude == ("gpu-17.cluster.local",)
    assert spec.env["BABYSIT_HOSTS"] == "gpu-16.cluster.local"
    hostfile = Path(spec.env["BABYSIT_HOSTFILE"]).read_text()
    assert hostfile == "gpu-16.cluster.local slots=8\n"
    assert "leaving banned host(s) out of this attempt: gpu-17.cluster.local" in r.said.text


def test_a_long_ban_leaves_out_the_hostfiles_short_name(tmp_path: Path) -> None:
    (tmp_path / "hosts.txt").write_text("gpu-16\ngpu-17\n")
    r = Run(tmp_path, [Script(steps(1, 3), ends_at=1.0)], **HOSTFILE)
    _ban(r.home, "gpu-17.cluster.local.")
    assert r.run() == ExitCode.OK, r.said.text
    (spec,) = r.engine.launches
    assert spec.env["BABYSIT_EXCLUDE_HOSTS"] == "gpu-17"
    assert spec.env["BABYSIT_HOSTS"] == "gpu-16"


def test_without_a_hostfile_a_ban_of_this_node_in_another_spelling_refuses(
    tmp_path: Path,
) -> None:
    r = Run(tmp_path, [Script(steps(1, 3), ends_at=1.0)])
    _ban(r.home, f"{r.engine.host.upper()}.cluster.local")
    assert r.run() == ExitCode.BUDGET_EXHAUSTED, r.said.text
    assert r.engine.launches == []
    assert f"this node ({r.engine.host}) is banned" in r.said.text


def test_a_preflight_pass_says_what_it_did_not_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results = [
        CheckResult("gpu", CheckStatus.SKIP, "no NVIDIA driver answered"),
        CheckResult("disk", CheckStatus.PASS, "plenty", "/ckpt", 0.1),
        CheckResult("matmul", CheckStatus.PASS, "CPU: exact", "CPU", 2.0),
    ]
    monkeypatch.setattr(babysit.supervise.nodes, "preflight", lambda *_: (True, results))
    r = Run(tmp_path, [Script(steps(1, 3), ends_at=1.0)], **{"health.preflight": True})
    assert r.run() == ExitCode.OK, r.said.text
    assert (
        "preflight of fake-node passed (2 checks in 2.0s; skipped: gpu (no NVIDIA driver "
        "answered); no GPU was checked)" in r.said.text
    )
