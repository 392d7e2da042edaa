"""The node registry (store, `nodes list` document and table, the `babysit nodes` commands),
hostfiles, the recovery environment, checkpoint templates and --validate-checkpoint."""

from __future__ import annotations

import io
import json
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from babysit.cli import cli
from babysit.errors import ConfigError
from babysit.records import Ban
from babysit.sources.checkpoints import scan_checkpoints, template_glob, validate_checkpoint
from babysit.store import Store
from babysit.supervise.prepare import HostLine, read_hostfile, recovery_env, write_hostfile
from babysit.views.nodes import nodes_document, nodes_table

H = 3600.0
DAY = 86400.0
T = 1_700_000_000.0


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store.open(tmp_path / "home")
    yield s
    s.close()


# -- the store -------------------------------------------------------------------------------


def test_node_events_roundtrip_and_filters(store: Store) -> None:
    store.add_node_event(T, "gpu-1", "failure", "NCCL error", run="gpt", attempt=2,
                         gpu="3", category="nccl_error", data={"xid": 79})
    store.add_node_event(T + 10, "gpu-2", "health_fail", "matmul 40% slow")
    store.add_node_event(T + 20, "gpu-1", "health_pass", "ok")
    every = store.node_events()
    assert [(e["host"], e["kind"]) for e in every] == [
        ("gpu-1", "failure"), ("gpu-2", "health_fail"), ("gpu-1", "health_pass")
    ]
    first = every[0]
    assert first["run"] == "gpt" and first["attempt"] == 2 and first["gpu"] == "3"
    assert first["category"] == "nccl_error" and first["data"] == {"xid": 79}
    assert every[1]["data"] == {}
    assert [e["kind"] for e in store.node_events("gpu-1")] == ["failure", "health_pass"]
    assert [e["ts"] for e in store.node_events(since=T + 5)] == [T + 10, T + 20]
    assert store.node_events("nobody") == []


def test_bans_active_expired_and_lifted(store: Store) -> None:
    store.add_ban(Ban("old", "expired", T - 2 * DAY, T - DAY, DAY, "policy", "gpt"))
    store.add_ban(Ban("gpu-1", "3 failures", T, T + DAY, DAY, "policy", "gpt"))
    store.add_ban(Ban("gpu-2", "by hand", T + 1, None, DAY, "operator"))
    assert [b.host for b in store.active_bans(T + 10)] == ["gpu-1", "gpu-2"]
    assert [b.host for b in store.active_bans(T + 2 * DAY)] == ["gpu-2"]  # gpu-1 expired
    active = store.active_bans(T + 10)[0]
    assert active == Ban("gpu-1", "3 failures", T, T + DAY, DAY, "policy", "gpt")

    store.lift_bans("gpu-2", T + 100, "GPU replaced")
    assert [b.host for b in store.active_bans(T + 200)] == ["gpu-1"]
    row = store.bans("gpu-2")[0]
    assert row["lifted"] == T + 100 and row["lifted_reason"] == "GPU replaced"
    # Lifting an expired ban changes nothing: it already ended on its own.
    store.lift_bans("old", T + 100, "late")
    assert store.bans("old")[0]["lifted"] is None
    assert [b["host"] for b in store.bans()] == ["old", "gpu-1", "gpu-2"]


def test_last_bans_ends_a_lifted_ban_when_it_was_lifted(store: Store) -> None:
    store.add_ban(Ban("gpu-1", "first", T, T + H, DAY, "policy"))
    store.add_ban(Ban("gpu-1", "second", T + 2 * H, T + 4 * H, DAY, "policy"))
    store.add_ban(Ban("gpu-2", "by hand", T, None, DAY, "operator"))
    store.lift_bans("gpu-2", T + 30, "fixed")
    last = store.last_bans()
    assert last["gpu-1"].reason == "second" and last["gpu-1"].expires == T + 4 * H
    assert last["gpu-2"].expires == T + 30  # probation runs from the lift


