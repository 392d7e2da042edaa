"""Slurm hostlists (engines/hostlist.py): Slurm's own examples, errors, random round trips."""

from __future__ import annotations

import random

import pytest

from babysit.engines.hostlist import compress, expand, expand_all


@pytest.mark.parametrize(
    ("text", "hosts"),
    [
        ("node[01-03,10]", ["node01", "node02", "node03", "node10"]),
        ("gpu-[1-2]-[3-4]", ["gpu-1-3", "gpu-1-4", "gpu-2-3", "gpu-2-4"]),
        ("rack[1-2]-n[1,3]", ["rack1-n1", "rack1-n3", "rack2-n1", "rack2-n3"]),
        ("n[8-10]", ["n8", "n9", "n10"]),
        ("x[001-2]", ["x001", "x002"]),
        ("node1,login,node1", ["node1", "login"]),
        ("", []),
        ("(null)", []),
        (" node[1-2] ", ["node1", "node2"]),
    ],
)
def test_expand_as_slurm_does(text: str, hosts: list[str]) -> None:
    # Each pair checked against `scontrol show hostnames` of Slurm 22.05.
    assert expand(text) == hosts


@pytest.mark.parametrize(
    ("hosts", "text"),
    [
        (["node3", "node1", "node2"], "node[1-3]"),
        (["node01", "node02", "node03", "node10", "n9"], "node[01-03,10],n9"),
        (["gpu-1-3", "gpu-1-4", "gpu-2-3"], "gpu-1-[3-4],gpu-2-3"),
        (["node09", "node10"], "node[09-10]"),
        (["n8", "n9", "n10"], "n[8-10]"),
        (["login"], "login"),
        (["node2"], "node2"),
        ([], ""),
    ],
)
def test_compress_in_slurms_spelling(hosts: list[str], text: str) -> None:
    assert compress(hosts) == text


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("gpu-[1-3]-[a,b]", "'a' is not a number"),
        ("a[1-2]b", "after the last ']'"),
        ("x[1-3", "'[' without ']'"),
        ("x1-3]", "']' without '['"),
        ("x[[1]]", "nested"),
        ("x[3-1]", "goes down"),
        ("x[1-100000000]", "too large"),
    ],
)
def test_bad_hostlists_say_what_is_wrong(text: str, says: str) -> None:
    with pytest.raises(ValueError, match="invalid hostlist") as err:
        expand(text)
    assert says in str(err.value)


def test_expand_all_merges_lists() -> None:
    assert expand_all(["node[1-2]", "node2,node3"]) == ["node1", "node2", "node3"]


def test_compress_refuses_a_hostlist_as_a_name() -> None:
    with pytest.raises(ValueError, match="not a host name"):
        compress(["node[1-2]"])


def _random_host(rng: random.Random) -> str:
    prefix = rng.choice(["node", "gpu-", "gpu-1-", "a", "rack2-n", "login", "x"])
    if prefix == "login" or rng.random() < 0.05:
        return prefix
    n = rng.randrange(0, 130)
    width = rng.choice([0, 0, 2, 3])
    return prefix + str(n).zfill(width)


@pytest.mark.parametrize("seed", range(200))
def test_round_trip(seed: int) -> None:
    """expand(compress(hosts)) is the same set of hosts, whatever their widths and order."""
    rng = random.Random(seed)
    hosts = [_random_host(rng) for _ in range(rng.randrange(1, 40))]
    text = compress(hosts)
    assert sorted(expand(text)) == sorted(set(hosts))
    assert compress(expand(text)) == text  # compressing is stable
