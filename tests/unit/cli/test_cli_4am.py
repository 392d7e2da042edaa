"""What a user at 4am expects of the CLI: --json everywhere, ISO times, durations, old flags
kept with a warning, waiting for a log that is not there yet."""

from __future__ import annotations

import json
import time
from datetime import datetime
from pathlib import Path

from click.testing import CliRunner

from babysit.cli import cli
from babysit.records import Ban, Level
from babysit.store import Store
from babysit.supervise.watch import wait_for_files


def test_logbook_json_is_the_json_format(tmp_path: Path) -> None:
    with Store.open(tmp_path) as store:
        store.start_run("train", ["python", "train.py"], str(tmp_path), {})
    runner = CliRunner()
    flag = runner.invoke(cli, ["logbook", "train", "--home", str(tmp_path), "--json"])
    fmt = runner.invoke(cli, ["logbook", "train", "--home", str(tmp_path), "--format", "json"])
    assert flag.exit_code == 0, flag.output
    assert json.loads(flag.output) == json.loads(fmt.output)
    assert json.loads(flag.output)["run"] == "train"


def test_nodes_list_json_times_are_iso_8601(tmp_path: Path) -> None:
    now = time.time()
    with Store.open(tmp_path) as store:
        store.add_ban(Ban("gpu-17", "Xid 79", now, now + 3600, 600.0, "operator"))
    res = CliRunner().invoke(cli, ["nodes", "list", "--home", str(tmp_path), "--json"])
    assert res.exit_code == 0, res.output
    ban = json.loads(res.output)["nodes"][0]["ban"]
    for key in ("since", "expires", "probation_until"):
        assert isinstance(ban[key], str) and ban[key].endswith("+00:00"), ban
        assert abs(datetime.fromisoformat(ban[key]).timestamp() - now) <= 4201


def test_doctor_timeout_takes_a_duration_and_budget_still_works_with_a_warning() -> None:
    runner = CliRunner()
    res = runner.invoke(cli, ["doctor", "--only", "memory", "--timeout", "1m", "--json"])
    assert res.exit_code in (0, 6), res.output
    old = runner.invoke(cli, ["doctor", "--only", "memory", "--budget", "20"])
    assert old.exit_code in (0, 6)
    assert "`doctor --budget` is now `--timeout`" in old.output
    assert "--budget" not in runner.invoke(cli, ["doctor", "--help"]).output
    bad = runner.invoke(cli, ["doctor", "--timeout", "0"])
    assert bad.exit_code == 2 and "--timeout must be > 0" in bad.output


def test_watch_waits_for_a_log_that_does_not_exist_yet(tmp_path: Path) -> None:
    log = tmp_path / "slurm-77.out"
    said: list[str] = []
    sleeps: list[float] = []

    def sleep(s: float) -> None:
        sleeps.append(s)
        if len(sleeps) == 3:
            log.write_text("starting\n")  # the job started

    assert wait_for_files([log], lambda _l, m: said.append(m), lambda: False, 0.5, sleep)
    assert said == [f"waiting for {log} to appear (Ctrl-C to stop)"] and len(sleeps) == 3
    stopped = wait_for_files([tmp_path / "never"], lambda _l, m: None, lambda: True, 0.5, sleep)
    assert stopped is False


def test_wait_for_files_says_nothing_when_they_are_there(tmp_path: Path) -> None:
    said: list[tuple[Level, str]] = []
    (tmp_path / "a.log").write_text("x\n")
    assert wait_for_files([tmp_path / "a.log"], lambda lv, m: said.append((lv, m)), lambda: True)
    assert said == []