# -- the `nodes list` document and table -----------------------------------------------------


def test_nodes_document_states(store: Store) -> None:
    now = T + 10 * DAY
    store.add_node_event(now - 2 * DAY, "gpu-ok", "failure", "old failure", "gpt", 1)
    store.add_node_event(now - 100, "gpu-ok", "failure", "NCCL WARN", "gpt", 4, None, "nccl_error")
    store.add_node_event(now - 50, "gpu-sick", "health_fail", "matmul 40% slow")
    store.add_ban(Ban("gpu-banned", "3 failures", now - H, now + H, DAY, "policy", "gpt"))
    store.add_ban(Ban("gpu-prob", "3 failures", now - 3 * H, now - 2 * H, DAY, "policy"))
    store.add_ban(Ban("gpu-forgiven", "long ago", now - 5 * DAY, now - 4 * DAY, DAY, "policy"))
    store.add_ban(Ban("gpu-lifted", "by hand", now - H, None, DAY, "operator"))
    store.lift_bans("gpu-lifted", now - 10, "cable replaced")
    docs = nodes_document(store.node_events(), store.bans(), now, DAY)
    assert [(d["host"], d["state"]) for d in docs] == [
        ("gpu-banned", "banned"),
        ("gpu-lifted", "probation"),
        ("gpu-prob", "probation"),
        ("gpu-forgiven", "ok"),
        ("gpu-ok", "ok"),
        ("gpu-sick", "ok"),
    ]
    by = {d["host"]: d for d in docs}
    assert by["gpu-ok"]["failures"] == 1 and by["gpu-ok"]["failures_total"] == 2
    assert by["gpu-ok"]["last_failure"] == {
        "ts": now - 100, "run": "gpt", "attempt": 4, "category": "nccl_error",
        "reason": "NCCL WARN",
    }
    assert by["gpu-banned"]["ban"]["reason"] == "3 failures"
    assert by["gpu-banned"]["ban"]["probation_until"] == now + H + DAY
    assert by["gpu-lifted"]["ban"]["lifted_reason"] == "cable replaced"
    assert by["gpu-lifted"]["ban"]["probation_until"] == now - 10 + DAY
    assert by["gpu-forgiven"]["ban"] is None and by["gpu-forgiven"]["bans_total"] == 1
    assert by["gpu-sick"]["last_health"] == {
        "ts": now - 50, "passed": False, "reason": "matmul 40% slow"
    }


def test_a_ban_in_force_wins_over_an_older_probation(store: Store) -> None:
    now = T + 10 * DAY
    store.add_ban(Ban("h", "first", now - 3 * H, now - 2 * H, DAY, "policy"))
    store.add_ban(Ban("h", "again on probation", now - H, now + H, DAY, "policy"))
    (doc,) = nodes_document(store.node_events(), store.bans(), now, DAY)
    assert doc["state"] == "banned" and doc["ban"]["reason"] == "again on probation"
    assert doc["bans_total"] == 2


def test_nodes_table_renders(store: Store) -> None:
    now = T + 10 * DAY
    store.add_node_event(now - 100, "gpu-ok", "failure", "NCCL WARN on mlx5_0", "gpt", 4)
    store.add_node_event(now - 50, "gpu-sick", "health_fail", "matmul 40% slow")
    store.add_ban(Ban("gpu-banned", "3 failures blamed on it", now - H, None, DAY, "policy"))
    store.add_ban(Ban("gpu-prob", "Xid 79", now - 3 * H, now - 2 * H, DAY, "operator"))
    buf = io.StringIO()
    console = Console(file=buf, width=200, color_system=None)
    console.print(nodes_table(nodes_document(store.node_events(), store.bans(), now, DAY), DAY))
    out = buf.getvalue()
    assert "failures (24h)" in out
    assert "3 failures blamed on it (by policy)" in out and "`nodes unban`" in out
    assert "on probation after: Xid 79" in out
    assert "last failure: NCCL WARN on mlx5_0" in out
    assert "last health check failed: matmul 40% slow" in out
    lines = [line for line in out.splitlines() if "gpu-" in line]
    assert [line.split()[1] for line in lines] == ["gpu-banned", "gpu-prob", "gpu-ok", "gpu-sick"]


