"""Host names with and without a domain are one node: node_key, the registry, `babysit nodes`,
the ban policy's host list. (How a ban reaches the engine, in its own spelling, is in
tests/unit/supervise/test_nodes.py.)"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from babysit.cli import cli
from babysit.policy.nodes import usable_hosts
from babysit.records import Ban, node_key
from babysit.store import Store

T = 1_700_000_000.0
DAY = 86400.0


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store.open(tmp_path / "home")
    yield s
    s.close()


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("gpu-17", "gpu-17"),
        ("GPU-17", "gpu-17"),
        ("gpu-17.cluster.local", "gpu-17"),
        ("gpu-17.cluster.local.", "gpu-17"),  # the fully qualified form, root dot and all
        (" Gpu-17.Cluster.Local ", "gpu-17"),
        ("10.0.0.2", "10.0.0.2"),  # an address stays whole: not "10"
        ("FE80::1", "fe80::1"),
        ("", ""),
    ],
)
def test_node_key(name: str, key: str) -> None:
    assert node_key(name) == key


def test_a_ban_without_a_domain_is_lifted_with_one(store: Store) -> None:
    store.add_ban(Ban("gpu-17", "Xid 79", T, None, DAY, "operator"))
    store.lift_bans("gpu-17.cluster.local", T + 10, "GPU replaced")
    assert store.active_bans(T + 20) == []
    (ban,) = store.bans("GPU-17.cluster.local.")
    assert ban["host"] == "gpu-17" and ban["lifted"] == T + 10


def test_events_and_bans_of_one_node_are_kept_under_one_name(store: Store) -> None:
    store.add_node_event(T, "gpu-17.cluster.local", "failure", "NCCL error")
    store.add_node_event(T + 1, "GPU-17", "failure", "NCCL error")
    store.add_node_event(T + 2, "gpu-18", "failure", "NCCL error")
    store.add_ban(Ban("gpu-17.cluster.local.", "2 failures", T + 3, None, DAY, "policy"))
    assert [e["ts"] for e in store.node_events("gpu-17")] == [T, T + 1]
    assert {e["host"] for e in store.node_events()} == {"gpu-17", "gpu-18"}
    assert [b.host for b in store.active_bans(T + 4)] == ["gpu-17"]
    assert set(store.last_bans()) == {"gpu-17"}


def test_rows_written_before_names_were_normalised_still_match(tmp_path: Path) -> None:
    home = tmp_path / "home"
    Store.open(home).close()
    conn = sqlite3.connect(home / "babysit.db")  # an older babysit wrote the spelling as given
    with conn:
        conn.execute(
            "INSERT INTO bans (host, reason, since, expires, probation_s, by, run) "
            "VALUES ('GPU-17.cluster.local', 'old', ?, NULL, ?, 'operator', NULL)",
            (T, DAY),
        )
    conn.close()
    with Store.open(home) as store:
        assert [b.host for b in store.active_bans(T + 1)] == ["gpu-17"]
        store.lift_bans("gpu-17", T + 2, "fixed")
        assert store.active_bans(T + 3) == []


def test_nodes_unban_with_the_domain_lifts_a_ban_without_it(tmp_path: Path) -> None:
    runner = CliRunner()
    home = str(tmp_path / "home")
    res = runner.invoke(cli, ["nodes", "ban", "gpu-17", "--reason", "Xid 79", "--home", home])
    assert res.exit_code == 0, res.output
    res = runner.invoke(cli, ["nodes", "unban", "gpu-17.cluster.local", "--home", home])
    assert res.exit_code == 0, res.output
    assert "unbanned gpu-17.cluster.local" in res.output
    with Store.open(Path(home)) as store:
        assert store.active_bans(T * 2) == []
    # ...and the other way round, whatever the case
    runner.invoke(cli, ["nodes", "ban", "GPU-18.cluster.local.", "--reason", "x", "--home", home])
    res = runner.invoke(cli, ["nodes", "unban", "gpu-18", "--home", home])
    assert res.exit_code == 0, res.output


def test_usable_hosts_compares_node_keys() -> None:
    hosts = ["gpu-1.cluster.local", "GPU-2.cluster.local", "gpu-3.cluster.local"]
    assert usable_hosts(hosts, {"gpu-2"}, needed=0) == (
        ["gpu-1.cluster.local", "gpu-3.cluster.local"],
        1,
    )
