"""supervise/nodes.py: a ban reaches the engine in the engine's own spelling, however the ban
spelled the host (with or without its domain, in any case)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

import babysit.supervise.nodes
from babysit.engines.base import InJobCheck, NodeResult
from babysit.engines.jobcheck import EXIT_SICK
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


@pytest.mark.parametrize(
    ("min_nodes", "host", "can"),
    [
        (2, "gpu-17", True),  # three hosts, two needed: a ban leaves enough
        (3, "gpu-17", False),  # every host needed: a ban ends the run, not a way out
        (0, "gpu-17", False),  # 0: every host of the hostfile is needed
        (2, "gpu-99", False),  # not in the hostfile: a ban leaves it out of nothing
    ],
)
def test_can_ban_only_where_a_ban_leaves_somewhere_to_run(
    tmp_path: Path, min_nodes: int, host: str, can: bool
) -> None:
    # The restart policy waits for a ban instead of calling a repeated error a loop only when
    # the ban would leave the run somewhere to go (policy/restart.py, node_ban_pending).
    (tmp_path / "hosts.txt").write_text("gpu-16\ngpu-17\ngpu-18\n")
    cfg = {**HOSTFILE, "nodes.min_nodes": min_nodes}
    r = Run(tmp_path, [Script(steps(1, 3), ends_at=1.0)], **cfg)
    assert r.run() == ExitCode.OK, r.said.text
    nodes = r.sup.nodes
    with Store.open(r.home) as store:
        nodes._journal = lambda: SimpleNamespace(store=store)  # type: ignore[assignment,return-value]
        assert nodes.can_ban(host) is can
        if can:
            store.add_ban(Ban(host, "Xid 79", 0.0, None, DAY, "operator"))
            assert nodes.can_ban(host) is False  # banned already


def _stopped_at_preflight(r: Run, sick_jobs: int) -> list[str]:
    """The fake engine's jobs: the first `sick_jobs` ended by their own preflight (a new node
    sick each time, exit 86), the rest checked and healthy. The nodes named, in order."""
    named: list[str] = []

    def results(handle: object) -> InJobCheck:
        i = len(named) + 1
        named.append(f"node{i}")
        bad = i <= sick_jobs
        check = {"name": "matmul", "status": "fail" if bad else "pass", "summary": "wrong"}
        return InJobCheck([NodeResult(f"node{i}", 6 if bad else 0,
                                      json.dumps({"checks": [check]}), "")], bad)  # fmt: skip

    r.engine.preflight_results = results  # type: ignore[method-assign,assignment]
    return named


def test_a_job_its_preflight_ended_goes_again_at_once_without_the_node(tmp_path: Path) -> None:
    r = Run(tmp_path, [Script(ends_at=1.0, exit_code=EXIT_SICK), Script(steps(1, 3))],
            **{"restart.backoff_s": 60})  # fmt: skip
    named = _stopped_at_preflight(r, 1)
    assert r.run() == ExitCode.OK, r.said.text
    first, second = r.attempts()
    assert first["outcome"] == "stopped" and "preflight failed on node1" in first["summary"]
    assert second["outcome"] == "succeeded" and named == ["node1", "node2"]
    assert "banned node node1" in r.said.text
    assert r.clock.monotonic() < 60  # no backoff: nothing of the run's failed


def test_jobs_their_preflight_keeps_ending_page_a_human(tmp_path: Path) -> None:
    # A check that fails on every node, or a ban that does not reach the scheduler: free
    # restarts must end.
    r = Run(tmp_path, [Script(ends_at=1.0, exit_code=EXIT_SICK)] * 4)
    _stopped_at_preflight(r, 4)
    assert r.run() == ExitCode.NEEDS_HUMAN, r.said.text
    assert [a["outcome"] for a in r.attempts()] == ["stopped"] * 3
    assert "3 jobs in a row ended at their preflight" in r.said.text


def test_exit_86_without_the_preflights_mark_is_the_trainings_own(tmp_path: Path) -> None:
    r = Run(tmp_path, [Script.crash(steps(1, 2), "ValueError: bad", code=EXIT_SICK)])
    named = _stopped_at_preflight(r, 0)
    assert r.run() == ExitCode.NEEDS_HUMAN, r.said.text
    (only,) = r.attempts()
    assert only["outcome"] == "failed" and only["category"] == "user_code" and named == ["node1"]


def test_the_preflight_stops_in_a_row_survive_a_babysit_killed_between_them(
    tmp_path: Path,
) -> None:
    # Two jobs ended by their preflight, babysit SIGKILLed while the third runs; the babysit
    # started again counts the two from the logbook: the third stop pages.
    r = Run(tmp_path, [Script(ends_at=5.0, exit_code=EXIT_SICK)] * 5)
    _stopped_at_preflight(r, 5)
    r.killed_at(12.0)
    assert [a["outcome"] for a in r.attempts()][:2] == ["stopped", "stopped"]
    assert r.run() == ExitCode.NEEDS_HUMAN, r.said.text
    assert len(r.attempts()) == 3, r.said.text