# -- hostfiles and the recovery environment --------------------------------------------------


def test_read_hostfile_formats_and_comments(tmp_path: Path) -> None:
    path = tmp_path / "hosts"
    path.write_text(
        "# the run's nodes\n"
        "\n"
        "gpu-1 slots=8\n"
        "  gpu-2 slots=8   # replaced in March\n"
        "gpu-3:8\n"
        "gpu-4\n"
        "   # indented comment\n"
    )
    assert read_hostfile(path) == [
        HostLine("gpu-1", "gpu-1 slots=8"),
        HostLine("gpu-2", "gpu-2 slots=8"),
        HostLine("gpu-3", "gpu-3:8"),
        HostLine("gpu-4", "gpu-4"),
    ]


def test_read_hostfile_errors_say_what_to_fix(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nodes.hostfile .*cannot read it"):
        read_hostfile(tmp_path / "missing")
    empty = tmp_path / "empty"
    empty.write_text("# nothing here\n\n")
    with pytest.raises(ConfigError, match="lists no hosts"):
        read_hostfile(empty)


def test_write_hostfile_leaves_banned_hosts_out(tmp_path: Path) -> None:
    lines = [HostLine("a", "a slots=8"), HostLine("b", "b slots=8"), HostLine("c", "c:4")]
    out = tmp_path / "attempt-0002" / "hostfile"
    assert write_hostfile(out, lines, banned={"b", "zz"}) == ["a", "c"]
    assert out.read_text() == "a slots=8\nc:4\n"
    assert read_hostfile(out) == [lines[0], lines[2]]


def test_recovery_env(tmp_path: Path) -> None:
    inherited = {
        "PATH": "/bin",
        "BABYSIT_SKIP_STEPS": "1-2",
        "BABYSIT_LR_SCALE": "9",
        "BABYSIT_HOSTFILE": "/old",
        "BABYSIT_EXCLUDE_HOSTS": "old",
    }
    env = recovery_env(
        dict(inherited),
        skip_steps=((150, 350), (900, 1100)),
        lr_scale=0.5,
        resume_step=120,
        hostfile=tmp_path / "hostfile",
        hosts=["a", "c"],
        banned={"d", "b"},
    )
    assert env["BABYSIT_SKIP_STEPS"] == "150-350,900-1100"
    assert env["BABYSIT_LR_SCALE"] == "0.5"
    assert env["BABYSIT_RESUME_STEP"] == "120"
    assert env["BABYSIT_HOSTFILE"] == str((tmp_path / "hostfile").resolve())
    assert env["BABYSIT_HOSTS"] == "a,c"
    assert env["BABYSIT_EXCLUDE_HOSTS"] == "b,d"
    assert env["PATH"] == "/bin"
    # Nothing to hand over: babysit's own inherited values are dropped, not passed on.
    bare = recovery_env(dict(inherited))
    assert {k for k in bare if k.startswith("BABYSIT_")} == set()


# -- checkpoint templates and validation -----------------------------------------------------


def test_checkpoint_template_step_is_where_step_is(tmp_path: Path) -> None:
    base = tmp_path / "run7"
    for step in (500, 1500, 1000):
        d = base / f"step{step}_v2"
        d.mkdir(parents=True)
        (d / "model3.pt").write_bytes(b"weights")
    (base / "notes").mkdir()
    pattern = str(base / "step{step}_v2" / "model3.pt")
    assert template_glob(pattern) == str(base / "step*_v2" / "model3.pt")
    found = scan_checkpoints(pattern, now=T * 2, settle_s=0.0)
    assert [c.step for c in found] == [1500, 1000, 500]
    assert all(c.complete for c in found)
    assert found[0].path == str(base / "step1500_v2" / "model3.pt")


def test_checkpoint_template_of_directories(tmp_path: Path) -> None:
    for step in (20, 100):
        d = tmp_path / "ckpts" / f"global_{step}"
        d.mkdir(parents=True)
        (d / "shard0.bin").write_bytes(b"x")
    found = scan_checkpoints(str(tmp_path / "ckpts" / "global_{step}"), now=T * 2, settle_s=0.0)
    assert [(Path(c.path).name, c.step) for c in found] == [("global_100", 100), ("global_20", 20)]


def test_validate_checkpoint_passes_and_fails(tmp_path: Path) -> None:
    ckpt = tmp_path / "ckpt_000020.pt"
    ckpt.write_bytes(b"x")
    assert validate_checkpoint("true", str(ckpt), tmp_path, 10) is None
    assert validate_checkpoint("false", str(ckpt), tmp_path, 10) == (
        "--validate-checkpoint exited with 1"
    )
    check = "sh -c 'echo loading...; echo \"shape mismatch in $0\" >&2; exit 3' {checkpoint}"
    problem = validate_checkpoint(check, str(ckpt), tmp_path, 10)
    assert problem == f"--validate-checkpoint exited with 3: shape mismatch in {ckpt}"


def test_validate_checkpoint_appends_the_path_without_a_placeholder(tmp_path: Path) -> None:
    script = tmp_path / "check.py"
    script.write_text(
        "import os, sys\n"
        "sys.exit(0 if os.path.basename(sys.argv[1]) == 'good.pt' else 4)\n"
    )
    cmd = f"{sys.executable} check.py"  # relative: run in the run's cwd
    assert validate_checkpoint(cmd, str(tmp_path / "good.pt"), tmp_path, 10) is None
    assert validate_checkpoint(cmd, str(tmp_path / "bad.pt"), tmp_path, 10) == (
        "--validate-checkpoint exited with 4"
    )


def test_validate_checkpoint_timeout_and_missing_program(tmp_path: Path) -> None:
    t0 = time.monotonic()
    assert validate_checkpoint("sh -c 'exec sleep 5' {checkpoint}", "c.pt", tmp_path, 0.2) == (
        "--validate-checkpoint did not finish within 0.2s"
    )
    assert time.monotonic() - t0 < 3.0  # killed at the timeout, not waited for
    problem = validate_checkpoint("babysit-no-such-checker {checkpoint}", "c.pt", tmp_path, 5)
    assert problem is not None
    assert problem.startswith("--validate-checkpoint could not run 'babysit-no-such-checker'")
    assert "No such file" in problem


# -- `babysit nodes` -------------------------------------------------------------------------


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.chdir(tmp_path)  # no stray babysit.toml
    return CliRunner()


def test_nodes_ban_list_unban(runner: CliRunner, tmp_path: Path) -> None:
    home = str(tmp_path / "home")
    res = runner.invoke(cli, ["nodes", "ban", "gpu-17", "--home", home, "--reason", "Xid 79",
                              "--hours", "48"])
    assert res.exit_code == 0, res.output
    assert res.stdout.strip() == "banned gpu-17 for 48h: Xid 79"

    res = runner.invoke(cli, ["nodes", "list", "--home", home, "--json"])
    assert res.exit_code == 0, res.output
    (doc,) = json.loads(res.stdout)["nodes"]
    assert doc["host"] == "gpu-17" and doc["state"] == "banned"
    assert doc["ban"]["reason"] == "Xid 79" and doc["ban"]["by"] == "operator"
    ban = doc["ban"]  # ISO 8601 times, as in every JSON babysit prints
    since, expires = (datetime.fromisoformat(ban[k]).timestamp() for k in ("since", "expires"))
    assert expires - since == pytest.approx(48 * H)

    res = runner.invoke(cli, ["nodes", "list", "--home", home])
    assert res.exit_code == 0
    assert "gpu-17" in res.stdout and "banned" in res.stdout and "Xid 79 (by operator)" in (
        res.stdout
    )

    res = runner.invoke(cli, ["nodes", "unban", "gpu-17", "--home", home, "--reason", "reseated"])
    assert res.exit_code == 0, res.output
    assert res.stdout.strip() == "unbanned gpu-17: reseated"
    (doc,) = json.loads(runner.invoke(cli, ["nodes", "list", "--home", home, "--json"]).stdout)[
        "nodes"
    ]
    assert doc["state"] == "probation" and doc["ban"]["lifted_reason"] == "reseated"

    # Unbanning it twice: it is no longer banned.
    res = runner.invoke(cli, ["nodes", "unban", "gpu-17", "--home", home])
    assert res.exit_code == 2
    assert "gpu-17 is not banned (see `babysit nodes list`)" in res.stderr


def test_nodes_ban_until_unbanned(runner: CliRunner, tmp_path: Path) -> None:
    home = str(tmp_path / "home")
    res = runner.invoke(cli, ["nodes", "ban", "gpu-3", "--home", home, "--reason", "bad IB"])
    assert res.exit_code == 0
    assert "until `babysit nodes unban`" in res.stdout
    (doc,) = json.loads(runner.invoke(cli, ["nodes", "list", "--home", home, "--json"]).stdout)[
        "nodes"
    ]
    assert doc["state"] == "banned" and doc["ban"]["expires"] is None


def test_nodes_unban_unknown_host(runner: CliRunner, tmp_path: Path) -> None:
    home = str(tmp_path / "home")
    runner.invoke(cli, ["nodes", "ban", "gpu-1", "--home", home, "--reason", "x"])
    res = runner.invoke(cli, ["nodes", "unban", "gpu-404", "--home", home])
    assert res.exit_code == 2
    assert res.stderr.strip() == (
        "babysit: error: gpu-404 is not banned (see `babysit nodes list`)"
    )
    assert res.stdout == ""


def test_nodes_bad_input_and_no_home(runner: CliRunner, tmp_path: Path) -> None:
    home = tmp_path / "home"
    res = runner.invoke(cli, ["nodes", "ban", "gpu-1", "--home", str(home), "--reason", "x",
                              "--hours", "-1"])
    assert res.exit_code == 2 and "--hours must be >= 0, got -1" in res.stderr
    res = runner.invoke(cli, ["nodes", "ban", "gpu-1", "--home", str(home)])
    assert res.exit_code == 2 and "--reason" in res.output  # click's own usage error
    missing = tmp_path / "nowhere"
    for args in (["list"], ["unban", "gpu-1"]):
        res = runner.invoke(cli, ["nodes", *args, "--home", str(missing)])
        assert res.exit_code == 2, args
        assert "no babysit home" in res.stderr
    assert not missing.exists()  # reading commands create nothing


def test_nodes_list_empty_home(runner: CliRunner, tmp_path: Path) -> None:
    home = tmp_path / "home"
    Store.open(home).close()
    res = runner.invoke(cli, ["nodes", "list", "--home", str(home)])
    assert res.exit_code == 0 and "no nodes recorded yet" in res.stdout
    res = runner.invoke(cli, ["nodes", "list", "--home", str(home), "--json"])
    assert json.loads(res.stdout) == {"nodes": []}


def test_nodes_help() -> None:
    res = CliRunner().invoke(cli, ["nodes", "--help"])
    assert res.exit_code == 0
    for sub in ("list", "ban", "unban"):
        assert sub in res.stdout
    assert "Examples:\n    babysit nodes list\n" in res.stdout  # kept verbatim
